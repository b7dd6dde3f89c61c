"""test_custom_quota_race.py - 100 concurrent creators against a custom quota
of 10 pods: exactly 10 creates succeed (201) and 90 are refused (403, with
Capsule's text and currentUsed=11: nothing is ever in flight), round after
round, for a CustomQuota and for a GlobalCustomQuota spanning 10 namespaces.
After each round the quota's status.usage.used is 10 and its status.claims
are exactly the 10 pods that were created (and are stored).

Capsule's e2e (shared spec §6.4 N3, §6.5 G3) runs this once; allot charges
in the write's transaction, so it must hold every time: ROUNDS rounds of
each (env ALLOT_CQ_RACE_ROUNDS, 50 by default: on 2 cores the 2 x 50 rounds
take about 18 s, against the release build and under AddressSanitizer
alike; the Python client is the slower side).

Each round has its own quota and namespace(s): a CustomQuota in a fresh
namespace, or a fresh GlobalCustomQuota selecting 10 fresh namespaces by a
label of the round (the 100 creators spread 10 per namespace; the quota is
deleted after its round so later rounds do not evaluate it). The creators
are 100 threads of python3-kubernetes released together by a barrier,
sharing one connection pool of 100+ connections.
"""
import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from kubernetes import client, config
from kubernetes.client.rest import ApiException
from e2e_util import free_port, wait_until

ALLOTD = os.environ["ALLOTD"]
GROUP, VERSION = "capsule.clastix.io", "v1beta2"
CREATORS, LIMIT, GLOBAL_NAMESPACES = 100, 10, 10


ROUNDS = int(os.environ.get("ALLOT_CQ_RACE_ROUNDS") or 50)


def pod(ns, name):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": {"track": "yes"}},
            "spec": {"restartPolicy": "Always",
                     "containers": [{"name": "main", "image": "nginx:1.27.0"}]}}


def count_source():
    return {"apiVersion": "v1", "kind": "Pod", "op": "count",
            "selectors": [{"matchLabels": {"track": "yes"}}]}


def denial(name, kind, quota):
    return (f'pods "{name}" is forbidden: creating resource exceeds limit for {kind} "{quota}" '
            f"(requested=1, currentUsed={LIMIT + 1}, available=0, limit={LIMIT}, inflightReserved=0)")


class Race:
    def __init__(self, api):
        self.core = client.CoreV1Api(api)
        self.custom = client.CustomObjectsApi(api)
        self.pool = ThreadPoolExecutor(max_workers=CREATORS)
        self.max_in_flight = 0

    def namespace(self, name, labels=None):
        self.core.create_namespace({"apiVersion": "v1", "kind": "Namespace",
                                    "metadata": {"name": name, "labels": labels or {}}})

    def create_all(self, targets):
        """Create pods (ns, name) from CREATORS threads released together:
        {name: (status, message)}."""
        barrier = threading.Barrier(len(targets))

        spans = []

        def one(ns, name):
            barrier.wait(timeout=60)
            t0 = time.monotonic()
            try:
                r = self.core.create_namespaced_pod(ns, pod(ns, name), _preload_content=False)
                return name, r.status, ""
            except ApiException as e:
                try:
                    msg = json.loads(e.body).get("message", "")
                except (ValueError, TypeError):
                    msg = str(e.body)
                return name, e.status, msg
            finally:
                spans.append((t0, time.monotonic()))

        futures = [self.pool.submit(one, ns, name) for ns, name in targets]
        results = {name: (status, msg) for name, status, msg in (f.result(timeout=120) for f in futures)}
        # Information only (no timing is asserted): the most requests in
        # flight at once this round.
        edges = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
        level = 0
        for _, d in edges:
            level += d
            self.max_in_flight = max(self.max_in_flight, level)
        return results

    def check(self, what, results, kind, quota, status, stored):
        codes = collections.Counter(s for s, _ in results.values())
        assert codes == {201: LIMIT, 403: CREATORS - LIMIT}, f"{what}: HTTP codes {dict(codes)}"
        created = sorted(n for n, (s, _) in results.items() if s == 201)
        for name, (s, msg) in results.items():
            if s == 403:
                assert msg == denial(name, kind, quota), f"{what}: {name} refused with [{msg}]"
        used = status.get("usage", {}).get("used")
        claims = sorted(c["name"] for c in status.get("claims") or [])
        assert used == str(LIMIT), f"{what}: status.usage.used {used}"
        assert claims == created, f"{what}: claims {claims} != created {created}"
        assert sorted(stored) == created, f"{what}: stored pods {sorted(stored)} != created {created}"

    def cq_round(self, i):
        ns, q = f"cqr-{i}", "race"
        self.namespace(ns)
        self.custom.create_namespaced_custom_object(GROUP, VERSION, ns, "customquotas", {
            "apiVersion": f"{GROUP}/{VERSION}", "kind": "CustomQuota",
            "metadata": {"name": q, "namespace": ns},
            "spec": {"limit": str(LIMIT), "sources": [count_source()]}})
        results = self.create_all([(ns, f"p-{k:02d}") for k in range(CREATORS)])
        status = self.custom.get_namespaced_custom_object(GROUP, VERSION, ns, "customquotas", q)["status"]
        stored = [p.metadata.name for p in self.core.list_namespaced_pod(ns).items]
        self.check(f"CustomQuota round {i}", results, "CustomQuota", q, status, stored)

    def gcq_round(self, i):
        q = f"race-{i}"
        names = [f"gcqr-{i}-{n}" for n in range(GLOBAL_NAMESPACES)]
        for ns in names:
            self.namespace(ns, {"race-round": str(i)})
        self.custom.create_cluster_custom_object(GROUP, VERSION, "globalcustomquotas", {
            "apiVersion": f"{GROUP}/{VERSION}", "kind": "GlobalCustomQuota",
            "metadata": {"name": q},
            "spec": {"limit": str(LIMIT), "sources": [count_source()],
                     "namespaceSelectors": [{"matchLabels": {"race-round": str(i)}}]}})
        targets = [(names[k % GLOBAL_NAMESPACES], f"p-{k:02d}") for k in range(CREATORS)]
        results = self.create_all(targets)
        status = self.custom.get_cluster_custom_object(GROUP, VERSION, "globalcustomquotas", q)["status"]
        assert sorted(status.get("namespaces") or []) == sorted(names), \
            f"GlobalCustomQuota round {i}: status.namespaces {status.get('namespaces')}"
        stored = [p.metadata.name
                  for p in self.core.list_pod_for_all_namespaces(label_selector="track=yes").items
                  if p.metadata.namespace in names]
        self.check(f"GlobalCustomQuota round {i}", results, "GlobalCustomQuota", q, status, stored)
        self.custom.delete_cluster_custom_object(GROUP, VERSION, "globalcustomquotas", q)


def main():
    tmp = tempfile.mkdtemp(prefix="allot-cqrace-")
    data = os.path.join(tmp, "data")
    logpath = os.path.join(tmp, "allotd.log")
    log = open(logpath, "w")
    proc = subprocess.Popen([ALLOTD, "--data-dir", data, "--port", str(free_port())], stderr=log)
    ok = False
    try:
        kubeconfig = os.path.join(data, "kubeconfig")
        assert wait_until(60, lambda: os.path.exists(kubeconfig) and os.path.getsize(kubeconfig) > 0), \
            "allotd did not become ready"
        cfg = client.Configuration()
        config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
        cfg.connection_pool_maxsize = CREATORS + 10
        race = Race(client.ApiClient(cfg))
        print(f"test_custom_quota_race: {ROUNDS} rounds of {CREATORS} creators against a limit "
              f"of {LIMIT}", flush=True)
        t0 = time.monotonic()
        for i in range(ROUNDS):
            race.cq_round(i)
        t1 = time.monotonic()
        for i in range(ROUNDS):
            race.gcq_round(i)
        t2 = time.monotonic()
        race.pool.shutdown()
        print(f"test_custom_quota_race: CustomQuota {ROUNDS} rounds in {t1 - t0:.1f}s, "
              f"GlobalCustomQuota {ROUNDS} rounds in {t2 - t1:.1f}s; at most "
              f"{race.max_in_flight} creates in flight at once", flush=True)
        ok = True
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = "killed after 30s"
        log.close()
        if rc != 0 or not ok:
            sys.stderr.write(open(logpath).read()[-4000:])
        assert rc == 0, f"allotd exited with {rc}"
    print("test_custom_quota_race: ok")


if __name__ == "__main__":
    main()
