#!/usr/bin/env python3
"""The broker's round trip: `ping` through the real `sandbox-host serve`, from 1 and from 64
client processes at once asking back to back (closed loop), and from 64 asking at a steady
pace each (open loop, --paced-rate requests/s per client), with and without 1,000 extra idle
processes of the same user, over the spool (identity "lock" and "scan", woken by inotify)
and over a broker socket, beside the seed's design (the spool found by a scan every 100 ms
tick, `--poll`, identity "scan"; back to back only); all run by ONE broker_bench process as
an unprivileged user. Rewrites the broker-bench section of docs/benchmarks.md.

Usage, from the repository root after building into build-bench (--build defaults to build):
    python3 bench/broker_report.py --build build-bench [--requests 10000] [--idle 1000]
                                   [--seed-requests 200,2000] [--cap-s 120] [--paced-rate 25]

Builds nothing. Run as root, it copies the build's sandbox-host, sandbox-host-broker
(libexec), broker_bench and the modules to a world-readable temporary directory and runs
broker_bench as --user (default 65534, nobody) through `setpriv`, so that the broker, its
clients and the idle processes all run as that user, with the broker's state directory in
a directory of that user's. Run as anyone else, it runs it as that user.

Before timing it checks, as the same user, that every transport answers (a few requests
each, none lost). Only the text between the broker-bench begin/end markers is rewritten;
the section is appended when the markers are missing.
"""

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from bench_common import (add_run_arguments, die, DOCS, launch_env, load_average, machine, quietly,
                          REPO, runner, source_revision, user_dir, write_section)
from broker_run import (ab_scenarios, BENCH, bench_argv, CHECK, PACED_CLIENTS, PACED_RATE,
                        run_bench, scenarios, stage)
from broker_cells import ms, verdict
from broker_render import BEGIN, END, render


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(REPO / "build"), type=Path,
                        help="build tree with bin/sandbox-host, bin/broker_bench, "
                             "libexec/sandbox-host/sandbox-host-broker and "
                             "lib/sandbox-host/modules (default: build)")
    parser.add_argument("--requests", type=int, default=10000,
                        help="requests per scenario (default: 10000)")
    parser.add_argument("--seed-requests", default="200,2000",
                        help="requests of the seed's polling design at 1 and at 64 clients "
                             "(default: 200,2000)")
    parser.add_argument("--idle", type=int, default=1000,
                        help="extra idle processes in the idle scenarios (default: 1000)")
    parser.add_argument("--cap-s", type=int, default=120,
                        help="wall-clock cap per scenario, in seconds (default: 120)")
    parser.add_argument("--warmup", type=int, default=20,
                        help="untimed pings before each scenario (default: 20)")
    parser.add_argument("--paced-rate", type=int, default=PACED_RATE,
                        help=f"requests per second per client of the {PACED_CLIENTS} paced "
                             f"(open-loop) clients (default: {PACED_RATE}, i.e. "
                             f"{PACED_RATE * PACED_CLIENTS:,}/s in all)")
    parser.add_argument("--ab-rounds", type=int, default=3,
                        help="rounds of identity lock at one client alternated without and "
                             "with the idle processes (default: 3)")
    parser.add_argument("--ab-requests", type=int, default=5000,
                        help="requests per alternated lock run (default: 5000)")
    parser.add_argument("--ab-scan-requests", type=int, default=300,
                        help="requests per alternated scan run (default: 300)")
    add_run_arguments(parser)
    # A whole run takes minutes; repeat it once at most when others disturbed it.
    parser.set_defaults(attempts=2)
    args = parser.parse_args()
    try:
        args.seed_requests = [int(x) for x in args.seed_requests.split(",")]
    except ValueError:
        parser.error("--seed-requests: want two integers, e.g. 200,2000")
    if len(args.seed_requests) != 2 or min(args.seed_requests) < 1:
        parser.error("--seed-requests: want two positive integers, e.g. 200,2000")
    if args.requests < 1 or args.idle < 1 or args.cap_s < 1 or args.warmup < 0 \
            or args.attempts < 1 or args.ab_rounds < 1 or args.ab_requests < 1 \
            or args.ab_scan_requests < 1 or args.paced_rate < 1:
        parser.error("--requests, --idle, --cap-s, --attempts, --paced-rate and the --ab "
                     "counts must be at least 1, --warmup not negative")
    if args.requests < 1000 and not args.no_write:
        parser.error("--requests must be at least 1000 to write docs/benchmarks.md (use "
                     "--no-write to try fewer)")
    args.build = args.build.resolve()
    return args


def main():
    args = parse_args()
    prefix = runner(args.user)
    env_info = machine()
    with tempfile.TemporaryDirectory(prefix="broker-bench-") as tmp_name:
        tmp = Path(tmp_name)
        tmp.chmod(0o755)
        staged = tmp / "stage"
        exe = stage(args.build, staged)
        bench = staged / "bin" / BENCH
        work = user_dir(tmp / "work", args.user)
        env = launch_env(work)
        env.pop("CLAWPATROL_SANDBOX_BACKEND", None)  # no sandbox is launched here
        cwd = str(work)

        # Every transport answers, none lost, before anything is timed.
        check = run_bench(prefix, bench_argv(bench, exe, work / "check", CHECK, 30, 1), env, cwd,
                          timeout=300)
        for r in check:
            if r["lost"] or r["answered"] != r["requests"]:
                die(f"the check run lost requests: {json.dumps(r)}")

        listed = scenarios(args)
        designs = [d for d, _ in listed]
        ab = ab_scenarios(args)
        argv = bench_argv(bench, exe, work / "run", [s for _, s in listed] + [s for *_, s in ab],
                          args.cap_s, args.warmup)
        timeout = (len(listed) + len(ab)) * (args.cap_s + 90)

        def measure():
            shutil.rmtree(work / "run", ignore_errors=True)
            before = load_average()
            rows = run_bench(prefix, argv, env, cwd, timeout)
            return before, load_average(), rows

        (load_before, load_after, rows), foreign, busy_before, attempts = quietly(measure, args)
        if len(rows) != len(listed) + len(ab):
            die(f"{BENCH} reported {len(rows)} scenarios, want {len(listed) + len(ab)}")
        ran = [c.replace(str(staged), "<tmp>").replace(str(work / "run"), "<work>")
               for c in argv]
    raw = Path(tempfile.gettempdir()) / "broker-bench-last.jsonl"
    raw.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"the scenarios' JSON: {raw}", file=sys.stderr)
    rows, ab_rows = rows[:len(listed)], rows[len(listed):]
    section = render(rows, designs, ab_rows, env_info, busy_before, foreign, attempts, load_before,
                     load_after, prefix, ran, args.user, args, source_revision())
    if args.no_write:
        print(section)
    else:
        write_section(section, BEGIN, END)
        print(f"wrote {DOCS}", file=sys.stderr)
    for design, r in zip(designs, rows):
        print(f"{design[0]:6} {r['identity']:8} {r['wake']:7} clients {r['clients']:2} "
              f"rate {r.get('rate', 0):3} idle "
              f"{r['idle']:4}: {r['answered']:5}/{r['requests']:5} lost {r['lost']} p50 "
              f"{ms(r['p50_us'])} ms p99 {ms(r['p99_us'])} ms max {ms(r['max_us'])} ms "
              f"{r['requests_per_s']:8.0f}/s  {verdict(r)}", file=sys.stderr)


if __name__ == "__main__":
    main()
