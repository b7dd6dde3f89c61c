#!/usr/bin/env bash
# test_pool_race.sh - issue 28's race test (cluster/pool-race): the control
# plane of scripts/kube-up.sh (tests/cluster/lib.sh), then
# test_pool_race.py, which starts two allotd replicas in cluster mode on it,
# runs the load, kills the leader twice and checks the invariants (its
# header says what and why). Exit 77 (skipped) without the kube binaries,
# etcd or Debian's python3-kubernetes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
/usr/bin/python3 -c 'import kubernetes' 2>/dev/null || { echo "SKIP: no python3-kubernetes"; exit 77; }

kube_up
RACE_DIR=$E2E_DIR/race
mkdir -p "$RACE_DIR"
# The replicas are the script's children; should it die first, the pids it
# last listed are killed here (each by its id).
stop_replicas() {
  [ -f "$RACE_DIR/pids" ] || return 0
  local p
  while read -r p; do kill -9 "$p" 2>/dev/null || true; done <"$RACE_DIR/pids"
}
on_cleanup stop_replicas
/usr/bin/python3 "$(dirname "$0")/test_pool_race.py" --kube-dir "$KUBE_DIR" --allotd "$ALLOTD" \
  --work "$RACE_DIR"
