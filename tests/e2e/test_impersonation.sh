#!/usr/bin/env bash
# test_impersonation.sh - user impersonation (kubectl --as, --as-group,
# --as-uid; the Impersonate-* headers with curl) as upstream's
# kube-apiserver does it: the request *is* the impersonated user for RBAC,
# whoami and can-i; an impersonator needs the `impersonate` verb on each
# part (upstream's 403 texts), a tenant admin may impersonate its own
# ServiceAccounts (upstream's edit role) and nothing else; groups without a
# user are upstream's 400; the audit log names both users.
source "$(dirname "$0")/lib.sh"
need_kubectl

cat >"$E2E_DIR/tokens.csv" <<'EOF'
alice-token,alice,alice-uid,"tenant-a-admins"
bob-token,bob,bob-uid
EOF
start_allotd --token-auth-file "$E2E_DIR/tokens.csv" --scheduler=false --node-agent=false
LOG=$E2E_DIR/data/audit.log
A=(--token alice-token) B=(--token bob-token)

# expect_fail WHAT NEEDLE CMD...: the command fails, its output containing NEEDLE.
expect_fail() {
  local what=$1 want=$2 out; shift 2
  if out=$("$@" 2>&1); then fail "$what: succeeded: $out"; fi
  expect_contains "$what" "$out" "$want"
}
code_of() { tail -1 <<<"$1"; }
body_of() { head -n -1 <<<"$1"; }
jget() { /usr/bin/python3 -c 'import json,sys; d=json.loads(sys.argv[1])
for k in sys.argv[2].split("."): d=d[k] if not isinstance(d,list) else d[int(k)]
print(json.dumps(d,sort_keys=True) if not isinstance(d,str) else d)' "$1" "$2"; }

for ns in tenant-a tenant-b; do
  k create namespace "$ns" >/dev/null
  k create secret generic creds --from-literal=password=s3cret -n "$ns" >/dev/null
  k create sa builder -n "$ns" >/dev/null
done
k create rolebinding tenant-a-admins --clusterrole=admin --group=tenant-a-admins -n tenant-a >/dev/null
k create rolebinding builder-view --clusterrole=view --serviceaccount=tenant-a:builder \
  -n tenant-a >/dev/null

# ---- the admin asks "what can alice do?": every answer is alice's ----
who=$(k auth whoami --as=alice -o jsonpath='{.status.userInfo.username} {.status.userInfo.groups}')
expect_eq "whoami --as" "$who" 'alice ["system:authenticated"]'
who=$(k auth whoami --as=alice --as-group=tenant-a-admins --as-group=devs --as-uid=u-1 \
  -o jsonpath='{.status.userInfo.username} {.status.userInfo.uid} {.status.userInfo.groups}')
expect_eq "whoami --as --as-group --as-uid" "$who" \
  'alice u-1 ["tenant-a-admins","devs","system:authenticated"]'
expect_eq "whoami table" "$(k auth whoami --as=alice | awk '/^Username/ {print $2}')" alice

expect_fail "alice (impersonated) lists tenant-b's secrets" \
  'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "tenant-b"' \
  k get secrets -n tenant-b --as=alice
expect_fail "alice (impersonated) lists tenant-a's secrets without her group" \
  'User "alice" cannot list resource "secrets"' k get secrets -n tenant-a --as=alice
expect_eq "alice in her group lists tenant-a's secrets" \
  "$(k get secrets -n tenant-a --as=alice --as-group=tenant-a-admins -o name)" secret/creds
expect_fail "alice (impersonated) creates in tenant-b" 'User "alice" cannot create resource "configmaps"' \
  k create configmap x -n tenant-b --as=alice --as-group=tenant-a-admins
k create configmap made-as-alice -n tenant-a --as=alice --as-group=tenant-a-admins >/dev/null

# kubectl auth can-i --as: SelfSubjectAccessReview and -RulesReview as alice.
canas() { k auth can-i "$@" 2>/dev/null || true; }
expect_eq "can-i --as list secrets tenant-b" "$(canas list secrets -n tenant-b --as=alice)" no
expect_eq "can-i --as list secrets tenant-a" \
  "$(canas list secrets -n tenant-a --as=alice --as-group=tenant-a-admins)" yes
expect_eq "can-i --as patch quota" \
  "$(canas patch resourcequotas -n tenant-a --as=alice --as-group=tenant-a-admins)" no
expect_eq "can-i --as (admin itself)" "$(canas patch resourcequotas -n tenant-a)" yes
list=$(k auth can-i --list -n tenant-b --as=alice)
case $list in *secrets*) fail "can-i --list --as shows tenant-b secrets: $list" ;; esac
list=$(k auth can-i --list -n tenant-a --as=alice --as-group=tenant-a-admins)
expect_contains "can-i --list --as in tenant-a" "$list" secrets

# ---- a ServiceAccount: its groups, its RoleBinding ----
SA=system:serviceaccount:tenant-a:builder
who=$(k auth whoami --as=$SA -o jsonpath='{.status.userInfo.username} {.status.userInfo.groups}')
expect_eq "whoami --as a ServiceAccount" "$who" \
  "$SA [\"system:serviceaccounts\",\"system:serviceaccounts:tenant-a\",\"system:authenticated\"]"
expect_eq "the ServiceAccount lists its namespace's pods" \
  "$(k get pods -n tenant-a --as=$SA -o name)" ""
expect_fail "the ServiceAccount reads secrets" \
  "User \"$SA\" cannot list resource \"secrets\" in API group \"\" in the namespace \"tenant-a\"" \
  k get secrets -n tenant-a --as=$SA
expect_eq "can-i --as a ServiceAccount" "$(canas list configmaps -n tenant-a --as=$SA)" yes

# ---- impersonators need the verb ----
expect_fail "bob impersonates alice" \
  'users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope' \
  k "${B[@]}" get pods -n tenant-a --as=alice
expect_fail "bob impersonates a ServiceAccount" \
  'serviceaccounts "builder" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "tenant-a"' \
  k "${B[@]}" get pods -n tenant-a --as=$SA
# bob may impersonate alice (only), with no group and no uid.
k create clusterrole impersonate-alice --verb=impersonate --resource=users --resource-name=alice >/dev/null
k create clusterrolebinding bob-impersonates-alice --clusterrole=impersonate-alice --user=bob >/dev/null
expect_eq "bob as alice" "$(k "${B[@]}" auth whoami --as=alice -o jsonpath='{.status.userInfo.username}')" alice
expect_fail "bob as alice lists tenant-b's secrets" 'User "alice" cannot list resource "secrets"' \
  k "${B[@]}" get secrets -n tenant-b --as=alice
expect_fail "bob impersonates carol" \
  'users "carol" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope' \
  k "${B[@]}" get pods --as=carol
expect_fail "bob adds a group" \
  'groups "tenant-a-admins" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope' \
  k "${B[@]}" get pods -n tenant-a --as=alice --as-group=tenant-a-admins
expect_fail "bob adds a uid" \
  'uids.authentication.k8s.io "u-1" is forbidden: User "bob" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope' \
  k "${B[@]}" get pods -n tenant-a --as=alice --as-uid=u-1
expect_fail "bob as alice with a group of system:masters" 'groups "system:masters" is forbidden' \
  k "${B[@]}" get secrets -n kube-system --as=alice --as-group=system:masters

# A tenant admin may impersonate the ServiceAccounts of its namespace
# (upstream's edit role, aggregated into admin), not those of another
# namespace, nor users.
who=$(k "${A[@]}" auth whoami --as=$SA -o jsonpath='{.status.userInfo.username}')
expect_eq "alice impersonates her ServiceAccount" "$who" "$SA"
expect_fail "alice impersonates tenant-b's ServiceAccount" \
  'serviceaccounts "builder" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "tenant-b"' \
  k "${A[@]}" get pods -n tenant-b --as=system:serviceaccount:tenant-b:builder
expect_fail "alice impersonates bob" 'users "bob" is forbidden: User "alice" cannot impersonate' \
  k "${A[@]}" get pods -n tenant-a --as=bob

# ---- the headers themselves (curl) ----
sreview() {
  api POST /apis/authentication.k8s.io/v1/selfsubjectreviews -H 'Content-Type: application/json' \
    -d '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}' "$@"
}
out=$(sreview -H 'Impersonate-User: alice' -H 'Impersonate-Uid: u-2' \
  -H 'Impersonate-Extra-Acme.com%2Fproject: p1' -H 'impersonate-extra-acme.com%2fproject: p2' \
  -H 'Impersonate-Extra-Scopes: view' -H 'Impersonate-Group: devs' -H 'Impersonate-Group: ops')
expect_eq "SelfSubjectReview code" "$(code_of "$out")" 201
expect_eq "SelfSubjectReview userInfo" "$(jget "$(body_of "$out")" status.userInfo)" \
  '{"extra": {"acme.com/project": ["p1", "p2"], "scopes": ["view"]}, "groups": ["devs", "ops", "system:authenticated"], "uid": "u-2", "username": "alice"}'
# system:anonymous gets system:unauthenticated, and so cannot even ask who it is.
out=$(sreview -H 'Impersonate-User: system:anonymous')
expect_eq "anonymous SelfSubjectReview" "$(code_of "$out")" 403
expect_contains "anonymous 403" "$(body_of "$out")" 'User \"system:anonymous\" cannot create resource \"selfsubjectreviews\"'
# Groups, extras or a uid without a user: upstream's 400.
out=$(api GET /api/v1/namespaces/tenant-a/pods -H 'Impersonate-Group: tenant-a-admins' \
  -H 'Impersonate-Extra-scopes: view')
expect_eq "group without user: code" "$(code_of "$out")" 400
expect_eq "group without user: reason" "$(jget "$(body_of "$out")" reason)" BadRequest
expect_eq "group without user: message" "$(jget "$(body_of "$out")" message)" \
  'requested [{Group  tenant-a-admins    } {UserExtra  view  authentication.k8s.io/v1  scopes}] without impersonating a user'
out=$(api GET /api/v1/namespaces -H 'Impersonate-Uid: u-1')
expect_eq "uid without user" "$(code_of "$out")" 400
out=$(api GET /api/v1/namespaces -H $'Impersonate-User: al\x01ice')
expect_eq "control character in Impersonate-User" "$(code_of "$out")" 400
expect_contains "control character in Impersonate-User" "$out" "invalid control character"
# An extra needs its own grant: bob may impersonate alice, not her extras.
out=$(curl -sS --cacert "$E2E_DIR/data/ca.crt" -H "Authorization: Bearer bob-token" \
  -H 'Impersonate-User: alice' -H 'Impersonate-Extra-Scopes: view' -w '\n%{http_code}' \
  "$ALLOT_URL/api/v1/namespaces/tenant-a/pods")
expect_eq "bob adds an extra: code" "$(code_of "$out")" 403
expect_eq "bob adds an extra: message" "$(jget "$(body_of "$out")" message)" \
  'userextras.authentication.k8s.io "view" is forbidden: User "bob" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope'
expect_eq "bob adds an extra: details" "$(jget "$(body_of "$out")" details)" \
  '{"group": "authentication.k8s.io", "kind": "userextras", "name": "view"}'
# Without impersonation headers nothing changes; an empty Impersonate-User is none.
out=$(sreview -H 'Impersonate-User;')
expect_eq "empty Impersonate-User" "$(jget "$(body_of "$out")" status.userInfo.username)" admin
# The python client's impersonation headers (the same as client-go's).
/usr/bin/python3 - <<'PY' || fail "python client"
import json
import kubernetes as k8s
cfg = k8s.client.Configuration()
k8s.config.load_kube_config(client_configuration=cfg)
api = k8s.client.ApiClient(cfg)
api.set_default_header("Impersonate-User", "alice")
api.set_default_header("Impersonate-Group", "tenant-a-admins")
v1 = k8s.client.CoreV1Api(api)
assert [s.metadata.name for s in v1.list_namespaced_secret("tenant-a").items] == ["creds"]
try:
    v1.list_namespaced_secret("tenant-b")
    raise SystemExit("alice listed tenant-b's secrets")
except k8s.client.exceptions.ApiException as e:
    assert e.status == 403, e.status
    assert 'User "alice" cannot list resource "secrets"' in json.loads(e.body)["message"], e.body
PY

# ---- the audit log: user is who sent it, impersonatedUser who it acted as ----
/usr/bin/python3 - "$LOG" <<'PY' || fail "audit log"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
def find(pred):
    return [e for e in events if pred(e)]
# the admin listing tenant-b's secrets as alice: denied, both users named
got = find(lambda e: e.get("impersonatedUser", {}).get("username") == "alice"
           and e["verb"] == "list" and e.get("objectRef", {}).get("namespace") == "tenant-b"
           and e["user"]["username"] == "admin")
assert got, "no impersonated list of tenant-b secrets"
e = got[0]
assert e["impersonatedUser"] == {"username": "alice", "groups": ["system:authenticated"]}, e
assert e["user"]["groups"] == ["system:masters", "system:authenticated"], e["user"]
assert e["responseStatus"]["code"] == 403, e["responseStatus"]
assert e["annotations"]["authorization.k8s.io/decision"] == "forbid", e
# the uid and extras are recorded too
got = find(lambda e: e.get("impersonatedUser", {}).get("uid") == "u-2")
assert got and got[0]["impersonatedUser"]["extra"] == {"acme.com/project": ["p1", "p2"],
                                                        "scopes": ["view"]}, got
# a ServiceAccount impersonated by alice (her token: the user is alice)
got = find(lambda e: e["user"]["username"] == "alice" and e["verb"] == "create"
           and e.get("impersonatedUser", {}).get("username") == "system:serviceaccount:tenant-a:builder")
assert got and got[0]["responseStatus"]["code"] == 201, got
# a refused impersonation: the sender only, with the 403
got = find(lambda e: e["user"]["username"] == "bob" and e["responseStatus"]["code"] == 403
           and "cannot impersonate resource \"users\"" in e["responseStatus"].get("message", ""))
assert got and all("impersonatedUser" not in e for e in got), got
# the 400
got = find(lambda e: e["responseStatus"]["code"] == 400
           and "without impersonating a user" in e["responseStatus"].get("message", ""))
assert got and "impersonatedUser" not in got[0], got
PY

# No token reaches the logs.
for f in "$E2E_DIR/allotd.log" "$LOG"; do
  for t in "$ALLOT_TOKEN" alice-token bob-token; do
    if grep -qF "$t" "$f"; then fail "a token reached $f"; fi
  done
done
stop_allotd
echo "PASS test_impersonation"
