#!/usr/bin/env bash
# test_identities.sh - identities other than static tokens, with the real
# kubectl: (a) a client certificate issued by `allotd kubeconfig` for a
# tenant admin (user = CN, groups = O), refused when signed by another CA or
# expired; (b) ServiceAccount tokens from the TokenRequest API (`kubectl
# create token`): their user and groups, RBAC through a RoleBinding, upstream's
# duration rules, a foreign audience refused, and revocation by deleting the
# ServiceAccount.
source "$(dirname "$0")/lib.sh"
need_kubectl
start_allotd --scheduler=false --node-agent=false
D=$E2E_DIR/data

# expect_refused WHAT CMD...: the command fails with a 401.
expect_refused() {
  local what=$1 out; shift
  if out=$("$@" 2>&1); then fail "$what: succeeded: $out"; fi
  case $out in *Unauthorized* | *"must be logged in"*) ;; *) fail "$what: not a 401: $out" ;; esac
}
# expect_forbidden WHAT NEEDLE CMD...: the command fails with a 403 containing NEEDLE.
expect_forbidden() {
  local what=$1 want=$2 out; shift 2
  if out=$("$@" 2>&1); then fail "$what: succeeded: $out"; fi
  case $out in *[Ff]orbidden*"$want"*) ;; *) fail "$what: $out (want ...$want)" ;; esac
}
code_of() { tail -1 <<<"$1"; }

k create namespace tenant-a >/dev/null
k create rolebinding tenant-a-admins --clusterrole=admin --group=tenant-a-admins -n tenant-a >/dev/null

# ---- (a) client certificates ----
"$ALLOTD" kubeconfig --data-dir "$D" --user alice --group tenant-a-admins \
  --out "$E2E_DIR/alice.kubeconfig" --days 30 2>/dev/null
expect_eq "kubeconfig mode" "$(stat -c %a "$E2E_DIR/alice.kubeconfig")" 600
grep_all -F client-certificate-data "$E2E_DIR/alice.kubeconfig"
grep_all -F client-key-data "$E2E_DIR/alice.kubeconfig"
grep -q 'token:' "$E2E_DIR/alice.kubeconfig" && fail "the certificate kubeconfig carries a token"
KA=(--kubeconfig "$E2E_DIR/alice.kubeconfig")
who=$(k "${KA[@]}" auth whoami -o jsonpath='{.status.userInfo.username} {.status.userInfo.groups}')
expect_eq "alice's whoami" "$who" 'alice ["tenant-a-admins","system:authenticated"]'
k "${KA[@]}" run web --image=nginx -n tenant-a >/dev/null
expect_eq "alice's pod" "$(k get pod web -n tenant-a -o jsonpath='{.metadata.name}')" web
expect_forbidden "alice lists kube-system's secrets" \
  'User "alice" cannot list resource "secrets" in API group "" in the namespace "kube-system"' \
  k "${KA[@]}" get secrets -n kube-system

# The subcommand refuses a directory with no CA (it never makes one).
if "$ALLOTD" kubeconfig --data-dir "$E2E_DIR/nothing" --user x --server https://127.0.0.1:1 \
  --out "$E2E_DIR/x.kubeconfig" 2>/dev/null; then
  fail "allotd kubeconfig made a certificate without a CA"
fi
[ ! -e "$E2E_DIR/nothing/ca.crt" ] || fail "allotd kubeconfig created a CA"

# A certificate from another CA (claiming system:masters) is refused: with
# curl, which presents it, and with kubectl (Go does not even send a
# certificate the server's CA list does not name: anonymous, so 401 too).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
  -keyout "$E2E_DIR/mallory.key" -out "$E2E_DIR/mallory.crt" \
  -subj "/CN=mallory/O=system:masters" 2>/dev/null
out=$(curl -sS --cacert "$D/ca.crt" --cert "$E2E_DIR/mallory.crt" --key "$E2E_DIR/mallory.key" \
  -w '\n%{http_code}' "$ALLOT_URL/api/v1/namespaces")
expect_eq "foreign-CA certificate" "$(code_of "$out")" 401
: >"$E2E_DIR/empty.kubeconfig"
expect_refused "foreign-CA certificate with kubectl" \
  k --kubeconfig "$E2E_DIR/empty.kubeconfig" --server "$ALLOT_URL" --certificate-authority "$D/ca.crt" \
  --client-certificate "$E2E_DIR/mallory.crt" --client-key "$E2E_DIR/mallory.key" get namespaces
# An expired certificate signed by allotd's own CA is refused.
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout "$E2E_DIR/old.key" -out "$E2E_DIR/old.csr" -subj "/CN=old/O=system:masters" 2>/dev/null
printf 'extendedKeyUsage=clientAuth\n' >"$E2E_DIR/ext.cnf"
openssl x509 -req -in "$E2E_DIR/old.csr" -CA "$D/ca.crt" -CAkey "$D/ca.key" -CAcreateserial \
  -days -1 -extfile "$E2E_DIR/ext.cnf" -out "$E2E_DIR/old.crt" 2>/dev/null
out=$(curl -sS --cacert "$D/ca.crt" --cert "$E2E_DIR/old.crt" --key "$E2E_DIR/old.key" \
  -w '\n%{http_code}' "$ALLOT_URL/api/v1/namespaces")
expect_eq "expired certificate" "$(code_of "$out")" 401
# allotd's serving certificate is not for clients (no clientAuth usage).
out=$(curl -sS --cacert "$D/ca.crt" --cert "$D/server.crt" --key "$D/server.key" \
  -w '\n%{http_code}' "$ALLOT_URL/api/v1/namespaces")
expect_eq "serving certificate as a client's" "$(code_of "$out")" 401
# A refused certificate is no identity, but a valid token alongside still is
# (upstream's union authenticator tries each).
out=$(api GET /api/v1/namespaces --cert "$E2E_DIR/mallory.crt" --key "$E2E_DIR/mallory.key")
expect_eq "foreign certificate with the admin token" "$(code_of "$out")" 200

# ---- (b) ServiceAccount tokens ----
k create sa builder -n tenant-a >/dev/null
k create rolebinding builder-view --clusterrole=view --serviceaccount=tenant-a:builder \
  -n tenant-a >/dev/null
TOK=$(k create token builder -n tenant-a)
case $TOK in eyJ*.*.*) ;; *) fail "not a JWT: ${TOK:0:12}..." ;; esac
KB=(--token "$TOK")
who=$(k "${KB[@]}" auth whoami -o jsonpath='{.status.userInfo.username} {.status.userInfo.groups}')
expect_eq "builder's whoami" "$who" \
  'system:serviceaccount:tenant-a:builder ["system:serviceaccounts","system:serviceaccounts:tenant-a","system:authenticated"]'
uid=$(k get sa builder -n tenant-a -o jsonpath='{.metadata.uid}')
expect_eq "builder's uid" "$(k "${KB[@]}" auth whoami -o jsonpath='{.status.userInfo.uid}')" "$uid"
expect_eq "builder lists pods" "$(k "${KB[@]}" get pods -n tenant-a -o name)" pod/web
expect_forbidden "builder creates a pod" \
  'User "system:serviceaccount:tenant-a:builder" cannot create resource "pods"' \
  k "${KB[@]}" run other --image=nginx -n tenant-a

# The TokenRequest as upstream answers it: default 1h, the API audience.
tr=$(api POST /api/v1/namespaces/tenant-a/serviceaccounts/builder/token \
  -H 'Content-Type: application/json' -d '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}')
expect_eq "TokenRequest code" "$(code_of "$tr")" 201
/usr/bin/python3 - "$(head -n -1 <<<"$tr")" <<'EOF'
import datetime, json, sys
tr = json.loads(sys.argv[1])
assert tr["kind"] == "TokenRequest" and tr["apiVersion"] == "authentication.k8s.io/v1", tr
assert tr["spec"]["expirationSeconds"] == 3600, tr["spec"]
assert tr["spec"]["audiences"] == ["https://kubernetes.default.svc.cluster.local"], tr["spec"]
assert tr["metadata"]["name"] == "builder" and tr["metadata"]["namespace"] == "tenant-a"
exp = datetime.datetime.strptime(tr["status"]["expirationTimestamp"], "%Y-%m-%dT%H:%M:%SZ")
left = (exp.replace(tzinfo=datetime.timezone.utc) - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
assert 3500 < left <= 3600, left
assert tr["status"]["token"].count(".") == 2
EOF

# Durations: upstream refuses less than 10 minutes (422), shortens more than
# the maximum (24h here) with a warning.
out=$(k create token builder -n tenant-a --duration 1s 2>&1) && fail "--duration 1s accepted"
expect_contains "--duration 1s" "$out" \
  'spec.expirationSeconds: Invalid value: 1: may not specify a duration less than 10 minutes'
out=$(k create token builder -n tenant-a --duration 48h 2>&1 >/dev/null)
expect_contains "--duration 48h" "$out" \
  'requested expiration of 172800 seconds shortened to 86400 seconds'
# An account that does not exist: 404; no right to create tokens: 403.
out=$(k create token nobody -n tenant-a 2>&1) && fail "token for a missing account"
expect_contains "missing account" "$out" 'serviceaccounts "nobody" not found'
expect_forbidden "builder asks for tokens" 'cannot create resource "serviceaccounts/token"' \
  k "${KB[@]}" create token builder -n tenant-a

# Another audience's token is not for this server; nor is a tampered one.
AUD=$(k create token builder -n tenant-a --audience https://vault.example)
expect_refused "token for another audience" k --token "$AUD" get pods -n tenant-a
expect_refused "tampered token" k --token "${TOK%?????}AAAAA" get pods -n tenant-a

# Bound to the ServiceAccount: deleting it revokes its tokens, and a
# re-created account of the same name (new uid) does not revive them.
k delete sa builder -n tenant-a >/dev/null
expect_refused "token of a deleted account" k "${KB[@]}" get pods -n tenant-a
k create sa builder -n tenant-a >/dev/null
expect_refused "token of a re-created account" k "${KB[@]}" get pods -n tenant-a
NEW=$(k create token builder -n tenant-a)
expect_eq "new token lists pods" "$(k --token "$NEW" get pods -n tenant-a -o name)" pod/web

# No token reaches the log or the audit log.
for f in "$E2E_DIR/allotd.log" "$D/audit.log"; do
  for t in "$TOK" "$NEW" "$AUD"; do
    if grep -qF "${t##*.}" "$f"; then fail "a token reached $f"; fi
  done
done
stop_allotd
echo "PASS test_identities"
