# test_claim_owner.sh - a ResourcePoolClaim carries a plain ownerReference to
# the pool it is assigned to, as Capsule's claim controller sets it: written
# with the binding (and while it queues), none outside a pool. Deleting the
# pool: without deleteBoundResources the claims lose the reference in the
# pool's delete and the garbage collector leaves them (Ready=False); with it
# they go with the pool.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl

start_allotd
k create namespace a >/dev/null
k create namespace b >/dev/null
k label namespace a pool=p >/dev/null
pool() { # pool NAME DELETE_BOUND
  k create -f - >/dev/null <<YAML
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePool
metadata: {name: $1}
spec:
  config: {deleteBoundResources: $2}
  quota: {hard: {requests.cpu: "2"}}
  selectors: [{matchLabels: {pool: p}}]
YAML
}
claim() { # claim NS NAME POOL CPU
  k create -f - >/dev/null <<YAML
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePoolClaim
metadata: {name: $2, namespace: $1}
spec: {pool: $3, claim: {requests.cpu: "$4"}}
YAML
}
refs() { k get resourcepoolclaim "$2" -n "$1" -o jsonpath='{range .metadata.ownerReferences[*]}{.apiVersion}/{.kind}/{.name}/{.uid}/{.controller}/{.blockOwnerDeletion};{end}'; }

pool keep false
uid=$(k get resourcepool keep -o jsonpath='{.metadata.uid}')
claim a one keep 1
expect_eq "bound claim's reference" "$(refs a one)" "capsule.clastix.io/v1beta2/ResourcePool/keep/$uid//;"
expect_eq "bound" "$(k get resourcepoolclaim one -n a -o jsonpath='{.status.pool.name}')" keep
claim a big keep 5
expect_eq "queued claim's reference" "$(refs a big)" "capsule.clastix.io/v1beta2/ResourcePool/keep/$uid//;"
claim b outside keep 1
expect_eq "claim outside the pool" "$(refs b outside)" ""
claim a nopool missing 1
expect_eq "claim for no pool" "$(refs a nopool)" ""
# a reference of the tenant's own is kept beside the pool's
cm_uid=$(k create configmap mine -n a -o jsonpath='{.metadata.uid}')
k patch resourcepoolclaim one -n a --type json -p "[{\"op\":\"add\",\"path\":\"/metadata/ownerReferences/-\",\"value\":{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"mine\",\"uid\":\"$cm_uid\"}}]" >/dev/null
expect_eq "both references" "$(refs a one)" "capsule.clastix.io/v1beta2/ResourcePool/keep/$uid//;v1/ConfigMap/mine/$cm_uid//;"
# moving the namespace out of the pool disassociates: the reference goes
k label namespace a pool- >/dev/null
expect_eq "disassociated" "$(refs a big)" ""
k label namespace a pool=p >/dev/null
expect_eq "associated again" "$(refs a big)" "capsule.clastix.io/v1beta2/ResourcePool/keep/$uid//;"

# the pool deleted (deleteBoundResources false): claims stay, unreferenced.
# A ConfigMap owned by the pool is the probe: once the collector removed it,
# it has seen the pool gone.
k create -f - >/dev/null <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: probe
  namespace: a
  ownerReferences: [{apiVersion: capsule.clastix.io/v1beta2, kind: ResourcePool, name: keep, uid: $uid}]
YAML
k delete resourcepool keep >/dev/null
wait_until 30 bash -c '! kubectl get configmap probe -n a >/dev/null 2>&1' || fail "the collector did not act"
expect_eq "claims kept" "$(k get resourcepoolclaim -n a -o name | sort | tr '\n' ' ')" \
  "resourcepoolclaim.capsule.clastix.io/big resourcepoolclaim.capsule.clastix.io/nopool resourcepoolclaim.capsule.clastix.io/one "
expect_eq "no pool reference left" "$(refs a one)" "v1/ConfigMap/mine/$cm_uid//;"
expect_eq "not ready" "$(k get resourcepoolclaim one -n a -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" False

# the pool deleted with deleteBoundResources: its claims go with it
pool cascade true
k delete resourcepoolclaim one big nopool -n a >/dev/null
claim a c1 cascade 1
claim a c2 cascade 5
expect_eq "cascade reference" "$(refs a c1)" "capsule.clastix.io/v1beta2/ResourcePool/cascade/$(k get resourcepool cascade -o jsonpath='{.metadata.uid}')//;"
k delete resourcepool cascade >/dev/null
wait_until 30 bash -c '[ -z "$(kubectl get resourcepoolclaim -n a -o name)" ]' || fail "claims of a cascading pool remain"
stop_allotd
echo "test_claim_owner: ok"
