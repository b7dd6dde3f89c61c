#!/usr/bin/env bash
# test_rbac.sh - the tenancy model with the real kubectl: three users (the
# cluster admin, tenant A's admin alice, tenant B's viewer bob), bound as a
# platform team binds tenants (RoleBindings to upstream's admin and view
# ClusterRoles). A matrix of (user, verb, resource, namespace) checked
# against upstream RBAC's answer with `kubectl auth can-i` and, for the
# cases that matter, by doing it: a denied write answers 403 with
# upstream's text and changes nothing (resourceVersions unchanged).
source "$(dirname "$0")/lib.sh"
need_kubectl

cat >"$E2E_DIR/tokens.csv" <<'EOF'
alice-token,alice,alice-uid,"tenant-a-admins"
bob-token,bob,bob-uid
EOF
start_allotd --token-auth-file "$E2E_DIR/tokens.csv" --scheduler=false --node-agent=false

A=(--token alice-token) B=(--token bob-token)
ka() { k "${A[@]}" "$@"; }
kb() { k "${B[@]}" "$@"; }

for ns in tenant-a tenant-b; do k create namespace "$ns" >/dev/null; done
k create rolebinding tenant-a-admins --clusterrole=admin --group=tenant-a-admins -n tenant-a >/dev/null
k create rolebinding bob-view --clusterrole=view --user=bob -n tenant-b >/dev/null
for ns in tenant-a tenant-b; do
  k create quota compute --hard=pods=10,requests.cpu=4 -n "$ns" >/dev/null
  k create secret generic creds --from-literal=password=s3cret -n "$ns" >/dev/null
done
k create secret generic root --from-literal=k=v -n kube-system >/dev/null

# ---- the matrix: kubectl auth can-i against upstream's answer ----
fails=0
cani() { # user want verb resource [ns|--all-namespaces|""] [subresource]
  local user=$1 want=$2 verb=$3 res=$4 ns=${5:-} sub=${6:-} got args=()
  [ -n "$ns" ] && args+=(-n "$ns")
  [ -n "$sub" ] && args+=(--subresource "$sub")
  local tok=()
  case $user in alice) tok=("${A[@]}") ;; bob) tok=("${B[@]}") ;; esac
  got=$(k "${tok[@]}" auth can-i "$verb" "$res" "${args[@]}" 2>/dev/null || true)
  if [ "$got" != "$want" ]; then
    echo "FAIL: $user can-i $verb $res${sub:+/$sub} ${ns:-(cluster)}: got '$got', want '$want'" >&2
    fails=$((fails + 1))
  fi
}
n=0
while read -r user want verb res ns sub; do
  [ -z "$user" ] || [ "${user:0:1}" = "#" ] && continue
  [ "$ns" = "-" ] && ns=""
  cani "$user" "$want" "$verb" "$res" "$ns" "$sub"
  n=$((n + 1))
done <<'EOF'
# user  answer verb     resource                 namespace    subresource
admin   yes  create     pods                     tenant-a
admin   yes  delete     namespaces               -
admin   yes  create     nodes                    -
admin   yes  update     resourcequotas           tenant-b     status
admin   yes  get        secrets                  kube-system
admin   yes  create     pods                     tenant-b     binding
alice   yes  create     pods                     tenant-a
alice   yes  delete     pods                     tenant-a
alice   yes  list       pods                     tenant-a
alice   yes  watch      pods                     tenant-a
alice   yes  get        secrets                  tenant-a
alice   yes  create     configmaps               tenant-a
alice   yes  get        resourcequotas           tenant-a
alice   yes  list       resourcequotas           tenant-a
alice   yes  create     resourcepoolclaims       tenant-a
alice   yes  list       customquotas             tenant-a
alice   yes  create     rolebindings             tenant-a
alice   yes  create     deployments.apps         tenant-a
alice   no   update     resourcequotas           tenant-a
alice   no   patch      resourcequotas           tenant-a
alice   no   delete     resourcequotas           tenant-a
alice   no   update     resourcequotas           tenant-a     status
alice   no   create     pods                     tenant-a     binding
alice   no   create     customquotas             tenant-a
alice   no   update     customquotas             tenant-a
alice   no   create     limitranges              tenant-a
alice   no   create     pods                     tenant-b
alice   no   list       pods                     tenant-b
alice   no   get        secrets                  tenant-b
alice   no   get        secrets                  kube-system
alice   no   list       namespaces               -
alice   no   delete     namespaces               -
alice   no   create     nodes                    -
alice   no   create     resourcepools            -
alice   no   update     globalcustomquotas       -
alice   no   create     clusterrolebindings      -
bob     yes  list       pods                     tenant-b
bob     yes  get        resourcequotas           tenant-b
bob     yes  list       resourcepoolclaims       tenant-b
bob     yes  list       customquotas             tenant-b
bob     no   create     pods                     tenant-b
bob     no   delete     pods                     tenant-b
bob     no   get        secrets                  tenant-b
bob     no   list       pods                     tenant-a
bob     no   create     resourcepoolclaims       tenant-b
bob     no   update     resourcequotas           tenant-b
bob     no   list       nodes                    -
EOF
[ "$fails" -eq 0 ] || fail "$fails of $n can-i cases differ from upstream RBAC"
echo "can-i: $n cases as upstream"

# ---- doing it: denied writes change nothing ----
rv() { k get "$@" -o jsonpath='{.metadata.resourceVersion}'; }
expect_forbidden() { # what expected-message-part cmd...
  local what=$1 want=$2 out; shift 2
  if out=$("$@" 2>&1); then fail "$what: allowed: $out"; fi
  case $out in *Forbidden*"$want"* | *forbidden*"$want"*) ;; *) fail "$what: $out (want ...$want)" ;; esac
}

q0=$(rv quota compute -n tenant-a)
expect_forbidden "alice raises her own quota" \
  'User "alice" cannot patch resource "resourcequotas" in API group "" in the namespace "tenant-a"' \
  ka patch quota compute -n tenant-a --type=merge -p '{"spec":{"hard":{"pods":"1000"}}}'
expect_forbidden "alice writes her quota's status" \
  'cannot patch resource "resourcequotas/status"' \
  ka patch quota compute -n tenant-a --subresource=status --type=merge \
  -p '{"status":{"used":{"pods":"0"}}}'
expect_forbidden "alice deletes her quota" 'cannot delete resource "resourcequotas"' \
  ka delete quota compute -n tenant-a
[ "$(rv quota compute -n tenant-a)" = "$q0" ] || fail "tenant-a's quota changed"

s0=$(rv secret creds -n tenant-b)
expect_forbidden "alice reads tenant B's secret" \
  'secrets "creds" is forbidden: User "alice" cannot get resource "secrets" in API group "" in the namespace "tenant-b"' \
  ka get secret creds -n tenant-b
expect_forbidden "alice lists kube-system's secrets" \
  'User "alice" cannot list resource "secrets" in API group "" in the namespace "kube-system"' \
  ka get secrets -n kube-system
expect_forbidden "bob reads his own namespace's secret" 'cannot get resource "secrets"' \
  kb get secret creds -n tenant-b
[ "$(rv secret creds -n tenant-b)" = "$s0" ] || fail "tenant-b's secret changed"

ka create -n tenant-a -f - >/dev/null <<'EOF'
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"c",
 "image":"busybox:1.36","resources":{"requests":{"cpu":"100m"}}}]}}
EOF
p0=$(rv pod web -n tenant-a)
cat >"$E2E_DIR/binding.json" <<'EOF'
{"apiVersion":"v1","kind":"Binding","metadata":{"name":"web"},"target":{"apiVersion":"v1","kind":"Node","name":"node-1"}}
EOF
expect_forbidden "alice binds her pod" 'cannot create resource "pods/binding"' \
  ka create -f "$E2E_DIR/binding.json" --raw /api/v1/namespaces/tenant-a/pods/web/binding
[ "$(rv pod web -n tenant-a)" = "$p0" ] || fail "alice's pod changed"
[ -z "$(k get pod web -n tenant-a -o jsonpath='{.spec.nodeName}')" ] || fail "the pod was bound"

expect_forbidden "alice deletes tenant B" 'cannot delete resource "namespaces"' \
  ka delete namespace tenant-b
k get namespace tenant-b >/dev/null || fail "tenant-b is gone"
expect_forbidden "alice creates a node" 'cannot create resource "nodes"' \
  ka create -f - <<'EOF'
{"apiVersion":"v1","kind":"Node","metadata":{"name":"rogue"}}
EOF
expect_forbidden "bob creates a pod" 'cannot create resource "pods"' \
  kb run x --image=busybox:1.36 -n tenant-b --restart=Never
expect_forbidden "alice reads metrics" 'User "alice" cannot get path "/metrics"' \
  ka get --raw /metrics

# ---- escalation: a tenant admin may share what she holds, nothing more ----
expect_forbidden "alice binds cluster-admin in her namespace" \
  'is attempting to grant RBAC permissions not currently held' \
  ka create rolebinding grab --clusterrole=cluster-admin --user=alice -n tenant-a
expect_forbidden "alice writes a Role with rights she lacks" \
  'is attempting to grant RBAC permissions not currently held' \
  ka create role quota-writer --verb=update --resource=resourcequotas -n tenant-a
ka create rolebinding bob-view --clusterrole=view --user=bob -n tenant-a >/dev/null ||
  fail "alice could not share view of her namespace"
ka create role pod-reader --verb=get,list --resource=pods -n tenant-a >/dev/null ||
  fail "alice could not write a Role within her rights"
wait_until 10 kb get pods -n tenant-a || fail "bob cannot read tenant-a after alice's binding"

# ---- who am I, and what may I ----
who=$(ka auth whoami -o jsonpath='{.status.userInfo.username}|{.status.userInfo.groups}')
case $who in 'alice|'*tenant-a-admins*system:authenticated*) ;; *) fail "whoami: $who" ;; esac
list=$(ka auth can-i --list -n tenant-a)
grep_all -E '^pods +\[\] +\[\] +\[.*create' <<<"$list" || fail "can-i --list: $list"
grep_all -E '^resourcequotas +\[\] +\[\] +\[get list watch\]' <<<"$list" ||
  fail "can-i --list shows more than reading quotas: $list"

# ---- the admin token is unaffected; an unknown token is 401 ----
k get secrets -n kube-system >/dev/null || fail "admin cannot read kube-system"
if out=$(k --token nobody get pods -n tenant-a 2>&1); then fail "unknown token allowed"; fi
grep_all -i "unauthorized\|provide credentials" <<<"$out" || fail "unknown token: $out"

# ---- the audit log: every request, with its user and decision, no secrets ----
log="$E2E_DIR/data/audit.log"
[ "$(stat -c %a "$log")" = 600 ] || fail "audit log mode $(stat -c %a "$log")"
/usr/bin/python3 - "$log" <<'PY' || fail "audit log"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
assert events and all(e["apiVersion"] == "audit.k8s.io/v1" and e["kind"] == "Event" for e in events)
def find(user, verb, res, ns, code):
    for e in events:
        r = e.get("objectRef", {})
        if (e["user"].get("username") == user and e["verb"] == verb and r.get("resource") == res
                and r.get("namespace") == ns and e["responseStatus"]["code"] == code):
            return e
    raise SystemExit(f"no event {user} {verb} {res} {ns} {code}")
e = find("alice", "patch", "resourcequotas", "tenant-a", 403)
assert e["annotations"]["authorization.k8s.io/decision"] == "forbid", e
assert e["level"] == "Metadata" and "requestObject" not in e, e
e = find("alice", "create", "pods", "tenant-a", 201)
assert e["annotations"]["authorization.k8s.io/decision"] == "allow", e
assert "RoleBinding" in e["annotations"]["authorization.k8s.io/reason"], e
find("bob", "get", "secrets", "tenant-b", 403)
find("admin", "create", "secrets", "kube-system", 201)
text = open(sys.argv[1]).read()
for secret in ("alice-token", "bob-token", "s3cret", "czNjcmV0"):
    assert secret not in text, secret
assert any(e["user"].get("username") == "system:anonymous" and e["responseStatus"]["code"] == 401
           for e in events)
PY
admin_token=$(cat "$E2E_DIR/data/admin.token")
! grep_all -F "$admin_token" "$log" || fail "the admin token is in the audit log"

stop_allotd
echo "PASS"
