#!/usr/bin/env python3
"""Run spawn_bench (and hyperfine, when installed) and rewrite the spawn-bench section of
docs/benchmarks.md.

Usage, from the repository root after building into build-bench:
    python3 bench/report.py build-bench/bin/spawn_bench

Only the text between the spawn-bench begin/end markers is rewritten; anything else in
docs/benchmarks.md is kept. The namespaces backend against unshare and bubblewrap has its own
section and script: bench/namespaces_report.py (and bench/namespaces_phases.py for where its
time goes).
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

from bench_common import (DOCS, die, display_path, load_average, machine, output_of,
                          source_revision, write_section)

BEGIN = "<!-- spawn-bench:begin -->"
END = "<!-- spawn-bench:end -->"
PLUGIN = "/bin/true"
CONFIG_TEXT = '[plugins.bench]\nsandbox = "off"\n'
REPETITIONS = 5
HYPERFINE_WARMUP = 20
HYPERFINE_RUNS = 200

# The spawn_bench benchmarks this report reads, in table order: name, what it runs.
BENCHMARKS = [
    ("BM_BareSpawn", f"bare spawn: `{PLUGIN}`"),
    ("BM_SandboxHostRunOff", f"`sandbox-host run --config <off.toml> --name bench -- {PLUGIN}`"),
]

TO_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def run_spawn_bench(binary):
    command = [
        str(binary),
        "--benchmark_format=json",
        f"--benchmark_repetitions={REPETITIONS}",
        "--benchmark_report_aggregates_only=true",
    ]
    print("running:", shlex.join(command), file=sys.stderr)
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        die(f"spawn_bench exited {result.returncode}:\n{result.stderr}")
    data = json.loads(result.stdout)
    errors = [b for b in data["benchmarks"] if b.get("error_occurred")]
    if errors:
        die("spawn_bench reported errors; nothing written:\n" +
            "\n".join(f"  {b['name']}: {b.get('error_message')}" for b in errors))

    rows = {}
    for name, _ in BENCHMARKS:
        aggregates = {
            b["aggregate_name"]: b
            for b in data["benchmarks"]
            if b.get("run_type") == "aggregate" and b["run_name"].split("/")[0] == name
        }
        if "mean" not in aggregates:
            die(f"spawn_bench printed no mean aggregate for {name}")
        mean = aggregates["mean"]
        unit = TO_MS[mean["time_unit"]]
        stddev = aggregates.get("stddev")
        peak = aggregates.get("max", mean)
        # An aggregate's "iterations" counts repetitions; the per-repetition count is in
        # the name (…/iterations:N/…).
        per_run = [part.split(":", 1)[1] for part in mean["run_name"].split("/")
                   if part.startswith("iterations:")]
        median = aggregates.get("median")
        rows[name] = {
            "run_name": mean["run_name"],
            "iterations": int(per_run[0]) if per_run else None,
            "median_ms": median["real_time"] * TO_MS[median["time_unit"]] if median else None,
            "mean_ms": mean["real_time"] * unit,
            "stddev_ms": stddev["real_time"] * TO_MS[stddev["time_unit"]] if stddev else None,
            "max_rss_kib": peak.get("max_rss_KiB"),
            "child_cpu_ms": mean.get("child_cpu_ms"),
        }
    return data["context"], rows


def command_works(command):
    """None when command exits 0, else a one-line reason."""
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    if result.returncode == 0:
        return None
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    return f"exit status {result.returncode}" + (f": {lines[-1].strip()}" if lines else "")


def run_hyperfine(sandbox_host, config_path):
    """(rows, notes); rows is None when hyperfine is not installed or did not run."""
    notes = []
    hyperfine = shutil.which("hyperfine")
    if hyperfine is None:
        return None, ["hyperfine is not installed; this row set was skipped."]
    candidates = [
        ("bare `/bin/true`", [PLUGIN], True),
        ("`sandbox-host run` (off)",
         [sandbox_host, "run", "--config", config_path, "--name", "bench", "--", PLUGIN], True),
        ("peer: `bwrap --ro-bind / / /bin/true`", ["bwrap", "--ro-bind", "/", "/", PLUGIN], False),
        ("peer: `unshare --user --map-root-user /bin/true`",
         ["unshare", "--user", "--map-root-user", PLUGIN], False),
    ]
    commands = []
    for label, argv, required in candidates:
        if shutil.which(argv[0]) is None:
            reason = f"`{argv[0]}` is not installed"
        else:
            reason = command_works(argv)
        if reason is None:
            commands.append((label, argv))
        elif required:
            die(f"`{shlex.join(argv)}` does not work on this machine ({reason})")
        else:
            notes.append(f"{label} skipped: it fails on this machine ({reason}).")

    with tempfile.TemporaryDirectory(prefix="spawn-bench-hyperfine-") as tmp:
        export = Path(tmp) / "hyperfine.json"
        command = [hyperfine, "-N", "--warmup", str(HYPERFINE_WARMUP), "--runs",
                   str(HYPERFINE_RUNS), "--style", "basic", "--export-json", str(export)]
        command += [shlex.join(argv) for _, argv in commands]
        print("running:", shlex.join(command), file=sys.stderr)
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            return None, notes + [f"hyperfine failed (exit status {result.returncode}): "
                                  f"{result.stderr.strip().splitlines()[-1:]}"]
        results = json.loads(export.read_text())["results"]
    rows = []
    for (label, argv), r in zip(commands, results):
        rows.append({"label": label, "argv": argv, "mean_ms": r["mean"] * 1e3,
                     "stddev_ms": r["stddev"] * 1e3, "median_ms": r["median"] * 1e3})
    return rows, notes


def fmt_ms(mean, stddev):
    return f"{mean:.3f} ms" + (f" ± {stddev:.3f}" if stddev is not None else "")


def render(binary, context, rows, hf_rows, hf_notes, env, revision):
    bare = rows["BM_BareSpawn"]["mean_ms"]
    off = rows["BM_SandboxHostRunOff"]["mean_ms"]
    out = [BEGIN, "", "## Spawn-to-exit: `sandbox-host run` on the `off` backend vs. a bare spawn", ""]
    out += [
        "How much does `sandbox-host run` cost on top of starting the plugin yourself? Each",
        "measurement is one whole command, from `posix_spawn` to the parent's `wait4`",
        f"returning, with stdin/stdout/stderr on `/dev/null`. The plugin is `{PLUGIN}`, so",
        "almost all of the time is process start-up and tear-down, and the ratio is the",
        "worst case: for a plugin that does real work the fixed cost below is paid once.",
        "",
        "Both tables measure the same thing with two tools; they differ by the noise of",
        "the machine (see its load below), which is why both are kept.",
        "",
        "What the `off` backend adds over the bare spawn, all of it on every run:",
        "",
        "- exec and dynamic linking of `sandbox-host` itself (a C++ executable whose shared",
        "  libraries are libstdc++, libc and libidn2 with libunistring, which the config's",
        "  egress host names are read with; Boost.JSON and toml++ are compiled in);",
        "- loading and checking the config (TOML), then loading the one module the launch",
        "  needs, `backend_off.so`, with `dlopen` (Boost.DLL; modules load on first use and",
        "  `off` is not probed);",
        "- creating the private socket/tmp directory for the run and removing it afterwards;",
        "- a fork+exec of the plugin (Boost.Process: own session, parent-death signal,",
        "  BaseEnv only);",
        "- waiting for the plugin (pidfd + signalfd poll, forwarding signals) and passing",
        "  its exit status on.",
        "",
        "`off` confines nothing, so there is no peer that does the same job; the bare spawn",
        "is the floor. `bwrap` and `unshare` in the second table are peers for the",
        "**namespaces** backend (its own section below), not for `off`: they set up user (and,",
        "for bwrap, mount) namespaces, which `off` does not. They are listed to show the",
        "scale a namespaces backend will be measured against.",
        "",
        f"### Google Benchmark (`spawn_bench`, {REPETITIONS} repetitions, mean of repetitions)",
        "",
        "| benchmark | mean spawn-to-exit (± stddev of repetitions) | median | max RSS | child CPU / run | ratio vs. bare spawn (mean) |",
        "|---|---|---|---|---|---|",
    ]
    for name, label in BENCHMARKS:
        r = rows[name]
        rss = f"{r['max_rss_kib'] / 1024:.1f} MiB" if r["max_rss_kib"] else "—"
        cpu = f"{r['child_cpu_ms']:.2f} ms" if r["child_cpu_ms"] is not None else "—"
        median = f"{r['median_ms']:.3f} ms" if r["median_ms"] is not None else "—"
        out.append(f"| {label} (`{name}`, {r['iterations']} iterations × {REPETITIONS}) | "
                   f"{fmt_ms(r['mean_ms'], r['stddev_ms'])} | {median} | {rss} | {cpu} | "
                   f"{r['mean_ms'] / bare:.2f}× |")
    out += [
        "",
        f"**`sandbox-host run` (off) / bare spawn = {off / bare:.2f}×** "
        f"(+{off - bare:.2f} ms per run).",
        "",
    ]
    # The load after the run includes the benchmark itself; only the one before says
    # whether something else was using the machine.
    if env.get("load_before") and float(env["load_before"].split()[0]) >= 0.5:
        out += [
            "Note: the machine was not idle when the measurement started (1-minute load",
            f"average {env['load_before'].split()[0]} on {env['nproc']} CPUs), so the times are",
            "noisier and likely higher than on an idle machine; compare the means with the",
            "medians and with the hyperfine table.",
            "",
        ]
    out += [
        "Max RSS is `ru_maxrss` from `wait4`: the largest resident set of the spawned process",
        "or any descendant it waited for (for `sandbox-host run`, that is sandbox-host itself,",
        "not the plugin), the maximum over all iterations. Child CPU is user + system time of",
        "the spawned process and its waited-for descendants, per run.",
        "",
    ]
    out += [f"### hyperfine (`-N --warmup {HYPERFINE_WARMUP} --runs {HYPERFINE_RUNS}`)", ""]
    if hf_rows:
        hf_bare = hf_rows[0]["mean_ms"]
        out += [
            "| command | mean (± σ) | median | ratio vs. bare `/bin/true` |",
            "|---|---|---|---|",
        ]
        for r in hf_rows:
            out.append(f"| {r['label']} | {fmt_ms(r['mean_ms'], r['stddev_ms'])} | "
                       f"{r['median_ms']:.3f} ms | {r['mean_ms'] / hf_bare:.2f}× |")
        out += ["", "hyperfine 1.15 does not report memory; see the table above for RSS.", ""]
    for note in hf_notes:
        out += [f"- {note}"]
    if hf_notes:
        out.append("")
    out += [
        "### Machine and build",
        "",
        f"- machine: {env['nproc']} CPUs" + (f" ({env['cpu']})" if env["cpu"] else "")
        + f", kernel {env['kernel']}; date: {env['date']}",
    ]
    if env["load_before"]:
        out.append(f"- load average (1/5/15 min) before / after the run (after includes the"
                   f" run itself): {env['load_before']} / {env['load_after']}")
    if revision:
        out.append(f"- source: {revision}")
    out += [
        f"- build: RelWithDebInfo; sandbox-host: `{display_path(context.get('sandbox_host', '?'))}`",
        f"- Google Benchmark reports its library build as `{context.get('library_build_type', '?')}`"
        " (Debian's libbenchmark-dev); it only does the timing, the code measured is the"
        " RelWithDebInfo sandbox-host",
    ]
    for tool, cmd in (("hyperfine", ["hyperfine", "--version"]), ("bwrap", ["bwrap", "--version"]),
                      ("unshare", ["unshare", "--version"])):
        version = output_of(cmd)
        if version:
            out.append(f"- {version.splitlines()[0]}")
    out += [
        "",
        "### Reproduce",
        "",
        "From the repository root:",
        "",
        "```sh",
        "cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSANDBOX_HOST_TESTS=OFF",
        "cmake --build build-bench -j2",
        f"python3 bench/report.py {display_path(binary)}",
        "```",
        "",
        END,
    ]
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spawn_bench", help="path to the spawn_bench executable")
    args = parser.parse_args()
    binary = Path(args.spawn_bench)
    if not os.access(binary, os.X_OK):
        die(f"{binary}: not an executable")

    env = machine()
    context, rows = run_spawn_bench(binary.resolve())
    sandbox_host = context.get("sandbox_host")
    if not sandbox_host:
        die("spawn_bench did not say which sandbox-host it ran")

    with tempfile.TemporaryDirectory(prefix="spawn-bench-report-") as tmp:
        config = Path(tmp) / "off.toml"
        config.write_text(CONFIG_TEXT)
        hf_rows, hf_notes = run_hyperfine(sandbox_host, str(config))

    env["load_after"] = load_average()
    write_section(render(binary, context, rows, hf_rows, hf_notes, env, source_revision()), BEGIN,
                  END)
    bare = rows["BM_BareSpawn"]["mean_ms"]
    off = rows["BM_SandboxHostRunOff"]["mean_ms"]
    print(f"spawn_bench: bare {bare:.3f} ms, sandbox-host run (off) {off:.3f} ms, "
          f"ratio {off / bare:.2f}x", file=sys.stderr)
    if hf_rows:
        for r in hf_rows:
            print(f"hyperfine: {r['label']}: {r['mean_ms']:.3f} ms, "
                  f"{r['mean_ms'] / hf_rows[0]['mean_ms']:.2f}x", file=sys.stderr)
    print(f"wrote {DOCS}", file=sys.stderr)


if __name__ == "__main__":
    main()
