#!/usr/bin/env python3
"""scripts/check_module_boundaries.py: the tree itself passes, and a tree with each kind of
breach fails, naming the file, the include and where it leads."""
import pathlib
import subprocess
import sys
import tempfile
import unittest

SOURCE = pathlib.Path(__file__).resolve().parents[2]
CHECK = SOURCE / "scripts" / "check_module_boundaries.py"


def write(root, relative, text=""):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def check(root):
    return subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True,
                          text=True, timeout=120)


class ModuleBoundaries(unittest.TestCase):
    def test_this_tree_keeps_them(self):
        result = check(SOURCE)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_each_breach_is_named(self):
        with tempfile.TemporaryDirectory() as scratch:
            root = pathlib.Path(scratch)
            write(root, "sdk/include/sandbox_host/module.hpp")
            write(root, "sdk/examples/hello/hello.cpp", "#include <sandbox_host/module.hpp>\n")
            write(root, "host/include/sandbox_host/host/config.hpp")
            write(root, "host/src/cgroup/mounts.hpp")
            write(root, "backends/common/include/sandbox_host/backends/shared.hpp")
            write(root, "backends/good/good.cpp",
                  "#include <sandbox_host/backends/shared.hpp>\n#include \"good.hpp\"\n"
                  "#include <sandbox_host/module.hpp>\n#include <vector>\n")
            write(root, "backends/good/good.hpp")
            write(root, "backends/bad/bad.cpp", "#include <sandbox_host/host/config.hpp>\n")
            write(root, "plugins/cap/choice.hpp")
            write(root, "plugins/cap/driver.cpp", "  #  include <mounts.hpp>\n")
            write(root, "plugins/other/other.cpp", '#include "../cap/choice.hpp"\n')
            write(root, "host/src/cli/probe.cpp", "#include <choice.hpp>\n")
            result = check(root)
            self.assertEqual(result.returncode, 1, result.stderr)
            self.assertEqual(sorted(result.stderr.splitlines()), sorted([
                "module boundary: backends/bad/bad.cpp: includes <sandbox_host/host/config.hpp> "
                "(host/include/sandbox_host/host/config.hpp), which is neither the SDK nor the "
                "module's own",
                "module boundary: plugins/cap/driver.cpp: includes <mounts.hpp> "
                "(host/src/cgroup/mounts.hpp), which is neither the SDK nor the module's own",
                "module boundary: plugins/other/other.cpp: includes \"../cap/choice.hpp\" "
                "(plugins/cap/choice.hpp), which is neither the SDK nor the module's own",
                "module boundary: host/src/cli/probe.cpp: includes <choice.hpp> "
                "(plugins/cap/choice.hpp): the host names no module",
            ]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
