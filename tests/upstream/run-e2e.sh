#!/usr/bin/env bash
# run-e2e.sh FOCUS [extra e2e.test args]: run upstream Kubernetes v1.20.2's own
# end-to-end specs (e2e.test, built by scripts/kube-build.sh) whose names match
# the regex FOCUS against a fresh allotd with three simulated nodes, then stop
# allotd cleanly. The exit status is the specs' result: 0 when every focused
# spec passed, 77 (ctest's SKIP_RETURN_CODE) when there is no e2e.test.
#
# e2e.test:  $ALLOT_E2E_TEST, else $ALLOT_KUBE_BIN/e2e.test, else the cache of
#            scripts/kube-build.sh (${ALLOT_KUBE_CACHE:-~/.cache/allot/kubernetes-1.20.2}/bin).
# kubectl:   $ALLOT_E2E_KUBECTL, else the v1.20.2 kubectl built beside e2e.test
#            (upstream runs e2e.test with the kubectl of its own version: the
#            specs match that kubectl's messages), else the one on PATH.
# allotd:    $ALLOTD, else build/allotd (the release build).
# Reports:   e2e.test's full output and JUnit XML go to $ALLOT_E2E_REPORT_DIR
#            when set (kept), else to a scratch dir that is removed.
# Bounded:   $ALLOT_E2E_TIMEOUT seconds (default 2400) for the whole run.
#
# The one accommodation: --e2e-verify-service-account=false (1.20's framework
# waits for the legacy token Secret of each namespace's `default`
# ServiceAccount, which clusters stopped creating in 1.24; allotd creates none).
# docs/upstream-e2e.md lists the spec sets and what they leave out.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

if [ $# -lt 1 ]; then
  echo "usage: $0 FOCUS [extra e2e.test args]" >&2
  exit 2
fi
focus=$1
shift

kbin=${ALLOT_KUBE_BIN:-${ALLOT_KUBE_CACHE:-$HOME/.cache/allot/kubernetes-1.20.2}/bin}
e2e_test=${ALLOT_E2E_TEST:-$kbin/e2e.test}
if [ ! -x "$e2e_test" ]; then
  echo "SKIP: no e2e.test at $e2e_test (scripts/kube-build.sh builds it)"
  exit 77
fi
kubectl_bin=${ALLOT_E2E_KUBECTL:-$(dirname "$e2e_test")/kubectl}
[ -x "$kubectl_bin" ] || kubectl_bin=$(command -v kubectl || true)
[ -n "$kubectl_bin" ] || { echo "FAIL: no kubectl for the specs that run it" >&2; exit 1; }

export ALLOTD=${ALLOTD:-$root/build/allotd}
# shellcheck source=tests/e2e/lib.sh disable=SC1091
source "$root/tests/e2e/lib.sh"

report=${ALLOT_E2E_REPORT_DIR:-$E2E_DIR/report}
mkdir -p "$report"
rm -f "$report"/junit_*.xml "$report/e2e.log"
start_allotd --simulated-nodes 3

echo "upstream e2e: $("$e2e_test" --version 2>/dev/null || echo e2e.test), kubectl $kubectl_bin"
echo "upstream e2e: focus '$focus' $*"
rc=0
# The allotd process is ours to stop: e2e.test gets its own process group under
# timeout(1) so a time-out ends it and whatever it started, and nothing else.
timeout --kill-after=30 "${ALLOT_E2E_TIMEOUT:-2400}" \
  "$e2e_test" \
  --kubeconfig="$KUBECONFIG" \
  --provider=skeleton \
  --e2e-verify-service-account=false \
  --kubectl-path="$kubectl_bin" \
  --ginkgo.focus="$focus" \
  --ginkgo.noColor \
  --report-dir="$report" \
  --e2e-output-dir="$report" \
  --disable-log-dump \
  --node-schedulable-timeout=2m \
  --system-pods-startup-timeout=2m \
  "$@" >"$report/e2e.log" 2>&1 || rc=$?

# The outcome: ginkgo's closing lines and, for each failed spec, its first error.
/usr/bin/python3 "$here/junit-summary.py" "$report" || true
grep -E '^(Ran [0-9]+ of|(SUCCESS|FAIL)! --)' "$report/e2e.log" || tail -20 "$report/e2e.log"
[ $rc -ne 124 ] || echo "FAIL: e2e.test did not finish within ${ALLOT_E2E_TIMEOUT:-2400}s"
[ -z "${ALLOT_E2E_REPORT_DIR:-}" ] || echo "upstream e2e: full log in $report/e2e.log"
stop_allotd
exit $rc
