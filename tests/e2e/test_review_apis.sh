# test_review_apis.sh - the review APIs in discovery and served, with the
# real kubectl: `kubectl api-resources` runs without an error and lists
# tokenreviews, subjectaccessreviews, selfsubjectaccessreviews,
# selfsubjectrulesreviews, localsubjectaccessreviews, selfsubjectreviews and
# allot's quotareviews with the verb create only, as upstream; TokenReview
# (for a system:auth-delegator) and LocalSubjectAccessReview answer as
# upstream's do.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl

start_allotd
D="$E2E_DIR/data"

out=$(k api-resources -o wide 2>"$E2E_DIR/err") || fail "kubectl api-resources failed: $(cat "$E2E_DIR/err")"
[ ! -s "$E2E_DIR/err" ] || fail "kubectl api-resources printed errors: $(cat "$E2E_DIR/err")"
for r in "tokenreviews authentication.k8s.io/v1 false TokenReview" \
  "selfsubjectreviews authentication.k8s.io/v1 false SelfSubjectReview" \
  "localsubjectaccessreviews authorization.k8s.io/v1 true LocalSubjectAccessReview" \
  "selfsubjectaccessreviews authorization.k8s.io/v1 false SelfSubjectAccessReview" \
  "selfsubjectrulesreviews authorization.k8s.io/v1 false SelfSubjectRulesReview" \
  "subjectaccessreviews authorization.k8s.io/v1 false SubjectAccessReview" \
  "quotareviews allot.dev/v1 false QuotaReview"; do
  row=$(awk -v n="${r%% *}" '$1 == n' <<<"$out" | tr -s ' ' | sed 's/ *$//')
  expect_eq "api-resources row" "$row" "$r create"
done
# kubectl's own use of discovery: create verbs, group filter
expect_eq "authorization group" "$(k api-resources --api-group=authorization.k8s.io --no-headers -o name | sort | tr '\n' ' ')" \
  "localsubjectaccessreviews.authorization.k8s.io selfsubjectaccessreviews.authorization.k8s.io selfsubjectrulesreviews.authorization.k8s.io subjectaccessreviews.authorization.k8s.io "
# a list of a create-only resource is refused as upstream refuses it
if k get tokenreviews 2>"$E2E_DIR/err"; then fail "tokenreviews listed"; fi
expect_contains "no list" "$(cat "$E2E_DIR/err")" "the server does not allow this method on the requested resource"

# ---- TokenReview ----
k create namespace t >/dev/null
k create serviceaccount webhook -n t >/dev/null
k create clusterrolebinding webhook-delegator --clusterrole=system:auth-delegator \
  --serviceaccount=t:webhook >/dev/null
sa_token=$(k create token webhook -n t)
review() { printf 'apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec:\n  token: "%s"\n%s' "$1" "${2:-}"; }
# the delegated component asks who the admin token is
got=$(review "$ALLOT_TOKEN" | k --token "$sa_token" create -f - -o jsonpath='{.status.authenticated} {.status.user.username} {.status.user.groups} {.status.audiences}')
expect_eq "admin token" "$got" 'true admin ["system:masters","system:authenticated"] ["https://kubernetes.default.svc.cluster.local"]'
got=$(review "$sa_token" | k create -f - -o jsonpath='{.status.authenticated} {.status.user.username} {.status.user.groups}')
expect_eq "SA token" "$got" 'true system:serviceaccount:t:webhook ["system:serviceaccounts","system:serviceaccounts:t","system:authenticated"]'
# a token for another audience than the API server's does not authenticate as one
got=$(review "$sa_token" "  audiences: [vault]" | k create -f - -o json)
expect_contains "SA token, other audience" "$got" '"status": {
        "user": {}
    }'
got=$(review "not-a-token" | k create -f - -o jsonpath='{.status}')
expect_eq "unknown token" "$got" '{"user":{}}'
if review "" | k create -f - 2>"$E2E_DIR/err" >/dev/null; then fail "empty token accepted"; fi
expect_contains "empty token" "$(cat "$E2E_DIR/err")" "token is required for TokenReview in authentication"
# a tenant may not ask
k create rolebinding t-admin --clusterrole=admin --serviceaccount=t:tenant -n t >/dev/null
k create serviceaccount tenant -n t >/dev/null
if review "$ALLOT_TOKEN" | k --token "$(k create token tenant -n t)" create -f - 2>"$E2E_DIR/err" >/dev/null; then
  fail "a tenant reviewed a token"
fi
expect_contains "tenant forbidden" "$(cat "$E2E_DIR/err")" \
  'tokenreviews.authentication.k8s.io is forbidden: User "system:serviceaccount:t:tenant" cannot create resource "tokenreviews" in API group "authentication.k8s.io" at the cluster scope'

# ---- LocalSubjectAccessReview: a namespace admin asks about her namespace ----
lsar() { printf 'apiVersion: authorization.k8s.io/v1\nkind: LocalSubjectAccessReview\nmetadata: {namespace: %s}\nspec:\n  user: system:serviceaccount:t:tenant\n  resourceAttributes: {namespace: %s, verb: create, group: batch, resource: jobs}\n' "$1" "$2"; }
TT=$(k create token tenant -n t)
expect_eq "tenant may create jobs" "$(lsar t t | k --token "$TT" create -f - -o jsonpath='{.status.allowed}')" true
if lsar t other | k --token "$TT" create -f - 2>"$E2E_DIR/err" >/dev/null; then fail "another namespace accepted"; fi
expect_contains "namespace mismatch" "$(cat "$E2E_DIR/err")" \
  'LocalSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace'
if lsar kube-system kube-system | k --token "$TT" create -f - 2>"$E2E_DIR/err" >/dev/null; then fail "review outside her namespace"; fi
expect_contains "other namespace forbidden" "$(cat "$E2E_DIR/err")" \
  'cannot create resource "localsubjectaccessreviews" in API group "authorization.k8s.io" in the namespace "kube-system"'
stop_allotd
echo "test_review_apis: ok"
