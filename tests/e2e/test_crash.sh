# test_crash.sh - kill -9 during a burst of concurrent creates, restart:
# every acknowledged object is there, nothing is half-written, and a watch
# resumes from a resourceVersion taken before the crash.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
start_allotd
P=/api/v1/namespaces/crash/configmaps
api POST /api/v1/namespaces -H 'Content-Type: application/json' \
  --data '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"crash"}}' >/dev/null
rv_before=$(api GET $P | sed '$d' | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])')

export CA="$E2E_DIR/data/ca.crt" ALLOT_TOKEN ALLOT_URL P
create_one() {
  curl -sS --max-time 10 --cacert "$CA" -H "Authorization: Bearer $ALLOT_TOKEN" \
    -H 'Content-Type: application/json' -o /dev/null -w "%{http_code} $1\n" \
    --data "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-$1\"},\"data\":{\"n\":\"$1\"}}" \
    "$ALLOT_URL$P" 2>/dev/null || echo "000 $1"
}
export -f create_one
(seq 1 3000 | xargs -P 16 -I{} bash -c 'create_one {}' >"$E2E_DIR/acks") &
burst=$!
wait_until 60 bash -c "[ \$(grep -c '^201' '$E2E_DIR/acks') -ge 300 ]" || fail "burst too slow"
kill9_allotd
wait $burst || true
acked=$(grep -c '^201' "$E2E_DIR/acks")
echo "acknowledged before the crash: $acked"

start_allotd
api GET $P | sed '$d' >"$E2E_DIR/list.json"
/usr/bin/python3 - "$E2E_DIR/list.json" "$E2E_DIR/acks" <<'PY'
import json, sys
items = json.load(open(sys.argv[1]))["items"]
stored = {}
for it in items:
    name = it["metadata"]["name"]
    if name == "kube-root-ca.crt":  # every namespace's, not the burst's
        continue
    assert it["data"]["n"] == name[3:], f"half-written object {name}"
    assert it["metadata"]["uid"] and it["metadata"]["resourceVersion"], name
    stored[name] = it
acked = {f"cm-{l.split()[1]}" for l in open(sys.argv[2]) if l.startswith("201 ")}
missing = acked - set(stored)
assert not missing, f"{len(missing)} acknowledged objects lost, e.g. {sorted(missing)[:5]}"
print(f"stored {len(stored)}, acknowledged {len(acked)}, all acknowledged present")
PY

# a watch from before the crash resumes: it replays creates, no 410
r=$(api GET "$P?watch=true&resourceVersion=$rv_before&timeoutSeconds=2")
events=$(sed '$d' <<<"$r")
grep -q '"type":"ERROR"' <<<"$events" && fail "watch after restart errored: $(head -c 300 <<<"$events")"
n=$(grep -c '"type":"ADDED"' <<<"$events" || true)
[ "$n" -ge "$acked" ] || fail "resumed watch replayed $n ADDED events, want at least $acked"

stop_allotd
echo "test_crash: ok"
