#!/usr/bin/env python3
"""scripts/check_module_boundaries.py: the tree itself passes, and a tree with each kind of
breach fails, naming the file, the include and where it leads: a module past the SDK (the
egress module under egress/ too), the host naming a module, the host reaching into the
built-in proxy."""
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

    def test_the_host_reaches_the_proxy_only_through_its_public_headers_where_composed(self):
        with tempfile.TemporaryDirectory() as scratch:
            root = pathlib.Path(scratch)
            write(root, "sdk/include/sandbox_host/module.hpp")
            write(root, "sdk/examples/hello/hello.cpp", "#include <sandbox_host/module.hpp>\n")
            write(root, "backends/common/include/sandbox_host/backends/shared.hpp")
            write(root, "plugins/ping/ping.cpp", "#include <sandbox_host/module.hpp>\n")
            write(root, "host/include/sandbox_host/host/egress.hpp")
            write(root, "egress/destination/include/sandbox_host/egress/destination/ip.hpp")
            write(root, "egress/proxy/include/sandbox_host/egress/proxy/service.hpp",
                  "#include <sandbox_host/egress/destination/ip.hpp>\n")
            write(root, "egress/proxy/src/sockets.hpp")
            write(root, "egress/proxy/src/service.cpp",
                  '#include <sandbox_host/egress/proxy/service.hpp>\n#include "sockets.hpp"\n'
                  "#include <sandbox_host/host/egress.hpp>\n")
            write(root, "egress/connect/connect.cpp", "#include <sandbox_host/module.hpp>\n")
            write(root, "host/src/cli/serve.cpp",
                  "#include <sandbox_host/egress/proxy/service.hpp>\n")
            write(root, "host/src/config/egress_config.cpp",
                  "#include <sandbox_host/egress/destination/ip.hpp>\n")
            clean = check(root)
            self.assertEqual(clean.returncode, 0, clean.stderr)
            # The core naming the proxy, a composer reaching its private header, and the
            # egress module beside it reaching past the SDK.
            write(root, "host/src/sandbox_pool/pool.cpp",
                  "#include <sandbox_host/egress/proxy/service.hpp>\n")
            write(root, "host/src/cli/egress.cpp",
                  '#include "../../../egress/proxy/src/sockets.hpp"\n')
            write(root, "egress/connect/route.cpp",
                  "#include <sandbox_host/egress/destination/ip.hpp>\n")
            result = check(root)
            self.assertEqual(result.returncode, 1, result.stderr)
            self.assertEqual(sorted(result.stderr.splitlines()), sorted([
                "module boundary: host/src/sandbox_pool/pool.cpp: includes "
                "<sandbox_host/egress/proxy/service.hpp> "
                "(egress/proxy/include/sandbox_host/egress/proxy/service.hpp): only what composes "
                "the proxy (host/src/cli, host/src/metrics, "
                "host/include/sandbox_host/host/metrics) includes it; the core knows it through "
                "egress.hpp",
                "module boundary: host/src/cli/egress.cpp: includes "
                "\"../../../egress/proxy/src/sockets.hpp\" (egress/proxy/src/sockets.hpp): the "
                "proxy's sources and private headers are its own",
                "module boundary: egress/connect/route.cpp: includes "
                "<sandbox_host/egress/destination/ip.hpp> "
                "(egress/destination/include/sandbox_host/egress/destination/ip.hpp), which is "
                "neither the SDK nor the module's own",
            ]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
