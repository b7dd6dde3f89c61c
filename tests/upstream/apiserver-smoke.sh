#!/usr/bin/env bash
# apiserver-smoke.sh: prove the kube-apiserver that scripts/kube-build.sh built
# serves: scripts/kube-up.sh starts it on Debian's etcd (etcd-server, 3.4) on
# free loopback ports in a scratch dir and waits for /readyz; check the
# `default/kubernetes` Service and a ConfigMap round trip (a map-valued
# response: what crashes with the vendored reflect2 1.0.1 on Go >= 1.18), then
# stop it. Exit 77 (ctest's SKIP_RETURN_CODE) when the binaries or etcd are
# missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)

kbin=${ALLOT_KUBE_BIN:-${ALLOT_KUBE_CACHE:-$HOME/.cache/allot/kubernetes-1.20.2}/bin}
apiserver=$kbin/kube-apiserver
if [ ! -x "$apiserver" ] || ! command -v etcd >/dev/null; then
  echo "SKIP: needs $apiserver (scripts/kube-build.sh) and etcd (Debian's etcd-server)"
  exit 77
fi

dir=$(mktemp -d /tmp/allot-kapi.XXXXXX)
cleanup() {
  "$root/scripts/kube-up.sh" down "$dir" || true
  rm -rf "$dir"
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

"$root/scripts/kube-up.sh" up "$dir" >/dev/null || fail "kube-up.sh could not start the control plane"
url=$(cat "$dir/url")
token=$(cat "$dir/admin.token")
kc() { curl -fsS --cacert "$dir/ca.crt" -H "Authorization: Bearer $token" "$@"; }
wait_for 30 kc "$url/api/v1/namespaces/default/services/kubernetes" ||
  fail "no default/kubernetes Service"
ip=$(kc "$url/api/v1/namespaces/default/services/kubernetes" |
  /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["spec"]["clusterIP"])')
[ "$ip" = 10.0.0.1 ] || fail "kubernetes Service clusterIP: got $ip, want 10.0.0.1 (kube-up.sh's range)"
kc -H 'Content-Type: application/json' -X POST "$url/api/v1/namespaces/default/configmaps" \
  -d '{"metadata":{"name":"smoke","labels":{"a":"b"}},"data":{"k":"v","k2":"v2"}}' >/dev/null
got=$(kc "$url/api/v1/namespaces/default/configmaps/smoke" |
  /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["data"]["k2"], d["metadata"]["labels"]["a"])')
[ "$got" = "v2 b" ] || fail "ConfigMap round trip: got [$got]"
kill -0 "$(cat "$dir/kube-apiserver.pid")" || fail "kube-apiserver exited"
echo "kube-apiserver $("$apiserver" --version | cut -d' ' -f2) on etcd $(etcd --version | head -1 | cut -d' ' -f3): ready, kubernetes Service $ip, ConfigMap round trip ok"
