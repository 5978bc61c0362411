"""Claude Code sessions under `sandbox-host run --policy --harness` (claude_code_test.py runs
them), each case under each Linux backend that works here: sandbox-host's sandbox holds
Claude Code whole, file tools and bare mode too, and its network goes through the egress
proxy."""

import json
import subprocess

from claude_sessions import (ALLOWED_HOST, ARGS, BARE_WAYS, ORIGIN_BODY, REFUSED_HOST,
                             OnTheMachine)


def available_backends():
    probe = subprocess.run([ARGS.sandbox_host, "probe", "--json"], capture_output=True, text=True)
    report = json.loads(probe.stdout)
    return [b["name"] for b in report["backends"]
            if b["available"] and b["name"] in ("namespaces", "landlock")]


class ClaudeCodeInsideSandboxHost(OnTheMachine):
    """Sessions under `sandbox-host run --policy --harness`, each case under each Linux
    backend: sandbox-host's sandbox holds Claude Code whole, file tools and bare mode too."""

    def backends(self):
        backends = available_backends()
        if not backends:
            self.skipTest("neither the namespaces nor the landlock backend works here")
        return backends

    def test_claude_code_starts_and_reads_inside_the_policy(self):
        for backend in self.backends():
            with self.subTest(backend=backend):
                session = self.session("Read", {"file_path": str(self.machine.project / "notes.txt")},
                                       backend=backend)
                self.assertEqual(session.process.returncode, 0, session.describe())
                self.assertIn("project notes", session.text() or "", session.describe())
                # No drop-in is visible inside, so Claude Code warns about none and starts no
                # sandbox of its own; it wrote its transcript where tool_write lets it.
                self.assertNotIn("managed", session.process.stderr.lower(), session.describe())
                session_id = json.loads(session.process.stdout)["session_id"]
                self.assertTrue(any((self.machine.harness / "projects").glob(f"*/{session_id}.jsonl")),
                                session.describe())

    def test_the_session_reaches_the_api_and_the_allowed_host_through_the_egress_proxy(self):
        # Proxied is the launch's network when the config has [egress]; only the namespaces
        # backend gives a proxied network (Landlock refuses it rather than share the host's).
        if "namespaces" not in self.backends():
            self.skipTest("the namespaces backend does not work here")
        egress = self.machine.egress
        session = self.bash(f"curl -sS --max-time 20 {egress.url(ALLOWED_HOST)}; "
                            f"curl -sS --max-time 20 {egress.url(REFUSED_HOST)}; "
                            f"curl -sS --noproxy '*' --max-time 5 "
                            f"http://127.0.0.1:{egress.origin_port}/; echo ran=yes",
                            backend="namespaces", proxied=True)
        self.assertEqual(session.process.returncode, 0, session.describe())
        self.assert_ran_without_secret(session)
        self.assertEqual((session.text() or "").count(ORIGIN_BODY), 1, session.describe())
        # The API's name resolves nowhere but in the proxy: the session's answer came back
        # through it.
        self.assertIn(f"-> {REFUSED_HOST}:{egress.origin_port}: refused 403", egress.log.read_text())

    def test_file_tools_are_held_with_and_without_hooks(self):
        for backend in self.backends():
            with self.subTest(backend=backend):
                for args, env in (((), None), *BARE_WAYS):
                    args = (*args, "--dangerously-skip-permissions")
                    for path in (self.machine.home / ".ssh" / "id_rsa",
                                 self.machine.other / "private.txt"):
                        self.assert_refused(self.session("Read", {"file_path": str(path)}, args=args,
                                                         env=env, backend=backend))
                    # Edit with an empty old_string creates the file; bare offers no Write.
                    for target in (self.machine.home / ".bashrc",
                                   self.machine.harness / "settings.json"):
                        self.assert_refused(self.session(
                            "Edit", {"file_path": str(target), "old_string": "",
                                     "new_string": "evil\n"}, args=args, env=env, backend=backend))
                        self.assertFalse(target.exists())

    def test_bash_writes_the_project_and_nothing_else(self):
        home, harness, project = self.machine.home, self.machine.harness, self.machine.project
        for backend in self.backends():
            with self.subTest(backend=backend):
                for cwd, args in ((project, ()), (home, ("--bare",)),
                                  (self.machine.other, ("--bare",))):
                    written = project / "by-bash"
                    session = self.bash(
                        f"cat {home}/.ssh/id_rsa {self.machine.other}/private.txt; "
                        f"echo x > {home}/by-bash; echo x > {self.machine.other}/by-bash; "
                        f"echo '{{}}' > {harness}/settings.json; echo x > {written}; echo ran=yes",
                        cwd=cwd, args=args, backend=backend)
                    self.assert_ran_without_secret(session)
                    self.assertEqual(written.read_text(), "x\n", session.describe())
                    written.unlink()
                    self.assertFalse((home / "by-bash").exists())
                    self.assertFalse((self.machine.other / "by-bash").exists())
                    self.assert_harness_untouched()
