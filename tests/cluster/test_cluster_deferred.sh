#!/usr/bin/env bash
# test_cluster_deferred.sh - deferred quota on a real cluster (issue 29):
# the real kube-apiserver, controller manager and kube-scheduler v1.20.2,
# the scheduler configured by `allotd scheduler-config` with allot as its
# extender, two allot replicas (the writer holds the Lease; the other
# answers the webhooks and the extender). Seed 000's example: a namespace
# labelled quota.allot.dev/mode=deferred, quota p1 (count/pods=20, cpu=2,
# memory=200Gi) whose compute limits allot's mutating webhook moves into
# the annotation allot holds them in, so the built-in admission admits
# every pod; pods of 1 cpu: two are bound and charged at bind, the third
# waits Pending with the seed's message naming p1; the book settles; when
# a bound pod is deleted the waiting one is bound (allot wakes it). A pod
# created on a node is refused; a namespace not labelled is untouched.
# Every wait is bounded. Exit 77 (skipped) without the kube binaries or etcd.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

is() { [ "$("${@:2}")" = "$1" ]; } # is WANT CMD...: CMD prints WANT

kube_up
deferred_up
ext=https://127.0.0.1:$CLUSTER_PORT/scheduler
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$E2E_DIR/tls/ca.crt" -X POST \
  -H 'Content-Type: application/json' -d '{}' "$ext/bind")
[ "$code" = 401 ] || fail "an anonymous extender call: HTTP $code, want 401"

kc create namespace team >/dev/null
kc label namespace team quota.allot.dev/mode=deferred >/dev/null
kc create namespace plain >/dev/null
# The mutating webhook's configuration reaches the API server a moment
# after allotd installed it: a quota written before that keeps its limits.
quota_moved() {
  kc apply -f - >/dev/null 2>&1 <<'EOF' || return 1
{"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "p1", "namespace": "team"},
 "spec": {"hard": {"count/pods": "20", "cpu": "2", "memory": "200Gi"}}}
EOF
  [ "$(kc get resourcequota p1 -n team -o 'jsonpath={.spec.hard}')" = '{"count/pods":"20"}' ]
}
wait_until 30 quota_moved || fail "p1's compute limits not moved: $(kc get resourcequota p1 -n team -o json)"
held=$(kc get resourcequota p1 -n team -o 'jsonpath={.metadata.annotations.quota\.allot\.dev/deferred-hard}')
[ "$held" = '{"cpu":"2","memory":"200Gi"}' ] || fail "deferred-hard: $held"
echo "ok: p1's compute limits are held by allot; the built-in quota keeps count/pods"

pod() { # NAMESPACE NAME [extra spec JSON members]
  kc create -f - 2>&1 <<EOF
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$2", "namespace": "$1"},
 "spec": {"tolerations": [{"operator": "Exists"}]${3:+, $3},
          "containers": [{"name": "c", "image": "nginx",
                          "resources": {"requests": {"cpu": "1", "memory": "100Mi"}}}]}}
EOF
}
node_of() { kc get pod "$2" -n "$1" -o 'jsonpath={.spec.nodeName}'; }
bound() { [ "$(node_of "$1" "$2")" = n1 ]; }
cond() { kc get pod "$2" -n "$1" -o 'jsonpath={.status.conditions[?(@.type=="PodScheduled")].reason}|{.status.conditions[?(@.type=="PodScheduled")].message}'; }
waiting() { case "$(cond "$1" "$2")" in Unschedulable\|*"quota exceeded: p1"*) return 0 ;; *) return 1 ;; esac; }

# ---- the seed's example: two pods bound, the third Pending on p1 ----
for p in test-1 test-2 test-3; do
  out=$(pod team "$p") || fail "create $p: $out"
done
res=$(kc get pod test-1 -n team -o 'jsonpath={.spec.containers[0].resources.limits.quota\.allot\.dev/deferred}')
[ "$res" = 1 ] || fail "test-1 was not marked for the extender: $(kc get pod test-1 -n team -o json)"
nbound() { local n=0 p; for p in test-1 test-2 test-3; do bound team "$p" && n=$((n + 1)); done; echo "$n"; }
wait_until 60 is 2 nbound || fail "$(nbound) of 3 pods bound against cpu=2"
for p in test-1 test-2 test-3; do bound team "$p" || pending=$p; done
wait_until 60 waiting team "$pending" || fail "$pending: '$(cond team "$pending")'"
msg=$(cond team "$pending")
case "$msg" in
  *"0/1 nodes are available: 1 quota exceeded: p1, requested: cpu=1, used: cpu=2, limited: cpu=2."*) ;;
  *) fail "$pending's condition: $msg" ;;
esac
events=$(kc get events -n team --field-selector "involvedObject.name=$pending,reason=FailedScheduling" -o 'jsonpath={.items[*].message}')
case "$events" in *"quota exceeded: p1"*) ;; *) fail "no FailedScheduling event naming p1: $events" ;; esac
echo "ok: 2 pods bound and charged, $pending Pending: $msg"

book() { kc get resourcequota p1 -n team -o 'jsonpath={.metadata.annotations.quota\.allot\.dev/deferred}'; }
settled() { /usr/bin/python3 -c '
import json, sys
b = json.loads(sys.argv[1])
assert b["used"] == {"cpu": "2", "memory": "200Mi"}, b
assert b["reservations"] == [], b' "$(book)"; }
wait_until 30 settled || fail "p1's book: $(book)"
echo "ok: the book settles: used cpu=2, memory=200Mi, no reservation left"

# ---- quota frees: the waiting pod is bound ----
gone=test-1
[ "$pending" != test-1 ] || gone=test-2
start=$(date +%s%N)
kc delete pod "$gone" -n team --grace-period=0 --force >/dev/null 2>&1
wait_until 60 bound team "$pending" || fail "$pending not bound after $gone was deleted: '$(cond team "$pending")'"
echo "ok: $gone deleted, $pending bound $(ms_since "$start") ms later"
wait_until 30 settled || fail "p1's book after the swap: $(book)"

# ---- quota raised: a waiting pod is bound ----
out=$(pod team test-4) || fail "create test-4: $out"
wait_until 60 waiting team test-4 || fail "test-4: '$(cond team test-4)'"
start=$(date +%s%N)
kc apply -f - >/dev/null <<'EOF'
{"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "p1", "namespace": "team"},
 "spec": {"hard": {"count/pods": "20", "cpu": "3", "memory": "200Gi"}}}
EOF
wait_until 90 bound team test-4 || fail "test-4 not bound after p1 was raised: '$(cond team test-4)'"
echo "ok: p1 raised to cpu=3, test-4 bound $(ms_since "$start") ms later"

# ---- what allot refuses, and what it leaves alone ----
out=$(pod team on-node '"nodeName": "n1"') && fail "a pod created on a node was admitted"
case "$out" in *"under deferred quota"*) ;; *) fail "pod on a node: $out" ;; esac
out=$(pod plain free) || fail "a pod outside deferred namespaces: $out"
wait_until 60 bound plain free || fail "the pod of a plain namespace was not scheduled"
res=$(kc get pod free -n plain -o 'jsonpath={.spec.containers[0].resources.limits}')
[ -z "$res" ] || fail "a plain namespace's pod was changed: $res"
echo "ok: a pod created on a node is refused; a plain namespace is left alone"
