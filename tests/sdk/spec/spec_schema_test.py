#!/usr/bin/env python3
"""A Spec field is described once: a copy of sdk/include with one line added to
SH_SPEC_FIELDS in spec_fields.h builds added_field_check.cpp (with the host's JSON codec)
and added_field_check.c, and both pass; against the SDK as it is, they do not build."""
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = HERE.parents[2]
SDK_INCLUDE = SOURCE / "sdk" / "include"
CXX = os.environ.get("CXX", "c++")
CC = os.environ.get("CC", "cc")
NEW_FIELD = "X(STRING, added_by_the_test, 10)"


def add_field(include):
    """Appends NEW_FIELD as the last entry of SH_SPEC_FIELDS, the one edit a field needs."""
    schema = include / "sandbox_host" / "spec_fields.h"
    text = schema.read_text()
    start = text.index("#define SH_SPEC_FIELDS(X)")
    # The definition ends at the first line, after its start, that does not continue.
    end = re.compile(r"[^\\\n]\n").search(text, start).end() - 1
    schema.write_text(text[:end] + " \\\n  " + NEW_FIELD + text[end:])


def build_cpp(include, out):
    return subprocess.run(
        [CXX, "-std=c++20", "-Wall", "-Wextra", "-Werror", "-I", str(include),
         "-I", str(SOURCE / "host" / "include"), str(HERE / "added_field_check.cpp"),
         str(SOURCE / "host" / "src" / "launch_client" / "spec_codec.cpp"),
         str(SOURCE / "host" / "src" / "launch_client" / "boost_json.cpp"),
         "-o", str(out)], capture_output=True, text=True, timeout=240)


def build_c(include, out):
    return subprocess.run(
        [CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", str(include),
         str(HERE / "added_field_check.c"), "-o", str(out)],
        capture_output=True, text=True, timeout=120)


class OneEdit(unittest.TestCase):
    def setUp(self):
        self.scratch = pathlib.Path(tempfile.mkdtemp(prefix="spec-schema-"))
        self.addCleanup(shutil.rmtree, self.scratch)

    def test_one_line_adds_a_field_everywhere(self):
        include = self.scratch / "include"
        shutil.copytree(SDK_INCLUDE, include)
        add_field(include)
        for build, name in ((build_cpp, "check_cpp"), (build_c, "check_c")):
            result = build(include, self.scratch / name)
            self.assertEqual(result.returncode, 0, result.stderr)
            run = subprocess.run([str(self.scratch / name)], capture_output=True, text=True,
                                 timeout=60)
            self.assertEqual(run.returncode, 0, run.stderr)

    def test_without_the_line_the_checks_do_not_build(self):
        for build in (build_cpp, build_c):
            result = build(SDK_INCLUDE, self.scratch / "unbuilt")
            self.assertNotEqual(result.returncode, 0)
            self.assertIn("added_by_the_test", result.stderr)


if __name__ == "__main__":
    unittest.main()
