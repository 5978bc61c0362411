#!/usr/bin/env python3
"""Spawn-to-exit of a sandboxed /bin/true launched through the launch service of
`sandbox-host serve` ([launcher]: `sandbox-host-launch --via` and `sandbox-host run --via`,
namespaces backend, network none) beside the one-shot `sandbox-host run`, bubblewrap and a
bare spawn, and the client's own start-up, all in ONE hyperfine run as an unprivileged user;
rewrites the launcher-bench section of docs/benchmarks.md.

Usage, from the repository root after building into build-bench:
    python3 bench/launcher_report.py [--build build-bench] [--runs 100] [--warmup 10]
                                     [--pause-ms 200]

Two launch services run during the measurement, one with [launcher] depth 1 and one with
depth 4. The paced rows each sleep --pause-ms, untimed (hyperfine --prepare), before every
run, so that a service has started and finished the replacement of the sandbox the previous
launch took (it starts it refill_delay, 50 ms, after a launch); every command but the
back-to-back and start-up rows gets the same pause, so they share the conditions. The
back-to-back rows launch as fast as hyperfine starts them, as a busy gateway would.

Run as root, it copies the build's sandbox-host, sandbox-host-launch, sandbox-host-broker
and modules to a world-readable temporary directory and runs the services, hyperfine and
every command it times as --user (default 65534, nobody) through `setpriv`.

Only the text between the launcher-bench begin/end markers is rewritten; the section is
appended when the markers are missing. The other sections are kept.
"""

import argparse
import math
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_common import (BACKEND_ENV, DOCS, PLUGIN, add_run_arguments, build_runs_arguments,
                          hyperfine_command_lines, become_subreaper,
                          bwrap_argv, check_command, die, display_path, hyperfine, launch_env,
                          load_average, machine, machine_lines, provenance_and_reproduce,
                          quietly, run_as, runner, source_revision, stage_build, timing_rows,
                          tool_versions, user_dir, verify_sandbox, write_section)

BEGIN = "<!-- launcher-bench:begin -->"
END = "<!-- launcher-bench:end -->"
TARGET_RATIO = 0.5
DEPTHS = (1, 4)
CLIENT = "sandbox-host-launch"
BUILD_TARGETS = "sandbox-host sandbox-host-launch sandbox-host-broker"
SERVICE_START_TIMEOUT = 30


# ---- the launch services -------------------------------------------------------------------

def stage(build, tmp):
    """stage_build's copy with sandbox-host-launch, plus sandbox-host-broker in libexec/
    (sandbox-host execs it for serve)."""
    exe = stage_build(build, tmp, required=(CLIENT,), optional=())
    broker = build / "libexec" / "sandbox-host" / "sandbox-host-broker"
    if not os.access(broker, os.X_OK):
        die(f"{broker}: not an executable; build the target sandbox-host-broker first")
    libexec = tmp / "libexec" / "sandbox-host"
    libexec.mkdir(parents=True)
    shutil.copy2(broker, libexec / broker.name)
    for path in (tmp / "libexec", libexec, libexec / broker.name):
        path.chmod(0o755)
    return exe


def config_text(work, depth):
    return (f'[broker]\nstate_dir = "{work}/state"\n\n'
            f'[launcher]\nsocket = "{work}/launcher/launch.sock"\ndepth = {depth}\n\n'
            f'[audit]\npath = "{work}/audit.jsonl"\nformat = "json"\n')


def process_cpu(pid):
    """CPU seconds of pid and of the children it waited for (/proc/<pid>/stat)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


class Service:
    """`sandbox-host serve` with a [launcher] of the given depth, as the measuring user; ended
    with SIGTERM."""

    def __init__(self, prefix, exe, env, work, depth):
        self.depth, self.work = depth, work
        self.config = work / "config.toml"
        self.config.write_text(config_text(work, depth))
        self.config.chmod(0o644)
        self.socket = work / "launcher" / "launch.sock"
        self.audit = work / "audit.jsonl"
        self.err_path = work.parent / f"serve-depth{depth}.err"
        self.err = open(self.err_path, "w")
        self.process = subprocess.Popen(prefix + [str(exe), "serve", "--config", str(self.config)],
                                        env=env, cwd=str(work), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=self.err)
        deadline = time.monotonic() + SERVICE_START_TIMEOUT
        while not self.answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                die(f"sandbox-host serve (depth {depth}) did not start its launcher: "
                    f"{self.stderr()}")
            time.sleep(0.05)

    def answers(self):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            try:
                s.connect(str(self.socket))
                return True
            except OSError:
                return False

    def stderr(self):
        self.err.flush()
        return self.err_path.read_text().strip()

    def cpu(self):
        return process_cpu(self.process.pid)

    def audit_records(self):
        try:
            return [line for line in self.audit.read_text().splitlines() if line.strip()]
        except OSError:
            return []

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.err.close()


# ---- checks before timing -------------------------------------------------------------------

def own_namespace(prefix, argv, env, cwd, host_ns):
    """Dies unless a shell launched by argv (ending in `--`) has a network namespace of its own."""
    r = run_as(prefix, argv + ["/bin/sh", "-c", "readlink /proc/self/ns/net"], env, cwd)
    inside = r.stdout.strip()
    if r.returncode != 0 or not inside or inside == host_ns:
        die(f"`{shlex.join(argv)} sh`: network namespace {inside!r} (host's {host_ns!r}, exit "
            f"{r.returncode}: {r.stderr.strip()})")
    return inside


def ancestors(pid):
    chain = []
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])
        chain.append(pid)
    return chain


def launched_by_service(prefix, argv, env, cwd, service):
    """Dies unless the plugin that argv (ending in `--`) launches is a descendant of the
    service and not of the client: the launch really went through the service."""
    marker = f"{os.getpid()}{time.monotonic_ns() % 1000000}"  # sleep takes 5.<digits>
    client = subprocess.Popen(prefix + argv + ["/bin/sleep", f"5.{marker}"], env=env, cwd=cwd,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 10
    plugin = None
    while plugin is None and time.monotonic() < deadline and client.poll() is None:
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    cmdline = (entry / "cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                # argv[0] is the resolved binary (/usr/bin/sleep on a merged /usr).
                if cmdline[1:2] == [f"5.{marker}".encode()]:
                    plugin = int(entry.name)
        time.sleep(0.02)
    chain = ancestors(plugin) if plugin else []
    client.kill()
    _, err = client.communicate()
    if plugin is None:
        die(f"`{shlex.join(argv)} /bin/sleep`: the plugin never ran: {err.strip()}")
    if service.process.pid not in chain or client.pid in chain:
        die(f"`{shlex.join(argv)}`: the plugin (pid {plugin}, ancestors {chain}) is not the "
            f"service's (pid {service.process.pid}) but the client's (pid {client.pid})")


# ---- the measurement ------------------------------------------------------------------------

def reap_exited(services):
    """Reaps the orphans that have exited (the sandboxes' inits, bubblewrap's pid 1; this
    process is their subreaper), so that their CPU counts as the measured commands'. The
    services are children too and still run: unlike bench_common.reap_orphans, this does not
    wait for every child."""
    pids = {s.process.pid: s for s in services}
    time.sleep(0.2)  # the last launch's init exits just after its stage 1
    while True:
        try:
            pid, status, _ = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid in pids:
            die(f"sandbox-host serve (depth {pids[pid].depth}) exited (status {status}): "
                f"{pids[pid].stderr()}")


def measure(prefix, commands, env, cwd, out_dir, args, services):
    """hyperfine of commands ((key, label, argv, prepare) each), one --prepare per command,
    on a quiet machine (quietly); the services' CPU counts as the measured commands'."""
    options = []
    for *_, prepare in commands:
        options += ["--prepare", prepare]

    def once():
        reap_exited(services)
        load_before = load_average()
        results, hf_command = hyperfine(prefix, [(label, argv) for _, label, argv, _ in commands],
                                        env, cwd, out_dir, args.warmup, args.runs, options)
        reap_exited(services)
        return load_before, load_average(), results, hf_command

    own_cpu = lambda: sum(s.cpu() for s in services)  # noqa: E731
    (load_before, load_after, results, hf_command), foreign, busy, attempts = \
        quietly(once, args, own_cpu)
    return results, hf_command, load_before, load_after, foreign, busy, attempts


def waited_share(result, threshold_ms):
    times = [t * 1e3 for t in result["times"]]
    return sum(1 for t in times if t > threshold_ms) / len(times)


# ---- the section ----------------------------------------------------------------------------

def render(rows, results, commands, hf_command, prefix, checks, bwrap, env_info, busy_before,
           foreign, attempts, load_before, load_after, audit, uid, args, versions, revision):
    by_key = {r["key"]: r for r in rows}
    result_of = {key: res for (key, *_), res in zip(commands, results)}
    bare, bwrap_row = by_key["bare"], by_key["bwrap"]
    who = f"uid {uid}, `nobody`" if prefix and uid == 65534 else \
        f"uid {uid}" if prefix else f"uid {os.geteuid()}"
    pause = f"{args.pause_ms} ms"
    # A launch that found no prepared sandbox ready waited for one to be set up: the paced
    # depth-4 launches took a ready one, the back-to-back depth-1 launches waited each time.
    ready_ms = by_key["launch-d4"]["median_ms"]
    waited_ms = by_key["launch-d1-b2b"]["median_ms"]
    threshold = math.sqrt(ready_ms * waited_ms)
    out = [BEGIN, "",
           "## The launch service (`serve` [launcher]) vs. one-shot `run`, bubblewrap and a bare "
           "spawn (unprivileged)", ""]
    out += [
        f"`{PLUGIN}` from spawn to exit, run by an unprivileged user ({who}), launched through",
        "the launch service of a running `sandbox-host serve` (namespaces backend, network",
        "`none`) by its small client `sandbox-host-launch --via` and by `sandbox-host run --via`,",
        "beside the one-shot `sandbox-host run` (namespaces), bubblewrap with the escape",
        "corpus's flags and a bare spawn. Two services ran throughout, one with `[launcher]`",
        "`depth = 1` and one with `depth = 4`. All rows come from ONE",
        f"`hyperfine -N --warmup {args.warmup} --runs {args.runs}` invocation, so they share",
        f"the machine's conditions. The **paced** rows sleep {pause} (untimed, hyperfine",
        "`--prepare`) before every run, bare and bubblewrap as well; the **back-to-back**",
        "rows launch as fast as hyperfine starts them; the last two rows are start-up alone.",
        f"The target for `run --via` is a median ratio to bubblewrap of at most {TARGET_RATIO}.",
        "",
        "| command | pause before each run | mean ± σ | median | p10 … p90 | user + sys CPU "
        "| median vs. bare | median vs. bubblewrap | runs that waited for a sandbox |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (key, _, _, prepare), r in zip(commands, rows):
        paced = prepare.startswith("sleep")
        waited = (f"{waited_share(result_of[key], threshold):.0%}"
                  if key.startswith(("launch-", "via-")) else "–")
        out.append(
            f"| {r['label']} | {pause if paced else 'none'} | {r['mean_ms']:.3f} ± "
            f"{r['stddev_ms']:.3f} ms | {r['median_ms']:.3f} ms | {r['p10_ms']:.2f} … "
            f"{r['p90_ms']:.2f} ms | {r['cpu_ms']:.2f} ms | "
            f"{r['median_ms'] / bare['median_ms']:.2f}× | "
            f"{r['median_ms'] / bwrap_row['median_ms']:.2f}× | {waited} |")
    out.append("")
    for key, name in (("launch", CLIENT + " --via"), ("via", "run --via")):
        for depth in DEPTHS:
            via = by_key[f"{key}-d{depth}"]
            ratio = via["median_ms"] / bwrap_row["median_ms"]
            verdict = "met" if ratio <= TARGET_RATIO else "not met"
            out.append(
                f"- **`{name}`, depth {depth}, paced: median ratio vs. bubblewrap {ratio:.2f}** "
                f"({via['median_ms']:.3f} ms / {bwrap_row['median_ms']:.3f} ms; mean ratio "
                f"{via['mean_ms'] / bwrap_row['mean_ms']:.2f}). Target ≤ {TARGET_RATIO}: "
                f"**{verdict}**" + (
                    f"; it would have to be {via['median_ms'] - TARGET_RATIO * bwrap_row['median_ms']:.2f}"
                    f" ms faster per launch (at most {TARGET_RATIO * bwrap_row['median_ms']:.3f} ms)."
                    if ratio > TARGET_RATIO else "."))
    for depth in DEPTHS:
        b2b = by_key[f"via-d{depth}-b2b"]
        out.append(
            f"- `run --via`, depth {depth}, back-to-back: median ratio vs. bubblewrap "
            f"{b2b['median_ms'] / bwrap_row['median_ms']:.2f} ({b2b['median_ms']:.3f} ms).")
    client, version = by_key["client-help"], by_key["version"]
    out += [
        f"- The client's start-up: `{CLIENT} --help` {client['median_ms']:.3f} ms against "
        f"`sandbox-host --version` {version['median_ms']:.3f} ms (bare `{PLUGIN}` "
        f"{bare['median_ms']:.3f} ms).",
        "",
        "*Runs that waited for a sandbox* is the share of a row's runs slower than "
        f"{threshold:.2f} ms, the geometric mean of the median of the paced depth-4 launches "
        f"by `{CLIENT}` ({ready_ms:.3f} ms, each took a ready sandbox: four were held and the",
        "pool refills after each launch) and of the back-to-back depth-1 ones",
        f"({waited_ms:.3f} ms, each waited for one to be set up). The split is by time alone:",
        "the service does not count in the open which launches took a ready sandbox.",
        "",
        "User + sys CPU is hyperfine's per-run mean of the command and the descendants it",
        "waited for: for the `--via` rows the client only; the service's work (the pool's",
        "thread, the sandbox's stage 1 and init, the replacement it prepares) is in no",
        "column. For bubblewrap and the one-shot `run` it misses the sandbox's pid 1, which",
        "nobody waits for (see the namespaces-bench section).",
        "",
    ]
    if foreign > args.max_foreign:
        out += [
            f"Note: anything but the measured commands and the two services used {foreign:.0%} "
            f"of the CPUs while this ran (the least of {attempts} attempts), more than the "
            f"{args.max_foreign:.0%} taken as quiet. The times are noisier and slower than on an "
            "idle machine; the ratios within the run are the numbers to compare.",
            "",
        ]
    out += [
        "### What each path does",
        "",
        f"- **`{CLIENT} --via S -- {PLUGIN}`**: a small program (it links neither the module",
        "  loader nor the config reader) resolves the binary, builds the launch request (the",
        "  Spec in the stage-1 encoding and the plugin's environment), connects to the",
        "  service's unix socket and sends the request with its stdin, stdout and stderr",
        "  (SCM_RIGHTS). The service checks the peer's uid, plans the launch from its own config",
        "  and hands the Spec to the pool of its backend and network: the pool takes the oldest",
        "  ready prepared sandbox (stage 1 re-executed, the backend loaded, the namespaces",
        "  created, the Spec-independent part of the tree mounted, all before the request came)",
        "  and sends it the launch over its channel; the sandbox adds the Spec's own paths and",
        "  execs the plugin. The service replies `started`, watches the plugin (pidfd) and the",
        "  connection, and replies `exited` with the status, which the client exits with.",
        "- **`sandbox-host run --via S -- ...`**: the same request from the big binary, which",
        "  starts, parses its command line and then does what the client does (no config, no",
        "  module, no probe).",
        f"- **Refill**: a launch that took a sandbox leaves the pool one short; the pool starts",
        "  the replacement `refill_delay` (50 ms) after the last launch, so that the plugin just",
        "  launched gets the CPU first, or at once when a launch is waiting. With back-to-back",
        "  launches a few milliseconds apart, the pool stays short: depth 4 covers only the",
        "  first four, after which each launch waits for a sandbox to be set up (as long as",
        "  `ready_timeout`, 5 s; only then, or when the pool stopped preparing, it runs cold,",
        "  as `Host::command()` + `spawn()`). That is what the back-to-back rows show: not a",
        "  cold launch but one that waits for the set-up, which is most of a cold launch.",
        f"- **one-shot `sandbox-host run`**: start-up, config, module load, backend probe,",
        "  stage 1 re-exec, namespaces, the whole tree, then the plugin; nothing prepared.",
        "- **bubblewrap**: the namespaces-bench section's command (below), one-shot.",
        "",
        "### Checked before timing",
        "",
        "As the same user, for the one-shot `run`, and for `run --via` and "
        f"`{CLIENT} --via` with each service: `{PLUGIN}` exits 0; a shell inside sees the",
        "lines below (the same for every path; shown once); its network namespace is its own",
        f"({len(set(checks['netns']))} launches, as many namespaces, none the host's); and a",
        "`/bin/sleep` launched through",
        "the service is a descendant of the service's process, not of the client's (the",
        "launch really went through the service).",
        "",
        "```",
        *checks["lines"],
        "```",
        "",
        "The services' audit logs (`[audit]` JSON) after the run: "
        + ("; ".join(f"depth {d}: {len(records)} records" + (f" ({records[0]})" if records else "")
                     for d, records in audit)) + ".",
        "",
        "### Exactly what ran",
        "",
        f"`{BACKEND_ENV}=namespaces` in every process's environment; sandbox-host,",
        f"`{CLIENT}`, `sandbox-host-broker` (which `serve` execs) and the modules are a copy",
        "of the build's in a world-readable temporary directory `<tmp>`. Each service is",
        "`<tmp>/bin/sandbox-host serve --config <work>/config.toml`, where `<work>` is",
        "`<tmp>/out/depth1` or `<tmp>/out/depth4`:",
        "",
        "```toml",
        config_text("<work>", "N").rstrip("\n"),
        "```",
        "",
    ]
    out += hyperfine_command_lines(prefix, hf_command)
    out += [
        "",
        "The bwrap command's symlinks are the root's own: " + ", ".join(
            f"`{bwrap[i + 2]} -> {bwrap[i + 1]}`" for i in range(len(bwrap))
            if bwrap[i] == "--symlink") + ".",
        "",
        *machine_lines(env_info),
        f"- CPUs busy (all cores, /proc/stat) in the second before the run: {busy_before:.0%};"
        f" CPU time used by anything but the measured commands and the services while they ran:"
        f" {foreign:.1%} of the machine (attempt {attempts} of at most {args.attempts}); load"
        f" average before / after: {load_before} / {load_after}",
    ]
    out += provenance_and_reproduce(
        revision, args.build, versions, f"cmake --build build-bench -j2 --target {BUILD_TARGETS}",
        f"python3 bench/launcher_report.py --build {display_path(args.build)} "
        f"--runs {args.runs} --warmup {args.warmup} --pause-ms {args.pause_ms}")
    out += [END]
    return "\n".join(out) + "\n"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    build_runs_arguments(parser, runs=100, warmup=10)
    parser.add_argument("--pause-ms", type=int, default=200,
                        help="untimed sleep before each run of the paced rows (default: 200)")
    add_run_arguments(parser)
    args = parser.parse_args()
    if args.runs < 20:
        parser.error("--runs must be at least 20")
    if args.pause_ms < 60:
        parser.error("--pause-ms must be at least 60: the pool starts a replacement 50 ms after "
                     "a launch")
    args.build = args.build.resolve()
    return args


def main():
    args = parse_args()
    for tool in ("hyperfine", "bwrap"):
        if shutil.which(tool) is None:
            die(f"{tool} is not installed")
    prefix = runner(args.user)
    env_info = machine()
    become_subreaper()
    services = []
    with tempfile.TemporaryDirectory(prefix="launcher-bench-") as tmp_name:
        tmp = Path(tmp_name)
        tmp.chmod(0o755)
        try:
            exe = stage(args.build, tmp / "stage")
            client = tmp / "stage" / "bin" / CLIENT
            out_dir = user_dir(tmp / "out", args.user)
            env = launch_env(out_dir)
            cwd = str(tmp / "stage")
            for depth in DEPTHS:
                services.append(Service(prefix, exe, env, user_dir(out_dir / f"depth{depth}",
                                                                   args.user), depth))
            svc = {s.depth: s for s in services}

            host_ns = run_as(prefix, ["readlink", "/proc/self/ns/net"], env, cwd).stdout.strip()
            lines = verify_sandbox(prefix, exe, env, cwd)
            netns = [own_namespace(prefix, [str(exe), "run", "--"], env, cwd, host_ns)]
            for s in services:
                via = ["--via", str(s.socket)]
                for front in ([str(client)], [str(exe), "run"]):
                    if verify_sandbox(prefix, exe, env, cwd, via, front) != lines:
                        die(f"`{shlex.join(front + via)}`: the sandbox differs from the one-shot "
                            "run's")
                    netns.append(own_namespace(prefix, front + via + ["--"], env, cwd, host_ns))
                    launched_by_service(prefix, front + via + ["--"], env, cwd, s)

            pause = f"sleep {args.pause_ms / 1000:g}"
            bwrap = bwrap_argv()

            def launch(depth):
                return [str(client), "--via", str(svc[depth].socket), "--", PLUGIN]

            def via(depth):
                return [str(exe), "run", "--via", str(svc[depth].socket), "--", PLUGIN]

            commands = [
                ("bare", f"bare `{PLUGIN}`", [PLUGIN], pause),
                ("bwrap", "bubblewrap (command below)", bwrap, pause),
                ("oneshot", f"`sandbox-host run -- {PLUGIN}` (one-shot, namespaces)",
                 [str(exe), "run", "--", PLUGIN], pause),
            ]
            for depth in DEPTHS:
                commands += [
                    (f"launch-d{depth}", f"**`{CLIENT} --via`**, depth {depth}", launch(depth),
                     pause),
                    (f"via-d{depth}", f"**`sandbox-host run --via`**, depth {depth}", via(depth),
                     pause),
                ]
            for depth in DEPTHS:
                commands += [
                    (f"launch-d{depth}-b2b", f"`{CLIENT} --via`, depth {depth}, back-to-back",
                     launch(depth), "true"),
                    (f"via-d{depth}-b2b", f"`sandbox-host run --via`, depth {depth}, back-to-back",
                     via(depth), "true"),
                ]
            commands += [
                ("client-help", f"`{CLIENT} --help` (the client's start-up)",
                 [str(client), "--help"], "true"),
                ("version", "`sandbox-host --version` (sandbox-host's start-up)",
                 [str(exe), "--version"], "true"),
            ]
            for _, _, argv, _ in commands:
                reason = check_command(prefix, argv, env, cwd)
                if reason is not None:
                    die(f"`{shlex.join(argv)}` does not work as uid {args.user} ({reason})")

            (results, hf_command, load_before, load_after, foreign, busy_before,
             attempts) = measure(prefix, commands, env, cwd, out_dir, args, services)
            audit = [(s.depth, s.audit_records()) for s in services]
        finally:
            for s in services:
                s.stop()
        hf_command = [c.replace(str(tmp / "stage"), "<tmp>").replace(str(out_dir), "<tmp>/out")
                      for c in hf_command]
    rows = timing_rows([(k, label, argv) for k, label, argv, _ in commands], results)
    versions = tool_versions([["hyperfine", "--version"], ["bwrap", "--version"]])
    checks = {"lines": lines, "netns": netns}
    section = render(rows, results, commands, hf_command, prefix, checks, bwrap, env_info,
                     busy_before, foreign, attempts, load_before, load_after, audit, args.user,
                     args, versions, source_revision())
    if args.no_write:
        print(section)
    else:
        write_section(section, BEGIN, END)
        print(f"wrote {DOCS}", file=sys.stderr)
    by_key = {r["key"]: r for r in rows}
    for r in rows:
        print(f"{r['key']:16} mean {r['mean_ms']:7.3f} ms  median {r['median_ms']:7.3f} ms  "
              f"{r['median_ms'] / by_key['bare']['median_ms']:5.2f}x bare  "
              f"{r['median_ms'] / by_key['bwrap']['median_ms']:5.2f}x bubblewrap",
              file=sys.stderr)


if __name__ == "__main__":
    main()
