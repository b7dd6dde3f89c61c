# test_quota_concurrency.sh - quota under bursts: 64 parallel clients never push
# usage past hard, status.used always equals the stored objects and a fresh
# recount, also after kill -9 in the middle of a burst.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
LOADGEN="$(dirname "$ALLOTD")/loadgen"
[ -x "$LOADGEN" ] || fail "loadgen not built next to allotd ($LOADGEN)"
start_allotd --resource-quota-sync-period 1h

mk() { api POST "$1" -H 'Content-Type: application/json' --data "$2" >/dev/null; }
for ns in race-0 cpu-0 crash-0; do
  mk /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$ns\"}}"
done
quota() { mk "/api/v1/namespaces/$1/resourcequotas" \
  "{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"q\"},\"spec\":{\"hard\":$2}}"; }
quota race-0 '{"pods":"100"}'
quota cpu-0 '{"requests.cpu":"10","pods":"1000"}'
quota crash-0 '{"requests.cpu":"20","limits.cpu":"20","pods":"1000"}'

gen() { "$LOADGEN" --data-dir "$E2E_DIR/data" --url "$ALLOT_URL" --connections 64 "$@" || true; }
gen --requests 1000 --namespaces 1 --ns-prefix race
gen --requests 1000 --namespaces 1 --ns-prefix cpu --cpu-mix 1

# check NS [EXACT_PODS]: usage == sum over stored pods, and usage <= hard.
check() {
  local ns=$1 want=${2:-}
  api GET "/api/v1/namespaces/$ns/pods" | sed '$d' >"$E2E_DIR/pods.json"
  api GET "/api/v1/namespaces/$ns/resourcequotas/q" | sed '$d' >"$E2E_DIR/q.json"
  /usr/bin/python3 - "$E2E_DIR/pods.json" "$E2E_DIR/q.json" "$want" <<'PY'
import json, sys
def milli(v):
    v = str(v)
    return int(v[:-1]) if v.endswith("m") else int(v) * 1000
pods = json.load(open(sys.argv[1]))["items"]
q = json.load(open(sys.argv[2]))
used, hard = q["status"]["used"], q["status"]["hard"]
if sys.argv[3]:
    assert len(pods) == int(sys.argv[3]), f"{len(pods)} pods stored, want {sys.argv[3]}"
assert int(used["pods"]) == len(pods), f"used pods {used['pods']} != stored {len(pods)}"
for key in ("requests.cpu", "limits.cpu"):
    if key in hard:
        total = sum(milli(c["resources"][key.split(".")[0]]["cpu"]) for p in pods for c in p["spec"]["containers"])
        assert milli(used[key]) == total, f"{key}: used {used[key]} != stored sum {total}m"
        assert milli(used[key]) <= milli(hard[key]), f"{key}: used {used[key]} > hard {hard[key]}"
print(f"{q['metadata']['namespace']}: {len(pods)} pods, used {used}")
PY
}
check race-0 100
check cpu-0

metric() { api GET /metrics | sed '$d' | awk -v m="$1" '$1 == m {print $2}'; }
resynced_after() { [ "$(metric allot_quota_resyncs_total)" -ge 1 ]; }

# kill -9 during a burst, restart: quota status is a derived write (persisted
# coalesced), so the startup recount restores it from the stored pods before
# serving; `check` then finds used equal to the pods that survived.
(gen --requests 3000 --namespaces 1 --ns-prefix crash --cpu-mix 1 >/dev/null 2>&1) &
burst=$!
wait_until 60 bash -c "curl -s --cacert '$E2E_DIR/data/ca.crt' -H 'Authorization: Bearer $ALLOT_TOKEN' \
  '$ALLOT_URL/api/v1/namespaces/crash-0/pods?limit=1' | grep -q '\"name\"'" || fail "burst did not start"
kill9_allotd
wait $burst || true
start_allotd --resource-quota-sync-period 1h
wait_until 30 resynced_after || fail "no recount after restart"
grep -q '"msg":"quotas recounted"' "$E2E_DIR/allotd.log" || fail "no startup recount logged"
check crash-0
check race-0 100
check cpu-0

stop_allotd
echo "test_quota_concurrency: ok"
