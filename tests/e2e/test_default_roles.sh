# test_default_roles.sh - upstream's default roles with the real kubectl: a
# tenant `admin` creates a Job, a CronJob and a StatefulSet; `view` reads
# them and may not create; a member of group system:monitoring reads
# /metrics and a plain user gets upstream's 403; and a default role changed
# by an older build (or by hand) is reconciled at the next start as
# upstream's bootstrap does: missing rules added, additions kept, and
# autoupdate "false" respected.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl

start_allotd --simulated-nodes 1
D="$E2E_DIR/data"

expect_forbidden() {
  local what=$1 want=$2 out; shift 2
  if out=$("$@" 2>&1); then fail "$what: succeeded: $out"; fi
  case $out in *"$want"*) ;; *) fail "$what: $out (want ...$want)" ;; esac
}
kc() { "$ALLOTD" kubeconfig --data-dir "$D" --user "$1" "${@:2}" --out "$E2E_DIR/$1.kubeconfig" 2>/dev/null; }

k create namespace t >/dev/null
k create rolebinding t-admin --clusterrole=admin --user=alice -n t >/dev/null
k create rolebinding t-view --clusterrole=view --user=vic -n t >/dev/null
kc alice
kc vic
kc prom --group system:monitoring
kc bob
KA=(--kubeconfig "$E2E_DIR/alice.kubeconfig")
KV=(--kubeconfig "$E2E_DIR/vic.kubeconfig")

# ---- the tenant admin runs workloads ----
k "${KA[@]}" create job once -n t --image=busybox >/dev/null
k "${KA[@]}" create cronjob nightly -n t --image=busybox --schedule='@daily' >/dev/null
cat <<'YAML' | k "${KA[@]}" create -f - >/dev/null
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: t}
spec:
  serviceName: db
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres}]}
YAML
expect_eq "admin can-i create daemonsets" "$(k "${KA[@]}" auth can-i create daemonsets.apps -n t)" yes
expect_eq "admin may not write quota" "$(k "${KA[@]}" auth can-i update resourcequotas -n t 2>/dev/null || true)" no
expect_eq "admin can-i create claims" "$(k "${KA[@]}" auth can-i create resourcepoolclaims.capsule.clastix.io -n t)" yes

# ---- view reads them, creates nothing ----
expect_eq "view gets the job" "$(k "${KV[@]}" get job once -n t -o jsonpath='{.metadata.name}')" once
expect_eq "view gets the cronjob" "$(k "${KV[@]}" get cronjob nightly -n t -o jsonpath='{.spec.schedule}')" '@daily'
expect_eq "view gets the statefulset" "$(k "${KV[@]}" get statefulset db -n t -o jsonpath='{.spec.serviceName}')" db
expect_eq "view can-i get pods/log" "$(k "${KV[@]}" auth can-i get pods --subresource=log -n t)" yes
expect_forbidden "view creates a job" \
  'jobs.batch is forbidden: User "vic" cannot create resource "jobs" in API group "batch" in the namespace "t"' \
  k "${KV[@]}" create job other -n t --image=busybox
expect_forbidden "view creates a statefulset" \
  'User "vic" cannot create resource "statefulsets" in API group "apps" in the namespace "t"' \
  k "${KV[@]}" create -f - <<'YAML'
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db2, namespace: t}
spec:
  serviceName: db2
  selector: {matchLabels: {app: db2}}
  template:
    metadata: {labels: {app: db2}}
    spec: {containers: [{name: db, image: postgres}]}
YAML
expect_forbidden "view deletes the cronjob" \
  'User "vic" cannot delete resource "cronjobs" in API group "batch" in the namespace "t"' \
  k "${KV[@]}" delete cronjob nightly -n t
expect_forbidden "view reads secrets" 'cannot list resource "secrets"' k "${KV[@]}" get secrets -n t

# ---- system:monitoring ----
out=$(k --kubeconfig "$E2E_DIR/prom.kubeconfig" get --raw /metrics)
expect_contains "monitoring reads /metrics" "$out" "apiserver_request_total"
k --kubeconfig "$E2E_DIR/prom.kubeconfig" get --raw /livez >/dev/null
expect_forbidden "a plain user reads /metrics" 'User "bob" cannot get path "/metrics"' \
  k --kubeconfig "$E2E_DIR/bob.kubeconfig" get --raw /metrics
expect_eq "binding" "$(k get clusterrolebinding system:monitoring -o jsonpath='{.subjects[0].kind}/{.subjects[0].name}')" Group/system:monitoring

# ---- reconciliation at start ----
# as an older build left it: no batch rules, and a rule an administrator added
k patch clusterrole system:aggregate-to-edit --type json -p '[
  {"op":"replace","path":"/rules","value":[
    {"apiGroups":[""],"resources":["pods"],"verbs":["create","delete","deletecollection","patch","update"]},
    {"apiGroups":["example.com"],"resources":["widgets"],"verbs":["get"]}]}]' >/dev/null
k label clusterrole system:aggregate-to-edit team=platform >/dev/null
# a protected role is left alone
k patch clusterrole system:aggregate-to-view --type json -p '[
  {"op":"replace","path":"/rules","value":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]},
  {"op":"replace","path":"/metadata/annotations/rbac.authorization.kubernetes.io~1autoupdate","value":"false"}]' >/dev/null
# a binding that lost a subject and gained one
k patch clusterrolebinding system:monitoring --type json -p '[
  {"op":"replace","path":"/subjects","value":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"carl"}]}]' >/dev/null
expect_eq "edit lost batch" "$(k "${KA[@]}" auth can-i create jobs.batch -n t 2>/dev/null || true)" no
stop_allotd
start_allotd --simulated-nodes 1
rules=$(k get clusterrole system:aggregate-to-edit -o json)
expect_contains "batch rule restored" "$rules" '"batch"'
expect_contains "addition kept" "$rules" '"example.com"'
expect_eq "label kept" "$(k get clusterrole system:aggregate-to-edit -o jsonpath='{.metadata.labels.team}')" platform
expect_eq "admin may create jobs again" "$(k "${KA[@]}" auth can-i create jobs.batch -n t)" yes
expect_eq "admin's stored rules name batch" \
  "$(k get clusterrole admin -o jsonpath='{.rules[*].apiGroups}' | grep -c batch)" 1
expect_eq "protected role untouched" \
  "$(k get clusterrole system:aggregate-to-view -o jsonpath='{.rules}')" '[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]'
expect_eq "view lost statefulsets (protected)" "$(k "${KV[@]}" auth can-i get statefulsets.apps -n t 2>/dev/null || true)" no
expect_eq "monitoring subjects" \
  "$(k get clusterrolebinding system:monitoring -o jsonpath='{range .subjects[*]}{.kind}/{.name} {end}')" \
  "User/carl Group/system:monitoring "
k --kubeconfig "$E2E_DIR/prom.kubeconfig" get --raw /metrics >/dev/null
stop_allotd
echo "test_default_roles: ok"
