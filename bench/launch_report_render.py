"""The launch-bench section of docs/benchmarks.md that bench/launch_report.py writes (the
namespaces backend against bare, unshare and bubblewrap): its tables and the target.
"""

import os
import shlex

from bench_common import BACKEND_ENV, display_path, machine_lines, PLUGIN, provenance_and_reproduce
from launch_report_measure import (BUILD_TARGETS, CHECK_RUNS, CHECK_WARMUP, ORPHAN_RUNS,
                                   ORPHAN_VARIANTS, ORPHAN_WARMUP, SANDBOX_HOST_ISOLATION, VARIANTS)


BEGIN = "<!-- launch-bench:begin -->"
END = "<!-- launch-bench:end -->"
TARGET_RATIO = 0.5


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
