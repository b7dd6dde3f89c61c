# test_mode_switch.sh - switching a namespace from deferred quota back to
# quota.allot.dev/mode=admission while pods wait on its quota: refused with a
# message that names the quota, says the waiting pods are why, and what to
# do, instead of a bare "exceeded quota"; once they are gone it goes through.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl

start_allotd --simulated-nodes 1 --feature-gates DeferredResourceQuota=true
k create namespace d >/dev/null
k create quota compute --hard=requests.cpu=1 -n d >/dev/null
for p in a b c; do
  k run "$p" -n d --image=nginx --overrides='{"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"1"}}}]}}' >/dev/null
done
pending() { kubectl get pods -n d --field-selector status.pendingOnQuota=compute -o name | wc -l; }
wait_until 20 bash -c '[ "$(kubectl get pods -n d --field-selector status.pendingOnQuota=compute -o name | wc -l)" = 2 ]' ||
  fail "want 2 pods pending on quota: $(k get pods -n d)"
if out=$(k label namespace d quota.allot.dev/mode=admission 2>&1); then fail "switch accepted: $out"; fi
expect_eq "refusal" "$out" 'Error from server (Forbidden): namespaces "d" is forbidden: cannot set quota.allot.dev/mode=admission: the pods waiting on ResourceQuota "compute" under deferred quota would be charged to it at once and exceed it (exceeded quota: compute, requested: requests.cpu=2, used: requests.cpu=1, limited: requests.cpu=1); delete those pods or wait until they are scheduled (kubectl get pods -n d --field-selector status.pendingOnQuota=compute), or raise the quota'"'"'s hard, then set the label again'
expect_eq "label not set" "$(k get namespace d -o jsonpath='{.metadata.labels.quota\.allot\.dev/mode}')" ""
# the command the message gives lists the pods in the way
waiting=$(k get pods -n d --field-selector status.pendingOnQuota=compute -o name)
expect_eq "listed" "$(wc -l <<<"$waiting")" 2
k delete $waiting -n d --wait=false >/dev/null
wait_until 20 bash -c '[ -z "$(kubectl get pods -n d --field-selector status.pendingOnQuota=compute -o name)" ]' || fail "pods still pending"
k label namespace d quota.allot.dev/mode=admission >/dev/null
expect_eq "label set" "$(k get namespace d -o jsonpath='{.metadata.labels.quota\.allot\.dev/mode}')" admission
stop_allotd
echo "test_mode_switch: ok"
