#!/usr/bin/env python3
"""A long-running host's launches under the namespaces backend, as an unprivileged user:
SandboxPool::launch() (a sandbox prepared before the launch) and Host::command() + spawn()
beside the one-shot CLI, a bare spawn, `unshare -Urmpfn` and bubblewrap, all measured by ONE
launch_bench process, interleaved round-robin; rewrites the launch-bench section of
docs/benchmarks.md.

Usage, from the repository root after building into build-bench (--build defaults to build):
    python3 bench/launch_report.py --build build-bench [--runs 300] [--warmup 30]
                                   [--pause-ms 5]

Run as root, it copies the build's sandbox-host, launch_bench and modules to a
world-readable temporary directory (<tmp>/bin/, <tmp>/lib/sandbox-host/modules/) and runs
launch_bench as --user (default 65534, nobody) through `setpriv`. Run as anyone else, it
runs it as that user. The `cli` variant runs that copy of sandbox-host.

Before timing it checks, as the same user, that the sandbox is what it should be (cold and
prepared), that every variant runs, and that the pool really launched in prepared sandboxes.

Only the text between the launch-bench begin/end markers is rewritten; the section is
appended when the markers are missing. The other sections are kept.

With --backend landlock it measures the landlock backend instead (the degraded fallback
where user namespaces do not work): launch_bench with CLAWPATROL_SANDBOX_BACKEND=landlock,
the variants bare, cli, host and pool only (unshare and bubblewrap are peers of the
namespaces backend), each against the target of at most 1.5 x a bare spawn; it rewrites its
own landlock-bench section:
    python3 bench/launch_report.py --backend landlock --build build-bench [--runs 300] ...
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_common import (BACKEND_ENV, DOCS, PLUGIN, REPO, add_run_arguments, become_subreaper,
                          bwrap_argv, die, display_path, launch_env, load_average, machine,
                          machine_lines, output_of, percentile, provenance_and_reproduce,
                          quietly, reap_orphans, run_as, runner, source_revision, stage_build,
                          user_dir, verify_sandbox, write_section)

BEGIN = "<!-- launch-bench:begin -->"
END = "<!-- launch-bench:end -->"
TARGET_RATIO = 0.5
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


# ---- the section ----------------------------------------------------------------------------

def target_line(name, row, bwrap_row):
    ratio = row["median_ms"] / bwrap_row["median_ms"]
    limit = TARGET_RATIO * bwrap_row["median_ms"]
    if ratio <= TARGET_RATIO:
        verdict = f"**met** ({limit - row['median_ms']:.2f} ms to spare)"
    else:
        verdict = (f"**not met**; it would have to be {row['median_ms'] - limit:.2f} ms faster "
                   f"per launch (at most {limit:.3f} ms)")
    return (f"- {name}: median ratio vs. bubblewrap **{ratio:.2f}** ({row['median_ms']:.3f} ms / "
            f"{bwrap_row['median_ms']:.3f} ms; mean ratio "
            f"{row['mean_ms'] / bwrap_row['mean_ms']:.2f}). Target ≤ {TARGET_RATIO}: {verdict}.")


def render(rows, pool_stats, orphans, unwaited, ran, prefix, verify_cold, verify_prepared,
           etc_mounts, bwrap, env_info, busy_before, foreign, attempts, load_before, load_after,
           uid, args, versions, sizes, revision):
    by_key = {r["key"]: r for r in rows}
    bare, bwrap_row = by_key["bare"], by_key["bwrap"]
    pool, host, cli = by_key["pool"], by_key["host"], by_key["cli"]
    who = f"uid {uid}, `nobody`" if prefix and uid == 65534 else \
        f"uid {uid}" if prefix else f"uid {os.geteuid()}"
    order = ", ".join(f"`{key}`" for key, *_ in VARIANTS)
    isolation = SANDBOX_HOST_ISOLATION.format(etc=etc_mounts)
    out = [BEGIN, "",
           "## A long-running host's launches: prepared sandboxes (`SandboxPool`) vs. cold "
           "launches, `unshare` and bubblewrap (unprivileged)", ""]
    out += [
        f"A sandboxed `{PLUGIN}` from spawn to exit, six ways, all measured by ONE process",
        f"(`bench/launch_bench.cpp`) run by an unprivileged user ({who}). The rounds are",
        "interleaved, so that all variants share the machine's conditions: each round measures",
        f"every variant once, in this order: {order};",
        f"{args.runs} rounds after {plural(args.warmup, 'warm-up round')}. Before every "
        "measurement the process",
        "waits, untimed, until the pool's replacement sandbox is ready and then sleeps "
        f"{args.pause_ms} ms, so",
        "that no variant's background work lands in another's measurement. A measurement is",
        "the wall time (`steady_clock`) from just before the variant's first call",
        "(`posix_spawn`, `Host::command()`, `SandboxPool::launch()`) to the return of the",
        "wait for the process it started.",
        "",
        "| variant | what it is | median | p10 … p90 | mean ± σ | CPU per run | median vs. bare | median vs. bubblewrap |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| `{r['key']}` | {r['label']} | {r['median_ms']:.3f} ms | "
            f"{r['p10_ms']:.2f} … {r['p90_ms']:.2f} ms | "
            f"{r['mean_ms']:.3f} ± {r['stddev_ms']:.3f} ms | {r['cpu_ms']:.2f} ms | "
            f"{r['median_ms'] / bare['median_ms']:.2f}× | "
            f"{r['median_ms'] / bwrap_row['median_ms']:.2f}× |")
    saved = host["median_ms"] - pool["median_ms"]
    out += [
        "",
        f"The project's target is a median ratio sandbox-host / bubblewrap of at most "
        f"{TARGET_RATIO}:",
        "",
        target_line("**prepared sandbox (`pool`)**", pool, bwrap_row),
        target_line("cold launch in a long-running host (`host`)", host, bwrap_row),
        target_line("cold launch by the one-shot CLI (`cli`)", cli, bwrap_row),
        "",
        f"The prepared sandbox takes {saved:.2f} ms ({saved / host['median_ms']:.0%}) off the "
        f"median of a cold launch in the same process (`host`), and "
        f"{cli['median_ms'] - pool['median_ms']:.2f} ms off the one-shot CLI's.",
        "",
        "### How to read it",
        "",
        "- **`pool`'s time excludes preparing the sandbox.** Re-executing the binary for",
        "  stage 1, loading the backend, creating the namespaces and mounting the",
        "  Spec-independent part of the tree happen before the launch, in the background (the",
        "  pool starts a replacement after each launch); between measurements the bench waits,",
        "  untimed, until that replacement is ready. What `pool` measures is what a host",
        "  waits for per launch while a prepared sandbox is ready. A launch that finds none",
        "  ready (launches faster than the pool prepares them, or a sandbox older than the",
        "  pool's `max_idle`, 30 s, which is replaced, not used) waits for the one being",
        "  prepared, or after `ready_timeout` (5 s) runs cold: roughly `host`'s time or more.",
        "- **CPU per run** is the bench process's children CPU (`getrusage(RUSAGE_CHILDREN)`,",
        "  user + system) gained across the measurement, divided by the runs: the processes the",
        "  bench reaped in that measurement and the descendants *they* waited for. For `pool`",
        "  that includes stage 1's part of its sandbox's preparation (the re-exec of the bench",
        "  binary, the module load, creating the namespaces), done before the timed launch,",
        "  because stage 1 is the process reaped at the end of the launch. It does not include",
        "  the sandbox's init or the plugin, for `pool`, `host` and `cli` alike: the init",
        "  reports the plugin's status to stage 1 through a pipe and stays until stage 1 has",
        "  exited (its parent-death signal then ends it), so stage 1 never waits for it. So the",
        "  init's work (the mount tree, the capability drop, the seccomp filter; for `pool`",
        "  also its part of the preparation), the plugin's CPU and the kernel's tear-down of",
        "  the namespaces after the exit are in no CPU column of the table, and the tear-down",
        "  is in no wall time either: nobody waits for it. The same holds for bubblewrap, whose",
        "  outer process exits on the status its pid 1 reports without waiting for it. `bare`",
        "  and `unshare` (which waits for its child) are complete. The table's CPU column is",
        "  therefore a lower bound for `bwrap`, `cli`, `host` and `pool`; the next table adds",
        "  what is missing.",
        "- `host` and `pool` run inside the long-running bench process (`launch_bench`, "
        f"{sizes['launch_bench']}",
        f"  on disk, against `sandbox-host`'s {sizes['sandbox-host']}; both RelWithDebInfo),",
        "  and the backend re-executes that process's binary (`/proc/self/exe`) for stage 1, as",
        "  it would a real host's. The bench loaded the config and the backend module and ran",
        "  the backend probe once, before the first round; `cli` pays all three per launch.",
        "",
        "### All the CPU of a launch",
        "",
        "The processes nobody waits for (each sandbox's init, bubblewrap's pid 1) are orphans;",
        "this script makes itself a child subreaper (`PR_SET_CHILD_SUBREAPER`), so they become",
        "its children instead of the machine's init's, and reaps them after the bench has",
        "exited. Their rusage includes the plugin each of them reaped; the kernel threads'",
        "work for them (the network namespace's clean-up, RCU) is still in no column. Per",
        "variant, from separate runs of the same bench with `--only <variant>` "
        f"({ORPHAN_RUNS} rounds",
        f"after {ORPHAN_WARMUP}; per launch over all {ORPHAN_RUNS + ORPHAN_WARMUP} launches, "
        "less the prepared sandbox",
        "the pool may still hold at the end, measured by a `--only bare` run). A variant run",
        "alone is not in the interleaved table's conditions, so its waited-for CPU differs",
        "from that table's; compare within this one:",
        "",
        "| variant | CPU the bench waited for, per run | CPU of the orphans (init or pid 1, and the plugin), per launch | total per launch |",
        "|---|---|---|---|",
    ]
    for key in ORPHAN_VARIANTS:
        waited, lost = unwaited[key]
        out.append(f"| `{key}` | {waited:.2f} ms | {lost:.2f} ms | {waited + lost:.2f} ms |")
    count, cpu = orphans
    rounds = args.runs + args.warmup
    total = {key: sum(unwaited[key]) for key in ORPHAN_VARIANTS}
    out += [
        "",
        f"All counted, a launch through the pool used {total['pool']:.2f} ms of CPU in these "
        f"runs, a cold one in the",
        f"same process (`host`) {total['host']:.2f} ms: the pool moves the preparation off "
        "the launch's wait"
        + (", it does not save that work." if total["pool"] >= total["host"] else "."),
        "",
        f"In the timed run above, {count} orphans (one per launch of `bwrap`, `cli`, `host` "
        "and `pool`"
        + (", and the sandbox the pool held at the end" if count == 4 * rounds + 1 else "")
        + f")",
        f"used {cpu * 1e3:.0f} ms of CPU, {cpu / rounds * 1e3:.2f} ms per round of all six "
        "variants.",
        "",
        "### What each variant runs and isolates",
        "",
        "| variant | on the measured path | isolation |",
        "|---|---|---|",
    ]
    for key, label, what, iso in VARIANTS:
        out.append(f"| `{key}` | {what} | "
                   f"{iso if iso is not None else 'the namespaces backend, below'} |")
    out += ["", "The namespaces backend, the same for `cli`, `host` and `pool` (checked below): "
            + isolation + "."]
    same = verify_cold == verify_prepared
    out += [
        "",
        "sandbox-host does more than this bubblewrap command (the `/etc` binds, the seccomp",
        "filter, the cgroup namespace, its own init); the ratios are the cost of the backend",
        "as it is, not of identical work.",
        "",
        "### Exactly what ran",
        "",
        f"`{BACKEND_ENV}=namespaces` is in the bench's environment (read by the bench's own",
        "Host and by the `cli` sandbox-host; the other commands ignore it), which is the",
        "caller's without its other `CLAWPATROL_*` variables and `TMPDIR`, with",
        "`HOME=<tmp>/out` and `LC_ALL=C`. `sandbox-host`, `launch_bench` and the modules are",
        "copies of the build's in a world-readable temporary directory `<tmp>`",
        "(`<tmp>/bin/`, `<tmp>/lib/sandbox-host/modules/*.so`), so the unprivileged user can",
        "run them; the bench finds its modules where `sandbox-host` does. The script is a child",
        "subreaper throughout, so the orphaned inits are reaped by it (after the bench) rather",
        "than by the machine's init:",
        "",
        "```sh",
    ]
    split = ran.index("--bwrap") + 1
    out.append(f"{BACKEND_ENV}=namespaces " + shlex.join(prefix + ran[:split]) + " \\")
    out.append("  " + shlex.join(ran[split:]))
    out += [
        "```",
        "",
        "The bubblewrap command is namespaces_report.py's; its symlinks are the root's own",
        "(`readlink /bin` …, only those whose target exists here): " + ", ".join(
            f"`{bwrap[i + 2]} -> {bwrap[i + 1]}`" for i in range(len(bwrap))
            if bwrap[i] == "--symlink") + ".",
        "",
        f"Checked before timing, as the same user: a short run of the bench ({CHECK_RUNS} rounds "
        f"after {plural(CHECK_WARMUP, 'warm-up round')}:",
        f"every variant exits 0, and all {CHECK_RUNS + CHECK_WARMUP} pool launches ran in "
        "prepared sandboxes),",
        f"and `sandbox-host run -- {PLUGIN}` and `sandbox-host run --prepared -- {PLUGIN}` exit 0;",
        f"after it, the timed run's pool counters: {pool_counts(pool_stats)}. "
        "Inside the sandbox",
        "`/bin/sh -c` sees (whitespace squeezed; "
        + ("the same cold and prepared" if same else "prepared; differs from the cold one")
        + f"; {etc_mounts} mounts below `/etc`):",
        "",
        "```",
        *verify_prepared,
        "```",
    ]
    if not same:
        out += ["", "Cold (`sandbox-host run --`):", "", "```", *verify_cold, "```"]
    out += [
        "",
        *machine_lines(env_info),
        f"- CPUs busy (all cores, /proc/stat) in the second before the run: {busy_before:.0%};"
        f" CPU time used by anything but the bench and its descendants (the orphans"
        f" included) during the timed run and the `--only` runs: {foreign:.1%} of the"
        f" machine (kernel threads working for the sandboxes included; the least disturbed"
        f" of {plural(attempts, 'attempt')}, at most {args.attempts}); load average before /"
        f" after the timed run:"
        f" {load_before} / {load_after}",
    ]
    if foreign > args.max_foreign:
        out.append(f"- note: that is more than the {args.max_foreign:.0%} this script accepts "
                   f"as quiet, in the least disturbed of {attempts} attempts; the times are "
                   "noisier than on an idle machine, and the medians are the numbers to compare")
    out += provenance_and_reproduce(
        revision, args.build, versions, f"cmake --build build-bench -j2 --target {BUILD_TARGETS}",
        f"python3 bench/launch_report.py --build {display_path(args.build)} "
        f"--runs {args.runs} --warmup {args.warmup} --pause-ms {args.pause_ms}")
    out += [
        END,
    ]
    return "\n".join(out) + "\n"


def plural(n, word):
    return f"{n} {word}" + ("" if n == 1 else "s")


def pool_counts(stats):
    return (f"{stats['prepared_launches']} prepared launches, {stats['cold_launches']} cold, "
            f"{stats['failed']} failed")


def size_of(path):
    size = path.stat().st_size
    return f"{size / 2**20:.1f} MiB"


# ---- the landlock backend -------------------------------------------------------------------
#
# Landlock has no namespaces: stage 1 restricts itself (Landlock ruleset, capabilities,
# no_new_privs, seccomp) and execs the plugin, which is then the launcher's own child. So
# there is no init nobody waits for, and the CPU column is complete; and the peers of the
# namespaces backend (unshare, bubblewrap) isolate with namespaces, which this does not.

LANDLOCK_BEGIN = "<!-- landlock-bench:begin -->"
LANDLOCK_END = "<!-- landlock-bench:end -->"
LANDLOCK_TARGET_RATIO = 1.5  # median vs. a bare spawn of the same binary, per variant
LANDLOCK_BUILD_TARGETS = ("sandbox-host launch_bench backend_namespaces backend_landlock "
                          "backend_off op_ping")

LANDLOCK_ISOLATION = (
    "a Landlock ruleset (ABI {abi}) handling every file right of that ABI and, with network "
    "`none`, TCP bind/connect and the abstract-unix-socket and signal scopes: read and "
    "execute of the system directories and the plugin binary, read of {etc} `/etc` entries, read and "
    "write of 6 devices, read of its own `/proc/<pid>`, every right in the socket/tmp "
    "directory; no capabilities, "
    "no_new_privs, the default seccomp filter plus System V IPC and POSIX message queues and "
    "`socket(2)` refused for every family but "
    "`AF_UNIX`; no namespaces (the host's pids, file metadata, hostname and unix sockets "
    "by path stay reachable: the probe's warning)")

# key (launch_bench's name), label, what runs on the measured path.
LANDLOCK_VARIANTS = [
    ("bare", f"bare `{PLUGIN}`", f"`posix_spawn` of `{PLUGIN}`"),
    ("cli", f"`sandbox-host run -- {PLUGIN}` (one-shot CLI)",
     "`posix_spawn` of the staged `sandbox-host`: its start-up, config, module load, the "
     "backend probe (the landlock probe is a system call, no child), a private socket/tmp "
     "directory made and removed, then stage 1 (a re-exec of `sandbox-host`) loads the "
     "module, builds and enforces the ruleset, drops capabilities, loads the filter and "
     "execs the plugin"),
    ("host", "**`Host::command()` + `spawn()`** (long-running host, no pool)",
     "in the bench process, which loaded the config and the module and ran the probe once, "
     "before the first round: the Spec check and launch command, then stage 1 (a re-exec of "
     "the bench binary) does all of the sandbox's set-up and execs the plugin; the "
     "socket/tmp directory is made once for all runs"),
    ("pool", "**`SandboxPool::launch()`** (long-running host, prepared sandbox)",
     "in the bench process: the Spec check, then the Spec and the plugin's stdio go over a "
     "socket to a stage 1 started before the launch, which has loaded the module, created "
     "the ruleset with the system's rules, dropped its capabilities and loaded the filter; "
     "it adds the Spec's rules (socket/tmp directory, plugin binary), enforces the ruleset "
     "and execs the plugin"),
]
LANDLOCK_KEYS = [key for key, *_ in LANDLOCK_VARIANTS]

# Seen from inside: what Landlock refuses that a namespace sandbox would have (its own /proc,
# a root to list) or that the host has (a /tmp to write), and what it grants.
LANDLOCK_INSIDE = (
    "cat /proc/self/status >/dev/null 2>&1 && echo 'proc: readable' || echo 'proc: not granted'; "
    "ls / >/dev/null 2>&1 && echo 'root: listable' || echo 'root: not granted'; "
    "f=/tmp/.landlock-bench-$$; (: > $f) 2>/dev/null && { rm -f $f; echo 'host /tmp: writable'; } "
    "|| echo 'host /tmp: not granted'; "
    "echo x > /dev/null && echo 'dev-null: writable'; "
    "echo \"hostname: $(hostname)\"")
LANDLOCK_INSIDE_WANT = {"proc": "not granted", "root": "not granted",
                        "host /tmp": "not granted", "dev-null": "writable"}


def kernel_landlock_abi():
    """The running kernel's Landlock ABI (landlock_create_ruleset's version query), 0 without."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    sys_landlock_create_ruleset = 444  # the same on every architecture
    abi = libc.syscall(sys_landlock_create_ruleset, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(abi, 0)


def verify_landlock(prefix, exe, env, cwd, run_options=()):
    """Before any timing: `run -- /bin/true` exits 0; a shell inside finds /proc, the root
    and the host's /tmp refused and the host's name (no uts namespace); and from outside, the
    plugin (sandbox-host's own child) has NoNewPrivs 1, Seccomp 2, CapEff 0. Returns the
    lines to quote."""
    run = [str(exe), "run", *run_options, "--"]
    r = run_as(prefix, run + [PLUGIN], env, cwd)
    if r.returncode != 0:
        die(f"`sandbox-host {' '.join(run[1:])} {PLUGIN}` exited {r.returncode}: "
            f"{r.stderr.strip()}")
    r = run_as(prefix, run + ["/bin/sh", "-c", LANDLOCK_INSIDE], env, cwd)
    if r.returncode != 0:
        die(f"sandbox-host {' '.join(run[1:])} /bin/sh exited {r.returncode}: {r.stderr.strip()}")
    lines = r.stdout.splitlines()
    fields = dict(line.split(": ", 1) for line in lines if ": " in line)
    want = dict(LANDLOCK_INSIDE_WANT, hostname=os.uname().nodename)
    for key, value in want.items():
        if fields.get(key) != value:
            die(f"the plugin is not under Landlock as expected: {key} is {fields.get(key)!r}, "
                f"want {value!r}:\n{r.stdout}")
    # From outside: the plugin's /proc entry, while it sleeps (exec keeps the shell's pid).
    launcher = subprocess.Popen(
        prefix + run + ["/bin/sh", "-c", "echo $$; exec /bin/sleep 2"], env=env, cwd=cwd,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        pid = int(launcher.stdout.readline().strip() or 0)
        status = {}
        if pid > 0:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                key, _, value = line.partition(":")
                status[key] = " ".join(value.split())
            parent = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
        launcher.wait(timeout=30)
    except (OSError, ValueError, subprocess.TimeoutExpired) as e:
        launcher.kill()
        launcher.wait()
        die(f"looking at the sandboxed plugin from outside failed: {e}")
    outside = {"NoNewPrivs": "1", "Seccomp": "2", "CapEff": "0000000000000000"}
    for key, value in outside.items():
        if status.get(key) != value:
            die(f"the plugin is not sandboxed as expected: {key} is {status.get(key)!r}, "
                f"want {value!r}")
    if int(parent) != launcher.pid:
        die(f"the plugin's parent is {parent}, not sandbox-host ({launcher.pid})")
    lines += [f"{key} (from outside): {status[key]}" for key in ("Uid", *outside, "CapBnd")]
    lines.append("parent (from outside): sandbox-host run itself")
    return lines


def landlock_bench_argv(bench, exe, runs, warmup, pause_ms, bwrap):
    """launch_bench with the variants of the landlock section only. launch_bench wants a
    bubblewrap command line whatever runs; --only keeps it (and unshare) from running."""
    only = [arg for key in LANDLOCK_KEYS for arg in ("--only", key)]
    return [str(bench), "--runs", str(runs), "--warmup", str(warmup), "--pause-ms",
            str(pause_ms), "--sandbox-host", str(exe), *only, "--bwrap", *bwrap]


def landlock_rows(data, runs):
    rows = []
    for key, label, _ in LANDLOCK_VARIANTS:
        variant = data["variants"][key]
        ms = [ns / 1e6 for ns in variant["ns"]]
        rows.append({"key": key, "label": label, "median_ms": statistics.median(ms),
                     "p10_ms": percentile(ms, 0.10), "p25_ms": percentile(ms, 0.25),
                     "p75_ms": percentile(ms, 0.75), "p90_ms": percentile(ms, 0.90),
                     "mean_ms": statistics.fmean(ms), "stddev_ms": statistics.stdev(ms),
                     "cpu_ms": variant["cpu_seconds"] / runs * 1e3})
    return rows


def landlock_verdict(row, bare):
    ratio = row["median_ms"] / bare["median_ms"]
    limit = LANDLOCK_TARGET_RATIO * bare["median_ms"]
    if ratio <= LANDLOCK_TARGET_RATIO:
        return ratio, f"**met** ({limit - row['median_ms']:.3f} ms to spare)"
    return ratio, (f"**not met**: {row['median_ms'] - limit:.3f} ms over (at most "
                   f"{limit:.3f} ms)")


def render_landlock(rows, pool_stats, orphans, ran, prefix, verify_cold, verify_prepared, abi,
                    etc_entries, env_info, busy_before, foreign, attempts, load_before,
                    load_after, uid, args, sizes, revision):
    by_key = {r["key"]: r for r in rows}
    bare = by_key["bare"]
    who = f"uid {uid}, `nobody`" if prefix and uid == 65534 else \
        f"uid {uid}" if prefix else f"uid {os.geteuid()}"
    order = ", ".join(f"`{key}`" for key in LANDLOCK_KEYS)
    out = [LANDLOCK_BEGIN, "",
           "## The landlock backend: spawn-to-exit vs. a bare spawn (unprivileged)", "",
           f"A Landlock-sandboxed `{PLUGIN}` from spawn to exit, against the same binary "
           "spawned bare, all measured by ONE",
           f"process (`bench/launch_bench.cpp` with `{BACKEND_ENV}=landlock`) run by an "
           f"unprivileged user ({who}), interleaved:",
           f"each round measures every variant once, in this order: {order}; {args.runs} "
           f"rounds after {plural(args.warmup, 'warm-up round')}.",
           "Before every measurement the process waits, untimed, until the pool's replacement "
           f"sandbox is ready and then sleeps {args.pause_ms} ms.",
           "A measurement is the wall time (`steady_clock`) from just before the variant's "
           "first call (`posix_spawn`,",
           "`Host::command()`, `SandboxPool::launch()`) to the return of the wait for the "
           "process it started. The",
           "landlock backend is the degraded fallback where user namespaces do not work; "
           "`unshare` and bubblewrap",
           "isolate with namespaces and are the namespaces backend's peers (its sections), so "
           "they are not run here.",
           "",
           f"The target: a median at most **{LANDLOCK_TARGET_RATIO} × bare**, per variant.",
           "",
           "| variant | what it is | median | p10 … p90 | p25 … p75 | mean ± σ | CPU per run | "
           f"median vs. bare | ≤ {LANDLOCK_TARGET_RATIO} × bare |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio, verdict = landlock_verdict(r, bare)
        target = "(the baseline)" if r is bare else ("met" if ratio <= LANDLOCK_TARGET_RATIO
                                                     else "not met")
        out.append(
            f"| `{r['key']}` | {r['label']} | {r['median_ms']:.3f} ms | "
            f"{r['p10_ms']:.2f} … {r['p90_ms']:.2f} ms | "
            f"{r['p25_ms']:.2f} … {r['p75_ms']:.2f} ms | "
            f"{r['mean_ms']:.3f} ± {r['stddev_ms']:.3f} ms | {r['cpu_ms']:.2f} ms | "
            f"{ratio:.2f}× | {target} |")
    met = [r["key"] for r in rows if r is not bare
           and r["median_ms"] / bare["median_ms"] <= LANDLOCK_TARGET_RATIO]
    missed = [r["key"] for r in rows if r is not bare and r["key"] not in met]
    out += ["", f"Target ≤ {LANDLOCK_TARGET_RATIO} × bare ({bare['median_ms']:.3f} ms, so at "
            f"most {LANDLOCK_TARGET_RATIO * bare['median_ms']:.3f} ms), per variant:", ""]
    for r in rows:
        if r is bare:
            continue
        ratio, verdict = landlock_verdict(r, bare)
        out.append(f"- `{r['key']}`: median ratio **{ratio:.2f}** ({r['median_ms']:.3f} ms / "
                   f"{bare['median_ms']:.3f} ms; mean ratio "
                   f"{r['mean_ms'] / bare['mean_ms']:.2f}): {verdict}.")
    out += ["",
            "Met by " + (", ".join(f"`{k}`" for k in met) if met else "no variant") + "; not "
            "met by " + (", ".join(f"`{k}`" for k in missed) if missed else "none") + ".",
            "",
            "### How to read it",
            "",
            "- **`pool`'s time excludes preparing the sandbox**: re-executing the binary for "
            "stage 1, loading the",
            "  backend module, creating the ruleset with the system's rules, dropping the "
            "capabilities and loading",
            "  the seccomp filter happen before the launch, in the background; between "
            "measurements the bench",
            "  waits, untimed, until the replacement is ready. What `pool` measures is what a "
            "host waits for per",
            "  launch while a prepared sandbox is ready: the Spec over a socket, the Spec's "
            "rules, `landlock_restrict_self`",
            "  and the exec of the plugin in the prepared process. A launch that finds none "
            "ready pays `host`'s time or more.",
            "- **CPU per run** is the bench process's children CPU (`getrusage(RUSAGE_CHILDREN)`, "
            "user + system) gained",
            "  across the measurement, divided by the runs. Without namespaces there is no init "
            "nobody waits for:",
            "  the plugin is the process stage 1 became, and the bench (for `cli`, "
            "`sandbox-host run`) waits for it,",
            "  so the column is complete. For `pool` it includes that process's preparation, "
            "done before the timed",
            "  launch (the process reaped at its end is the one that prepared).",
            "- `host` and `pool` run inside the long-running bench process (`launch_bench`, "
            f"{sizes['launch_bench']} on disk, against",
            f"  `sandbox-host`'s {sizes['sandbox-host']}; both RelWithDebInfo), and stage 1 "
            "re-executes that process's binary",
            "  (`/proc/self/exe`); `cli` pays `sandbox-host`'s start-up, config, module load and "
            "probe per launch, and its",
            "  stage 1 a second start-up.",
            ]
    count, cpu = orphans
    out += ["", f"Processes nobody waited for (reaped by this script, a child subreaper, after "
            f"the timed run): {count}"
            + (" (the prepared sandbox the pool still held at the end)" if count == 1 else "")
            + f", {cpu * 1e3:.1f} ms of CPU.",
            "",
            "### What each variant runs",
            "",
            "| variant | on the measured path |",
            "|---|---|"]
    for key, _, what in LANDLOCK_VARIANTS:
        out.append(f"| `{key}` | {what} |")
    out += ["", "Isolation of `cli`, `host` and `pool` (the landlock backend, network `none`): "
            + LANDLOCK_ISOLATION.format(abi=abi, etc=etc_entries) + ".",
            "",
            "### Exactly what ran",
            "",
            f"`{BACKEND_ENV}=landlock` is in the bench's environment (read by the bench's own "
            "Host and by the `cli`",
            "sandbox-host), which is the caller's without its other `CLAWPATROL_*` variables and "
            "`TMPDIR`, with",
            "`HOME=<tmp>/out` and `LC_ALL=C`. `sandbox-host`, `launch_bench` and the modules are "
            "copies of the build's in",
            "a world-readable temporary directory `<tmp>`. launch_bench wants a bubblewrap "
            "command line whatever",
            "it runs; `--only` keeps bubblewrap and `unshare` from running:",
            "",
            "```sh"]
    split = ran.index("--bwrap") + 1
    out.append(f"{BACKEND_ENV}=landlock " + shlex.join(prefix + ran[:split]) + " \\")
    out.append("  " + shlex.join(ran[split:]))
    same = verify_cold == verify_prepared
    out += ["```", "",
            f"Checked before timing, as the same user: a short run of the bench ({CHECK_RUNS} "
            f"rounds after {plural(CHECK_WARMUP, 'warm-up round')}: every variant exits 0, and "
            f"all {CHECK_RUNS + CHECK_WARMUP} pool launches ran in prepared sandboxes), "
            f"`sandbox-host run -- {PLUGIN}` and `sandbox-host run --prepared -- {PLUGIN}` "
            f"exit 0; after it, the timed run's pool counters: {pool_counts(pool_stats)}. "
            "A `/bin/sh -c` in the sandbox, and the host looking at its `/proc` entry, see ("
            + ("the same cold and prepared" if same else "prepared; differs from the cold one")
            + "):",
            "",
            "```",
            *verify_prepared,
            "```"]
    if not same:
        out += ["", "Cold (`sandbox-host run --`):", "", "```", *verify_cold, "```"]
    out += [
        "",
        *machine_lines(env_info, f"; Landlock ABI {abi}"),
        f"- CPUs busy (all cores, /proc/stat) in the second before the run: {busy_before:.0%};"
        f" CPU time used by anything but the bench and its descendants during the timed run:"
        f" {foreign:.1%} of the machine (the least disturbed of"
        f" {plural(attempts, 'attempt')}, at most {args.attempts}); load average before /"
        f" after the timed run: {load_before} / {load_after}",
    ]
    if foreign > args.max_foreign:
        out.append(f"- note: that is more than the {args.max_foreign:.0%} this script accepts "
                   f"as quiet, in the least disturbed of {attempts} attempts; the times are "
                   "noisier than on an idle machine, and the medians are the numbers to compare")
    out += provenance_and_reproduce(
        revision, args.build, [],
        f"cmake --build build-bench -j2 --target {LANDLOCK_BUILD_TARGETS}",
        f"python3 bench/launch_report.py --backend landlock --build {display_path(args.build)} "
        f"--runs {args.runs} --warmup {args.warmup} --pause-ms {args.pause_ms}")
    out.append(LANDLOCK_END)
    return "\n".join(out) + "\n"


def main_landlock(args):
    prefix = runner(args.user)
    env_info = machine()
    abi = kernel_landlock_abi()
    if abi < 1:
        die("the kernel has no Landlock (landlock_create_ruleset answers no ABI)")
    bwrap = bwrap_argv()
    become_subreaper()
    with tempfile.TemporaryDirectory(prefix="launch-bench-") as tmp_name:
        tmp = Path(tmp_name)
        tmp.chmod(0o755)
        stage = tmp / "stage"
        exe = stage_build(args.build, stage, required=(BENCH,), optional=())
        if not (stage / "lib" / "sandbox-host" / "modules" / "backend_landlock.so").exists():
            die(f"{args.build}: no backend_landlock.so; build the target backend_landlock first")
        bench = stage / "bin" / BENCH
        sizes = {name: size_of(stage / "bin" / name) for name in ("sandbox-host", BENCH)}
        out_dir = user_dir(tmp / "out", args.user)
        env = dict(launch_env(out_dir), **{BACKEND_ENV: "landlock"})
        cwd = str(stage)

        verify_cold = verify_landlock(prefix, exe, env, cwd)
        verify_prepared = verify_landlock(prefix, exe, env, cwd, ["--prepared"])
        etc_entries = sum(1 for entry in LANDLOCK_ETC_ENTRIES if Path(entry).exists())
        run_bench(prefix, landlock_bench_argv(bench, exe, CHECK_RUNS, CHECK_WARMUP,
                                              args.pause_ms, bwrap),
                  env, cwd, CHECK_RUNS, CHECK_WARMUP, LANDLOCK_KEYS)
        argv = landlock_bench_argv(bench, exe, args.runs, args.warmup, args.pause_ms, bwrap)

        def measure():
            reap_orphans()  # the checks' prepared sandboxes
            load_before = load_average()
            data = run_bench(prefix, argv, env, cwd, args.runs, args.warmup, LANDLOCK_KEYS)
            orphans = reap_orphans()
            return load_before, load_average(), data, orphans

        (load_before, load_after, data, orphans), foreign, busy_before, attempts = \
            quietly(measure, args)
        ran = [c.replace(str(stage), "<tmp>") for c in argv]
    rows = landlock_rows(data, args.runs)
    section = render_landlock(rows, data["pool"], orphans, ran, prefix, verify_cold,
                              verify_prepared, abi, etc_entries, env_info, busy_before, foreign,
                              attempts, load_before, load_after, args.user, args, sizes,
                              source_revision())
    if args.no_write:
        print(section)
    else:
        write_section(section, LANDLOCK_BEGIN, LANDLOCK_END)
        print(f"wrote {DOCS}", file=sys.stderr)
    bare = rows[0]
    for r in rows:
        ratio = r["median_ms"] / bare["median_ms"]
        print(f"{r['key']:8} median {r['median_ms']:7.3f} ms  p10 {r['p10_ms']:7.3f}  "
              f"p90 {r['p90_ms']:7.3f}  cpu {r['cpu_ms']:6.2f} ms  {ratio:5.2f}x bare  "
              f"target {'met' if ratio <= LANDLOCK_TARGET_RATIO else 'NOT met'}",
              file=sys.stderr)


# The /etc entries the Linux backends grant (backends/common/.../system_paths.hpp).
LANDLOCK_ETC_ENTRIES = [
    "/etc/alternatives", "/etc/ca-certificates", "/etc/gai.conf", "/etc/group",
    "/etc/host.conf", "/etc/hosts", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
    "/etc/localtime", "/etc/nsswitch.conf", "/etc/os-release", "/etc/passwd", "/etc/protocols",
    "/etc/resolv.conf", "/etc/services", "/etc/ssl/certs", "/etc/ssl/openssl.cnf",
]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(REPO / "build"), type=Path,
                        help="build tree with bin/sandbox-host, bin/launch_bench and "
                             "lib/sandbox-host/modules (default: build)")
    parser.add_argument("--runs", type=int, default=300, help="measured rounds (default: 300)")
    parser.add_argument("--warmup", type=int, default=30,
                        help="rounds before those, not measured (default: 30)")
    parser.add_argument("--pause-ms", type=int, default=5,
                        help="sleep before each measurement, in ms (default: 5)")
    parser.add_argument("--backend", choices=["namespaces", "landlock"], default="namespaces",
                        help="namespaces (default): the launch-bench section against unshare "
                             "and bubblewrap; landlock: the landlock-bench section, bare, cli, "
                             "host and pool against the target of 1.5 x bare")
    add_run_arguments(parser)
    args = parser.parse_args()
    if args.runs < 2 or args.warmup < 0 or args.pause_ms < 0 or args.attempts < 1:
        parser.error("--runs must be at least 2, --attempts at least 1, --warmup and "
                     "--pause-ms not negative")
    if args.runs < 100 and not args.no_write:
        parser.error("--runs must be at least 100 to write docs/benchmarks.md (use --no-write "
                     "to try fewer)")
    args.build = args.build.resolve()
    return args


def main():
    args = parse_args()
    if args.backend == "landlock":
        return main_landlock(args)
    prefix = runner(args.user)
    env_info = machine()
    bwrap = bwrap_argv()
    become_subreaper()
    if output_of(["bwrap", "--version"]) is None:
        die("bubblewrap (`bwrap`) is not installed or does not run")
    if output_of(["unshare", "--version"]) is None:
        die("util-linux `unshare` is not installed")
    with tempfile.TemporaryDirectory(prefix="launch-bench-") as tmp_name:
        tmp = Path(tmp_name)
        tmp.chmod(0o755)
        stage = tmp / "stage"
        exe = stage_build(args.build, stage, required=(BENCH,), optional=())
        bench = stage / "bin" / BENCH
        sizes = {name: size_of(stage / "bin" / name) for name in ("sandbox-host", BENCH)}
        out_dir = user_dir(tmp / "out", args.user)
        env = launch_env(out_dir)
        cwd = str(stage)

        verify_cold = verify_sandbox(prefix, exe, env, cwd)
        verify_prepared = verify_sandbox(prefix, exe, env, cwd, ["--prepared"])
        etc_mounts = sandbox_etc_mounts(prefix, exe, env, cwd)
        # Every variant runs and the pool prepares, before anything is timed.
        run_bench(prefix, bench_argv(bench, exe, CHECK_RUNS, CHECK_WARMUP, args.pause_ms, bwrap),
                  env, cwd, CHECK_RUNS, CHECK_WARMUP)

        argv = bench_argv(bench, exe, args.runs, args.warmup, args.pause_ms, bwrap)

        def measure():
            reap_orphans()  # the checks' sandboxes
            load_before = load_average()
            data = run_bench(prefix, argv, env, cwd, args.runs, args.warmup)
            # Inside ForeignLoad: their CPU counts as ours, not as other processes'.
            orphans = reap_orphans()
            load_after = load_average()
            unwaited = unwaited_cpu(prefix, bench, exe, env, cwd, args.pause_ms, bwrap)
            return load_before, load_after, data, orphans, unwaited

        (load_before, load_after, data, orphans, unwaited), foreign, busy_before, attempts = \
            quietly(measure, args)
        ran = [c.replace(str(stage), "<tmp>") for c in argv]
    rows = rows_of(data, args.runs)
    versions = []
    for cmd in (["bwrap", "--version"], ["unshare", "--version"]):
        v = output_of(cmd)
        if v:
            versions.append(v.splitlines()[0])
    section = render(rows, data["pool"], orphans, unwaited, ran, prefix, verify_cold,
                     verify_prepared, etc_mounts, bwrap, env_info, busy_before, foreign,
                     attempts, load_before, load_after, args.user, args, versions, sizes,
                     source_revision())
    if args.no_write:
        print(section)
    else:
        write_section(section, BEGIN, END)
        print(f"wrote {DOCS}", file=sys.stderr)
    by_key = {r["key"]: r for r in rows}
    for r in rows:
        print(f"{r['key']:8} median {r['median_ms']:7.3f} ms  mean {r['mean_ms']:7.3f} ms  "
              f"cpu {r['cpu_ms']:6.2f} ms  {r['median_ms'] / by_key['bare']['median_ms']:5.2f}x "
              f"bare  {r['median_ms'] / by_key['bwrap']['median_ms']:5.2f}x bwrap",
              file=sys.stderr)


if __name__ == "__main__":
    main()
