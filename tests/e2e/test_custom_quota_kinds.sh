# test_custom_quota_kinds.sh - Capsule's CustomQuota and GlobalCustomQuota
# (capsule.clastix.io/v1beta2) as kinds, with the real kubectl: discovery
# (short names cq and gcq), every full CustomQuota and GlobalCustomQuota YAML
# of seed 003 "Custom Quotas" applied verbatim (its group/version spelling of
# a source included), stored with the CRD defaults and the source's target in
# both forms, listed with Capsule's printer columns, explained, patched and
# deleted, and bad input refused (strict fields 400, Capsule's and the CRD's
# 422s). What the quotas count is not tested here.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl
start_allotd

# ---- discovery ----
res=$(k api-resources --api-group=capsule.clastix.io --no-headers)
echo "$res" | grep_all -E '^customquotas +cq +capsule.clastix.io/v1beta2 +true +CustomQuota$' ||
  fail "api-resources customquotas: [$res]"
echo "$res" | grep_all -E '^globalcustomquotas +gcq +capsule.clastix.io/v1beta2 +false +GlobalCustomQuota$' ||
  fail "api-resources globalcustomquotas: [$res]"
k create namespace solar-test >/dev/null
k label namespace solar-test capsule.clastix.io/tenant=solar >/dev/null
k create namespace team-a >/dev/null
k label namespace team-a customer=a >/dev/null
k create namespace wind-test >/dev/null

# apply_ok WANT...: `kubectl apply -f -` of stdin prints each WANT line.
apply_ok() {
  local out
  out=$(k apply -f - 2>&1) || fail "apply: $out"
  for want in "$@"; do expect_contains "apply" "$out" "$want"; done
}
# spec_of ARGS...: the stored spec, keys sorted.
spec_of() {
  k get "$@" -o json | /usr/bin/python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["spec"], sort_keys=True, separators=(",",":")))'
}

# ---- seed 003's quotas, verbatim (those other tests apply too are in
# tests/fixtures/seed003) ----
apply_ok 'globalcustomquota.capsule.clastix.io/pod-count-limit created' \
  'customquota.capsule.clastix.io/pod-count-limit created' \
  <"$FIXTURES/seed003/pod-count-limit.yaml"
POD_COUNT='"sources":[{"apiVersion":"v1","group":"","kind":"Pod","op":"count","version":"v1"}]'
OPTS='"options":{"emitMetricPerClaimUsage":false}'
expect_eq "cq pod-count-limit stored" "$(spec_of cq pod-count-limit -n solar-test)" \
  "{\"limit\":\"3\",$OPTS,$POD_COUNT}"
expect_eq "gcq pod-count-limit stored" "$(spec_of gcq pod-count-limit)" \
  "{\"limit\":\"6\",\"namespaceSelectors\":[{\"matchLabels\":{\"capsule.clastix.io/tenant\":\"solar\"}}],$OPTS,$POD_COUNT}"

apply_ok 'globalcustomquota.capsule.clastix.io/object-bucket-claim-storage created' <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: GlobalCustomQuota
metadata:
  name: object-bucket-claim-storage
spec:
  limit: "500Gi"
  namespaceSelectors:
    - matchLabels:
        capsule.clastix.io/tenant: solar
  sources:
    - apiVersion: objectbucket.io/v1alpha1
      kind: ObjectBucketClaim
      op: add
      path: .spec.additionalConfig.maxSize
YAML
expect_eq "gcq source in both forms" \
  "$(k get gcq object-bucket-claim-storage -o jsonpath='{.spec.sources[0].group} {.spec.sources[0].version} {.spec.sources[0].apiVersion}')" \
  "objectbucket.io v1alpha1 objectbucket.io/v1alpha1"
# the seed's `kubectl get -o yaml` output, status and all: the status is not the client's
apply_ok 'globalcustomquota.capsule.clastix.io/object-bucket-claim-storage' <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: GlobalCustomQuota
metadata:
  name: object-bucket-claim-storage
spec:
  limit: "500Gi"
  namespaceSelectors:
    - matchLabels:
        capsule.clastix.io/tenant: solar
  sources:
    - apiVersion: objectbucket.io/v1alpha1
      kind: ObjectBucketClaim
      op: add
      path: .spec.additionalConfig.maxSize
status:
  conditions:
  - lastTransitionTime: "2026-04-17T08:13:17Z"
    message: reconciled
    reason: Succeeded
    status: "True"
    type: Ready
  namespaces:
  - solar-prod
  targets:
    - version: v1alpha1
      kind: ObjectBucketClaim
      group: objectbucket.io
      op: add
      path: .spec.additionalConfig.maxSize
  usage:
    available: "500Gi"
    used: "0"
YAML
if k get gcq object-bucket-claim-storage -o jsonpath='{.status.namespaces}' | grep_all solar-prod; then
  fail "a client's status was stored"
fi
apply_ok 'globalcustomquota.capsule.clastix.io/object-bucket-claim-storage configured' \
  <"$FIXTURES/seed003/object-bucket-claim-storage-gold.yaml"
expect_eq "gcq scopeSelectors applied" \
  "$(k get gcq object-bucket-claim-storage -o jsonpath='{.spec.scopeSelectors[0].matchLabels}')" \
  '{"objectbucket.io/storage-class":"gold"}'

apply_ok 'globalcustomquota.capsule.clastix.io/customer-a-loadbalancers created' <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: GlobalCustomQuota
metadata:
  name: customer-a-loadbalancers
spec:
  limit: 3
  namespaceSelectors:
    - matchLabels:
        customer: a
  sources:
    - apiVersion: v1
      kind: Service
      op: count
      selectors:
        - fieldSelectors:
            - '.spec.type[?(@=="LoadBalancer")]'
YAML
expect_eq "gcq field selector kept" \
  "$(k get gcq customer-a-loadbalancers -o jsonpath='{.spec.sources[0].selectors[0].fieldSelectors[0]}')" \
  '.spec.type[?(@=="LoadBalancer")]'
apply_ok 'globalcustomquota.capsule.clastix.io/solar-storage-aggregate created' <<'YAML'
---
apiVersion: capsule.clastix.io/v1beta2
kind: GlobalCustomQuota
metadata:
  name: solar-storage-aggregate
spec:
  limit: 5Gi
  namespaceSelectors:
  - matchLabels:
      capsule.clastix.io/tenant: solar
  sources:
    - apiVersion: v1
      kind: Pod
      op: add
      path: ".spec.volumes[*].ephemeral.volumeClaimTemplate.spec.resources.requests.storage"
    - apiVersion: v1
      kind: PersistentVolumeClaim
      op: add
      path: ".spec.resources.requests.storage"
      selectors:
        - fieldSelectors:
            - '.spec.accessModes[?(@=="ReadWriteOnce")]'
YAML
apply_ok 'globalcustomquota.capsule.clastix.io/tenant-crossplane-buckets created' <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: GlobalCustomQuota
metadata:
  name: tenant-crossplane-buckets
spec:
  limit: 5
  namespaceSelectors:
    - matchLabels:
        capsule.clastix.io/tenant: solar
  sources:
    - apiVersion: s3.aws.upbound.io/v1beta1
      kind: Bucket
      op: count
YAML
apply_ok 'globalcustomquota.capsule.clastix.io/cpu-limits created' <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: GlobalCustomQuota
metadata:
  name: cpu-limits
spec:
  limit: 5
  namespaceSelectors:
  - matchLabels:
      capsule.clastix.io/tenant: solar
  sources:
  - apiVersion: v1
    kind: Pod
    op: add
    path: .spec.containers[*].resources.limits.cpu
  - apiVersion: v1
    kind: Pod
    op: add
    path: .spec.initContainers[*].resources.limits.cpu
status:
  claims:
  - group: ""
    kind: Pod
    name: nginx-deployment-6ff89574f8-299zf
    namespace: solar-test
    uid: f7ff7d7c-7128-4f44-ad13-3c44882420f8
    usage: 250m
    version: v1
  - group: ""
    kind: Pod
    name: nginx-deployment-6ff89574f8-9zzzw
    namespace: solar-test
    uid: 24c1bdea-000d-4e10-8af6-eb23c44ceaa3
    usage: 250m
    version: v1
  conditions:
  - lastTransitionTime: "2026-04-17T08:29:15Z"
    message: reconciled
    reason: Succeeded
    status: "True"
    type: Ready
  namespaces:
  - solar-prod
  - solar-test
  targets:
  - group: ""
    kind: Pod
    op: add
    path: .spec.containers[*].resources.limits.cpu
    scope: namespace
    version: v1
  - group: ""
    kind: Pod
    op: add
    path: .spec.initContainers[*].resources.limits.cpu
    scope: namespace
    version: v1
  usage:
    available: 3500m
    used: 1500m
YAML

apply_ok 'customquota.capsule.clastix.io/object-bucket-claim-storage created' <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: CustomQuota
metadata:
  name: object-bucket-claim-storage
  namespace: solar-test
spec:
  limit: "500Gi"
  scopeSelectors:
    - matchLabels:
        objectbucket.io/storage-class: gold
  sources:
    - apiVersion: objectbucket.io/v1alpha1
      kind: ObjectBucketClaim
      op: add
      path: .spec.additionalConfig.maxSize
YAML
apply_ok 'customquota.capsule.clastix.io/pvc-storage-limit created' <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: CustomQuota
metadata:
  name: pvc-storage-limit
  namespace: team-a
spec:
  limit: "200Gi"
  scopeSelectors:
    - matchLabels:
        team: platform
  sources:
    - apiVersion: v1
      kind: PersistentVolumeClaim
      op: add
      path: .spec.resources.requests.storage
YAML
apply_ok 'customquota.capsule.clastix.io/namespace-loadbalancers created' <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: CustomQuota
metadata:
  name: namespace-loadbalancers
  namespace: team-a
spec:
  limit: 2
  sources:
    - apiVersion: v1
      kind: Service
      op: count
      selectors:
        - fieldSelectors:
            - '.spec.type[?(@=="LoadBalancer")]'
YAML
apply_ok 'customquota.capsule.clastix.io/pod-memory-requests created' <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: CustomQuota
metadata:
  name: pod-memory-requests
  namespace: team-a
spec:
  limit: 16Gi
  sources:
    - apiVersion: v1
      kind: Pod
      op: add
      path: .spec.containers[*].resources.requests.memory
    - apiVersion: v1
      kind: Pod
      op: add
      path: .spec.initContainers[*].resources.requests.memory
YAML
apply_ok 'customquota.capsule.clastix.io/sql-instances created' <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: CustomQuota
metadata:
  name: sql-instances
  namespace: team-a
spec:
  limit: 3
  sources:
    - apiVersion: database.gcp.upbound.io/v1beta1
      kind: SQLDatabaseInstance
      op: count
YAML
apply_ok 'customquota.capsule.clastix.io/suspended-cronjobs created' <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: CustomQuota
metadata:
  name: suspended-cronjobs
  namespace: team-a
spec:
  limit: 5
  sources:
    - apiVersion: batch/v1
      kind: CronJob
      op: count
      selectors:
        - fieldSelectors:
            - '.spec.suspend'
YAML
apply_ok 'customquota.capsule.clastix.io/pod-count-limit created' <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: CustomQuota
metadata:
  name: pod-count-limit
  namespace: wind-test
spec:
  limit: 3
  options:
    emitMetricPerClaimUsage: false
  sources:
  - apiVersion: "v1"
    kind: Pod
    op: count
status:
  claims:
  - group: ""
    kind: Pod
    name: nginx-deployment-77bc6bd484-4qm4h
    namespace: wind-test
    uid: c6df70ce-f483-4b02-af65-c8c150d22ed2
    usage: "1"
    version: v1
  conditions:
  - lastTransitionTime: "2026-04-23T09:21:29Z"
    message: reconciled
    reason: Succeeded
    status: "True"
    type: Ready
  targets:
  - group: ""
    kind: Pod
    op: count
    scope: namespace
    version: v1
  usage:
    available: "0"
    used: "3"
YAML
expect_eq "wind-test pod-count-limit: the seed's two spellings store alike" \
  "$(spec_of cq pod-count-limit -n wind-test)" "{\"limit\":\"3\",$OPTS,$POD_COUNT}"
expect_eq "pod-memory-requests stored" "$(spec_of customquota pod-memory-requests -n team-a)" \
  "{\"limit\":\"16Gi\",$OPTS,\"sources\":[{\"apiVersion\":\"v1\",\"group\":\"\",\"kind\":\"Pod\",\"op\":\"add\",\"path\":\".spec.containers[*].resources.requests.memory\",\"version\":\"v1\"},{\"apiVersion\":\"v1\",\"group\":\"\",\"kind\":\"Pod\",\"op\":\"add\",\"path\":\".spec.initContainers[*].resources.requests.memory\",\"version\":\"v1\"}]}"

# ---- listing: Capsule's printer columns ----
header() { head -1 | tr -s ' '; }
COLS="NAME LIMIT USED AVAILABLE READY STATUS AGE"
expect_eq "get cq header" "$(k get cq -n team-a | header)" "$COLS"
expect_eq "get customquotas -A header" "$(k get customquotas -A | header)" "NAMESPACE $COLS"
expect_eq "get gcq header" "$(k get gcq | header)" "$COLS"
expect_eq "get gcq -A header (cluster-scoped: no namespace)" "$(k get gcq -A | header)" "$COLS"
out=$(k get cq -A --no-headers | tr -s ' ' | cut -d' ' -f1-3 | sort | tr '\n' ';')
expect_eq "get cq -A rows" "$out" \
  "solar-test object-bucket-claim-storage 500Gi;solar-test pod-count-limit 3;team-a namespace-loadbalancers 2;team-a pod-memory-requests 16Gi;team-a pvc-storage-limit 200Gi;team-a sql-instances 3;team-a suspended-cronjobs 5;wind-test pod-count-limit 3;"
out=$(k get globalcustomquotas --no-headers | tr -s ' ' | cut -d' ' -f1-2 | sort | tr '\n' ';')
expect_eq "get gcq rows" "$out" \
  "cpu-limits 5;customer-a-loadbalancers 3;object-bucket-claim-storage 500Gi;pod-count-limit 6;solar-storage-aggregate 5Gi;tenant-crossplane-buckets 5;"

# Every row's cells are what Capsule's column paths find in the object (null
# when absent), read in one Table response with the objects included.
table_matches() {
  api GET "$1?includeObject=Object" -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' |
    /usr/bin/python3 -c '
import json, sys
lines = sys.stdin.read().rsplit("\n", 1)
assert lines[1] == "200", lines
t = json.loads(lines[0])
cols = [c["name"] for c in t["columnDefinitions"]]
assert cols == ["Name", "Limit", "Used", "Available", "Ready", "Status", "Age"], cols
assert t["columnDefinitions"][-1]["type"] == "date", t["columnDefinitions"]
def cond(o, f):
    for c in o.get("status", {}).get("conditions", []):
        if c.get("type") == "Ready":
            return c.get(f)
    return None
paths = {
    "Limit": lambda o: o["spec"].get("limit"),
    "Used": lambda o: o.get("status", {}).get("usage", {}).get("used"),
    "Available": lambda o: o.get("status", {}).get("usage", {}).get("available"),
    "Ready": lambda o: cond(o, "status"),
    "Status": lambda o: cond(o, "message" if cond(o, "status") == "True" else "reason"),
}
assert t["rows"], "no rows"
for r in t["rows"]:
    o = r["object"]
    assert r["cells"][0] == o["metadata"]["name"], r
    for name, cell in zip(cols[1:-1], r["cells"][1:-1]):
        assert cell == paths[name](o), (name, cell, o.get("status"))
' || fail "table cells of $1 do not follow the objects"
}
table_matches /apis/capsule.clastix.io/v1beta2/customquotas
table_matches /apis/capsule.clastix.io/v1beta2/globalcustomquotas

# A quota whose objects cannot be read names them in its Ready message
# (hundreds of characters); STATUS prints the reason instead, as a ready
# one prints "reconciled" (the seed's status), so a row stays short. Every
# namespace holds a ConfigMap kube-root-ca.crt, whose name is no quantity
# (a missing value would count 0: custom-quotas.md).
k create -f - >/dev/null <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: GlobalCustomQuota
metadata:
  name: broken-path
spec:
  limit: "5"
  sources:
    - apiVersion: v1
      kind: ConfigMap
      op: add
      path: .metadata.name
YAML
wait_until 10 sh -c "kubectl get gcq broken-path -o jsonpath='{.status.conditions[0].status}' | grep -qx False" ||
  fail "broken-path did not become Ready=False"
msg=$(k get gcq broken-path -o jsonpath='{.status.conditions[?(@.type=="Ready")].message}')
[ ${#msg} -gt 200 ] || fail "broken-path's Ready message is short (${#msg}): $msg"
row=$(k get gcq broken-path --no-headers | tr -s ' ')
expect_eq "broken gcq row" "${row% *}" "broken-path 5 0 5 False UnreadableValues"
[ ${#row} -lt 60 ] || fail "the broken-path row is ${#row} characters long: $row"
expect_eq "a ready gcq row" "$(k get gcq pod-count-limit --no-headers | tr -s ' ' | cut -d' ' -f5-6)" "True reconciled"
k delete gcq broken-path >/dev/null

# ---- explain ----
out=$(k explain cq.spec)
expect_contains "explain cq spec" "$out" "FIELD: spec <CustomQuotaSpec>"
expect_contains "explain cq limit" "$out" "limit	<Quantity> -required-"
expect_contains "explain cq sources" "$out" "sources	<[]CustomQuotaSpecSource> -required-"
expect_contains "explain cq options" "$out" "options	<CustomQuotaOptionsSpec> -required-"
expect_contains "explain cq scopeSelectors" "$out" "scopeSelectors	<[]LabelSelector>"
out=$(k explain gcq.spec)
expect_contains "explain gcq namespaceSelectors" "$out" "namespaceSelectors	<[]NamespaceSelector>"
expect_contains "explain gcq inlines the cq spec" "$out" "limit	<Quantity> -required-"
out=$(k explain customquota.spec.sources)
expect_contains "explain source kind" "$out" "kind	<string> -required-"
expect_contains "explain source group" "$out" "group	<string>"
expect_contains "explain source op enum" "$out" "enum: add, sub, count"
expect_contains "explain source selectors" "$out" "selectors	<[]SelectorWithFields>"
out=$(k explain globalcustomquota.spec.sources.selectors)
expect_contains "explain selector labels" "$out" "matchLabels	<map[string]string>"
expect_contains "explain selector fields" "$out" "fieldSelectors	<[]string>"
expect_contains "explain selector cel" "$out" "celExpressions	<[]string>"
out=$(k explain gcq.status)
expect_contains "explain gcq status namespaces" "$out" "namespaces	<[]string>"
expect_contains "explain gcq status claims" "$out" "claims	<[]CustomQuotaClaim>"
out=$(k explain cq.spec.options.emitMetricPerClaimUsage)
expect_contains "explain option" "$out" "emitMetricPerClaimUsage <boolean>"

# ---- bad input: 4xx with a clear message, nothing stored ----
# refused WHAT WANT: `kubectl create -f -` of stdin fails, printing WANT.
refused() {
  local what=$1 want=$2 out
  if out=$(k create -f - 2>&1); then fail "$what was accepted: $out"; fi
  expect_contains "$what" "$out" "$want"
}
cq_yaml() { printf 'apiVersion: capsule.clastix.io/v1beta2\nkind: CustomQuota\nmetadata:\n  name: %s\n  namespace: team-a\nspec:\n%s\n' "$1" "$2"; }
gcq_yaml() { printf 'apiVersion: capsule.clastix.io/v1beta2\nkind: GlobalCustomQuota\nmetadata:\n  name: %s\nspec:\n%s\n' "$1" "$2"; }
PODS='  sources:
  - apiVersion: v1
    kind: Pod
    op: count'
RULE="path and cel must be empty when op is 'count'; otherwise exactly one of path or cel must be set and non-empty"

cq_yaml zero "  limit: 0
$PODS" | refused "limit 0" \
  'The CustomQuota "zero" is invalid: spec.limit: Invalid value: "0": invalid spec.limit: quantity must not be negative or 0: "0"'
gcq_yaml neg "  limit: -1
$PODS" | refused "negative limit" \
  'The GlobalCustomQuota "neg" is invalid: spec.limit: Invalid value: "-1": invalid spec.limit: quantity must not be negative or 0: "-1"'
cq_yaml nolimit "$PODS" | refused "no limit" 'The CustomQuota "nolimit" is invalid: spec.limit: Required value'
cq_yaml nosources '  limit: 1
  sources: []' | refused "no sources" \
  'spec.sources: Required value: at least one source is required'
cq_yaml badop '  limit: 1
  sources:
  - apiVersion: v1
    kind: Pod
    op: mul
    path: .spec.x' | refused "op enum" \
  'spec.sources[0].op: Unsupported value: "mul": supported values: "add", "sub", "count"'
cq_yaml countpath '  limit: 1
  sources:
  - apiVersion: v1
    kind: Pod
    op: count
    path: .spec.x' | refused "count with a path" "spec.sources[0]: Invalid value: \"object\": $RULE"
gcq_yaml nopath '  limit: 1
  sources:
  - apiVersion: v1
    kind: Pod' | refused "add without path or cel" "spec.sources[0]: Invalid value: \"object\": $RULE"
cq_yaml both '  limit: 1
  sources:
  - apiVersion: v1
    kind: Pod
    path: .spec.x
    cel: object.spec.x' | refused "path and cel" "$RULE"
cq_yaml nokind '  limit: 1
  sources:
  - apiVersion: v1
    kind: ""
    op: count' | refused "empty kind" \
  'spec.sources[0].kind: Invalid value: "": spec.sources[0].kind in body should be at least 1 chars long'
cq_yaml dot '  limit: 1
  sources:
  - apiVersion: v1
    kind: Pod
    path: spec.containers' | refused "path without a dot" \
  "spec.sources[0].path: Invalid value: \"spec.containers\": sourcePath must start with '.'"
cq_yaml gvk '  limit: 1
  sources:
  - apiVersion: apps/v1
    group: ""
    version: v1
    kind: Deployment
    op: count' | refused "group/version against apiVersion" \
  'spec.sources[0].apiVersion: Invalid value: "apps/v1": does not match group "" and version "v1"'
cq_yaml celbig "  limit: 1
  sources:
  - apiVersion: v1
    kind: Pod
    cel: \"$(printf '1%.0s' $(seq 4097))\"" | refused "cel over 4096 characters" \
  'spec.sources[0].cel: Too long: may not be more than 4096 bytes'
cq_yaml many "  limit: 1
  sources:
  - apiVersion: v1
    kind: Pod
    op: count
    selectors:
    - fieldSelectors: [$(printf "'.a',%.0s" $(seq 64))'.a']" | refused "65 field selectors" \
  'spec.sources[0].selectors[0].fieldSelectors: Too many: 65: must have at most 64 items'
cq_yaml badsel '  limit: 1
  scopeSelectors:
  - matchExpressions:
    - {key: team, operator: Equals, values: [a]}
'"$PODS" | refused "bad scope selector" \
  'spec.scopeSelectors[0].matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator'
gcq_yaml badns '  limit: 1
  namespaceSelectors:
  - matchLabels:
      "bad key!": x
'"$PODS" | refused "bad namespace selector" 'spec.namespaceSelectors[0].matchLabels: Invalid value: "bad key!"'
# strict decoding: a CustomQuota has no namespaceSelectors (the global kind only)
cq_yaml nsel '  limit: 1
  namespaceSelectors: []
'"$PODS" | refused "namespaceSelectors on a CustomQuota" \
  'strict decoding error: unknown field "spec.namespaceSelectors"'
cq_yaml wrongtype '  limit: 1
  sources:
  - apiVersion: v1
    kind: Pod
    op: count
    selectors:
    - fieldSelectors: .spec.x' | refused "fieldSelectors of the wrong type" \
  'cannot unmarshal string into Go struct field'
# the seed's LabelSelectors snippet writes matchLabels as a list
cq_yaml snippet '  limit: 1
  sources:
    - apiVersion: v1
      kind: PersistentVolumeClaim
      op: add
      path: .spec.resources.requests.storage
      selectors:
        - matchExpressions:
            - key: "team"
              operator: In
              values: ["platform", "dev"]
        - matchLabels:
            - key: "team"
              operator: In
              values: ["platform", "dev"]' | refused "matchLabels as a list" \
  'matchLabels of type map[string]string'
# the old docs' ClusterCustomQuota is not served (GlobalCustomQuota replaced it)
if out=$(gcq_yaml old '  limit: "500Gi"' | sed 's/GlobalCustomQuota/ClusterCustomQuota/' |
  k create --validate=false -f - 2>&1); then
  fail "ClusterCustomQuota was accepted: $out"
fi
expect_contains "ClusterCustomQuota" "$out" 'no matches for kind "ClusterCustomQuota"'
for n in zero nolimit nosources badop countpath both nokind dot gvk celbig many badsel nsel \
         wrongtype snippet; do
  if k get cq "$n" -n team-a >/dev/null 2>&1; then fail "refused quota $n was stored"; fi
done
for n in neg nopath badns old; do
  if k get gcq "$n" >/dev/null 2>&1; then fail "refused global quota $n was stored"; fi
done

# ---- patch, status subresource, delete ----
k patch cq sql-instances -n team-a --type=merge -p '{"spec":{"limit":"4"}}' >/dev/null
expect_eq "merge patch" "$(k get cq sql-instances -n team-a -o jsonpath='{.spec.limit}')" "4"
if out=$(k patch gcq tenant-crossplane-buckets --type=merge -p '{"spec":{"limit":"0"}}' 2>&1); then
  fail "a patch to limit 0 was accepted: $out"
fi
expect_contains "patch to limit 0" "$out" 'invalid spec.limit: quantity must not be negative or 0: "0"'
api GET /apis/capsule.clastix.io/v1beta2/namespaces/team-a/customquotas/sql-instances/status |
  tail -1 | grep_all '^200$' || fail "customquotas/status is not served"
api GET /apis/capsule.clastix.io/v1beta2/globalcustomquotas/cpu-limits/status |
  tail -1 | grep_all '^200$' || fail "globalcustomquotas/status is not served"
expect_eq "delete cq" "$(k delete cq pod-count-limit -n solar-test)" \
  'customquota.capsule.clastix.io "pod-count-limit" deleted'
expect_eq "delete gcq" "$(k delete globalcustomquota pod-count-limit)" \
  'globalcustomquota.capsule.clastix.io "pod-count-limit" deleted'
if k get cq pod-count-limit -n solar-test >/dev/null 2>&1; then fail "deleted cq still there"; fi
if k get gcq pod-count-limit >/dev/null 2>&1; then fail "deleted gcq still there"; fi
k delete cq --all -n team-a >/dev/null
expect_eq "cq all deleted" "$(k get cq -n team-a -o name)" ""
k delete gcq --all >/dev/null
expect_eq "gcq all deleted" "$(k get gcq -o name)" ""

stop_allotd
echo "PASS test_custom_quota_kinds"
