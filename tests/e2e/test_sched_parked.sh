# test_sched_parked.sh - pods no node fits are parked (not retried on a timer)
# and come back on the events that can make them fit: a node added, room freed
# on a node (a bound pod deleted), a node uncordoned - well before the
# 5-minute flush. Parked pods show as allot_scheduler_pending_pods{queue=
# "unschedulable"}.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl

# pending QUEUE: allot_scheduler_pending_pods of that queue.
pending() {
  api GET /metrics | awk -v q="allot_scheduler_pending_pods{queue=\"$1\"}" '$1==q{print $2}'
}
# parked N: wait (bounded) until N pods are parked.
is_parked() { [ "$(pending unschedulable)" = "$1" ]; }
parked() { wait_until 30 is_parked "$1"; }
# run_pod NAME CPU: a pod requesting CPU.
run_pod() {
  k run "$1" -n p --image=nginx \
    --overrides="{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\",\"resources\":{\"requests\":{\"cpu\":\"$2\",\"memory\":\"100Mi\"}}}]}}" >/dev/null
}
# bound NAME NODE: wait (bounded) until the pod is bound to NODE.
bound() {
  k wait pod "$1" -n p --for=jsonpath='{.spec.nodeName}'="$2" --timeout=30s >/dev/null \
    || fail "$1 not bound to $2: $(k get pod "$1" -n p -o jsonpath='{.status.conditions}')"
}
cond() { k get pod "$1" -n p -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'; }

start_allotd
k create namespace p >/dev/null
expect_eq "nothing parked at start" "$(pending unschedulable)" 0

# 1. no node at all: parked; a node that fits is added: bound
run_pod big 2
parked 1 || fail "big not parked: [$(cond big)] pending=$(pending unschedulable)"
expect_eq "big's condition" "$(cond big)" "no nodes available to schedule pods"
cat <<'YAML' | k create -f - >/dev/null
apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  capacity: {cpu: "4", memory: 64Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 64Gi, pods: "110"}
YAML
bound big node-1
parked 0 || fail "still parked after big was bound: $(pending unschedulable)"

# 2. no room: parked; the pod holding the room is deleted: bound
run_pod big2 3
parked 1 || fail "big2 not parked: [$(cond big2)]"
expect_contains "big2's condition" "$(cond big2)" "0/1 nodes are available: 1 Insufficient cpu."
k delete pod big -n p --timeout=30s >/dev/null
bound big2 node-1
parked 0 || fail "still parked after big2 was bound"

# 3. a cordoned node: parked; uncordoned: bound
k cordon node-1 >/dev/null
run_pod small 500m
parked 1 || fail "small not parked: [$(cond small)]"
expect_contains "small's condition" "$(cond small)" "1 node(s) were unschedulable"
k uncordon node-1 >/dev/null
bound small node-1

expect_eq "parked at the end" "$(pending unschedulable)" 0
expect_eq "active at the end" "$(pending active)" 0
stop_allotd
echo "PASS test_sched_parked"
