#!/usr/bin/env python3
"""A go-plugin handshake plus one call, as a Go gateway makes them through the Go package
(the go/ module's package sandbox) with Debian's go-plugin 1.0.1, beside the same plugin started
bare, all in ONE hyperfine run as an unprivileged user; rewrites the goplugin-bench section of
docs/benchmarks.md.

Usage, from the repository root after building into build-bench:
    python3 bench/goplugin_report.py [--build build-bench] [--runs 60] [--warmup 5]

Each timed command is tests/go/src/gopluginsandbox/handshakebench, built here in GOPATH mode
(offline, Debian's golang-go and Go packages): it starts the reporter plugin (net/rpc or
gRPC), handshakes, makes one call and ends the client, then exits. Bare, the plugin is
exec.Command(plugin) with BaseEnv; through the package, sandbox.Command's wrapper:
sandbox-host run (one-shot, namespaces), or sandbox-host-launch --via a launch service
([launcher] depth 1) that this script starts as the same user.
"""

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_common import (DOCS, REPO, add_run_arguments, become_subreaper, check_command, die,
                          machine, machine_lines, provenance_and_reproduce, runner,
                          source_revision, timing_rows, tool_versions, user_dir, write_section)
from launcher_report import BUILD_TARGETS, Service, measure, stage

BEGIN = "<!-- goplugin-bench:begin -->"
END = "<!-- goplugin-bench:end -->"
GO_PACKAGES = ("gopluginsandbox/handshakebench", "gopluginsandbox/netrpcplugin",
               "gopluginsandbox/grpcplugin")


def build_go(out, build):
    """The gateway and both plugins, built offline in GOPATH mode into out."""
    if shutil.which("go") is None:
        die("go is not installed (scripts/setup.sh installs golang-go)")
    # GOPATH mode finds the module's package at its import path through a link of its own.
    gopath = build / "go-gopath"
    module = (REPO / "go" / "go.mod").read_text().split("\n", 1)[0].removeprefix("module ")
    (gopath / "src" / module).parent.mkdir(parents=True, exist_ok=True)
    if not (gopath / "src" / module).is_symlink():
        (gopath / "src" / module).symlink_to(REPO / "go")
    env = dict(os.environ, GOPATH=f"{gopath}:{REPO}/tests/go:/usr/share/gocode",
               GO111MODULE="off", GOPROXY="off", GOFLAGS="",
               GOCACHE=str(build / "go-cache"))
    binaries = {}
    for package in GO_PACKAGES:
        target = out / package.rsplit("/", 1)[1]
        r = subprocess.run(["go", "build", "-o", str(target), package], env=env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            die(f"go build {package}: {r.stderr.strip()}")
        target.chmod(0o755)
        binaries[target.name] = target
    return binaries


def render(rows, hf_command, prefix, env_info, uid, args, versions, revision):
    by = {r["key"]: r for r in rows}
    out = [BEGIN, "",
           "## A go-plugin handshake and one call through the Go package vs. the plugin started "
           "bare (unprivileged)", "",
           "What a Go gateway pays per plugin start for the sandbox: "
           "`tests/go/src/gopluginsandbox/handshakebench` starts go-plugin 1.0.1's client on the "
           "reporter plugin, handshakes, makes one call (`Getenv`), ends the client and exits. "
           "Bare, `ClientConfig.Cmd` is the plugin itself with BaseEnv; through the package it is "
           "`sandbox.Command`'s wrapper under the namespaces backend: `sandbox-host run`, or "
           "`sandbox-host-launch --via` the launch service (depth 1, taking a prepared sandbox). "
           "The gateway's own start-up (a Go program), the plugin's (a Go program with gRPC) and "
           "go-plugin's handshake are in every row. A gateway probes once, at its start, and "
           "passes the backend to every `Command` after; the rows but the last of each protocol "
           "do so (`-mode namespaces`), the last calls `Probe()` (`sandbox-host probe --json`) "
           "first, as a gateway's first plugin start does.", "",
           "| command | median | p10 … p90 | mean ± σ | median vs. bare |", "|---|---|---|---|---|"]
    for r in rows:
        bare = by["bare-" + r["key"].split("-")[-1]]["median_ms"]
        out.append(f"| {r['label']} | {r['median_ms']:.2f} ms | {r['p10_ms']:.2f} … "
                   f"{r['p90_ms']:.2f} ms | {r['mean_ms']:.2f} ± {r['stddev_ms']:.2f} ms | "
                   f"{r['median_ms'] / bare:.2f}× |")
    for protocol in ("netrpc", "grpc"):
        bare = by[f"bare-{protocol}"]["median_ms"]
        out.append("")
        out.append(f"- {protocol}: the sandbox adds "
                   f"{by[f'run-{protocol}']['median_ms'] - bare:.2f} ms through `sandbox-host run` "
                   f"and {by[f'launcher-{protocol}']['median_ms'] - bare:.2f} ms through the "
                   "launch service, per plugin start (medians).")
    out += [""] + machine_lines(env_info) + [
        f"- Measured as uid {uid} (`{shlex.join(prefix) or 'the invoking user'}`), "
        f"{args.runs} runs after {args.warmup} warm-up runs.", ""]
    out += provenance_and_reproduce(
        revision, args.build, versions,
        f"cmake --build {args.build.name} -j2 --target {BUILD_TARGETS}",
        f"python3 bench/goplugin_report.py --build {args.build.name} --runs {args.runs} "
        f"--warmup {args.warmup}")
    out += ["", "hyperfine's command:", "", "```", shlex.join(hf_command), "```", "", END]
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(REPO / "build-bench"), type=Path)
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    add_run_arguments(parser)
    args = parser.parse_args()
    args.build = args.build.resolve()
    if shutil.which("hyperfine") is None:
        die("hyperfine is not installed")
    prefix = runner(args.user)
    env_info = machine()
    become_subreaper()
    with tempfile.TemporaryDirectory(prefix="goplugin-bench-") as tmp_name:
        tmp = Path(tmp_name)
        tmp.chmod(0o755)
        exe = stage(args.build, tmp / "stage")
        go = user_dir(tmp / "go", 0)
        go.chmod(0o755)
        binaries = build_go(go, args.build)
        out_dir = user_dir(tmp / "out", args.user)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(out_dir), "LC_ALL": "C",
               "SANDBOX_HOST": str(exe), "TMPDIR": "/tmp"}
        cwd = str(tmp / "stage")
        service = Service(prefix, exe, env, user_dir(out_dir / "service", args.user), 1)
        try:
            gateway = str(binaries["handshakebench"])
            commands = []
            for protocol in ("netrpc", "grpc"):
                plugin = str(binaries[f"{protocol}plugin"])
                base = [gateway, "-protocol", protocol, "-plugin", plugin]
                commands += [
                    (f"bare-{protocol}", f"{protocol}: the plugin started bare", base + ["-bare"]),
                    (f"run-{protocol}", f"{protocol}: **through the package, `sandbox-host run`**",
                     base + ["-mode", "namespaces"]),
                    (f"launcher-{protocol}",
                     f"{protocol}: **through the package, the launch service**",
                     base + ["-mode", "namespaces", "-launcher", str(service.socket)]),
                    (f"probe-{protocol}",
                     f"{protocol}: through the package, the launch service, with `Probe()` first",
                     base + ["-launcher", str(service.socket)]),
                ]
            for _, _, argv in commands:
                reason = check_command(prefix, argv, env, cwd)
                if reason is not None:
                    die(f"`{shlex.join(argv)}` does not work as uid {args.user} ({reason})")
            # A pause before each run, untimed, so that the service has replaced the
            # sandbox the previous launch took.
            results, hf_command, *_ = measure(prefix, [c + ("sleep 0.2",) for c in commands],
                                              env, cwd, out_dir, args, [service])
        finally:
            service.stop()
        hf_command = [c.replace(str(tmp), "<tmp>") for c in hf_command]
    rows = timing_rows(commands, results)
    versions = tool_versions([["hyperfine", "--version"], ["go", "version"]])
    section = render(rows, hf_command, prefix, env_info, args.user, args, versions,
                     source_revision())
    if args.no_write:
        print(section)
    else:
        write_section(section, BEGIN, END)
        print(f"wrote {DOCS}", file=sys.stderr)
    for r in rows:
        print(f"{r['key']:16} median {r['median_ms']:8.2f} ms", file=sys.stderr)


if __name__ == "__main__":
    main()
