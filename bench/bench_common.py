"""What the benchmark report scripts share: running a command for its output, the machine's
description, the source revision, and rewriting one marked section of docs/benchmarks.md;
for the namespaces scripts also the unprivileged user and a copy of the build it can run,
the bubblewrap peer command, the check that the sandbox is what it should be, waiting for
(and measuring) a quiet machine, and counting the processes nobody waits for."""

import ctypes
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs" / "benchmarks.md"
PLUGIN = "/bin/true"
BACKEND_ENV = "CLAWPATROL_SANDBOX_BACKEND"
# Directories of the root that merged-/usr systems have as symlinks into /usr.
ROOT_DIRS = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"]


def die(message):
    print(f"{Path(sys.argv[0]).name}: {message}", file=sys.stderr)
    sys.exit(1)


def output_of(command):
    try:
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def display_path(path):
    """path relative to the repository root when it lies inside it (the command is run there)."""
    resolved = Path(path).resolve()
    try:
        return str(resolved.relative_to(REPO))
    except ValueError:
        return str(resolved)


def load_average():
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return None


def machine():
    cpu = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "nproc": output_of(["nproc"]) or str(os.cpu_count()),
        "kernel": platform.release(),
        "cpu": cpu,
        "load_before": load_average(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "os": next((line.split("=", 1)[1].strip('"') for line in
                    Path("/etc/os-release").read_text().splitlines()
                    if line.startswith("PRETTY_NAME=")), None),
    }


def source_revision():
    head = output_of(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"])
    if head is None:
        return None
    try:
        # --no-optional-locks: read-only, never refreshes the index.
        dirty = subprocess.run(["git", "--no-optional-locks", "-C", str(REPO), "status",
                                "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        dirty = ""
    if not dirty.strip():
        return head
    # Which top-level directories differ: bench/ and docs/ do not change what is measured.
    dirs = sorted({line[3:].split("/")[0] + ("/" if "/" in line[3:] else "")
                   for line in dirty.splitlines() if len(line) > 3})
    return head + " with uncommitted changes in " + ", ".join(f"`{d}`" for d in dirs)


# No line of docs/benchmarks.md is longer than this (tests/docs/benchmarks_doc_test.py).
MAX_LINE = 200
WRAP = 100  # prose that is too long is wrapped at this width


def _split_cells(row):
    """The cells of a Markdown table row; `\|` inside a cell is not a separator."""
    cells, cell, i, body = [], "", 0, row.strip()[1:-1] if row.strip().endswith("|") else row.strip()[1:]
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body) and body[i + 1] == "|":
            cell += "\\|"
            i += 2
            continue
        if body[i] == "|":
            cells.append(cell.strip())
            cell = ""
        else:
            cell += body[i]
        i += 1
    cells.append(cell.strip())
    return cells


def _fit_table(rows):
    """A table whose rows fit MAX_LINE: the longest cells of a row that does not (never the
    first, which names the row, while another will do) become a reference *(n)*, and their
    text a note below the table; equal texts share one note."""
    notes, out = [], []
    for row in rows:
        cells = _split_cells(row)
        line = "| " + " | ".join(cells) + " |"
        while len(line) > MAX_LINE:
            movable = [i for i, c in enumerate(cells) if not re.fullmatch(r"\*\(\d+\)\*", c)]
            rest = [i for i in movable if i > 0] or movable
            if not rest:
                break
            i = max(rest, key=lambda k: len(cells[k]))
            if cells[i] not in notes:
                notes.append(cells[i])
            cells[i] = f"*({notes.index(cells[i]) + 1})*"
            line = "| " + " | ".join(cells) + " |"
        out.append(line if line != "| " + " | ".join(_split_cells(row)) + " |" else row)
    if notes:
        out.append("")
        for n, text in enumerate(notes, 1):
            out += _wrap(f"- *({n})* {text}")
    return out


def _wrap(line):
    """line, wrapped at WRAP when it is longer than MAX_LINE; a list item's continuation
    lines are indented under its text."""
    if len(line) <= MAX_LINE:
        return [line]
    lead = re.match(r"(\s*(?:[-*] |\d+\. )?)", line).group(1)
    for width in range(WRAP, WRAP - 20, -1):  # no continuation line may read as a list or a table
        out = textwrap.wrap(line[len(lead):], width=width, initial_indent=lead,
                            subsequent_indent=" " * len(lead), break_long_words=False,
                            break_on_hyphens=False)
        if not any(re.match(r"\s*([-+*>#|]|\d+[.)])( |$)", rest) for rest in out[1:]):
            return out
    return out


def _wrap_code(line):
    """A shell line of a code block, broken before WRAP (MAX_LINE at most) at a space: outside
    quotes with a backslash, inside a quoted command (hyperfine and sh split it at any white
    space) without one; continuation lines are indented by two more spaces."""
    if len(line) <= MAX_LINE:
        return [line]
    more = " " * (len(line) - len(line.lstrip(" ")) + 2)
    out, rest, quote = [], line, None
    while len(rest) > MAX_LINE:
        state, best_out, best_in = quote, (-1, None), (-1, None)
        for i, ch in enumerate(rest[:MAX_LINE - 1]):
            if i > WRAP and max(best_out[0], best_in[0]) > len(more):
                break
            if state:
                if ch == state:
                    state = None
                elif ch == " " and i > len(more):
                    best_in = (i, state)
            elif ch in "'\"":
                state = ch
            elif ch == " " and i > len(more) and rest[i - 1] != " ":
                best_out = (i, None)
        if best_out[0] > WRAP // 2 or (best_out[0] > 0 and best_in[0] < 0):
            at, quote = best_out
            out.append(rest[:at] + " \\")
        elif best_in[0] > 0:
            at, quote = best_in
            out.append(rest[:at])
        else:
            break
        rest = more + rest[at + 1:].lstrip(" ")
    out.append(rest)
    return out


def fit_lines(text):
    """text with no line over MAX_LINE: prose wrapped, shell lines broken, and the long cells
    of tables moved to notes below them. Lines that fit are left as they are."""
    lines, out, i, fence = text.split("\n"), [], 0, False
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            fence = not fence
            out.append(line)
            i += 1
        elif fence:
            out += _wrap_code(line)
            i += 1
        elif line.startswith("|"):
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            table = lines[i:j]
            out += _fit_table(table) if any(len(r) > MAX_LINE for r in table) else table
            i = j
        else:
            out += _wrap(line)
            i += 1
    return "\n".join(out)


def write_section(section, begin, end):
    """Replaces the text between the markers begin and end, or appends the section; no line
    of it is longer than MAX_LINE (fit_lines)."""
    section = fit_lines(section)
    text = DOCS.read_text() if DOCS.exists() else "# Benchmarks\n"
    start, stop = text.find(begin), text.find(end)
    if start != -1 and stop != -1 and start < stop:
        text = text[:start] + section.rstrip("\n") + text[stop + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    DOCS.write_text(text)


# ---- the unprivileged user and a copy of the build it can run -------------------------------

def runner(uid):
    """The prefix that runs a command as uid: setpriv when we are root, nothing otherwise."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        die("running as root needs setpriv (util-linux) to drop to the unprivileged user")
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]


def stage_build(build, tmp, required=(), optional=("probe_bench",)):
    """Copies <build>/bin/sandbox-host and <build>/lib/sandbox-host/modules/*.so to tmp with
    the same relative layout (sandbox-host finds its modules at <exe>/../lib/...), and the
    other executables of <build>/bin named in required (an error when missing) and optional
    (copied when built). Returns the copy of sandbox-host."""
    exe = build / "bin" / "sandbox-host"
    modules = build / "lib" / "sandbox-host" / "modules"
    if not os.access(exe, os.X_OK):
        die(f"{exe}: not an executable; build first")
    for extra in required:
        if not os.access(build / "bin" / extra, os.X_OK):
            die(f"{build / 'bin' / extra}: not an executable; build the target {extra} first")
    sos = sorted(modules.glob("*.so"))
    if not any(so.name == "backend_namespaces.so" for so in sos):
        die(f"{modules}: no backend_namespaces.so; build first")
    (tmp / "bin").mkdir(parents=True)
    (tmp / "lib" / "sandbox-host" / "modules").mkdir(parents=True)
    shutil.copy2(exe, tmp / "bin" / "sandbox-host")
    for extra in (*required, *optional):
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


def verify_sandbox(prefix, exe, env, cwd, run_options=(), client=None):
    """Before any timing: `run -- /bin/true` exits 0, and a shell in the sandbox sees
    NoNewPrivs 1, Seccomp 2 and hostname sandbox. Returns the lines to quote. run_options go
    before the `--` (["--prepared"]: through a prepared sandbox, as a SandboxPool launches);
    client replaces `exe run` (e.g. [sandbox-host-launch], with ["--via", socket])."""
    run = [*(client or [str(exe), "run"]), *run_options, "--"]
    r = run_as(prefix, run + [PLUGIN], env, cwd)
    if r.returncode != 0:
        die(f"`sandbox-host {' '.join(run[1:])} {PLUGIN}` exited {r.returncode}: "
            f"{r.stderr.strip()}")
    probe = ("grep -E '^(Uid|NoNewPrivs|Seccomp|CapEff):' /proc/self/status; "
             "echo hostname: $(hostname); echo mounts: $(wc -l < /proc/self/mounts); "
             "echo root: $(ls /)")
    r = run_as(prefix, run + ["/bin/sh", "-c", probe], env, cwd)
    if r.returncode != 0:
        die(f"sandbox-host {' '.join(run[1:])} /bin/sh exited {r.returncode}: "
            f"{r.stderr.strip()}")
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
    idle machine shows a few per cent. own_cpu, when given, returns the CPU seconds of
    processes that work for the measured commands without being waited for (a service they
    launch through); what it gains meanwhile counts as the commands', not as others'."""

    def __init__(self, own_cpu=None):
        self.own_cpu = own_cpu or (lambda: 0.0)

    def __enter__(self):
        self.start = time.monotonic()
        self.jiffies = cpu_jiffies()
        self.children = os.times()
        self.own = self.own_cpu()
        return self

    def __exit__(self, *exc):
        wall = time.monotonic() - self.start
        busy = (cpu_jiffies()[0] - self.jiffies[0]) / os.sysconf("SC_CLK_TCK")
        after = os.times()
        ours = (after.children_user - self.children.children_user +
                after.children_system - self.children.children_system +
                self.own_cpu() - self.own)
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


def machine_lines(env_info, kernel_extra=""):
    """The start of a report's "Machine and build" section: the machine and the date, one line."""
    cpus = f"{env_info['nproc']} CPUs" + (f" ({env_info['cpu']})" if env_info["cpu"] else "")
    kernel = (f"kernel {env_info['kernel']}" + (f"; {env_info['os']}" if env_info["os"] else "")
              + kernel_extra)
    return [
        "### Machine and build",
        "",
        f"- machine: {cpus}, {kernel}; date: {env_info['date']}",
    ]


def provenance_and_reproduce(revision, build, versions, build_command, run_command):
    """The end of a report section: source, build and tool versions, then how to repeat it."""
    out = [f"- source: {revision}"] if revision else []
    out.append(f"- build: RelWithDebInfo, `{display_path(build)}`")
    out += [f"- {v}" for v in versions]
    out += [
        "",
        "### Reproduce",
        "",
        "From the repository root, as root (it drops to nobody) or as an unprivileged user:",
        "",
        "```sh",
        "cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSANDBOX_HOST_TESTS=OFF",
        build_command,
        run_command,
        "```",
        "",
    ]
    return out


def build_runs_arguments(parser, runs, warmup):
    """--build, --runs and --warmup, which every hyperfine report takes."""
    parser.add_argument("--build", default=str(REPO / "build-bench"), type=Path,
                        help="build tree with bin/sandbox-host (default: build-bench)")
    parser.add_argument("--runs", type=int, default=runs)
    parser.add_argument("--warmup", type=int, default=warmup)


def hyperfine_command_lines(prefix, hf_command):
    """hyperfine's command as a shell block, one timed command per line, its JSON export at
    <tmp>/out/hyperfine.json."""
    export = hf_command.index("--export-json")
    quoted = [shlex.quote(c) for c in hf_command[export + 2:]]
    return (["```sh", shlex.join(prefix + hf_command[:export])
             + " --export-json <tmp>/out/hyperfine.json \\"]
            + ["  " + q + (" \\" if i + 1 < len(quoted) else "") for i, q in enumerate(quoted)]
            + ["```"])


def add_run_arguments(parser):
    """The options every report script shares: whom to run as, when the machine counts as
    quiet, how often to retry, and whether to write the doc."""
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


def quietly(measure, args, own_cpu=None):
    """Runs measure() once the machine is idle, again (up to args.attempts times) while others
    used more than args.max_foreign of the CPUs during it; returns the least disturbed result
    as (result, foreign share, CPUs busy before it, attempts made). own_cpu: as ForeignLoad's."""
    best = None
    for attempt in range(1, args.attempts + 1):
        busy = wait_for_idle(args.max_busy, args.max_wait)
        with ForeignLoad(own_cpu) as foreign:
            result = measure()
        print(f"attempt {attempt}: others used {foreign.share:.1%} of the CPUs meanwhile",
              file=sys.stderr)
        if best is None or foreign.share < best[1]:
            best = (result, foreign.share, busy)
        if foreign.share <= args.max_foreign:
            break
    return best + (attempt,)


# ---- processes nobody waits for ------------------------------------------------------------

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper():
    """Makes this process a child subreaper: the orphans among its descendants (a sandbox's
    init once stage 1 has exited, bubblewrap's pid 1) become its children, and once reaped
    (reap_orphans) their CPU is in this process's children's rusage."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        die(f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")


def reap_orphans(timeout=10.0):
    """Reaps every child left; call it only while no subprocess runs, so that these are the
    orphans. Returns (how many, their CPU seconds, including what they reaped)."""
    count, cpu = 0, 0.0
    deadline = time.monotonic() + timeout
    while True:
        try:
            pid, _, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return count, cpu
        if pid == 0:
            if time.monotonic() > deadline:
                die(f"orphaned processes still run {timeout:.0f} s after the bench exited")
            time.sleep(0.01)
            continue
        count += 1
        cpu += usage.ru_utime + usage.ru_stime


# ---- statistics ---------------------------------------------------------------------------

def hyperfine(prefix, commands, env, cwd, out_dir, warmup, runs, options=()):
    """One hyperfine invocation for all commands; returns its results, in order. options go
    before the commands (e.g. one --prepare per command)."""
    export = out_dir / "hyperfine.json"
    command = ["hyperfine", "-N", "--warmup", str(warmup), "--runs", str(runs), "--style",
               "basic", *options, "--export-json", str(export)]
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


def measure_hyperfine(prefix, commands, env, cwd, out_dir, args):
    """hyperfine of commands ((key, label, argv) each) on a quiet machine (quietly): returns
    (results, hyperfine's command, load before, load after, foreign share, busy before,
    attempts). The sandboxes' inits, orphaned once their stage 1 exits, are this run's:
    reaped before and after, their CPU counts as the measured commands', not as other load."""
    def measure():
        reap_orphans()  # left by the checks before or by the previous attempt
        load_before = load_average()
        results, hf_command = hyperfine(
            prefix, [(label, argv) for _, label, argv in commands], env, cwd, out_dir,
            args.warmup, args.runs)
        reap_orphans()
        return load_before, load_average(), results, hf_command

    (load_before, load_after, results, hf_command), foreign, busy_before, attempts = \
        quietly(measure, args)
    return results, hf_command, load_before, load_after, foreign, busy_before, attempts


def timing_rows(commands, results):
    """One row per command ((key, label, argv) each) from hyperfine's results, in ms."""
    rows = []
    for (key, label, _), r in zip(commands, results):
        times = [t * 1e3 for t in r["times"]]
        rows.append({"key": key, "label": label, "mean_ms": r["mean"] * 1e3,
                     "stddev_ms": r["stddev"] * 1e3, "median_ms": r["median"] * 1e3,
                     "p10_ms": percentile(times, 0.10), "p90_ms": percentile(times, 0.90),
                     "cpu_ms": (r["user"] + r["system"]) * 1e3})
    return rows


def tool_versions(commands):
    """The first line of each version command's output, where it gives one."""
    versions = []
    for command in commands:
        v = output_of(command)
        if v:
            versions.append(v.splitlines()[0])
    return versions
