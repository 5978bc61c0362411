#!/usr/bin/env python3
"""Fails when a module reaches past the SDK, the host names a module, or the host reaches
into the built-in egress proxy.

A module (each directory under backends/ and plugins/, the SDK's examples, and each
directory under egress/ but the built-in proxy's two, destination/ and proxy/) may include
the SDK's headers (sdk/include), its own files, and, for a backend, what the backends share
(backends/common); system and library headers are its own business. The host (host/) may
include no module's file. Nor may it include the proxy's internals: nothing of egress/proxy/
but its public headers (egress/proxy/include), and those only where the proxy is composed
(PROXY_COMPOSERS: serve's and egress's commands, and serve's metrics endpoint, which reads
HTTP and checks its peer with the proxy's code); the core knows the proxy through its
interface (host/include/sandbox_host/host/egress.hpp) alone. Every #include of every C and
C++ file is judged by where the file it names is in this tree, so an include path a CMake
target hands on (a host library's include directory, linked into a module) is caught
whatever it is spelled.

usage: check_module_boundaries.py <source-dir>   exit 0: clean; 1: each breach on stderr
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.MULTILINE)
SOURCES = {".c", ".cc", ".cpp", ".h", ".hpp"}
CLOSING = {"<": ">", "\"": "\""}
# The built-in proxy's parts under egress/; every other directory there is a module.
BUILT_IN_EGRESS = ("destination", "proxy")
# The directories of host/ that compose the proxy and so may include its public headers.
PROXY_COMPOSERS = ("host/src/cli", "host/src/metrics", "host/include/sandbox_host/host/metrics")


def modules(root):
    """Each module directory, with the directories it may include from besides its own."""
    sdk = root / "sdk" / "include"
    for parent in ("backends", "plugins"):
        for directory in sorted((root / parent).iterdir()):
            if not directory.is_dir():
                continue
            if parent == "backends":
                # backends/common is what the backends share: it may use itself and the SDK.
                yield directory, [sdk, root / "backends" / "common"]
            else:
                yield directory, [sdk]
    for example in sorted((root / "sdk" / "examples").iterdir()):
        if example.is_dir():
            yield example, [sdk]
    egress = root / "egress"
    for directory in sorted(egress.iterdir()) if egress.is_dir() else []:
        if directory.is_dir() and directory.name not in BUILT_IN_EGRESS:
            yield directory, [sdk]


def sources(directory):
    return [p for p in sorted(directory.rglob("*")) if p.suffix in SOURCES and p.is_file()]


def index(root):
    """Every C and C++ file of the tree (not its build directories), by file name."""
    files = {}
    for path in root.rglob("*"):
        relative = path.relative_to(root).parts
        if relative[0].startswith(("build", ".")) or path.suffix not in SOURCES:
            continue
        if path.is_file():
            files.setdefault(path.name, []).append(path.resolve())
    return files


def where(files, including, quote, name, search):
    """The file of this tree an include names: a quoted one next to the includer first, then
    the search directories, then wherever an include directory could find it in the tree.
    None for a system or library header."""
    candidates = [including.parent / name] if quote == '"' else []
    candidates += [directory / name for directory in search]
    for candidate in candidates:
        if candidate.is_file():
            return candidate.resolve()
    suffix = "/" + name.lstrip("./")
    for path in files.get(pathlib.PurePath(name).name, []):
        if path.as_posix().endswith(suffix):
            return path
    return None


def inside(path, directories):
    return any(path.is_relative_to(d.resolve()) for d in directories)


def proxy_breach(root, source, found):
    """Why host file source may not include found, a file of the proxy; None when it may."""
    proxy = root / "egress" / "proxy"
    if not found.is_relative_to(proxy):
        return None
    if not found.is_relative_to(proxy / "include"):
        return "the proxy's sources and private headers are its own"
    if not inside(source, [root / composer for composer in PROXY_COMPOSERS]):
        return ("only what composes the proxy (" + ", ".join(PROXY_COMPOSERS) + ") includes "
                "it; the core knows it through egress.hpp")
    return None


def check(root):
    root = root.resolve()
    files = index(root)
    breaches = []
    own_include = {}
    for directory, allowed in modules(root):
        for source in sources(directory):
            for quote, name in INCLUDE.findall(source.read_text(errors="replace")):
                found = where(files, source, quote, name, [directory, *allowed])
                if found is None:
                    continue
                if not inside(found, [directory, *allowed]):
                    breaches.append(f"{source.relative_to(root)}: includes {quote}{name}{CLOSING[quote]} "
                                    f"({found.relative_to(root)}), which is neither the SDK "
                                    f"nor the module's own")
        own_include[directory] = True
    module_dirs = [d for d in own_include if not d.is_relative_to(root / "sdk")]
    module_dirs.append(root / "backends" / "common")
    for source in sources(root / "host"):
        for quote, name in INCLUDE.findall(source.read_text(errors="replace")):
            found = where(files, source, quote, name,
                          [root / "host" / "include", root / "sdk" / "include"])
            if found is None:
                continue
            named = f"{source.relative_to(root)}: includes {quote}{name}{CLOSING[quote]} " \
                    f"({found.relative_to(root)})"
            if inside(found, module_dirs):
                breaches.append(f"{named}: the host names no module")
            elif (why := proxy_breach(root, source, found)) is not None:
                breaches.append(f"{named}: {why}")
    return breaches


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    breaches = check(pathlib.Path(sys.argv[1]))
    for breach in breaches:
        print("module boundary: " + breach, file=sys.stderr)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
