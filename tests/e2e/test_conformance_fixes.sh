# test_conformance_fixes.sh - what upstream's [sig-api-machinery]
# conformance specs (v1.20.2) that need no container assert, with the real
# kubectl and curl:
#  1. Secrets and ConfigMaps: keys are config keys (an empty key is refused,
#     "should fail to create secret due to empty secret key"), a ConfigMap
#     key in both data and binaryData, the 1 MiB limit, `immutable`, and a
#     Secret's stringData written into data;
#  2. the garbage collector is "not blocked by dependency circle": pod1
#     owned by pod3, pod2 by pod1, pod3 by pod2 (blockOwnerDeletion), pod1
#     deleted in Foreground, all three go; and a dependent with a valid owner
#     survives its other owner's Foreground deletion;
#  3. custom resources and fieldValidation: Strict refuses every unknown
#     field (400), Warn warns, Ignore prunes quietly, server-side apply
#     refuses a field the schema does not declare, preserve-unknown-fields
#     keeps them;
#  4. a default added to a CRD's schema shows on objects stored before it
#     (get, list, watch);
#  5. /openapi/v2 publishes a CRD that preserves unknown fields at its root
#     as a bare {"type":"object"} and strips what kubectl's v2 validation
#     cannot read (nullable, nested preserve-unknown-fields, defaults); as
#     protobuf it holds the custom kinds' definitions;
#  6. a Table asked of a backend without metadata (selfsubjectaccessreviews,
#     pods/binding) is upstream's 406.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl

start_allotd --simulated-nodes 1
D=$E2E_DIR
py() { /usr/bin/python3 -c "$@"; }

KEY_MSG="a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"

# ---- 1. Secrets and ConfigMaps ----
out=$(echo '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"empty-key"},"data":{"":"dmFsdWUtMQ=="}}' |
  k create -f - 2>&1) && fail "a Secret with an empty key was created"
expect_contains "secret empty key" "$out" "The Secret \"empty-key\" is invalid: data[]: Invalid value: \"\": $KEY_MSG"
body=$(api POST /api/v1/namespaces/default/configmaps -H 'Content-Type: application/json' \
  -d '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"empty-key"},"data":{"":"value-1"}}')
expect_eq "configmap empty key code" "$(tail -1 <<<"$body")" 422
expect_contains "configmap empty key reason" "$body" '"reason":"Invalid"'
expect_contains "configmap empty key cause" "$body" '"field":"data[]"'
out=$(echo '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"data":{"a":"1","..b":"2"},"binaryData":{"a":"AA=="}}' |
  k create -f - 2>&1) && fail "a ConfigMap with a key in data and binaryData was created"
expect_contains "dot-dot prefix" "$out" "data[..b]: Invalid value: \"..b\": must not start with '..'"
expect_contains "duplicate key" "$out" 'data[a]: Invalid value: "a": duplicate of key present in binaryData'
py 'import json; print(json.dumps({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"a":"x"*(1024*1024),"b":"y"}}))' >"$D/big.json"
out=$(k create -f "$D/big.json" 2>&1) && fail "a ConfigMap over 1 MiB was created"
expect_contains "configmap size" "$out" 'The ConfigMap "big" is invalid: []: Too long: must have at most 1048576 bytes'
py 'import json; print(json.dumps({"apiVersion":"v1","kind":"Secret","metadata":{"name":"big"},"stringData":{"a":"x"*(1024*1024+1)}}))' >"$D/bigs.json"
out=$(k create -f "$D/bigs.json" 2>&1) && fail "a Secret over 1 MiB was created"
expect_contains "secret size" "$out" 'The Secret "big" is invalid: data: Too long: must have at most 1048576 bytes'
out=$(echo '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"tls"},"type":"kubernetes.io/tls","data":{"tls.crt":""}}' |
  k create -f - 2>&1) && fail "a TLS Secret without tls.key was created"
expect_contains "tls key required" "$out" 'The Secret "tls" is invalid: data[tls.key]: Required value'
# stringData is written into data and never stored
echo '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"sd"},"data":{"a":"eA=="},"stringData":{"a":"hello","b":"world"}}' |
  k create -f - >/dev/null
expect_eq "stringData merged" "$(k get secret sd -o jsonpath='{.data.a} {.data.b} [{.stringData}]')" "aGVsbG8= d29ybGQ= []"
k patch secret sd --type=merge -p '{"stringData":{"c":"!"}}' >/dev/null
expect_eq "stringData patched" "$(k get secret sd -o jsonpath='{.data.c} [{.stringData}]')" "IQ== []"
out=$(k patch secret sd --type=merge -p '{"type":"Other"}' 2>&1) && fail "a Secret's type changed"
expect_contains "type immutable" "$out" 'type: Invalid value: "Other": field is immutable'
# immutable: data frozen, metadata not
k create configmap frozen --from-literal=a=1 >/dev/null
k patch configmap frozen --type=merge -p '{"immutable":true}' >/dev/null
k label configmap frozen tier=gold >/dev/null || fail "a label on an immutable ConfigMap was refused"
out=$(k patch configmap frozen --type=merge -p '{"data":{"a":"2"}}' 2>&1) && fail "an immutable ConfigMap's data changed"
expect_contains "immutable data" "$out" 'data: Forbidden: field is immutable when `immutable` is set'
out=$(k patch configmap frozen --type=merge -p '{"immutable":false}' 2>&1) && fail "immutable was unset"
expect_contains "immutable flag" "$out" 'immutable: Forbidden: field is immutable when `immutable` is set'

# ---- 2. the garbage collector ----
k create namespace gc >/dev/null
for p in pod1 pod2 pod3; do
  k -n gc run "$p" --image=nginx --overrides='{"spec":{"terminationGracePeriodSeconds":0}}' >/dev/null
done
uid() { k -n gc get pod "$1" -o jsonpath='{.metadata.uid}'; }
own() { # own DEPENDENT OWNER: the spec's strategic merge patch
  k -n gc patch pod "$1" -p "{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"name\":\"$2\",\"uid\":\"$(uid "$2")\",\"controller\":true,\"blockOwnerDeletion\":true}]}}" >/dev/null
}
own pod1 pod3
own pod2 pod1
own pod3 pod2
body=$(api DELETE /api/v1/namespaces/gc/pods/pod1 -H 'Content-Type: application/json' \
  -d "{\"propagationPolicy\":\"Foreground\",\"preconditions\":{\"uid\":\"$(uid pod1)\"}}")
expect_eq "foreground delete of pod1" "$(tail -1 <<<"$body")" 200
no_pods() { [ -z "$(k -n gc get pods -o name)" ]; }
wait_until 60 no_pods || fail "a dependency circle blocked the garbage collector: $(k -n gc get pods -o yaml)"

# a pod with a valid owner survives its other owner's Foreground deletion
k -n gc create configmap stay >/dev/null
k -n gc create configmap go >/dev/null
cmuid() { k -n gc get configmap "$1" -o jsonpath='{.metadata.uid}'; }
k -n gc run both --image=nginx --overrides="{\"metadata\":{\"ownerReferences\":[
  {\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"go\",\"uid\":\"$(cmuid go)\",\"blockOwnerDeletion\":true},
  {\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"stay\",\"uid\":\"$(cmuid stay)\"}]}}" >/dev/null
k -n gc delete configmap go --cascade=foreground --timeout=60s >/dev/null ||
  fail "the owner waiting for its dependents was not deleted"
expect_eq "surviving dependent" "$(k -n gc get pod both -o jsonpath='{.metadata.ownerReferences[*].name} {.metadata.deletionTimestamp}')" "stay "

# ---- 3. custom resources and fieldValidation ----
cat >"$D/crd.yaml" <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.conf.example.com
spec:
  group: conf.example.com
  scope: Namespaced
  names: {plural: foos, singular: foo, kind: Foo, listKind: FooList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        description: Foo CRD for Testing
        type: object
        properties:
          spec:
            type: object
            description: Specification of Foo
            properties:
              bars:
                type: array
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    age: {type: string, default: "7"}
                    note: {type: string, nullable: true}
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
                properties:
                  known: {type: string}
YAML
k apply -f "$D/crd.yaml" >/dev/null
k wait --for=condition=Established crd/foos.conf.example.com --timeout=20s >/dev/null || fail "the CRD was not Established"
foo() { printf '{"apiVersion":"conf.example.com/v1","kind":"Foo","metadata":{"name":"%s"},"spec":%s%s}' "$1" "$2" "${3:-}"; }
out=$(foo strict '{"foo":true,"bars":[{"name":"a","zz":1}]}' ',"top":1' | k create -f - 2>&1) &&
  fail "unknown fields were accepted under Strict"
expect_contains "strict lists every field" "$out" \
  'Foo in version "v1" cannot be handled as a Foo: strict decoding error: unknown field "spec.bars[0].zz", unknown field "spec.foo", unknown field "top"'
out=$(foo warned '{"foo":true}' | k create --validate=warn -f - 2>&1) || fail "Warn refused: $out"
expect_contains "warn" "$out" 'Warning: unknown field "spec.foo"'
expect_eq "warned is pruned" "$(k get foo warned -o jsonpath='{.spec}')" '{}'
out=$(foo ignored '{"foo":true}' | k create --validate=false -f - 2>&1) || fail "Ignore refused: $out"
case "$out" in *Warning*) fail "Ignore warned: $out" ;; esac
expect_eq "ignored is pruned" "$(k get foo ignored -o jsonpath='{.spec}')" '{}'
foo kept '{"extra":{"known":"k","anything":{"x":[1]}}}' | k create -f - >/dev/null ||
  fail "fields under x-kubernetes-preserve-unknown-fields were refused"
expect_eq "preserved" "$(k get foo kept -o jsonpath='{.spec.extra.anything.x[0]}')" "1"
out=$(foo applied '{"foo":true}' | k apply --server-side -f - 2>&1) && fail "server-side apply took an undeclared field"
expect_contains "apply undeclared" "$out" \
  'failed to create typed patch object (default/applied; conf.example.com/v1, Kind=Foo): .spec.foo: field not declared in schema'
foo applied '{"bars":[{"name":"a"}]}' | k apply --server-side -f - >/dev/null || fail "a valid apply failed"

# ---- 4. defaults on read ----
foo old '{"bars":[{"name":"a"}]}' | k create -f - >/dev/null
k get foos -o name --watch >"$D/watch.out" 2>&1 &
watcher=$!
stop_watcher() { kill "$watcher" 2>/dev/null || true; }
on_cleanup stop_watcher
k patch crd foos.conf.example.com --type=json -p '[{"op":"add","path":"/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/colour","value":{"type":"string","default":"blue"}}]' >/dev/null
has_colour() { [ "$(k get foo old -o jsonpath='{.spec.colour}')" = blue ]; }
wait_until 20 has_colour || fail "a default added to the schema does not show on read: $(k get foo old -o json)"
expect_contains "default on list" "$(k get foos -o jsonpath='{range .items[*]}{.metadata.name}={.spec.colour} {end}')" "old=blue"
body=$(api GET "/apis/conf.example.com/v1/namespaces/default/foos?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Dold")
expect_contains "default on watch" "$body" '"colour":"blue"'
expect_eq "default of an item on read" "$(k get foo old -o jsonpath='{.spec.bars[0].age}')" "7"
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true

# ---- 5. /openapi/v2 ----
cat >"$D/crd2.yaml" <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: empties.conf.example.com
spec:
  group: conf.example.com
  scope: Namespaced
  names: {plural: empties, singular: empty, kind: Empty}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
YAML
k apply -f "$D/crd2.yaml" >/dev/null
k wait --for=condition=Established crd/empties.conf.example.com --timeout=20s >/dev/null || fail "Empty not Established"
api GET /openapi/v2 >"$D/v2.json"
defs() {
  py 'import json,sys
doc = json.loads(open(sys.argv[1]).read().rsplit("\n", 1)[0])
d = doc["definitions"]
print(json.dumps(d["com.example.conf.v1.Empty"], sort_keys=True))
spec = d["com.example.conf.v1.Foo"]["properties"]["spec"]["properties"]
print(json.dumps(spec["extra"], sort_keys=True))
print(json.dumps(spec["bars"]["items"]["properties"], sort_keys=True))' "$D/v2.json"
}
out=$(defs)
expect_contains "bare object at a preserving root" "$out" \
  '{"type": "object", "x-kubernetes-group-version-kind": [{"group": "conf.example.com", "kind": "Empty", "version": "v1"}]}'
expect_contains "nested preserve in v2" "$out" '{"x-kubernetes-preserve-unknown-fields": true}'
expect_contains "nullable and default in v2" "$out" '{"age": {"type": "string"}, "name": {"type": "string"}, "note": {}}'
# as protobuf (what kubectl before 1.27 validates and explains with): the
# custom kinds and the metadata they refer to, no built-in kind
api GET /openapi/v2 -H 'Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf' \
  -o "$D/v2.pb" >"$D/v2.code"
expect_eq "v2 protobuf" "$(tail -1 "$D/v2.code")" 200
out=$(py 'import sys
b = open(sys.argv[1], "rb").read()
def varint(b, i):
    v = s = 0
    while True:
        v |= (b[i] & 0x7f) << s; s += 7; i += 1
        if not b[i - 1] & 0x80: return v, i
def fields(b):
    i, out = 0, []
    while i < len(b):
        k, i = varint(b, i)
        assert k & 7 == 2, "wire type"
        n, i = varint(b, i)
        out.append((k >> 3, b[i:i + n])); i += n
    return out
doc = dict((f, v) for f, v in fields(b) if f in (1, 9))
names = [dict(fields(e))[1].decode() for f, e in fields(doc[9]) if f == 1]
print(doc[1].decode(), " ".join(sorted(names)))' "$D/v2.pb")
expect_contains "v2 protobuf swagger" "$out" "2.0 "
expect_contains "v2 protobuf custom kinds" "$out" "com.example.conf.v1.Empty com.example.conf.v1.EmptyList com.example.conf.v1.Foo com.example.conf.v1.FooList"
expect_contains "v2 protobuf metadata" "$out" "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
case "$out" in *io.k8s.api.core.v1.Pod*) fail "v2 protobuf holds built-in kinds: $out" ;; esac
body=$(api GET /openapi/v3/apis/conf.example.com/v1)
expect_contains "v3 keeps the schema" "$body" '"x-kubernetes-preserve-unknown-fields":true'
echo '{"apiVersion":"conf.example.com/v1","kind":"Empty","metadata":{"name":"any"},"a":{"b":[{"c":"d"}]}}' |
  k create -f - >/dev/null || fail "a preserving root refused a field"
expect_contains "kubectl explain" "$(k explain empties)" "<empty>"

# ---- 6. Tables of backends without metadata ----
ssar='{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"nonResourceAttributes":{"path":"/","verb":"get"}}}'
NOT_ACCEPTABLE='"message":"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf","reason":"NotAcceptable"'
body=$(api POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews -H 'Content-Type: application/json' \
  -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' -d "$ssar")
expect_eq "406 for a review's Table" "$(tail -1 <<<"$body")" 406
expect_contains "406 status" "$body" "$NOT_ACCEPTABLE"
body=$(api POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews -H 'Content-Type: application/json' \
  -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io, application/json' -d "$ssar")
expect_eq "plain JSON after the Table" "$(tail -1 <<<"$body")" 201
body=$(api POST /apis/authentication.k8s.io/v1/tokenreviews -H 'Content-Type: application/json' \
  -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' \
  -d '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"x"}}')
expect_eq "406 for a token review's Table" "$(tail -1 <<<"$body")" 406
k -n gc create -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: unbound}
spec: {schedulerName: none, containers: [{name: c, image: nginx}]}
YAML
body=$(api POST /api/v1/namespaces/gc/pods/unbound/binding -H 'Content-Type: application/json' \
  -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' \
  -d '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"unbound"},"target":{"kind":"Node","name":"allot-node-1"}}')
expect_eq "406 for a binding's Table" "$(tail -1 <<<"$body")" 406
expect_eq "not bound" "$(k -n gc get pod unbound -o jsonpath='{.spec.nodeName}')" ""
body=$(api GET /api/v1/namespaces/gc/pods/unbound -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io')
expect_eq "a pod's Table" "$(tail -1 <<<"$body")" 200

stop_allotd
echo "PASS"
