#!/usr/bin/env bash
# test_scheduler_config.sh ALLOTD - `allotd scheduler-config` (issue 29):
# the KubeSchedulerConfiguration it prints is taken by the real
# kube-scheduler v1.20.2 (--write-config-to runs the scheduler's own
# decoding, strict about unknown fields, and validation, then exits) with
# allot as its one extender as cluster/scheduler_config.h chooses; the v1
# form carries the same extender; usage errors exit 2 and a private key
# given as the CA exits 1. Exit 77 (skipped) without kube-scheduler.
set -euo pipefail
allotd=${1:?usage: test_scheduler_config.sh ALLOTD}
kbin=${ALLOT_KUBE_BIN:-${ALLOT_KUBE_CACHE:-$HOME/.cache/allot/kubernetes-1.20.2}/bin}
[ -x "$kbin/kube-scheduler" ] || { echo "SKIP: no $kbin/kube-scheduler (scripts/kube-build.sh)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$allotd" tls --out "$tmp/tls" >/dev/null 2>&1 || fail "allotd tls"
cat >"$tmp/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
KC
url=https://allot.allot-system.svc:443/scheduler
args=(--kubeconfig "$tmp/kubeconfig" --extender-url "$url" --ca "$tmp/tls/ca.crt"
  --client-cert "$tmp/tls/scheduler.crt" --client-key "$tmp/tls/scheduler.key")

# Usage errors: 2, nothing printed on stdout.
expect_rc() { # WANT ARGS...
  local rc=0 out
  out=$("$allotd" scheduler-config "${@:2}" 2>/dev/null) || rc=$?
  [ "$rc" = "$1" ] || fail "scheduler-config ${*:2}: exit $rc, want $1"
  [ "$rc" = 0 ] || [ -z "$out" ] || fail "scheduler-config ${*:2}: printed on a failure"
}
expect_rc 2 --kubeconfig "$tmp/kubeconfig" --extender-url "$url"
expect_rc 2 "${args[@]}" --api-version v2
expect_rc 2 --kubeconfig "$tmp/kubeconfig" --extender-url "$url" --ca "$tmp/tls/ca.crt" \
  --client-cert "$tmp/tls/scheduler.crt" # (its key missing)
expect_rc 2 --kubeconfig "$tmp/kubeconfig" --extender-url http://allot/scheduler --ca "$tmp/tls/ca.crt"
expect_rc 1 --kubeconfig "$tmp/kubeconfig" --extender-url "$url" --ca "$tmp/tls/ca.key"
expect_rc 1 --kubeconfig "$tmp/kubeconfig" --extender-url "$url" --ca "$tmp/missing.crt"

# v1beta1: what kube-scheduler 1.20.2 reads, validates and writes back.
"$allotd" scheduler-config "${args[@]}" >"$tmp/v1beta1.yaml"
timeout 60 "$kbin/kube-scheduler" --config "$tmp/v1beta1.yaml" --write-config-to "$tmp/out.yaml" \
  >"$tmp/scheduler.log" 2>&1 || { cat "$tmp/scheduler.log" >&2; fail "kube-scheduler refused the configuration"; }
check() { # FILE APIVERSION
  /usr/bin/python3 - "$1" "$2" "$url" "$tmp/tls/ca.crt" "$tmp/kubeconfig" "$tmp/tls" <<'PY'
import base64, sys, yaml
path, av, url, ca, kc, tls = sys.argv[1:]
cfg = yaml.safe_load(open(path))
assert cfg["apiVersion"] == av, cfg["apiVersion"]
assert cfg["kind"] == "KubeSchedulerConfiguration"
assert cfg["clientConnection"]["kubeconfig"] == kc
(ext,) = cfg["extenders"]
want = {"urlPrefix": url, "filterVerb": "filter", "bindVerb": "bind", "enableHTTPS": True,
        "httpTimeout": "5s", "nodeCacheCapable": True,
        "managedResources": [{"name": "quota.allot.dev/deferred", "ignoredByScheduler": True}]}
for k, v in want.items():
    assert ext.get(k) == v, (k, ext.get(k), v)
assert not ext.get("ignorable"), "ignorable"
assert "prioritizeVerb" not in ext and not ext["tlsConfig"].get("insecure")
assert base64.b64decode(ext["tlsConfig"]["caData"]) == open(ca, "rb").read()
assert ext["tlsConfig"]["certFile"] == tls + "/scheduler.crt", ext["tlsConfig"]
assert ext["tlsConfig"]["keyFile"] == tls + "/scheduler.key", ext["tlsConfig"]
PY
}
check "$tmp/out.yaml" kubescheduler.config.k8s.io/v1beta1 || fail "kube-scheduler's view of the configuration"
check "$tmp/v1beta1.yaml" kubescheduler.config.k8s.io/v1beta1 || fail "the v1beta1 configuration"
grep -q '^# - ignorable: false' "$tmp/v1beta1.yaml" || fail "the choices are not explained"
# A configuration kube-scheduler refuses is refused here too: the check is real.
sed 's/filterVerb:/filterVerbs:/' "$tmp/v1beta1.yaml" >"$tmp/bad.yaml"
if timeout 60 "$kbin/kube-scheduler" --config "$tmp/bad.yaml" --write-config-to "$tmp/bad-out.yaml" \
  >/dev/null 2>&1; then
  fail "kube-scheduler took an unknown field: the check cannot fail"
fi
echo "ok: kube-scheduler 1.20.2 takes the v1beta1 configuration with allot as its extender"

"$allotd" scheduler-config "${args[@]}" --api-version v1 >"$tmp/v1.yaml"
check "$tmp/v1.yaml" kubescheduler.config.k8s.io/v1 || fail "the v1 configuration"
echo "ok: the v1 configuration carries the same extender"
echo "PASS"
