# test_quota_finalizers.sh - an object deleted by the update that removes its
# last finalizer releases its quota usage in that same transaction (it used to
# leave its usage behind: drift), and used equals a recount throughout.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
start_allotd --resource-quota-sync-period 1s --node-agent=false
metric() { api GET /metrics | sed '$d' | awk -v m="$1" '$1 == m {print $2}'; }
used() { k get quota q -o jsonpath="{.status.used.$1}"; }

# the namespace's kube-root-ca.crt (as upstream) counts too: one configmap more
wait_until 20 k get configmap kube-root-ca.crt || fail "no kube-root-ca.crt in default"
k create quota q --hard=pods=5,configmaps=5 >/dev/null
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: held, finalizers: [example.com/hold]}
spec:
  containers: [{name: c, image: nginx}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: held, finalizers: [example.com/hold]}
YAML
expect_eq "pods used" "$(used pods)" 1
expect_eq "configmaps used" "$(used configmaps)" 2
k delete pod held --wait=false >/dev/null
k delete configmap held --wait=false >/dev/null
expect_eq "pods used while held" "$(used pods)" 1
k patch pod held --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
k patch configmap held --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
k get pod held >/dev/null 2>&1 && fail "the pod outlived its last finalizer"
expect_eq "pods used after release" "$(used pods)" 0
expect_eq "configmaps used after release" "$(used configmaps)" 1

start=$(metric allot_quota_resyncs_total)
wait_until 30 bash -c "[ \"\$(curl -s --cacert '$E2E_DIR/data/ca.crt' -H 'Authorization: Bearer $ALLOT_TOKEN' \
  '$ALLOT_URL/metrics' | awk '\$1==\"allot_quota_resyncs_total\"{print \$2}')\" -ge $((start + 2)) ]" ||
  fail "no periodic recount"
expect_eq "drift" "$(metric allot_quota_drift_corrections_total)" 0
stop_allotd
echo "test_quota_finalizers: ok"
