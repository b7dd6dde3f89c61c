"""pool_release.py - time from a claim's release to the next queued claim
bound, seen by a watcher (python3-kubernetes, against a running allotd).

One pool holding requests.cpu 1. Each round: a claim for 1 cpu is created and
waits (PoolExhausted) behind the bound one; the bound one is released
(annotation projectcapsule.dev/release: "true"); the clock runs from just
before the release request is sent until a watch event shows the waiting
claim bound (Exhausted=False). The released claim, queued again behind it,
is then deleted. Prints p50/p99/max over ROUNDS rounds."""
import os, statistics, sys, threading, time
from kubernetes import client, config, watch

config.load_kube_config(config_file=os.environ["KUBECONFIG"])
core = client.CoreV1Api()
co = client.CustomObjectsApi()
G, V = "capsule.clastix.io", "v1beta2"
NS = "pool-release"
ROUNDS = int(os.environ.get("ROUNDS", "200"))

core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS, labels={"bench": "release"})))
co.create_cluster_custom_object(G, V, "resourcepools", {
    "apiVersion": f"{G}/{V}", "kind": "ResourcePool", "metadata": {"name": "release"},
    "spec": {"quota": {"hard": {"requests.cpu": "1"}}, "selectors": [{"matchLabels": {"bench": "release"}}]}})

def claim(name):
    return {"apiVersion": f"{G}/{V}", "kind": "ResourcePoolClaim", "metadata": {"name": name},
            "spec": {"pool": "release", "claim": {"requests.cpu": "1"}}}

def is_bound(obj):
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Exhausted":
            return c.get("status") == "False"
    return False

bound = {}          # name -> monotonic time first seen bound
seen = threading.Condition()
ready = threading.Event()

def follow():
    w = watch.Watch()
    ready.set()
    for ev in w.stream(co.list_namespaced_custom_object, G, V, NS, "resourcepoolclaims",
                       timeout_seconds=600):
        o = ev["object"]
        name = o["metadata"]["name"]
        if is_bound(o) and name not in bound:
            with seen:
                bound[name] = time.monotonic()
                seen.notify_all()

def wait_bound(name, limit=30.0):
    with seen:
        if not seen.wait_for(lambda: name in bound, timeout=limit):
            sys.exit(f"claim {name} was not bound within {limit} s")
        return bound[name]

threading.Thread(target=follow, daemon=True).start()
ready.wait()
co.create_namespaced_custom_object(G, V, NS, "resourcepoolclaims", claim("c-0"))
wait_bound("c-0")
lat = []
for i in range(1, ROUNDS + 1):
    co.create_namespaced_custom_object(G, V, NS, "resourcepoolclaims", claim(f"c-{i}"))  # waits
    t0 = time.monotonic()
    co.patch_namespaced_custom_object(G, V, NS, "resourcepoolclaims", f"c-{i-1}",
                                      {"metadata": {"annotations": {"projectcapsule.dev/release": "true"}}})
    lat.append((wait_bound(f"c-{i}") - t0) * 1000)
    # the released claim queued again behind c-{i}: out of the next round's way
    co.delete_namespaced_custom_object(G, V, NS, "resourcepoolclaims", f"c-{i-1}")
lat.sort()
p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
print(f"release -> next queued claim bound (watch), {len(lat)} rounds: "
      f"p50 {statistics.median(lat):.2f} ms, p99 {p(0.99):.2f} ms, max {lat[-1]:.2f} ms")
