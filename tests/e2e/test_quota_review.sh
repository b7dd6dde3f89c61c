# test_quota_review.sh - "would this fit, and if not, which quota stops it?"
# A QuotaReview (POST /apis/allot.dev/v1/quotareviews, reached with
# `kubectl create --raw`) names each quota, pool and custom quota a manifest
# would meet, with its usage before and after and the decision with the exact
# message the write gets, and changes nothing; `kubectl create --dry-run=server`
# prints the same as warnings.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl
cat >"$E2E_DIR/tokens.csv" <<'EOF'
viewer-token,viewer,viewer-uid
EOF
start_allotd --token-auth-file "$E2E_DIR/tokens.csv" --scheduler=false --node-agent=false \
  --feature-gates=DeferredResourceQuota=true

k create namespace team >/dev/null
# (quota at admission here, as upstream; namespace "later" defers it)
k label namespace team capsule.clastix.io/tenant=solar quota.allot.dev/mode=admission >/dev/null
k apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute, namespace: team}
spec: {hard: {requests.cpu: "1", pods: "10"}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: memory, namespace: team}
spec: {hard: {requests.memory: 1Gi}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: objects, namespace: team}
spec: {hard: {count/configmaps: "5"}}
---
apiVersion: capsule.clastix.io/v1beta2
kind: CustomQuota
metadata: {name: pod-count, namespace: team}
spec:
  limit: 3
  sources: [{group: "", kind: Pod, op: count, version: v1}]
---
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePool
metadata: {name: solar-pool}
spec:
  quota: {hard: {requests.cpu: "4"}}
  selectors:
  - matchLabels: {capsule.clastix.io/tenant: solar}
---
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePoolClaim
metadata: {name: first, namespace: team}
spec: {pool: solar-pool, claim: {requests.cpu: "3"}}
EOF
pod_yaml() { # NAME CPU MEMORY
  printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: team}\nspec:\n  containers:\n  - {name: c, image: nginx, resources: {requests: {cpu: "%s", memory: %s}}}\n' "$1" "$2" "$3"
}
pod_yaml small 200m 100Mi | k create -f - >/dev/null

# review FILE: the QuotaReview of the manifest in FILE, as JSON.
review() {
  /usr/bin/python3 -c 'import json,sys; print(json.dumps({"apiVersion":"allot.dev/v1",
    "kind":"QuotaReview","spec":{"manifest":open(sys.argv[1]).read()}}))' "$1" >"$E2E_DIR/review.json"
  k create --raw /apis/allot.dev/v1/quotareviews -f "$E2E_DIR/review.json"
}
# field JSON PYEXPR: evaluate PYEXPR on the parsed review `r`.
field() { /usr/bin/python3 -c "import json,sys; r=json.load(sys.stdin); print($2)" <<<"$1"; }
versions() { k get resourcequota,customquota,resourcepool -A -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.resourceVersion} {end}'; }

# ---- a pod that one of three quotas denies ----
pod_yaml big 2 100Mi >"$E2E_DIR/big.yaml"
before=$(versions)
out=$(review "$E2E_DIR/big.yaml")
if k create -f "$E2E_DIR/big.yaml" 2>"$E2E_DIR/create.err"; then fail "big pod created"; fi
real=$(sed -n 's/^Error from server (Forbidden): error when creating "[^"]*": //p' "$E2E_DIR/create.err")
expect_contains "real denial" "$real" "exceeded quota: compute"
expect_eq "review decision" "$(field "$out" 'r["status"]["allowed"], r["status"]["code"], r["status"]["reason"]')" \
  "False 403 Forbidden"
expect_eq "review message is the write's" "$(field "$out" 'r["status"]["message"]')" "$real"
expect_eq "Status object" "$(field "$out" 'r["status"]["status"]["message"] == r["status"]["message"]')" True
quotas=$(field "$out" '" ".join("%s/%s:%s" % (q["kind"], q["name"], q["allowed"]) for q in r["status"]["quotas"])')
expect_eq "quotas that apply" "$quotas" \
  "ResourceQuota/capsule-pool-solar-pool:True ResourceQuota/compute:False ResourceQuota/memory:True CustomQuota/pod-count:True"
expect_eq "the denying quota's message" \
  "$(field "$out" '[q["message"] for q in r["status"]["quotas"] if q["name"]=="compute"][0]')" \
  "exceeded quota: compute, requested: requests.cpu=2, used: requests.cpu=200m, limited: requests.cpu=1"
expect_eq "before and after" \
  "$(field "$out" '[(x["name"],x["used"],x["requested"],x["after"],x["hard"],x["exceeded"]) for q in r["status"]["quotas"] if q["name"]=="compute" for x in q["resources"]]')" \
  "[('pods', '1', '1', '2', '10', False), ('requests.cpu', '200m', '2', '2200m', '1', True)]"
expect_eq "a pool's quota says so" \
  "$(field "$out" '[q.get("pool") for q in r["status"]["quotas"] if q["name"]=="capsule-pool-solar-pool"][0]')" solar-pool
expect_eq "custom quota" \
  "$(field "$out" '[(x["used"],x["requested"],x["after"],x["hard"]) for q in r["status"]["quotas"] if q["kind"]=="CustomQuota" for x in q["resources"]]')" \
  "[('1', '1', '2', '3')]"
expect_eq "nothing changed (resourceVersions)" "$(versions)" "$before"
if k get pod big -n team >/dev/null 2>&1; then fail "the review created the pod"; fi

# ---- the same from kubectl create --dry-run=server: warnings, then the error ----
if k create --dry-run=server -f "$E2E_DIR/big.yaml" 2>"$E2E_DIR/dry.err"; then fail "dry run allowed"; fi
grep_all -F "Warning: ResourceQuota team/compute: pods 1 + 1 = 2 of 10; requests.cpu 200m + 2 = 2200m of 1 (exceeded)" "$E2E_DIR/dry.err" ||
  fail "dry-run warnings: $(cat "$E2E_DIR/dry.err")"
grep_all -F "Warning: CustomQuota team/pod-count: usage 1 + 1 = 2 of 3" "$E2E_DIR/dry.err" ||
  fail "dry-run custom quota warning: $(cat "$E2E_DIR/dry.err")"
grep_all -F "$real" "$E2E_DIR/dry.err" || fail "dry-run error: $(cat "$E2E_DIR/dry.err")"
expect_eq "dry run changed nothing" "$(versions)" "$before"

# ---- a pod that fits: allowed, with the usage it would leave ----
pod_yaml fits 500m 100Mi >"$E2E_DIR/fits.yaml"
out=$(review "$E2E_DIR/fits.yaml")
expect_eq "fits" "$(field "$out" 'r["status"]["allowed"], all(q["allowed"] for q in r["status"]["quotas"])')" "True True"
expect_eq "fits: memory after" \
  "$(field "$out" '[x["after"] for q in r["status"]["quotas"] if q["name"]=="memory" for x in q["resources"]]')" "['200Mi']"
out=$(k create --dry-run=server -f "$E2E_DIR/fits.yaml" -o name 2>&1)
expect_contains "dry run answers the object" "$out" "pod/fits"
expect_contains "dry run warns" "$out" "Warning: ResourceQuota team/compute: pods 1 + 1 = 2 of 10; requests.cpu 200m + 500m = 700m of 1"

# ---- a claim: the pool's allocation before and after, and the outcome ----
cat >"$E2E_DIR/claim.yaml" <<'EOF'
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePoolClaim
metadata: {name: second, namespace: team}
spec: {pool: solar-pool, claim: {requests.cpu: "2"}}
EOF
out=$(review "$E2E_DIR/claim.yaml")
expect_eq "claim review" "$(field "$out" '[(q["name"], q["outcome"].split(":")[0], [(x["used"],x["after"],x["hard"],x["exceeded"]) for x in q["resources"]]) for q in r["status"]["quotas"]]')" \
  "[('solar-pool', 'Queued', [('3', '5', '4', True)])]"
expect_eq "claim review allowed (it queues)" "$(field "$out" 'r["status"]["allowed"]')" True
if k get resourcepoolclaim second -n team >/dev/null 2>&1; then fail "the review created the claim"; fi

# ---- Update: the stored object replaced (a bound claim cannot change) ----
cat >"$E2E_DIR/shrink.yaml" <<'EOF'
apiVersion: capsule.clastix.io/v1beta2
kind: ResourcePoolClaim
metadata: {name: first, namespace: team}
spec: {pool: solar-pool, claim: {requests.cpu: "1"}}
EOF
/usr/bin/python3 -c 'import json,sys; print(json.dumps({"apiVersion":"allot.dev/v1","kind":"QuotaReview",
  "spec":{"operation":"Update","manifest":open(sys.argv[1]).read()}}))' "$E2E_DIR/shrink.yaml" >"$E2E_DIR/u.json"
out=$(k create --raw /apis/allot.dev/v1/quotareviews -f "$E2E_DIR/u.json")
if k replace -f "$E2E_DIR/shrink.yaml" 2>"$E2E_DIR/replace.err"; then fail "bound claim changed"; fi
real=$(sed -n 's/^Error from server (Forbidden): error when replacing "[^"]*": //p' "$E2E_DIR/replace.err")
expect_contains "real refusal" "$real" "cannot change the requested resources"
expect_eq "update review" "$(field "$out" 'r["status"]["allowed"], r["status"]["message"]')" "False $real"
expect_eq "update changed nothing" "$(versions)" "$before"

# ---- deferred quota: admitted, but would wait Pending on the quota ----
k create namespace later >/dev/null
k create quota compute -n later --hard=requests.cpu=1 >/dev/null
sed 's/namespace: team/namespace: later/' "$E2E_DIR/big.yaml" >"$E2E_DIR/later.yaml"
out=$(review "$E2E_DIR/later.yaml")
expect_eq "deferred: admitted" "$(field "$out" 'r["status"]["allowed"]')" True
expect_eq "deferred: would wait" "$(field "$out" 'r["status"]["quotas"][0]["outcome"]')" \
  "would wait Pending: exceeded quota: compute, requested: requests.cpu=2, used: requests.cpu=0, limited: requests.cpu=1"
# what the bind would charge: the compute usage, past the hard that holds the pod
expect_eq "deferred: the bind's charge" "$(field "$out" '[(x["name"], x["used"], x["requested"], x["after"], x["hard"], x["exceeded"]) for x in r["status"]["quotas"][0]["resources"]]')" \
  "[('requests.cpu', '0', '2', '2', '1', True)]"
out=$(k create --dry-run=server -f "$E2E_DIR/later.yaml" 2>&1)
expect_contains "deferred dry-run warning" "$out" \
  "Warning: ResourceQuota later/compute: requests.cpu 0 + 2 = 2 of 1 (exceeded); would wait Pending: exceeded quota: compute"

# ---- wrong requests: upstream-style 4xx ----
post() { api POST "$1" -H 'Content-Type: application/json' --data "$2" | tail -1; }
expect_eq "unknown kind" "$(post /apis/allot.dev/v1/quotareviews \
  '{"kind":"QuotaReview","apiVersion":"allot.dev/v1","spec":{"object":{"apiVersion":"v1","kind":"Nope","metadata":{"name":"x"}}}}')" 400
body=$(api POST /apis/allot.dev/v1/quotareviews -H 'Content-Type: application/json' --data \
  '{"kind":"QuotaReview","apiVersion":"allot.dev/v1","spec":{"object":{"apiVersion":"v1","kind":"Nope","metadata":{"name":"x"}}}}')
expect_contains "unknown kind message" "$body" 'no matches for kind \"Nope\" in version \"v1\"'
expect_eq "no object" "$(post /apis/allot.dev/v1/quotareviews '{"kind":"QuotaReview","spec":{}}')" 400
expect_eq "not JSON" "$(post /apis/allot.dev/v1/quotareviews '{{{')" 400
expect_eq "wrong kind" "$(post /apis/allot.dev/v1/quotareviews '{"kind":"Pod","apiVersion":"v1"}')" 400
expect_eq "mistyped object" "$(post /apis/allot.dev/v1/quotareviews \
  '{"spec":{"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","namespace":"team"},"spec":{"containers":"no"}}}}')" 400
expect_eq "namespace mismatch" "$(post /apis/allot.dev/v1/namespaces/other/quotareviews \
  '{"spec":{"object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"team"}}}}')" 400
expect_eq "namespaced path" "$(post /apis/allot.dev/v1/namespaces/team/quotareviews \
  '{"spec":{"object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}}}')" 201
expect_eq "GET" "$(api GET /apis/allot.dev/v1/quotareviews | tail -1)" 405

# ---- only for those who may create the object ----
review "$E2E_DIR/big.yaml" >/dev/null # (leaves its request in review.json)
if out=$(k --token viewer-token create --raw /apis/allot.dev/v1/quotareviews -f "$E2E_DIR/review.json" 2>&1); then
  fail "a user without create rights got a review: $out"
fi
expect_contains "forbidden" "$out" 'User "viewer" cannot create resource "pods" in API group "" in the namespace "team"'
stop_allotd
echo "test_quota_review: ok"
