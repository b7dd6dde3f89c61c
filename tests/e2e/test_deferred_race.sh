# test_deferred_race.sh - no over-commit under any interleaving (deferred quota):
# 32 clients create 2,000 pods of mixed cpu across 20 namespaces with quotas
# while the scheduler binds, another client posts direct bindings and deletes
# pods at random, and a sampler checks that no quota's used exceeds its hard.
# At the end the stored usage equals a recount (no drift) and the pods.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
LOADGEN="$(dirname "$ALLOTD")/loadgen"
[ -x "$LOADGEN" ] || fail "loadgen not built next to allotd ($LOADGEN)"
start_allotd --feature-gates=DeferredResourceQuota=true --resource-quota-sync-period 2s

post() { api POST "$1" -H 'Content-Type: application/json' --data "$2" >/dev/null; }
for n in 1 2 3 4; do
  post /api/v1/nodes "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n$n\"},\"status\":{\"allocatable\":{\"cpu\":\"64\",\"memory\":\"256Gi\",\"pods\":\"500\"},\"capacity\":{\"cpu\":\"64\",\"memory\":\"256Gi\",\"pods\":\"500\"}}}"
done
for i in $(seq 0 19); do
  post /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"race-$i\"}}"
  post /api/v1/namespaces/race-$i/resourcequotas \
    "{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"q\"},\"spec\":{\"hard\":{\"requests.cpu\":\"3\",\"limits.cpu\":\"3\",\"pods\":\"1000\"}}}"
done

export CA="$E2E_DIR/data/ca.crt" ALLOT_TOKEN ALLOT_URL
stop_file="$E2E_DIR/stop"
# chaos: direct bindings and deletes of random pods, bounded in count
chaos() {
  for _ in $(seq 1 400); do
    [ -e "$stop_file" ] && break
    ns=race-$((RANDOM % 20)); pod=p-$((RANDOM % 2000)); node=n$((RANDOM % 4 + 1))
    if [ $((RANDOM % 3)) -eq 0 ]; then
      curl -s -o /dev/null --cacert "$CA" -H "Authorization: Bearer $ALLOT_TOKEN" -X DELETE \
        "$ALLOT_URL/api/v1/namespaces/$ns/pods/$pod" || true
    else
      curl -s -o /dev/null --cacert "$CA" -H "Authorization: Bearer $ALLOT_TOKEN" -H 'Content-Type: application/json' \
        --data "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"$pod\"},\"target\":{\"kind\":\"Node\",\"name\":\"$node\"}}" \
        "$ALLOT_URL/api/v1/namespaces/$ns/pods/$pod/binding" || true
    fi
  done
}
sample() {
  for _ in $(seq 1 200); do
    [ -e "$stop_file" ] && break
    curl -s --cacert "$CA" -H "Authorization: Bearer $ALLOT_TOKEN" "$ALLOT_URL/api/v1/resourcequotas" >"$E2E_DIR/sample.json"
    /usr/bin/python3 - "$E2E_DIR/sample.json" <<'PY' || { touch "$E2E_DIR/overcommit"; break; }
import json, sys
def milli(v):
    v = str(v); return int(v[:-1]) if v.endswith("m") else int(float(v) * 1000)
for q in json.load(open(sys.argv[1]))["items"]:
    used, hard = q["status"].get("used", {}), q["status"]["hard"]
    for k in ("requests.cpu", "limits.cpu"):
        if milli(used.get(k, "0")) > milli(hard[k]):
            print(f"OVERCOMMIT {q['metadata']['namespace']}: {k} used {used[k]} > hard {hard[k]}"); sys.exit(1)
PY
  done
}
chaos & c1=$!
sample & s1=$!
"$LOADGEN" --data-dir "$E2E_DIR/data" --url "$ALLOT_URL" --connections 32 --requests 2000 \
  --namespaces 20 --ns-prefix race --cpu-mix 1 || true
wait $c1
touch "$stop_file"
wait $s1
[ -e "$E2E_DIR/overcommit" ] && fail "a sampled quota exceeded its hard limit"

# quiesce: wait for a recount after everything settled, then no drift
metric() { api GET /metrics | sed '$d' | awk -v m="$1" '$1 == m {print $2}'; }
before=$(metric allot_quota_resyncs_total)
wait_until 30 bash -c "[ \$(curl -s --cacert '$CA' -H 'Authorization: Bearer $ALLOT_TOKEN' '$ALLOT_URL/metrics' | awk '\$1==\"allot_quota_resyncs_total\"{print \$2}') -ge $((before + 2)) ]" \
  || fail "no recount after the burst"
expect_eq "drift" "$(metric allot_quota_drift_corrections_total)" 0

api GET /api/v1/pods | sed '$d' >"$E2E_DIR/pods.json"
api GET /api/v1/resourcequotas | sed '$d' >"$E2E_DIR/quotas.json"
/usr/bin/python3 - "$E2E_DIR/pods.json" "$E2E_DIR/quotas.json" <<'PY'
import json, sys, collections
def milli(v):
    v = str(v); return int(v[:-1]) if v.endswith("m") else int(float(v) * 1000)
pods = json.load(open(sys.argv[1]))["items"]
req, n = collections.Counter(), collections.Counter()
for p in pods:
    ns = p["metadata"]["namespace"]
    if not ns.startswith("race-") or p["status"].get("phase") in ("Succeeded", "Failed"):
        continue
    n[ns] += 1
    if p["spec"].get("nodeName"):
        req[ns] += sum(milli(c["resources"]["requests"]["cpu"]) for c in p["spec"]["containers"])
bound = 0
for q in json.load(open(sys.argv[2]))["items"]:
    ns, used, hard = q["metadata"]["namespace"], q["status"]["used"], q["status"]["hard"]
    assert milli(used["requests.cpu"]) == req[ns], f"{ns}: used {used['requests.cpu']} != bound pods {req[ns]}m"
    assert milli(used["requests.cpu"]) <= milli(hard["requests.cpu"]), f"{ns}: over hard"
    assert int(used["pods"]) == n[ns], f"{ns}: used pods {used['pods']} != {n[ns]}"
    bound += req[ns]
print(f"{len(pods)} pods; bound cpu across namespaces {bound}m; usage equals pods and recount")
PY
stop_allotd
echo "test_deferred_race: ok"
