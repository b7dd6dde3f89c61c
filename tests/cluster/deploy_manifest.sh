#!/usr/bin/env bash
# deploy_manifest.sh ALLOTD: deploy/cluster/webhook.yaml is what `allotd
# webhook-config` prints (cluster_webhook_config, the Service form, no
# caBundle), so the manifest never drifts from what allotd installs out of
# the cluster. Rewrite it with `cmake --build build --target webhook-manifest`.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
allotd=${1:?usage: deploy_manifest.sh ALLOTD}
if ! "$allotd" webhook-config | diff -u "$root/deploy/cluster/webhook.yaml" -; then
  echo "FAIL: deploy/cluster/webhook.yaml is out of date: cmake --build build --target webhook-manifest" >&2
  exit 1
fi
if ! "$allotd" webhook-config --mutating | diff -u "$root/deploy/cluster/mutating-webhook.yaml" -; then
  echo "FAIL: deploy/cluster/mutating-webhook.yaml is out of date: cmake --build build --target webhook-manifest" >&2
  exit 1
fi
# A key is never taken for the caBundle; the namespace is honoured.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$allotd" tls --out "$tmp/tls" --namespace tenants-allot 2>/dev/null
if "$allotd" webhook-config --ca "$tmp/tls/ca.key" >/dev/null 2>&1; then
  echo "FAIL: webhook-config took a private key as the CA" >&2
  exit 1
fi
"$allotd" webhook-config --ca "$tmp/tls/ca.crt" --namespace tenants-allot | /usr/bin/python3 -c '
import base64, sys, yaml
ca = open(sys.argv[1]).read()
(cfg,) = [d for d in yaml.safe_load_all(sys.stdin) if d]
assert len(cfg["webhooks"]) == 6, cfg["webhooks"]
for h in cfg["webhooks"]:
    cc = h["clientConfig"]
    assert base64.b64decode(cc["caBundle"]).decode() == ca, h["name"]
    assert cc["service"] == {"namespace": "tenants-allot", "name": "allot", "path": "/admission/v1/validate"}, cc
    # Cluster-scoped pools and global quotas have no namespace to skip.
    sel = h.get("namespaceSelector") or h.get("objectSelector")
    assert not sel or "tenants-allot" in sel["matchExpressions"][0]["values"], h["name"]
print("ok: deploy/cluster/webhook.yaml is up to date; --ca and --namespace honoured, a key refused")' "$tmp/tls/ca.crt"
"$allotd" webhook-config --mutating --ca "$tmp/tls/ca.crt" --namespace tenants-allot | /usr/bin/python3 -c '
import base64, sys, yaml
ca = open(sys.argv[1]).read()
(cfg,) = [d for d in yaml.safe_load_all(sys.stdin) if d]
assert cfg["kind"] == "MutatingWebhookConfiguration", cfg["kind"]
assert [h["name"] for h in cfg["webhooks"]] == ["pods.deferred.allot.dev", "resourcequotas.deferred.allot.dev"], cfg["webhooks"]
for h in cfg["webhooks"]:
    cc = h["clientConfig"]
    assert base64.b64decode(cc["caBundle"]).decode() == ca, h["name"]
    assert cc["service"] == {"namespace": "tenants-allot", "name": "allot", "path": "/admission/v1/mutate"}, cc
    sel = h["namespaceSelector"]
    assert sel["matchLabels"] == {"quota.allot.dev/mode": "deferred"}, sel
    assert "tenants-allot" in sel["matchExpressions"][0]["values"], h["name"]
print("ok: deploy/cluster/mutating-webhook.yaml is up to date; only deferred namespaces")' "$tmp/tls/ca.crt"
/usr/bin/openssl x509 -in "$tmp/tls/server.crt" -noout -ext subjectAltName | grep -q 'DNS:allot.tenants-allot.svc,' || {
  echo "FAIL: allotd tls --namespace: no allot.tenants-allot.svc" >&2
  exit 1
}
