"""Claude Code sessions under the policy's drop-in alone (claude_code_test.py runs them):
Claude Code's sandbox holds Bash, the hook and the managed deny rules hold the file tools,
in bare sessions too, and `policy check` names what a bare session is not held to; a home
whose policy names no deny entry holds a bare session by the drop-in's rules on the home."""

import json
import os
import re
import shutil

from claude_sessions import (ALLOWED_HOST, ARGS, BARE_WAYS, CLAUDE_VERSION, DROP_IN, ORIGIN_BODY,
                             REFUSED_HOST, SECRET, SESSION_UID, OnTheMachine)


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
