#!/usr/bin/env bash
# pools.sh - ResourcePools on this machine: claims bound per second (one pool,
# NAMESPACES namespaces, CLAIMS claims over 16 HTTPS connections), and pod
# creates/s in pool-governed namespaces as a ratio of the same with a plain
# ResourceQuota (API server alone, rounds interleaved); and the time from a
# claim's release to the next queued claim bound (bench/pool_release.py).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
scripts/build.sh build >/dev/null
NAMESPACES=${NAMESPACES:-1000}
CLAIMS=${CLAIMS:-10000}
ROUNDS=${ROUNDS:-3}
# start [extra allotd flags]: API server alone unless told otherwise
start() {
  dir=$(mktemp -d /tmp/allot-pools.XXXXXX)
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  build/allotd --data-dir "$dir" --port "$port" --log-level warn "$@" 2>"$dir/log" &
  pid=$!
  for _ in $(seq 1 400); do [ -s "$dir/kubeconfig" ] && break; sleep 0.05; done
  url="https://127.0.0.1:$port"; tok=$(cat "$dir/admin.token")
}
stop() { kill $pid; wait $pid 2>/dev/null || true; rm -rf "$dir"; }
post() { curl -sS --cacert "$dir/ca.crt" -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' -o /dev/null --data "$2" "$url$1"; }
mkns() { for i in $(seq 0 $(($1 - 1))); do post /api/v1/namespaces "{\"metadata\":{\"name\":\"bench-$i\",\"labels\":{\"pool\":\"bench\"}}}"; done; }
pool='{"apiVersion":"capsule.clastix.io/v1beta2","kind":"ResourcePool","metadata":{"name":"bench"},"spec":{"quota":{"hard":{"requests.cpu":"100000","pods":"1000000","limits.cpu":"100000","requests.memory":"100Ti","limits.memory":"100Ti"}},"selectors":[{"matchLabels":{"pool":"bench"}}]}}'

# claims bound per second: one pool, NAMESPACES namespaces, CLAIMS claims
claims() { # claims alone|default -> claims/s
  if [ "$1" = alone ]; then start --scheduler=false --node-agent=false; else start; fi
  mkns "$NAMESPACES"
  post /apis/capsule.clastix.io/v1beta2/resourcepools "$pool"
  settle
  build/loadgen --data-dir "$dir" --url "$url" --connections 16 --requests "$CLAIMS" --namespaces "$NAMESPACES" \
    --pid $pid --resource resourcepoolclaims --label "claims, $1 ($NAMESPACES namespaces)" | show
  stop
}
ca=() cd=()
for _ in $(seq 1 "$ROUNDS"); do ca+=("$(claims alone)"); cd+=("$(claims default)"); done
printf 'claims bound (medians of %d rounds, %d claims in %d namespaces): API server alone %s/s, default configuration %s/s\n' \
  "$ROUNDS" "$CLAIMS" "$NAMESPACES" "$(printf '%s\n' "${ca[@]}" | median)" "$(printf '%s\n' "${cd[@]}" | median)"

# release -> next queued claim bound, seen by a watcher (default configuration)
start
KUBECONFIG="$dir/kubeconfig" ROUNDS=${RELEASES:-200} /usr/bin/python3 bench/pool_release.py
stop

# pod creates: pool-governed namespaces vs plain quotas
run() { # run pool|quota -> creates/s (API server alone)
  start --scheduler=false --node-agent=false
  mkns 10
  if [ "$1" = pool ]; then
    post /apis/capsule.clastix.io/v1beta2/resourcepools "$pool"
    for i in $(seq 0 9); do
      post /apis/capsule.clastix.io/v1beta2/namespaces/bench-$i/resourcepoolclaims "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"pool\":\"bench\",\"claim\":{\"requests.cpu\":\"10000\",\"pods\":\"100000\",\"limits.cpu\":\"10000\",\"requests.memory\":\"10Ti\",\"limits.memory\":\"10Ti\"}}}"
    done
  else
    for i in $(seq 0 9); do
      post /api/v1/namespaces/bench-$i/resourcequotas "{\"metadata\":{\"name\":\"q\"},\"spec\":{\"hard\":{\"requests.cpu\":\"10000\",\"pods\":\"100000\",\"limits.cpu\":\"10000\",\"requests.memory\":\"10Ti\",\"limits.memory\":\"10Ti\"}}}"
    done
  fi
  settle
  build/loadgen --data-dir "$dir" --url "$url" --connections 16 --requests ${REQUESTS:-20000} --namespaces 10 \
    --pid $pid --label "$1" | show
  stop
}
p=() q=()
for _ in $(seq 1 "$ROUNDS"); do q+=("$(run quota)"); p+=("$(run pool)"); done
a=$(printf '%s\n' "${q[@]}" | median) b=$(printf '%s\n' "${p[@]}" | median)
awk -v a="$a" -v b="$b" -v n="$ROUNDS" 'BEGIN{printf "pod creates (medians of %d rounds): plain quota %.0f/s, pool-governed %.0f/s (%.2fx)\n", n, a, b, b/a}'
