"""hostile_conns.py PORT READYFILE STOPFILE SPEC... - hold idle and slowloris
connections open against allotd on 127.0.0.1:PORT (used by test_hostile.sh).

SPEC is SRC_IP:IDLE:SLOW. IDLE connections are plain TCP that never send a
byte (no TLS handshake). SLOW connections complete the TLS handshake, then
send an HTTP request's headers one byte every 2 s, never finishing them.
Connections come from the source address SRC_IP (any 127.0.0.0/8 address
is local on Linux, so one machine can be many clients of a server listening
on 127.0.0.1). Writes the counts opened to READYFILE once every connection
is attempted, holds them until STOPFILE exists (at most 60 s), then waits at
most WAIT_CLOSED seconds (env, default 0) for the server to close them, and
prints JSON stats, including how many the server closed.
"""
import json, os, socket, ssl, sys, threading, time

port, ready, stopfile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
specs = [s.split(":") for s in sys.argv[4:]]
idle, slow = [], []
refused = 0
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE

def connect(src):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(3)
    s.connect(("127.0.0.1", port))
    return s

for src, ni, ns in specs:
    for _ in range(int(ni)):
        try:
            idle.append(connect(src))
        except OSError:
            refused += 1
    for _ in range(int(ns)):
        try:
            t = ctx.wrap_socket(connect(src), server_hostname="x")
            slow.append(t)
        except (OSError, ssl.SSLError):
            refused += 1

stop = threading.Event()
closed_slow = set()
hdr = b"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 10000

def trickle():
    i = 0
    while not stop.wait(2):
        for k, t in enumerate(slow):
            if k in closed_slow:
                continue
            try:
                t.send(hdr[i:i + 1])
            except (OSError, ssl.SSLError):
                closed_slow.add(k)
        i += 1

th = threading.Thread(target=trickle, daemon=True)
th.start()
t0 = time.time()
with open(ready + ".tmp", "w") as f:
    json.dump({"idle": len(idle), "slow": len(slow), "refused": refused}, f)
os.rename(ready + ".tmp", ready)

# Which idle connections has the server closed (EOF or reset)?
def closed_idle():
    n = 0
    for s in idle:
        try:
            s.setblocking(False)
            if s.recv(1) == b"":
                n += 1
        except BlockingIOError:
            pass
        except OSError:
            n += 1
    return n

deadline = time.time() + 60
while time.time() < deadline and not os.path.exists(stopfile):
    time.sleep(0.1)
deadline = time.time() + float(os.environ.get("WAIT_CLOSED", "0"))
while time.time() < deadline and (closed_idle() < len(idle) or len(closed_slow) < len(slow)):
    time.sleep(0.5)
stop.set()
print(json.dumps({"idle": len(idle), "slow": len(slow), "refused": refused,
                  "idle_closed_by_server": closed_idle(),
                  "slow_closed_by_server": len(closed_slow),
                  "held_seconds": round(time.time() - t0, 1)}))
