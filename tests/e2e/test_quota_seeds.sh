# test_quota_seeds.sh - the real kubectl reproduces the ResourceQuota behaviour
# of the seed documents, step by step: every create is asserted allowed or
# denied (with the exact text kubectl prints), and every step is followed by an
# assertion on status.used or on `kubectl describe quota`.
#   seed 000: the classic "exceeded quota" 403 (deferred-quota gate off);
#   seed 001: Scenario 1, scoped quotas (BestEffort, Terminating, NotTerminating);
#   seed 002: requests vs limits (rows X, Y, Y', Z), tiers, resourcequotas counting;
#   seed 004: compute-resources / object-counts walkthrough, describe line by line;
#   spec §7.1: `kubectl get quota` columns NAME, REQUEST, LIMIT, AGE.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl
start_allotd
# Manifests are written into $E2E_DIR and named relative to it, so kubectl's
# `error when creating "<file>"` prefix is stable.
cd "$E2E_DIR"

# mkpod FILE NAME [rc=CPU] [rm=MEM] [lc=CPU] [lm=MEM] [ads=SECONDS] [gate=NAME] [affinity=NODE]
# [c=CONTAINER]: writes a one-container pod; the container is "app" unless c= names it.
mkpod() {
  local file=$1 name=$2; shift 2
  local rc= rm= lc= lm= ads= gate= aff= c=app kv
  for kv in "$@"; do
    case $kv in
      rc=*) rc=${kv#rc=} ;; rm=*) rm=${kv#rm=} ;; lc=*) lc=${kv#lc=} ;; lm=*) lm=${kv#lm=} ;;
      ads=*) ads=${kv#ads=} ;; gate=*) gate=${kv#gate=} ;; affinity=*) aff=${kv#affinity=} ;;
      c=*) c=${kv#c=} ;; *) fail "mkpod: bad argument $kv" ;;
    esac
  done
  {
    printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: "%s"\nspec:\n' "$name"
    [ -z "$ads" ] || printf '  activeDeadlineSeconds: %s\n' "$ads"
    [ -z "$gate" ] || printf '  schedulingGates:\n  - name: %s\n' "$gate"
    if [ -n "$aff" ]; then
      printf '  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n'
      printf '        nodeSelectorTerms:\n        - matchExpressions:\n'
      printf '          - {key: kubernetes.io/hostname, operator: In, values: [%s]}\n' "$aff"
    fi
    printf '  containers:\n  - name: %s\n    image: nginx\n    resources:\n' "$c"
    if [ -n "$rc$rm" ]; then
      printf '      requests:\n'
      [ -z "$rc" ] || printf '        cpu: "%s"\n' "$rc"
      [ -z "$rm" ] || printf '        memory: "%s"\n' "$rm"
    fi
    if [ -n "$lc$lm" ]; then
      printf '      limits:\n'
      [ -z "$lc" ] || printf '        cpu: "%s"\n' "$lc"
      [ -z "$lm" ] || printf '        memory: "%s"\n' "$lm"
    fi
  } >"$file"
}

# create_ok NS FILE KIND/NAME: kubectl create -f must succeed and say so.
create_ok() {
  local out
  out=$(k create -f "$2" -n "$1" 2>&1) || fail "create $2 in $1 was denied: $out"
  expect_eq "create $2" "$out" "$3 created"
}

# create_denied NS FILE MESSAGE: kubectl create -f must fail printing exactly
# `Error from server (Forbidden): error when creating "FILE": MESSAGE`.
create_denied() {
  local out
  if out=$(k create -f "$2" -n "$1" 2>&1); then fail "create $2 in $1 was allowed: $out"; fi
  expect_eq "denial of $2" "$out" "Error from server (Forbidden): error when creating \"$2\": $3"
}

used() { k get quota "$2" -n "$1" -o jsonpath='{.status.used}'; }
# expect_used NS QUOTA JSON: status.used right now (admission charges synchronously).
expect_used() { expect_eq "status.used of $1/$2" "$(used "$1" "$2")" "$3"; }
# wait_used NS QUOTA JSON: status.used eventually (releases are asynchronous upstream).
wait_used() {
  wait_until 20 bash -c '[ "$(kubectl get quota "$1" -n "$0" -o jsonpath="{.status.used}")" == "$2" ]' \
    "$1" "$2" "$3" || fail "status.used of $1/$2: got [$(used "$1" "$2")], want [$3] (waited 20s)"
}

# describe output with kubectl's column padding collapsed to one space.
describe_quota() { k describe quota "$2" -n "$1" | sed -E 's/ +$//; s/([^ ]) {2,}/\1 /g'; }
# expect_describe NS QUOTA TEXT: describe output right now, line by line.
expect_describe() {
  local got
  got=$(describe_quota "$1" "$2")
  [ "$got" == "$3" ] || fail "describe quota $1/$2 differs (< want, > got):
$(diff <(echo "$3") <(echo "$got"))"
}
# wait_describe NS QUOTA TEXT: the same, eventually (a new quota's status is
# filled by the controller upstream).
wait_describe() {
  export -f describe_quota k
  wait_until 10 bash -c '[ "$(describe_quota "$0" "$1")" == "$2" ]' "$1" "$2" "$3" || true
  expect_describe "$1" "$2" "$3"
}

# ---------------------------------------------------------------------------
# seed 000: quota p1 (count/pods, cpu, memory); with the deferred-quota gate
# off (allot has no such gate: classic behaviour) pending and schedule-gated
# pods are charged at admission, so test-1's cpu=1 is rejected with a 403.
k create namespace seed000 >/dev/null
cat >p1.yaml <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata:
  name: p1
spec:
  hard:
    count/pods: "20"
    cpu: "2"
    memory: 200Gi
YAML
create_ok seed000 p1.yaml resourcequota/p1
wait_used seed000 p1 '{"count/pods":"0","cpu":"0","memory":"0"}'
mkpod node-affinity.yaml node-affinity rc=1 rm=100Mi affinity=no-such-node
create_ok seed000 node-affinity.yaml pod/node-affinity
expect_used seed000 p1 '{"count/pods":"1","cpu":"1","memory":"100Mi"}'
mkpod schedule-gated.yaml schedule-gated rc=1 rm=100Mi gate=example.com/hold
create_ok seed000 schedule-gated.yaml pod/schedule-gated
expect_used seed000 p1 '{"count/pods":"2","cpu":"2","memory":"200Mi"}'
out=$(k get pods -n seed000 --no-headers | awk '{print $1, $2, $3}')
expect_eq "seed 000 pods" "$out" "node-affinity 0/1 Pending
schedule-gated 0/1 SchedulingGated"
mkpod test-pod-1.yaml test-1 rc=1 rm=100Mi
create_denied seed000 test-pod-1.yaml \
  'pods "test-1" is forbidden: exceeded quota: p1, requested: cpu=1, used: cpu=2, limited: cpu=2'
expect_used seed000 p1 '{"count/pods":"2","cpu":"2","memory":"200Mi"}'
# spec §7.1: NAME REQUEST LIMIT AGE; columns are separated by 2+ spaces, the
# REQUEST cell holds single spaces.
out=$(k get quota p1 -n seed000 | sed -E 's/ {2,}/|/g; s/\|$//')
[[ "$out" =~ ^"NAME|REQUEST|LIMIT|AGE"$'\n'"p1|count/pods: 2/20, cpu: 2/2, memory: 200Mi/200Gi|"[0-9]+s$ ]] ||
  fail "get quota p1 table: [$out]"

# ---------------------------------------------------------------------------
# seed 001, Scenario 1. The 2015 proposal spells the limits `memory.limit` and
# `cpu.limit`; those names never shipped and validation rejects them.
k create namespace scenario1 >/dev/null
cat >old-names.yaml <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata:
  name: quota-terminating
spec:
  hard:
    pods: "2"
    memory.limit: 1Gi
    cpu.limit: "2"
  scopes: [Terminating, NotBestEffort]
YAML
if out=$(k create -f old-names.yaml -n scenario1 2>&1); then fail "memory.limit accepted: $out"; fi
expect_eq "old names header" "$(head -n1 <<<"$out")" 'The ResourceQuota "quota-terminating" is invalid: '
expect_eq "old names: four errors" "$(grep -c '^\* ' <<<"$out")" 4
for key in cpu.limit memory.limit; do
  for why in "must be a standard resource type or fully qualified" "must be a standard resource for quota"; do
    grep -qxF "* spec.hard[$key]: Invalid value: \"$key\": $why" <<<"$out" || fail "old names: no [$key: $why] in [$out]"
  done
done

cat >quota-best-effort.yaml <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata:
  name: quota-best-effort
spec:
  hard:
    pods: "2"
  scopes: [BestEffort]
YAML
cat >quota-terminating.yaml <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata:
  name: quota-terminating
spec:
  hard:
    pods: "2"
    limits.memory: 1Gi
    limits.cpu: "2"
  scopes: [Terminating, NotBestEffort]
YAML
# The seed's prose says "limit 4 long-running pods" (its YAML says 2); 4 keeps
# the total quota (6 pods) reachable on its own below.
cat >quota-longrunning.yaml <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata:
  name: quota-longrunning
spec:
  hard:
    pods: "4"
    limits.memory: 4Gi
    limits.cpu: "4"
  scopes: [NotTerminating, NotBestEffort]
YAML
cat >quota.yaml <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata:
  name: quota
spec:
  hard:
    pods: "6"
    replicationcontrollers: "10"
YAML
for q in quota-best-effort quota-terminating quota-longrunning quota; do
  create_ok scenario1 $q.yaml resourcequota/$q
done
S=scenario1
wait_used $S quota-best-effort '{"pods":"0"}'
wait_used $S quota-terminating '{"limits.cpu":"0","limits.memory":"0","pods":"0"}'
wait_used $S quota-longrunning '{"limits.cpu":"0","limits.memory":"0","pods":"0"}'
wait_used $S quota '{"pods":"0","replicationcontrollers":"0"}'

# best-effort pods: 2 allowed, the third denied by quota-best-effort
for p in be-1 be-2; do
  mkpod $p.yaml $p
  create_ok $S $p.yaml pod/$p
done
expect_eq "be-1 qosClass" "$(k get pod be-1 -n $S -o jsonpath='{.status.qosClass}')" BestEffort
expect_used $S quota-best-effort '{"pods":"2"}'
expect_used $S quota '{"pods":"2","replicationcontrollers":"0"}'
mkpod be-3.yaml be-3
create_denied $S be-3.yaml \
  'pods "be-3" is forbidden: exceeded quota: quota-best-effort, requested: pods=1, used: pods=2, limited: pods=2'
expect_used $S quota-best-effort '{"pods":"2"}'
expect_used $S quota '{"pods":"2","replicationcontrollers":"0"}'

# terminating pods: limits are required, 2 fit, a third exceeds all three keys
mkpod term-nolimits.yaml term-nolimits ads=600 rc=100m rm=64Mi
create_denied $S term-nolimits.yaml \
  'pods "term-nolimits" is forbidden: failed quota: quota-terminating: must specify limits.cpu for: app; limits.memory for: app'
for p in term-1 term-2; do
  mkpod $p.yaml $p ads=600 lc=1 lm=512Mi
  create_ok $S $p.yaml pod/$p
done
expect_eq "term-1 qosClass" "$(k get pod term-1 -n $S -o jsonpath='{.status.qosClass}')" Guaranteed
expect_used $S quota-terminating '{"limits.cpu":"2","limits.memory":"1Gi","pods":"2"}'
expect_used $S quota-longrunning '{"limits.cpu":"0","limits.memory":"0","pods":"0"}'
expect_used $S quota '{"pods":"4","replicationcontrollers":"0"}'
mkpod term-3.yaml term-3 ads=600 lc=100m lm=64Mi
create_denied $S term-3.yaml \
  'pods "term-3" is forbidden: exceeded quota: quota-terminating, requested: limits.cpu=100m,limits.memory=64Mi,pods=1, used: limits.cpu=2,limits.memory=1Gi,pods=2, limited: limits.cpu=2,limits.memory=1Gi,pods=2'
expect_used $S quota-terminating '{"limits.cpu":"2","limits.memory":"1Gi","pods":"2"}'

# long-running pods: the cpu limit binds first, then the 6-pod total alone
mkpod lr-1.yaml lr-1 lc=3 lm=1Gi
create_ok $S lr-1.yaml pod/lr-1
expect_used $S quota-longrunning '{"limits.cpu":"3","limits.memory":"1Gi","pods":"1"}'
mkpod lr-big.yaml lr-big lc=2 lm=1Gi
create_denied $S lr-big.yaml \
  'pods "lr-big" is forbidden: exceeded quota: quota-longrunning, requested: limits.cpu=2, used: limits.cpu=3, limited: limits.cpu=4'
mkpod lr-2.yaml lr-2 lc=500m lm=1Gi
create_ok $S lr-2.yaml pod/lr-2
expect_used $S quota-longrunning '{"limits.cpu":"3500m","limits.memory":"2Gi","pods":"2"}'
expect_used $S quota '{"pods":"6","replicationcontrollers":"0"}'
mkpod lr-3.yaml lr-3 lc=500m lm=1Gi
create_denied $S lr-3.yaml \
  'pods "lr-3" is forbidden: exceeded quota: quota, requested: pods=1, used: pods=6, limited: pods=6'
expect_used $S quota-longrunning '{"limits.cpu":"3500m","limits.memory":"2Gi","pods":"2"}'
expect_used $S quota '{"pods":"6","replicationcontrollers":"0"}'

# deleting a best-effort pod releases it from quota-best-effort and quota
k delete pod be-1 -n $S --wait=false >/dev/null
wait_used $S quota '{"pods":"5","replicationcontrollers":"0"}'
wait_used $S quota-best-effort '{"pods":"1"}'
create_ok $S lr-3.yaml pod/lr-3
expect_used $S quota-longrunning '{"limits.cpu":"4","limits.memory":"3Gi","pods":"3"}'
expect_used $S quota '{"pods":"6","replicationcontrollers":"0"}'

# replication controllers are counted by the unscoped quota only
cat >rc.yaml <<'YAML'
apiVersion: v1
kind: ReplicationController
metadata:
  name: web
spec:
  replicas: 0
  selector: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx
YAML
create_ok $S rc.yaml replicationcontroller/web
expect_used $S quota '{"pods":"6","replicationcontrollers":"1"}'

expect_describe $S quota-terminating "Name: quota-terminating
Namespace: scenario1
Scopes: NotBestEffort, Terminating
 * Matches all pods that have at least one resource requirement set. These pods have a burstable or guaranteed quality of service.
 * Matches all pods that have an active deadline. These pods have a limited lifespan on a node before being actively terminated by the system.
Resource Used Hard
-------- ---- ----
limits.cpu 2 2
limits.memory 1Gi 1Gi
pods 2 2"
expect_describe $S quota-best-effort "Name: quota-best-effort
Namespace: scenario1
Scopes: BestEffort
 * Matches all pods that do not have resource requirements set. These pods have a best effort quality of service.
Resource Used Hard
-------- ---- ----
pods 1 2"

# ---------------------------------------------------------------------------
# seed 002: requests vs limits, tracking quota on cpu (legacy name `cpu`).
R=requests-limits
k create namespace $R >/dev/null
k create quota cpu-quota -n $R --hard=cpu=1 | grep_all -x 'resourcequota/cpu-quota created' || fail "create cpu-quota"
wait_used $R cpu-quota '{"cpu":"0"}'
mkpod x.yaml x c=c1 rc=100m lc=500m               # X: usage incremented 100m
create_ok $R x.yaml pod/x
expect_used $R cpu-quota '{"cpu":"100m"}'
mkpod y.yaml y c=c2 rc=100m                       # Y: usage incremented 100m
create_ok $R y.yaml pod/y
expect_used $R cpu-quota '{"cpu":"200m"}'
mkpod y2.yaml y2 c=c2 lc=500m                     # Y': request defaults to limit: 500m
create_ok $R y2.yaml pod/y2
expect_eq "Y' request defaulted" "$(k get pod y2 -n $R -o jsonpath='{.spec.containers[0].resources.requests.cpu}')" 500m
expect_used $R cpu-quota '{"cpu":"700m"}'
mkpod z.yaml z c=c3                               # Z: rejected, no request
create_denied $R z.yaml 'pods "z" is forbidden: failed quota: cpu-quota: must specify cpu for: c3'
expect_used $R cpu-quota '{"cpu":"700m"}'

# the tier table with a 4 cpu quota: X (1/4 Burstable), Y (2/2 Guaranteed),
# Z (1/3 Burstable) charge their requests, 1+2+1 = 4 = hard is allowed.
T=tiers
k create namespace $T >/dev/null
k create quota tiers -n $T --hard=cpu=4 >/dev/null
wait_used $T tiers '{"cpu":"0"}'
mkpod tx.yaml x c=c1 rc=1 lc=4 rm=64Mi lm=64Mi
mkpod ty.yaml y c=c2 rc=2 lc=2 rm=64Mi lm=64Mi
mkpod tz.yaml z c=c3 rc=1 lc=3 rm=64Mi lm=64Mi
create_ok $T tx.yaml pod/x
expect_used $T tiers '{"cpu":"1"}'
create_ok $T ty.yaml pod/y
expect_used $T tiers '{"cpu":"3"}'
create_ok $T tz.yaml pod/z
expect_used $T tiers '{"cpu":"4"}'
expect_eq "tiers qos" "$(k get pods -n $T -o jsonpath='{range .items[*]}{.metadata.name}={.status.qosClass} {end}')" \
  "x=Burstable y=Guaranteed z=Burstable "
mkpod tw.yaml w rc=100m rm=64Mi
create_denied $T tw.yaml 'pods "w" is forbidden: exceeded quota: tiers, requested: cpu=100m, used: cpu=4, limited: cpu=4'
expect_used $T tiers '{"cpu":"4"}'

# ---------------------------------------------------------------------------
# seed 004: Viewing and Setting Quotas. `secrets` is 0 where the 2016 doc
# shows 1: clusters no longer create a service-account token secret. And
# `configmaps` is 1 where the doc shows 0: since 1.20 the root-ca publisher
# puts kube-root-ca.crt in every namespace, and so does allot, as a real
# cluster counts it.
k create namespace myspace | grep_all -x 'namespace/myspace created' || fail "create myspace"
cat >compute-resources.yaml <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata:
  name: compute-resources
spec:
  hard:
    pods: "4"
    requests.cpu: "1"
    requests.memory: 1Gi
    limits.cpu: "2"
    limits.memory: 2Gi
YAML
cat >object-counts.yaml <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata:
  name: object-counts
spec:
  hard:
    configmaps: "10"
    persistentvolumeclaims: "4"
    replicationcontrollers: "20"
    secrets: "10"
    services: "10"
    services.loadbalancers: "2"
YAML
create_ok myspace compute-resources.yaml resourcequota/compute-resources
create_ok myspace object-counts.yaml resourcequota/object-counts
wait_describe myspace compute-resources "Name: compute-resources
Namespace: myspace
Resource Used Hard
-------- ---- ----
limits.cpu 0 2
limits.memory 0 2Gi
pods 0 4
requests.cpu 0 1
requests.memory 0 1Gi"
wait_describe myspace object-counts "Name: object-counts
Namespace: myspace
Resource Used Hard
-------- ---- ----
configmaps 1 10
persistentvolumeclaims 0 4
replicationcontrollers 0 20
secrets 0 10
services 0 10
services.loadbalancers 0 2"

out=$(k get quota -n myspace | sed -E 's/ {2,}/|/g; s/\|$//')
[[ "$out" =~ ^"NAME|REQUEST|LIMIT|AGE"$'\n'"compute-resources|pods: 0/4, requests.cpu: 0/1, requests.memory: 0/1Gi|limits.cpu: 0/2, limits.memory: 0/2Gi|"[0-9]+s$'\n'"object-counts|configmaps: 1/10, persistentvolumeclaims: 0/4, replicationcontrollers: 0/20, secrets: 0/10, services: 0/10, services.loadbalancers: 0/2|"[0-9]+s$ ]] ||
  fail "get quota -n myspace table: [$out]"

# then use it: compute-resources requires requests and limits for cpu and memory
mkpod web-nolimits.yaml web-nolimits c=web rc=200m rm=256Mi
create_denied myspace web-nolimits.yaml \
  'pods "web-nolimits" is forbidden: failed quota: compute-resources: must specify limits.cpu for: web; limits.memory for: web'
mkpod web.yaml web c=web rc=400m rm=512Mi lc=1 lm=1Gi
create_ok myspace web.yaml pod/web
mkpod web-2.yaml web-2 c=web rc=600m rm=512Mi lc=1 lm=1Gi
create_ok myspace web-2.yaml pod/web-2
expect_used myspace compute-resources \
  '{"limits.cpu":"2","limits.memory":"2Gi","pods":"2","requests.cpu":"1","requests.memory":"1Gi"}'
mkpod web-3.yaml web-3 c=web rc=10m rm=16Mi lc=10m lm=16Mi
create_denied myspace web-3.yaml \
  'pods "web-3" is forbidden: exceeded quota: compute-resources, requested: limits.cpu=10m,limits.memory=16Mi,requests.cpu=10m,requests.memory=16Mi, used: limits.cpu=2,limits.memory=2Gi,requests.cpu=1,requests.memory=1Gi, limited: limits.cpu=2,limits.memory=2Gi,requests.cpu=1,requests.memory=1Gi'
k create configmap settings -n myspace --from-literal=a=b >/dev/null
k create secret generic creds -n myspace --from-literal=user=admin >/dev/null
k create service loadbalancer lb-1 -n myspace --tcp=80:8080 >/dev/null
k create service loadbalancer lb-2 -n myspace --tcp=80:8080 >/dev/null
if out=$(k create service loadbalancer lb-3 -n myspace --tcp=80:8080 2>&1); then fail "third load balancer allowed"; fi
expect_eq "third load balancer denied" "$out" \
  'error: failed to create LoadBalancer service: services "lb-3" is forbidden: exceeded quota: object-counts, requested: services.loadbalancers=1, used: services.loadbalancers=2, limited: services.loadbalancers=2'
k create service clusterip internal -n myspace --tcp=80:8080 >/dev/null
expect_describe myspace compute-resources "Name: compute-resources
Namespace: myspace
Resource Used Hard
-------- ---- ----
limits.cpu 2 2
limits.memory 2Gi 2Gi
pods 2 4
requests.cpu 1 1
requests.memory 1Gi 1Gi"
expect_describe myspace object-counts "Name: object-counts
Namespace: myspace
Resource Used Hard
-------- ---- ----
configmaps 2 10
persistentvolumeclaims 0 4
replicationcontrollers 0 20
secrets 1 10
services 3 10
services.loadbalancers 2 2"
out=$(k get quota compute-resources -n myspace --no-headers | sed -E 's/ {2,}/|/g; s/\|$//')
[[ "$out" =~ ^"compute-resources|pods: 2/4, requests.cpu: 1/1, requests.memory: 1Gi/1Gi|limits.cpu: 2/2, limits.memory: 2Gi/2Gi|"[0-9]+s$ ]] ||
  fail "get quota compute-resources row: [$out]"

# deleting releases (asynchronously upstream)
k delete pod web -n myspace --wait=false >/dev/null
k delete service lb-1 -n myspace --wait=false >/dev/null
wait_used myspace compute-resources \
  '{"limits.cpu":"1","limits.memory":"1Gi","pods":"1","requests.cpu":"600m","requests.memory":"512Mi"}'
wait_used myspace object-counts \
  '{"configmaps":"2","persistentvolumeclaims":"0","replicationcontrollers":"0","secrets":"1","services":"2","services.loadbalancers":"1"}'

# ---------------------------------------------------------------------------
# seed 002's describe example: a quota counts itself under resourcequotas
# (the controller's recount lists it), so a second quota is over the limit of
# 1. Secrets 0, not the 2017 doc's 1: no service-account token secret.
k create namespace quota-example >/dev/null
cat >quota-example.yaml <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata:
  name: quota
spec:
  hard:
    cpu: "20"
    memory: 1Gi
    persistentvolumeclaims: "10"
    pods: "10"
    replicationcontrollers: "20"
    resourcequotas: "1"
    secrets: "10"
    services: "5"
YAML
create_ok quota-example quota-example.yaml resourcequota/quota
wait_describe quota-example quota "Name: quota
Namespace: quota-example
Resource Used Hard
-------- ---- ----
cpu 0 20
memory 0 1Gi
persistentvolumeclaims 0 10
pods 0 10
replicationcontrollers 0 20
resourcequotas 1 1
secrets 0 10
services 0 5"
cat >second.yaml <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata:
  name: second
spec:
  hard:
    pods: "1"
YAML
create_denied quota-example second.yaml \
  'resourcequotas "second" is forbidden: exceeded quota: quota, requested: resourcequotas=1, used: resourcequotas=1, limited: resourcequotas=1'
expect_used quota-example quota \
  '{"cpu":"0","memory":"0","persistentvolumeclaims":"0","pods":"0","replicationcontrollers":"0","resourcequotas":"1","secrets":"0","services":"0"}'

stop_allotd
echo "test_quota_seeds: ok"
