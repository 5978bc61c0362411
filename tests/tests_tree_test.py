#!/usr/bin/env python3
"""tests/ mirrors the source tree: every folder of tests under tests/ is named for the source
it tests (tests/host/<x> for host/src/<x>, tests/<path> for <path>, or a folder named for a
source file's stem, as tests/sdk/command_op for sdk/include/sandbox_host/command_op.hpp),
so that a source file's tests are found from its path; and a source folder that moves takes
its tests along. system/ (end to end), support/ and fixtures/ are the suites' own.

Run with no argument it checks this repository; with a path, the tree there."""

import pathlib
import sys
import tempfile
import unittest

SOURCE = pathlib.Path(__file__).resolve().parents[1]
SUITES_OWN = {"system", "support", "fixtures"}
# Folders inside a test folder that hold its parts, not another source's tests.
PARTS = {"unit", "fixtures", "golden", "src"}
TEST_FILE_SUFFIXES = {".cpp", ".c", ".py", ".sh"}


def test_folders(root):
    """The folders under root/tests that hold a test's files, as paths relative to tests/."""
    tests = root / "tests"
    for path in sorted(tests.rglob("*")):
        if path.is_file() and (path.suffix in TEST_FILE_SUFFIXES or path.name == "CMakeLists.txt"):
            folder = path.parent.relative_to(tests)
            if folder.parts and folder.parts[0] not in SUITES_OWN:
                yield folder


def source_of(root, folder):
    """The source path folder names, or None when it names none."""
    parts = list(folder.parts)
    for index, part in enumerate(parts):
        if index > 0 and part in PARTS:
            parts = parts[:index]
            break
    if parts[0] == "host" and len(parts) > 1:
        if len(parts) != 2:
            return None
        candidate = root / "host" / "src" / parts[1]
        return candidate if candidate.is_dir() else None
    candidate = root.joinpath(*parts)
    if candidate.is_dir():
        return candidate
    parent = root.joinpath(*parts[:-1])
    if len(parts) > 1 and parent.is_dir():
        stems = [f for f in parent.rglob(parts[-1] + ".*") if f.is_file()]
        if stems:
            return stems[0]
    return None


def breaches(root):
    found = []
    seen = set()
    for folder in test_folders(root):
        if folder in seen:
            continue
        seen.add(folder)
        if source_of(root, folder) is None:
            shown = "host/src/" + "/".join(folder.parts[1:]) if folder.parts[0] == "host" \
                else "/".join(folder.parts)
            found.append(f"tests/{folder}: names no source ({shown} is neither a folder nor a "
                         f"file's stem); a source's tests go in the folder of its path "
                         f"(tests/README.md)")
    return found


class TestsTree(unittest.TestCase):
    def test_this_tree_mirrors_its_sources(self):
        self.assertEqual(breaches(SOURCE), [])

    def test_a_folder_named_for_no_source_is_named(self):
        with tempfile.TemporaryDirectory() as scratch:
            root = pathlib.Path(scratch)
            for folder in ("host/src/config", "egress/proxy", "sdk/include/sandbox_host"):
                (root / folder).mkdir(parents=True)
            (root / "sdk/include/sandbox_host/command_op.hpp").write_text("")
            for test in ("host/config/config_test.cpp", "host/config/unit/a_test.cpp",
                         "egress/proxy/fixtures/upstream.py", "sdk/command_op/rules_test.cpp",
                         "system/container/launch_test.cpp", "support/process.cpp",
                         "host/launcher/launch_test.cpp", "egress/relay/relay_test.cpp",
                         "host/config/extra/x_test.cpp"):
                (root / "tests" / test).parent.mkdir(parents=True, exist_ok=True)
                (root / "tests" / test).write_text("")
            found = breaches(root)
            self.assertEqual(len(found), 3, found)
            self.assertTrue(found[0].startswith("tests/egress/relay: names no source"), found)
            self.assertIn("tests/host/config/extra: names no source (host/src/config/extra",
                          found[1])
            self.assertIn("tests/host/launcher: names no source (host/src/launcher", found[2])


if __name__ == "__main__":
    unittest.main()
