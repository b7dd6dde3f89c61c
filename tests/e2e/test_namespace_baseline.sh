# test_namespace_baseline.sh - what upstream puts in every namespace, with the
# real kubectl: ServiceAccount "default" and ConfigMap kube-root-ca.crt (the
# CA, upstream's description) appear in a new namespace, come back when
# deleted or changed, count against quota and are refused by it like any
# ConfigMap (then appear once the quota allows); a namespace holding them
# still deletes. And the first run: with --simulated-nodes a pod reaches
# Running and Ready.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl

start_allotd --simulated-nodes 3
CA="$E2E_DIR/data/ca.crt"

has_sa() { k get sa default -n "$1" -o name; }
ca_matches() {
  k get configmap kube-root-ca.crt -n "$1" -o jsonpath='{.data.ca\.crt}' >"$E2E_DIR/got.pem" &&
    cmp -s "$E2E_DIR/got.pem" "$CA"
}
uid_of() { k get "$1" "$2" -n "$3" -o jsonpath='{.metadata.uid}'; }
uid_changed() { local u; u=$(uid_of "$1" "$2" "$3") && [ -n "$u" ] && [ "$u" != "$4" ]; }

# --- a new namespace gets both; kubectl get sa lists default ---
k create namespace demo >/dev/null
wait_until 20 has_sa demo || fail "ServiceAccount default did not appear in demo"
expect_contains "kubectl get sa" "$(k get sa -n demo)" "default"
wait_until 20 ca_matches demo || fail "kube-root-ca.crt does not hold ca.crt in demo"
expect_eq "description" \
  "$(k get cm kube-root-ca.crt -n demo -o jsonpath='{.metadata.annotations.kubernetes\.io/description}')" \
  "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."
# the bootstrap namespaces too (initial sync)
wait_until 20 has_sa kube-system || fail "no ServiceAccount default in kube-system"
wait_until 20 ca_matches default || fail "no kube-root-ca.crt in default"

# --- deleted: both come back (new objects) ---
sa_uid=$(uid_of sa default demo)
cm_uid=$(uid_of cm kube-root-ca.crt demo)
k delete sa default -n demo >/dev/null
k delete configmap kube-root-ca.crt -n demo >/dev/null
wait_until 20 uid_changed sa default demo "$sa_uid" || fail "ServiceAccount default not recreated"
wait_until 20 uid_changed cm kube-root-ca.crt demo "$cm_uid" || fail "kube-root-ca.crt not recreated"
wait_until 20 ca_matches demo || fail "recreated kube-root-ca.crt lacks the CA"

# --- drift: the publisher puts the CA back ---
k patch configmap kube-root-ca.crt -n demo --type merge -p '{"data":{"ca.crt":"tampered"}}' >/dev/null
wait_until 20 ca_matches demo || fail "kube-root-ca.crt data not restored after drift"

# --- quota counts it: configmaps: "2" admits exactly one ConfigMap more ---
k create namespace q >/dev/null
wait_until 20 ca_matches q || fail "no kube-root-ca.crt in q"
k create quota cm --hard=configmaps=2 -n q >/dev/null
used_is() { [ "$(k get quota "$1" -n "$2" -o jsonpath='{.status.used.'"$3"'}')" = "$4" ]; }
wait_until 20 used_is cm q configmaps 1 || fail "quota cm does not count kube-root-ca.crt"
k create configmap one -n q --from-literal=a=b >/dev/null
out=$(k create configmap two -n q --from-literal=a=b 2>&1) && fail "second ConfigMap admitted: $out"
expect_contains "refusal" "$out" \
  'configmaps "two" is forbidden: exceeded quota: cm, requested: configmaps=1, used: configmaps=2, limited: configmaps=2'

# --- a quota that refuses kube-root-ca.crt: absent until the quota allows ---
k create namespace zero >/dev/null
wait_until 20 ca_matches zero || fail "no kube-root-ca.crt in zero"
k create quota none --hard=count/configmaps=0 -n zero >/dev/null
wait_until 20 used_is none zero 'count/configmaps' 1 || fail "quota none does not count it"
k delete configmap kube-root-ca.crt -n zero >/dev/null
# the recreate is refused: usage falls to 0 and stays there while the quota is 0
wait_until 20 used_is none zero 'count/configmaps' 0 || fail "usage did not fall to 0"
k get configmap kube-root-ca.crt -n zero >/dev/null 2>&1 && fail "kube-root-ca.crt created past a zero quota"
# nothing else in the namespace is held back: the ServiceAccount is there
has_sa zero >/dev/null || fail "ServiceAccount default missing in zero"
k patch quota none -n zero --type merge -p '{"spec":{"hard":{"count/configmaps":"1"}}}' >/dev/null
wait_until 20 ca_matches zero || fail "kube-root-ca.crt did not appear once the quota allowed it"
wait_until 20 used_is none zero 'count/configmaps' 1 || fail "raised quota does not count it"

# --- a namespace holding them still deletes ---
k delete namespace demo --wait=false >/dev/null
gone() { ! k get namespace demo >/dev/null 2>&1; }
wait_until 30 gone || fail "namespace demo was not deleted: $(k get ns demo -o yaml)"

# --- first run: simulated nodes run a newcomer's pod ---
expect_eq "simulated nodes" "$(k get nodes -o name | sort | tr '\n' ' ')" \
  "node/allot-node-1 node/allot-node-2 node/allot-node-3 "
k run hello --image=nginx >/dev/null
k wait --for=condition=Ready pod/hello --timeout=30s >/dev/null || fail "pod hello not Ready"
expect_eq "hello phase" "$(k get pod hello -o jsonpath='{.status.phase}')" "Running"

# a restart with the flag keeps the nodes (created only where absent)
stop_allotd
start_allotd --simulated-nodes 3
expect_eq "nodes after restart" "$(k get nodes -o name | wc -l)" "3"
stop_allotd

# the flag needs the node agent
rc=0
"$ALLOTD" --data-dir "$E2E_DIR/data2" --simulated-nodes 2 --node-agent false 2>"$E2E_DIR/err" || rc=$?
expect_eq "--simulated-nodes without node agent" "$rc" "2"
expect_contains "message" "$(cat "$E2E_DIR/err")" "--simulated-nodes needs --node-agent true"
echo PASS
