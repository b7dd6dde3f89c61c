#!/usr/bin/python3
"""bulk_quotas.py COUNT - create COUNT namespaces bulk-NNNN with three
ResourceQuotas each, fast: four threads, each over one keep-alive HTTPS
connection to ALLOT_URL with ALLOT_TOKEN, trusting only allotd's CA
($E2E_DIR/data/ca.crt). Every seventh namespace gets a quota with pods=0, so
the dashboard has namespaces at their limit among the rest. Prints the
elapsed time; exits non-zero on any answer other than 201."""
import http.client
import json
import os
import ssl
import sys
import threading
import time
import urllib.parse

THREADS = 4


def quotas(i):
    compute = {"requests.cpu": "4", "requests.memory": "8Gi", "pods": "0" if i % 7 == 0 else "20"}
    return [
        ("compute", compute),
        ("objects", {"configmaps": "10", "secrets": "10", "services": "5"}),
        ("storage", {"requests.storage": "100Gi", "persistentvolumeclaims": "5"}),
    ]


def worker(indices, errors):
    url = urllib.parse.urlparse(os.environ["ALLOT_URL"])
    ctx = ssl.create_default_context(cafile=os.path.join(os.environ["E2E_DIR"], "data", "ca.crt"))
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=ctx, timeout=30)
    headers = {"Authorization": "Bearer " + os.environ["ALLOT_TOKEN"], "Content-Type": "application/json"}

    def post(path, body):
        conn.request("POST", path, json.dumps(body), headers)
        resp = conn.getresponse()
        data = resp.read()
        if resp.status != 201:
            errors.append(f"POST {path}: {resp.status} {data[:200]!r}")
            return False
        return True

    try:
        for i in indices:
            ns = f"bulk-{i:04d}"
            if not post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}):
                return
            for name, hard in quotas(i):
                body = {"apiVersion": "v1", "kind": "ResourceQuota",
                        "metadata": {"name": name, "namespace": ns}, "spec": {"hard": hard}}
                if not post(f"/api/v1/namespaces/{ns}/resourcequotas", body):
                    return
    except (OSError, http.client.HTTPException) as e:
        errors.append(f"connection: {e}")
    finally:
        conn.close()


def main():
    count = int(sys.argv[1])
    errors = []
    start = time.monotonic()
    threads = [threading.Thread(target=worker, args=(range(t, count, THREADS), errors)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        print("\n".join(errors[:5]), file=sys.stderr)
        sys.exit(1)
    print(f"created {count} namespaces x 3 quotas in {time.monotonic() - start:.1f} s")


if __name__ == "__main__":
    main()
