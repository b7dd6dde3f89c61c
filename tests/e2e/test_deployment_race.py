"""test_deployment_race.py - 20 Deployments (4 in each of 5 namespaces with a
pods and a requests.cpu quota the Deployments together want far more of)
scaled up and down, and restarted, at random by 8 python3-kubernetes clients
at once, with no pause between requests.

Checked throughout: a watch on every ResourceQuota sees each version written,
and no version may show status.used above status.hard for any resource (the
ReplicaSet controller creates pods through the same admission as any client,
so a burst of syncs can never push a quota past hard).

Then every Deployment is scaled to 2 (8 pods a namespace, with their surge
within the quota) and, once every rollout has completed (bounded wait: each
Deployment's replicas, updated and available replicas are 2, every
generation observed, no pod terminating or unscheduled, each ReplicaSet's
status.replicas equal to its pods): no ReplicaSet has more pods than its
spec.replicas (expectations keep a burst from over-creating), and each
quota's status.used.pods equals the pods stored in its namespace.

OPS (env ALLOT_DEPLOY_RACE_OPS, 2000 by default) requests in all.
under AddressSanitizer on 2 cores.
"""
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException
from kubernetes.utils.quantity import parse_quantity
from e2e_util import free_port, wait_until

ALLOTD = os.environ["ALLOTD"]
NAMESPACES, PER_NS, CLIENTS = 5, 4, 8
OPS = int(os.environ.get("ALLOT_DEPLOY_RACE_OPS") or 2000)
MAX_REPLICAS = 8
FINAL = 2  # then every Deployment to 2: 8 pods (and 4 surge) fit the quota, so all complete
HARD = {"pods": "12", "requests.cpu": "1500m"}  # each pod asks for 100m: 15 by cpu, 12 by count


def deployment(name):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{
                                      "name": "c", "image": "nginx",
                                      "resources": {"requests": {"cpu": "100m"}}}]}}}}


class QuotaWatcher(threading.Thread):
    """Every version of every quota: used <= hard, resource by resource."""

    def __init__(self, core):
        super().__init__(daemon=True)
        self.core = core
        self.w = watch.Watch()
        self.versions = 0
        self.violations = []
        self.ready = threading.Event()

    def run(self):
        rv = self.core.list_resource_quota_for_all_namespaces().metadata.resource_version
        self.ready.set()
        while True:
            try:
                for ev in self.w.stream(self.core.list_resource_quota_for_all_namespaces,
                                        resource_version=rv, timeout_seconds=300):
                    q = ev["object"]
                    rv = q.metadata.resource_version
                    self.versions += 1
                    hard = (q.status and q.status.hard) or {}
                    used = (q.status and q.status.used) or {}
                    for k, h in hard.items():
                        if k in used and parse_quantity(used[k]) > parse_quantity(h):
                            self.violations.append(
                                f"{q.metadata.namespace}/{q.metadata.name} rv {rv}: {k} used {used[k]} > hard {h}")
                return
            except Exception:  # the stream ended (stop): done
                return

    def stop(self):
        self.w.stop()


def unsettled(core, apps, namespaces):
    """Why the Deployments have not all completed their rollout at FINAL
    replicas yet ("" when they have)."""
    for ns in namespaces:
        pods = core.list_namespaced_pod(ns).items
        for p in pods:
            if p.metadata.deletion_timestamp or not p.spec.node_name:
                return f"pod {ns}/{p.metadata.name} terminating or unscheduled"
        for d in apps.list_namespaced_deployment(ns).items:
            st = d.status
            if not st or (st.observed_generation or 0) < d.metadata.generation:
                return f"deployment {ns}/{d.metadata.name} generation not observed"
            if not (st.replicas == st.updated_replicas == st.available_replicas == FINAL):
                sets = [f"{rs.metadata.name} spec {rs.spec.replicas} status "
                        f"{rs.status.replicas if rs.status else None} annotations "
                        f"{rs.metadata.annotations}"
                        for rs in apps.list_namespaced_replica_set(ns).items
                        if any(r.uid == d.metadata.uid for r in rs.metadata.owner_references or [])]
                return (f"deployment {ns}/{d.metadata.name} at {st.replicas} replicas, "
                        f"{st.updated_replicas} updated, {st.available_replicas} available; "
                        f"its ReplicaSets: " + "; ".join(sets))
        for rs in apps.list_namespaced_replica_set(ns).items:
            if not rs.status or (rs.status.observed_generation or 0) < rs.metadata.generation:
                return f"replicaset {ns}/{rs.metadata.name} generation not observed"
            mine = [p for p in pods if any(r.uid == rs.metadata.uid and r.controller
                                           for r in p.metadata.owner_references or [])]
            if (rs.status.replicas or 0) != len(mine):
                return (f"replicaset {ns}/{rs.metadata.name} status.replicas "
                        f"{rs.status.replicas} != {len(mine)} pods")
    return ""


def main():
    tmp = tempfile.mkdtemp(prefix="allot-deprace-")
    data = os.path.join(tmp, "data")
    logpath = os.path.join(tmp, "allotd.log")
    log = open(logpath, "w")
    proc = subprocess.Popen([ALLOTD, "--data-dir", data, "--port", str(free_port()),
                             "--simulated-nodes", "5"], stderr=log)
    ok = False
    try:
        kubeconfig = os.path.join(data, "kubeconfig")
        assert wait_until(60, lambda: os.path.exists(kubeconfig) and os.path.getsize(kubeconfig) > 0), \
            "allotd did not become ready"
        cfg = client.Configuration()
        config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
        cfg.connection_pool_maxsize = CLIENTS + 10
        api = client.ApiClient(cfg)
        core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
        namespaces = [f"race-{i}" for i in range(NAMESPACES)]
        watcher = QuotaWatcher(core)
        watcher.start()
        assert watcher.ready.wait(30), "quota watch did not start"
        for ns in namespaces:
            core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            core.create_namespaced_resource_quota(ns, {
                "apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
                "spec": {"hard": HARD}})
            for j in range(PER_NS):
                apps.create_namespaced_deployment(ns, deployment(f"d{j}"))
        targets = [(ns, f"d{j}") for ns in namespaces for j in range(PER_NS)]
        rng = random.Random(int(os.environ.get("ALLOT_DEPLOY_RACE_SEED") or 15))
        plan = [(rng.choice(targets), rng.random(), rng.randint(0, MAX_REPLICAS)) for _ in range(OPS)]
        counts = {"scale": 0, "restart": 0, "error": 0}
        lock = threading.Lock()

        def op(item):
            (ns, name), roll, n = item
            try:
                if roll < 0.85:
                    apps.patch_namespaced_deployment_scale(name, ns, {"spec": {"replicas": n}})
                    kind = "scale"
                else:
                    apps.patch_namespaced_deployment(name, ns, {"spec": {"template": {"metadata": {
                        "annotations": {"race/restart": str(time.monotonic_ns())}}}}})
                    kind = "restart"
            except ApiException:
                kind = "error"
            with lock:
                counts[kind] += 1

        t0 = time.monotonic()
        with ThreadPoolExecutor(max_workers=CLIENTS) as pool:
            list(pool.map(op, plan))
            list(pool.map(lambda t: apps.patch_namespaced_deployment_scale(
                t[1], t[0], {"spec": {"replicas": FINAL}}), targets))
        t1 = time.monotonic()
        why = [""]

        def settled():
            why[0] = unsettled(core, apps, namespaces)
            return not why[0]

        assert wait_until(120, settled, step=0.25), \
            f"the Deployments did not complete within 120 s: {why[0]}"
        t2 = time.monotonic()
        over = []
        for ns in namespaces:
            pods = core.list_namespaced_pod(ns).items
            for rs in apps.list_namespaced_replica_set(ns).items:
                mine = [p for p in pods if any(r.uid == rs.metadata.uid and r.controller
                                               for r in p.metadata.owner_references or [])]
                if len(mine) > rs.spec.replicas:
                    evs = core.list_namespaced_event(
                        ns, field_selector=f"involvedObject.name={rs.metadata.name}").items
                    over.append(f"{ns}/{rs.metadata.name}: {len(mine)} pods > {rs.spec.replicas} "
                                f"replicas; status {rs.status}; events "
                                + "; ".join(f"{e.reason} x{e.count} {e.message}" for e in evs))
            q = core.read_namespaced_resource_quota("q", ns)
            active = [p for p in pods if p.status.phase not in ("Succeeded", "Failed")]
            assert q.status.used["pods"] == str(len(active)), \
                f"{ns}: quota used {q.status.used['pods']} != {len(active)} pods stored"
        watcher.stop()
        watcher.join(30)
        assert not over, "ReplicaSets above their replicas: " + "; ".join(over)
        assert not watcher.violations, "quota above hard: " + "; ".join(watcher.violations[:10])
        assert watcher.versions > 0, "the quota watch saw nothing"
        print(f"test_deployment_race: {counts['scale']} scales, {counts['restart']} restarts "
              f"({counts['error']} refused) from {CLIENTS} clients in {t1 - t0:.1f}s, settled "
              f"{t2 - t1:.1f}s later; {watcher.versions} quota versions watched, none above hard",
              flush=True)
        ok = True
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = "killed after 60s"
        log.close()
        if rc != 0 or not ok:
            sys.stderr.write(open(logpath).read()[-4000:])
        assert rc == 0, f"allotd exited with {rc}"
        shutil.rmtree(tmp, ignore_errors=True)
    print("test_deployment_race: ok")


if __name__ == "__main__":
    main()
