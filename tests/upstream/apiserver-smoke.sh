#!/usr/bin/env bash
# apiserver-smoke.sh: prove the kube-apiserver that scripts/kube-build.sh built
# serves: start Debian's etcd (etcd-server, 3.4) and kube-apiserver v1.20.2 on
# free loopback ports in a scratch dir, wait for /readyz, check the
# `default/kubernetes` Service and a ConfigMap round trip (a map-valued
# response: what crashes with the vendored reflect2 1.0.1 on Go >= 1.18), then
# stop both. Exit 77 (ctest's SKIP_RETURN_CODE) when the binaries or etcd are
# missing. The flags below are the least a 1.20 kube-apiserver needs.
set -euo pipefail

kbin=${ALLOT_KUBE_BIN:-${ALLOT_KUBE_CACHE:-$HOME/.cache/allot/kubernetes-1.20.2}/bin}
apiserver=$kbin/kube-apiserver
if [ ! -x "$apiserver" ] || ! command -v etcd >/dev/null; then
  echo "SKIP: needs $apiserver (scripts/kube-build.sh) and etcd (Debian's etcd-server)"
  exit 77
fi

dir=$(mktemp -d /tmp/allot-kapi.XXXXXX)
etcd_pid='' api_pid=''
cleanup() {
  local rc=$?
  [ -z "$api_pid" ] || kill "$api_pid" 2>/dev/null || true
  [ -z "$api_pid" ] || wait "$api_pid" 2>/dev/null || true
  [ -z "$etcd_pid" ] || kill "$etcd_pid" 2>/dev/null || true
  [ -z "$etcd_pid" ] || wait "$etcd_pid" 2>/dev/null || true
  if [ $rc -ne 0 ]; then
    echo "--- kube-apiserver log (tail) ---" >&2
    tail -20 "$dir/apiserver.log" >&2 || true
    echo "--- etcd log (tail) ---" >&2
    tail -5 "$dir/etcd.log" >&2 || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for() { # SECONDS CMD...
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

etcd_port=$(port) peer_port=$(port) api_port=$(port)
etcd --data-dir "$dir/etcd" --name smoke \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-cluster "smoke=http://127.0.0.1:$peer_port" >"$dir/etcd.log" 2>&1 &
etcd_pid=$!
wait_for 30 curl -fsS "http://127.0.0.1:$etcd_port/health" || fail "etcd did not become healthy"

openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$token,smoke-admin,smoke-admin,system:masters" >"$dir/tokens.csv"
"$apiserver" --etcd-servers="http://127.0.0.1:$etcd_port" \
  --bind-address=127.0.0.1 --secure-port="$api_port" --cert-dir="$dir/certs" \
  --service-account-issuer=https://kubernetes.default.svc \
  --service-account-key-file="$dir/sa.pub" --service-account-signing-key-file="$dir/sa.key" \
  --service-cluster-ip-range=10.0.0.0/24 --authorization-mode=RBAC \
  --token-auth-file="$dir/tokens.csv" >"$dir/apiserver.log" 2>&1 &
api_pid=$!

url=https://127.0.0.1:$api_port
kc() { curl -fsS -k -H "Authorization: Bearer $token" "$@"; }
wait_for 120 kc "$url/readyz" || fail "kube-apiserver not ready within 120s"
wait_for 30 kc "$url/api/v1/namespaces/default/services/kubernetes" ||
  fail "no default/kubernetes Service"
ip=$(kc "$url/api/v1/namespaces/default/services/kubernetes" |
  /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["spec"]["clusterIP"])')
[ "$ip" = 10.0.0.1 ] || fail "kubernetes Service clusterIP: got $ip, want 10.0.0.1"
kc -H 'Content-Type: application/json' -X POST "$url/api/v1/namespaces/default/configmaps" \
  -d '{"metadata":{"name":"smoke","labels":{"a":"b"}},"data":{"k":"v","k2":"v2"}}' >/dev/null
got=$(kc "$url/api/v1/namespaces/default/configmaps/smoke" |
  /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["data"]["k2"], d["metadata"]["labels"]["a"])')
[ "$got" = "v2 b" ] || fail "ConfigMap round trip: got [$got]"
kill -0 "$api_pid" || fail "kube-apiserver exited"
echo "kube-apiserver $("$apiserver" --version | cut -d' ' -f2) on etcd $(etcd --version | head -1 | cut -d' ' -f3): ready, kubernetes Service $ip, ConfigMap round trip ok"
