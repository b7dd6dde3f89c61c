# test_explain.sh - kubectl explain reads the OpenAPI v3 schemas generated
# from the typed tables (field types, descriptions, required fields, enums),
# and kubectl create/apply keep working against those documents: apply
# computes strategic merge patches from the schemas' merge markers.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl
start_allotd

# explain one field: its type, its description and the types of its fields
out=$(k explain pod.spec.containers.resources)
expect_contains "resources kind" "$out" "KIND:       Pod"
expect_contains "resources type" "$out" "FIELD: resources <ResourceRequirements>"
expect_contains "resources description" "$out" "requests and is limited to"
expect_contains "limits type" "$out" "limits	<map[string]Quantity>"
expect_contains "limits description" "$out" "The most of each resource the container may use"
expect_contains "requests type" "$out" "requests	<map[string]Quantity>"
expect_contains "claims type" "$out" "claims	<[]ResourceClaim>"

out=$(k explain resourcequota.spec.scopeSelector)
expect_contains "scopeSelector type" "$out" "FIELD: scopeSelector <ScopeSelector>"
expect_contains "scopeSelector description" "$out" "Selects objects by quota scope"
expect_contains "matchExpressions type" "$out" \
  "matchExpressions	<[]ScopedResourceSelectorRequirement>"

out=$(k explain resourcequota.spec.scopeSelector.matchExpressions)
expect_contains "scopeName required" "$out" "scopeName	<string> -required-"
expect_contains "operator required" "$out" "operator	<string> -required-"
expect_contains "values type" "$out" "values	<[]string>"

out=$(k explain resourcequota.spec.scopeSelector.matchExpressions.scopeName)
expect_contains "scopeName enum" "$out" "ENUM:"
expect_contains "scopeName enum values" "$out" "CrossNamespacePodAffinity"
out=$(k explain resourcequota.spec.scopeSelector.matchExpressions.operator)
expect_contains "operator enum values" "$out" "DoesNotExist"

out=$(k explain service.spec.ports.targetPort)
expect_contains "IntOrString type" "$out" "FIELD: targetPort <IntOrString>"
out=$(k explain deployment.spec.template.spec.containers.resources.limits)
expect_contains "apps/v1 reaches core types" "$out" "FIELD: limits <map[string]Quantity>"
out=$(k explain pods)
expect_contains "kind description" "$out" "One or more containers scheduled together"
expect_contains "kind fields" "$out" "spec	<PodSpec>"

# the whole tree of a kind, bounded: every level is typed and finite
k explain pods --recursive >"$E2E_DIR/recursive.txt"
lines=$(wc -l <"$E2E_DIR/recursive.txt")
[ "$lines" -gt 300 ] && [ "$lines" -lt 20000 ] || fail "explain --recursive: $lines lines"
tree=$(cat "$E2E_DIR/recursive.txt")
expect_contains "recursive containers" "$tree" "containers	<[]Container> -required-"
expect_contains "recursive resources" "$tree" "resources	<ResourceRequirements>"
expect_contains "recursive limits" "$tree" "limits	<map[string]Quantity>"
expect_contains "recursive metadata" "$tree" "creationTimestamp	<string>"

# an unknown field is refused with kubectl's own message
if k explain pod.spec.nosuchfield >/dev/null 2>"$E2E_DIR/err"; then
  fail "explain of an unknown field succeeded"
fi
grep_all 'nosuchfield' "$E2E_DIR/err" || fail "unknown field error: $(cat "$E2E_DIR/err")"

# the documents against the OpenAPI 2.0 and 3.0 specifications, where a
# validator is installed (it also checks every default against its schema)
if python3 -c 'import openapi_spec_validator' 2>/dev/null; then
  for p in /openapi/v2 /openapi/v3/api/v1 /openapi/v3/apis/apps/v1; do
    api GET "$p" | sed '$d' >"$E2E_DIR/doc.json"
    python3 -c 'import json, sys; from openapi_spec_validator import validate
validate(json.load(open(sys.argv[1])))' "$E2E_DIR/doc.json" >"$E2E_DIR/err" 2>&1 ||
      fail "$p is not a valid OpenAPI document: $(tail -5 "$E2E_DIR/err")"
  done
else
  echo "test_explain: openapi_spec_validator not installed, document validation skipped"
fi

# create and apply against the generated documents
k create namespace ex
cat >"$E2E_DIR/quota.yaml" <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: ex}
spec:
  hard: {pods: "10", requests.cpu: "2"}
  scopeSelector:
    matchExpressions:
    - {scopeName: PriorityClass, operator: In, values: [high]}
YAML
cat >"$E2E_DIR/pod.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: ex
  labels: {app: web}
spec:
  containers:
  - name: app
    image: nginx:1.27
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {cpu: 200m, memory: 128Mi}
  - name: side
    image: busybox:1.36
    command: ["sleep", "3600"]
YAML
k create -f "$E2E_DIR/quota.yaml" | grep_all 'resourcequota/q created' || fail "create quota"
k create -f "$E2E_DIR/pod.yaml" | grep_all 'pod/web created' || fail "create pod"
k describe resourcequota q -n ex | grep_all 'requests.cpu' || fail "describe quota"
k describe pod web -n ex | grep_all 'nginx:1.27' || fail "describe pod"

# apply over created objects: strategic merge from the v3 schemas, no fallback
sed -i 's/nginx:1.27/nginx:1.28/; s/{app: web}/{app: web, tier: fe}/' "$E2E_DIR/pod.yaml"
k apply -f "$E2E_DIR/pod.yaml" -v=8 >"$E2E_DIR/apply.log" 2>&1 || fail "apply pod: $(tail -5 "$E2E_DIR/apply.log")"
grep_all 'Content-Type: application/strategic-merge-patch+json' "$E2E_DIR/apply.log" ||
  fail "apply did not send a strategic merge patch"
grep_all 'setElementOrder/containers' "$E2E_DIR/apply.log" || fail "containers not merged by name"
# kubectl says (at -v=5 and up) when the v3 document does not offer strategic
# merge for the kind, and (always) when it cannot compute the patch from it;
# either way it would quietly fall back to its compiled-in types.
no_v3_patch() {
  if grep -qiE 'does not support strategic merge|OpenAPI V3 path does not exist|error calculating patch from openapi' "$1"; then
    fail "kubectl did not use the v3 schemas: $(grep -iE 'strategic merge|calculating patch|path does not exist' "$1" | head -3)"
  fi
}
no_v3_patch "$E2E_DIR/apply.log"
expect_eq "applied image" "$(k get pod web -n ex -o jsonpath='{.spec.containers[*].image}')" \
  "nginx:1.28 busybox:1.36"
expect_eq "applied label" "$(k get pod web -n ex -o jsonpath='{.metadata.labels.tier}')" "fe"
expect_eq "requests kept" \
  "$(k get pod web -n ex -o jsonpath='{.spec.containers[0].resources.requests.cpu}')" "100m"

sed -i 's/pods: "10"/pods: "12"/' "$E2E_DIR/quota.yaml"
k apply -f "$E2E_DIR/quota.yaml" >/dev/null 2>"$E2E_DIR/err" || fail "apply quota: $(cat "$E2E_DIR/err")"
expect_eq "applied hard" "$(k get resourcequota q -n ex -o jsonpath='{.spec.hard.pods}')" "12"
expect_eq "scopeSelector kept" \
  "$(k get resourcequota q -n ex -o jsonpath='{.spec.scopeSelector.matchExpressions[0].values[0]}')" \
  "high"

# apply from scratch, then drop one entry of a merge list (env, merged by name)
cat >"$E2E_DIR/deploy.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: ex}
spec:
  replicas: 0
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - name: api
        image: nginx:1.27
        env:
        - {name: A, value: "1"}
        - {name: B, value: "2"}
YAML
k apply -f "$E2E_DIR/deploy.yaml" | grep_all 'deployment.apps/api created' || fail "apply deployment"
sed -i '/name: B/d' "$E2E_DIR/deploy.yaml"
k apply -f "$E2E_DIR/deploy.yaml" -v=8 >"$E2E_DIR/apply.log" 2>&1 ||
  fail "apply deployment again: $(tail -5 "$E2E_DIR/apply.log")"
no_v3_patch "$E2E_DIR/apply.log"
grep_all -F '{\"$patch\":\"delete\",\"name\":\"B\"}' "$E2E_DIR/apply.log" ||
  fail "env entry not deleted by merge key: $(grep 'Request Body' "$E2E_DIR/apply.log" | tail -1)"
expect_eq "env after apply" \
  "$(k get deployment api -n ex -o jsonpath='{.spec.template.spec.containers[0].env[*].name}')" "A"

stop_allotd
echo "test_explain: ok"
