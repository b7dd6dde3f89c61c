#!/usr/bin/python3
"""test_deferred_race.py - issue 29's race test (deferred quota on a real
cluster, "Done when", second bullet), run by test_deferred_race.sh (ctest
cluster/deferred-race) once the control plane, both allot replicas and
kube-scheduler with allot as its extender are up (tests/cluster/lib.sh,
deferred_up).

The run, in namespace `race` labelled quota.allot.dev/mode=deferred with
ResourceQuota q (pods=50, requests.cpu=25; allot's mutating webhook moves
requests.cpu into the annotation it holds deferred limits in, the built-in
quota keeps pods=50):
- 16 threads create PODS pods of 1 cpu at once (the built-in quota refuses
  what is past pods=50 at create);
- while they bind, DELETES bound pods are deleted (grace 0: no kubelet);
- the writer replica (the Lease's holder) is SIGKILLed: the other replica,
  which answers the extender, takes the Lease over and recounts;
- a sampler lists the namespace every SAMPLE_GAP_S: the cpu of bound pods
  never exceeds 25 (a list is one snapshot of the pods);
- at the end (bounded waits): the book's used is the recount of the bound
  pods with no reservation left, exactly 25 cpu are bound, and every pod
  still unbound is Pending with the quota's message; then requests.cpu is
  raised to 50 and every pod is bound.
Every wait has a deadline; the outcome does not depend on the machine's
speed beyond those.
"""
import argparse
import json
import os
import signal
import sys
import threading
import time

from kubernetes import client, config
from kubernetes.client.rest import ApiException

NS, QUOTA = "race", "q"
PODS, CLIENTS, DELETES = 200, 16, 10
HARD_PODS, HARD_CPU, RAISED_CPU = 50, 25, 50
SAMPLE_GAP_S = 0.3
BOOK = "quota.allot.dev/deferred"
T0 = time.monotonic()


def log(msg):
    print(f"[{time.monotonic() - T0:7.2f}] {msg}", flush=True)


def until(seconds, what, fn):
    """fn() until it returns a true value, for at most `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > deadline:
            sys.exit(f"FAIL: {what} within {seconds} s")
        time.sleep(0.2)


def quota_body(cpu):
    return {"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"name": QUOTA, "namespace": NS},
            "spec": {"hard": {"pods": str(HARD_PODS), "requests.cpu": str(cpu)}}}


def pod_body(name):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"tolerations": [{"operator": "Exists"}],
                     "containers": [{"name": "c", "image": "nginx",
                                     "resources": {"requests": {"cpu": "1"}}}]}}


def pods(v1):
    return v1.list_namespaced_pod(NS).items


def bound(items):
    return [p for p in items if p.spec.node_name and p.status.phase not in ("Succeeded", "Failed")]


def quota_message(p):
    for c in p.status.conditions or []:
        if c.type == "PodScheduled" and c.status == "False" and \
                f"quota exceeded: {QUOTA}, requested: requests.cpu=1" in (c.message or ""):
            return True
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kubeconfig", required=True)
    ap.add_argument("--writer-pid", type=int, required=True)
    a = ap.parse_args()
    config.load_kube_config(config_file=a.kubeconfig)
    v1 = client.CoreV1Api()

    v1.create_namespace({"metadata": {"name": NS, "labels": {"quota.allot.dev/mode": "deferred"}}})
    v1.create_namespaced_resource_quota(NS, quota_body(HARD_CPU))
    q = v1.read_namespaced_resource_quota(QUOTA, NS)
    if "requests.cpu" in (q.spec.hard or {}):
        sys.exit(f"FAIL: requests.cpu left in spec.hard: {q.spec.hard}")

    stop = threading.Event()
    worst = {"cpu": 0}

    def sampler():
        while not stop.is_set():
            n = len(bound(pods(v1)))
            worst["cpu"] = max(worst["cpu"], n)
            if n > HARD_CPU:
                log(f"VIOLATION: {n} cpu bound against {HARD_CPU}")
            stop.wait(SAMPLE_GAP_S)

    made, refused, errors = [], [0], []
    lock = threading.Lock()
    names = iter(range(PODS))

    def creator():
        while True:
            with lock:
                i = next(names, None)
            if i is None:
                return
            try:
                v1.create_namespaced_pod(NS, pod_body(f"p{i:03d}"))
                with lock:
                    made.append(f"p{i:03d}")
            except ApiException as e:
                with lock:
                    if e.status == 403 and "exceeded quota" in (e.body or ""):
                        refused[0] += 1
                    else:
                        errors.append(f"p{i}: {e.status} {e.body}")

    deleted = []

    def deleter():
        while len(deleted) < DELETES and not stop.is_set():
            b = [p.metadata.name for p in bound(pods(v1)) if p.metadata.name not in deleted]
            if b:
                v1.delete_namespaced_pod(b[0], NS, grace_period_seconds=0)
                deleted.append(b[0])
            stop.wait(0.3)

    # (daemons: a failure exits without waiting for them)
    threads = [threading.Thread(target=sampler, daemon=True)]
    threads += [threading.Thread(target=creator, daemon=True) for _ in range(CLIENTS)]
    dt = threading.Thread(target=deleter, daemon=True)
    for t in threads:
        t.start()
    dt.start()
    # the writer replica killed once binds are under way
    until(60, "a first bind", lambda: bound(pods(v1)))
    os.kill(a.writer_pid, signal.SIGKILL)
    log(f"writer replica {a.writer_pid} killed")
    for t in threads[1:]:
        t.join()
    log(f"created {len(made)}, refused by the pods quota {refused[0]}, other errors {len(errors)}")
    if errors:
        sys.exit("FAIL: unexpected create errors: " + "; ".join(errors[:5]))
    dt.join(timeout=120)
    if len(deleted) < DELETES:
        sys.exit(f"FAIL: only {len(deleted)} bound pods deleted")
    live = len(made) - len(deleted)

    # the books settle: HARD_CPU bound, the rest Pending on the quota
    def settled():
        items = pods(v1)
        b = bound(items)
        q = v1.read_namespaced_resource_quota(QUOTA, NS)
        book = json.loads((q.metadata.annotations or {}).get(BOOK, "{}"))
        used = book.get("used", {}).get("requests.cpu")
        waiting = [p for p in items if not p.spec.node_name]
        ok = (len(b) == min(HARD_CPU, live) and used == str(len(b)) and
              not book.get("reservations") and all(quota_message(p) for p in waiting))
        return (len(b), len(waiting)) if ok else None

    res = until(120, "the book settled at the recount, every unbound pod on the quota's message",
                settled)
    stop.set()
    threads[0].join()
    log(f"settled: {res[0]} bound, {res[1]} Pending with the quota's message; "
        f"most ever bound {worst['cpu']}")
    if worst["cpu"] > HARD_CPU:
        sys.exit(f"FAIL: {worst['cpu']} cpu bound at once against {HARD_CPU}")

    # raised: every pod binds
    start = time.monotonic()
    v1.replace_namespaced_resource_quota(QUOTA, NS, quota_body(RAISED_CPU))
    until(120, f"all {live} pods bound after the quota was raised",
          lambda: len(bound(pods(v1))) == live)
    log(f"quota raised to {RAISED_CPU}: all {live} bound in "
        f"{(time.monotonic() - start) * 1000:.0f} ms")
    print(f"ok: {len(made)} of {PODS} created, {len(deleted)} deleted, the writer killed; "
          f"never more than {HARD_CPU} cpu bound (most {worst['cpu']}); books exact; "
          f"all bound once raised")


if __name__ == "__main__":
    main()
