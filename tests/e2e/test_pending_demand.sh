# test_pending_demand.sh - pods pending on quota (deferred quota), as a user
# finds them: the field selector status.pendingOnQuota (an allot extension)
# lists them, for list and watch, and /metrics shows their number and their
# summed demand per quota and resource (allot_pods_pending_on_quota,
# allot_pods_pending_demand); raising the quota empties both. The scrape
# passes `promtool check metrics`.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl
command -v promtool >/dev/null || fail "promtool is not installed (Debian package prometheus)"
start_allotd --feature-gates=DeferredResourceQuota=true

cat <<'YAML' | k create -f - >/dev/null
apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  capacity: {cpu: "8", memory: 64Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 64Gi, pods: "110"}
YAML
k create namespace pd >/dev/null
k create namespace other >/dev/null
k create quota compute -n pd --hard=requests.cpu=1,requests.memory=1Gi >/dev/null

# pod NS NAME CPU MEMORY [SPEC-EXTRA]: a pod requesting cpu and memory.
pod() {
  k create -f - >/dev/null <<EOF
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$2","namespace":"$1"},
 "spec":{${5:-}"containers":[{"name":"c","image":"nginx",
   "resources":{"requests":{"cpu":"$3","memory":"$4"}}}]}}
EOF
}
# pods_on SELECTOR: the pods of every namespace the field selector lists, sorted.
pods_on() {
  k get pods -A --field-selector "$1" -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}' |
    LC_ALL=C sort
}
scrape() {
  curl -sS --fail --max-time 20 --cacert "$E2E_DIR/data/ca.crt" \
    -H "Authorization: Bearer $ALLOT_TOKEN" "$ALLOT_URL/metrics"
}
# sample NAME LABELS: the value of one sample of a scrape, or nothing.
sample() {
  local text
  text=$(scrape) || return 1
  awk -v s="$1{$2}" '$1 == s {print $2}' <<<"$text"
}
# pending_samples: the samples of both pending families (none: nothing).
pending_samples() {
  local text
  text=$(scrape) || return 1
  grep '^allot_pods_pending' <<<"$text" || true
}
# events TYPE: how many events of that type the filtered watch has seen.
events() { grep -c "\"type\": *\"$1\"" "$watch_out" || true; }
# eq WANT CMD...: CMD prints exactly WANT (for wait_until).
eq() {
  local want=$1 got
  shift
  got=$("$@") || return 1
  [ "$got" == "$want" ]
}

# The first pod takes the whole cpu quota and runs; two more wait on it.
pod pd fits 1 100Mi
wait_until 30 eq Running k get pod fits -n pd -o 'jsonpath={.status.phase}' || fail "fits did not run"
pod pd wait-1 500m 100Mi
pod pd wait-2 250m 200Mi
# a pod unschedulable for another reason (no node matches) is not pending on quota
pod other no-node 10m 10Mi '"nodeSelector":{"disk":"none"},'

# a watch filtered on the field, from now on (raw API: every event with its type)
watch_out=$E2E_DIR/watch.out
curl -sS -N --max-time 120 --cacert "$E2E_DIR/data/ca.crt" -H "Authorization: Bearer $ALLOT_TOKEN" \
  "$ALLOT_URL/api/v1/pods?watch=1&fieldSelector=status.pendingOnQuota%21%3D" >"$watch_out" 2>/dev/null &
WATCH_PID=$!
stop_watch() { kill "$WATCH_PID" 2>/dev/null || true; wait "$WATCH_PID" 2>/dev/null || true; }
on_cleanup stop_watch

waiting=$'pd/wait-1\npd/wait-2'
wait_until 30 eq "$waiting" pods_on 'status.pendingOnQuota!=' ||
  fail "pendingOnQuota!= lists [$(pods_on 'status.pendingOnQuota!=')], want the two waiting pods"
wait_until 30 eq Unschedulable k get pod no-node -n other \
  -o 'jsonpath={.status.conditions[?(@.type=="PodScheduled")].reason}' || fail "no-node not Unschedulable"
expect_eq "pendingOnQuota!= (a pod waiting on nodes is not listed)" \
  "$(pods_on 'status.pendingOnQuota!=')" "$waiting"
expect_eq "pendingOnQuota=compute" "$(pods_on 'status.pendingOnQuota=compute')" "$waiting"
expect_eq "pendingOnQuota=other" "$(pods_on 'status.pendingOnQuota=other')" ""
expect_eq "pendingOnQuota= (not waiting on quota)" "$(pods_on 'status.pendingOnQuota=')" \
  $'other/no-node\npd/fits'
expect_eq "-n pd, pendingOnQuota=compute" \
  "$(k get pods -n pd --field-selector status.pendingOnQuota=compute -o name | LC_ALL=C sort)" \
  $'pod/wait-1\npod/wait-2'
wait_until 30 eq 2 events ADDED ||
  fail "the filtered watch did not add the two waiting pods: $(cat "$watch_out")"

# the metrics: 2 pods, 0.75 cores and 300Mi (314572800 bytes) of requests waiting
labels='namespace="pd",resourcequota="compute"'
wait_until 30 eq 2 sample allot_pods_pending_on_quota "$labels" ||
  fail "allot_pods_pending_on_quota: [$(sample allot_pods_pending_on_quota "$labels")]"
wait_until 30 eq 0.75 sample allot_pods_pending_demand "$labels,resource=\"requests.cpu\"" ||
  fail "pending demand of requests.cpu: [$(sample allot_pods_pending_demand "$labels,resource=\"requests.cpu\"")]"
expect_eq "pending demand of requests.memory" \
  "$(sample allot_pods_pending_demand "$labels,resource=\"requests.memory\"")" 314572800
text=$(scrape)
expect_eq "demand samples (only the quota's hard names)" \
  "$(grep -c '^allot_pods_pending_demand{' <<<"$text")" 2
for fam in allot_pods_pending_on_quota allot_pods_pending_demand; do
  expect_eq "$fam # HELP lines" "$(grep -c "^# HELP $fam " <<<"$text")" 1
  expect_eq "$fam # TYPE" "$(grep "^# TYPE $fam " <<<"$text")" "# TYPE $fam gauge"
done
# `promtool check metrics` on this scrape: exit 1 (does not parse) fails; exit 3
# is lint, and only naming advice on upstream's own names is tolerated
rc=0
out=$(promtool check metrics <<<"$text" 2>&1) || rc=$?
case $rc in
  0) ;;
  3)
    hard=$(grep -Ev 'should not contain abbreviated units|use base unit|snake_case|suffix|should not include type' <<<"$out" || true)
    [ -z "$hard" ] || fail "promtool check metrics: $hard"
    ! grep_all allot_pods_pending <<<"$out" || fail "promtool lint on the pending families: $out"
    ;;
  *) fail "promtool check metrics failed (exit $rc): $out" ;;
esac

# raising the quota lets both bind: the lists, the watch and the metrics empty out
k patch quota compute -n pd --type merge -p '{"spec":{"hard":{"requests.cpu":"2"}}}' >/dev/null
for p in wait-1 wait-2; do
  wait_until 30 eq Running k get pod "$p" -n pd -o 'jsonpath={.status.phase}' ||
    fail "$p did not run after the quota was raised"
done
expect_eq "pendingOnQuota!= after the raise" "$(pods_on 'status.pendingOnQuota!=')" ""
expect_eq "pendingOnQuota=compute after the raise" "$(pods_on 'status.pendingOnQuota=compute')" ""
wait_until 30 eq 2 events DELETED ||
  fail "the filtered watch did not drop the two pods: $(cat "$watch_out")"
wait_until 30 eq "" pending_samples || fail "pending samples left: $(pending_samples)"
text=$(scrape)
for fam in allot_pods_pending_on_quota allot_pods_pending_demand; do
  expect_eq "$fam # HELP with nothing pending" "$(grep -c "^# HELP $fam " <<<"$text")" 1
done
stop_watch
stop_allotd
echo "test_pending_demand: ok"
