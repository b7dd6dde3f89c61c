#!/usr/bin/env bash
# watches.sh [BINARY...] - what open watches cost: for each allotd binary
# (default build/allotd), N watches (WATCHES, default 10000) of one
# namespace's ConfigMaps, each on its own TLS connection: allotd's RSS and
# threads before and after, and the time from a create until every watch
# has seen it. (Issue 27: 10,000 open watches cost < 100 MB and no thread
# each.)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
WATCHES=${WATCHES:-10000}
[ $# -gt 0 ] || set -- build/allotd
ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" -gt $((WATCHES + 500)) ] || { echo "need $((WATCHES + 500)) descriptors" >&2; exit 1; }
for bin in "$@"; do
  dir=$(mktemp -d /tmp/allot-watches.XXXXXX)
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$bin" --data-dir "$dir" --port "$port" --log-level warn --scheduler=false --node-agent=false \
    2>"$dir/log" &
  pid=$!
  for _ in $(seq 1 400); do [ -s "$dir/kubeconfig" ] && break; sleep 0.05; done
  url="https://127.0.0.1:$port"
  tok=$(cat "$dir/admin.token")
  curl -sS --cacert "$dir/ca.crt" -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
    -o /dev/null --data '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"w"}}' "$url/api/v1/namespaces"
  printf '%s: ' "$bin"
  /usr/bin/python3 bench/watches.py "$url" "$dir/ca.crt" "$tok" "$WATCHES" \
    /api/v1/namespaces/w/configmaps "$pid"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
done
