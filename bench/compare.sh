#!/usr/bin/env bash
# compare.sh BEFORE AFTER - durable pod creates/s of two allotd binaries, as a
# ratio measured in one run: rounds interleave the binaries (and the two
# configurations), so drift in this shared 2-core machine's speed hits both
# alike, and the medians are compared.
#
#   bench/compare.sh /tmp/allotd-before build/allotd
#
# Configurations: "default" (scheduler and node agent on: each pod is also
# bound and run) and "api" (--scheduler=false --node-agent=false: the API
# server alone). Each run: a fresh data dir, 10 namespaces with one
# ResourceQuota each (pods, cpu, memory), REQUESTS pod creates over 16 HTTPS
# keep-alive connections (bench/loadgen). Reports creates/s, p50/p99 latency,
# server CPU and context switches per create, and RSS after the run.
# CONNECTIONS (default 16) sets the client's connections.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
[ $# -eq 2 ] || { echo "usage: $0 BEFORE AFTER" >&2; exit 2; }
before=$(realpath "$1") after=$(realpath "$2")
REQUESTS=${REQUESTS:-20000}
CONNECTIONS=${CONNECTIONS:-16}
ROUNDS=${ROUNDS:-5}
[ -x build/loadgen ] || scripts/build.sh build >/dev/null

run() { # run BINARY CONFIG -> prints "creates/s p50 p99 cpu_us rss_mib ctxsw"
  local bin=$1 cfg=$2 dir port pid url tok args=""
  [ "$cfg" = api ] && args="--scheduler=false --node-agent=false"
  dir=$(mktemp -d /tmp/allot-cmp.XXXXXX)
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  # shellcheck disable=SC2086
  "$bin" --data-dir "$dir" --port "$port" --log-level warn $args 2>"$dir/log" &
  pid=$!
  for _ in $(seq 1 400); do [ -s "$dir/kubeconfig" ] && break; sleep 0.05; done
  url="https://127.0.0.1:$port"; tok=$(cat "$dir/admin.token")
  post() { curl -sS --cacert "$dir/ca.crt" -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' -o /dev/null --data "$2" "$url$1"; }
  if [ "$cfg" = default ]; then # nodes for the scheduler to bind to
    for n in $(seq 0 9); do
      post /api/v1/nodes "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-$n\"},\"status\":{\"capacity\":{\"cpu\":\"1000\",\"memory\":\"10Ti\",\"pods\":\"100000\"},\"allocatable\":{\"cpu\":\"1000\",\"memory\":\"10Ti\",\"pods\":\"100000\"}}}"
    done
  fi
  for i in $(seq 0 9); do
    post /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"bench-$i\"}}"
    post /api/v1/namespaces/bench-$i/resourcequotas "{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"q\"},\"spec\":{\"hard\":{\"pods\":\"1000000\",\"requests.cpu\":\"100000\",\"requests.memory\":\"100Ti\",\"limits.cpu\":\"100000\",\"limits.memory\":\"100Ti\"}}}"
  done
  build/loadgen --data-dir "$dir" --url "$url" --connections "$CONNECTIONS" --requests "$REQUESTS" --namespaces 10 \
    --pid $pid --label x >"$dir/out" 2>&1
  local rss
  rss=$(awk '/VmRSS/{printf "%.1f", $2/1024}' /proc/$pid/status)
  kill $pid; wait $pid 2>/dev/null || true
  # loadgen: "x: N creates in Ts: R/s, p50 A ms, p99 B ms, ..., server CPU C
  # us/request, server ctxsw S/request"
  awk -v rss="$rss" '{
    for (i = 1; i <= NF; i++) {
      if ($i ~ /\/s,?$/ && $i+0 > 0 && !r) r = $i + 0
      if ($i == "p50") p50 = $(i+1) + 0
      if ($i == "p99") p99 = $(i+1) + 0
      if ($i == "CPU") c = $(i+1) + 0
      if ($i == "ctxsw") cs = $(i+1) + 0
    }
  } END { printf "%s %s %s %s %s %s\n", r, p50, p99, c, rss, cs }' "$dir/out"
  rm -rf "$dir"
}

declare -A res
for r in $(seq 1 "$ROUNDS"); do
  for cfg in default api; do
    for side in before after; do
      bin=$before; [ $side = after ] && bin=$after
      line=$(run "$bin" $cfg)
      res[$cfg.$side]+="$line"$'\n'
      echo "round $r $cfg $side: $line" >&2
    done
  done
done
for cfg in default api; do
  for side in before after; do
    col() { printf '%s' "${res[$cfg.$side]}" | awk -v c="$1" 'NF{print $c}' | median; }
    printf '%-8s %-6s creates/s %8.0f  p50 %6.2f ms  p99 %6.2f ms  cpu %6.1f us/create  ctxsw %5.2f/create  rss %7.1f MiB\n' \
      "$cfg" "$side" "$(col 1)" "$(col 2)" "$(col 3)" "$(col 4)" "$(col 6)" "$(col 5)"
  done
  b=$(printf '%s' "${res[$cfg.before]}" | awk 'NF{print $1}' | median)
  a=$(printf '%s' "${res[$cfg.after]}" | awk 'NF{print $1}' | median)
  awk -v a="$a" -v b="$b" -v c="$cfg" -v n="$ROUNDS" \
    'BEGIN{printf "%-8s after/before = %.3f (%+.1f%%), medians of %d interleaved rounds\n", c, a/b, (a/b-1)*100, n}'
done
