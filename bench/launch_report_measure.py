"""The variants bench/launch_report.py times and how it runs launch_bench: its command line,
the run and its rows, and the CPU of the processes nobody waits for.
"""

import json
import shlex
import statistics
import subprocess
import sys

from bench_common import die, percentile, PLUGIN, reap_orphans, run_as


BENCH = "launch_bench"
# The short run before timing that checks every variant and the pool.
CHECK_RUNS, CHECK_WARMUP = 5, 1
# The runs with --only <variant> that find the CPU of the processes nobody waits for.
ORPHAN_RUNS, ORPHAN_WARMUP = 50, 5
ORPHAN_VARIANTS = ["bwrap", "cli", "host", "pool"]
BUILD_TARGETS = "sandbox-host launch_bench backend_namespaces backend_off op_ping"

SANDBOX_HOST_ISOLATION = (
    "user, mount, pid, net (loopback up), ipc, uts (hostname `sandbox`) and cgroup "
    "namespaces; pid 1 is its own init; a tmpfs root: `/usr` read-only, the root's symlinks "
    "into it, {etc} read-only `/etc` entries, `/proc` (`subset=pid`), a minimal `/dev` (6 "
    "host devices + `shm`), tmpfs `/tmp`, the socket/tmp directory, the plugin binary; no "
    "capabilities, no_new_privs, the default seccomp filter")

# key (launch_bench's name), label, what runs on the measured path, isolation.
VARIANTS = [
    ("bare", f"bare `{PLUGIN}`",
     f"`posix_spawn` of `{PLUGIN}`",
     "nothing"),
    ("unshare", f"`unshare -Urmpfn {PLUGIN}`",
     "`posix_spawn` of util-linux `unshare`, which forks the plugin and waits for it",
     "user (uid 0 mapped), mount (a copy of the host's whole tree), pid, net; no "
     "uts/ipc/cgroup namespace, no new root, no no_new_privs, no seccomp"),
    ("bwrap", "bubblewrap (command below)",
     "`posix_spawn` of bubblewrap with the isolation of the backend that bwrap has flags for",
     "user, pid (bwrap is pid 1), net (loopback up), ipc, uts, mount with a new tmpfs root: "
     "`/usr` read-only, the root's symlinks into it, fresh `/proc`, minimal `/dev`, tmpfs "
     "`/tmp`; no_new_privs, no capabilities, own session, dies with its parent; no cgroup "
     "namespace, no seccomp filter, no `/etc`, hostname unchanged"),
    ("cli", f"`sandbox-host run -- {PLUGIN}` (one-shot CLI)",
     "`posix_spawn` of the staged `sandbox-host`: its start-up, config, module load, the "
     "backend probe (a forked child that creates user, mount, pid and uts namespaces and "
     "mounts a tmpfs), a private socket/tmp directory made and removed, then stage 1 (a "
     "re-exec of `sandbox-host`) sets the whole sandbox up",
     None),
    ("host", "**`Host::command()` + `spawn()`** (long-running host, no pool)",
     "in the bench process, which loaded the config and the module and ran the probe once, "
     "before the first round: the Spec check and launch command, then stage 1 (a re-exec of "
     "the bench binary) sets the whole sandbox up; the socket/tmp directory is made once "
     "for all runs",
     None),
    ("pool", "**`SandboxPool::launch()`** (long-running host, prepared sandbox)",
     "in the bench process: the Spec check, then the Spec and the plugin's stdio go over a "
     "socket to a stage 1 started before the launch, whose init has its namespaces and the "
     "Spec-independent part of the tree (tmpfs root, `/usr`, symlinks, `/etc`, `/proc`, "
     "`/dev`, `/tmp`; loopback up, hostname set) ready; the init mounts the socket/tmp "
     "directory and the plugin binary, pivots into the tree, drops its capabilities, sets "
     "no_new_privs, loads the seccomp filter and starts the plugin",
     None),
]


# ---- launch_bench ---------------------------------------------------------------------------

def bench_argv(bench, exe, runs, warmup, pause_ms, bwrap, only=None):
    return [str(bench), "--runs", str(runs), "--warmup", str(warmup), "--pause-ms",
            str(pause_ms), "--sandbox-host", str(exe), *(["--only", only] if only else []),
            "--bwrap", *bwrap]


# ---- the processes nobody waits for ---------------------------------------------------------
#
# A sandbox's init (and bubblewrap's pid 1) is never waited for by the process that started
# it: it is orphaned, so the CPU it and the plugin it reaped used is in no rusage the bench
# sees. As a child subreaper (bench_common.become_subreaper) this script inherits those
# orphans, reaps them once the bench has exited, and so can count their CPU (as its own
# children's, also for ForeignLoad).

def unwaited_cpu(prefix, bench, exe, env, cwd, pause_ms, bwrap):
    """Per variant of ORPHAN_VARIANTS, from a run with --only: (the children CPU the bench
    saw per run, the CPU of the orphans per launch). A run can end with a prepared sandbox
    the pool still holds (always, unless the pool launched last and its replacement had not
    started yet); a --only bare run measures that one, and it is subtracted."""
    def one(only):
        reap_orphans()
        data = run_bench(prefix, bench_argv(bench, exe, ORPHAN_RUNS, ORPHAN_WARMUP, pause_ms,
                                            bwrap, only), env, cwd, ORPHAN_RUNS, ORPHAN_WARMUP,
                         [only])
        count, cpu = reap_orphans()
        return data["variants"][only]["cpu_seconds"] / ORPHAN_RUNS, count, cpu
    _, base_count, base_cpu = one("bare")
    launches = ORPHAN_RUNS + ORPHAN_WARMUP
    result = {}
    if base_count != 1:
        die(f"--only bare: {base_count} orphaned processes, want 1 (the pool's prepared sandbox)")
    for key in ORPHAN_VARIANTS:
        waited, count, cpu = one(key)
        if count == launches + base_count:
            cpu -= base_cpu
        elif count != launches:
            die(f"--only {key}: {count} orphaned processes for {launches} launches, want one per "
                "launch (and the pool's prepared sandbox)")
        result[key] = (waited * 1e3, cpu / launches * 1e3)
    return result


def run_bench(prefix, argv, env, cwd, runs, warmup, variants=None):
    """Runs launch_bench; returns its JSON, checked: every variant with `runs` times, and the
    pool launched every one of its runs + warmup launches in a prepared sandbox (when the
    pool variant ran)."""
    # A round is six launches of at most ~20 ms each plus the pauses and the pool's refill.
    timeout = 120 + (runs + warmup) * 2
    print("running:", shlex.join(prefix + argv), file=sys.stderr)
    try:
        r = subprocess.run(prefix + argv, env=env, cwd=cwd, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        die(f"{BENCH} did not finish within {timeout} s")
    if r.returncode != 0:
        die(f"{BENCH} exited {r.returncode}:\n{r.stderr.strip()}")
    try:
        data = json.loads(r.stdout)
    except json.JSONDecodeError as e:
        die(f"{BENCH} printed no valid JSON ({e}):\n{r.stdout[:2000]}")
    for key in variants or [key for key, *_ in VARIANTS]:
        variant = data.get("variants", {}).get(key)
        if variant is None or len(variant.get("ns", [])) != runs:
            die(f"{BENCH}'s JSON has no {runs} times for the variant {key!r}")
    pool = data.get("pool", {})
    want = runs + warmup if "pool" in (variants or ["pool"]) else 0
    if (pool.get("prepared_launches") != want or pool.get("cold_launches") != 0
            or pool.get("failed") != 0):
        die(f"the pool did not launch in prepared sandboxes: {pool.get('prepared_launches')} "
            f"prepared launches (want {want}), {pool.get('cold_launches')} cold ones (want 0), "
            f"{pool.get('failed')} prepared sandboxes failed (want 0); see the audit records "
            f"in {BENCH}'s stderr:\n{r.stderr.strip()}")
    return data


def sandbox_etc_mounts(prefix, exe, env, cwd):
    """How many mounts below /etc a prepared sandbox has (the backend binds those of its
    /etc list that exist on this host)."""
    probe = "cut -d' ' -f5 /proc/self/mountinfo | grep -c '^/etc/'"
    r = run_as(prefix, [str(exe), "run", "--prepared", "--", "/bin/sh", "-c", probe], env, cwd)
    if r.returncode != 0 or not r.stdout.strip().isdigit():
        die(f"counting the sandbox's /etc mounts failed (exit {r.returncode}): "
            f"{r.stderr.strip() or r.stdout.strip()}")
    return int(r.stdout.strip())


def rows_of(data, runs):
    rows = []
    for key, label, what, isolation in VARIANTS:
        variant = data["variants"][key]
        ms = [ns / 1e6 for ns in variant["ns"]]
        rows.append({"key": key, "label": label, "median_ms": statistics.median(ms),
                     "p10_ms": percentile(ms, 0.10), "p90_ms": percentile(ms, 0.90),
                     "mean_ms": statistics.fmean(ms), "stddev_ms": statistics.stdev(ms),
                     "cpu_ms": variant["cpu_seconds"] / runs * 1e3})
    return rows
