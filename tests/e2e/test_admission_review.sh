# test_admission_review.sh - allotd's admission webhook (server/webhook.c)
# on a standalone allotd: AdmissionReviews POSTed to /admission/v1/validate
# as a kube-apiserver would send them are decided as dry runs against the
# store, with exactly the texts a client of standalone allotd gets, and
# change nothing.
#
# Seed 003's shape (a pool selecting a tenant's namespace, a claim bound in
# it and used by a pod). For each denial the review's status.message is
# compared with what the real `kubectl create|patch|delete` of the same write
# prints against the same allotd. Then: malformed reviews are 400s, v1beta1
# reviews are answered in v1beta1, kinds allot does not serve and CONNECT are
# allowed, and who may call the webhook (401 unauthenticated, 403 without the
# RBAC grant of the non-resource URL, 200 with it). The store's revision and
# every object's resourceVersion are the same before and after all of it.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl
cat >"$E2E_DIR/tokens.csv" <<'EOF'
hook-token,kube-apiserver-hook,hook-uid
EOF
start_allotd --token-auth-file "$E2E_DIR/tokens.csv" --scheduler=false --node-agent=false
cd "$E2E_DIR"

G=capsule.clastix.io
NS=solar-e2e
PY=/usr/bin/python3

# ---- seed: a pool for the tenant's namespace, a claim in use ----
k create -f - >/dev/null <<EOF
{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"$NS","labels":{"capsule.clastix.io/tenant":"solar"}}}
EOF
k create -f - >/dev/null <<EOF
{"apiVersion":"$G/v1beta2","kind":"ResourcePool","metadata":{"name":"solar"},
 "spec":{"selectors":[{"matchLabels":{"capsule.clastix.io/tenant":"solar"}}],
         "quota":{"hard":{"requests.cpu":"2","requests.memory":"2Gi"}}}}
EOF
k create -f - >/dev/null <<EOF
{"apiVersion":"$G/v1beta2","kind":"ResourcePoolClaim","metadata":{"name":"c1","namespace":"$NS"},
 "spec":{"pool":"solar","claim":{"requests.cpu":"1","requests.memory":"1Gi"}}}
EOF
k create -f - >/dev/null <<EOF
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":"$NS"},
 "spec":{"containers":[{"name":"main","image":"nginx","resources":{"requests":{"cpu":"500m","memory":"256Mi"}}}]}}
EOF
in_use() {
  [ "$(k get resourcepoolclaim c1 -n $NS -o 'jsonpath={.status.conditions[?(@.type=="Bound")].reason}')" = InUse ]
}
wait_until 15 in_use || fail "claim c1 did not become InUse"

# state: the store's revision and every object's resourceVersion
state() {
  local rev
  rev=$(k get --raw '/api/v1/namespaces?limit=1' | $PY -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])')
  echo "rev=$rev"
  k get namespaces,pods,resourcequotas,resourcepools,resourcepoolclaims -A \
    -o 'jsonpath={range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name}={.metadata.resourceVersion}{"\n"}{end}'
}
before=$(state)

# ---- helpers ----

# review OP GROUP VERSION RESOURCE KIND NAME OBJECT OLDOBJECT [APIVERSION]:
# an AdmissionReview as a kube-apiserver sends it (OBJECT, OLDOBJECT: JSON or
# "null").
review() {
  $PY - "$@" <<'EOF'
import json, sys
op, group, version, resource, kind, name, obj, old = sys.argv[1:9]
av = sys.argv[9] if len(sys.argv) > 9 else "admission.k8s.io/v1"
gvk = {"group": group, "version": version, "kind": kind}
gvr = {"group": group, "version": version, "resource": resource}
req = {"uid": "705ab4f5-6393-11e8-b7cc-42010a800002", "kind": gvk, "resource": gvr,
       "requestKind": gvk, "requestResource": gvr, "name": name,
       "namespace": "solar-e2e" if resource not in ("namespaces", "resourcepools") else "",
       "operation": op,
       "userInfo": {"username": "admin", "uid": "014fbff9a07c", "groups": ["system:authenticated"]},
       "object": json.loads(obj), "oldObject": json.loads(old), "dryRun": False,
       "options": {"apiVersion": "meta.k8s.io/v1", "kind": op.capitalize() + "Options"}}
print(json.dumps({"apiVersion": av, "kind": "AdmissionReview", "request": req}))
EOF
}
# post [TOKEN]: POST stdin to the webhook; prints the body, then the code.
post() {
  curl -sS --cacert "$E2E_DIR/data/ca.crt" -H "Authorization: Bearer ${1:-$ALLOT_TOKEN}" \
    -H 'Content-Type: application/json' -X POST --data-binary @- -w '\n%{http_code}' \
    "$ALLOT_URL/admission/v1/validate"
}
# verdict: from post's output, "CODE apiVersion uid allowed[ code reason: message]".
verdict() {
  $PY -c '
import json, sys
lines = sys.stdin.read().rsplit("\n", 1)
body, code = json.loads(lines[0]), lines[1]
r = body.get("response")
if r is None:
    print(code, body.get("kind"), body.get("code"), body.get("message"))
    sys.exit()
s = r.get("status")
out = "%s %s %s %s" % (code, body["apiVersion"], r["uid"], str(r["allowed"]).lower())
if s is not None:
    out += " %s %s: %s" % (s.get("code"), s.get("reason"), s.get("message"))
print(out)'
}
# decide REVIEW-ARGS...: the verdict of that review, posted as the admin.
decide() { review "$@" | post | verdict; }
# message_of REVIEW-ARGS...: the denial's message only.
message_of() { review "$@" | post | $PY -c 'import json,sys; print(json.loads(sys.stdin.read().rsplit("\n",1)[0])["response"]["status"]["message"])'; }
UID_OK="705ab4f5-6393-11e8-b7cc-42010a800002"
ALLOWED="200 admission.k8s.io/v1 $UID_OK true"

claim() { # claim NAME CLAIM-JSON
  printf '{"apiVersion":"%s/v1beta2","kind":"ResourcePoolClaim","metadata":{"name":"%s","namespace":"%s"},"spec":{"pool":"solar","claim":%s}}' \
    "$G" "$1" "$NS" "$2"
}
pod() { # pod NAME CPU
  printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"%s"},"spec":{"containers":[{"name":"main","image":"nginx","resources":{"requests":{"cpu":"%s","memory":"128Mi"}}}]}}' \
    "$1" "$NS" "$2"
}
CLAIMS=("$G" v1beta2 resourcepoolclaims ResourcePoolClaim)
PODS=("" v1 pods Pod)

# expect_same_denial WHAT KUBECTL-PREFIX REVIEW-ARGS... -- KUBECTL-ARGS...:
# the review is denied with 403, and the real kubectl write is refused with
# exactly "Error from server (Forbidden): <prefix><the review's message>".
expect_same_denial() {
  local what=$1 prefix=$2; shift 2
  local args=() out msg
  while [ "$1" != -- ]; do args+=("$1"); shift; done
  shift
  expect_contains "$what: review" "$(decide "${args[@]}")" "200 admission.k8s.io/v1 $UID_OK false 403 Forbidden: "
  msg=$(message_of "${args[@]}")
  if out=$("$@" 2>&1); then fail "$what: kubectl allowed it: $out"; fi
  expect_eq "$what: kubectl says what the webhook says" "$out" "Error from server (Forbidden): $prefix$msg"
}

# ---- creates ----
c2=$(claim c2 '{"requests.cpu":"1"}')
expect_eq "claim within the pool" "$(decide CREATE "${CLAIMS[@]}" c2 "$c2" null)" "$ALLOWED"
k create --dry-run=server -f - <<<"$c2" >/dev/null || fail "kubectl dry run refused c2"
# more than the pool has left: standalone admits it (it waits, Exhausted)
c4=$(claim c4 '{"requests.cpu":"5"}')
expect_eq "claim beyond what is available waits" "$(decide CREATE "${CLAIMS[@]}" c4 "$c4" null)" "$ALLOWED"
c3=$(claim c3 '{"limits.cpu":"1"}')
expect_same_denial "claim for a resource the pool lacks" 'error when creating "STDIN": ' \
  CREATE "${CLAIMS[@]}" c3 "$c3" null -- k create -f - <<<"$c3"
p2=$(pod p2 2)
expect_same_denial "pod beyond the pool's quota" 'error when creating "STDIN": ' \
  CREATE "${PODS[@]}" p2 "$p2" null -- k create -f - <<<"$p2"
expect_contains "quota message" "$(message_of CREATE "${PODS[@]}" p2 "$p2" null)" \
  "exceeded quota: capsule-pool-solar"

# ---- updates and deletes of the claim in use ----
c1=$(k get resourcepoolclaim c1 -n $NS -o json)
grown=$(printf '%s' "$c1" | $PY -c 'import json,sys; o=json.load(sys.stdin); o["spec"]["claim"]["requests.cpu"]="2"; print(json.dumps(o))')
# the cluster's resourceVersion is not allot's: it is no precondition
grown=$(printf '%s' "$grown" | $PY -c 'import json,sys; o=json.load(sys.stdin); o["metadata"]["resourceVersion"]="999999"; print(json.dumps(o))')
expect_same_denial "grow a claim in use" "" UPDATE "${CLAIMS[@]}" c1 "$grown" "$c1" -- \
  k patch resourcepoolclaim c1 -n $NS --type=merge -p '{"spec":{"claim":{"requests.cpu":"2"}}}'
labelled=$(printf '%s' "$c1" | $PY -c 'import json,sys; o=json.load(sys.stdin); o["metadata"].setdefault("labels",{})["x"]="y"; o["metadata"]["resourceVersion"]="1"; print(json.dumps(o))')
expect_eq "relabel a claim in use" "$(decide UPDATE "${CLAIMS[@]}" c1 "$labelled" "$c1")" "$ALLOWED"
expect_same_denial "delete a claim in use" "" DELETE "${CLAIMS[@]}" c1 null "$c1" -- \
  k delete resourcepoolclaim c1 -n $NS --wait=false
expect_eq "delete an unused pod" "$(decide DELETE "${PODS[@]}" p1 null "$(k get pod p1 -n $NS -o json)")" "$ALLOWED"
# an object allot does not hold yet: decided as its creation
c5=$(claim c5 '{"requests.cpu":"1"}')
expect_eq "update of an unknown claim" "$(decide UPDATE "${CLAIMS[@]}" c5 "$c5" "$c5")" "$ALLOWED"
c6=$(claim c6 '{"limits.memory":"1"}')
expect_contains "update of an unknown claim, refused" "$(decide UPDATE "${CLAIMS[@]}" c6 "$c6" "$c6")" \
  "false 403 Forbidden: resourcepoolclaims.capsule.clastix.io \"c6\" is forbidden: resource limits.memory is not available in pool solar"
expect_eq "delete of an unknown claim" "$(decide DELETE "${CLAIMS[@]}" c9 null "$c5")" "$ALLOWED"

# ---- what allot does not decide ----
expect_eq "unknown kind" "$(decide CREATE example.com v1 widgets Widget w '{"kind":"Widget"}' null)" "$ALLOWED"
expect_eq "connect" "$(decide CONNECT "" v1 pods Pod p1 '{"kind":"PodExecOptions"}' null)" "$ALLOWED"
expect_eq "v1beta1 answered in v1beta1" \
  "$(review CREATE "${CLAIMS[@]}" c2 "$c2" null admission.k8s.io/v1beta1 | post | verdict)" \
  "200 admission.k8s.io/v1beta1 $UID_OK true"

# ---- malformed reviews are 400s ----
expect_contains "not JSON" "$(printf '{"apiVersion":' | post | verdict)" \
  "400 Status 400 AdmissionReview is invalid: not JSON: "
expect_eq "no uid" \
  "$(review CREATE "${CLAIMS[@]}" c2 "$c2" null | sed 's/"uid": "705ab4f5[^"]*", //' | post | verdict)" \
  "400 Status 400 AdmissionReview is invalid: request.uid: Required value"
expect_eq "unknown operation" \
  "$(review PATCH "${CLAIMS[@]}" c2 "$c2" null | post | verdict)" \
  '400 Status 400 AdmissionReview is invalid: request.operation: Unsupported value: "PATCH": supported values: "CREATE", "UPDATE", "DELETE", "CONNECT"'
expect_eq "wrong apiVersion" \
  "$(review CREATE "${CLAIMS[@]}" c2 "$c2" null admission.k8s.io/v2 | post | verdict)" \
  '400 Status 400 AdmissionReview is invalid: apiVersion: Unsupported value: "admission.k8s.io/v2": supported values: "admission.k8s.io/v1", "admission.k8s.io/v1beta1"'

# ---- who may call it ----
out=$(review CREATE "${CLAIMS[@]}" c2 "$c2" null |
  curl -sS --cacert "$E2E_DIR/data/ca.crt" -H 'Content-Type: application/json' -X POST \
    --data-binary @- -w '\n%{http_code}' "$ALLOT_URL/admission/v1/validate" | verdict)
expect_eq "unauthenticated" "$out" "401 Status 401 Unauthorized"
out=$(review CREATE "${CLAIMS[@]}" c2 "$c2" null | post hook-token | verdict)
expect_eq "authenticated without the grant" "$out" \
  '403 Status 403 forbidden: User "kube-apiserver-hook" cannot post path "/admission/v1/validate"'
expect_eq "GET" "$(api GET /admission/v1/validate | tail -1)" 405

after=$(state)
expect_eq "nothing written by the reviews" "$after" "$before"

# the grant (a write: after the comparison)
k create clusterrole allot-admission --verb=post --non-resource-url='/admission/*' >/dev/null
k create clusterrolebinding allot-admission --clusterrole=allot-admission \
  --user=kube-apiserver-hook >/dev/null
wait_until 15 sh -c "[ \"\$(kubectl --token hook-token auth can-i post /admission/v1/validate)\" = yes ]" ||
  fail "the grant did not take effect"
expect_eq "with the grant" "$(review CREATE "${CLAIMS[@]}" c2 "$c2" null | post hook-token | verdict)" "$ALLOWED"

stop_allotd
echo PASS
