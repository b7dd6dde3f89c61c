#!/usr/bin/env bash
# webhook-kube-apiserver.sh: a real kube-apiserver v1.20.2 (scripts/kube-up.sh)
# calls allotd's admission webhook (POST /admission/v1/validate) and takes its
# answers: allotd runs standalone beside it, holding a namespace whose quota
# allows no ConfigMap; the cluster's ValidatingWebhookConfiguration sends
# ConfigMap writes labelled allot-test to allotd, authenticated with a token
# from the API server's --admission-control-config-file, over HTTPS checked
# against allotd's CA (caBundle).
#
# Checked: a create allotd's quota refuses is refused by the cluster with
# exactly allotd's own text behind upstream's "admission webhook ... denied
# the request: "; one it allows is created, then updated and deleted through
# the webhook; the same with admissionReviewVersions [v1beta1] (what a 1.20
# configuration may list first); nothing of it is written in allotd.
#
# Exit 77 (ctest's SKIP_RETURN_CODE) without the kube binaries or etcd.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kbin=${ALLOT_KUBE_BIN:-${ALLOT_KUBE_CACHE:-$HOME/.cache/allot/kubernetes-1.20.2}/bin}
if [ ! -x "$kbin/kube-apiserver" ] || ! command -v etcd >/dev/null || ! command -v kubectl >/dev/null; then
  echo "SKIP: needs $kbin/kube-apiserver (scripts/kube-build.sh), etcd and kubectl"
  exit 77
fi
. "$here/../e2e/lib.sh"
KUBE_DIR=$E2E_DIR/kube
kube_down() { "$here/../../scripts/kube-up.sh" down "$KUBE_DIR"; }
on_cleanup kube_down

# ---- allotd: the hook's identity, allowed the webhook's URL ----
cat >"$E2E_DIR/tokens.csv" <<'EOF'
hook-token,kube-apiserver-hook,hook-uid
EOF
start_allotd --token-auth-file "$E2E_DIR/tokens.csv" --scheduler=false --node-agent=false
k create clusterrole allot-admission --verb=post --non-resource-url='/admission/*' >/dev/null
k create clusterrolebinding allot-admission --clusterrole=allot-admission \
  --user=kube-apiserver-hook >/dev/null
for ns in closed open; do k create namespace $ns >/dev/null; done
k create quota no-configmaps -n closed --hard=configmaps=0 >/dev/null
allot_rev() { k get --raw '/api/v1/namespaces?limit=1' | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])'; }

# ---- the cluster: its API server authenticates to the webhook with the token ----
mkdir -p "$KUBE_DIR"
cat >"$KUBE_DIR/webhook-kubeconfig" <<'EOF'
apiVersion: v1
kind: Config
users:
- name: '*'
  user:
    token: hook-token
EOF
cat >"$KUBE_DIR/admission.yaml" <<EOF
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: $KUBE_DIR/webhook-kubeconfig
EOF
KUBE_APISERVER_FLAGS="--admission-control-config-file=$KUBE_DIR/admission.yaml" \
  "$here/../../scripts/kube-up.sh" up "$KUBE_DIR" >/dev/null
kc() { kubectl --kubeconfig "$KUBE_DIR/kubeconfig" --request-timeout=20s "$@"; }
for ns in closed open; do kc create namespace $ns >/dev/null; done
ca=$(base64 -w0 "$E2E_DIR/data/ca.crt")
hook() { # hook NAME LABEL VERSION: one webhook entry for ConfigMaps labelled LABEL=yes
  cat <<EOF
- name: $1.allot.dev
  clientConfig:
    url: $ALLOT_URL/admission/v1/validate
    caBundle: $ca
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE, DELETE], resources: [configmaps], scope: Namespaced}
  objectSelector: {matchLabels: {$2: "yes"}}
  admissionReviewVersions: [$3]
  sideEffects: None
  failurePolicy: Fail
  timeoutSeconds: 5
EOF
}
kc create -f - >/dev/null <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: allot}
webhooks:
$(hook v1 allot-test v1)
$(hook v1beta1 allot-v1beta1 v1beta1)
EOF
cm() { # cm NAME LABEL
  printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s","labels":{"%s":"yes"}},"data":{"k":"v"}}' "$1" "$2"
}

# allotd's own answer to the write (its quota), as a standalone client sees it
if out=$(k create -n closed -f - <<<"$(cm x allot-test)" 2>&1); then fail "allotd allowed configmap x"; fi
want_msg=${out#Error from server (Forbidden): error when creating \"STDIN\": }
expect_contains "allotd's own denial" "$want_msg" 'configmaps "x" is forbidden: exceeded quota: no-configmaps'
before=$(allot_rev) # (a refused create writes nothing either)

# the webhook configuration is picked up by the API server's informer: wait
# (bounded) for the first denial
denied() { ! kc create -n closed -f - <<<"$(cm x allot-test)" >/dev/null 2>&1; }
wait_until 30 denied || fail "the cluster never called the webhook"
for v in v1 v1beta1; do
  label=allot-test
  [ $v = v1 ] || label=allot-v1beta1
  if out=$(kc create -n closed -f - <<<"$(cm x $label)" 2>&1); then fail "$v: cluster allowed x"; fi
  expect_eq "$v: the cluster's denial is allotd's" "$out" \
    "Error from server (Forbidden): error when creating \"STDIN\": admission webhook \"$v.allot.dev\" denied the request: $want_msg"
  kc create -n open -f - <<<"$(cm y-$v $label)" >/dev/null || fail "$v: create in open refused"
  kc label configmap y-$v -n open more=1 >/dev/null || fail "$v: update refused"
  kc delete configmap y-$v -n open >/dev/null || fail "$v: delete refused"
done
expect_eq "nothing written in allotd" "$(allot_rev)" "$before"
stop_allotd
echo PASS
