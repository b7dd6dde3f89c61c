"""test_jobs_python.py - Debian's python3-kubernetes client drives a Job
against a real allotd: BatchV1Api creates it (defaults and the generated
selector come back), lists it, and a watch sees it reach Complete."""
import os
import shutil
import subprocess
import sys
import tempfile

from kubernetes import client, config, watch
from e2e_util import free_port, wait_until

ALLOTD = os.environ["ALLOTD"]


def main():
    tmp = tempfile.mkdtemp(prefix="allot-py-")
    data = os.path.join(tmp, "data")
    log = open(os.path.join(tmp, "allotd.log"), "w")
    proc = subprocess.Popen([ALLOTD, "--data-dir", data, "--port", str(free_port()),
                             "--simulated-nodes", "1"], stderr=log)
    try:
        kubeconfig = os.path.join(data, "kubeconfig")
        assert wait_until(60, lambda: os.path.exists(kubeconfig) and os.path.getsize(kubeconfig) > 0), \
            "allotd did not become ready"
        config.load_kube_config(config_file=kubeconfig)
        batch = client.BatchV1Api()
        core = client.CoreV1Api()
        core.create_namespace({"metadata": {"name": "py"}})
        job = batch.create_namespaced_job("py", {
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "pi"},
            "spec": {"completions": 2, "parallelism": 2, "template": {
                "metadata": {"annotations": {"allot.dev/run-duration": "1s"}},
                "spec": {"restartPolicy": "Never",
                         "containers": [{"name": "c", "image": "busybox"}]}}}})
        assert job.spec.backoff_limit == 6, job.spec
        assert job.spec.selector.match_labels["batch.kubernetes.io/controller-uid"] == job.metadata.uid
        names = [j.metadata.name for j in batch.list_namespaced_job("py").items]
        assert names == ["pi"], names
        complete = False
        w = watch.Watch()
        for ev in w.stream(batch.list_namespaced_job, "py", timeout_seconds=60):
            conds = ev["object"].status.conditions or []
            if any(c.type == "Complete" and c.status == "True" for c in conds):
                complete = True
                w.stop()
        assert complete, "no Complete seen by the watch"
        j = batch.read_namespaced_job("pi", "py")
        assert j.status.succeeded == 2, j.status
        assert j.status.completion_time is not None
    finally:
        proc.terminate()
        rc = proc.wait(30)
        log.close()
        if rc != 0:
            sys.stderr.write(open(os.path.join(tmp, "allotd.log")).read()[-3000:])
            raise SystemExit("allotd exited with status %d" % rc)
        shutil.rmtree(tmp, ignore_errors=True)
    print("test_jobs_python: ok")


if __name__ == "__main__":
    main()
