# test_bypass.sh - every known way around the quota books, each checked
# against upstream Kubernetes 1.32: the status code, the message, and that
# nothing changed (resourceVersion of the pod and of the quota, the quota's
# status.used and the pods in the namespace, before and after).
#
# The holes: growing a running pod's requests by patch or PUT, a bad quantity
# in a patch, create-then-patch in a loop, adding containers / initContainers
# / overhead, moving a bound pod to another node, `$patch: replace` dropping
# requests; creates with unparseable, negative, fractional-integer or
# inconsistent quantities; JSON values of the wrong type; a JSON patch that
# changes the kind; unknown fields (strict field validation) on every verb;
# quantities that must read back canonical; requests a client could turn into
# a 500 (`cannot recount quota`, `quota check failed`).
#
# Every case is a function case_NAME run in a subshell: a failure names the
# case and shows the actual response, the other cases still run, and the test
# fails at the end if any case failed.
#
# Upstream texts, and where they come from (kubernetes/kubernetes 1.32 and
# its staging repositories unless said otherwise):
#  - pkg/apis/core/validation/validation.go ValidatePodUpdate: a changed spec
#    is field.Forbidden(spec, "pod updates may not change fields other than " +
#    strings.Join(updatablePodSpecFields, ",") + "\n" + cmp.Diff(old, new));
#    with the default feature gates the list is the five fields below. The
#    cmp.Diff part is Go's and is not asserted (prefix only).
#    ValidateContainerUpdates: a different number of containers is
#    Forbidden(spec.containers|spec.initContainers, "pod updates may not add
#    or remove containers").
#  - same file, ValidateResourceRequirements / ValidateResourceQuantityValue:
#    Invalid(requests[cpu], "-1", "must be greater than or equal to 0");
#    Invalid(requests, "2", "must be less than or equal to cpu limit of 1");
#    Invalid(requests, "1", "must be equal to nvidia.com/gpu limit of 2") for a
#    resource that cannot be overcommitted; Invalid(limits[nvidia.com/gpu],
#    <Quantity>, "must be an integer") - the bad value there is the
#    resource.Quantity itself, not its string: older field.Error printed it
#    with Go's %#v (resource.Quantity{i:...}), the later ErrorBody uses the
#    String() of its pointer (bare 500m); which one 1.32 has is not settled
#    here, so the value is not asserted. Limits default requests first
#    (SetDefaults_Pod), so a fractional GPU limit gives two errors.
#  - apimachinery api/errors NewInvalid: `<Kind> "<name>" is invalid: <errs>`
#    (one error bare, several as "[e1, e2]"); GroupKind{} prints "", so a
#    patch that cannot be decoded reads ` "" is invalid: patch: Invalid
#    value: "<patched object>": <decode error>` (note the leading space).
#  - apiserver endpoints/handlers/rest.go transformDecodeError: a body that
#    cannot be decoded on POST/PUT is 400 `<Kind> in version "v1" cannot be
#    handled as a <Kind>: <decode error>`.
#  - apiserver endpoints/handlers/patch.go: json and merge patches decode the
#    patched JSON (runtime.DecodeInto), strategic merge patches convert the
#    patched map (FromUnstructuredWithValidation, value printed with %+v);
#    both failures and strict-decoding failures are errors.NewInvalid(
#    GroupKind{}, "", patch: Invalid value ...) = 422, not the 400 of POST
#    and PUT. The value is the whole patched object (json, merge) or the
#    patch map (strategic), never shortened (field/errors.go ErrorBody).
#  - sigs.k8s.io/json (fork of encoding/json) UnmarshalTypeError: "json:
#    cannot unmarshal <array|number|string> into Go struct field
#    <innermost struct>.<json path> of type <Go type>"; map keys are not part
#    of the path (decode.go object(): only struct fields push the stack).
#  - apimachinery api/resource/quantity.go: Quantity.UnmarshalJSON strips the
#    quotes and calls ParseQuantity, whose format error is "quantities must
#    match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
#    for "abc", "NaN", "", "x" and the JSON literal true alike; it is
#    returned as is, without a field path.
#  - apimachinery runtime/converter.go mapFromUnstructured: "cannot restore
#    map from string" (also expected by hack/test-cmd for a strategic patch
#    of labels:"invalid").
#  - test/integration/apiserver/field_validation_test.go: strict errors read
#    `strict decoding error: unknown field "spec.hrad"` for POST, PUT and every
#    patch type; Warn returns each as a Warning header (apimachinery
#    util/net NewWarningHeader: `299 - "<text with \" escaped>"`).
#  - kubectl: `Error from server (BadRequest): error when creating "<file>":
#    <message>` (AddSourceToErr + StandardErrorMessage); an Invalid error is
#    printed as `The <details.kind> "<details.name>" is invalid: <field>:
#    <cause>` from the Status details.
#  - 1Gi of cpu: nothing in validation restricts cpu's suffix (cpu is not an
#    integer resource), so upstream accepts it as 1073741824 cores; under a
#    quota it is the quota's 403 (admission/plugin/resourcequota: "exceeded
#    quota: <q>, requested: ..., used: ..., limited: ...").
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl
start_allotd
cd "$E2E_DIR"

QTY_RE="quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)\$'"
UPDATABLE='`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)'
forbid_spec() { printf 'Pod "%s" is invalid: spec: Forbidden: pod updates may not change fields other than %s' "$1" "$UPDATABLE"; }
SMP=application/strategic-merge-patch+json
MERGE=application/merge-patch+json
JSONP=application/json-patch+json
JSON=application/json
PODS=/api/v1/namespaces/bp/pods
X=$PODS/x

# ---------------------------------------------------------------- helpers --

# call METHOD PATH [CONTENT-TYPE BODY]: one raw request. Sets CODE, BODY,
# MSG and REASON (from the Status, if the body is one) and WARN (the Warning
# header values, one a line).
call() {
  local -a a=(-sS --cacert "$E2E_DIR/data/ca.crt" -H "Authorization: Bearer $ALLOT_TOKEN" -X "$1"
    -D "$E2E_DIR/resp.h" -o "$E2E_DIR/resp.b" -w '%{http_code}')
  [ $# -ge 4 ] && a+=(-H "Content-Type: $3" --data-binary "$4")
  CODE=$(curl "${a[@]}" "$ALLOT_URL$2") || CODE="curl-failed"
  BODY=$(cat "$E2E_DIR/resp.b")
  { IFS= read -r REASON; IFS= read -r -d '' MSG || true; } < <(/usr/bin/python3 -c '
import json, sys
try:
    s = json.load(open(sys.argv[1]))
    s = s if isinstance(s, dict) and s.get("kind") == "Status" else {}
except Exception:
    s = {}
print(s.get("reason", ""))
sys.stdout.write(s.get("message", ""))' "$E2E_DIR/resp.b")
  WARN=$(sed -n 's/^[Ww]arning: \(.*\)\r$/\1/p' "$E2E_DIR/resp.h")
}

short() { local s=$1; [ ${#s} -le 700 ] && printf '%s' "$s" || printf '%s...(%d chars)' "${s:0:700}" ${#s}; }
reason_for() { case $1 in 400) echo BadRequest ;; 403) echo Forbidden ;; 404) echo NotFound ;; 422) echo Invalid ;; esac; }

# want_code CODE: the HTTP code, and for an error the Status reason upstream
# gives with it.
want_code() {
  [ "$CODE" = "$1" ] || fail "HTTP $CODE, want $1; message: [$(short "$MSG")] body: [$(short "$BODY")]"
  local r; r=$(reason_for "$1")
  [ -z "$r" ] || [ "$REASON" = "$r" ] || fail "HTTP $CODE reason [$REASON], want [$r]"
}
want_msg() { [ "$MSG" = "$1" ] || fail "message
    got  [$(short "$MSG")]
    want [$1]"; }
want_prefix() { [[ "$MSG" == "$1"* ]] || fail "message
    got          [$(short "$MSG")]
    want prefix  [$1]"; }
want_suffix() { [[ "$MSG" == *"$1" ]] || fail "message
    got          [$(short "$MSG")]
    want suffix  [$1]"; }
want_in_msg() { [[ "$MSG" == *"$1"* ]] || fail "message
    got          [$(short "$MSG")]
    want to hold [$1]"; }
want_warning() {
  grep_all -Fx -- "$1" <<<"$WARN" || fail "Warning headers [$WARN], want [$1]"
}

cat >"$E2E_DIR/snap.py" <<'PY'
# snap.py URL TOKEN CA NS POD QUOTA: one line naming the pod's and the quota's
# resourceVersion, the quota's status.used, and the pods and the quotas of
# the namespace.
import json, ssl, sys, urllib.error, urllib.request
url, token, ca, ns, pod, quota = sys.argv[1:7]
ctx = ssl.create_default_context(cafile=ca)
def get(path):
    req = urllib.request.Request(url + path, headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=20) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        return {"code": e.code}
out = []
if pod:
    o = get(f"/api/v1/namespaces/{ns}/pods/{pod}")
    out.append("pod@" + o.get("metadata", {}).get("resourceVersion", "HTTP%s" % o.get("code")))
if quota:
    q = get(f"/api/v1/namespaces/{ns}/resourcequotas/{quota}")
    out.append("quota@" + q.get("metadata", {}).get("resourceVersion", "HTTP%s" % q.get("code")))
    out.append("used=" + json.dumps(q.get("status", {}).get("used", {}), sort_keys=True, separators=(",", ":")))
l = get(f"/api/v1/namespaces/{ns}/pods")
out.append("pods=" + ",".join(sorted(i["metadata"]["name"] for i in l.get("items", []))))
l = get(f"/api/v1/namespaces/{ns}/resourcequotas")
out.append("quotas=" + ",".join(sorted(i["metadata"]["name"] for i in l.get("items", []))))
print(" ".join(out))
PY
# snap NS [POD] [QUOTA]
snap() { /usr/bin/python3 "$E2E_DIR/snap.py" "$ALLOT_URL" "$ALLOT_TOKEN" "$E2E_DIR/data/ca.crt" "$1" "${2:-}" "${3:-}"; }
# unchanged BEFORE NS [POD] [QUOTA]: nothing moved.
unchanged() {
  local now; now=$(snap "$2" "${3:-}" "${4:-}")
  [ "$now" = "$1" ] || fail "state changed: before [$1] after [$now]"
}

# clients_ok NS: kubectl and python3-kubernetes still list the namespace's
# pods and quotas (a stored object of the wrong shape breaks their decoders).
clients_ok() {
  local out
  out=$(k get pods -n "$1" 2>&1) || fail "kubectl get pods -n $1 broke: $out"
  out=$(k get quota -n "$1" 2>&1) || fail "kubectl get quota -n $1 broke: $out"
  out=$(/usr/bin/python3 - "$1" 2>&1 <<'PY'
import sys
import kubernetes
kubernetes.config.load_kube_config()
v1 = kubernetes.client.CoreV1Api()
v1.list_namespaced_pod(sys.argv[1])
v1.list_namespaced_resource_quota(sys.argv[1])
PY
  ) || fail "python3-kubernetes list in $1 raised: $(tail -3 <<<"$out")"
}

# pod NAME RESOURCES [MORE-SPEC]: a one-container pod as JSON.
pod() {
  printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s"},"spec":{"containers":[{"name":"app","image":"nginx","resources":%s}]%s}}' \
    "$1" "$2" "${3:-}"
}

# pod_with NS NAME PYTHON-EXPR: GET the pod, apply EXPR to it (as `p`), print
# the JSON (for PUT).
pod_with() {
  api GET "/api/v1/namespaces/$1/pods/$2" | sed '$d' | /usr/bin/python3 -c "
import json, sys
p = json.load(sys.stdin)
$3
print(json.dumps(p))"
}

# ------------------------------------------------------------------ setup --
# A node for the scheduler and node agent; namespace bp with quota
# q (requests.cpu=2, pods=2) and pod x requesting 1 cpu, running on node-1.

k create -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  capacity: {cpu: "8", memory: 64Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 64Gi, pods: "110"}
YAML
for ns in bp loop sv canon free; do k create namespace "$ns" >/dev/null; done

x_running() {
  [ "$(k get pod x -n bp -o jsonpath='{.status.phase}/{.status.conditions[?(@.type=="Ready")].status}')" = Running/True ]
}
bp_used() { [ "$(k get quota q -n bp -o jsonpath='{.status.used.pods}/{.status.used.requests\.cpu}')" = 1/1 ]; }
setup_bp() {
  k create quota q -n bp --hard=requests.cpu=2,pods=2 >/dev/null
  pod x '{"requests":{"cpu":"1"}}' | k create -n bp -f - >/dev/null
  wait_until 30 x_running || fail "setup: pod x did not run"
  wait_until 30 bp_used || fail "setup: quota q does not count pod x"
  BASE_BP=$(snap bp x q)
}
setup_bp

# reset_bp: a case that got through changed bp; put it back as setup left it
# so that the next cases start from the same books.
reset_bp() {
  k delete pods --all -n bp --grace-period=0 --force --wait=true >/dev/null 2>&1 || true
  k delete quota --all -n bp --wait=true >/dev/null 2>&1 || true
  wait_until 30 bash -c '[ -z "$(kubectl get pods,quota -n bp -o name)" ]' || fail "reset: bp did not empty"
  setup_bp
}

PASSED=()
FAILED=()
# run_case NAME: run case_NAME in a subshell (errexit on, the EXIT trap off);
# report it; if bp moved, report that too and reset it.
run_case() {
  local name=$1 rc now
  set +e
  (
    trap - EXIT
    set -e
    "case_$name"
  ) 2>"$E2E_DIR/case.err"
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
  now=$(snap bp x q)
  if [ "$now" != "$BASE_BP" ]; then
    echo "       (bp changed by $name: [$BASE_BP] -> [$now]; reset)"
    reset_bp
  fi
}

# ------------------------------------------- growing a running pod's bill --

case_update_cpu_strategic() {
  local b; b=$(snap bp x q)
  call PATCH $X $SMP '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"100"}}}]}}'
  want_code 422
  want_prefix "$(forbid_spec x)"
  unchanged "$b" bp x q
}
case_update_cpu_merge() {
  local b; b=$(snap bp x q)
  call PATCH $X $MERGE '{"spec":{"containers":[{"name":"app","image":"nginx","resources":{"requests":{"cpu":"100"}}}]}}'
  want_code 422
  want_prefix "$(forbid_spec x)"
  unchanged "$b" bp x q
}
case_update_cpu_json() {
  local b; b=$(snap bp x q)
  call PATCH $X $JSONP '[{"op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":"100"}]'
  want_code 422
  want_prefix "$(forbid_spec x)"
  unchanged "$b" bp x q
}
case_update_cpu_put() {
  local b body; b=$(snap bp x q)
  body=$(pod_with bp x 'p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "100"')
  call PUT $X $JSON "$body"
  want_code 422
  want_prefix "$(forbid_spec x)"
  unchanged "$b" bp x q
}
# kubectl builds its line from the Status details (kind, name, causes).
case_update_cpu_kubectl() {
  local b out; b=$(snap bp x q)
  if out=$(k patch pod x -n bp -p '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"100"}}}]}}' 2>&1); then
    fail "kubectl patch succeeded: $out"
  fi
  [[ "$out" == "The $(forbid_spec x)"* ]] || fail "kubectl said [$(short "$out")], want prefix [The $(forbid_spec x)]"
  unchanged "$b" bp x q
}

# A quantity that does not parse, by each patch type and by PUT.
case_update_bad_qty_strategic() {
  local b; b=$(snap bp x q)
  call PATCH $X $SMP '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"x"}}}]}}'
  want_code 422
  want_msg " \"\" is invalid: patch: Invalid value: \"map[spec:map[containers:[map[name:app resources:map[requests:map[cpu:x]]]]]]\": $QTY_RE"
  unchanged "$b" bp x q
}
case_update_bad_qty_merge() {
  local b; b=$(snap bp x q)
  call PATCH $X $MERGE '{"spec":{"containers":[{"name":"app","image":"nginx","resources":{"requests":{"cpu":"x"}}}]}}'
  want_code 422
  # the value is the patched pod as JSON (upstream: all of it; allot: its
  # first 1024 bytes, docs/decisions.md): prefix and suffix only
  want_prefix ' "" is invalid: patch: Invalid value: "{'
  want_suffix "\": $QTY_RE"
  unchanged "$b" bp x q
}
case_update_bad_qty_json() {
  local b; b=$(snap bp x q)
  call PATCH $X $JSONP '[{"op":"replace","path":"/spec/containers/0/resources/requests/cpu","value":"x"}]'
  want_code 422
  want_prefix ' "" is invalid: patch: Invalid value: "{'
  want_suffix "\": $QTY_RE"
  unchanged "$b" bp x q
}
case_update_bad_qty_put() {
  local b body; b=$(snap bp x q)
  body=$(pod_with bp x 'p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "x"')
  call PUT $X $JSON "$body"
  want_code 400
  want_msg "Pod in version \"v1\" cannot be handled as a Pod: $QTY_RE"
  unchanged "$b" bp x q
}

# Create, then patch the request up, five times: never more than 2 pods or
# 2 cpus in the books.
case_create_then_patch_loop() {
  k create quota q -n loop --hard=requests.cpu=2,pods=2 >/dev/null
  local i
  for i in 1 2 3 4 5; do
    call POST /api/v1/namespaces/loop/pods $JSON "$(pod "l$i" '{"requests":{"cpu":"500m"}}')"
    if [ $i -le 2 ]; then
      want_code 201
    else
      want_code 403
      want_msg "pods \"l$i\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2"
    fi
    call PATCH "/api/v1/namespaces/loop/pods/l$i" $SMP '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"2"}}}]}}'
    if [ $i -le 2 ]; then
      want_code 422
      want_prefix "$(forbid_spec "l$i")"
    else
      want_code 404
      want_msg "pods \"l$i\" not found"
    fi
  done
  local s; s=$(snap loop "" q)
  [[ "$s" == *' used={"pods":"2","requests.cpu":"1"} pods=l1,l2 quotas=q' ]] || fail "after the loop: [$s]"
  [ "$(k get pods -n loop -o jsonpath='{.items[*].spec.containers[0].resources.requests.cpu}')" = "500m 500m" ] ||
    fail "requests changed: $(k get pods -n loop -o jsonpath='{.items[*].spec.containers[0].resources.requests.cpu}')"
}

case_update_add_container() {
  local b; b=$(snap bp x q)
  call PATCH $X $SMP '{"spec":{"containers":[{"name":"extra","image":"nginx","resources":{"requests":{"cpu":"1"}}}]}}'
  want_code 422
  want_msg 'Pod "x" is invalid: spec.containers: Forbidden: pod updates may not add or remove containers'
  unchanged "$b" bp x q
}
case_update_add_init_container() {
  local b; b=$(snap bp x q)
  call PATCH $X $SMP '{"spec":{"initContainers":[{"name":"init","image":"busybox","resources":{"requests":{"cpu":"10"}}}]}}'
  want_code 422
  want_msg 'Pod "x" is invalid: spec.initContainers: Forbidden: pod updates may not add or remove containers'
  unchanged "$b" bp x q
}
case_update_add_overhead() {
  local b; b=$(snap bp x q)
  call PATCH $X $MERGE '{"spec":{"overhead":{"cpu":"10"}}}'
  want_code 422
  want_prefix "$(forbid_spec x)"
  unchanged "$b" bp x q
}
case_update_node_name() {
  local b; b=$(snap bp x q)
  [ "$(k get pod x -n bp -o jsonpath='{.spec.nodeName}')" = node-1 ] || fail "x is not bound to node-1"
  call PATCH $X $MERGE '{"spec":{"nodeName":"node-2"}}'
  want_code 422
  want_prefix "$(forbid_spec x)"
  unchanged "$b" bp x q
}
# `$patch: replace` on the container's resources, and on the whole list.
case_update_replace_drops_requests() {
  local b; b=$(snap bp x q)
  call PATCH $X $SMP '{"spec":{"containers":[{"name":"app","resources":{"$patch":"replace"}}]}}'
  want_code 422
  want_prefix "$(forbid_spec x)"
  call PATCH $X $SMP '{"spec":{"containers":[{"name":"app","image":"nginx"},{"$patch":"replace"}]}}'
  want_code 422
  want_prefix "$(forbid_spec x)"
  unchanged "$b" bp x q
}

# JSON patch turning the pod into a Secret: the patched object cannot be
# decoded as a Pod. The decoder's own words (a scheme conversion error naming
# Secret) are Go's: only the stable part is asserted.
case_json_patch_kind_secret() {
  local b; b=$(snap bp x q)
  call PATCH $X $JSONP '[{"op":"replace","path":"/kind","value":"Secret"}]'
  want_code 422
  want_prefix ' "" is invalid: patch: Invalid value: "{'
  want_in_msg Secret
  unchanged "$b" bp x q
  [ "$(k get pod x -n bp -o jsonpath='{.kind}')" = Pod ] || fail "x is no longer a Pod"
  [ "$(k get secrets -n bp -o name)" = "" ] || fail "a secret appeared: $(k get secrets -n bp -o name)"
}

# ----------------------------------------------------- creates under quota --

create_in_bp() { # NAME RESOURCES -> the response in CODE/MSG
  call POST $PODS $JSON "$(pod "$1" "$2")"
}
case_create_qty_abc() { # was 500 "quota check failed"
  local b; b=$(snap bp x q)
  create_in_bp abc '{"requests":{"cpu":"abc"}}'
  want_code 400
  want_msg "Pod in version \"v1\" cannot be handled as a Pod: $QTY_RE"
  unchanged "$b" bp x q
}
case_create_qty_negative() {
  local b; b=$(snap bp x q)
  create_in_bp neg '{"requests":{"cpu":"-1"}}'
  want_code 422
  want_msg 'Pod "neg" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0'
  unchanged "$b" bp x q
}
case_create_qty_nan() {
  local b; b=$(snap bp x q)
  create_in_bp nan '{"requests":{"cpu":"NaN"}}'
  want_code 400
  want_msg "Pod in version \"v1\" cannot be handled as a Pod: $QTY_RE"
  unchanged "$b" bp x q
}
case_create_qty_empty() {
  local b; b=$(snap bp x q)
  create_in_bp empty '{"requests":{"cpu":""}}'
  want_code 400
  want_msg "Pod in version \"v1\" cannot be handled as a Pod: $QTY_RE"
  unchanged "$b" bp x q
}
# 1Gi of cpu is a valid quantity for cpu upstream: it is 1073741824 cores,
# refused here by the quota, accepted where there is none.
case_create_cpu_gi() {
  local b; b=$(snap bp x q)
  create_in_bp cpu-gi '{"requests":{"cpu":"1Gi"}}'
  want_code 403
  want_msg 'pods "cpu-gi" is forbidden: exceeded quota: q, requested: requests.cpu=1Gi, used: requests.cpu=1, limited: requests.cpu=2'
  unchanged "$b" bp x q
  call POST /api/v1/namespaces/free/pods $JSON "$(pod cpu-gi '{"requests":{"cpu":"1Gi"}}')"
  want_code 201
  expect_eq "1Gi cpu reads back" "$(k get pod cpu-gi -n free -o jsonpath='{.spec.containers[0].resources.requests.cpu}')" 1Gi
  k delete pod cpu-gi -n free --grace-period=0 --force >/dev/null 2>&1
}
case_create_gpu_fraction() {
  local b; b=$(snap bp x q)
  create_in_bp gpu-frac '{"requests":{"cpu":"100m"},"limits":{"nvidia.com/gpu":"0.5"}}'
  want_code 422
  want_prefix 'Pod "gpu-frac" is invalid: '
  # the bad value is the resource.Quantity (%#v or String(), see the header):
  # not asserted
  want_in_msg 'spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: '
  want_in_msg 'spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: '
  want_in_msg ': must be an integer'
  unchanged "$b" bp x q
}
case_create_requests_above_limits() {
  local b; b=$(snap bp x q)
  create_in_bp over '{"requests":{"cpu":"2"},"limits":{"cpu":"1"}}'
  want_code 422
  want_msg 'Pod "over" is invalid: spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'
  unchanged "$b" bp x q
}
# Upstream validates after mutating admission: a LimitRange's default limit
# below the pod's own request makes an invalid pod, refused like one.
case_limitrange_default_below_request() {
  k create namespace lrd >/dev/null
  k create -n lrd -f - >/dev/null <<'YAML'
apiVersion: v1
kind: LimitRange
metadata: {name: lr}
spec:
  limits:
  - type: Container
    default: {cpu: "1"}
YAML
  call POST /api/v1/namespaces/lrd/pods $JSON \
    '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"2"}}}]}}'
  want_code 422
  want_msg 'Pod "p" is invalid: spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'
  expect_eq "pods in lrd" "$(k get pods -n lrd -o name)" ""
}
case_create_gpu_requests_not_limits() {
  local b; b=$(snap bp x q)
  create_in_bp gpu-ne '{"requests":{"cpu":"100m","nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"2"}}'
  want_code 422
  want_msg 'Pod "gpu-ne" is invalid: spec.containers[0].resources.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2'
  unchanged "$b" bp x q
}

# -------------------------------------------------- JSON of the wrong type --

POD_AS_POD='Pod in version "v1" cannot be handled as a Pod: '
RQ_AS_RQ='ResourceQuota in version "v1" cannot be handled as a ResourceQuota: '
QUOTAS=/api/v1/namespaces/bp/resourcequotas

case_type_labels_array() {
  local b; b=$(snap bp x q)
  call POST $PODS $JSON '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"t1","labels":["a"]},"spec":{"containers":[{"name":"app","image":"nginx","resources":{"requests":{"cpu":"100m"}}}]}}'
  want_code 400
  want_msg "${POD_AS_POD}json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string"
  unchanged "$b" bp x q
  clients_ok bp
}
case_type_labels_number() {
  local b; b=$(snap bp x q)
  call POST $PODS $JSON '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"t2","labels":{"a":1}},"spec":{"containers":[{"name":"app","image":"nginx","resources":{"requests":{"cpu":"100m"}}}]}}'
  want_code 400
  want_msg "${POD_AS_POD}json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"
  unchanged "$b" bp x q
  clients_ok bp
}
case_type_cpu_bool() { # Quantity.UnmarshalJSON parses the literal `true`
  local b; b=$(snap bp x q)
  call POST $PODS $JSON "$(pod t3 '{"requests":{"cpu":true}}')"
  want_code 400
  want_msg "${POD_AS_POD}$QTY_RE"
  unchanged "$b" bp x q
  clients_ok bp
}
case_type_node_name_number() {
  local b; b=$(snap bp x q)
  call POST $PODS $JSON "$(pod t4 '{"requests":{"cpu":"100m"}}' ',"nodeName":5')"
  want_code 400
  want_msg "${POD_AS_POD}json: cannot unmarshal number into Go struct field PodSpec.spec.nodeName of type string"
  unchanged "$b" bp x q
  clients_ok bp
}
case_type_quota_spec_string() {
  local b; b=$(snap bp x q)
  call POST $QUOTAS $JSON '{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"t5"},"spec":"x"}'
  want_code 400
  want_msg "${RQ_AS_RQ}json: cannot unmarshal string into Go struct field ResourceQuota.spec of type v1.ResourceQuotaSpec"
  unchanged "$b" bp x q
  clients_ok bp
}
case_type_quota_hard_array() { # was 500 "cannot recount quota"
  local b; b=$(snap bp x q)
  call POST $QUOTAS $JSON '{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"t6"},"spec":{"hard":["pods"]}}'
  want_code 400
  want_msg "${RQ_AS_RQ}json: cannot unmarshal array into Go struct field ResourceQuotaSpec.spec.hard of type v1.ResourceList"
  unchanged "$b" bp x q
  clients_ok bp
}
case_type_quota_hard_string() { # was 500 "cannot recount quota"
  local b; b=$(snap bp x q)
  call POST $QUOTAS $JSON '{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"t7"},"spec":{"hard":"pods=1"}}'
  want_code 400
  want_msg "${RQ_AS_RQ}json: cannot unmarshal string into Go struct field ResourceQuotaSpec.spec.hard of type v1.ResourceList"
  unchanged "$b" bp x q
  clients_ok bp
}
case_type_quota_hard_put_string() {
  local b body; b=$(snap bp x q)
  body=$(api GET $QUOTAS/q | sed '$d' | /usr/bin/python3 -c '
import json, sys
q = json.load(sys.stdin)
q["spec"]["hard"] = "pods=1"
print(json.dumps(q))')
  call PUT $QUOTAS/q $JSON "$body"
  want_code 400
  want_msg "${RQ_AS_RQ}json: cannot unmarshal string into Go struct field ResourceQuotaSpec.spec.hard of type v1.ResourceList"
  unchanged "$b" bp x q
  clients_ok bp
}
case_type_quota_hard_merge_array() {
  local b; b=$(snap bp x q)
  call PATCH $QUOTAS/q $MERGE '{"spec":{"hard":["pods"]}}'
  want_code 422
  want_prefix ' "" is invalid: patch: Invalid value: "{'
  want_suffix '}": json: cannot unmarshal array into Go struct field ResourceQuotaSpec.spec.hard of type v1.ResourceList'
  unchanged "$b" bp x q
  clients_ok bp
}
case_type_quota_hard_strategic_string() {
  local b; b=$(snap bp x q)
  call PATCH $QUOTAS/q $SMP '{"spec":{"hard":"x"}}'
  want_code 422
  want_msg ' "" is invalid: patch: Invalid value: "map[spec:map[hard:x]]": cannot restore map from string'
  unchanged "$b" bp x q
  clients_ok bp
}

# ------------------------------------------------ strict field validation --

SVQ=/api/v1/namespaces/sv/resourcequotas
STRICT_HRAD='strict decoding error: unknown field "spec.hrad"'
WARN_HRAD='299 - "unknown field \"spec.hrad\""'
cat >"$E2E_DIR/quota-typo.yaml" <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata: {name: typo}
spec:
  hard: {pods: "5"}
  hrad: {cpu: "1"}
YAML
no_hrad() { # NAME: stored without the unknown field, with its hard
  local j; j=$(k get quota "$1" -n sv -o json)
  [[ "$j" != *hrad* ]] || fail "quota $1 was stored with hrad: $j"
  expect_eq "quota $1 spec.hard" "$(k get quota "$1" -n sv -o jsonpath='{.spec.hard}')" '{"pods":"5"}'
}
rv_of() { k get quota "$1" -n sv -o jsonpath='{.metadata.resourceVersion}'; }

case_strict_kubectl_create() {
  local out
  if out=$(k create -n sv -f quota-typo.yaml 2>&1); then fail "created: $out"; fi
  expect_eq "kubectl create, strict" "$out" \
    "Error from server (BadRequest): error when creating \"quota-typo.yaml\": ${RQ_AS_RQ}$STRICT_HRAD"
  if k get quota typo -n sv >/dev/null 2>&1; then fail "quota typo was stored"; fi
}
case_strict_kubectl_validate_false() {
  local out
  out=$(k create -n sv -f quota-typo.yaml --validate=false 2>&1) || fail "kubectl create --validate=false: $out"
  expect_eq "kubectl create --validate=false" "$out" "resourcequota/typo created"
  no_hrad typo
}
case_strict_post_warn() {
  call POST "$SVQ?fieldValidation=Warn" $JSON \
    '{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"typo-warn"},"spec":{"hard":{"pods":"5"},"hrad":{"cpu":"1"}}}'
  want_code 201
  want_warning "$WARN_HRAD"
  no_hrad typo-warn
}
case_strict_post_strict() {
  call POST "$SVQ?fieldValidation=Strict" $JSON \
    '{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"typo-strict"},"spec":{"hard":{"pods":"5"},"hrad":{"cpu":"1"}}}'
  want_code 400
  want_msg "${RQ_AS_RQ}$STRICT_HRAD"
  if k get quota typo-strict -n sv >/dev/null 2>&1; then fail "quota typo-strict was stored"; fi
}
typo_with_hrad() {
  api GET $SVQ/typo | sed '$d' | /usr/bin/python3 -c '
import json, sys
q = json.load(sys.stdin)
q["spec"]["hrad"] = {"cpu": "1"}
print(json.dumps(q))'
}
case_strict_put_strict() {
  local rv; rv=$(rv_of typo)
  call PUT "$SVQ/typo?fieldValidation=Strict" $JSON "$(typo_with_hrad)"
  want_code 400
  want_msg "${RQ_AS_RQ}$STRICT_HRAD"
  expect_eq "typo resourceVersion" "$(rv_of typo)" "$rv"
  no_hrad typo
}
case_strict_put_warn() {
  call PUT "$SVQ/typo?fieldValidation=Warn" $JSON "$(typo_with_hrad)"
  want_code 200
  want_warning "$WARN_HRAD"
  no_hrad typo
}
# A patch whose result has an unknown field: 422 (patch.go, see the header).
case_strict_patch_strategic() {
  local rv; rv=$(rv_of typo)
  call PATCH "$SVQ/typo?fieldValidation=Strict" $SMP '{"spec":{"hrad":{"cpu":"1"}}}'
  want_code 422
  want_msg " \"\" is invalid: patch: Invalid value: \"map[spec:map[hrad:map[cpu:1]]]\": $STRICT_HRAD"
  expect_eq "typo resourceVersion" "$(rv_of typo)" "$rv"
  no_hrad typo
}
case_strict_patch_merge() {
  local rv; rv=$(rv_of typo)
  call PATCH "$SVQ/typo?fieldValidation=Strict" $MERGE '{"spec":{"hrad":{"cpu":"1"}}}'
  want_code 422
  want_prefix ' "" is invalid: patch: Invalid value: "{'
  want_suffix "}\": $STRICT_HRAD"
  expect_eq "typo resourceVersion" "$(rv_of typo)" "$rv"
  no_hrad typo
}
case_strict_patch_json() {
  local rv; rv=$(rv_of typo)
  call PATCH "$SVQ/typo?fieldValidation=Strict" $JSONP '[{"op":"add","path":"/spec/hrad","value":{"cpu":"1"}}]'
  want_code 422
  want_prefix ' "" is invalid: patch: Invalid value: "{'
  want_suffix "}\": $STRICT_HRAD"
  expect_eq "typo resourceVersion" "$(rv_of typo)" "$rv"
  no_hrad typo
}
case_strict_patch_warn_each_type() {
  call PATCH "$SVQ/typo?fieldValidation=Warn" $SMP '{"spec":{"hrad":{"cpu":"1"}}}'
  want_code 200
  want_warning "$WARN_HRAD"
  call PATCH "$SVQ/typo?fieldValidation=Warn" $MERGE '{"spec":{"hrad":{"cpu":"1"}}}'
  want_code 200
  want_warning "$WARN_HRAD"
  call PATCH "$SVQ/typo?fieldValidation=Warn" $JSONP '[{"op":"add","path":"/spec/hrad","value":{"cpu":"1"}}]'
  want_code 200
  want_warning "$WARN_HRAD"
  no_hrad typo
}

# ---------------------------------------------------- canonical quantities --

case_canonical_quota() {
  k create -n canon -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata: {name: c}
spec:
  hard: {cpu: "0.5", memory: "1024Mi"}
YAML
  expect_eq "spec.hard" "$(k get quota c -n canon -o jsonpath='{.spec.hard.cpu} {.spec.hard.memory}')" "500m 1Gi"
  wait_until 10 bash -c '[ "$(kubectl get quota c -n canon -o jsonpath={.status.hard.cpu})" = 500m ]' ||
    fail "status.hard: $(k get quota c -n canon -o jsonpath='{.status.hard}')"
  expect_eq "status.hard" "$(k get quota c -n canon -o jsonpath='{.status.hard.cpu} {.status.hard.memory}')" "500m 1Gi"
}
case_canonical_pod() {
  k create -n free -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: half}
spec:
  containers:
  - name: app
    image: nginx
    resources: {requests: {cpu: 0.5}}
YAML
  expect_eq "cpu: 0.5" "$(k get pod half -n free -o jsonpath='{.spec.containers[0].resources.requests.cpu}')" 500m
  call POST /api/v1/namespaces/free/pods $JSON "$(pod half-json '{"requests":{"cpu":0.5,"memory":"1024Mi"}}')"
  want_code 201
  expect_eq "cpu 0.5 by JSON" \
    "$(k get pod half-json -n free -o jsonpath='{.spec.containers[0].resources.requests.cpu} {.spec.containers[0].resources.requests.memory}')" \
    "500m 1Gi"
}

# -------------------------------------------------------------------- run --

for c in \
  update_cpu_strategic update_cpu_merge update_cpu_json update_cpu_put update_cpu_kubectl \
  update_bad_qty_strategic update_bad_qty_merge update_bad_qty_json update_bad_qty_put \
  create_then_patch_loop \
  update_add_container update_add_init_container update_add_overhead update_node_name \
  update_replace_drops_requests json_patch_kind_secret \
  create_qty_abc create_qty_negative create_qty_nan create_qty_empty create_cpu_gi \
  create_gpu_fraction create_requests_above_limits create_gpu_requests_not_limits \
  limitrange_default_below_request \
  type_labels_array type_labels_number type_cpu_bool type_node_name_number \
  type_quota_spec_string type_quota_hard_array type_quota_hard_string \
  type_quota_hard_put_string type_quota_hard_merge_array type_quota_hard_strategic_string \
  strict_kubectl_create strict_kubectl_validate_false strict_post_warn strict_post_strict \
  strict_put_strict strict_put_warn strict_patch_strategic strict_patch_merge strict_patch_json \
  strict_patch_warn_each_type \
  canonical_quota canonical_pod; do
  run_case "$c"
done

# The server survived all of it and still answers both clients.
expect_eq "alive" "$(api GET /healthz | tail -n1)" 200
clients_ok bp
stop_allotd
echo "test_bypass: ${#PASSED[@]} passed, ${#FAILED[@]} failed"
if [ ${#FAILED[@]} -gt 0 ]; then
  fail "failed cases: ${FAILED[*]}"
fi
echo "test_bypass: ok"
