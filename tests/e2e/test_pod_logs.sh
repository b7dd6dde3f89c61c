# test_pod_logs.sh - `kubectl logs` where no container runs: instead of "the
# server could not find the requested resource", a pod the node agent runs
# answers one line saying that it runs no process (exit 0), a container not
# started yet upstream's 400 "is waiting to start", --previous upstream's
# "not found", a pod bound to no node an empty log; pods/log is authorized
# as upstream (view may get it, others not).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl

start_allotd --simulated-nodes 1
D="$E2E_DIR/data"
k create namespace t >/dev/null
k run web -n t --image=nginx >/dev/null
k wait --for=condition=Ready pod/web -n t --timeout=30s >/dev/null
want='allot: container "web" of pod "t/web" is simulated by allotd'"'"'s node agent on node "allot-node-1": no process runs, so it writes no log'
out=$(k logs web -n t 2>&1) || fail "kubectl logs failed: $out"
expect_eq "logs" "$out" "$want"
out=$(k logs -f web -n t 2>&1) || fail "kubectl logs -f failed: $out"
expect_eq "logs -f ends" "$out" "$want"
started=$(k get pod web -n t -o jsonpath='{.status.containerStatuses[0].state.running.startedAt}')
expect_eq "timestamps" "$(k logs web -n t --timestamps)" "$started $want"
expect_eq "tail 0" "$(k logs web -n t --tail=0)" ""
expect_eq "limit bytes" "$(k logs web -n t --limit-bytes=6)" "allot:"
if out=$(k logs web -n t --previous 2>&1); then fail "--previous succeeded: $out"; fi
expect_eq "previous" "$out" 'Error from server (BadRequest): previous terminated container "web" in pod "web" not found'
# a Job's pod, through the Job
k create job once -n t --image=busybox >/dev/null
wait_until 30 bash -c '[ "$(kubectl get pods -n t -l job-name=once -o jsonpath={.items[0].status.phase})" = Running ]' || fail "job pod not running"
expect_contains "job logs" "$(k logs job/once -n t)" 'no process runs, so it writes no log'
# bound to a node no agent runs: waiting to start, as a kubelet says
k run stuck -n t --image=nginx --overrides='{"spec":{"nodeName":"elsewhere"}}' >/dev/null
if out=$(k logs stuck -n t 2>&1); then fail "logs of a waiting container succeeded: $out"; fi
expect_eq "waiting" "$out" 'Error from server (BadRequest): container "stuck" in pod "stuck" is waiting to start: ContainerCreating'
# bound to no node: an empty log (upstream's)
k create quota none -n t --hard=pods=100 >/dev/null
cat <<'YAML' | k create -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: unscheduled, namespace: t}
spec:
  schedulerName: nobody
  containers: [{name: c, image: nginx}]
YAML
expect_eq "unscheduled" "$(k logs unscheduled -n t)" ""
out=$(curl -sS --cacert "$D/ca.crt" -H "Authorization: Bearer $ALLOT_TOKEN" -w '\n%{http_code}' \
  "$ALLOT_URL/api/v1/namespaces/t/pods/web/log?container=nope")
expect_contains "bad container" "$out" 'container nope is not valid for pod web'
expect_eq "bad container code" "$(tail -1 <<<"$out")" 400
out=$(curl -sS --cacert "$D/ca.crt" -H "Authorization: Bearer $ALLOT_TOKEN" -w '\n%{http_code}' \
  "$ALLOT_URL/api/v1/namespaces/t/pods/nobody/log")
expect_eq "no pod" "$(tail -1 <<<"$out")" 404
# RBAC: view may read logs; reading pods is not reading their logs
k create rolebinding v -n t --clusterrole=view --user=vic >/dev/null
k create role pod-reader -n t --verb=get --resource=pods >/dev/null
k create rolebinding b -n t --role=pod-reader --user=bob >/dev/null
"$ALLOTD" kubeconfig --data-dir "$D" --user vic --out "$E2E_DIR/vic.kubeconfig" 2>/dev/null
"$ALLOTD" kubeconfig --data-dir "$D" --user bob --out "$E2E_DIR/bob.kubeconfig" 2>/dev/null
expect_eq "view logs" "$(k --kubeconfig "$E2E_DIR/vic.kubeconfig" logs web -n t)" "$want"
if out=$(k --kubeconfig "$E2E_DIR/bob.kubeconfig" logs web -n t 2>&1); then fail "bob read logs"; fi
expect_contains "bob forbidden" "$out" 'pods "web" is forbidden: User "bob" cannot get resource "pods/log" in API group "" in the namespace "t"'
stop_allotd
echo "test_pod_logs: ok"
