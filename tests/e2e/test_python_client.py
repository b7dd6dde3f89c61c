"""test_python_client.py - Debian's python3-kubernetes client creates, lists
and watches pods against a real allotd (a second, independent client)."""
import os
import signal
import subprocess
import sys
import tempfile
import threading

from kubernetes import client, config, watch
from e2e_util import free_port, wait_until

ALLOTD = os.environ["ALLOTD"]


def main():
    tmp = tempfile.mkdtemp(prefix="allot-py-")
    data = os.path.join(tmp, "data")
    log = open(os.path.join(tmp, "allotd.log"), "w")
    proc = subprocess.Popen([ALLOTD, "--data-dir", data, "--port", str(free_port())],
                            stderr=log)
    try:
        kubeconfig = os.path.join(data, "kubeconfig")
        assert wait_until(60, lambda: os.path.exists(kubeconfig) and os.path.getsize(kubeconfig) > 0), \
            "allotd did not become ready"
        config.load_kube_config(config_file=kubeconfig)
        core = client.CoreV1Api()
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py")))

        # Watch in the background from the list's resourceVersion.
        listed = core.list_namespaced_pod("py")
        seen = []
        w = watch.Watch()

        def follow():
            for ev in w.stream(core.list_namespaced_pod, "py",
                               resource_version=listed.metadata.resource_version,
                               timeout_seconds=20):
                seen.append((ev["type"], ev["object"].metadata.name))
                # other writers (the scheduler's conditions) add MODIFIED events
                if ("DELETED", "p0") in seen:
                    w.stop()

        t = threading.Thread(target=follow)
        t.start()

        for i in range(3):
            pod = client.V1Pod(
                metadata=client.V1ObjectMeta(name=f"p{i}", labels={"app": "demo", "i": str(i)}),
                spec=client.V1PodSpec(containers=[client.V1Container(
                    name="c", image="busybox",
                    resources=client.V1ResourceRequirements(requests={"cpu": "100m"}))]))
            created = core.create_namespaced_pod("py", pod)
            assert created.metadata.uid, "no uid"
            assert created.status.phase == "Pending", created.status.phase
            assert created.spec.restart_policy == "Always"

        pods = core.list_namespaced_pod("py", label_selector="app=demo")
        assert sorted(p.metadata.name for p in pods.items) == ["p0", "p1", "p2"]
        one = core.list_namespaced_pod("py", label_selector="i in (1)")
        assert [p.metadata.name for p in one.items] == ["p1"]
        byname = core.list_namespaced_pod("py", field_selector="metadata.name=p2")
        assert [p.metadata.name for p in byname.items] == ["p2"]
        page = core.list_namespaced_pod("py", limit=2)
        assert len(page.items) == 2 and page.metadata._continue
        rest = core.list_namespaced_pod("py", limit=2, _continue=page.metadata._continue)
        assert [p.metadata.name for p in rest.items] == ["p2"]

        core.delete_namespaced_pod("p0", "py")
        t.join(timeout=25)
        assert ("ADDED", "p0") in seen and ("DELETED", "p0") in seen, seen
        assert [n for typ, n in seen if typ == "ADDED"] == ["p0", "p1", "p2"], seen

        try:
            core.read_namespaced_pod("p0", "py")
            raise AssertionError("deleted pod still readable")
        except client.exceptions.ApiException as e:
            assert e.status == 404, e.status
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=30)
        log.close()
        if rc != 0:
            sys.stderr.write(open(os.path.join(tmp, "allotd.log")).read()[-4000:])
            raise SystemExit(f"allotd exited with {rc}")
        subprocess.run(["rm", "-rf", tmp], check=False)
    print("test_python_client: ok")


if __name__ == "__main__":
    main()
