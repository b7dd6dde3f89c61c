# test_pod_resize.sh - pods/resize (in-place vertical scaling) under quota:
# an increase is checked and charged, an increase past hard is refused with
# upstream's 403, a decrease is released at once (used always equals a
# recount: the periodic recount finds no drift), and only cpu/memory move.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
start_allotd --resource-quota-sync-period 1s
metric() { api GET /metrics | sed '$d' | awk -v m="$1" '$1 == m {print $2}'; }
used() { k get quota q -o jsonpath='{.status.used.requests\.cpu}'; }

k create quota q --hard=requests.cpu=1,limits.cpu=2 >/dev/null
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: r}
spec:
  containers:
  - name: c
    image: nginx
    resources: {requests: {cpu: 500m, ephemeral-storage: 1Gi}, limits: {cpu: "2"}}
YAML
expect_eq "used after create" "$(used)" 500m

resize() { # resize CPU_REQUEST [EPHEMERAL] -> prints "CODE MESSAGE"
  local extra=${2:+,\"ephemeral-storage\":\"$2\"}
  api PATCH /api/v1/namespaces/default/pods/r/resize -H 'Content-Type: application/strategic-merge-patch+json' \
    --data "{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"evil\",\"resources\":{\"requests\":{\"cpu\":\"$1\"$extra}}}]}}" |
    /usr/bin/python3 -c 'import json,sys; *b,c=sys.stdin.read().split("\n"); d=json.loads("\n".join(b)); print(c, d.get("message",""))'
}
expect_eq "resize up" "$(resize 800m)" "200 "
expect_eq "used after resize up" "$(used)" 800m
expect_eq "image kept" "$(k get pod r -o jsonpath='{.spec.containers[0].image}')" nginx
expect_eq "resize past hard" "$(resize 1200m)" \
  "403 pods \"r\" is forbidden: exceeded quota: q, requested: requests.cpu=400m, used: requests.cpu=800m, limited: requests.cpu=1"
expect_eq "used after refusal" "$(used)" 800m
expect_eq "resize down" "$(resize 200m)" "200 "
expect_eq "used after resize down" "$(used)" 200m
expect_eq "other resources" "$(resize 200m 2Gi)" \
  "422 Pod \"r\" is invalid: spec: Forbidden: only cpu and memory resources are mutable"
expect_contains "discovery" "$(k get --raw /api/v1)" '"name":"pods/resize"'

# Two full recounts after the last change: usage was exact, so no drift.
start=$(metric allot_quota_resyncs_total)
wait_until 30 bash -c "[ \"\$(curl -s --cacert '$E2E_DIR/data/ca.crt' -H 'Authorization: Bearer $ALLOT_TOKEN' \
  '$ALLOT_URL/metrics' | awk '\$1==\"allot_quota_resyncs_total\"{print \$2}')\" -ge $((start + 2)) ]" ||
  fail "no periodic recount"
expect_eq "drift" "$(metric allot_quota_drift_corrections_total)" 0
expect_eq "used after recount" "$(used)" 200m
stop_allotd
echo "test_pod_resize: ok"
