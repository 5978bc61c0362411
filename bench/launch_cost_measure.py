"""The measurements of bench/launch_cost.py, run by its worker as the unprivileged user: the
launch service, launching and waiting, bursts with their CPU, idle plugins and the launches
while they run.
"""

import os
import resource
import shlex
import signal
import socket
import subprocess
import time
from pathlib import Path

from bench_common import die
from launch_cost_proc import (bounded, descendants, in_own_pid_namespace, log, MAX_LAUNCHES,
                              mem_available_kb, own_cpu, process_table, pss_many, threads_of,
                              Timeout, unbounded, ZOMBIE)


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
