#!/usr/bin/env bash
# test_deferred_race.sh - issue 29's race test (cluster/deferred-race): the
# control plane, both allot replicas and kube-scheduler with allot as its
# extender (tests/cluster/lib.sh, deferred_up), then test_deferred_race.py:
# 200 pods at once against a deferred quota of 25 cpu, bound pods deleted
# meanwhile, the writer replica SIGKILLed; never more than 25 cpu bound,
# the books exact at the end, every unbound pod Pending on the quota's
# message, and all bound once the quota is raised. Exit 77 (skipped)
# without the kube binaries, etcd or Debian's python3-kubernetes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
/usr/bin/python3 -c 'import kubernetes' 2>/dev/null || { echo "SKIP: no python3-kubernetes"; exit 77; }

kube_up
deferred_up
# ALLOT_RACE_KEEP=DIR: the replicas' and the scheduler's logs kept there.
keep_logs() {
  [ -n "${ALLOT_RACE_KEEP:-}" ] || return 0
  mkdir -p "$ALLOT_RACE_KEEP"
  cp "$CLUSTER_LOG" "$WRITER_LOG" "$KUBE_DIR/kube-scheduler-allot.log" "$ALLOT_RACE_KEEP/" || true
}
on_cleanup keep_logs
/usr/bin/python3 "$(dirname "$0")/test_deferred_race.py" --kubeconfig "$KUBE_DIR/kubeconfig" \
  --writer-pid "$WRITER_PID" || fail "the race test"
