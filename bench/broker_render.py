"""The broker-bench section of docs/benchmarks.md that bench/broker_report.py writes: the
tables of the designs and the A/B rounds, against the targets.
"""

import os
import shlex

from bench_common import display_path, machine_lines, provenance_and_reproduce
from broker_run import BUILD_TARGETS, design_label, PACED_CLIENTS, TICK_MS
from broker_cells import (ms, pace_cell, per_request, requests_cell, scenario_text, share_text,
                          TARGET_P50_MS, TARGET_P99_MS, verdict)
from broker_findings import findings


BEGIN = "<!-- broker-bench:begin -->"
END = "<!-- broker-bench:end -->"


# ---- the section ----------------------------------------------------------------------------

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
