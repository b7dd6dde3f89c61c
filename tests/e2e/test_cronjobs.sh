# test_cronjobs.sh - batch/v1 CronJobs with the real kubectl: validation in
# upstream's words, kubectl create cronjob / create job --from=cronjob,
# get columns, one real scheduled run of "*/1 * * * *" (bounded wait, at
# most ~70 s) named <cronjob>-<minutes>, status, events and history limits.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl

start_allotd --simulated-nodes 1
k create namespace c >/dev/null

# --- validation ---
if k create cronjob bad -n c --image=busybox --schedule='*/1 * * *' 2>"$E2E_DIR/err"; then fail "4 fields accepted"; fi
expect_contains "4 fields" "$(cat "$E2E_DIR/err")" 'spec.schedule: Invalid value: "*/1 * * *": expected exactly 5 fields, found 4: [*/1 * * *]'
if k create cronjob bad -n c --image=busybox --schedule='CRON_TZ=UTC * * * * *' 2>"$E2E_DIR/err"; then fail "TZ accepted"; fi
expect_contains "TZ" "$(cat "$E2E_DIR/err")" 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'
if k create cronjob bad -n c --image=busybox --schedule='61 * * * *' 2>"$E2E_DIR/err"; then fail "minute 61 accepted"; fi
expect_contains "range" "$(cat "$E2E_DIR/err")" 'end of range (61) above maximum (59): 61'
k create cronjob daily -n c --image=busybox --schedule='@daily' >/dev/null
if k patch cronjob daily -n c --type merge -p '{"spec":{"timeZone":"Mars/Olympus"}}' 2>"$E2E_DIR/err"; then fail "bad zone accepted"; fi
expect_contains "zone" "$(cat "$E2E_DIR/err")" 'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus'
k patch cronjob daily -n c --type merge -p '{"spec":{"timeZone":"Europe/Berlin"}}' >/dev/null
out=$(k get cronjobs -n c)
expect_contains "get header" "$out" "NAME    SCHEDULE   TIMEZONE        SUSPEND   ACTIVE   LAST SCHEDULE   AGE"
expect_contains "get row" "$out" "daily   @daily     Europe/Berlin   False     0        <none>"
expect_eq "history default" "$(k get cronjob daily -n c -o jsonpath='{.spec.successfulJobsHistoryLimit}/{.spec.failedJobsHistoryLimit}/{.spec.concurrencyPolicy}')" "3/1/Allow"

# --- every minute, one run kept ---
cat <<'YAML' | k create -f - >/dev/null
apiVersion: batch/v1
kind: CronJob
metadata: {name: every, namespace: c}
spec:
  schedule: "*/1 * * * *"
  successfulJobsHistoryLimit: 1
  jobTemplate:
    spec:
      template:
        metadata:
          annotations: {allot.dev/run-duration: 1s}
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox}]
YAML
# a manual run first: owned by the CronJob, it counts in its history
k create job manual --from=cronjob/every -n c >/dev/null
expect_eq "manual owner" "$(k get job manual -n c -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')" CronJob/every
wait_until 30 bash -c '[ "$(kubectl get job manual -n c -o jsonpath={.status.succeeded})" = 1 ]' || fail "manual job did not complete"
# the first scheduled run: within the next minute boundary (+ margin)
scheduled() { kubectl get jobs -n c -o name | grep -E '^job.batch/every-[0-9]+$'; }
wait_until 75 scheduled || fail "no scheduled job: $(kubectl get jobs -n c; kubectl get events -n c)"
name=$(scheduled | head -1); name=${name#job.batch/}
minutes=${name#every-}
lst=$(k get cronjob every -n c -o jsonpath='{.status.lastScheduleTime}')
expect_eq "job name is the scheduled minute" "$(( $(date -d "$lst" +%s) / 60 ))" "$minutes"
expect_contains "scheduled annotation" "$(k get job "$name" -n c -o jsonpath='{.metadata.annotations}')" batch.kubernetes.io/cronjob-scheduled-timestamp
wait_until 30 bash -c "[ \"\$(kubectl get job $name -n c -o jsonpath={.status.succeeded})\" = 1 ]" || fail "scheduled job did not complete"
# history: successfulJobsHistoryLimit 1 keeps the newest, removes manual
wait_until 30 bash -c '! kubectl get job manual -n c >/dev/null 2>&1' || fail "history limit did not remove the older job"
wait_until 30 bash -c '[ -n "$(kubectl get cronjob every -n c -o jsonpath={.status.lastSuccessfulTime})" ]' || fail "lastSuccessfulTime not set"
expect_eq "no active" "$(k get cronjob every -n c -o jsonpath='{.status.active}')" ""
ev=$(k get events -n c --field-selector involvedObject.name=every -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}')
expect_contains "created event" "$ev" "SuccessfulCreate: Created job $name"
expect_contains "saw event" "$ev" "SawCompletedJob: Saw completed job: $name, status: Complete"
expect_contains "delete event" "$ev" "SuccessfulDelete: Deleted job manual"
expect_contains "get last schedule" "$(k get cronjob every -n c)" "*/1 * * * *"
# suspend: no more runs, SUSPEND True
k patch cronjob every -n c --type merge -p '{"spec":{"suspend":true}}' >/dev/null
expect_contains "suspended" "$(k get cronjob every -n c)" "True"
k delete cronjob every -n c >/dev/null
wait_until 30 bash -c '[ -z "$(kubectl get jobs -n c -o name)" ]' || fail "jobs of a deleted cronjob remain"
stop_allotd
echo "test_cronjobs: ok"
