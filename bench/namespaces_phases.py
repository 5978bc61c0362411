#!/usr/bin/env python3
"""Where the time of one `sandbox-host run -- /bin/true` under the namespaces backend goes.
Prints Markdown tables (to stdout) that the hand-written notes in docs/benchmarks.md quote;
writes nothing else.

Usage, from the repository root after building into build-bench (as root: the launches run
as --user through setpriv, strace and perf run as root around them):
    python3 bench/namespaces_phases.py [--build build-bench] [--traces 40] [--runs 300]

Four measurements, each of the real binaries of the build (copied as namespaces_report.py
does):
  1. hyperfine, one invocation: the whole launch beside pieces of it that can be started on
     their own: sandbox-host --version (start-up alone), `modules` (plus config and module
     loads), `probe`, `run` with the off backend, stage 1 alone (the re-exec'd binary started
     directly with the environment `run` gives it, through `env -i`; `env -i ... /bin/true`
     is the calibration for the env exec), and unshare with and without a net namespace.
  2. strace timelines of --traces launches, tracing only process events, unshare and the
     pivot_root/sethostname boundaries (seccomp-bpf filtered, so untraced calls do not
     stop): the median duration of each phase.
  3. probe_bench (Google Benchmark): the probe in-process, its replicas, the seccomp filter.
  4. perf (when it works): CPU profiles by process/shared object and by kernel entry point,
     scheduler gaps (perf record -a), and perf stat, for the launch and for bubblewrap.
Each measurement is repeated (up to --attempts) while other processes used more than
--max-foreign of the CPUs during it.
"""

import argparse
import json
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import namespaces_report as nr  # noqa: E402

# Few calls, so that tracing adds little: every traced call stops the process twice. The
# mount tree and the hardening are timed between pivot_root and sethostname, not by their
# (many) own calls.
TRACED = "execve,clone,clone3,fork,vfork,wait4,exit_group,unshare,pivot_root,sethostname"


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, **kw)


# ---- the stage-1 environment ----------------------------------------------------------------

def stage1_env(prefix, exe, env, cwd, sock, tmpdir):
    """The environment `run` gives the re-exec'd binary, read from an execve trace (strings
    in hex, so nothing needs unescaping). The spec names fixed socket and tmp directories,
    so the stage can be started again and again without `run`."""
    with tempfile.NamedTemporaryFile("r", suffix=".trace") as out:
        r = run(["strace", "-f", "-v", "-xx", "-s", "1000000", "-e", "trace=execve", "-o",
                 out.name] + prefix + [str(exe), "run", "--socket-dir", str(sock), "--tmp-dir",
                                       str(tmpdir), "--", nr.PLUGIN], env=env, cwd=cwd)
        if r.returncode != 0:
            nr.die(f"strace of the launch failed: {r.stderr.strip()}")
        for line in out.read().splitlines():
            strings = [bytes.fromhex(s.replace("\\x", "")).decode()
                       for s in re.findall(r'"((?:\\x[0-9a-f]{2})*)"', line)]
            if strings and strings[0] == "/proc/self/exe":
                return [s for s in strings[2:] if "=" in s]
    nr.die("found no execve of /proc/self/exe in the trace")


# ---- strace timelines -------------------------------------------------------------------------

LINE = re.compile(r"^(\d+)\s+(\d+\.\d+)\s+(.*)$")


def parse_trace(text):
    """[(pid, t, kind, name, rest)] with kind in syscall/resumed/exited/signal."""
    events = []
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        pid, t, rest = int(m.group(1)), float(m.group(2)), m.group(3)
        if rest.startswith("+++ exited") or rest.startswith("+++ killed"):
            events.append((pid, t, "exited", "", rest))
        elif rest.startswith("---"):
            events.append((pid, t, "signal", "", rest))
        elif rest.startswith("<..."):
            name = rest.split()[1]
            events.append((pid, t, "resumed", name, rest))
        else:
            name = rest.split("(", 1)[0]
            events.append((pid, t, "syscall", name, rest))
    return events


def duration(rest):
    m = re.search(r"<(\d+\.\d+)>$", rest)
    return float(m.group(1)) if m else None


def returned(rest):
    found = re.findall(r" = (-?\d+)", rest)  # the last: a wait status may hold "== 0"
    return int(found[-1]) if found else None


def phases_of(events, exe):
    """The phase boundaries of one launch, in ms from sandbox-host's execve."""
    by_pid = {}
    for e in events:
        by_pid.setdefault(e[0], []).append(e)

    def calls(pid, name):
        """[(entry time, return value, return time)] of a pid's calls of name."""
        found = []
        pending = None
        for e in by_pid.get(pid, []):
            if e[3] != name:
                continue
            if e[2] == "syscall":
                if "<unfinished ...>" in e[4]:
                    pending = e
                else:
                    found.append((e[1], returned(e[4]), e[1] + (duration(e[4]) or 0.0)))
            elif e[2] == "resumed" and pending is not None:
                d = duration(e[4])
                found.append((pending[1], returned(e[4]), pending[1] + d if d else e[1]))
                pending = None
        return found

    def exited(pid):
        return next(e[1] for e in by_pid[pid] if e[2] == "exited")

    host_exec = next(e for e in events if e[2] == "syscall" and e[3] == "execve"
                     and str(exe) in e[4] and '"run"' in e[4])
    h, t0 = host_exec[0], host_exec[1]
    h_clones = [c for c in calls(h, "clone") if c[1] and c[1] > 0]
    probe_child, stage1 = h_clones[0][1], h_clones[1][1]
    p_unshare = calls(probe_child, "unshare")[0]
    s_exec = calls(stage1, "execve")[0]
    s_unshare = calls(stage1, "unshare")[0]
    s_clone = calls(stage1, "clone")[0]
    init = s_clone[1]
    i_pivots = calls(init, "pivot_root")
    i_hostname = calls(init, "sethostname")[0]
    i_clone = calls(init, "clone")[0]
    plugin = next(pid for pid in by_pid if pid not in (h, probe_child, stage1, init)
                  and calls(pid, "execve"))
    p_exec = calls(plugin, "execve")[0]
    reaps = calls(h, "wait4")
    probe_reaped = next(c[2] for c in reaps if c[1] == probe_child)
    stage1_reaped = next(c[2] for c in reaps if c[1] == stage1)
    points = {
        "t0": t0, "probe_fork": h_clones[0][0], "probe_unshare": p_unshare[0],
        "probe_unshare_end": p_unshare[2], "probe_exit": exited(probe_child),
        "probe_reaped": probe_reaped, "stage1_fork": h_clones[1][0], "stage1_exec": s_exec[0],
        "unshare": s_unshare[0], "unshare_end": s_unshare[2], "init_fork": s_clone[0],
        "pivot1": i_pivots[0][0], "pivot2": i_pivots[1][0], "hostname": i_hostname[0],
        "plugin_fork": i_clone[0],
        "plugin_exec": p_exec[0], "plugin_exit": exited(plugin), "init_exit": exited(init),
        "stage1_exit": exited(stage1), "stage1_reaped": stage1_reaped, "host_exit": exited(h),
    }
    return {k: (v - t0) * 1e3 for k, v in points.items()}


# Phases: (label, from, to, what happens there).
PHASES = [
    ("1 host start-up to the probe's fork", "t0", "probe_fork",
     "exec, dynamic linking, static init, CLI, config, dlopen of the namespaces module"),
    ("2 probe: fork to the child's unshare", "probe_fork", "probe_unshare",
     "fork of the host, child scheduled"),
    ("3 probe: unshare(user|mnt|pid|uts)", "probe_unshare", "probe_unshare_end",
     "the kernel creates the namespaces"),
    ("4 probe: maps, tmpfs mount, exit", "probe_unshare_end", "probe_exit",
     "uid/gid maps, mount, exit and namespace teardown"),
    ("5 probe: child gone to reaped", "probe_exit", "probe_reaped",
     "the host's poll on the result pipe wakes, waitpid"),
    ("6 host: probe done to stage-1 fork", "probe_reaped", "stage1_fork",
     "spec check, JSON encode, private dirs, Boost.Process set-up"),
    ("7 stage-1 fork to its exec", "stage1_fork", "stage1_exec",
     "fork, Boost.Process child: close_range, setsid, pdeathsig"),
    ("8 stage-1 start-up to unshare", "stage1_exec", "unshare",
     "exec, dynamic linking, static init, spec decode, module dlopen, mount plan"),
    ("9 stage 1: unshare(user|mnt|pid|net|ipc|uts|cgroup)", "unshare", "unshare_end",
     "the kernel creates the namespaces"),
    ("10 stage 1: maps to init's fork", "unshare_end", "init_fork",
     "uid/gid maps, pidfd, signal mask"),
    ("11 init: fork to the first pivot_root", "init_fork", "pivot1",
     "fork into the new pid namespace, pdeathsig, parent check, / private, base tmpfs, "
     "new root bound"),
    ("12 init: first to second pivot_root (the mount tree)", "pivot1", "pivot2",
     "/proc, /dev (6 device binds, shm), /tmp, 22 binds (/usr, /etc entries, run dirs, the "
     "binary); each bind is openat2 ×2 + open_tree + mount_setattr + move_mount; host root "
     "detached"),
    ("13 init: second pivot_root to sethostname", "pivot2", "hostname",
     "base tmpfs detached, root read-only, loopback up"),
    ("14 init: sethostname to the plugin's fork", "hostname", "plugin_fork",
     "not dumpable, close fds, drop capabilities, no_new_privs, libseccomp builds and loads "
     "the filter"),
    ("15 plugin: fork to exec", "plugin_fork", "plugin_exec", "setsid, chdir"),
    ("16 plugin runs (`/bin/true`)", "plugin_exec", "plugin_exit", "exec to exit"),
    ("17 tear-down: plugin exit to host's reap of stage 1", "plugin_exit", "stage1_reaped",
     "init and stage 1 notice, exit; pid/net namespaces torn down"),
    ("18 host: reap to exit", "stage1_reaped", "host_exit",
     "private dirs removed, exit"),
]


def trace_launches(prefix, exe, env, cwd, count, out_dir):
    runs = []
    for i in range(count):
        path = out_dir / f"launch{i}.trace"
        r = run(["strace", "-f", "-ttt", "-T", "--seccomp-bpf", "-e", f"trace={TRACED}", "-o",
                 str(path)] + prefix + [str(exe), "run", "--", nr.PLUGIN], env=env, cwd=cwd)
        if r.returncode != 0:
            nr.die(f"traced launch {i} failed: {r.stderr.strip()}")
        runs.append(phases_of(parse_trace(path.read_text()), exe))
    return runs


# ---- probe_bench, perf ------------------------------------------------------------------------

def probe_bench(prefix, stage_dir, env, cwd, out_dir):
    binary = stage_dir / "bin" / "probe_bench"
    if not binary.exists():
        return None
    module = stage_dir / "lib" / "sandbox-host" / "modules" / "backend_namespaces.so"
    export = out_dir / "probe_bench.json"
    r = run(prefix + [str(binary), "--module", str(module), "--benchmark_repetitions=5",
                      "--benchmark_min_time=0.5", "--benchmark_report_aggregates_only=true",
                      f"--benchmark_out={export}", "--benchmark_out_format=json"],
            env=env, cwd=cwd)
    if r.returncode != 0:
        nr.die(f"probe_bench failed: {r.stderr.strip()}")
    data = json.loads(export.read_text())
    rows = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") == "median":
            rows[b["run_name"].split("/")[0]] = b["real_time"] / 1e3  # us -> ms
    return rows


def perf_stat(prefix, argv, env, cwd, repeat=100):
    if shutil.which("perf") is None:
        return None
    r = run(["perf", "stat", "-x", ",", "-r", str(repeat), "-e",
             "task-clock,context-switches,cpu-migrations,page-faults"] + prefix + argv,
            env=env, cwd=cwd)
    if r.returncode != 0:
        return None
    values = {}
    for line in r.stderr.splitlines():
        parts = line.split(",")
        if len(parts) > 3 and parts[0] and parts[2]:
            try:
                values[parts[2]] = float(parts[0])
            except ValueError:
                pass
    return values or None


# ---- perf: where the CPU time goes, and when no process of the launch runs -----------------

PERIOD_NS = 20000  # one cpu-clock sample per 20 µs of CPU time

# Kernel entry points whose inclusive CPU time is reported (perf report --children).
KERNEL_ENTRIES = [
    ("asm_exc_page_fault", "page faults"),
    ("__x64_sys_unshare", "unshare()"),
    ("setup_net", "setting up net namespaces (under unshare or clone)"),
    ("__register_sysctl_table", "of which: their sysctl tables"),
    ("loopback_net_init", "of which: their loopback device"),
    ("__x64_sys_execve", "execve()"),
    ("__do_sys_clone", "fork (clone)"),
    ("ksys_mmap_pgoff", "mmap()"),
    ("__x64_sys_mprotect", "mprotect()"),
    ("__x64_sys_openat", "openat()"),
    ("__do_sys_newfstatat", "stat()"),
    ("__x64_sys_mkdir", "mkdir()"),
    ("__x64_sys_rmdir", "rmdir()"),
    ("__x64_sys_mount", "mount()"),
    ("__x64_sys_open_tree", "open_tree()"),
    ("__do_sys_move_mount", "move_mount()"),
    ("__do_sys_pivot_root", "pivot_root()"),
    ("__x64_sys_umount", "umount2()"),
    ("__mmput", "address-space tear-down at exit and exec"),
    ("do_exit", "process exit"),
]


def loop(prefix, argv, count):
    return prefix + ["sh", "-c", f"for i in $(seq {count}); do {shlex.join(argv)}; done"]


def perf_report(data, *extra):
    r = run(["perf", "report", "-i", str(data), "--stdio", "-n", "-g", "none", *extra])
    rows = []
    for line in r.stdout.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        parts = line.split()
        rows.append(parts)
    return rows


def cpu_profile(prefix, argv, env, cwd, out_dir, count, comms):
    """CPU time per launch, by process name and shared object, and by kernel entry point."""
    data = out_dir / "cpu.perf"
    r = run(["perf", "record", "-q", "-o", str(data), "-e", "cpu-clock", "-c", str(PERIOD_NS), "-g",
             "--"] + loop(prefix, argv, count), env=env, cwd=cwd)
    if r.returncode != 0:
        return None
    per_sample = PERIOD_NS / 1e6 / count  # ms per launch
    by_dso = []
    for parts in perf_report(data, "--no-children", "--sort", "comm,dso"):
        # overhead, samples, comm, dso
        if len(parts) >= 4 and parts[1].isdigit():
            by_dso.append((parts[2], " ".join(parts[3:]), int(parts[1]) * per_sample))
    all_samples = sum(ms for _, _, ms in by_dso) / per_sample
    kernel = {}
    for parts in perf_report(data, "--children", "--sort", "comm,sym"):
        # children %, self %, samples, comm, [k], symbol
        if len(parts) >= 6 and parts[0].endswith("%") and parts[4] == "[k]" and parts[3] in comms:
            share = float(parts[0].rstrip("%")) / 100
            kernel[parts[5]] = kernel.get(parts[5], 0.0) + share * all_samples * per_sample
    return by_dso, kernel


SCHED_SKIP = {"__schedule", "schedule", "schedule_timeout", "schedule_hrtimeout_range_clock",
              "io_schedule", "__wait_for_common", "wait_for_completion",
              "wait_for_completion_state", "do_wait_intr_irq", "schedule_preempt_disabled",
              "io_schedule_timeout", "do_nanosleep", "hrtimer_nanosleep"}
SWITCH = re.compile(r"prev_comm=(.*?) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> "
                    r"next_comm=(.*?) next_pid=(\d+)")
HEADER = re.compile(r"^\s*(\S.*?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+(\d+\.\d+):\s+(\S+):\s*(.*)$")


def idle_gaps(prefix, argv, env, cwd, out_dir, count, comms):
    """Wall time per launch during which no process of the launch (nor the loop's shell) is
    on a CPU, by what the process that ends the gap had blocked in (its kernel stack when it
    was switched out; "new process" when it had not run yet). Needs perf record -a."""
    data = out_dir / "sched.perf"
    r = run(["perf", "record", "-q", "-a", "-o", str(data), "-e", "sched:sched_switch", "-g",
             "--"] + loop(prefix, argv, count), env=env, cwd=cwd)
    if r.returncode != 0:
        return None
    text = run(["perf", "script", "-i", str(data), "-F", "cpu,time,event,trace,ip,sym"]).stdout
    switches = []
    for block in text.split("\n\n"):
        lines = [line for line in block.splitlines() if line.strip()]
        if not lines:
            continue
        m = SWITCH.search(lines[0])
        t = re.search(r"\[(\d+)\]\s+(\d+\.\d+):", lines[0])
        if not m or not t:
            continue
        stack = [line.split()[1] for line in lines[1:] if len(line.split()) >= 2]
        switches.append((int(t.group(1)), float(t.group(2)), m.group(1), int(m.group(2)),
                         m.group(3), m.group(4), int(m.group(5)), stack))
    ours = {s[3] for s in switches if s[2] in comms} | {s[6] for s in switches if s[5] in comms}
    running, blocked_in, gaps = {}, {}, {}
    gap_start, first, last = None, None, None
    for cpu, t, _, prev, state, _, nxt, stack in switches:
        if prev in ours:
            frames = [f for f in stack if f not in SCHED_SKIP][:3]
            blocked_in[prev] = ("preempted" if state.startswith("R") else
                                " < ".join(frames) or "?")
        running[cpu] = nxt
        on_cpu = any(pid in ours for pid in running.values())
        if nxt in ours:
            first = t if first is None else first
            last = t
        if first is None:
            continue
        if not on_cpu and gap_start is None:
            gap_start = t
        elif on_cpu and gap_start is not None:
            key = blocked_in.get(nxt, "new process, first run")
            total, n = gaps.get(key, (0.0, 0))
            gaps[key] = (total + t - gap_start, n + 1)
            gap_start = None
    if first is None:
        return None
    wall = (last - first) * 1e3 / count
    ranked = sorted(((v[0] * 1e3 / count, v[1] / count, k) for k, v in gaps.items()), reverse=True)
    return wall, sum(g[0] for g in ranked), ranked


# ---- main ---------------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(nr.REPO / "build-bench"), type=Path)
    parser.add_argument("--user", type=int, default=65534)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--traces", type=int, default=40)
    parser.add_argument("--profiles", type=int, default=200,
                        help="launches per perf record profile (half that for the idle gaps)")
    parser.add_argument("--max-busy", type=float, default=0.10)
    parser.add_argument("--max-wait", type=float, default=300)
    parser.add_argument("--max-foreign", type=float, default=0.10)
    parser.add_argument("--attempts", type=int, default=5)
    args = parser.parse_args()
    for tool in ("hyperfine", "strace"):
        if shutil.which(tool) is None:
            nr.die(f"{tool} is not installed")
    prefix = nr.runner(args.user)
    out = []
    with tempfile.TemporaryDirectory(prefix="namespaces-phases-") as tmp_name:
        tmp = Path(tmp_name)
        tmp.chmod(0o755)
        stage_dir = tmp / "stage"
        exe = nr.stage_build(args.build.resolve(), stage_dir)
        out_dir = nr.user_dir(tmp / "out", args.user)
        sock = nr.user_dir(tmp / "out" / "sock", args.user)
        tmpdir = nr.user_dir(tmp / "out" / "tmp", args.user)
        env = nr.launch_env(out_dir)
        cwd = str(stage_dir)
        nr.verify_sandbox(prefix, exe, env, cwd)
        s1_env = stage1_env(prefix, exe, env, cwd, sock, tmpdir)
        plain_env = [e for e in s1_env if not e.startswith("CLAWPATROL_")]

        commands = [
            ("bare `/bin/true`", [nr.PLUGIN]),
            ("`env -i <4 vars> /bin/true` (calibration for the env exec below)",
             ["env", "-i"] + plain_env + [nr.PLUGIN]),
            ("`sandbox-host --version`", [str(exe), "--version"]),
            ("`sandbox-host modules` (start-up, config, module loads, a listing)",
             [str(exe), "modules"]),
            ("`sandbox-host probe`", [str(exe), "probe"]),
            ("`env -i <4 vars> CLAWPATROL_SANDBOX_BACKEND=off sandbox-host run -- /bin/true`",
             ["env", "-i"] + plain_env + ["CLAWPATROL_SANDBOX_BACKEND=off", str(exe), "run", "--",
                                          nr.PLUGIN]),
            ("`sandbox-host run -- /bin/true` (namespaces)", [str(exe), "run", "--", nr.PLUGIN]),
            ("stage 1 alone: `env -i <the 6 vars run passes> sandbox-host`",
             ["env", "-i"] + s1_env + [str(exe)]),
        ]
        commands += [
            ("`unshare -U /bin/true`", ["unshare", "-U", nr.PLUGIN]),
            ("`unshare -Urmpf /bin/true` (no net)", ["unshare", "-Urmpf", nr.PLUGIN]),
            ("`unshare -Urmpfn /bin/true`", ["unshare", "-Urmpfn", nr.PLUGIN]),
            ("bubblewrap (as in the table above)", nr.bwrap_argv()),
        ]
        for label, argv in commands:
            reason = nr.check_command(prefix, argv, env, cwd)
            if reason is not None:
                nr.die(f"{label} does not work: {reason}")
        (results, _), foreign, busy, attempts = nr.quietly(
            lambda: nr.hyperfine(prefix, commands, env, cwd, out_dir, args.warmup, args.runs),
            args)
        medians = [r["median"] * 1e3 for r in results]
        out += [f"CPUs busy in the second before: {busy:.0%}; others' share of the CPUs while "
                f"hyperfine ran: {foreign:.1%} (attempt {attempts})", "",
                f"### hyperfine -N --warmup {args.warmup} --runs {args.runs} (one invocation)", "",
                "| command | mean | median | user + sys |", "|---|---|---|---|"]
        for (label, _), r in zip(commands, results):
            out.append(f"| {label} | {r['mean'] * 1e3:.3f} ms | {r['median'] * 1e3:.3f} ms | "
                       f"{(r['user'] + r['system']) * 1e3:.2f} ms |")
        m = {label: value for (label, _), value in zip(commands, medians)}
        by = lambda prefix_text: next(v for k, v in m.items() if k.startswith(prefix_text))  # noqa: E731
        env_cost = medians[1] - medians[0]
        stage1 = by("stage 1 alone") - env_cost
        out += ["", f"- env exec (median `env -i ... /bin/true` − bare): {env_cost:.3f} ms",
                f"- stage 1 alone, env exec subtracted: {stage1:.3f} ms",
                f"- `run` namespaces − stage 1 alone (the host side): "
                f"{by('`sandbox-host run -- /bin/true` (namespaces)') - stage1:.3f} ms",
                f"- `modules` − `--version` (config + loading the modules): "
                f"{by('`sandbox-host modules`') - by('`sandbox-host --version`'):.3f} ms",
                f"- `probe` − `modules` (every backend's probe, landlock ABI, output): "
                f"{by('`sandbox-host probe`') - by('`sandbox-host modules`'):.3f} ms",
                f"- `run` off, env exec subtracted, − `modules` − bare `/bin/true` (the run's own "
                f"work: private dirs, spawn, wait, clean-up): "
                f"{by('`env -i <4 vars> CLAWPATROL_SANDBOX_BACKEND=off') - env_cost - by('`sandbox-host modules`') - medians[0]:.3f} ms"]
        out.append("")

        traces, foreign, _, _ = nr.quietly(
            lambda: trace_launches(prefix, exe, env, cwd, args.traces, out_dir), args)
        out += [f"### strace timeline, median over {args.traces} launches "
                f"(trace={TRACED}, --seccomp-bpf)", "",
                "| phase | median | p25 … p75 | what happens there |", "|---|---|---|---|"]
        for label, a, b, what in PHASES:
            values = [t[b] - t[a] for t in traces]
            q = statistics.quantiles(values, n=4)
            out.append(f"| {label} | {statistics.median(values):.3f} ms | "
                       f"{q[0]:.3f} … {q[2]:.3f} ms | {what} |")
        totals = [t["host_exit"] for t in traces]
        out += ["", f"Total under strace (execve of sandbox-host to its exit), median: "
                f"{statistics.median(totals):.3f} ms; untraced median of the same launch above "
                f"(spawn to exit): {by('`sandbox-host run -- /bin/true` (namespaces)'):.3f} ms.", ""]

        out.append(f"Others' share of the CPUs while tracing: {foreign:.1%}")
        out.append("")
        pb, foreign, _, _ = nr.quietly(lambda: probe_bench(prefix, stage_dir, env, cwd, out_dir),
                                       args)
        if pb:
            out += ["### probe_bench (median of 5 repetitions, real time per iteration; others' "
                    f"share of the CPUs meanwhile: {foreign:.1%})", "",
                    "| benchmark | time |", "|---|---|"]
            out += [f"| {name} | {ms:.3f} ms |" for name, ms in pb.items()]
            out.append("")
        if shutil.which("perf") is not None:
            launch = [str(exe), "run", "--", nr.PLUGIN]
            for label, argv, comms in (
                    ("sandbox-host run (namespaces)", launch, {"sandbox-host", "exe", "true"}),
                    ("bubblewrap", nr.bwrap_argv(), {"bwrap", "true"})):
                profile, foreign, _, _ = nr.quietly(
                    lambda: cpu_profile(prefix, argv, env, cwd, out_dir, args.profiles, comms),
                    args)
                if not profile:
                    out.append(f"perf record failed for {label}")
                    continue
                by_dso, kernel = profile
                ours = [row for row in by_dso if row[0] in comms]
                total = sum(row[2] for row in ours)
                everything = sum(row[2] for row in by_dso)
                out += ["", f"### CPU profile of {label}: perf record -e cpu-clock -c {PERIOD_NS} "
                        f"-g, {args.profiles} launches in a shell loop (others' share of the "
                        f"CPUs meanwhile: {foreign:.1%})", "",
                        f"CPU time of the launch's processes under perf: {total:.3f} ms per launch "
                        "(perf's sampling inflates it; the shares are what to read)", "",
                        "| process (comm) | shared object | share of the launch's CPU |",
                        "|---|---|---|"]
                out += [f"| {c} | {d} | {ms / total:.1%} |" for c, d, ms in ours
                        if ms / total >= 0.002]
                out += ["", "| kernel entry point (inclusive, the launch's processes) | symbol | "
                        "share of the launch's CPU |", "|---|---|---|"]
                out += [f"| {what} | `{sym}` | {kernel[sym] / total:.1%} |"
                        for sym, what in KERNEL_ENTRIES if kernel.get(sym, 0) / total >= 0.002]
                out.append(f"\n(the loop's shell and setpriv: {(everything - total) / everything:.1%}"
                           " of all samples)")
                gaps, foreign, _, _ = nr.quietly(
                    lambda: idle_gaps(prefix, argv, env, cwd, out_dir, args.profiles // 2,
                                      comms | {"sh"}), args)
                if gaps:
                    wall, idle, ranked = gaps
                    out += ["", f"Idle gaps of {label} (perf record -a -e sched:sched_switch, "
                            f"{args.profiles // 2} launches; others' share of the CPUs "
                            f"meanwhile: {foreign:.1%}): wall {wall:.3f} ms per launch, of which "
                            f"{idle:.3f} ms with no process of the launch on a CPU. By what the "
                            "process that ends the gap had blocked in:", "",
                            "| blocked in | ms per launch | gaps per launch |", "|---|---|---|"]
                    out += [f"| {k} | {ms:.3f} | {n:.1f} |" for ms, n, k in ranked[:10]]
        for label, argv in (("sandbox-host run (namespaces)", [str(exe), "run", "--", nr.PLUGIN]),
                            ("bubblewrap", nr.bwrap_argv()), ("bare /bin/true", [nr.PLUGIN])):
            stat = perf_stat(prefix, argv, env, cwd)
            if stat:
                out.append(f"perf stat -r 100 (with setpriv) {label}: " + ", ".join(
                    f"{k} {v:.2f}" for k, v in stat.items()))
        print("\n".join(out))


if __name__ == "__main__":
    main()
