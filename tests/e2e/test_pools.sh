# test_pools.sh - Capsule's ResourcePool acceptance scenarios with the real
# kubectl: claims bind to pools, queue, resize and are released; the pool's
# status.allocation, namespaces and counts, and the `capsule-pool-<pool>`
# ResourceQuota of every selected namespace follow; the admission guards
# (claim in use, pool hard below what is claimed) refuse with Capsule's texts.
#
# Reference: shared spec capsule-pools-and-custom-quotas.md §1 (semantics),
# §6.1 (C1-C4, e2e/pool_resourcepoolclaim_test.go) and §6.2 (P1-P9,
# e2e/pool_resourcepool_test.go), and seed 003 "Resource Pools" (solar-test).
# allot's own choices (docs/decisions.md, Pools): available clamped at 0,
# decisions settled to a fixpoint so every `available:` in a message is the
# pool's status.allocation.available, messages list resources by name, a zero
# request fits, auto-assign picks allocatable pools first and then by name.
#
# allot binds in the transaction of the write: right after `kubectl create`
# or `kubectl patch` of a claim (or of a pool), `kubectl get` shows the
# outcome, so binding and queueing are checked without waiting. Only what
# follows a pod's usage (the Bound=True/InUse condition) and namespace or
# pool deletion are waited for (bounded). The in-use guards themselves are
# checked right after the pod is created: that is what closes capsule#1662.
#
# Every case is a function case_NAME run in a subshell with its own
# namespaces and pools: a failure names the case and shows the actual output,
# the other cases still run, and the test fails at the end if any case
# failed. Cases that need a namespace relabel or a pool/namespace deletion are
# separate cases. `CASES="p3_unordered p5_ordered" bash test_pools.sh` runs
# only those.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl
start_allotd
cd "$E2E_DIR"

LC=limits.cpu
LM=limits.memory
RC=requests.cpu
RM=requests.memory
HARD4="$LC=2,$LM=2Gi,$RC=2,$RM=2Gi"
GROUP=capsule.clastix.io
UNUSED="False/Unused/claim is unused"
IN_USE="True/InUse/claim is used"
READY_OK="True/Succeeded/reconciled"
NOT_AVAILABLE="resourcepool not available"
REDUCE_TAIL=" . Remove corresponding claims or keep the resources in the pool"

# ---------------------------------------------------------------- helpers --

# rl "a=1,b=2": a resource list as JSON ({"a":"1","b":"2"}; "" is {}).
rl() {
  local out="" kv
  local IFS=,
  for kv in $1; do out+="${out:+,}\"${kv%%=*}\":\"${kv#*=}\""; done
  printf '{%s}' "$out"
}
# kv: a JSON map on stdin (as jsonpath prints one) as "k=v,k=v", keys sorted;
# nothing (or {} or null) is "".
kv() {
  /usr/bin/python3 -c '
import json, sys
s = sys.stdin.read().strip()
d = json.loads(s) if s else {}
print(",".join("%s=%s" % (k, v) for k, v in sorted((d or {}).items())))'
}

# mkns NAME [k=v,...]: a namespace created with its labels.
mkns() {
  k create -f - >/dev/null <<EOF
{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"$1","labels":$(rl "${2:-}")}}
EOF
}
# selectors ARG: "k=v" is one matchLabels selector; anything starting with [
# is taken as the selectors JSON as is.
selectors() {
  case $1 in \[*) printf '%s' "$1" ;; *) printf '[{"matchLabels":%s}]' "$(rl "$1")" ;; esac
}
# mkpool NAME HARD SELECTORS [MORE-SPEC-JSON]: create a pool; MORE-SPEC-JSON
# are extra spec members, e.g. '"config":{"orderedQueue":true}'.
mkpool() {
  k create -f - >/dev/null <<EOF
{"apiVersion":"$GROUP/v1beta2","kind":"ResourcePool","metadata":{"name":"$1"},
 "spec":{"selectors":$(selectors "$3"),"quota":{"hard":$(rl "$2")}${4:+,$4}}}
EOF
}
# mkclaim NS NAME POOL CLAIM: create a claim; POOL "-" leaves spec.pool out
# (auto-assign).
mkclaim() {
  local pool=""
  [ "$3" = - ] || pool="\"pool\":\"$3\","
  k create -f - >/dev/null <<EOF
{"apiVersion":"$GROUP/v1beta2","kind":"ResourcePoolClaim","metadata":{"name":"$2","namespace":"$1"},
 "spec":{$pool"claim":$(rl "$4")}}
EOF
}
# mkpod NS NAME REQUESTS [LIMITS]: a one-container pod.
mkpod() {
  k create -f - >/dev/null <<EOF
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$2","namespace":"$1"},
 "spec":{"containers":[{"name":"main","image":"nginx","resources":{"requests":$(rl "$3"),"limits":$(rl "${4:-}")}}]}}
EOF
}
rmpod() { k delete pod "$2" -n "$1" --wait=true --timeout=30s >/dev/null; }

# claim_set NS NAME CLAIM: replace spec.claim (json patch).
claim_set() {
  k patch resourcepoolclaim "$2" -n "$1" --type=json \
    -p "[{\"op\":\"replace\",\"path\":\"/spec/claim\",\"value\":$(rl "$3")}]"
}
# claim_pool NS NAME POOL: set spec.pool.
claim_pool() { k patch resourcepoolclaim "$2" -n "$1" --type=merge -p "{\"spec\":{\"pool\":\"$3\"}}"; }
# pool_hard POOL HARD: replace spec.quota.hard (json patch).
pool_hard() {
  k patch resourcepool "$1" --type=json \
    -p "[{\"op\":\"replace\",\"path\":\"/spec/quota/hard\",\"value\":$(rl "$2")}]"
}

# pool_jp POOL JSONPATH / claim_jp NS NAME JSONPATH: one jsonpath of the object.
pool_jp() { k get resourcepool "$1" -o "jsonpath={$2}"; }
claim_jp() { k get resourcepoolclaim "$2" -n "$1" -o "jsonpath={$3}"; }
# pool_map POOL used|available|hard: status.allocation.<which> as "k=v,...".
pool_map() { pool_jp "$1" ".status.allocation.$2" | kv; }
# cond NS NAME TYPE: the claim's condition TYPE as status/reason/message.
cond() {
  claim_jp "$1" "$2" ".status.conditions[?(@.type==\"$3\")].status}/{.status.conditions[?(@.type==\"$3\")].reason}/{.status.conditions[?(@.type==\"$3\")].message"
}
# ready_sr NS NAME: the claim's Ready condition as status/reason.
ready_sr() { claim_jp "$1" "$2" '.status.conditions[?(@.type=="Ready")].status}/{.status.conditions[?(@.type=="Ready")].reason'; }
pool_cond() {
  pool_jp "$1" ".status.conditions[?(@.type==\"$2\")].status}/{.status.conditions[?(@.type==\"$2\")].reason"
}
# rq_hard NS POOL: spec.hard of the namespace's capsule-pool-<pool> quota as
# "k=v,..." ("<absent>" when there is no such quota).
rq_hard() {
  local out
  if out=$(k get quota "capsule-pool-$2" -n "$1" -o 'jsonpath={.spec.hard}' 2>&1); then
    kv <<<"$out"
  else
    case $out in *NotFound* | *"not found"*) echo "<absent>" ;; *) echo "<error: $out>" ;; esac
  fi
}
# pool_ns POOL: status.namespaces, space-separated, and namespaceCount.
pool_ns() { pool_jp "$1" '.status.namespaces[*]}/{.status.namespaceCount'; }

# _is WANT CMD...: CMD prints exactly WANT.
_is() { local want=$1; shift; [ "$("$@" 2>&1)" == "$want" ]; }
# eventually WHAT WANT CMD...: wait (bounded) for CMD to print WANT, then
# check it (the failure shows the last output).
eventually() {
  local what=$1 want=$2; shift 2
  wait_until 15 _is "$want" "$@" || true
  expect_eq "$what" "$("$@" 2>&1)" "$want"
}

# expect_bound NS NAME POOL: the claim holds an allocation in POOL and is not
# used: Ready=True, Exhausted=False/NoExhaustions, Bound=False/Unused, and
# status.pool names POOL with its uid.
expect_bound() {
  local c="claim $1/$2"
  expect_eq "$c status.pool" "$(claim_jp "$1" "$2" .status.pool.name)/$(claim_jp "$1" "$2" .status.pool.uid)" \
    "$3/$(pool_jp "$3" .metadata.uid)"
  expect_eq "$c Ready" "$(cond "$1" "$2" Ready)" "$READY_OK"
  expect_eq "$c Exhausted" "$(cond "$1" "$2" Exhausted | cut -d/ -f1,2)" "False/NoExhaustions"
  expect_eq "$c Bound" "$(cond "$1" "$2" Bound)" "$UNUSED"
}
# expect_waiting NS NAME POOL REASON MESSAGE: the claim is assigned to POOL
# but holds nothing: Exhausted=True/REASON/MESSAGE, Bound=False/Failed.
expect_waiting() {
  local c="claim $1/$2"
  expect_eq "$c status.pool" "$(claim_jp "$1" "$2" .status.pool.name)" "$3"
  expect_eq "$c Ready" "$(cond "$1" "$2" Ready)" "$READY_OK"
  expect_eq "$c Exhausted" "$(cond "$1" "$2" Exhausted)" "True/$4/$5"
  expect_eq "$c Bound" "$(cond "$1" "$2" Bound)" "False/Failed/claim causes exhaustions"
}
# expect_failed NS NAME MESSAGE: the claim is in no pool: its only condition
# is Ready=False/Failed/MESSAGE, no status.pool (§1.3: "A claim that fails
# keeps no status.pool"; the e2e test expects exactly one condition).
expect_failed() {
  local c="claim $1/$2"
  expect_eq "$c status.pool" "$(claim_jp "$1" "$2" .status.pool.name)" ""
  expect_eq "$c conditions" "$(claim_jp "$1" "$2" '.status.conditions[*].type')" "Ready"
  expect_eq "$c Ready" "$(cond "$1" "$2" Ready)" "False/Failed/$3"
}
# expect_alloc POOL USED AVAILABLE [CLAIMCOUNT]
expect_alloc() {
  expect_eq "pool $1 allocation.used" "$(pool_map "$1" used)" "$2"
  expect_eq "pool $1 allocation.available" "$(pool_map "$1" available)" "$3"
  [ -z "${4:-}" ] || expect_eq "pool $1 claimCount" "$(pool_jp "$1" .status.claimCount)" "$4"
}
# expect_denied WHAT WANT CMD...: CMD fails and its output holds WANT.
expect_denied() {
  local what=$1 want=$2 out; shift 2
  if out=$("$@" 2>&1); then fail "$what: allowed ($out), want it denied with [$want]"; fi
  expect_contains "$what" "$out" "$want"
}
# allowed WHAT CMD...: CMD succeeds.
allowed() {
  local what=$1 out; shift
  out=$("$@" 2>&1) || fail "$what: denied: $out"
}
gone() { ! k get "$@" >/dev/null 2>&1; }
# expect_event NS CLAIM TYPE REASON MESSAGE: such an Event about the claim
# appears (Events are written asynchronously: a bounded wait).
has_event() {
  k get events -n "$1" --field-selector "involvedObject.name=$2" \
    -o 'jsonpath={range .items[*]}{.type}/{.reason}/{.message}{"\n"}{end}' | grep -Fqx "$3/$4/$5"
}
expect_event() {
  wait_until 30 has_event "$@" || fail "no event $3/$4/$5 about claim $1/$2: $(k get events -n "$1" 2>&1)"
}
wait_gone() { wait_until 30 gone "$@" || fail "still there after 30s: $*"; }

IN_USE_DELETE="cannot delete the pool while claim is used in resourcepool"
IN_USE_CHANGE="cannot change the requested resources while claim is allocated to a resourcepool"

# ------------------------------------------------------------------ cases --

# C1 Claim to Pool Assignment: two selectors (OR); a claim in a namespace the
# pool does not select fails and gets no status.pool.
case_c1_selection() {
  local p=test-binding-claims
  mkns c1-ns-1 test-suite=claims-bindings
  mkns c1-ns-2 test-suite=claims-bindings-2
  mkns c1-ns-3 test-suite=something-else
  mkpool $p "$HARD4" '[{"matchLabels":{"test-suite":"claims-bindings"}},{"matchLabels":{"test-suite":"claims-bindings-2"}}]'
  expect_eq "namespaces" "$(pool_ns $p)" "c1-ns-1 c1-ns-2/2"
  expect_eq "ns-1 quota" "$(rq_hard c1-ns-1 $p)" ""
  expect_eq "ns-2 quota" "$(rq_hard c1-ns-2 $p)" ""
  expect_eq "ns-3 quota" "$(rq_hard c1-ns-3 $p)" "<absent>"
  expect_eq "quota labels" \
    "$(k get quota capsule-pool-$p -n c1-ns-1 -o 'jsonpath={.metadata.labels.projectcapsule\.dev/pool}')" $p
  mkclaim c1-ns-1 zero $p "$LC=0,$LM=0,$RC=0,$RM=0"
  mkclaim c1-ns-2 zero $p "$LC=0,$LM=0,$RC=0,$RM=0"
  expect_bound c1-ns-1 zero $p
  expect_bound c1-ns-2 zero $p
  expect_eq "ns-1 quota: zero sums dropped" "$(rq_hard c1-ns-1 $p)" ""
  mkclaim c1-ns-3 outside $p "$LC=1"
  expect_failed c1-ns-3 outside "$NOT_AVAILABLE"
  expect_eq "outside: ownerReferences" "$(claim_jp c1-ns-3 outside '.metadata.ownerReferences[*].name')" ""
  expect_alloc $p "$LC=0,$LM=0,$RC=0,$RM=0" "$HARD4" 2
  expect_eq "pool Ready" "$(pool_cond $p Ready)" "True/Succeeded"
  expect_eq "pool Exhausted" "$(pool_cond $p Exhausted)" "False/NoExhaustions"
}

# C2, first step: a claim for a pool that does not exist yet fails with the
# NotFound text, and binds in the transaction that creates the pool.
case_c2_claim_before_pool() {
  local p=test-admission-claims-first ns=c2f-ns
  mkns $ns e2e-case=c2f
  mkclaim $ns admission $p "$LC=1,$LM=1Gi,$RC=1,$RM=1Gi"
  expect_failed $ns admission "ResourcePool.$GROUP \"$p\" not found"
  mkpool $p "$HARD4" e2e-case=c2f '"config":{"deleteBoundResources":false}'
  expect_bound $ns admission $p
  expect_eq "quota" "$(rq_hard $ns $p)" "$LC=1,$LM=1Gi,$RC=1,$RM=1Gi"
  expect_alloc $p "$LC=1,$LM=1Gi,$RC=1,$RM=1Gi" "$LC=1,$LM=1Gi,$RC=1,$RM=1Gi" 1
}

# C2 Admission patch guard: a claim in use can be neither deleted, resized,
# zeroed nor moved; once the pod is gone it can be all of these.
case_c2_in_use_guard() {
  local p=test-admission-claims ns=c2-ns
  mkns $ns e2e-case=c2
  mkpool $p "$HARD4" e2e-case=c2 '"config":{"deleteBoundResources":false}'
  mkclaim $ns admission $p "$LC=1,$LM=1Gi,$RC=1,$RM=1Gi"
  expect_bound $ns admission $p
  expect_eq "quota" "$(rq_hard $ns $p)" "$LC=1,$LM=1Gi,$RC=1,$RM=1Gi"
  expect_alloc $p "$LC=1,$LM=1Gi,$RC=1,$RM=1Gi" "$LC=1,$LM=1Gi,$RC=1,$RM=1Gi" 1

  mkpod $ns pod "cpu=10m,memory=16Mi" "cpu=20m,memory=32Mi"
  # refused at once: the usage and the guard are in the same books
  expect_denied "delete in use" "$IN_USE_DELETE $p" k delete resourcepoolclaim admission -n $ns --wait=false
  expect_denied "grow in use" "$IN_USE_CHANGE $p" claim_set $ns admission "$LC=2,$LM=2Gi,$RC=2,$RM=2Gi"
  expect_denied "zero in use" "$IN_USE_CHANGE $p" claim_set $ns admission "$LC=0,$LM=0,$RC=0,$RM=0"
  expect_denied "move in use" "$IN_USE_CHANGE $p" claim_pool $ns admission some-random-pool
  expect_eq "spec unchanged" "$(claim_jp $ns admission .spec.pool) $(claim_jp $ns admission .spec.claim | kv)" \
    "$p $LC=1,$LM=1Gi,$RC=1,$RM=1Gi"
  eventually "Bound in use" "$IN_USE" cond $ns admission Bound
  expect_alloc $p "$LC=1,$LM=1Gi,$RC=1,$RM=1Gi" "$LC=1,$LM=1Gi,$RC=1,$RM=1Gi" 1

  rmpod $ns pod
  eventually "Bound after the pod" "$UNUSED" cond $ns admission Bound
  allowed "grow unused" claim_set $ns admission "$LC=2,$LM=2Gi,$RC=2,$RM=2Gi"
  expect_bound $ns admission $p
  expect_alloc $p "$HARD4" "$LC=0,$LM=0,$RC=0,$RM=0" 1
  expect_eq "quota grown" "$(rq_hard $ns $p)" "$HARD4"
  allowed "shrink unused" claim_set $ns admission "$LC=500m,$LM=512Mi,$RC=500m,$RM=512Mi"
  expect_bound $ns admission $p
  expect_alloc $p "$LC=500m,$LM=512Mi,$RC=500m,$RM=512Mi" "$LC=1500m,$LM=1536Mi,$RC=1500m,$RM=1536Mi" 1
  expect_eq "quota shrunk" "$(rq_hard $ns $p)" "$LC=500m,$LM=512Mi,$RC=500m,$RM=512Mi"
  allowed "move unused" claim_pool $ns admission some-random-pool
  expect_failed $ns admission "ResourcePool.$GROUP \"some-random-pool\" not found"
  expect_alloc $p "$LC=0,$LM=0,$RC=0,$RM=0" "$HARD4" 0
  expect_eq "quota after the move" "$(rq_hard $ns $p)" ""
  allowed "move back" claim_pool $ns admission $p
  expect_bound $ns admission $p
  allowed "delete unused" k delete resourcepoolclaim admission -n $ns --wait=true --timeout=30s
  expect_alloc $p "$LC=0,$LM=0,$RC=0,$RM=0" "$HARD4" 0
  expect_eq "quota after the delete" "$(rq_hard $ns $p)" ""
}

# C2, last part: the pool deleted under a bound claim; the claim fails and
# may be changed freely.
case_c2_pool_deleted() {
  local p=test-admission-claims-del ns=c2d-ns
  mkns $ns e2e-case=c2d
  mkpool $p "$HARD4" e2e-case=c2d '"config":{"deleteBoundResources":false}'
  mkclaim $ns admission $p "$LC=1,$LM=1Gi,$RC=1,$RM=1Gi"
  expect_bound $ns admission $p
  k delete resourcepool $p --wait=false >/dev/null
  wait_gone resourcepool $p
  eventually "claim after the pool's delete" "False/Failed" ready_sr $ns admission
  expect_eq "status.pool" "$(claim_jp $ns admission .status.pool.name)" ""
  eventually "quota deleted" "<absent>" rq_hard $ns $p
  allowed "grow" claim_set $ns admission "$LC=2,$LM=2Gi,$RC=2,$RM=2Gi"
  allowed "shrink" claim_set $ns admission "$LC=1,$LM=1Gi,$RC=1,$RM=1Gi"
  allowed "move" claim_pool $ns admission some-random-pool
  allowed "delete" k delete resourcepoolclaim admission -n $ns --wait=true --timeout=30s
}

# C3 Release bound claim (unused): afterwards the claim is not Bound=True,
# the annotation is gone, and spec.claim may change (to all the pool holds).
case_c3_release() {
  local p=test-release-bound-claim ns=c3-ns
  mkns $ns e2e-case=c3
  mkpool $p "$HARD4" e2e-case=c3
  mkclaim $ns release $p "$LC=1,$LM=1Gi,$RC=1,$RM=1Gi"
  expect_bound $ns release $p
  allowed "annotate" k annotate resourcepoolclaim release -n $ns projectcapsule.dev/release=true
  # Capsule's C3: the annotation is gone, Bound is False, the spec may change.
  # Here the release is acted on (Capsule strips it from an unused claim):
  # the claim lets go and queues again from now; nothing waits, so it binds.
  expect_eq "release annotation" "$(claim_jp $ns release '.metadata.annotations.projectcapsule\.dev/release')" ""
  expect_bound $ns release $p
  expect_eq "releasedAt" "$(claim_jp $ns release .status.releasedAt | grep -c T)" 1
  expect_event $ns release Normal Released "claim released from resourcepool $p and queued again"
  allowed "update after release" claim_set $ns release "$LC=2,$LM=2Gi,$RC=2,$RM=2Gi"
  expect_bound $ns release $p
}

# Release with claims waiting: the capacity goes to the oldest waiting claim
# in the release's own write, and the released claim queues behind it (the
# seed: "release ... and instantly requeue").
case_release_requeues() {
  local p=requeue-release ns=rr-ns
  mkns $ns e2e-case=rr
  mkpool $p "$RC=1" e2e-case=rr
  mkclaim $ns first $p "$RC=1"
  mkclaim $ns second $p "$RC=1"
  expect_bound $ns first $p
  expect_waiting $ns second $p PoolExhausted "requested: $RC=1, available: $RC=0"
  allowed "release first" k annotate resourcepoolclaim first -n $ns projectcapsule.dev/release=true
  expect_bound $ns second $p
  expect_waiting $ns first $p PoolExhausted "requested: $RC=1, available: $RC=0"
  expect_eq "quota" "$(rq_hard $ns $p)" "$RC=1"
  expect_alloc $p "$RC=1" "$RC=0" 1
}

# Events as Capsule's claim controller records them: one per condition that
# changes; a waiting claim warns.
case_claim_events() {
  local p=events-pool ns=ev-ns
  mkns $ns e2e-case=events
  mkpool $p "$RC=1" e2e-case=events
  mkclaim $ns fits $p "$RC=1"
  mkclaim $ns waits $p "$RC=1"
  expect_bound $ns fits $p
  expect_event $ns waits Warning PoolExhausted "requested: $RC=1, available: $RC=0"
  expect_event $ns waits Normal Failed "claim causes exhaustions"
  allowed "delete fits" k delete resourcepoolclaim fits -n $ns --wait=true --timeout=30s
  expect_event $ns waits Normal NoExhaustions "resource claimable from pool"
  expect_event $ns waits Normal Unused "claim is unused"
  # a claim bound at once records nothing: its status says it all
  expect_eq "events of fits" "$(k get events -n $ns --field-selector involvedObject.name=fits -o name | wc -l)" 0
}

# Release of a claim in use is refused (docs/pools.md: "claim delete,
# release annotation, resize down | refused while the claim is in use");
# Capsule lets it through (capsule#1662).
case_c3_release_in_use() {
  local p=test-release-in-use ns=c3u-ns
  mkns $ns e2e-case=c3u
  mkpool $p "$RC=2" e2e-case=c3u
  mkclaim $ns held $p "$RC=1"
  mkpod $ns pod "cpu=500m"
  if out=$(k annotate resourcepoolclaim held -n $ns projectcapsule.dev/release=true 2>&1); then
    # Capsule's behaviour would be: accepted, and the claim released under a
    # running pod. allot must not let the quota drop below usage.
    fail "release in use: allowed ($out)"
  fi
  expect_eq "quota kept" "$(rq_hard $ns $p)" "$RC=1"
  expect_alloc $p "$RC=1" "$RC=1" 1
  eventually "Bound in use" "$IN_USE" cond $ns held Bound
}

# C4 Auto-assign: a claim without spec.pool is given the pool that holds all
# its resources; none holds requests.storage, so that one stays "".
case_c4_auto_assign() {
  local ns=c4-ns
  mkns $ns e2e-case=c4
  mkpool test-auto-assign-1 "$LC=2,$RC=2" e2e-case=c4
  mkpool test-auto-assign-2 "$LM=2,$RM=2" e2e-case=c4
  mkclaim $ns cpu - "$LC=1,$RC=1"
  expect_eq "cpu: spec.pool" "$(claim_jp $ns cpu .spec.pool)" test-auto-assign-1
  expect_bound $ns cpu test-auto-assign-1
  mkclaim $ns mem - "$LM=1,$RM=1"
  expect_eq "mem: spec.pool" "$(claim_jp $ns mem .spec.pool)" test-auto-assign-2
  expect_bound $ns mem test-auto-assign-2
  mkclaim $ns storage - "requests.storage=1"
  expect_eq "storage: spec.pool" "$(claim_jp $ns storage .spec.pool)" ""
  expect_failed $ns storage "no pool reference was defined"
  # assignable but not allocatable: still assigned (the only candidate), and queued
  mkclaim $ns more-cpu - "$LC=2,$RC=2"
  expect_eq "more-cpu: spec.pool" "$(claim_jp $ns more-cpu .spec.pool)" test-auto-assign-1
  expect_waiting $ns more-cpu test-auto-assign-1 PoolExhausted \
    "requested: $LC=2, available: $LC=1; requested: $RC=2, available: $RC=1"
  expect_eq "quota 1" "$(rq_hard $ns test-auto-assign-1)" "$LC=1,$RC=1"
  expect_eq "quota 2" "$(rq_hard $ns test-auto-assign-2)" "$LM=1,$RM=1"
}

# allot's auto-assign pick (docs/decisions.md): allocatable pools first, then
# by pool name.
case_c4_allocatable_first() {
  local ns=c4a-ns
  mkns $ns e2e-case=c4a
  mkpool aa-a "$RC=1" e2e-case=c4a
  mkpool aa-b "$RC=4" e2e-case=c4a
  mkclaim $ns two - "$RC=2"
  expect_eq "two: the allocatable pool" "$(claim_jp $ns two .spec.pool)" aa-b
  expect_bound $ns two aa-b
  mkclaim $ns one - "$RC=1"
  expect_eq "one: both allocatable, by name" "$(claim_jp $ns one .spec.pool)" aa-a
  expect_bound $ns one aa-a
}

# p1_setup POOL PREFIX: P1's pool (hard 2/2Gi/2/2Gi, no defaults) over three
# namespaces PREFIX-ns-{1,2,3}, with claims simple-1 (128Mi), simple-2
# (512Mi) bound and simple-3 (10Gi) exhausted, all auto-assigned.
p1_setup() {
  local p=$1 pre=$2
  for i in 1 2 3; do mkns "$pre-ns-$i" "e2e-case=$pre"; done
  mkpool "$p" "$HARD4" "e2e-case=$pre"
  mkclaim "$pre-ns-1" simple-1 - "$LM=128Mi"
  mkclaim "$pre-ns-2" simple-2 - "$LM=512Mi"
  mkclaim "$pre-ns-3" simple-3 - "$LM=10Gi"
}
p1_defaults() {
  k patch resourcepool "$1" --type=merge \
    -p "{\"spec\":{\"defaults\":$(rl "$LC=1,$LM=1Gi,$RC=1,$RM=1Gi,requests.storage=5Gi")}}" >/dev/null
}

# P1 Defaults: allocation numbers, per-namespace quotas, defaults added to
# the quotas and not to the allocation.
case_p1_defaults() {
  local p=defaults-pool
  for i in 1 2 3; do mkns "p1-ns-$i" e2e-case=p1; done
  mkpool $p "$HARD4" e2e-case=p1
  expect_eq "spec.defaults" "$(pool_jp $p .spec.defaults | kv)" ""
  expect_alloc $p "$LC=0,$LM=0,$RC=0,$RM=0" "$HARD4" 0
  expect_eq "allocation.hard" "$(pool_map $p hard)" "$HARD4"
  expect_eq "namespaces" "$(pool_ns $p)" "p1-ns-1 p1-ns-2 p1-ns-3/3"
  for i in 1 2 3; do expect_eq "ns-$i quota" "$(rq_hard p1-ns-$i $p)" ""; done
  mkclaim p1-ns-1 simple-1 - "$LM=128Mi"
  mkclaim p1-ns-2 simple-2 - "$LM=512Mi"
  mkclaim p1-ns-3 simple-3 - "$LM=10Gi"
  for i in 1 2 3; do expect_eq "simple-$i spec.pool" "$(claim_jp p1-ns-$i simple-$i .spec.pool)" $p; done
  expect_bound p1-ns-1 simple-1 $p
  expect_bound p1-ns-2 simple-2 $p
  expect_waiting p1-ns-3 simple-3 $p PoolExhausted "requested: $LM=10Gi, available: $LM=1408Mi"
  expect_alloc $p "$LC=0,$LM=640Mi,$RC=0,$RM=0" "$LC=2,$LM=1408Mi,$RC=2,$RM=2Gi" 2
  expect_eq "ns-1 quota" "$(rq_hard p1-ns-1 $p)" "$LM=128Mi"
  expect_eq "ns-2 quota" "$(rq_hard p1-ns-2 $p)" "$LM=512Mi"
  expect_eq "ns-3 quota" "$(rq_hard p1-ns-3 $p)" ""
  expect_eq "pool Exhausted" "$(pool_cond $p Exhausted)" "True/PoolExhausted"

  p1_defaults $p
  expect_alloc $p "$LC=0,$LM=640Mi,$RC=0,$RM=0" "$LC=2,$LM=1408Mi,$RC=2,$RM=2Gi" 2
  expect_eq "ns-1 quota + defaults" "$(rq_hard p1-ns-1 $p)" "$LC=1,$LM=1152Mi,$RC=1,$RM=1Gi,requests.storage=5Gi"
  expect_eq "ns-2 quota + defaults" "$(rq_hard p1-ns-2 $p)" "$LC=1,$LM=1536Mi,$RC=1,$RM=1Gi,requests.storage=5Gi"
  expect_eq "ns-3 quota + defaults" "$(rq_hard p1-ns-3 $p)" "$LC=1,$LM=1Gi,$RC=1,$RM=1Gi,requests.storage=5Gi"
  expect_bound p1-ns-1 simple-1 $p
  expect_waiting p1-ns-3 simple-3 $p PoolExhausted "requested: $LM=10Gi, available: $LM=1408Mi"
}

# P1, relabel step: ns-2 no longer selected; its claim is disassociated, its
# quota deleted, the capacity returns to the pool.
case_p1_relabel() {
  local p=defaults-pool-relabel pre=p1r
  p1_setup $p $pre
  p1_defaults $p
  expect_alloc $p "$LC=0,$LM=640Mi,$RC=0,$RM=0" "$LC=2,$LM=1408Mi,$RC=2,$RM=2Gi" 2
  k label namespace $pre-ns-2 e2e-case=elsewhere --overwrite >/dev/null
  expect_eq "namespaces" "$(pool_ns $p)" "$pre-ns-1 $pre-ns-3/2"
  expect_alloc $p "$LC=0,$LM=128Mi,$RC=0,$RM=0" "$LC=2,$LM=1920Mi,$RC=2,$RM=2Gi" 1
  expect_eq "ns-2 quota" "$(rq_hard $pre-ns-2 $p)" "<absent>"
  expect_eq "ns-1 quota" "$(rq_hard $pre-ns-1 $p)" "$LC=1,$LM=1152Mi,$RC=1,$RM=1Gi,requests.storage=5Gi"
  expect_failed $pre-ns-2 simple-2 "$NOT_AVAILABLE"
  expect_waiting $pre-ns-3 simple-3 $p PoolExhausted "requested: $LM=10Gi, available: $LM=1920Mi"
}

# P1, namespace deletion: a terminating namespace leaves the pool.
case_p1_ns_delete() {
  local p=defaults-pool-nsdel pre=p1d
  p1_setup $p $pre
  k delete namespace $pre-ns-3 --wait=false >/dev/null
  eventually "namespaces" "$pre-ns-1 $pre-ns-2/2" pool_ns $p
  expect_alloc $p "$LC=0,$LM=640Mi,$RC=0,$RM=0" "$LC=2,$LM=1408Mi,$RC=2,$RM=2Gi" 2
  k delete namespace $pre-ns-2 --wait=false >/dev/null
  eventually "namespaces" "$pre-ns-1/1" pool_ns $p
  expect_alloc $p "$LC=0,$LM=128Mi,$RC=0,$RM=0" "$LC=2,$LM=1920Mi,$RC=2,$RM=2Gi" 1
}

# P2 DefaultsZero: every pool resource is 0 in each quota until claimed.
case_p2_defaults_zero() {
  local p=defaults-zero-pool
  mkns p2-ns-1 e2e-case=p2
  mkns p2-ns-2 e2e-case=p2
  mkpool $p "$HARD4" e2e-case=p2 '"config":{"defaultsZero":true}'
  expect_eq "spec.defaults" "$(pool_jp $p .spec.defaults | kv)" "$LC=0,$LM=0,$RC=0,$RM=0"
  expect_eq "ns-1 quota" "$(rq_hard p2-ns-1 $p)" "$LC=0,$LM=0,$RC=0,$RM=0"
  expect_eq "ns-2 quota" "$(rq_hard p2-ns-2 $p)" "$LC=0,$LM=0,$RC=0,$RM=0"
  mkclaim p2-ns-1 cpu $p "$RC=1"
  expect_bound p2-ns-1 cpu $p
  expect_eq "ns-1 quota + claim" "$(rq_hard p2-ns-1 $p)" "$LC=0,$LM=0,$RC=1,$RM=0"
  expect_eq "ns-2 quota" "$(rq_hard p2-ns-2 $p)" "$LC=0,$LM=0,$RC=0,$RM=0"
  expect_alloc $p "$LC=0,$LM=0,$RC=1,$RM=0" "$LC=2,$LM=2Gi,$RC=1,$RM=2Gi" 1
}

# P3 Unordered: a later claim that fits binds past an older exhausted one,
# whose message then shows the pool's new availability.
case_p3_unordered() {
  local p=unordered-pool
  mkns p3-ns-1 e2e-case=p3
  mkns p3-ns-2 e2e-case=p3
  mkpool $p "$HARD4" e2e-case=p3 '"config":{"orderedQueue":false}'
  mkclaim p3-ns-1 simple-1 $p "$LM=128Mi"
  expect_bound p3-ns-1 simple-1 $p
  expect_alloc $p "$LC=0,$LM=128Mi,$RC=0,$RM=0" "$LC=2,$LM=1920Mi,$RC=2,$RM=2Gi" 1
  expect_eq "ns-1 quota" "$(rq_hard p3-ns-1 $p)" "$LM=128Mi"
  mkclaim p3-ns-1 simple-2 $p "$RC=4"
  expect_waiting p3-ns-1 simple-2 $p PoolExhausted "requested: $RC=4, available: $RC=2"
  expect_alloc $p "$LC=0,$LM=128Mi,$RC=0,$RM=0" "$LC=2,$LM=1920Mi,$RC=2,$RM=2Gi" 1
  mkclaim p3-ns-2 simple-3 $p "$RM=1Gi"
  expect_bound p3-ns-2 simple-3 $p
  expect_alloc $p "$LC=0,$LM=128Mi,$RC=0,$RM=1Gi" "$LC=2,$LM=1920Mi,$RC=2,$RM=1Gi" 2
  mkclaim p3-ns-2 simple-4 $p "$RC=2"
  expect_bound p3-ns-2 simple-4 $p
  expect_alloc $p "$LC=0,$LM=128Mi,$RC=2,$RM=1Gi" "$LC=2,$LM=1920Mi,$RC=0,$RM=1Gi" 3
  expect_waiting p3-ns-1 simple-2 $p PoolExhausted "requested: $RC=4, available: $RC=0"
  expect_eq "ns-1 quota" "$(rq_hard p3-ns-1 $p)" "$LM=128Mi"
  expect_eq "ns-2 quota" "$(rq_hard p3-ns-2 $p)" "$RC=2,$RM=1Gi"
  expect_eq "exhaustions" "$(pool_jp $p '.status.exhaustions.requests\.cpu.requesting}/{.status.exhaustions.requests\.cpu.available')" "4/0"
  expect_eq "pool Exhausted" "$(pool_cond $p Exhausted)" "True/PoolExhausted"
}

# P4 Claim resize: grow within the pool, beyond it (allocation lost), back;
# in use, a resize is refused; the pool's hard cannot go below the claim.
case_p4_resize() {
  local p=resize-pool ns=p4-ns
  mkns $ns e2e-case=p4
  mkpool $p "$RC=10" e2e-case=p4
  mkclaim $ns resize $p "$RC=5"
  expect_bound $ns resize $p
  expect_alloc $p "$RC=5" "$RC=5" 1
  allowed "resize to 8" claim_set $ns resize "$RC=8"
  expect_bound $ns resize $p
  expect_alloc $p "$RC=8" "$RC=2" 1
  expect_eq "quota 8" "$(rq_hard $ns $p)" "$RC=8"
  allowed "resize to 55" claim_set $ns resize "$RC=55"
  expect_waiting $ns resize $p PoolExhausted "requested: $RC=55, available: $RC=10"
  expect_alloc $p "$RC=0" "$RC=10" 0
  expect_eq "quota after losing it" "$(rq_hard $ns $p)" ""
  allowed "resize back to 8" claim_set $ns resize "$RC=8"
  expect_bound $ns resize $p
  expect_alloc $p "$RC=8" "$RC=2" 1
  mkpod $ns pod "cpu=100m"
  expect_denied "resize in use" "$IN_USE_CHANGE $p" claim_set $ns resize "$RC=9"
  expect_alloc $p "$RC=8" "$RC=2" 1
  eventually "Bound in use" "$IN_USE" cond $ns resize Bound
  expect_denied "pool hard below the claim" "can not reduce $RC usage to 5 because quantity 8 is claimed$REDUCE_TAIL" \
    pool_hard $p "$RC=5"
  expect_eq "hard unchanged" "$(pool_jp $p .spec.quota.hard | kv)" "$RC=10"
  allowed "pool hard down to the claim" pool_hard $p "$RC=8"
  expect_alloc $p "$RC=8" "$RC=0" 1
}

# P5 Ordered queue: a claim for a resource an older claim waits on queues
# (QueueExhausted); raising the pool's hard binds the queue in order.
case_p5_ordered() {
  local p=ordered-pool
  mkns p5-ns-1 e2e-case=p5
  mkns p5-ns-2 e2e-case=p5
  mkpool $p "$HARD4" e2e-case=p5 '"config":{"orderedQueue":true}'
  mkclaim p5-ns-1 simple-1 $p "$LM=512Mi"
  mkclaim p5-ns-2 simple-1 $p "$RM=750Mi"
  expect_bound p5-ns-1 simple-1 $p
  expect_bound p5-ns-2 simple-1 $p
  expect_alloc $p "$LC=0,$LM=512Mi,$RC=0,$RM=750Mi" "$LC=2,$LM=1536Mi,$RC=2,$RM=1298Mi" 2
  mkclaim p5-ns-2 simple-2 $p "$RC=4"
  expect_waiting p5-ns-2 simple-2 $p PoolExhausted "requested: $RC=4, available: $RC=2"
  mkclaim p5-ns-1 simple-3 $p "$LC=4"
  expect_waiting p5-ns-1 simple-3 $p PoolExhausted "requested: $LC=4, available: $LC=2"
  mkclaim p5-ns-2 simple-4 $p "$LC=2,$RC=2"
  expect_waiting p5-ns-2 simple-4 $p QueueExhausted \
    "requested: $LC=2, queued: $LC=4; requested: $RC=2, queued: $RC=4"
  expect_eq "ns-1 quota" "$(rq_hard p5-ns-1 $p)" "$LM=512Mi"
  expect_eq "ns-2 quota" "$(rq_hard p5-ns-2 $p)" "$RM=750Mi"
  # a claim that touches no queued resource still binds
  mkclaim p5-ns-1 simple-5 $p "$LM=512Mi"
  expect_bound p5-ns-1 simple-5 $p
  allowed "delete simple-5" k delete resourcepoolclaim simple-5 -n p5-ns-1 --wait=true --timeout=30s

  allowed "raise hard" pool_hard $p "$LC=4,$LM=2Gi,$RC=4,$RM=2Gi"
  expect_alloc $p "$LC=4,$LM=512Mi,$RC=4,$RM=750Mi" "$LC=0,$LM=1536Mi,$RC=0,$RM=1298Mi" 4
  expect_bound p5-ns-2 simple-2 $p
  expect_bound p5-ns-1 simple-3 $p
  expect_eq "ns-1 quota" "$(rq_hard p5-ns-1 $p)" "$LC=4,$LM=512Mi"
  expect_eq "ns-2 quota" "$(rq_hard p5-ns-2 $p)" "$RC=4,$RM=750Mi"
  expect_waiting p5-ns-2 simple-4 $p PoolExhausted \
    "requested: $LC=2, available: $LC=0; requested: $RC=2, available: $RC=0"
}

# P6 Namespace selection, relabel: a claim in a namespace the pool does not
# select fails; once the namespace is relabelled into the pool, it binds.
case_p6_namespace_selection() {
  local p=bind-ns-pool-1
  mkns p6-ns-1 e2e-case=p6
  mkns p6-ns-2 e2e-case=p6-not
  mkpool $p "$LM=2Gi" e2e-case=p6
  expect_eq "namespaces" "$(pool_ns $p)" "p6-ns-1/1"
  mkclaim p6-ns-1 in $p "$LM=512Mi"
  expect_bound p6-ns-1 in $p
  mkclaim p6-ns-2 out $p "$LM=512Mi"
  expect_failed p6-ns-2 out "$NOT_AVAILABLE"
  expect_alloc $p "$LM=512Mi" "$LM=1536Mi" 1
  k label namespace p6-ns-2 e2e-case=p6 --overwrite >/dev/null
  expect_eq "namespaces" "$(pool_ns $p)" "p6-ns-1 p6-ns-2/2"
  expect_bound p6-ns-2 out $p
  expect_alloc $p "$LM=1Gi" "$LM=1Gi" 2
  expect_eq "ns-2 quota" "$(rq_hard p6-ns-2 $p)" "$LM=512Mi"
}

# A namespace created with a selected label after the pool enters it.
case_ns_created_after_pool() {
  local p=late-ns-pool
  mkpool $p "$RC=2" e2e-case=late
  expect_eq "namespaces" "$(pool_ns $p)" "/0"
  mkns late-ns e2e-case=late
  expect_eq "namespaces" "$(pool_ns $p)" "late-ns/1"
  expect_eq "quota" "$(rq_hard late-ns $p)" ""
  mkclaim late-ns c $p "$RC=1"
  expect_bound late-ns c $p
  expect_eq "quota" "$(rq_hard late-ns $p)" "$RC=1"
}

# p78_setup POOL PREFIX DELETE-BOUND: two claims of 128Mi in two namespaces.
p78_setup() {
  mkns "$2-ns-1" "e2e-case=$2"
  mkns "$2-ns-2" "e2e-case=$2"
  mkpool "$1" "$HARD4" "e2e-case=$2" "\"config\":{\"deleteBoundResources\":$3}"
  mkclaim "$2-ns-1" simple-1 "$1" "$LM=128Mi"
  mkclaim "$2-ns-2" simple-2 "$1" "$LM=128Mi"
  expect_bound "$2-ns-1" simple-1 "$1"
  expect_bound "$2-ns-2" simple-2 "$1"
}

# P7 Deletion, not cascading: the claims survive, unassigned; the quotas go.
case_p7_delete_keeps_claims() {
  local p=delete-keep-pool
  p78_setup $p p7 false
  k delete resourcepool $p --wait=false >/dev/null
  wait_gone resourcepool $p
  for i in 1 2; do
    k get resourcepoolclaim simple-$i -n p7-ns-$i >/dev/null || fail "claim simple-$i was deleted"
    eventually "simple-$i status.pool" "" claim_jp p7-ns-$i simple-$i .status.pool.name
    eventually "simple-$i Ready" "False/Failed" ready_sr p7-ns-$i simple-$i
    eventually "ns-$i quota" "<absent>" rq_hard p7-ns-$i $p
  done
}

# P8 Deletion, cascading (deleteBoundResources): the bound claims go too.
case_p8_delete_cascades() {
  local p=delete-cascade-pool
  p78_setup $p p8 true
  k delete resourcepool $p --wait=false >/dev/null
  wait_gone resourcepool $p
  wait_gone resourcepoolclaim simple-1 -n p8-ns-1
  wait_gone resourcepoolclaim simple-2 -n p8-ns-2
  eventually "ns-1 quota" "<absent>" rq_hard p8-ns-1 $p
}

# P9 Admission guards on the pool's hard: raise, lower to what is claimed,
# drop unclaimed resources: allowed; below what is claimed or dropping a
# claimed resource: refused with Capsule's texts, the hard unchanged.
case_p9_hard_guards() {
  local p=guard-pool ns=p9-ns
  mkns $ns e2e-case=p9
  mkpool $p "$HARD4" e2e-case=p9 '"config":{"defaultsZero":true}'
  mkclaim $ns mem-req $p "$RM=512Mi"
  mkclaim $ns mem-lim $p "$LM=1Gi"
  expect_bound $ns mem-req $p
  expect_bound $ns mem-lim $p
  expect_alloc $p "$LC=0,$LM=1Gi,$RC=0,$RM=512Mi" "$LC=2,$LM=1Gi,$RC=2,$RM=1536Mi" 2
  allowed "raise" pool_hard $p "$LC=4,$LM=4Gi,$RC=2,$RM=2Gi"
  expect_alloc $p "$LC=0,$LM=1Gi,$RC=0,$RM=512Mi" "$LC=4,$LM=3Gi,$RC=2,$RM=1536Mi"
  allowed "back" pool_hard $p "$HARD4"
  expect_denied "below claimed" "can not reduce $LM usage to 10Mi because quantity 1Gi is claimed$REDUCE_TAIL" \
    pool_hard $p "$LC=2,$LM=10Mi,$RC=0.5,$RM=128Mi"
  expect_eq "hard unchanged" "$(pool_jp $p .spec.quota.hard | kv)" "$HARD4"
  expect_alloc $p "$LC=0,$LM=1Gi,$RC=0,$RM=512Mi" "$LC=2,$LM=1Gi,$RC=2,$RM=1536Mi" 2
  allowed "drop unclaimed cpu" pool_hard $p "$LM=2Gi,$RM=2Gi"
  expect_alloc $p "$LM=1Gi,$RM=512Mi" "$LM=1Gi,$RM=1536Mi" 2
  allowed "down to claimed" pool_hard $p "$LM=1Gi,$RM=512Mi"
  expect_alloc $p "$LM=1Gi,$RM=512Mi" "$LM=0,$RM=0" 2
  expect_denied "to zero" "can not reduce $LM usage to 0 because quantity 1Gi is claimed$REDUCE_TAIL" \
    pool_hard $p "$LM=0,$RM=0"
  expect_denied "claimed removed" \
    "can not remove resource $LM as it is still being allocated. Remove corresponding claims or keep the resources in the pool" \
    pool_hard $p "$RC=1"
  expect_eq "hard unchanged" "$(pool_jp $p .spec.quota.hard | kv)" "$LM=1Gi,$RM=512Mi"
  expect_bound $ns mem-req $p
  expect_bound $ns mem-lim $p
}

# Deleting, shrinking or releasing a claim frees capacity, and the oldest
# waiting claim that fits binds in the same write.
case_release_binds_queued() {
  local p=requeue-pool
  mkns rq-ns-1 e2e-case=requeue
  mkns rq-ns-2 e2e-case=requeue
  mkpool $p "$RC=2" e2e-case=requeue
  mkclaim rq-ns-1 a-first $p "$RC=2"
  mkclaim rq-ns-2 b-second $p "$RC=1"
  mkclaim rq-ns-2 c-third $p "$RC=2"
  expect_bound rq-ns-1 a-first $p
  expect_waiting rq-ns-2 b-second $p PoolExhausted "requested: $RC=1, available: $RC=0"
  expect_waiting rq-ns-2 c-third $p PoolExhausted "requested: $RC=2, available: $RC=0"
  expect_eq "ns-2 quota" "$(rq_hard rq-ns-2 $p)" ""
  allowed "shrink a-first" claim_set rq-ns-1 a-first "$RC=1"
  expect_bound rq-ns-2 b-second $p
  expect_waiting rq-ns-2 c-third $p PoolExhausted "requested: $RC=2, available: $RC=0"
  expect_alloc $p "$RC=2" "$RC=0" 2
  expect_eq "ns-1 quota" "$(rq_hard rq-ns-1 $p)" "$RC=1"
  expect_eq "ns-2 quota" "$(rq_hard rq-ns-2 $p)" "$RC=1"
  allowed "delete a-first" k delete resourcepoolclaim a-first -n rq-ns-1 --wait=true --timeout=30s
  expect_waiting rq-ns-2 c-third $p PoolExhausted "requested: $RC=2, available: $RC=1"
  expect_alloc $p "$RC=1" "$RC=1" 1
  expect_eq "ns-1 quota" "$(rq_hard rq-ns-1 $p)" ""
  allowed "delete b-second" k delete resourcepoolclaim b-second -n rq-ns-2 --wait=true --timeout=30s
  expect_bound rq-ns-2 c-third $p
  expect_alloc $p "$RC=2" "$RC=0" 1
  expect_eq "ns-2 quota" "$(rq_hard rq-ns-2 $p)" "$RC=2"
  expect_eq "pool Exhausted" "$(pool_cond $p Exhausted)" "False/NoExhaustions"
}

# A pod over its namespace's capsule-pool-<pool> quota is refused by
# ResourceQuota admission, with its 403 text; a new claim makes room at once.
case_pod_over_pool_quota() {
  local p=pod-pool ns=pod-ns out
  mkns $ns e2e-case=pod
  mkpool $p "$RC=1" e2e-case=pod
  mkclaim $ns half $p "$RC=500m"
  expect_eq "quota" "$(rq_hard $ns $p)" "$RC=500m"
  mkpod $ns p1 "cpu=300m"
  if out=$(mkpod $ns p2 "cpu=300m" 2>&1); then fail "pod over the pool quota was created: $out"; fi
  expect_contains "over quota" "$out" "Error from server (Forbidden)"
  expect_contains "over quota" "$out" \
    "pods \"p2\" is forbidden: exceeded quota: capsule-pool-$p, requested: $RC=300m, used: $RC=300m, limited: $RC=500m"
  mkclaim $ns other-half $p "$RC=500m"
  expect_eq "quota" "$(rq_hard $ns $p)" "$RC=1"
  allowed "pod within the grown quota" mkpod $ns p2 "cpu=300m"
  expect_eq "quota used" "$(k get quota capsule-pool-$p -n $ns -o 'jsonpath={.status.used.requests\.cpu}')" 600m
}

# listing NS|-A CLAIM...: `kubectl get resourcepoolclaims`, the header and
# the rows of the claims named, with the columns' spaces squeezed and the AGE
# column (the last) left out (other cases' claims are left out too).
listing() {
  local where=$1 re
  shift
  re="^(NAMESPACE|NAME) |^([^ ]+ )?($(IFS='|'; echo "$*")) "
  if [ "$where" = -A ]; then k get resourcepoolclaims -A; else k get resourcepoolclaims -n "$where"; fi |
    tr -s ' ' | sed 's/ [^ ]*$//' | grep -E "$re"
}
# mkns_once NAME LABELS: mkns, unless a case before made it.
mkns_once() { k get namespace "$1" >/dev/null 2>&1 || mkns "$@"; }
# seed_rows: seed 003's printed rows (stdin) the same way.
seed_rows() { tr -s ' ' | sed 's/ [^ ]*$//'; }

# Seed 003 "Exhaustions": what `kubectl get resourcepoolclaims` prints for a
# claim the pool cannot hold (PoolExhausted, with what is available), one
# that binds past it (skip-the-line), and with orderedQueue one queued behind
# an exhausted claim (QueueExhausted); then the migration guide's claims,
# made before their pools (Assigned Failed, the pool not found) and bound once
# the pools exist. Each listing is compared with the seed's own output.
case_seed_claim_listing() {
  local ns=solar-test
  mkns_once $ns capsule.clastix.io/tenant=solar
  mkpool sampler "$RC=2,$RM=1Gi" capsule.clastix.io/tenant=solar
  k create -f - >/dev/null <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePoolClaim
metadata:
  name: get-me-cpu
  namespace: solar-test
spec:
  pool: "sampler"
  claim:
    requests.cpu: "2"
    requests.memory: 2Gi
YAML
  expect_eq "PoolExhausted" "$(listing -A get-me-cpu)" "$(seed_rows <<'EOF'
NAMESPACE    NAME         POOL      STATUS   REASON          MESSAGE                                                          AGE
solar-test   get-me-cpu   sampler   Bound    PoolExhausted   requested: requests.memory=2Gi, available: requests.memory=1Gi   9m19s
EOF
)"
  k create -f - >/dev/null <<'YAML'
---
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePoolClaim
metadata:
  name: skip-the-line
  namespace: solar-test
spec:
  pool: "sampler"
  claim:
    requests.memory: 512Mi
YAML
  expect_eq "skip the line" "$(listing -A get-me-cpu skip-the-line)" "$(seed_rows <<'EOF'
NAMESPACE    NAME            POOL      STATUS   REASON          MESSAGE                                                            AGE
solar-test   get-me-cpu      sampler   Bound    PoolExhausted   requested: requests.memory=2Gi, available: requests.memory=512Mi   16m
solar-test   skip-the-line   sampler   Bound    Succeeded       Claimed resources                                                  2s
EOF
)"
  # the summary condition the columns read, and the claim's conditions
  expect_eq "status.condition" "$(claim_jp $ns get-me-cpu '.status.condition.type}/{.status.condition.status}/{.status.condition.reason')" \
    "Bound/False/PoolExhausted"
  expect_eq "Exhausted" "$(cond $ns get-me-cpu Exhausted)" \
    "True/PoolExhausted/requested: $RM=2Gi, available: $RM=512Mi"
  expect_eq "wide: in use" "$(k get resourcepoolclaim skip-the-line -n $ns -o wide --no-headers | awk '{print $NF}')" False

  # orderedQueue: the first claim to exhaust requests.memory holds the queue
  k delete resourcepoolclaim get-me-cpu skip-the-line -n $ns >/dev/null
  k delete resourcepool sampler >/dev/null
  mkpool sampler "$RM=512Mi" capsule.clastix.io/tenant=solar '"config":{"orderedQueue":true}'
  mkclaim $ns first sampler "$RM=1Gi"
  mkclaim $ns get-mem sampler "$RM=2Gi"
  expect_eq "QueueExhausted" "$(listing -A get-mem | grep get-mem)" "$(seed_rows <<'EOF'
solar-test   get-mem      sampler   Bound    QueueExhausted   requested: requests.memory=2Gi, queued: requests.memory=1Gi   9m19s
EOF
)"

  # the migration guide: claims first, then their pools
  mkns migration-dev capsule.clastix.io/tenant=migration
  k create -f - >/dev/null <<'YAML'
---
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePoolClaim
metadata:
  name: compute
  namespace: migration-dev
spec:
  pool: "migration-compute"
  claim:
    requests.cpu: 375m
    requests.memory: 384Mi
    limits.cpu: 375m
    limits.memory: 384Mi
---
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePoolClaim
metadata:
  name: pods
  namespace: migration-dev
spec:
  pool: "migration-size"
  claim:
    pods: "3"
YAML
  expect_eq "claims before their pools" "$(listing migration-dev compute pods)" "$(seed_rows <<'EOF'
NAME      POOL   STATUS     REASON   MESSAGE                                                         AGE
compute          Assigned   Failed   ResourcePool.capsule.clastix.io "migration-compute" not found   2s
pods             Assigned   Failed   ResourcePool.capsule.clastix.io "migration-size" not found      2s
EOF
)"
  mkpool migration-compute "$LC=2,$LM=2Gi,$RC=2,$RM=2Gi" capsule.clastix.io/tenant=migration \
    '"config":{"defaultsZero":true}'
  mkpool migration-size "pods=7" capsule.clastix.io/tenant=migration '"config":{"defaultsZero":true}'
  expect_eq "claims bound" "$(listing migration-dev compute pods)" "$(seed_rows <<'EOF'
NAME      POOL                STATUS   REASON      MESSAGE             AGE
compute   migration-compute   Bound    Succeeded   Claimed resources   4m9s
pods      migration-size      Bound    Succeeded   Claimed resources   4m9s
EOF
)"
  # solar-test as seed_solar expects it, whichever runs first
  k delete resourcepoolclaim first get-mem -n $ns >/dev/null
}

# Seed 003 "Bound": two claims in solar-test, listed with the seed's
# columns; a pod uses one of them, which can then not be deleted; the unused
# one can; once the pod is gone the first is unused again.
case_seed_solar() {
  local ns=solar-test p=solar-pool out
  mkns_once $ns capsule.clastix.io/tenant=solar
  k create -f - >/dev/null <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePool
metadata:
  name: solar-pool
spec:
  quota:
    hard:
      requests.cpu: "4"
      requests.memory: 4Gi
  selectors:
  - matchLabels:
      capsule.clastix.io/tenant: solar
YAML
  k create -f - >/dev/null <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePoolClaim
metadata:
  name: get-me-solar
  namespace: solar-test
spec:
  pool: "solar-pool"
  claim:
    requests.cpu: "2"
    requests.memory: 2Gi
YAML
  k create -f - >/dev/null <<'YAML'
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePoolClaim
metadata:
  name: get-me-solar-2
  namespace: solar-test
spec:
  pool: "solar-pool"
  claim:
    requests.cpu: "2"
    requests.memory: 2Gi
YAML
  # claims(): the wide table, its AGE column left out (the seed prints
  # Capsule v0.14's READY MESSAGE BOUND REASON columns here; allot prints the
  # chart's STATUS REASON MESSAGE, and whether pods use a claim as IN USE)
  claims() {
    k get resourcepoolclaim -n $ns -o wide | tr -s ' ' | sed -E 's/ ([0-9]+[smhd][0-9smh]*|AGE) / /'
  }
  expect_eq "get resourcepoolclaim" "$(claims)" "NAME POOL STATUS REASON MESSAGE IN USE
get-me-solar solar-pool Bound Succeeded Claimed resources False
get-me-solar-2 solar-pool Bound Succeeded Claimed resources False"
  quota_row() { k get resourcequota -n $ns --no-headers | grep "^capsule-pool-$p " | tr -s ' '; }
  expect_contains "get resourcequota" "$(quota_row)" "requests.cpu: 0/4, requests.memory: 0/4Gi"

  mkpod $ns solar "cpu=2,memory=2Gi"
  expect_contains "get resourcequota" "$(quota_row)" "requests.cpu: 2/4, requests.memory: 2Gi/4Gi"
  eventually "get resourcepoolclaim" "NAME POOL STATUS REASON MESSAGE IN USE
get-me-solar solar-pool Bound Succeeded Claimed resources True
get-me-solar-2 solar-pool Bound Succeeded Claimed resources False" claims
  out=$(k delete resourcepoolclaim -n $ns get-me-solar-2 2>&1) || fail "delete get-me-solar-2: $out"
  expect_eq "delete get-me-solar-2" "$out" "resourcepoolclaim.capsule.clastix.io \"get-me-solar-2\" deleted"
  if out=$(k delete resourcepoolclaim -n $ns get-me-solar 2>&1); then fail "delete get-me-solar in use: $out"; fi
  expect_contains "delete get-me-solar in use" "$out" "Error from server (Forbidden): "
  expect_contains "delete get-me-solar in use" "$out" "cannot delete the pool while claim is used in resourcepool solar-pool"
  expect_contains "get resourcequota" "$(quota_row)" "requests.cpu: 2/2, requests.memory: 2Gi/2Gi"

  rmpod $ns solar
  eventually "get resourcepoolclaim" "NAME POOL STATUS REASON MESSAGE IN USE
get-me-solar solar-pool Bound Succeeded Claimed resources False" claims
  expect_contains "get resourcequota" "$(quota_row)" "requests.cpu: 0/2, requests.memory: 0/2Gi"
  expect_eq "pool columns" "$(k get quotapool $p --no-headers | tr -s ' ' | cut -d' ' -f1-5)" \
    "solar-pool 1 1 True reconciled"
}

# -------------------------------------------------------------------- run --

PASSED=()
FAILED=()
# run_case NAME: run case_NAME in a subshell (errexit on, the EXIT trap off)
# and report it.
run_case() {
  local name=$1 rc
  set +e
  (
    trap - EXIT
    set -e
    "case_$name"
  ) >"$E2E_DIR/case.err" 2>&1
  rc=$?
  set -e
  if [ $rc -eq 0 ]; then
    PASSED+=("$name")
    echo "ok   $name"
  else
    FAILED+=("$name")
    echo "FAIL $name"
    sed 's/^/       /' "$E2E_DIR/case.err"
  fi
}

ALL_CASES="c1_selection c2_claim_before_pool c2_in_use_guard c2_pool_deleted c3_release release_requeues claim_events c3_release_in_use
  c4_auto_assign c4_allocatable_first
  p1_defaults p1_relabel p1_ns_delete p2_defaults_zero p3_unordered p4_resize p5_ordered
  p6_namespace_selection ns_created_after_pool p7_delete_keeps_claims p8_delete_cascades
  p9_hard_guards release_binds_queued pod_over_pool_quota seed_solar seed_claim_listing"
for c in ${CASES:-$ALL_CASES}; do
  run_case "$c"
done

expect_eq "alive" "$(api GET /healthz | tail -n1)" 200
stop_allotd
echo "test_pools: ${#PASSED[@]} passed, ${#FAILED[@]} failed"
if [ ${#FAILED[@]} -gt 0 ]; then
  fail "failed cases: ${FAILED[*]}"
fi
echo "test_pools: ok"
