#!/usr/bin/env bash
# quota.sh - the cost of quota admission: durable pod creates/s with 0, 1 and 10
# ResourceQuotas per namespace (each quota tracks pods, cpu and memory), as
# ratios to the 0-quota run; and the full recount time for 100,000 pods.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh build >/dev/null
REQUESTS=${REQUESTS:-20000}
run() { # run QUOTAS_PER_NS -> prints creates/s
  local nq=$1 dir port pid url tok
  dir=$(mktemp -d /tmp/allot-bench.XXXXXX)
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  build/allotd --data-dir "$dir" --port "$port" --log-level warn --scheduler=false --node-agent=false 2>"$dir/log" &
  pid=$!
  for _ in $(seq 1 200); do [ -s "$dir/kubeconfig" ] && break; sleep 0.05; done
  url="https://127.0.0.1:$port"; tok=$(cat "$dir/admin.token")
  post() { curl -sS --cacert "$dir/ca.crt" -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' -o /dev/null --data "$2" "$url$1"; }
  for i in $(seq 0 9); do
    post /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"bench-$i\"}}"
    for q in $(seq 1 "$nq"); do
      post /api/v1/namespaces/bench-$i/resourcequotas "{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"q$q\"},\"spec\":{\"hard\":{\"pods\":\"1000000\",\"requests.cpu\":\"100000\",\"requests.memory\":\"100Ti\",\"limits.cpu\":\"100000\",\"limits.memory\":\"100Ti\"}}}"
    done
  done
  build/loadgen --data-dir "$dir" --url "$url" --connections 16 --requests "$REQUESTS" --namespaces 10 \
    --pid $pid --label "$nq quotas/namespace" | tee "$dir/out" >&2
  kill $pid; wait $pid 2>/dev/null || true
  sed -E 's/.*: ([0-9]+)\/s.*/\1/' "$dir/out"
  rm -rf "$dir"
}
# Rounds interleave the three settings, so that drift in the machine's speed
# (this is a shared 2-core machine) hits them alike; the medians are compared.
ROUNDS=${ROUNDS:-3}
r0=() r1=() r10=()
for _ in $(seq 1 "$ROUNDS"); do
  r0+=("$(run 0)"); r1+=("$(run 1)"); r10+=("$(run 10)")
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
a=$(median "${r0[@]}") b=$(median "${r1[@]}") c=$(median "${r10[@]}")
awk -v a="$a" -v b="$b" -v c="$c" -v n="$ROUNDS" 'BEGIN{
  printf "quota admission (medians of %d rounds): no quota %.0f/s; 1 quota/ns %.0f/s (%.2fx, cost %.1f%%); 10 quotas/ns %.0f/s (%.2fx, cost %.1f%%)\n",
    n, a, b, b/a, (1-b/a)*100, c, c/a, (1-c/a)*100 }'
build/recount --pods 100000
