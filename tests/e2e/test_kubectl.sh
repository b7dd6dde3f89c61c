# test_kubectl.sh - the real kubectl against a real allotd: every verb the
# README promises, on several kinds, and seed 004's quota walkthrough.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl
start_allotd

# version and discovery
k version -o json | grep_all '"serverVersion"' || fail "kubectl version shows no server version"
res=$(k api-resources --no-headers)
for r in pods namespaces resourcequotas limitranges services persistentvolumeclaims configmaps \
         secrets replicationcontrollers serviceaccounts events nodes priorityclasses \
         storageclasses deployments replicasets; do
  echo "$res" | grep_all -w "^$r" || fail "api-resources lacks $r"
done

# bootstrap namespaces
for ns in default kube-system kube-public kube-node-lease; do
  k get namespace "$ns" -o name | grep_all "namespace/$ns" || fail "namespace $ns missing"
done

# create -f, get (table, yaml, json, jsonpath), describe
k create namespace myspace
cat >"$E2E_DIR/pod.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: myspace
  labels: {app: web}
spec:
  containers:
  - name: nginx
    image: nginx:1.25
    resources:
      limits: {cpu: 500m, memory: 128Mi}
YAML
k create -f "$E2E_DIR/pod.yaml" | grep_all 'pod/web created' || fail "create pod"
out=$(k get pods -n myspace)
expect_contains "get pods header" "$out" "NAME"
expect_contains "get pods row" "$out" "web"
expect_contains "get pods status" "$out" "Pending"
expect_eq "jsonpath requests (limits defaulted into requests)" \
  "$(k get pod web -n myspace -o jsonpath='{.spec.containers[0].resources.requests.cpu}')" "500m"
expect_eq "qosClass" "$(k get pod web -n myspace -o jsonpath='{.status.qosClass}')" "Guaranteed"
k get pod web -n myspace -o yaml | grep_all 'restartPolicy: Always' || fail "-o yaml defaults"
k get pod web -n myspace -o json | grep_all '"uid"' || fail "-o json uid"
k describe pod web -n myspace | grep_all 'nginx:1.25' || fail "describe pod"

# create an existing object: AlreadyExists
if k create -f "$E2E_DIR/pod.yaml" 2>"$E2E_DIR/err"; then fail "duplicate create succeeded"; fi
grep -q 'AlreadyExists' "$E2E_DIR/err" || grep_all 'already exists' "$E2E_DIR/err" || fail "duplicate create error: $(cat "$E2E_DIR/err")"

# apply twice (idempotent), then a change
cat >"$E2E_DIR/cm.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: myspace
data:
  color: blue
YAML
k apply -f "$E2E_DIR/cm.yaml" | grep_all 'configmap/settings created' || fail "apply create"
rv1=$(k get cm settings -n myspace -o jsonpath='{.metadata.resourceVersion}')
k apply -f "$E2E_DIR/cm.yaml" | grep_all 'configmap/settings unchanged' || fail "second apply not unchanged"
rv2=$(k get cm settings -n myspace -o jsonpath='{.metadata.resourceVersion}')
expect_eq "apply twice keeps resourceVersion" "$rv2" "$rv1"
sed -i 's/blue/green/' "$E2E_DIR/cm.yaml"
k apply -f "$E2E_DIR/cm.yaml" | grep_all 'configmap/settings configured' || fail "apply change"
expect_eq "applied value" "$(k get cm settings -n myspace -o jsonpath='{.data.color}')" "green"

# label, annotate, patch (merge, json, strategic)
k label pod web -n myspace tier=frontend >/dev/null
expect_eq "label" "$(k get pod web -n myspace -o jsonpath='{.metadata.labels.tier}')" "frontend"
k get pods -n myspace -l tier=frontend -o name | grep_all 'pod/web' || fail "label selector"
[ -z "$(k get pods -n myspace -l tier=backend -o name)" ] || fail "label selector matched wrongly"
k label pod web -n myspace tier- >/dev/null
expect_eq "label removed" "$(k get pod web -n myspace -o jsonpath='{.metadata.labels.tier}')" ""
k annotate pod web -n myspace note=hello >/dev/null
expect_eq "annotate" "$(k get pod web -n myspace -o jsonpath='{.metadata.annotations.note}')" "hello"
k patch cm settings -n myspace --type merge -p '{"data":{"size":"L"}}' >/dev/null
expect_eq "merge patch" "$(k get cm settings -n myspace -o jsonpath='{.data.size}')" "L"
k patch cm settings -n myspace --type json -p '[{"op":"remove","path":"/data/size"}]' >/dev/null
expect_eq "json patch" "$(k get cm settings -n myspace -o jsonpath='{.data.size}')" ""
k patch pod web -n myspace -p '{"spec":{"containers":[{"name":"nginx","image":"nginx:1.26"}]}}' >/dev/null
expect_eq "strategic patch" "$(k get pod web -n myspace -o jsonpath='{.spec.containers[0].image}')" "nginx:1.26"
expect_eq "strategic patch keeps resources" \
  "$(k get pod web -n myspace -o jsonpath='{.spec.containers[0].resources.limits.cpu}')" "500m"

# optimistic concurrency: a stale resourceVersion is a 409 Conflict
k get cm settings -n myspace -o json | sed 's/"resourceVersion": "[0-9]*"/"resourceVersion": "1"/' >"$E2E_DIR/stale.json"
if k replace -f "$E2E_DIR/stale.json" 2>"$E2E_DIR/err"; then fail "stale replace succeeded"; fi
grep -q 'the object has been modified' "$E2E_DIR/err" || fail "conflict message: $(cat "$E2E_DIR/err")"

# other kinds round-trip and print
k create service nodeport web-np -n myspace --tcp=80:8080 >/dev/null
k get svc -n myspace | grep_all 'web-np' || fail "service listed"
k create secret generic creds -n myspace --from-literal=user=admin >/dev/null
k get secret creds -n myspace | grep_all 'Opaque' || fail "secret type column"
k create deployment app -n myspace --image=nginx --replicas=2 >/dev/null
expect_eq "deployment replicas" "$(k get deploy app -n myspace -o jsonpath='{.spec.replicas}')" "2"
k scale deployment app -n myspace --replicas=3 >/dev/null
expect_eq "scaled" "$(k get deploy app -n myspace -o jsonpath='{.spec.replicas}')" "3"
k create priorityclass high --value=1000 >/dev/null
k get priorityclass high | grep_all 1000 || fail "priorityclass value column"

# watch: a change made while kubectl get -w runs shows up
(k get cm -n myspace -w --request-timeout=15s >"$E2E_DIR/watch.out" 2>&1 &)
wait_until 10 grep -q settings "$E2E_DIR/watch.out" || fail "watch initial list"
k create configmap watched -n myspace --from-literal=a=b >/dev/null
wait_until 10 grep -q watched "$E2E_DIR/watch.out" || fail "watch did not see the new configmap"

# delete
k delete pod web -n myspace | grep_all 'pod "web" deleted' || fail "delete pod"
if k get pod web -n myspace 2>"$E2E_DIR/err"; then fail "deleted pod still there"; fi
grep -q 'NotFound\|not found' "$E2E_DIR/err" || fail "get deleted: $(cat "$E2E_DIR/err")"

# (seed 004's quota walkthrough is in test_quota_seeds.sh)

# namespace deletion removes its contents, then the namespace
k delete namespace myspace --wait=false >/dev/null
wait_until 30 bash -c "! kubectl get namespace myspace" || fail "namespace myspace not removed"
if k create configmap x -n myspace 2>"$E2E_DIR/err"; then fail "create in deleted namespace"; fi
grep -q 'not found' "$E2E_DIR/err" || fail "create in missing namespace: $(cat "$E2E_DIR/err")"

stop_allotd
echo "test_kubectl: ok"
