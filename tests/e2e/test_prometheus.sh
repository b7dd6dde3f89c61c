# test_prometheus.sh - a real Prometheus (Debian's prometheus) scrapes
# allotd's /metrics over HTTPS with the CA and bearer token of allotd's
# kubeconfig, on loopback only, loads the rule files of deploy/prometheus,
# and a quota's usage is read back through PromQL, following a pod created
# after the first scrape.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl
command -v prometheus >/dev/null || fail "prometheus is not installed (Debian package prometheus)"
start_allotd

PROM_PID=
stop_prometheus() {
  if [ -n "$PROM_PID" ]; then kill -9 "$PROM_PID" 2>/dev/null || true; wait "$PROM_PID" 2>/dev/null || true; fi
  PROM_PID=
}
on_cleanup stop_prometheus

k create namespace prom >/dev/null
k -n prom create quota q --hard=pods=5,requests.cpu=2 >/dev/null
for i in 1 2; do
  k -n prom run "p$i" --image=busybox --restart=Never --overrides='{"spec":{"containers":[{"name":"c","image":"busybox","resources":{"requests":{"cpu":"250m"}}}]}}' >/dev/null
done

# the scrape's credentials come from the kubeconfig, as a user would take them
prom=$E2E_DIR/prometheus
mkdir -p "$prom"
k config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$prom/ca.crt"
k config view --raw -o jsonpath='{.users[0].user.token}' >"$prom/token"
chmod 600 "$prom/token"
[ -s "$prom/ca.crt" ] && [ -s "$prom/token" ] || fail "no CA or token in the kubeconfig"
root=$(cd "$here/../.." && pwd)
cat >"$prom/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $root/deploy/prometheus/*.rules.yml
scrape_configs:
  - job_name: allot
    scheme: https
    tls_config:
      ca_file: $prom/ca.crt
    authorization:
      credentials_file: $prom/token
    static_configs:
      - targets: ["127.0.0.1:$ALLOT_PORT"]
EOF
PROM_PORT=$(free_port)
prometheus --config.file="$prom/prometheus.yml" --storage.tsdb.path="$prom/tsdb" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$E2E_DIR/prometheus.log" 2>&1 &
PROM_PID=$!

# query EXPR: the PromQL instant query's first value, or nothing
query() {
  curl -sS --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
    /usr/bin/python3 -c 'import json,sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")'
}
# expect_query SECONDS EXPR WANT: the query answers WANT within SECONDS
expect_query() {
  local got=
  local deadline=$((SECONDS + $1))
  while [ $SECONDS -lt $deadline ]; do
    got=$(query "$2" 2>/dev/null || true)
    [ "$got" == "$3" ] && return 0
    sleep 0.2
  done
  tail -20 "$E2E_DIR/prometheus.log" >&2 || true
  fail "PromQL $2: got [$got], want [$3]"
}

used='allot_resourcequota{namespace="prom",resourcequota="q",resource="%s",type="used"}'
# shellcheck disable=SC2059
expect_query 60 'up{job="allot"}' 1
expect_query 30 "$(printf "$used" pods)" 2
expect_query 30 "$(printf "$used" requests.cpu)" 0.5
expect_query 30 'allot_resourcequota{namespace="prom",resourcequota="q",resource="pods",type="hard"}' 5

# live: a third pod shows within a few scrapes
k -n prom run p3 --image=busybox --restart=Never --overrides='{"spec":{"containers":[{"name":"c","image":"busybox","resources":{"requests":{"cpu":"500m"}}}]}}' >/dev/null
expect_query 30 "$(printf "$used" pods)" 3
expect_query 30 "$(printf "$used" requests.cpu)" 1
# the usage ratio the alert rules compute
expect_query 30 "100 * $(printf "$used" pods) / ignoring(type) allot_resourcequota{namespace=\"prom\",resourcequota=\"q\",resource=\"pods\",type=\"hard\"}" 60

# a denial is counted by the plugin that refused and its reason
k -n prom create quota nosecrets --hard=count/secrets=0 >/dev/null
if k -n prom create secret generic s --from-literal=a=b >/dev/null 2>&1; then fail "secret over quota created"; fi
expect_query 30 'allot_admission_decisions_total{plugin="ResourceQuota",result="denied",reason="Forbidden"}' 1
expect_query 30 'allot_admission_decisions_total{result="allowed"} > bool 5' 1

# a custom quota's books are a recount, timed
k apply -f - >/dev/null <<'EOF'
apiVersion: capsule.clastix.io/v1beta2
kind: CustomQuota
metadata:
  name: pods
  namespace: prom
spec:
  limit: "10"
  sources:
    - apiVersion: v1
      kind: Pod
      op: count
EOF
k -n prom get customquota pods >/dev/null
expect_query 30 'allot_recount_duration_seconds_count{kind="customquota"} > bool 0' 1

# one scrape with a pool, a claim and custom quotas present passes
# `promtool check metrics` (exit 0; exit 3 is lint: naming advice on
# upstream's own names, e.g. apiserver_*, is tolerated, anything else fails)
k label namespace prom pool=yes >/dev/null
k create -f - >/dev/null <<'EOF'
{"apiVersion":"capsule.clastix.io/v1beta2","kind":"ResourcePool","metadata":{"name":"prom-pool"},
 "spec":{"selectors":[{"matchLabels":{"pool":"yes"}}],"quota":{"hard":{"limits.memory":"4Gi"}}}}
EOF
k create -f - >/dev/null <<'EOF'
{"apiVersion":"capsule.clastix.io/v1beta2","kind":"ResourcePoolClaim","metadata":{"name":"c","namespace":"prom"},
 "spec":{"pool":"prom-pool","claim":{"limits.memory":"1Gi"}}}
EOF
k apply -f - >/dev/null <<'EOF'
apiVersion: capsule.clastix.io/v1beta2
kind: GlobalCustomQuota
metadata:
  name: all-pods
spec:
  limit: "100"
  sources:
    - apiVersion: v1
      kind: Pod
      op: count
EOF
expect_query 30 'count(capsule_claim_condition{name="c"})' 3
text=$(curl -sS --fail --max-time 20 --cacert "$prom/ca.crt" -H "Authorization: Bearer $(cat "$prom/token")" "$ALLOT_URL/metrics")
for fam in capsule_pool_limit capsule_claim_resource capsule_custom_quota_resource_usage \
  capsule_global_custom_quota_resource_usage allot_resourcequota allot_admission_decisions_total \
  allot_recount_duration_seconds_bucket; do
  grep_all "^$fam{" <<<"$text" || fail "scrape has no $fam"
done
rc=0
out=$(promtool check metrics <<<"$text" 2>&1) || rc=$?
case $rc in
  0) ;;
  3)
    hard=$(grep -Ev 'should not contain abbreviated units|use base unit|snake_case|suffix|should not include type' <<<"$out" || true)
    [ -z "$hard" ] || fail "promtool check metrics: $hard"
    ;;
  *) fail "promtool check metrics failed (exit $rc): $out" ;;
esac

# Prometheus loaded every rule file (four groups) and evaluates them
groups=$(curl -sS --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/rules" |
  /usr/bin/python3 -c 'import json,sys; g=json.load(sys.stdin)["data"]["groups"]; print(len(g), sum(len(x["rules"]) for x in g))')
expect_eq "rule groups and rules loaded" "$groups" "4 14"

# the scrape went over TLS with the token: without it, allotd refuses
code=$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$prom/ca.crt" "$ALLOT_URL/metrics")
expect_eq "metrics without a token" "$code" "401"

stop_prometheus
echo "PASS test_prometheus"
