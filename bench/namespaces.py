#!/usr/bin/python3
"""namespaces.py - create N namespaces with 3 ResourceQuotas each, fast.

    namespaces.py URL TOKEN CA N [PREFIX]

Namespaces PREFIX-0 .. PREFIX-(N-1) (PREFIX defaults to "tenant"), each with
quotas `compute` (requests.cpu, requests.memory), `limits` (limits.cpu,
limits.memory) and `objects` (pods, count/configmaps, services), all roomy
enough for a benchmark's pods. Over one keep-alive HTTPS connection per
thread (4 threads), as a client library would.
"""
import http.client
import json
import ssl
import sys
import threading
import urllib.parse

url, token, ca, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
prefix = sys.argv[5] if len(sys.argv) > 5 else "tenant"
u = urllib.parse.urlparse(url)
ctx = ssl.create_default_context(cafile=ca)
QUOTAS = {
    "compute": {"requests.cpu": "1000", "requests.memory": "4Ti"},
    "limits": {"limits.cpu": "2000", "limits.memory": "8Ti"},
    "objects": {"pods": "100000", "count/configmaps": "1000", "services": "100"},
}


def post(conn, path, body):
    conn.request("POST", path, json.dumps(body),
                 {"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    if r.status not in (201, 409):
        raise SystemExit("POST %s: %d %s" % (path, r.status, data[:200]))


def work(lo, hi):
    conn = http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=60)
    for i in range(lo, hi):
        ns = "%s-%d" % (prefix, i)
        post(conn, "/api/v1/namespaces", {"metadata": {"name": ns}})
        for name, hard in QUOTAS.items():
            post(conn, "/api/v1/namespaces/%s/resourcequotas" % ns,
                 {"metadata": {"name": name}, "spec": {"hard": hard}})
    conn.close()


threads = [threading.Thread(target=work, args=(k * n // 4, (k + 1) * n // 4)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
