#!/usr/bin/env bash
# kube-up.sh up DIR | down DIR - the real Kubernetes control plane v1.20.2
# (scripts/kube-build.sh's binaries) on loopback, for benchmarks and
# cluster-mode tests: Debian's etcd, kube-apiserver, kube-controller-manager
# and kube-scheduler, each on free ports, everything in DIR. No kubelet: pods
# are bound to the Node objects a test creates, and stay Pending.
#
# `up` writes DIR/kubeconfig (an admin token in system:masters), DIR/admin.token,
# DIR/ca.crt (what the API server's serving certificate chains to), DIR/url,
# DIR/<component>.pid and .log, and returns once /readyz answers. Extra
# kube-apiserver flags may come in KUBE_APISERVER_FLAGS. `down` stops
# everything `up` started in DIR (SIGTERM, then SIGKILL after 10 s).
set -euo pipefail
cd "$(dirname "$0")/.."
cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 up|down DIR" >&2; exit 2; }

stop() {
  local pids=() p
  for f in "$dir"/*.pid; do [ -f "$f" ] && pids+=("$(cat "$f")"); done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for _ in $(seq 1 100); do
    local alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive -eq 0 ] && break
    sleep 0.1
  done
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -f "$dir"/*.pid
}
if [ "$cmd" = down ]; then stop; exit 0; fi
[ "$cmd" = up ] || { echo "usage: $0 up|down DIR" >&2; exit 2; }

kbin=${ALLOT_KUBE_BIN:-${ALLOT_KUBE_CACHE:-$HOME/.cache/allot/kubernetes-1.20.2}/bin}
for b in kube-apiserver kube-controller-manager kube-scheduler; do
  [ -x "$kbin/$b" ] || { echo "kube-up: no $kbin/$b (run scripts/kube-build.sh)" >&2; exit 1; }
done
command -v etcd >/dev/null || { echo "kube-up: no etcd (Debian's etcd-server)" >&2; exit 1; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for() { # SECONDS CMD...
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}
trap 'rc=$?; [ $rc -eq 0 ] || { tail -20 "$dir"/*.log >&2; stop; }' EXIT

etcd_port=$(port) peer_port=$(port) api_port=$(port)
etcd --data-dir "$dir/etcd" --name kube-up \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-cluster "kube-up=http://127.0.0.1:$peer_port" >"$dir/etcd.log" 2>&1 &
echo $! >"$dir/etcd.pid"
wait_for 30 curl -fsS "http://127.0.0.1:$etcd_port/health" || { echo "kube-up: etcd not healthy" >&2; exit 1; }

[ -f "$dir/sa.key" ] || openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
[ -f "$dir/admin.token" ] || head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/admin.token"
token=$(cat "$dir/admin.token")
echo "$token,kube-admin,kube-admin,system:masters" >"$dir/tokens.csv"
# shellcheck disable=SC2086
"$kbin/kube-apiserver" --etcd-servers="http://127.0.0.1:$etcd_port" \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$api_port" \
  --cert-dir="$dir/certs" --service-account-issuer=https://kubernetes.default.svc \
  --service-account-key-file="$dir/sa.pub" --service-account-signing-key-file="$dir/sa.key" \
  --service-cluster-ip-range=10.0.0.0/24 --authorization-mode=Node,RBAC \
  --token-auth-file="$dir/tokens.csv" ${KUBE_APISERVER_FLAGS:-} >"$dir/kube-apiserver.log" 2>&1 &
echo $! >"$dir/kube-apiserver.pid"
url=https://127.0.0.1:$api_port
echo "$url" >"$dir/url"
wait_for 120 test -s "$dir/certs/apiserver.crt" || { echo "kube-up: no serving certificate" >&2; exit 1; }
cp "$dir/certs/apiserver.crt" "$dir/ca.crt"
wait_for 120 curl -fsS --cacert "$dir/ca.crt" -H "Authorization: Bearer $token" "$url/readyz" ||
  { echo "kube-up: kube-apiserver not ready" >&2; exit 1; }
cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kube-up
  cluster:
    server: $url
    certificate-authority: $dir/ca.crt
users:
- name: admin
  user:
    token: $token
contexts:
- name: kube-up
  context: {cluster: kube-up, user: admin}
current-context: kube-up
EOF
chmod 600 "$dir/kubeconfig"
"$kbin/kube-controller-manager" --kubeconfig="$dir/kubeconfig" --leader-elect=false \
  --service-account-private-key-file="$dir/sa.key" --root-ca-file="$dir/ca.crt" \
  --bind-address=127.0.0.1 --secure-port="$(port)" --port=0 \
  >"$dir/kube-controller-manager.log" 2>&1 &
echo $! >"$dir/kube-controller-manager.pid"
"$kbin/kube-scheduler" --kubeconfig="$dir/kubeconfig" --leader-elect=false \
  --bind-address=127.0.0.1 --secure-port="$(port)" --port=0 \
  >"$dir/kube-scheduler.log" 2>&1 &
echo $! >"$dir/kube-scheduler.pid"
sleep 1
for c in kube-controller-manager kube-scheduler; do
  kill -0 "$(cat "$dir/$c.pid")" 2>/dev/null || { echo "kube-up: $c exited" >&2; exit 1; }
done
echo "kube-up: $url ($dir/kubeconfig)"
