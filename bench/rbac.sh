#!/usr/bin/env bash
# rbac.sh - pod creates/s as a tenant (authorized by RBAC: a RoleBinding to
# the admin ClusterRole in each of its namespaces) against the same as the
# cluster admin (system:masters: no lookup), with 100 RoleBindings in the
# cluster. Rounds interleave admin and tenant on fresh servers; medians and
# their ratio. Both configurations: the API server alone, and the default
# (scheduler and node agent on).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
scripts/build.sh build >/dev/null
ROUNDS=${ROUNDS:-3}
REQUESTS=${REQUESTS:-20000}
start() { # start [allotd flags...]
  dir=$(mktemp -d /tmp/allot-rbac.XXXXXX)
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  printf 'tenant-token,tenant,tenant-uid,"tenants"\n' >"$dir/tokens.csv"
  printf 'tenant-token' >"$dir/tenant.token"
  build/allotd --data-dir "$dir/data" --port "$port" --log-level warn \
    --token-auth-file "$dir/tokens.csv" "$@" 2>"$dir/log" &
  pid=$!
  for _ in $(seq 1 400); do [ -s "$dir/data/kubeconfig" ] && break; sleep 0.05; done
  url="https://127.0.0.1:$port"; tok=$(cat "$dir/data/admin.token")
}
stop() { kill $pid; wait $pid 2>/dev/null || true; rm -rf "$dir"; }
post() { curl -sS --cacert "$dir/data/ca.crt" -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' -o /dev/null --data "$2" "$url$1"; }
binding() { # binding NS NAME KIND SUBJECT
  post "/apis/rbac.authorization.k8s.io/v1/namespaces/$1/rolebindings" \
    "{\"metadata\":{\"name\":\"$2\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"admin\"},\"subjects\":[{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"$3\",\"name\":\"$4\"}]}"
}
run() { # run admin|tenant [allotd flags...] -> pod creates/s
  local who=$1; shift
  start "$@"
  for i in $(seq 0 9); do
    post /api/v1/namespaces "{\"metadata\":{\"name\":\"bench-$i\"}}"
    binding "bench-$i" tenant Group tenants
    for b in $(seq 1 9); do binding "bench-$i" "other-$b" User "user-$i-$b"; done
  done
  settle
  local tf=()
  [ "$who" = tenant ] && tf=(--token-file "$dir/tenant.token")
  build/loadgen --data-dir "$dir/data" --url "$url" --connections 16 --requests "$REQUESTS" \
    --namespaces 10 --pid $pid --label "$who, 100 RoleBindings${*:+ ($*)}" "${tf[@]}" | show
  stop
}
report() { # report LABEL FLAGS...
  local label=$1; shift
  local a=() t=()
  for _ in $(seq 1 "$ROUNDS"); do a+=("$(run admin "$@")"); t+=("$(run tenant "$@")"); done
  local ma mt
  ma=$(printf '%s\n' "${a[@]}" | median); mt=$(printf '%s\n' "${t[@]}" | median)
  awk -v a="$ma" -v t="$mt" -v n="$ROUNDS" -v l="$label" 'BEGIN{printf "%s (medians of %d rounds): admin %.0f/s, tenant %.0f/s (%.2fx)\n", l, n, a, t, t/a}'
}
report "pod creates, API server alone" --scheduler=false --node-agent=false
report "pod creates, default configuration"
