"""The scenarios bench/broker_report.py measures and how it runs broker_bench on them: the
designs, the paced rate, broker_bench's command line and the staged build. Also used by
bench/broker_attack_report.py.
"""

import json
import os
import shlex
import shutil
import subprocess
import sys

from bench_common import die, stage_build


BENCH = "broker_bench"
BUILD_TARGETS = "sandbox-host broker_bench op_ping"


TICK_MS = 100
# (transport, identity, wake): the designs measured, in the table's order.
DESIGNS = [
    ("spool", "lock", "inotify"),
    ("spool", "scan", "inotify"),
    ("socket", "lock", "inotify"),
    ("spool", "scan", "poll"),
]
PACED_CLIENTS = 64
# Requests/s per paced client, and why (for the doc, when it is the rate used).
PACED_RATE = 25
PACED_RATE_WHY = ("picked from earlier runs on this section's 2-CPU machine, where spool `lock` "
                  "answered 4,000 to 5,400/s back to back at 64 clients (its saturation; the "
                  "machine's speed drifts between runs): about a third of that, a busy broker "
                  "with room for bursts")
CHECK = ["transport=spool,identity=lock,clients=1,requests=50",
         "transport=spool,identity=scan,clients=1,requests=50",
         "transport=socket,clients=1,requests=50",
         "transport=spool,identity=scan,wake=poll,clients=1,requests=3",
         "transport=spool,identity=lock,clients=4,requests=40,rate=50",
         "transport=socket,clients=4,requests=40,rate=50"]


def design_label(transport, identity, wake):
    if transport == "socket":
        return "socket (`--socket`, peer credentials)"
    if wake == "poll":
        return f"**seed**: spool, `scan`, `--poll` (tick {TICK_MS} ms)"
    return f"spool, `{identity}`, inotify"


def scenarios(args):
    """Per design: 1 and 64 clients back to back, then (not for the seed's polling design)
    64 clients at a steady pace; each without and with the idle processes."""
    out = []
    seed = dict(zip((1, 64), args.seed_requests))
    for transport, identity, wake in DESIGNS:
        loads = [(1, 0), (64, 0)] + ([] if wake == "poll" else [(PACED_CLIENTS, args.paced_rate)])
        for clients, rate in loads:
            for idle in (0, args.idle):
                requests = seed[clients] if wake == "poll" else args.requests
                spec = (f"transport={transport},identity={identity},wake={wake},"
                        f"tick={TICK_MS},clients={clients},idle={idle},requests={requests}")
                if transport == "socket":
                    spec = (f"transport=socket,tick={TICK_MS},clients={clients},idle={idle},"
                            f"requests={requests}")
                if rate:
                    spec += f",rate={rate}"
                out.append(((transport, identity, wake), spec))
    return out


def ab_scenarios(args):
    """Identity `lock` (and, shorter, `scan`) at one client, without and with the idle
    processes in turn, 0, idle, idle, 0 per round: what the machine's drift does to both
    alike, and what the idle processes do on their own."""
    out = []
    for identity, rounds, requests in (("lock", args.ab_rounds, args.ab_requests),
                                       ("scan", 1, args.ab_scan_requests)):
        for _ in range(rounds):
            for idle in (0, args.idle, args.idle, 0):
                out.append((identity, idle,
                            f"transport=spool,identity={identity},wake=inotify,tick={TICK_MS},"
                            f"clients=1,idle={idle},requests={requests}"))
    return out


def bench_argv(bench, exe, work, specs, cap_s, warmup):
    argv = [str(bench), "--sandbox-host", str(exe), "--work", str(work), "--cap-s", str(cap_s),
            "--warmup", str(warmup)]
    for spec in specs:
        argv += ["--scenario", spec]
    return argv


def run_bench(prefix, argv, env, cwd, timeout):
    print("running:", shlex.join(prefix + argv), file=sys.stderr)
    try:
        r = subprocess.run(prefix + argv, env=env, cwd=cwd, stdout=subprocess.PIPE,
                           stderr=None, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        die(f"{BENCH} did not finish within {timeout} s")
    if r.returncode != 0:
        die(f"{BENCH} exited {r.returncode}")
    rows = []
    for line in r.stdout.splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as e:
            die(f"{BENCH} printed a line that is not JSON ({e}): {line[:500]}")
    return rows


def stage(build, tmp):
    """stage_build's copy, plus sandbox-host-broker in libexec/ (sandbox-host execs it for
    serve and ask) and broker_bench."""
    exe = stage_build(build, tmp, required=(BENCH,), optional=())
    broker = build / "libexec" / "sandbox-host" / "sandbox-host-broker"
    if not os.access(broker, os.X_OK):
        die(f"{broker}: not an executable; build the target sandbox-host first")
    if not (tmp / "lib" / "sandbox-host" / "modules" / "op_ping.so").exists():
        die(f"{build}: no op_ping.so; build the target op_ping first")
    libexec = tmp / "libexec" / "sandbox-host"
    libexec.mkdir(parents=True)
    shutil.copy2(broker, libexec / broker.name)
    for path in (tmp / "libexec", libexec, libexec / broker.name):
        path.chmod(0o755)
    return exe
