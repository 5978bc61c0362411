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
import sys
import tempfile
from pathlib import Path

from bench_common import (add_run_arguments, become_subreaper, bwrap_argv, die, DOCS, launch_env,
                          load_average, machine, output_of, quietly, reap_orphans, REPO, runner,
                          source_revision, stage_build, user_dir, verify_sandbox, write_section)
from launch_report_measure import (BENCH, bench_argv, CHECK_RUNS, CHECK_WARMUP, rows_of, run_bench,
                                   sandbox_etc_mounts, unwaited_cpu)
from launch_report_render import BEGIN, END, render, size_of
from launch_report_landlock import main_landlock


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
