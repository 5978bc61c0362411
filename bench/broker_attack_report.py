#!/usr/bin/env python3
"""The broker under attack: ONE honest client asks `ping` back to back (over the spool,
identity "lock", and over its own labelled broker socket) from the host's pid namespace,
while the hostile sandbox of tests/host/broker/abuse_test.cpp holds on (64 processes in a
namespaces sandbox that ask for 1 MB replies over the spool and their socket and never read
them, hold idle connections and send a 100 KB op name), beside the same client with no
attack in the same run. All run by ONE broker_bench process as an unprivileged user.
Rewrites the "Under attack" subsection of docs/benchmarks.md's broker section.

Usage, from the repository root after building into build-bench with the tests on (the
hostile client and the `whoami` module it asks are test targets):
    python3 bench/broker_attack_report.py --build build-bench [--requests 10000]
                                          [--hostile 64] [--hostile-each 2] [--max-load 2]

Builds nothing. Stages the build as bench/broker_report.py does (sandbox-host,
sandbox-host-broker, broker_bench, the modules), plus bin/hostile_client and the test module
op_whoami.so, and runs broker_bench as --user (default 65534, nobody) through `setpriv`
when run as root. Before timing it waits (at most --max-load-wait seconds) for the 1-minute
load average to fall below --max-load, and checks, as the same user, that both transports
answer with and without a small hostile sandbox. Only the text between the broker-attack
markers is rewritten; they are placed after the broker section's when missing.
"""

import argparse
import json
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench_common import (DOCS, REPO, add_run_arguments, die, display_path, launch_env,
                          load_average, machine, machine_lines, quietly, runner,
                          source_revision, user_dir, write_section)
from broker_run import BENCH, TICK_MS, bench_argv, run_bench, stage
from broker_cells import TARGET_P99_MS, ms
from broker_render import END as BROKER_END

BEGIN = "<!-- broker-attack-bench:begin -->"
END = "<!-- broker-attack-bench:end -->"
HOSTILE = "hostile_client"
WHOAMI = "op_whoami.so"
BUILD_TARGETS = "sandbox-host broker_bench op_ping op_whoami hostile_client"
TRANSPORTS = ("spool", "socket")
CHECK_HOSTILE = 4
# [broker] reply_timeout_ms by default: how long a hostile call holds its thread.
REPLY_TIMEOUT_MS = 10000


def spec(transport, requests, hostile, hostile_each):
    head = ("transport=spool,identity=lock,wake=inotify" if transport == "spool"
            else "transport=socket")
    return (f"{head},tick={TICK_MS},clients=1,idle=0,requests={requests},hostile={hostile},"
            f"hostile_each={hostile_each}")


def scenarios(args):
    """Per transport: the quiet layout, then the same under attack: (transport, attacked, spec)."""
    return [(transport, hostile > 0, spec(transport, args.requests, hostile, args.hostile_each))
            for transport in TRANSPORTS for hostile in (0, args.hostile)]


def stage_attack(build, staged):
    """broker_report's staged build, plus the hostile client and the module it asks."""
    exe = stage(build, staged)
    hostile = build / "bin" / HOSTILE
    whoami = build / "tests" / "test-modules" / WHOAMI
    if not hostile.is_file():
        die(f"{hostile}: missing; configure with -DSANDBOX_HOST_TESTS=ON and build the target "
            f"{HOSTILE}")
    if not whoami.is_file():
        die(f"{whoami}: missing; configure with -DSANDBOX_HOST_TESTS=ON and build the target "
            "op_whoami")
    shutil.copy2(hostile, staged / "bin" / HOSTILE)
    (staged / "bin" / HOSTILE).chmod(0o755)
    shutil.copy2(whoami, staged / "lib" / "sandbox-host" / "modules" / WHOAMI)
    (staged / "lib" / "sandbox-host" / "modules" / WHOAMI).chmod(0o644)
    return exe, staged / "bin" / HOSTILE


def one_minute_load():
    return float(Path("/proc/loadavg").read_text().split()[0])


def wait_for_load(limit, max_wait):
    """Waits (up to max_wait seconds) until the 1-minute load average is below limit; returns
    (the load then, seconds waited)."""
    start = time.monotonic()
    load = one_minute_load()
    while load >= limit and time.monotonic() - start < max_wait:
        print(f"waiting for the 1-minute load average ({load:.2f}) to fall below {limit:g}",
              file=sys.stderr)
        time.sleep(15)
        load = one_minute_load()
    return load, time.monotonic() - start


# ---- the subsection -------------------------------------------------------------------------

def ratio(attacked, quiet):
    if attacked is None or quiet is None or quiet == 0:
        return "–"
    return f"{attacked / quiet:.2f}×"


def transport_label(transport):
    return ("spool, `lock`, inotify" if transport == "spool"
            else "its own socket (`honest.sock`, label `honest`)")


def per_request_us(cpu_ms, count):
    return cpu_ms / max(1, count) * 1e3


def render(pairs, env_info, waited, load_waited, busy_before, foreign, attempts, load_before,
           load_after, prefix, ran, args, revision):
    who = (f"uid {args.user}" + (", `nobody`" if args.user == 65534 else "")) if prefix \
        else "the invoking user"
    out = [BEGIN, "",
           f"### Under attack: one honest client's `ping` beside a hostile sandbox of "
           f"{args.hostile} processes",
           "",
           "Does a hostile sandbox delay another sandbox's requests? The broker bounds each "
           "requester (docs/broker.md, \"Bounds:",
           "a hostile sandbox\"); this measures what is left of the honest requester's round "
           "trip. The hostile sandbox is",
           "the one of `tests/host/broker/abuse_test.cpp` (`AHostileSandboxDelaysNoOtherSandboxsPing`): "
           f"`sandbox-host run` (namespaces backend, a pid",
           f"namespace of its own) of `hostile_client hold <spool> <hostile.sock> {args.hostile} "
           f"{args.hostile_each}` (`tests/fixtures/hostile_client.cpp`): each of its",
           f"{args.hostile} processes asks `whoami big 1000000` (a 1 MB reply) {args.hostile_each} "
           "times over the spool and as many over its sandbox's socket (label `hostile`)",
           "and never reads a reply, opens as many connections that send nothing, and sends "
           "one request with a 100 KB op name;",
           "then they all hold on. The broker is started and warmed up, the sandbox launched, "
           "and the honest client released",
           "as soon as the sandbox prints `ready` (all its requests are in); the sandbox is "
           "killed when the client is done.",
           "",
           f"The honest client is ONE process of the same user ({who}) in the host's pid "
           f"namespace, outside the hostile sandbox,",
           f"asking `ping` {args.requests:,} times back to back, timed as in the table above, "
           "over the spool (identity `lock`)",
           "or over a socket of its own (label `honest`). *quiet* is the same client against "
           "the same layout (the same config, both",
           "sockets) with no hostile sandbox, in the same run just before. *ratio* is under "
           "attack / quiet. Target, from the issue:",
           f"the honest p99 under attack stays within the section's p99 target, "
           f"{TARGET_P99_MS:g} ms.",
           "",
           "| honest client over | quiet p50 | quiet p99 | quiet max | quiet lost "
           "| attacked p50 | attacked p99 | attacked max | attacked lost "
           "| ratio p50 | ratio p99 | ratio max | p99 target under attack |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for transport, quiet, attacked in pairs:
        met = attacked["answered"] > 0 and attacked["p99_us"] / 1e3 <= TARGET_P99_MS \
            and attacked["lost"] == 0
        verdict = "met" if met else "**missed**"
        out.append(
            f"| {transport_label(transport)} | {ms(quiet['p50_us'])} ms | "
            f"{ms(quiet['p99_us'])} ms | {ms(quiet['max_us'])} ms | {quiet['lost']} | "
            f"{ms(attacked['p50_us'])} ms | {ms(attacked['p99_us'])} ms | "
            f"{ms(attacked['max_us'])} ms | {attacked['lost']} | "
            f"{ratio(attacked['p50_us'], quiet['p50_us'])} | "
            f"{ratio(attacked['p99_us'], quiet['p99_us'])} | "
            f"{ratio(attacked['max_us'], quiet['max_us'])} | {verdict} |")
    out += ["",
            "Around them: *timed part* is from the release of the honest client to its last "
            "answer; *CPUs busy* is all cores'",
            "busy time in it (/proc/stat), anyone's; *broker CPU in it* is the broker's user + "
            "system time in it (/proc/<pid>/stat),",
            "per honest request; *answered / refused* is the broker's own count over its "
            "whole life (the honest requests, the",
            f"{1 + args.warmup} untimed pings and, under attack, the hostile sandbox's "
            "requests).",
            "",
            "| honest client over | run | requests answered | requests/s | timed part "
            "| CPUs busy in it | broker CPU in it / honest request | broker answered / refused "
            "| sandbox launch to `ready` |",
            "|---|---|---|---|---|---|---|---|---|"]
    for transport, quiet, attacked in pairs:
        for row, name in ((quiet, "quiet"), (attacked, "under attack")):
            ready = f"{row['hostile_ready_s']:.2f} s" if row["hostile"] > 0 else "–"
            out.append(
                f"| {transport_label(transport)} | {name} | {row['answered']:,} | "
                f"{row['requests_per_s']:,.0f} | {row['wall_s']:.2f} s | "
                f"{row['machine_busy']:.0%} | "
                f"{per_request_us(row['broker_cpu_timed_ms'], row['answered']):,.0f} µs | "
                f"{row['broker_answered']:,} / {row['broker_refused']:,} | {ready} |")
    out += [""] + findings(pairs, args)
    for transport, quiet, attacked in pairs:
        for row, name in ((quiet, "quiet"), (attacked, "under attack")):
            for error in row["errors"]:
                out.append(f"- lost, {transport}, {name}: {error['count']} × `{error['first']}`")
    out += ["",
            "#### Exactly what ran",
            "",
            "The staged build of the table above (`<tmp>`), plus `<tmp>/bin/hostile_client` and "
            "the test module `op_whoami.so` in",
            "`<tmp>/lib/sandbox-host/modules`; one process ran the four scenarios, in this "
            "order:",
            "",
            "```sh",
            shlex.join(prefix + ran[:11]) + " \\"]
    specs = ran[11:]
    for i in range(0, len(specs), 2):
        out.append("  " + shlex.join(specs[i:i + 2]) + (" \\" if i + 2 < len(specs) else ""))
    out += ["```",
            "",
            "Each scenario's broker is `<tmp>/bin/sandbox-host serve --config "
            "<work>/<n>/config.toml --socket <work>/<n>/honest.sock=honest",
            "--socket <work>/<n>/hostile.sock=hostile`, with the `[broker]` defaults otherwise "
            "(`max_concurrent = 64`, `max_per_requester = 64`,",
            "`max_queued = 256`, `reply_timeout_ms = 10000`):",
            "",
            "```toml",
            'module_dirs = ["<tmp>/lib/sandbox-host/modules"]',
            "",
            "[ops]",
            'enabled = ["ping", "whoami"]',
            "",
            "[broker]",
            'state_dir = "<work>/<n>/sandbox/state"',
            'identity = "lock"',
            f"tick_ms = {TICK_MS}",
            "```",
            "",
            "and the hostile sandbox, launched by broker_bench as the same user with "
            "`CLAWPATROL_SANDBOX_BACKEND=namespaces`:",
            "",
            "```sh",
            "<tmp>/bin/sandbox-host run --socket-dir <work>/<n>/sandbox --read <tmp>/bin "
            "--read <work>/<n>/hostile.sock -- \\",
            f"  <tmp>/bin/hostile_client hold <work>/<n>/sandbox/state/spool "
            f"<work>/<n>/hostile.sock {args.hostile} {args.hostile_each}",
            "```",
            ""]
    out += ["#" + line if line.startswith("### ") else line for line in machine_lines(env_info)]
    if load_waited < args.max_load:
        wait_text = (f"waited {waited:.0f} s for the 1-minute load to fall below "
                     f"{args.max_load:g}")
    else:
        wait_text = (f"the 1-minute load stayed at or above {args.max_load:g} for the "
                     f"{waited:.0f} s waited (at most {args.max_load_wait:.0f} s; others' builds "
                     f"were running); measured anyway")
    out.append(
        f"- load average (1, 5, 15 min) before / after the run: {load_before} / {load_after}; "
        + wait_text)
    out.append(
        f"- CPUs busy (all cores, /proc/stat) in the second before the run: {busy_before:.0%}; "
        f"CPU time used by anything but the bench and its descendants during it: "
        f"{foreign:.1%} of the machine (the least disturbed of {attempts} attempt"
        f"{'s' if attempts != 1 else ''}, at most {args.attempts})")
    if foreign > args.max_foreign:
        out.append(f"- note: that is more than the {args.max_foreign:.0%} this script accepts "
                   "as quiet; the times are noisier than on an idle machine")
    if revision:
        out.append(f"- source: {revision}")
    out.append(f"- build: RelWithDebInfo, `{display_path(args.build)}`")
    command = (f"python3 bench/broker_attack_report.py --build {display_path(args.build)} "
               f"--requests {args.requests} --hostile {args.hostile} --hostile-each "
               f"{args.hostile_each} --cap-s {args.cap_s} --warmup {args.warmup} "
               f"--max-load {args.max_load:g} --max-load-wait {args.max_load_wait:.0f}")
    out += ["",
            "#### Reproduce",
            "",
            "From the repository root, as root (it drops to nobody) or as an unprivileged user; "
            "the tests must be on (the hostile",
            "client and `whoami` are test targets):",
            "",
            "```sh",
            "cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSANDBOX_HOST_BENCH=ON "
            "-DSANDBOX_HOST_TESTS=ON",
            f"cmake --build build-bench -j1 --target {BUILD_TARGETS}",
            command,
            "```",
            "",
            END]
    return "\n".join(out) + "\n"


def findings(pairs, args):
    """The verdict in words, and what the numbers say about why."""
    out = []
    for transport, quiet, attacked in pairs:
        p99 = attacked["p99_us"] / 1e3
        text = (f"- **{transport_label(transport)}**: p99 {ms(quiet['p99_us'])} ms quiet, "
                f"{ms(attacked['p99_us'])} ms under attack "
                f"({ratio(attacked['p99_us'], quiet['p99_us'])}); ")
        if attacked["answered"] and p99 <= TARGET_P99_MS and attacked["lost"] == 0:
            text += (f"the target (p99 ≤ {TARGET_P99_MS:g} ms under attack, none lost) is "
                     "**met**.")
        else:
            reasons = []
            if attacked["lost"]:
                reasons.append(f"{attacked['lost']:,} requests lost")
            if p99 > TARGET_P99_MS:
                reasons.append(f"p99 {p99:.3f} ms > {TARGET_P99_MS:g} ms")
            text += "the target is **missed** (" + ", ".join(reasons) + ")."
            if quiet["p99_us"] / 1e3 > TARGET_P99_MS:
                text += (f" The quiet run misses it too (p99 {ms(quiet['p99_us'])} ms), so the "
                         "miss is not the attack's alone: the same client on this machine, "
                         "at this moment, has that tail without any hostile sandbox.")
        extra = attacked["broker_cpu_timed_ms"] - quiet["broker_cpu_timed_ms"] \
            * attacked["answered"] / max(1, quiet["answered"])
        text += (f" In the timed part the machine's CPUs were {quiet['machine_busy']:.0%} busy "
                 f"quiet and {attacked['machine_busy']:.0%} under attack; the broker used "
                 f"{per_request_us(quiet['broker_cpu_timed_ms'], quiet['answered']):,.0f} µs "
                 "of CPU per honest request quiet and "
                 f"{per_request_us(attacked['broker_cpu_timed_ms'], attacked['answered']):,.0f}"
                 f" µs under attack, i.e. about {max(0.0, extra):,.0f} ms more in "
                 f"{attacked['wall_s']:.2f} s for the hostile sandbox's requests "
                 f"({max(0.0, extra) / 1e3 / max(1e-9, attacked['wall_s']):.1%} of one CPU).")
        if attacked["p99_us"] < quiet["p99_us"]:
            text += (" Its p99 under attack is below the quiet one: the difference is this "
                     "shared machine's noise between two runs seconds apart, not an effect of "
                     "the attack.")
        out.append(text)
    lengths = [attacked["wall_s"] for _, _, attacked in pairs]
    if max(lengths) * 1e3 < REPLY_TIMEOUT_MS:
        out.append(
            f"- Every attacked timed part ({' and '.join(f'{w:.2f} s' for w in lengths)}) is "
            f"shorter than `reply_timeout_ms` ({REPLY_TIMEOUT_MS / 1e3:g} s). By the bounds "
            "(docs/broker.md), the hostile calls the broker takes first may hold their threads "
            "(a quarter of `max_concurrent` per hostile requester: the sandbox's pid namespace "
            "on the spool, the label `hostile` on its socket) that long before their unread "
            "replies end them, so the attack is in force for the whole timed part; this is "
            "inferred from the bounds, not measured by the bench.")
    return out


def place_markers():
    """The subsection's markers right after the broker section's, when they are missing."""
    text = DOCS.read_text()
    if BEGIN in text and END in text:
        return
    at = text.find(BROKER_END)
    if at == -1:
        return  # write_section appends it at the end
    at += len(BROKER_END)
    DOCS.write_text(text[:at] + "\n\n" + BEGIN + "\n" + END + text[at:])


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(REPO / "build"), type=Path,
                        help="build tree (tests on) with bin/sandbox-host, bin/broker_bench, "
                             "bin/hostile_client, tests/test-modules/op_whoami.so, "
                             "libexec/sandbox-host/sandbox-host-broker and "
                             "lib/sandbox-host/modules (default: build)")
    parser.add_argument("--requests", type=int, default=10000,
                        help="the honest client's pings per scenario (default: 10000)")
    parser.add_argument("--hostile", type=int, default=64,
                        help="processes of the hostile sandbox (default: 64)")
    parser.add_argument("--hostile-each", type=int, default=2,
                        help="large requests each hostile process holds per transport "
                             "(default: 2)")
    parser.add_argument("--cap-s", type=int, default=120,
                        help="wall-clock cap per scenario, in seconds (default: 120)")
    parser.add_argument("--warmup", type=int, default=20,
                        help="untimed pings before each scenario (default: 20)")
    parser.add_argument("--max-load", type=float, default=2.0,
                        help="wait until the 1-minute load average is below this (default: 2)")
    parser.add_argument("--max-load-wait", type=float, default=900,
                        help="seconds to wait for that before measuring anyway (default: 900)")
    add_run_arguments(parser)
    # The load wait comes first; the whole run takes under two minutes.
    parser.set_defaults(attempts=2, max_wait=60)
    args = parser.parse_args()
    if args.requests < 1 or args.hostile < 1 or args.cap_s < 1 or args.warmup < 0 \
            or args.attempts < 1 or not 1 <= args.hostile_each <= 64:
        parser.error("--requests, --hostile, --cap-s and --attempts must be at least 1, "
                     "--hostile-each 1 to 64, --warmup not negative")
    if args.requests < 1000 and not args.no_write:
        parser.error("--requests must be at least 1000 to write docs/benchmarks.md (use "
                     "--no-write to try fewer)")
    args.build = args.build.resolve()
    return args


def main():
    args = parse_args()
    prefix = runner(args.user)
    with tempfile.TemporaryDirectory(prefix="broker-attack-bench-") as tmp_name:
        tmp = Path(tmp_name)
        tmp.chmod(0o755)
        staged = tmp / "stage"
        exe, hostile = stage_attack(args.build, staged)
        bench = staged / "bin" / BENCH
        work = user_dir(tmp / "work", args.user)
        env = launch_env(work)
        env.pop("CLAWPATROL_SANDBOX_BACKEND", None)  # broker_bench sets it for the sandbox
        cwd = str(work)

        def argv_for(run_dir, specs, cap_s, warmup):
            argv = bench_argv(bench, exe, run_dir, specs, cap_s, warmup)
            return argv[:1] + ["--hostile-client", str(hostile)] + argv[1:]

        # Both transports answer, quiet and beside a small hostile sandbox, none lost.
        check_specs = [spec(t, 50, h, 1) for t in TRANSPORTS for h in (0, CHECK_HOSTILE)]
        check = run_bench(prefix, argv_for(work / "check", check_specs, 60, 1), env, cwd,
                          timeout=600)
        for r in check:
            if r["lost"] or r["answered"] != r["requests"]:
                die(f"the check run lost requests: {json.dumps(r)}")

        listed = scenarios(args)
        argv = argv_for(work / "run", [s for *_, s in listed], args.cap_s, args.warmup)
        timeout = len(listed) * (args.cap_s + 150)
        load_waited, waited = wait_for_load(args.max_load, args.max_load_wait)
        env_info = machine()

        def measure():
            shutil.rmtree(work / "run", ignore_errors=True)
            before = load_average()
            rows = run_bench(prefix, argv, env, cwd, timeout)
            return before, load_average(), rows

        (load_before, load_after, rows), foreign, busy_before, attempts = quietly(measure, args)
        if len(rows) != len(listed):
            die(f"{BENCH} reported {len(rows)} scenarios, want {len(listed)}")
        ran = [c.replace(str(staged), "<tmp>").replace(str(work / "run"), "<work>")
               for c in argv]
    raw = Path(tempfile.gettempdir()) / "broker-attack-bench-last.jsonl"
    raw.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"the scenarios' JSON: {raw}", file=sys.stderr)
    by = {(transport, attacked): row for (transport, attacked, _), row in zip(listed, rows)}
    pairs = [(t, by[(t, False)], by[(t, True)]) for t in TRANSPORTS]
    section = render(pairs, env_info, waited, load_waited, busy_before, foreign, attempts,
                     load_before, load_after, prefix, ran, args, source_revision())
    if args.no_write:
        print(section)
    else:
        place_markers()
        write_section(section, BEGIN, END)
        print(f"wrote {DOCS}", file=sys.stderr)
    for transport, quiet, attacked in pairs:
        print(f"{transport:6}: quiet p50 {ms(quiet['p50_us'])} p99 {ms(quiet['p99_us'])} max "
              f"{ms(quiet['max_us'])} ms lost {quiet['lost']}; attacked p50 "
              f"{ms(attacked['p50_us'])} p99 {ms(attacked['p99_us'])} max "
              f"{ms(attacked['max_us'])} ms lost {attacked['lost']}", file=sys.stderr)


if __name__ == "__main__":
    main()
