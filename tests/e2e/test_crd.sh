# test_crd.sh - CustomResourceDefinitions with the real kubectl: a
# Crossplane-like Bucket (spec.storageGB integer, printer columns, status
# and scale subresources) is applied and Established; its objects are
# created with defaults, validated (a string in storageGB refused with
# upstream's message, strict unknown fields), listed with the printer
# columns, selected by labels and fields, watched, patched (strategic merge
# refused as upstream), limited by count/buckets.example.com and by a
# CustomQuota; the status subresource and generation behave as upstream's;
# kubectl scale works; kubectl explain reads the schema; a kind with no
# definition is "no matches for kind"; names conflicting with a built-in are
# not accepted; several versions share one storage version; a restart still
# serves them; deleting the definition deletes its objects (a finalizer on
# one holds it Terminating, creates refused meanwhile).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl

start_allotd
D=$E2E_DIR

cat >"$D/crd.yaml" <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: buckets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: buckets
    singular: bucket
    kind: Bucket
    shortNames: [bk]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
        labelSelectorPath: .status.selector
    additionalPrinterColumns:
    - {name: Region, type: string, jsonPath: .spec.region}
    - {name: Storage, type: integer, jsonPath: .spec.storageGB}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: The bucket to provision.
            required: [region]
            properties:
              storageGB:
                type: integer
                minimum: 1
                default: 10
                description: Size of the bucket in gigabytes.
              region: {type: string, enum: [us-east-1, eu-west-1]}
              replicas: {type: integer}
          status:
            type: object
            properties:
              replicas: {type: integer}
              selector: {type: string}
              conditions:
                type: array
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string}
YAML

bucket() { # bucket NAME REGION [STORAGE] [NAMESPACE]
  printf 'apiVersion: example.com/v1\nkind: Bucket\nmetadata: {name: %s, namespace: %s}\nspec: {region: %s%s}\n' \
    "$1" "${4:-default}" "$2" "${3:+, storageGB: $3}"
}

# --- the definition: applied, Established, listed ---
k apply -f "$D/crd.yaml" >/dev/null
k wait --for=condition=Established crd/buckets.example.com --timeout=20s >/dev/null ||
  fail "the CRD did not become Established"
expect_eq "NamesAccepted" \
  "$(k get crd buckets.example.com -o jsonpath='{.status.conditions[?(@.type=="NamesAccepted")].reason}')" \
  "NoConflicts"
expect_contains "kubectl get crd" "$(k get crd)" "NAME                  CREATED AT"
expect_contains "short names" "$(k get crd buckets.example.com -o jsonpath='{.status.acceptedNames.shortNames}')" "bk"
expect_contains "api-resources" "$(k api-resources --api-group=example.com)" "buckets"
expect_contains "storedVersions" "$(k get crd buckets.example.com -o jsonpath='{.status.storedVersions}')" "v1"

# --- objects: defaults, validation, strict fields ---
bucket b1 us-east-1 20 | k apply -f - >/dev/null
bucket b2 eu-west-1 | k create -f - >/dev/null
expect_eq "default storageGB" "$(k get bucket b2 -o jsonpath='{.spec.storageGB}')" "10"
# server-side apply of a custom resource: twice, then a second manager's conflict
bucket b3 us-east-1 30 | k apply --server-side -f - >/dev/null || fail "apply --server-side of a Bucket failed"
bucket b3 us-east-1 30 | k apply --server-side -f - >/dev/null || fail "a second identical apply failed"
expect_contains "managedFields" "$(k get bucket b3 -o yaml --show-managed-fields)" "manager: kubectl"
out=$(bucket b3 us-east-1 40 | k apply --server-side --field-manager=other -f - 2>&1) &&
  fail "a second manager's conflicting apply of a Bucket succeeded"
expect_contains "conflict" "$out" 'conflict with "kubectl": .spec.storageGB'
bucket b3 us-east-1 40 | k apply --server-side --field-manager=other --force-conflicts -f - >/dev/null ||
  fail "--force-conflicts on a Bucket failed"
expect_eq "forced storageGB" "$(k get bucket b3 -o jsonpath='{.spec.storageGB}')" "40"
k delete bucket b3 >/dev/null
expect_eq "generation on create" "$(k get bucket b2 -o jsonpath='{.metadata.generation}')" "1"
out=$(bucket bad us-east-1 '"ten"' | k create -f - 2>&1) && fail "a string in storageGB was accepted"
expect_contains "type error" "$out" \
  'The Bucket "bad" is invalid: spec.storageGB: Invalid value: "string": spec.storageGB in body must be of type integer: "string"'
out=$(bucket bad us-east-1 0 | k create -f - 2>&1) && fail "storageGB 0 was accepted"
expect_contains "minimum" "$out" 'spec.storageGB in body should be greater than or equal to 1'
out=$(bucket bad mars | k create -f - 2>&1) && fail "an unknown region was accepted"
expect_contains "enum" "$out" 'spec.region: Unsupported value: "mars": supported values: "us-east-1", "eu-west-1"'
out=$(printf 'apiVersion: example.com/v1\nkind: Bucket\nmetadata: {name: bad}\nspec: {region: us-east-1, colour: red}\n' |
  k create -f - 2>&1) && fail "an unknown field was accepted under Strict"
expect_contains "strict" "$out" \
  'Bucket in version "v1" cannot be handled as a Bucket: strict decoding error: unknown field "spec.colour"'
printf 'apiVersion: example.com/v1\nkind: Bucket\nmetadata: {name: pruned}\nspec: {region: us-east-1, colour: red}\n' |
  k create --validate=false -f - >/dev/null
expect_eq "pruned" "$(k get bucket pruned -o jsonpath='{.spec}')" '{"region":"us-east-1","storageGB":10}'
k delete bucket pruned >/dev/null
[ "$(api GET /apis/example.com/v1/namespaces/default/buckets/nope | tail -1)" = 404 ] || fail "no 404"

# --- listed with the printer columns; selectors ---
out=$(k get buckets)
expect_contains "columns" "$out" "NAME   REGION      STORAGE   READY   AGE"
expect_contains "row" "$out" "b1     us-east-1   20"
expect_contains "short name" "$(k get bk -o name)" "bucket.example.com/b2"
k label bucket b1 tier=gold >/dev/null
expect_eq "label selector" "$(k get buckets -l tier=gold -o name)" "bucket.example.com/b1"
expect_eq "field selector" "$(k get buckets --field-selector metadata.name=b2 -o name)" "bucket.example.com/b2"
out=$(k get buckets --field-selector spec.region=x 2>&1) && fail "an unknown field label was accepted"
expect_contains "field label" "$out" "field label not supported: spec.region"

# --- watched ---
k get buckets --watch -o name >"$D/watch.out" 2>&1 &
watcher=$!
stop_watcher() { kill "$watcher" 2>/dev/null || true; }
on_cleanup stop_watcher
wait_until 20 grep -q 'bucket.example.com/b1' "$D/watch.out" || fail "watch did not list b1"
bucket w1 us-east-1 | k create -f - >/dev/null
wait_until 20 grep -q 'bucket.example.com/w1' "$D/watch.out" || fail "watch did not see w1"
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true

# --- patches: JSON and merge; strategic merge refused as upstream ---
k patch bucket w1 --type=merge -p '{"spec":{"storageGB":30}}' >/dev/null
k patch bucket w1 --type=json -p '[{"op":"replace","path":"/spec/storageGB","value":31}]' >/dev/null
expect_eq "patched" "$(k get bucket w1 -o jsonpath='{.spec.storageGB} {.metadata.generation}')" "31 3"
out=$(k patch bucket w1 -p '{"spec":{"storageGB":32}}' 2>&1) && fail "a strategic merge patch was accepted"
expect_contains "415" "$out" \
  "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
out=$(k patch bucket w1 --type=merge -p '{"spec":{"storageGB":"x"}}' 2>&1) && fail "patch to a string accepted"
expect_contains "patch validated" "$out" 'spec.storageGB in body must be of type integer: "string"'

# --- status subresource: the main resource ignores status, status ignores spec ---
k patch bucket w1 --type=merge -p '{"status":{"replicas":9}}' >/dev/null
expect_eq "status ignored" "$(k get bucket w1 -o jsonpath='{.status.replicas}')" ""
k patch bucket w1 --subresource=status --type=merge \
  -p '{"spec":{"storageGB":99},"status":{"replicas":2,"selector":"app=w1","conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null
expect_eq "status written, spec ignored, generation kept" \
  "$(k get bucket w1 -o jsonpath='{.status.replicas} {.spec.storageGB} {.metadata.generation}')" "2 31 3"
expect_contains "Ready column" "$(k get bucket w1)" "True"
k label bucket w1 a=b >/dev/null
expect_eq "metadata change keeps generation" "$(k get bucket w1 -o jsonpath='{.metadata.generation}')" "3"

# --- scale ---
k scale bucket w1 --replicas=3 >/dev/null
expect_eq "scaled" "$(k get bucket w1 -o jsonpath='{.spec.replicas}')" "3"
out=$(api GET /apis/example.com/v1/namespaces/default/buckets/w1/scale)
expect_contains "scale" "$out" '"spec":{"replicas":3},"status":{"replicas":2,"selector":"app=w1"}'

# --- explain; a kind no definition serves ---
expect_contains "explain" "$(k explain buckets.spec)" "Size of the bucket in gigabytes."
printf 'apiVersion: s3.aws.upbound.io/v1beta1\nkind: Bucket\nmetadata: {name: x}\n' >"$D/unknown.yaml"
out=$(k apply -f "$D/unknown.yaml" 2>&1) && fail "an unknown kind was applied"
expect_contains "no matches" "$out" 'no matches for kind "Bucket" in version "s3.aws.upbound.io/v1beta1"'

# --- count/buckets.example.com quota ---
k create namespace q >/dev/null
k create quota buckets --hard=count/buckets.example.com=2 -n q >/dev/null
bucket q1 us-east-1 "" q | k create -f - >/dev/null
bucket q2 us-east-1 "" q | k create -f - >/dev/null
out=$(bucket q3 us-east-1 "" q | k create -f - 2>&1) && fail "a third bucket was admitted"
expect_contains "exceeded" "$out" \
  'buckets.example.com "q3" is forbidden: exceeded quota: buckets, requested: count/buckets.example.com=1, used: count/buckets.example.com=2, limited: count/buckets.example.com=2'
expect_eq "used" "$(k get quota buckets -n q -o jsonpath='{.status.used.count/buckets\.example\.com}')" "2"

# --- a CustomQuota targeting the kind ---
k create namespace cq >/dev/null
k apply -f - >/dev/null <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: CustomQuota
metadata: {name: storage, namespace: cq}
spec:
  limit: "50"
  sources:
  - {apiVersion: example.com/v1, kind: Bucket, op: add, path: .spec.storageGB}
YAML
bucket c1 us-east-1 40 cq | k create -f - >/dev/null
out=$(bucket c2 us-east-1 20 cq | k create -f - 2>&1) && fail "the custom quota admitted 60 GB"
expect_contains "custom quota" "$out" 'creating resource exceeds limit for CustomQuota "storage"'
used_is() { [ "$(k get customquota storage -n cq -o jsonpath='{.status.usage.used}')" = "$1" ]; }
wait_until 20 used_is 40 || fail "custom quota used: $(k get customquota storage -n cq -o yaml)"

# --- a GlobalCustomQuota counting buckets across a tenant's namespaces (seed 003) ---
k create namespace solar-a >/dev/null
k create namespace solar-b >/dev/null
k label namespace solar-a solar-b capsule.clastix.io/tenant=solar >/dev/null
k apply -f - >/dev/null <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: GlobalCustomQuota
metadata: {name: tenant-buckets}
spec:
  limit: 2
  namespaceSelectors:
  - matchLabels: {capsule.clastix.io/tenant: solar}
  sources:
  - {apiVersion: example.com/v1, kind: Bucket, op: count}
YAML
bucket s1 us-east-1 "" solar-a | k create -f - >/dev/null
bucket s2 us-east-1 "" solar-b | k create -f - >/dev/null
out=$(bucket s3 us-east-1 "" solar-a | k create -f - 2>&1) && fail "the global custom quota admitted a third bucket"
expect_contains "global custom quota" "$out" 'creating resource exceeds limit for GlobalCustomQuota "tenant-buckets"'
expect_eq "namespace field selector" \
  "$(k get buckets -A --field-selector metadata.namespace=solar-b -o name)" "bucket.example.com/s2"

# --- deletecollection, by label ---
k label bucket s1 -n solar-a gone=yes >/dev/null
[ "$(api DELETE '/apis/example.com/v1/namespaces/solar-a/buckets?labelSelector=gone%3Dyes' | tail -1)" = 200 ] ||
  fail "deletecollection failed"
expect_eq "deletecollection" "$(k get buckets -n solar-a -o name)" ""
bucket s3 us-east-1 "" solar-a | k create -f - >/dev/null

# --- names held by a built-in kind of the group are not accepted ---
k apply -f - >/dev/null <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: resourcepools.capsule.clastix.io}
spec:
  group: capsule.clastix.io
  scope: Cluster
  names: {plural: resourcepools, kind: Pool}
  versions:
  - name: v1beta3
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
YAML
conflict() { [ "$(k get crd resourcepools.capsule.clastix.io -o jsonpath='{.status.conditions[?(@.type=="NamesAccepted")].message}')" = '"resourcepools" is already in use' ]; }
wait_until 20 conflict || fail "no name conflict: $(k get crd resourcepools.capsule.clastix.io -o yaml)"
expect_eq "conflict reason" \
  "$(k get crd resourcepools.capsule.clastix.io -o jsonpath='{.status.conditions[?(@.type=="NamesAccepted")].reason} {.status.conditions[?(@.type=="Established")].status}')" \
  "PluralConflict False"
[ "$(api GET /apis/capsule.clastix.io/v1beta3/resourcepools | tail -1)" = 404 ] || fail "a conflicting CRD is served"
k delete crd resourcepools.capsule.clastix.io >/dev/null

# --- several versions, one storage version (and a CEL rule: accepted, warned) ---
out=$(k apply -f - 2>&1 <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {plural: gadgets, kind: Gadget}
  versions:
  - name: v1beta1
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
            x-kubernetes-validations: [{rule: "has(self.any)"}]
YAML
)
expect_contains "CEL warning" "$out" \
  "Warning: spec.versions[1].schema.openAPIV3Schema: x-kubernetes-validations rules are not enforced by allotd"
k wait --for=condition=Established crd/gadgets.example.com --timeout=20s >/dev/null || fail "gadgets not Established"
printf 'apiVersion: example.com/v1beta1\nkind: Gadget\nmetadata: {name: g}\nspec: {any: [1, 2]}\n' | k create -f - >/dev/null
expect_eq "read as v1beta1" "$(api GET /apis/example.com/v1beta1/gadgets/g | sed '$d' | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["apiVersion"])')" "example.com/v1beta1"
expect_eq "read as v1" "$(api GET /apis/example.com/v1/gadgets/g | sed '$d' | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["apiVersion"])')" "example.com/v1"
expect_contains "list as v1beta1" "$(api GET /apis/example.com/v1beta1/gadgets | sed '$d')" '"apiVersion":"example.com/v1beta1","kind":"Gadget"'

# --- a restart still serves them (and their selectors, and their quota) ---
stop_allotd
start_allotd
expect_contains "after restart" "$(k get buckets -o name)" "bucket.example.com/w1"
expect_eq "field selector after restart" "$(k get buckets --field-selector metadata.name=w1 -o name)" "bucket.example.com/w1"
expect_eq "quota after restart" "$(k get quota buckets -n q -o jsonpath='{.status.used.count/buckets\.example\.com}')" "2"
out=$(bucket q3 us-east-1 "" q | k create -f - 2>&1) && fail "quota not enforced after restart"
expect_eq "gadget after restart" "$(k get gadgets.example.com g -o jsonpath='{.spec.any}')" "[1,2]"

# --- deleting the definition deletes its objects; a finalizer holds it ---
k patch bucket b1 --type=merge -p '{"metadata":{"finalizers":["example.com/hold"]}}' >/dev/null
k delete crd buckets.example.com --wait=false >/dev/null
terminating() { [ "$(k get crd buckets.example.com -o jsonpath='{.status.conditions[?(@.type=="Terminating")].status}')" = True ]; }
wait_until 20 terminating || fail "the CRD is not Terminating"
expect_contains "finalizer" "$(k get crd buckets.example.com -o jsonpath='{.metadata.finalizers}')" \
  "customresourcecleanup.apiextensions.k8s.io"
only_b1() { [ "$(k get buckets -A -o name)" = "bucket.example.com/b1" ]; }
wait_until 20 only_b1 || fail "objects not deleted: $(k get buckets -A -o name)"
out=$(bucket late us-east-1 | k create -f - 2>&1) && fail "a create was accepted while terminating"
expect_contains "terminating" "$out" "create not allowed while custom resource definition is terminating"
k patch bucket b1 --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
crd_gone() { ! k get crd buckets.example.com >/dev/null 2>&1; }
wait_until 30 crd_gone || fail "the CRD was not removed"
[ "$(api GET /apis/example.com/v1/namespaces/default/buckets | tail -1)" = 404 ] || fail "still served"
expect_eq "quota released" "$(k get quota buckets -n q -o jsonpath='{.status.used.count/buckets\.example\.com}')" "0"
expect_contains "gadgets stay" "$(k get gadgets.example.com -o name)" "gadget.example.com/g"

stop_allotd
echo "test_crd: ok"
