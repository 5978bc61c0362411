#!/usr/bin/env python3
"""deploy/Containerfile installs a Debian package for every library that sandbox-host's
installed executables and modules load: each library a file names (its NEEDED entries), as
this Debian 12 machine resolves it, belongs to a package the Containerfile installs or to
one every Debian image has. A missing one would only show at the image's first launch.

usage: containerfile_test.py FILE... [-- unittest options]
       (the installed executables and modules of a build)
exit 0: they are covered; 1: the packages missing, on stderr
"""
import pathlib
import re
import subprocess
import sys
import unittest

SOURCE = pathlib.Path(__file__).resolve().parents[2]
CONTAINERFILE = SOURCE / "deploy" / "Containerfile"
# In every Debian image: the C library, and what apt itself links to.
BASE = {"libc6", "libgcc-s1", "libstdc++6"}


def installed_packages(containerfile):
    """The packages of the Containerfile's `apt-get install` lines."""
    text = containerfile.read_text().replace("\\\n", " ")
    packages = set()
    for command in re.findall(r"apt-get install ([^&\n]*)", text):
        packages.update(word for word in command.split() if not word.startswith("-"))
    return packages


def counterpart(path):
    """The same file through merged /usr's other name: /lib/x for /usr/lib/x, and back."""
    return path[len("/usr"):] if path.startswith("/usr/") else "/usr" + path


def needed_packages(files):
    """Each library a file names, resolved by ldd, mapped to the Debian package it is in."""
    users = {}  # library path -> the files that name it
    for file in files:
        dynamic = subprocess.run(["readelf", "-d", file], capture_output=True, text=True,
                                 check=True).stdout
        needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]", dynamic))
        if not needed:
            continue  # statically linked (sandbox-host-launch)
        resolved = subprocess.run(["ldd", file], capture_output=True, text=True,
                                  check=True).stdout
        for name, path in re.findall(r"^\s*(\S+) => (\S+)", resolved, re.M):
            if name in needed:
                users.setdefault(path, set()).add(pathlib.Path(file).name)
    # One dpkg for all: it prints "package[:arch]: path" for each path it knows.
    paths = sorted(users) + [counterpart(path) for path in sorted(users)]
    owners = subprocess.run(["dpkg", "-S"] + paths, capture_output=True, text=True).stdout
    owner_of = {}
    for line in owners.splitlines():
        package, _, path = line.partition(": ")
        owner_of[path] = package.split(":", 1)[0]
    packages = {}
    for path, names in users.items():
        package = owner_of.get(path) or owner_of.get(counterpart(path)) or "?" + path
        packages.setdefault(package, set()).update(names)
    return packages


class Containerfile(unittest.TestCase):
    files = []

    def test_every_library_comes_from_an_installed_package(self):
        self.assertTrue(self.files, "no installed files given")
        listed = installed_packages(CONTAINERFILE)
        needed = needed_packages(self.files)
        missing = {p: sorted(users) for p, users in needed.items()
                   if p not in listed and p not in BASE}
        self.assertEqual(missing, {}, "packages the Containerfile does not install")

    def test_the_libraries_resolve_to_packages_beyond_the_base(self):
        # The check reads something: the files need more than the base image, and dpkg knows
        # where every library they name comes from.
        needed = needed_packages(self.files)
        self.assertTrue(set(needed) - BASE, needed)
        self.assertEqual([p for p in needed if p.startswith("?")], [])

if __name__ == "__main__":
    split = sys.argv.index("--") if "--" in sys.argv else len(sys.argv)
    Containerfile.files = sys.argv[1:split]
    unittest.main(argv=[sys.argv[0]] + sys.argv[split + 1:])
