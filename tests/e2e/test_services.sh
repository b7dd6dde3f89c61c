# test_services.sh - Service cluster IPs and node ports, and the cluster's
# own `kubernetes` Service, with the real kubectl against small ranges
# (--service-cluster-ip-range 10.96.0.0/27: 30 addresses, the first the
# kubernetes Service's; --service-node-port-range 30000-30009):
#  - default/kubernetes and its Endpoints and EndpointSlice as upstream makes
#    them (kubectl describe svc lists the endpoint), put back when deleted or
#    changed;
#  - ClusterIP, NodePort, LoadBalancer, headless and ExternalName Services as
#    `kubectl get svc` shows them on any cluster;
#  - requested IPs and node ports honoured, or refused with upstream's
#    messages (taken, out of range, the kubernetes Service's); the cluster IP
#    immutable; type changes release what the new type does not use;
#  - the range exhausted (upstream's 500), then freed by a delete; a dry run
#    and a quota refusal leave nothing allocated;
#  - 50 creates at once against the 29 free addresses: 29 succeed, each
#    with an address of its own;
#  - a restart, and a kill -9, keep every allocation;
#  - quota: the ResourceQuota e2e's service spec (services, services.nodeports,
#    services.loadbalancers, allocateLoadBalancerNodePorts false).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl

RANGE_FLAGS=(--service-cluster-ip-range 10.96.0.0/27 --service-node-port-range 30000-30009)
start_allotd "${RANGE_FLAGS[@]}"

jp() { k get "$1" "$2" -n "${3:-default}" -o jsonpath="$4"; }
# create_fails ARGS...: the output of a kubectl create that must fail
create_fails() { local out; out=$(k create "$@" 2>&1) && fail "admitted: k create $*: $out"; echo "$out"; }
svc_yaml() { # NAME TYPE [SPEC-EXTRA]: a Service manifest on stdin for kubectl create -f -
  printf 'apiVersion: v1\nkind: Service\nmetadata: {name: %s}\nspec:\n  type: %s\n  ports: [{port: 80}]\n%s\n' \
    "$1" "$2" "${3:-}"
}

# --- default/kubernetes and its Endpoints ---
row=$(k get svc kubernetes --no-headers)
expect_eq "kubectl get svc kubernetes" "$(echo "$row" | awk '{print $1, $2, $3, $4, $5}')" \
  "kubernetes ClusterIP 10.96.0.1 <none> 443/TCP"
expect_eq "labels" "$(jp svc kubernetes default '{.metadata.labels.component},{.metadata.labels.provider}')" \
  "apiserver,kubernetes"
expect_eq "port" "$(jp svc kubernetes default '{.spec.ports[0].name} {.spec.ports[0].port} {.spec.ports[0].protocol} {.spec.ports[0].targetPort}')" \
  "https 443 TCP $ALLOT_PORT"
expect_eq "families" "$(jp svc kubernetes default '{.spec.ipFamilies} {.spec.ipFamilyPolicy} {.spec.clusterIPs}')" \
  '["IPv4"] SingleStack ["10.96.0.1"]'
expect_eq "kubectl get endpoints kubernetes" "$(k get endpoints kubernetes --no-headers | awk '{print $1, $2}')" \
  "kubernetes 127.0.0.1:$ALLOT_PORT"
expect_eq "endpoints port" "$(jp endpoints kubernetes default '{.subsets[0].ports[0].name} {.subsets[0].ports[0].port}')" \
  "https $ALLOT_PORT"
expect_eq "kubectl get endpointslice kubernetes" \
  "$(k get endpointslices -l kubernetes.io/service-name=kubernetes --no-headers | awk '{print $1, $2, $3, $4}')" \
  "kubernetes IPv4 $ALLOT_PORT 127.0.0.1"
expect_contains "kubectl describe svc kubernetes" "$(k describe svc kubernetes)" "127.0.0.1:$ALLOT_PORT"

uid=$(jp svc kubernetes default '{.metadata.uid}')
k delete svc kubernetes >/dev/null
recreated() { local u; u=$(jp svc kubernetes default '{.metadata.uid}') && [ -n "$u" ] && [ "$u" != "$uid" ]; }
wait_until 20 recreated || fail "default/kubernetes not recreated after delete"
expect_eq "recreated IP" "$(jp svc kubernetes default '{.spec.clusterIP}')" "10.96.0.1"
k delete endpoints kubernetes >/dev/null
wait_until 20 k get endpoints kubernetes || fail "Endpoints kubernetes not recreated"
k delete endpointslice kubernetes >/dev/null
wait_until 20 k get endpointslice kubernetes || fail "EndpointSlice kubernetes not recreated"
k patch svc kubernetes --type merge -p '{"spec":{"ports":[{"name":"https","port":443,"targetPort":1}]}}' >/dev/null
port_back() { [ "$(jp svc kubernetes default '{.spec.ports[0].targetPort}')" = "$ALLOT_PORT" ]; }
wait_until 20 port_back || fail "kubernetes Service ports not put back"
k patch endpoints kubernetes --type merge -p '{"subsets":[{"addresses":[{"ip":"192.0.2.1"}],"ports":[{"port":1}]}]}' >/dev/null
ep_back() { [ "$(k get endpoints kubernetes --no-headers | awk '{print $2}')" = "127.0.0.1:$ALLOT_PORT" ]; }
wait_until 20 ep_back || fail "kubernetes Endpoints not put back"
# the first address is the kubernetes Service's, even when it is absent
out=$(create_fails service clusterip thief --clusterip=10.96.0.1 --tcp=80)
expect_contains "first IP" "$out" \
  'Service "thief" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.1"}: failed to allocate IP 10.96.0.1: provided IP is already allocated'

# --- 50 creates at once against the 29 free addresses ---
body() { printf '{"apiVersion":"v1","kind":"Service","metadata":{"name":"c%s"},"spec":{"ports":[{"port":80}]}}' "$1"; }
create_one() {
  api POST /api/v1/namespaces/race/services -H 'Content-Type: application/json' -d "$(body "$1")" |
    tail -1 >"$E2E_DIR/race.$1"
}
k create namespace race >/dev/null
pids=()
for i in $(seq 1 50); do
  create_one "$i" &
  pids+=($!)
done
wait "${pids[@]}" # (not a bare wait: allotd is a child too)
expect_eq "creates admitted" "$(grep -lx 201 "$E2E_DIR"/race.* | wc -l)" 29
expect_eq "creates refused (500)" "$(grep -lx 500 "$E2E_DIR"/race.* | wc -l)" 21
ips=$(k get svc -n race -o jsonpath='{range .items[*]}{.spec.clusterIP}{"\n"}{end}')
expect_eq "distinct IPs" "$(echo "$ips" | sort -u | wc -l)" 29
echo "$ips" | grep -qv '^10\.96\.0\.\([2-9]\|[12][0-9]\|30\)$' && fail "an IP outside 10.96.0.2-30: $ips"
out=$(create_fails service clusterip over -n race --tcp=80)
expect_contains "range full" "$out" "Internal error occurred: failed to allocate a serviceIP: range is full"
# freed by a delete: the next create gets that address (the only one free)
victim=$(k get svc -n race -o jsonpath='{.items[0].metadata.name}')
freed=$(jp svc "$victim" race '{.spec.clusterIP}')
k delete svc "$victim" -n race >/dev/null
expect_eq "freed address reused" "$(k create service clusterip after -n race --tcp=80 -o jsonpath='{.spec.clusterIP}')" "$freed"
k delete namespace race --wait=true --timeout=60s >/dev/null

# --- the types, as kubectl get svc shows them ---
k create service clusterip web --tcp=80:8080 >/dev/null
k create service nodeport np --tcp=80:8080 >/dev/null
k create service loadbalancer lb --tcp=80:8080,443:8443 >/dev/null
k create service clusterip hl --clusterip=None >/dev/null
k create service externalname ext --external-name=db.example.com >/dev/null
cols() { k get svc "$1" --no-headers | awk '{print $2, $3, $4, $5}'; }
ip_web=$(jp svc web default '{.spec.clusterIP}')
expect_eq "ClusterIP row" "$(cols web)" "ClusterIP $ip_web <none> 80/TCP"
case "$ip_web" in 10.96.0.*) ;; *) fail "web has no cluster IP: [$ip_web]" ;; esac
np_port=$(jp svc np default '{.spec.ports[0].nodePort}')
expect_eq "NodePort row" "$(cols np)" "NodePort $(jp svc np default '{.spec.clusterIP}') <none> 80:$np_port/TCP"
[ "$np_port" -ge 30000 ] && [ "$np_port" -le 30009 ] || fail "node port $np_port outside 30000-30009"
expect_eq "LoadBalancer row" "$(cols lb | awk '{print $1, $3}')" "LoadBalancer <pending>"
expect_eq "LoadBalancer node ports" "$(jp svc lb default '{.spec.allocateLoadBalancerNodePorts} {.spec.externalTrafficPolicy}')" "true Cluster"
expect_eq "headless row" "$(cols hl)" "ClusterIP None <none> <none>"
expect_eq "ExternalName row" "$(cols ext)" "ExternalName <none> db.example.com <none>"
expect_eq "ExternalName spec" "$(jp svc ext default '{.spec.clusterIP}{.spec.ipFamilies}')" ""
expect_eq "headless selectorless families" \
  "$(svc_yaml hs2 ClusterIP '  clusterIP: None' | k create -f - -o jsonpath='{.spec.ipFamilyPolicy} {.spec.ipFamilies}')" \
  'RequireDualStack ["IPv4","IPv6"]'

# --- requested values: honoured, or refused with upstream's messages ---
expect_eq "requested IP" "$(k create service clusterip fixed --clusterip=10.96.0.5 --tcp=80 -o jsonpath='{.spec.clusterIP}')" "10.96.0.5"
out=$(create_fails service clusterip fixed2 --clusterip=10.96.0.5 --tcp=80)
expect_contains "IP taken" "$out" \
  'Service "fixed2" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.5"}: failed to allocate IP 10.96.0.5: provided IP is already allocated'
out=$(create_fails service clusterip far --clusterip=1.1.1.1 --tcp=80)
expect_contains "IP out of range" "$out" \
  'Service "far" is invalid: spec.clusterIPs: Invalid value: []string{"1.1.1.1"}: failed to allocate IP 1.1.1.1: the provided IP (1.1.1.1) is not in the valid range. The range of valid IPs is 10.96.0.0/27'
out=$(k patch svc fixed -p '{"spec":{"clusterIP":"10.96.0.6"}}' 2>&1) && fail "clusterIP changed: $out"
expect_contains "immutable" "$out" \
  'The Service "fixed" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.0.6"}: may not change once set'
used_ports=" $np_port $(jp svc lb default '{.spec.ports[*].nodePort}') "
want=30000
while case "$used_ports" in *" $want "*) true ;; *) false ;; esac; do want=$((want + 1)); done
expect_eq "requested node port" \
  "$(k create service nodeport np2 --tcp=80 --node-port=$want -o jsonpath='{.spec.ports[0].nodePort}')" "$want"
taken=$(jp svc np default '{.spec.ports[0].nodePort}')
out=$(create_fails service nodeport np3 --tcp=80 --node-port="$taken")
expect_contains "node port taken" "$out" \
  "Service \"np3\" is invalid: spec.ports[0].nodePort: Invalid value: $taken: provided port is already allocated"
out=$(create_fails service nodeport np4 --tcp=80 --node-port=31000)
expect_contains "node port out of range" "$out" \
  'spec.ports[0].nodePort: Invalid value: 31000: provided port is not in the valid range. The range of valid ports is 30000-30009'
# a PUT of the manifest a Service was made from keeps what was allocated
svc_yaml keep NodePort >"$E2E_DIR/keep.yaml"
k create -f "$E2E_DIR/keep.yaml" >/dev/null
before=$(jp svc keep default '{.spec.clusterIP} {.spec.ports[0].nodePort}')
k replace -f "$E2E_DIR/keep.yaml" >/dev/null
expect_eq "replace keeps allocations" "$(jp svc keep default '{.spec.clusterIP} {.spec.ports[0].nodePort}')" "$before"
k apply --server-side --force-conflicts -f "$E2E_DIR/keep.yaml" >/dev/null
expect_eq "apply keeps allocations" "$(jp svc keep default '{.spec.clusterIP} {.spec.ports[0].nodePort}')" "$before"

# --- type changes release what the new type does not use ---
k patch svc np -p '{"spec":{"type":"ClusterIP"}}' >/dev/null
expect_eq "NodePort -> ClusterIP" "$(jp svc np default '{.spec.ports[0].nodePort}')" ""
expect_eq "released node port reused" \
  "$(k create service nodeport np5 --tcp=80 --node-port="$taken" -o jsonpath='{.spec.ports[0].nodePort}')" "$taken"
k patch svc fixed -p '{"spec":{"type":"ExternalName","externalName":"x.example.com"}}' >/dev/null
expect_eq "ClusterIP -> ExternalName" "$(jp svc fixed default '{.spec.clusterIP}{.spec.clusterIPs}')" ""
expect_eq "released IP reused" "$(k create service clusterip fixed3 --clusterip=10.96.0.5 --tcp=80 -o jsonpath='{.spec.clusterIP}')" "10.96.0.5"
k patch svc fixed -p '{"spec":{"type":"ClusterIP"}}' >/dev/null
case "$(jp svc fixed default '{.spec.clusterIP}')" in 10.96.0.*) ;; *) fail "ExternalName -> ClusterIP got no IP" ;; esac

# --- a dry run allocates nothing ---
expect_eq "dry run IP" "$(k create service clusterip dry --clusterip=10.96.0.7 --tcp=80 --dry-run=server -o jsonpath='{.spec.clusterIP}')" "10.96.0.7"
expect_eq "after the dry run" "$(k create service clusterip real --clusterip=10.96.0.7 --tcp=80 -o jsonpath='{.spec.clusterIP}')" "10.96.0.7"

# --- quota: the ResourceQuota e2e's service spec ---
k create namespace quota >/dev/null
k create quota test-quota -n quota --hard=services=10,services.nodeports=1,services.loadbalancers=1 >/dev/null
k create service clusterip test-service -n quota --tcp=80 >/dev/null
k create service nodeport test-service-np -n quota --tcp=80 >/dev/null
out=$(create_fails service loadbalancer test-service-lb -n quota --tcp=80)
expect_contains "LoadBalancer with node ports" "$out" \
  'services "test-service-lb" is forbidden: exceeded quota: test-quota, requested: services.nodeports=1, used: services.nodeports=1, limited: services.nodeports=1'
svc_yaml test-service-lb LoadBalancer '  allocateLoadBalancerNodePorts: false' | k create -n quota -f - >/dev/null
expect_eq "no node port" "$(jp svc test-service-lb quota '{.spec.ports[0].nodePort}')" ""
used() { k get quota test-quota -n quota -o jsonpath='{.status.used.services} {.status.used.services\.nodeports} {.status.used.services\.loadbalancers}'; }
expect_eq "quota used" "$(used)" "3 1 1"
k delete svc test-service test-service-np test-service-lb -n quota >/dev/null
expect_eq "quota released" "$(used)" "0 0 0"

# --- a restart, and a kill -9, keep every allocation ---
snapshot() { k get svc -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name} {.spec.clusterIP} {.spec.ports[*].nodePort}{"\n"}{end}' | sort; }
before=$(snapshot)
stop_allotd
start_allotd "${RANGE_FLAGS[@]}"
expect_eq "after restart" "$(snapshot)" "$before"
out=$(create_fails service clusterip again --clusterip=10.96.0.7 --tcp=80)
expect_contains "held after restart" "$out" "provided IP is already allocated"
k create service clusterip crash --clusterip=10.96.0.8 --tcp=80 >/dev/null
kill9_allotd
start_allotd "${RANGE_FLAGS[@]}"
out=$(create_fails service clusterip again --clusterip=10.96.0.8 --tcp=80)
expect_contains "held after kill -9" "$out" "provided IP is already allocated"
k delete svc crash >/dev/null
expect_eq "released after kill -9" "$(k create service clusterip again --clusterip=10.96.0.8 --tcp=80 -o jsonpath='{.spec.clusterIP}')" "10.96.0.8"

stop_allotd
echo "PASS test_services"
