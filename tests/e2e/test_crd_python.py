"""test_crd_python.py - Debian's python3-kubernetes client drives a
CustomResourceDefinition against a real allotd: ApiextensionsV1Api creates
it and sees it Established, CustomObjectsApi creates, lists, gets, patches
(object and status) and deletes custom objects, a watch sees them come and
go, and a body the schema refuses is a 422 with upstream's message."""
import json
import os
import subprocess
import sys
import tempfile
import threading

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException
from e2e_util import free_port, wait_until

ALLOTD = os.environ["ALLOTD"]
GROUP, VERSION, PLURAL = "example.com", "v1", "widgets"


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": PLURAL, "kind": "Widget"},
        "versions": [{
            "name": VERSION, "served": True, "storage": True,
            "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "integer", "default": 1}}},
                    "status": {"type": "object", "properties": {
                        "phase": {"type": "string"}}}}}},
        }],
    },
}


def established(ext):
    crd = ext.read_custom_resource_definition("widgets.example.com")
    return any(c.type == "Established" and c.status == "True"
               for c in (crd.status.conditions or []))


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
        ext = client.ApiextensionsV1Api()
        custom = client.CustomObjectsApi()
        ext.create_custom_resource_definition(CRD)
        assert wait_until(20, lambda: established(ext)), "the CRD did not become Established"

        listed = custom.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL)
        assert listed["items"] == [], listed
        seen = []
        w = watch.Watch()

        def follow():
            for ev in w.stream(custom.list_namespaced_custom_object, GROUP, VERSION, "default",
                               PLURAL, resource_version=listed["metadata"]["resourceVersion"],
                               timeout_seconds=20):
                seen.append((ev["type"], ev["object"]["metadata"]["name"]))
                if ("DELETED", "w0") in seen:
                    w.stop()

        t = threading.Thread(target=follow)
        t.start()

        body = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w0"},
                "spec": {}}
        created = custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)
        assert created["spec"]["size"] == 1, created
        got = custom.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "w0")
        assert got["metadata"]["uid"] == created["metadata"]["uid"]
        patched = custom.patch_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "w0",
                                                        {"spec": {"size": 3}})
        assert patched["spec"]["size"] == 3 and patched["metadata"]["generation"] == 2, patched
        st = custom.patch_namespaced_custom_object_status(GROUP, VERSION, "default", PLURAL, "w0",
                                                          {"status": {"phase": "Ready"}})
        assert st["status"]["phase"] == "Ready" and st["metadata"]["generation"] == 2, st
        items = custom.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL)["items"]
        assert [i["metadata"]["name"] for i in items] == ["w0"], items

        try:
            custom.create_namespaced_custom_object(
                GROUP, VERSION, "default", PLURAL,
                {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "bad"},
                 "spec": {"size": "big"}})
            raise AssertionError("a string size was accepted")
        except ApiException as e:
            assert e.status == 422, e
            msg = json.loads(e.body)["message"]
            assert 'spec.size: Invalid value: "string": spec.size in body must be of type ' \
                   'integer: "string"' in msg, msg

        custom.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "w0")
        t.join(25)
        assert ("ADDED", "w0") in seen and ("DELETED", "w0") in seen, seen

        ext.delete_custom_resource_definition("widgets.example.com")

        def gone():
            try:
                ext.read_custom_resource_definition("widgets.example.com")
                return False
            except ApiException as e:
                return e.status == 404
        assert wait_until(20, gone), "the CRD was not removed"
    finally:
        proc.terminate()
        rc = proc.wait(30)
        log.close()
        if rc != 0:
            sys.stderr.write(open(os.path.join(tmp, "allotd.log")).read()[-3000:])
            raise SystemExit("allotd exited with status %d" % rc)
    print("test_crd_python: ok")


if __name__ == "__main__":
    main()
