# shellcheck shell=bash
# lib.sh - shared by the cluster-mode tests (issue 28): the real control
# plane of scripts/kube-up.sh and allotd in cluster mode against it, each
# waited for with a deadline. Source it first thing; it exits 77 (ctest's
# SKIP_RETURN_CODE) without the kube binaries or etcd, then sources
# tests/e2e/lib.sh (fail, wait_until, free_port, expect_*, start_allotd for
# a standalone allotd, and the cleanup trap, which this file extends).
#
#   kube_up                     control plane in $KUBE_DIR; kc runs kubectl on it
#   start_cluster_allotd [flags] allotd --cluster-kubeconfig --webhook-address
#                               on a free port, data in $CLUSTER_DATA; returns
#                               once /readyz is 200 and the cluster's API server
#                               sends its webhooks (km: kubectl on allot's mirror)
#   stop_cluster_allotd / kill9_cluster_allotd
#   start_cluster_writer        a second replica, started first so that it
#                               holds the Lease: the writer is not the
#                               replica the webhooks call
#   deferred_up                 deferred quota's set-up (issue 29): both
#                               replicas, kube-scheduler with allot as its
#                               extender (ALLOT_SCHEDULER_V=N: its -v), a
#                               node n1 (64 cpu)

cluster_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
kbin=${ALLOT_KUBE_BIN:-${ALLOT_KUBE_CACHE:-$HOME/.cache/allot/kubernetes-1.20.2}/bin}
for b in kube-apiserver kube-controller-manager kube-scheduler; do
  [ -x "$kbin/$b" ] || { echo "SKIP: no $kbin/$b (scripts/kube-build.sh)"; exit 77; }
done
command -v etcd >/dev/null || { echo "SKIP: no etcd (Debian's etcd-server)"; exit 77; }
# The kubectl of the same release as the API server, else the system's.
KUBECTL=$kbin/kubectl
[ -x "$KUBECTL" ] || KUBECTL=$(command -v kubectl) || { echo "SKIP: no kubectl"; exit 77; }

# shellcheck source=../e2e/lib.sh
. "$cluster_root/tests/e2e/lib.sh"

KUBE_DIR=$E2E_DIR/kube
KUBE_IS_UP=
CLUSTER_DATA=$E2E_DIR/cluster-data
CLUSTER_LOG=$E2E_DIR/allotd-cluster.log
CLUSTER_PID=
CLUSTER_PORT=
WRITER_PID=
WRITER_LOG=$E2E_DIR/allotd-writer.log

# On exit: allotd in cluster mode killed, the control plane stopped, logs
# shown on failure; then tests/e2e/lib.sh's cleanup (hooks, the standalone
# allotd, the scratch directory) with the test's exit status.
cluster_cleanup() {
  local rc=$?
  local pid
  for pid in $CLUSTER_PID $WRITER_PID; do
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ $rc -ne 0 ]; then
    echo "--- allotd (cluster mode) log (tail) ---" >&2
    tail -30 "$CLUSTER_LOG" >&2 2>/dev/null || true
    if [ -n "$WRITER_PID" ]; then
      echo "--- allotd (cluster mode, the writer replica) log (tail) ---" >&2
      tail -30 "$WRITER_LOG" >&2 2>/dev/null || true
    fi
    echo "--- kube-apiserver log (tail) ---" >&2
    tail -20 "$KUBE_DIR/kube-apiserver.log" >&2 2>/dev/null || true
  fi
  [ -z "$KUBE_IS_UP" ] || "$cluster_root/scripts/kube-up.sh" down "$KUBE_DIR" || true
  # cleanup reads the status it is called with.
  if [ $rc -eq 0 ]; then cleanup; else (exit $rc) || cleanup; fi
}
trap cluster_cleanup EXIT

# kc ARGS...: kubectl against the real cluster, bounded per request.
# (--cache-dir: kubectl 1.20 has no KUBECACHEDIR; see tests/e2e/lib.sh)
kc() { "$KUBECTL" --kubeconfig "$KUBE_DIR/kubeconfig" --cache-dir "$KUBECACHEDIR" --request-timeout=20s "$@"; }
# km ARGS...: kubectl against allot's mirror (the kubeconfig allotd writes).
km() { "$KUBECTL" --kubeconfig "$CLUSTER_DATA/kubeconfig" --cache-dir "$KUBECACHEDIR" --request-timeout=20s "$@"; }

kube_up() {
  KUBE_IS_UP=1
  "$cluster_root/scripts/kube-up.sh" up "$KUBE_DIR" >/dev/null
  KUBE_URL=$(cat "$KUBE_DIR/url")
  KUBE_TOKEN=$(cat "$KUBE_DIR/admin.token")
}

# kube_api METHOD PATH [curl args...]: raw request to the real API server as
# its admin; prints the body, then the HTTP code on the last line.
kube_api() {
  local method=$1 path=$2; shift 2
  curl -sS --max-time 20 --cacert "$KUBE_DIR/ca.crt" -H "Authorization: Bearer $KUBE_TOKEN" \
    -X "$method" -w '\n%{http_code}' "$@" "$KUBE_URL$path"
}

# readyz PORT: the HTTP code of allotd's /readyz on PORT (000: no answer).
readyz() {
  curl -sk --max-time 5 -o /dev/null -w '%{http_code}' "https://127.0.0.1:$1/readyz" || true
}
is_ready() { [ "$(readyz "$1")" = 200 ]; }

# webhooks_sent: the cluster's API server calls allot's webhooks (it picks
# a new ValidatingWebhookConfiguration up from its own informer, a moment
# after allotd wrote it): a server-side dry run of a pool with a negative
# quota, which only allot's webhook refuses, is denied by it.
webhooks_sent() {
  local out
  out=$(kc create --dry-run=server -f - 2>&1 <<'EOF'
{"apiVersion": "capsule.clastix.io/v1beta2", "kind": "ResourcePool",
 "metadata": {"name": "allot-webhook-probe"}, "spec": {"quota": {"hard": {"pods": "-1"}}}}
EOF
  ) && return 1
  case "$out" in *"must be greater than or equal to 0"*) return 0 ;; *) return 1 ;; esac
}

# start_cluster_allotd [flags]: allotd in cluster mode on the cluster of
# kube_up, installing its CRDs and webhooks pointing at itself.
start_cluster_allotd() {
  CLUSTER_PORT=$(free_port)
  rm -f "$CLUSTER_DATA/kubeconfig"
  "$ALLOTD" --cluster-kubeconfig "$KUBE_DIR/kubeconfig" --webhook-address "127.0.0.1:$CLUSTER_PORT" \
    --data-dir "$CLUSTER_DATA" "$@" 2>>"$CLUSTER_LOG" &
  CLUSTER_PID=$!
  wait_until 60 is_ready "$CLUSTER_PORT" || fail "allotd in cluster mode: /readyz not 200 within 60 s"
  wait_until 30 test -s "$CLUSTER_DATA/kubeconfig" || fail "allotd in cluster mode wrote no kubeconfig"
  wait_until 30 webhooks_sent || fail "the API server does not call allot's webhooks within 30 s"
  if [ -n "$WRITER_PID" ]; then
    wait_until 60 is_ready "$WRITER_PORT" || fail "the writer replica: /readyz not 200 within 60 s"
  fi
}

# start_cluster_writer: a second replica in cluster mode, before
# start_cluster_allotd: no --webhook-address (it installs nothing and the
# API server never calls it), so it takes the Lease first and writes what
# the books decide, while the webhooks are answered by the other replica.
# Returns once it leads; start_cluster_allotd's readiness then covers both.
start_cluster_writer() {
  local port
  port=$(free_port)
  # (its Lease lives in allot's namespace, which the other replica's
  # install would otherwise be the first to make)
  kc get namespace allot-system >/dev/null 2>&1 || kc create namespace allot-system >/dev/null
  "$ALLOTD" --cluster-kubeconfig "$KUBE_DIR/kubeconfig" --port "$port" \
    --data-dir "$E2E_DIR/writer-data" 2>>"$WRITER_LOG" &
  WRITER_PID=$!
  wait_until 30 grep -q '"msg":"leading"' "$WRITER_LOG" ||
    fail "the writer replica does not lead within 30 s"
  WRITER_PORT=$port
}

# stop_cluster_allotd: SIGTERM, bounded wait, exit status 0 required.
stop_cluster_allotd() {
  [ -n "$CLUSTER_PID" ] || return 0
  kill -TERM "$CLUSTER_PID" 2>/dev/null || true
  wait_until 30 sh -c "! kill -0 $CLUSTER_PID" || fail "allotd (cluster mode) did not stop within 30 s"
  local rc=0
  wait "$CLUSTER_PID" || rc=$?
  CLUSTER_PID=
  [ $rc -eq 0 ] || fail "allotd (cluster mode) exited with status $rc"
}

kill9_cluster_allotd() {
  [ -n "$CLUSTER_PID" ] || return 0
  kill -9 "$CLUSTER_PID" 2>/dev/null || true
  wait "$CLUSTER_PID" 2>/dev/null || true
  CLUSTER_PID=
}

# ms_since START_NS: milliseconds since START_NS (date +%s%N).
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# pooled NS: the pool writer has marked namespace NS as one a pool selects
# (allot.dev/pooled=true): from then on claims there and its own updates go
# to allot's webhooks.
pooled() {
  [ "$(kc get namespace "$1" -o jsonpath='{.metadata.labels.allot\.dev/pooled}')" = true ]
}

# deferred_up: after kube_up, as deployed for deferred quota: `allotd tls`
# makes the CA, allot's serving certificate and kube-scheduler's client
# certificate (the extender serves no anonymous caller) in $E2E_DIR/tls;
# the writer replica, then the one the webhooks and the extender call;
# the default kube-scheduler replaced by one configured by `allotd
# scheduler-config` (its log: $KUBE_DIR/kube-scheduler-allot.log, shown by
# fail from then on); one node n1 of 64 cpu (no kubelet: bound pods stay
# Pending, their nodeName set; the API server taints a new node
# not-ready, so pods must tolerate it).
deferred_up() {
  "$ALLOTD" tls --out "$E2E_DIR/tls" --san 127.0.0.1 2>/dev/null || fail "allotd tls"
  start_cluster_writer
  start_cluster_allotd --tls-dir "$E2E_DIR/tls"
  "$ALLOTD" scheduler-config --kubeconfig "$KUBE_DIR/kubeconfig" \
    --extender-url "https://127.0.0.1:$CLUSTER_PORT/scheduler" --ca "$E2E_DIR/tls/ca.crt" \
    --client-cert "$E2E_DIR/tls/scheduler.crt" --client-key "$E2E_DIR/tls/scheduler.key" \
    >"$E2E_DIR/scheduler.yaml" || fail "allotd scheduler-config"
  # (one scheduler here: no election to wait for)
  /usr/bin/python3 - "$E2E_DIR/scheduler.yaml" <<'PY'
import sys, yaml
p = sys.argv[1]
cfg = yaml.safe_load(open(p))
cfg["leaderElection"] = {"leaderElect": False}
yaml.safe_dump(cfg, open(p, "w"))
PY
  local old
  old=$(cat "$KUBE_DIR/kube-scheduler.pid")
  kill "$old"
  wait_until 30 sh -c "! kill -0 $old" || fail "the default kube-scheduler did not stop"
  "$kbin/kube-scheduler" --config "$E2E_DIR/scheduler.yaml" --bind-address=127.0.0.1 -v=${ALLOT_SCHEDULER_V:-0} \
    --secure-port="$(free_port)" --port=0 >"$KUBE_DIR/kube-scheduler-allot.log" 2>&1 &
  echo $! >"$KUBE_DIR/kube-scheduler.pid"
  fail() {
    echo "FAIL: $*" >&2
    echo "--- kube-scheduler log (tail) ---" >&2
    tail -30 "$KUBE_DIR/kube-scheduler-allot.log" >&2 || true
    exit 1
  }
  kc create -f - >/dev/null <<'EOF'
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
 "status": {"capacity": {"cpu": "64", "memory": "256Gi", "pods": "110"},
            "allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"}}}
EOF
}
