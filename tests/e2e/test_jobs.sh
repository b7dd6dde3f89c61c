# test_jobs.sh - batch/v1 Jobs with the real kubectl: completions and
# parallelism (never more active pods than parallelism), a pods quota
# limiting parallelism with FailedCreate events carrying the quota's exact
# message, backoffLimit with failing pods, ttlSecondsAfterFinished, suspend,
# Terminating-scope quotas, deferred quota; kubectl create job, get, describe,
# wait.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl

start_allotd --simulated-nodes 2
k create namespace j >/dev/null

job_yaml() { # name completions parallelism run-duration [extra spec lines]
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: $1, namespace: j}
spec:
  completions: $2
  parallelism: $3
$5
  template:
    metadata:
      annotations: {allot.dev/run-duration: "$4"}
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
        resources: {requests: {cpu: 10m, memory: 10Mi}, limits: {cpu: 10m, memory: 10Mi}}
YAML
}

succeeded() { kubectl get job "$1" -n "${2:-j}" -o jsonpath='{.status.succeeded}'; }
has_cond() { # job type [ns]
  [ "$(kubectl get job "$1" -n "${3:-j}" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].status}")" = True ]
}

# --- completions 10, parallelism 3, run 1s: completes, never more than 3 active ---
job_yaml ten 10 3 1s "" | k create -f - >/dev/null
# Watch every pod event of the Job while it runs; count the active pods
# (neither Succeeded/Failed nor being deleted) at each moment.
kubectl get pods -n j -l batch.kubernetes.io/job-name=ten --watch --output-watch-events \
  -o jsonpath='{.type} {.object.metadata.name} {.object.status.phase} {.object.metadata.deletionTimestamp}{"\n"}' \
  >"$E2E_DIR/watch" 2>/dev/null &
watcher=$!
stop_watcher() { kill "$watcher" 2>/dev/null || true; }
on_cleanup stop_watcher
wait_until 60 has_cond ten Complete || fail "job ten did not complete: $(kubectl get job ten -n j -o yaml)"
stop_watcher
expect_eq "ten succeeded" "$(succeeded ten)" 10
max=$(awk '{ name=$2; phase=$3; del=$4;
             act = ($1 != "DELETED" && phase != "Succeeded" && phase != "Failed" && del == "");
             if (act) a[name]=1; else delete a[name];
             n=0; for (x in a) n++; if (n>m) m=n } END {print m+0}' "$E2E_DIR/watch")
[ "$max" -le 3 ] || fail "more than 3 active pods at once: $max"
[ "$max" -ge 2 ] || fail "parallelism not used: at most $max active"
out=$(k get job ten -n j)
expect_contains "get jobs header" "$out" "NAME   STATUS     COMPLETIONS   DURATION   AGE"
expect_contains "get jobs row" "$out" "Complete   10/10"
k get job ten -n j -o jsonpath='{.status.conditions[*].type}' | grep_all -x 'SuccessCriteriaMet Complete' \
  || fail "conditions: $(k get job ten -n j -o jsonpath='{.status.conditions}')"
expect_eq "completionTime set" "$([ -n "$(k get job ten -n j -o jsonpath='{.status.completionTime}')" ] && echo y)" y
expect_eq "uncounted empty" "$(k get job ten -n j -o jsonpath='{.status.uncountedTerminatedPods.succeeded}{.status.uncountedTerminatedPods.failed}')" ""
# every pod lost its tracking finalizer
if k get pods -n j -l batch.kubernetes.io/job-name=ten -o jsonpath='{.items[*].metadata.finalizers}' | grep_all job-tracking; then
  fail "tracking finalizers left on finished pods"
fi
k wait --for=condition=complete job/ten -n j --timeout=5s >/dev/null
d=$(k describe job ten -n j)
expect_contains "describe: pods statuses" "$d" "0 Active (0 Ready) / 10 Succeeded / 0 Failed"
expect_contains "describe: event" "$d" "Completed"
expect_contains "describe: created" "$d" "SuccessfulCreate"

# --- kubectl create job; selector and labels generated ---
k create job hello --image=busybox -n j >/dev/null
uid=$(k get job hello -n j -o jsonpath='{.metadata.uid}')
expect_eq "generated selector" "$(k get job hello -n j -o jsonpath='{.spec.selector.matchLabels.batch\.kubernetes\.io/controller-uid}')" "$uid"
expect_eq "template job-name label" "$(k get job hello -n j -o jsonpath='{.spec.template.metadata.labels.batch\.kubernetes\.io/job-name}')" hello
expect_eq "backoffLimit default" "$(k get job hello -n j -o jsonpath='{.spec.backoffLimit}')" 6
wait_until 30 bash -c '[ "$(kubectl get job hello -n j -o jsonpath={.status.ready})" = 1 ]' || fail "hello not ready"
expect_eq "pod finalizer" "$(k get pods -n j -l job-name=hello -o jsonpath='{.items[0].metadata.finalizers[0]}')" batch.kubernetes.io/job-tracking
expect_eq "pod has no activeDeadlineSeconds" "$(k get pods -n j -l job-name=hello -o jsonpath='{.items[0].spec.activeDeadlineSeconds}')" ""
if k create -f - 2>"$E2E_DIR/err" <<'YAML'; then fail "restartPolicy Always accepted"; fi
apiVersion: batch/v1
kind: Job
metadata: {name: bad, namespace: j}
spec:
  template:
    spec:
      containers: [{name: c, image: busybox}]
YAML
expect_contains "restartPolicy Always" "$(cat "$E2E_DIR/err")" 'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"'

# --- a pods quota limits parallelism; FailedCreate carries the exact message ---
k create namespace q >/dev/null
k create quota pods2 -n q --hard=pods=2 >/dev/null
job_yaml ten 6 3 1s "" | sed 's/namespace: j/namespace: q/' | k create -f - >/dev/null
wait_until 60 has_cond ten Complete q || fail "quota-limited job did not complete: $(kubectl get job ten -n q -o yaml)"
expect_eq "quota job succeeded" "$(succeeded ten q)" 6
ev=$(k get events -n q --field-selector reason=FailedCreate -o jsonpath='{.items[0].message}')
case "$ev" in
  'Error creating: pods "ten-'*'" is forbidden: exceeded quota: pods2, requested: pods=1, used: pods=2, limited: pods=2') ;;
  *) fail "FailedCreate message: [$ev]" ;;
esac
n=$(k get events -n q --field-selector reason=FailedCreate -o jsonpath='{.items[0].count}')
[ "$n" -le 30 ] || fail "retry storm: $n FailedCreate"

# --- backoffLimit: failing pods end the Job Failed, BackoffLimitExceeded ---
cat <<'YAML' | k create -f - >/dev/null
apiVersion: batch/v1
kind: Job
metadata: {name: failing, namespace: j}
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      activeDeadlineSeconds: 1
      containers: [{name: c, image: busybox}]
YAML
wait_until 60 has_cond failing Failed || fail "failing job did not fail: $(kubectl get job failing -n j -o yaml)"
expect_eq "failed count" "$(k get job failing -n j -o jsonpath='{.status.failed}')" 2
expect_eq "failed reason" "$(k get job failing -n j -o jsonpath='{.status.conditions[?(@.type=="Failed")].reason}')" BackoffLimitExceeded
expect_eq "failure target" "$(k get job failing -n j -o jsonpath='{.status.conditions[?(@.type=="FailureTarget")].reason}')" BackoffLimitExceeded
expect_contains "get failed" "$(k get job failing -n j)" "Failed"
k get events -n j --field-selector involvedObject.name=failing,reason=BackoffLimitExceeded -o name | grep_all . \
  || fail "no BackoffLimitExceeded event"

# --- activeDeadlineSeconds on the Job: DeadlineExceeded ---
job_yaml slow 1 1 1h "  activeDeadlineSeconds: 2" | k create -f - >/dev/null
wait_until 30 has_cond slow Failed || fail "deadline job did not fail"
expect_eq "deadline reason" "$(k get job slow -n j -o jsonpath='{.status.conditions[?(@.type=="Failed")].reason}')" DeadlineExceeded
wait_until 30 bash -c '[ -z "$(kubectl get pods -n j -l job-name=slow --field-selector=status.phase=Running -o name)" ]' \
  || fail "deadline job's pod still running"

# --- ttlSecondsAfterFinished removes the Job and its pods ---
job_yaml ttl 1 1 1s "  ttlSecondsAfterFinished: 1" | k create -f - >/dev/null
wait_until 60 bash -c '! kubectl get job ttl -n j >/dev/null 2>&1' || fail "ttl job not removed"
wait_until 30 bash -c '[ -z "$(kubectl get pods -n j -l job-name=ttl -o name)" ]' || fail "ttl job's pods not removed"

# --- suspend: active pods deleted, Suspended; resume completes ---
job_yaml sus 2 2 1h "" | k create -f - >/dev/null
wait_until 30 bash -c '[ "$(kubectl get job sus -n j -o jsonpath={.status.active})" = 2 ]' || fail "sus not active"
k patch job sus -n j --type merge -p '{"spec":{"suspend":true}}' >/dev/null
wait_until 30 has_cond sus Suspended || fail "not suspended"
wait_until 30 bash -c '[ -z "$(kubectl get pods -n j -l job-name=sus -o name)" ]' || fail "suspended job's pods remain"
expect_eq "suspended active (omitted when 0)" "$(k get job sus -n j -o jsonpath='{.status.active}')" ""
expect_eq "suspend not failures" "$(k get job sus -n j -o jsonpath='{.status.failed}')" ""
expect_contains "get suspended" "$(k get job sus -n j)" "Suspended"
k patch job sus -n j --type merge -p '{"spec":{"suspend":false}}' >/dev/null
wait_until 30 bash -c '[ "$(kubectl get job sus -n j -o jsonpath={.status.active})" = 2 ]' || fail "not resumed"
expect_eq "resumed condition" "$(k get job sus -n j -o jsonpath='{.status.conditions[?(@.type=="Suspended")].status}')" False

# --- Terminating scope: Job pods count only with activeDeadlineSeconds in their template ---
k create namespace s >/dev/null
k create quota term -n s --hard=pods=5 --scopes=Terminating >/dev/null
k create quota nonterm -n s --hard=pods=5 --scopes=NotTerminating >/dev/null
job_yaml plain 1 1 1h "" | sed 's/namespace: j/namespace: s/' | k create -f - >/dev/null
sed 's/namespace: j/namespace: s/; s/name: plain/name: dl/' <<<"$(job_yaml plain 1 1 1h "")" |
  sed 's/restartPolicy: Never/restartPolicy: Never\n      activeDeadlineSeconds: 600/' | k create -f - >/dev/null
wait_until 30 bash -c '[ "$(kubectl get quota term -n s -o jsonpath={.status.used.pods})" = 1 ] && [ "$(kubectl get quota nonterm -n s -o jsonpath={.status.used.pods})" = 1 ]' \
  || fail "scopes: term=$(kubectl get quota term -n s -o jsonpath={.status.used.pods}) nonterm=$(kubectl get quota nonterm -n s -o jsonpath={.status.used.pods})"

stop_allotd

# --- deferred quota: over-quota Job pods are created and wait Pending ---
rm -rf "$E2E_DIR/data"
ALLOT_PORT=
start_allotd --simulated-nodes 2 --feature-gates DeferredResourceQuota=true
k create namespace d >/dev/null
k create quota cpu -n d --hard=requests.cpu=20m,limits.cpu=20m >/dev/null
job_yaml def 4 4 1s "" | sed 's/namespace: j/namespace: d/' | k create -f - >/dev/null
wait_until 30 bash -c '[ "$(kubectl get pods -n d -o name | wc -l)" -ge 4 ]' || fail "deferred: not all pods created"
wait_until 60 has_cond def Complete d || fail "deferred job did not complete: $(kubectl get job def -n d -o yaml)"
expect_eq "deferred succeeded" "$(succeeded def d)" 4
if k get events -n d --field-selector reason=FailedCreate -o name | grep_all .; then
  fail "deferred: FailedCreate events"
fi
stop_allotd
echo "test_jobs: ok"
