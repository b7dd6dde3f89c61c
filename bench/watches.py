"""watches.py URL CA TOKEN N PATH PID - what N open watches cost allotd (bench/watches.sh).

Opens N watches of PATH (each its own TLS keep-alive connection, as N
clients would), reads each one's response headers and initial events, then
reports allotd's RSS and threads (from /proc/PID) before and after, creates
one object under PATH's collection and measures how long until every watch
has seen it (fan-out), and closes them all.
"""
import json, os, selectors, socket, ssl, sys, time, urllib.parse, urllib.request

url, ca, token, n, path, pid = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], int(sys.argv[6])
u = urllib.parse.urlparse(url)
ctx = ssl.create_default_context(cafile=ca)
ctx.check_hostname = False


def proc():
    d = {}
    for line in open("/proc/%d/status" % pid):
        k, v = line.split(":", 1)
        d[k] = v.strip()
    return int(d["VmRSS"].split()[0]) / 1024, int(d["Threads"])


rss0, thr0 = proc()
sel = selectors.DefaultSelector()
conns = []
t0 = time.time()
req = ("GET %s%swatch=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
       "Accept: application/json\r\n\r\n" % (path, "&" if "?" in path else "?", token)).encode()
for i in range(n):
    s = socket.create_connection((u.hostname, u.port))
    t = ctx.wrap_socket(s, server_hostname="x")
    t.sendall(req)
    t.setblocking(False)
    conns.append(t)
    sel.register(t, selectors.EVENT_READ, {"buf": b"", "seen": False})
opened = time.time() - t0


def pump(deadline, want):
    """read until every watch's buffer holds `want`, or the deadline"""
    pending = sum(1 for k in sel.get_map().values() if want not in k.data["buf"])
    while pending and time.time() < deadline:
        for key, _ in sel.select(timeout=0.5):
            try:
                chunk = key.fileobj.recv(65536)
            except (ssl.SSLWantReadError, BlockingIOError):
                continue
            had = want in key.data["buf"]
            key.data["buf"] = key.data["buf"][-4096:] + chunk
            if not had and want in key.data["buf"]:
                pending -= 1
    return pending


left = pump(time.time() + 120, b"200 OK")
rss1, thr1 = proc()
# one object under the watched collection: every watch must see it
coll = path.split("?")[0]
obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fanout-%d" % os.getpid()}}
r = urllib.request.Request(url + coll, data=json.dumps(obj).encode(), method="POST",
                           headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
t1 = time.time()
urllib.request.urlopen(r, context=ctx).read()
missed = pump(time.time() + 120, b"fanout-%d" % os.getpid())
fanout = time.time() - t1
for t in conns:
    t.close()
print(json.dumps({"watches": n, "not_opened": left, "open_seconds": round(opened, 1),
                  "rss_mib_before": round(rss0, 1), "rss_mib_after": round(rss1, 1),
                  "rss_kib_per_watch": round((rss1 - rss0) * 1024 / n, 1),
                  "threads_before": thr0, "threads_after": thr1,
                  "fanout_seconds": round(fanout, 3), "fanout_missed": missed}))
