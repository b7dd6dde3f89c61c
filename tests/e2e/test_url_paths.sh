# test_url_paths.sh - the request path is split on '/' before each segment is
# percent-decoded: "%00" can no longer truncate a name (DELETE
# namespaces/nul1%00/configmaps/x used to delete namespace nul1) and "%2f" can
# no longer move a request to another object. Malformed escapes and control
# bytes are a 400 Status, a NUL in the query too; nothing is changed by any
# of them, and ordinary names, escapes and label selectors still work.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_kubectl
start_allotd --log-level debug

code() { tail -n1 <<<"$1"; }
body() { sed '$d' <<<"$1"; }
json() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
NS=/api/v1/namespaces/nul1
CM=$NS/configmaps

# rv PATH: the resourceVersion of the object at PATH (fails if it is not 200)
rv() {
  local r
  r=$(api GET "$1")
  expect_eq "GET $1" "$(code "$r")" 200
  body "$r" | json 'd["metadata"]["resourceVersion"]'
}

# bad_request WHAT RESPONSE MESSAGE: a 400 BadRequest Status with MESSAGE
bad_request() {
  expect_eq "$1: code" "$(code "$2")" 400
  local got
  got=$(body "$2" | json '"%s %s %s %s %s|%s" % (d["kind"], d["apiVersion"], d["status"], d["reason"], d["code"], d["message"])')
  expect_eq "$1: Status" "$got" "Status v1 Failure BadRequest 400|$3"
}

# raw_status PATH: send PATH byte for byte (curl refuses raw control bytes) and
# print the HTTP status code.
raw_status() {
  /usr/bin/python3 - "$1" "$E2E_DIR/data/ca.crt" "$ALLOT_PORT" "$ALLOT_TOKEN" <<'PY'
import socket, ssl, sys
path, ca, port, token = sys.argv[1].encode("latin-1"), sys.argv[2], int(sys.argv[3]), sys.argv[4]
ctx = ssl.create_default_context(cafile=ca)
with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
    with ctx.wrap_socket(s, server_hostname="127.0.0.1") as t:
        t.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                  + token.encode() + b"\r\nConnection: close\r\n\r\n")
        data = b""
        while b"\r\n" not in data:
            chunk = t.recv(4096)
            if not chunk:
                break
            data += chunk
print(data.split(b" ")[1].decode() if data.startswith(b"HTTP/") else "none")
PY
}

# set-up: namespace nul1 with three configmaps, configmap and pod "a" in default
k create namespace nul1 >/dev/null
# every namespace holds kube-root-ca.crt (as upstream): wait for it, so the
# lists below are what they will stay
wait_until 20 k get configmap kube-root-ca.crt -n nul1 || fail "no kube-root-ca.crt in nul1"
k create configmap x -n nul1 --from-literal=k=v >/dev/null
for cm in '"web1","labels":{"app":"web"}' '"tmp1","labels":{"tier":"tmp"}'; do
  r=$(api POST $CM -H 'Content-Type: application/json' --data "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":$cm}}")
  expect_eq "create $cm" "$(code "$r")" 201
done
k create configmap a -n default >/dev/null
pod='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}'
expect_eq "create pod a" "$(code "$(api POST /api/v1/namespaces/default/pods -H 'Content-Type: application/json' --data "$pod")")" 201
ns_rv=$(rv $NS)
x_rv=$(rv $CM/x)
a_rv=$(rv /api/v1/namespaces/default/configmaps/a)

# bug 1: %00 used to truncate the path. Now a 400, and nothing is deleted.
r=$(api DELETE "$CM%00" --path-as-is)
bad_request "DELETE ns%00 collection" "$r" "invalid control character in the request path"
r=$(api DELETE "$NS%00/configmaps/x" --path-as-is)
bad_request "DELETE nul1%00/configmaps/x" "$r" "invalid control character in the request path"
r=$(api DELETE "$NS%00" --path-as-is)
bad_request "DELETE namespace nul1%00" "$r" "invalid control character in the request path"
r=$(api GET "/api/v1/namespaces/default/pods/a%00b" --path-as-is)
bad_request "GET pod a%00b" "$r" "invalid control character in the request path"
r=$(api GET "/api/v1/namespaces/default/configmaps/a%00" --path-as-is)
bad_request "GET configmap a%00" "$r" "invalid control character in the request path"
r=$(api PUT "/api/v1/namespaces/default/configmaps/a%00b" --path-as-is \
  -H 'Content-Type: application/json' --data '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"changed"}}')
bad_request "PUT configmap a%00b" "$r" "invalid control character in the request path"
# every other control byte, either case of hex
for esc in %01 %09 %0a %0D %1f %1F %7f %7F; do
  r=$(api GET "$CM/x$esc" --path-as-is)
  bad_request "GET x$esc" "$r" "invalid control character in the request path"
done
# the same bytes sent raw, not percent-encoded
for b in 01 09 1f 7f; do
  expect_eq "raw byte 0x$b" "$(raw_status "$CM/x$(printf "\\x$b")")" 400
done

# malformed escapes are a 400, not passed through as literal text
for p in "$CM/x%" "$CM/x%2" "$CM/x%zz" "$CM/x%2g" "$NS%/configmaps/x" "$CM/%%78"; do
  r=$(api GET "$p" --path-as-is)
  bad_request "GET $p" "$r" "invalid URL escape in the request path"
done
r=$(api DELETE "$NS%zz" --path-as-is)
bad_request "DELETE nul1%zz" "$r" "invalid URL escape in the request path"

# bug 2: %2f is decoded inside its segment, so it names an object that cannot
# exist instead of another object
r=$(api DELETE "$NS%2Fconfigmaps%2Fx" --path-as-is)
expect_eq "DELETE nul1%2Fconfigmaps%2Fx" "$(code "$r")" 404
expect_contains "404 names the whole segment" "$(body "$r")" 'namespaces \"nul1/configmaps/x\" not found'
r=$(api DELETE "$NS%2f" --path-as-is)
expect_eq "DELETE nul1%2f" "$(code "$r")" 404
r=$(api DELETE "$CM/x%2F" --path-as-is)
expect_eq "DELETE x%2F" "$(code "$r")" 404
r=$(api GET "/api/v1/namespaces/default/pods/a%2Fstatus" --path-as-is)
expect_eq "GET pod a%2Fstatus" "$(code "$r")" 404
expect_contains "a%2Fstatus is a name" "$(body "$r")" 'pods \"a/status\" not found'
r=$(api GET "/api%2Fv1/namespaces/nul1/configmaps/x" --path-as-is)
expect_eq "GET api%2Fv1" "$(code "$r")" 404
r=$(api POST "/api/v1/namespaces/default%2Fx/configmaps" -H 'Content-Type: application/json' \
  --data '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"q"}}' --path-as-is)
case "$(code "$r")" in 2*) fail "POST into namespace default%2Fx: $(code "$r")" ;; esac
expect_eq "no configmap q" "$(code "$(api GET /api/v1/namespaces/default/configmaps/q)")" 404

# %25 is one literal '%': "a%2500" names "a%00", which does not exist (404, not 400)
r=$(api GET "/api/v1/namespaces/default/configmaps/a%2500" --path-as-is)
expect_eq "GET a%2500" "$(code "$r")" 404
expect_contains "a%2500 is a%00" "$(body "$r")" 'configmaps \"a%00\" not found'

# escapes of ordinary bytes still decode; empty segments and a trailing slash still route
expect_eq "GET %78 is x" "$(rv "$CM/%78")" "$x_rv"
expect_eq "GET %6eul1" "$(rv "/api/v1/namespaces/%6eul1/configmaps/x")" "$x_rv"
expect_eq "GET with // and trailing /" "$(rv "/api/v1//namespaces/nul1/configmaps/x/")" "$x_rv"
r=$(api GET "/api/v1/namespaces/default/configmaps/caf%C3%A9" --path-as-is)
expect_eq "UTF-8 name" "$(code "$r")" 404

# query strings are URL-decoded as before; a NUL in a key or value is a 400
list_names() { body "$(api GET "$1")" | json '" ".join(sorted(i["metadata"]["name"] for i in d["items"]))'; }
expect_eq "labelSelector=app%3Dweb" "$(list_names "$CM?labelSelector=app%3Dweb")" "web1"
expect_eq "labelSelector set-based, '+' is a space" "$(list_names "$CM?labelSelector=app+in+%28web%2Cdb%29")" "web1"
expect_eq "fieldSelector=metadata.name%3Dx" "$(list_names "$CM?fieldSelector=metadata.name%3Dx")" "x"
expect_eq "labelSelector=tier%21%3Dtmp" "$(list_names "$CM?labelSelector=tier%21%3Dtmp")" "kube-root-ca.crt web1 x"
r=$(api DELETE "$CM?labelSelector=%00app%3Dnone" --path-as-is)
bad_request "DELETE collection, NUL in labelSelector" "$r" "invalid control character in the request query"
r=$(api GET "$CM?labelSelector=app%3Dweb%00x" --path-as-is)
bad_request "NUL inside labelSelector" "$r" "invalid control character in the request query"
r=$(api GET "$CM?watch%00=1" --path-as-is)
bad_request "NUL in a query key" "$r" "invalid control character in the request query"

# nothing above changed anything
expect_eq "namespace nul1 unchanged" "$(rv $NS)" "$ns_rv"
expect_eq "namespace nul1 active" "$(body "$(api GET $NS)" | json 'd["status"]["phase"]')" "Active"
expect_eq "configmap x unchanged" "$(rv $CM/x)" "$x_rv"
expect_eq "configmap a unchanged" "$(rv /api/v1/namespaces/default/configmaps/a)" "$a_rv"
expect_eq "nul1 holds its three configmaps" "$(list_names $CM)" "kube-root-ca.crt tmp1 web1 x"
expect_eq "pod a exists" "$(code "$(api GET /api/v1/namespaces/default/pods/a)")" 200

# kubectl: get, list, label selectors, delete by name and by selector
expect_eq "kubectl get by name" "$(k get configmap x -n nul1 -o name)" "configmap/x"
expect_eq "kubectl list" "$(k get configmaps -n nul1 -o name | tr '\n' ' ')" \
  "configmap/kube-root-ca.crt configmap/tmp1 configmap/web1 configmap/x "
expect_eq "kubectl -l app=web" "$(k get configmaps -n nul1 -l app=web -o name)" "configmap/web1"
expect_eq "kubectl -l 'app in (web)'" "$(k get configmaps -n nul1 -l 'app in (web)' -o name)" "configmap/web1"
k delete configmap -n nul1 -l tier=tmp >/dev/null
expect_eq "deleted by selector" "$(code "$(api GET $CM/tmp1)")" 404
k delete configmap x -n nul1 >/dev/null
expect_eq "deleted by name" "$(code "$(api GET $CM/x)")" 404
expect_eq "web1 kept" "$(k get configmaps -n nul1 -o name | tr '\n' ' ')" \
  "configmap/kube-root-ca.crt configmap/web1 "

# request logs stay one JSON object per line, with the path in its escaped form
/usr/bin/python3 - "$E2E_DIR/allotd.log" <<'PY' || fail "allotd.log is not JSON lines"
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    json.loads(line)
PY
grep_all -F '"path":"/api/v1/namespaces/nul1%00/configmaps/x","code":400' "$E2E_DIR/allotd.log" ||
  fail "the %00 request is not logged with its escaped path"
grep_all -F '"path":"/api/v1/namespaces/nul1/configmaps/x%7F","code":400' "$E2E_DIR/allotd.log" ||
  fail "the raw 0x7f request is not logged escaped"

stop_allotd
echo "PASS test_url_paths"
