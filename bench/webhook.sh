#!/usr/bin/env bash
# webhook.sh [ALLOTD] - cluster mode's cost on the real Kubernetes v1.20.2
# control plane (scripts/kube-up.sh), in one sitting (issue 28's bench):
#
#  1. allotd's webhook answering AdmissionReviews (a claim's create, the
#     registry's dry run on the mirror) at RATE per second (default 500),
#     open loop: latency percentiles counted from each review's due time,
#     allotd's CPU and context switches per review;
#  2. claim creates through the real API server with allot's webhook on;
#  3. pod creates/s through the real API server with allot running (its
#     watches and webhooks installed) as a ratio to the same server with
#     allot stopped, in interleaved rounds (ROUNDS, default 2), so drift in
#     this shared machine's speed hits both alike. Pods never go to allot's
#     webhooks; what allot costs them is its watches on the API server.
#
# REQUESTS (default 3000) per run, CONNECTIONS (default 16).
set -euo pipefail
cd "$(dirname "$0")/.."
allotd=$(realpath "${1:-build/allotd}")
REQUESTS=${REQUESTS:-3000}
CONNECTIONS=${CONNECTIONS:-16}
ROUNDS=${ROUNDS:-2}
RATE=${RATE:-500}
[ -x build/loadgen ] || scripts/build.sh build >/dev/null
work=$(mktemp -d /tmp/allot-webhook-bench.XXXXXX)
kdir=$work/kube adir=$work/allot apid=
stop_allot() {
  [ -n "$apid" ] || return 0
  kill "$apid" 2>/dev/null || true
  wait "$apid" 2>/dev/null || true
  apid=
}
trap 'stop_allot; scripts/kube-up.sh down "$kdir" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
scripts/kube-up.sh up "$kdir" >/dev/null
kubectl() { "${ALLOT_KUBE_BIN:-$HOME/.cache/allot/kubernetes-1.20.2/bin}/kubectl" \
  --kubeconfig "$kdir/kubeconfig" "$@"; }
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start_allot() {
  "$allotd" --cluster-kubeconfig "$kdir/kubeconfig" --webhook-address "127.0.0.1:$port" \
    --data-dir "$adir" --log-level warn 2>>"$work/allotd.log" &
  apid=$!
  for _ in $(seq 1 300); do
    curl -skf "https://127.0.0.1:$port/readyz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "allotd did not become ready" >&2
  tail -5 "$work/allotd.log" >&2
  exit 1
}
# the namespaces pods and claims are created in: one pool selects them
start_allot
for i in 0 1 2 3; do
  kubectl create namespace "bench-$i" >/dev/null
  kubectl label namespace "bench-$i" capsule.clastix.io/tenant=bench >/dev/null
done
for i in 0 1 2 3; do
  for _ in $(seq 1 100); do
    kubectl get serviceaccount default -n "bench-$i" >/dev/null 2>&1 && break
    sleep 0.1
  done
done
kubectl apply -f - >/dev/null <<EOF
{"apiVersion":"capsule.clastix.io/v1beta2","kind":"ResourcePool","metadata":{"name":"bench"},
 "spec":{"selectors":[{"matchLabels":{"capsule.clastix.io/tenant":"bench"}}],
         "quota":{"hard":{"requests.cpu":"100000"}}}}
EOF
kpids=$(cat "$kdir"/kube-apiserver.pid)

echo "== 1. allotd's webhook at $RATE reviews/s (open loop)"
build/loadgen --data-dir "$adir" --url "https://127.0.0.1:$port" --resource admissionreviews \
  --rate "$RATE" --requests $((RATE * 10)) --connections 4 --namespaces 4 --pid "$apid" \
  --label webhook

echo "== 2. claim creates through the real API server, allot's webhook on"
build/loadgen --data-dir "$kdir" --url "$(cat "$kdir/url")" --resource resourcepoolclaims \
  --requests "$REQUESTS" --connections "$CONNECTIONS" --namespaces 4 --pid "$kpids,$apid" \
  --label claims-with-allot

echo "== 3. pod creates through the real API server, allot running / stopped"
# fresh namespaces per run (no pool selects them), so names never collide
for r in $(seq 1 "$ROUNDS"); do
  for mode in on off; do
    for i in 0 1 2 3; do kubectl create namespace "r$r$mode-$i" >/dev/null; done
  done
done
for r in $(seq 1 "$ROUNDS"); do
  for mode in on off; do
    for i in 0 1 2 3; do
      for _ in $(seq 1 100); do
        kubectl get serviceaccount default -n "r$r$mode-$i" >/dev/null 2>&1 && break
        sleep 0.1
      done
    done
  done
done
for r in $(seq 1 "$ROUNDS"); do
  for mode in on off; do
    if [ $mode = on ]; then [ -n "$apid" ] || start_allot; else stop_allot; fi
    build/loadgen --data-dir "$kdir" --url "$(cat "$kdir/url")" --resource pods \
      --requests "$REQUESTS" --connections "$CONNECTIONS" --namespaces 4 \
      --ns-prefix "r$r$mode" --pid "$kpids" --label "pods-allot-$mode-r$r"
  done
done
