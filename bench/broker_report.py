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
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_common import (DOCS, REPO, add_run_arguments, die, display_path, launch_env,
                          load_average, machine, machine_lines, provenance_and_reproduce,
                          quietly, runner, source_revision, stage_build, user_dir,
                          write_section)

BEGIN = "<!-- broker-bench:begin -->"
END = "<!-- broker-bench:end -->"
BENCH = "broker_bench"
BUILD_TARGETS = "sandbox-host broker_bench op_ping"
TARGET_P50_MS = 0.5
TARGET_P99_MS = 2.0
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


# ---- the section ----------------------------------------------------------------------------

def ms(us):
    return "–" if us is None else f"{us / 1e3:,.3f}"


def verdict(row):
    if row["answered"] == 0:
        return "no answer"
    p50 = row["p50_us"] / 1e3 <= TARGET_P50_MS
    p99 = row["p99_us"] / 1e3 <= TARGET_P99_MS
    if p50 and p99:
        return "met"
    missed = [name for name, ok in (("p50", p50), ("p99", p99)) if not ok]
    return "**missed**: " + " and ".join(missed)


def per_request(cpu_ms, row):
    # The broker also answered the readiness ping and the warm-up, untimed.
    answered = max(1, row["broker_answered"] if row["broker_answered"] > 0 else row["answered"])
    return cpu_ms / answered * 1e3


def cpu_per_request(row):
    """The broker's and the clients' CPU per request together, in µs."""
    return (per_request(row["broker_cpu_ms"], row)
            + row["clients_cpu_ms"] / max(1, row["answered"] + row["lost"]) * 1e3)


def clients_text(n):
    return f"{n} client" + ("" if n == 1 else "s")


def share_text(requests):
    low, high = requests // PACED_CLIENTS, -(-requests // PACED_CLIENTS)
    return f"{low:,}" if low == high else f"{low:,} or {high:,}"


def pace_cell(row):
    if not row.get("rate"):
        return "back to back"
    return f"{row['rate']:,}/s each ({row['offered_per_s']:,}/s)"


def scenario_text(design, row):
    """A scenario named in a sentence: design, clients, pace and idle."""
    pace = f" at {row['rate']:,}/s each" if row.get("rate") else ""
    return (f"{design_label(*design)} at {clients_text(row['clients'])}{pace}, idle "
            f"{row['idle']:,}")


def requests_cell(row):
    text = f"{row['answered']:,}"
    if row["answered"] != row["requests"]:
        text += f" of {row['requests']:,}"
    if row["capped"]:
        text += f" (stopped at the {row['cap_s']} s cap)"
    return text


def key_of(row):
    return (row["transport"], row["identity"], row["wake"], row["clients"], row["idle"],
            row.get("rate", 0))


def render_ab(ab_rows, args):
    """The alternated runs: per identity, p50 and CPU without and with the idle processes."""
    idle = args.idle
    out = ["", f"### {idle:,} idle processes, in turn with none", "",
           "The rows above run one after the other, minutes apart, and this machine's speed "
           "drifts over minutes (others'",
           f"load, the hypervisor). So the same process ran one client with and without the "
           f"{idle:,} idle processes in turn",
           f"(0, {idle:,}, {idle:,}, 0 per round; `lock` {args.ab_rounds} "
           f"round{'s' if args.ab_rounds != 1 else ''} of "
           f"{args.ab_requests:,} requests, `scan` one round of {args.ab_scan_requests:,}), "
           "after the scenarios above:",
           "",
           "| identity | idle | runs | p50 of each run | mean p50 | mean broker CPU / request "
           "| mean clients' CPU / request | lost |",
           "|---|---|---|---|---|---|---|---|"]
    summary = {}
    for identity in ("lock", "scan"):
        for count in (0, idle):
            runs = [r for r in ab_rows if r["identity"] == identity and r["idle"] == count]
            if not runs:
                continue
            p50 = sum(r["p50_us"] for r in runs) / len(runs)
            broker = sum(per_request(r["broker_cpu_ms"], r) for r in runs) / len(runs)
            clients = sum(r["clients_cpu_ms"] / max(1, r["answered"] + r["lost"]) * 1e3
                          for r in runs) / len(runs)
            summary[(identity, count)] = (p50, broker)
            out.append(f"| `{identity}` | {count:,} | {len(runs)} | "
                       + ", ".join(ms(r["p50_us"]) for r in runs) + f" ms | {ms(p50)} ms | "
                       f"{broker:,.0f} µs | {clients:,.0f} µs | {sum(r['lost'] for r in runs)} |")
    lines = []
    for identity in ("lock", "scan"):
        if (identity, 0) in summary and (identity, idle) in summary:
            (p0, b0), (p1, b1) = summary[(identity, 0)], summary[(identity, idle)]
            lines.append(f"`{identity}`: mean p50 {ms(p0)} → {ms(p1)} ms ({p1 / p0:.2f}×), "
                         f"broker CPU per request {b0:,.0f} → {b1:,.0f} µs ({b1 / b0:.2f}×)")
    if lines:
        out += ["", f"With {idle:,} idle processes against none: " + "; ".join(lines) + ". "
                "The spread of one setting's runs is the drift; for `scan` the step is the "
                "walk over the idle processes, once per request."]
    return out


def render(rows, designs, ab_rows, env_info, busy_before, foreign, attempts, load_before,
           load_after, prefix, ran, uid, args, revision):
    who = f"uid {uid}, `nobody`" if prefix and uid == 65534 else \
        f"uid {uid}" if prefix else f"uid {os.geteuid()}"
    total_lost = sum(r["lost"] for r in rows)
    out = [BEGIN, "",
           "## The broker's round trip: `ping` over the spool and the socket, 1 and 64 "
           f"clients back to back and 64 at a steady pace, with {args.idle:,} idle processes, "
           "vs. the seed's polling tick (unprivileged)",
           "",
           "How long does a sandboxed process wait for the broker? Each request is one "
           "`broker::ask` (the spool) or",
           "`broker::ask_socket` (a broker socket) of `ping` from a client *process*; the "
           "broker is the real `sandbox-host serve`",
           f"of this build, a separate process. The broker, the clients and the idle "
           f"processes all run as one unprivileged",
           f"user ({who}), as a host's broker and its sandboxes do. Per scenario "
           "`bench/broker_bench.cpp` starts a fresh broker,",
           f"asks `ping` until it answers and {args.warmup} times more untimed, then "
           "releases the clients at once. They ask in",
           "one of two ways (column *pace*):",
           "",
           "- *back to back* (closed loop): the clients take request numbers from one shared "
           "counter until all are taken,",
           "  so every client asks again as soon as it has its answer, until the end. A "
           "request is timed with `steady_clock`",
           "  from the call to its return with the answer.",
           f"- *R/s each* (open loop): each of the {PACED_CLIENTS} clients makes its share of "
           f"the {args.requests:,} requests ({share_text(args.requests)}) at the fixed times",
           "  *origin + phase + k/R*, k = 0, 1, …, whatever the broker does; *phase* is "
           "pseudo-random in [0, 1/R) per client",
           "  (a fixed seed), so that they do not ask in lockstep. A request is timed from its "
           "**scheduled** time to the answer:",
           "  when the previous answer came after that time, the request starts late and the "
           "wait counts (no \"coordinated",
           "  omission\"), and so does the client's own wake-up from `clock_nanosleep` "
           "(timer slack 1 ns).",
           "",
           "*idle* is extra processes of the same user that only `pause()`; *lost* is a "
           "request that threw or was answered",
           f"anything but `pong` with code 0. Targets: p50 ≤ {TARGET_P50_MS} ms, p99 ≤ "
           f"{TARGET_P99_MS:g} ms, zero lost, for every row alike.",
           "",
           "| design | clients | pace | idle | requests answered | lost | p50 | p99 | max | "
           "requests/s | broker CPU / request | clients' CPU / request | target |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for design, row in zip(designs, rows):
        out.append(
            f"| {design_label(*design)} | {row['clients']} | {pace_cell(row)} | "
            f"{row['idle']:,} | "
            f"{requests_cell(row)} | {row['lost']} | {ms(row['p50_us'])} ms | "
            f"{ms(row['p99_us'])} ms | {ms(row['max_us'])} ms | {row['requests_per_s']:,.0f} | "
            f"{per_request(row['broker_cpu_ms'], row):,.0f} µs | "
            f"{row['clients_cpu_ms'] / max(1, row['answered'] + row['lost']) * 1e3:,.0f} µs | "
            f"{verdict(row)} |")
    met = [r for r in rows if verdict(r) == "met"]
    untimed = 1 + args.warmup
    agree = [r for r in rows if r["broker_answered"] == r["answered"] + untimed
             and r["broker_refused"] == r["lost"]]
    out += ["",
            f"Lost requests: **{total_lost}** in all {len(rows)} scenarios"
            + (" (every request was answered `pong`)." if total_lost == 0 else ":")
            + f" The broker's own count, from the line `sandbox-host serve` prints when it "
            f"stops, agrees in {len(agree)} of {len(rows)} scenarios: it answered the timed "
            f"requests and the {untimed} untimed ones (readiness and warm-up), and refused "
            "as many as were lost."]
    for design, row in zip(designs, rows):
        if row not in agree:
            out.append(f"- differs: {scenario_text(design, row)}: the broker answered "
                       f"{row['broker_answered']:,} "
                       f"and refused {row['broker_refused']:,}, the clients got "
                       f"{row['answered']:,} answers and lost {row['lost']:,}")
    for design, row in zip(designs, rows):
        for error in row["errors"]:
            out.append(f"- {scenario_text(design, row)}: {error['count']} × "
                       f"`{error['first']}`")
    out += ["",
            f"The target (p50 ≤ {TARGET_P50_MS} ms and p99 ≤ {TARGET_P99_MS:g} ms) is met in "
            f"{len(met)} of {len(rows)} scenarios: "
            + ("; ".join(scenario_text(d, r) for d, r in zip(designs, rows)
                         if verdict(r) == "met")
               or "none")
            + ". It is **missed** in every other one; why, below."]
    out += findings(rows, designs, args)
    out += render_ab(ab_rows, args)
    out += ["", "### Exactly what ran", "",
            "`sandbox-host`, `sandbox-host-broker` (which `sandbox-host serve` and `ask` "
            "execute, from `<tmp>/libexec/sandbox-host/`),",
            "`broker_bench` and the modules are copies of the build's in a world-readable "
            "temporary directory `<tmp>`; the",
            "broker's state directory (its spool) and socket lie in a directory `<work>` of "
            "the user's, mode 0700. One",
            "process ran every scenario, in the first table's order, then the alternated "
            "runs:",
            "",
            "```sh",
            shlex.join(prefix + ran[:9]) + " \\"]
    specs = ran[9:]
    for i in range(0, len(specs), 2):
        out.append("  " + shlex.join(specs[i:i + 2]) + (" \\" if i + 2 < len(specs) else ""))
    out += ["```", "",
            "Each scenario's broker is `<tmp>/bin/sandbox-host serve --config <work>/<n>/config.toml` "
            "(plus `--socket <work>/<n>/broker.sock`",
            "for the socket, `--poll` for the seed), with this config (identity `scan` for the "
            "`scan` rows and the seed; the",
            "socket identifies its peer by `SO_PEERCRED`/`SO_PEERPIDFD` whatever the identity "
            "setting says):",
            "",
            "```toml",
            'module_dirs = ["<tmp>/lib/sandbox-host/modules"]',
            "",
            "[ops]",
            'enabled = ["ping"]',
            "",
            "[broker]",
            'state_dir = "<work>/<n>/state"',
            'identity = "lock"',
            f"tick_ms = {TICK_MS}",
            "```",
            "",
            "The other `[broker]` keys are the defaults: `max_concurrent = 64` (worker threads), "
            "`max_request_bytes`, `max_reply_bytes`.",
            f"Every scenario has a wall-clock cap of {args.cap_s} s: no client starts a "
            "request after it, and the row says how many",
            "were answered by then. The readiness and warm-up pings come from a forked child "
            "of broker_bench, like the",
            "clients' requests.",
            ""]
    out += machine_lines(env_info)
    out.append(
        f"- CPUs busy (all cores, /proc/stat) in the second before the run: {busy_before:.0%}; "
        f"CPU time used by anything but the bench and its descendants during it: "
        f"{foreign:.1%} of the machine (the least disturbed of {attempts} attempt"
        f"{'s' if attempts != 1 else ''}, at most {args.attempts}); load average before / "
        f"after: {load_before} / {load_after}")
    if foreign > args.max_foreign:
        out.append(f"- note: that is more than the {args.max_foreign:.0%} this script accepts "
                   "as quiet; the times are noisier than on an idle machine")
    command = (f"python3 bench/broker_report.py --build {display_path(args.build)} "
               f"--requests {args.requests} --idle {args.idle} --seed-requests "
               f"{','.join(map(str, args.seed_requests))} --cap-s {args.cap_s} "
               f"--warmup {args.warmup} --paced-rate {args.paced_rate} --ab-rounds "
               f"{args.ab_rounds} --ab-requests {args.ab_requests} --ab-scan-requests "
               f"{args.ab_scan_requests}")
    out += provenance_and_reproduce(revision, args.build, [],
                                    f"cmake --build build-bench -j2 --target {BUILD_TARGETS}",
                                    command)
    out.append(END)
    return "\n".join(out) + "\n"


def paced_findings(row, args):
    """The paragraphs on the 64 clients at a steady pace, against the back-to-back rows."""
    rate, idle = args.paced_rate, args.idle
    offered = PACED_CLIENTS * rate
    out = []
    lock_b2b = [r for r in (row("spool", "lock", "inotify", 64, 0),
                            row("spool", "lock", "inotify", 64, idle)) if r]
    if lock_b2b:
        out.append(
            f"- **{PACED_CLIENTS} clients at a steady pace** (*{rate}/s each*) are what a "
            f"gateway with {PACED_CLIENTS} sandboxes sharing one broker sees: requests that "
            "arrive when their sandbox needs them, not 64 always waiting. One rate for every "
            "design, because the load a gateway puts on its broker does not depend on how the "
            "broker is built, and a fixed one rather than one derived from each run's "
            "saturation, so that runs compare at the same offered load: "
            f"{rate} requests/s per client (one every {1000 / rate:g} ms), {offered:,}/s in "
            "all"
            + (", " + PACED_RATE_WHY if rate == PACED_RATE else "")
            + ". In this run it is "
            + " and ".join(f"{offered / r['requests_per_s']:.0%} of the "
                           f"{r['requests_per_s']:,.0f}/s spool `lock` answered back to back at "
                           f"64 clients, idle {r['idle']:,}" for r in lock_b2b)
            + ". The latency is "
            "from each request's scheduled time; the service time (from the call) and how "
            "many requests started more than 1 ms behind schedule are given here too:")
    keeps, falls = [], []
    for design in DESIGNS:
        if design[2] == "poll":
            continue
        for count in (0, idle):
            r = row(*design, PACED_CLIENTS, count, rate)
            b2b = row(*design, 64, count)
            if not r or not r["answered"]:
                continue
            capacity = b2b["requests_per_s"] if b2b else None
            kept = capacity is not None and capacity > offered \
                and r["requests_per_s"] >= 0.95 * offered
            (keeps if kept else falls).append((design, r, capacity))
            out.append(
                f"  - {design_label(*design)}, idle {count:,}: p50 {ms(r['p50_us'])} ms, p99 "
                f"{ms(r['p99_us'])} ms, max {ms(r['max_us'])} ms (service time p50 "
                f"{ms(r['service_p50_us'])}, p99 {ms(r['service_p99_us'])} ms); "
                f"{r['requests_per_s']:,.0f} answered/s of {offered:,} offered"
                + (f" (back to back it answered {capacity:,.0f}/s)" if capacity else "")
                + f"; {r['behind']:,} of {r['taken']:,} started behind schedule; "
                f"target {verdict(r).replace('**', '')}.")
    if keeps:
        late = max(r["behind"] / max(1, r["taken"]) for _, r, _ in keeps)
        close = all(r["p50_us"] <= 1.25 * r["service_p50_us"] for _, r, _ in keeps)
        one = row("spool", "lock", "inotify", 1, 0)
        sock = row("socket", "lock", "inotify", 1, 0)
        text = ("- Where the offered load is below the design's back-to-back throughput ("
                + "; ".join(f"{design_label(*d)}, idle {r['idle']:,}" for d, r, _ in keeps)
                + "), the broker keeps up: it answers what is asked, when it is asked; "
                + (f"few requests start more than 1 ms late (at most {late:.1%} in one row)"
                   if late <= 0.01 else
                   f"up to {late:.1%} of a row's requests start more than 1 ms late")
                + ", and the latency from the schedule is " + ("close to" if close else "above")
                + " the service time. What queueing there is comes from random arrivals "
                f"bunching up ({PACED_CLIENTS} clients, random phases, {os.cpu_count() or 1} "
                "CPUs), not from a standing queue, so these rows, "
                "unlike the back-to-back ones, show the round trip a sandbox waits for under a "
                "gateway's load, and the target applies to them as it is meant to.")
        if one and sock:
            lock_p = [r for d, r, _ in keeps if d == ("spool", "lock", "inotify")]
            sock_p = [r for d, r, _ in keeps if d[0] == "socket"]
            if lock_p and sock_p and lock_p[0]["service_p50_us"] > one["p50_us"] \
                    and sock_p[0]["service_p50_us"] > sock["p50_us"]:
                text += (
                    f" Their service time is longer than the one-client back-to-back round "
                    f"trip (spool `lock` p50 {ms(lock_p[0]['service_p50_us'])} against "
                    f"{ms(one['p50_us'])} ms, the socket {ms(sock_p[0]['service_p50_us'])} "
                    f"against {ms(sock['p50_us'])} ms): back to back, one client and the "
                    "broker keep a CPU each busy and hot; at a pace, both sleep between "
                    "requests, so a request pays for waking them and for cold caches (likely "
                    "more so on this virtual machine, whose idle vCPUs halt), and requests of "
                    f"different clients sometimes overlap on the {os.cpu_count() or 1} CPUs. "
                    "Each request costs more CPU that way "
                    f"too: broker and client together {cpu_per_request(lock_p[0]):,.0f} µs for "
                    f"spool `lock` at idle {lock_p[0]['idle']:,}, against "
                    f"{cpu_per_request(one):,.0f} µs back to back at one client, so the paced "
                    "load keeps "
                    f"{offered * cpu_per_request(lock_p[0]) / 1e6 / (os.cpu_count() or 1):.0%} "
                    "of the machine's CPU busy.")
        out.append(text)
    if falls:
        out.append(
            "- Where the offered load is above what the design answers back to back ("
            + "; ".join(f"{design_label(*d)}, idle {r['idle']:,}: "
                        + (f"{c:,.0f}/s" if c else "unknown") for d, r, c in falls)
            + f", against {offered:,}/s offered), the broker cannot keep up: each client falls "
            "further behind its schedule with every request, the latency from the schedule "
            "grows for the whole run, and the row's requests/s is what the design can answer, "
            "not what was asked. Its percentiles are no steady state: they grow with the "
            f"length of the run (here {args.requests:,} requests, "
            f"{args.requests / offered:.2f} s of schedule). The service time stays bounded, "
            "since each client has one request outstanding at most; the wait is in the "
            "requests not yet made.")
    met = [(d, r) for d, r, _ in keeps + falls if verdict(r) == "met"]
    missed = [(d, r, c) for d, r, c in keeps + falls if verdict(r) != "met"]
    if keeps or falls:
        def why(d, r, c):
            if (d, r, c) in falls:
                return "it cannot keep up with the offered load"
            service_misses = (r["service_p50_us"] / 1e3 > TARGET_P50_MS
                              and r["p50_us"] / 1e3 > TARGET_P50_MS) \
                or (r["service_p99_us"] / 1e3 > TARGET_P99_MS
                    and r["p99_us"] / 1e3 > TARGET_P99_MS)
            return (f"it keeps up; from the call alone (service time) p50 "
                    f"{ms(r['service_p50_us'])}, p99 {ms(r['service_p99_us'])} ms, so "
                    + ("the broker's round trip under this load misses the target by itself"
                       if service_misses else
                       "the time from the schedule to the call (the client waking, now and "
                       "then a previous answer that came late) tips it over"))
        out.append(
            f"- **The target at this pace** (p50 ≤ {TARGET_P50_MS} ms, p99 ≤ "
            f"{TARGET_P99_MS:g} ms from the schedule) is met by "
            + (" and ".join(f"{design_label(*d)} at idle {r['idle']:,}" for d, r in met)
               or "no design")
            + (". It is missed by " + "; ".join(
                f"{design_label(*d)} at idle {r['idle']:,} (p50 {ms(r['p50_us'])}, p99 "
                f"{ms(r['p99_us'])} ms): {why(d, r, c)}" for d, r, c in missed)
               if missed else "") + ". "
            f"A paced row lasts {args.requests / offered:.2f} s of schedule, so its p99 is the "
            f"slowest {args.requests // 100:,} requests of those seconds: a stall of some tens "
            "of milliseconds anywhere in them (the clients, the broker or this shared "
            "machine) moves it, and it varies more from run to run than the back-to-back "
            "rows' p99.")
    return out


def findings(rows, designs, args):
    """The paragraphs under the table, from the numbers."""
    by = {key_of(r): r for r in rows}
    idle = args.idle
    out = ["", "### How to read it", ""]

    def row(transport, identity, wake, clients, idle_count, rate=0):
        return by.get((transport, "peercred" if transport == "socket" else identity,
                       "socket" if transport == "socket" else wake, clients, idle_count, rate))

    # One client: the round trip itself.
    lock1, sock1 = row("spool", "lock", "inotify", 1, 0), row("socket", "lock", "", 1, 0)
    if lock1 and sock1:
        out.append(
            f"- **One client** measures the round trip itself: {ms(lock1['p50_us'])} ms (p50) "
            f"over the spool with identity `lock`, {ms(sock1['p50_us'])} ms over the socket. "
            "A spool request is a FIFO made, a file written, locked and renamed, an inotify "
            "wake-up, the broker's claim (open, fstat, unlink), the lock owner and its "
            "descendants read from `/proc`, the requester's `cwd` and mount namespace read, "
            "the reply written to the FIFO and the names removed; a socket request is a "
            "connect, one message each way and the peer's credentials from the kernel.")
    # 64 clients: Little's law.
    lines = []
    cpus = os.cpu_count() or 1
    for design in DESIGNS:
        transport, identity, wake = design
        r = row(transport, identity, wake, 64, 0)
        if r and r["requests_per_s"] and wake == "poll":
            lines.append(f"{design_label(*design)}: {r['requests_per_s']:,.0f} requests/s, "
                         f"so 64 / that = {64 / r['requests_per_s'] * 1e3:.2f} ms against a "
                         f"measured mean of {ms(r['mean_us'])} ms; it is bounded by the tick "
                         f"rather than by CPU: at most 64 requests per {TICK_MS} ms tick, "
                         f"{64 * 1000 // TICK_MS:,} requests/s")
        elif r and r["requests_per_s"]:
            lines.append(f"{design_label(*design)}: {r['requests_per_s']:,.0f} requests/s, "
                         f"so 64 / that = {64 / r['requests_per_s'] * 1e3:.2f} ms against a "
                         f"measured mean of {ms(r['mean_us'])} ms; its CPU ceiling, {cpus} CPUs "
                         f"/ {cpu_per_request(r):,.0f} µs per request, is "
                         f"{cpus / cpu_per_request(r) * 1e6:,.0f} requests/s")
    if lines:
        out.append(
            "- **64 clients asking back to back** measure throughput, not the round trip: "
            "with 64 requests always outstanding, each waits for the ones ahead of it, and "
            "the mean latency is 64 divided by the throughput (Little's law): "
            + "; ".join(lines) + f". The throughput of inotify and the socket is bounded by "
            f"CPU: this machine has "
            f"{cpus} CPUs, and each request costs the broker and its client the CPU in the "
            f"last two columns. At 64 clients, a p50 of {TARGET_P50_MS} ms would need "
            f"{64 / (TARGET_P50_MS / 1e3):,.0f} requests/s, i.e. under "
            f"{cpus / (64 / (TARGET_P50_MS / 1e3)) * 1e6:.0f} µs of CPU per request, "
            f"broker and client together, and p99 ≤ {TARGET_P99_MS:g} ms alone at least "
            f"{64 / (TARGET_P99_MS / 1e3):,.0f} requests/s (the mean lies below the p99); no "
            "design comes near it on this machine, so at 64 clients asking back to back the "
            "target is out of reach for all of them, and what tells the designs apart there "
            "is their throughput (requests/s), i.e. their CPU per request. That is a "
            "saturated broker, not what 64 sandboxes ordinarily do to it; the paced rows are.")
    out += paced_findings(row, args)
    # Idle processes: does the scan grow?
    growth = []
    for design in DESIGNS:
        transport, identity, wake = design
        a, b = row(transport, identity, wake, 1, 0), row(transport, identity, wake, 1, idle)
        if a and b and a["answered"] and b["answered"]:
            growth.append((design, a, b))
    if growth:
        parts = []
        for design, a, b in growth:
            parts.append(
                f"{design_label(*design)}: p50 {ms(a['p50_us'])} → {ms(b['p50_us'])} ms, broker "
                f"CPU {per_request(a['broker_cpu_ms'], a):,.0f} → "
                f"{per_request(b['broker_cpu_ms'], b):,.0f} µs per request")
        out.append(
            f"- **{idle:,} idle processes** (one client, idle 0 → {idle:,}): "
            + "; ".join(parts) + ". Identity `lock` and the socket never walk `/proc`: the "
            "kernel names the lock's owner (or the socket's peer), and the broker reads that "
            "one process's descriptors and its descendants' (none here), so the number of "
            "other processes does not enter. Identity `scan` walks every process of the "
            "broker's user (`/proc/<pid>` owned by it) and stats each one's descriptors, "
            "once per request: its cost grows linearly with the processes of that user, "
            "without bound. The processes of other users are skipped by a `stat` of "
            "`/proc/<pid>` each, so they cost little, but they are still listed.")
        a, b = row("spool", "lock", "inotify", 64, 0), row("spool", "lock", "inotify", 64, idle)
        if a and b:
            out.append(
                f"- Identity `lock` walks no `/proc` at any load, so what differs between its "
                f"idle-0 and idle-{idle:,} rows at 64 clients back to back is the machine's "
                f"noise (others' "
                f"load, see below): broker CPU per request "
                f"{per_request(a['broker_cpu_ms'], a):,.0f} µs at idle 0, "
                f"{per_request(b['broker_cpu_ms'], b):,.0f} µs at idle {idle:,}; p50 "
                f"{ms(a['p50_us'])} and {ms(b['p50_us'])} ms.")
        scan1 = row("spool", "scan", "inotify", 1, 0)
        scan64 = row("spool", "scan", "inotify", 64, 0)
        locks = [r for r in (row("spool", "lock", "inotify", 1, 0),
                             row("spool", "lock", "inotify", 64, 0)) if r]
        if scan1 and scan64 and scan1["answered"] and scan64["answered"]:
            out.append(
                "- The clients are processes of the broker's user too, so under identity "
                "`scan` concurrency alone makes every scan longer: broker CPU per request "
                f"{per_request(scan1['broker_cpu_ms'], scan1):,.0f} µs at 1 client, "
                f"{per_request(scan64['broker_cpu_ms'], scan64):,.0f} µs at 64 (idle 0), "
                "against " + " and ".join(f"{per_request(r['broker_cpu_ms'], r):,.0f} µs"
                                          for r in locks)
                + " for `lock`: n requesters waiting at once cost n scans of n processes.")
    seed1 = row("spool", "scan", "poll", 1, 0)
    seed64 = row("spool", "scan", "poll", 64, 0)
    if seed1:
        out.append(
            f"- **The seed's design** finds a request only at the next tick: a request "
            f"waits up to {TICK_MS} ms for it, and a client asking back to back waits "
            f"almost the whole tick every time, because its next request arrives just after "
            f"the scan that found the last one (p50 {ms(seed1['p50_us'])} ms at one client). "
            f"A request arriving at a random time would wait {TICK_MS / 2:g} ms on average. "
            "Its rows ran fewer requests (" + ", ".join(
                f"{r['requests']:,} at {clients_text(r['clients'])}"
                for r in (seed1, seed64) if r)
            + f"), since one client makes only {1000 // TICK_MS} requests a second.")
    capped = [(d, r) for d, r in zip(designs, rows) if r["capped"]]
    if capped:
        out.append("- Stopped at the cap: " + "; ".join(
            f"{scenario_text(d, r)} "
            f"({r['answered']:,} of {r['requests']:,} answered in {r['wall_s']:.0f} s)"
            for d, r in capped) + ". Their percentiles are over the requests answered.")
    out.append(
        "- *broker CPU / request* is the broker's user + system time (`wait4`) divided by "
        "the requests it answered (the timed ones, the readiness ping and the warm-up); "
        "*clients' CPU / request* is the clients' (`wait4`) divided by their requests. "
        "Both include the kernel's work in the system calls they made.")
    return out


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
