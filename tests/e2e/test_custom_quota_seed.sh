# test_custom_quota_seed.sh - seed 003's custom quota examples run as the
# seed runs them, with the real kubectl: its YAML applied verbatim, the
# objects it describes created (a Deployment of nginx pods), and the status
# and metrics it prints checked; then what the seed says of values that are
# missing ("Missing fields are treated as zero ... it will simply contribute
# 0") and of values that are not quantities (allot's rule:
# docs/custom-quotas.md).
#
#  - "Monitoring" (GlobalCustomQuota cpu-limits, limit 5, limits.cpu of
#    containers and of initContainers over the tenant solar): a Deployment
#    nginx-deployment of 6 pods with limits.cpu 250m in solar-test, no init
#    containers. The seed prints usage used 1500m / available 3500m, 6 claims
#    of 250m named after the pods, Ready True Succeeded "reconciled",
#    namespaces solar-prod and solar-test, its two targets with scope
#    namespace, and the metrics condition 1, limit 5, available 3.5, usage
#    1.5 and (with emitMetricPerClaimUsage, which it says they require) 0.25
#    per pod. Then pods without limits are created and count 0, one with an
#    init container sums both, and the Deployment scaled past the limit gets
#    the quota's denial as its ReplicaSet's FailedCreate event.
#  - "Limit total memory requests of Pods in one namespace" (CustomQuota
#    pod-memory-requests in team-a, 16Gi): a Deployment's pods without init
#    containers, a pod with one (summed), a pod without requests (0), and a
#    pod past 16Gi refused with the exact text.
#  - Values that are not quantities (a ConfigMap's data.size): one stored
#    before the quota makes it Ready=False UnreadableValues naming the object,
#    the path and the value (and its Ready metric 0) while every other write
#    goes through; a create or update that brings one in is refused (403)
#    naming them; fixing the object makes the quota Ready again.
# (The seed's solar-storage-aggregate runs in test_custom_quotas.sh, case
# seed_storage_aggregate, with a pod without ephemeral volumes counted 0.)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl
start_allotd --simulated-nodes 3
cd "$E2E_DIR"

# mkns NAME [k=v]
mkns() {
  local labels=''
  [ -z "${2:-}" ] || labels="{\"${2%%=*}\":\"${2#*=}\"}"
  k create -f - >/dev/null <<EOF
{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"$1"${labels:+,\"labels\":$labels}}}
EOF
}
# allowed WHAT CMD...: CMD succeeds.
allowed() {
  local what=$1 out
  shift
  out=$("$@" 2>&1) || fail "$what: refused: $out"
}
# refused WHAT WANT CMD...: CMD fails with HTTP 403 and a message holding WANT.
refused() {
  local what=$1 want=$2 out
  shift 2
  if out=$("$@" 2>&1); then fail "$what: allowed ($out), want 403 with [$want]"; fi
  expect_contains "$what: HTTP 403" "$out" "Error from server (Forbidden)"
  expect_contains "$what" "$out" "$want"
}
_is() {
  local want=$1
  shift
  [ "$("$@" 2>&1)" == "$want" ]
}
# eventually WHAT WANT CMD...: wait (bounded) for CMD to print WANT.
eventually() {
  local what=$1 want=$2
  shift 2
  wait_until 60 _is "$want" "$@" || true
  expect_eq "$what" "$("$@" 2>&1)" "$want"
}
READY='{.status.conditions[?(@.type=="Ready")].status}|{.status.conditions[?(@.type=="Ready")].reason}|{.status.conditions[?(@.type=="Ready")].message}'
# scrape: the custom quota sample lines of /metrics.
scrape() {
  curl -sS --fail --max-time 20 --cacert "$E2E_DIR/data/ca.crt" \
    -H "Authorization: Bearer $ALLOT_TOKEN" "$ALLOT_URL/metrics" | grep -E '^capsule_(global_)?custom_quota_' || true
}
# running NS N: N pods of the namespace are Running.
running() { [ "$(k get pods -n "$1" --field-selector=status.phase=Running --no-headers 2>/dev/null | wc -l)" -eq "$2" ]; }
pod_names() { k get pods -n "$1" -o 'jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}' | LC_ALL=C sort; }

# ---------------------------------------------------------------- cpu-limits --

mkns solar-test capsule.clastix.io/tenant=solar
mkns solar-prod capsule.clastix.io/tenant=solar

# The seed's "Monitoring" example, as printed (its status block included:
# the status is allot's to write, a client's is ignored).
allowed "apply cpu-limits" k apply -f - <<'EOF'
apiVersion: capsule.clastix.io/v1beta2
kind: GlobalCustomQuota
metadata:
  name: cpu-limits
spec:
  limit: 5
  namespaceSelectors:
  - matchLabels:
      capsule.clastix.io/tenant: solar
  sources:
  - apiVersion: v1
    kind: Pod
    op: add
    path: .spec.containers[*].resources.limits.cpu
  - apiVersion: v1
    kind: Pod
    op: add
    path: .spec.initContainers[*].resources.limits.cpu
status:
  claims:
  - group: ""
    kind: Pod
    name: nginx-deployment-6ff89574f8-299zf
    namespace: solar-test
    uid: f7ff7d7c-7128-4f44-ad13-3c44882420f8
    usage: 250m
    version: v1
  - group: ""
    kind: Pod
    name: nginx-deployment-6ff89574f8-9zzzw
    namespace: solar-test
    uid: 24c1bdea-000d-4e10-8af6-eb23c44ceaa3
    usage: 250m
    version: v1
  - group: ""
    kind: Pod
    name: nginx-deployment-6ff89574f8-gnf8f
    namespace: solar-test
    uid: 25368dd6-b3e7-4cbd-9fc8-9082db50372e
    usage: 250m
    version: v1
  - group: ""
    kind: Pod
    name: nginx-deployment-6ff89574f8-l68c5
    namespace: solar-test
    uid: bb697ba6-6512-4d63-acf8-6d058364c9d4
    usage: 250m
    version: v1
  - group: ""
    kind: Pod
    name: nginx-deployment-6ff89574f8-lrzvd
    namespace: solar-test
    uid: 50556db5-0134-4f0a-a0b8-56235f2bdc59
    usage: 250m
    version: v1
  - group: ""
    kind: Pod
    name: nginx-deployment-6ff89574f8-5hzp9
    namespace: solar-test
    uid: 7c6d1252-f649-4106-bfae-22c558c798df
    usage: 250m
    version: v1
  conditions:
  - lastTransitionTime: "2026-04-17T08:29:15Z"
    message: reconciled
    reason: Succeeded
    status: "True"
    type: Ready
  namespaces:
  - solar-prod
  - solar-test
  targets:
  - group: ""
    kind: Pod
    op: add
    path: .spec.containers[*].resources.limits.cpu
    scope: namespace
    version: v1
  - group: ""
    kind: Pod
    op: add
    path: .spec.initContainers[*].resources.limits.cpu
    scope: namespace
    version: v1
  usage:
    available: 3500m
    used: 1500m
EOF
G='k get gcq cpu-limits -o'
expect_eq "cpu-limits before any pod" "$($G 'jsonpath={.status.usage.used}/{.status.usage.available}')" "0/5"

# The seed's nginx-deployment: 6 pods with limits.cpu 250m, no init containers.
allowed "nginx-deployment" k apply -f - <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx-deployment
  namespace: solar-test
spec:
  replicas: 6
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx
        resources:
          limits:
            cpu: 250m
EOF
allowed "rollout" k rollout status deployment/nginx-deployment -n solar-test --timeout=120s
wait_until 60 running solar-test 6 || fail "6 pods not Running in solar-test"

# its status as the seed prints it
expect_eq "usage" "$($G 'jsonpath={.status.usage.used}/{.status.usage.available}')" "1500m/3500m"
expect_eq "claims" "$($G 'jsonpath={range .status.claims[*]}{.group}|{.kind}|{.namespace}|{.usage}|{.version} {end}')" \
  "$(for _ in 1 2 3 4 5 6; do printf '|Pod|solar-test|250m|v1 '; done)"
expect_eq "claims name the pods" "$($G 'jsonpath={range .status.claims[*]}{.name}{"\n"}{end}' | LC_ALL=C sort)" \
  "$(pod_names solar-test)"
for n in $(pod_names solar-test); do
  [[ $n =~ ^nginx-deployment-[a-z0-9]+-[a-z0-9]{5}$ ]] || fail "pod name $n is not the seed's shape"
done
expect_eq "claims carry the pods' uids" \
  "$($G 'jsonpath={range .status.claims[*]}{.uid}{"\n"}{end}' | LC_ALL=C sort)" \
  "$(k get pods -n solar-test -o 'jsonpath={range .items[*]}{.metadata.uid}{"\n"}{end}' | LC_ALL=C sort)"
expect_eq "Ready" "$($G "jsonpath=$READY")" "True|Succeeded|reconciled"
expect_eq "namespaces" "$($G 'jsonpath={.status.namespaces[*]}')" "solar-prod solar-test"
expect_eq "targets" "$($G 'jsonpath={range .status.targets[*]}{.group}|{.kind}|{.op}|{.path}|{.scope}|{.version} {end}')" \
  '|Pod|add|.spec.containers[*].resources.limits.cpu|namespace|v1 |Pod|add|.spec.initContainers[*].resources.limits.cpu|namespace|v1 '

# its metrics as the seed prints them
m=$(scrape)
for line in 'capsule_global_custom_quota_condition{condition="Ready",custom_quota="cpu-limits"} 1' \
  'capsule_global_custom_quota_resource_limit{custom_quota="cpu-limits"} 5' \
  'capsule_global_custom_quota_resource_available{custom_quota="cpu-limits"} 3.5' \
  'capsule_global_custom_quota_resource_usage{custom_quota="cpu-limits"} 1.5'; do
  grep -qxF "$line" <<<"$m" || fail "metrics lack [$line]: $(grep cpu-limits <<<"$m")"
done
grep -q 'capsule_global_custom_quota_resource_item_usage{custom_quota="cpu-limits"' <<<"$m" &&
  fail "per-claim series without emitMetricPerClaimUsage"
# "Requires .spec.options.emitMetricPerClaimUsage to be enabled"
allowed "emitMetricPerClaimUsage" k patch gcq cpu-limits --type merge -p '{"spec":{"options":{"emitMetricPerClaimUsage":true}}}'
want=$(for n in $(pod_names solar-test); do
  printf 'capsule_global_custom_quota_resource_item_usage{custom_quota="cpu-limits",group="",kind="Pod",name="%s",target_namespace="solar-test"} 0.25\n' "$n"
done)
expect_eq "per-claim series" "$(scrape | grep '_item_usage{custom_quota="cpu-limits"' | LC_ALL=C sort)" "$(LC_ALL=C sort <<<"$want")"

# Missing fields contribute 0: pods without limits (and without init
# containers) are created and counted for 0 in either namespace...
allowed "a pod without limits" k run no-limits -n solar-prod --image=nginx
allowed "a pod without resources" k create -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: bare, namespace: solar-test}
spec:
  containers: [{name: c, image: nginx}]
EOF
expect_eq "usage with pods without limits" "$($G 'jsonpath={.status.usage.used}')" "1500m"
expect_eq "their claims" "$($G 'jsonpath={range .status.claims[?(@.usage=="0")]}{.namespace}/{.name} {end}')" \
  "solar-prod/no-limits solar-test/bare "
expect_eq "still Ready" "$($G "jsonpath=$READY")" "True|Succeeded|reconciled"
# ... and one with an init container sums both sources: 250m + 2 x 250m
allowed "a pod with an init container" k create -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: with-init, namespace: solar-prod}
spec:
  initContainers: [{name: init, image: busybox, resources: {limits: {cpu: 250m}}}]
  containers:
  - {name: a, image: nginx, resources: {limits: {cpu: 250m}}}
  - {name: b, image: nginx, resources: {limits: {cpu: 250m}}}
EOF
expect_eq "its claim" "$($G 'jsonpath={.status.claims[?(@.name=="with-init")].usage}')" "750m"
expect_eq "usage" "$($G 'jsonpath={.status.usage.used}/{.status.usage.available}')" "2250m/2750m"
# Scaled to 17 the pods take the limit exactly (17 x 250m + 750m = 5); the
# 18th is refused, and the ReplicaSet says so as in the seed's event.
allowed "scale 17" k scale deployment/nginx-deployment -n solar-test --replicas=17
eventually "17 pods" 17 sh -c "kubectl --request-timeout=20s get pods -n solar-test -l app=nginx --no-headers | wc -l"
expect_eq "at the limit" "$($G 'jsonpath={.status.usage.used}/{.status.usage.available}')" "5/0"
allowed "scale 18" k scale deployment/nginx-deployment -n solar-test --replicas=18
rs=$(k get rs -n solar-test -l app=nginx -o 'jsonpath={.items[0].metadata.name}')
_failed_create() {
  k get events -n solar-test --field-selector "reason=FailedCreate,involvedObject.name=$rs" \
    -o 'jsonpath={range .items[*]}{.message}{"\n"}{end}' | grep -F "$1"
}
want='creating resource exceeds limit for GlobalCustomQuota "cpu-limits" (requested=250m, currentUsed=5250m, available=0, limit=5, inflightReserved=0)'
wait_until 60 _failed_create "$want" || fail "no FailedCreate with [$want]: $(k get events -n solar-test --field-selector reason=FailedCreate -o 'jsonpath={.items[*].message}')"
expect_eq "17 pods still" "$(k get pods -n solar-test -l app=nginx --no-headers | wc -l)" 17
expect_eq "usage" "$($G 'jsonpath={.status.usage.used}')" "5"
allowed "delete nginx-deployment" k delete deployment nginx-deployment -n solar-test --wait=true --timeout=60s
allowed "delete the gcq" k delete gcq cpu-limits

# ------------------------------------------------------- pod-memory-requests --

mkns team-a
allowed "apply pod-memory-requests" k apply -f - <<'EOF'
apiVersion: capsule.clastix.io/v1beta2
kind: CustomQuota
metadata:
  name: pod-memory-requests
  namespace: team-a
spec:
  limit: 16Gi
  sources:
    - apiVersion: v1
      kind: Pod
      op: add
      path: .spec.containers[*].resources.requests.memory
    - apiVersion: v1
      kind: Pod
      op: add
      path: .spec.initContainers[*].resources.requests.memory
EOF
Q='k get cq pod-memory-requests -n team-a -o'
allowed "web" k apply -f - <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: team-a}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx, resources: {requests: {memory: 1Gi}}}
EOF
eventually "4 web pods counted" "4Gi" $Q 'jsonpath={.status.usage.used}'
expect_eq "their claims" "$($Q 'jsonpath={range .status.claims[*]}{.usage} {end}')" "1Gi 1Gi 1Gi 1Gi "
allowed "a pod with an init container" k create -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: migrate, namespace: team-a}
spec:
  initContainers: [{name: migrate, image: busybox, resources: {requests: {memory: 512Mi}}}]
  containers: [{name: app, image: nginx, resources: {requests: {memory: 256Mi}}}]
EOF
allowed "a pod without requests" k run idle -n team-a --image=nginx
expect_eq "usage" "$($Q 'jsonpath={.status.usage.used}/{.status.usage.available}')" "4864Mi/11520Mi"
expect_eq "claims" "$($Q 'jsonpath={.status.claims[?(@.name=="migrate")].usage} {.status.claims[?(@.name=="idle")].usage}')" "768Mi 0"
expect_eq "Ready" "$($Q "jsonpath=$READY")" "True|Succeeded|reconciled"
refused "a pod past 16Gi" \
  'pods "big" is forbidden: creating resource exceeds limit for CustomQuota "pod-memory-requests" (requested=12Gi, currentUsed=17152Mi, available=0, limit=16Gi, inflightReserved=0)' \
  k run big -n team-a --image=nginx --overrides='{"spec":{"containers":[{"name":"big","image":"nginx","resources":{"requests":{"memory":"12Gi"}}}]}}'
expect_eq "usage unchanged" "$($Q 'jsonpath={.status.usage.used}')" "4864Mi"

# ------------------------------------------------ values that are not quantities --

mkns unread
allowed "a ConfigMap with size abc" k create configmap old -n unread --from-literal=size=abc
allowed "cm-size" k apply -f - <<'EOF'
apiVersion: capsule.clastix.io/v1beta2
kind: CustomQuota
metadata:
  name: cm-size
  namespace: unread
spec:
  limit: 10Gi
  sources:
    - apiVersion: v1
      kind: ConfigMap
      op: add
      path: .data.size
EOF
C='k get cq cm-size -n unread -o'
QTY_RE="quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)\$'"
expect_eq "Ready names the object, the path and the value" "$($C "jsonpath=$READY")" \
  "False|UnreadableValues|1 object with values this quota cannot read (a value that is not a quantity counts 0, a selector that cannot be evaluated does not select): get usage from unread/old (/v1, Kind=ConfigMap) source path \".data.size\" cel \"\" op \"add\" did not resolve to a valid quantity: invalid quantity \"abc\": $QTY_RE"
grep -qxF 'capsule_custom_quota_condition{condition="Ready",custom_quota="cm-size",target_namespace="unread"} 0' <<<"$(scrape)" ||
  fail "Ready metric not 0: $(scrape | grep cm-size)"
# every other write goes through: ConfigMaps with and without a size, the
# object itself relabelled
allowed "a ConfigMap of 1Gi" k create configmap good -n unread --from-literal=size=1Gi
allowed "a ConfigMap without size" k create configmap other -n unread --from-literal=colour=blue
allowed "relabel the unreadable one" k label configmap old -n unread team=a
expect_eq "usage" "$($C 'jsonpath={.status.usage.used}')" "1Gi"
# a write that brings a bad value in is refused, naming the path and value
refused "a create with size lots" \
  'creating resource unread/bad (/v1, Kind=ConfigMap) cannot be admitted because custom quota usage could not be calculated: CustomQuota "cm-size" source path ".data.size" cel "" op "add" did not resolve to a valid quantity: invalid quantity "lots"' \
  k create -f - <<<'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad","namespace":"unread"},"data":{"size":"lots"}}'
refused "an update to size x" \
  'updating resource unread/good (/v1, Kind=ConfigMap) cannot be admitted because new custom quota usage could not be calculated: CustomQuota "cm-size" source path ".data.size" cel "" op "add" did not resolve to a valid quantity: invalid quantity "x"' \
  k patch configmap good -n unread --type merge -p '{"data":{"size":"x"}}'
expect_eq "usage unchanged" "$($C 'jsonpath={.status.usage.used}')" "1Gi"
# fixed: counted, and the quota is Ready again
allowed "fix it" k patch configmap old -n unread --type merge -p '{"data":{"size":"2Gi"}}'
expect_eq "usage" "$($C 'jsonpath={.status.usage.used}/{.status.usage.available}')" "3Gi/7Gi"
expect_eq "Ready" "$($C "jsonpath=$READY")" "True|Succeeded|reconciled"
grep -qxF 'capsule_custom_quota_condition{condition="Ready",custom_quota="cm-size",target_namespace="unread"} 1' <<<"$(scrape)" ||
  fail "Ready metric not 1: $(scrape | grep cm-size)"

expect_eq "alive" "$(api GET /healthz | tail -n1)" 200
stop_allotd
echo "test_custom_quota_seed: ok"
