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
root=$(cd "$(dirname "$0")/../.." && pwd)
allotd=${1:?usage: test_deploy.sh ALLOTD}
kbin=${ALLOT_KUBE_BIN:-${ALLOT_KUBE_CACHE:-$HOME/.cache/allot/kubernetes-1.20.2}/bin}
for b in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  [ -x "$kbin/$b" ] || { echo "SKIP: no $kbin/$b (scripts/kube-build.sh)"; exit 77; }
done
command -v etcd >/dev/null || { echo "SKIP: no etcd (Debian's etcd-server)"; exit 77; }
kubectl=$kbin/kubectl # 1.20: kustomize v2.0.3, what the base must keep to
base=$root/deploy/cluster

dir=$(mktemp -d /tmp/allot-deploy.XXXXXX)
apid=
cleanup() {
  local rc=$?
  [ -z "$apid" ] || { kill "$apid" 2>/dev/null; wait "$apid" 2>/dev/null || true; }
  "$root/scripts/kube-up.sh" down "$dir" || true
  if [ $rc -ne 0 ]; then
    tail -20 "$dir/kube-apiserver.log" >&2 2>/dev/null || true
    tail -20 "$dir/allotd.log" >&2 2>/dev/null || true
  fi
  rm -rf "$dir"
  exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
wait_for() { # SECONDS CMD...
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}
k() { "$kubectl" "$@"; }

# ---- kubectl 1.20's kustomize renders the base ----
"$kubectl" kustomize "$base" >"$dir/rendered.yaml" || fail "kubectl kustomize $base"
kinds=$(/usr/bin/python3 - "$dir/rendered.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
print(" ".join(sorted(f'{d["kind"]}/{d["metadata"]["name"]}' for d in docs)))
PY
)
want="ClusterRole/allot ClusterRoleBinding/allot CustomResourceDefinition/customquotas.capsule.clastix.io \
CustomResourceDefinition/globalcustomquotas.capsule.clastix.io CustomResourceDefinition/resourcepoolclaims.capsule.clastix.io \
CustomResourceDefinition/resourcepools.capsule.clastix.io Deployment/allot Namespace/allot-system \
PodDisruptionBudget/allot Role/allot-leader-election RoleBinding/allot-leader-election Service/allot \
ServiceAccount/allot ValidatingWebhookConfiguration/allot.dev"
[ "$kinds" = "$want" ] || fail "rendered: $kinds"

# ---- the TLS material: one CA, a serving certificate for the Service ----
"$allotd" tls --out "$dir/tls" 2>/dev/null || fail "allotd tls"
/usr/bin/openssl x509 -in "$dir/tls/server.crt" -noout -ext subjectAltName | grep -q 'DNS:allot.allot-system.svc,' ||
  fail "server.crt lacks allot.allot-system.svc"
/usr/bin/openssl verify -CAfile "$dir/tls/ca.crt" "$dir/tls/server.crt" >/dev/null || fail "server.crt not signed by ca.crt"
# Run again: the CA is kept (the caBundle stays valid), the pair reused.
ca_sum=$(sha256sum <"$dir/tls/ca.crt")
"$allotd" tls --out "$dir/tls" 2>/dev/null || fail "allotd tls, again"
[ "$(sha256sum <"$dir/tls/ca.crt")" = "$ca_sum" ] || fail "allotd tls replaced the CA"

# ---- install, as the README says ----
"$root/scripts/kube-up.sh" up "$dir" >/dev/null
export KUBECONFIG=$dir/kubeconfig
k apply -f "$base/namespace.yaml" >/dev/null
k create secret generic allot-tls -n allot-system --from-file="$dir/tls/ca.crt" \
  --from-file="$dir/tls/server.crt" --from-file="$dir/tls/server.key" >/dev/null
k apply -k "$base" >"$dir/apply.out" || fail "apply -k: $(cat "$dir/apply.out")"
k patch validatingwebhookconfiguration allot.dev -p "$("$allotd" webhook-config --ca "$dir/tls/ca.crt")" >/dev/null
ca64=$(base64 -w0 <"$dir/tls/ca.crt")
bundles() { k get validatingwebhookconfiguration allot.dev -o jsonpath='{range .webhooks[*]}{.clientConfig.caBundle}{"\n"}{end}'; }
[ "$(bundles | sort -u)" = "$ca64" ] || fail "caBundle after patch: $(bundles | head -c 200)"
[ "$(bundles | wc -l)" = 5 ] || fail "webhooks: $(bundles | wc -l)"
k apply -k "$base" >/dev/null
[ "$(bundles | sort -u)" = "$ca64" ] || fail "a second apply -k dropped the caBundle"
svc=$(k get validatingwebhookconfiguration allot.dev -o jsonpath='{.webhooks[0].clientConfig.service.namespace}/{.webhooks[0].clientConfig.service.name}:{.webhooks[0].clientConfig.service.port}{.webhooks[0].clientConfig.service.path}')
[ "$svc" = "allot-system/allot:443/admission/v1/validate" ] || fail "webhook service: $svc"
[ "$(k get svc allot -n allot-system -o jsonpath='{.spec.ports[0].port}->{.spec.ports[0].targetPort}')" = "443->https" ] ||
  fail "service ports"
[ "$(k get deploy allot -n allot-system -o jsonpath='{.spec.replicas}')" = 2 ] || fail "replicas"
[ "$(k get pdb allot -n allot-system -o jsonpath='{.spec.minAvailable}')" = 1 ] || fail "pdb"
# The Secret's keys are the file names --tls-dir reads (server/tls.h).
keys=$(k get secret allot-tls -n allot-system -o jsonpath='{.data}' |
  /usr/bin/python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin))))')
[ "$keys" = "ca.crt server.crt server.key" ] || fail "secret keys: $keys"
# The controller manager takes the Deployment up to its pods (Pending: no kubelet).
wait_for 60 sh -c "[ \"\$('$kubectl' get pods -n allot-system -l app.kubernetes.io/name=allot -o name | wc -l)\" = 2 ]" ||
  fail "the Deployment's 2 pods were not created"

# ---- least privilege: what the ServiceAccount may do ----
sa=system:serviceaccount:allot-system:allot
can() { # yes|no VERB RESOURCE [ARGS...]
  local want=$1 got; shift
  got=$(k auth can-i --as="$sa" "$@" 2>/dev/null || true)
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
can no get pods -n tenant
for v in create update patch delete; do can no "$v" pods -n tenant; done
can no create pods/eviction -n tenant
can yes patch namespaces/tenant # the allot.dev/pooled label
for v in create update delete; do can no "$v" namespaces; done
can no create customresourcedefinitions.apiextensions.k8s.io
can no patch validatingwebhookconfigurations.admissionregistration.k8s.io
can no update events -n tenant
can no create deployments.apps -n allot-system
can no create serviceaccounts/token -n allot-system

# ---- allotd in cluster mode as that ServiceAccount, with the shared TLS ----
# The token Secret the 1.20 controller manager makes for the account.
wait_for 60 sh -c "[ -n \"\$('$kubectl' get sa allot -n allot-system -o jsonpath='{.secrets[0].name}')\" ]" ||
  fail "no token Secret for the ServiceAccount"
tok=$(k get secret -n allot-system "$(k get sa allot -n allot-system -o jsonpath='{.secrets[0].name}')" \
  -o jsonpath='{.data.token}' | base64 -d)
cat >"$dir/sa.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "$(cat "$dir/url")", certificate-authority-data: "$(base64 -w0 <"$dir/ca.crt")"}
users:
- name: allot
  user: {token: "$tok"}
contexts:
- name: c
  context: {cluster: c, user: allot}
current-context: c
KC
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
POD_NAMESPACE=allot-system "$allotd" --cluster-kubeconfig "$dir/sa.kubeconfig" --port "$port" \
  --data-dir "$dir/data" --tls-dir "$dir/tls" >"$dir/allotd.log" 2>&1 &
apid=$!
ready() { curl -fsS --cacert "$dir/tls/ca.crt" "https://127.0.0.1:$port/readyz"; }
wait_for 60 ready || fail "allotd as the ServiceAccount is not ready: $(curl -sS --cacert "$dir/tls/ca.crt" "https://127.0.0.1:$port/readyz?verbose" 2>&1 | tail -5)"
! grep -q '"level":"error"' "$dir/allotd.log" || fail "allotd logged errors: $(grep '"level":"error"' "$dir/allotd.log" | head -3)"
[ ! -e "$dir/data/ca.key" ] || fail "allotd made a CA of its own beside --tls-dir"
echo "ok: deploy/cluster renders with kubectl 1.20's kustomize and applies (14 objects); caBundle patched in survives apply -k; ServiceAccount allowed exactly its rules; allotd as it is ready through the shared certificate"
