#!/usr/bin/env python3
"""deploy/kubernetes' manifests, as kubectl reads them, carry what each backend needs.

kubectl applies every manifest with --dry-run=client against a stand-in for an API server's
discovery (discovery_server.py): each must parse, name kinds a cluster has, and come out as
the objects the checks below read. --validate=false, since the stand-in has no OpenAPI
schema to validate fields against. Skipped, with the reason, where kubectl is not installed.

usage: manifests_test.py [unittest options]   exit 0: pass or skip; 1: a failure
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

SOURCE = pathlib.Path(__file__).resolve().parents[2]
DEPLOY = SOURCE / "deploy"
KUBERNETES = DEPLOY / "kubernetes"
HERE = pathlib.Path(__file__).resolve().parent


def strip_comments(toml):
    """The TOML's lines that are not comments, without blank lines at either end."""
    lines = [line for line in toml.splitlines() if not line.lstrip().startswith("#")]
    return "\n".join(lines).strip()


class Manifests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.kubectl = shutil.which("kubectl")
        if cls.kubectl is None:
            raise unittest.SkipTest("kubectl is not installed: the manifests are not checked")
        cls.scratch = tempfile.TemporaryDirectory()
        ready = pathlib.Path(cls.scratch.name) / "ready"
        cls.server = subprocess.Popen(
            [sys.executable, str(HERE / "discovery_server.py"), "--ready", str(ready)])
        deadline = time.monotonic() + 10
        while not (ready.exists() and ready.read_text()):
            if time.monotonic() > deadline or cls.server.poll() is not None:
                cls.server.kill()
                raise RuntimeError("the stand-in API server did not start")
            time.sleep(0.02)
        cls.address = "http://127.0.0.1:" + ready.read_text()

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()
        cls.server.wait()
        cls.scratch.cleanup()

    def objects(self, manifest):
        """What kubectl makes of the manifest, by kind."""
        result = subprocess.run(
            [self.kubectl, "apply", "--dry-run=client", "--validate=false", "-o", "json",
             "-s", self.address, "-f", str(KUBERNETES / manifest)],
            capture_output=True, text=True, timeout=60,
            env=dict(os.environ, KUBECONFIG=os.devnull))
        self.assertEqual(result.returncode, 0, result.stderr)
        document = json.loads(result.stdout)
        items = document["items"] if document.get("kind") == "List" else [document]
        by_kind = {}
        for item in items:
            self.assertNotIn(item["kind"], by_kind, manifest + " has two of a kind")
            by_kind[item["kind"]] = item
        self.assertEqual(sorted(by_kind), ["ConfigMap", "DaemonSet", "Namespace"])
        return by_kind

    def pod(self, objects):
        """The DaemonSet's pod spec and its one container, in the manifest's namespace."""
        daemonset = objects["DaemonSet"]
        self.assertEqual(daemonset["metadata"]["namespace"],
                         objects["Namespace"]["metadata"]["name"])
        spec = daemonset["spec"]["template"]["spec"]
        self.assertEqual(len(spec["containers"]), 1)
        return spec, spec["containers"][0]

    def check_common(self, objects, backend):
        spec, container = self.pod(objects)
        env = {e["name"]: e.get("value") for e in container.get("env", [])}
        self.assertEqual(env.get("CLAWPATROL_SANDBOX_BACKEND"), backend)
        self.assertEqual(spec["securityContext"]["runAsNonRoot"], True)
        self.assertNotEqual(spec["securityContext"]["runAsUser"], 0)
        self.assertEqual(container["securityContext"]["allowPrivilegeEscalation"], False)
        self.assertEqual(container["securityContext"]["capabilities"]["drop"], ["ALL"])
        # The ConfigMap holds the image's own config, so that neither drifts from the other.
        config = objects["ConfigMap"]["data"]["sandbox-host.toml"]
        self.assertEqual(strip_comments(config),
                         strip_comments((DEPLOY / "sandbox-host.toml").read_text()))
        mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
        self.assertEqual(mounts["config"], "/etc/sandbox-host")
        # Below the volumes, so that serve makes both directories its own.
        self.assertIn('socket = "' + mounts["run"] + "/", config)
        self.assertIn('state_dir = "' + mounts["state"] + "/", config)
        return spec, container

    def test_namespaces_daemonset_has_what_the_backend_needs(self):
        objects = self.objects("namespaces.yaml")
        spec, container = self.check_common(objects, "namespaces")
        self.assertEqual(spec["hostUsers"], False)
        self.assertEqual(container["securityContext"]["procMount"], "Unmasked")
        seccomp = spec["securityContext"]["seccompProfile"]
        self.assertEqual(seccomp["type"], "Localhost")
        # The profile it names is the one shipped beside it (and run by tests/system/container).
        self.assertTrue((KUBERNETES / "seccomp" / seccomp["localhostProfile"]).is_file(),
                        seccomp)
        apparmor = spec["securityContext"]["appArmorProfile"]
        self.assertEqual(apparmor["type"], "Localhost")
        profile = (KUBERNETES / "apparmor" / apparmor["localhostProfile"]).read_text()
        self.assertRegex(profile, r"(?m)^profile " + re.escape(apparmor["localhostProfile"]) +
                         r" ")
        # restricted never admits procMount Unmasked; baseline does for hostUsers: false.
        labels = objects["Namespace"]["metadata"]["labels"]
        self.assertEqual(labels["pod-security.kubernetes.io/enforce"], "baseline")

    def test_landlock_daemonset_meets_restricted(self):
        objects = self.objects("landlock.yaml")
        spec, container = self.check_common(objects, "landlock")
        self.assertEqual(spec["securityContext"]["seccompProfile"], {"type": "RuntimeDefault"})
        self.assertNotIn("procMount", container["securityContext"])
        self.assertNotIn("hostUsers", spec)
        labels = objects["Namespace"]["metadata"]["labels"]
        self.assertEqual(labels["pod-security.kubernetes.io/enforce"], "restricted")

    def test_a_manifest_kubectl_cannot_map_is_refused(self):
        # The check itself: a kind the stand-in does not serve makes kubectl fail.
        broken = pathlib.Path(self.scratch.name) / "broken.yaml"
        broken.write_text("apiVersion: apps/v2\nkind: DaemonSet\nmetadata:\n  name: x\n")
        result = subprocess.run(
            [self.kubectl, "apply", "--dry-run=client", "--validate=false", "-o", "json",
             "-s", self.address, "-f", str(broken)],
            capture_output=True, text=True, timeout=60,
            env=dict(os.environ, KUBECONFIG=os.devnull))
        self.assertNotEqual(result.returncode, 0, result.stdout)


if __name__ == "__main__":
    unittest.main()
