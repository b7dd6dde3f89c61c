#!/usr/bin/env bash
# custom_quotas.sh - pod creates/s with 0, 10 and 100 CustomQuotas matching
# each pod (rounds interleaved, medians), and a custom quota's full recount
# of 100,000 pods (bench/cq_recount.c). The API server alone by default;
# CONFIG=default runs allotd as shipped (scheduler and node agent on).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
scripts/build.sh build >/dev/null
ROUNDS=${ROUNDS:-3}
REQUESTS=${REQUESTS:-20000}
FLAGS="--scheduler=false --node-agent=false"
[ "${CONFIG:-}" = default ] && FLAGS=""
start() {
  dir=$(mktemp -d /tmp/allot-cq.XXXXXX)
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  # shellcheck disable=SC2086
  build/allotd --data-dir "$dir" --port "$port" --log-level warn $FLAGS 2>"$dir/log" &
  pid=$!
  for _ in $(seq 1 400); do [ -s "$dir/kubeconfig" ] && break; sleep 0.05; done
  url="https://127.0.0.1:$port"; tok=$(cat "$dir/admin.token")
}
stop() { kill $pid; wait $pid 2>/dev/null || true; rm -rf "$dir"; }
post() { curl -sS --cacert "$dir/ca.crt" -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' -o /dev/null --data "$2" "$url$1"; }
run() { # run N -> pod creates/s with N custom quotas in each namespace
  start
  for i in $(seq 0 9); do
    post /api/v1/namespaces "{\"metadata\":{\"name\":\"bench-$i\"}}"
    for q in $(seq 1 "$1"); do
      post /apis/capsule.clastix.io/v1beta2/namespaces/bench-$i/customquotas \
        "{\"metadata\":{\"name\":\"q$q\"},\"spec\":{\"limit\":\"1000000\",\"sources\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"path\":\".spec.containers[*].resources.requests.cpu\"}]}}"
    done
  done
  settle
  build/loadgen --data-dir "$dir" --url "$url" --connections 16 --requests "$REQUESTS" --namespaces 10 \
    --pid $pid --label "$1 custom quotas per pod" | show
  stop
}
r0=() r10=() r100=()
for _ in $(seq 1 "$ROUNDS"); do r0+=("$(run 0)"); r10+=("$(run 10)"); r100+=("$(run 100)"); done
a=$(printf '%s\n' "${r0[@]}" | median) b=$(printf '%s\n' "${r10[@]}" | median) c=$(printf '%s\n' "${r100[@]}" | median)
awk -v a="$a" -v b="$b" -v c="$c" -v n="$ROUNDS" 'BEGIN{printf "pod creates (medians of %d rounds): 0 custom quotas %.0f/s, 10: %.0f/s (%.2fx), 100: %.0f/s (%.2fx)\n", n, a, b, b/a, c, c/a}'
build/cq_recount --pods ${PODS:-100000}
