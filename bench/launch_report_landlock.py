"""bench/launch_report.py --backend landlock: the landlock backend's launches against a bare
spawn, the check that the sandbox holds, and the landlock-bench section of
docs/benchmarks.md.
"""

import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_common import (BACKEND_ENV, become_subreaper, bwrap_argv, die, display_path, DOCS,
                          launch_env, load_average, machine, machine_lines, percentile, PLUGIN,
                          provenance_and_reproduce, quietly, reap_orphans, run_as, runner,
                          source_revision, stage_build, user_dir, write_section)
from launch_report_measure import BENCH, CHECK_RUNS, CHECK_WARMUP, run_bench
from launch_report_render import plural, pool_counts, size_of


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
