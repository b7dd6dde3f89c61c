# test_quota_admission.sh - upstream ResourceQuota details beyond the seed
# walkthroughs, with the real kubectl and raw requests:
#   spec §8.1 A2/A3: a dry run is evaluated (allowed or denied in upstream's
#     words) and never charged;
#   §8.1 A13: a full quota in another namespace does not apply;
#   §6.1: WarningsOnCreate reaches kubectl as "Warning: ...";
#   §4.4 / seed 000: the 403 Status object of a denied pod create;
#   §7.2: describe prints used in hard's format (1000Ki used of 1G -> 1024k).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl
start_allotd
cd "$E2E_DIR"

# pod NAME CPU MEMORY: a one-container pod requesting CPU and MEMORY, on stdout.
pod() {
  printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: "%s"}\nspec:\n  containers:\n' "$1"
  printf '  - name: app\n    image: nginx\n    resources: {requests: {cpu: "%s", memory: "%s"}}\n' "$2" "$3"
}

# used NS QUOTA: status.used as sorted compact JSON.
used() {
  k get quota "$2" -n "$1" -o json |
    /usr/bin/python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["status"].get("used", {}), sort_keys=True, separators=(",", ":")))'
}

k create namespace test >/dev/null
k create namespace other >/dev/null

# ---- A2/A3: dry run ----
k create quota quota -n test --hard=cpu=3,memory=100Gi,pods=5 >/dev/null
pod p1 500m 25Gi | k create -n test -f - >/dev/null
pod p2 250m 15Gi | k create -n test -f - >/dev/null
pod p3 250m 10Gi | k create -n test -f - >/dev/null
before='{"cpu":"1","memory":"50Gi","pods":"3"}'
expect_eq "used before the dry runs" "$(used test quota)" "$before"
out=$(pod allowed-pod 100m 2Gi | k create -n test --dry-run=server -f - 2>"$E2E_DIR/a2.err") ||
  fail "A2: dry-run create denied: $out $(cat "$E2E_DIR/a2.err")"
expect_eq "A2 dry run" "$out" "pod/allowed-pod created (server dry run)"
# (allot's addition: the dry run's warning shows the quota before and after)
expect_eq "A2 dry run warning" "$(cat "$E2E_DIR/a2.err")" \
  "Warning: ResourceQuota test/quota: cpu 1 + 100m = 1100m of 3; memory 50Gi + 2Gi = 52Gi of 100Gi; pods 3 + 1 = 4 of 5"
expect_eq "A2: a dry run charges nothing" "$(used test quota)" "$before"
if out=$(pod not-allowed-pod 100m 60Gi | k create -n test --dry-run=server -f - 2>&1); then
  fail "A3: dry run over quota was allowed: $out"
fi
expect_eq "A3 dry run denied" "$(grep -v '^Warning: ' <<<"$out")" \
  'Error from server (Forbidden): error when creating "STDIN": pods "not-allowed-pod" is forbidden: exceeded quota: quota, requested: memory=60Gi, used: memory=50Gi, limited: memory=100Gi'
expect_contains "A3 dry run warning" "$out" \
  "Warning: ResourceQuota test/quota: cpu 1 + 100m = 1100m of 3; memory 50Gi + 60Gi = 110Gi of 100Gi (exceeded); pods 3 + 1 = 4 of 5"
expect_eq "A3: a denied dry run charges nothing" "$(used test quota)" "$before"
k get pod allowed-pod -n test >/dev/null 2>&1 && fail "a dry-run pod was stored"

# ---- A13: another namespace's quota ----
k create quota full -n other --hard=pods=0 >/dev/null
out=$(pod elsewhere 100m 1Gi | k create -n test -f - 2>&1) || fail "A13: denied by other's quota: $out"
expect_eq "A13: other's quota untouched" "$(used other full)" '{"pods":"0"}'

# ---- §6.1: warnings on create ----
cat >warn.yaml <<'EOF'
apiVersion: v1
kind: ResourceQuota
metadata: {name: inverted}
spec:
  hard: {requests.cpu: "2", limits.cpu: "1", memory: 2Gi, limits.memory: 1Gi}
EOF
out=$(k create -n other -f warn.yaml 2>&1) || fail "create inverted quota: $out"
expect_contains "warning for cpu" "$out" "Warning: ResourceQuota requests.cpu (2) should be less than limits.cpu (1)"
expect_contains "warning for bare memory" "$out" "Warning: ResourceQuota memory (2Gi) should be less than limits.memory (1Gi)"
out=$(k create quota fine -n other --hard=requests.cpu=1,limits.cpu=2 2>&1)
case "$out" in *Warning*) fail "warning for a quota with request <= limit: $out" ;; esac

# ---- §4.4 / seed 000: the Status of a denied create ----
k create namespace seed >/dev/null
k create quota tight -n seed --hard=pods=1 >/dev/null
r=$(api POST /api/v1/namespaces/seed/pods -H 'Content-Type: application/json' --data \
  '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"test-1"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}')
expect_eq "first pod" "$(tail -1 <<<"$r")" 201
r=$(api POST /api/v1/namespaces/seed/pods -H 'Content-Type: application/json' --data \
  '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"test-2"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}')
expect_eq "denied create: HTTP code" "$(tail -1 <<<"$r")" 403
sed '$d' <<<"$r" | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)
want = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403,
        "details": {"name": "test-2", "kind": "pods"},
        "message": "pods \"test-2\" is forbidden: exceeded quota: tight, requested: pods=1, used: pods=1, limited: pods=1"}
for key, value in want.items():
    assert s.get(key) == value, f"{key}: got {s.get(key)!r}, want {value!r}"
assert s.get("metadata") == {}, s.get("metadata")
' || fail "403 Status object"

# ---- §7.2: describe prints used in hard's format ----
k create namespace fmt >/dev/null
k create quota mem -n fmt --hard=requests.memory=1G >/dev/null
pod small 10m 1000Ki | k create -n fmt -f - >/dev/null
expect_eq "used keeps its own format" "$(used fmt mem)" '{"requests.memory":"1000Ki"}'
line=$(k describe quota mem -n fmt | grep '^requests.memory' | tr -s ' ')
expect_eq "describe converts used to hard's format" "$line" "requests.memory 1024k 1G"

stop_allotd
echo "test_quota_admission: ok"
