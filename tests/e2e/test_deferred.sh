# test_deferred.sh - deferred ResourceQuota (seed 000) with the real kubectl:
# gate on, an over-quota pod is admitted and waits Pending with the exact
# condition message, is not charged, and binds once quota frees up; gate off
# gives upstream's 403; scheduling gates show SchedulingGated.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

setup() {
  cat <<'YAML' | k create -f - >/dev/null
apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  capacity: {cpu: "8", memory: 64Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 64Gi, pods: "110"}
YAML
  k create namespace t >/dev/null
  k create quota p1 -n t --hard=count/pods=20,cpu=2,memory=200Gi >/dev/null
  for p in p-a p-b; do
    k run "$p" -n t --image=nginx \
      --overrides='{"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"1","memory":"100Mi"}}}]}}' >/dev/null
  done
  wait_until 30 bash -c '[ "$(kubectl get pods -n t --field-selector=status.phase=Running -o name | wc -l)" = 2 ]' \
    || fail "the two pods did not run"
  cat >"$E2E_DIR/test-pod-1.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: test-1, namespace: t}
spec:
  containers:
  - name: c
    image: nginx
    resources:
      requests: {cpu: "1", memory: 100Mi}
YAML
}

# --- gate on ---
start_allotd --feature-gates=DeferredResourceQuota=true
setup
k create -f "$E2E_DIR/test-pod-1.yaml" | grep_all 'pod/test-1 created' || fail "test-1 not admitted"
want='0/1 nodes are available: quota exceeded: p1, requested: cpu=1, used: cpu=2, limited: cpu=2. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.'
cond() { k get pod test-1 -n t -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'; }
wait_until 30 bash -c "[ \"\$(kubectl get pod test-1 -n t -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].message}')\" = '$want' ]" \
  || fail "condition message: [$(cond)]"
expect_eq "reason" "$(k get pod test-1 -n t -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')" Unschedulable
expect_eq "status" "$(k get pod test-1 -n t -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status}')" False
expect_eq "phase" "$(k get pod test-1 -n t -o jsonpath='{.status.phase}')" Pending
k get pod test-1 -n t -o yaml | grep_all 'reason: Unschedulable' || fail "-o yaml lacks the condition"
k describe quota p1 -n t | grep_all -E '^cpu +2 +2$' || fail "cpu used must stay 2: $(k describe quota p1 -n t)"
k describe pod test-1 -n t | grep_all 'FailedScheduling' || fail "no FailedScheduling event in describe"
k get events -n t | grep_all 'quota exceeded: p1' || fail "kubectl get events lacks the event"
k delete pod p-a -n t >/dev/null
wait_until 30 bash -c '[ -n "$(kubectl get pod test-1 -n t -o jsonpath={.spec.nodeName})" ]' || fail "test-1 not bound after freeing quota"
k describe quota p1 -n t | grep_all -E '^cpu +2 +2$' || fail "cpu used after bind"

# direct binding over quota: 403 with the admission message
k run extra -n t --image=nginx \
  --overrides='{"spec":{"schedulerName":"none","containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"1","memory":"10Mi"}}}]}}' >/dev/null
r=$(api POST /api/v1/namespaces/t/pods/extra/binding -H 'Content-Type: application/json' \
  --data '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"extra"},"target":{"kind":"Node","name":"node-1"}}')
expect_eq "binding over quota" "$(tail -n1 <<<"$r")" 403
expect_contains "binding message" "$r" 'pods \"extra\" is forbidden: exceeded quota: p1, requested: cpu=1, used: cpu=2, limited: cpu=2'

# scheduling gates (a namespace without quota: t's cpu is full)
k create namespace g >/dev/null
k run gated -n g --image=nginx \
  --overrides='{"spec":{"schedulingGates":[{"name":"example.com/wait"}],"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"10m","memory":"10Mi"}}}]}}' >/dev/null
wait_until 30 bash -c 'kubectl get pod gated -n g | grep -q SchedulingGated' || fail "gated pod not SchedulingGated"
k patch pod gated -n g --type json -p '[{"op":"remove","path":"/spec/schedulingGates"}]' >/dev/null
wait_until 30 bash -c '[ -n "$(kubectl get pod gated -n g -o jsonpath={.spec.nodeName})" ]' || fail "gated pod not scheduled after gate removal"
stop_allotd

# --- gate off: upstream's 403 at create ---
rm -rf "$E2E_DIR/data"
ALLOT_PORT=
start_allotd
setup
if k create -f "$E2E_DIR/test-pod-1.yaml" 2>"$E2E_DIR/err"; then fail "gate off: test-1 admitted"; fi
expect_contains "gate off" "$(cat "$E2E_DIR/err")" 'pods "test-1" is forbidden: exceeded quota: p1, requested: cpu=1, used: cpu=2, limited: cpu=2'
stop_allotd
echo "test_deferred: ok"
