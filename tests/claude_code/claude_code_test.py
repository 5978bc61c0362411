#!/usr/bin/env python3
"""The agent policy around real Claude Code sessions: the pinned CLI from npm (setup.sh
installs it), driven by a scripted Messages API on loopback, one tool call per session, as
nobody, with the policy's drop-in installed in /etc/claude-code the way an operator installs
it. Each case reads the tool_result Claude Code sent back and the host's files afterwards.

Usage: claude_code_test.py --sandbox-host BUILD/bin/sandbox-host [--claude PATH]
(SANDBOX_HOST_CLAUDE names another CLI; the default is where scripts/setup.sh puts it)
Exit 77 (skipped, with the reason) where the CLI, root or bubblewrap is missing."""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_messages_api import FakeMessagesApi  # noqa: E402

NOBODY = 65534
CLAUDE_VERSION = "2.1.197"
DEFAULT_CLAUDE = f"/opt/sandbox-host-test/claude-code-{CLAUDE_VERSION}/claude"
MANAGED = Path("/etc/claude-code")
DROP_IN = MANAGED / "managed-settings.d" / "clawpatrol-sandbox.json"
SECRET = "SECRET-KEY-0f3c9a"
ARGS = None


def skip_reason():
    if os.geteuid() != 0:
        return "needs root: it installs the policy's drop-in in /etc/claude-code and runs as nobody"
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
    """A home for user nobody with a project, a secret and a directory outside the policy;
    a copy of sandbox-host nobody can run (the drop-in's hook); the policy over them."""

    def __init__(self):
        self.root = Path(tempfile.mkdtemp(prefix="sandbox-host-claude-"))
        self.root.chmod(0o755)
        self.bin = self.root / "bin"
        self.bin.mkdir()
        self.exe = self.bin / "sandbox-host"
        shutil.copy2(ARGS.sandbox_host, self.exe)
        self.exe.chmod(0o755)
        self.home = self.root / "home" / "u"
        self.project = self.home / "proj"
        self.other = self.home / "other"
        for directory in (self.home / ".ssh", self.project, self.other):
            directory.mkdir(parents=True)
        (self.home / ".ssh" / "id_rsa").write_text(SECRET + "\n")
        (self.project / "notes.txt").write_text("project notes\n")
        (self.other / "private.txt").write_text(SECRET + " in other\n")
        for path in [self.home.parent, *self.home.rglob("*"), self.home]:
            os.chown(path, NOBODY, NOBODY)
        self.policy = self.root / "agent-policy.toml"
        self.policy.write_text(
            f'home = "{self.home}"\n'
            f'write = ["{self.project}"]\n'
            f'harness = "{self.home}/.claude"\n'
            'domains = ["example.com"]\n'
            f'exe = "{self.exe}"\n')
        self.policy.chmod(0o644)

    def remove(self):
        shutil.rmtree(self.root, ignore_errors=True)


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
    """One `claude -p` session whose model makes one call of tool with tool_input."""

    def __init__(self, machine, tool, tool_input, cwd, args=(), env=None):
        self.api = FakeMessagesApi(tool, tool_input)
        try:
            environment = {"PATH": "/usr/bin:/bin", "HOME": str(machine.home),
                           "ANTHROPIC_BASE_URL": self.api.url,
                           "ANTHROPIC_API_KEY": "sk-ant-test-0000"}
            environment.update(env or {})
            self.process = subprocess.run(
                ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--",
                 ARGS.claude, "-p", "go", "--output-format", "json", *args],
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


class ClaudeCodeUnderThePolicy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.machine = Machine()
        try:
            cls.settings = ManagedSettings(cls.machine)
        except Exception:
            cls.machine.remove()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.settings.restore()
        cls.machine.remove()

    def session(self, tool, tool_input, cwd=None, args=(), env=None):
        return Session(self.machine, tool, tool_input, cwd or self.machine.project, args, env)

    def assert_refused(self, session):
        self.assertIsNotNone(session.result, session.describe())
        self.assertTrue(session.result.get("is_error"), session.describe())
        self.assertNotIn(SECRET, session.text() or "", session.describe())

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
                os.chown(path, NOBODY, NOBODY)
        for args, env in ((("--bare",), None), ((), {"CLAUDE_CODE_SIMPLE": "1"})):
            with self.subTest(args=args, env=env):
                session = self.session(
                    "Bash", {"command": f"cat {self.machine.home}/.ssh/id_rsa; echo x > {written}",
                             "description": "read the key"},
                    cwd=self.machine.home, args=(*args, "--dangerously-skip-permissions"), env=env)
                self.assert_refused(session)
                self.assertFalse(written.exists())

    def test_a_users_own_settings_turn_nothing_off(self):
        user_settings = self.machine.home / ".claude" / "settings.json"
        user_settings.parent.mkdir(exist_ok=True)
        user_settings.write_text(json.dumps({"sandbox": {"enabled": False},
                                             "disableAllHooks": True}))
        for path in (user_settings.parent, user_settings):
            os.chown(path, NOBODY, NOBODY)
        try:
            session = self.session("Read", {"file_path": str(self.machine.home / ".ssh" / "id_rsa")},
                                   args=("--dangerously-skip-permissions",))
            self.assert_refused(session)
        finally:
            user_settings.unlink()


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
