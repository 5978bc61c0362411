#!/usr/bin/env python3
"""Spawn-to-exit of a sandboxed /bin/true under the namespaces backend, as an unprivileged
user, beside a bare spawn, `unshare -Urmpfn` and bubblewrap, all in one hyperfine run; rewrites
the namespaces-bench section of docs/benchmarks.md.

Usage, from the repository root after building into build-bench:
    python3 bench/namespaces_report.py [--build build-bench] [--runs 300] [--warmup 30]

Run as root, it copies the build's sandbox-host and modules to a world-readable temporary
directory and runs hyperfine (and every command it times) as --user (default 65534, nobody)
through `setpriv`. Run as anyone else, it runs them as that user.

Only the text between the namespaces-bench begin/end markers is rewritten; the section is
appended when the markers are missing. The spawn-bench section (bench/report.py) and the
hand-written notes are kept.
"""

import argparse
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

# Also namespaces_phases.py's helpers (it uses them as namespaces_report.<name>).
from bench_common import (BACKEND_ENV, DOCS, PLUGIN, REPO, add_run_arguments,  # noqa: F401
                          build_runs_arguments, hyperfine_command_lines, become_subreaper,
                          bwrap_argv, check_command, die, display_path, hyperfine,
                          launch_env, machine, machine_lines, measure_hyperfine,
                          provenance_and_reproduce, quietly, runner, source_revision,
                          stage_build, timing_rows, tool_versions, user_dir, verify_sandbox,
                          write_section)

BEGIN = "<!-- namespaces-bench:begin -->"
END = "<!-- namespaces-bench:end -->"
TARGET_RATIO = 0.5


# ---- the section ----------------------------------------------------------------------------

ISOLATION = [
    ("bare `/bin/true`", "nothing"),
    ("`unshare -Urmpfn`", "user (uid 0 mapped), mount (a copy of the host's whole tree), pid, "
     "net; no uts/ipc/cgroup namespace, no new root, no no_new_privs, no seccomp"),
    ("bubblewrap", "user, pid (bwrap is pid 1), net (loopback up), ipc, uts, mount with a "
     "new tmpfs root: `/usr` read-only, the root's symlinks into it, fresh `/proc`, minimal "
     "`/dev`, tmpfs `/tmp`; no_new_privs, no capabilities, own session, dies with its parent; "
     "no cgroup namespace, no seccomp filter, no `/etc`, hostname unchanged"),
    ("`sandbox-host run` (namespaces)", "user, mount, pid, net (loopback up), ipc, uts "
     "(hostname `sandbox`) and cgroup namespaces; pid 1 is its own init; new root: "
     "`/usr` read-only plus the root's symlinks, 18 read-only `/etc` entries, fresh `/proc`, "
     "`/dev` (6 host devices + `shm`), tmpfs `/tmp`, the run's socket and tmp directories "
     "(created and removed per run), the plugin binary; no_new_privs, no capabilities, the "
     "default seccomp filter; and before all that the backend probe (a forked child that "
     "creates user/mount/pid/uts namespaces and mounts a tmpfs)"),
]


def render(rows, hf_command, prefix, verify_lines, bwrap, env_info, busy_before, foreign,
           attempts, load_before, load_after, uid, args, versions, revision):
    by_key = {r["key"]: r for r in rows}
    bare, bwrap_row, host = by_key["bare"], by_key["bwrap"], by_key["host"]
    ratio = host["median_ms"] / bwrap_row["median_ms"]
    mean_ratio = host["mean_ms"] / bwrap_row["mean_ms"]
    verdict = "met" if ratio <= TARGET_RATIO else "not met"
    who = f"uid {uid}, `nobody`" if prefix and uid == 65534 else \
        f"uid {uid}" if prefix else f"uid {os.geteuid()}"
    out = [BEGIN, "",
           "## Spawn-to-exit under the namespaces backend vs. `unshare` and bubblewrap "
           "(unprivileged)", ""]
    out += [
        f"A sandboxed `{PLUGIN}` from spawn to exit, run by an unprivileged user ({who}),",
        "beside the same binary spawned bare, under `unshare -Urmpfn` and under bubblewrap",
        "with the isolation of the backend that bwrap has flags for. All rows come from ONE",
        f"`hyperfine -N --warmup {args.warmup} --runs {args.runs}` invocation, so they share",
        "the machine's conditions; the last two rows time sandbox-host alone, for the",
        "breakdown in benchmarks-history.md. The project's target is a median ratio",
        f"sandbox-host / bubblewrap of at most {TARGET_RATIO}.",
        "",
        "| command | mean ± σ | median | p10 … p90 | user + sys CPU | median vs. bare | median vs. bubblewrap |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['label']} | {r['mean_ms']:.3f} ± {r['stddev_ms']:.3f} ms | "
            f"{r['median_ms']:.3f} ms | {r['p10_ms']:.2f} … {r['p90_ms']:.2f} ms | "
            f"{r['cpu_ms']:.2f} ms | {r['median_ms'] / bare['median_ms']:.2f}× | "
            f"{r['median_ms'] / bwrap_row['median_ms']:.2f}× |")
    out += [
        "",
        f"**Median ratio sandbox-host / bubblewrap = {ratio:.2f}** "
        f"({host['median_ms']:.3f} ms / {bwrap_row['median_ms']:.3f} ms; mean ratio "
        f"{mean_ratio:.2f}). Target ≤ {TARGET_RATIO}: **{verdict}**"
        + (f"; sandbox-host would have to be {host['median_ms'] - TARGET_RATIO * bwrap_row['median_ms']:.2f} ms "
           f"faster per launch (at most {TARGET_RATIO * bwrap_row['median_ms']:.3f} ms)."
           if ratio > TARGET_RATIO else "."),
        "",
        "User + sys CPU is hyperfine's per-run mean of the command and the descendants it",
        "waited for; the percentiles are over the individual runs. For bubblewrap it is too",
        "low: bwrap's outer process exits on the status its pid 1 reports through a pipe",
        "without waiting for it (strace: no wait4 in the outer bwrap), so the sandbox's",
        "processes are missing from its rusage, and hyperfine's clock can stop before that",
        "pid 1 has exited. The same holds for sandbox-host: it waits for the host, the probe",
        "child and stage 1, but the sandbox's init reports the plugin's status to stage 1 and is",
        "not waited for, so the init and the plugin are missing from its CPU too (the",
        "launch-bench section counts them).",
        "",
    ]
    if foreign > args.max_foreign:
        out += [
            f"Note: anything but the measured commands used {foreign:.0%} of the CPUs while this "
            f"ran (the least of",
            f"{attempts} attempts), more than the {args.max_foreign:.0%} taken as quiet; that "
            "share includes kernel threads working",
            "for the sandboxes (see below). The times may",
            "be noisier than on an idle machine; the medians are the numbers to compare.",
            "",
        ]
    out += ["### What each command isolates", "", "| command | isolation |", "|---|---|"]
    out += [f"| {name} | {text} |" for name, text in ISOLATION]
    out += [
        "",
        "sandbox-host does more than this bubblewrap command (the `/etc` binds, the seccomp",
        "filter, loopback, the cgroup namespace, the probe); the ratio is the cost of the",
        "backend as it is, not of identical work.",
        "",
        "### Exactly what ran",
        "",
        f"`{BACKEND_ENV}=namespaces` in hyperfine's environment (the other commands ignore",
        "it); sandbox-host and its modules are a copy of the build's, in a world-readable",
        "temporary directory `<tmp>` (`<tmp>/bin/sandbox-host`,",
        "`<tmp>/lib/sandbox-host/modules/*.so`), so the unprivileged user can run them:",
        "",
    ]
    out += hyperfine_command_lines(prefix, hf_command)
    out += [
        "",
        "The bwrap command's symlinks are the root's own (`readlink /bin` …, only those whose",
        "target exists here): " + ", ".join(
            f"`{bwrap[i + 2]} -> {bwrap[i + 1]}`" for i in range(len(bwrap))
            if bwrap[i] == "--symlink") + ".",
        "",
        "Checked once before timing, as the same user: `sandbox-host run -- /bin/true` exits 0,",
        "and inside the sandbox `/bin/sh -c` sees (whitespace squeezed):",
        "",
        "```",
        *verify_lines,
        "```",
        "",
        *machine_lines(env_info),
        f"- CPUs busy (all cores, /proc/stat) in the second before the run: {busy_before:.0%};"
        f" CPU time used by anything but the measured commands while they ran: {foreign:.1%}"
        f" of the machine (kernel threads working for the sandboxes included; the sandboxes'"
        f" inits and bubblewrap's pid 1, which nobody waits for, are reaped by this script as a"
        f" child subreaper and count as the measured commands'; attempt"
        f" {attempts} of at most {args.attempts}); load average before / after: {load_before}"
        f" / {load_after}",
    ]
    out += provenance_and_reproduce(
        revision, args.build, versions, "cmake --build build-bench -j2",
        f"python3 bench/namespaces_report.py --build {display_path(args.build)} "
        f"--runs {args.runs} --warmup {args.warmup}")
    out += [
        END,
    ]
    return "\n".join(out) + "\n"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    build_runs_arguments(parser, runs=300, warmup=30)
    add_run_arguments(parser)
    args = parser.parse_args()
    if args.runs < 100:
        parser.error("--runs must be at least 100")
    args.build = args.build.resolve()
    return args


def main():
    args = parse_args()
    if shutil.which("hyperfine") is None:
        die("hyperfine is not installed")
    prefix = runner(args.user)
    env_info = machine()
    become_subreaper()
    with tempfile.TemporaryDirectory(prefix="namespaces-bench-") as tmp_name:
        tmp = Path(tmp_name)
        tmp.chmod(0o755)
        exe = stage_build(args.build, tmp / "stage")
        out_dir = user_dir(tmp / "out", args.user)
        env = launch_env(tmp / "out")
        cwd = str(tmp / "stage")

        verify_lines = verify_sandbox(prefix, exe, env, cwd)
        bwrap = bwrap_argv()
        commands = [
            ("bare", f"bare `{PLUGIN}`", [PLUGIN]),
            ("unshare", f"`unshare -Urmpfn {PLUGIN}`", ["unshare", "-Urmpfn", PLUGIN]),
            ("bwrap", "bubblewrap (command below)", bwrap),
            ("host", f"**`sandbox-host run -- {PLUGIN}`** (namespaces)",
             [str(exe), "run", "--", PLUGIN]),
            ("version", "`sandbox-host --version` (start-up alone)", [str(exe), "--version"]),
            ("probe", "`sandbox-host probe` (start-up, config, module loads, every backend's probe)",
             [str(exe), "probe"]),
        ]
        for _, label, argv in commands:
            reason = check_command(prefix, argv, env, cwd)
            if reason is not None:
                die(f"`{shlex.join(argv)}` does not work as uid {args.user} ({reason})")

        (results, hf_command, load_before, load_after, foreign_share, busy_before,
         attempts) = measure_hyperfine(prefix, commands, env, cwd, out_dir, args)
        hf_command = [c.replace(str(tmp / "stage"), "<tmp>").replace(str(tmp / "out"), "<tmp>/out")
                      for c in hf_command]
    rows = timing_rows(commands, results)
    versions = tool_versions([["hyperfine", "--version"], ["bwrap", "--version"],
                              ["unshare", "--version"]])
    section = render(rows, hf_command, prefix, verify_lines, bwrap, env_info, busy_before,
                     foreign_share, attempts, load_before, load_after, args.user, args,
                     versions, source_revision())
    if args.no_write:
        print(section)
    else:
        write_section(section, BEGIN, END)
        print(f"wrote {DOCS}", file=sys.stderr)
    by_key = {r["key"]: r for r in rows}
    for r in rows:
        print(f"{r['key']:8} mean {r['mean_ms']:7.3f} ms  median {r['median_ms']:7.3f} ms  "
              f"{r['median_ms'] / by_key['bare']['median_ms']:5.2f}x bare", file=sys.stderr)
    print(f"median ratio sandbox-host / bubblewrap: "
          f"{by_key['host']['median_ms'] / by_key['bwrap']['median_ms']:.2f}", file=sys.stderr)


if __name__ == "__main__":
    main()
