#!/usr/bin/env bash
# test_kube_client.sh - src/kube (kubeconfig, requests, reflector) against
# the real control plane of scripts/kube-up.sh: runs $KUBE_PROBE (the
# kube_probe executable, tests/cluster/kube_probe.c) on its kubeconfig, with
# this script's `restart` as the probe's way to bounce the API server.
# Exit 77 (ctest's SKIP_RETURN_CODE) without the kube binaries or etcd.
#
#   test_kube_client.sh                 the test
#   test_kube_client.sh restart DIR NS  (for the probe) SIGKILL DIR's
#       kube-apiserver; while it is down, bump etcd's revision with a key
#       outside /registry and write ConfigMap NS/sneaky straight into etcd
#       (JSON, which the API server's storage decoder reads as it reads
#       protobuf); compact etcd at that revision; start the API server again
#       with its own command line and wait for /readyz. The reflector's
#       resourceVersion is then older than both the new watch cache and
#       etcd's compaction: its next watch gets 410.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kbin=${ALLOT_KUBE_BIN:-${ALLOT_KUBE_CACHE:-$HOME/.cache/allot/kubernetes-1.20.2}/bin}

b64() { printf '%s' "$1" | base64 -w0; }
wait_for() { # SECONDS CMD...
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

if [ "${1:-}" = restart ]; then
  dir=$2 ns=$3
  pid=$(cat "$dir/kube-apiserver.pid")
  mapfile -d '' args <"/proc/$pid/cmdline"
  etcd=$(printf '%s\n' "${args[@]}" | sed -n 's/^--etcd-servers=//p')
  kill -9 "$pid"
  wait_for 30 sh -c "! kill -0 $pid" || { echo "restart: kube-apiserver $pid did not exit" >&2; exit 1; }
  rev=$(curl -fsS -X POST "$etcd/v3/kv/put" \
    -d "{\"key\":\"$(b64 /allot-probe/bump)\",\"value\":\"$(b64 1)\"}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["revision"])')
  obj="{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"sneaky\",\"namespace\":\"$ns\",\
\"uid\":\"$(cat /proc/sys/kernel/random/uuid)\",\"creationTimestamp\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\",\
\"labels\":{\"probe\":\"yes\"}},\"data\":{\"k\":\"v\"}}"
  curl -fsS -X POST "$etcd/v3/kv/put" \
    -d "{\"key\":\"$(b64 "/registry/configmaps/$ns/sneaky")\",\"value\":\"$(b64 "$obj")\"}" >/dev/null
  curl -fsS -X POST "$etcd/v3/kv/compaction" -d "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null
  "${args[@]}" >>"$dir/kube-apiserver.log" 2>&1 &
  echo $! >"$dir/kube-apiserver.pid"
  wait_for 120 curl -fsS --cacert "$dir/ca.crt" -H "Authorization: Bearer $(cat "$dir/admin.token")" \
    "$(cat "$dir/url")/readyz" || { echo "restart: kube-apiserver not ready" >&2; exit 1; }
  echo "restart: kube-apiserver back (etcd compacted at $rev)"
  exit 0
fi

if [ ! -x "$kbin/kube-apiserver" ] || ! command -v etcd >/dev/null; then
  echo "SKIP: needs $kbin/kube-apiserver (scripts/kube-build.sh) and etcd (Debian's etcd-server)"
  exit 77
fi
probe=${KUBE_PROBE:?KUBE_PROBE: the kube_probe executable}
dir=$(mktemp -d /tmp/allot-kclient.XXXXXX)
cleanup() {
  local rc=$?
  "$root/scripts/kube-up.sh" down "$dir" || true
  if [ $rc -ne 0 ]; then
    echo "--- kube-apiserver log (tail) ---" >&2
    tail -20 "$dir/kube-apiserver.log" >&2 || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
"$root/scripts/kube-up.sh" up "$dir"
"$probe" "$dir/kubeconfig" "probe-$$" "$0 restart $dir"
