# test_limited_resources.sh - the ResourceQuota admission configuration
# (limitedResources): a pod consuming a limited resource needs a quota that
# covers it, as upstream; other pods are unaffected. Also a bad file is refused.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
# As upstream's documentation writes it (YAML); the same in JSON must load too.
cat >"$E2E_DIR/admission.yaml" <<'YAML'
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: "ResourceQuota"
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: ResourceQuotaConfiguration
    limitedResources:
    - resource: pods
      matchContains: ["requests.cpu"]
YAML
cat >"$E2E_DIR/admission.json" <<'JSON'
{"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AdmissionConfiguration",
 "plugins": [{"name": "ResourceQuota", "configuration": {
   "apiVersion": "apiserver.config.k8s.io/v1", "kind": "ResourceQuotaConfiguration",
   "limitedResources": [{"resource": "pods", "matchContains": ["requests.cpu"]}]}}]}
JSON
printf 'plugins: [unclosed\n' >"$E2E_DIR/bad.yaml"
for bad in bad.yaml missing.yaml; do
  if "$ALLOTD" --data-dir "$E2E_DIR/bad" --port 1 --admission-control-config-file "$E2E_DIR/$bad" 2>"$E2E_DIR/err"; then
    fail "a malformed or missing admission configuration ($bad) was accepted"
  fi
  grep -q "cannot load admission configuration" "$E2E_DIR/err" || fail "no error for $bad: $(cat "$E2E_DIR/err")"
done
grep -q "missing.yaml: No such file" "$E2E_DIR/err" || fail "missing file: $(cat "$E2E_DIR/err")"

cpu_pod='{"spec":{"containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"1"}}}]}}'
for cfg in admission.yaml admission.json; do
  rm -rf "$E2E_DIR/data"
  start_allotd --admission-control-config-file "$E2E_DIR/$cfg"
  if k run a --image=x --overrides="$cpu_pod" 2>"$E2E_DIR/err"; then fail "$cfg: pod consuming a limited resource admitted without quota"; fi
  expect_contains "$cfg: limited" "$(cat "$E2E_DIR/err")" 'pods "a" is forbidden: insufficient quota to consume: requests.cpu'
  k run b --image=x >/dev/null || fail "$cfg: a pod without cpu requests must be admitted"
  k create quota q --hard=requests.cpu=2 >/dev/null
  k run c --image=x --overrides="$cpu_pod" >/dev/null || fail "$cfg: covered by a quota, the pod must be admitted"
  stop_allotd
done
echo "test_limited_resources: ok"
