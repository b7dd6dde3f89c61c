"""idle_watches.py PORT TOKEN PATH N READYFILE STOPFILE - open N watches of
PATH (e.g. /api/v1/configmaps?watch=1) as the bearer of TOKEN, each on its own
TLS connection with a small receive buffer, and never read them (used by
test_idle_flood.sh). Writes the HTTP status line of every watch to READYFILE
(one JSON list) once every request is sent and answered, holds the
connections until STOPFILE exists (at most 120 s), then prints how many the
server had closed.
"""
import json, os, socket, ssl, sys, time

port, token, path, n, ready, stopfile = (int(sys.argv[1]), sys.argv[2], sys.argv[3],
                                         int(sys.argv[4]), sys.argv[5], sys.argv[6])
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
conns, status = [], []
req = ("GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
       "Accept: application/json\r\n\r\n" % (path, token)).encode()
for _ in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(20)
    s.connect(("127.0.0.1", port))
    t = ctx.wrap_socket(s, server_hostname="x")
    t.sendall(req)
    # the status line only (the server sends its headers at once); the body
    # is never read
    line = b""
    while not line.endswith(b"\r\n"):
        c = t.recv(1)
        if not c:
            break
        line += c
    status.append(line.decode(errors="replace").strip())
    conns.append(t)
with open(ready + ".tmp", "w") as f:
    json.dump(status, f)
os.rename(ready + ".tmp", ready)
deadline = time.time() + 120
while time.time() < deadline and not os.path.exists(stopfile):
    time.sleep(0.1)
closed = 0
for t in conns:
    try:
        t.setblocking(False)
        if t.recv(1) == b"":
            closed += 1
    except (BlockingIOError, ssl.SSLWantReadError):
        pass
    except OSError:
        closed += 1
print(json.dumps({"watches": len(conns), "closed_by_server": closed}))
