# test_dashboard.sh - the live quota dashboard (/ui) in a real browser:
# Debian's chromium driven by playwright-core (tests/browser/dashboard.mjs)
# while kubectl changes quotas, pods, pools and custom quotas; then 1,000
# namespaces x 3 quotas and the first render's time. Screenshots go to
# ${ALLOT_ARTIFACTS:-$E2E_DIR} (the latter is removed when the test ends).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
root=$(cd "$here/../.." && pwd)
need_kubectl
command -v node >/dev/null || fail "node is not installed (Debian package nodejs; scripts/setup.sh installs it)"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || fail "node $(node --version) is too old: playwright-core needs Node.js 20 or later"
[ -f "$root/node_modules/playwright-core/package.json" ] ||
  fail "node_modules/playwright-core is missing: run 'npm ci' at the repository root (scripts/setup.sh does)"
[ -x /usr/bin/chromium ] || fail "/usr/bin/chromium is missing (Debian package chromium; scripts/setup.sh installs it)"
[ -z "${ALLOT_ARTIFACTS:-}" ] || mkdir -p "$ALLOT_ARTIFACTS"

node "$root/tests/browser/unit.mjs"

# a short watch history, so that the test can resume a watch from a version
# the server no longer keeps (410 Gone); alice is a tenant admin (her group
# gets RoleBindings to admin in two namespaces during the test)
ALICE_TOKEN=alice-$RANDOM$RANDOM$RANDOM
printf '%s,alice,alice-uid,"tenant-a-admins"\n' "$ALICE_TOKEN" >"$E2E_DIR/tokens.csv"
export ALICE_TOKEN
start_allotd --feature-gates=DeferredResourceQuota=true --watch-history 100 \
  --token-auth-file "$E2E_DIR/tokens.csv"

# node runs in the background so that the cleanup can end it (and with it
# the chromium it launched) if this script is interrupted
NODE_PID=
stop_node() {
  if [ -n "$NODE_PID" ]; then kill "$NODE_PID" 2>/dev/null || true; wait "$NODE_PID" 2>/dev/null || true; fi
  NODE_PID=
}
on_cleanup stop_node

E2E_DIR=$E2E_DIR node "$root/tests/browser/dashboard.mjs" &
NODE_PID=$!
rc=0
wait "$NODE_PID" || rc=$?
NODE_PID=
[ $rc -eq 0 ] || fail "the browser test failed (exit $rc)"

stop_allotd
echo "PASS test_dashboard"
