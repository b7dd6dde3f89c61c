#!/usr/bin/env bash
# test_deploy.sh ALLOTD - the in-cluster deployment (deploy/cluster, the
# kustomize base) on a real kube-apiserver v1.20.2 (scripts/kube-up.sh),
# installed as the README's "Cluster mode" says:
#   - kubectl 1.20's own kustomize (v2.0.3) renders the base;
#   - `allotd tls` makes the CA and serving certificate (SAN
#     allot.allot-system.svc), the Secret allot-tls holds what --tls-dir reads;
#   - apply -k creates every object; the CA patched into the webhook
#     configuration (`allotd webhook-config --ca`) survives a second apply -k;
#   - the ServiceAccount may do what cluster mode needs and not more
#     (kubectl auth can-i --as it);
#   - allotd in cluster mode with that ServiceAccount's token and --tls-dir
#     fills its mirror (/readyz 200 through the shared certificate): the
#     ClusterRole is enough for what it watches.
# No kubelet: the Deployment's pods never run, so nothing waits for them.
# Exit 77 (skipped) without the kube binaries or etcd.
set -euo pipefail
ALLOTD=${1:?usage: test_deploy.sh ALLOTD}
. "$(dirname "$0")/lib.sh"
# kubectl 1.20's own (kustomize v2.0.3, what the base must keep to), not the
# system's that lib.sh falls back to.
[ -x "$kbin/kubectl" ] || { echo "SKIP: no $kbin/kubectl (scripts/kube-build.sh)"; exit 77; }
base=$cluster_root/deploy/cluster

# ---- kubectl 1.20's kustomize renders the base ----
"$KUBECTL" kustomize "$base" >"$E2E_DIR/rendered.yaml" || fail "kubectl kustomize $base"
kinds=$(/usr/bin/python3 - "$E2E_DIR/rendered.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
print(" ".join(sorted(f'{d["kind"]}/{d["metadata"]["name"]}' for d in docs)))
PY
)
want="ClusterRole/allot ClusterRoleBinding/allot CustomResourceDefinition/customquotas.capsule.clastix.io \
CustomResourceDefinition/globalcustomquotas.capsule.clastix.io CustomResourceDefinition/resourcepoolclaims.capsule.clastix.io \
CustomResourceDefinition/resourcepools.capsule.clastix.io Deployment/allot MutatingWebhookConfiguration/allot.dev Namespace/allot-system \
PodDisruptionBudget/allot Role/allot-leader-election RoleBinding/allot-leader-election Service/allot \
ServiceAccount/allot ValidatingWebhookConfiguration/allot.dev"
[ "$kinds" = "$want" ] || fail "rendered: $kinds"

# ---- the TLS material: one CA, a serving certificate for the Service ----
"$ALLOTD" tls --out "$E2E_DIR/tls" 2>/dev/null || fail "allotd tls"
/usr/bin/openssl x509 -in "$E2E_DIR/tls/server.crt" -noout -ext subjectAltName | grep -q 'DNS:allot.allot-system.svc,' ||
  fail "server.crt lacks allot.allot-system.svc"
/usr/bin/openssl verify -CAfile "$E2E_DIR/tls/ca.crt" "$E2E_DIR/tls/server.crt" >/dev/null || fail "server.crt not signed by ca.crt"
# Run again: the CA is kept (the caBundle stays valid), the pair reused.
ca_sum=$(sha256sum <"$E2E_DIR/tls/ca.crt")
"$ALLOTD" tls --out "$E2E_DIR/tls" 2>/dev/null || fail "allotd tls, again"
[ "$(sha256sum <"$E2E_DIR/tls/ca.crt")" = "$ca_sum" ] || fail "allotd tls replaced the CA"

# ---- install, as the README says ----
kube_up
kc apply -f "$base/namespace.yaml" >/dev/null
kc create secret generic allot-tls -n allot-system --from-file="$E2E_DIR/tls/ca.crt" \
  --from-file="$E2E_DIR/tls/server.crt" --from-file="$E2E_DIR/tls/server.key" >/dev/null
kc apply -k "$base" >"$E2E_DIR/apply.out" || fail "apply -k: $(cat "$E2E_DIR/apply.out")"
kc patch validatingwebhookconfiguration allot.dev -p "$("$ALLOTD" webhook-config --ca "$E2E_DIR/tls/ca.crt")" >/dev/null
ca64=$(base64 -w0 <"$E2E_DIR/tls/ca.crt")
bundles() { kc get validatingwebhookconfiguration allot.dev -o jsonpath='{range .webhooks[*]}{.clientConfig.caBundle}{"\n"}{end}'; }
[ "$(bundles | sort -u)" = "$ca64" ] || fail "caBundle after patch: $(bundles | head -c 200)"
[ "$(bundles | wc -l)" = 6 ] || fail "webhooks: $(bundles | wc -l)"
kc patch mutatingwebhookconfiguration allot.dev -p "$("$ALLOTD" webhook-config --mutating --ca "$E2E_DIR/tls/ca.crt")" >/dev/null
mbundles() { kc get mutatingwebhookconfiguration allot.dev -o jsonpath='{range .webhooks[*]}{.clientConfig.caBundle}{"\n"}{end}'; }
[ "$(mbundles | sort -u)" = "$ca64" ] || fail "mutating caBundle after patch: $(mbundles | head -c 200)"
[ "$(mbundles | wc -l)" = 2 ] || fail "mutating webhooks: $(mbundles | wc -l)"
kc apply -k "$base" >/dev/null
[ "$(bundles | sort -u)" = "$ca64" ] || fail "a second apply -k dropped the caBundle"
[ "$(mbundles | sort -u)" = "$ca64" ] || fail "a second apply -k dropped the mutating caBundle"
svc=$(kc get validatingwebhookconfiguration allot.dev -o jsonpath='{.webhooks[0].clientConfig.service.namespace}/{.webhooks[0].clientConfig.service.name}:{.webhooks[0].clientConfig.service.port}{.webhooks[0].clientConfig.service.path}')
[ "$svc" = "allot-system/allot:443/admission/v1/validate" ] || fail "webhook service: $svc"
[ "$(kc get svc allot -n allot-system -o jsonpath='{.spec.ports[0].port}->{.spec.ports[0].targetPort}')" = "443->https" ] ||
  fail "service ports"
[ "$(kc get deploy allot -n allot-system -o jsonpath='{.spec.replicas}')" = 2 ] || fail "replicas"
[ "$(kc get pdb allot -n allot-system -o jsonpath='{.spec.minAvailable}')" = 1 ] || fail "pdb"
# The Secret's keys are the file names --tls-dir reads (server/tls.h).
keys=$(kc get secret allot-tls -n allot-system -o jsonpath='{.data}' |
  /usr/bin/python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin))))')
[ "$keys" = "ca.crt server.crt server.key" ] || fail "secret keys: $keys"
# The controller manager takes the Deployment up to its pods (Pending: no kubelet).
pods_made() { [ "$(kc get pods -n allot-system -l app.kubernetes.io/name=allot -o name | wc -l)" = 2 ]; }
wait_until 60 pods_made ||
  fail "the Deployment's 2 pods were not created"

# ---- least privilege: what the ServiceAccount may do ----
sa=system:serviceaccount:allot-system:allot
can() { # yes|no VERB RESOURCE [ARGS...]
  local want=$1 got; shift
  got=$(kc auth can-i --as="$sa" "$@" 2>/dev/null || true)
  [ "$got" = "$want" ] || fail "can-i $*: $got, want $want"
}
for r in namespaces pods resourcequotas limitranges resourcepools.capsule.clastix.io \
  resourcepoolclaims.capsule.clastix.io customquotas.capsule.clastix.io globalcustomquotas.capsule.clastix.io; do
  can yes list "$r" -A
  can yes watch "$r" -A
done
for r in resourcepools resourcepoolclaims customquotas globalcustomquotas; do
  can yes update "$r.capsule.clastix.io" --subresource=status -n tenant
  can yes patch "$r.capsule.clastix.io" --subresource=status -n tenant
  can no update "$r.capsule.clastix.io" -n tenant # the spec is the users'
  can no create "$r.capsule.clastix.io" -n tenant
  can no delete "$r.capsule.clastix.io" -n tenant
done
for v in get create update patch delete; do can yes "$v" resourcequotas/capsule-pool-solar -n tenant; done
can yes update resourcequotas --subresource=status -n tenant # the release guard
can no patch resourcequotas --subresource=status -n tenant
can yes create events -n tenant
for v in get create update; do can yes "$v" leases.coordination.k8s.io -n allot-system; done
for v in get create update delete; do can no "$v" leases.coordination.k8s.io -n kube-system; done
can no delete leases.coordination.k8s.io -n allot-system
can no list leases.coordination.k8s.io -A
can no list secrets -A
can no get secrets/allot-tls -n allot-system
can no list configmaps -A
# deferred quota: the bind reads and binds the pod, the wake-up annotates it
can yes get pods -n tenant
can yes patch pods -n tenant
can yes create pods --subresource=binding -n tenant
for v in create update delete; do can no "$v" pods -n tenant; done
can no update pods --subresource=status -n tenant
can no create pods/eviction -n tenant
can yes patch namespaces/tenant # the allot.dev/pooled label
for v in create update delete; do can no "$v" namespaces; done
can no create customresourcedefinitions.apiextensions.k8s.io
can yes list customresourcedefinitions.apiextensions.k8s.io # a counted kind's definition
can no patch validatingwebhookconfigurations.admissionregistration.k8s.io
# the counted kinds' rules: its own configuration only
for v in get update; do can yes "$v" validatingwebhookconfigurations.admissionregistration.k8s.io/allot.dev; done
can no update validatingwebhookconfigurations.admissionregistration.k8s.io/other
can no list validatingwebhookconfigurations.admissionregistration.k8s.io
can no update events -n tenant
can no create deployments.apps -n allot-system
can no create serviceaccounts/token -n allot-system

# ---- allotd in cluster mode as that ServiceAccount, with the shared TLS ----
# The token Secret the 1.20 controller manager makes for the account.
token_made() { [ -n "$(kc get sa allot -n allot-system -o jsonpath='{.secrets[0].name}')" ]; }
wait_until 60 token_made ||
  fail "no token Secret for the ServiceAccount"
tok=$(kc get secret -n allot-system "$(kc get sa allot -n allot-system -o jsonpath='{.secrets[0].name}')" \
  -o jsonpath='{.data.token}' | base64 -d)
cat >"$E2E_DIR/sa.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "$KUBE_URL", certificate-authority-data: "$(base64 -w0 <"$KUBE_DIR/ca.crt")"}
users:
- name: allot
  user: {token: "$tok"}
contexts:
- name: c
  context: {cluster: c, user: allot}
current-context: c
KC
port=$(free_port)
# CLUSTER_PID, CLUSTER_LOG: lib.sh's cleanup kills it and shows its log.
POD_NAMESPACE=allot-system "$ALLOTD" --cluster-kubeconfig "$E2E_DIR/sa.kubeconfig" --port "$port" \
  --data-dir "$CLUSTER_DATA" --tls-dir "$E2E_DIR/tls" >>"$CLUSTER_LOG" 2>&1 &
CLUSTER_PID=$!
ready() { curl -fsS --cacert "$E2E_DIR/tls/ca.crt" "https://127.0.0.1:$port/readyz"; }
wait_until 60 ready || fail "allotd as the ServiceAccount is not ready: $(curl -sS --cacert "$E2E_DIR/tls/ca.crt" "https://127.0.0.1:$port/readyz?verbose" 2>&1 | tail -5)"
! grep -q '"level":"error"' "$CLUSTER_LOG" || fail "allotd logged errors: $(grep '"level":"error"' "$CLUSTER_LOG" | head -3)"
[ ! -e "$CLUSTER_DATA/ca.key" ] || fail "allotd made a CA of its own beside --tls-dir"
echo "ok: deploy/cluster renders with kubectl 1.20's kustomize and applies (14 objects); caBundle patched in survives apply -k; ServiceAccount allowed exactly its rules; allotd as it is ready through the shared certificate"
