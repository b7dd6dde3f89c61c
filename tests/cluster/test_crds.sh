#!/usr/bin/env bash
# test_crds.sh: allot's Capsule kinds as CRDs (deploy/cluster/crds.yaml, from
# `allotd crds`) on a real kube-apiserver v1.20.2 (scripts/kube-up.sh): the
# definitions are accepted, structural and Established; seed 003's example
# pools, claims and custom quotas are accepted as written (defaults from
# allot's defaulting filled in); invalid objects are refused by the schema;
# `kubectl get` prints the columns standalone allotd prints; status is a
# subresource (a write of the object leaves status alone, a PUT of /status
# sets it). Exit 77 (skipped) without the kube binaries or etcd.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
manifest=$cluster_root/deploy/cluster/crds.yaml
[ -f "$manifest" ] || { echo "FAIL: no $manifest" >&2; exit 1; }

kube_up
G=capsule.clastix.io
crds="resourcepools.$G resourcepoolclaims.$G customquotas.$G globalcustomquotas.$G"

# ---- the definitions ----
kc apply -f "$manifest" >/dev/null
for c in $crds; do
  # --request-timeout=0: the wait's own 60 s bound, not kc's per request.
  kc --request-timeout=0 wait --for condition=established --timeout=60s "crd/$c" >/dev/null || fail "$c not Established"
  # A schema the API server finds not structural is served, with this condition.
  ns=$(kc get crd "$c" -o jsonpath='{.status.conditions[?(@.type=="NonStructuralSchema")].status}')
  [ -z "$ns" ] || fail "$c: NonStructuralSchema $ns"
  sub=$(kc get --raw "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/$c" |
    /usr/bin/python3 -c 'import json,sys; v=json.load(sys.stdin)["spec"]["versions"][0]; print(json.dumps(v.get("subresources")))')
  [ "$sub" = '{"status": {}}' ] || fail "$c subresources: $sub"
done
scope() { kc get crd "$1.$G" -o jsonpath='{.spec.scope} {.spec.names.shortNames}'; }
[ "$(scope resourcepools)" = 'Cluster ["quotapool"]' ] || fail "resourcepools: $(scope resourcepools)"
[ "$(scope resourcepoolclaims)" = 'Namespaced ' ] || fail "resourcepoolclaims: $(scope resourcepoolclaims)"
[ "$(scope customquotas)" = 'Namespaced ["cq"]' ] || fail "customquotas: $(scope customquotas)"
[ "$(scope globalcustomquotas)" = 'Cluster ["gcq"]' ] || fail "globalcustomquotas: $(scope globalcustomquotas)"

# ---- seed 003's examples, as written (tests/fixtures/seed003) ----
kc create namespace solar-test >/dev/null
kc label namespace solar-test capsule.clastix.io/tenant=solar >/dev/null
# seed003 NAME...: tests/fixtures/seed003/NAME.yaml as one stream, "---"
# before each file's first document where the file has none.
seed003() {
  local f files=()
  for f; do files+=("$FIXTURES/seed003/$f.yaml"); done
  awk 'FNR == 1 && $0 != "---" { print "---" } 1' "${files[@]}"
}
# Except `group: ""` in the custom quotas' sources, which sed drops: the
# kube-apiserver v1.20.2 that scripts/kube-build.sh builds with Go >= 1.16
# validates an empty string of a custom resource as null
# ("spec.sources.group: Invalid value: \"null\"", kubernetes#99804,
# go-openapi/validate#137); upstream's 1.20 binaries, built with Go 1.15, and
# 1.21+ do not. An empty group is the default anyway.
seed003 solar best-effort-pool example-defaults get-me-cpu pod-count-limit object-bucket-claim-storage-gold |
  sed '/- group: ""$/{N;s/group: ""\n *//}' | kc apply -f - >/dev/null
# The schema's defaults are what allot's defaulting writes into an empty spec.
cfg=$(kc get resourcepool solar -o jsonpath='{.spec.config}')
[ "$cfg" = '{"defaultsZero":false,"deleteBoundResources":false,"orderedQueue":false}' ] ||
  fail "pool config defaults: $cfg"
opts=$(kc get cq pod-count-limit -n solar-test -o jsonpath='{.spec.options}')
[ "$opts" = '{"emitMetricPerClaimUsage":false}' ] || fail "custom quota options defaults: $opts"
[ "$(kc get quotapool -o name | wc -l)" = 3 ] || fail "short name quotapool lists $(kc get quotapool -o name)"
[ "$(kc get gcq -o name | wc -l)" = 2 ] || fail "short name gcq lists $(kc get gcq -o name)"

# ---- refused by the schema ----
# --validate=false: the API server refuses, not kubectl from the published schema.
refused() { # WANT-TEXT YAML
  local out
  if out=$(printf '%s\n' "$2" | kc create --validate=false -f - 2>&1); then fail "accepted: $2"; fi
  case "$out" in *"$1"*) ;; *) fail "refused without \"$1\": $out" ;; esac
}
refused 'spec.quota: Required value' 'apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePool
metadata: {name: no-quota}
spec: {selectors: []}'
refused 'spec.quota.hard.cpu in body should match' 'apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePool
metadata: {name: bad-quantity}
spec: {quota: {hard: {cpu: lots}}}'
refused 'spec.config.orderedQueue in body must be of type boolean' 'apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePool
metadata: {name: bad-flag}
spec: {quota: {hard: {cpu: "1"}}, config: {orderedQueue: "yes"}}'
refused 'spec.sources: Required value' 'apiVersion: capsule.clastix.io/v1beta2
kind: CustomQuota
metadata: {name: no-sources, namespace: solar-test}
spec: {limit: 3}'
refused 'op: Unsupported value: "times"' 'apiVersion: capsule.clastix.io/v1beta2
kind: GlobalCustomQuota
metadata: {name: bad-op}
spec: {limit: 3, sources: [{kind: Pod, version: v1, op: times}]}'

# ---- status is a subresource ----
api=/apis/$G/v1beta2
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
put_status() { # PATH JSON-WITH-STATUS: PUT to PATH/status, read back first for resourceVersion
  local obj
  obj=$(kc get --raw "$1" | /usr/bin/python3 -c 'import json,sys; o=json.load(sys.stdin); o["status"]=json.loads(sys.argv[1]); print(json.dumps(o))' "$2")
  printf '%s' "$obj" >"$E2E_DIR/status.json"
  kc replace --raw "$1/status" -f "$E2E_DIR/status.json" >/dev/null
}
cond() { printf '{"type":"%s","status":"%s","reason":"%s","message":"%s","lastTransitionTime":"%s"}' "$@" "$now"; }
# Writing the object itself leaves status alone.
obj=$(kc get --raw "$api/resourcepools/solar" |
  /usr/bin/python3 -c 'import json,sys; o=json.load(sys.stdin); o["status"]={"claimCount":9}; print(json.dumps(o))')
printf '%s' "$obj" >"$E2E_DIR/main.json"
kc replace --raw "$api/resourcepools/solar" -f "$E2E_DIR/main.json" >/dev/null
[ -z "$(kc get resourcepool solar -o jsonpath='{.status}')" ] || fail "status written through the object"
put_status "$api/resourcepools/solar" "{\"claimCount\":1,\"namespaceCount\":1,\"namespaces\":[\"solar-test\"],\"conditions\":[$(cond Ready True Succeeded reconciled)]}"
put_status "$api/namespaces/solar-test/resourcepoolclaims/get-me-cpu" "{\"pool\":{\"name\":\"solar\",\"uid\":\"u1\"},\"condition\":$(cond Bound True Succeeded 'Claimed resources'),\"conditions\":[$(cond Bound True InUse 'in use')]}"
put_status "$api/namespaces/solar-test/customquotas/pod-count-limit" "{\"usage\":{\"used\":\"1\",\"available\":\"2\"},\"targets\":[],\"conditions\":[$(cond Ready True Succeeded reconciled)]}"

# ---- the columns standalone allotd prints ----
cols() { kc get "$@" | head -1 | tr -s ' '; }
row() { kc get "$@" --no-headers | tr -s ' ' | sed 's/ [0-9]*[smhd]$//'; }
[ "$(cols resourcepools)" = 'NAME CLAIMS NAMESPACES READY STATUS AGE' ] || fail "pool columns: $(cols resourcepools)"
[ "$(row resourcepool solar)" = 'solar 1 1 True reconciled' ] || fail "pool row: $(row resourcepool solar)"
[ "$(cols resourcepoolclaims -n solar-test)" = 'NAME POOL STATUS REASON MESSAGE AGE' ] ||
  fail "claim columns: $(cols resourcepoolclaims -n solar-test)"
[ "$(cols resourcepoolclaims -n solar-test -o wide)" = 'NAME POOL STATUS REASON MESSAGE AGE IN USE' ] ||
  fail "claim wide columns: $(cols resourcepoolclaims -n solar-test -o wide)"
[ "$(row resourcepoolclaim get-me-cpu -n solar-test)" = 'get-me-cpu solar Bound Succeeded Claimed resources' ] ||
  fail "claim row: $(row resourcepoolclaim get-me-cpu -n solar-test)"
[ "$(cols customquotas -n solar-test)" = 'NAME LIMIT USED AVAILABLE READY STATUS AGE' ] ||
  fail "custom quota columns: $(cols customquotas -n solar-test)"
[ "$(row cq pod-count-limit -n solar-test)" = 'pod-count-limit 3 1 2 True reconciled' ] ||
  fail "custom quota row: $(row cq pod-count-limit -n solar-test)"
[ "$(cols globalcustomquotas)" = 'NAME LIMIT USED AVAILABLE READY STATUS AGE' ] ||
  fail "global custom quota columns: $(cols globalcustomquotas)"
echo "ok: 4 CRDs Established and structural on kube-apiserver $("$kbin/kube-apiserver" --version | cut -d' ' -f2); seed objects accepted, 5 invalid refused, columns and status subresource as standalone"
