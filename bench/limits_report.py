#!/usr/bin/env python3
"""The launch cost of [limits]: spawn-to-exit of a sandboxed /bin/true under the namespaces
backend with no limits, with the default limits (rlimits, tmpfs sizes and the host's watch of
SocketDir and TmpDir) and with the default
limits in a cgroup of the launch's own, one-shot and through a launch service's prepared
sandboxes, beside a bare spawn and bubblewrap, all in one hyperfine run, as an unprivileged
user; rewrites the limits-bench section of docs/benchmarks.md.

Usage, from the repository root as root after building into build-bench:
    python3 bench/limits_report.py [--build build-bench] [--runs 300] [--warmup 30]

The unprivileged user (--user, default nobody) has no cgroup of its own to make cgroups in,
so the script delegates one to it, as an operator would: a directory in each cgroup v1
hierarchy of memory, pids and cpu, owned by that user (config `[limits] cgroup`), removed at
the end. On a host without those hierarchies the cgroup rows are left out, and the section
says so.

The paced rows of a launch service sleep --pause-ms, untimed (hyperfine --prepare), before
every launch, so that the service has set its next sandbox up, as a gateway's launches
spaced in time find it.
"""

import argparse
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

import launcher_report
from bench_common import (BACKEND_ENV, DOCS, PLUGIN, add_run_arguments, build_runs_arguments,
                          hyperfine_command_lines, become_subreaper,
                          bwrap_argv, check_command, die, display_path, hyperfine, launch_env,
                          machine, machine_lines, provenance_and_reproduce, quietly, reap_orphans,
                          runner, source_revision, timing_rows, tool_versions, user_dir,
                          write_section)

BEGIN = "<!-- limits-bench:begin -->"
END = "<!-- limits-bench:end -->"
TARGET_RATIO = 0.5
CONTROLLERS = ("memory", "pids", "cpu")
UNLIMITED = ("processes", "open_files", "file_size", "tmp_size", "tmp_inodes", "shm_size",
             "memory", "cpu", "scratch_size", "scratch_files", "lifetime")


class DelegatedCgroup:
    """A cgroup in each v1 hierarchy of memory, pids and cpu, owned by uid."""

    def __init__(self, uid):
        self.path = f"/sandbox-host-bench-{os.getpid()}"
        self.dirs = []
        mounts = {}
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields, rest = left.split(), right.split()
            if len(rest) >= 3 and rest[0] == "cgroup":
                for option in rest[2].split(","):
                    mounts.setdefault(option, fields[4])
        if any(c not in mounts for c in CONTROLLERS):
            self.why_not = ("this host has no cgroup v1 hierarchies of memory, pids and cpu to "
                            "delegate")
            return
        self.why_not = None
        for controller in CONTROLLERS:
            d = Path(mounts[controller]) / self.path[1:]
            d.mkdir()
            self.dirs.append(d)
            for owned in (d, d / "cgroup.procs", d / "tasks"):
                os.chown(owned, uid, uid)

    def remove(self):
        for d in self.dirs:
            for child in d.iterdir():
                if child.is_dir():
                    child.rmdir()
            d.rmdir()


def limits_table(cgroup, unlimited=False):
    lines = ["[limits]", f'cgroup = "{cgroup}"']
    if unlimited:
        lines += [f'{key} = "unlimited"' for key in UNLIMITED]
    return "\n".join(lines) + "\n"


def write_config(path, text):
    path.write_text(text)
    path.chmod(0o644)
    return path


def render(rows, hf_command, prefix, delegated, bwrap, env_info, foreign, attempts, args,
           versions, revision, pause):
    by_key = {r["key"]: r for r in rows}
    bare, bwrap_row = by_key["bare"], by_key["bwrap"]
    out = [BEGIN, "",
           "## The launch cost of `[limits]`: no limits, rlimits, rlimits + cgroup, one-shot and "
           "through prepared sandboxes, vs. bubblewrap (unprivileged)", ""]
    out += [
        f"A sandboxed `{PLUGIN}` from spawn to exit under the namespaces backend, run by uid",
        f"{args.user}, with `[limits]` all `\"unlimited\"` and `cgroup = \"off\"`, with the",
        "default limits (rlimits, the tmpfs sizes of `/tmp` and `/dev/shm`, and the host's",
        "watch of SocketDir and TmpDir, which starts a thread in the launching process) and no",
        "cgroup,",
        "and with the default limits in a cgroup of the launch's own (memory, pids and cpu on",
        "cgroup v1, in a cgroup delegated to that user); the last two also through a launch",
        f"service (`serve` [launcher], depth 1) whose client is `sandbox-host-launch --via`,",
        f"paced by {pause} untimed before each launch. All rows come from ONE",
        f"`hyperfine -N --warmup {args.warmup} --runs {args.runs}` invocation. The target for",
        f"the launch service with the limits on is a median ratio to bubblewrap of at most",
        f"{TARGET_RATIO}.",
        "",
        "| command | mean ± σ | median | p10 … p90 | median vs. bare | median vs. bubblewrap |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['label']} | {r['mean_ms']:.3f} ± {r['stddev_ms']:.3f} ms | "
            f"{r['median_ms']:.3f} ms | {r['p10_ms']:.2f} … {r['p90_ms']:.2f} ms | "
            f"{r['median_ms'] / bare['median_ms']:.2f}× | "
            f"{r['median_ms'] / bwrap_row['median_ms']:.2f}× |")
    out.append("")
    one_shot = [("none", "rlimits", "the rlimits, tmpfs sizes and the host's watch")]
    if "cgroup" in by_key:
        one_shot.append(("rlimits", "cgroup", "the cgroup on top"))
    for before, after, what in one_shot:
        delta = by_key[after]["median_ms"] - by_key[before]["median_ms"]
        out.append(f"- One-shot `run`: {what} cost {delta:+.3f} ms of median "
                   f"({by_key[after]['median_ms']:.3f} vs. {by_key[before]['median_ms']:.3f} ms).")
    for key in ("via-rlimits", "via-cgroup"):
        if key in by_key:
            ratio = by_key[key]["median_ms"] / bwrap_row["median_ms"]
            verdict = "met" if ratio <= TARGET_RATIO else "not met"
            out.append(f"- {by_key[key]['label'].strip('*')}: median ratio vs. bubblewrap "
                       f"**{ratio:.2f}**, target ≤ {TARGET_RATIO}: **{verdict}**.")
    if delegated.why_not:
        out.append(f"- No cgroup rows: {delegated.why_not}.")
    out += [
        "",
        "What a cgroup adds to a launch: the host makes one directory per hierarchy (for a",
        "prepared sandbox when it is set up, off the launch path) and writes its bounds",
        "(memory and memsw, pids.max, the CPU period and quota: five writes; a prepared",
        "sandbox's at its launch), stage 1 writes itself into each `cgroup.procs` (three",
        "writes, which move it between cgroups), and at the end the host reads the",
        "counters, kills what is left and removes the directories. A prepared sandbox has",
        "made its moves when it was set up, so a launch through the service pays only the",
        "bounds' writes, and the end's work comes after the client has its answer",
        "(benchmarks-history.md says where the one-shot cost goes).",
        "",
        "What the host's watch of SocketDir and TmpDir adds (`scratch_size`, `scratch_files`):",
        "a thread and one inotify instance per host process, started at the first launch (by",
        "the launch service when it starts), and per launch a count of the two directories and",
        "an inotify watch on each. A one-shot `run` pays most of it when it exits: the kernel",
        "frees the last inotify instance of a process only after an SRCU grace period, which",
        "the exit waits for, as it does for any process that exits with an inotify watch (a C",
        "program that makes one watch and exits: 1.2 ms without the watch, 12 ms mean with it,",
        "on this machine). A long-running host's instance lives on, and its watches go without",
        "anyone waiting.",
        "",
        "### Exactly what ran",
        "",
        f"`{BACKEND_ENV}=namespaces` in hyperfine's environment; sandbox-host, sandbox-host-",
        "launch, sandbox-host-broker and the modules are a copy of the build's in a",
        "world-readable temporary directory `<tmp>`; `<cfg>/none.toml`, `<cfg>/rlimits.toml`",
        "and `<cfg>/cgroup.toml` hold the three `[limits]` tables, and each service's config is",
        "`[broker]`, `[launcher]` and `[audit]` as bench/launcher_report.py writes them, plus",
        "`[limits] cgroup`.",
        "",
    ]
    out += hyperfine_command_lines(prefix, hf_command)
    out += [
        "",
        "The bwrap command is bench/bench_common.py's (" + shlex.join(bwrap[:8]) + " …).",
        "",
        *machine_lines(env_info),
        f"- CPU time used by anything but the measured commands while they ran: {foreign:.1%}"
        f" of the machine (attempt {attempts} of at most {args.attempts})",
    ]
    # Unlike the other sections, only as root: it delegates the cgroup.
    out += [line.replace(" or as an unprivileged user", "") for line in provenance_and_reproduce(
        revision, args.build, versions, "cmake --build build-bench -j2",
        f"sudo python3 bench/limits_report.py --build {display_path(args.build)} "
        f"--runs {args.runs} --warmup {args.warmup}")]
    out += [END]
    return "\n".join(out) + "\n"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    build_runs_arguments(parser, runs=300, warmup=30)
    parser.add_argument("--pause-ms", type=int, default=100,
                        help="untimed sleep before each paced launch through a service")
    add_run_arguments(parser)
    args = parser.parse_args()
    if args.runs < 100:
        parser.error("--runs must be at least 100")
    if os.geteuid() != 0:
        parser.error("run as root: it delegates a cgroup to --user")
    args.build = args.build.resolve()
    return args


def main():
    args = parse_args()
    if shutil.which("hyperfine") is None:
        die("hyperfine is not installed")
    prefix = runner(args.user)
    env_info = machine()
    become_subreaper()
    delegated = DelegatedCgroup(args.user)
    services = []
    pause = f"{args.pause_ms} ms"
    try:
        with tempfile.TemporaryDirectory(prefix="limits-bench-") as tmp_name:
            tmp = Path(tmp_name)
            tmp.chmod(0o755)
            exe = launcher_report.stage(args.build, tmp / "stage")
            client = tmp / "stage" / "bin" / launcher_report.CLIENT
            out_dir = user_dir(tmp / "out", args.user)
            cfg = tmp / "cfg"
            cfg.mkdir(mode=0o755)
            env = launch_env(tmp / "out")
            cwd = str(tmp / "stage")
            cgroup = delegated.path if not delegated.why_not else None
            configs = {"none": write_config(cfg / "none.toml", limits_table("off", True)),
                       "rlimits": write_config(cfg / "rlimits.toml", limits_table("off"))}
            if cgroup:
                configs["cgroup"] = write_config(cfg / "cgroup.toml", limits_table(cgroup))

            original = launcher_report.config_text
            for key in ("rlimits", "cgroup") if cgroup else ("rlimits",):
                extra = limits_table(cgroup if key == "cgroup" else "off")
                launcher_report.config_text = lambda work, depth, extra=extra: (
                    original(work, depth) + "\n" + extra)
                services.append((key, launcher_report.Service(
                    prefix, exe, env, user_dir(out_dir / f"service-{key}", args.user), 1)))
            launcher_report.config_text = original

            bwrap = bwrap_argv()
            sleep = f"sleep {args.pause_ms / 1000:.3f}"
            commands = [("bare", f"bare `{PLUGIN}`", [PLUGIN], "true"),
                        ("bwrap", "bubblewrap", bwrap, "true")]
            labels = {"none": "no limits", "rlimits": "default limits, no cgroup",
                      "cgroup": "default limits + cgroup"}
            for key, config in configs.items():
                commands.append((key, f"`sandbox-host run`, {labels[key]}",
                                 [str(exe), "run", "--config", str(config), "--", PLUGIN], "true"))
            for key, service in services:
                commands.append((f"via-{key}", f"**`sandbox-host-launch --via`, {labels[key]}**",
                                 [str(client), "--via", str(service.socket), "--", PLUGIN], sleep))
            for _, _, argv, _ in commands:
                reason = check_command(prefix, argv, env, cwd)
                if reason is not None:
                    die(f"`{shlex.join(argv)}` does not work as uid {args.user} ({reason})")

            running = [service for _, service in services]

            def measure():
                launcher_report.reap_exited(running)
                options = []
                for *_, prepare in commands:
                    options += ["--prepare", prepare]
                results, hf_command = hyperfine(
                    prefix, [(label, argv) for _, label, argv, _ in commands], env, cwd, out_dir,
                    args.warmup, args.runs, options)
                launcher_report.reap_exited(running)
                return results, hf_command

            (results, hf_command), foreign, _busy, attempts = quietly(measure, args)
            hf_command = [c.replace(str(tmp / "stage"), "<tmp>")
                          .replace(str(out_dir), "<tmp>/out").replace(str(cfg), "<cfg>")
                          for c in hf_command]
    finally:
        for _, service in services:
            service.stop()
        reap_orphans()
        delegated.remove()
    rows = timing_rows([(k, label, argv) for k, label, argv, _ in commands], results)
    versions = tool_versions([["hyperfine", "--version"], ["bwrap", "--version"]])
    section = render(rows, hf_command, prefix, delegated, bwrap, env_info, foreign, attempts,
                     args, versions, source_revision(), pause)
    if args.no_write:
        print(section)
    else:
        write_section(section, BEGIN, END)
        print(f"wrote {DOCS}", file=sys.stderr)
    by_key = {r["key"]: r for r in rows}
    for r in rows:
        print(f"{r['key']:12} median {r['median_ms']:7.3f} ms  "
              f"{r['median_ms'] / by_key['bwrap']['median_ms']:5.2f}x bubblewrap", file=sys.stderr)


if __name__ == "__main__":
    main()
