#!/usr/bin/env python3
"""The repository stands alone: nothing in it cites a document that lives outside it, and
every link to a section of docs/design.md names a heading that page has.

Outside documents: a path through ../shared, the file DESIGN.md (upper case; docs/design.md
is the project's own), or a "seed NNN" contract. Users of the project never had them, so a
comment that leans on one explains nothing.

The files of a tree: what git tracks plus untracked files it does not ignore, when the tree
is a git checkout; else every file below it, skipping build*/ and hidden directories. Files
that are not UTF-8 text are skipped.

Links: docs/design.md#<anchor> (or design.md#<anchor>) anywhere in those files, and
](#<anchor>) inside docs/design.md itself. A heading's anchor is GitHub's: lower case,
punctuation but - and _ dropped, spaces as -, a -1, -2 ... suffix for repeats.

usage: standalone_test.py <source-dir>   exit 0: it stands alone; 1: each problem on stderr
       standalone_test.py [unittest options]   this file's own tests
"""
import pathlib
import re
import subprocess
import sys
import tempfile
import unittest

from markdown_anchors import anchors

SOURCE = pathlib.Path(__file__).resolve().parents[2]
DESIGN = pathlib.PurePosixPath("docs/design.md")

# Spelled in pieces so that this file does not cite what it forbids.
OUTSIDE = (
    ("a path through ../shared", re.compile(re.escape(".." + "/shared"))),
    ("the outside DESIGN" + ".md", re.compile(r"\bDESIGN" + r"\.md\b")),
    ("a seed contract", re.compile(r"(?i)\bseeds?[ _-]?0*\d{3}\b|\bseeds" + r"/")),
)
DESIGN_LINK = re.compile(r"(?<![\w.-])(?:[\w./-]*/)?design\.md#([\w-]+)")
SELF_LINK = re.compile(r"\]\(#([\w-]+)\)")


def skipped(relative):
    return any(part.startswith(("build", ".")) for part in relative.parts[:-1])


def tree_files(root):
    """Relative paths of the tree's files, as described above."""
    if (root / ".git").exists():
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard"], capture_output=True, check=True).stdout
        paths = {pathlib.PurePosixPath(p) for p in listed.decode().split("\0") if p}
        return sorted(p for p in paths if (root / p).is_file())
    return sorted(pathlib.PurePosixPath(p.relative_to(root).as_posix())
                  for p in root.rglob("*")
                  if p.is_file() and not skipped(p.relative_to(root)))


def text_of(path):
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def check(root):
    root = pathlib.Path(root).resolve()
    problems = []
    design = text_of(root / DESIGN) if (root / DESIGN).is_file() else None
    known = anchors(design) if design is not None else set()
    for relative in tree_files(root):
        if relative.name == pathlib.Path(__file__).name and relative.parent.name == "docs":
            continue
        text = text_of(root / relative)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for what, pattern in OUTSIDE:
                match = pattern.search(line)
                if match:
                    problems.append(f"{relative}:{number}: cites {what} (\"{match.group(0)}\"), "
                                    f"which is not in the repository; point to {DESIGN}'s "
                                    f"section or say the reason in place")
            links = DESIGN_LINK.findall(line)
            if relative == DESIGN:
                links += SELF_LINK.findall(line)
            for anchor in links:
                if design is None:
                    problems.append(f"{relative}:{number}: links {DESIGN}#{anchor}, but there "
                                    f"is no {DESIGN}")
                elif anchor not in known:
                    problems.append(f"{relative}:{number}: links {DESIGN}#{anchor}, a heading "
                                    f"{DESIGN} does not have")
    return problems


def main(argv):
    problems = check(pathlib.Path(argv[1]))
    for problem in problems:
        print("stands alone: " + problem, file=sys.stderr)
    return 1 if problems else 0


# ---- this file's own tests ---------------------------------------------------------------

DOC = """# Design

## Contracts

### Exit statuses and the stage-1 failure line

See [the spec](#the-spec).

### The Spec

```sh
# not a heading
```

## Flows

### Launch
"""


def write(root, relative, text=""):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def planted(root):
    """A small tree that stands alone."""
    write(root, "docs/design.md", DOC)
    write(root, "host/stage1.hpp",
          "// Exit 87 (docs/design.md#exit-statuses-and-the-stage-1-failure-line).\n")
    write(root, "docs/sdk.md", "The [launch](design.md#launch) and the seed corpus.\n")
    write(root, "bench/x.py", "seed = 1234  # a fixed seed per client\n")


def run(root):
    return subprocess.run([sys.executable, str(pathlib.Path(__file__).resolve()), str(root)],
                          capture_output=True, text=True, timeout=120)


class StandsAlone(unittest.TestCase):
    def complaints(self, root):
        result = run(root)
        lines = sorted(result.stderr.splitlines())
        self.assertEqual(result.returncode, 1 if lines else 0, result.stderr)
        return lines

    def complaints_with(self, files):
        """The complaints about the planted tree with files ({path: text}) added to it."""
        with tempfile.TemporaryDirectory() as scratch:
            root = pathlib.Path(scratch)
            planted(root)
            for relative, text in files.items():
                write(root, relative, text)
            return self.complaints(root)

    def test_this_tree_stands_alone(self):
        result = run(SOURCE)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_a_planted_tree_that_stands_alone_passes(self):
        self.assertEqual(self.complaints_with({}), [])

    def test_each_outside_citation_is_named_with_its_line(self):
        lines = self.complaints_with({
            "host/probe.hpp": "#pragma once\n// Probe (" + "seed 004).\n",
            "plugins/ping/ping_op.cpp": "// ping (" + "Seed 000's OpPing)\n",
            "docs/egress.md": "As " + "DESIGN.md says.\n",
            "CMakeLists.txt": "# see .." + "/shared/" + "seeds/000_x.txt\n",
        })
        self.assertEqual(len(lines), 5, lines)
        for line, start in zip(lines, [
                "stands alone: CMakeLists.txt:1: cites a path through ../shared",
                "stands alone: CMakeLists.txt:1: cites a seed contract",
                "stands alone: docs/egress.md:1: cites the outside DESIGN.md",
                "stands alone: host/probe.hpp:2: cites a seed contract (\"seed 004\")",
                "stands alone: plugins/ping/ping_op.cpp:1: cites a seed contract (\"Seed 000\")"]):
            self.assertTrue(line.startswith(start), lines)

    def test_a_link_to_a_missing_heading_is_named(self):
        self.assertEqual(self.complaints_with({
            "sdk/abi.h": "/* docs/design.md#module-abi */\n",
            "docs/design.md": DOC + "\nBack to [nowhere](#nowhere).\n",
            "docs/more.md": "[x](../docs/design.md#not-a-heading)\n",
        }), [
            "stands alone: docs/design.md:19: links docs/design.md#nowhere, a heading "
            "docs/design.md does not have",
            "stands alone: docs/more.md:1: links docs/design.md#not-a-heading, a heading "
            "docs/design.md does not have",
            "stands alone: sdk/abi.h:1: links docs/design.md#module-abi, a heading "
            "docs/design.md does not have",
        ])

    def test_a_heading_in_a_code_block_is_no_anchor(self):
        lines = self.complaints_with({"a.cpp": "// docs/design.md#not-a-heading\n"})
        self.assertEqual(len(lines), 1, lines)

    def test_build_and_hidden_directories_are_skipped(self):
        self.assertEqual(self.complaints_with({
            "build/x.cpp": "// " + "DESIGN.md\n",
            "build-deb/x.md": "seed " + "004\n",
            ".cache/x": ".." + "/shared\n",
        }), [])

    def test_git_tracked_and_untracked_files_are_read_ignored_ones_not(self):
        with tempfile.TemporaryDirectory() as scratch:
            root = pathlib.Path(scratch)
            planted(root)
            subprocess.run(["git", "init", "-q", str(root)], check=True)
            write(root, ".gitignore", "/out/\n")
            write(root, "out/ignored.txt", "seed " + "004\n")
            subprocess.run(["git", "-C", str(root), "add", "docs", ".gitignore"], check=True)
            write(root, "new.md", "seed " + "000\n")
            lines = self.complaints(root)
            self.assertEqual(len(lines), 1, lines)
            self.assertIn("new.md:1", lines[0])


if __name__ == "__main__":
    if len(sys.argv) == 2 and not sys.argv[1].startswith("-") and pathlib.Path(sys.argv[1]).is_dir():
        sys.exit(main(sys.argv))
    unittest.main(verbosity=2)
