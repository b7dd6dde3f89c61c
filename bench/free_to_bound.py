"""free_to_bound.py - time from a quota freeing up (a bound pod deleted) to the
next waiting pod bound, with deferred quota on. Uses python3-kubernetes."""
import os, statistics, threading, time
from kubernetes import client, config, watch

config.load_kube_config(config_file=os.environ["KUBECONFIG"])
core = client.CoreV1Api()
NS = "latency"
core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
core.create_namespaced_resource_quota(NS, client.V1ResourceQuota(
    metadata=client.V1ObjectMeta(name="q"), spec=client.V1ResourceQuotaSpec(hard={"requests.cpu": "1"})))

def pod(name):
    return client.V1Pod(metadata=client.V1ObjectMeta(name=name), spec=client.V1PodSpec(
        termination_grace_period_seconds=0,
        containers=[client.V1Container(name="c", image="x", resources=client.V1ResourceRequirements(requests={"cpu": "1"}))]))

bound = {}
ready = threading.Event()
def follow():
    w = watch.Watch()
    ready.set()
    for ev in w.stream(core.list_namespaced_pod, NS, timeout_seconds=120):
        p = ev["object"]
        if p.spec.node_name and p.metadata.name not in bound:
            bound[p.metadata.name] = time.monotonic()

threading.Thread(target=follow, daemon=True).start()
ready.wait()
core.create_namespaced_pod(NS, pod("r-0"))
while "r-0" not in bound:
    time.sleep(0.005)
lat = []
for i in range(1, 31):
    core.create_namespaced_pod(NS, pod(f"r-{i}"))      # waits: quota is full
    time.sleep(0.05)                                     # let it be found blocked
    t0 = time.monotonic()
    core.delete_namespaced_pod(f"r-{i-1}", NS, grace_period_seconds=0)
    while f"r-{i}" not in bound:
        time.sleep(0.001)
    lat.append((bound[f"r-{i}"] - t0) * 1000)
lat.sort()
print(f"free -> bound: p50 {statistics.median(lat):.1f} ms, p99 {lat[int(len(lat)*0.99)-1]:.1f} ms, max {lat[-1]:.1f} ms over {len(lat)} rounds")
