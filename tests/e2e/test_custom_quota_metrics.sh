# test_custom_quota_metrics.sh - Capsule's CustomQuota and GlobalCustomQuota
# gauges on allotd's /metrics (shared spec capsule-pools-and-custom-quotas.md
# §5), with the real kubectl: a CustomQuota counting the pods of one
# namespace (limit 3, emitMetricPerClaimUsage: true), one in another
# namespace without per-claim series (options left out: defaulted false),
# and a GlobalCustomQuota summing the pods' cpu requests (JSONPath
# `.spec.containers[*].resources.requests.cpu`, two containers sum) over the
# two namespaces labelled team=cqm, with per-claim series. Pods are created
# (one in an unlabelled namespace, counted by nothing), the pod quota is
# filled and a pod over it denied (nothing moves), a pod is deleted and
# every number moves, then the global quota is deleted and its series go.
# At each step the whole set of custom quota samples is compared, exactly
# (names, labels, values), so a missing or extra series fails too. Each
# family has one # HELP and one # TYPE gauge line and its samples together;
# if promtool is installed the scrape must pass `promtool check metrics`
# (naming lint is reported, not failed).
#
# Custom quotas are charged in the transaction of the write, and a scrape
# brings their status up to date first (as any read does), so the metrics
# are checked right after each kubectl write, without waiting.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl
start_allotd
cd "$E2E_DIR"

GROUP=capsule.clastix.io

# mkns NAME [LABELS-JSON]
mkns() {
  local labels='{}'
  [ -z "${2:-}" ] || labels=$2
  k create -f - >/dev/null <<EOF
{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"$1","labels":$labels}}
EOF
}
# mkpod NS NAME CPU...: a pod with one container per cpu request.
mkpod() {
  local ns=$1 name=$2 cs="" i=0 cpu
  shift 2
  for cpu in "$@"; do
    i=$((i + 1))
    cs+="${cs:+,}{\"name\":\"c$i\",\"image\":\"nginx\",\"resources\":{\"requests\":{\"cpu\":\"$cpu\"}}}"
  done
  k create -f - >/dev/null <<EOF
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$name","namespace":"$ns"},
 "spec":{"containers":[$cs]}}
EOF
}

# scrape: the whole /metrics text.
scrape() {
  curl -sS --fail --max-time 20 --cacert "$E2E_DIR/data/ca.crt" \
    -H "Authorization: Bearer $ALLOT_TOKEN" "$ALLOT_URL/metrics"
}
CQ_RE='^capsule_(global_)?custom_quota_'
# cq_samples: the custom quota sample lines of one scrape, sorted.
cq_samples() {
  local text
  text=$(scrape) || return 1
  grep -E "$CQ_RE" <<<"$text" | LC_ALL=C sort || true
}
# expect_samples WHAT: the custom quota samples are exactly stdin's lines
# (any order).
expect_samples() {
  local what=$1 want got
  want=$(LC_ALL=C sort)
  got=$(cq_samples)
  if [ "$got" != "$want" ]; then
    diff <(echo "$want") <(echo "$got") | sed 's/^/    /' >&2 || true
    fail "$what: custom quota samples differ (< want, > got)"
  fi
}

FAMILIES="capsule_custom_quota_condition capsule_custom_quota_resource_usage
  capsule_custom_quota_resource_usage_percentage capsule_custom_quota_resource_limit
  capsule_custom_quota_resource_available capsule_custom_quota_resource_item_usage
  capsule_global_custom_quota_condition capsule_global_custom_quota_resource_usage
  capsule_global_custom_quota_resource_usage_percentage capsule_global_custom_quota_resource_limit
  capsule_global_custom_quota_resource_available capsule_global_custom_quota_resource_item_usage"

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
  bad=$(awk -v re="$CQ_RE" '
    /^# TYPE / { typed[$3] = 1; next }
    /^#/ || NF == 0 { next }
    { name = $0; sub(/[{ ].*/, "", name)
      if (name !~ re) { last = ""; next }
      if (!(name in typed)) print "sample before its # TYPE: " $0
      if (name != last && (name in seen)) print "family not in one group: " $0
      seen[name] = 1; last = name }' <<<"$text")
  expect_eq "exposition layout" "$bad" ""
}

# promtool_check: `promtool check metrics` on a scrape, if promtool is
# installed. Exit 1 (the text does not parse) fails; exit 3 is lint: naming
# advice is reported as a warning, any other lint about a custom quota
# family fails.
promtool_check() {
  local tool=/usr/bin/promtool
  if [ ! -x "$tool" ]; then
    echo "SKIP promtool check metrics: /usr/bin/promtool is not installed (Debian package prometheus)"
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
      hard=$(grep -E "${CQ_RE#^}" <<<"$out" | grep -Ev "$naming" || true)
      [ -z "$hard" ] || fail "promtool lint on custom quota families: $hard"
      echo "promtool check metrics: lint warnings (tolerated):"
      sed 's/^/    /' <<<"$out"
      ;;
    *) fail "promtool check metrics failed (exit $rc): $out" ;;
  esac
}

# ------------------------------------------------------------------- setup --

mkns cqm-a '{"team":"cqm"}'
mkns cqm-b '{"team":"cqm"}'
mkns cqm-c
k create -f - >/dev/null <<EOF
{"apiVersion":"$GROUP/v1beta2","kind":"CustomQuota","metadata":{"name":"pods","namespace":"cqm-a"},
 "spec":{"limit":"3","sources":[{"apiVersion":"v1","kind":"Pod","op":"count"}],
         "options":{"emitMetricPerClaimUsage":true}}}
EOF
k create -f - >/dev/null <<EOF
{"apiVersion":"$GROUP/v1beta2","kind":"CustomQuota","metadata":{"name":"quiet","namespace":"cqm-b"},
 "spec":{"limit":"2","sources":[{"apiVersion":"v1","kind":"Pod","op":"count"}]}}
EOF
k create -f - >/dev/null <<EOF
{"apiVersion":"$GROUP/v1beta2","kind":"GlobalCustomQuota","metadata":{"name":"cpu"},
 "spec":{"limit":"2","namespaceSelectors":[{"matchLabels":{"team":"cqm"}}],
         "sources":[{"apiVersion":"v1","kind":"Pod","op":"add",
                     "path":".spec.containers[*].resources.requests.cpu"}],
         "options":{"emitMetricPerClaimUsage":true}}}
EOF
expect_eq "quiet's options defaulted" \
  "$(k get cq quiet -n cqm-b -o 'jsonpath={.spec.options.emitMetricPerClaimUsage}')" false
expect_eq "cpu's namespaces" "$(k get gcq cpu -o 'jsonpath={.status.namespaces}')" '["cqm-a","cqm-b"]'

# Fresh quotas: nothing counted, no per-claim series. A GlobalCustomQuota's
# series have no target_namespace (Capsule's labels).
expect_samples "fresh quotas" <<EOF
capsule_custom_quota_condition{condition="Ready",custom_quota="pods",target_namespace="cqm-a"} 1
capsule_custom_quota_resource_usage{custom_quota="pods",target_namespace="cqm-a"} 0
capsule_custom_quota_resource_usage_percentage{custom_quota="pods",target_namespace="cqm-a"} 0
capsule_custom_quota_resource_limit{custom_quota="pods",target_namespace="cqm-a"} 3
capsule_custom_quota_resource_available{custom_quota="pods",target_namespace="cqm-a"} 3
capsule_custom_quota_condition{condition="Ready",custom_quota="quiet",target_namespace="cqm-b"} 1
capsule_custom_quota_resource_usage{custom_quota="quiet",target_namespace="cqm-b"} 0
capsule_custom_quota_resource_usage_percentage{custom_quota="quiet",target_namespace="cqm-b"} 0
capsule_custom_quota_resource_limit{custom_quota="quiet",target_namespace="cqm-b"} 2
capsule_custom_quota_resource_available{custom_quota="quiet",target_namespace="cqm-b"} 2
capsule_global_custom_quota_condition{condition="Ready",custom_quota="cpu"} 1
capsule_global_custom_quota_resource_usage{custom_quota="cpu"} 0
capsule_global_custom_quota_resource_usage_percentage{custom_quota="cpu"} 0
capsule_global_custom_quota_resource_limit{custom_quota="cpu"} 2
capsule_global_custom_quota_resource_available{custom_quota="cpu"} 2
EOF
expect_well_formed
echo "ok   fresh quotas"

# web-1 (250m) and web-2 (100m + 150m) in cqm-a, api-1 (500m) in cqm-b;
# other (300m) in cqm-c is counted by nothing.
mkpod cqm-a web-1 250m
mkpod cqm-a web-2 100m 150m
mkpod cqm-b api-1 500m
mkpod cqm-c other 300m
expect_samples "pods created" <<EOF
capsule_custom_quota_condition{condition="Ready",custom_quota="pods",target_namespace="cqm-a"} 1
capsule_custom_quota_resource_usage{custom_quota="pods",target_namespace="cqm-a"} 2
capsule_custom_quota_resource_usage_percentage{custom_quota="pods",target_namespace="cqm-a"} 66.66666666666666
capsule_custom_quota_resource_limit{custom_quota="pods",target_namespace="cqm-a"} 3
capsule_custom_quota_resource_available{custom_quota="pods",target_namespace="cqm-a"} 1
capsule_custom_quota_resource_item_usage{custom_quota="pods",group="",kind="Pod",name="web-1",target_namespace="cqm-a"} 1
capsule_custom_quota_resource_item_usage{custom_quota="pods",group="",kind="Pod",name="web-2",target_namespace="cqm-a"} 1
capsule_custom_quota_condition{condition="Ready",custom_quota="quiet",target_namespace="cqm-b"} 1
capsule_custom_quota_resource_usage{custom_quota="quiet",target_namespace="cqm-b"} 1
capsule_custom_quota_resource_usage_percentage{custom_quota="quiet",target_namespace="cqm-b"} 50
capsule_custom_quota_resource_limit{custom_quota="quiet",target_namespace="cqm-b"} 2
capsule_custom_quota_resource_available{custom_quota="quiet",target_namespace="cqm-b"} 1
capsule_global_custom_quota_condition{condition="Ready",custom_quota="cpu"} 1
capsule_global_custom_quota_resource_usage{custom_quota="cpu"} 1
capsule_global_custom_quota_resource_usage_percentage{custom_quota="cpu"} 50
capsule_global_custom_quota_resource_limit{custom_quota="cpu"} 2
capsule_global_custom_quota_resource_available{custom_quota="cpu"} 1
capsule_global_custom_quota_resource_item_usage{custom_quota="cpu",group="",kind="Pod",name="web-1",target_namespace="cqm-a"} 0.25
capsule_global_custom_quota_resource_item_usage{custom_quota="cpu",group="",kind="Pod",name="web-2",target_namespace="cqm-a"} 0.25
capsule_global_custom_quota_resource_item_usage{custom_quota="cpu",group="",kind="Pod",name="api-1",target_namespace="cqm-b"} 0.5
EOF
expect_well_formed
promtool_check
echo "ok   pods created"

# web-3 (500m) fills the pod quota; web-4 is over it, denied in Capsule's
# words, and moves nothing.
mkpod cqm-a web-3 500m
FULL=$(cat <<EOF
capsule_custom_quota_condition{condition="Ready",custom_quota="pods",target_namespace="cqm-a"} 1
capsule_custom_quota_resource_usage{custom_quota="pods",target_namespace="cqm-a"} 3
capsule_custom_quota_resource_usage_percentage{custom_quota="pods",target_namespace="cqm-a"} 100
capsule_custom_quota_resource_limit{custom_quota="pods",target_namespace="cqm-a"} 3
capsule_custom_quota_resource_available{custom_quota="pods",target_namespace="cqm-a"} 0
capsule_custom_quota_resource_item_usage{custom_quota="pods",group="",kind="Pod",name="web-1",target_namespace="cqm-a"} 1
capsule_custom_quota_resource_item_usage{custom_quota="pods",group="",kind="Pod",name="web-2",target_namespace="cqm-a"} 1
capsule_custom_quota_resource_item_usage{custom_quota="pods",group="",kind="Pod",name="web-3",target_namespace="cqm-a"} 1
capsule_custom_quota_condition{condition="Ready",custom_quota="quiet",target_namespace="cqm-b"} 1
capsule_custom_quota_resource_usage{custom_quota="quiet",target_namespace="cqm-b"} 1
capsule_custom_quota_resource_usage_percentage{custom_quota="quiet",target_namespace="cqm-b"} 50
capsule_custom_quota_resource_limit{custom_quota="quiet",target_namespace="cqm-b"} 2
capsule_custom_quota_resource_available{custom_quota="quiet",target_namespace="cqm-b"} 1
capsule_global_custom_quota_condition{condition="Ready",custom_quota="cpu"} 1
capsule_global_custom_quota_resource_usage{custom_quota="cpu"} 1.5
capsule_global_custom_quota_resource_usage_percentage{custom_quota="cpu"} 75
capsule_global_custom_quota_resource_limit{custom_quota="cpu"} 2
capsule_global_custom_quota_resource_available{custom_quota="cpu"} 0.5
capsule_global_custom_quota_resource_item_usage{custom_quota="cpu",group="",kind="Pod",name="web-1",target_namespace="cqm-a"} 0.25
capsule_global_custom_quota_resource_item_usage{custom_quota="cpu",group="",kind="Pod",name="web-2",target_namespace="cqm-a"} 0.25
capsule_global_custom_quota_resource_item_usage{custom_quota="cpu",group="",kind="Pod",name="web-3",target_namespace="cqm-a"} 0.5
capsule_global_custom_quota_resource_item_usage{custom_quota="cpu",group="",kind="Pod",name="api-1",target_namespace="cqm-b"} 0.5
EOF
)
expect_samples "pod quota full" <<<"$FULL"
out=$(mkpod cqm-a web-4 100m 2>&1) && fail "web-4 was admitted over the pod quota"
expect_contains "web-4 denial" "$out" 'exceeds limit for CustomQuota "pods"'
expect_samples "web-4 denied" <<<"$FULL"
echo "ok   pod quota full, web-4 denied"

# Deleting web-1 gives back one pod and 250m: its series go, the rest move.
k delete pod web-1 -n cqm-a --wait=true --timeout=30s >/dev/null
expect_samples "web-1 deleted" <<EOF
capsule_custom_quota_condition{condition="Ready",custom_quota="pods",target_namespace="cqm-a"} 1
capsule_custom_quota_resource_usage{custom_quota="pods",target_namespace="cqm-a"} 2
capsule_custom_quota_resource_usage_percentage{custom_quota="pods",target_namespace="cqm-a"} 66.66666666666666
capsule_custom_quota_resource_limit{custom_quota="pods",target_namespace="cqm-a"} 3
capsule_custom_quota_resource_available{custom_quota="pods",target_namespace="cqm-a"} 1
capsule_custom_quota_resource_item_usage{custom_quota="pods",group="",kind="Pod",name="web-2",target_namespace="cqm-a"} 1
capsule_custom_quota_resource_item_usage{custom_quota="pods",group="",kind="Pod",name="web-3",target_namespace="cqm-a"} 1
capsule_custom_quota_condition{condition="Ready",custom_quota="quiet",target_namespace="cqm-b"} 1
capsule_custom_quota_resource_usage{custom_quota="quiet",target_namespace="cqm-b"} 1
capsule_custom_quota_resource_usage_percentage{custom_quota="quiet",target_namespace="cqm-b"} 50
capsule_custom_quota_resource_limit{custom_quota="quiet",target_namespace="cqm-b"} 2
capsule_custom_quota_resource_available{custom_quota="quiet",target_namespace="cqm-b"} 1
capsule_global_custom_quota_condition{condition="Ready",custom_quota="cpu"} 1
capsule_global_custom_quota_resource_usage{custom_quota="cpu"} 1.25
capsule_global_custom_quota_resource_usage_percentage{custom_quota="cpu"} 62.5
capsule_global_custom_quota_resource_limit{custom_quota="cpu"} 2
capsule_global_custom_quota_resource_available{custom_quota="cpu"} 0.75
capsule_global_custom_quota_resource_item_usage{custom_quota="cpu",group="",kind="Pod",name="web-2",target_namespace="cqm-a"} 0.25
capsule_global_custom_quota_resource_item_usage{custom_quota="cpu",group="",kind="Pod",name="web-3",target_namespace="cqm-a"} 0.5
capsule_global_custom_quota_resource_item_usage{custom_quota="cpu",group="",kind="Pod",name="api-1",target_namespace="cqm-b"} 0.5
EOF
expect_well_formed
promtool_check
echo "ok   web-1 deleted"

# The global quota goes: so do its series (the families stay, empty).
k delete gcq cpu --wait=true --timeout=30s >/dev/null
expect_samples "cpu deleted" <<EOF
capsule_custom_quota_condition{condition="Ready",custom_quota="pods",target_namespace="cqm-a"} 1
capsule_custom_quota_resource_usage{custom_quota="pods",target_namespace="cqm-a"} 2
capsule_custom_quota_resource_usage_percentage{custom_quota="pods",target_namespace="cqm-a"} 66.66666666666666
capsule_custom_quota_resource_limit{custom_quota="pods",target_namespace="cqm-a"} 3
capsule_custom_quota_resource_available{custom_quota="pods",target_namespace="cqm-a"} 1
capsule_custom_quota_resource_item_usage{custom_quota="pods",group="",kind="Pod",name="web-2",target_namespace="cqm-a"} 1
capsule_custom_quota_resource_item_usage{custom_quota="pods",group="",kind="Pod",name="web-3",target_namespace="cqm-a"} 1
capsule_custom_quota_condition{condition="Ready",custom_quota="quiet",target_namespace="cqm-b"} 1
capsule_custom_quota_resource_usage{custom_quota="quiet",target_namespace="cqm-b"} 1
capsule_custom_quota_resource_usage_percentage{custom_quota="quiet",target_namespace="cqm-b"} 50
capsule_custom_quota_resource_limit{custom_quota="quiet",target_namespace="cqm-b"} 2
capsule_custom_quota_resource_available{custom_quota="quiet",target_namespace="cqm-b"} 1
EOF
expect_well_formed
echo "ok   cpu deleted"

expect_eq "alive" "$(api GET /healthz | tail -n1)" 200
stop_allotd
echo "test_custom_quota_metrics: ok"
