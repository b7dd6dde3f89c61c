#!/usr/bin/env bash
# crd.sh - the cost of serving a custom resource: durable creates/s of a
# Bucket (a CRD with a structural schema: defaults, pruning, validation,
# printer columns, status subresource) against ConfigMap creates/s, in
# interleaved rounds on one allotd (drift in this shared machine's speed
# hits both alike), each over 16 keep-alive connections into 10 fresh
# namespaces. Reports each round's ratio and the medians. Target: a custom
# resource within 20% of a ConfigMap (ratio >= 0.80).
#   REQUESTS (default 20000) per run, ROUNDS (default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
scripts/build.sh build >/dev/null
REQUESTS=${REQUESTS:-20000}
ROUNDS=${ROUNDS:-3}
dir=$(mktemp -d /tmp/allot-bench.XXXXXX)
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
build/allotd --data-dir "$dir" --port "$port" --log-level warn --scheduler=false --node-agent=false 2>"$dir/log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 1 200); do [ -s "$dir/kubeconfig" ] && break; sleep 0.05; done
url="https://127.0.0.1:$port"
tok=$(cat "$dir/admin.token")
req() { curl -sS --cacert "$dir/ca.crt" -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' "$@"; }
post() { req -o /dev/null --data "$2" "$url$1"; }

post /apis/apiextensions.k8s.io/v1/customresourcedefinitions '{
  "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {"name": "buckets.example.com"},
  "spec": {"group": "example.com", "scope": "Namespaced",
    "names": {"plural": "buckets", "kind": "Bucket"},
    "versions": [{"name": "v1", "served": true, "storage": true,
      "subresources": {"status": {}},
      "additionalPrinterColumns": [{"name": "Region", "type": "string", "jsonPath": ".spec.region"},
                                   {"name": "Storage", "type": "integer", "jsonPath": ".spec.storageGB"}],
      "schema": {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "required": ["region"], "properties": {
          "storageGB": {"type": "integer", "minimum": 1, "default": 10},
          "region": {"type": "string", "enum": ["us-east-1", "eu-west-1"]},
          "tier": {"type": "string", "default": "standard"}}},
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}}}]}}'
established() {
  req "$url/apis/apiextensions.k8s.io/v1/customresourcedefinitions/buckets.example.com" |
    grep -q '"type":"Established","status":"True"\|"status":"True","type":"Established"\|"reason":"InitialNamesAccepted"'
}
for _ in $(seq 1 200); do established && break; sleep 0.05; done
established || { echo "crd.sh: the CRD did not become Established" >&2; exit 1; }

run() { # run RESOURCE ROUND -> creates/s
  local prefix="$1-r$2"
  for i in $(seq 0 9); do
    post /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$prefix-$i\"}}"
  done
  settle
  build/loadgen --data-dir "$dir" --url "$url" --connections 16 --requests "$REQUESTS" \
    --namespaces 10 --ns-prefix "$prefix" --resource "$1" --pid $pid --label "$1 round $2" | show
}
cm=() cr=()
for r in $(seq 1 "$ROUNDS"); do
  a=$(run configmaps "$r") b=$(run buckets "$r")
  cm+=("$a") cr+=("$b")
  awk -v a="$a" -v b="$b" -v r="$r" 'BEGIN{printf "round %d: configmaps %.0f/s, buckets %.0f/s, ratio %.2f\n", r, a, b, b/a}'
done
a=$(printf '%s\n' "${cm[@]}" | median) b=$(printf '%s\n' "${cr[@]}" | median)
awk -v a="$a" -v b="$b" -v n="$ROUNDS" 'BEGIN{
  printf "custom resource creates (medians of %d rounds): configmaps %.0f/s, buckets %.0f/s, ratio %.2f (target >= 0.80)\n",
    n, a, b, b/a }'
