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
Exit 77 (skipped, with the reason) where the CLI, root or bubblewrap is missing.

The cases are in under_the_drop_in_test.py and inside_sandbox_host_test.py, what they share
in claude_sessions.py."""

import argparse
import os
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from claude_sessions import ARGS, DEFAULT_CLAUDE, skip_reason  # noqa: E402
from inside_sandbox_host_test import ClaudeCodeInsideSandboxHost  # noqa: E402,F401
from under_the_drop_in_test import (  # noqa: E402,F401
    BareSessionsWithoutADenyEntry, ClaudeCodeUnderThePolicy)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sandbox-host", required=True)
    parser.add_argument("--claude", default=os.environ.get("SANDBOX_HOST_CLAUDE", DEFAULT_CLAUDE))
    _, rest = parser.parse_known_args(namespace=ARGS)
    reason = skip_reason()
    if reason:
        print(f"SKIPPED: {reason}")
        return 77
    program = unittest.main(argv=[sys.argv[0], "-v", *rest], exit=False)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
