#!/usr/bin/env bash
# sched.sh - scheduler throughput and quota reaction time (deferred quota on).
#  1. 1,000 nodes and 10,000 pending pods in 100 namespaces with quotas are
#     stored with the scheduler off; allotd restarts with it on: binds/s from
#     start to the last pod bound (the node agent is off: this times binding).
#     BUILD=dir runs another build directory's allotd (default build/).
#  2. free -> bound: a namespace at its cpu quota with one pod waiting; delete a
#     bound pod and time until the waiting pod is bound (p50/p99 over 30 rounds).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
scripts/build.sh "$BUILD" >/dev/null
PODS=${PODS:-10000} NODES=${NODES:-1000}
dir=$(mktemp -d /tmp/allot-bench.XXXXXX)
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
pid=
start() {
  "$BUILD"/allotd --data-dir "$dir" --port "$port" --log-level warn --feature-gates=DeferredResourceQuota=true "$@" 2>>"$dir/log" &
  pid=$!
  rm -f "$dir/kubeconfig.ready"
  for _ in $(seq 1 600); do [ -s "$dir/kubeconfig" ] && curl -s -o /dev/null --cacert "$dir/ca.crt" "https://127.0.0.1:$port/readyz" && break; sleep 0.05; done
}
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
start --scheduler=false --node-agent=false
url="https://127.0.0.1:$port"; tok=$(cat "$dir/admin.token")
post() { curl -sS --cacert "$dir/ca.crt" -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' -o /dev/null --data "$2" "$url$1"; }
scheduled() { curl -sS --cacert "$dir/ca.crt" -H "Authorization: Bearer $tok" "$url/metrics" | awk '$1=="allot_scheduler_attempts_total{result=\"scheduled\"}"{print $2}'; }
for i in $(seq 0 99); do
  post /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"s-$i\"}}"
  post /api/v1/namespaces/s-$i/resourcequotas "{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"q\"},\"spec\":{\"hard\":{\"requests.cpu\":\"1000\",\"limits.cpu\":\"1000\",\"pods\":\"100000\"}}}"
done
"$BUILD"/loadgen --data-dir "$dir" --url "$url" --connections 16 --requests "$NODES" --resource nodes >&2
"$BUILD"/loadgen --data-dir "$dir" --url "$url" --connections 16 --requests "$PODS" --namespaces 100 --ns-prefix s >&2
kill $pid; wait $pid || true
t0=$(date +%s.%N)
start --node-agent=false
tr=$(date +%s.%N) # serving: store loaded, quotas recounted
# Poll finely only near the end: each /metrics render costs the server about a
# millisecond of CPU, so polling every 10 ms throughout took ~5% of the CPU
# being measured. The end is still seen within ~10 ms.
while n=$(scheduled || true) && [ "${n:-0}" -lt "$PODS" ]; do
  if [ "${n:-0}" -lt $((PODS * 9 / 10)) ]; then sleep 0.1; else sleep 0.01; fi
done
t1=$(date +%s.%N)
awk -v n="$PODS" -v a="$t0" -v r="$tr" -v b="$t1" -v m="$NODES" 'BEGIN{printf "scheduler: %d pending pods bound onto %d nodes in %.2fs (including restart): %.0f binds/s; from ready (%.2fs after start): %.0f binds/s\n", n, m, b-a, n/(b-a), r-a, n/(b-r)}'
echo "rss: $(awk '/VmRSS/{printf "%.1f MiB", $2/1024}' /proc/$pid/status)"
kill $pid; wait $pid || true
start
KUBECONFIG="$dir/kubeconfig" /usr/bin/python3 bench/free_to_bound.py
