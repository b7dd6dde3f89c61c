#!/usr/bin/env bash
# kube-compare.sh [ALLOTD] - the same client against allotd and the real
# Kubernetes v1.20.2 control plane (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler: scripts/kube-up.sh), in one
# sitting: rounds interleave the two, so drift in this shared machine's
# speed hits both alike, and the medians are compared.
#
# Each run: a fresh server, 10 Nodes, 10 namespaces with one ResourceQuota
# each (pods, cpu, memory), REQUESTS (default 10000) pod creates over
# CONNECTIONS (default 16) keep-alive HTTPS connections (bench/loadgen).
# Reported per system: creates/s, p50/p99 latency, server CPU and context
# switches per create (every process of the system summed: allotd alone,
# or etcd + the three Kubernetes servers), and their RSS after the run.
# allotd runs as shipped (scheduler and node agent on); Kubernetes has no
# kubelet, so its pods are bound and stay Pending.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
allotd=$(realpath "${1:-build/allotd}")
REQUESTS=${REQUESTS:-10000}
CONNECTIONS=${CONNECTIONS:-16}
ROUNDS=${ROUNDS:-3}
[ -x build/loadgen ] || scripts/build.sh build >/dev/null
scripts/kube-up.sh down /dev/null 2>/dev/null || true

setup() { # setup URL DIR: nodes, namespaces, quotas
  local url=$1 dir=$2 tok
  tok=$(cat "$dir/admin.token")
  post() { curl -sS --cacert "$dir/ca.crt" -H "Authorization: Bearer $tok" \
    -H 'Content-Type: application/json' -o /dev/null --data "$2" "$url$1"; }
  for n in $(seq 0 9); do
    post /api/v1/nodes "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-$n\"},\"status\":{\"capacity\":{\"cpu\":\"1000\",\"memory\":\"10Ti\",\"pods\":\"100000\"},\"allocatable\":{\"cpu\":\"1000\",\"memory\":\"10Ti\",\"pods\":\"100000\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}"
  done
  for i in $(seq 0 9); do
    post /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"bench-$i\"}}"
    post /api/v1/namespaces/bench-$i/resourcequotas "{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"q\"},\"spec\":{\"hard\":{\"pods\":\"1000000\",\"requests.cpu\":\"100000\",\"requests.memory\":\"100Ti\",\"limits.cpu\":\"100000\",\"limits.memory\":\"100Ti\"}}}"
  done
  # the namespaces' default ServiceAccounts (pods need them on Kubernetes)
  for i in $(seq 0 9); do
    for _ in $(seq 1 100); do
      curl -fsS --cacert "$dir/ca.crt" -H "Authorization: Bearer $tok" -o /dev/null \
        "$url/api/v1/namespaces/bench-$i/serviceaccounts/default" 2>/dev/null && break
      sleep 0.1
    done
  done
}

measure() { # measure URL DIR PIDS -> "creates/s p50 p99 cpu_us ctxsw rss_mib"
  local url=$1 dir=$2 pids=$3
  build/loadgen --data-dir "$dir" --url "$url" --connections "$CONNECTIONS" \
    --requests "$REQUESTS" --namespaces 10 --pid "$pids" --label x 2>&1 | awk '{
    for (i = 1; i <= NF; i++) {
      if ($i ~ /\/s,?$/ && $i+0 > 0 && !r) r = $i + 0
      if ($i == "p50") p50 = $(i+1) + 0
      if ($i == "p99") p99 = $(i+1) + 0
      if ($i == "CPU") c = $(i+1) + 0
      if ($i == "ctxsw") cs = $(i+1) + 0
      if ($i == "RSS") rss = $(i+1) + 0
    }
  } END { printf "%s %s %s %s %s %s\n", r, p50, p99, c, cs, rss }'
}

run_allotd() {
  local dir port pid url line
  dir=$(mktemp -d /tmp/allot-kc.XXXXXX)
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$allotd" --data-dir "$dir" --port "$port" --log-level warn 2>"$dir/log" &
  pid=$!
  for _ in $(seq 1 400); do [ -s "$dir/kubeconfig" ] && break; sleep 0.05; done
  url="https://127.0.0.1:$port"
  setup "$url" "$dir"
  settle 10
  line=$(measure "$url" "$dir" "$pid")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
  echo "$line"
}

run_kube() {
  local dir url pids line
  dir=$(mktemp -d /tmp/allot-kc.XXXXXX)
  scripts/kube-up.sh up "$dir" >/dev/null
  url=$(cat "$dir/url")
  setup "$url" "$dir"
  pids=$(cat "$dir"/{etcd,kube-apiserver,kube-controller-manager,kube-scheduler}.pid | paste -sd,)
  pid=$(cat "$dir/kube-apiserver.pid")
  settle 10
  line=$(measure "$url" "$dir" "$pids")
  scripts/kube-up.sh down "$dir"
  rm -rf "$dir"
  echo "$line"
}

declare -A res
for r in $(seq 1 "$ROUNDS"); do
  for sys in allotd kube; do
    line=$(run_$sys)
    res[$sys]+="$line"$'\n'
    echo "round $r $sys: $line" >&2
  done
done
for sys in allotd kube; do
  col() { printf '%s' "${res[$sys]}" | awk -v c="$1" 'NF{print $c}' | median; }
  printf '%-7s creates/s %8.0f  p50 %6.2f ms  p99 %7.2f ms  cpu %7.1f us/create  ctxsw %5.2f/create  rss %7.1f MiB\n' \
    "$sys" "$(col 1)" "$(col 2)" "$(col 3)" "$(col 4)" "$(col 5)" "$(col 6)"
done
a=$(printf '%s' "${res[allotd]}" | awk 'NF{print $1}' | median)
k=$(printf '%s' "${res[kube]}" | awk 'NF{print $1}' | median)
awk -v a="$a" -v k="$k" -v n="$ROUNDS" \
  'BEGIN{printf "allotd/kubernetes = %.1fx creates/s, medians of %d interleaved rounds\n", a/k, n}'
