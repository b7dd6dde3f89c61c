# test_pool_metrics.sh - Capsule's ResourcePool and ResourcePoolClaim gauges
# on allotd's /metrics (shared spec capsule-pools-and-custom-quotas.md §5),
# with the real kubectl: a pool (requests.cpu 2, limits.memory 4Gi) serving
# two labelled namespaces, claims that bind, claims that wait (exhausted), a
# claim in a namespace the pool does not serve, a pod that puts a claim in
# use; then a claim is deleted, the waiting claims bind and every number
# moves; then a claim waits on a resource with nothing available (no
# exhaustion percentage); then a namespace leaves the pool and its series
# go. At each step the whole set of capsule_* samples
# is compared, exactly (names, labels, values), so a missing or extra series
# fails too. Each family has one # HELP and one # TYPE gauge line and its
# samples together; if promtool is installed the scrape must pass
# `promtool check metrics` (naming lint is reported, not failed).
#
# Pools decide in the transaction of the write, and a scrape brings pool and
# claim status up to date first (as any read does), so the metrics are
# checked right after each kubectl write. Only what follows a pod's usage
# (the Bound=True condition) is waited for, bounded.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl
start_allotd
cd "$E2E_DIR"

GROUP=capsule.clastix.io
P=metrics-pool

# rl "a=1,b=2": a resource list as JSON.
rl() {
  local out="" kv
  local IFS=,
  for kv in $1; do out+="${out:+,}\"${kv%%=*}\":\"${kv#*=}\""; done
  printf '{%s}' "$out"
}
# mkns NAME [k=v,...]
mkns() {
  k create -f - >/dev/null <<EOF
{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"$1","labels":$(rl "${2:-}")}}
EOF
}
# mkclaim NS NAME CLAIM: a claim for pool $P.
mkclaim() {
  k create -f - >/dev/null <<EOF
{"apiVersion":"$GROUP/v1beta2","kind":"ResourcePoolClaim","metadata":{"name":"$2","namespace":"$1"},
 "spec":{"pool":"$P","claim":$(rl "$3")}}
EOF
}
# exhausted NS NAME: the claim's Exhausted condition status/reason.
exhausted() {
  k get resourcepoolclaim "$2" -n "$1" \
    -o 'jsonpath={.status.conditions[?(@.type=="Exhausted")].status}/{.status.conditions[?(@.type=="Exhausted")].reason}'
}

# scrape: the whole /metrics text.
scrape() {
  curl -sS --fail --max-time 20 --cacert "$E2E_DIR/data/ca.crt" \
    -H "Authorization: Bearer $ALLOT_TOKEN" "$ALLOT_URL/metrics"
}
# capsule_samples: the capsule_* sample lines of one scrape, sorted.
capsule_samples() {
  local text
  text=$(scrape) || return 1
  grep '^capsule_' <<<"$text" | LC_ALL=C sort || true
}
_samples_are() { [ "$(capsule_samples)" == "$1" ]; }
# expect_samples WHAT [WAIT]: the capsule_* samples are exactly stdin's lines
# (any order); with WAIT, wait for it (bounded) first.
expect_samples() {
  local what=$1 want got
  want=$(LC_ALL=C sort)
  [ -z "${2:-}" ] || wait_until 15 _samples_are "$want" || true
  got=$(capsule_samples)
  if [ "$got" != "$want" ]; then
    diff <(echo "$want") <(echo "$got") | sed 's/^/    /' >&2 || true
    fail "$what: capsule_* samples differ (< want, > got)"
  fi
}

FAMILIES="capsule_pool_resource capsule_pool_limit capsule_pool_usage capsule_pool_available
  capsule_pool_usage_percentage capsule_pool_exhaustion capsule_pool_exhaustion_percentage
  capsule_pool_namespace_usage capsule_pool_namespace_usage_percentage capsule_pool_condition
  capsule_claim_condition capsule_claim_resource capsule_claim_pool"

# expect_well_formed: one # HELP and one # TYPE gauge line per family, before
# its samples, and each family's samples in one group.
expect_well_formed() {
  local text f
  text=$(scrape)
  for f in $FAMILIES; do
    expect_eq "$f # HELP lines" "$(grep -c "^# HELP $f " <<<"$text")" 1
    expect_eq "$f # TYPE" "$(grep "^# TYPE $f " <<<"$text")" "# TYPE $f gauge"
  done
  local bad
  bad=$(awk '
    /^# TYPE / { typed[$3] = 1; next }
    /^#/ || NF == 0 { next }
    { name = $0; sub(/[{ ].*/, "", name)
      if (name !~ /^capsule_/) { last = ""; next }
      if (!(name in typed)) print "sample before its # TYPE: " $0
      if (name != last && (name in seen)) print "family not in one group: " $0
      seen[name] = 1; last = name }' <<<"$text")
  expect_eq "exposition layout" "$bad" ""
}

# promtool_check: `promtool check metrics` on a scrape, if promtool is
# installed. Exit 1 (the text does not parse) fails; exit 3 is lint: naming
# advice is reported as a warning, any other lint about a capsule_* family
# fails.
promtool_check() {
  local tool
  tool=$(command -v promtool || true)
  if [ -z "$tool" ]; then
    echo "SKIP promtool check metrics: promtool is not installed (Debian package prometheus)"
    return 0
  fi
  local text out rc=0
  text=$(scrape)
  out=$("$tool" check metrics <<<"$text" 2>&1) || rc=$?
  case $rc in
    0) echo "promtool check metrics: ok" ;;
    3)
      local naming='should not contain abbreviated units|use base unit|snake_case|suffix|should not include type'
      local hard
      hard=$(grep '^capsule_' <<<"$out" | grep -Ev "$naming" || true)
      [ -z "$hard" ] || fail "promtool lint on capsule_* families: $hard"
      echo "promtool check metrics: lint warnings (tolerated):"
      sed 's/^/    /' <<<"$out"
      ;;
    *) fail "promtool check metrics failed (exit $rc): $out" ;;
  esac
}

# ------------------------------------------------------------------- setup --

mkns pm-a pool-metrics=yes
mkns pm-b pool-metrics=yes
mkns pm-c
k create -f - >/dev/null <<EOF
{"apiVersion":"$GROUP/v1beta2","kind":"ResourcePool","metadata":{"name":"$P"},
 "spec":{"selectors":[{"matchLabels":{"pool-metrics":"yes"}}],
         "quota":{"hard":{"requests.cpu":"2","limits.memory":"4Gi"}}}}
EOF

# A fresh pool: every hard resource, nothing claimed.
expect_samples "empty pool" <<EOF
capsule_pool_resource{pool="$P",resource="limits.memory"} 1
capsule_pool_resource{pool="$P",resource="requests.cpu"} 1
capsule_pool_limit{pool="$P",resource="limits.memory"} 4294967296
capsule_pool_limit{pool="$P",resource="requests.cpu"} 2
capsule_pool_usage{pool="$P",resource="limits.memory"} 0
capsule_pool_usage{pool="$P",resource="requests.cpu"} 0
capsule_pool_available{pool="$P",resource="limits.memory"} 4294967296
capsule_pool_available{pool="$P",resource="requests.cpu"} 2
capsule_pool_usage_percentage{pool="$P",resource="limits.memory"} 0
capsule_pool_usage_percentage{pool="$P",resource="requests.cpu"} 0
capsule_pool_condition{pool="$P",condition="Ready"} 1
capsule_pool_condition{pool="$P",condition="Exhausted"} 0
EOF
echo "ok   empty pool"

# a1 and b1 bind (1.5 cpu, 3Gi of 2 cpu, 4Gi); b2 (750m cpu > 500m left) and
# a2 (3Gi > 1Gi left) wait; c1 is in a namespace the pool does not serve.
mkclaim pm-a a1 "requests.cpu=1,limits.memory=1Gi"
mkclaim pm-b b1 "requests.cpu=500m,limits.memory=2Gi"
mkclaim pm-b b2 "requests.cpu=750m"
mkclaim pm-a a2 "limits.memory=3Gi"
mkclaim pm-c c1 "requests.cpu=1"
expect_eq "b2 Exhausted" "$(exhausted pm-b b2)" "True/PoolExhausted"
expect_eq "a2 Exhausted" "$(exhausted pm-a a2)" "True/PoolExhausted"

POOL_BOUND=$(cat <<EOF
capsule_pool_resource{pool="$P",resource="limits.memory"} 1
capsule_pool_resource{pool="$P",resource="requests.cpu"} 1
capsule_pool_limit{pool="$P",resource="limits.memory"} 4294967296
capsule_pool_limit{pool="$P",resource="requests.cpu"} 2
capsule_pool_usage{pool="$P",resource="limits.memory"} 3221225472
capsule_pool_usage{pool="$P",resource="requests.cpu"} 1.5
capsule_pool_available{pool="$P",resource="limits.memory"} 1073741824
capsule_pool_available{pool="$P",resource="requests.cpu"} 0.5
capsule_pool_usage_percentage{pool="$P",resource="limits.memory"} 75
capsule_pool_usage_percentage{pool="$P",resource="requests.cpu"} 75
capsule_pool_exhaustion{pool="$P",resource="limits.memory"} 3221225472
capsule_pool_exhaustion{pool="$P",resource="requests.cpu"} 0.75
capsule_pool_exhaustion_percentage{pool="$P",resource="limits.memory"} 200
capsule_pool_exhaustion_percentage{pool="$P",resource="requests.cpu"} 50
capsule_pool_namespace_usage{pool="$P",target_namespace="pm-a",resource="limits.memory"} 1073741824
capsule_pool_namespace_usage{pool="$P",target_namespace="pm-a",resource="requests.cpu"} 1
capsule_pool_namespace_usage{pool="$P",target_namespace="pm-b",resource="limits.memory"} 2147483648
capsule_pool_namespace_usage{pool="$P",target_namespace="pm-b",resource="requests.cpu"} 0.5
capsule_pool_namespace_usage_percentage{pool="$P",target_namespace="pm-a",resource="limits.memory"} 25
capsule_pool_namespace_usage_percentage{pool="$P",target_namespace="pm-a",resource="requests.cpu"} 50
capsule_pool_namespace_usage_percentage{pool="$P",target_namespace="pm-b",resource="limits.memory"} 50
capsule_pool_namespace_usage_percentage{pool="$P",target_namespace="pm-b",resource="requests.cpu"} 25
capsule_pool_condition{pool="$P",condition="Ready"} 1
capsule_pool_condition{pool="$P",condition="Exhausted"} 1
capsule_claim_condition{name="a2",target_namespace="pm-a",condition="Ready"} 1
capsule_claim_condition{name="a2",target_namespace="pm-a",condition="Exhausted"} 1
capsule_claim_condition{name="a2",target_namespace="pm-a",condition="Bound"} 0
capsule_claim_condition{name="b1",target_namespace="pm-b",condition="Ready"} 1
capsule_claim_condition{name="b1",target_namespace="pm-b",condition="Exhausted"} 0
capsule_claim_condition{name="b1",target_namespace="pm-b",condition="Bound"} 0
capsule_claim_condition{name="b2",target_namespace="pm-b",condition="Ready"} 1
capsule_claim_condition{name="b2",target_namespace="pm-b",condition="Exhausted"} 1
capsule_claim_condition{name="b2",target_namespace="pm-b",condition="Bound"} 0
capsule_claim_condition{name="c1",target_namespace="pm-c",condition="Ready"} 0
capsule_claim_resource{name="a1",target_namespace="pm-a",resource="limits.memory"} 1073741824
capsule_claim_resource{name="a1",target_namespace="pm-a",resource="requests.cpu"} 1
capsule_claim_resource{name="a2",target_namespace="pm-a",resource="limits.memory"} 3221225472
capsule_claim_resource{name="b1",target_namespace="pm-b",resource="limits.memory"} 2147483648
capsule_claim_resource{name="b1",target_namespace="pm-b",resource="requests.cpu"} 0.5
capsule_claim_resource{name="b2",target_namespace="pm-b",resource="requests.cpu"} 0.75
capsule_claim_resource{name="c1",target_namespace="pm-c",resource="requests.cpu"} 1
capsule_claim_pool{name="a1",target_namespace="pm-a",pool="$P"} 1
capsule_claim_pool{name="a2",target_namespace="pm-a",pool="$P"} 1
capsule_claim_pool{name="b1",target_namespace="pm-b",pool="$P"} 1
capsule_claim_pool{name="b2",target_namespace="pm-b",pool="$P"} 1
capsule_claim_pool{name="c1",target_namespace="pm-c",pool="$P"} 1
EOF
)

# c1 has no status.pool (it failed): its pool label is spec.pool. It has only
# a Ready condition, so no Exhausted or Bound series.
expect_samples "claims bound and waiting" <<EOF
$POOL_BOUND
capsule_claim_condition{name="a1",target_namespace="pm-a",condition="Ready"} 1
capsule_claim_condition{name="a1",target_namespace="pm-a",condition="Exhausted"} 0
capsule_claim_condition{name="a1",target_namespace="pm-a",condition="Bound"} 0
EOF
expect_well_formed
promtool_check
echo "ok   claims bound and waiting"

# A pod in pm-a uses what a1 holds: a1 is Bound (in use).
k create -f - >/dev/null <<EOF
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"user","namespace":"pm-a"},
 "spec":{"containers":[{"name":"main","image":"nginx",
   "resources":{"requests":{"cpu":"100m"},"limits":{"memory":"128Mi"}}}]}}
EOF
expect_samples "a1 in use" wait <<EOF
$POOL_BOUND
capsule_claim_condition{name="a1",target_namespace="pm-a",condition="Ready"} 1
capsule_claim_condition{name="a1",target_namespace="pm-a",condition="Exhausted"} 0
capsule_claim_condition{name="a1",target_namespace="pm-a",condition="Bound"} 1
EOF
echo "ok   a1 in use"

# Deleting b1 gives back 500m cpu and 2Gi: b2 and a2 bind, nothing waits,
# b1's series and pm-b's memory usage are gone.
k delete resourcepoolclaim b1 -n pm-b --wait=true --timeout=30s >/dev/null
expect_eq "b2 Exhausted" "$(exhausted pm-b b2)" "False/NoExhaustions"
expect_eq "a2 Exhausted" "$(exhausted pm-a a2)" "False/NoExhaustions"
POOL_FULL=$(cat <<EOF
capsule_pool_resource{pool="$P",resource="limits.memory"} 1
capsule_pool_resource{pool="$P",resource="requests.cpu"} 1
capsule_pool_limit{pool="$P",resource="limits.memory"} 4294967296
capsule_pool_limit{pool="$P",resource="requests.cpu"} 2
capsule_pool_usage{pool="$P",resource="limits.memory"} 4294967296
capsule_pool_usage{pool="$P",resource="requests.cpu"} 1.75
capsule_pool_available{pool="$P",resource="limits.memory"} 0
capsule_pool_available{pool="$P",resource="requests.cpu"} 0.25
capsule_pool_usage_percentage{pool="$P",resource="limits.memory"} 100
capsule_pool_usage_percentage{pool="$P",resource="requests.cpu"} 87.5
capsule_pool_condition{pool="$P",condition="Ready"} 1
capsule_claim_condition{name="a1",target_namespace="pm-a",condition="Ready"} 1
capsule_claim_condition{name="a1",target_namespace="pm-a",condition="Exhausted"} 0
capsule_claim_condition{name="a1",target_namespace="pm-a",condition="Bound"} 1
capsule_claim_condition{name="a2",target_namespace="pm-a",condition="Ready"} 1
capsule_claim_condition{name="a2",target_namespace="pm-a",condition="Exhausted"} 0
capsule_claim_condition{name="a2",target_namespace="pm-a",condition="Bound"} 0
capsule_claim_condition{name="b2",target_namespace="pm-b",condition="Ready"} 1
capsule_claim_condition{name="b2",target_namespace="pm-b",condition="Exhausted"} 0
capsule_claim_condition{name="b2",target_namespace="pm-b",condition="Bound"} 0
capsule_claim_condition{name="c1",target_namespace="pm-c",condition="Ready"} 0
capsule_claim_resource{name="a1",target_namespace="pm-a",resource="limits.memory"} 1073741824
capsule_claim_resource{name="a1",target_namespace="pm-a",resource="requests.cpu"} 1
capsule_claim_resource{name="a2",target_namespace="pm-a",resource="limits.memory"} 3221225472
capsule_claim_resource{name="b2",target_namespace="pm-b",resource="requests.cpu"} 0.75
capsule_claim_resource{name="c1",target_namespace="pm-c",resource="requests.cpu"} 1
capsule_claim_pool{name="a1",target_namespace="pm-a",pool="$P"} 1
capsule_claim_pool{name="a2",target_namespace="pm-a",pool="$P"} 1
capsule_claim_pool{name="b2",target_namespace="pm-b",pool="$P"} 1
capsule_claim_pool{name="c1",target_namespace="pm-c",pool="$P"} 1
EOF
)
expect_samples "b1 deleted" <<EOF
$POOL_FULL
capsule_pool_namespace_usage{pool="$P",target_namespace="pm-a",resource="limits.memory"} 4294967296
capsule_pool_namespace_usage{pool="$P",target_namespace="pm-a",resource="requests.cpu"} 1
capsule_pool_namespace_usage{pool="$P",target_namespace="pm-b",resource="requests.cpu"} 0.75
capsule_pool_namespace_usage_percentage{pool="$P",target_namespace="pm-a",resource="limits.memory"} 100
capsule_pool_namespace_usage_percentage{pool="$P",target_namespace="pm-a",resource="requests.cpu"} 50
capsule_pool_namespace_usage_percentage{pool="$P",target_namespace="pm-b",resource="requests.cpu"} 37.5
capsule_pool_condition{pool="$P",condition="Exhausted"} 0
EOF
echo "ok   b1 deleted: b2 and a2 bound"

# No memory is left: b3 waits; the pool reports what it requests, but no
# exhaustion percentage (available is 0).
mkclaim pm-b b3 "limits.memory=1Gi"
expect_eq "b3 Exhausted" "$(exhausted pm-b b3)" "True/PoolExhausted"
expect_samples "b3 waits on nothing available" <<EOF
$POOL_FULL
capsule_pool_namespace_usage{pool="$P",target_namespace="pm-a",resource="limits.memory"} 4294967296
capsule_pool_namespace_usage{pool="$P",target_namespace="pm-a",resource="requests.cpu"} 1
capsule_pool_namespace_usage{pool="$P",target_namespace="pm-b",resource="requests.cpu"} 0.75
capsule_pool_namespace_usage_percentage{pool="$P",target_namespace="pm-a",resource="limits.memory"} 100
capsule_pool_namespace_usage_percentage{pool="$P",target_namespace="pm-a",resource="requests.cpu"} 50
capsule_pool_namespace_usage_percentage{pool="$P",target_namespace="pm-b",resource="requests.cpu"} 37.5
capsule_pool_exhaustion{pool="$P",resource="limits.memory"} 1073741824
capsule_pool_condition{pool="$P",condition="Exhausted"} 1
capsule_claim_condition{name="b3",target_namespace="pm-b",condition="Ready"} 1
capsule_claim_condition{name="b3",target_namespace="pm-b",condition="Exhausted"} 1
capsule_claim_condition{name="b3",target_namespace="pm-b",condition="Bound"} 0
capsule_claim_resource{name="b3",target_namespace="pm-b",resource="limits.memory"} 1073741824
capsule_claim_pool{name="b3",target_namespace="pm-b",pool="$P"} 1
EOF
expect_well_formed
promtool_check
echo "ok   b3 waits on nothing available"

# pm-b leaves the pool (its label goes): b2 and b3 are let go (Ready=False,
# no status.pool, no Exhausted or Bound), pm-b's namespace series are gone
# and nothing waits any more. (Capsule's cleanup of namespace series matches
# a label they do not have, §1.8, and keeps them; here every scrape reads
# the stored pool, so there is nothing left behind.)
k label namespace pm-b pool-metrics- >/dev/null
expect_samples "pm-b left the pool" <<EOF
capsule_pool_resource{pool="$P",resource="limits.memory"} 1
capsule_pool_resource{pool="$P",resource="requests.cpu"} 1
capsule_pool_limit{pool="$P",resource="limits.memory"} 4294967296
capsule_pool_limit{pool="$P",resource="requests.cpu"} 2
capsule_pool_usage{pool="$P",resource="limits.memory"} 4294967296
capsule_pool_usage{pool="$P",resource="requests.cpu"} 1
capsule_pool_available{pool="$P",resource="limits.memory"} 0
capsule_pool_available{pool="$P",resource="requests.cpu"} 1
capsule_pool_usage_percentage{pool="$P",resource="limits.memory"} 100
capsule_pool_usage_percentage{pool="$P",resource="requests.cpu"} 50
capsule_pool_namespace_usage{pool="$P",target_namespace="pm-a",resource="limits.memory"} 4294967296
capsule_pool_namespace_usage{pool="$P",target_namespace="pm-a",resource="requests.cpu"} 1
capsule_pool_namespace_usage_percentage{pool="$P",target_namespace="pm-a",resource="limits.memory"} 100
capsule_pool_namespace_usage_percentage{pool="$P",target_namespace="pm-a",resource="requests.cpu"} 50
capsule_pool_condition{pool="$P",condition="Ready"} 1
capsule_pool_condition{pool="$P",condition="Exhausted"} 0
capsule_claim_condition{name="a1",target_namespace="pm-a",condition="Ready"} 1
capsule_claim_condition{name="a1",target_namespace="pm-a",condition="Exhausted"} 0
capsule_claim_condition{name="a1",target_namespace="pm-a",condition="Bound"} 1
capsule_claim_condition{name="a2",target_namespace="pm-a",condition="Ready"} 1
capsule_claim_condition{name="a2",target_namespace="pm-a",condition="Exhausted"} 0
capsule_claim_condition{name="a2",target_namespace="pm-a",condition="Bound"} 0
capsule_claim_condition{name="b2",target_namespace="pm-b",condition="Ready"} 0
capsule_claim_condition{name="b3",target_namespace="pm-b",condition="Ready"} 0
capsule_claim_condition{name="c1",target_namespace="pm-c",condition="Ready"} 0
capsule_claim_resource{name="a1",target_namespace="pm-a",resource="limits.memory"} 1073741824
capsule_claim_resource{name="a1",target_namespace="pm-a",resource="requests.cpu"} 1
capsule_claim_resource{name="a2",target_namespace="pm-a",resource="limits.memory"} 3221225472
capsule_claim_resource{name="b2",target_namespace="pm-b",resource="requests.cpu"} 0.75
capsule_claim_resource{name="b3",target_namespace="pm-b",resource="limits.memory"} 1073741824
capsule_claim_resource{name="c1",target_namespace="pm-c",resource="requests.cpu"} 1
capsule_claim_pool{name="a1",target_namespace="pm-a",pool="$P"} 1
capsule_claim_pool{name="a2",target_namespace="pm-a",pool="$P"} 1
capsule_claim_pool{name="b2",target_namespace="pm-b",pool="$P"} 1
capsule_claim_pool{name="b3",target_namespace="pm-b",pool="$P"} 1
capsule_claim_pool{name="c1",target_namespace="pm-c",pool="$P"} 1
EOF
echo "ok   pm-b left the pool"

expect_eq "alive" "$(api GET /healthz | tail -n1)" 200
stop_allotd
echo "test_pool_metrics: ok"
