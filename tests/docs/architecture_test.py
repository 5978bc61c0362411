#!/usr/bin/env python3
"""docs/architecture.md's diagram names every module of the tree, and only those.

The modules of a tree: every sandbox_host_add_module(<name> KIND <kind> ...) in a
CMakeLists.txt under backends/, plugins/, sdk/examples/ and egress/ (not in a build*/,
tests/ or hidden directory: modules under tests/ are fixtures), a foreach(<var> a b c)
around such a call with ${<var>} expanded to each item; and the built-in egress proxy,
named proxy, which exists when the directory egress/proxy does.

The modules the diagram names: every <kind>:<name> token (kind backend, op or egress) in
the first ```text block of docs/architecture.md.

usage: architecture_test.py <source-dir>   exit 0: they agree; 1: each difference on stderr
       architecture_test.py [unittest options]   this file's own tests
"""
import pathlib
import re
import subprocess
import sys
import tempfile
import unittest

SOURCE = pathlib.Path(__file__).resolve().parents[2]
DOC = pathlib.PurePosixPath("docs/architecture.md")
MODULE_ROOTS = ("backends", "plugins", "sdk/examples", "egress")
KINDS = ("backend", "op", "egress")
# The built-in egress, and the directory whose presence says it is there.
BUILT_IN = (("egress", "proxy"), pathlib.PurePosixPath("egress/proxy"))

TOKEN = re.compile(r"(?<![\w-])(" + "|".join(KINDS) + r"):([a-z0-9][a-z0-9-]*)")
BLOCK = re.compile(r"^```text[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
COMMAND = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
VARIABLE = re.compile(r"\$\{([A-Za-z0-9_.+-]+)\}")


def skipped(relative):
    return any(part == "tests" or part.startswith(("build", ".")) for part in relative.parts)


def cmake_files(root):
    for top in MODULE_ROOTS:
        base = root / top
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("CMakeLists.txt")):
            if path.is_file() and not skipped(path.relative_to(root)):
                yield path


def strip_comments(text):
    """The text with each # comment blanked (not one inside a quoted argument), so that a
    command named in a comment is no call; newlines stay, for line numbers."""
    out, quoted, i = [], False, 0
    while i < len(text):
        c = text[i]
        if c == "\\" and quoted:
            out.append(text[i:i + 2])
            i += 2
            continue
        if c == '"':
            quoted = not quoted
        elif c == "#" and not quoted:
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            out.append(" " * (end - i))
            i = end
            continue
        out.append(c)
        i += 1
    return "".join(out)


def calls(text):
    """(command in lower case, its arguments, line) of each command invocation, in order."""
    text = strip_comments(text)
    position = 0
    while True:
        match = COMMAND.search(text, position)
        if match is None:
            return
        depth, i, quoted = 1, match.end(), False
        while i < len(text) and depth:
            if text[i] == '"':
                quoted = not quoted
            elif not quoted and text[i] == "(":
                depth += 1
            elif not quoted and text[i] == ")":
                depth -= 1
            i += 1
        arguments = [a.strip('"') for a in text[match.end():i - 1].split()]
        yield match.group(1).lower(), arguments, text.count("\n", 0, match.start()) + 1
        position = i


def foreach_items(arguments):
    """The loop variable and its items, or (variable, None) for a form this check does not
    expand (RANGE, IN LISTS, ZIP_LISTS)."""
    if not arguments:
        return None, None
    variable, rest = arguments[0], arguments[1:]
    if rest[:1] == ["RANGE"] or rest[:2] in (["IN", "LISTS"], ["IN", "ZIP_LISTS"]):
        return variable, None
    if rest[:2] == ["IN", "ITEMS"]:
        rest = rest[2:]
    return variable, rest


def expand(word, loops):
    """Each value of word with the enclosing loops' variables substituted, or None when it
    names a variable no enclosing foreach gives."""
    values = [word]
    for name in VARIABLE.findall(word):
        items = None
        for variable, loop_items in reversed(loops):
            if variable == name:
                items = loop_items
                break
        if items is None:
            return None
        values = [v.replace("${" + name + "}", item) for v in values for item in items]
    return values


def existing(root):
    """{(kind, name): where it is declared}, and the problems met reading the tree."""
    modules, problems = {}, []
    for path in cmake_files(root):
        relative = path.relative_to(root).as_posix()
        loops = []
        for command, arguments, line in calls(path.read_text(errors="replace")):
            if command == "foreach":
                loops.append(foreach_items(arguments))
            elif command == "endforeach":
                if loops:
                    loops.pop()
            elif command == "sandbox_host_add_module":
                if len(arguments) < 3 or arguments[1] != "KIND":
                    problems.append(f"{relative}:{line}: sandbox_host_add_module("
                                    f"{' '.join(arguments[:3])} ...) is not of the form "
                                    f"sandbox_host_add_module(<name> KIND <kind> ...)")
                    continue
                names, kinds = expand(arguments[0], loops), expand(arguments[2], loops)
                if names is None or kinds is None:
                    problems.append(f"{relative}:{line}: sandbox_host_add_module("
                                    f"{arguments[0]} KIND {arguments[2]} ...) names a variable "
                                    f"no enclosing foreach(<var> a b c) gives; this check "
                                    f"cannot tell which module it is")
                    continue
                for kind in kinds:
                    for name in names:
                        modules.setdefault((kind, name), relative)
    (kind, name), marker = BUILT_IN
    if (root / marker).is_dir():
        modules.setdefault((kind, name), f"{marker} (built in)")
    return modules, problems


def drawn(root):
    """The (kind, name) pairs the diagram names, or a problem when there is no diagram."""
    doc = root / DOC
    if not doc.is_file():
        return None, f"{DOC}: no such file; it holds the architecture diagram"
    block = BLOCK.search(doc.read_text(errors="replace"))
    if block is None:
        return None, f"{DOC}: no ```text block; the first one is the architecture diagram"
    return set(TOKEN.findall(block.group(1))), None


def check(root):
    root = pathlib.Path(root).resolve()
    modules, problems = existing(root)
    names, problem = drawn(root)
    if problem is not None:
        return problems + [problem]
    for (kind, name), where in sorted(modules.items()):
        if (kind, name) not in names:
            problems.append(f"{kind}:{name} (declared in {where}) is missing from {DOC}'s "
                            f"diagram")
    for kind, name in sorted(names - modules.keys()):
        problems.append(f"{DOC}'s diagram names {kind}:{name}, which does not exist: no "
                        f"CMakeLists.txt under {', '.join(m + '/' for m in MODULE_ROOTS)} "
                        f"declares it" + (" and it is not built in" if kind == "egress" else ""))
    return problems


def main(argv):
    problems = check(pathlib.Path(argv[1]))
    for problem in problems:
        print("architecture diagram: " + problem, file=sys.stderr)
    return 1 if problems else 0


# ---- this file's own tests ---------------------------------------------------------------

DIAGRAM = """# Architecture

```text
+------+   backend:off   op:ping   op:secret   egress:proxy
```

```text
op:later-blocks-are-not-the-diagram
```
"""


def write(root, relative, text=""):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def planted(root, doc=DIAGRAM):
    """A small tree that agrees with its diagram."""
    write(root, "backends/CMakeLists.txt",
          "sandbox_host_add_module(off KIND backend SOURCES off/off_backend.cpp)\n")
    write(root, "plugins/CMakeLists.txt",
          "sandbox_host_add_module(ping KIND op SOURCES ping/ping_op.cpp)\n"
          "# sandbox_host_add_module(commented KIND op SOURCES x.cpp)\n"
          "foreach(op secret)\n"
          "  sandbox_host_add_module(${op} KIND op SOURCES ${op}/${op}_op.cpp)\n"
          "endforeach()\n")
    write(root, "egress/proxy/src/proxy_server.cpp")
    if doc is not None:
        write(root, "docs/architecture.md", doc)


def run(root):
    return subprocess.run([sys.executable, str(pathlib.Path(__file__).resolve()), str(root)],
                          capture_output=True, text=True, timeout=120)


class ArchitectureDiagram(unittest.TestCase):
    def complaints(self, root):
        result = run(root)
        lines = sorted(result.stderr.splitlines())
        self.assertEqual(result.returncode, 1 if lines else 0, result.stderr)
        return lines

    def test_this_tree_matches_its_diagram(self):
        result = run(SOURCE)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_a_planted_tree_that_agrees_passes(self):
        with tempfile.TemporaryDirectory() as scratch:
            planted(pathlib.Path(scratch))
            self.assertEqual(self.complaints(scratch), [])

    def test_a_module_not_drawn_is_named_with_its_cmakelists(self):
        with tempfile.TemporaryDirectory() as scratch:
            root = pathlib.Path(scratch)
            planted(root)
            write(root, "plugins/extra/CMakeLists.txt",
                  "sandbox_host_add_module(extra KIND op SOURCES extra_op.cpp)\n")
            write(root, "sdk/examples/tee-egress/CMakeLists.txt",
                  "SANDBOX_HOST_ADD_MODULE(\n  tee\n  KIND egress SOURCES tee.cpp)\n")
            self.assertEqual(self.complaints(root), [
                "architecture diagram: egress:tee (declared in "
                "sdk/examples/tee-egress/CMakeLists.txt) is missing from docs/architecture.md's "
                "diagram",
                "architecture diagram: op:extra (declared in plugins/extra/CMakeLists.txt) is "
                "missing from docs/architecture.md's diagram",
            ])

    def test_a_drawn_module_that_does_not_exist_is_named(self):
        with tempfile.TemporaryDirectory() as scratch:
            root = pathlib.Path(scratch)
            planted(root, DIAGRAM.replace("op:secret", "op:secret op:gone backend:nowhere"))
            self.assertEqual(self.complaints(root), [
                "architecture diagram: docs/architecture.md's diagram names backend:nowhere, "
                "which does not exist: no CMakeLists.txt under backends/, plugins/, "
                "sdk/examples/, egress/ declares it",
                "architecture diagram: docs/architecture.md's diagram names op:gone, which does "
                "not exist: no CMakeLists.txt under backends/, plugins/, sdk/examples/, "
                "egress/ declares it",
            ])

    def test_the_built_in_proxy_is_there_when_egress_proxy_is(self):
        with tempfile.TemporaryDirectory() as scratch:
            root = pathlib.Path(scratch)
            planted(root, DIAGRAM.replace("egress:proxy", ""))
            self.assertEqual(self.complaints(root), [
                "architecture diagram: egress:proxy (declared in egress/proxy (built in)) is "
                "missing from docs/architecture.md's diagram",
            ])
        with tempfile.TemporaryDirectory() as scratch:
            root = pathlib.Path(scratch)
            planted(root)
            (root / "egress/proxy/src/proxy_server.cpp").unlink()
            (root / "egress/proxy/src").rmdir()
            (root / "egress/proxy").rmdir()
            self.assertEqual(self.complaints(root), [
                "architecture diagram: docs/architecture.md's diagram names egress:proxy, "
                "which does not exist: no CMakeLists.txt under backends/, plugins/, "
                "sdk/examples/, egress/ declares it and it is not built in",
            ])

    def test_a_foreach_declared_op_missing_from_the_diagram_is_named(self):
        with tempfile.TemporaryDirectory() as scratch:
            root = pathlib.Path(scratch)
            planted(root)
            write(root, "plugins/CMakeLists.txt",
                  "sandbox_host_add_module(ping KIND op SOURCES ping/ping_op.cpp)\n"
                  "foreach(op secret gate\n        vault)\n"
                  "  sandbox_host_add_module(${op} KIND op SOURCES ${op}/${op}_op.cpp)\n"
                  "  install(TARGETS op_${op} LIBRARY DESTINATION lib)\n"
                  "endforeach()\n"
                  "foreach(name IN ITEMS lab)\n"
                  "  sandbox_host_add_module(${name} KIND op SOURCES x.cpp)\n"
                  "endforeach()\n")
            self.assertEqual(self.complaints(root), [
                "architecture diagram: op:gate (declared in plugins/CMakeLists.txt) is missing "
                "from docs/architecture.md's diagram",
                "architecture diagram: op:lab (declared in plugins/CMakeLists.txt) is missing "
                "from docs/architecture.md's diagram",
                "architecture diagram: op:vault (declared in plugins/CMakeLists.txt) is missing "
                "from docs/architecture.md's diagram",
            ])

    def test_a_call_it_cannot_expand_is_named(self):
        with tempfile.TemporaryDirectory() as scratch:
            root = pathlib.Path(scratch)
            planted(root)
            write(root, "plugins/more/CMakeLists.txt",
                  "set(NAME more)\nsandbox_host_add_module(${NAME} KIND op SOURCES x.cpp)\n")
            self.assertEqual(self.complaints(root), [
                "architecture diagram: plugins/more/CMakeLists.txt:2: "
                "sandbox_host_add_module(${NAME} KIND op ...) names a variable no enclosing "
                "foreach(<var> a b c) gives; this check cannot tell which module it is",
            ])

    def test_modules_under_tests_and_build_directories_are_ignored(self):
        with tempfile.TemporaryDirectory() as scratch:
            root = pathlib.Path(scratch)
            planted(root)
            fixture = "sandbox_host_add_module(fixture KIND backend SOURCES f.cpp)\n"
            write(root, "tests/CMakeLists.txt", fixture)
            write(root, "tests/fixtures/modules/CMakeLists.txt", fixture)
            write(root, "plugins/ping/tests/CMakeLists.txt", fixture)
            write(root, "plugins/build/CMakeLists.txt", fixture)
            write(root, "build/plugins/CMakeLists.txt", fixture)
            write(root, "sdk/examples/hello-op/build-x/CMakeLists.txt", fixture)
            self.assertEqual(self.complaints(root), [])

    def test_a_missing_doc_or_diagram_fails(self):
        with tempfile.TemporaryDirectory() as scratch:
            root = pathlib.Path(scratch)
            planted(root, doc=None)
            self.assertEqual(self.complaints(root), [
                "architecture diagram: docs/architecture.md: no such file; it holds the "
                "architecture diagram",
            ])
        with tempfile.TemporaryDirectory() as scratch:
            root = pathlib.Path(scratch)
            planted(root, doc="# Architecture\n\n```sh\nbackend:off op:ping\n```\n")
            self.assertEqual(self.complaints(root), [
                "architecture diagram: docs/architecture.md: no ```text block; the first one "
                "is the architecture diagram",
            ])


if __name__ == "__main__":
    if len(sys.argv) == 2 and not sys.argv[1].startswith("-") and pathlib.Path(sys.argv[1]).is_dir():
        sys.exit(main(sys.argv))
    unittest.main(verbosity=2)
