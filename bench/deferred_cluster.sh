#!/usr/bin/env bash
# deferred_cluster.sh [ALLOTD] - issue 29's bench: deferred quota on the
# real Kubernetes v1.20.2 control plane (scripts/kube-up.sh), kube-scheduler
# configured by `allotd scheduler-config`, two allot replicas, as
# tests/cluster/lib.sh's deferred_up sets them up; then
# bench/deferred_cluster.py (free-to-bound latency, binds/s through allot's
# extender as a ratio to the scheduler alone). ROUNDS, PODS, PASSES: see it.
set -euo pipefail
cd "$(dirname "$0")/.."
export ALLOTD
ALLOTD=$(realpath "${1:-build/allotd}")
# shellcheck source=../tests/cluster/lib.sh
. tests/cluster/lib.sh
kube_up
deferred_up
/usr/bin/python3 bench/deferred_cluster.py "$KUBE_DIR/kubeconfig"
