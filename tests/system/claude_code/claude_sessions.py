"""What the Claude Code session cases share (claude_code_test.py runs them): the machine they
run on (a home, a project, a uid of its own, the policy and its config), the real `sandbox-host
egress` holding its network with the origin on loopback, the drop-in installed the way an
operator installs it and restored afterwards, a Session of the pinned CLI driven by the
scripted Messages API (fake_messages_api.py) through one tool call, why the whole suite is
skipped, and OnTheMachine, the base of the cases' classes."""

import argparse
import json
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from fake_messages_api import FakeMessagesApi


def unused_uid():
    """A uid no account names and no process runs as. Under Landlock the session's RLIMIT_NPROC
    counts every process of its uid on the host, so sharing nobody with the suite's other
    tests (two hundred launches at once, as nobody) could leave node no thread to start, and
    it aborts."""
    running = set()
    for entry in Path("/proc").iterdir():
        try:
            running.add(entry.stat().st_uid if entry.name.isdigit() else None)
        except OSError:
            pass
    for uid in range(61000, 62000):
        try:
            pwd.getpwuid(uid)
        except KeyError:
            if uid not in running:
                return uid
    raise RuntimeError("no unused uid in 61000-61999")


SESSION_UID = unused_uid()
CLAUDE_VERSION = "2.1.197"
DEFAULT_CLAUDE = f"/opt/sandbox-host-test/claude-code-{CLAUDE_VERSION}/claude"
MANAGED = Path("/etc/claude-code")
DROP_IN = MANAGED / "managed-settings.d" / "clawpatrol-sandbox.json"
SECRET = "SECRET-KEY-0f3c9a"
# What Claude Code 2.1.197 writes below its harness directory in a session (found by running
# it with the directory writable): the harness's own state, which `run --policy --harness`
# lets it write. Not settings.json, CLAUDE.md, commands or agents.
HARNESS_STATE = ("projects", "session-env", "shell-snapshots", "sessions", "todos", "plans")
ALLOWED_HOST, REFUSED_HOST, API_HOST = "allowed.test", "refused.test", "api.test"
ORIGIN_BODY = "hello from the origin"
# The command line's options, filled by claude_code_test.py before any case runs.
ARGS = argparse.Namespace()


def skip_reason():
    if os.geteuid() != 0:
        return "needs root: it installs the policy's drop-in in /etc/claude-code and runs as a uid of its own"
    if not os.access(ARGS.claude, os.X_OK):
        return (f"Claude Code {CLAUDE_VERSION} is not installed at {ARGS.claude} "
                "(scripts/setup.sh installs it from npm; the registry may have been unreachable)")
    version = subprocess.run([ARGS.claude, "--version"], capture_output=True, text=True)
    if not version.stdout.startswith(CLAUDE_VERSION):
        return f"{ARGS.claude} is {version.stdout.strip()!r}, not the pinned {CLAUDE_VERSION}"
    if shutil.which("bwrap") is None:
        return "bubblewrap is missing: Claude Code's sandbox needs it"
    return None


class Machine:
    """A home for the session's uid with a project, a secret and a directory outside the policy;
    a copy of sandbox-host that uid can run (the drop-in's hook); the policy over them, with
    ~/.ssh a deny entry unless ssh_denied is false."""

    def __init__(self, ssh_denied=True):
        self.root = Path(tempfile.mkdtemp(prefix="sandbox-host-claude-"))
        self.root.chmod(0o755)
        self.exe = self.root / "bin" / "sandbox-host"
        self.stage_sandbox_host()
        self.home = self.root / "home" / "u"
        self.project = self.home / "proj"
        self.other = self.home / "other"
        for directory in (self.home / ".ssh", self.home / ".claude", self.project, self.other):
            directory.mkdir(parents=True)
        (self.home / ".ssh" / "id_rsa").write_text(SECRET + "\n")
        (self.project / "notes.txt").write_text("project notes\n")
        (self.other / "private.txt").write_text(SECRET + " in other\n")
        for path in [self.home.parent, *self.home.rglob("*"), self.home]:
            os.chown(path, SESSION_UID, SESSION_UID)
        self.harness = self.home / ".claude"
        self.egress = Egress(self.root / "egress", self.exe)
        tool_write = ", ".join(f'"{self.harness / name}"' for name in HARNESS_STATE)
        deny = f'"{self.home / ".ssh"}"' if ssh_denied else ""
        self.policy = self.root / "agent-policy.toml"
        self.policy.write_text(
            f'home = "{self.home}"\n'
            f'write = ["{self.project}"]\n'
            f'deny = [{deny}]\n'
            f'harness = "{self.harness}"\n'
            f'tool_write = [{tool_write}]\n'
            f'domains = ["{ALLOWED_HOST}", "{API_HOST}"]\n'
            f'proxy_port = {self.egress.port}\n'
            f'exe = "{self.exe}"\n')
        self.policy.chmod(0o644)

    def stage_sandbox_host(self):
        """sandbox-host with its modules and broker beside it, as the build lays them out."""
        build = Path(ARGS.sandbox_host).resolve().parent.parent
        for part in ("bin/sandbox-host", "lib/sandbox-host/modules", "libexec/sandbox-host"):
            source, target = build / part, self.root / part
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, target)
            else:
                shutil.copy2(source, target)
        for path in [self.root / "bin", self.root / "lib", self.root / "libexec",
                     *(self.root / "lib").rglob("*"), *(self.root / "libexec").rglob("*")]:
            path.chmod(0o755 if path.is_dir() or os.access(path, os.X_OK) else 0o644)
        self.exe.chmod(0o755)

    def remove(self):
        self.egress.stop()
        shutil.rmtree(self.root, ignore_errors=True)


class Egress:
    """A real `sandbox-host egress` on loopback, as the session's uid (it serves its own user alone),
    that allows ALLOWED_HOST alone, both names resolved by the proxy to an origin server on
    127.0.0.1 (allow_addresses lets the proxy dial loopback, which it refuses by default)."""

    def __init__(self, root, exe):
        root.mkdir()
        os.chown(root, SESSION_UID, SESSION_UID)
        # The scripted API's port, the same for every session, so that the allow list can
        # name it: sessions held by `run --policy` reach the API through this proxy.
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.api_port = probe.getsockname()[1]
        class Origin(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                data = ORIGIN_BODY.encode()
                self.send_response(200)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.origin = ThreadingHTTPServer(("127.0.0.1", 0), Origin)
        self.origin_port = self.origin.server_address[1]
        threading.Thread(target=self.origin.serve_forever, daemon=True).start()
        config = root / "egress.toml"
        config.write_text(
            f'[broker]\nstate_dir = "{root}/state"\n'
            '[egress]\nlisten = "127.0.0.1:0"\n'
            f'socket = "{root}/egress.sock"\n'
            f'allow = ["{ALLOWED_HOST}:{self.origin_port}", "{API_HOST}:{self.api_port}"]\n'
            'allow_addresses = ["127.0.0.1/32"]\n'
            f'resolve = {{ "{ALLOWED_HOST}" = ["127.0.0.1"], "{REFUSED_HOST}" = ["127.0.0.1"], '
            f'"{API_HOST}" = ["127.0.0.1"] }}\n')
        self.config = config
        self.log = root / "egress.log"
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                ["setpriv", f"--reuid={SESSION_UID}", f"--regid={SESSION_UID}", "--clear-groups", "--",
                 str(exe), "egress", "--config", str(config)], stderr=log)
        self.port = self._listening_port()

    def _listening_port(self):
        for _ in range(100):
            found = re.search(r"proxy on 127\.0\.0\.1:(\d+)", self.log.read_text())
            if found:
                return int(found.group(1))
            if self.process.poll() is not None:
                break
            threading.Event().wait(0.1)
        self.stop()
        raise RuntimeError(f"sandbox-host egress did not start: {self.log.read_text()}")

    def url(self, host):
        return f"http://{host}:{self.origin_port}/"

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.origin.shutdown()
        self.origin.server_close()


class ManagedSettings:
    """The policy's drop-in in /etc/claude-code while the suite runs; what was there before
    (another install's drop-in, or nothing) comes back afterwards."""

    def __init__(self, machine):
        self.made_managed = not MANAGED.exists()
        self.made_drop_in_dir = not DROP_IN.parent.exists()
        self.before = DROP_IN.read_bytes() if DROP_IN.exists() else None
        install = subprocess.run([str(machine.exe), "policy", "install", "--policy",
                                  str(machine.policy)], capture_output=True, text=True)
        if install.returncode != 0:
            raise RuntimeError(f"policy install: {install.stderr}")

    def restore(self):
        if self.before is not None:
            DROP_IN.write_bytes(self.before)
        else:
            DROP_IN.unlink(missing_ok=True)
            if self.made_drop_in_dir:
                DROP_IN.parent.rmdir()
            if self.made_managed:
                MANAGED.rmdir()


class Session:
    """One `claude -p` session whose model makes one call of tool with tool_input: under the
    drop-in alone, or with backend named, under `sandbox-host run --policy --harness` on it.
    There its network is the launch's: outbound (the scripted API on the host's loopback),
    or with proxied, the egress proxy's, which the API is reached through by its name."""

    def __init__(self, machine, tool, tool_input, cwd, args=(), env=None, backend=None,
                 proxied=False):
        self.api = FakeMessagesApi(tool, tool_input, machine.egress.api_port)
        try:
            api_url = f"http://{API_HOST}:{machine.egress.api_port}" if proxied else self.api.url
            environment = {"PATH": "/usr/bin:/bin", "HOME": str(machine.home),
                           "ANTHROPIC_BASE_URL": api_url,
                           "ANTHROPIC_API_KEY": "sk-ant-test-0000"}
            environment.update(env or {})
            held = []
            if backend:
                network = (["--config", str(machine.egress.config)] if proxied
                           else ["--network", "outbound"])
                held = [str(machine.exe), "run", "--policy", str(machine.policy), "--harness",
                        "--backend", backend, *network]
                for name in environment:
                    if name not in ("PATH", "HOME"):
                        held += ["--env", name]
                held.append("--")
            self.process = subprocess.run(
                ["setpriv", f"--reuid={SESSION_UID}", f"--regid={SESSION_UID}", "--clear-groups", "--",
                 *held, ARGS.claude, "-p", "go", "--output-format", "json", *args],
                cwd=cwd, env=environment, capture_output=True, text=True, timeout=120)
        finally:
            self.api.stop()
        self.result = self.api.tool_result()

    def text(self):
        """What the tool returned, as Claude Code sent it to the model."""
        if self.result is None:
            return None
        content = self.result.get("content")
        if isinstance(content, list):
            return "".join(part.get("text", "") for part in content)
        return content

    def describe(self):
        return (f"exit {self.process.returncode}; tool_result {json.dumps(self.result)}; "
                f"stderr {self.process.stderr[-600:]!r}")


class OnTheMachine(unittest.TestCase):
    """A Machine with the policy's drop-in installed, for the cases of one class."""

    SSH_DENIED = True

    @classmethod
    def setUpClass(cls):
        cls.machine = Machine(cls.SSH_DENIED)
        try:
            cls.settings = ManagedSettings(cls.machine)
        except Exception:
            cls.machine.remove()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.settings.restore()
        cls.machine.remove()

    def session(self, tool, tool_input, cwd=None, args=(), env=None, backend=None,
                proxied=False):
        return Session(self.machine, tool, tool_input, cwd or self.machine.project, args, env,
                       backend, proxied)

    def bash(self, command, **kwargs):
        kwargs["args"] = (*kwargs.get("args", ()), "--dangerously-skip-permissions")
        return self.session("Bash", {"command": command, "description": "scripted"}, **kwargs)

    def assert_refused(self, session):
        self.assertIsNotNone(session.result, session.describe())
        self.assertTrue(session.result.get("is_error"), session.describe())
        self.assertNotIn(SECRET, session.text() or "", session.describe())

    def assert_denied_by_the_rules(self, session):
        """Refused by the drop-in's permissions.deny, where no hook runs."""
        self.assert_refused(session)
        self.assertIn("denied by your permission settings", session.text() or "",
                      session.describe())

    def policy_check(self):
        check = subprocess.run([str(self.machine.exe), "policy", "check", "--policy",
                                str(self.machine.policy)], capture_output=True, text=True)
        self.assertEqual(check.returncode, 0, check.stderr)
        return check.stdout

    def write_as_the_session(self, path, text):
        """path written as the session's uid would (its new directories too)."""
        made = [parent for parent in path.parents if not parent.exists()]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        for each in (*made, path):
            os.chown(each, SESSION_UID, SESSION_UID)

    def assert_ran_without_secret(self, session):
        """Bash ran (a tool_result came back) and printed no secret."""
        self.assertIsNotNone(session.result, session.describe())
        self.assertIn("ran=yes", session.text() or "", session.describe())
        self.assertNotIn(SECRET, session.text() or "", session.describe())

    def assert_harness_untouched(self):
        for name in ("settings.json", "CLAUDE.md"):
            self.assertFalse((self.machine.harness / name).exists(), name)


BARE_WAYS = ((("--bare",), None), ((), {"CLAUDE_CODE_SIMPLE": "1"}))
