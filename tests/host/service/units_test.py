#!/usr/bin/env python3
"""deploy/systemd's units, as systemd reads and runs them.

Analysis: `systemd-analyze verify` of every unit, its ExecStart pointed at the build's
sandbox-host (verify checks that the binary exists); `systemd-analyze security --offline`
of each service, whose exposure must stay at or below the bound docs/operations.md states.

Running: a systemd 252 booted as pid 1 of a podman container (runc, the host's own root
overlaid, no network, its /proc unmasked and no seccomp profile of podman's, so that the
unit's own directives are the only ones in force), the build installed into it at the
paths the Debian package uses; then sandbox-host@nobody.service is started, a plugin is
launched through it as nobody, and its status, its watchdog (serve stopped with SIGSTOP:
systemd must restart it) and a restart are checked. Skipped, with the reason, where podman
cannot boot the container.

usage: units_test.py BUILD_DIR [unittest options]   exit 0: pass or skip; 1: a failure
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

SOURCE = pathlib.Path(__file__).resolve().parents[3]
UNITS = SOURCE / "deploy" / "systemd"
BUILD = pathlib.Path(sys.argv.pop(1)).resolve() if len(sys.argv) > 1 else None

# The exposure bounds docs/operations.md states ("systemd", "How exposed"): a unit that
# scores worse has lost a directive. The user unit's score counts every capability as held:
# offline, systemd-analyze takes a unit without User= for root's, and a user manager may
# not drop the bounding set, though its services hold no capability.
SYSTEM_EXPOSURE_BOUND = 3.3
USER_EXPOSURE_BOUND = 5.5

SYSTEM_UNITS = ["sandbox-host@.service"]
USER_UNITS = ["sandbox-host.service", "sandbox-host.socket"]


def run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, **kwargs)


class Analysis(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if shutil.which("systemd-analyze") is None:
            raise unittest.SkipTest("systemd-analyze is not installed")
        cls.scratch = tempfile.TemporaryDirectory()
        cls.dir = pathlib.Path(cls.scratch.name)
        # A user manager's specifiers (%t) need a runtime directory.
        cls.runtime = cls.dir / "runtime"
        cls.runtime.mkdir(mode=0o700)
        for name in SYSTEM_UNITS + USER_UNITS:
            text = (UNITS / name).read_text()
            text = text.replace("/usr/bin/sandbox-host", str(BUILD / "bin" / "sandbox-host"))
            # A template is verified as one of its instances.
            (cls.dir / name.replace("@.", "@gateway.")).write_text(text)

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def analyze(self, *args, user=False):
        env = dict(os.environ, XDG_RUNTIME_DIR=str(self.runtime))
        argv = ["systemd-analyze", *(["--user"] if user else []), *args]
        return run(argv, env=env, cwd=self.dir)

    def test_every_unit_verifies(self):
        self.assertTrue((BUILD / "bin" / "sandbox-host").exists(), BUILD)
        for name, user in [("sandbox-host@gateway.service", False),
                           ("sandbox-host.service", True), ("sandbox-host.socket", True)]:
            with self.subTest(unit=name):
                result = self.analyze("verify", "--man=no", "./" + name, user=user)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(result.stderr.strip(), "", "verify warns about " + name)

    def exposure(self, name, user):
        result = self.analyze("security", "--offline=yes", "./" + name, user=user)
        self.assertEqual(result.returncode, 0, result.stderr)
        found = re.search(r"Overall exposure level for \S+: (\d+\.\d)", result.stdout)
        self.assertIsNotNone(found, result.stdout)
        return float(found.group(1))

    def test_the_system_unit_is_no_more_exposed_than_its_bound(self):
        score = self.exposure("sandbox-host@gateway.service", user=False)
        print(f"systemd-analyze security: sandbox-host@.service {score}", file=sys.stderr)
        self.assertLessEqual(score, SYSTEM_EXPOSURE_BOUND)

    def test_the_user_unit_is_no_more_exposed_than_its_bound(self):
        score = self.exposure("sandbox-host.service", user=True)
        print(f"systemd-analyze security: sandbox-host.service {score}", file=sys.stderr)
        self.assertLessEqual(score, USER_EXPOSURE_BOUND)

    def test_each_directive_says_why(self):
        # Every directive of [Service] and [Socket] stands in a group of directives whose
        # first line has a comment right above it.
        for name in SYSTEM_UNITS + USER_UNITS:
            lines = (UNITS / name).read_text().splitlines()
            section = None
            for number, line in enumerate(lines):
                if line.startswith("["):
                    section = line
                    continue
                if section not in ("[Service]", "[Socket]") or not line or line.startswith("#"):
                    continue
                first = number
                while first > 0 and lines[first - 1] and not lines[first - 1].startswith("#"):
                    first -= 1
                with self.subTest(unit=name, line=line):
                    self.assertTrue(first > 0 and lines[first - 1].startswith("#"),
                                    f"{name}:{number + 1}: {line} has no reason above it")


CONTAINER = "sandbox-host-systemd-test-%d" % os.getpid()
INSTANCE = "sandbox-host@nobody.service"
LAUNCH_SOCKET = "/run/sandbox-host/nobody/launcher/launch.sock"


class UnderRealSystemd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise unittest.SkipTest("podman's containers need root here")
        if shutil.which("podman") is None or shutil.which("runc") is None:
            raise unittest.SkipTest("podman or runc is not installed")
        boot = run(["podman", "run", "-d", "--name", CONTAINER, "--systemd=always",
                    "--runtime", "runc", "--cgroup-manager", "cgroupfs", "--network", "none",
                    "--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096",
                    "--security-opt", "unmask=ALL", "--security-opt", "seccomp=unconfined",
                    # systemd builds each unit's mount namespace (ProtectSystem=, ...) only
                    # with CAP_SYS_ADMIN; without it, it leaves those directives out silently.
                    "--cap-add", "SYS_ADMIN",
                    # podman copies the host's /tmp and /run into its tmpfs otherwise, and
                    # fails on their sockets.
                    "--tmpfs", "/tmp:rw,notmpcopyup,mode=1777", "--tmpfs", "/run:rw,notmpcopyup",
                    "-v", f"{BUILD}:/build:ro", "-v", f"{UNITS}:/units:ro",
                    "--rootfs", "/:O", "/lib/systemd/systemd", "--unit=basic.target"])
        if boot.returncode != 0:
            raise unittest.SkipTest("podman cannot boot systemd here: " + boot.stderr.strip())
        cls.booted = True
        try:
            deadline = time.monotonic() + 60
            while cls.sh("systemctl is-system-running").stdout.strip() not in ("running",
                                                                              "degraded"):
                if time.monotonic() > deadline:
                    raise RuntimeError("systemd did not finish booting: " +
                                       cls.sh("systemctl is-system-running").stdout)
                time.sleep(0.5)
            cls.install()
        except BaseException:
            # unittest skips tearDownClass when setUpClass fails: no container is left behind.
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "booted", False):
            run(["podman", "rm", "-f", "-t", "0", CONTAINER])

    @classmethod
    def sh(cls, script):
        return run(["podman", "exec", CONTAINER, "sh", "-c", script])

    @classmethod
    def install(cls):
        # Where the Debian package puts them: executables, the broker, modules, the units.
        script = """
            set -e
            install -m 0755 /build/bin/sandbox-host /build/bin/sandbox-host-launch /usr/bin/
            install -m 0755 /build/bin/demo-plugin /usr/local/bin/
            mkdir -p /usr/libexec/sandbox-host /usr/lib/sandbox-host/modules
            install -m 0755 /build/libexec/sandbox-host/sandbox-host-broker /usr/libexec/sandbox-host/
            install -m 0644 /build/lib/sandbox-host/modules/*.so /usr/lib/sandbox-host/modules/
            install -m 0644 /units/sandbox-host@.service /usr/lib/systemd/system/
            install -m 0644 /units/sandbox-host.service /units/sandbox-host.socket /usr/lib/systemd/user/
            mkdir -p /etc/sandbox-host
            printf '[broker]\\nstate_dir = "/var/lib/sandbox-host/nobody"\\n[launcher]\\nsocket = "%s"\\n' \\
                {socket} > /etc/sandbox-host/nobody.toml
            # The hostile plugin of the notify test runs under Landlock, as its config says.
            printf '[plugins.hostile]\\nsandbox = "landlock"\\n' >> /etc/sandbox-host/nobody.toml
            # The watchdog test waits for the interval to run out: a short one.
            mkdir -p /etc/systemd/system/sandbox-host@nobody.service.d
            printf '[Service]\\nWatchdogSec=4s\\n' \\
                > /etc/systemd/system/sandbox-host@nobody.service.d/watchdog.conf
            systemctl daemon-reload
        """.format(socket=LAUNCH_SOCKET)
        result = cls.sh(script)
        if result.returncode != 0:
            raise RuntimeError("install: " + result.stdout + result.stderr)

    def show(self, *properties):
        result = self.sh(f"systemctl show {INSTANCE} " +
                         " ".join("-p " + p for p in properties))
        return dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)

    def journal(self):
        return self.sh(f"journalctl -u {INSTANCE} --no-pager -n 60").stdout

    def launch_plugin(self, *argv):
        return self.sh("runuser -u nobody -- /usr/bin/sandbox-host-launch --via "
                       f"{LAUNCH_SOCKET} -- " + " ".join(argv))

    def launch_demo(self):
        return self.launch_plugin("/usr/local/bin/demo-plugin")

    def start(self):
        result = self.sh(f"systemctl start {INSTANCE}")
        self.assertEqual(result.returncode, 0, result.stderr + self.journal())

    def test_1_it_starts_ready_and_launches_a_plugin(self):
        self.start()
        state = self.show("ActiveState", "SubState", "StatusText", "Type", "NotifyAccess")
        self.assertEqual(state["ActiveState"], "active", self.journal())
        self.assertTrue(state["StatusText"].startswith("serving: broker on "), state)
        self.assertIn("launcher on " + LAUNCH_SOCKET, state["StatusText"])
        launched = self.launch_demo()
        self.assertEqual(launched.returncode, 0, launched.stderr + self.journal())
        self.assertIn("|unix|", launched.stdout)
        # The unit's filters (RestrictNamespaces=, SystemCallFilter=, ...) leave the
        # namespaces backend whole: it is probe's choice, and it sets up.
        self.assertIn("launch /usr/local/bin/demo-plugin under namespaces", self.journal())
        self.assertNotIn("pool-prepare", self.journal())
        # Whole, not degraded: its own host name (sethostname passes the unit's filter), a
        # fresh /proc of its own pid namespace, and the unit's filters under its own.
        self.assertEqual(self.launch_plugin("/bin/hostname").stdout.strip(), "sandbox")
        self.assertEqual(self.launch_plugin("/bin/ls", "/proc/1/comm").returncode, 0)
        status = self.launch_plugin("/bin/cat", "/proc/self/status").stdout
        filters = re.search(r"Seccomp_filters:\s+(\d+)", status)
        self.assertIsNotNone(filters, status)
        self.assertGreater(int(filters.group(1)), 1, "the unit's filters are not inherited")

    def test_2_a_stalled_serve_is_restarted_by_its_watchdog(self):
        self.start()
        before = self.show("MainPID", "NRestarts")
        self.sh(f"kill -STOP {before['MainPID']}")
        # Past TimeoutStopSec=, should a process of the unit outlive serve's abort.
        deadline = time.monotonic() + 60
        while True:
            now = self.show("MainPID", "NRestarts", "ActiveState")
            if now["NRestarts"] != before["NRestarts"] and now["ActiveState"] == "active":
                break
            self.assertLess(time.monotonic(), deadline, "not restarted: " + str(now) +
                            self.journal())
            time.sleep(0.5)
        self.assertNotEqual(now["MainPID"], before["MainPID"])
        self.assertIn("Watchdog timeout", self.journal())
        launched = self.launch_demo()
        self.assertEqual(launched.returncode, 0, launched.stderr + self.journal())

    def test_3_a_restart_serves_again(self):
        self.start()
        before = self.show("MainPID")
        restart = self.sh(f"systemctl restart {INSTANCE}")
        self.assertEqual(restart.returncode, 0, restart.stderr + self.journal())
        self.assertNotEqual(self.show("MainPID")["MainPID"], before["MainPID"])
        self.assertIn("stopped by signal 15", self.journal())
        launched = self.launch_demo()
        self.assertEqual(launched.returncode, 0, launched.stderr + self.journal())

    def test_4_a_plugin_that_writes_to_the_notify_socket_is_not_believed(self):
        self.start()
        before = self.show("MainPID", "StatusText")
        # Landlock leaves connect(2) and sendto(2) by path to unix sockets unrestricted: the
        # plugin reaches systemd's notify socket, which systemd makes writable by all.
        hostile = self.sh(
            "runuser -u nobody -- /usr/bin/sandbox-host-launch --via " + LAUNCH_SOCKET +
            " --name hostile -- /usr/bin/python3 -c \"import socket; "
            "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); "
            "s.sendto(b'STATUS=hijacked\\nSTOPPING=1\\nWATCHDOG=trigger', '/run/systemd/notify'); "
            "print('sent')\"")
        self.assertEqual(hostile.returncode, 0, hostile.stderr + self.journal())
        self.assertIn("sent", hostile.stdout)
        time.sleep(1)
        after = self.show("MainPID", "StatusText", "ActiveState", "SubState")
        self.assertEqual(after["StatusText"], before["StatusText"])
        self.assertEqual(after["MainPID"], before["MainPID"])
        self.assertEqual((after["ActiveState"], after["SubState"]), ("active", "running"))
        self.assertIn("reception only permitted for main PID", self.journal())

    def test_5_the_user_units_socket_starts_serve_on_the_first_launch(self):
        user = "runuser -u gateway -- env XDG_RUNTIME_DIR=/run/user/4242 "
        socket = "/run/user/4242/sandbox-host/launcher/launch.sock"
        setup = self.sh(
            "set -e; useradd -m -u 4242 gateway; systemctl start user@4242.service; "
            "mkdir -p /home/gateway/.config/sandbox-host; "
            f"printf '[launcher]\\nsocket = \"{socket}\"\\n' "
            "> /home/gateway/.config/sandbox-host/config.toml; chown -R gateway: /home/gateway; "
            + user + "systemctl --user start sandbox-host.socket")
        self.assertEqual(setup.returncode, 0, setup.stdout + setup.stderr)
        show = user + "systemctl --user show sandbox-host.service -p ActiveState -p StatusText"
        self.assertIn("ActiveState=inactive", self.sh(show).stdout)
        # systemd's socket holds the launch service's invariant before serve ever runs.
        modes = self.sh(f"stat -c '%a %U' {socket} $(dirname {socket}) "
                        f"$(dirname $(dirname {socket}))").stdout.split("\n")
        self.assertEqual(modes[:3], ["600 gateway", "700 gateway", "700 gateway"])
        for attempt in ("first launch", "after a restart of serve"):
            with self.subTest(attempt):
                launched = self.sh(f"timeout 60 {user} /usr/bin/sandbox-host-launch --via "
                                   f"{socket} -- /bin/hostname")
                self.assertEqual(launched.returncode, 0,
                                 launched.stderr + self.sh("journalctl -n 30").stdout)
                self.assertEqual(launched.stdout.strip(), "sandbox")
                state = self.sh(show).stdout
                self.assertIn("ActiveState=active", state)
                self.assertIn("StatusText=serving: broker on /home/gateway/.local/state/"
                              f"sandbox-host/spool, launcher on {socket}", state)
                self.sh(user + "systemctl --user restart sandbox-host.service")


if __name__ == "__main__":
    unittest.main()
