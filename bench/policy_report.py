#!/usr/bin/env python3
"""Spawn-to-exit of /bin/true held to an agent policy by `sandbox-host run --policy` (under the
namespaces and under the landlock backend), beside a bare spawn, bubblewrap doing what Claude
Code's sandbox does on Linux for the same policy, and a plugin launch, all in one hyperfine
run, as an unprivileged user; rewrites the policy-bench section of docs/benchmarks.md.

Usage, from the repository root after building into build-bench:
    python3 bench/policy_report.py [--build build-bench] [--runs 200] [--warmup 20]

The policy is over a stand-in home tree the script makes under /var/tmp (not /tmp: both
sandboxes give the command a private /tmp), owned by the measuring user: a home with a
secret, a readable .gitconfig and a writable project holding a denied .state directory, and a
runtime directory with a readable egress directory. Before timing it checks, as the same user,
that each sandbox holds the policy: what a shell inside can read, and which of its writes reach
the host, against a control run of the same shell outside any sandbox.

Run as root, it copies the build's sandbox-host and modules to a world-readable temporary
directory and runs hyperfine (and every command it times) as --user (default 65534, nobody)
through `setpriv`. Run as anyone else, it runs them as that user.

Only the text between the policy-bench begin/end markers is rewritten; the section is appended
when the markers are missing. The other sections are kept.
"""

import argparse
import os
import shlex
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench_common import (BACKEND_ENV, DOCS, PLUGIN, add_run_arguments, build_runs_arguments,
                          hyperfine_command_lines, become_subreaper,
                          check_command, die, display_path, launch_env, machine, machine_lines,
                          measure_hyperfine, provenance_and_reproduce, reap_orphans, run_as,
                          runner, source_revision, stage_build, timing_rows, tool_versions,
                          user_dir, verify_sandbox, write_section)

BEGIN = "<!-- policy-bench:begin -->"
END = "<!-- policy-bench:end -->"
BUILD_TARGETS = "sandbox-host backend_namespaces backend_landlock"
GNU_TIME = "/usr/bin/time"
# Launches of each sandbox whose peak RSS is taken (untimed, before the hyperfine run).
RSS_RUNS = 25
# The config's plugin tables: each names the backend its launches run under. hyperfine gives
# every command one environment, so CLAWPATROL_SANDBOX_BACKEND cannot force a different
# backend per row; a plugin's `sandbox` key forces it the same way (that backend's probe
# alone, never a fall-through), per command, through --name.
CONFIG = """\
# policy bench: the backend of each launch, by --name (the probe never chooses)
[plugins.policy-namespaces]
sandbox = "namespaces"

[plugins.policy-landlock]
sandbox = "landlock"

[plugins.plugin-namespaces]
sandbox = "namespaces"
"""


# ---- the stand-in home tree and its policy --------------------------------------------------

class Tree:
    """The paths of the stand-in tree under one top directory."""

    def __init__(self, top):
        self.top = top
        self.home = top / "home"
        self.gitconfig = self.home / ".gitconfig"
        self.secret = self.home / "secret"
        self.proj = self.home / "proj"
        self.proj_file = self.proj / "Makefile"
        self.proj_src = self.proj / "src"
        self.state = self.proj / ".state"
        self.state_token = self.state / "token"
        self.runtime = top / "run"
        self.runtime_secret = self.runtime / "agent.socket-token"
        self.egress = self.runtime / "egress"
        self.egress_ca = self.egress / "ca.pem"
        self.outside = top / "outside"

    def readable(self):
        """(name, path, what the file holds, whether the policy lets commands read it)."""
        return [
            ("home/secret", self.secret, "secret-of-home", False),
            ("home/.gitconfig", self.gitconfig, "gitconfig", True),
            ("home/proj/Makefile", self.proj_file, "project-file", True),
            ("home/proj/.state/token", self.state_token, "secret-of-state", False),
            ("run/agent.socket-token", self.runtime_secret, "secret-of-runtime", False),
            ("run/egress/ca.pem", self.egress_ca, "egress-ca", True),
        ]

    def writable(self):
        """(name, path, whether the policy lets a command's write reach the host); an existing
        file is appended to, any other path created."""
        return [
            ("append home/proj/Makefile", self.proj_file, True),
            ("create home/proj/src/new", self.proj_src / "new", True),
            ("create home/proj/new", self.proj / "new", True),
            ("create home/proj/.state/new", self.state / "new", False),
            ("create home/new", self.home / "new", False),
            ("append home/.gitconfig", self.gitconfig, False),
            ("create run/new", self.runtime / "new", False),
            ("create outside/new", self.outside / "new", False),
        ]


def make_tree(top, uid):
    """The stand-in tree, owned by uid (its directories 0700, as a home and /run/user/<uid>
    are), with each readable file holding a marker of its own."""
    tree = Tree(top)
    for directory in (tree.home, tree.proj, tree.proj_src, tree.state, tree.runtime,
                      tree.egress, tree.outside):
        directory.mkdir()
    for _, path, content, _ in tree.readable():
        path.write_text(content + "\n")
    for path in list(top.rglob("*")):
        path.chmod(0o700 if path.is_dir() else 0o600)
        if os.geteuid() == 0:
            os.chown(path, uid, uid)
    return tree


def policy_text(tree):
    return (f'home = "{tree.home}"\n'
            f'runtime = "{tree.runtime}"\n'
            f'egress = "{tree.egress}"\n'
            f'read = ["{tree.gitconfig}"]\n'
            f'write = ["{tree.proj}"]\n'
            f'deny = ["{tree.state}"]\n')


def bwrap_policy_argv(tree, command):
    """bubblewrap as Claude Code's sandbox runtime runs it on Linux for this policy: the host
    read-only, denied directories as empty tmpfs, re-allowed paths bound back over them, the
    writable project bound read-write with its denied .state hidden again; every namespace."""
    home, runtime = str(tree.home), str(tree.runtime)
    return ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/tmp",
            "--tmpfs", home, "--ro-bind", str(tree.gitconfig), str(tree.gitconfig),
            "--bind", str(tree.proj), str(tree.proj), "--tmpfs", str(tree.state),
            "--tmpfs", runtime, "--ro-bind", str(tree.egress), str(tree.egress),
            "--unshare-all", "--die-with-parent", "--new-session", *command]


# ---- does each sandbox hold the policy? -----------------------------------------------------

# Where a sandbox answers otherwise than the policy, by a limit its docs state: Landlock cannot
# take a right away below a grant, so a directory on the way to a rule of less access (the
# project, for its denied .state) gets no create right of its own (docs/agent-policy.md).
KNOWN_DIFFERENCES = {("policy-landlock", "create home/proj/new"): "no"}


def probe_script(tree, tag):
    """A shell script that prints, one line each, whether a readable file's marker came through
    and whether a write to each writable path succeeded inside; tag marks what it writes."""
    lines = ["u=$(readlink /proc/self/ns/user); echo \"userns: $u\""]
    for name, path, content, _ in tree.readable():
        lines.append(f"[ \"$(cat {shlex.quote(str(path))} 2>/dev/null)\" = {content} ] "
                     f"&& echo 'read {name}: yes' || echo 'read {name}: no'")
    for name, path, _ in tree.writable():
        lines.append(f"(echo {tag} >> {shlex.quote(str(path))}) 2>/dev/null; :")
    return "\n".join(lines)


def writes_on_host(tree, tag, originals):
    """Which of the probe's writes reached the host (found there with its tag); restores the
    tree as it was."""
    reached = {}
    for name, path, _ in tree.writable():
        try:
            text = path.read_text()
        except FileNotFoundError:
            text = None
        reached[name] = text is not None and tag in text
        if path in originals:
            path.write_text(originals[path])
        elif text is not None:
            path.unlink()
    return reached


def check_policy(prefix, argv_for, tree, env, cwd, tag):
    """Runs the probe under argv_for([...]) (a sandbox, or nothing for the control) and returns
    {check: yes/no} for reads inside and writes that reached the host, and the user namespace."""
    originals = {path: path.read_text() for _, path, _ in tree.writable() if path.exists()}
    r = run_as(prefix, argv_for(["/bin/sh", "-c", probe_script(tree, tag)]), env, cwd)
    if r.returncode != 0:
        die(f"the probe shell under {tag} exited {r.returncode}: {r.stderr.strip()}")
    fields = dict(line.split(": ", 1) for line in r.stdout.splitlines() if ": " in line)
    reached = writes_on_host(tree, tag, originals)
    result = {name: "yes" if reached[name] else "no" for name in reached}
    result.update({k: v for k, v in fields.items() if k.startswith("read ")})
    return result, fields.get("userns")


def verify_policy(prefix, sandboxes, tree, env, cwd):
    """Checks every sandbox against the policy: the control run (no sandbox) must read and
    write everything, so that a "no" below it is the sandbox's doing; each sandbox must read
    exactly the files the policy allows and reach the host only with the writes it allows.
    Returns the rows of the table to quote, and each sandbox's user namespace."""
    expected = {f"read {name}": "yes" if allowed else "no"
                for name, _, _, allowed in tree.readable()}
    expected.update({name: "yes" if allowed else "no" for name, _, allowed in tree.writable()})
    control, host_userns = check_policy(prefix, lambda command: command, tree, env, cwd,
                                        "control")
    for check in expected:
        if control.get(check) != "yes":
            die(f"control run outside any sandbox: {check} is {control.get(check)!r}; the "
                "stand-in tree does not let its user do it, so the check proves nothing")
    results, namespaces = {}, {}
    for key, argv_for in sandboxes:
        got, userns = check_policy(prefix, argv_for, tree, env, cwd, key)
        for check, want in expected.items():
            want = KNOWN_DIFFERENCES.get((key, check), want)
            if got.get(check) != want:
                die(f"{key} does not hold the policy: {check} is {got.get(check)!r}, "
                    f"want {want!r}")
        results[key] = got
        namespaces[key] = "own" if userns != host_userns else "the host's"
    rows = [(check, control[check], expected[check], [results[k][check] for k, _ in sandboxes])
            for check in expected]
    return rows, namespaces


# ---- peak RSS -------------------------------------------------------------------------------

def peak_rss_kib(prefix, argv, env, cwd, runs):
    """The median over runs of the launch's peak RSS as GNU time reports it (%M, wait4's
    ru_maxrss): the largest of the process and the descendants it waited for, not an orphaned
    init nobody waits for. Through time, not from here: exec records the RSS the process had
    before it, and a child forked from this script would carry the interpreter's."""
    peaks = []
    for _ in range(runs):
        r = run_as(prefix, [GNU_TIME, "-f", "maxrss %M", *argv], env, cwd)
        last = r.stderr.splitlines()[-1] if r.stderr.strip() else ""
        if r.returncode != 0 or not last.startswith("maxrss "):
            die(f"`{shlex.join(argv)}` under {GNU_TIME} exited {r.returncode} while measuring "
                f"its RSS: {r.stderr.strip()}")
        peaks.append(int(last.split()[1]))
        reap_orphans()
    return statistics.median(peaks)


# ---- the section ----------------------------------------------------------------------------

ISOLATION = [
    ("bare `/bin/true`", "nothing"),
    ("bubblewrap", "user, pid (bwrap is pid 1), net (loopback up), ipc, uts and cgroup "
     "namespaces (`--unshare-all`); the host's root bound read-only, fresh `/proc`, minimal "
     "`/dev`, tmpfs `/tmp`; home and runtime directory as writable tmpfs (a write there lands in "
     "memory, not on the host) with `.gitconfig` and `egress` bound back read-only and the project "
     "read-write, its `.state` a tmpfs again; no_new_privs, no capabilities, own session, dies "
     "with its parent; no seccomp filter (Claude Code adds one for unix sockets, through a helper "
     "not run here)"),
    ("`sandbox-host run --policy` (namespaces)", "user, mount, pid, net (loopback up), ipc, uts "
     "and cgroup namespaces, its own init as pid 1; the host's root recursively read-only, nosuid, "
     "nodev; fresh `/proc`, minimal `/dev`, private `/tmp`; home and runtime directory as empty "
     "read-only tmpfs listing only what is re-allowed, `.gitconfig` and `egress` bound read-only, "
     "the project read-write, its `.state` an empty read-only tmpfs; the run's socket and tmp "
     "directories; no_new_privs, no capabilities, the default seccomp filter and one refusing "
     "`socket(AF_UNIX)`; the backend's probe first"),
    ("`sandbox-host run --policy` (landlock)", "no namespaces; a Landlock domain granting the "
     "view by complement (every directory on the way to a rule of less access listed and each "
     "entry granted on its own), the system's grants for `/proc` and `/dev`; no_new_privs, no "
     "capabilities, the seccomp filters as under namespaces; the backend's probe first"),
    ("`sandbox-host run` (plugin, namespaces)", "a plugin's deny-by-default tree instead of the "
     "policy's view: a tmpfs root with `/usr` read-only, the root's symlinks, 18 `/etc` "
     "entries, `/proc`, `/dev`, `/tmp`; otherwise as the namespaces row (no AF_UNIX filter)"),
]


def render(rows, hf_command, prefix, verify_rows, sandbox_keys, namespaces, plugin_lines, rss,
           policy, env_info, busy_before, foreign, attempts, load_before,
           load_after, uid, args, versions, revision):
    by_key = {r["key"]: r for r in rows}
    bare, bwrap_row = by_key["bare"], by_key["bwrap"]
    who = f"uid {uid}, `nobody`" if prefix and uid == 65534 else \
        f"uid {uid}" if prefix else f"uid {os.geteuid()}"
    out = [BEGIN, "",
           "## `sandbox-host run --policy` vs. bubblewrap with Claude Code's flags for the same "
           "policy (unprivileged)", ""]
    out += [
        f"`{PLUGIN}` from spawn to exit, run by an unprivileged user ({who}), held to one agent",
        "policy (docs/agent-policy.md) by `sandbox-host run --policy` under the namespaces and the",
        "landlock backend, beside the same binary spawned bare, under bubblewrap with the flags",
        "Claude Code's sandbox runtime gives it on Linux for that policy, and under a plain plugin",
        "launch for reference. All rows come from ONE",
        f"`hyperfine -N --warmup {args.warmup} --runs {args.runs}` invocation, so they share the",
        "machine's conditions. No target is set for this launch; the ratios are the result.",
        "",
        "| command | mean ± σ | median | p10 … p90 | user + sys CPU | median vs. bare | median vs. bubblewrap | mean vs. bubblewrap |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['label']} | {r['mean_ms']:.3f} ± {r['stddev_ms']:.3f} ms | "
            f"{r['median_ms']:.3f} ms | {r['p10_ms']:.2f} … {r['p90_ms']:.2f} ms | "
            f"{r['cpu_ms']:.2f} ms | {r['median_ms'] / bare['median_ms']:.2f}× | "
            f"{r['median_ms'] / bwrap_row['median_ms']:.2f}× | "
            f"{r['mean_ms'] / bwrap_row['mean_ms']:.2f}× |")
    ns, ll = by_key["policy-namespaces"], by_key["policy-landlock"]
    plugin = by_key["plugin-namespaces"]
    out += [
        "",
        f"**Median ratio `run --policy` / bubblewrap: namespaces "
        f"{ns['median_ms'] / bwrap_row['median_ms']:.2f}, landlock "
        f"{ll['median_ms'] / bwrap_row['median_ms']:.2f}** "
        f"({ns['median_ms']:.3f} ms and {ll['median_ms']:.3f} ms against "
        f"{bwrap_row['median_ms']:.3f} ms). Under the namespaces backend, the policy's view "
        f"against a plugin's deny-by-default tree: median {ns['median_ms']:.3f} vs. "
        f"{plugin['median_ms']:.3f} ms ({ns['median_ms'] - plugin['median_ms']:+.3f} ms).",
        "",
        "User + sys CPU is hyperfine's per-run mean of the command and the descendants it",
        "waited for; the percentiles are over the individual runs. As in the namespaces-bench",
        "section, it misses the processes nobody waits for: bubblewrap's pid 1 and the",
        "namespaces backend's init (the landlock backend has none: the command is the process",
        "stage 1 became, and sandbox-host waits for it).",
        "",
    ]
    if foreign > args.max_foreign:
        out += [
            f"Note: anything but the measured commands used {foreign:.0%} of the CPUs while this "
            f"ran (the least of {attempts} attempts), more than the {args.max_foreign:.0%} taken "
            "as quiet; the times may be noisier than on an idle machine; the medians are the "
            "numbers to compare.",
            "",
        ]
    if rss:
        out += [
            f"Peak RSS of each launch: the median of {RSS_RUNS} untimed launches before the timed",
            f"run, each under `{GNU_TIME} -f %M` (wait4's `ru_maxrss`: the largest of the launched",
            "process and the descendants it waited for, so not bubblewrap's pid 1 or the",
            "namespaces backend's init; the bare row is the floor this way of measuring has):",
            "",
            "| command | peak RSS |",
            "|---|---|",
        ]
        out += [f"| {by_key[key]['label']} | {kib / 1024:.1f} MiB ({kib:,.0f} KiB) |"
                for key, kib in rss]
        out.append("")
    out += ["### What each command isolates", "", "| command | isolation |", "|---|---|"]
    out += [f"| {name} | {text} |" for name, text in ISOLATION]
    out += [
        "",
        "The bubblewrap command is the shape of the one Claude Code's sandbox runtime runs on",
        "Linux for such a policy (`--ro-bind / /`, a tmpfs over each denied directory, binds",
        "back for what is re-allowed and written, `--unshare-all`), over the same stand-in",
        "tree, runtime directory included; Claude Code itself is not installed here, and what",
        "its launch adds around bwrap (its proxy's bridges, the unix-socket seccomp helper) is",
        "not run.",
        "",
        "The three sandboxes hold the same files, but not identically: bubblewrap's hidden",
        "directories are writable tmpfs (writes vanish with the sandbox), sandbox-host's are",
        "read-only; sandbox-host adds seccomp filters and its probe. The ratio is the cost of",
        "each launcher as it is, not of identical work.",
        "",
        "### The policy and what was checked",
        "",
        "`<tree>` is a fresh directory `/var/tmp/policy-bench-tree-*` (removed afterwards; not",
        "under `/tmp`, which every sandbox here replaces) whose `home`, `run` and `outside`",
        "directories and files belong to the measuring user (directories 0700).",
        "The policy, `<tmp>/policy.toml`:",
        "",
        "```toml",
        policy.rstrip("\n"),
        "```",
        "",
        "Checked once before timing, as the same user, with the same command lines as timed but",
        "`/bin/sh -c <probe>` for `/bin/true`: the probe reads each file and compares it with the",
        "marker it holds, and appends to each writable path; the script then looks on the host for",
        "what arrived (and puts the tree back). The control is the same shell outside any sandbox,",
        "so every \"no\" in a sandbox's column is the sandbox's doing:",
        "",
        "| check | control | policy | " + " | ".join(
            f"`{key}`" for key in sandbox_keys) + " |",
        "|---|---|---|" + "---|" * len(sandbox_keys),
    ]
    out += [f"| {check} | {control} | {want} | " + " | ".join(got) + " |"
            for check, control, want, got in verify_rows]
    out += [
        "",
        "Where a column differs from the policy, it is a limit the sandbox documents:",
        "; ".join(f"`{key}` says {got} to {check}"
                  for (key, check), got in KNOWN_DIFFERENCES.items()) + ".",
        "Landlock cannot take a right away below a grant, so the project, on the way to its",
        "denied `.state`, gets no create right of its own (docs/agent-policy.md).",
        "",
        "User namespace (`readlink /proc/self/ns/user` against the control's):",
        ", ".join(f"`{key}` {namespaces[key]}" for key in sandbox_keys) + ".",
        "The plugin launch, checked as in the namespaces-bench section",
        "(`sandbox-host run -- /bin/true` exits 0; a shell inside sees):",
        "",
        "```",
        *plugin_lines,
        "```",
        "",
        "### Exactly what ran",
        "",
        "sandbox-host and its modules are a copy of the build's, in a world-readable temporary",
        "directory `<tmp>` (`<tmp>/bin/sandbox-host`, `<tmp>/lib/sandbox-host/modules/*.so`), so",
        f"the unprivileged user can run them. `{BACKEND_ENV}` is unset: hyperfine gives every",
        "command one environment, so the backend is forced per command by `<tmp>/bench.toml`,",
        "whose plugin table for each `--name` names it (that backend's probe alone, never a",
        "fall-through, as the variable does):",
        "",
        "```toml",
        CONFIG.rstrip("\n"),
        "```",
        "",
    ]
    out += hyperfine_command_lines(prefix, hf_command)
    out += [
        "",
        *machine_lines(env_info),
        f"- CPUs busy (all cores, /proc/stat) in the second before the run: {busy_before:.0%};"
        f" CPU time used by anything but the measured commands while they ran: {foreign:.1%}"
        f" of the machine (kernel threads working for the sandboxes included; the orphaned"
        f" inits are reaped by this script as a child subreaper and count as the measured"
        f" commands'; attempt {attempts} of at most {args.attempts}); load average before /"
        f" after: {load_before} / {load_after}",
    ]
    out += provenance_and_reproduce(
        revision, args.build, versions, f"cmake --build build-bench -j2 --target {BUILD_TARGETS}",
        f"python3 bench/policy_report.py --build {display_path(args.build)} "
        f"--runs {args.runs} --warmup {args.warmup}")
    out += [END]
    return "\n".join(out) + "\n"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    build_runs_arguments(parser, runs=200, warmup=20)
    parser.add_argument("--no-rss", action="store_true",
                        help="leave out the peak RSS of each launch")
    add_run_arguments(parser)
    args = parser.parse_args()
    if args.runs < 10:
        parser.error("--runs must be at least 10")
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
    with tempfile.TemporaryDirectory(prefix="policy-bench-") as tmp_name, \
            tempfile.TemporaryDirectory(prefix="policy-bench-tree-", dir="/var/tmp") as top_name:
        tmp, top = Path(tmp_name), Path(top_name)
        tmp.chmod(0o755)
        top.chmod(0o755)
        exe = stage_build(args.build, tmp / "stage")
        out_dir = user_dir(tmp / "out", args.user)
        env = launch_env(tmp / "out")
        env.pop(BACKEND_ENV)
        cwd = str(tmp / "stage")
        tree = make_tree(top, args.user)
        policy = policy_text(tree)
        policy_file, config_file = tmp / "stage" / "policy.toml", tmp / "stage" / "bench.toml"
        policy_file.write_text(policy)
        config_file.write_text(CONFIG)
        for path in (policy_file, config_file):
            path.chmod(0o644)

        def host_run(name, *options):
            return lambda command: [str(exe), "run", "--config", str(config_file), "--name",
                                    name, *options, "--", *command]

        policy_ns = host_run("policy-namespaces", "--policy", str(policy_file))
        policy_ll = host_run("policy-landlock", "--policy", str(policy_file))
        plugin = host_run("plugin-namespaces")
        bwrap = lambda command: bwrap_policy_argv(tree, command)  # noqa: E731
        commands = [
            ("bare", f"bare `{PLUGIN}`", [PLUGIN]),
            ("bwrap", "bubblewrap with Claude Code's flags for the policy (command below)",
             bwrap([PLUGIN])),
            ("policy-namespaces", f"**`sandbox-host run --policy P -- {PLUGIN}`** (namespaces)",
             policy_ns([PLUGIN])),
            ("policy-landlock", f"**`sandbox-host run --policy P -- {PLUGIN}`** (landlock)",
             policy_ll([PLUGIN])),
            ("plugin-namespaces", f"`sandbox-host run -- {PLUGIN}` (plugin launch, namespaces)",
             plugin([PLUGIN])),
        ]
        for _, label, argv in commands:
            reason = check_command(prefix, argv, env, cwd)
            if reason is not None:
                die(f"`{shlex.join(argv)}` does not work as uid {args.user} ({reason})")
        sandboxes = [("bwrap", bwrap), ("policy-namespaces", policy_ns),
                     ("policy-landlock", policy_ll)]
        verify_rows, namespaces = verify_policy(prefix, sandboxes, tree, env, cwd)
        if namespaces["policy-landlock"] != "the host's" or \
                namespaces["policy-namespaces"] != "own":
            die(f"the backends are not the ones named: user namespaces {namespaces}")
        plugin_lines = verify_sandbox(prefix, exe, env, cwd,
                                      ["--config", str(config_file), "--name",
                                       "plugin-namespaces"])
        if not args.no_rss and not os.access(GNU_TIME, os.X_OK):
            die(f"{GNU_TIME} (Debian package time) is not installed; --no-rss leaves out the "
                "peak RSS")
        rss = [] if args.no_rss else [
            (key, peak_rss_kib(prefix, argv, env, cwd, RSS_RUNS)) for key, _, argv in commands]

        (results, hf_command, load_before, load_after, foreign_share, busy_before,
         attempts) = measure_hyperfine(prefix, commands, env, cwd, out_dir, args)
        hf_command = [c.replace(str(tmp / "stage"), "<tmp>").replace(str(tmp / "out"), "<tmp>/out")
                      .replace(str(top), "<tree>") for c in hf_command]
        policy = policy.replace(str(top), "<tree>")
    rows = timing_rows(commands, results)
    versions = tool_versions([["hyperfine", "--version"], ["bwrap", "--version"]])
    section = render(rows, hf_command, prefix, verify_rows, [k for k, _ in sandboxes], namespaces,
                     plugin_lines, rss, policy, env_info, busy_before,
                     foreign_share, attempts, load_before, load_after, args.user, args, versions,
                     source_revision())
    if args.no_write:
        print(section)
    else:
        write_section(section, BEGIN, END)
        print(f"wrote {DOCS}", file=sys.stderr)
    by_key = {r["key"]: r for r in rows}
    for r in rows:
        print(f"{r['key']:18} mean {r['mean_ms']:7.3f} ms  median {r['median_ms']:7.3f} ms  "
              f"{r['median_ms'] / by_key['bare']['median_ms']:5.2f}x bare  "
              f"{r['median_ms'] / by_key['bwrap']['median_ms']:5.2f}x bubblewrap",
              file=sys.stderr)


if __name__ == "__main__":
    main()
