#!/usr/bin/env bash
# readme-screenshot.sh [OUT] - take the README's picture of the dashboard
# (default docs/dashboard.png): a fresh allotd with deferred quota, a few
# tenant namespaces with quotas at different levels of use, a pod pending on
# a cpu quota and a pool with a bound and a queued claim, seen at 1280x800.
# ALLOTD defaults to build/allotd. Not a test: run it by hand after a visible
# change to the dashboard.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$(realpath -m "${1:-$root/docs/dashboard.png}")
export ALLOTD=${ALLOTD:-$root/build/allotd}
. "$root/tests/e2e/lib.sh"
start_allotd --feature-gates=DeferredResourceQuota=true

# pod NS NAME CPU MEMORY: a pod with these requests (and limits.memory, which
# the pool's namespaces are limited by)
pod() {
  cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1, labels: {app: ${2%-*}}}
spec:
  containers:
  - name: app
    image: registry.example/$1/${2%-*}:1.4
    resources:
      requests: {cpu: $3, memory: $4}
      limits: {memory: $4}
EOF
}

quota() { # NS NAME HARD(json)
  printf -- '---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: %s, namespace: %s}\nspec:\n  hard: %s\n' "$2" "$1" "$3"
}

{
  cat <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: worker-1}
status:
  capacity: {cpu: "64", memory: 256Gi, pods: "110"}
  allocatable: {cpu: "64", memory: 256Gi, pods: "110"}
EOF
  for ns in payments checkout search ml-training analytics notifications; do
    printf -- '---\napiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$ns"
  done
  for ns in web-frontend web-admin; do
    printf -- '---\napiVersion: v1\nkind: Namespace\nmetadata: {name: %s, labels: {tenant: web}}\n' "$ns"
  done
  quota payments compute '{requests.cpu: "4", requests.memory: 8Gi, pods: "20"}'
  quota payments objects '{configmaps: "10", secrets: "10", services: "4"}'
  quota checkout compute '{requests.cpu: "2", requests.memory: 4Gi, pods: "10"}'
  quota search compute '{requests.cpu: "6", requests.memory: 24Gi}'
  quota search storage '{requests.storage: 500Gi, persistentvolumeclaims: "10"}'
  quota analytics compute '{requests.cpu: "4", requests.memory: 16Gi, pods: "12"}'
  quota notifications compute '{requests.cpu: "2", requests.memory: 2Gi, pods: "8"}'
  quota ml-training gpu-nodes '{requests.cpu: "8", requests.memory: 32Gi, pods: "6"}'
} | k apply -f - >/dev/null

{
  for i in 1 2 3 4 5; do pod payments "api-$i" 500m 1Gi; done
  for i in 1 2 3; do pod checkout "cart-$i" 600m 1Gi; done
  for i in 1 2; do pod search "indexer-$i" 1 6Gi; done
  for i in 1 2 3; do pod ml-training "trainer-$i" "2" 8Gi; done
  for i in 1 2 3 4 5 6 7; do pod analytics "etl-$i" 500m 2200Mi; done
  pod notifications mailer-1 250m 256Mi
} | k apply -f - >/dev/null
for i in 1 2 3; do k create configmap "settings-$i" -n payments --from-literal=a=b >/dev/null; done
k create service clusterip api -n payments --tcp=80:8080 >/dev/null

k apply -f - >/dev/null <<'EOF'
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePool
metadata: {name: web}
spec:
  selectors:
  - matchLabels: {tenant: web}
  quota:
    hard: {requests.cpu: "4", limits.memory: 8Gi}
---
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePoolClaim
metadata: {name: base, namespace: web-frontend}
spec:
  pool: web
  claim: {requests.cpu: "3", limits.memory: 6Gi}
---
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePoolClaim
metadata: {name: base, namespace: web-admin}
spec:
  pool: web
  claim: {requests.cpu: "2", limits.memory: 2Gi}
EOF
{
  for i in 1 2 3 4; do pod web-frontend "web-$i" 500m 1Gi; done
} | k apply -f - >/dev/null

wait_until 30 bash -c '[ "$(kubectl get pods -A --field-selector=status.phase=Running -o name | wc -l)" = 25 ]' ||
  fail "the pods did not all run: $(kubectl get pods -A)"
# the pod that waits: 4 more cpu where 6 of 8 are used
pod ml-training trainer-4 "4" 8Gi | k apply -f - >/dev/null

E2E_DIR=$E2E_DIR OUT=$out node "$here/screenshot.mjs"
stop_allotd
