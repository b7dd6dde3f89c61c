# lib.sh - shared helpers for end-to-end tests: start a real allotd, wait for
# it with bounded polling, and stop it checking that it exited cleanly (under
# ASan a leak or crash makes the exit status non-zero).
set -euo pipefail

: "${ALLOTD:?ALLOTD must point at the allotd binary}"
E2E_DIR=$(mktemp -d /tmp/allot-e2e.XXXXXX)
# kubectl's discovery cache, per test: it is keyed by host:port, and a port
# a test's allotd gets may have served another API (a real kube-apiserver
# of a concurrent test) minutes before, whose cached discovery kubectl would
# trust ("the server could not find the requested resource").
export KUBECACHEDIR=$E2E_DIR/kubecache
# Objects more than one test creates as written (tests/fixtures/README.md).
FIXTURES=$(cd "$(dirname "${BASH_SOURCE[0]}")/../fixtures" && pwd)
ALLOT_PID=
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

fail() { echo "FAIL: $*" >&2; exit 1; }

# grep_all ARGS...: grep that reads its whole input. `cmd | grep -q` under
# pipefail is a race: grep -q exits at the first match, and a writer still
# writing dies of SIGPIPE, failing the pipeline although the text was there.
grep_all() { grep "$@" >/dev/null; }

# wait_until SECONDS CMD...: run CMD every 50 ms until it succeeds or time runs out.
wait_until() {
  local limit=$1; shift
  local deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.05
  done
}

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_allotd [extra flags]: data in $E2E_DIR/data; sets KUBECONFIG and ALLOT_PORT.
start_allotd() {
  ALLOT_PORT=${ALLOT_PORT:-$(free_port)}
  rm -f "$E2E_DIR/data/kubeconfig"
  "$ALLOTD" --data-dir "$E2E_DIR/data" --port "$ALLOT_PORT" "$@" 2>>"$E2E_DIR/allotd.log" &
  ALLOT_PID=$!
  if ! wait_until 60 test -s "$E2E_DIR/data/kubeconfig"; then
    tail -20 "$E2E_DIR/allotd.log" >&2
    fail "allotd did not become ready"
  fi
  export KUBECONFIG="$E2E_DIR/data/kubeconfig"
  ALLOT_TOKEN=$(cat "$E2E_DIR/data/admin.token")
  ALLOT_URL="https://127.0.0.1:$ALLOT_PORT"
  export ALLOT_PORT ALLOT_TOKEN ALLOT_URL
}

# stop_allotd: SIGTERM, wait (bounded), require exit status 0.
stop_allotd() {
  [ -n "$ALLOT_PID" ] || return 0
  kill -TERM "$ALLOT_PID" 2>/dev/null || true
  local rc=0
  for _ in $(seq 1 600); do
    kill -0 "$ALLOT_PID" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$ALLOT_PID" 2>/dev/null; then
    kill -9 "$ALLOT_PID"; wait "$ALLOT_PID" 2>/dev/null || true
    ALLOT_PID=
    fail "allotd did not stop within 30s of SIGTERM"
  fi
  wait "$ALLOT_PID" || rc=$?
  ALLOT_PID=
  if [ $rc -ne 0 ]; then
    tail -40 "$E2E_DIR/allotd.log" >&2
    fail "allotd exited with status $rc"
  fi
}

# kill9_allotd: crash it on purpose.
kill9_allotd() {
  kill -9 "$ALLOT_PID" 2>/dev/null || true
  wait "$ALLOT_PID" 2>/dev/null || true
  ALLOT_PID=
}

# on_cleanup CMD: run CMD (best effort) when the test exits, before allotd
# is stopped (for what a test starts besides allotd).
CLEANUP_HOOKS=()
on_cleanup() { CLEANUP_HOOKS+=("$1"); }

cleanup() {
  local rc=$? hook
  for hook in "${CLEANUP_HOOKS[@]}"; do $hook || true; done
  if [ -n "$ALLOT_PID" ]; then kill -9 "$ALLOT_PID" 2>/dev/null || true; fi
  if [ $rc -ne 0 ]; then echo "--- allotd log (tail) ---" >&2; tail -30 "$E2E_DIR/allotd.log" >&2 || true; fi
  if [ $rc -ne 0 ] && [ -n "${KEEP_E2E:-}" ]; then cp "$E2E_DIR/allotd.log" "$KEEP_E2E" 2>/dev/null || true; fi
  rm -rf "$E2E_DIR"
}
trap cleanup EXIT

# api METHOD PATH [curl args...]: raw HTTPS request; prints body, then the code on the last line.
api() {
  local method=$1 path=$2; shift 2
  curl -sS --cacert "$E2E_DIR/data/ca.crt" -H "Authorization: Bearer $ALLOT_TOKEN" \
    -X "$method" -w '\n%{http_code}' "$@" "$ALLOT_URL$path"
}

# k ARGS...: the real kubectl against the allotd start_allotd started (KUBECONFIG),
# bounded per request.
k() { kubectl --request-timeout=20s "$@"; }

# need_kubectl: the kubectl tests cannot run without it.
need_kubectl() { command -v kubectl >/dev/null || fail "kubectl is not installed"; }

# expect_eq WHAT GOT WANT
expect_eq() {
  [ "$2" == "$3" ] || fail "$1: got [$2], want [$3]"
}

# expect_contains WHAT HAYSTACK NEEDLE
expect_contains() {
  case "$2" in *"$3"*) ;; *) fail "$1: [$2] does not contain [$3]" ;; esac
}
