# test_job_defaults.sh - Jobs and CronJobs made by kubectl alone finish: the
# pods of `kubectl create job` and `kubectl create cronjob` (which cannot set
# allot.dev/run-duration) run for the node agent's default Job run time
# (--node-agent-job-run-duration, default 10s) and succeed, their quota is
# released, and a "* * * * *" CronJob with the defaults keeps a bounded
# history: successfulJobsHistoryLimit 3, failedJobsHistoryLimit 1, as
# upstream. Other pods still run until stopped.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl

start_allotd --simulated-nodes 1
k create namespace j >/dev/null
k create quota pods --hard=pods=4 -n j >/dev/null

# ---- kubectl create job: completes with the default run time ----
k create job hello -n j --image=busybox >/dev/null
k run web -n j --image=nginx >/dev/null
k wait --for=condition=complete job/hello -n j --timeout=40s >/dev/null || fail "job hello did not complete: $(k get pods -n j)"
pod=$(k get pods -n j -l job-name=hello -o jsonpath='{.items[0].metadata.name}')
expect_eq "pod phase" "$(k get pod "$pod" -n j -o jsonpath='{.status.phase}')" Succeeded
expect_eq "container" "$(k get pod "$pod" -n j -o jsonpath='{.status.containerStatuses[0].state.terminated.reason}/{.status.containerStatuses[0].state.terminated.exitCode}')" Completed/0
# a pod no Job controls keeps running
expect_eq "plain pod runs" "$(k get pod web -n j -o jsonpath='{.status.phase}')" Running
# the finished pod is no longer charged: web is the only one
wait_until 10 bash -c '[ "$(kubectl get quota pods -n j -o jsonpath={.status.used.pods})" = 1 ]' ||
  fail "quota still charged: $(k get quota pods -n j -o jsonpath='{.status.used}')"

# ---- a default "* * * * *" CronJob: runs complete, history bounded ----
k create cronjob every -n j --image=busybox --schedule='* * * * *' >/dev/null
expect_eq "defaults" "$(k get cronjob every -n j -o jsonpath='{.spec.concurrencyPolicy}/{.spec.successfulJobsHistoryLimit}/{.spec.failedJobsHistoryLimit}')" Allow/3/1
# five runs' worth of Jobs (kubectl create job --from: owned by the CronJob, in its history)
for i in 1 2 3 4 5; do k create job "every-manual-$i" -n j --from=cronjob/every >/dev/null; done
owned() { kubectl get jobs -n j -o jsonpath='{range .items[?(@.metadata.ownerReferences[0].name=="every")]}{.metadata.name} {.status.succeeded}{"\n"}{end}'; }
# at most 3 pods at once under the quota of 4 (web holds one): they run in turns
wait_until 90 bash -c "[ \"\$(kubectl get jobs -n j -o jsonpath='{range .items[?(@.metadata.ownerReferences[0].name==\"every\")]}{.status.succeeded}{\"\\n\"}{end}' | grep -c '^1\$')\" -ge 3 ] && [ \"\$(kubectl get jobs -n j -o name | grep -c every-)\" -le 3 ]" ||
  fail "history not kept to 3: $(owned)"
# the first scheduled run also completes (no annotation), and the history stays at 3
scheduled() { kubectl get jobs -n j -o name | grep -E '^job.batch/every-[0-9]+$'; }
wait_until 75 scheduled || fail "no scheduled job: $(k get jobs -n j)"
name=$(scheduled | head -1)
k wait --for=condition=complete "$name" -n j --timeout=40s >/dev/null || fail "scheduled job did not complete"
wait_until 20 bash -c '[ "$(kubectl get jobs -n j -o name | grep -c every-)" -le 3 ]' || fail "history over 3: $(owned)"
expect_contains "scheduled job kept (newest)" "$(k get jobs -n j -o name)" "$name"
k patch cronjob every -n j --type merge -p '{"spec":{"suspend":true}}' >/dev/null
# pods of deleted Jobs go with them; finished pods are not charged
wait_until 30 bash -c '[ "$(kubectl get pods -n j -o name | grep -c every-)" -le 3 ]' || fail "pods pile up: $(k get pods -n j)"
wait_until 10 bash -c '[ "$(kubectl get quota pods -n j -o jsonpath={.status.used.pods})" = 1 ]' ||
  fail "quota still charged: $(k get quota pods -n j -o jsonpath='{.status.used}')"

# ---- failed runs: failedJobsHistoryLimit 1 ----
cat <<'YAML' | k create -f - >/dev/null
apiVersion: batch/v1
kind: CronJob
metadata: {name: fails, namespace: j}
spec:
  schedule: "@yearly"
  jobTemplate:
    spec:
      backoffLimit: 0
      template:
        spec:
          activeDeadlineSeconds: 1
          restartPolicy: Never
          containers: [{name: c, image: busybox}]
YAML
for i in 1 2 3; do k create job "fails-$i" -n j --from=cronjob/fails >/dev/null; done
wait_until 60 bash -c '[ "$(kubectl get jobs -n j -o name | grep -c fails-)" = 1 ] && kubectl get jobs -n j -o jsonpath="{.items[*].status.conditions[*].type}" | grep -q Failed' ||
  fail "failed history not kept to 1: $(k get jobs -n j)"
stop_allotd
echo "test_job_defaults: ok"
