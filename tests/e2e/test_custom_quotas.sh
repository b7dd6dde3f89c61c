# test_custom_quotas.sh - Capsule's CustomQuota (cq) and GlobalCustomQuota
# (gcq) acceptance scenarios with the real kubectl: usage and claims follow
# creates, relabels, image changes, phase changes and deletes; the smallest
# quota that an object would take past its limit refuses it with Capsule's
# text; a value that is missing counts 0 (seed 003; Capsule's code refuses
# the object and goes Ready=False: N1, N2, N5, G2), and a selector that
# cannot be evaluated refuses the object it is brought in by; a global
# quota's status.namespaces follows its namespace selectors.
#
# Reference: shared spec capsule-pools-and-custom-quotas.md §2 (semantics),
# §6.4 (N1-N33, e2e/customquota_namespaced_test.go) and §6.5 (G1-G14,
# e2e/customquota_global_test.go), and seed 003 "Custom Quotas" (its examples
# applied verbatim). Expectations are Capsule's, translated to allot:
#  - there is no QuantityLedger: allot charges in the write's transaction, so
#    Capsule's "ledger exists / targetRef / settled (reserved 0, no pending
#    deletes)" checks have nothing to look at and are left out, as is the
#    "await ready" wait before acting (a quota counts from its create);
#  - a denial is HTTP 403 (kubectl: "Error from server (Forbidden)") with
#    `<resource> "<name>" is forbidden: creating resource exceeds limit for
#    CustomQuota "<q>" (requested=R, currentUsed=C, available=0, limit=L,
#    inflightReserved=0)` (nothing is ever in flight), checked in full;
#  - status.usage.used and status.claims are read right after each write:
#    allot's reads of quotas are always current, so nothing is waited for
#    except what another actor does (the node agent finishing a pod, the
#    namespace controller removing a namespace), with bounded waits.
# Capsule's Deployments (N6, N7, N24, G1, G4 scale, G7) are played with plain
# pods created and deleted to the same replica counts (written before allotd
# ran a Deployment controller; plain pods keep their names, and so the
# expected messages, fixed; tests/e2e/test_deployments.sh drives real
# Deployments at a quota). G13/G14 use allotd's node
# agent (scheduler and node agent on, their defaults) with a Node tainted so
# that only their pods (which tolerate the taint) are bound: a pod annotated
# allot.dev/run-duration completes (Succeeded), one with
# activeDeadlineSeconds fails (Failed, DeadlineExceeded) - allot runs no
# containers, so Capsule's `sh -c "exit 0|1"` become those two.
#
# Every case is a function case_NAME run in a subshell with its own
# namespaces (labelled e2e.capsule.dev/test-suite=<namespace>, which the
# global quotas of that case select); global quotas are removed after every
# case (and the node after G13/G14, the seed's tenant namespaces after their
# case), so no case sees another's. A case that fails
# because allot differs from the expectation (not because of the test) is
# listed in KNOWN_FAILING with why: it still runs and reports
# ("known-fail"), and the test fails if it starts passing (remove it from
# the list then). `CASES="n20_smallest_count g8_sub_smallest" bash
# test_custom_quotas.sh` runs only those.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl
start_allotd
cd "$E2E_DIR"

API=capsule.clastix.io/v1beta2
SUITE=e2e.capsule.dev/test-suite
TAINT=e2e.allot.dev/custom-quotas
NGINX=nginx:1.27.0

# ---------------------------------------------------------------- helpers --

# js STRING: STRING as a JSON string.
js() {
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$s"
}
# rl "a=1,b=2": a string map as JSON ({"a":"1","b":"2"}; "" is {}).
rl() {
  local out="" kv
  local IFS=,
  for kv in $1; do out+="${out:+,}$(js "${kv%%=*}"):$(js "${kv#*=}")"; done
  printf '{%s}' "$out"
}

# mkns NAME [k=v,...]: a namespace labelled $SUITE=NAME and k=v.
mkns() {
  k create -f - >/dev/null <<EOF
{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"$1","labels":$(rl "$SUITE=$1${2:+,$2}")}}
EOF
}

# Sources and selectors (Capsule's spec.sources[] and sources[].selectors[]).
# src KIND OP [PATH] [SELECTORS]: KIND Pod or PVC; PATH "" for none (count).
src() {
  local kind=$1 op=$2 path=${3:-} sel=${4:-} out
  [ "$kind" != PVC ] || kind=PersistentVolumeClaim
  out="{\"apiVersion\":\"v1\",\"kind\":\"$kind\",\"op\":\"$op\""
  [ -z "$path" ] || out+=",\"path\":$(js "$path")"
  [ -z "$sel" ] || out+=",\"selectors\":$sel"
  printf '%s}' "$out"
}
# lbl k=v,...: a selector entry with matchLabels.
lbl() { printf '{"matchLabels":%s}' "$(rl "$1")"; }
# fld SEL...: a selector entry with these fieldSelectors.
fld() {
  local out="" s
  for s in "$@"; do out+="${out:+,}$(js "$s")"; done
  printf '{"fieldSelectors":[%s]}' "$out"
}
# sels ENTRY...: the selectors list of these entries (ORed).
sels() {
  local IFS=,
  printf '[%s]' "$*"
}
CPU_PATH='.spec.containers[*].resources.requests.cpu'
LIMITS_CPU_PATH='.spec.containers[*].resources.limits.cpu'
ED_PATH='.spec.volumes[*].emptyDir.sizeLimit'
PVC_PATH=.spec.resources.requests.storage

# cq NS NAME LIMIT SOURCE...: create a CustomQuota.
cq() {
  local ns=$1 name=$2 limit=$3 out srcs
  shift 3
  srcs=$(IFS=,; echo "$*")
  out=$(k create -f - 2>&1 <<EOF
{"apiVersion":"$API","kind":"CustomQuota","metadata":{"name":"$name","namespace":"$ns"},
 "spec":{"limit":"$limit","sources":[$srcs]}}
EOF
  ) || fail "create CustomQuota $ns/$name: $out"
}
# gcq NAME LIMIT NSSEL SOURCE...: create a GlobalCustomQuota. NSSEL: a
# namespace name (selects it by its $SUITE label), "-" for no
# namespaceSelectors, or a JSON list.
gcq() {
  local name=$1 limit=$2 nssel=$3 out srcs
  shift 3
  case $nssel in
    -) nssel="" ;;
    \[*) nssel=",\"namespaceSelectors\":$nssel" ;;
    *) nssel=",\"namespaceSelectors\":[$(lbl "$SUITE=$nssel")]" ;;
  esac
  srcs=$(IFS=,; echo "$*")
  out=$(k create -f - 2>&1 <<EOF
{"apiVersion":"$API","kind":"GlobalCustomQuota","metadata":{"name":"$name"},
 "spec":{"limit":"$limit","sources":[$srcs]$nssel}}
EOF
  ) || fail "create GlobalCustomQuota $name: $out"
}

# pod_json NS NAME [LABELS] [IMAGE] [CPU] [EMPTYDIR]: Capsule's MakePod: one
# container "main" (requests.cpu CPU if given), restartPolicy Always, and an
# emptyDir volume with sizeLimit EMPTYDIR if given.
pod_json() {
  local ns=$1 name=$2 labels=${3:-} image=${4:-$NGINX} cpu=${5:-} ed=${6:-}
  local res="{}" vols="" mounts=""
  [ -z "$cpu" ] || res="{\"requests\":{\"cpu\":\"$cpu\"}}"
  if [ -n "$ed" ]; then
    vols=",\"volumes\":[{\"name\":\"scratch\",\"emptyDir\":{\"sizeLimit\":\"$ed\"}}]"
    mounts=",\"volumeMounts\":[{\"name\":\"scratch\",\"mountPath\":\"/scratch\"}]"
  fi
  printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"%s","labels":%s},"spec":{"restartPolicy":"Always","containers":[{"name":"main","image":"%s","resources":%s%s}]%s}}' \
    "$name" "$ns" "$(rl "$labels")" "$image" "$res" "$mounts" "$vols"
}
# pvc_json NS NAME SIZE [ACCESSMODE] [LABELS]: Capsule's MakePVC.
pvc_json() {
  printf '{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"%s","namespace":"%s","labels":%s},"spec":{"accessModes":["%s"],"resources":{"requests":{"storage":"%s"}}}}' \
    "$2" "$1" "$(rl "${5:-}")" "${4:-ReadWriteOnce}" "$3"
}
# create WHAT JSON: create it, failing the case with kubectl's output if refused.
create() {
  local out
  out=$(k create -f - 2>&1 <<<"$2") || fail "$1: refused: $out"
}
mkpod() { create "create pod $1/$2" "$(pod_json "$@")"; }
mkpvc() { create "create pvc $1/$2" "$(pvc_json "$@")"; }
# refused WHAT JSON WANT: the create is refused with HTTP 403 and a message
# holding WANT (and the object does not exist).
refused() {
  local out
  if out=$(k create -f - 2>&1 <<<"$2"); then fail "$1: allowed ($out), want 403 with [$3]"; fi
  expect_contains "$1: HTTP 403" "$out" "Error from server (Forbidden)"
  expect_contains "$1" "$out" "$3"
}
# exceeds RESOURCE NAME TYPE QUOTA REQUESTED CURRENT LIMIT: allot's text for
# a create that would take QUOTA past its limit.
exceeds() {
  printf '%s "%s" is forbidden: creating resource exceeds limit for %s "%s" (requested=%s, currentUsed=%s, available=0, limit=%s, inflightReserved=0)' "$@"
}
# relabel KIND NS NAME k=v...: kubectl label --overwrite (NS "" for a
# cluster-scoped KIND).
relabel() {
  local kind=$1 ns=$2 name=$3
  shift 3
  allowed "relabel $kind $ns/$name" k label --overwrite "$kind" "$name" ${ns:+-n "$ns"} "$@"
}
# set_image NS POD IMAGE: the container "main" runs IMAGE.
set_image() { allowed "set image $1/$2" k set image "pod/$2" -n "$1" "main=$3"; }
rm_obj() { allowed "delete $*" k delete "$@" --wait=true --timeout=30s; }

# usage cq NS NAME | usage gcq NAME: "used/claims" (the number of claims);
# fails when used or available is negative.
usage() {
  local out used avail claims
  local jp='jsonpath={.status.usage.used}/{.status.usage.available}/{range .status.claims[*]}+{end}'
  if [ "$1" = cq ]; then out=$(k get cq "$3" -n "$2" -o "$jp"); else out=$(k get gcq "$2" -o "$jp"); fi
  used=${out%%/*}
  out=${out#*/}
  avail=${out%%/*}
  claims=${out#*/}
  case "$used$avail" in *-*) fail "$*: negative usage: used=$used available=$avail" ;; esac
  echo "$used/${#claims}"
}
# expect_cq NS NAME USED CLAIMS / expect_gcq NAME USED CLAIMS
expect_cq() { expect_eq "CustomQuota $1/$2 used/claims" "$(usage cq "$1" "$2")" "$3/$4"; }
expect_gcq() { expect_eq "GlobalCustomQuota $1 used/claims" "$(usage gcq "$1")" "$2/$3"; }
# claim_names cq NS NAME | claim_names gcq NAME: claims as ns/name, sorted.
claim_names() {
  local jp='jsonpath={range .status.claims[*]}{.namespace}/{.name}{"\n"}{end}'
  if [ "$1" = cq ]; then k get cq "$3" -n "$2" -o "$jp"; else k get gcq "$2" -o "$jp"; fi | sort | xargs
}
# ready cq NS NAME | ready gcq NAME: the Ready condition as status|message.
ready() {
  local jp='jsonpath={.status.conditions[?(@.type=="Ready")].status}|{.status.conditions[?(@.type=="Ready")].message}'
  if [ "$1" = cq ]; then k get cq "$3" -n "$2" -o "$jp"; else k get gcq "$2" -o "$jp"; fi
}
# gcq_ns NAME: status.namespaces, space-separated.
gcq_ns() { k get gcq "$1" -o 'jsonpath={.status.namespaces[*]}'; }

# allowed WHAT CMD...: CMD succeeds.
allowed() {
  local what=$1 out
  shift
  out=$("$@" 2>&1) || fail "$what: refused: $out"
}
_is() {
  local want=$1
  shift
  [ "$("$@" 2>&1)" == "$want" ]
}
# eventually WHAT WANT CMD...: wait (bounded) for CMD to print WANT, then
# check it (a failure shows the last output).
eventually() {
  local what=$1 want=$2
  shift 2
  wait_until 30 _is "$want" "$@" || true
  expect_eq "$what" "$("$@" 2>&1)" "$want"
}
gone() { ! k get "$@" >/dev/null 2>&1; }
wait_gone() { wait_until 60 gone "$@" || fail "still there after 60s: $*"; }
phase() { k get pod "$2" -n "$1" -o 'jsonpath={.status.phase}'; }

# mknode: a node only pods tolerating $TAINT are bound to.
mknode() {
  create "create node" '{"apiVersion":"v1","kind":"Node","metadata":{"name":"cq-node"},
   "spec":{"taints":[{"key":"'$TAINT'","value":"only","effect":"NoSchedule"}]},
   "status":{"capacity":{"cpu":"8","memory":"64Gi","pods":"110"},"allocatable":{"cpu":"8","memory":"64Gi","pods":"110"}}}'
}
# run_pod_json NS NAME CPU_LIMIT [EXTRA_SPEC_JSON] [ANNOTATIONS_JSON]: a pod
# with limits.cpu (memory 64Mi) that tolerates the node's taint.
run_pod_json() {
  local ann=${5:-}
  [ -n "$ann" ] || ann='{}'
  printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"%s","annotations":%s},"spec":{%s"tolerations":[{"key":"%s","operator":"Exists","effect":"NoSchedule"}],"terminationGracePeriodSeconds":0,"containers":[{"name":"main","image":"%s","resources":{"limits":{"cpu":"%s","memory":"64Mi"}}}]}}' \
    "$2" "$1" "$ann" "${4:+$4,}" "$TAINT" "$NGINX" "$3"
}

# ------------------------------------------------------- §6.4 namespaced --

# N1: a pod without an emptyDir exists before the quota. Capsule: Ready=False
# "did not resolve to any value"; seed 003: "Missing fields are treated as
# zero" - the quota is Ready and counts the pod for 0.
case_n1_missing_path_zero() {
  local ns=cq-n1 q=cq-missing-path-not-ready
  mkns $ns
  mkpod $ns cq-missing-emptydir-size
  cq $ns $q 10Gi "$(src Pod add "$ED_PATH")"
  expect_eq "Ready" "$(ready cq $ns $q)" "True|reconciled"
  expect_cq $ns $q 0 1
}

# N2: a pod without an emptyDir is created (Capsule refuses it) and counts 0;
# one with an emptyDir counts its size.
case_n2_missing_path_admits() {
  local ns=cq-n2 q=cq-missing-path-deny-create
  mkns $ns
  cq $ns $q 10Gi "$(src Pod add "$ED_PATH")"
  expect_eq "Ready" "$(ready cq $ns $q)" "True|reconciled"
  mkpod $ns cq-missing-path-denied
  expect_cq $ns $q 0 1
  mkpod $ns cq-with-emptydir "" $NGINX "" 1Gi
  expect_cq $ns $q 1Gi 2
  expect_eq "Ready" "$(ready cq $ns $q)" "True|reconciled"
}

# N3: 100 concurrent creators (HTTPS, curl) against a limit of 10: exactly
# 10 get 201 and 90 get 403; used 10 with 10 claims, the created pods.
case_n3_concurrent_100() {
  local ns=cq-n3 q=cq-concurrent-pod-count i
  mkns $ns
  cq $ns $q 10 "$(src Pod count "" "$(sels "$(lbl track=yes)")")"
  mkdir -p n3
  for i in $(seq -w 0 99); do
    (api POST "/api/v1/namespaces/$ns/pods" -H 'Content-Type: application/json' \
      --data "$(pod_json $ns cq-concurrent-pod-$i track=yes)" | tail -n1 >"n3/$i"; echo >>"n3/$i") &
  done
  wait
  local codes
  codes=$(cat n3/* | sort | uniq -c | awk '{print $2 "x" $1}' | xargs)
  expect_eq "HTTP codes of 100 concurrent creates" "$codes" "201x10 403x90"
  expect_cq $ns $q 10 10
  expect_eq "claims are the stored pods" "$(claim_names cq $ns $q)" \
    "$(k get pods -n $ns -o 'jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}' | sort | xargs)"
}

# N4: a global cpu quota (500m) and a namespaced emptyDir quota (2Gi) on the
# same pods: the third pod still fits the global one (checked first: 500m <
# 2Gi) and is refused by the CustomQuota.
case_n4_global_and_cq_paths() {
  local ns=cq-n4 g=gq-mixed-path-cpu-from-cq-suite q=cq-mixed-path-emptydir-from-cq-suite
  mkns $ns
  gcq $g 500m $ns "$(src Pod add "$CPU_PATH")"
  cq $ns $q 2Gi "$(src Pod add "$ED_PATH")"
  mkpod $ns mixed-path-cq-suite-1 "" $NGINX 100m 1Gi
  mkpod $ns mixed-path-cq-suite-2 "" $NGINX 100m 1Gi
  expect_gcq $g 200m 2
  expect_cq $ns $q 2Gi 2
  refused "third pod" "$(pod_json $ns mixed-path-cq-suite-3 "" $NGINX 100m 1Gi)" \
    "$(exceeds pods mixed-path-cq-suite-3 CustomQuota $q 1Gi 3Gi 2Gi)"
  expect_gcq $g 200m 2
  expect_cq $ns $q 2Gi 2
}

# N5: paths that name nothing, on pods and PVCs. Capsule refuses both; here
# both are created and count 0 (seed 003's missing fields).
case_n5_wrong_paths() {
  local ns=cq-n5 q=cq-wrong-path-zero
  mkns $ns
  cq $ns $q 10Gi "$(src Pod add '.spec.volumes[*].doesNotExist.sizeLimit')" \
    "$(src PVC add .spec.resources.requests.thisDoesNotExist)"
  mkpod $ns wrong-path-pod "" $NGINX "" 1Gi
  mkpvc $ns wrong-path-pvc 2Gi
  expect_cq $ns $q 0 2
  expect_eq "Ready" "$(ready cq $ns $q)" "True|reconciled"
}

# N6: requests.cpu of track=yes pods; "Deployment" of 2 x 100m scaled to 4
# (plain pods: no Deployment controller yet).
case_n6_cpu_scale() {
  local ns=cq-n6 q=cq-pod-cpu-requests i
  mkns $ns
  cq $ns $q 500m "$(src Pod add "$CPU_PATH" "$(sels "$(lbl track=yes)")")"
  for i in 1 2; do mkpod $ns cpu-requests-$i track=yes $NGINX 100m; done
  expect_cq $ns $q 200m 2
  for i in 3 4; do mkpod $ns cpu-requests-$i track=yes $NGINX 100m; done
  expect_cq $ns $q 400m 4
}

# N7: a pod count followed through 1 -> 3 -> 2 replicas (plain pods).
case_n7_count_scale() {
  local ns=cq-n7 q=cq-pod-count
  mkns $ns
  cq $ns $q 5 "$(src Pod count)"
  mkpod $ns counted-1
  expect_cq $ns $q 1 1
  mkpod $ns counted-2
  mkpod $ns counted-3
  expect_cq $ns $q 3 3
  rm_obj pod counted-3 -n $ns
  expect_cq $ns $q 2 2
}

# N8: one matchLabels selector; the pod relabelled out of it is released.
case_n8_relabel_single() {
  local ns=cq-n8 q=cq-count-single-matchlabel
  mkns $ns
  cq $ns $q 10 "$(src Pod count "" "$(sels "$(lbl track=yes)")")"
  mkpod $ns single-matchlabel track=yes
  expect_cq $ns $q 1 1
  relabel pod $ns single-matchlabel track=no
  expect_cq $ns $q 0 0
}

# N9: matchLabels of two labels (AND); changing one releases the pod.
case_n9_relabel_multi() {
  local ns=cq-n9 q=cq-count-multi-matchlabel
  mkns $ns
  cq $ns $q 10 "$(src Pod count "" "$(sels "$(lbl track=yes,tier=frontend)")")"
  mkpod $ns multi-matchlabel track=yes,tier=frontend
  expect_cq $ns $q 1 1
  relabel pod $ns multi-matchlabel track=yes tier=backend
  expect_cq $ns $q 0 0
}

# N10: a field selector on the image; a new image releases the pod.
case_n10_field_image() {
  local ns=cq-n10 q=cq-count-single-fieldselector
  mkns $ns
  cq $ns $q 10 "$(src Pod count "" "$(sels "$(fld '.spec.containers[?(@.image=="nginx:1.27.0")]')")")"
  mkpod $ns single-fieldselector
  expect_cq $ns $q 1 1
  set_image $ns single-fieldselector nginx:1.26.0
  expect_cq $ns $q 0 0
}

# N11: two field selectors in one entry (AND).
case_n11_fields_and() {
  local ns=cq-n11 q=cq-count-multi-fieldselector
  mkns $ns
  cq $ns $q 10 "$(src Pod count "" "$(sels "$(fld '.spec.containers[?(@.image=="nginx:1.27.0")]' \
    '.spec.containers[?(@.name=="main")]')")")"
  mkpod $ns multi-fieldselector
  expect_cq $ns $q 1 1
  set_image $ns multi-fieldselector nginx:1.26.0
  expect_cq $ns $q 0 0
}

# N12: the value by CEL (a list of quantities, summed); the selector entry
# holds a field selector and a CEL expression (AND).
case_n12_cel() {
  local ns=cq-n12 q=cq-cel-cpu
  mkns $ns
  local sel='[{"fieldSelectors":[".spec.restartPolicy=Always"],"celExpressions":["object.spec.containers.exists(c, c.image == \"nginx:1.27.0\")"]}]'
  create "create CustomQuota" '{"apiVersion":"'$API'","kind":"CustomQuota","metadata":{"name":"'$q'","namespace":"'$ns'"},
    "spec":{"limit":"500m","sources":[{"apiVersion":"v1","kind":"Pod","op":"add",
    "cel":"object.spec.containers.map(c, quantity(c.resources.requests[\"cpu\"]))","selectors":'"$sel"'}]}}'
  mkpod $ns cel-new "" nginx:1.27.0 100m
  mkpod $ns cel-old "" nginx:1.26.0 200m
  expect_cq $ns $q 100m 1
  expect_eq "claim" "$(claim_names cq $ns $q)" "$ns/cel-new"
  set_image $ns cel-new nginx:1.26.0
  expect_cq $ns $q 0 0
}

# N13: two sources, pod emptyDir and PVC storage.
case_n13_two_sources() {
  local ns=cq-n13 q=cq-multi-source-storage
  mkns $ns
  cq $ns $q 3Gi "$(src Pod add "$ED_PATH")" "$(src PVC add "$PVC_PATH")"
  mkpod $ns multi-source-pod "" $NGINX "" 1Gi
  mkpvc $ns multi-source-pvc 2Gi
  expect_cq $ns $q 3Gi 2
}

# N14: each source with its own selector (labels on pods, access mode on PVCs).
case_n14_sources_selectors() {
  local ns=cq-n14 q=cq-multi-source-selectors-storage
  mkns $ns
  cq $ns $q 10Gi "$(src Pod add "$ED_PATH" "$(sels "$(lbl track=yes)")")" \
    "$(src PVC add "$PVC_PATH" "$(sels "$(fld '.spec.accessModes[?(@=="ReadWriteOnce")]')")")"
  mkpod $ns matching-emptydir track=yes $NGINX "" 1Gi
  mkpod $ns ignored-emptydir track=no $NGINX "" 5Gi
  mkpvc $ns matching-pvc 2Gi
  mkpvc $ns ignored-pvc 4Gi ReadOnlyMany
  expect_cq $ns $q 3Gi 2
  expect_eq "claims" "$(claim_names cq $ns $q)" "$ns/matching-emptydir $ns/matching-pvc"
}

# N15: a sub-only source: the PVC is a claim of 0, used stays 0.
case_n15_sub_only() {
  local ns=cq-n15 q=cq-sub-only-clamps-zero
  mkns $ns
  cq $ns $q 10Gi "$(src PVC sub "$PVC_PATH")"
  mkpvc $ns sub-only-pvc 2Gi
  expect_cq $ns $q 0 1
}

# N16-N19: Capsule's rebuild folds sub across objects (pod 3Gi, PVC sub 1Gi
# -> 2Gi).
case_n16_add_sub() {
  local ns=cq-n16 q=cq-add-sub-storage
  mkns $ns
  cq $ns $q 10Gi "$(src Pod add "$ED_PATH")" "$(src PVC sub "$PVC_PATH")"
  mkpod $ns add-sub-pod "" $NGINX "" 3Gi
  mkpvc $ns add-sub-pvc 1Gi
  expect_cq $ns $q 2Gi 2
}
case_n17_add_sub_clamp() {
  local ns=cq-n17 q=cq-add-sub-clamp-zero
  mkns $ns
  cq $ns $q 10Gi "$(src Pod add "$ED_PATH")" "$(src PVC sub "$PVC_PATH")"
  mkpod $ns add-sub-clamp-pod "" $NGINX "" 1Gi
  mkpvc $ns add-sub-clamp-pvc 2Gi
  expect_cq $ns $q 0 2
}
case_n18_sub_relabel() {
  local ns=cq-n18 q=cq-sub-label-selector
  mkns $ns
  cq $ns $q 10Gi "$(src Pod add "$ED_PATH")" "$(src PVC sub "$PVC_PATH" "$(sels "$(lbl discount=yes)")")"
  mkpod $ns sub-label-pod "" $NGINX "" 3Gi
  mkpvc $ns sub-label-pvc 1Gi ReadWriteOnce discount=yes
  expect_cq $ns $q 2Gi 2
  relabel pvc $ns sub-label-pvc discount=no
  expect_cq $ns $q 3Gi 1
}
case_n19_sub_delete() {
  local ns=cq-n19 q=cq-sub-delete-reconcile
  mkns $ns
  cq $ns $q 10Gi "$(src Pod add "$ED_PATH")" "$(src PVC sub "$PVC_PATH")"
  mkpod $ns sub-delete-pod "" $NGINX "" 3Gi
  mkpvc $ns sub-delete-pvc 1Gi
  expect_cq $ns $q 2Gi 2
  rm_obj pvc sub-delete-pvc -n $ns
  expect_cq $ns $q 3Gi 1
}

# N20: two count quotas; both count, the smaller refuses the third.
case_n20_smallest_count() {
  local ns=cq-n20
  mkns $ns
  cq $ns cq-pod-count-small 2 "$(src Pod count)"
  cq $ns cq-pod-count-large 5 "$(src Pod count)"
  mkpod $ns multi-cq-count-1
  mkpod $ns multi-cq-count-2
  expect_cq $ns cq-pod-count-small 2 2
  expect_cq $ns cq-pod-count-large 2 2
  refused "third pod" "$(pod_json $ns multi-cq-count-3)" \
    "$(exceeds pods multi-cq-count-3 CustomQuota cq-pod-count-small 1 3 2)"
  expect_cq $ns cq-pod-count-small 2 2
  expect_cq $ns cq-pod-count-large 2 2
}

# N21: the same with requests.cpu.
case_n21_smallest_cpu() {
  local ns=cq-n21
  mkns $ns
  cq $ns cq-pod-cpu-small 200m "$(src Pod add "$CPU_PATH")"
  cq $ns cq-pod-cpu-large 500m "$(src Pod add "$CPU_PATH")"
  mkpod $ns multi-cq-cpu-1 "" $NGINX 100m
  mkpod $ns multi-cq-cpu-2 "" $NGINX 100m
  expect_cq $ns cq-pod-cpu-small 200m 2
  expect_cq $ns cq-pod-cpu-large 200m 2
  refused "third pod" "$(pod_json $ns multi-cq-cpu-3 "" $NGINX 100m)" \
    "$(exceeds pods multi-cq-cpu-3 CustomQuota cq-pod-cpu-small 100m 300m 200m)"
  expect_cq $ns cq-pod-cpu-large 200m 2
}

# N22: overlapping selectors: a broad (track=yes, 5) and a narrow
# (track=yes,tier=frontend, 2) quota; only what matches is counted.
case_n22_overlap() {
  local ns=cq-n22 b=cq-pod-track-broad n=cq-pod-track-frontend
  mkns $ns
  cq $ns $b 5 "$(src Pod count "" "$(sels "$(lbl track=yes)")")"
  cq $ns $n 2 "$(src Pod count "" "$(sels "$(lbl track=yes,tier=frontend)")")"
  mkpod $ns cq-overlap-1 track=yes,tier=frontend
  mkpod $ns cq-overlap-2 track=yes,tier=frontend
  mkpod $ns cq-overlap-3 track=yes,tier=backend
  mkpod $ns cq-overlap-4 track=yes,tier=backend
  expect_cq $ns $b 4 4
  expect_cq $ns $n 2 2
  refused "frontend p5" "$(pod_json $ns cq-overlap-5 track=yes,tier=frontend)" \
    "$(exceeds pods cq-overlap-5 CustomQuota $n 1 3 2)"
  mkpod $ns cq-overlap-6 track=yes,tier=backend
  expect_cq $ns $b 5 5
  expect_cq $ns $n 2 2
}

# N23: a cpu quota (400m) and an emptyDir quota (2Gi) on the same pods; the
# third pod fits the cpu one and is refused by the emptyDir one.
case_n23_two_paths() {
  local ns=cq-n23
  mkns $ns
  cq $ns cq-pod-path-cpu 400m "$(src Pod add "$CPU_PATH")"
  cq $ns cq-pod-path-emptydir 2Gi "$(src Pod add "$ED_PATH")"
  mkpod $ns cq-path-pod-1 "" $NGINX 100m 1Gi
  mkpod $ns cq-path-pod-2 "" $NGINX 100m 1Gi
  expect_cq $ns cq-pod-path-cpu 200m 2
  expect_cq $ns cq-pod-path-emptydir 2Gi 2
  refused "third pod" "$(pod_json $ns cq-path-pod-3 "" $NGINX 100m 1Gi)" \
    "$(exceeds pods cq-path-pod-3 CustomQuota cq-pod-path-emptydir 1Gi 3Gi 2Gi)"
  expect_cq $ns cq-pod-path-cpu 200m 2
}

# N24: small 3 and large 10 count; "scaling" 1 -> 3 -> 4: the fourth pod is
# refused by the small quota and both stay at 3.
case_n24_scale_smallest() {
  local ns=cq-n24
  mkns $ns
  cq $ns cq-scale-small 3 "$(src Pod count)"
  cq $ns cq-scale-large 10 "$(src Pod count)"
  mkpod $ns cq-scale-1
  expect_cq $ns cq-scale-small 1 1
  expect_cq $ns cq-scale-large 1 1
  mkpod $ns cq-scale-2
  mkpod $ns cq-scale-3
  expect_cq $ns cq-scale-small 3 3
  expect_cq $ns cq-scale-large 3 3
  refused "fourth replica" "$(pod_json $ns cq-scale-4)" \
    "$(exceeds pods cq-scale-4 CustomQuota cq-scale-small 1 4 3)"
  expect_eq "pods" "$(k get pods -n $ns --no-headers | wc -l)" 3
  expect_cq $ns cq-scale-small 3 3
  expect_cq $ns cq-scale-large 3 3
}

# N25: a global count quota (5) and a namespaced one (2): the namespaced
# quota refuses the third pod.
case_n25_global_cq_count() {
  local ns=cq-n25 g=gq-mixed-pod-count-from-cq-suite q=cq-mixed-pod-count-from-cq-suite
  mkns $ns
  gcq $g 5 $ns "$(src Pod count)"
  cq $ns $q 2 "$(src Pod count)"
  mkpod $ns mixed-cq-suite-1
  mkpod $ns mixed-cq-suite-2
  expect_gcq $g 2 2
  expect_cq $ns $q 2 2
  refused "third pod" "$(pod_json $ns mixed-cq-suite-3)" \
    "$(exceeds pods mixed-cq-suite-3 CustomQuota $q 1 3 2)"
  expect_gcq $g 2 2
}

# N26: the same with cpu (global 500m, namespaced 200m).
case_n26_global_cq_cpu() {
  local ns=cq-n26 g=gq-mixed-pod-cpu-from-cq-suite q=cq-mixed-pod-cpu-from-cq-suite
  mkns $ns
  gcq $g 500m $ns "$(src Pod add "$CPU_PATH")"
  cq $ns $q 200m "$(src Pod add "$CPU_PATH")"
  mkpod $ns mixed-cpu-cq-suite-1 "" $NGINX 100m
  mkpod $ns mixed-cpu-cq-suite-2 "" $NGINX 100m
  expect_gcq $g 200m 2
  expect_cq $ns $q 200m 2
  refused "third pod" "$(pod_json $ns mixed-cpu-cq-suite-3 "" $NGINX 100m)" \
    "$(exceeds pods mixed-cpu-cq-suite-3 CustomQuota $q 100m 300m 200m)"
  expect_gcq $g 200m 2
}

# N27: deletes release at once, per source.
case_n27_deletes() {
  local ns=cq-n27 q=cq-multi-source-reconcile
  mkns $ns
  cq $ns $q 10Gi "$(src Pod add "$ED_PATH" "$(sels "$(lbl track=yes)")")" "$(src PVC add "$PVC_PATH")"
  mkpod $ns reconcile-emptydir track=yes $NGINX "" 1Gi
  mkpvc $ns reconcile-pvc 2Gi
  expect_cq $ns $q 3Gi 2
  rm_obj pod reconcile-emptydir -n $ns
  expect_cq $ns $q 2Gi 1
  rm_obj pvc reconcile-pvc -n $ns
  expect_cq $ns $q 0 0
}

# N28: a relabelled count never goes negative (also after the pod's delete).
case_n28_no_negative() {
  local ns=cq-n28 q=cq-no-negative-on-relabel
  mkns $ns
  cq $ns $q 10 "$(src Pod count "" "$(sels "$(lbl track=yes)")")"
  mkpod $ns no-negative-on-relabel track=yes
  expect_cq $ns $q 1 1
  relabel pod $ns no-negative-on-relabel track=no
  expect_cq $ns $q 0 0
  rm_obj pod no-negative-on-relabel -n $ns
  expect_cq $ns $q 0 0
  expect_eq "available" "$(k get cq $q -n $ns -o 'jsonpath={.status.usage.available}')" 10
}

# N29: an emptyDir sum released by a relabel.
case_n29_emptydir_relabel() {
  local ns=cq-n29 q=cq-emptydir-relabel
  mkns $ns
  cq $ns $q 10Gi "$(src Pod add "$ED_PATH" "$(sels "$(lbl track=yes)")")"
  mkpod $ns emptydir-relabel track=yes $NGINX "" 1Gi
  expect_cq $ns $q 1Gi 1
  relabel pod $ns emptydir-relabel track=no
  expect_cq $ns $q 0 0
}

# N30: a label quota and a field quota on the same kind count only what
# each matches.
case_n30_label_vs_field() {
  local ns=cq-n30
  mkns $ns
  cq $ns cq-track-only 10 "$(src Pod count "" "$(sels "$(lbl track=yes)")")"
  cq $ns cq-nginx-only 10 "$(src Pod count "" "$(sels "$(fld '.spec.containers[?(@.image=="nginx:1.27.0")]')")")"
  mkpod $ns subset-both track=yes
  mkpod $ns subset-label-only track=yes busybox:1.36.1
  mkpod $ns subset-field-only
  expect_cq $ns cq-track-only 2 2
  expect_cq $ns cq-nginx-only 2 2
  expect_eq "label quota claims" "$(claim_names cq $ns cq-track-only)" "$ns/subset-both $ns/subset-label-only"
  expect_eq "field quota claims" "$(claim_names cq $ns cq-nginx-only)" "$ns/subset-both $ns/subset-field-only"
}

# N31: limits 3 and 4: the one reached first (3) refuses the fourth pod.
case_n31_tie() {
  local ns=cq-n31
  mkns $ns
  cq $ns cq-tie-a 3 "$(src Pod count)"
  cq $ns cq-tie-b 4 "$(src Pod count)"
  mkpod $ns tie-1
  mkpod $ns tie-2
  expect_cq $ns cq-tie-a 2 2
  expect_cq $ns cq-tie-b 2 2
  mkpod $ns tie-3
  expect_cq $ns cq-tie-a 3 3
  expect_cq $ns cq-tie-b 3 3
  refused "fourth pod" "$(pod_json $ns tie-4)" "$(exceeds pods tie-4 CustomQuota cq-tie-a 1 4 3)"
}

# N32: the same pods in a cpu and an emptyDir quota.
case_n32_multi_path() {
  local ns=cq-n32
  mkns $ns
  cq $ns cq-multi-path-cpu 300m "$(src Pod add "$CPU_PATH")"
  cq $ns cq-multi-path-emptydir 3Gi "$(src Pod add "$ED_PATH")"
  mkpod $ns multi-path-shared-1 "" $NGINX 100m 1Gi
  mkpod $ns multi-path-shared-2 "" $NGINX 100m 1Gi
  expect_cq $ns cq-multi-path-cpu 200m 2
  expect_cq $ns cq-multi-path-emptydir 2Gi 2
}

# N33: a field selector that filters a scalar. Capsule's JSONPath fails on
# it ("is not array or slice and cannot be filtered") and its e2e expects
# the create refused with that; allot reads the single value as a
# one-element list, on purpose (docs/custom-quotas.md: seed 003's
# LoadBalancer example is written that way and says it selects), so the
# pod matches and is counted.
case_n33_filter_scalar() {
  local ns=cq-n33 q=cq-invalid-fieldselector
  mkns $ns
  cq $ns $q 10 "$(src Pod count "" "$(sels "$(fld '.spec.restartPolicy[?(@=="Always")]')")")"
  mkpod $ns invalid-selector-pod
  expect_cq $ns $q 1 1
}
# ... an index out of range (an error in Capsule's JSONPath, spec §6.6) is a
# missing value: the selector does not match, the pod is created and not
# counted (seed 003: "If .spec.suspend ... is missing, it does not match");
# a selector that cannot be evaluated (`[*]` of a string) refuses the create
# with the error, as Capsule refuses N33's; nothing is charged.
case_n33_selector_error() {
  local ns=cq-n33e q=cq-fieldselector-index q2=cq-fieldselector-string
  mkns $ns
  cq $ns $q 10 "$(src Pod count "" "$(sels "$(fld '.spec.containers[3].name')")")"
  mkpod $ns index-pod
  expect_cq $ns $q 0 0
  expect_eq "Ready" "$(ready cq $ns $q)" "True|reconciled"
  cq $ns $q2 10 "$(src Pod count "" "$(sels "$(fld '.metadata.name[*]')")")"
  refused "pod" "$(pod_json $ns string-pod)" \
    "creating resource $ns/string-pod (/v1, Kind=Pod) cannot be admitted because custom quota usage could not be calculated: CustomQuota \"$q2\" source path \"\" cel \"\" op \"count\" selectors: execute usage jsonpath: string is not array or slice"
  gone pod string-pod -n $ns || fail "the refused pod exists"
  expect_cq $ns $q2 0 0
  # the pod stored before it is named in its Ready condition
  local r
  r=$(ready cq $ns $q2)
  expect_eq "Ready status" "${r%%|*}" False
  expect_contains "Ready message" "$r" "1 object with values this quota cannot read"
  expect_contains "Ready message names the pod" "$r" "get usage from $ns/index-pod (/v1, Kind=Pod) source path"
}

# ----------------------------------------------------------- §6.5 global --

# G1: no namespaceSelectors (every namespace); requests.cpu of labelled pods
# in a "Deployment" of 2 scaled to 4 (plain pods). The label carries the
# case's name too, so that pods other cases left behind are not counted.
case_g1_all_namespaces_cpu() {
  local ns=gcq-g1 g=gq-pod-cpu-requests i
  mkns $ns
  gcq $g 500m - "$(src Pod add "$CPU_PATH" "$(sels "$(lbl track=yes,e2e-case=g1)")")"
  expect_eq "namespaces" "$(gcq_ns $g)" "*"
  for i in 1 2; do mkpod $ns cpu-requests-$i track=yes,e2e-case=g1 $NGINX 100m; done
  expect_gcq $g 200m 2
  for i in 3 4; do mkpod $ns cpu-requests-$i track=yes,e2e-case=g1 $NGINX 100m; done
  expect_gcq $g 400m 4
  refused "a pod past 500m" "$(pod_json $ns cpu-requests-5 track=yes,e2e-case=g1 $NGINX 200m)" \
    "$(exceeds pods cpu-requests-5 GlobalCustomQuota $g 200m 600m 500m)"
}

# G2: missing path. Capsule: Ready=False with an existing pod, a create
# refused. Seed 003: Ready, both pods counted 0.
case_g2_missing_path() {
  local ns=gcq-g2 ns2=gcq-g2b
  mkns $ns
  mkpod $ns missing-emptydir-size
  gcq gq-missing-path-not-ready 10Gi $ns "$(src Pod add "$ED_PATH")"
  expect_eq "Ready" "$(ready gcq gq-missing-path-not-ready)" "True|reconciled"
  expect_gcq gq-missing-path-not-ready 0 1
  mkns $ns2
  gcq gq-missing-path-deny-create 10Gi $ns2 "$(src Pod add "$ED_PATH")"
  expect_eq "Ready" "$(ready gcq gq-missing-path-deny-create)" "True|reconciled"
  mkpod $ns2 missing-path-denied
  expect_gcq gq-missing-path-deny-create 0 1
}

# G3: 100 concurrent creators against a global limit of 10, spread over the
# namespaces it selects: exactly 10 succeed at their first attempt (Capsule's
# creators retry until 10 succeed; nothing is in flight in allot, so none
# needs to).
case_g3_concurrent_100() {
  local g=gq-concurrent-pod-count i n
  for n in 0 1 2 3 4; do mkns gcq-g3-$n e2e-case=g3; done
  gcq $g 10 "[$(lbl e2e-case=g3)]" "$(src Pod count "" "$(sels "$(lbl track=yes)")")"
  mkdir -p g3
  for i in $(seq -w 0 99); do
    n=$((10#$i % 5))
    (api POST "/api/v1/namespaces/gcq-g3-$n/pods" -H 'Content-Type: application/json' \
      --data "$(pod_json gcq-g3-$n gq-concurrent-pod-$i track=yes)" | tail -n1 >"g3/$i"; echo >>"g3/$i") &
  done
  wait
  expect_eq "HTTP codes of 100 concurrent creates" "$(cat g3/* | sort | uniq -c | awk '{print $2 "x" $1}' | xargs)" \
    "201x10 403x90"
  expect_gcq $g 10 10
}

# G4: a global and a namespaced quota together: the smaller (namespaced)
# decides, both count (count, cpu, overlap, path, scale).
case_g4_mixed_count() {
  local ns=gcq-g4a
  mkns $ns
  gcq gq-mixed-pod-count 5 $ns "$(src Pod count)"
  cq $ns cq-mixed-pod-count 2 "$(src Pod count)"
  mkpod $ns mixed-count-1
  mkpod $ns mixed-count-2
  expect_gcq gq-mixed-pod-count 2 2
  expect_cq $ns cq-mixed-pod-count 2 2
  refused "third pod" "$(pod_json $ns mixed-count-3)" \
    "$(exceeds pods mixed-count-3 CustomQuota cq-mixed-pod-count 1 3 2)"
  expect_gcq gq-mixed-pod-count 2 2
  expect_cq $ns cq-mixed-pod-count 2 2
}
case_g4_mixed_cpu() {
  local ns=gcq-g4b
  mkns $ns
  gcq gq-mixed-pod-cpu 500m $ns "$(src Pod add "$CPU_PATH")"
  cq $ns cq-mixed-pod-cpu 200m "$(src Pod add "$CPU_PATH")"
  mkpod $ns mixed-cpu-1 "" $NGINX 100m
  mkpod $ns mixed-cpu-2 "" $NGINX 100m
  expect_gcq gq-mixed-pod-cpu 200m 2
  expect_cq $ns cq-mixed-pod-cpu 200m 2
  refused "third pod" "$(pod_json $ns mixed-cpu-3 "" $NGINX 100m)" \
    "$(exceeds pods mixed-cpu-3 CustomQuota cq-mixed-pod-cpu 100m 300m 200m)"
}
case_g4_mixed_overlap() {
  local ns=gcq-g4c
  mkns $ns
  gcq gq-mixed-overlap 10 $ns "$(src Pod count "" "$(sels "$(lbl track=yes)")")"
  cq $ns cq-mixed-overlap 2 "$(src Pod count "" "$(sels "$(lbl track=yes,tier=frontend)")")"
  mkpod $ns mixed-overlap-1 track=yes,tier=frontend
  mkpod $ns mixed-overlap-2 track=yes,tier=frontend
  mkpod $ns mixed-overlap-3 track=yes,tier=backend
  expect_gcq gq-mixed-overlap 3 3
  expect_cq $ns cq-mixed-overlap 2 2
  refused "frontend p4" "$(pod_json $ns mixed-overlap-4 track=yes,tier=frontend)" \
    "$(exceeds pods mixed-overlap-4 CustomQuota cq-mixed-overlap 1 3 2)"
  expect_gcq gq-mixed-overlap 3 3
}
case_g4_mixed_path() {
  local ns=gcq-g4d
  mkns $ns
  gcq gq-mixed-path-cpu 500m $ns "$(src Pod add "$CPU_PATH")"
  cq $ns cq-mixed-path-emptydir 2Gi "$(src Pod add "$ED_PATH")"
  mkpod $ns mixed-path-1 "" $NGINX 100m 1Gi
  mkpod $ns mixed-path-2 "" $NGINX 100m 1Gi
  expect_gcq gq-mixed-path-cpu 200m 2
  expect_cq $ns cq-mixed-path-emptydir 2Gi 2
  refused "third pod" "$(pod_json $ns mixed-path-3 "" $NGINX 100m 1Gi)" \
    "$(exceeds pods mixed-path-3 CustomQuota cq-mixed-path-emptydir 1Gi 3Gi 2Gi)"
}
case_g4_mixed_scale() {
  local ns=gcq-g4e
  mkns $ns
  gcq gq-mixed-scale 10 $ns "$(src Pod count)"
  cq $ns cq-mixed-scale 3 "$(src Pod count)"
  mkpod $ns mixed-scale-1
  expect_gcq gq-mixed-scale 1 1
  expect_cq $ns cq-mixed-scale 1 1
  mkpod $ns mixed-scale-2
  mkpod $ns mixed-scale-3
  expect_gcq gq-mixed-scale 3 3
  expect_cq $ns cq-mixed-scale 3 3
  refused "fourth replica" "$(pod_json $ns mixed-scale-4)" \
    "$(exceeds pods mixed-scale-4 CustomQuota cq-mixed-scale 1 4 3)"
  expect_cq $ns cq-mixed-scale 3 3
  expect_gcq gq-mixed-scale 3 3
}

# G5: the sub cases (N15-N19) with global quotas: same numbers.
case_g5_sub_only() {
  local ns=gcq-g5a
  mkns $ns
  gcq gq-sub-only-clamps-zero 10Gi $ns "$(src PVC sub "$PVC_PATH")"
  mkpvc $ns sub-only-pvc 2Gi
  expect_gcq gq-sub-only-clamps-zero 0 1
}
case_g5_add_sub() {
  local ns=gcq-g5b
  mkns $ns
  gcq gq-add-sub-storage 10Gi $ns "$(src Pod add "$ED_PATH")" "$(src PVC sub "$PVC_PATH")"
  mkpod $ns add-sub-pod "" $NGINX "" 3Gi
  mkpvc $ns add-sub-pvc 1Gi
  expect_gcq gq-add-sub-storage 2Gi 2
}
case_g5_add_sub_clamp() {
  local ns=gcq-g5c
  mkns $ns
  gcq gq-add-sub-clamp-zero 10Gi $ns "$(src Pod add "$ED_PATH")" "$(src PVC sub "$PVC_PATH")"
  mkpod $ns add-sub-clamp-pod "" $NGINX "" 1Gi
  mkpvc $ns add-sub-clamp-pvc 2Gi
  expect_gcq gq-add-sub-clamp-zero 0 2
}
case_g5_sub_relabel() {
  local ns=gcq-g5d g=gq-sub-label-selector
  mkns $ns
  gcq $g 10Gi $ns "$(src Pod add "$ED_PATH")" "$(src PVC sub "$PVC_PATH" "$(sels "$(lbl discount=yes)")")"
  mkpod $ns sub-label-pod "" $NGINX "" 3Gi
  mkpvc $ns sub-label-pvc 1Gi ReadWriteOnce discount=yes
  expect_gcq $g 2Gi 2
  relabel pvc $ns sub-label-pvc discount=no
  expect_gcq $g 3Gi 1
}
case_g5_sub_delete() {
  local ns=gcq-g5e g=gq-sub-delete-reconcile
  mkns $ns
  gcq $g 10Gi $ns "$(src Pod add "$ED_PATH")" "$(src PVC sub "$PVC_PATH")"
  mkpod $ns sub-delete-pod "" $NGINX "" 3Gi
  mkpvc $ns sub-delete-pvc 1Gi
  expect_gcq $g 2Gi 2
  rm_obj pvc sub-delete-pvc -n $ns
  expect_gcq $g 3Gi 1
}

# G6: [count, sub requests.cpu] on the same pods: each 1 - 500m; 2 pods -> 1.
case_g6_count_sub_cpu() {
  local ns=gcq-g6 g=gq-sub-cpu-clamp
  mkns $ns
  gcq $g 10 $ns "$(src Pod count)" "$(src Pod sub "$CPU_PATH")"
  mkpod $ns sub-cpu-pod-1 "" $NGINX 500m
  mkpod $ns sub-cpu-pod-2 "" $NGINX 500m
  expect_gcq $g 1 2
  expect_eq "claim usages" "$(k get gcq $g -o 'jsonpath={.status.claims[*].usage}')" "500m 500m"
}

# G7: the same quota; "Deployment" 2 x 250m -> 1500m, scaled to 4 -> 3.
case_g7_count_sub_scale() {
  local ns=gcq-g7 g=gq-sub-deployment-scale i
  mkns $ns
  gcq $g 10 $ns "$(src Pod count)" "$(src Pod sub "$CPU_PATH")"
  for i in 1 2; do mkpod $ns sub-scale-$i "" $NGINX 250m; done
  expect_gcq $g 1500m 2
  for i in 3 4; do mkpod $ns sub-scale-$i "" $NGINX 250m; done
  expect_gcq $g 3 4
}

# G8: small (2) and large (5), both [count, sub cpu], pods of 500m (500m
# each): 2 -> 1, 3 -> 1500m, a fourth fits (2 <= 2), the fifth is refused by
# the small one. Capsule's e2e retries until a denial (hiding the boundary);
# the boundary is checked here.
case_g8_sub_smallest() {
  local ns=gcq-g8 i
  mkns $ns
  gcq gq-sub-small 2 $ns "$(src Pod count)" "$(src Pod sub "$CPU_PATH")"
  gcq gq-sub-large 5 $ns "$(src Pod count)" "$(src Pod sub "$CPU_PATH")"
  mkpod $ns sub-auth-1 "" $NGINX 500m
  mkpod $ns sub-auth-2 "" $NGINX 500m
  expect_gcq gq-sub-small 1 2
  expect_gcq gq-sub-large 1 2
  mkpod $ns sub-auth-3 "" $NGINX 500m
  expect_gcq gq-sub-small 1500m 3
  expect_gcq gq-sub-large 1500m 3
  mkpod $ns sub-auth-4 "" $NGINX 500m
  expect_gcq gq-sub-small 2 4
  refused "fifth pod" "$(pod_json $ns sub-auth-5 "" $NGINX 500m)" \
    "$(exceeds pods sub-auth-5 GlobalCustomQuota gq-sub-small 500m 2500m 2)"
  expect_gcq gq-sub-small 2 4
  expect_gcq gq-sub-large 2 4
}

# G9: no namespaceSelectors: status.namespaces is ["*"] and stays so while
# namespaces come and go.
case_g9_wildcard_namespaces() {
  local g=gq-nsstatus-all
  gcq $g 1000 - "$(src Pod count)"
  expect_eq "namespaces" "$(gcq_ns $g)" "*"
  mkns gq-nsstatus-all-a purpose=e2e-global-custom-quota
  mkns gq-nsstatus-all-b purpose=e2e-global-custom-quota
  expect_eq "namespaces after creates" "$(gcq_ns $g)" "*"
  allowed "delete namespaces" k delete ns gq-nsstatus-all-a gq-nsstatus-all-b --wait=false
  expect_eq "namespaces while deleting" "$(gcq_ns $g)" "*"
  wait_gone ns gq-nsstatus-all-a
  wait_gone ns gq-nsstatus-all-b
  expect_eq "namespaces after deletes" "$(gcq_ns $g)" "*"
}

# G10: two selectors (team=a OR team=b): the matching namespaces, sorted,
# following creates and deletes.
case_g10_selected_namespaces() {
  local g=gq-nsstatus-multi-selectors
  mkns gq-nsstatus-a1 team=a
  mkns gq-nsstatus-b1 team=b
  mkns gq-nsstatus-other team=other
  gcq $g 10 "[$(lbl team=a),$(lbl team=b)]" "$(src Pod count)"
  expect_eq "namespaces" "$(gcq_ns $g)" "gq-nsstatus-a1 gq-nsstatus-b1"
  mkns gq-nsstatus-a2 team=a
  expect_eq "after a2" "$(gcq_ns $g)" "gq-nsstatus-a1 gq-nsstatus-a2 gq-nsstatus-b1"
  allowed "delete b1" k delete ns gq-nsstatus-b1 --wait=false
  wait_gone ns gq-nsstatus-b1
  expect_eq "after deleting b1" "$(gcq_ns $g)" "gq-nsstatus-a1 gq-nsstatus-a2"
}

# G11: a selector nothing matches: namespaces empty; a matching namespace
# appears and goes.
case_g11_no_namespace() {
  local g=gq-nsstatus-empty
  gcq $g 10 "[$(lbl team=does-not-exist)]" "$(src Pod count)"
  expect_eq "namespaces" "$(gcq_ns $g)" ""
  mkns gq-nsstatus-empty-match team=does-not-exist
  expect_eq "after create" "$(gcq_ns $g)" "gq-nsstatus-empty-match"
  allowed "delete" k delete ns gq-nsstatus-empty-match --wait=false
  wait_gone ns gq-nsstatus-empty-match
  expect_eq "after delete" "$(gcq_ns $g)" ""
}

# A namespace that enters a global quota's selection (created, or
# relabelled, after the quota) is counted from its own write: G10's
# status.namespaces, and what it means for enforcement (Capsule recounts on
# the namespace event; allot decides in the transaction, so the very next
# pod is charged).
case_g10_namespace_joins() {
  local g=gq-ns-joins
  gcq $g 1 "[$(lbl e2e-case=joins)]" "$(src Pod count)"
  mkns gq-joins-new e2e-case=joins
  expect_eq "namespaces after create" "$(gcq_ns $g)" "gq-joins-new"
  mkpod gq-joins-new p1
  expect_gcq $g 1 1
  refused "second pod" "$(pod_json gq-joins-new p2)" "$(exceeds pods p2 GlobalCustomQuota $g 1 2 1)"
  mkns gq-joins-relabelled
  relabel ns "" gq-joins-relabelled e2e-case=joins
  expect_eq "namespaces after relabel" "$(gcq_ns $g)" "gq-joins-new gq-joins-relabelled"
  refused "a pod in the relabelled namespace" "$(pod_json gq-joins-relabelled p3)" \
    "$(exceeds pods p3 GlobalCustomQuota $g 1 2 1)"
  expect_gcq $g 1 1
}
# ... and one that leaves it (relabelled) is released by that write.
case_g10_namespace_leaves() {
  local g=gq-ns-leaves
  mkns gq-leaves e2e-case=leaves
  mkpod gq-leaves p1
  gcq $g 5 "[$(lbl e2e-case=leaves)]" "$(src Pod count)"
  expect_gcq $g 1 1
  relabel ns "" gq-leaves e2e-case=elsewhere
  expect_eq "namespaces" "$(gcq_ns $g)" ""
  expect_gcq $g 0 0
}

# G12: several global quotas: the denial names the smallest, and usage is
# unchanged by it (count, cpu, broad/narrow, path, label vs field, tie,
# multi-path).
case_g12_smallest_global() {
  local ns=gcq-g12a
  mkns $ns
  gcq gq-pod-count-small 2 $ns "$(src Pod count)"
  gcq gq-pod-count-large 5 $ns "$(src Pod count)"
  mkpod $ns count-1
  mkpod $ns count-2
  refused "count: third" "$(pod_json $ns count-3)" \
    "$(exceeds pods count-3 GlobalCustomQuota gq-pod-count-small 1 3 2)"
  expect_gcq gq-pod-count-small 2 2
  expect_gcq gq-pod-count-large 2 2
}
case_g12_smallest_cpu() {
  local ns=gcq-g12b
  mkns $ns
  gcq gq-pod-cpu-small 200m $ns "$(src Pod add "$CPU_PATH")"
  gcq gq-pod-cpu-large 500m $ns "$(src Pod add "$CPU_PATH")"
  mkpod $ns cpu-1 "" $NGINX 100m
  mkpod $ns cpu-2 "" $NGINX 100m
  refused "cpu: third" "$(pod_json $ns cpu-3 "" $NGINX 100m)" \
    "$(exceeds pods cpu-3 GlobalCustomQuota gq-pod-cpu-small 100m 300m 200m)"
  expect_gcq gq-pod-cpu-small 200m 2
  expect_gcq gq-pod-cpu-large 200m 2
}
case_g12_broad_narrow() {
  local ns=gcq-g12c
  mkns $ns
  gcq gq-pod-track-broad 5 $ns "$(src Pod count "" "$(sels "$(lbl track=yes)")")"
  gcq gq-pod-track-frontend 2 $ns "$(src Pod count "" "$(sels "$(lbl track=yes,tier=frontend)")")"
  mkpod $ns overlap-1 track=yes,tier=frontend
  mkpod $ns overlap-2 track=yes,tier=frontend
  mkpod $ns overlap-3 track=yes,tier=backend
  mkpod $ns overlap-4 track=yes,tier=backend
  expect_gcq gq-pod-track-broad 4 4
  expect_gcq gq-pod-track-frontend 2 2
  refused "frontend p5" "$(pod_json $ns overlap-5 track=yes,tier=frontend)" \
    "$(exceeds pods overlap-5 GlobalCustomQuota gq-pod-track-frontend 1 3 2)"
  mkpod $ns overlap-6 track=yes,tier=backend
  expect_gcq gq-pod-track-broad 5 5
  expect_gcq gq-pod-track-frontend 2 2
}
case_g12_paths() {
  local ns=gcq-g12d
  mkns $ns
  gcq gq-pod-path-cpu 400m $ns "$(src Pod add "$CPU_PATH")"
  gcq gq-pod-path-emptydir 2Gi $ns "$(src Pod add "$ED_PATH")"
  mkpod $ns path-pod-1 "" $NGINX 100m 1Gi
  mkpod $ns path-pod-2 "" $NGINX 100m 1Gi
  expect_gcq gq-pod-path-cpu 200m 2
  expect_gcq gq-pod-path-emptydir 2Gi 2
  refused "third pod" "$(pod_json $ns path-pod-3 "" $NGINX 100m 1Gi)" \
    "$(exceeds pods path-pod-3 GlobalCustomQuota gq-pod-path-emptydir 1Gi 3Gi 2Gi)"
  expect_gcq gq-pod-path-cpu 200m 2
  expect_gcq gq-pod-path-emptydir 2Gi 2
}
case_g12_label_vs_field() {
  local ns=gcq-g12e
  mkns $ns
  gcq gq-pod-track-only 10 $ns "$(src Pod count "" "$(sels "$(lbl track=yes)")")"
  gcq gq-pod-nginx-only 10 $ns "$(src Pod count "" "$(sels "$(fld '.spec.containers[?(@.image=="nginx:1.27.0")]')")")"
  mkpod $ns subset-both track=yes
  mkpod $ns subset-label-only track=yes busybox:1.36.1
  mkpod $ns subset-field-only
  expect_gcq gq-pod-track-only 2 2
  expect_gcq gq-pod-nginx-only 2 2
}
case_g12_tie() {
  local ns=gcq-g12f
  mkns $ns
  gcq gq-tie-a 3 $ns "$(src Pod count)"
  gcq gq-tie-b 4 $ns "$(src Pod count)"
  mkpod $ns tie-1
  mkpod $ns tie-2
  expect_gcq gq-tie-a 2 2
  expect_gcq gq-tie-b 2 2
  mkpod $ns tie-3
  expect_gcq gq-tie-a 3 3
  expect_gcq gq-tie-b 3 3
  refused "fourth pod" "$(pod_json $ns tie-4)" "$(exceeds pods tie-4 GlobalCustomQuota gq-tie-a 1 4 3)"
  expect_gcq gq-tie-a 3 3
  expect_gcq gq-tie-b 3 3
}
case_g12_multi_path() {
  local ns=gcq-g12g
  mkns $ns
  gcq gq-multi-path-cpu 300m $ns "$(src Pod add "$CPU_PATH")"
  gcq gq-multi-path-emptydir 3Gi $ns "$(src Pod add "$ED_PATH")"
  mkpod $ns multi-path-shared-1 "" $NGINX 100m 1Gi
  expect_gcq gq-multi-path-cpu 100m 1
  expect_gcq gq-multi-path-emptydir 1Gi 1
  mkpod $ns multi-path-shared-2 "" $NGINX 100m 1Gi
  expect_gcq gq-multi-path-cpu 200m 2
  expect_gcq gq-multi-path-emptydir 2Gi 2
}

# G13: limits.cpu of pods whose phase is not Succeeded/Failed/Unknown
# (three != field selectors): a running pod counts; a pod that completes
# (node agent, allot.dev/run-duration) is released by its status update; a
# pod of 2 is then refused (1 + 2 > 2).
case_g13_succeeded_excluded() {
  local ns=gcq-g13 g=gq-not-equals-succeeded
  local ne
  ne=$(sels "$(fld '.status.phase!=Succeeded' '.status.phase!=Failed' '.status.phase!=Unknown')")
  mkns $ns
  mknode
  gcq $g 2 $ns "$(src Pod add "$LIMITS_CPU_PATH" "$ne")"
  create "running pod" "$(run_pod_json $ns ne-running 1)"
  eventually "ne-running phase" Running phase $ns ne-running
  expect_gcq $g 1 1
  create "completing pod" "$(run_pod_json $ns ne-succeeded 1 '"restartPolicy":"Never"' \
    '{"allot.dev/run-duration":"1s"}')"
  eventually "ne-succeeded phase" Succeeded phase $ns ne-succeeded
  expect_gcq $g 1 1
  expect_eq "claim" "$(claim_names gcq $g)" "$ns/ne-running"
  refused "pod of 2" "$(run_pod_json $ns ne-big 2)" "$(exceeds pods ne-big GlobalCustomQuota $g 2 3 2)"
  expect_gcq $g 1 1
}

# G14: the same with a pod that fails (activeDeadlineSeconds: the node agent
# fails it with DeadlineExceeded).
case_g14_failed_excluded() {
  local ns=gcq-g14 g=gq-not-equals-failed
  local ne
  ne=$(sels "$(fld '.status.phase!=Succeeded' '.status.phase!=Failed' '.status.phase!=Unknown')")
  mkns $ns
  mknode
  gcq $g 2 $ns "$(src Pod add "$LIMITS_CPU_PATH" "$ne")"
  create "running pod" "$(run_pod_json $ns ne-failed-running 1)"
  eventually "running phase" Running phase $ns ne-failed-running
  expect_gcq $g 1 1
  create "failing pod" "$(run_pod_json $ns ne-failed-terminal 1 '"restartPolicy":"Never","activeDeadlineSeconds":1')"
  eventually "terminal phase" Failed phase $ns ne-failed-terminal
  expect_gcq $g 1 1
  expect_eq "claim" "$(claim_names gcq $g)" "$ns/ne-failed-running"
}

# ------------------------------------------------------- seed 003 examples --

# "Quota Matches": a GlobalCustomQuota of 6 pods over the tenant solar and a
# CustomQuota of 3 in solar-test, as printed. Of 6 pods created in
# solar-test, 3 are created and the rest refused by the CustomQuota first
# (the seed's replicaset event, with inflightReserved=0: nothing is in flight
# in allot); 3 more in solar-prod fit the global 6, the next is refused by
# it. (The seed's 6 replicas of nginx-deployment are plain pods: no
# Deployment controller yet.)
case_seed_6_vs_3() {
  mkns solar-test capsule.clastix.io/tenant=solar
  mkns solar-prod capsule.clastix.io/tenant=solar
  allowed "apply the seed's quotas" k apply -f - <"$FIXTURES/seed003/pod-count-limit.yaml"
  local i
  for i in 1 2 3; do mkpod solar-test nginx-deployment-$i app=nginx; done
  for i in 4 5 6; do
    refused "solar-test pod $i" "$(pod_json solar-test nginx-deployment-$i app=nginx)" \
      "$(exceeds pods nginx-deployment-$i CustomQuota pod-count-limit 1 4 3)"
  done
  expect_eq "kubectl get pod -n solar-test" "$(k get pod -n solar-test --no-headers | wc -l)" 3
  expect_cq solar-test pod-count-limit 3 3
  expect_gcq pod-count-limit 3 3
  for i in 1 2 3; do mkpod solar-prod nginx-$i app=nginx; done
  refused "solar-prod pod 4" "$(pod_json solar-prod nginx-4 app=nginx)" \
    "$(exceeds pods nginx-4 GlobalCustomQuota pod-count-limit 1 7 6)"
  expect_gcq pod-count-limit 6 6
  expect_eq "namespaces" "$(gcq_ns pod-count-limit)" "solar-prod solar-test"
  expect_eq "global targets" \
    "$(k get gcq pod-count-limit -o 'jsonpath={range .status.targets[*]}{.group}|{.kind}|{.op}|{.scope}|{.version}{end}')" \
    "|Pod|count|namespace|v1"
}

# "Monitoring" (CustomQuota): the quota printed in wind-test, 3 pods: its
# status as the seed prints it (claims of usage 1, available 0, Ready
# reconciled, targets with scope "namespace").
case_seed_cq_status() {
  mkns wind-test
  allowed "apply" k apply -f - <<'EOF'
apiVersion: capsule.clastix.io/v1beta2
kind: CustomQuota
metadata:
  name: pod-count-limit
  namespace: wind-test
spec:
  limit: 3
  options:
    emitMetricPerClaimUsage: false
  sources:
  - apiVersion: "v1"
    kind: Pod
    op: count
EOF
  local i
  for i in 1 2 3; do mkpod wind-test nginx-deployment-$i; done
  local q='k get cq pod-count-limit -n wind-test -o'
  expect_eq "usage" "$($q 'jsonpath={.status.usage.used}/{.status.usage.available}')" 3/0
  expect_eq "claims" "$($q 'jsonpath={range .status.claims[*]}{.group}|{.kind}|{.namespace}|{.usage}|{.version} {end}')" \
    '|Pod|wind-test|1|v1 |Pod|wind-test|1|v1 |Pod|wind-test|1|v1 '
  expect_eq "Ready" "$($q 'jsonpath={.status.conditions[?(@.type=="Ready")].status}|{.status.conditions[?(@.type=="Ready")].reason}|{.status.conditions[?(@.type=="Ready")].message}')" \
    "True|Succeeded|reconciled"
  expect_eq "targets" "$($q 'jsonpath={range .status.targets[*]}{.group}|{.kind}|{.op}|{.scope}|{.version}{end}')" \
    "|Pod|count|namespace|v1"
}

# "Limit the number of LoadBalancer Services across tenant namespaces", as
# printed: 3 LoadBalancer Services over customer a's namespaces, the fourth
# is refused; other Service types are not counted.
case_seed_loadbalancers() {
  mkns customer-a-1 customer=a
  mkns customer-a-2 customer=a
  allowed "apply" k apply -f - <<'EOF'
apiVersion: capsule.clastix.io/v1beta2
kind: GlobalCustomQuota
metadata:
  name: customer-a-loadbalancers
spec:
  limit: 3
  namespaceSelectors:
    - matchLabels:
        customer: a
  sources:
    - apiVersion: v1
      kind: Service
      op: count
      selectors:
        - fieldSelectors:
            - '.spec.type[?(@=="LoadBalancer")]'
EOF
  allowed "lb-1" k create service loadbalancer lb-1 -n customer-a-1 --tcp=80:80
  allowed "lb-2" k create service loadbalancer lb-2 -n customer-a-1 --tcp=80:80
  allowed "cluster ip" k create service clusterip internal -n customer-a-2 --tcp=80:80
  allowed "lb-3" k create service loadbalancer lb-3 -n customer-a-2 --tcp=80:80
  expect_gcq customer-a-loadbalancers 3 3
  local out
  if out=$(k create service loadbalancer lb-4 -n customer-a-2 --tcp=80:80 2>&1); then
    fail "a fourth LoadBalancer was created ($out)"
  fi
  expect_contains "lb-4" "$out" "$(exceeds services lb-4 GlobalCustomQuota customer-a-loadbalancers 1 4 3)"
  allowed "another cluster ip" k create service clusterip internal-2 -n customer-a-1 --tcp=80:80
  expect_gcq customer-a-loadbalancers 3 3
}

# "Aggregate ephemeral and persistent storage", as printed: Pod ephemeral
# volume claim templates plus ReadWriteOnce PVCs, 5Gi over the tenant solar.
# A pod with no ephemeral volume is created and counts 0 (the seed's
# "Missing fields are treated as zero"; Capsule's code refuses it).
case_seed_storage_aggregate() {
  mkns solar-dev capsule.clastix.io/tenant=solar
  mkns solar-qa capsule.clastix.io/tenant=solar
  allowed "apply" k apply -f - <<'EOF'
---
apiVersion: capsule.clastix.io/v1beta2
kind: GlobalCustomQuota
metadata:
  name: solar-storage-aggregate
spec:
  limit: 5Gi
  namespaceSelectors:
  - matchLabels:
      capsule.clastix.io/tenant: solar
  sources:
    - apiVersion: v1
      kind: Pod
      op: add
      path: ".spec.volumes[*].ephemeral.volumeClaimTemplate.spec.resources.requests.storage"
    - apiVersion: v1
      kind: PersistentVolumeClaim
      op: add
      path: ".spec.resources.requests.storage"
      selectors:
        - fieldSelectors:
            - '.spec.accessModes[?(@=="ReadWriteOnce")]'
EOF
  local eph='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"NAME","namespace":"NS"},"spec":{"containers":[{"name":"main","image":"nginx"}],"volumes":[{"name":"scratch","ephemeral":{"volumeClaimTemplate":{"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"SIZE"}}}}}}]}}'
  local p1=${eph//NAME/eph-1}
  p1=${p1//NS/solar-dev}
  create "ephemeral 2Gi" "${p1//SIZE/2Gi}"
  mkpvc solar-qa data-rwo 2Gi
  mkpvc solar-qa data-rox 10Gi ReadOnlyMany
  expect_gcq solar-storage-aggregate 4Gi 2
  refused "a 2Gi PVC" "$(pvc_json solar-dev data-2 2Gi)" \
    "$(exceeds persistentvolumeclaims data-2 GlobalCustomQuota solar-storage-aggregate 2Gi 6Gi 5Gi)"
  local p2=${eph//NAME/eph-2}
  p2=${p2//NS/solar-qa}
  refused "an ephemeral 2Gi" "${p2//SIZE/2Gi}" \
    "$(exceeds pods eph-2 GlobalCustomQuota solar-storage-aggregate 2Gi 6Gi 5Gi)"
  create "ephemeral 1Gi" "${p2//SIZE/1Gi}"
  expect_gcq solar-storage-aggregate 5Gi 3
  mkpod solar-dev plain
  expect_gcq solar-storage-aggregate 5Gi 4
  expect_eq "Ready" "$(ready gcq solar-storage-aggregate)" "True|reconciled"
}

# "Count only suspended CronJobs", as printed. allotd does not serve
# batch/v1 CronJob (it waits for the workloads issue): the quota is taken
# and reports the kind as unresolvable in its Ready condition (Capsule: "if a
# source refers to a GVK that is not installed or not discoverable, the
# controller reports a reconcile failure in the quota condition"), and a
# CronJob cannot be created, so what the seed counts cannot be tried.
case_seed_suspended_cronjobs() {
  mkns team-a
  allowed "apply" k apply -f - <<'EOF'
apiVersion: capsule.clastix.io/v1beta2
kind: CustomQuota
metadata:
  name: suspended-cronjobs
  namespace: team-a
spec:
  limit: 5
  sources:
    - apiVersion: batch/v1
      kind: CronJob
      op: count
      selectors:
        - fieldSelectors:
            - '.spec.suspend'
EOF
  expect_eq "Ready" "$(ready cq team-a suspended-cronjobs)" 'True|reconciled'
  expect_cq team-a suspended-cronjobs 0 0
  local s
  for s in true false; do
    allowed "CronJob suspend=$s" k create -f - <<EOF
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly-$s, namespace: team-a}
spec:
  schedule: "0 3 * * *"
  suspend: $s
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: main, image: busybox:1.36}]
EOF
  done
  expect_cq team-a suspended-cronjobs 1 1
  # Pods in team-a are not this quota's business.
  mkpod team-a unrelated
}

# cleanup_NAME runs after case_NAME, whatever its outcome. The node goes
# after G13/G14 (later pods are not bound); the seed's tenant namespaces
# (label capsule.clastix.io/tenant=solar, as printed) after their case, so
# that the next seed quota over tenant solar does not see the last one's
# objects.
cleanup_g13_succeeded_excluded() { k delete node cq-node --ignore-not-found; }
cleanup_g14_failed_excluded() { k delete node cq-node --ignore-not-found; }
cleanup_seed_6_vs_3() { k delete ns solar-test solar-prod --wait=true --timeout=60s; }
cleanup_seed_storage_aggregate() { k delete ns solar-dev solar-qa --wait=true --timeout=60s; }

# -------------------------------------------------------------------- run --

# KNOWN_FAILING: cases that fail because allot differs from the expectation
# (allot to be fixed, not the test), space-separated, each with a comment
# saying what differs. Each still runs and reports ("known-fail") without
# failing the test; one that starts passing fails it, to be taken off the
# list. Empty now: the differences seen while this test was written (sub
# sources, N16-N19 and G5; a selector on a scalar, N33 and the seed's
# LoadBalancers; namespaces joining or leaving a global quota, G10 and G11;
# status.targets' scope, the seed's status) are fixed in src.
KNOWN_FAILING=""

PASSED=()
FAILED=()
KNOWN=()
FIXED=()
# run_case NAME: run case_NAME in a subshell (errexit on, the EXIT trap off),
# then its cleanup, and report it.
run_case() {
  local name=$1 rc known=false t0=$SECONDS
  case " ${KNOWN_FAILING//$'\n'/ } " in *" $name "*) known=true ;; esac
  set +e
  (
    trap - EXIT
    set -e
    "case_$name"
  ) >"$E2E_DIR/case.err" 2>&1
  rc=$?
  set -e
  if declare -F "cleanup_$name" >/dev/null; then "cleanup_$name" >/dev/null 2>&1 || true; fi
  k delete gcq --all >/dev/null 2>&1 || true
  local took="($((SECONDS - t0))s)"
  if [ $rc -eq 0 ] && ! $known; then
    PASSED+=("$name")
    echo "ok         $name $took"
  elif [ $rc -ne 0 ] && $known; then
    KNOWN+=("$name")
    echo "known-fail $name $took"
    sed 's/^/           /' "$E2E_DIR/case.err"
  elif [ $rc -eq 0 ]; then
    FIXED+=("$name")
    echo "FIXED      $name $took: passes now, take it off KNOWN_FAILING"
  else
    FAILED+=("$name")
    echo "FAIL       $name $took"
    sed 's/^/           /' "$E2E_DIR/case.err"
  fi
}

ALL_CASES="n1_missing_path_zero n2_missing_path_admits n3_concurrent_100 n4_global_and_cq_paths
  n5_wrong_paths n6_cpu_scale n7_count_scale n8_relabel_single n9_relabel_multi n10_field_image
  n11_fields_and n12_cel n13_two_sources n14_sources_selectors n15_sub_only n16_add_sub
  n17_add_sub_clamp n18_sub_relabel n19_sub_delete n20_smallest_count n21_smallest_cpu
  n22_overlap n23_two_paths n24_scale_smallest n25_global_cq_count n26_global_cq_cpu n27_deletes
  n28_no_negative n29_emptydir_relabel n30_label_vs_field n31_tie n32_multi_path n33_filter_scalar
  n33_selector_error
  g1_all_namespaces_cpu g2_missing_path g3_concurrent_100 g4_mixed_count g4_mixed_cpu
  g4_mixed_overlap g4_mixed_path g4_mixed_scale g5_sub_only g5_add_sub g5_add_sub_clamp
  g5_sub_relabel g5_sub_delete g6_count_sub_cpu g7_count_sub_scale g8_sub_smallest
  g9_wildcard_namespaces g10_selected_namespaces g10_namespace_joins g10_namespace_leaves
  g11_no_namespace g12_smallest_global
  g12_smallest_cpu g12_broad_narrow g12_paths g12_label_vs_field g12_tie g12_multi_path
  g13_succeeded_excluded g14_failed_excluded
  seed_6_vs_3 seed_cq_status seed_loadbalancers seed_storage_aggregate seed_suspended_cronjobs"
for c in ${CASES:-$ALL_CASES}; do
  declare -F "case_$c" >/dev/null || fail "no case $c"
  run_case "$c"
done

expect_eq "alive" "$(api GET /healthz | tail -n1)" 200
stop_allotd
echo "test_custom_quotas: ${#PASSED[@]} passed, ${#KNOWN[@]} known-failing, ${#FIXED[@]} fixed, ${#FAILED[@]} failed"
[ ${#KNOWN[@]} -eq 0 ] || echo "test_custom_quotas: known-failing (allot differs): ${KNOWN[*]}"
[ ${#FIXED[@]} -eq 0 ] || fail "passing but listed in KNOWN_FAILING: ${FIXED[*]}"
[ ${#FAILED[@]} -eq 0 ] || fail "failed cases: ${FAILED[*]}"
echo "test_custom_quotas: ok"
