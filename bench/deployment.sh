#!/usr/bin/env bash
# deployment.sh - a Deployment scaled from 0 to REPLICAS (default 10,000) pods
# with the real controllers: the time until every pod is created (the
# ReplicaSet controller: 500-pod bursts in slow-start batches through the
# registry, quota admission included) and until every pod is bound (the
# scheduler), on NODES (default 1,000) simulated nodes, in a namespace whose
# quota allows them (pods and requests.cpu, so every create is charged).
# NODE_AGENT=false leaves the pods Pending once bound, on nodes loadgen
# creates (the node agent's status writes, one a pod, compete for the same
# 2 cores otherwise); PERF=file records a perf profile of allotd; BUILD=dir runs
# another build's allotd. Targets on a 2-core machine: created < 5 s,
# bound < 10 s.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
scripts/build.sh "$BUILD" >/dev/null
REPLICAS=${REPLICAS:-10000} NODES=${NODES:-1000}
dir=$(mktemp -d /tmp/allot-bench.XXXXXX)
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
if [ "${NODE_AGENT:-true}" = true ]; then
  "$BUILD"/allotd --data-dir "$dir" --port "$port" --log-level warn --simulated-nodes "$NODES" 2>>"$dir/log" &
else # nodes made by loadgen (simulated nodes need the node agent)
  "$BUILD"/allotd --data-dir "$dir" --port "$port" --log-level warn --node-agent=false 2>>"$dir/log" &
fi
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 1 1200); do [ -s "$dir/kubeconfig" ] && break; sleep 0.05; done
export KUBECONFIG="$dir/kubeconfig"
. bench/lib.sh
url="https://127.0.0.1:$port"; tok=$(cat "$dir/admin.token")
[ "${NODE_AGENT:-true}" = true ] ||
  "$BUILD"/loadgen --data-dir "$dir" --url "$url" --connections 16 --requests "$NODES" --resource nodes >/dev/null
metric() { curl -sS --cacert "$dir/ca.crt" -H "Authorization: Bearer $tok" "$url/metrics" | awk -v m="$1" '$1==m{print $2}'; }
kubectl create namespace big >/dev/null
kubectl create quota q -n big --hard=pods=$((REPLICAS + 100)),requests.cpu=$((REPLICAS))  >/dev/null
cat <<YAML | kubectl apply -n big -f - >/dev/null
apiVersion: apps/v1
kind: Deployment
metadata: {name: big}
spec:
  replicas: 0
  selector: {matchLabels: {app: big}}
  template:
    metadata: {labels: {app: big}}
    spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: 10m}}}]}
YAML
for _ in $(seq 1 200); do
  [ "$(kubectl get rs -n big -o name | wc -l)" = 1 ] && break; sleep 0.05
done
settle
pods0=$(metric 'allot_objects{resource="pods"}'); pods0=${pods0:-0}
bound0=$(metric 'allot_scheduler_attempts_total{result="scheduled"}'); bound0=${bound0:-0}
[ -z "${PERF:-}" ] || { perf record -F 499 --call-graph dwarf,16384 -o "$PERF" -p "$pid" 2>/dev/null & perfpid=$!; }
# allotd's CPU time (clock ticks) by thread name: "name ticks" lines
threads() { for f in /proc/$pid/task/*/stat; do { sed 's/^[0-9]* (\(.*\)) [A-Z] /\1 /' "$f" 2>/dev/null || true; } |
  awk '{n=$1; gsub(/ /,"_",n); print n, $12 + $13}'; done | awk '{t[$1]+=$2} END{for (n in t) print n, t[n]}'; }
cpu0=$(threads)
t0=$(date +%s.%N)
kubectl scale deploy/big -n big --replicas="$REPLICAS" >/dev/null
created_at= bound_at=
# Poll /metrics (about a millisecond of server CPU each): every 100 ms.
while :; do
  now=$(date +%s.%N)
  p=$(metric 'allot_objects{resource="pods"}'); b=$(metric 'allot_scheduler_attempts_total{result="scheduled"}')
  [ -z "${TRACE:-}" ] || echo "trace $now $(( ${p:-0} - pods0 )) $(( ${b:-0} - bound0 ))" >&2
  [ -z "$created_at" ] && [ "$(( ${p:-0} - pods0 ))" -ge "$REPLICAS" ] && created_at=$now
  [ -z "$bound_at" ] && [ "$(( ${b:-0} - bound0 ))" -ge "$REPLICAS" ] && bound_at=$now
  [ -n "$created_at" ] && [ -n "$bound_at" ] && break
  awk -v a="$t0" -v b="$now" 'BEGIN{exit !(b - a > 120)}' && { echo "timed out: $p pods, $b bound" >&2; exit 1; }
  sleep 0.1
done
cpu1=$(threads)
[ -z "${PERF:-}" ] || { kill -INT "$perfpid"; wait "$perfpid" || true; }
awk -v n="$REPLICAS" -v m="$NODES" -v a="$t0" -v c="$created_at" -v b="$bound_at" 'BEGIN{
  printf "deployment 0 -> %d replicas on %d nodes: all created in %.2fs (%.0f pods/s), all bound in %.2fs\n", n, m, c-a, n/(c-a), b-a }'
{ echo "$cpu0" | sed 's/^/0 /'; echo "$cpu1" | sed 's/^/1 /'; } | awk -v t="$(getconf CLK_TCK)" \
  -v l="$(cut -d' ' -f1 /proc/loadavg)" '{v[$2] += ($1 ? $3 : -$3)} END{
  for (n in v) { all += v[n]; if (v[n] > 0) s = s sprintf(" %s %.2f", n, v[n]/t) }
  printf "allotd CPU until all bound: %.2fs (load average %s); by thread:%s\n", all/t, l, s }'
echo "ready replicas after: $(kubectl get deploy big -n big -o jsonpath='{.status.readyReplicas}'), rss: $(awk '/VmRSS/{printf "%.1f MiB", $2/1024}' /proc/$pid/status)"
