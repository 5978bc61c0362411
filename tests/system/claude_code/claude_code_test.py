#!/usr/bin/env python3
"""The agent policy around real Claude Code sessions: the pinned CLI from npm (setup.sh
installs it), driven by a scripted Messages API on loopback, one tool call per session, as
a uid of its own, with the policy's drop-in installed in /etc/claude-code the way an operator
installs it. Each case reads the tool_result Claude Code sent back and the host's files afterwards.
Sessions run two ways: under the drop-in alone (Claude Code's sandbox and the hook), and
under `sandbox-host run --policy --harness` (the project's backends around the whole
session). A real `sandbox-host egress` holds the network of both; curl's origin is a server
on loopback, reached by names the proxy resolves itself.

Usage: claude_code_test.py --sandbox-host BUILD/bin/sandbox-host [--claude PATH]
(SANDBOX_HOST_CLAUDE names another CLI; the default is where scripts/setup.sh puts it)
Exit 77 (skipped, with the reason) where the CLI, root or bubblewrap is missing."""

import argparse
import json
import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_messages_api import FakeMessagesApi  # noqa: E402



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
ARGS = None


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


class ClaudeCodeUnderThePolicy(OnTheMachine):
    """Sessions under the drop-in alone: Claude Code's sandbox holds Bash, the hook and the
    managed deny rules hold the file tools."""

    def test_the_drop_in_is_what_claude_code_reads(self):
        rendered = json.loads(DROP_IN.read_text())
        self.assertTrue(rendered["sandbox"]["enabled"])
        session = self.session("Read", {"file_path": str(self.machine.project / "notes.txt")})
        self.assertEqual(session.process.returncode, 0, session.describe())
        # Claude Code warns on stderr about a managed settings file it could not use.
        self.assertNotIn("managed", session.process.stderr.lower(), session.describe())

    def test_a_read_inside_the_policy_returns_the_file(self):
        session = self.session("Read", {"file_path": str(self.machine.project / "notes.txt")})
        self.assertIn("project notes", session.text() or "", session.describe())

    def test_a_read_of_the_homes_secret_is_refused_even_when_permissions_are_skipped(self):
        for args in ((), ("--dangerously-skip-permissions",)):
            with self.subTest(args=args):
                session = self.session(
                    "Read", {"file_path": str(self.machine.home / ".ssh" / "id_rsa")}, args=args)
                self.assert_refused(session)

    def test_every_file_tool_it_offers_is_one_the_hook_holds(self):
        session = self.session("Read", {"file_path": str(self.machine.project / "notes.txt")})
        offered = set(session.api.offered_tools())
        # The tools that read or write files without Bash; 2.1.197 offers no Grep or Glob.
        file_tools = offered & {"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Grep",
                                "Glob", "LS"}
        self.assertIn("Read", file_tools, sorted(offered))
        rendered = json.loads(DROP_IN.read_text())
        matchers = [entry["matcher"] for entry in rendered["hooks"]["PreToolUse"]]
        held = {tool for matcher in matchers for tool in matcher.split("|")}
        self.assertEqual(file_tools - held, set(), f"offered {sorted(offered)}, held {sorted(held)}")

    def test_a_write_outside_the_write_paths_is_refused_and_lands_nowhere(self):
        target = self.machine.home / ".bashrc"
        session = self.session("Write", {"file_path": str(target), "content": "evil\n"},
                               args=("--dangerously-skip-permissions",))
        self.assert_refused(session)
        self.assertFalse(target.exists())

    def test_a_write_inside_a_write_path_lands_on_the_host(self):
        target = self.machine.project / "written.txt"
        session = self.session("Write", {"file_path": str(target), "content": "from claude\n"},
                               args=("--dangerously-skip-permissions",))
        self.assertFalse(session.result.get("is_error"), session.describe())
        self.assertEqual(target.read_text(), "from claude\n")
        target.unlink()

    def test_bash_runs_sandboxed_and_cannot_read_the_home(self):
        if shutil.which("socat") is None:
            self.skipTest("socat is missing: Claude Code's sandbox needs it for the network")
        session = self.session(
            "Bash", {"command": f"cat {self.machine.home}/.ssh/id_rsa; echo status=$?",
                     "description": "read the key"},
            args=("--dangerously-skip-permissions",))
        self.assertIsNotNone(session.result, session.describe())
        self.assertNotIn(SECRET, session.text() or "", session.describe())

    def test_bash_is_refused_in_a_session_started_outside_the_write_paths(self):
        for cwd in (self.machine.home, self.machine.other):
            with self.subTest(cwd=str(cwd)):
                written = cwd / "written-by-bash"
                session = self.session(
                    "Bash", {"command": f"cat {self.machine.home}/.ssh/id_rsa; echo x > {written}",
                             "description": "read the key"},
                    cwd=cwd, args=("--dangerously-skip-permissions",))
                self.assert_refused(session)
                self.assertIn(f"start the session inside one of: {self.machine.project}",
                              session.text() or "", session.describe())
                self.assertFalse(written.exists())

    def test_a_bare_session_started_in_the_home_has_no_bash(self):
        if shutil.which("socat") is None:
            self.skipTest("socat is missing: Claude Code's sandbox needs it for the network")
        written = self.machine.home / "written-by-bash"
        # With these two present, Claude Code's bwrap binds the home into its sandbox whole
        # (issue 19: the key was printed); without them it failed on its own.
        for made in ("commands", "agents"):
            (self.machine.home / ".claude" / made).mkdir(parents=True, exist_ok=True)
            for path in (self.machine.home / ".claude", self.machine.home / ".claude" / made):
                os.chown(path, SESSION_UID, SESSION_UID)
        for args, env in ((("--bare",), None), ((), {"CLAUDE_CODE_SIMPLE": "1"})):
            with self.subTest(args=args, env=env):
                session = self.session(
                    "Bash", {"command": f"cat {self.machine.home}/.ssh/id_rsa; echo x > {written}",
                             "description": "read the key"},
                    cwd=self.machine.home, args=(*args, "--dangerously-skip-permissions"), env=env)
                self.assert_refused(session)
                self.assertFalse(written.exists())

    def test_every_rendered_key_is_one_this_claude_code_knows_with_its_type(self):
        # Claude Code keeps an unknown key without a word and drops a whole object for one
        # wrong type with a line on stderr: both checked against the installed binary, whose
        # settings schema (zod) spells each key as `name:z.type(`.
        # An object-valued key may be a reference to a schema defined elsewhere
        # (`filesystem:ve(()=>...)`): only its name is checked.
        pattern = re.compile(rb"[,{]([A-Za-z]+):(?:[A-Za-z_$]{1,3}\.(boolean|number|string|array|"
                             rb"object|record|enum|literal)\()?")
        known, names = set(), set()
        with open(ARGS.claude, "rb") as binary:
            text = binary.read()
            for found in pattern.finditer(text):
                names.add(found.group(1).decode())
                if found.group(2):
                    known.add((found.group(1).decode(), found.group(2).decode()))
        json_types = {bool: {"boolean"}, int: {"number"}, str: {"string", "enum", "literal"},
                      list: {"array"}, dict: {"object", "record"}}

        def walk(value, path):
            for key, child in value.items():
                where = f"{path}.{key}" if path else key
                if path == "hooks":
                    # hooks is a record keyed by the enum of hook events.
                    self.assertIn(f'"{key}"'.encode(), text,
                                  f"{where}: no such hook event in Claude Code {CLAUDE_VERSION}")
                    for element in child:
                        walk(element, where + "[]")
                    continue
                self.assertTrue(key in names, f"{where}: no such key in Claude Code {CLAUDE_VERSION}")
                if isinstance(child, dict) and child:
                    if key != "env":
                        walk(child, where)
                else:
                    types = json_types[type(child)]
                    self.assertTrue(any((key, t) in known for t in types),
                                    f"{where}: Claude Code {CLAUDE_VERSION} has no {key} of type "
                                    f"{sorted(types)}")
                if isinstance(child, list):
                    for element in child:
                        if isinstance(element, dict):
                            walk(element, where + "[]")

        rendered = json.loads(DROP_IN.read_text())
        self.assertIn("permissions", rendered)
        walk(rendered, "")
        session = self.session("Read", {"file_path": str(self.machine.project / "notes.txt")})
        self.assertNotIn("invalid", session.process.stderr, session.describe())
        self.assertNotIn("failed", session.process.stderr.lower(), session.describe())

    def test_bare_sessions_are_held_by_the_drop_ins_deny_rules(self):
        settings = self.machine.harness / "settings.json"
        for args, env in BARE_WAYS:
            with self.subTest(args=args, env=env):
                for args_now in (args, (*args, "--dangerously-skip-permissions")):
                    for path in (self.machine.home / ".ssh" / "id_rsa",
                                 self.machine.other / "private.txt"):
                        self.assert_denied_by_the_rules(
                            self.session("Read", {"file_path": str(path)}, args=args_now, env=env))
                # Edit with an empty old_string creates the file: the one file tool bare offers
                # that writes.
                edit = self.session("Edit", {"file_path": str(settings), "old_string": "",
                                             "new_string": '{"hooks": {}}'},
                                    args=(*args, "--dangerously-skip-permissions"), env=env)
                self.assert_refused(edit)
                self.assert_harness_untouched()

    def test_policy_check_names_what_a_bare_session_is_not_held_to_and_it_is_so(self):
        check = self.policy_check()
        self.assertIn(f"Read(/{self.machine.home}/.ssh/**)", check)
        self.assertIn(f"Read(/{self.machine.other}/**)", check)
        self.assertIn(f"Read and Edit of an entry made in home {self.machine.home} after "
                      "`sandbox-host policy install`", check)
        # What that line says, in a real bare session: no rule names an entry made since, and
        # only the hook would hold this Read.
        made = self.machine.home / "made-after-install.txt"
        self.write_as_the_session(made, SECRET + " made after install\n")
        try:
            for args, env in BARE_WAYS:
                with self.subTest(args=args, env=env):
                    session = self.session("Read", {"file_path": str(made)},
                                           args=(*args, "--dangerously-skip-permissions"), env=env)
                    self.assertIn(SECRET, session.text() or "",
                                  "a bare session no longer reads an entry made in the home after "
                                  "install: update policy check and docs/agent-policy.md; "
                                  + session.describe())
        finally:
            made.unlink()

    def test_policy_check_names_bash_in_a_bare_session_started_outside_the_write_paths(self):
        if shutil.which("socat") is None:
            self.skipTest("socat is missing: Claude Code's sandbox needs it for the network")
        self.assertIn("Bash in a session started in a directory outside the write entries, "
                      f"other than home {self.machine.home} itself and the paths the rules above "
                      "deny", self.policy_check())
        # ~/other is one the rules deny: its Edit rule puts it in the sandbox's denyWrite, and
        # Claude Code's bwrap cannot set itself up in a read-only working directory.
        written = self.machine.other / "written-by-bare-bash"
        session = self.session(
            "Bash", {"command": f"echo x > {written}", "description": "write the session's directory"},
            cwd=self.machine.other, args=("--bare", "--dangerously-skip-permissions"))
        self.assert_refused(session)
        self.assertFalse(written.exists(), session.describe())
        # What the line says, in a real bare session started in a directory made after the
        # install: Claude Code's sandbox made it writable, and no hook ran to refuse its Bash.
        later = self.machine.home / "made-after-install"
        later.mkdir()
        os.chown(later, SESSION_UID, SESSION_UID)
        try:
            written = later / "written-by-bare-bash"
            session = self.session(
                "Bash", {"command": f"cat {self.machine.other}/private.txt; echo x > {written}",
                         "description": "write the session's directory"},
                cwd=later, args=("--bare", "--dangerously-skip-permissions"))
            self.assertNotIn(SECRET, session.text() or "", session.describe())
            self.assertTrue(written.exists(),
                            "a bare session started in a directory made after the install no "
                            "longer writes it: update policy check and docs/agent-policy.md; "
                            + session.describe())
        finally:
            shutil.rmtree(later)

    def test_curl_reaches_an_allowed_host_through_the_egress_proxy_and_no_other(self):
        if shutil.which("socat") is None or shutil.which("curl") is None:
            self.skipTest("socat and curl are needed: Claude Code's sandbox bridges the proxy "
                          "with socat")
        egress = self.machine.egress
        allowed = self.bash(f"curl -sS --max-time 20 {egress.url(ALLOWED_HOST)}; echo ran=yes")
        self.assertIn(ORIGIN_BODY, allowed.text() or "",
                      allowed.describe() + "; egress log " + egress.log.read_text()[-800:])
        refused = self.bash(f"curl -sS --max-time 20 {egress.url(REFUSED_HOST)}; echo ran=yes")
        self.assertIn("ran=yes", refused.text() or "", refused.describe())
        self.assertNotIn(ORIGIN_BODY, refused.text() or "", refused.describe())
        self.assertIn(REFUSED_HOST, egress.log.read_text(), "the proxy recorded no refusal")
        direct = self.bash(f"curl -sS --noproxy '*' --max-time 20 "
                           f"http://127.0.0.1:{egress.origin_port}/; echo ran=yes")
        self.assertIn("ran=yes", direct.text() or "", direct.describe())
        self.assertNotIn(ORIGIN_BODY, direct.text() or "", direct.describe())

    def test_a_command_cannot_write_the_harness(self):
        if shutil.which("socat") is None:
            self.skipTest("socat is missing: Claude Code's sandbox needs it for the network")
        harness = self.machine.harness
        session = self.bash(f"echo '{{\"hooks\": {{}}}}' > {harness}/settings.json; "
                            f"echo injected > {harness}/CLAUDE.md; echo ran=yes")
        self.assert_ran_without_secret(session)
        self.assert_harness_untouched()

    def test_a_users_own_settings_turn_nothing_off(self):
        user_settings = self.machine.home / ".claude" / "settings.json"
        user_settings.parent.mkdir(exist_ok=True)
        user_settings.write_text(json.dumps({"sandbox": {"enabled": False},
                                             "disableAllHooks": True}))
        for path in (user_settings.parent, user_settings):
            os.chown(path, SESSION_UID, SESSION_UID)
        try:
            session = self.session("Read", {"file_path": str(self.machine.home / ".ssh" / "id_rsa")},
                                   args=("--dangerously-skip-permissions",))
            self.assert_refused(session)
        finally:
            user_settings.unlink()


class BareSessionsWithoutADenyEntry(OnTheMachine):
    """The same home, with a policy that names no deny entry: what holds a bare session there is
    the drop-in's rules on the home's entries outside the policy, and on the credential paths."""

    SSH_DENIED = False

    def test_a_bare_session_reads_neither_the_key_nor_outside_the_policy(self):
        self.assertNotIn(".ssh", self.machine.policy.read_text())
        self.assertIn(f"Read(/{self.machine.home}/.ssh/**)", self.policy_check())
        for args, env in BARE_WAYS:
            with self.subTest(args=args, env=env):
                for path in (self.machine.home / ".ssh" / "id_rsa",
                             self.machine.other / "private.txt"):
                    self.assert_denied_by_the_rules(self.session(
                        "Read", {"file_path": str(path)},
                        args=(*args, "--dangerously-skip-permissions"), env=env))

    def test_a_credential_made_after_install_is_held_too(self):
        credentials = self.machine.home / ".aws" / "credentials"
        self.write_as_the_session(credentials, SECRET + " of aws\n")
        try:
            for args, env in BARE_WAYS:
                with self.subTest(args=args, env=env):
                    self.assert_denied_by_the_rules(self.session(
                        "Read", {"file_path": str(credentials)},
                        args=(*args, "--dangerously-skip-permissions"), env=env))
        finally:
            shutil.rmtree(credentials.parent)


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


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--sandbox-host", required=True)
    parser.add_argument("--claude", default=os.environ.get("SANDBOX_HOST_CLAUDE", DEFAULT_CLAUDE))
    ARGS, rest = parser.parse_known_args()
    reason = skip_reason()
    if reason:
        print(f"SKIPPED: {reason}")
        return 77
    program = unittest.main(argv=[sys.argv[0], "-v", *rest], exit=False)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
