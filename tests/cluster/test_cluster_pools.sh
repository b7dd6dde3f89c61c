#!/usr/bin/env bash
# test_cluster_pools.sh - seed 003's pool walkthrough on a real
# kube-apiserver v1.20.2 with allot in cluster mode, driven by the real
# kubectl (docs/cluster-mode.md, "The pool writer"):
#  - a claim is bound by the leader's writer, the pool's status says so and
#    capsule-pool-solar gets the claim's hard;
#  - a claim larger than what is left waits with PoolExhausted and charges
#    nothing;
#  - a pod in the namespace is charged by the cluster's own quota admission
#    against capsule-pool-solar, and one past it is refused by the cluster;
#  - deleting the bound claim while the pod uses it is refused with
#    Capsule's text; once the pod is gone the delete goes through, recorded
#    on the quota first (the release guard's hold), and the waiting claim
#    binds: the quota's hard follows, and the hold is gone once settled;
#  - a namespace no pool selects carries no allot.dev/pooled label, one a
#    pool selects does, and it is dropped when the pool stops selecting it.
# Every wait is bounded. Exit 77 (skipped) without the kube binaries or etcd.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kube_up
G=capsule.clastix.io/v1beta2
kc create namespace solar-test >/dev/null
kc label namespace solar-test capsule.clastix.io/tenant=solar >/dev/null
kc create namespace plain >/dev/null
claim() { # NAME CPU
  printf '{"apiVersion": "%s", "kind": "ResourcePoolClaim", "metadata": {"name": "%s", "namespace": "solar-test"},
 "spec": {"pool": "solar", "claim": {"requests.cpu": "%s", "limits.cpu": "%s"}}}' "$G" "$1" "$2" "$2"
}
pod() { # NAME CPU
  printf '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "%s", "namespace": "solar-test"},
 "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "%s"}, "limits": {"cpu": "%s"}}}]}}' "$1" "$2" "$2"
}
# The CRDs are allot's to install: the pool and claims are created once it
# runs.
# Two replicas, as deployed: the writer (the Lease's holder) is not the
# one the webhooks call.
start_cluster_writer
start_cluster_allotd
kc create -f - >/dev/null <<EOF
{"apiVersion": "$G", "kind": "ResourcePool", "metadata": {"name": "solar"},
 "spec": {"quota": {"hard": {"limits.cpu": "2", "requests.cpu": "2"}},
          "selectors": [{"matchLabels": {"capsule.clastix.io/tenant": "solar"}}]}}
EOF
kc create -f - >/dev/null <<<"$(claim get-me-cpu 1)"

# jp OBJECT JSONPATH: one field from the cluster.
jp() { kc get "$1" -n solar-test -o "jsonpath=$2" 2>/dev/null; }
cond() { # CLAIM TYPE -> "status/reason"
  jp "resourcepoolclaim/$1" "{.status.conditions[?(@.type==\"$2\")].status}/{.status.conditions[?(@.type==\"$2\")].reason}"
}
rq_hard() { jp resourcequota/capsule-pool-solar '{.spec.hard.requests\.cpu}'; }
is() { [ "$("${@:2}")" = "$1" ]; } # is WANT CMD...: CMD prints WANT

wait_until 30 is False/NoExhaustions cond get-me-cpu Exhausted ||
  fail "get-me-cpu never bound: $(kc get resourcepoolclaim get-me-cpu -n solar-test -o yaml)"
wait_until 30 is 1 rq_hard || fail "capsule-pool-solar hard: '$(rq_hard)', want 1"
wait_until 30 is 1 jp resourcepool/solar '{.status.claimCount}' ||
  fail "pool status: $(kc get resourcepool solar -o jsonpath='{.status}')"
wait_until 30 pooled solar-test || fail "solar-test is not marked allot.dev/pooled"
echo "ok: a claim is bound by the writer; capsule-pool-solar hard requests.cpu=1"

# What is left (1) is less than this claim: it waits, charging nothing.
kc create -f - >/dev/null <<<"$(claim second 1500m)"
wait_until 30 is True/PoolExhausted cond second Exhausted || fail "second: $(cond second Exhausted)"
expect_eq "capsule-pool-solar hard with second waiting" "$(rq_hard)" 1
echo "ok: a claim past what is left waits with PoolExhausted"

# The cluster's own quota admission charges pods to the pool's quota.
kc create -f - >/dev/null <<<"$(pod web 500m)"
if out=$(kc create -f - 2>&1 <<<"$(pod big 800m)"); then fail "a pod past capsule-pool-solar was admitted"; fi
expect_contains "pod past the pool's quota" "$out" 'exceeded quota: capsule-pool-solar'
used() { jp resourcequota/capsule-pool-solar '{.status.used.requests\.cpu}'; }
wait_until 30 is 500m used || fail "capsule-pool-solar used: $(used)"
# allot's mirror must see that usage before it can call the claim in use
mirror_used() { km get resourcequota capsule-pool-solar -n solar-test -o jsonpath='{.status.used.requests\.cpu}'; }
wait_until 30 is 500m mirror_used ||
  fail "allot's mirror never saw the quota's usage"

# In use: Capsule's refusal, through allot's webhook.
if out=$(kc delete resourcepoolclaim get-me-cpu -n solar-test 2>&1); then
  fail "a claim in use was deleted"
fi
expect_contains "delete of a claim in use" "$out" \
  'admission webhook "resourcepoolclaims.allot.dev" denied the request: resourcepoolclaims.capsule.clastix.io "get-me-cpu" is forbidden: cannot delete the pool while claim is used in resourcepool solar'
expect_eq "capsule-pool-solar hard after the refusal" "$(rq_hard)" 1
echo "ok: deleting a claim in use is refused with Capsule's text"

# Once the pod is gone the release goes through; the waiting claim binds.
kc delete pod web -n solar-test --grace-period=0 --force >/dev/null 2>&1
wait_until 30 is 0 used || fail "capsule-pool-solar used after the pod: $(used)"
wait_until 30 is 0 mirror_used ||
  fail "allot's mirror never saw the quota freed"
kc delete resourcepoolclaim get-me-cpu -n solar-test >/dev/null
wait_until 30 is False/NoExhaustions cond second Exhausted || fail "second never bound: $(cond second Exhausted)"
wait_until 30 is 1500m rq_hard || fail "capsule-pool-solar hard: '$(rq_hard)', want 1500m"
holds() { jp resourcequota/capsule-pool-solar '{.metadata.annotations}' | grep -c 'release.allot.dev/' || true; }
wait_until 30 is 0 holds || fail "a release hold outlived its claim: $(jp resourcequota/capsule-pool-solar '{.metadata.annotations}')"
echo "ok: released once unused; the waiting claim bound (hard 1500m); no hold left"

# Namespaces: marked only while a pool selects them.
[ -z "$(kc get namespace plain -o jsonpath='{.metadata.labels.allot\.dev/pooled}')" ] ||
  fail "a namespace no pool selects is marked"
kc label namespace solar-test capsule.clastix.io/tenant- >/dev/null
not_pooled() { ! pooled solar-test; }
wait_until 30 not_pooled || fail "solar-test still marked after leaving the pool's selection"
echo "ok: allot.dev/pooled marks exactly the namespaces a pool selects"

stop_cluster_allotd
echo "ok: cluster/pools"
