#!/usr/bin/env python3
"""Spawn-to-exit of a sandboxed /bin/true under the namespaces backend, as an unprivileged
user, beside a bare spawn, `unshare -Urmpfn` and bubblewrap, all in one hyperfine run; rewrites
the namespaces-bench section of docs/benchmarks.md.

Usage, from the repository root after building into build-bench:
    python3 bench/namespaces_report.py [--build build-bench] [--runs 300] [--warmup 30]

Run as root, it copies the build's sandbox-host and modules to a world-readable temporary
directory and runs hyperfine (and every command it times) as --user (default 65534, nobody)
through `setpriv`. Run as anyone else, it runs them as that user.

Only the text between the namespaces-bench begin/end markers is rewritten; the section is
appended when the markers are missing. The spawn-bench section (bench/report.py) and the
hand-written notes are kept.
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_common import (DOCS, REPO, die, display_path, load_average, machine, output_of,
                          source_revision, write_section)

BEGIN = "<!-- namespaces-bench:begin -->"
END = "<!-- namespaces-bench:end -->"
PLUGIN = "/bin/true"
BACKEND_ENV = "CLAWPATROL_SANDBOX_BACKEND"
TARGET_RATIO = 0.5
# Directories of the root that merged-/usr systems have as symlinks into /usr.
ROOT_DIRS = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"]


# ---- the unprivileged user and a copy of the build it can run -------------------------------

def runner(uid):
    """The prefix that runs a command as uid: setpriv when we are root, nothing otherwise."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        die("running as root needs setpriv (util-linux) to drop to the unprivileged user")
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]


def stage_build(build, tmp):
    """Copies <build>/bin/sandbox-host and <build>/lib/sandbox-host/modules/*.so to tmp with
    the same relative layout (sandbox-host finds its modules at <exe>/../lib/...)."""
    exe = build / "bin" / "sandbox-host"
    modules = build / "lib" / "sandbox-host" / "modules"
    if not os.access(exe, os.X_OK):
        die(f"{exe}: not an executable; build first")
    sos = sorted(modules.glob("*.so"))
    if not any(so.name == "backend_namespaces.so" for so in sos):
        die(f"{modules}: no backend_namespaces.so; build first")
    (tmp / "bin").mkdir(parents=True)
    (tmp / "lib" / "sandbox-host" / "modules").mkdir(parents=True)
    shutil.copy2(exe, tmp / "bin" / "sandbox-host")
    for extra in ("probe_bench",):
        if os.access(build / "bin" / extra, os.X_OK):
            shutil.copy2(build / "bin" / extra, tmp / "bin" / extra)
    for so in sos:
        shutil.copy2(so, tmp / "lib" / "sandbox-host" / "modules" / so.name)
    for path in [tmp, *tmp.rglob("*")]:
        path.chmod(0o755 if path.is_dir() or path.parent.name == "bin" else 0o644)
    return tmp / "bin" / "sandbox-host"


def user_dir(path, uid):
    """A directory the unprivileged user may write (hyperfine's JSON, fixed run dirs)."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        os.chown(path, uid, uid)
    path.chmod(0o700)
    return path


def launch_env(tmp):
    """A small, fixed environment: nothing of the caller's CLAWPATROL_* control variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWPATROL_")}
    env.update({"HOME": str(tmp), "LC_ALL": "C", BACKEND_ENV: "namespaces"})
    env.pop("TMPDIR", None)
    return env


def bwrap_argv():
    """bubblewrap with the isolation of the namespaces backend that bwrap has flags for; the
    root's merged-/usr symlinks as the host has them (only those whose target exists)."""
    argv = ["bwrap", "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
            "--unshare-uts", "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr"]
    for name in ROOT_DIRS:
        path = Path("/") / name
        if path.is_symlink():
            target = os.readlink(path)
            if (Path("/") / target).is_dir():
                argv += ["--symlink", target, str(path)]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), str(path)]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", PLUGIN]
    return argv


def run_as(prefix, argv, env, cwd, timeout=60):
    return subprocess.run(prefix + argv, env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def verify_sandbox(prefix, exe, env, cwd):
    """Before any timing: `run -- /bin/true` exits 0, and a shell in the sandbox sees
    NoNewPrivs 1, Seccomp 2 and hostname sandbox. Returns the lines to quote."""
    r = run_as(prefix, [str(exe), "run", "--", PLUGIN], env, cwd)
    if r.returncode != 0:
        die(f"`sandbox-host run -- {PLUGIN}` exited {r.returncode}: {r.stderr.strip()}")
    probe = ("grep -E '^(Uid|NoNewPrivs|Seccomp|CapEff):' /proc/self/status; "
             "echo hostname: $(hostname); echo mounts: $(wc -l < /proc/self/mounts); "
             "echo root: $(ls /)")
    r = run_as(prefix, [str(exe), "run", "--", "/bin/sh", "-c", probe], env, cwd)
    if r.returncode != 0:
        die(f"sandbox-host run -- /bin/sh exited {r.returncode}: {r.stderr.strip()}")
    lines = [" ".join(line.split()) for line in r.stdout.splitlines()]
    fields = dict(line.split(": ", 1) for line in lines if ": " in line)
    checks = {"NoNewPrivs": "1", "Seccomp": "2", "hostname": "sandbox", "CapEff": "0000000000000000"}
    for key, want in checks.items():
        if fields.get(key) != want:
            die(f"the plugin is not sandboxed as expected: {key} is {fields.get(key)!r}, "
                f"want {want!r}:\n{r.stdout}")
    return lines


def check_command(prefix, argv, env, cwd):
    if shutil.which(argv[0]) is None and not os.access(argv[0], os.X_OK):
        return f"`{argv[0]}` is not installed"
    r = run_as(prefix, argv, env, cwd)
    if r.returncode == 0:
        return None
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    return f"exit status {r.returncode}" + (f": {lines[-1].strip()}" if lines else "")


# ---- machine conditions ---------------------------------------------------------------------

def cpu_busy(seconds=1.0):
    """Fraction of all CPUs' time that was not idle over the next `seconds`."""
    def sample():
        fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        idle = fields[3] + fields[4]
        return idle, sum(fields[:8])
    idle0, total0 = sample()
    time.sleep(seconds)
    idle1, total1 = sample()
    return 1.0 - (idle1 - idle0) / max(1, total1 - total0)


def cpu_jiffies():
    """(busy, total) jiffies of all CPUs together, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return sum(fields[:8]) - fields[3] - fields[4], sum(fields[:8])


class ForeignLoad:
    """How much CPU time others used while a block ran: all CPUs' busy time minus the CPU
    time of our own (waited-for) children, as a share of the machine. Kernel threads doing
    work for our processes (namespace clean-up in kworkers, RCU) count as foreign too, so an
    idle machine shows a few per cent."""

    def __enter__(self):
        self.start = time.monotonic()
        self.jiffies = cpu_jiffies()
        self.children = os.times()
        return self

    def __exit__(self, *exc):
        wall = time.monotonic() - self.start
        busy = (cpu_jiffies()[0] - self.jiffies[0]) / os.sysconf("SC_CLK_TCK")
        after = os.times()
        ours = (after.children_user - self.children.children_user +
                after.children_system - self.children.children_system)
        self.share = max(0.0, busy - ours) / (wall * (os.cpu_count() or 1))
        return False


def wait_for_idle(limit, max_wait):
    """Waits (up to max_wait seconds) until less than `limit` of the CPUs is busy."""
    deadline = time.monotonic() + max_wait
    busy = cpu_busy()
    while busy > limit and time.monotonic() < deadline:
        print(f"waiting for an idle machine: {busy:.0%} of the CPUs busy", file=sys.stderr)
        time.sleep(4)
        busy = cpu_busy()
    return busy


def quietly(measure, args):
    """Runs measure() once the machine is idle, again (up to args.attempts times) while others
    used more than args.max_foreign of the CPUs during it; returns the least disturbed result
    as (result, foreign share, CPUs busy before it, attempts made)."""
    best = None
    for attempt in range(1, args.attempts + 1):
        busy = wait_for_idle(args.max_busy, args.max_wait)
        with ForeignLoad() as foreign:
            result = measure()
        print(f"attempt {attempt}: others used {foreign.share:.1%} of the CPUs meanwhile",
              file=sys.stderr)
        if best is None or foreign.share < best[1]:
            best = (result, foreign.share, busy)
        if foreign.share <= args.max_foreign:
            break
    return best + (attempt,)


# ---- hyperfine ------------------------------------------------------------------------------

def hyperfine(prefix, commands, env, cwd, out_dir, warmup, runs):
    """One hyperfine invocation for all commands; returns its results, in order."""
    export = out_dir / "hyperfine.json"
    command = ["hyperfine", "-N", "--warmup", str(warmup), "--runs", str(runs), "--style",
               "basic", "--export-json", str(export)]
    command += [shlex.join(argv) for _, argv in commands]
    print("running:", shlex.join(prefix + command), file=sys.stderr)
    r = subprocess.run(prefix + command, env=env, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        die(f"hyperfine exited {r.returncode}:\n{r.stderr.strip()}")
    return json.loads(export.read_text())["results"], command


def percentile(values, q):
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


# ---- the section ----------------------------------------------------------------------------

ISOLATION = [
    ("bare `/bin/true`", "nothing"),
    ("`unshare -Urmpfn`", "user (uid 0 mapped), mount (a copy of the host's whole tree), pid, "
     "net; no uts/ipc/cgroup namespace, no new root, no no_new_privs, no seccomp"),
    ("bubblewrap", "user, pid (bwrap is pid 1), net (loopback up), ipc, uts, mount with a "
     "new tmpfs root: `/usr` read-only, the root's symlinks into it, fresh `/proc`, minimal "
     "`/dev`, tmpfs `/tmp`; no_new_privs, no capabilities, own session, dies with its parent; "
     "no cgroup namespace, no seccomp filter, no `/etc`, hostname unchanged"),
    ("`sandbox-host run` (namespaces)", "user, mount, pid, net (loopback up), ipc, uts "
     "(hostname `sandbox`) and cgroup namespaces; pid 1 is its own init; new root: "
     "`/usr` read-only plus the root's symlinks, 18 read-only `/etc` entries, fresh `/proc`, "
     "`/dev` (6 host devices + `shm`), tmpfs `/tmp`, the run's socket and tmp directories "
     "(created and removed per run), the plugin binary; no_new_privs, no capabilities, the "
     "default seccomp filter; and before all that the backend probe (a forked child that "
     "creates user/mount/pid/net/ipc/uts namespaces)"),
]


def render(rows, hf_command, prefix, verify_lines, bwrap, env_info, busy_before, foreign,
           attempts, load_before, load_after, uid, args, versions, revision):
    by_key = {r["key"]: r for r in rows}
    bare, bwrap_row, host = by_key["bare"], by_key["bwrap"], by_key["host"]
    ratio = host["median_ms"] / bwrap_row["median_ms"]
    mean_ratio = host["mean_ms"] / bwrap_row["mean_ms"]
    verdict = "met" if ratio <= TARGET_RATIO else "not met"
    who = f"uid {uid}, `nobody`" if prefix and uid == 65534 else \
        f"uid {uid}" if prefix else f"uid {os.geteuid()}"
    out = [BEGIN, "",
           "## Spawn-to-exit under the namespaces backend vs. `unshare` and bubblewrap "
           "(unprivileged)", ""]
    out += [
        f"A sandboxed `{PLUGIN}` from spawn to exit, run by an unprivileged user ({who}),",
        "beside the same binary spawned bare, under `unshare -Urmpfn` and under bubblewrap",
        "with the isolation of the backend that bwrap has flags for. All rows come from ONE",
        f"`hyperfine -N --warmup {args.warmup} --runs {args.runs}` invocation, so they share",
        "the machine's conditions; the last two rows time sandbox-host alone, for the",
        "breakdown below the markers. The project's target is a median ratio",
        f"sandbox-host / bubblewrap of at most {TARGET_RATIO}.",
        "",
        "| command | mean ± σ | median | p10 … p90 | user + sys CPU | median vs. bare | median vs. bubblewrap |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['label']} | {r['mean_ms']:.3f} ± {r['stddev_ms']:.3f} ms | "
            f"{r['median_ms']:.3f} ms | {r['p10_ms']:.2f} … {r['p90_ms']:.2f} ms | "
            f"{r['cpu_ms']:.2f} ms | {r['median_ms'] / bare['median_ms']:.2f}× | "
            f"{r['median_ms'] / bwrap_row['median_ms']:.2f}× |")
    out += [
        "",
        f"**Median ratio sandbox-host / bubblewrap = {ratio:.2f}** "
        f"({host['median_ms']:.3f} ms / {bwrap_row['median_ms']:.3f} ms; mean ratio "
        f"{mean_ratio:.2f}). Target ≤ {TARGET_RATIO}: **{verdict}**"
        + (f"; sandbox-host would have to be {host['median_ms'] - TARGET_RATIO * bwrap_row['median_ms']:.2f} ms "
           f"faster per launch (at most {TARGET_RATIO * bwrap_row['median_ms']:.3f} ms)."
           if ratio > TARGET_RATIO else "."),
        "",
        "User + sys CPU is hyperfine's per-run mean of the command and the descendants it",
        "waited for; the percentiles are over the individual runs. For bubblewrap it is too",
        "low: bwrap's outer process exits on the status its pid 1 reports through a pipe",
        "without waiting for it (strace: no wait4 in the outer bwrap), so the sandbox's",
        "processes are missing from its rusage, and hyperfine's clock can stop before that",
        "pid 1 has exited. sandbox-host waits for all of its processes (host, probe child, stage 1,"
        "init, plugin).",
        "",
    ]
    if foreign > args.max_foreign:
        out += [
            f"Note: other processes used {foreign:.0%} of the CPUs while this ran (the least of",
            f"{attempts} attempts), so the times are noisier and likely higher than on an idle",
            "machine; the medians are the numbers to compare.",
            "",
        ]
    out += ["### What each command isolates", "", "| command | isolation |", "|---|---|"]
    out += [f"| {name} | {text} |" for name, text in ISOLATION]
    out += [
        "",
        "sandbox-host does more than this bubblewrap command (the `/etc` binds, the seccomp",
        "filter, loopback, the cgroup namespace, the probe); the ratio is the cost of the",
        "backend as it is, not of identical work.",
        "",
        "### Exactly what ran",
        "",
        f"`{BACKEND_ENV}=namespaces` in hyperfine's environment (the other commands ignore",
        "it); sandbox-host and its modules are a copy of the build's, in a world-readable",
        "temporary directory `<tmp>` (`<tmp>/bin/sandbox-host`,",
        "`<tmp>/lib/sandbox-host/modules/*.so`), so the unprivileged user can run them:",
        "",
        "```sh",
        shlex.join(prefix + hf_command[:hf_command.index("--export-json")])
        + " --export-json <tmp>/out/hyperfine.json \\",
    ]
    quoted = [shlex.quote(c) for c in hf_command[hf_command.index("--export-json") + 2:]]
    out += ["  " + q + (" \\" if i + 1 < len(quoted) else "") for i, q in enumerate(quoted)]
    out += [
        "```",
        "",
        "The bwrap command's symlinks are the root's own (`readlink /bin` …, only those whose",
        "target exists here): " + ", ".join(
            f"`{bwrap[i + 2]} -> {bwrap[i + 1]}`" for i in range(len(bwrap))
            if bwrap[i] == "--symlink") + ".",
        "",
        "Checked once before timing, as the same user: `sandbox-host run -- /bin/true` exits 0,",
        "and inside the sandbox `/bin/sh -c` sees (whitespace squeezed):",
        "",
        "```",
        *verify_lines,
        "```",
        "",
        "### Machine and build",
        "",
        f"- nproc: {env_info['nproc']}" + (f" ({env_info['cpu']})" if env_info["cpu"] else ""),
        f"- kernel: {env_info['kernel']}" + (f"; {env_info['os']}" if env_info["os"] else ""),
        f"- date: {env_info['date']}",
        f"- CPUs busy (all cores, /proc/stat) in the second before the run: {busy_before:.0%};"
        f" CPU time used by anything but the measured commands while they ran: {foreign:.1%}"
        f" of the machine (kernel threads working for the sandboxes included; attempt"
        f" {attempts} of at most {args.attempts}); load average before / after: {load_before}"
        f" / {load_after}",
    ]
    if revision:
        out.append(f"- source: {revision}")
    out.append(f"- build: RelWithDebInfo, `{display_path(args.build)}`")
    out += [f"- {v}" for v in versions]
    out += [
        "",
        "### Reproduce",
        "",
        "From the repository root, as root (it drops to nobody) or as an unprivileged user:",
        "",
        "```sh",
        "cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSANDBOX_HOST_TESTS=OFF",
        "cmake --build build-bench -j2",
        f"python3 bench/namespaces_report.py --build {display_path(args.build)} "
        f"--runs {args.runs} --warmup {args.warmup}",
        "```",
        "",
        END,
    ]
    return "\n".join(out) + "\n"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(REPO / "build-bench"), type=Path,
                        help="build tree with bin/sandbox-host (default: build-bench)")
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--user", type=int, default=65534,
                        help="uid (and gid) to drop to when run as root (default: 65534)")
    parser.add_argument("--max-busy", type=float, default=0.10,
                        help="wait until at most this fraction of the CPUs is busy")
    parser.add_argument("--max-wait", type=float, default=300,
                        help="seconds to wait for that before measuring anyway")
    parser.add_argument("--max-foreign", type=float, default=0.10,
                        help="repeat the measurement when others used more than this share of "
                             "the CPUs meanwhile")
    parser.add_argument("--attempts", type=int, default=5,
                        help="measurements at most; the one with the least foreign load is kept")
    parser.add_argument("--no-write", action="store_true",
                        help="print the section instead of writing docs/benchmarks.md")
    args = parser.parse_args()
    if args.runs < 100:
        parser.error("--runs must be at least 100")
    args.build = args.build.resolve()
    return args


def main():
    args = parse_args()
    if shutil.which("hyperfine") is None:
        die("hyperfine is not installed")
    prefix = runner(args.user)
    env_info = machine()
    with tempfile.TemporaryDirectory(prefix="namespaces-bench-") as tmp_name:
        tmp = Path(tmp_name)
        tmp.chmod(0o755)
        exe = stage_build(args.build, tmp / "stage")
        out_dir = user_dir(tmp / "out", args.user)
        env = launch_env(tmp / "out")
        cwd = str(tmp / "stage")

        verify_lines = verify_sandbox(prefix, exe, env, cwd)
        bwrap = bwrap_argv()
        commands = [
            ("bare", f"bare `{PLUGIN}`", [PLUGIN]),
            ("unshare", f"`unshare -Urmpfn {PLUGIN}`", ["unshare", "-Urmpfn", PLUGIN]),
            ("bwrap", "bubblewrap (command below)", bwrap),
            ("host", f"**`sandbox-host run -- {PLUGIN}`** (namespaces)",
             [str(exe), "run", "--", PLUGIN]),
            ("version", "`sandbox-host --version` (start-up alone)", [str(exe), "--version"]),
            ("probe", "`sandbox-host probe` (start-up, config, module loads, every backend's probe)",
             [str(exe), "probe"]),
        ]
        for _, label, argv in commands:
            reason = check_command(prefix, argv, env, cwd)
            if reason is not None:
                die(f"`{shlex.join(argv)}` does not work as uid {args.user} ({reason})")

        def measure():
            load_before = load_average()
            results, hf_command = hyperfine(
                prefix, [(label, argv) for _, label, argv in commands], env, cwd, out_dir,
                args.warmup, args.runs)
            return load_before, load_average(), results, hf_command

        (load_before, load_after, results, hf_command), foreign_share, busy_before, attempts = \
            quietly(measure, args)
        hf_command = [c.replace(str(tmp / "stage"), "<tmp>").replace(str(tmp / "out"), "<tmp>/out")
                      for c in hf_command]
    rows = []
    for (key, label, _), r in zip(commands, results):
        times = [t * 1e3 for t in r["times"]]
        rows.append({"key": key, "label": label, "mean_ms": r["mean"] * 1e3,
                     "stddev_ms": r["stddev"] * 1e3, "median_ms": r["median"] * 1e3,
                     "p10_ms": percentile(times, 0.10), "p90_ms": percentile(times, 0.90),
                     "cpu_ms": (r["user"] + r["system"]) * 1e3})
    versions = []
    for cmd in (["hyperfine", "--version"], ["bwrap", "--version"], ["unshare", "--version"]):
        v = output_of(cmd)
        if v:
            versions.append(v.splitlines()[0])
    section = render(rows, hf_command, prefix, verify_lines, bwrap, env_info, busy_before,
                     foreign_share, attempts, load_before, load_after, args.user, args,
                     versions, source_revision())
    if args.no_write:
        print(section)
    else:
        write_section(section, BEGIN, END)
        print(f"wrote {DOCS}", file=sys.stderr)
    by_key = {r["key"]: r for r in rows}
    for r in rows:
        print(f"{r['key']:8} mean {r['mean_ms']:7.3f} ms  median {r['median_ms']:7.3f} ms  "
              f"{r['median_ms'] / by_key['bare']['median_ms']:5.2f}x bare", file=sys.stderr)
    print(f"median ratio sandbox-host / bubblewrap: "
          f"{by_key['host']['median_ms'] / by_key['bwrap']['median_ms']:.2f}", file=sys.stderr)


if __name__ == "__main__":
    main()
