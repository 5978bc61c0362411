#!/usr/bin/env python3
"""The Debian packages that cpack makes of this build tree (cmake/Packaging.cmake), read the
way dpkg and an operator read them: their files and control fields, the conffile, the
Depends that dpkg-shlibdeps wrote from the libraries every packaged ELF file links, the
debug info split into the dbgsym package by build-id, and the sandbox-host that a
`dpkg -x` of the package runs, finding its modules and broker where the package put them.
scripts/package-test.sh installs the package for real, with apt, on a fresh Debian 12 root.

usage: package_test.py BUILD_DIR PREFIX LIBDIR LIBEXEC_SUBDIR VERSION DEMO_PLUGIN
       [-- unittest options]
"""
import gzip
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(SOURCE / "tests" / "deploy"))
from containerfile_test import needed_packages  # noqa: E402

MODULES = ["backend_namespaces", "backend_landlock", "backend_off", "backend_seatbelt",
           "op_ping", "op_secret", "op_gate", "op_agents", "op_watch", "op_lab", "op_person",
           "op_vault", "op_cap-slot", "op_scope", "op_sign", "op_kubeconfig"]
CONFFILE = "/etc/sandbox-host/config.toml"


class Build:
    """This tree's settings, from the command line."""
    dir = prefix = libdir = libexec = version = demo_plugin = None


def run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, **kwargs)


def elf_files(root):
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()
                  and p.read_bytes()[:4] == b"\x7fELF")


def sections(path):
    return set(re.findall(r"^\s*\[\s*\d+\]\s+(\S+)", run(["readelf", "-SW", str(path)]).stdout,
                          re.M))


def build_id(path):
    match = re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", str(path)]).stdout)
    return match.group(1) if match else None


def control_fields(deb):
    out = run(["dpkg-deb", "-f", str(deb)], check=True).stdout
    return dict(re.findall(r"^(\S+): (.*(?:\n .*)*)", out, re.M))


class Packages(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = pathlib.Path(tempfile.mkdtemp(prefix="sandbox-host-package-"))
        out = cls.tmp / "out"
        made = run(["cpack", "--config", str(Build.dir / "CPackConfig.cmake"), "-B", str(out)])
        if made.returncode != 0:
            raise AssertionError("cpack failed:\n" + made.stdout + made.stderr)
        v = Build.version
        cls.deb = out / f"sandbox-host_{v}_amd64.deb"
        cls.dev = out / f"sandbox-host-dev_{v}_amd64.deb"
        cls.dbgsym = out / f"sandbox-host-dbgsym_{v}_amd64.ddeb"
        cls.roots = {}
        for name, package in (("runtime", cls.deb), ("dev", cls.dev), ("dbgsym", cls.dbgsym)):
            root = cls.tmp / name
            run(["dpkg-deb", "-x", str(package), str(root)], check=True)
            run(["dpkg-deb", "-e", str(package), str(root / "DEBIAN")], check=True)
            cls.roots[name] = root
        cls.root = cls.roots["runtime"]
        cls.usr = cls.root / Build.prefix.lstrip("/")
        cls.module_dir = cls.usr / Build.libdir / "sandbox-host" / "modules"
        # A config of no keys: the built-in defaults, whatever this machine's /etc holds.
        cls.empty = cls.tmp / "empty.toml"
        cls.empty.write_text("")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_the_packages_are_named_by_the_project_version(self):
        for package in (self.deb, self.dev, self.dbgsym):
            self.assertTrue(package.is_file(), package)
        fields = control_fields(self.deb)
        self.assertEqual(fields["Package"], "sandbox-host")
        self.assertEqual(fields["Version"], Build.version)
        self.assertEqual(fields["Architecture"], "amd64")
        # The changelog's newest entry is this version's (deploy/debian/changelog).
        changelog = self.usr / "share/doc/sandbox-host/changelog.gz"
        self.assertTrue(gzip.decompress(changelog.read_bytes()).decode().startswith(
            f"sandbox-host ({Build.version}) "), changelog)

    def test_the_runtime_package_holds_executables_modules_docs_and_config(self):
        for exe in ("bin/sandbox-host", "bin/sandbox-host-launch",
                    f"{Build.libexec}/sandbox-host-broker"):
            self.assertTrue((self.usr / exe).is_file(), exe)
        self.assertEqual(sorted(p.stem for p in self.module_dir.glob("*.so")), sorted(MODULES))
        doc = self.usr / "share/doc/sandbox-host"
        for name in ("README.md", "copyright", "docs/config.md", "docs/operations.md"):
            self.assertTrue((doc / name).is_file(), name)
        self.assertIn("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/",
                      (doc / "copyright").read_text())
        for page in ("sandbox-host.1.gz", "sandbox-host-launch.1.gz"):
            self.assertTrue((self.usr / "share/man/man1" / page).is_file(), page)
        units = [*(SOURCE / "deploy" / "systemd").glob("*.service"),
                 *(SOURCE / "deploy" / "systemd").glob("*.socket")]
        self.assertTrue(units, "no unit in deploy/systemd")
        for unit in units:
            where = "system" if "@." in unit.name else "user"
            self.assertTrue((self.usr / "lib/systemd" / where / unit.name).is_file(), unit.name)
        # Nothing of the SDK: that is the -dev package's.
        self.assertFalse((self.usr / "include").exists())
        self.assertEqual(list(self.usr.rglob("*.a")), [])

    def test_the_config_is_a_conffile_that_sandbox_host_reads(self):
        self.assertEqual((self.root / "DEBIAN/conffiles").read_text().split(), [CONFFILE])
        config = self.root / CONFFILE.lstrip("/")
        self.assertTrue(config.is_file())
        # As shipped it parses and changes nothing of the built-in defaults.
        shipped = run([str(self.usr / "bin/sandbox-host"), "probe", "--json", "--config",
                       str(config)])
        defaults = run([str(self.usr / "bin/sandbox-host"), "probe", "--json", "--config",
                        str(self.empty)])
        self.assertIn(shipped.returncode, (0, 1), shipped.stderr)
        self.assertEqual(shipped.stdout.replace(str(config), "X"),
                         defaults.stdout.replace(str(self.empty), "X"))

    def test_depends_is_what_shlibdeps_found_in_every_elf_file_modules_too(self):
        depends = control_fields(self.deb)["Depends"]
        named = {re.match(r"\s*([^ (|]+)", d).group(1) for d in depends.split(",")}
        # Each library that a packaged executable or module links comes from a package that
        # Depends names, as this machine resolves the library.
        needed = needed_packages([str(p) for p in elf_files(self.usr)])
        self.assertEqual({p: sorted(users) for p, users in needed.items() if p not in named},
                         {}, f"Depends: {depends}")
        # yaml-cpp is linked by the kubeconfig module alone, libcap-ng by the backends alone:
        # shlibdeps read the dlopen'ed modules, not just the executables.
        self.assertTrue({"libyaml-cpp0.7", "libcap-ng0", "libre2-9", "libssl3"} <= named, depends)
        # shlibdeps writes the minimal versions from the libraries' symbols files.
        self.assertRegex(depends, r"libc6 \(>= [0-9.]+\)")

    def test_the_dev_package_holds_the_sdk_at_the_same_version(self):
        fields = control_fields(self.dev)
        self.assertEqual(fields["Package"], "sandbox-host-dev")
        depends = [entry.strip() for entry in fields["Depends"].split(",")]
        self.assertIn(f"sandbox-host (= {Build.version})", depends)
        # Every Debian package that provides what the CMake packages find, as this machine's
        # dpkg says, so that a gateway's find_package(SandboxHost) works after installing
        # sandbox-host-dev alone.
        for provided in ("*/Boost-1.81.0/BoostConfig.cmake", "/usr/include/openssl/ssl.h",
                         "*/pkgconfig/libidn2.pc", "*/pkgconfig/re2.pc", "/usr/bin/pkg-config",
                         "*/cmake/prometheus-cpp/prometheus-cpp-config.cmake"):
            owner = subprocess.run(["dpkg", "-S", provided], capture_output=True, text=True,
                                   check=True).stdout.split(":", 1)[0]
            self.assertIn(owner, depends, provided)
        usr = self.roots["dev"] / Build.prefix.lstrip("/")
        for path in ("include/sandbox_host/abi.h", "include/sandbox_host/host/config.hpp",
                     f"{Build.libdir}/libsandbox_host_core.a",
                     f"{Build.libdir}/cmake/SandboxHost/SandboxHostConfig.cmake",
                     f"{Build.libdir}/cmake/SandboxHostSDK/SandboxHostSDKConfig.cmake",
                     "share/doc/sandbox-host-dev/copyright"):
            self.assertTrue((usr / path).is_file(), path)
        self.assertFalse((usr / "bin").exists())

    def test_shipped_elf_files_are_stripped_and_their_debug_info_is_in_dbgsym(self):
        debug = self.roots["dbgsym"] / "usr/lib/debug/.build-id"
        files = elf_files(self.usr)
        self.assertGreaterEqual(len(files), len(MODULES) + 3)
        for path in files:
            name = path.relative_to(self.root)
            self.assertNotIn(".debug_info", sections(path), name)
            bid = build_id(path)
            self.assertIsNotNone(bid, name)
            separate = debug / bid[:2] / f"{bid[2:]}.debug"
            self.assertTrue(separate.is_file(), f"{name}: no {separate}")
            self.assertIn(".debug_info", sections(separate), separate)
        self.assertEqual(control_fields(self.dbgsym)["Depends"],
                         f"sandbox-host (= {Build.version})")

    def test_the_unpacked_sandbox_host_finds_its_modules_and_broker_beside_it(self):
        host = str(self.usr / "bin/sandbox-host")
        listed = run([host, "modules", "--json", "--config", str(self.empty)])
        self.assertEqual(listed.returncode, 0, listed.stderr)
        files = re.findall(r'"file"\s*:\s*"([^"]+)"', listed.stdout)
        self.assertTrue(files, listed.stdout)
        for file in files:
            self.assertEqual(pathlib.Path(file).parent, self.module_dir, listed.stdout)
        # serve and ask are the broker's, which sandbox-host runs from the libexec directory.
        asked = run([host, "ask", "--help"])
        self.assertEqual(asked.returncode, 0, asked.stderr)
        self.assertIn("--spool", asked.stdout)
        launched = run([host, "run", "--config", str(self.empty), "--name", "demo", "--",
                        Build.demo_plugin], timeout=60)
        self.assertEqual(launched.returncode, 0, launched.stderr)
        self.assertRegex(launched.stdout, r"^1\|1\|unix\|")


if __name__ == "__main__":
    split = sys.argv.index("--") if "--" in sys.argv else len(sys.argv)
    args = sys.argv[1:split]
    if len(args) != 6:
        sys.exit(__doc__)
    Build.dir = pathlib.Path(args[0])
    Build.prefix, Build.libdir, Build.libexec, Build.version, Build.demo_plugin = args[1:]
    unittest.main(argv=[sys.argv[0]] + sys.argv[split + 1:])
