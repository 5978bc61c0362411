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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import (become_subreaper, bwrap_argv, die, display_path, DOCS,  # noqa: E402
                          ForeignLoad, launch_env, load_average, machine, PLUGIN, runner,
                          source_revision, tool_versions, user_dir, verify_sandbox,
                          wait_for_idle, write_section)
from launcher_report import CLIENT, stage  # noqa: E402
import launch_cost_proc  # noqa: E402
from launch_cost_proc import _alarm, kernel_threads_cpu, log, PYTHON, serve_pss, SLEEP  # noqa: E402
from launch_cost_measure import (back_to_back, ladder, Launcher, measure_bursts,  # noqa: E402
                                 oneshot_config, paced, Service)
from launch_cost_render import BEGIN, END, render  # noqa: E402


# ---- the worker (as the unprivileged user) ---------------------------------------------------

def worker(args):
    if args.pss_fds:
        # pss_many (launch_cost_proc) asks the root parent through these descriptors.
        launch_cost_proc.PSS_FDS = tuple(int(x) for x in args.pss_fds.split(","))
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
