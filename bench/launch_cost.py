#!/usr/bin/python3
"""What a launch costs (issue 44), against bubblewrap, as an unprivileged user, in ONE run:
bursts of launches started at once, the CPU of everything a launch costs, the memory the host
keeps per idle plugin, and the launch service's latency while N of its plugins run; the
variants take turns in an order that rotates from round to round (bench/interleaved.py's
way), so that the machine's drift falls on all alike. Rewrites the launch-cost section of
docs/benchmarks.md.

Usage, from the repository root (as root: it drops to --user, default 65534, nobody):
    /usr/bin/python3 bench/launch_cost.py [--build build] [--rounds 10] [--quick]

Variants: bubblewrap (bench_common.bwrap_argv()); the one-shot `sandbox-host run --config C
--backend namespaces --network none -- BINARY`; and `sandbox-host-launch --via SOCKET --
BINARY` through a running `sandbox-host serve` whose [launcher] has depth 1, 4 (and 16).

1. Bursts: 1, 4, 16 and 64 launches of /bin/true started at once; wall time from the first
   start to the last exit.
2. CPU per launch: user + sys of everything the launch cost. bubblewrap and `run`: the
   rusage of the processes this script waited for, and of the orphans it reaped as their
   subreaper (a sandbox's pid 1 that nobody in the caller's tree waits for), counted apart.
   The service: the client's rusage plus the service's utime + stime + cutime + cstime
   (/proc/<pid>/stat) from idle to idle again (its pool refilled), less its idle rate.
3. Memory per idle plugin: PSS (/proc/<pid>/smaps_rollup) of the host's processes, plugins
   (/bin/sleep 3600) excluded, at 1, 100 and 1000 idle plugins (or the most that worked).
4. The service's latency, paced, while N of its plugins sleep, beside paced bubblewrap and
   the one-shot `run`; and back-to-back launches at N = 0.

As root the script stages the build (bench_common.stage_build) and runs itself again as the
user through setpriv (`--worker`), which measures and writes JSON; the root part renders.
"""

import argparse
import json
import os
import resource
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import (BACKEND_ENV, DOCS, ForeignLoad, PLUGIN, become_subreaper,  # noqa: E402
                          bwrap_argv, die, display_path, launch_env, load_average, machine,
                          machine_lines, percentile, runner, source_revision, tool_versions,
                          user_dir, verify_sandbox, wait_for_idle, write_section)
from launcher_report import CLIENT, stage  # noqa: E402

BEGIN = "<!-- launch-cost:begin -->"
END = "<!-- launch-cost:end -->"
PYTHON = "/usr/bin/python3"
SLEEP = ["/bin/sleep", "3600"]
MAX_LAUNCHES = 4096  # [launcher] max_launches' upper bound: the service's own is 256
TICK = os.sysconf("SC_CLK_TCK")
ZOMBIE = " <zombie>"
GOALS = {"burst16": 1.0, "oneshot_paced": 1.0, "service_b2b": 0.5, "service_paced": 0.5,
         "pss": 1.0, "cpu": 1.0}


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def bounded(seconds):
    """Arms SIGALRM: a blocking wait that takes longer raises Timeout."""
    signal.setitimer(signal.ITIMER_REAL, seconds)


def unbounded():
    signal.setitimer(signal.ITIMER_REAL, 0)


def log(message):
    print(f"launch_cost: {message}", file=sys.stderr, flush=True)


# ---- /proc -----------------------------------------------------------------------------------

def stat_fields(pid):
    """(comm, fields after comm) of /proc/<pid>/stat, or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    left, right = text.find("("), text.rfind(")")
    return text[left + 1:right], text[right + 2:].split()


def process_table():
    """{pid: (ppid, comm, cpu seconds of the process itself and its reaped children)}; a
    zombie's comm ends in ZOMBIE."""
    table = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            s = stat_fields(entry.name)
            if s:
                comm, f = s
                table[int(entry.name)] = (int(f[1]), comm + (ZOMBIE if f[0] == "Z" else ""),
                                          sum(int(x) for x in f[11:15]) / TICK)
    return table


def descendants(table, root):
    children = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def own_cpu(pid):
    """utime + stime + cutime + cstime of pid (fields 14-17), in seconds."""
    s = stat_fields(pid)
    return sum(int(x) for x in s[1][11:15]) / TICK if s else 0.0


PSS_FDS = None  # (read, write): the root parent reads smaps_rollup for the worker


def pss_many(pids):
    """{pid: PSS kB} for pids, None where unreadable. The sandboxes' inits are not dumpable
    and were exec'd in the initial user namespace, so their user cannot read their
    smaps_rollup; when the script runs as root, its root part reads them for the worker."""
    if PSS_FDS is None:
        return {p: pss_kb(p) for p in pids}
    os.write(PSS_FDS[1], (json.dumps(list(pids)) + "\n").encode())
    line = b""
    while not line.endswith(b"\n"):
        chunk = os.read(PSS_FDS[0], 1 << 16)
        if not chunk:
            die("the root part stopped answering")
        line += chunk
    return {int(k): v for k, v in json.loads(line).items()}


def serve_pss(request_fd, answer_fd, process, timeout):
    """The root part's loop: answers the worker's PSS requests until it exits."""
    import select
    deadline = time.monotonic() + timeout
    buffer = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            process.kill()
            die("the worker ran for longer than its bound")
        ready, _, _ = select.select([request_fd], [], [], min(left, 5))
        if not ready:
            continue
        chunk = os.read(request_fd, 1 << 16)
        if not chunk:
            return
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            answer = {p: pss_kb(p) for p in json.loads(line)}
            os.write(answer_fd, (json.dumps(answer) + "\n").encode())


def pss_kb(pid):
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def in_own_pid_namespace(pid):
    """Whether pid lives in a pid namespace below this one (NSpid has more than one id)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return len(line.split()) > 2
    except OSError:
        pass
    return False


def threads_of(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Threads:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def kernel_threads_cpu():
    """CPU seconds of the kernel's threads (kthreadd's children: kworkers tearing down the
    sandboxes' network namespaces, RCU), which work for the launches without being any
    process's child."""
    table = process_table()
    return sum(cpu for pid, (ppid, _, cpu) in table.items() if ppid == 2 or pid == 2)


def mem_available_kb():
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1])
    return 0


# ---- the launch service ----------------------------------------------------------------------

def service_config(work, depth):
    return (f'[broker]\nstate_dir = "{work}/state"\n\n'
            f'[launcher]\nsocket = "{work}/launcher/launch.sock"\ndepth = {depth}\n'
            f'max_launches = {MAX_LAUNCHES}\n\n'
            f'[audit]\npath = "{work}/audit.jsonl"\nformat = "json"\n')


def oneshot_config(work):
    return f'[audit]\npath = "{work}/audit.jsonl"\nformat = "json"\n'


class Service:
    """`sandbox-host serve` with a [launcher] of the given depth, started by this (worker)
    process, so that everything it does is its descendants'."""

    def __init__(self, exe, env, work, depth):
        self.depth, self.work = depth, work
        work.mkdir(parents=True, exist_ok=True)
        (work / "config.toml").write_text(service_config(work, depth))
        self.socket = work / "launcher" / "launch.sock"
        self.err = open(work / "serve.err", "w")
        self.process = subprocess.Popen([str(exe), "serve", "--config", str(work / "config.toml")],
                                        env=env, cwd=str(work), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=self.err)
        self.pid = self.process.pid
        deadline = time.monotonic() + 30
        while not self.answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                die(f"serve (depth {depth}) did not start: {(work / 'serve.err').read_text()}")
            time.sleep(0.05)
        self.idle_rate = 0.0

    def answers(self):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            try:
                s.connect(str(self.socket))
                return True
            except OSError:
                return False

    def cpu(self):
        """What a launch costs the service: its own utime + stime + cutime + cstime, and the
        same of its live descendants but the sandboxes' inits (their pid 1), which are not
        the service's to wait for: when an init ends, this script reaps it as its subreaper
        and counts its whole life, set-up included, among the orphans; counted here too, a
        prepared sandbox's set-up would count twice."""
        table = process_table()
        return own_cpu(self.pid) + sum(table[p][2] for p in descendants(table, self.pid)
                                       if p in table and not in_own_pid_namespace(p))

    def tree_cpu(self):
        """The service's CPU with its live descendants' (a sandbox being prepared)."""
        table = process_table()
        return own_cpu(self.pid) + sum(table[p][2] for p in descendants(table, self.pid)
                                       if p in table)

    def wait_idle(self, quiet=0.3, limit=20.0):
        """Until the service and its descendants used no CPU for `quiet` seconds (the pool
        refilled); bounded by `limit`. Returns the seconds waited."""
        start = time.monotonic()
        last, since = self.tree_cpu(), time.monotonic()
        while time.monotonic() - start < limit:
            time.sleep(0.1)
            now = self.tree_cpu()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                break
        return time.monotonic() - start

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.err.close()


# ---- launching and waiting -------------------------------------------------------------------

class Launcher:
    """Starts commands with posix_spawn (stdin and stdout /dev/null, stderr to a log) and
    collects them with wait4, telling apart what it started and the orphans it reaps as
    their subreaper."""

    def __init__(self, services, log_dir):
        self.null = os.open(os.devnull, os.O_RDWR)
        self.services = {s.pid: s for s in services}
        self.log_dir = log_dir
        self.orphans = 0
        self.orphan_cpu = 0.0
        self.keep = set()  # the idle plugins' launches: children that stay
        self.lost = []  # of those, the ones reaped while they should have stayed

    def spawn(self, argv, env, err=None, group=False):
        fd = self.null if err is None else err
        actions = [(os.POSIX_SPAWN_DUP2, self.null, 0), (os.POSIX_SPAWN_DUP2, self.null, 1),
                   (os.POSIX_SPAWN_DUP2, fd, 2)]
        if group:
            return os.posix_spawn(argv[0], argv, env, setpgroup=0, file_actions=actions)
        return os.posix_spawn(argv[0], argv, env, file_actions=actions)

    def _reaped(self, pid, status, usage, mine):
        if pid in self.services:
            die(f"serve (depth {self.services[pid].depth}) exited, wait status {status}")
        if pid in mine:
            return True
        if pid in self.keep:
            self.keep.discard(pid)
            self.lost.append((pid, status))
            return False
        self.orphans += 1
        self.orphan_cpu += usage.ru_utime + usage.ru_stime
        return False

    def collect(self, pids, timeout=120.0):
        """Waits for every pid in pids (blocking, bounded); returns (time of the last exit,
        their statuses, their CPU seconds with what they waited for)."""
        mine = set(pids)
        statuses, cpu, last = {}, 0.0, None
        bounded(timeout)
        try:
            while mine:
                pid, status, usage = os.wait4(-1, 0)
                if self._reaped(pid, status, usage, mine):
                    last = time.perf_counter()
                    mine.discard(pid)
                    statuses[pid] = status
                    cpu += usage.ru_utime + usage.ru_stime
        except Timeout:
            die(f"{len(mine)} launches still ran {timeout:.0f} s after they started")
        finally:
            unbounded()
        return last, statuses, cpu

    def reap_rest(self, timeout=30.0):
        """Reaps until no child but the services is left (the orphans of the last launches,
        which exit just after the processes that were waited for)."""
        deadline = time.monotonic() + timeout
        while True:
            while True:
                try:
                    pid, status, usage = os.wait4(-1, os.WNOHANG)
                except ChildProcessError:
                    return
                if pid == 0:
                    break
                self._reaped(pid, status, usage, ())
            table = process_table()
            left = [p for p, (pp, _, _) in table.items()
                    if pp == os.getpid() and p not in self.services and p not in self.keep]
            if not left:
                return
            if time.monotonic() > deadline:
                die(f"children {left[:10]} still run {timeout:.0f} s after the launches ended")
            time.sleep(0.01)

    def once(self, argv, env, timeout=60.0):
        """One launch, timed from its spawn to its exit (ms); dies unless it exits 0."""
        start = time.perf_counter()
        pid = self.spawn(argv, env)
        end, statuses, _ = self.collect([pid], timeout)
        if statuses[pid] != 0:
            die(f"`{shlex.join(argv)}` exited, wait status {statuses[pid]}")
        return (end - start) * 1e3


# ---- 1 and 2: bursts, with the CPU of each ---------------------------------------------------

def burst(launcher, argv, env, size, service):
    """size launches at once: (wall ms from the first start to the last exit, CPU ms per
    launch: the waited-for processes', the orphans', the service's)."""
    if service:
        service.wait_idle()
    launcher.reap_rest()
    orphan_cpu0 = launcher.orphan_cpu
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    svc0, t_svc0 = (service.cpu(), time.monotonic()) if service else (0.0, 0.0)
    start = time.perf_counter()
    pids = [launcher.spawn(argv, env) for _ in range(size)]
    end, statuses, cpu = launcher.collect(pids)
    bad = [s for s in statuses.values() if s != 0]
    if bad:
        die(f"`{shlex.join(argv)}` in a burst of {size}: {len(bad)} exited non-zero ({bad[0]})")
    svc = 0.0
    if service:
        service.wait_idle()
        svc = service.cpu() - svc0 - service.idle_rate * (time.monotonic() - t_svc0)
    launcher.reap_rest()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    children = (ru1.ru_utime - ru0.ru_utime + ru1.ru_stime - ru0.ru_stime) * 1e3 / size
    return {"wall_ms": (end - start) * 1e3, "waited_ms": cpu * 1e3 / size,
            "children_ms": children,
            "orphan_ms": (launcher.orphan_cpu - orphan_cpu0) * 1e3 / size,
            "service_ms": svc * 1e3 / size}


def measure_bursts(launcher, variants, env, sizes, rounds, pause):
    out = {name: {str(k): [] for k in sizes} for name, _, _ in variants}
    for r in range(rounds):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        for size in sizes:
            for name, argv, service in order:
                time.sleep(pause)
                out[name][str(size)].append(burst(launcher, argv, env, size, service))
        log(f"bursts: round {r + 1} of {rounds} done")
    return out


# ---- 3 and 4: idle plugins, and launches while they run --------------------------------------

class Idle:
    """N idle plugins of one variant, started in batches, each launch in its own process
    group."""

    def __init__(self, launcher, name, argv, env, service, log_path):
        self.launcher, self.name, self.argv, self.env = launcher, name, argv, env
        self.service = service
        self.started = []
        self.log_path = log_path
        self.err = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.failure = None

    def plugins(self, table):
        root = self.service.pid if self.service else os.getpid()
        return [p for p in descendants(table, root) if table[p][1] == "sleep"]

    def exited(self):
        """Launches that ended while they should hold their plugin."""
        gone = []
        for pid in self.started:
            try:
                got, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                got, status = pid, -1
            if got:
                gone.append((pid, status))
                self.launcher.keep.discard(pid)
        return gone

    def grow(self, target, batch=25, timeout=120.0):
        """Starts launches until target plugins sleep; stops at the first failure (kept in
        self.failure). Returns how many plugins run."""
        while len(self.started) < target and self.failure is None:
            n = min(batch, target - len(self.started))
            for _ in range(n):
                pid = self.launcher.spawn(self.argv, self.env, self.err, group=True)
                self.started.append(pid)
                self.launcher.keep.add(pid)
            want = len(self.started)
            deadline = time.monotonic() + timeout
            while True:
                table = process_table()
                have = len(self.plugins(table))
                gone = self.exited()
                if gone:
                    for pid, _ in gone:
                        self.started.remove(pid)
                    self.failure = self.describe(gone, have)
                    break
                if have >= want:
                    break
                if time.monotonic() > deadline:
                    self.failure = (f"{want - have} of {want} launches had no plugin after "
                                    f"{timeout:.0f} s")
                    break
                time.sleep(0.2)
        time.sleep(0.5)
        return len(self.plugins(process_table()))

    def describe(self, gone, have):
        try:
            lines = [line for line in Path(self.log_path).read_text().splitlines() if line.strip()]
        except OSError:
            lines = []
        status = gone[0][1]
        code = os.waitstatus_to_exitcode(status) if status >= 0 else status
        return (f"launch {have + 1} exited with {code} while {have} plugins ran"
                + (f": {lines[-1].strip()}" if lines else ""))

    def memory(self):
        """PSS of the host's processes (everything in this variant's tree but the plugins),
        by command name; and the plugins' PSS for comparison."""
        table = process_table()
        if self.service:
            host = [self.service.pid] + descendants(table, self.service.pid)
            clients = [p for p in self.started if p in table]
            client_tree = clients + [d for c in clients for d in descendants(table, c)]
        else:
            services = set()
            for pid in self.launcher.services:
                services |= {pid, *descendants(table, pid)}
            host = [p for p in descendants(table, os.getpid()) if p not in services]
            client_tree = []
        plugins = [p for p in host if table[p][1] == "sleep"]
        zombies = [p for p in host + client_tree if table[p][1].endswith(ZOMBIE)]
        host = [p for p in host if table[p][1] != "sleep" and p not in zombies]
        client_tree = [p for p in client_tree if p not in zombies]
        by_comm, unread = {}, 0

        pss = pss_many(host + client_tree + plugins)

        def add(pids, role):
            nonlocal unread
            total = 0
            for p in pids:
                kb = pss[p]
                if kb is None:
                    unread += 1
                key = (f"{role}{table[p][1]}"
                       + (" (pid 1 of a sandbox)" if in_own_pid_namespace(p) else "")
                       + (" (unreadable)" if kb is None else ""))
                count, sum_kb = by_comm.get(key, (0, 0))
                by_comm[key] = (count + 1, sum_kb + (kb or 0))
                total += kb or 0
            return total

        host_kb = add(host, "")
        client_kb = add(client_tree, "client: ")
        plugin_kb = sum(pss[p] or 0 for p in plugins)
        threads = threads_of(self.service.pid) if self.service else None
        return {"plugins": len(plugins), "host_kb": host_kb, "host_procs": len(host),
                "zombies": len(zombies),
                "client_kb": client_kb, "client_procs": len(client_tree),
                "plugin_kb": plugin_kb, "by_comm": by_comm, "unread": unread,
                "service_threads": threads, "mem_available_kb": mem_available_kb()}

    def idle_cpu(self, seconds):
        """CPU of the host's processes (this variant's, the plugins excluded) while the
        plugins sleep, in ms per second: the service's utime + stime + cutime + cstime with its
        live descendants', or the same of the one-shot or bubblewrap processes."""
        def total():
            table = process_table()
            if self.service:
                pids = [self.service.pid] + descendants(table, self.service.pid)
            else:
                services = set()
                for pid in self.launcher.services:
                    services |= {pid, *descendants(table, pid)}
                pids = [p for p in descendants(table, os.getpid()) if p not in services]
            return sum(table[p][2] for p in pids if table[p][1] != "sleep")
        before = total()
        time.sleep(seconds)
        return (total() - before) * 1e3 / seconds

    def wait_pool(self, limit=30.0):
        """Until the service's processes stop changing in number for a second (its pool
        refilled; its CPU never stops while plugins run: the launches' watches count)."""
        start = time.monotonic()
        last, since = None, start
        while time.monotonic() - start < limit:
            table = process_table()
            now = len(descendants(table, self.service.pid))
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= 1.0:
                break
            time.sleep(0.1)
        return time.monotonic() - start

    def stop(self, timeout=120.0):
        """Kills every launch's process group, then the plugins and anything else left in
        the variant's tree, and waits (bounded) until none is left."""
        for pid in self.started:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + timeout
        while True:
            table = process_table()
            root = self.service.pid if self.service else os.getpid()
            left = [p for p in descendants(table, root)
                    if p not in self.launcher.services and
                    (not self.service or table[p][1] == "sleep")]
            if not self.service:
                services = set()
                for s in self.launcher.services:
                    services |= {s, *descendants(table, s)}
                left = [p for p in left if p not in services]
            for p in left:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            while True:
                try:
                    pid, status, usage = os.wait4(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                if pid in self.started:
                    self.started.remove(pid)
                    self.launcher.keep.discard(pid)
                else:
                    self.launcher._reaped(pid, status, usage, ())
            if not left and not self.started:
                break
            if time.monotonic() > deadline:
                die(f"{self.name}: {len(left)} processes still run {timeout:.0f} s after the kill")
            time.sleep(0.1)
        os.close(self.err)
        if self.service:
            self.service.wait_idle(limit=60)


def paced(launcher, variants, env, rounds, pause, services_idle=()):
    """Each round launches every variant once, in a rotating order, `pause` s before each."""
    out = {name: [] for name, _ in variants}
    for r in range(rounds):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        for name, argv in order:
            time.sleep(pause)
            out[name].append(launcher.once(argv, env))
        launcher.reap_rest()
    return out


def back_to_back(launcher, variants, env, rounds, series, pause, services):
    """Each round: for every variant in a rotating order, `series` launches one after the
    other with no pause (each timed), after the services are idle and `pause` s."""
    out = {name: [] for name, _ in variants}
    for r in range(rounds):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        for name, argv in order:
            for s in services:
                s.wait_idle()
            time.sleep(pause)
            out[name] += [launcher.once(argv, env) for _ in range(series)]
            launcher.reap_rest()
    return out


def ladder(launcher, name, argv, env, service, counts, latency, log_dir, limit_note,
           idle_seconds):
    """Idle plugins of one variant at each count; for the service, the latency at each count
    of `latency` (a function of the count, or None)."""
    idle = Idle(launcher, name, argv, env, service, log_dir / f"idle-{name}.err")
    results = []
    avail0 = mem_available_kb()
    try:
        if service:
            service.wait_idle()
            results.append({"target": 0, **idle.memory(),
                            "idle_cpu_ms_s": idle.idle_cpu(idle_seconds)})
            if latency:
                results[-1]["latency"] = latency(0)
        for target in counts:
            have_before = len(idle.started)
            if have_before >= 50 and idle.failure is None:
                # Projected memory of the next step, from what the ones so far took.
                used = max(0, avail0 - mem_available_kb()) / have_before
                need = used * (target - have_before)
                if need > 0.7 * mem_available_kb():
                    fit = have_before + int(0.7 * mem_available_kb() / max(used, 1))
                    idle.failure = (f"memory: {used / 1024:.1f} MiB of MemAvailable per plugin, "
                                    f"{target} would leave less than 30%; stopped at {fit}")
                    target = fit
            t0 = time.monotonic()
            have = idle.grow(target)
            if service:
                idle.wait_pool()
            row = {"target": target, "start_s": time.monotonic() - t0, **idle.memory(),
                   "idle_cpu_ms_s": idle.idle_cpu(idle_seconds),
                   "mem_drop_kb": avail0 - mem_available_kb()}
            if idle.failure:
                row["failure"] = idle.failure
            log(f"{name}: {have} idle plugins, host PSS {row['host_kb']} kB"
                + (f" ({idle.failure})" if idle.failure else ""))
            if latency and have:
                row["latency"] = latency(have)
            results.append(row)
            if idle.failure:
                limit_note[name] = idle.failure
                break
    finally:
        t0 = time.monotonic()
        idle.stop()
        log(f"{name}: cleaned up in {time.monotonic() - t0:.1f} s")
    return results


# ---- the worker (as the unprivileged user) ---------------------------------------------------

def worker(args):
    global PSS_FDS
    if args.pss_fds:
        PSS_FDS = tuple(int(x) for x in args.pss_fds.split(","))
    signal.signal(signal.SIGALRM, _alarm)
    become_subreaper()
    stage_dir = Path(args.stage)
    exe = stage_dir / "bin" / "sandbox-host"
    client = stage_dir / "bin" / CLIENT
    out = Path(args.worker)
    work = out.parent
    env = launch_env(work)
    quick = args.quick
    depths = (1, 4) if quick else (1, 4, 16)
    sizes = (1, 4, 16) if quick else (1, 4, 16, 64)
    counts = [int(c) for c in args.idle_counts.split(",")]
    services = [Service(exe, env, work / f"depth{d}", d) for d in depths]
    svc = {s.depth: s for s in services}
    launcher = Launcher(services, work)
    result = {"depths": depths, "sizes": sizes, "counts": counts, "uid": os.getuid(),
              "limits": {"nproc": resource.getrlimit(resource.RLIMIT_NPROC),
                         "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)}}
    try:
        (work / "oneshot").mkdir()
        (work / "oneshot" / "config.toml").write_text(oneshot_config(work / "oneshot"))
        oneshot_cmd = [str(exe), "run", "--config", str(work / "oneshot" / "config.toml"),
                       "--backend", "namespaces", "--network", "none", "--"]
        bwrap = bwrap_argv()
        bwrap_cmd = [shutil.which(bwrap[0]) or die("bwrap is not installed")] + bwrap[1:-1]
        cwd = str(work)
        os.chdir(cwd)
        # Checked before timing: every path launches a confined /bin/true.
        lines = verify_sandbox([], exe, env, cwd, oneshot_cmd[2:-1])
        for s in services:
            if verify_sandbox([], exe, env, cwd, ["--via", str(s.socket)], [str(client)]) != lines:
                die(f"depth {s.depth}: the sandbox differs from the one-shot run's")
        result["checks"] = lines
        launcher.reap_rest()
        for s in services:
            s.wait_idle()
        # The services' CPU while idle (max_idle renewals, the loops' turns), taken off the
        # per-launch figures.
        c0 = {s.depth: s.cpu() for s in services}
        idle_window = 3 if quick else 30  # the pools' max_idle: renewals included
        time.sleep(idle_window)
        for s in services:
            s.idle_rate = (s.cpu() - c0[s.depth]) / idle_window
        result["idle_rate"] = {s.depth: s.idle_rate for s in services}

        def svc_cmd(depth):
            return [str(client), "--via", str(svc[depth].socket), "--"]

        variants = [("bwrap", bwrap_cmd + [PLUGIN], None),
                    ("oneshot", oneshot_cmd + [PLUGIN], None)]
        variants += [(f"svc-d{d}", svc_cmd(d) + [PLUGIN], svc[d]) for d in depths]
        result["commands"] = {name: argv for name, argv, _ in variants}
        # Warm-up, untimed: caches and the pools' first renewals.
        for name, argv, s in variants:
            for _ in range(3):
                time.sleep(0.1)
                launcher.once(argv, env)
        launcher.reap_rest()
        t0 = time.monotonic()
        result["bursts"] = measure_bursts(launcher, variants, env, sizes, args.rounds,
                                          args.pause_ms / 1000)
        result["bursts_s"] = time.monotonic() - t0
        result["orphans_after_bursts"] = launcher.orphans

        # Back-to-back and paced, nothing idle.
        b2b_variants = [("bwrap", bwrap_cmd + [PLUGIN])] + \
            [(f"svc-d{d}", svc_cmd(d) + [PLUGIN]) for d in depths]
        result["b2b"] = back_to_back(launcher, b2b_variants, env, args.b2b_rounds, args.series,
                                     args.pause_ms / 1000, services)
        paced_variants = [("bwrap", bwrap_cmd + [PLUGIN]), ("oneshot", oneshot_cmd + [PLUGIN]),
                          ("svc-d1", svc_cmd(1) + [PLUGIN])]

        def latency(n):
            rounds = args.paced_rounds if n < 500 else max(5, args.paced_rounds // 2)
            log(f"paced launches while {n} plugins of the depth-1 service sleep ({rounds} rounds)")
            return paced(launcher, paced_variants, env, rounds, args.pause_ms / 1000)

        limit_note = {}
        result["idle"] = {}
        for name, argv, service in (("bwrap", bwrap_cmd + SLEEP, None),
                                    ("oneshot", oneshot_cmd + SLEEP, None),
                                    ("svc-d1", svc_cmd(1) + SLEEP, svc[1])):
            result["idle"][name] = ladder(launcher, name, argv, env, service, counts,
                                          latency if service else None, work, limit_note,
                                          2 if quick else 5)
            launcher.reap_rest(timeout=120)
        result["limit_note"] = limit_note
        result["orphans_total"] = launcher.orphans
        result["audit"] = {s.depth: sum(1 for _ in open(s.work / "audit.jsonl"))
                           if (s.work / "audit.jsonl").exists() else 0 for s in services}
    finally:
        for s in services:
            s.stop()
    out.write_text(json.dumps(result))


# ---- the section -----------------------------------------------------------------------------

def med(values):
    return statistics.median(values) if values else float("nan")


def label(name):
    if name == "bwrap":
        return "bubblewrap"
    if name == "oneshot":
        return "one-shot `run`"
    return f"service, depth {name.split('-d')[1]}"


def verdict(ratio, goal):
    return f"≤ {goal:.1f}×: {'**met**' if ratio <= goal else 'not met'}"


def render(res, args, command, env_info, foreign, load_before, load_after, revision, versions,
           kernel):
    out = [BEGIN, "", "## What a launch costs, against bubblewrap (issue 44; unprivileged, one "
           "interleaved run)", ""]
    who = "uid 65534, `nobody`" if res["uid"] == 65534 else f"uid {res['uid']}"
    sizes, depths = res["sizes"], res["depths"]
    b = res["bursts"]
    out += [
        f"Everything below ran as {who}, in one run of `bench/launch_cost.py`: bubblewrap",
        "(bench_common's `bwrap_argv()`, the escape corpus's flags), the one-shot `sandbox-host",
        "run --config C --backend namespaces --network none --` and `sandbox-host-launch --via",
        "SOCKET --` through a running `sandbox-host serve` (namespaces, network `none`) with",
        f"`[launcher]` depth {', '.join(map(str, depths))} (`max_launches = {MAX_LAUNCHES}`).",
        "Within a round the variants take turns in an order that rotates from round to round",
        f"({args.pause_ms} ms pause before each burst or paced launch). Ratios are medians over",
        "bubblewrap's median in the same run.",
        "",
        "### Goals",
        "",
        "| goal | measured | bubblewrap | ratio | goal |",
        "|---|---|---|---|---|",
    ]
    goal_rows = []

    def goal(what, value, ref, g, unit="ms"):
        ratio = value / ref if ref else float("nan")
        goal_rows.append(f"| {what} | {value:.2f} {unit} | {ref:.2f} {unit} | {ratio:.2f}× | "
                         f"{verdict(ratio, g)} |")

    if "16" in b["bwrap"]:
        ref16 = med([x["wall_ms"] for x in b["bwrap"]["16"]])
        goal("16 at once, one-shot `run`", med([x["wall_ms"] for x in b["oneshot"]["16"]]),
             ref16, GOALS["burst16"])
        for d in depths:
            goal(f"16 at once, service depth {d}",
                 med([x["wall_ms"] for x in b[f"svc-d{d}"]["16"]]), ref16, GOALS["burst16"])
    idle = res["idle"]
    lat0 = next((r["latency"] for r in idle["svc-d1"] if r["target"] == 0 and "latency" in r), None)
    if lat0:
        goal("one paced one-shot `run` (nothing idle)", med(lat0["oneshot"]), med(lat0["bwrap"]),
             GOALS["oneshot_paced"])
        goal("paced through the service, depth 1 (nothing idle)", med(lat0["svc-d1"]),
             med(lat0["bwrap"]), GOALS["service_paced"])
    for d in depths:
        goal(f"back-to-back through the service, depth {d}", med(res["b2b"][f"svc-d{d}"]),
             med(res["b2b"]["bwrap"]), GOALS["service_b2b"])

    def cpu_total(x):
        return x["waited_ms"] + x["orphan_ms"] + x["service_ms"]

    def mean(xs, key=cpu_total):
        return statistics.fmean([key(x) for x in xs])

    for size in ("1", "16"):
        ref_cpu = mean(b["bwrap"][size])
        what = "alone" if size == "1" else "16 at once"
        goal(f"CPU per launch, one-shot `run` ({what})", mean(b["oneshot"][size]), ref_cpu,
             GOALS["cpu"])
        for d in depths:
            goal(f"CPU per launch, service depth {d} ({what})", mean(b[f"svc-d{d}"][size]),
                 ref_cpu, GOALS["cpu"])

    def per_plugin(rows):
        top = [r for r in rows if r["target"] > 0 and r["plugins"] > 0]
        return top[-1] if top else None

    bw = per_plugin(idle["bwrap"])
    for name in ("oneshot", "svc-d1"):
        row = per_plugin(idle[name])
        ref = next((r for r in idle["bwrap"] if r["plugins"] == row["plugins"]), bw) if row else None
        if row and ref:
            goal(f"PSS per idle plugin, {label(name)} ({row['plugins']} idle)",
                 row["host_kb"] / row["plugins"] / 1024, ref["host_kb"] / ref["plugins"] / 1024,
                 GOALS["pss"], "MiB")
    out += goal_rows + [""]

    # 1. bursts
    out += ["### 1. Bursts: N launches of `/bin/true` started at once", "",
            f"Wall time from the first start to the last exit, {args.rounds} rounds.", "",
            "| launches at once | variant | median | p10 … p90 | ratio to bubblewrap |",
            "|---|---|---|---|---|"]
    for size in sizes:
        ref = med([x["wall_ms"] for x in b["bwrap"][str(size)]])
        for name in b:
            walls = [x["wall_ms"] for x in b[name][str(size)]]
            out.append(f"| {size} | {label(name)} | {med(walls):.1f} ms | "
                       f"{percentile(walls, 0.1):.1f} … {percentile(walls, 0.9):.1f} ms | "
                       f"{med(walls) / ref:.2f}× |")
    out += [""]

    # 2. CPU
    out += ["### 2. CPU per launch (user + sys, ms)", "",
            "Means over the rounds of each burst's CPU divided by its launches (means, not",
            "medians: the service's figures come from /proc in clock ticks of 10 ms, whose",
            "rounding averages out over the rounds but not in a median). *waited for*:",
            "the rusage of the processes this script started and of what they waited for;",
            "*orphans*: the processes this script reaped as their subreaper "
            "(PR_SET_CHILD_SUBREAPER) because nothing below it waited for them;",
            "*service*: the service's utime + stime + cutime + cstime (/proc/<pid>/stat, fields",
            "14-17) from idle to idle again (its pool refilled), with its live descendants' but",
            "the sandboxes' inits (counted among the orphans when they end, set-up included),",
            "less its idle rate over 30 s, the pools' `max_idle`, renewals included ("
            + ", ".join(f"depth {d}: {res['idle_rate'][str(d)] * 1e3:.2f} ms/s"
                        for d in depths) + ").",
            "",
            "*RUSAGE_CHILDREN* is getrusage(2)'s delta over the burst, after the reaping: it",
            "holds *waited for* and *orphans* (a check that nothing was missed). With one launch",
            "per burst the service's column is a tick or none per round, less an idle rate",
            "(the pools' renewals) of the same size at depth 16: read the bursts of 4 and more.",
            "",
            "| launches at once | variant | waited for | orphans | service | total | "
            "RUSAGE_CHILDREN | bubblewrap's total | ratio |",
            "|---|---|---|---|---|---|---|---|---|"]
    for size in sizes:
        ref = mean(b["bwrap"][str(size)])
        for name in b:
            xs = b[name][str(size)]
            tot = mean(xs)
            out.append(f"| {size} | {label(name)} | {mean(xs, lambda x: x['waited_ms']):.2f} | "
                       f"{mean(xs, lambda x: x['orphan_ms']):.2f} | "
                       f"{mean(xs, lambda x: x['service_ms']):.2f} | {tot:.2f} | "
                       f"{mean(xs, lambda x: x['children_ms']):.2f} | {ref:.2f} | "
                       f"{tot / ref:.2f}× |")
    out += ["", f"Orphans reaped during the bursts: {res['orphans_after_bursts']} "
            f"(of {sum(len(v) * int(k) for name in b for k, v in b[name].items())} launches).", ""]

    # 3. memory
    out += ["### 3. Memory per idle plugin (`/bin/sleep 3600`)", "",
            "PSS (smaps_rollup) of the host's processes, the plugins excluded, divided by the",
            "idle plugins. bubblewrap: its processes; one-shot: `run`, stage 1 and the sandbox's",
            "init (every process below this script, found through /proc, but the plugins and the",
            "services); service: the service and all its descendants but the plugins, the",
            "prepared sandboxes of its pool included (at 0 plugins, the pool alone); the",
            "clients `sandbox-host-launch`, one per running plugin (a gateway keeps it as the",
            "plugin's process), in their own column. *MemAvailable drop* is /proc/meminfo's fall",
            "per plugin since the ladder started (kernel memory too: namespaces, page tables).",
            "",
            "*Above 0 plugins* is (host PSS − host PSS at 0 plugins) / plugins: the service's",
            "pool and its own process taken off.",
            "",
            "*Host CPU while idle*: the host's processes' CPU (utime + stime + cutime + cstime,",
            "the plugins excluded) over a few seconds while the plugins sleep, in ms per second.",
            "It is the launch watch (`host/src/limits/launch_warden.cpp`, one per `run` and one",
            "thread in the service): it recounts each launch's scratch usage at least every",
            "250 ms (`kRecount`), reading the plugin's `/proc/<pid>/maps`, `fd` and `fdinfo`.",
            "",
            "| variant | idle plugins | host PSS | per plugin | above 0 plugins | host processes |"
            " + clients, per plugin | MemAvailable drop per plugin | host CPU while idle |"
            " bubblewrap's per plugin | ratio |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    bw_by_n = {r["plugins"]: r for r in idle["bwrap"] if r["plugins"]}
    for name in ("bwrap", "oneshot", "svc-d1"):
        base = next((r["host_kb"] for r in idle[name] if r["target"] == 0), 0)
        for r in idle[name]:
            n = r["plugins"]
            per = r["host_kb"] / n / 1024 if n else float("nan")
            ref = bw_by_n.get(n)
            refper = ref["host_kb"] / n / 1024 if ref else float("nan")
            clients = ((r["host_kb"] + r["client_kb"]) / n / 1024) if n and r["client_procs"] \
                else None
            drop = r.get("mem_drop_kb")
            out.append(
                f"| {label(name)} | {n} | {r['host_kb'] / 1024:.1f} MiB | "
                + (f"{per:.2f} MiB | {(r['host_kb'] - base) / n / 1024:.2f} MiB" if n else "– | –")
                + f" | {r['host_procs']}"
                + (f" ({r['host_procs'] / n:.2f} per plugin)" if n else "") + " | "
                + (f"{clients:.2f} MiB" if clients is not None else "–") + " | "
                + (f"{drop / n / 1024:.2f} MiB" if drop is not None and n >= 100 else "–") + " | "
                + (f"{r['idle_cpu_ms_s']:.1f} ms/s" if "idle_cpu_ms_s" in r else "–") + " | "
                + (f"{refper:.2f} MiB | {per / refper:.2f}×" if n and ref else "– | –") + " |")
    out += ["", "Where the PSS goes, at the largest count of each variant (processes, PSS each):",
            ""]
    for name in ("bwrap", "oneshot", "svc-d1"):
        r = per_plugin(idle[name])
        if not r:
            continue
        parts = sorted(r["by_comm"].items(), key=lambda kv: -kv[1][1])
        out.append(f"- {label(name)}, {r['plugins']} plugins"
                   + (f" (the service has {r['service_threads']} threads)"
                      if r["service_threads"] else "") + ":")
        out += [f"  - `{k}`: {c} × {s / c / 1024:.2f} MiB" for k, (c, s) in parts]
        out.append(f"  - the plugins themselves: "
                   f"{r['plugin_kb'] / max(1, r['plugins']) / 1024:.2f} MiB each"
                   + (f"; {r['unread']} processes unreadable" if r["unread"] else "")
                   + (f"; {r['zombies']} zombies not counted" if r.get("zombies") else ""))
    out += ["", "**What bounded the counts:** " + (
        "; ".join(f"{label(k)}: {v}" for k, v in res["limit_note"].items())
        if res["limit_note"] else f"nothing: every variant reached {max(res['counts'])}")
        + ".", "", "Bounds that were not reached:", "",
        f"- the service's own, `[launcher] max_launches`: 256 by default (its maximum,"
        f" {MAX_LAUNCHES}, was set here); beyond it a launch is refused (`launcher-busy`);",
        f"- RLIMIT_NPROC of the user: {res['limits']['nproc'][0]}; RLIMIT_NOFILE: "
        f"{res['limits']['nofile'][0]} (setpriv keeps its caller's limits);",
        f"- the kernel's: pid_max {Path('/proc/sys/kernel/pid_max').read_text().strip()},"
        f" user.max_user_namespaces {Path('/proc/sys/user/max_user_namespaces').read_text().strip()},"
        f" user.max_net_namespaces {Path('/proc/sys/user/max_net_namespaces').read_text().strip()};"
        f" MemAvailable {mem_available_kb() // 1024} MiB now.", ""]
    for name in ("bwrap", "oneshot", "svc-d1"):
        starts = [f"{r['plugins']} in {r['start_s']:.1f} s" for r in idle[name] if "start_s" in r]
        out.append(f"- {label(name)}: started (cumulative ladder) " + ", ".join(starts) + ".")
    out += [""]

    # 4. latency
    out += ["### 4. Launch latency while N plugins of the service sleep", "",
            f"Paced launches of `/bin/true` ({args.pause_ms} ms pause before each), through the",
            "depth-1 service while N of its plugins sleep, beside bubblewrap and the one-shot "
            "`run` in the same rounds.", "",
            "| N sleeping | rounds | service median | p90 | one-shot median | bubblewrap median | p90 |"
            " service / bubblewrap | one-shot / bubblewrap |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in idle["svc-d1"]:
        lat = r.get("latency")
        if not lat:
            continue
        s, o, w = lat["svc-d1"], lat["oneshot"], lat["bwrap"]
        out.append(f"| {r['plugins']} | {len(s)} | {med(s):.2f} ms | {percentile(s, 0.9):.2f} ms "
                   f"| {med(o):.2f} ms | {med(w):.2f} ms | {percentile(w, 0.9):.2f} ms | "
                   f"{med(s) / med(w):.2f}× (goal ≤ {GOALS['service_paced']}) | "
                   f"{med(o) / med(w):.2f}× (goal ≤ {GOALS['oneshot_paced']}) |")
    out += ["", f"Back-to-back, nothing idle: {args.b2b_rounds} rounds of {args.series} launches "
            "one after the other per variant (each timed, the services idle before each series):",
            "", "| variant | median | p10 … p90 | ratio to bubblewrap |", "|---|---|---|---|"]
    refb = med(res["b2b"]["bwrap"])
    for name, xs in res["b2b"].items():
        out.append(f"| {label(name)} | {med(xs):.2f} ms | {percentile(xs, 0.1):.2f} … "
                   f"{percentile(xs, 0.9):.2f} ms | {med(xs) / refb:.2f}× |")
    out += ["", "### Checked before timing", "",
            "As the same user, the one-shot `run` and the client through each service: "
            "`/bin/true` exits 0, and a shell inside sees:", "", "```", *res["checks"], "```", "",
            "The services' audit logs had " + ", ".join(f"{n} records (depth {d})"
                                                         for d, n in res["audit"].items()) + ".",
            "", "### Exactly what ran", "",
            f"`{BACKEND_ENV}=namespaces` in every environment; `<tmp>` is a world-readable copy "
            "of the build (sandbox-host, the client, the broker, the modules)"
            + (", with its debug info." if args.unstripped else
               ", stripped (`strip --strip-unneeded`) as the Debian package installs them."),
            "", "```sh",
            command, "```", "", "The variants, each service's config and the one-shot's:", "",
            "```"]
    for name, argv in res["commands"].items():
        line = f"{name}: {shlex.join(argv)}"
        while len(line) > 100:
            cut = line.rfind(" ", 0, 100)
            out.append(line[:cut] + " \\")
            line = "  " + line[cut + 1:]
        out.append(line)
    out += ["```", "", "```toml", service_config("<work>", "N").rstrip("\n"), "```", "",
            "```toml", oneshot_config("<work>").rstrip("\n"), "```", ""]
    out += machine_lines(env_info)
    out += [f"- CPU time used by anything but this run and the kernel's threads while it ran:"
            f" {foreign:.1%} of the machine",
            f"- the kernel's threads (kworkers, which tear down the sandboxes' namespaces,"
            f" bubblewrap's too) used {kernel:.1f} s of CPU meanwhile, in no row above",
            f"- load average before / after: {load_before} / {load_after}",
            f"- source: {revision}", f"- build: `{display_path(args.build)}`"]
    out += [f"- {v}" for v in versions]
    out += ["", END]
    text = "\n".join(out) + "\n"
    text = text.replace(str(Path(args.tmp_name)), "<tmp>")
    return text


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=Path("build"), type=Path)
    parser.add_argument("--rounds", type=int, default=10, help="rounds of bursts (default 10)")
    parser.add_argument("--paced-rounds", type=int, default=30,
                        help="rounds of paced launches at each N (half at N >= 500)")
    parser.add_argument("--b2b-rounds", type=int, default=8)
    parser.add_argument("--series", type=int, default=8, help="launches in a back-to-back series")
    parser.add_argument("--pause-ms", type=int, default=200)
    parser.add_argument("--idle-counts", default="1,100,1000")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: 2 rounds, bursts up to 16, depths 1 and 4, "
                             "1 and 10 idle plugins")
    parser.add_argument("--user", type=int, default=65534)
    parser.add_argument("--max-wait", type=float, default=120,
                        help="seconds to wait for an idle machine before starting")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--unstripped", action="store_true",
                        help="measure the build's binaries with their debug info; by default "
                             "they are stripped as the Debian package installs them")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--stage", help=argparse.SUPPRESS)
    parser.add_argument("--pss-fds", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.paced_rounds, args.b2b_rounds, args.series = 2, 4, 2, 4
        args.idle_counts = "1,10"
    if args.pause_ms < 60:
        parser.error("--pause-ms must be at least 60 (the pool refills 50 ms after a launch)")
    args.build = args.build.resolve()
    return args


def strip_as_installed(stage_dir):
    """The package ships its executables and modules without debug info (it goes to
    -dbgsym): bubblewrap is measured as Debian ships it, and so is sandbox-host."""
    if shutil.which("strip") is None:
        die("strip (binutils) is needed to measure the binaries as installed; or --unstripped")
    for path in sorted(stage_dir.rglob("*")):
        if not path.is_file():
            continue
        with path.open("rb") as head:
            elf = head.read(4) == b"\x7fELF"
        if elf:
            subprocess.run(["strip", "--strip-unneeded", str(path)], check=True)


def main():
    args = parse_args()
    if args.worker:
        worker(args)
        return
    prefix = runner(args.user)
    env_info = machine()
    with tempfile.TemporaryDirectory(prefix="launch-cost-") as tmp_name:
        tmp = Path(tmp_name)
        tmp.chmod(0o755)
        args.tmp_name = tmp_name
        stage(args.build, tmp / "stage")
        if not args.unstripped:
            strip_as_installed(tmp / "stage")
        work = user_dir(tmp / "out", args.user)
        out = work / "result.json"
        worker_argv = [PYTHON, str(Path(__file__).resolve()), "--worker", str(out),
                       "--stage", str(tmp / "stage"), "--rounds", str(args.rounds),
                       "--paced-rounds", str(args.paced_rounds), "--b2b-rounds",
                       str(args.b2b_rounds), "--series", str(args.series), "--pause-ms",
                       str(args.pause_ms), "--idle-counts", args.idle_counts]
        if args.quick:
            worker_argv.append("--quick")
        wait_for_idle(0.15, args.max_wait)
        load_before = load_average()
        request_r, request_w = os.pipe()
        answer_r, answer_w = os.pipe()
        worker_argv += ["--pss-fds", f"{answer_r},{request_w}"]
        log("running: " + shlex.join(prefix + worker_argv))
        kernel0 = kernel_threads_cpu()
        own = lambda: kernel_threads_cpu() + sum(os.times()[:2])  # noqa: E731
        with ForeignLoad(own) as foreign:
            process = subprocess.Popen(prefix + worker_argv, env=launch_env(work), cwd=str(work),
                                       pass_fds=(answer_r, request_w))
            os.close(answer_r)
            os.close(request_w)
            serve_pss(request_r, answer_w, process, 3600)
            try:
                returncode = process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                process.kill()
                die("the worker did not exit")
        kernel = kernel_threads_cpu() - kernel0
        if returncode != 0:
            die(f"the worker exited {returncode}")
        res = json.loads(out.read_text())
    command = shlex.join([PYTHON, "bench/launch_cost.py", "--build", display_path(args.build)]
                         + (["--quick"] if args.quick else
                            ["--rounds", str(args.rounds), "--paced-rounds",
                             str(args.paced_rounds), "--idle-counts", args.idle_counts])
                         + (["--unstripped"] if args.unstripped else []))
    versions = tool_versions([["bwrap", "--version"]])
    section = render(res, args, command, env_info, foreign.share, load_before, load_average(),
                     source_revision(), versions, kernel)
    long = [line for line in section.splitlines() if len(line) > 200]
    if long:
        log(f"{len(long)} lines over 200 characters, e.g. {long[0][:80]}...")
    if not args.no_write:
        write_section(section, BEGIN, END)
        log(f"wrote {DOCS}")
    print(section)


if __name__ == "__main__":
    main()
