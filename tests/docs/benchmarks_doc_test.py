#!/usr/bin/env python3
"""docs/benchmarks.md and docs/benchmarks-history.md stay readable and their links land.

- No line of either file is longer than 200 characters (MAX_LINE; the bench/*.py scripts
  keep what they write under it with bench_common.fit_lines).
- Every section the summary table of docs/benchmarks.md names (a reference link such as
  [spawn] in its last column) is defined ([spawn]: #anchor) and the anchor is a heading of
  docs/benchmarks.md.
- Every link into benchmarks.md or benchmarks-history.md with an anchor, from either file,
  from docs/*.md or from README.md, names a heading that exists.

Anchors are GitHub's: the heading's text lower-cased, everything but letters, digits, `_`, `-`
and spaces dropped, spaces made `-`; a repeated heading gets -1, -2, ...

usage: benchmarks_doc_test.py <source-dir>   exit 0: all hold; 1: each problem on stderr
       benchmarks_doc_test.py [unittest options]   this file's own tests (on this tree too)
"""
import pathlib
import re
import sys
import tempfile
import unittest

from markdown_anchors import anchors

SOURCE = pathlib.Path(__file__).resolve().parents[2]
BENCH = pathlib.PurePosixPath("docs/benchmarks.md")
HISTORY = pathlib.PurePosixPath("docs/benchmarks-history.md")
MAX_LINE = 200

REF_DEF = re.compile(r"^\[([^\]]+)\]:\s*(\S+)\s*$")
INLINE = re.compile(r"\]\(([^)\s]*)\)")


def summary_refs(text):
    """The reference labels the last column of the '## Summary' table names."""
    lines, refs, inside = text.splitlines(), [], False
    for line in lines:
        if line.startswith("## "):
            inside = line.strip() == "## Summary"
            continue
        if inside and line.startswith("|") and not re.match(r"^\|[\s|:-]+\|$", line):
            cell = line.strip().strip("|").split("|")[-1].strip()
            refs += re.findall(r"\[([^\]]+)\]", cell)
    return refs


def check(root):
    problems = []
    texts = {}
    for rel in (BENCH, HISTORY):
        path = root / rel
        if not path.is_file():
            problems.append(f"{rel}: no such file")
            continue
        texts[rel] = path.read_text(encoding="utf-8")
        for number, line in enumerate(texts[rel].splitlines(), 1):
            if len(line) > MAX_LINE:
                problems.append(f"{rel}:{number}: {len(line)} characters, more than {MAX_LINE}")
    if BENCH not in texts:
        return problems
    own = {rel: anchors(text) for rel, text in texts.items()}

    bench = texts[BENCH]
    definitions = {m.group(1): m.group(2) for m in map(REF_DEF.match, bench.splitlines()) if m}
    refs = summary_refs(bench)
    if not refs:
        problems.append(f"{BENCH}: no '## Summary' table that names its sections")
    for ref in dict.fromkeys(refs):
        target = definitions.get(ref)
        if target is None:
            problems.append(f"{BENCH}: the summary names [{ref}], which is not defined")
        elif not target.startswith("#") or target[1:] not in own[BENCH]:
            problems.append(f"{BENCH}: the summary's [{ref}] is {target}, not a section of it")

    # Every anchored link into the two files, from them, docs/*.md and README.md.
    sources = sorted({*(root / "docs").glob("*.md"), root / "README.md"})
    for path in sources:
        if not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        targets = INLINE.findall(text) + [m.group(2) for m in map(REF_DEF.match, text.splitlines())
                                          if m]
        for target in targets:
            file, _, anchor = target.partition("#")
            if not anchor:
                continue
            if file == "" and rel in (str(BENCH), str(HISTORY)):
                doc = pathlib.PurePosixPath(rel)
            else:
                name = pathlib.PurePosixPath(file).name
                doc = next((d for d in (BENCH, HISTORY) if d.name == name), None)
                if doc is None:
                    continue
            if doc not in own:
                continue
            if anchor not in own[doc]:
                problems.append(f"{rel}: the link {target} names no heading of {doc}")
    return problems


def main(argv):
    problems = check(pathlib.Path(argv[1]))
    for problem in problems:
        print(f"benchmarks doc: {problem}", file=sys.stderr)
    return 1 if problems else 0


# ---- this file's own tests ---------------------------------------------------------------------

BENCH_DOC = """# Benchmarks

## Summary

| figure | ratio | section |
|---|---|---|
| a launch | 0.5× | [spawn] |
| another | 2× | [broker] |

[spawn]: #spawn-to-exit-run-vs-a-bare-spawn
[broker]: #the-brokers-round-trip

<!-- spawn-bench:begin -->
## Spawn-to-exit: `run` vs. a bare spawn

```sh
# not a heading
```
<!-- spawn-bench:end -->

## The broker's round trip

History: [2026-12-01](benchmarks-history.md#2026-12-01-why-it-moved).
"""

HISTORY_DOC = """# Benchmarks: history

## 2026-12-01: Why it moved

Explains, in benchmarks.md: [spawn].

[spawn]: benchmarks.md#spawn-to-exit-run-vs-a-bare-spawn
"""


def planted(root, bench=BENCH_DOC, history=HISTORY_DOC, others=()):
    (root / "docs").mkdir(parents=True)
    if bench is not None:
        (root / BENCH).write_text(bench, encoding="utf-8")
    if history is not None:
        (root / HISTORY).write_text(history, encoding="utf-8")
    for rel, text in others:
        (root / rel).write_text(text, encoding="utf-8")


class BenchmarksDoc(unittest.TestCase):
    def complaints(self, **kwargs):
        with tempfile.TemporaryDirectory() as scratch:
            root = pathlib.Path(scratch)
            planted(root, **kwargs)
            return check(root)

    def test_this_tree_passes(self):
        self.assertEqual(check(SOURCE), [])

    def test_a_planted_tree_that_holds_passes(self):
        self.assertEqual(self.complaints(), [])

    def test_a_long_line_fails_in_either_file(self):
        long = "x" * (MAX_LINE + 1)
        self.assertEqual(self.complaints(bench=BENCH_DOC + long + "\n"), [
            f"docs/benchmarks.md:24: {MAX_LINE + 1} characters, more than {MAX_LINE}"])
        self.assertEqual(self.complaints(history=HISTORY_DOC + "\n" + long + "\n"), [
            f"docs/benchmarks-history.md:9: {MAX_LINE + 1} characters, more than {MAX_LINE}"])
        self.assertEqual(self.complaints(bench=BENCH_DOC + "y" * MAX_LINE + "\n"), [])

    def test_a_summary_row_naming_a_missing_section_fails(self):
        bench = BENCH_DOC.replace("## The broker's round trip", "## The broker, renamed")
        self.assertIn("docs/benchmarks.md: the summary's [broker] is #the-brokers-round-trip, "
                      "not a section of it", self.complaints(bench=bench))
        bench = BENCH_DOC.replace("[broker]: #the-brokers-round-trip\n", "")
        self.assertEqual(self.complaints(bench=bench), [
            "docs/benchmarks.md: the summary names [broker], which is not defined"])

    def test_a_heading_inside_a_code_block_is_no_section(self):
        bench = BENCH_DOC.replace("[broker]: #the-brokers-round-trip", "[broker]: #not-a-heading")
        self.assertEqual(self.complaints(bench=bench), [
            "docs/benchmarks.md: the summary's [broker] is #not-a-heading, not a section of it",
            "docs/benchmarks.md: the link #not-a-heading names no heading of docs/benchmarks.md"])

    def test_links_into_the_two_files_must_land(self):
        history = HISTORY_DOC.replace("run-vs-a-bare-spawn", "run-vs-nothing")
        self.assertEqual(self.complaints(history=history), [
            "docs/benchmarks-history.md: the link benchmarks.md#spawn-to-exit-run-vs-nothing "
            "names no heading of docs/benchmarks.md"])
        bench = BENCH_DOC.replace("#2026-12-01-why-it-moved", "#2026-12-02-why-it-moved")
        self.assertEqual(self.complaints(bench=bench), [
            "docs/benchmarks.md: the link benchmarks-history.md#2026-12-02-why-it-moved names no "
            "heading of docs/benchmarks-history.md"])
        others = [("README.md", "See [it](docs/benchmarks.md#gone) and [ok](docs/benchmarks.md)."),
                  ("docs/ops.md", "[b](benchmarks.md#the-brokers-round-trip)")]
        self.assertEqual(self.complaints(others=others), [
            "README.md: the link docs/benchmarks.md#gone names no heading of docs/benchmarks.md"])

    def test_a_missing_file_or_summary_fails(self):
        self.assertEqual(self.complaints(history=None), ["docs/benchmarks-history.md: no such file"])
        self.assertIn("docs/benchmarks.md: no '## Summary' table that names its sections",
                      self.complaints(bench=BENCH_DOC.replace("## Summary", "## Overview")))


if __name__ == "__main__":
    if len(sys.argv) == 2 and not sys.argv[1].startswith("-") and pathlib.Path(sys.argv[1]).is_dir():
        sys.exit(main(sys.argv))
    unittest.main(verbosity=2)
