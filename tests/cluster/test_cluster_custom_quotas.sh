#!/usr/bin/env bash
# test_cluster_custom_quotas.sh - seed 003's custom-quota example
# (pod-count-limit: a GlobalCustomQuota of 6 pods over tenant solar, a
# CustomQuota of 3 in solar-test) on a real kube-apiserver v1.20.2 with
# allot in cluster mode, driven by the real kubectl: the leader's writer
# keeps both quotas' statuses as a recount of the cluster's pods gives
# them (usage, available, claims), following creates and deletes, and a
# pod in a namespace outside the tenant counts for neither; then enforced
# at admission through allot's webhook on pods (cluster/cq_guard.c): the
# seed's refusals with Capsule's texts, reservations settled by the
# writer, and a burst of 12 pods against a quota of 5 admitting at most 5,
# with the books exact after it; then a
# kind beyond pods (cluster/counted_kinds.c): a CustomQuota of 2
# ConfigMaps makes allot watch ConfigMaps and take them at its webhook,
# refuse the third and count them; and seed 003's GlobalCustomQuota on
# ObjectBucketClaims, the kind of a CRD of the cluster's own.
# Every wait is bounded. Exit 77 (skipped) without the kube binaries or etcd.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kube_up
kc create namespace solar-test >/dev/null
kc label namespace solar-test capsule.clastix.io/tenant=solar >/dev/null
kc create namespace solar-prod >/dev/null
kc label namespace solar-prod capsule.clastix.io/tenant=solar >/dev/null
kc create namespace other >/dev/null
# Two replicas, as deployed: the writer (the Lease's holder) is not the
# one the webhooks call.
start_cluster_writer
start_cluster_allotd
# `group: ""` dropped: Kubernetes 1.20 refuses it in a custom resource
# (kubernetes#99804; tests/cluster/test_crds.sh says more).
sed '/- group: ""$/{N;s/group: ""\n *//}' "$FIXTURES/seed003/pod-count-limit.yaml" |
  kc apply -f - >/dev/null

pod() { # NAMESPACE NAME
  kc create -f - >/dev/null <<EOF
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$2", "namespace": "$1"},
 "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
EOF
}
cq() { kc get customquota pod-count-limit -n solar-test -o 'jsonpath={.status.usage.used}/{.status.usage.available}' 2>/dev/null; }
gcq() { kc get globalcustomquota pod-count-limit -o 'jsonpath={.status.usage.used}/{.status.usage.available}' 2>/dev/null; }
is() { [ "$("${@:2}")" = "$1" ]; } # is WANT CMD...: CMD prints WANT

wait_until 30 is 0/3 cq || fail "CustomQuota status: '$(cq)', want 0/3"
wait_until 30 is 0/6 gcq || fail "GlobalCustomQuota status: '$(gcq)', want 0/6"
echo "ok: both quotas report their usage once written"

pod solar-test a
pod solar-test b
pod solar-prod c
pod other d
wait_until 30 is 2/1 cq || fail "CustomQuota status: '$(cq)', want 2/1"
wait_until 30 is 3/3 gcq || fail "GlobalCustomQuota status: '$(gcq)', want 3/3"
claims=$(kc get customquota pod-count-limit -n solar-test \
  -o 'jsonpath={range .status.claims[*]}{.namespace}/{.name}={.usage} {end}')
[ "$claims" = "solar-test/a=1 solar-test/b=1 " ] || fail "CustomQuota claims: '$claims'"
echo "ok: pods counted by the quotas whose namespaces they are in: $claims"

kc delete pod a -n solar-test --grace-period=0 --force >/dev/null 2>&1
kc delete pod c -n solar-prod --grace-period=0 --force >/dev/null 2>&1
wait_until 30 is 1/2 cq ||
  fail "CustomQuota status after deletes: '$(cq)', want 1/2; pods: $(kc get pods -A -o name | tr '\n' ' ')"
wait_until 30 is 1/5 gcq || fail "GlobalCustomQuota status after deletes: '$(gcq)', want 1/5"
echo "ok: deletes released"

# A namespace joining the tenant joins the global quota's count.
kc label namespace other capsule.clastix.io/tenant=solar >/dev/null
wait_until 30 is 2/4 gcq || fail "GlobalCustomQuota after a namespace joined: '$(gcq)', want 2/4"
echo "ok: a namespace that joins the tenant is counted"

# Enforced at admission (cluster/cq_guard.c): seed 003's walkthrough. The
# namespaced quota (3) refuses the fourth pod of solar-test first, with
# Capsule's text; the global one (6) the seventh pod of the tenant.
pod solar-test e
pod solar-test f
out=$(pod solar-test g 2>&1) && fail "a fourth pod in solar-test was admitted"
expect_contains "fourth pod" "$out" 'admission webhook "pods.counted.allot.dev" denied the request: pods "g" is forbidden: creating resource exceeds limit for CustomQuota "pod-count-limit" (requested=1, currentUsed=4, available=0, limit=3, inflightReserved='
pod solar-prod h
pod solar-prod i
out=$(pod solar-prod j 2>&1) && fail "a seventh pod in the tenant was admitted"
expect_contains "seventh pod" "$out" 'exceeds limit for GlobalCustomQuota "pod-count-limit" (requested=1, currentUsed=7, available=0, limit=6'
wait_until 30 is 3/0 cq || fail "CustomQuota status: '$(cq)', want 3/0"
wait_until 30 is 6/0 gcq || fail "GlobalCustomQuota status: '$(gcq)', want 6/0"
reservations() { kc get customquota pod-count-limit -n solar-test -o 'jsonpath={.status.reservations}'; }
wait_until 30 is "" reservations || fail "reservations left: $(reservations)"
echo "ok: the fourth pod of solar-test and the seventh of the tenant are refused; reservations settled"

# A burst: 12 pods at once against a quota of 5 in a namespace of its own:
# at most 5 are admitted (each increase is reserved on the quota by
# compare-and-swap before the answer). Fewer only when a create allot
# allowed failed after it (the API server's 5 s webhook timeout on a loaded
# machine): its reservation then holds until it expires (CQ_RESERVE_S, 90 s)
# and the writer sees the pod gone. Either way the books end exact: used is
# the pods made, and exactly 5 - used more are admitted, then no more.
kc create namespace burst >/dev/null
kc create -f - >/dev/null <<EOF
{"apiVersion": "capsule.clastix.io/v1beta2", "kind": "CustomQuota",
 "metadata": {"name": "five", "namespace": "burst"},
 "spec": {"limit": "5", "sources": [{"version": "v1", "kind": "Pod", "op": "count"}]}}
EOF
counted_ns() { kc get namespace burst -o 'jsonpath={.metadata.labels.allot\.dev/counted}'; }
wait_until 30 is true counted_ns || fail "burst is not marked allot.dev/counted"
pids=()
# A creator retries what allot refuses as retryable (a reservation that
# lost 5 compare-and-swaps in a row: "try again"), as a client would.
burst_pod() {
  local k out
  for k in 1 2 3 4 5; do
    out=$(pod burst "$1" 2>&1) && return 0
    case "$out" in *"try again"*) ;; *) echo "$1: $out"; return 0 ;; esac
  done
}
mkdir -p "$E2E_DIR/burst"
for i in $(seq 1 12); do
  (burst_pod "p$i" >"$E2E_DIR/burst/p$i" 2>&1 || true) &
  pids+=($!)
done
wait "${pids[@]}" # (each kubectl bounded by --request-timeout)
made=$(kc get pods -n burst -o name | wc -l)
[ "$made" -le 5 ] || fail "$made pods admitted against a quota of 5"
[ "$made" -ge 1 ] || fail "no pod of 12 admitted against a quota of 5: $(cat "$E2E_DIR"/burst/*)"
if [ "$made" -lt 5 ]; then
  echo "note: $made admitted; the other creators were told:"
  grep -hv "exceeds limit" "$E2E_DIR"/burst/* || true
fi
burst() { kc get customquota five -n burst -o 'jsonpath={.status.usage.used}/{.status.reservations}'; }
wait_until 150 is "$made/" burst || fail "burst quota: '$(burst)', want $made used, no reservations"
for i in $(seq $((made + 1)) 5); do
  out=$(pod burst "q$i" 2>&1) || fail "pod $i of 5 refused after the burst: $out"
done
out=$(pod burst q6 2>&1) && fail "a sixth pod admitted against a quota of 5"
case "$out" in *'CustomQuota "five"'*) ;; *) fail "the sixth pod: $out" ;; esac
echo "ok: 12 pods at once against a quota of 5: $made admitted, the books exact, 5 in all"

# A kind beyond pods: ConfigMaps labelled quota=maps (kube-root-ca.crt, which
# the controller manager puts in every namespace, is not), at most 2.
kc create namespace maps >/dev/null
kc create -f - >/dev/null <<EOF
{"apiVersion": "capsule.clastix.io/v1beta2", "kind": "CustomQuota",
 "metadata": {"name": "two-maps", "namespace": "maps"},
 "spec": {"limit": "2", "sources": [{"version": "v1", "kind": "ConfigMap", "op": "count",
          "selectors": [{"matchLabels": {"quota": "maps"}}]}]}}
EOF
cmap() { # NAME [kubectl create flags]
  kc create "${@:2}" -f - 2>&1 <<EOF
{"apiVersion": "v1", "kind": "ConfigMap",
 "metadata": {"name": "$1", "namespace": "maps", "labels": {"quota": "maps"}}}
EOF
}
rules() {
  kc get validatingwebhookconfiguration allot.dev \
    -o 'jsonpath={.webhooks[?(@.name=="pods.counted.allot.dev")].rules[*].resources[*]}'
}
rules_name_maps() { rules | grep -qw configmaps; }
wait_until 30 rules_name_maps ||
  fail "the counted webhook's rules do not name configmaps: '$(rules)'"
maps() { kc get customquota two-maps -n maps -o 'jsonpath={.status.usage.used}/{.status.reservations}'; }
wait_until 30 is 0/ maps || fail "ConfigMap quota before any: '$(maps)', want 0 used"
cmap m1 >/dev/null || fail "ConfigMap m1 refused"
cmap m2 >/dev/null || fail "ConfigMap m2 refused"
wait_until 30 is 2/ maps || fail "ConfigMap quota: '$(maps)', want 2 used, no reservations"
# The API server reads webhook configurations through its own cache: a
# server-side dry run shows when the third is taken at allot's webhook.
third_refused() { ! cmap m3 --dry-run=server >/dev/null; }
wait_until 30 third_refused || fail "a third ConfigMap passes allot's webhook (dry run)"
out=$(cmap m3) && fail "the third ConfigMap was admitted against a quota of 2"
case "$out" in
*'exceeds limit for CustomQuota "two-maps"'*) ;;
*) fail "third ConfigMap: unexpected refusal: $out" ;;
esac
kc delete configmap m1 -n maps >/dev/null
wait_until 30 is 1/ maps || fail "ConfigMap quota after a delete: '$(maps)', want 1"
cmap m3 >/dev/null || fail "ConfigMap m3 refused with room"
wait_until 30 is 2/ maps || fail "ConfigMap quota: '$(maps)', want 2"
echo "ok: ConfigMaps counted: watched and taken at the webhook once a quota names them"

# A kind of one of the cluster's own CRDs: seed 003's GlobalCustomQuota of
# 500Gi of gold ObjectBucketClaims over tenant solar, applied verbatim.
kc create -f - >/dev/null <<EOF
{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "objectbucketclaims.objectbucket.io"},
 "spec": {"group": "objectbucket.io", "scope": "Namespaced",
          "names": {"plural": "objectbucketclaims", "singular": "objectbucketclaim",
                    "kind": "ObjectBucketClaim", "listKind": "ObjectBucketClaimList"},
          "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object",
                                   "x-kubernetes-preserve-unknown-fields": true}}}]}}
EOF
kc wait --for condition=Established --timeout=30s crd/objectbucketclaims.objectbucket.io >/dev/null
kc apply -f "$FIXTURES/seed003/object-bucket-claim-storage-gold.yaml" >/dev/null
obc() { # NAMESPACE NAME SIZE CLASS [kubectl create flags]
  kc create "${@:5}" -f - 2>&1 <<EOF
{"apiVersion": "objectbucket.io/v1alpha1", "kind": "ObjectBucketClaim",
 "metadata": {"name": "$2", "namespace": "$1", "labels": {"objectbucket.io/storage-class": "$4"}},
 "spec": {"additionalConfig": {"maxSize": "$3"}}}
EOF
}
buckets() {
  kc get globalcustomquota object-bucket-claim-storage \
    -o 'jsonpath={.status.usage.used}/{.status.reservations}'
}
obc solar-test b1 300Gi gold >/dev/null || fail "ObjectBucketClaim b1 refused"
obc solar-prod s1 300Gi silver >/dev/null || fail "a silver ObjectBucketClaim refused"
wait_until 60 is 300Gi/ buckets || fail "ObjectBucketClaim quota: '$(buckets)', want 300Gi"
second_refused() { ! obc solar-prod b2 300Gi gold --dry-run=server >/dev/null; }
wait_until 30 second_refused || fail "a second gold bucket passes allot's webhook (dry run)"
out=$(obc solar-prod b2 300Gi gold) && fail "600Gi of gold buckets admitted against 500Gi"
case "$out" in
*'exceeds limit for GlobalCustomQuota "object-bucket-claim-storage"'*) ;;
*) fail "second gold bucket: unexpected refusal: $out" ;;
esac
obc solar-prod b3 200Gi gold >/dev/null || fail "a bucket that fits (200Gi) refused"
wait_until 30 is 500Gi/ buckets || fail "ObjectBucketClaim quota: '$(buckets)', want 500Gi"
echo "ok: seed 003's ObjectBucketClaim quota (a cluster CRD's kind) counted and enforced"
echo "PASS"
