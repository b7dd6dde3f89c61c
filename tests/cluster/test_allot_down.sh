#!/usr/bin/env bash
# test_allot_down.sh - issue 28: "With every allot replica stopped:
# kube-system pods, node and lease updates, and allot's own Deployment
# restart all still work; tenant writes behave as the documented
# failurePolicy says." allotd in cluster mode installs its webhooks on a real
# kube-apiserver v1.20.2 (scripts/kube-up.sh), is shown to enforce on a
# tenant namespace, and is killed (SIGKILL). Then, twice - with its port
# closed (connection refused, as a Service without endpoints) and with a
# listener on its port that never answers (a hung or unreachable replica:
# the API server waits for the webhook's 5 s timeout) - kubectl against the
# cluster must, each well within that timeout (measured and printed):
# create and delete a pod in kube-system; create a Node, label it and write
# its status; create and renew Leases in kube-node-lease and kube-system;
# create, scale and restart a Deployment in allot's own namespace
# (allot-system: created before allotd starts, so that allotd labels it);
# create a namespace and a ConfigMap in it; create a pod in a tenant
# namespace (pods never go to allot's webhooks). And a ResourcePoolClaim in
# the tenant namespace is refused with "failed calling webhook"
# (failurePolicy Fail). Exit 77 (skipped) without the kube binaries or etcd.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# Every write that must not depend on allot: half the webhooks' timeout.
LIMIT_MS=${ALLOT_DOWN_LIMIT_MS:-2500}

kube_up
kc create namespace allot-system >/dev/null
kc create namespace tenant-a >/dev/null
kc label namespace tenant-a capsule.clastix.io/tenant=solar >/dev/null
start_cluster_allotd
# allotd labels the namespaces its webhooks must never see (1.20 does not).
for ns in kube-system kube-public kube-node-lease allot-system; do
  l=$(kc get namespace "$ns" -o jsonpath='{.metadata.labels.kubernetes\.io/metadata\.name}')
  expect_eq "label of namespace $ns" "$l" "$ns"
done
kc create -f - >/dev/null <<'EOF'
{"apiVersion": "capsule.clastix.io/v1beta2", "kind": "ResourcePool", "metadata": {"name": "solar"},
 "spec": {"quota": {"hard": {"requests.cpu": "2"}},
          "selectors": [{"matchLabels": {"capsule.clastix.io/tenant": "solar"}}]}}
EOF
claim() { # NAME RESOURCE
  printf '{"apiVersion": "capsule.clastix.io/v1beta2", "kind": "ResourcePoolClaim",
 "metadata": {"name": "%s", "namespace": "tenant-a"}, "spec": {"pool": "solar", "claim": {"%s": "1"}}}' "$1" "$2"
}
# While allot runs, its webhook decides on the tenant namespace: the
# refusals below are allot being down, not the webhook never applying.
wait_until 30 km get resourcepool solar || fail "the pool never reached allot's mirror"
wait_until 30 pooled tenant-a || fail "allot never marked tenant-a as selected by a pool"
out=$(kc create -f - 2>&1 <<<"$(claim up-lacking requests.memory)") && fail "claim accepted with allot up"
expect_contains "claim with allot up" "$out" "resource requests.memory is not available in pool solar"
# Pods need their namespace's ServiceAccount, which the controller-manager makes.
for ns in kube-system allot-system tenant-a; do
  wait_until 60 kc get serviceaccount default -n "$ns" || fail "no ServiceAccount default in $ns"
done

kill9_cluster_allotd
echo "allotd (cluster mode) killed; its ValidatingWebhookConfiguration stays installed"

# timed WHAT CMD...: CMD must succeed within LIMIT_MS; prints the time taken.
timed() {
  local what=$1 t0 out ms; shift
  t0=$(date +%s%N)
  out=$("$@" 2>&1) || fail "$phase: $what failed after $(ms_since "$t0") ms: $out"
  ms=$(ms_since "$t0")
  printf '  %-58s %6d ms\n' "$what" "$ms"
  [ "$ms" -lt "$LIMIT_MS" ] || fail "$phase: $what took $ms ms (limit $LIMIT_MS ms)"
}
# created WHAT SECONDS CMD...: wait (bounded) until CMD succeeds (what a
# controller does in reaction); prints the time taken.
created() {
  local what=$1 limit=$2 t0; shift 2
  t0=$(date +%s%N)
  wait_until "$limit" "$@" || fail "$phase: $what: not within $limit s"
  printf '  %-58s %6d ms\n' "$what" "$(ms_since "$t0")"
}

pod() { # NAME NAMESPACE
  printf '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "%s", "namespace": "%s"},
 "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.2"}]}}' "$1" "$2"
}
lease() { # NAME NAMESPACE HOLDER
  printf '{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "%s", "namespace": "%s"},
 "spec": {"holderIdentity": "%s", "leaseDurationSeconds": 40, "renewTime": "%s"}}' "$1" "$2" "$3" "$(now)"
}
now() { date -u +%Y-%m-%dT%H:%M:%S.000000Z; }
deployment() { # NAME
  printf '{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "%s", "namespace": "allot-system"},
 "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "%s"}},
  "template": {"metadata": {"labels": {"app": "%s"}},
   "spec": {"containers": [{"name": "allotd", "image": "registry.k8s.io/pause:3.2"}]}}}}' "$1" "$1" "$1"
}
pods_of() { kc get pods -n allot-system -l "app=$1" -o name | wc -l; }
has_pods() { [ "$(pods_of "$1")" -ge "$2" ]; }
replicasets_of() { kc get replicasets -n allot-system -l "app=$1" -o name | wc -l; }
has_replicasets() { [ "$(replicasets_of "$1")" -ge "$2" ]; }
node_status_patch() { # NAME
  local body code
  body=$(printf '{"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
 "message": "allot-down test", "lastHeartbeatTime": "%s", "lastTransitionTime": "%s"}]}}' "$(date -u +%FT%TZ)" "$(date -u +%FT%TZ)")
  code=$(kube_api PATCH "/api/v1/nodes/$1/status" -H 'Content-Type: application/strategic-merge-patch+json' \
    -d "$body" | tail -1)
  [ "$code" = 200 ] || { echo "HTTP $code"; return 1; }
}

# why TEXT WIDTH: a refusal's reason, from "failed calling webhook" on.
why() {
  case $1 in
  *'failed calling webhook'*) cut -c1-"$2" <<<"failed calling webhook${1#*failed calling webhook}" ;;
  *) cut -c1-"$2" <<<"$1" ;;
  esac
}

# checks N: everything above, with names suffixed N.
checks() {
  local n=$1 t0 out ms
  echo "$phase:"
  timed "kube-system: create pod" kc create -f - <<<"$(pod "sys-$n" kube-system)"
  timed "kube-system: delete pod" kc delete pod "sys-$n" -n kube-system --grace-period=0 --force
  timed "node: create" kc create -f - <<<"{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"node-$n\"}}"
  timed "node: label" kc label node "node-$n" allot.dev/test=down
  timed "node: status (heartbeat)" node_status_patch "node-$n"
  timed "node: status (heartbeat again)" node_status_patch "node-$n"
  timed "kube-node-lease: create lease" kc create -f - <<<"$(lease "node-$n" kube-node-lease "node-$n")"
  timed "kube-node-lease: renew lease" kc patch lease "node-$n" -n kube-node-lease --type merge \
    -p "{\"spec\": {\"renewTime\": \"$(now)\"}}"
  timed "kube-system: create lease" kc create -f - <<<"$(lease "controller-$n" kube-system "cm-$n")"
  timed "kube-system: renew lease" kc patch lease "controller-$n" -n kube-system --type merge \
    -p "{\"spec\": {\"renewTime\": \"$(now)\", \"holderIdentity\": \"cm-$n-b\"}}"
  timed "allot-system: create Deployment" kc create -f - <<<"$(deployment "allot-$n")"
  created "allot-system: its pod created" 60 has_pods "allot-$n" 1
  timed "allot-system: scale Deployment to 2" kc scale deployment "allot-$n" -n allot-system --replicas=2
  created "allot-system: 2 pods" 60 has_pods "allot-$n" 2
  timed "allot-system: rollout restart" kc rollout restart deployment "allot-$n" -n allot-system
  created "allot-system: new ReplicaSet" 60 has_replicasets "allot-$n" 2
  created "allot-system: new ReplicaSet's pod" 60 has_pods "allot-$n" 3
  timed "create namespace" kc create namespace "plain-$n"
  timed "create configmap in it" kc create configmap "cm-$n" -n "plain-$n" --from-literal=k=v
  timed "tenant namespace: create pod" kc create -f - <<<"$(pod "tenant-pod-$n" tenant-a)"
  # Tenant writes that go to allot: failurePolicy Fail refuses them.
  t0=$(date +%s%N)
  if out=$(kc create -f - 2>&1 <<<"$(claim "down-$n" requests.cpu)"); then
    fail "$phase: a claim was accepted with allot down: $out"
  fi
  ms=$(ms_since "$t0")
  expect_contains "$phase: claim with allot down" "$out" \
    'failed calling webhook "resourcepoolclaims.allot.dev"'
  printf '  %-58s %6d ms (%s)\n' "tenant namespace: claim refused" "$ms" \
    "$(why "$out" 90)"
  [ -z "$(kc get resourcepoolclaim "down-$n" -n tenant-a --ignore-not-found -o name)" ] ||
    fail "$phase: the refused claim exists"
  # A namespace no pool selects is not allot's: relabelling it never waits
  # on allot (namespaces.allot.dev selects only allot.dev/pooled ones).
  timed "relabel a namespace outside any tenant" kc label namespace "plain-$n" team=x
}

phase="allot killed, its port closed"
checks 1

# A listener on allot's port that takes connections and never answers: the
# API server waits for the webhook's timeout on what goes to allot.
hang_out=$E2E_DIR/hang.out
/usr/bin/python3 -c '
import signal, socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(128)
print("listening", flush=True)
signal.pause()' "$CLUSTER_PORT" >"$hang_out" 2>&1 &
hang_pid=$!
stop_hang() { kill "$hang_pid" 2>/dev/null || true; }
on_cleanup stop_hang
wait_until 10 grep -q listening "$hang_out" || fail "no listener on $CLUSTER_PORT: $(cat "$hang_out")"
phase="allot's port answers nothing (webhook timeout 5 s)"
checks 2
stop_hang

echo "ok: cluster/allot-down: with allot killed (port closed, then hung), kube-system, node, lease," \
  "allot-system Deployment, namespace and tenant pod writes each under $LIMIT_MS ms; claims refused"
