#!/usr/bin/env bash
# create.sh - durable pod-create throughput, latency and memory of allotd.
# Builds release, starts allotd on a fresh data dir, creates pods over 16
# keep-alive HTTPS connections, then fills up to 100,000 pods and reports RSS.
# ALLOTD_ARGS="--scheduler=false --node-agent=false" times the API server alone
# (by default the scheduler also writes a condition and an event per pod).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh build >/dev/null
dir=$(mktemp -d /tmp/allot-bench.XXXXXX)
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
build/allotd --data-dir "$dir" --port "$port" --log-level warn ${ALLOTD_ARGS:-} 2>"$dir/log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 1 200); do [ -s "$dir/kubeconfig" ] && break; sleep 0.05; done
url="https://127.0.0.1:$port"
tok=$(cat "$dir/admin.token")
mkns() {
  curl -sS --cacert "$dir/ca.crt" -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
    -o /dev/null --data "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$1\"}}" \
    "$url/api/v1/namespaces"
}
for i in $(seq 0 9); do mkns "bench-$i"; done
echo "rss at start: $(awk '/VmRSS/{printf "%.1f MiB", $2/1024}' /proc/$pid/status)"
build/loadgen --data-dir "$dir" --url "$url" --connections 16 --requests ${REQUESTS:-20000} \
  --namespaces 10 --pid $pid --label "16 connections"
build/loadgen --data-dir "$dir" --url "$url" --connections 1 --requests 2000 \
  --namespaces 10 --ns-prefix bench --pid $pid --label "1 connection" --resource configmaps
# fill to 100k pods for the memory figure
fill=$((100000 - ${REQUESTS:-20000}))
if [ $fill -gt 0 ]; then
  build/loadgen --data-dir "$dir" --url "$url" --connections 16 --requests 100000 \
    --namespaces 10 --pid $pid --label "fill to 100k pods" >/dev/null || true
fi
echo "pods stored: $(curl -sS --cacert "$dir/ca.crt" -H "Authorization: Bearer $tok" "$url/metrics" | awk '/allot_objects{resource="pods"}/{print $2}')"
echo "rss with 100k pods: $(awk '/VmRSS/{printf "%.1f MiB", $2/1024}' /proc/$pid/status)"
