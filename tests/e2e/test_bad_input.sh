# test_bad_input.sh - malformed, oversized and unauthenticated requests get
# upstream-style Status errors, never a crash, and change nothing.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
start_allotd

code() { tail -n1 <<<"$1"; }
body() { sed '$d' <<<"$1"; }
P=/api/v1/namespaces/default/configmaps

# 401 without a token; health needs none
r=$(curl -sS --cacert "$E2E_DIR/data/ca.crt" -w '\n%{http_code}' "$ALLOT_URL$P")
expect_eq "no token" "$(code "$r")" 401
expect_contains "401 Status" "$(body "$r")" '"reason":"Unauthorized"'
r=$(curl -sS --cacert "$E2E_DIR/data/ca.crt" -H "Authorization: Bearer wrong" -w '\n%{http_code}' "$ALLOT_URL$P")
expect_eq "bad token" "$(code "$r")" 401
r=$(curl -sS --cacert "$E2E_DIR/data/ca.crt" -w '\n%{http_code}' "$ALLOT_URL/healthz")
expect_eq "healthz" "$(code "$r")" 200

# 400 malformed JSON, wrong shapes
r=$(api POST $P -H 'Content-Type: application/json' --data '{"kind":')
expect_eq "malformed json" "$(code "$r")" 400
expect_contains "400 Status" "$(body "$r")" '"reason":"BadRequest"'
r=$(api POST $P -H 'Content-Type: application/json' --data '[1,2]')
expect_eq "array body" "$(code "$r")" 400
r=$(api POST $P -H 'Content-Type: application/json' --data '{"apiVersion":"v1","kind":"ConfigMap","metadata":"x"}')
expect_eq "metadata of wrong type" "$(code "$r")" 400
r=$(api POST $P -H 'Content-Type: application/json' --data '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}')
expect_eq "kind of another resource" "$(code "$r")" 400
r=$(api POST $P -H 'Content-Type: application/json' --data '{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"a"}}')
expect_eq "wrong apiVersion" "$(code "$r")" 400

# 415 unsupported media type
r=$(api POST $P -H 'Content-Type: text/plain' --data 'hello')
expect_eq "text/plain" "$(code "$r")" 415
r=$(api PATCH $P/none -H 'Content-Type: application/x-foo' --data '{}')
expect_eq "unknown patch type" "$(code "$r")" 415

# 413 oversized body (4 MiB)
head -c 4194304 /dev/zero | tr '\0' 'a' >"$E2E_DIR/big"
r=$(api POST $P -H 'Content-Type: application/json' --data-binary @"$E2E_DIR/big")
expect_eq "huge body" "$(code "$r")" 413
expect_contains "413 message" "$(body "$r")" "Request entity too large: limit is 3145728"

# 422 invalid names and labels, with causes
r=$(api POST $P -H 'Content-Type: application/json' --data '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}}')
expect_eq "invalid name" "$(code "$r")" 422
expect_contains "422 message" "$(body "$r")" 'ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain'
expect_contains "422 causes" "$(body "$r")" '"field":"metadata.name"'
r=$(api POST $P -H 'Content-Type: application/json' --data '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ok","labels":{"a":"bad value!"}}}')
expect_eq "invalid label" "$(code "$r")" 422

# 404 unknown resource and missing object; 405 wrong verb
r=$(api GET /api/v1/namespaces/default/widgets)
expect_eq "unknown resource" "$(code "$r")" 404
r=$(api GET $P/absent)
expect_eq "missing object" "$(code "$r")" 404
expect_contains "404 message" "$(body "$r")" 'configmaps \"absent\" not found'
r=$(api POST $P/absent -H 'Content-Type: application/json' --data '{}')
expect_eq "POST on an item" "$(code "$r")" 405

# 409 AlreadyExists and a stale resourceVersion
cm='{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"},"data":{"a":"1"}}'
expect_eq "create" "$(code "$(api POST $P -H 'Content-Type: application/json' --data "$cm")")" 201
r=$(api POST $P -H 'Content-Type: application/json' --data "$cm")
expect_eq "already exists" "$(code "$r")" 409
expect_contains "409 reason" "$(body "$r")" '"reason":"AlreadyExists"'
r=$(api PUT $P/c1 -H 'Content-Type: application/json' --data '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1","resourceVersion":"1"},"data":{"a":"2"}}')
expect_eq "stale update" "$(code "$r")" 409
expect_contains "409 conflict" "$(body "$r")" '"reason":"Conflict"'

# nothing above changed stored data: one configmap of ours, unchanged (besides
# kube-root-ca.crt, which every namespace holds, as upstream)
r=$(api GET $P)
expect_eq "list" "$(code "$r")" 200
n=$(body "$r" | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); i=[o for o in d["items"] if o["metadata"]["name"] != "kube-root-ca.crt"]; print(len(i), i[0]["data"]["a"])')
expect_eq "stored data untouched" "$n" "1 1"

# list resourceVersion semantics: a future revision is 504, a past exact one 410
r=$(api GET "$P?resourceVersion=999999999")
expect_eq "rv in the future" "$(code "$r")" 504
expect_contains "504 message" "$(body "$r")" "Too large resource version"
r=$(api GET "$P?resourceVersion=1&resourceVersionMatch=Exact")
expect_eq "exact old rv" "$(code "$r")" 410
r=$(api GET "$P?resourceVersion=1&resourceVersionMatch=NotOlderThan")
expect_eq "not older than" "$(code "$r")" 200
r=$(api GET "$P?resourceVersion=0")
expect_eq "any rv" "$(code "$r")" 200

# dry run is evaluated, never stored
r=$(api POST "$P?dryRun=All" -H 'Content-Type: application/json' --data '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dry"}}')
expect_eq "dry run" "$(code "$r")" 201
expect_eq "dry run not stored" "$(code "$(api GET $P/dry)")" 404

# random garbage never crashes the server
for i in $(seq 1 50); do
  head -c $((RANDOM % 2000 + 1)) /dev/urandom >"$E2E_DIR/junk"
  api POST $P -H 'Content-Type: application/json' --data-binary @"$E2E_DIR/junk" >/dev/null || true
  api PATCH $P/c1 -H 'Content-Type: application/strategic-merge-patch+json' --data-binary @"$E2E_DIR/junk" >/dev/null || true
done
expect_eq "alive after fuzz" "$(code "$(api GET /healthz)")" 200

# a watch deadline far in the future is clamped, never an overflow (UBSan
# aborted the server on it); the stream opens and the client hangs up
for t in 9223372036854775807 -9223372036854775808 99999999999999999999; do
  curl -sS --cacert "$E2E_DIR/data/ca.crt" -H "Authorization: Bearer $ALLOT_TOKEN" -m 1 \
    -o /dev/null "$ALLOT_URL$P?watch=1&timeoutSeconds=$t" 2>/dev/null || true
done
expect_eq "alive after huge watch timeouts" "$(code "$(api GET /healthz)")" 200

stop_allotd
echo "test_bad_input: ok"
