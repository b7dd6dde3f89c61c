# test_pool_kinds.sh - Capsule's ResourcePool and ResourcePoolClaim
# (capsule.clastix.io/v1beta2) as kinds, with the real kubectl: discovery
# (short name quotapool), every pool and claim YAML of seed 003 "Resource
# Pools" created verbatim, stored with the CRD defaults and defaultsZero
# applied, listed with Capsule's printer columns (the claims' as seed 003
# prints them: `NAME POOL STATUS REASON MESSAGE AGE`; -A adds NAMESPACE), explained,
# and bad input refused. What pools do with claims (binding, quotas) is not
# tested here.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl
start_allotd

# ---- discovery ----
res=$(k api-resources --api-group=capsule.clastix.io --no-headers)
echo "$res" | grep_all -E '^resourcepools +quotapool +capsule.clastix.io/v1beta2 +false +ResourcePool$' ||
  fail "api-resources resourcepools: [$res]"
echo "$res" | grep_all -E '^resourcepoolclaims +capsule.clastix.io/v1beta2 +true +ResourcePoolClaim$' ||
  fail "api-resources resourcepoolclaims: [$res]"
k create namespace solar-test >/dev/null
k create namespace migration-dev >/dev/null

# ---- seed 003's pools, verbatim, one file each ----
# seed NAME: stdin to $E2E_DIR/NAME.yaml (those other tests create too are
# in tests/fixtures/seed003).
seed() { cat >"$E2E_DIR/$1.yaml"; }
seed example-basic <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePool
metadata:
  name: example
spec:
  quota:
    hard:
      limits.cpu: "2"
      limits.memory: 2Gi
      requests.cpu: "2"
      requests.memory: 2Gi
      requests.storage: "5Gi"
  selectors:
  - matchLabels:
      capsule.clastix.io/tenant: example
YAML
seed solar <"$FIXTURES/seed003/solar.yaml"
seed green <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePool
metadata:
  name: green
spec:
  quota:
    hard:
      limits.cpu: "2"
      limits.memory: 2Gi
  selectors:
  - matchLabels:
      capsule.clastix.io/tenant: solar
  - matchLabels:
      capsule.clastix.io/tenant: wind
YAML
seed best-effort-pool <"$FIXTURES/seed003/best-effort-pool.yaml"
seed gold-storage <<'YAML'
---
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePool
metadata:
  name: gold-storage
spec:
  selectors:
  - matchExpressions:
    - { key: company.com/env, operator: In, values: [prod, pre-prod] }
  quota:
    hard:
      requests.storage: "10Gi"
      persistentvolumeclaims: "10"
    scopeSelector:
      matchExpressions:
      - operator: In
        scopeName: VolumeAttributesClass
        values: ["gold"]
YAML
seed example-defaults <"$FIXTURES/seed003/example-defaults.yaml"
seed example-zero <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePool
metadata:
  name: example
spec:
  defaults:
    "count/persistentvolumeclaims": 3
  config:
    defaultsZero: true
  quota:
    hard:
      limits.cpu: "2"
      limits.memory: 2Gi
      requests.cpu: "2"
      requests.memory: 2Gi
      requests.storage: "5Gi"
  selectors:
  - matchLabels:
      capsule.clastix.io/tenant: example
YAML
seed migration-pools <<'YAML'
---
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePool
metadata:
  name: migration-compute
spec:
  config:
    defaultsZero: true
  selectors:
  - matchLabels:
      capsule.clastix.io/tenant: migration
  quota:
    hard:
      limits.cpu: "2"
      limits.memory: 2Gi
      requests.cpu: "2"
      requests.memory: 2Gi
---
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePool
metadata:
  name: migration-size
spec:
  config:
    defaultsZero: true
  selectors:
  - matchLabels:
      capsule.clastix.io/tenant: migration
  quota:
    hard:
      pods: "7"
YAML

# ---- seed 003's claims ----
seed get-me-cpu <"$FIXTURES/seed003/get-me-cpu.yaml"
seed skip-the-line <<'YAML'
---
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePoolClaim
metadata:
  name: skip-the-line
  namespace: solar-test
spec:
  pool: "sampler"
  claim:
    requests.memory: 512Mi
YAML
seed migration-claims <<'YAML'
---
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePoolClaim
metadata:
  name: compute
  namespace: migration-dev
spec:
  pool: "migration-compute"
  claim:
    requests.cpu: 375m
    requests.memory: 384Mi
    limits.cpu: 375m
    limits.memory: 384Mi
---
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePoolClaim
metadata:
  name: pods
  namespace: migration-dev
spec:
  pool: "migration-size"
  claim:
    pods: "3"
YAML

# create_ok FILE WANT...: kubectl create -f FILE prints each WANT line.
create_ok() {
  local f=$1 out; shift
  out=$(k create -f "$E2E_DIR/$f.yaml" 2>&1) || fail "create $f: $out"
  for want in "$@"; do expect_contains "create $f" "$out" "$want"; done
}
# spec_of KIND NAME [-n NS]: the stored spec, keys sorted.
spec_of() {
  k get "$@" -o json | /usr/bin/python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["spec"], sort_keys=True, separators=(",",":")))'
}
CONFIG_FALSE='"config":{"defaultsZero":false,"deleteBoundResources":false,"orderedQueue":false}'

# The three "example" pools share a name: each is created, checked, deleted.
create_ok example-basic 'resourcepool.capsule.clastix.io/example created'
expect_eq "example: CRD config defaults" "$(spec_of resourcepool example)" \
  "{$CONFIG_FALSE,\"quota\":{\"hard\":{\"limits.cpu\":\"2\",\"limits.memory\":\"2Gi\",\"requests.cpu\":\"2\",\"requests.memory\":\"2Gi\",\"requests.storage\":\"5Gi\"}},\"selectors\":[{\"matchLabels\":{\"capsule.clastix.io/tenant\":\"example\"}}]}"
k delete resourcepool example >/dev/null
create_ok example-defaults 'resourcepool.capsule.clastix.io/example created'
expect_eq "example: defaults canonical" \
  "$(k get quotapool example -o jsonpath='{.spec.defaults}')" '{"requests.storage":"0"}'
k delete quotapool example >/dev/null
create_ok example-zero 'resourcepool.capsule.clastix.io/example created'
expect_eq "example: defaultsZero" "$(k get quotapool example -o jsonpath='{.spec.defaults}')" \
  '{"count/persistentvolumeclaims":"3","limits.cpu":"0","limits.memory":"0","requests.cpu":"0","requests.memory":"0","requests.storage":"0"}'
expect_eq "example: defaultsZero kept" \
  "$(k get quotapool example -o jsonpath='{.spec.config.defaultsZero}')" "true"
for f in solar green best-effort-pool gold-storage; do
  create_ok "$f" "resourcepool.capsule.clastix.io/$f created"
done
expect_eq "gold-storage: scopeSelector kept" \
  "$(k get quotapool gold-storage -o jsonpath='{.spec.quota.scopeSelector.matchExpressions[0].scopeName}')" \
  "VolumeAttributesClass"
create_ok migration-pools 'resourcepool.capsule.clastix.io/migration-compute created' \
  'resourcepool.capsule.clastix.io/migration-size created'
expect_eq "migration-size: defaultsZero" \
  "$(k get quotapool migration-size -o jsonpath='{.spec.defaults}')" '{"pods":"0"}'
create_ok get-me-cpu 'resourcepoolclaim.capsule.clastix.io/get-me-cpu created'
create_ok skip-the-line 'resourcepoolclaim.capsule.clastix.io/skip-the-line created'
create_ok migration-claims 'resourcepoolclaim.capsule.clastix.io/compute created' \
  'resourcepoolclaim.capsule.clastix.io/pods created'
expect_eq "compute claim stored" "$(spec_of resourcepoolclaim compute -n migration-dev)" \
  '{"claim":{"limits.cpu":"375m","limits.memory":"384Mi","requests.cpu":"375m","requests.memory":"384Mi"},"pool":"migration-compute"}'

# ---- listing: Capsule's printer columns ----
header() { head -1 | tr -s ' '; }
expect_eq "get quotapool header" "$(k get quotapool | header)" "NAME CLAIMS NAMESPACES READY STATUS AGE"
expect_eq "get resourcepools names" "$(k get resourcepools -o name | sort | tr '\n' ' ')" \
  "resourcepool.capsule.clastix.io/best-effort-pool resourcepool.capsule.clastix.io/example resourcepool.capsule.clastix.io/gold-storage resourcepool.capsule.clastix.io/green resourcepool.capsule.clastix.io/migration-compute resourcepool.capsule.clastix.io/migration-size resourcepool.capsule.clastix.io/solar "
expect_eq "get claims header" "$(k get resourcepoolclaims -n solar-test | header)" \
  "NAME POOL STATUS REASON MESSAGE AGE"
expect_eq "get claims wide header" "$(k get resourcepoolclaims -n solar-test -o wide | header)" \
  "NAME POOL STATUS REASON MESSAGE AGE IN USE"
out=$(k get resourcepoolclaims -A)
expect_eq "get claims -A header" "$(echo "$out" | header)" \
  "NAMESPACE NAME POOL STATUS REASON MESSAGE AGE"
# seed 003 "Allocation": a claim for a pool that does not exist, as the seed
# lists it (the spaces squeezed, AGE left out)
expect_eq "seed: claim for a missing pool" "$(echo "$out" | grep ' get-me-cpu ' | tr -s ' ' | sed 's/ [^ ]*$//')" \
  "$(tr -s ' ' <<<'solar-test   get-me-cpu          Assigned   Failed   ResourcePool.capsule.clastix.io "sample" not found   12s' | sed 's/ [^ ]*$//')"
for row in "migration-dev compute" "migration-dev pods" "solar-test get-me-cpu" \
           "solar-test skip-the-line"; do
  echo "$out" | tr -s ' ' | grep_all "^$row " || fail "get claims -A lacks [$row]: $out"
done

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
def cond(o, typ, f):
    for c in o.get("status", {}).get("conditions", []):
        if c.get("type") == typ:
            return c.get(f)
    return None
paths = {
    "Claims": lambda o: o.get("status", {}).get("claimCount"),
    "Namespaces": lambda o: o.get("status", {}).get("namespaceCount"),
    "Ready": lambda o: cond(o, "Ready", "status"),
    "Status": lambda o: cond(o, "Ready", "message"),
    "Pool": lambda o: o.get("status", {}).get("pool", {}).get("name"),
    "Status:claim": lambda o: o.get("status", {}).get("condition", {}).get("type"),
    "Reason": lambda o: o.get("status", {}).get("condition", {}).get("reason"),
    "Message": lambda o: o.get("status", {}).get("condition", {}).get("message"),
    "In Use": lambda o: cond(o, "Bound", "status") if cond(o, "Bound", "reason") in ("InUse", "Unused") else None,
}
assert t["rows"], "no rows"
for r in t["rows"]:
    o = r["object"]
    assert r["cells"][0] == o["metadata"]["name"], r
    for name, cell in zip(cols[1:], r["cells"][1:]):
        if name == "Age":
            continue
        if name == "Status" and o["kind"] == "ResourcePoolClaim":
            name = "Status:claim"
        assert cell == paths[name](o), (name, cell, o.get("status"))
' || fail "table cells of $1 do not follow the objects"
}
table_matches /apis/capsule.clastix.io/v1beta2/resourcepools
table_matches /apis/capsule.clastix.io/v1beta2/resourcepoolclaims

# A claim for a pool that does not exist waits with Ready=False (Capsule's
# claim controller), and its status is allot's alone: a client's status write
# is refused and changes nothing.
k create -f - >/dev/null <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePoolClaim
metadata:
  name: get-me-solar
  namespace: solar-test
spec:
  pool: solar-pool
  claim:
    requests.cpu: "2"
YAML
expect_eq "claim without its pool" \
  "$(k get resourcepoolclaim get-me-solar -n solar-test -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].message}')" \
  'False ResourcePool.capsule.clastix.io "solar-pool" not found'
rv1=$(k get resourcepoolclaim get-me-solar -n solar-test -o jsonpath='{.metadata.resourceVersion}')
if out=$(k patch resourcepoolclaim get-me-solar -n solar-test --subresource=status --type=merge -p \
  '{"status":{"pool":{"name":"solar-pool","uid":"00000000-0000-0000-0000-000000000001"},"conditions":[{"type":"Ready","status":"True","reason":"Succeeded","message":"reconciled","lastTransitionTime":"2025-01-01T00:00:00Z"},{"type":"Bound","status":"False","reason":"Unused","message":"claim is unused","lastTransitionTime":"2025-01-01T00:00:00Z"}]}}' 2>&1); then
  fail "a client wrote a claim's status: $out"
fi
expect_contains "status write refused" "$out" "the status of pools and claims is written by allot"
expect_eq "refused status write changed nothing" \
  "$(k get resourcepoolclaim get-me-solar -n solar-test -o jsonpath='{.metadata.resourceVersion}')" "$rv1"

# ---- explain ----
out=$(k explain resourcepool.spec)
expect_contains "explain pool spec" "$out" "FIELD: spec <ResourcePoolSpec>"
expect_contains "explain pool quota" "$out" "quota	<ResourceQuotaSpec> -required-"
expect_contains "explain pool selectors" "$out" "selectors	<[]LabelSelector>"
expect_contains "explain pool defaults" "$out" "defaults	<map[string]Quantity>"
expect_contains "explain pool config" "$out" "config	<ResourcePoolSpecConfiguration>"
out=$(k explain resourcepoolclaim.spec)
expect_contains "explain claim pool" "$out" "pool	<string> -required-"
expect_contains "explain claim claim" "$out" "claim	<map[string]Quantity> -required-"
out=$(k explain quotapool.status)
expect_contains "explain pool status claims" "$out" "claims	<map[string][]ResourcePoolClaimsItem>"
expect_contains "explain pool status exhaustions" "$out" \
  "exhaustions	<map[string]PoolExhaustionResource>"
out=$(k explain resourcepool.spec.config.defaultsZero)
expect_contains "explain defaultsZero" "$out" "defaultsZero <boolean>"

# ---- bad input: 4xx with a clear message, nothing stored ----
# refused WHAT WANT: `kubectl create -f -` of stdin fails, printing WANT.
refused() {
  local what=$1 want=$2 out
  if out=$(k create -f - 2>&1); then fail "$what was accepted: $out"; fi
  expect_contains "$what" "$out" "$want"
}
pool_yaml() { printf 'apiVersion: capsule.clastix.io/v1beta2\nkind: ResourcePool\nmetadata:\n  name: %s\nspec:\n%s\n' "$1" "$2"; }
claim_yaml() { printf 'apiVersion: capsule.clastix.io/v1beta2\nkind: ResourcePoolClaim\nmetadata:\n  name: %s\n  namespace: solar-test\nspec:\n%s\n' "$1" "$2"; }

pool_yaml neg '  quota:
    hard:
      requests.cpu: "-2"' | refused "negative pool hard" \
  'The ResourcePool "neg" is invalid: spec.quota.hard[requests.cpu]: Invalid value: "-2": must be greater than or equal to 0'
pool_yaml nq '  quota:
    hard:
      requests.cpu: plenty' | refused "non-quantity pool hard" \
  'ResourcePool in version "v1beta2" cannot be handled as a ResourcePool: quantities must match the regular expression'
pool_yaml negdef '  defaults:
    pods: -1
  quota:
    hard:
      pods: "3"' | refused "negative default" \
  'spec.defaults[pods]: Invalid value: "-1": must be greater than or equal to 0'
pool_yaml badsel '  quota:
    hard:
      pods: "3"
  selectors:
  - matchExpressions:
    - {key: tenant, operator: Equals, values: [a]}' | refused "bad selector operator" \
  'spec.selectors[0].matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator'
pool_yaml badkey '  quota:
    hard:
      pods: "3"
  selectors:
  - matchLabels:
      "bad key!": x' | refused "bad selector key" 'spec.selectors[0].matchLabels: Invalid value: "bad key!"'
pool_yaml noquota '  selectors: []' | refused "pool without quota" \
  'The ResourcePool "noquota" is invalid: spec.quota: Required value'
pool_yaml badname '  quota:
    hard:
      gpus: "3"' | refused "pool resource name" \
  'spec.quota.hard[gpus]: Invalid value: "gpus": must be a standard resource type or fully qualified'
pool_yaml unknown '  quota:
    hard:
      pods: "3"
  quotas: {}' | refused "unknown pool field (strict)" 'strict decoding error: unknown field "spec.quotas"'
claim_yaml neg '  pool: solar
  claim:
    requests.cpu: "-1"' | refused "negative claim" \
  'The ResourcePoolClaim "neg" is invalid: spec.claim[requests.cpu]: Invalid value: "-1": must be greater than or equal to 0'
claim_yaml nq '  pool: solar
  claim:
    requests.memory: 2Gb' | refused "non-quantity claim" \
  'ResourcePoolClaim in version "v1beta2" cannot be handled as a ResourcePoolClaim: quantities must match the regular expression'
claim_yaml noclaim '  pool: solar' | refused "claim without claim" \
  'The ResourcePoolClaim "noclaim" is invalid: spec.claim: Required value'
claim_yaml frac '  pool: solar
  claim:
    pods: "0.5"' | refused "fractional pods" 'spec.claim[pods]: Invalid value: "500m": must be an integer'
claim_yaml unknown '  pool: solar
  claims:
    pods: "1"' | refused "unknown claim field (strict)" 'strict decoding error: unknown field "spec.claims"'
claim_yaml wrongtype '  pool: 3
  claim: {}' | refused "pool of the wrong type" \
  'cannot unmarshal number into Go struct field ResourcePoolClaimSpec.spec.pool of type string'
for n in neg nq negdef badsel badkey noquota badname unknown; do
  if k get resourcepool "$n" >/dev/null 2>&1; then fail "refused pool $n was stored"; fi
done
for n in neg nq noclaim frac unknown wrongtype; do
  if k get resourcepoolclaim "$n" -n solar-test >/dev/null 2>&1; then fail "refused claim $n was stored"; fi
done

# ---- claim defaulting: spec.pool "" when absent, no release annotation on create ----
k create -f - >/dev/null <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePoolClaim
metadata:
  name: unassigned
  namespace: solar-test
  annotations:
    projectcapsule.dev/release: "true"
    keep: "me"
spec:
  claim:
    pods: "1"
YAML
expect_eq "claim pool defaulted" "$(spec_of resourcepoolclaim unassigned -n solar-test)" \
  '{"claim":{"pods":"1"},"pool":""}'
expect_eq "release annotation removed on create" \
  "$(k get resourcepoolclaim unassigned -n solar-test -o jsonpath='{.metadata.annotations}')" \
  '{"keep":"me"}'

# ---- merge patches and apply work on the custom kinds ----
k patch quotapool solar --type=merge -p '{"spec":{"config":{"orderedQueue":true}}}' >/dev/null
expect_eq "merge patch" "$(k get quotapool solar -o jsonpath='{.spec.config.orderedQueue}')" "true"
k apply -f "$E2E_DIR/green.yaml" >/dev/null 2>&1 || fail "apply of a created pool"
expect_eq "apply keeps the pool" "$(k get quotapool green -o jsonpath='{.spec.selectors[1].matchLabels}')" \
  '{"capsule.clastix.io/tenant":"wind"}'

stop_allotd
echo "PASS test_pool_kinds"
