# test_server_side_apply.sh - server-side apply and managedFields with the
# real kubectl (and python3-kubernetes' dynamic client): apply twice is a
# no-op; a second manager's conflicting apply is refused with upstream's
# message and taken with --force-conflicts; fields an applier leaves out are
# removed; client-side apply keeps working, and the migrations between the
# two; kubectl diff --server-side; managedFields of create, patch, replace,
# label, edit-like writes and apply; status and scale subresources; apply
# to a pod over quota gets quota's 403; hostile bodies get a 4xx quickly.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl

start_allotd
k create namespace ssa >/dev/null

rv() { k get "$1" "$2" -n ssa -o jsonpath='{.metadata.resourceVersion}'; }
# managers KIND NAME: "manager/operation[/subresource]" per entry, sorted
# the entries of the clients (allot's own controllers write as "allotd", as
# upstream's as kube-controller-manager: a Deployment's revision and status)
managers() {
  k get "$1" "$2" -n ssa -o json --show-managed-fields |
    /usr/bin/python3 -c 'import json,sys
o=json.load(sys.stdin)
print(" ".join(sorted(e["manager"]+"/"+e["operation"]+("/"+e["subresource"] if e.get("subresource") else "")
                      for e in o["metadata"].get("managedFields",[]) if e["manager"] != "allotd")))'
}
# fields KIND NAME MANAGER: that manager's fieldsV1, compact, keys sorted
fields() {
  k get "$1" "$2" -n ssa -o json --show-managed-fields |
    /usr/bin/python3 -c 'import json,sys
o=json.load(sys.stdin)
print(json.dumps([e["fieldsV1"] for e in o["metadata"]["managedFields"] if e["manager"]==sys.argv[1]][0],
                 sort_keys=True,separators=(",",":")))' "$3"
}

cat >"$E2E_DIR/cm.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: conf
  namespace: ssa
  labels: {app: web}
data:
  a: "1"
  b: "2"
EOF

# --- apply --server-side twice: the second is a no-op ---
expect_eq "first apply" "$(k apply --server-side -f "$E2E_DIR/cm.yaml")" "configmap/conf serverside-applied"
rv1=$(rv cm conf)
expect_eq "second apply" "$(k apply --server-side -f "$E2E_DIR/cm.yaml")" "configmap/conf serverside-applied"
expect_eq "no-op apply keeps the resourceVersion" "$(rv cm conf)" "$rv1"
expect_eq "managers after apply" "$(managers cm conf)" "kubectl/Apply"
expect_eq "applied fields" "$(fields cm conf kubectl)" \
  '{"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}}'
case "$(k get cm conf -n ssa -o yaml)" in
  *managedFields*) fail "kubectl get -o yaml shows managedFields without --show-managed-fields" ;;
esac

# --- a second manager's conflicting apply: refused, then forced ---
sed 's/a: "1"/a: "9"/' "$E2E_DIR/cm.yaml" >"$E2E_DIR/cm9.yaml"
if out=$(k apply --server-side --field-manager=other -f "$E2E_DIR/cm9.yaml" 2>&1); then
  fail "a conflicting apply was accepted: $out"
fi
expect_contains "conflict message" "$out" 'Apply failed with 1 conflict: conflict with "kubectl": .data.a'
expect_eq "refused apply changed nothing" "$(k get cm conf -n ssa -o jsonpath='{.data.a}')" "1"
# the same values: no conflict, shared ownership
k apply --server-side --field-manager=sharer -f "$E2E_DIR/cm.yaml" >/dev/null
k apply --server-side --field-manager=other --force-conflicts -f "$E2E_DIR/cm9.yaml" >/dev/null
expect_eq "forced value" "$(k get cm conf -n ssa -o jsonpath='{.data.a}')" "9"
expect_eq "ownership moved" "$(fields cm conf kubectl)" '{"f:data":{"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}}'
expect_eq "forced applier owns it" "$(fields cm conf other)" \
  '{"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}}'

# raw: upstream's 409 Status, causes of type FieldManagerConflict
r=$(api PATCH "/api/v1/namespaces/ssa/configmaps/conf?fieldManager=third" \
  -H 'Content-Type: application/apply-patch+yaml' \
  --data-binary $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: conf\ndata:\n  a: "3"\n  b: "3"\n')
expect_eq "409" "$(echo "$r" | tail -1)" 409
body=$(echo "$r" | sed '$d')
# (the forced apply took .data.a from sharer too: it changed its value)
expect_contains "grouped by manager" "$body" 'Apply failed with 4 conflicts: conflicts with \"kubectl\":\n- .data.b\nconflicts with \"other\":\n- .data.a\n- .data.b\nconflicts with \"sharer\":\n- .data.b'
expect_contains "cause" "$body" '{"reason":"FieldManagerConflict","message":"conflict with \"kubectl\"","field":".data.b"}'

# --- fields an applier leaves out are removed, unless another owns them ---
cat >"$E2E_DIR/own.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: own, namespace: ssa}
data: {x: "1", y: "2", z: "3"}
EOF
k apply --server-side -f "$E2E_DIR/own.yaml" >/dev/null
k patch cm own -n ssa -p '{"data":{"w":"0"}}' >/dev/null
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: own, namespace: ssa}\ndata: {z: "3"}\n' |
  k apply --server-side --field-manager=keeper -f - >/dev/null
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: own, namespace: ssa}\ndata: {x: "1"}\n' |
  k apply --server-side -f - >/dev/null
expect_eq "removed y, kept x, the patch's w, keeper's z" \
  "$(k get cm own -n ssa -o jsonpath='{.data}')" '{"w":"0","x":"1","z":"3"}'

# keyed lists merge by key: two managers, one container each
cat >"$E2E_DIR/dep.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ssa}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: app, image: nginx, ports: [{containerPort: 80}]}
EOF
k apply --server-side -f "$E2E_DIR/dep.yaml" >/dev/null
printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ssa}\nspec:\n  template:\n    spec:\n      containers:\n      - {name: sidecar, image: busybox}\n' |
  k apply --server-side --field-manager=mesh -f - >/dev/null
expect_eq "both containers" "$(k get deploy web -n ssa -o jsonpath='{.spec.template.spec.containers[*].name}')" "app sidecar"
expect_eq "keyed by name, ports by containerPort and protocol" \
  "$(fields deploy web kubectl | /usr/bin/python3 -c 'import json,sys; print(sorted(json.load(sys.stdin)["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"]["f:ports"]))')" \
  "['k:{\"containerPort\":80,\"protocol\":\"TCP\"}']"

# --- managedFields of the other verbs ---
k create configmap made -n ssa --from-literal=k=v >/dev/null
expect_eq "create" "$(managers cm made)" "kubectl-create/Update"
expect_eq "create fields" "$(fields cm made kubectl-create)" '{"f:data":{".":{},"f:k":{}}}'
k patch cm made -n ssa -p '{"data":{"k":"v2","p":"1"}}' >/dev/null
expect_eq "patch" "$(managers cm made)" "kubectl-create/Update kubectl-patch/Update"
expect_eq "an update takes what it changes" "$(fields cm made kubectl-create)" '{"f:data":{}}'
k get cm made -n ssa -o json | sed 's/"v2"/"v3"/' | k replace -f - >/dev/null
k label cm made -n ssa tier=x >/dev/null
expect_eq "replace, label" "$(managers cm made)" \
  "kubectl-create/Update kubectl-label/Update kubectl-patch/Update kubectl-replace/Update"
EDITOR="sed -i s/v3/v4/" k edit cm made -n ssa >/dev/null
y=$(k get cm made -n ssa -o yaml --show-managed-fields)
expect_contains "kubectl edit, as -o yaml --show-managed-fields shows it" "$y" "manager: kubectl-edit"
expect_contains "its operation" "$y" "operation: Update"
expect_eq "edited" "$(k get cm made -n ssa -o jsonpath='{.data.k}')" "v4"
# an edit-like update without fieldManager: the user agent's prefix
r=$(api PATCH "/api/v1/namespaces/ssa/configmaps/made" -A "my-tool/1.0 (linux)" \
  -H 'Content-Type: application/merge-patch+json' --data '{"data":{"t":"1"}}')
expect_eq "merge patch" "$(echo "$r" | tail -1)" 200
expect_contains "user agent manager" "$(managers cm made)" "my-tool/Update"
# managedFields: [] resets them; invalid ones are ignored
r=$(api PATCH "/api/v1/namespaces/ssa/configmaps/made?fieldManager=resetter" \
  -H 'Content-Type: application/merge-patch+json' --data '{"metadata":{"managedFields":[]},"data":{"r":"1"}}')
expect_eq "reset" "$(managers cm made)" "resetter/Update"
r=$(api PATCH "/api/v1/namespaces/ssa/configmaps/made?fieldManager=bad" \
  -H 'Content-Type: application/merge-patch+json' \
  --data '{"metadata":{"managedFields":[{"manager":"x","operation":"Steal","apiVersion":"v1"}]}}')
expect_eq "invalid managedFields ignored" "$(echo "$r" | tail -1)" 200
expect_eq "still the stored ones" "$(managers cm made)" "resetter/Update"

# --- client-side apply keeps working, and its migrations ---
cat >"$E2E_DIR/csa.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: csa, namespace: ssa}
spec:
  replicas: 2
  selector: {matchLabels: {app: csa}}
  template:
    metadata: {labels: {app: csa}}
    spec:
      containers: [{name: c, image: nginx}]
EOF
expect_eq "client-side create" "$(k apply -f "$E2E_DIR/csa.yaml")" "deployment.apps/csa created"
expect_eq "client-side again" "$(k apply -f "$E2E_DIR/csa.yaml")" "deployment.apps/csa unchanged"
expect_eq "client-side manager" "$(managers deploy csa)" "kubectl-client-side-apply/Update"
expect_contains "last-applied annotation" \
  "$(k get deploy csa -n ssa -o jsonpath='{.metadata.annotations}')" "last-applied-configuration"
# to server-side: the same manifest, then a changed one, without conflicts
k apply --server-side -f "$E2E_DIR/csa.yaml" >/dev/null
sed 's/replicas: 2/replicas: 3/' "$E2E_DIR/csa.yaml" >"$E2E_DIR/csa3.yaml"
k apply --server-side -f "$E2E_DIR/csa3.yaml" >/dev/null
expect_eq "server-side took over" "$(k get deploy csa -n ssa -o jsonpath='{.spec.replicas}')" 3
expect_contains "the annotation follows the server-side apply" \
  "$(k get deploy csa -n ssa -o jsonpath='{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}')" \
  '"replicas":3'
# and back to client-side
sed 's/replicas: 2/replicas: 4/' "$E2E_DIR/csa.yaml" >"$E2E_DIR/csa4.yaml"
expect_eq "client-side after server-side" "$(k apply -f "$E2E_DIR/csa4.yaml")" "deployment.apps/csa configured"
expect_eq "replicas" "$(k get deploy csa -n ssa -o jsonpath='{.spec.replicas}')" 4

# --- kubectl diff --server-side ---
# (after a client-side apply it would show the last-applied annotation,
# which kubectl's server-side apply rewrites, as upstream's does)
k apply --server-side -f "$E2E_DIR/csa4.yaml" >/dev/null
set +e
k diff --server-side -f "$E2E_DIR/csa4.yaml" >"$E2E_DIR/diff0" 2>&1; same=$?
k diff --server-side -f "$E2E_DIR/csa.yaml" >"$E2E_DIR/diff1" 2>&1; differ=$?
set -e
expect_eq "diff of the live manifest" "$same" 0
expect_eq "diff of a change" "$differ" 1
expect_contains "diff shows it" "$(cat "$E2E_DIR/diff1")" "+  replicas: 2"
expect_eq "diff wrote nothing" "$(k get deploy csa -n ssa -o jsonpath='{.spec.replicas}')" 4

# --- subresources: status, scale ---
# the deployment controller owns the status it writes (as allotd): a status
# apply conflicts with it, as with kube-controller-manager, unless forced
status_apply() {
  api PATCH "/apis/apps/v1/namespaces/ssa/deployments/web/status?fieldManager=ctl$1" \
    -H 'Content-Type: application/apply-patch+yaml' \
    --data-binary $'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nstatus:\n  observedGeneration: 1\n'
}
r=$(status_apply "")
expect_eq "status apply against the controller" "$(echo "$r" | tail -1)" 409
expect_contains "status conflict" "$(echo "$r" | sed '$d')" 'conflict with \"allotd\" with subresource \"status\" using apps/v1: .status.observedGeneration'
r=$(status_apply "&force=true")
expect_eq "status apply" "$(echo "$r" | tail -1)" 200
expect_contains "status manager" "$(managers deploy web)" "ctl/Apply/status"
r=$(api PATCH "/apis/apps/v1/namespaces/ssa/deployments/web/scale?fieldManager=hpa" \
  -H 'Content-Type: application/apply-patch+yaml' \
  --data-binary $'apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: web\nspec:\n  replicas: 5\n')
expect_eq "scale apply conflicts with kubectl's replicas" "$(echo "$r" | tail -1)" 409
expect_contains "scale conflict" "$(echo "$r" | sed '$d')" 'conflict with \"kubectl\": .spec.replicas'
r=$(api PATCH "/apis/apps/v1/namespaces/ssa/deployments/web/scale?fieldManager=hpa&force=true" \
  -H 'Content-Type: application/apply-patch+yaml' \
  --data-binary $'apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: web\nspec:\n  replicas: 5\n')
expect_eq "forced scale apply" "$(echo "$r" | tail -1)" 200
expect_eq "replicas" "$(k get deploy web -n ssa -o jsonpath='{.spec.replicas}')" 5
expect_contains "hpa owns replicas under scale" "$(managers deploy web)" "hpa/Apply/scale"
expect_eq "hpa's fields" "$(fields deploy web hpa)" '{"f:spec":{"f:replicas":{}}}'

# --- apply creates; dry run creates nothing; quota as for any write ---
r=$(api PATCH "/api/v1/namespaces/ssa/configmaps/dry?fieldManager=m&dryRun=All" \
  -H 'Content-Type: application/apply-patch+yaml' \
  --data-binary $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dry\ndata:\n  a: "1"\n')
expect_eq "dry-run apply of a new object" "$(echo "$r" | tail -1)" 201
k get cm dry -n ssa >/dev/null 2>&1 && fail "a dry run created the object"
# (a namespace of its own: the Deployments above have pods in ssa)
k create namespace ssaq >/dev/null
k create quota pods -n ssaq --hard=pods=1 >/dev/null
pod() { printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: ssaq}\nspec:\n  containers: [{name: c, image: nginx}]\n' "$1"; }
pod p1 | k apply --server-side -f - >/dev/null
wait_until 20 sh -c "kubectl get quota pods -n ssaq -o jsonpath='{.status.used.pods}' | grep -qx 1" ||
  fail "quota did not count p1"
if out=$(pod p2 | k apply --server-side -f - 2>&1); then fail "apply over quota accepted: $out"; fi
expect_contains "quota's 403" "$out" 'pods "p2" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=1, limited: pods=1'
k get pod p2 -n ssaq >/dev/null 2>&1 && fail "p2 exists"

# --- requests upstream refuses ---
apply_raw() { api PATCH "/api/v1/namespaces/ssa/configmaps/conf$1" -H 'Content-Type: application/apply-patch+yaml' --data-binary "$2"; }
r=$(apply_raw "" $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: conf\n')
expect_eq "no fieldManager" "$(echo "$r" | tail -1)" 422
expect_contains "no fieldManager message" "$r" 'PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch'
r=$(api PATCH "/api/v1/namespaces/ssa/configmaps/conf?force=true" -H 'Content-Type: application/merge-patch+json' --data '{}')
expect_contains "force on a merge patch" "$r" 'force: Forbidden: may not be specified for non-apply patch'
r=$(apply_raw "?fieldManager=m" $'apiVersion: v1\nkind: Secret\nmetadata:\n  name: conf\n')
expect_contains "wrong kind" "$r" 'invalid object type: /v1, Kind=Secret'
r=$(apply_raw "?fieldManager=m" $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: conf\n  managedFields: []\n')
expect_contains "managedFields in an apply" "$r" 'metadata.managedFields must be nil'
r=$(apply_raw "?fieldManager=m" $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: conf\ndatta:\n  a: "1"\n')
expect_eq "unknown field" "$(echo "$r" | tail -1)" 400
expect_contains "unknown field message" "$r" 'failed to create typed patch object (ssa/conf; /v1, Kind=ConfigMap): .datta: field not declared in schema'
r=$(apply_raw "?fieldManager=m" $'a: [1\n')
expect_contains "bad YAML" "$r" 'error decoding YAML'
r=$(apply_raw "?fieldManager=m" $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n')
expect_contains "name of another object" "$r" 'the name of the object (other) does not match the name on the URL (conf)'

# hostile bodies: a YAML bomb and a deep document, refused quickly
{
  echo 'apiVersion: v1'; echo 'kind: ConfigMap'; echo 'metadata: {name: conf}'
  echo 'a: &a ["x","x","x","x","x","x","x","x","x","x"]'
  prev=a
  for l in b c d e f g h i; do printf '%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n' $l $l $prev $prev $prev $prev $prev $prev $prev $prev $prev $prev; prev=$l; done
} >"$E2E_DIR/bomb.yaml"
t0=$SECONDS
r=$(api PATCH "/api/v1/namespaces/ssa/configmaps/conf?fieldManager=m" -H 'Content-Type: application/apply-patch+yaml' --data-binary @"$E2E_DIR/bomb.yaml")
code=$(echo "$r" | tail -1)
[ "$code" -ge 400 ] && [ "$code" -lt 500 ] || fail "YAML bomb: $code"
[ $((SECONDS - t0)) -le 5 ] || fail "YAML bomb took $((SECONDS - t0)) s"
/usr/bin/python3 -c 'print("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: conf}\ndata: " + "{a: " * 5000 + "1" + "}" * 5000)' >"$E2E_DIR/deep.yaml"
r=$(api PATCH "/api/v1/namespaces/ssa/configmaps/conf?fieldManager=m" -H 'Content-Type: application/apply-patch+yaml' --data-binary @"$E2E_DIR/deep.yaml")
code=$(echo "$r" | tail -1)
[ "$code" -ge 400 ] && [ "$code" -lt 500 ] || fail "deep document: $code"
expect_eq "still served" "$(k get cm conf -n ssa -o jsonpath='{.data.a}')" 9

# --- python3-kubernetes: the dynamic client's server_side_apply ---
/usr/bin/python3 - <<'EOF'
import json
from kubernetes import config, dynamic
from kubernetes.client import api_client, exceptions
config.load_kube_config()
# the client's REST layer sends a dict only as JSON content types: an
# apply body goes as text (JSON is YAML)
dyn = dynamic.DynamicClient(api_client.ApiClient())
cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "py", "namespace": "ssa"},
        "data": {"k": "1"}}
made = cms.server_side_apply(body=json.dumps(body), name="py", namespace="ssa", field_manager="py")
assert made.data.k == "1", made
again = cms.server_side_apply(body=json.dumps(body), name="py", namespace="ssa", field_manager="py")
assert again.metadata.resourceVersion == made.metadata.resourceVersion, "apply twice changed it"
entries = [(e.manager, e.operation) for e in again.metadata.managedFields]
assert entries == [("py", "Apply")], entries
body["data"]["k"] = "2"
try:
    cms.server_side_apply(body=json.dumps(body), name="py", namespace="ssa", field_manager="py2")
    raise SystemExit("conflict not reported")
except exceptions.ApiException as e:
    assert e.status == 409, e.status
    text = e.body.decode() if isinstance(e.body, bytes) else e.body
    assert 'conflict with \\"py\\": .data.k' in text, text
forced = cms.server_side_apply(body=json.dumps(body), name="py", namespace="ssa",
                               field_manager="py2", force_conflicts=True)
assert forced.data.k == "2"
print("python ok")
EOF

stop_allotd
echo "ok: server-side apply"
