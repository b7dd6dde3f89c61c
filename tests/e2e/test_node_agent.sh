# test_node_agent.sh - the stand-in kubelet, with the real kubectl: a pod
# bound to a node that does not exist yet waits, and runs once the node is
# created (which the agent marks Ready); allot.dev/run-duration ends a pod
# Succeeded, activeDeadlineSeconds ends one Failed (DeadlineExceeded); a
# running pod deleted is stopped and removed. Without a scheduler, so that
# the test binds pods itself.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl

start_allotd --scheduler=false
k create namespace na >/dev/null

pod() { # pod NAME [annotations-json] [extra-spec-json]
  printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"na","annotations":%s},
    "spec":{%s"containers":[{"name":"c","image":"busybox"}]}}' "$1" "${2:-{\}}" "${3:-}" |
    k create -f - >/dev/null
}
bind() { # bind POD NODE
  printf '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"%s"},"target":{"kind":"Node","name":"%s"}}' \
    "$1" "$2" | api POST "/api/v1/namespaces/na/pods/$1/binding" -H "Content-Type: application/json" -d @- | tail -1 | grep -qx 201 || fail "binding $1 to $2 was refused"
}
node() { # node NAME
  printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s"},
    "status":{"capacity":{"cpu":"4","memory":"8Gi","pods":"110"}}}' "$1" | k create -f - >/dev/null
}
phase() { k get pod "$1" -n na -o jsonpath='{.status.phase}'; }
phase_is() { [ "$(phase "$1")" = "$2" ]; }

# --- bound to a node created later: Pending until the node exists ---
pod early
bind early later-node
expect_eq "phase before the node exists" "$(phase early)" "Pending"
node later-node
wait_until 20 phase_is early Running || fail "a pod bound before its node was created did not run"
node_ready() { [ "$(k get node later-node -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
wait_until 20 node_ready || fail "the agent did not mark the new node Ready"
expect_eq "Ready condition" \
  "$(k get pod early -n na -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" "True"

# --- run-duration: Succeeded; activeDeadlineSeconds: Failed ---
pod short '{"allot.dev/run-duration":"1s"}'
bind short later-node
wait_until 20 phase_is short Succeeded || fail "run-duration 1s did not end the pod Succeeded"
pod deadline '{}' '"activeDeadlineSeconds":1,'
bind deadline later-node
wait_until 20 phase_is deadline Failed || fail "activeDeadlineSeconds 1 did not end the pod Failed"
expect_eq "reason" "$(k get pod deadline -n na -o jsonpath='{.status.reason}')" "DeadlineExceeded"

# --- a running pod deleted is stopped and removed ---
k delete pod early -n na --wait=false >/dev/null
gone() { ! k get pod early -n na -o name >/dev/null 2>&1; }
wait_until 20 gone || fail "a deleted running pod was not removed"
echo "PASS"
