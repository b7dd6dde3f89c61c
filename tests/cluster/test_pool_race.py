#!/usr/bin/python3
"""test_pool_race.py - issue 28's race test ("Done when", second bullet), as
far as cluster mode is built: pools and claims. Custom quotas in cluster mode
are not built (docs/cluster-mode.md, "Not built yet": no webhooks on the
kinds they count, no reservations), so no CustomQuota-counted objects are
created and "every CustomQuota's recounted usage <= limit" is not checked.

Run by test_pool_race.sh (ctest cluster/pool-race) on the real
kube-apiserver v1.20.2 of scripts/kube-up.sh (no kubelet: pods stay Pending,
but the cluster's own quota admission charges them to the capsule-pool-*
ResourceQuotas at create, which is what is enforced here). Talks to the
cluster with Debian's python3-kubernetes (its configuration, auth and
connections; requests made raw with call_api, so every body is plain JSON).

The run:
- two allotd replicas in cluster mode: A with --webhook-address (the API
  server calls its webhooks), B without (another port and data dir; it
  competes for the Lease allot-system/allot and writes when it leads);
- pools pa (selects pool-a=on) and pb (pool-b=on), requests.cpu 4 and pods
  10, defaultsZero (a selected namespace's quota holds 0 of everything no
  bound claim gives, so every pod there is bounded); namespaces t1, t2 (pa),
  t3 (pb), t4 (both);
- LOAD_S seconds of 32 client threads: create claims of random sizes, delete
  claims (allot refuses deleting one in use), create pods with cpu requests
  (the cluster's quota refuses what does not fit), delete pods, resize a
  pool's hard up and down (allot refuses going below what is claimed); one
  more thread relabels t2 out of pa and back in; another SIGKILLs whichever
  replica holds the Lease, twice, restarting it with the same flags after
  KILL_DOWN_S. With A down the webhooks fail (failurePolicy Fail): "failed
  calling webhook" is an expected refusal, like every refusal listed in
  EXPECTED. Other errors are counted and printed, not failed on: the
  invariants are what this test decides on.
- a sampler reads the cluster every SAMPLE_GAP_S and checks what must hold
  at every instant (see sample() for why each check is sound although its
  reads are not one snapshot);
- at the end, the load stopped, it waits (bounded) until the cluster is
  quiet for QUIET_S and checks the books exactly (final_check()).

Passes when no invariant was seen broken, both kills happened, and the load
did something (claims and pods were created). Everything waited for has a
deadline; no outcome depends on how fast the machine is beyond those.
ALLOT_RACE_KEEP=DIR copies the replicas' logs and the trace of every write
(trace.jsonl) to DIR.
"""
import argparse
import json
import os
import random
import re
import shutil
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from fractions import Fraction

from kubernetes import client, config
from kubernetes.client.rest import ApiException

G, V = "capsule.clastix.io", "v1beta2"
POOLS = {"pa": "pool-a", "pb": "pool-b"}  # pool -> the label (value "on") it selects
NAMESPACES = {"t1": ["pa"], "t2": ["pa"], "t3": ["pb"], "t4": ["pa", "pb"]}
RELABELLED, RELABEL_POOL = "t2", "pa"
POOL_HARD = {"requests.cpu": "4", "pods": "10"}
RESOURCES = sorted(POOL_HARD)
CLIENTS = 32
LOAD_S = float(os.environ.get("ALLOT_RACE_SECONDS", "60"))
KILL_AT_S = (12.0, 32.0)  # earliest moments of the two kills, from the load's start
KILL_DOWN_S = 2.0  # how long a killed replica stays down (the scenario, not a wait)
SAMPLE_GAP_S = 0.5
QUIET_S = 5.0
SETTLE_S = 60.0
HOLD_PREFIX = "release.allot.dev/"
RQ_PREFIX = "capsule-pool-"

# Refusals the scenario provokes on purpose (substring of the Status message).
EXPECTED = [
    ("webhook down", "failed calling webhook"),
    ("claim in use", "is used in resourcepool"),
    ("claim in use", "while it is used in resourcepool"),
    ("namespace's claim in use", "namespace cannot leave resourcepool"),
    ("quota exceeded", "exceeded quota"),
    ("quota status unknown", "status unknown for quota"),
    ("pool below claimed", "can not reduce"),
    ("release raced a pod", "the namespace's quota changed while the claim was released"),
    ("conflict", "the object has been modified"),
]

T0 = time.monotonic()


def now():
    return time.monotonic() - T0


def log(msg):
    print(f"[{now():7.2f}] {msg}", flush=True)


# ---- quantities (exact, as Fractions) ----

_SUFFIX = {"": 1, "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000),
           "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def qty(s):
    m = re.fullmatch(r"([+-]?[0-9]*\.?[0-9]+)(?:[eE]([+-]?[0-9]+))?([a-zA-Z]*)", str(s))
    if not m or m.group(3) not in _SUFFIX:
        raise ValueError(f"not a quantity: {s!r}")
    v = Fraction(m.group(1)) * _SUFFIX[m.group(3)]
    return v * Fraction(10) ** int(m.group(2)) if m.group(2) else v


def rl(d):
    """A resource list (name -> quantity string) as name -> Fraction."""
    return {k: qty(v) for k, v in (d or {}).items()}


def rl_add(a, b):
    for k, v in b.items():
        a[k] = a.get(k, 0) + v
    return a


def fmt(d):
    return "{" + ", ".join(f"{k}={float(v):g}" for k, v in sorted(d.items())) + "}"


def pod_usage(p):
    """What the quota charges a pod for, of RESOURCES (one container each here)."""
    cpu = Fraction(0)
    for c in p["spec"].get("containers", []):
        cpu += qty(c.get("resources", {}).get("requests", {}).get("cpu", "0"))
    return {"requests.cpu": cpu, "pods": Fraction(1)}


# ---- the cluster ----

class Kube:
    """One connection pool to the real API server (one per thread)."""

    def __init__(self, cfg):
        self.api = client.ApiClient(cfg)

    def req(self, method, path, body=None, ctype="application/json", timeout=30):
        """(HTTP status, decoded body); status 0 when no answer came."""
        try:
            data, status, _ = self.api.call_api(
                path, method, header_params={"Content-Type": ctype, "Accept": "application/json"},
                body=body, auth_settings=["BearerToken"], _preload_content=False,
                _request_timeout=timeout)
            raw = data.data
            return status, json.loads(raw) if raw else {}
        except ApiException as e:
            try:
                b = json.loads(e.body)
            except (TypeError, ValueError):
                b = {"message": str(e.body or e.reason)}
            return e.status, b if isinstance(b, dict) else {"message": str(b)}
        except Exception as e:  # urllib3's timeouts and connection errors
            return 0, {"message": f"{type(e).__name__}: {e}"}

    def items(self, path):
        st, b = self.req("GET", path)
        if st != 200:
            raise RuntimeError(f"GET {path}: HTTP {st}: {b.get('message')}")
        return b["items"]


def claims_path(ns=None):
    return f"/apis/{G}/{V}/" + (f"namespaces/{ns}/" if ns else "") + "resourcepoolclaims"


def pools_path(name=None):
    return f"/apis/{G}/{V}/resourcepools" + (f"/{name}" if name else "")


def bound_pool(c):
    """(pool name, pool uid) a claim's status says it is bound to, else None:
    a pool named and its Exhausted condition False (pool_books.c's
    pb_bound_to, whose caller also matches the uid)."""
    st = c.get("status") or {}
    p = st.get("pool") or {}
    if not p.get("name"):
        return None
    for cond in st.get("conditions") or []:
        if cond.get("type") == "Exhausted":
            return (p["name"], p.get("uid", "")) if cond.get("status") == "False" else None
    return None


def deadline_wait(what, seconds, fn, gap=0.2):
    """fn() until truthy, at most `seconds`; its last value, or raise."""
    end = time.monotonic() + seconds
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() >= end:
            raise RuntimeError(f"{what}: not within {seconds:g} s")
        time.sleep(gap)


# ---- the replicas ----

class Replica:
    def __init__(self, name, allotd, args, work, registry):
        self.name, self.allotd, self.args, self.work = name, allotd, args, work
        self.registry = registry  # the pid file's writer
        self.proc, self.starts, self.ident, self.port = None, 0, None, None
        for i, a in enumerate(args):
            if a in ("--port",):
                self.port = int(args[i + 1])
            elif a == "--webhook-address":
                self.port = int(args[i + 1].rsplit(":", 1)[1])

    def logfile(self, n=None):
        return os.path.join(self.work, f"allotd-{self.name}-{n or self.starts}.log")

    def start(self):
        self.starts += 1
        self.ident = None
        with open(self.logfile(), "wb") as lf:
            self.proc = subprocess.Popen([self.allotd] + self.args, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=lf)
        self.registry()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        if self.alive():
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()
        self.registry()

    def read_identity(self):
        """Its Lease identity, from its "cluster mode started" line."""
        try:
            with open(self.logfile(), "rb") as f:
                for line in f:
                    if b"cluster mode started" in line:
                        self.ident = json.loads(line)["identity"]
        except (OSError, ValueError, KeyError):
            pass
        return self.ident

    def ready(self):
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        try:
            with urllib.request.urlopen(f"https://127.0.0.1:{self.port}/readyz", context=ctx,
                                        timeout=5) as r:
                return r.status == 200
        except Exception:
            return False

    def wait_up(self, seconds=60):
        def up(what):
            if not self.alive():
                raise RuntimeError(f"allotd {self.name} exited ({self.proc.returncode})")
            return what()

        deadline_wait(f"allotd {self.name}: identity logged", seconds,
                      lambda: up(self.read_identity))
        deadline_wait(f"allotd {self.name}: /readyz 200", seconds, lambda: up(self.ready))


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


# ---- what the run records ----

class Record:
    def __init__(self, work):
        self.mu = threading.Lock()
        self.counts = {}
        self.unexpected = {}
        self.violations = {}  # (invariant, object, resource) -> dict
        self.timeline = []
        self.trace = open(os.path.join(work, "trace.jsonl"), "w")

    def count(self, key, n=1):
        with self.mu:
            self.counts[key] = self.counts.get(key, 0) + n

    def event(self, text):
        with self.mu:
            self.timeline.append((now(), text))
        log(text)

    def op(self, kind, obj, status, body):
        """One write's outcome: counted as ok, an expected refusal or unexpected."""
        msg = body.get("message", "") if isinstance(body, dict) else str(body)
        with self.mu:
            self.trace.write(json.dumps({"t": round(now(), 3), "op": kind, "obj": obj,
                                         "status": status, "message": msg[:300]}) + "\n")
        if 200 <= status <= 299:
            self.count(f"{kind} ok")
            return "ok"
        if status == 404 and kind.endswith("delete"):
            self.count(f"{kind} gone already")
            return "gone"
        for why, text in EXPECTED:
            if text in msg:
                self.count(f"{kind} refused: {why}")
                return "refused"
        self.count(f"{kind} unexpected error")
        with self.mu:
            k = (kind, status, re.sub(r"\b[ct]\d+-\d+\b|\"[a-z0-9-]+\"", "X", msg)[:160])
            self.unexpected.setdefault(k, [0, msg[:400]])[0] += 1
        return "error"

    def violation(self, invariant, obj, resource, detail):
        key = (invariant, obj, resource)
        with self.mu:
            v = self.violations.get(key)
            if v is None:
                self.violations[key] = {"first": now(), "last": now(), "n": 1, "detail": detail}
                self.timeline.append((now(), f"VIOLATION {invariant}: {obj} {resource}: {detail}"))
                first = True
            else:
                v["last"], v["n"] = now(), v["n"] + 1
                first = False
        if first:
            log(f"VIOLATION {invariant}: {obj} {resource}: {detail}")


# ---- the load ----

class Gate:
    """Pod creates in the relabelled namespace against its relabelling: while
    closed no pod create there starts, and closing waits for those in flight.
    So whatever pod is found there after the namespace left its pool was
    created while the namespace was in the pool (bounded by its quota, and so
    using a claim): the namespace left with a claim in use."""

    def __init__(self):
        self.cv = threading.Condition()
        self.inside = 0
        self.closed = False

    def enter(self):
        with self.cv:
            if self.closed:
                return False
            self.inside += 1
            return True

    def leave(self):
        with self.cv:
            self.inside -= 1
            self.cv.notify_all()

    def close(self, seconds):
        with self.cv:
            self.closed = True
            return self.cv.wait_for(lambda: self.inside == 0, seconds)

    def open(self):
        with self.cv:
            self.closed = False


class Load:
    def __init__(self, cfg, rec, stop):
        self.cfg, self.rec, self.stop = cfg, rec, stop
        self.mu = threading.Lock()
        self.claims = {ns: set() for ns in NAMESPACES}  # names created, not seen deleted
        self.pods = {ns: set() for ns in NAMESPACES}
        self.gate = Gate()

    def client(self, i):
        kube = Kube(self.cfg)
        rnd = random.Random(i * 7919 + int(time.time()))
        seq = 0
        ops = [(22, self.create_claim), (22, self.delete_claim), (30, self.create_pod),
               (20, self.delete_pod), (3, self.resize_pool)]
        total = sum(w for w, _ in ops)
        while not self.stop.is_set():
            seq += 1
            r = rnd.uniform(0, total)
            for w, fn in ops:
                r -= w
                if r <= 0:
                    break
            fn(kube, rnd, f"{i}-{seq}")
            self.stop.wait(rnd.uniform(0, 0.15))

    def create_claim(self, kube, rnd, tag):
        ns = rnd.choice(sorted(NAMESPACES))
        with self.mu:
            many = len(self.claims[ns]) >= 12
        if many:
            return self.delete_claim(kube, rnd, tag, ns)
        name = f"c{tag}"
        body = {"apiVersion": f"{G}/{V}", "kind": "ResourcePoolClaim",
                "metadata": {"name": name, "namespace": ns},
                "spec": {"pool": rnd.choice(NAMESPACES[ns]),
                         "claim": {"requests.cpu": rnd.choice(["500m", "1", "1500m", "2"]),
                                   "pods": rnd.choice(["1", "2", "3"])}}}
        st, b = kube.req("POST", claims_path(ns), body)
        if self.rec.op("claim create", f"{ns}/{name}", st, b) == "ok":
            with self.mu:
                self.claims[ns].add(name)

    def delete_claim(self, kube, rnd, tag, ns=None):
        ns = ns or rnd.choice(sorted(NAMESPACES))
        with self.mu:
            names = sorted(self.claims[ns])
        if not names:
            return
        name = rnd.choice(names)
        st, b = kube.req("DELETE", f"{claims_path(ns)}/{name}")
        if self.rec.op("claim delete", f"{ns}/{name}", st, b) in ("ok", "gone"):
            with self.mu:
                self.claims[ns].discard(name)

    def create_pod(self, kube, rnd, tag):
        ns = rnd.choice(sorted(NAMESPACES))
        if ns == RELABELLED and not self.gate.enter():
            return
        try:
            name = f"p{tag}"
            body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
                    "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.2",
                                             "resources": {"requests": {"cpu": rnd.choice(
                                                 ["250m", "500m", "1"])}}}]}}
            st, b = kube.req("POST", f"/api/v1/namespaces/{ns}/pods", body)
            if self.rec.op("pod create", f"{ns}/{name}", st, b) == "ok":
                with self.mu:
                    self.pods[ns].add(name)
        finally:
            if ns == RELABELLED:
                self.gate.leave()

    def delete_pod(self, kube, rnd, tag):
        ns = rnd.choice(sorted(NAMESPACES))
        with self.mu:
            names = sorted(self.pods[ns])
        if not names:
            return
        name = rnd.choice(names)
        st, b = kube.req("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}",
                         {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0})
        if self.rec.op("pod delete", f"{ns}/{name}", st, b) in ("ok", "gone"):
            with self.mu:
                self.pods[ns].discard(name)

    def resize_pool(self, kube, rnd, tag):
        pool = rnd.choice(sorted(POOLS))
        hard = {"requests.cpu": rnd.choice(["2", "3", "4", "5", "6"]),
                "pods": rnd.choice(["6", "8", "10", "12"])}
        st, b = kube.req("PATCH", pools_path(pool), {"spec": {"quota": {"hard": hard}}},
                         "application/merge-patch+json")
        if self.rec.op("pool resize", pool, st, b) == "ok":
            self.rec.event(f"pool {pool} hard -> {hard}")

    # -- t2 leaves pa and comes back --

    def relabeller(self):
        kube = Kube(self.cfg)
        path = f"/api/v1/namespaces/{RELABELLED}"
        label = POOLS[RELABEL_POOL]
        while not self.stop.wait(random.uniform(4, 7)):
            if not self.gate.close(40):
                self.rec.event("relabel: pod creates in flight did not end within 40 s")
                self.gate.open()
                continue
            st, b = kube.req("PATCH", path, {"metadata": {"labels": {label: None}}},
                             "application/merge-patch+json")
            if self.rec.op("relabel out", RELABELLED, st, b) != "ok":
                self.gate.open()
                continue
            self.rec.event(f"relabel: {RELABELLED} left {RELABEL_POOL}")
            self.left_with_pods(kube)
            self.stop.wait(random.uniform(2, 4))
            self.back_in(kube, path, label)

    def left_with_pods(self, kube):
        """No pod was created there since the gate closed: any pod found now
        existed when the relabel was committed, and used a claim of the pool."""
        try:
            pods = kube.items(f"/api/v1/namespaces/{RELABELLED}/pods")
        except RuntimeError as e:
            self.rec.event(f"relabel: cannot list the pods of {RELABELLED}: {e}")
            return
        if pods:
            names = sorted(p["metadata"]["name"] for p in pods)
            self.rec.violation("namespace left its pool with a claim in use", RELABELLED, "-",
                               f"{len(pods)} pod(s) there after it left {RELABEL_POOL}: "
                               f"{', '.join(names[:8])}")

    def back_in(self, kube, path, label):
        """Back into the pool (retried: it must come back), and pods there
        again only once its quota is in place with a status the cluster's
        quota admission can use (before that pods would be unbounded)."""
        end = time.monotonic() + 60
        while time.monotonic() < end:
            st, b = kube.req("PATCH", path, {"metadata": {"labels": {label: "on"}}},
                             "application/merge-patch+json")
            if self.rec.op("relabel in", RELABELLED, st, b) == "ok":
                break
            time.sleep(0.5)
        else:
            self.rec.event(f"relabel: {RELABELLED} could not be put back in {RELABEL_POOL}")
            return
        self.rec.event(f"relabel: {RELABELLED} back in {RELABEL_POOL}")

        def quota_ready():
            st, q = kube.req("GET", f"{path}/resourcequotas/{RQ_PREFIX}{RELABEL_POOL}")
            return st == 200 and (q.get("status") or {}).get("hard")

        try:
            deadline_wait("quota back", 60, quota_ready, 0.3)
            self.gate.open()
        except RuntimeError:
            self.rec.event(f"relabel: no {RQ_PREFIX}{RELABEL_POOL} in {RELABELLED} within 60 s; "
                           f"no more pods there")


# ---- the leader killer ----

def lease_holder(kube):
    st, b = kube.req("GET", "/apis/coordination.k8s.io/v1/namespaces/allot-system/leases/allot")
    return (b.get("spec") or {}).get("holderIdentity") if st == 200 else None


def killer(cfg, replicas, rec, t_load, done):
    """Kill whichever live replica holds the Lease at KILL_AT_S, restart it
    after KILL_DOWN_S. A kill waits (bounded) for a live holder: after the
    first, the Lease stays with the dead identity until it expires (15 s)."""
    kube = Kube(cfg)
    try:
        for n, at in enumerate(KILL_AT_S, 1):
            time.sleep(max(0.0, t_load + at - time.monotonic()))

            def live_holder():
                h = lease_holder(kube)
                return next((r for r in replicas if r.alive() and r.ident and r.ident == h), None)

            r = deadline_wait(f"kill {n}: a live replica holding the Lease", 45, live_holder, 0.2)
            r.kill()
            rec.count("leader kills")
            rec.event(f"kill {n}: SIGKILL allotd {r.name} (leader {r.ident})")
            time.sleep(KILL_DOWN_S)
            r.start()
            r.wait_up(60)
            rec.event(f"kill {n}: allotd {r.name} restarted and ready as {r.ident}")
    except RuntimeError as e:
        rec.event(f"killer: {e}")
    finally:
        done.set()


# ---- the sampler ----

class Sampler:
    def __init__(self, cfg, rec):
        self.kube, self.rec = Kube(cfg), rec
        self.samples = 0

    def run(self, stop):
        while not stop.wait(SAMPLE_GAP_S):
            try:
                self.sample()
            except (RuntimeError, KeyError, ValueError) as e:
                self.rec.count("samples failed")
                log(f"sample failed: {e}")

    def sample(self):
        """Six reads, in order: claims (1), pods (2), pools (3), quotas (4),
        pods (5), claims (6). They are not one snapshot: each list is
        consistent in itself, but any write may fall between two of them.
        So each check compares a list with one object only through what
        provably held at the moment that object was read:

        - a claim with the same resourceVersion in reads 1 and 6 did not
          change in between (a resourceVersion is never reused): it was
          there, with that status, when the pools were read (3). Claims
          bound throughout are a subset of those bound at (3), so their sum
          is <= the true sum at (3) and exceeding the pool's hard read at
          (3) is a real violation; a claim bound or released in between
          (a legitimate change of the books) is left out instead of mixing
          two versions of the books.
        - a pod (same uid) in reads 2 and 5 existed when the quotas were
          read (4): a pod that is gone never comes back under its uid. Pods
          are bounded at admission by their namespace's quota and a quota's
          hard is lowered only when its usage still fits (release_guard.c),
          so those pods' requests must fit every capsule-pool quota of
          their namespace as read at (4).
        - a pool's status.allocation against its own spec, and a quota's
          status.used against its own spec.hard, come from one read of one
          object: one version, no mixing.
        """
        k = self.kube
        c1 = {c["metadata"]["uid"]: c for c in k.items(claims_path())}
        p1 = {p["metadata"]["uid"]: p for p in k.items("/api/v1/pods")
              if p["metadata"]["namespace"] in NAMESPACES}
        pools = {p["metadata"]["name"]: p for p in k.items(pools_path())}
        quotas = [q for q in k.items("/api/v1/resourcequotas")
                  if q["metadata"]["name"].startswith(RQ_PREFIX)
                  and q["metadata"]["namespace"] in NAMESPACES]
        p5 = {p["metadata"]["uid"] for p in k.items("/api/v1/pods")
              if p["metadata"]["namespace"] in NAMESPACES}
        c6 = {c["metadata"]["uid"]: c["metadata"]["resourceVersion"]
              for c in k.items(claims_path())}
        self.samples += 1
        t = f"sample {self.samples}"

        steady = [c for u, c in c1.items() if c6.get(u) == c["metadata"]["resourceVersion"]]
        for name, pool in pools.items():
            hard = rl(pool["spec"]["quota"].get("hard"))
            bound = {}
            who = []
            for c in steady:
                if bound_pool(c) == (name, pool["metadata"]["uid"]):
                    rl_add(bound, rl(c["spec"]["claim"]))
                    who.append(f"{c['metadata']['namespace']}/{c['metadata']['name']}")
            for res, h in hard.items():
                if bound.get(res, 0) > h:
                    self.rec.violation("bound claims exceed the pool's hard", f"pool {name}", res,
                                       f"{t}: bound {fmt(bound)} > hard {fmt(hard)} "
                                       f"(pool rv {pool['metadata']['resourceVersion']}; "
                                       f"claims {', '.join(sorted(who))})")
            used = rl(((pool.get("status") or {}).get("allocation") or {}).get("used"))
            for res, h in hard.items():
                if used.get(res, 0) > h:
                    self.rec.violation("pool allocation exceeds its hard", f"pool {name}", res,
                                       f"{t}: status.allocation.used {fmt(used)} > spec hard "
                                       f"{fmt(hard)} (rv {pool['metadata']['resourceVersion']})")

        steady_pods = [p for u, p in p1.items() if u in p5]
        for q in quotas:
            ns, qn = q["metadata"]["namespace"], q["metadata"]["name"]
            hard = rl(q["spec"].get("hard"))
            st = q.get("status") or {}
            used = rl(st.get("used"))
            for res, h in hard.items():
                if res in used and used[res] > h:
                    self.rec.violation("quota used exceeds its hard", f"{ns}/{qn}", res,
                                       f"{t}: status.used {fmt(used)} > spec.hard {fmt(hard)} "
                                       f"(status.hard {fmt(rl(st.get('hard')))}, rv "
                                       f"{q['metadata']['resourceVersion']}, annotations "
                                       f"{holds_of(q)})")
            pods_use = {}
            names = []
            for p in steady_pods:
                if p["metadata"]["namespace"] == ns:
                    rl_add(pods_use, pod_usage(p))
                    names.append(p["metadata"]["name"])
            for res, h in hard.items():
                if pods_use.get(res, 0) > h:
                    self.rec.violation("pods exceed their namespace's quota", f"{ns}/{qn}", res,
                                       f"{t}: pods {fmt(pods_use)} > spec.hard {fmt(hard)} "
                                       f"(rv {q['metadata']['resourceVersion']}, pods "
                                       f"{', '.join(sorted(names))}, annotations {holds_of(q)})")


def holds_of(q):
    return {k[len(HOLD_PREFIX):]: v for k, v in
            ((q["metadata"].get("annotations")) or {}).items() if k.startswith(HOLD_PREFIX)}


# ---- the end ----

def snapshot(kube):
    return {
        "pools": {p["metadata"]["name"]: p for p in kube.items(pools_path())},
        "claims": kube.items(claims_path()),
        "quotas": [q for q in kube.items("/api/v1/resourcequotas")
                   if q["metadata"]["name"].startswith(RQ_PREFIX)],
        "namespaces": {n["metadata"]["name"]: n for n in kube.items("/api/v1/namespaces")},
        "pods": [p for p in kube.items("/api/v1/pods") if p["metadata"]["namespace"] in NAMESPACES],
    }


def signature(s):
    """What the writer writes, as (kind, namespace, name, resourceVersion)."""
    tagged = [("pool", o) for o in s["pools"].values()] + [("claim", o) for o in s["claims"]] + \
        [("quota", o) for o in s["quotas"]] + [("namespace", o) for o in s["namespaces"].values()]
    return sorted((k, o["metadata"].get("namespace", ""), o["metadata"]["name"],
                   o["metadata"]["resourceVersion"]) for k, o in tagged)


def final_check(s, wall):
    """The books, exactly, on one quiet state of the cluster (nothing written
    for QUIET_S before and during these reads). [] when all holds."""
    bad = []
    pools = s["pools"]
    selected = {(ns, p) for ns, o in s["namespaces"].items() if ns in NAMESPACES
                for p, label in POOLS.items()
                if ((o["metadata"].get("labels") or {}).get(label)) == "on"}
    claims_by_uid = {c["metadata"]["uid"]: c for c in s["claims"]}
    bound_ns = {}  # (ns, pool) -> sum of bound claims
    bound_pool_sum = {p: {} for p in pools}
    for c in s["claims"]:
        b = bound_pool(c)
        if b and b[0] in pools and pools[b[0]]["metadata"]["uid"] == b[1]:
            amt = rl(c["spec"]["claim"])
            rl_add(bound_pool_sum[b[0]], amt)
            rl_add(bound_ns.setdefault((c["metadata"]["namespace"], b[0]), {}), amt)
    for name, pool in pools.items():
        hard = rl(pool["spec"]["quota"].get("hard"))
        used = rl(((pool.get("status") or {}).get("allocation") or {}).get("used"))
        for res in hard:
            if bound_pool_sum[name].get(res, 0) > hard[res]:
                bad.append(f"pool {name}: bound claims {fmt(bound_pool_sum[name])} > hard {fmt(hard)}")
            if used.get(res, 0) > hard[res]:
                bad.append(f"pool {name}: allocation {fmt(used)} > hard {fmt(hard)}")
            if used.get(res, 0) != bound_pool_sum[name].get(res, 0):
                bad.append(f"pool {name}: allocation {fmt(used)} != bound claims "
                           f"{fmt(bound_pool_sum[name])} ({res})")
    quotas = {(q["metadata"]["namespace"], q["metadata"]["name"][len(RQ_PREFIX):]): q
              for q in s["quotas"]}
    for ns in sorted(NAMESPACES):
        pods_use = {}
        for p in s["pods"]:
            if p["metadata"]["namespace"] == ns:
                rl_add(pods_use, pod_usage(p))
        for pool in sorted(POOLS):
            q = quotas.get((ns, pool))
            if (ns, pool) not in selected:
                if q is not None:
                    bad.append(f"{ns}: {RQ_PREFIX}{pool} still there, {ns} is not in pool {pool}")
                continue
            if q is None:
                bad.append(f"{ns}: no {RQ_PREFIX}{pool}, {ns} is in pool {pool}")
                continue
            want = {r: bound_ns.get((ns, pool), {}).get(r, Fraction(0))
                    for r in pools[pool]["spec"]["quota"].get("hard", {})}
            # Holds (release_guard.h): a hold keeps back its `give` while its
            # claim is there unchanged and it has not expired; once expired
            # the writer drops it at its next round (a resync, at most 30 s),
            # so either is right then. A hold whose claim is gone or changed
            # must be gone once the writer has settled.
            exact, alt = dict(want), None
            for uid, text in holds_of(q).items():
                try:
                    h = json.loads(text)
                except ValueError:
                    bad.append(f"{ns}/{q['metadata']['name']}: unreadable hold {uid}: {text}")
                    continue
                c = claims_by_uid.get(uid)
                if c is None or c["spec"].get("claim") != h.get("from"):
                    bad.append(f"{ns}/{q['metadata']['name']}: hold {uid} outlives its claim "
                               f"({'deleted' if c is None else 'changed'}): {text}")
                    continue
                give = rl(h.get("give"))
                if wall < h.get("expires", 0):
                    for r, v in give.items():
                        if r in exact:
                            exact[r] = max(Fraction(0), exact[r] - v)
                else:
                    alt = alt or dict(exact)
                    for r, v in give.items():
                        if r in alt:
                            alt[r] = max(Fraction(0), alt[r] - v)
            hard = rl(q["spec"].get("hard"))
            if hard != exact and hard != alt:
                bad.append(f"{ns}/{RQ_PREFIX}{pool}: hard {fmt(hard)} != its bound claims "
                           f"{fmt(exact)} (holds {holds_of(q)})")
            used = rl((q.get("status") or {}).get("used"))
            for res, h in hard.items():
                if used.get(res, 0) > h:
                    bad.append(f"{ns}/{RQ_PREFIX}{pool}: used {fmt(used)} > hard {fmt(hard)}")
                if pods_use.get(res, 0) > h:
                    bad.append(f"{ns}/{RQ_PREFIX}{pool}: pods {fmt(pods_use)} > hard {fmt(hard)}")
    return bad


def settle_and_check(kube, rec):
    """Wait (at most SETTLE_S) for QUIET_S without a write to pools, claims,
    capsule-pool quotas or namespaces, with the books exact; then (or at the
    deadline) the last state's failures are the answer."""
    end = time.monotonic() + SETTLE_S
    last_sig, quiet_since, bad = None, time.monotonic(), ["no state read"]
    while True:
        try:
            s = snapshot(kube)
        except RuntimeError as e:
            log(f"settle: {e}")
            s = None
        if s is not None:
            sig = signature(s)
            if sig != last_sig:
                last_sig, quiet_since = sig, time.monotonic()
            bad = final_check(s, time.time())
            if not bad and time.monotonic() - quiet_since >= QUIET_S:
                rec.event(f"settled: quiet for {QUIET_S:g} s, books exact")
                return []
        if time.monotonic() >= end:
            rec.event(f"not settled within {SETTLE_S:g} s")
            return bad
        time.sleep(0.5)


# ---- setup ----

def setup(kube, rec):
    for ns, pools in NAMESPACES.items():
        body = {"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": ns, "labels": {POOLS[p]: "on" for p in pools}}}
        st, b = kube.req("POST", "/api/v1/namespaces", body)
        if st != 201:
            sys.exit(f"FAIL: create namespace {ns}: HTTP {st}: {b.get('message')}")
    for pool, label in POOLS.items():
        body = {"apiVersion": f"{G}/{V}", "kind": "ResourcePool", "metadata": {"name": pool},
                "spec": {"config": {"defaultsZero": True}, "quota": {"hard": dict(POOL_HARD)},
                         "selectors": [{"matchLabels": {label: "on"}}]}}
        st, b = kube.req("POST", pools_path(), body)
        if st != 201:
            sys.exit(f"FAIL: create pool {pool}: HTTP {st}: {b.get('message')}")
    for ns, pools in NAMESPACES.items():
        # pods need the namespace's ServiceAccount (the controller-manager's)
        deadline_wait(f"ServiceAccount default in {ns}", 60,
                      lambda: kube.req("GET", f"/api/v1/namespaces/{ns}/serviceaccounts/default")[0]
                      == 200)
        deadline_wait(f"{ns} marked allot.dev/pooled", 60,
                      lambda: (kube.req("GET", f"/api/v1/namespaces/{ns}")[1].get("metadata", {})
                               .get("labels", {}).get("allot.dev/pooled")) == "true")
        for p in pools:
            deadline_wait(f"{RQ_PREFIX}{p} in {ns} with a status", 60,
                          lambda: (kube.req("GET", f"/api/v1/namespaces/{ns}/resourcequotas/"
                                   f"{RQ_PREFIX}{p}")[1].get("status") or {}).get("hard"))
    rec.event("setup: namespaces pooled, capsule-pool quotas in place")


def webhooks_sent(kube):
    """The API server calls allot's webhooks: a pool with a negative quota,
    which only allot refuses, is refused (server-side dry run)."""
    body = {"apiVersion": f"{G}/{V}", "kind": "ResourcePool",
            "metadata": {"name": "allot-webhook-probe"}, "spec": {"quota": {"hard": {"pods": "-1"}}}}
    st, b = kube.req("POST", pools_path() + "?dryRun=All", body)
    return st >= 400 and "must be greater than or equal to 0" in b.get("message", "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kube-dir", required=True)
    ap.add_argument("--allotd", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    cfg = client.Configuration()
    config.load_kube_config(config_file=os.path.join(a.kube_dir, "kubeconfig"),
                            client_configuration=cfg)
    rec = Record(a.work)
    kube = Kube(cfg)
    kubeconfig = os.path.join(a.kube_dir, "kubeconfig")
    replicas = []

    def write_pids():
        # test_pool_race.sh kills what is listed here if this script dies
        with open(os.path.join(a.work, "pids.tmp"), "w") as f:
            for r in replicas:
                if r.alive():
                    f.write(f"{r.proc.pid}\n")
        os.replace(os.path.join(a.work, "pids.tmp"), os.path.join(a.work, "pids"))

    pa, pb = free_port(), free_port()
    A = Replica("A", a.allotd, ["--cluster-kubeconfig", kubeconfig, "--webhook-address",
                                f"127.0.0.1:{pa}", "--data-dir", os.path.join(a.work, "data-A")],
                a.work, write_pids)
    B = Replica("B", a.allotd, ["--cluster-kubeconfig", kubeconfig, "--port", str(pb),
                                "--data-dir", os.path.join(a.work, "data-B")], a.work, write_pids)
    replicas += [A, B]
    ok = False
    try:
        A.start()
        A.wait_up()
        deadline_wait("the API server calls allot's webhooks", 30, lambda: webhooks_sent(kube), 0.3)
        B.start()
        B.wait_up()
        rec.event(f"replicas up: A {A.ident} (webhooks, port {pa}), B {B.ident} (port {pb})")
        setup(kube, rec)

        stop, load_stop, killed = threading.Event(), threading.Event(), threading.Event()
        load = Load(cfg, rec, load_stop)
        sampler = Sampler(cfg, rec)
        threads = [threading.Thread(target=load.client, args=(i,), daemon=True)
                   for i in range(CLIENTS)]
        threads.append(threading.Thread(target=load.relabeller, daemon=True))
        st = threading.Thread(target=sampler.run, args=(stop,), daemon=True)
        t_load = time.monotonic()
        kt = threading.Thread(target=killer, args=(cfg, replicas, rec, t_load, killed), daemon=True)
        rec.event(f"load: {CLIENTS} clients for {LOAD_S:g} s")
        for t in threads + [st, kt]:
            t.start()
        # The load runs LOAD_S, and on until both kills are done (bounded by
        # the killer's own deadlines).
        load_stop.wait(LOAD_S)
        killed.wait(150)
        load_stop.set()
        for t in threads:
            t.join(60)
        rec.event("load stopped")
        for r in replicas:
            if not r.alive():
                r.start()
            r.wait_up(60)
        bad = settle_and_check(kube, rec)
        stop.set()
        st.join(30)
        ok = report(rec, sampler, bad)
    finally:
        for r in replicas:
            r.kill()
        keep = os.environ.get("ALLOT_RACE_KEEP")
        if keep:
            rec.trace.flush()
            shutil.copytree(a.work, keep, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("data-*"))
            print(f"logs and trace kept in {keep}")
        if not ok:
            for r in replicas:
                for n in range(1, r.starts + 1):
                    print(f"--- allotd {r.name} start {n} (tail) ---")
                    try:
                        with open(r.logfile(n), "rb") as f:
                            lines = f.read().decode(errors="replace").splitlines()
                        print("\n".join(lines[-12:]))
                    except OSError:
                        pass
    sys.exit(0 if ok else 1)


def report(rec, sampler, bad):
    c = rec.counts
    print("\n==== summary ====")
    for k in sorted(c):
        print(f"  {k:48s} {c[k]}")
    print(f"  {'samples':48s} {sampler.samples}")
    print(f"  {'violations seen while sampling':48s} {len(rec.violations)}")
    print(f"  {'final check failures':48s} {len(bad)}")
    if rec.unexpected:
        print("unexpected errors (counted, not failed on):")
        for (kind, st, _), (n, msg) in sorted(rec.unexpected.items(), key=lambda x: -x[1][0]):
            print(f"  {n:5d} x {kind} HTTP {st}: {msg}")
    print("timeline:")
    for t, e in rec.timeline:
        print(f"  {t:7.2f} {e}")
    fails = []
    for (inv, obj, res), v in sorted(rec.violations.items(), key=lambda x: x[1]["first"]):
        fails.append(f"{inv}: {obj} {res}: seen {v['n']} time(s), {v['first']:.2f}-"
                     f"{v['last']:.2f} s; first: {v['detail']}")
    fails += [f"final: {b}" for b in bad]
    if c.get("leader kills", 0) != len(KILL_AT_S):
        fails.append(f"leader kills: {c.get('leader kills', 0)}, want {len(KILL_AT_S)}")
    for what in ("claim create ok", "pod create ok"):
        if not c.get(what):
            fails.append(f"the load did nothing: no {what}")
    if fails:
        print("FAIL:")
        for f in fails:
            print(f"  {f}")
        return False
    print(f"ok: cluster/pool-race: {c.get('claim create ok', 0)} claims created, "
          f"{c.get('claim delete ok', 0)} deleted; {c.get('pod create ok', 0)} pods created; "
          f"{c.get('leader kills', 0)} leader kills; {sampler.samples} samples, no violation; "
          f"books exact at the end")
    return True


if __name__ == "__main__":
    main()
