# test_deployments.sh - the workload controllers with the real kubectl: a
# Deployment at its pod quota (seed 004's walkthrough): 3 of 5 pods and the
# ReplicaSet's FailedCreate Event carrying the quota's exact 403 message,
# the rest made once the quota is raised; rollouts at the quota limit
# (upstream's default strategy, the kubernetes#89209 stall at maxUnavailable 0
# reported as ProgressDeadlineExceeded, and maxSurge 0 completing), rollout
# undo/history/pause/resume, kubectl scale, Recreate, ReplicationController,
# StatefulSet and DaemonSet served and counted, upstream's printer columns;
# then with DeferredResourceQuota: every pod created, the excess Pending on
# the quota, bound as the quota grows, and no FailedCreate storm.
# Every wait is bounded (wait_until); no sleep is used to synchronise.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl

pods_in() { # pods_in NS [SELECTOR]: how many pods are not being deleted
  kubectl get pods -n "$1" ${2:+-l "$2"} -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.deletionTimestamp}{"\n"}{end}' | awk 'NF == 1' | wc -l | tr -d ' '
}
running_in() { # running_in NS [SELECTOR]
  kubectl get pods -n "$1" ${2:+-l "$2"} --field-selector=status.phase=Running -o name | wc -l | tr -d ' '
}
sq() { tr -s ' '; } # columns with single spaces
cond() { # cond KIND/NAME NS TYPE FIELD
  kubectl get "$1" -n "$2" -o jsonpath="{.status.conditions[?(@.type==\"$3\")].$4}"
}

start_allotd --simulated-nodes 3

# ---- 1. kubectl create deployment at a pods quota of 3 ----
k create namespace web >/dev/null
k create quota q -n web --hard=pods=3 >/dev/null
k create deployment web --image=nginx --replicas=5 -n web | grep_all 'deployment.apps/web created'
wait_until 60 bash -c "[ \"\$(kubectl get pods -n web --field-selector=status.phase=Running -o name | wc -l)\" = 3 ]" \
  || fail "3 pods did not run: $(k get pods -n web)"
rs=$(k get rs -n web -l app=web -o jsonpath='{.items[0].metadata.name}')
case "$rs" in web-*) ;; *) fail "ReplicaSet name: [$rs]" ;; esac
hash=${rs#web-}
expect_eq "pod-template-hash label" "$(k get rs "$rs" -n web -o jsonpath='{.metadata.labels.pod-template-hash}')" "$hash"
expect_eq "selector" "$(k get rs "$rs" -n web -o jsonpath='{.spec.selector.matchLabels.pod-template-hash}')" "$hash"
expect_eq "revision" "$(k get rs "$rs" -n web -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}')" 1
wait_until 30 bash -c "kubectl get events -n web --field-selector reason=FailedCreate,involvedObject.name=$rs -o jsonpath='{.items[*].message}' | grep -q forbidden" \
  || fail "no FailedCreate event"
msg=$(k get events -n web --field-selector reason=FailedCreate,involvedObject.name="$rs" -o jsonpath='{.items[0].message}')
[[ "$msg" =~ ^Error\ creating:\ pods\ \"$rs-[bcdfghjklmnpqrstvwxz2456789]{5}\"\ is\ forbidden:\ exceeded\ quota:\ q,\ requested:\ pods=1,\ used:\ pods=3,\ limited:\ pods=3$ ]] \
  || fail "FailedCreate message: [$msg]"
expect_eq "event source" "$(k get events -n web --field-selector reason=FailedCreate -o jsonpath='{.items[0].source.component}')" replicaset-controller
expect_eq "event type" "$(k get events -n web --field-selector reason=FailedCreate -o jsonpath='{.items[0].type}')" Warning
k get events -n web --field-selector reason=SuccessfulCreate -o jsonpath='{.items[*].message}' | grep_all "Created pod: $rs-" \
  || fail "no SuccessfulCreate event"
k get events -n web --field-selector reason=ScalingReplicaSet -o jsonpath='{.items[*].message}' | grep_all "Scaled up replica set $rs from 0 to 5" \
  || fail "no ScalingReplicaSet event: $(k get events -n web)"
wait_until 30 bash -c "[ \"\$(kubectl get rs $rs -n web -o jsonpath='{.status.conditions[?(@.type==\"ReplicaFailure\")].reason}')\" = FailedCreate ]" \
  || fail "ReplicaSet ReplicaFailure: $(k get rs "$rs" -n web -o yaml)"
expect_contains "ReplicaFailure message" "$(cond rs/"$rs" web ReplicaFailure message)" "is forbidden: exceeded quota: q, requested: pods=1, used: pods=3, limited: pods=3"
wait_until 30 bash -c "[ \"\$(kubectl get deploy web -n web -o jsonpath='{.status.conditions[?(@.type==\"ReplicaFailure\")].reason}')\" = FailedCreate ]" \
  || fail "Deployment ReplicaFailure: $(k get deploy web -n web -o yaml)"
expect_eq "Available" "$(cond deploy/web web Available status)/$(cond deploy/web web Available reason)" False/MinimumReplicasUnavailable
expect_eq "pods at the quota" "$(pods_in web app=web)" 3
# upstream's columns
out=$(k get deploy -n web)
expect_contains "deploy columns" "$(echo "$out" | head -1 | sq)" "NAME READY UP-TO-DATE AVAILABLE AGE"
expect_contains "deploy row" "$(echo "$out" | tail -1 | sq)" "web 3/5 3 3"
out=$(k get deploy -n web -o wide)
expect_contains "deploy wide" "$(echo "$out" | head -1 | sq)" "CONTAINERS IMAGES SELECTOR"
expect_contains "deploy wide row" "$(echo "$out" | tail -1 | sq)" "nginx nginx app=web"
out=$(k get rs -n web)
expect_contains "rs columns" "$(echo "$out" | head -1 | sq)" "NAME DESIRED CURRENT READY AGE"
expect_contains "rs row" "$(echo "$out" | tail -1 | sq)" "$rs 5 3 3"
k describe rs "$rs" -n web | grep_all "FailedCreate.*Error creating: pods \"$rs-" || fail "describe rs lacks FailedCreate"
k describe deploy web -n web | grep_all "ReplicaFailure *True *FailedCreate" || fail "describe deploy conditions: $(k describe deploy web -n web)"

# ---- 2. raising the quota brings the other 2 without user action ----
k patch quota q -n web -p '{"spec":{"hard":{"pods":"5"}}}' >/dev/null
wait_until 30 bash -c "[ \"\$(kubectl get pods -n web --field-selector=status.phase=Running -o name | wc -l)\" = 5 ]" \
  || fail "the other 2 pods did not come: $(k get pods -n web)"
timeout 60 kubectl rollout status deploy/web -n web --timeout=50s | grep_all 'deployment "web" successfully rolled out'
wait_until 30 bash -c "[ -z \"\$(kubectl get rs $rs -n web -o jsonpath='{.status.conditions[?(@.type==\"ReplicaFailure\")].reason}')\" ]" \
  || fail "ReplicaFailure not cleared"
wait_until 30 bash -c "[ -z \"\$(kubectl get deploy web -n web -o jsonpath='{.status.conditions[?(@.type==\"ReplicaFailure\")].reason}')\" ]" \
  || fail "Deployment ReplicaFailure not cleared"
expect_eq "Progressing" "$(cond deploy/web web Progressing reason)" NewReplicaSetAvailable
expect_eq "Available" "$(cond deploy/web web Available reason)" MinimumReplicasAvailable
expect_eq "status" "$(k get deploy web -n web -o jsonpath='{.status.replicas}/{.status.updatedReplicas}/{.status.readyReplicas}/{.status.availableReplicas}')" 5/5/5/5

# ---- 3. rollout restart at the quota limit, upstream's default strategy ----
# 5 replicas: maxSurge 2 (25% up), maxUnavailable 1 (25% down): the surge
# pods are refused, but one old pod may go at a time, so it completes.
k rollout restart deploy/web -n web | grep_all 'deployment.apps/web restarted'
timeout 120 kubectl rollout status deploy/web -n web --timeout=110s | grep_all 'deployment "web" successfully rolled out' \
  || fail "rollout restart at the quota did not complete: $(k get rs,pods -n web)"
expect_eq "revision" "$(k get deploy web -n web -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}')" 2
used=$(k get quota q -n web -o jsonpath='{.status.used.pods}')
[ "$used" -le 5 ] || fail "quota used $used above hard"
expect_eq "old set scaled to 0" "$(k get rs "$rs" -n web -o jsonpath='{.spec.replicas}')" 0

# ---- 4. maxSurge 0 completes at the quota ----
k patch deploy web -n web -p '{"spec":{"strategy":{"rollingUpdate":{"maxSurge":0,"maxUnavailable":1}}}}' >/dev/null
# kubectl refuses a second restart within the same second (restartedAt has
# second precision): retry, bounded
wait_until 5 kubectl rollout restart deploy/web -n web || fail "second rollout restart"
timeout 120 kubectl rollout status deploy/web -n web --timeout=110s | grep_all 'deployment "web" successfully rolled out' \
  || fail "maxSurge 0 rollout did not complete"
expect_eq "revision" "$(k get deploy web -n web -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}')" 3

# ---- 5. the stall upstream has at maxUnavailable 0 (3 replicas, quota 3) ----
k create namespace api >/dev/null
k create quota q -n api --hard=pods=3 >/dev/null
k create deployment api --image=nginx:1.25 --replicas=3 -n api >/dev/null
k patch deploy api -n api -p '{"spec":{"progressDeadlineSeconds":3}}' >/dev/null
timeout 60 kubectl rollout status deploy/api -n api --timeout=50s >/dev/null || fail "api did not roll out"
k set image deploy/api nginx=nginx:1.26 -n api >/dev/null
out=$(timeout 60 kubectl rollout status deploy/api -n api --timeout=50s 2>&1) && fail "a rollout at maxUnavailable 0 and a full quota completed: $out"
expect_contains "rollout status" "$out" 'error: deployment "api" exceeded its progress deadline'
expect_eq "Progressing" "$(cond deploy/api api Progressing status)/$(cond deploy/api api Progressing reason)" False/ProgressDeadlineExceeded
expect_contains "timed out message" "$(cond deploy/api api Progressing message)" "has timed out progressing."
expect_eq "still 3 old pods" "$(pods_in api app=api)" 3
# maxSurge 0 lets it through
k patch deploy api -n api -p '{"spec":{"strategy":{"rollingUpdate":{"maxSurge":0}}}}' >/dev/null
# rollout status gives up at once while the condition still says the
# deadline passed (as against any cluster): first the rollout moves again
wait_until 30 bash -c "[ \"\$(kubectl get deploy api -n api -o jsonpath='{.status.conditions[?(@.type==\"Progressing\")].reason}')\" != ProgressDeadlineExceeded ]" \
  || fail "maxSurge 0 did not move the rollout: $(k get deploy api -n api -o yaml)"
timeout 120 kubectl rollout status deploy/api -n api --timeout=110s | grep_all 'successfully rolled out' \
  || fail "maxSurge 0 did not unblock the rollout"
expect_eq "image" "$(k get pods -n api -l app=api -o jsonpath='{.items[0].spec.containers[0].image}')" nginx:1.26

# ---- 6. history and undo ----
out=$(k rollout history deploy/api -n api)
expect_contains "history" "$out" "REVISION  CHANGE-CAUSE"
echo "$out" | grep_all '^1 ' || fail "history lacks revision 1: $out"
echo "$out" | grep_all '^2 ' || fail "history lacks revision 2: $out"
k rollout history deploy/api -n api --revision=1 | grep_all 'nginx:1.25' || fail "history --revision=1"
k rollout undo deploy/api -n api | grep_all 'deployment.apps/api rolled back'
timeout 120 kubectl rollout status deploy/api -n api --timeout=110s | grep_all 'successfully rolled out'
expect_eq "image after undo" "$(k get deploy api -n api -o jsonpath='{.spec.template.spec.containers[0].image}')" nginx:1.25
expect_eq "revision after undo" "$(k get deploy api -n api -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}')" 3
expect_eq "ReplicaSets" "$(k get rs -n api -o name | wc -l | tr -d ' ')" 2
old=$(k get rs -n api -o jsonpath='{range .items[?(@.spec.template.spec.containers[0].image=="nginx:1.25")]}{.metadata.name}{end}')
expect_eq "revision-history" "$(k get rs "$old" -n api -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision-history}')" 1
k rollout undo deploy/api -n api --to-revision=3 2>&1 | grep_all 'skipped rollback' || fail "undo to the current revision"

# ---- 7. kubectl scale, pause and resume ----
k patch quota q -n api -p '{"spec":{"hard":{"pods":"10"}}}' >/dev/null
k scale deploy/api -n api --replicas=6 | grep_all 'deployment.apps/api scaled'
wait_until 30 bash -c "[ \"\$(kubectl get pods -n api --field-selector=status.phase=Running -o name | wc -l)\" = 6 ]" \
  || fail "scale to 6: $(k get pods -n api)"
k scale deploy/api -n api --replicas=2 >/dev/null
wait_until 30 bash -c "[ \"\$(kubectl get pods -n api -o name | wc -l)\" = 2 ]" || fail "scale to 2: $(k get pods -n api)"
k rollout pause deploy/api -n api | grep_all 'deployment.apps/api paused'
k set image deploy/api nginx=nginx:1.27 -n api >/dev/null
wait_until 30 bash -c "[ \"\$(kubectl get deploy api -n api -o jsonpath='{.status.conditions[?(@.type==\"Progressing\")].reason}')\" = DeploymentPaused ]" \
  || fail "no DeploymentPaused condition"
expect_eq "no new set while paused" "$(k get rs -n api -o name | wc -l | tr -d ' ')" 2
k rollout resume deploy/api -n api | grep_all 'deployment.apps/api resumed'
timeout 120 kubectl rollout status deploy/api -n api --timeout=110s | grep_all 'successfully rolled out'
expect_eq "image after resume" "$(k get pods -n api -l app=api -o jsonpath='{.items[0].spec.containers[0].image}')" nginx:1.27

# ---- 8. Recreate ----
k create deployment rec --image=nginx:1.25 --replicas=2 -n api >/dev/null
k patch deploy rec -n api --type=json -p '[{"op":"replace","path":"/spec/strategy","value":{"type":"Recreate"}}]' >/dev/null
timeout 60 kubectl rollout status deploy/rec -n api --timeout=50s >/dev/null || fail "rec"
k set image deploy/rec nginx=nginx:1.26 -n api >/dev/null
timeout 60 kubectl rollout status deploy/rec -n api --timeout=50s | grep_all 'successfully rolled out'
k get events -n api --field-selector involvedObject.name=rec -o jsonpath='{.items[*].message}' | grep_all 'Scaled down replica set rec-[a-z0-9]* from 2 to 0' \
  || fail "Recreate did not scale the old set to 0"

# ---- 8b. a stale desired-replicas annotation does not stall a rollout ----
# Upstream's scale() leaves a lone set whose size is right but whose
# annotation is not, so every sync is a scaling event and the rollout never
# starts (kubernetes#138036); allot rewrites the annotation.
k create deployment stale --image=nginx:1.25 --replicas=2 -n api >/dev/null
timeout 60 kubectl rollout status deploy/stale -n api --timeout=50s >/dev/null || fail "stale"
rs=$(k get rs -n api -l app=stale -o jsonpath='{.items[0].metadata.name}')
k annotate rs "$rs" -n api --overwrite deployment.kubernetes.io/desired-replicas=3 >/dev/null
k set image deploy/stale nginx=nginx:1.26 -n api >/dev/null
timeout 60 kubectl rollout status deploy/stale -n api --timeout=50s | grep_all 'successfully rolled out' \
  || fail "rollout after a stale desired-replicas annotation: $(k get rs -n api -l app=stale -o yaml)"
expect_eq "stale annotation rewritten" "$(k get rs "$rs" -n api -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/desired-replicas}')" 2
k delete deploy stale -n api >/dev/null

# ---- 9. ReplicationController (core/v1, seed 004 counts them) ----
k create namespace legacy >/dev/null
k create quota objects -n legacy --hard=replicationcontrollers=1 >/dev/null
cat <<'YAML' | k create -n legacy -f - | grep_all 'replicationcontroller/frontend created'
apiVersion: v1
kind: ReplicationController
metadata: {name: frontend}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: frontend}}
    spec: {containers: [{name: php, image: php:8}]}
YAML
wait_until 30 bash -c "[ \"\$(kubectl get pods -n legacy -l app=frontend --field-selector=status.phase=Running -o name | wc -l)\" = 2 ]" \
  || fail "rc pods: $(k get pods -n legacy)"
# its status follows within CTRL_STATUS_PACE_MS
wait_until 10 bash -c "kubectl get rc frontend -n legacy --no-headers | grep -Eq '^frontend +2 +2 +2 '" \
  || fail "rc status: $(k get rc -n legacy)"
out=$(k get rc -n legacy -o wide)
expect_contains "rc columns" "$(echo "$out" | head -1 | sq)" "NAME DESIRED CURRENT READY AGE"
expect_contains "rc wide" "$(echo "$out" | head -1 | sq)" "CONTAINERS IMAGES SELECTOR"
expect_contains "rc row" "$(echo "$out" | tail -1 | sq)" "frontend 2 2 2"
expect_eq "rc selector defaulted" "$(k get rc frontend -n legacy -o jsonpath='{.spec.selector.app}')" frontend
k get events -n legacy --field-selector reason=SuccessfulCreate -o jsonpath='{.items[0].source.component}' | grep_all replication-controller
out=$(k create rc other -n legacy --image=x 2>&1 || true)
cat <<'YAML' >"$E2E_DIR/rc2.yaml"
apiVersion: v1
kind: ReplicationController
metadata: {name: second}
spec:
  template:
    metadata: {labels: {app: second}}
    spec: {containers: [{name: c, image: nginx}]}
YAML
out=$(k create -n legacy -f "$E2E_DIR/rc2.yaml" 2>&1 || true)
expect_contains "rc quota" "$out" 'replicationcontrollers "second" is forbidden: exceeded quota: objects, requested: replicationcontrollers=1, used: replicationcontrollers=1, limited: replicationcontrollers=1'
k scale rc frontend -n legacy --replicas=1 >/dev/null
wait_until 30 bash -c "[ \"\$(kubectl get pods -n legacy -l app=frontend -o name | wc -l)\" = 1 ]" || fail "rc scale down"

# ---- 10. StatefulSet and DaemonSet: stored, served, counted ----
k create namespace st >/dev/null
k create quota sets -n st --hard=count/statefulsets.apps=1,count/daemonsets.apps=1 >/dev/null
cat <<'YAML' >"$E2E_DIR/sts.yaml"
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: pg, image: postgres:16}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {kubernetes.io/os: linux}
      containers: [{name: a, image: agent:1}]
YAML
k apply -n st -f "$E2E_DIR/sts.yaml" | grep_all 'statefulset.apps/db created'
k apply -n st -f "$E2E_DIR/sts.yaml" | grep_all 'statefulset.apps/db unchanged'
out=$(k get sts -n st)
expect_contains "sts columns" "$(echo "$out" | head -1 | sq)" "NAME READY AGE"
expect_contains "sts row" "$(echo "$out" | tail -1 | sq)" "db 0/2"
out=$(k get ds -n st)
expect_contains "ds columns" "$(echo "$out" | head -1 | sq)" "NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE"
expect_contains "ds row" "$(echo "$out" | tail -1 | sq)" "kubernetes.io/os=linux"
expect_eq "count/statefulsets.apps" "$(k get quota sets -n st -o jsonpath='{.status.used.count/statefulsets\.apps}')" 1
out=$(sed -n '1,/^---/p' "$E2E_DIR/sts.yaml" | sed 's/{name: db}/{name: db2}/; /^---/d' | k create -n st -f - 2>&1 || true)
expect_contains "sts quota" "$out" 'statefulsets.apps "db2" is forbidden: exceeded quota: sets, requested: count/statefulsets.apps=1, used: count/statefulsets.apps=1, limited: count/statefulsets.apps=1'
k scale sts db -n st --replicas=3 | grep_all 'statefulset.apps/db scaled'
expect_eq "sts scaled" "$(k get sts db -n st -o jsonpath='{.spec.replicas}')" 3
out=$(cat <<'YAML' | k create -n st -f - 2>&1 || true
apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  selector: {matchLabels: {app: bad}}
  template:
    metadata: {labels: {app: other}}
    spec: {containers: [{name: c, image: nginx}]}
YAML
)
expect_contains "selector mismatch" "$out" '`selector` does not match template `labels`'
stop_allotd

# ---- 11. deferred quota: every pod created, the excess Pending on quota ----
rm -rf "$E2E_DIR/data"
start_allotd --simulated-nodes 3 --feature-gates=DeferredResourceQuota=true
k create namespace d >/dev/null
k create quota cpu -n d --hard=requests.cpu=1 >/dev/null
cat <<'YAML' | k apply -n d -f - >/dev/null
apiVersion: apps/v1
kind: Deployment
metadata: {name: batch}
spec:
  replicas: 4
  selector: {matchLabels: {app: batch}}
  template:
    metadata: {labels: {app: batch}}
    spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m}}}]}
YAML
wait_until 60 bash -c "[ \"\$(kubectl get pods -n d --field-selector=status.pendingOnQuota=cpu -o name | wc -l)\" = 2 ]" \
  || fail "2 pods should wait on quota: $(k get pods -n d -o wide)"
expect_eq "all created" "$(pods_in d app=batch)" 4
expect_eq "running" "$(running_in d app=batch)" 2
p=$(k get pods -n d --field-selector=status.pendingOnQuota=cpu -o jsonpath='{.items[0].metadata.name}')
expect_eq "PodScheduled reason" "$(k get pod "$p" -n d -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')" Unschedulable
expect_contains "quota reason" "$(k get pod "$p" -n d -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')" \
  "quota exceeded: cpu, requested: requests.cpu=500m, used: requests.cpu=1, limited: requests.cpu=1"
wait_until 30 bash -c "[ \"\$(kubectl get deploy batch -n d -o jsonpath='{.status.availableReplicas}/{.status.unavailableReplicas}')\" = 2/2 ]" \
  || fail "the Deployment must report 2 unavailable: $(k get deploy batch -n d -o yaml)"
expect_contains "deploy row" "$(k get deploy batch -n d | tail -1 | sq)" "batch 2/4 4 2"
expect_eq "no FailedCreate" "$(k get events -n d --field-selector reason=FailedCreate -o name | wc -l | tr -d ' ')" 0
k patch quota cpu -n d -p '{"spec":{"hard":{"requests.cpu":"1500m"}}}' >/dev/null
wait_until 30 bash -c "[ \"\$(kubectl get pods -n d --field-selector=status.phase=Running -o name | wc -l)\" = 3 ]" \
  || fail "one more pod should run: $(k get pods -n d)"
k patch quota cpu -n d -p '{"spec":{"hard":{"requests.cpu":"2"}}}' >/dev/null
timeout 60 kubectl rollout status deploy/batch -n d --timeout=50s | grep_all 'successfully rolled out'
expect_eq "still no FailedCreate" "$(k get events -n d --field-selector reason=FailedCreate -o name | wc -l | tr -d ' ')" 0
stop_allotd
echo "PASS test_deployments"
