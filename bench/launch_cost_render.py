"""The launch-cost section of docs/benchmarks.md that bench/launch_cost.py writes: its
tables, the goals and the verdicts against them.
"""

import shlex
import statistics
from pathlib import Path

from bench_common import BACKEND_ENV, display_path, machine_lines, percentile
from launch_cost_proc import MAX_LAUNCHES, mem_available_kb
from launch_cost_measure import oneshot_config, service_config


BEGIN = "<!-- launch-cost:begin -->"
END = "<!-- launch-cost:end -->"


GOALS = {"burst16": 1.0, "oneshot_paced": 1.0, "service_b2b": 0.5, "service_paced": 0.5,
         "pss": 1.0, "cpu": 1.0}


# ---- the section -----------------------------------------------------------------------------

def med(values):
    return statistics.median(values) if values else float("nan")


def label(name):
    if name == "bwrap":
        return "bubblewrap"
    if name == "oneshot":
        return "one-shot `run`"
    return f"service, depth {name.split('-d')[1]}"


def verdict(ratio, goal):
    return f"≤ {goal:.1f}×: {'**met**' if ratio <= goal else 'not met'}"


def render(res, args, command, env_info, foreign, load_before, load_after, revision, versions,
           kernel):
    out = [BEGIN, "", "## What a launch costs, against bubblewrap (issue 44; unprivileged, one "
           "interleaved run)", ""]
    who = "uid 65534, `nobody`" if res["uid"] == 65534 else f"uid {res['uid']}"
    sizes, depths = res["sizes"], res["depths"]
    b = res["bursts"]
    out += [
        f"Everything below ran as {who}, in one run of `bench/launch_cost.py`: bubblewrap",
        "(bench_common's `bwrap_argv()`, the escape corpus's flags), the one-shot `sandbox-host",
        "run --config C --backend namespaces --network none --` and `sandbox-host-launch --via",
        "SOCKET --` through a running `sandbox-host serve` (namespaces, network `none`) with",
        f"`[launcher]` depth {', '.join(map(str, depths))} (`max_launches = {MAX_LAUNCHES}`).",
        "Within a round the variants take turns in an order that rotates from round to round",
        f"({args.pause_ms} ms pause before each burst or paced launch). Ratios are medians over",
        "bubblewrap's median in the same run.",
        "",
        "### Goals",
        "",
        "| goal | measured | bubblewrap | ratio | goal |",
        "|---|---|---|---|---|",
    ]
    goal_rows = []

    def goal(what, value, ref, g, unit="ms"):
        ratio = value / ref if ref else float("nan")
        goal_rows.append(f"| {what} | {value:.2f} {unit} | {ref:.2f} {unit} | {ratio:.2f}× | "
                         f"{verdict(ratio, g)} |")

    if "16" in b["bwrap"]:
        ref16 = med([x["wall_ms"] for x in b["bwrap"]["16"]])
        goal("16 at once, one-shot `run`", med([x["wall_ms"] for x in b["oneshot"]["16"]]),
             ref16, GOALS["burst16"])
        for d in depths:
            goal(f"16 at once, service depth {d}",
                 med([x["wall_ms"] for x in b[f"svc-d{d}"]["16"]]), ref16, GOALS["burst16"])
    idle = res["idle"]
    lat0 = next((r["latency"] for r in idle["svc-d1"] if r["target"] == 0 and "latency" in r), None)
    if lat0:
        goal("one paced one-shot `run` (nothing idle)", med(lat0["oneshot"]), med(lat0["bwrap"]),
             GOALS["oneshot_paced"])
        goal("paced through the service, depth 1 (nothing idle)", med(lat0["svc-d1"]),
             med(lat0["bwrap"]), GOALS["service_paced"])
    for d in depths:
        goal(f"back-to-back through the service, depth {d}", med(res["b2b"][f"svc-d{d}"]),
             med(res["b2b"]["bwrap"]), GOALS["service_b2b"])

    def cpu_total(x):
        return x["waited_ms"] + x["orphan_ms"] + x["service_ms"]

    def mean(xs, key=cpu_total):
        return statistics.fmean([key(x) for x in xs])

    for size in ("1", "16"):
        ref_cpu = mean(b["bwrap"][size])
        what = "alone" if size == "1" else "16 at once"
        goal(f"CPU per launch, one-shot `run` ({what})", mean(b["oneshot"][size]), ref_cpu,
             GOALS["cpu"])
        for d in depths:
            goal(f"CPU per launch, service depth {d} ({what})", mean(b[f"svc-d{d}"][size]),
                 ref_cpu, GOALS["cpu"])

    def per_plugin(rows):
        top = [r for r in rows if r["target"] > 0 and r["plugins"] > 0]
        return top[-1] if top else None

    bw = per_plugin(idle["bwrap"])
    for name in ("oneshot", "svc-d1"):
        row = per_plugin(idle[name])
        ref = next((r for r in idle["bwrap"] if r["plugins"] == row["plugins"]), bw) if row else None
        if row and ref:
            goal(f"PSS per idle plugin, {label(name)} ({row['plugins']} idle)",
                 row["host_kb"] / row["plugins"] / 1024, ref["host_kb"] / ref["plugins"] / 1024,
                 GOALS["pss"], "MiB")
    out += goal_rows + [""]

    # 1. bursts
    out += ["### 1. Bursts: N launches of `/bin/true` started at once", "",
            f"Wall time from the first start to the last exit, {args.rounds} rounds.", "",
            "| launches at once | variant | median | p10 … p90 | ratio to bubblewrap |",
            "|---|---|---|---|---|"]
    for size in sizes:
        ref = med([x["wall_ms"] for x in b["bwrap"][str(size)]])
        for name in b:
            walls = [x["wall_ms"] for x in b[name][str(size)]]
            out.append(f"| {size} | {label(name)} | {med(walls):.1f} ms | "
                       f"{percentile(walls, 0.1):.1f} … {percentile(walls, 0.9):.1f} ms | "
                       f"{med(walls) / ref:.2f}× |")
    out += [""]

    # 2. CPU
    out += ["### 2. CPU per launch (user + sys, ms)", "",
            "Means over the rounds of each burst's CPU divided by its launches (means, not",
            "medians: the service's figures come from /proc in clock ticks of 10 ms, whose",
            "rounding averages out over the rounds but not in a median). *waited for*:",
            "the rusage of the processes this script started and of what they waited for;",
            "*orphans*: the processes this script reaped as their subreaper "
            "(PR_SET_CHILD_SUBREAPER) because nothing below it waited for them;",
            "*service*: the service's utime + stime + cutime + cstime (/proc/<pid>/stat, fields",
            "14-17) from idle to idle again (its pool refilled), with its live descendants' but",
            "the sandboxes' inits (counted among the orphans when they end, set-up included),",
            "less its idle rate over 30 s, the pools' `max_idle`, renewals included ("
            + ", ".join(f"depth {d}: {res['idle_rate'][str(d)] * 1e3:.2f} ms/s"
                        for d in depths) + ").",
            "",
            "*RUSAGE_CHILDREN* is getrusage(2)'s delta over the burst, after the reaping: it",
            "holds *waited for* and *orphans* (a check that nothing was missed). With one launch",
            "per burst the service's column is a tick or none per round, less an idle rate",
            "(the pools' renewals) of the same size at depth 16: read the bursts of 4 and more.",
            "",
            "| launches at once | variant | waited for | orphans | service | total | "
            "RUSAGE_CHILDREN | bubblewrap's total | ratio |",
            "|---|---|---|---|---|---|---|---|---|"]
    for size in sizes:
        ref = mean(b["bwrap"][str(size)])
        for name in b:
            xs = b[name][str(size)]
            tot = mean(xs)
            out.append(f"| {size} | {label(name)} | {mean(xs, lambda x: x['waited_ms']):.2f} | "
                       f"{mean(xs, lambda x: x['orphan_ms']):.2f} | "
                       f"{mean(xs, lambda x: x['service_ms']):.2f} | {tot:.2f} | "
                       f"{mean(xs, lambda x: x['children_ms']):.2f} | {ref:.2f} | "
                       f"{tot / ref:.2f}× |")
    out += ["", f"Orphans reaped during the bursts: {res['orphans_after_bursts']} "
            f"(of {sum(len(v) * int(k) for name in b for k, v in b[name].items())} launches).", ""]

    # 3. memory
    out += ["### 3. Memory per idle plugin (`/bin/sleep 3600`)", "",
            "PSS (smaps_rollup) of the host's processes, the plugins excluded, divided by the",
            "idle plugins. bubblewrap: its processes; one-shot: `run`, stage 1 and the sandbox's",
            "init (every process below this script, found through /proc, but the plugins and the",
            "services); service: the service and all its descendants but the plugins, the",
            "prepared sandboxes of its pool included (at 0 plugins, the pool alone); the",
            "clients `sandbox-host-launch`, one per running plugin (a gateway keeps it as the",
            "plugin's process), in their own column. *MemAvailable drop* is /proc/meminfo's fall",
            "per plugin since the ladder started (kernel memory too: namespaces, page tables).",
            "",
            "*Above 0 plugins* is (host PSS − host PSS at 0 plugins) / plugins: the service's",
            "pool and its own process taken off.",
            "",
            "*Host CPU while idle*: the host's processes' CPU (utime + stime + cutime + cstime,",
            "the plugins excluded) over a few seconds while the plugins sleep, in ms per second.",
            "It is the launch watch (`host/src/limits/launch_warden.cpp`, one per `run` and one",
            "thread in the service): it recounts each launch's scratch usage at least every",
            "250 ms (`kRecount`), reading the plugin's `/proc/<pid>/maps`, `fd` and `fdinfo`.",
            "",
            "| variant | idle plugins | host PSS | per plugin | above 0 plugins | host processes |"
            " + clients, per plugin | MemAvailable drop per plugin | host CPU while idle |"
            " bubblewrap's per plugin | ratio |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    bw_by_n = {r["plugins"]: r for r in idle["bwrap"] if r["plugins"]}
    for name in ("bwrap", "oneshot", "svc-d1"):
        base = next((r["host_kb"] for r in idle[name] if r["target"] == 0), 0)
        for r in idle[name]:
            n = r["plugins"]
            per = r["host_kb"] / n / 1024 if n else float("nan")
            ref = bw_by_n.get(n)
            refper = ref["host_kb"] / n / 1024 if ref else float("nan")
            clients = ((r["host_kb"] + r["client_kb"]) / n / 1024) if n and r["client_procs"] \
                else None
            drop = r.get("mem_drop_kb")
            out.append(
                f"| {label(name)} | {n} | {r['host_kb'] / 1024:.1f} MiB | "
                + (f"{per:.2f} MiB | {(r['host_kb'] - base) / n / 1024:.2f} MiB" if n else "– | –")
                + f" | {r['host_procs']}"
                + (f" ({r['host_procs'] / n:.2f} per plugin)" if n else "") + " | "
                + (f"{clients:.2f} MiB" if clients is not None else "–") + " | "
                + (f"{drop / n / 1024:.2f} MiB" if drop is not None and n >= 100 else "–") + " | "
                + (f"{r['idle_cpu_ms_s']:.1f} ms/s" if "idle_cpu_ms_s" in r else "–") + " | "
                + (f"{refper:.2f} MiB | {per / refper:.2f}×" if n and ref else "– | –") + " |")
    out += ["", "Where the PSS goes, at the largest count of each variant (processes, PSS each):",
            ""]
    for name in ("bwrap", "oneshot", "svc-d1"):
        r = per_plugin(idle[name])
        if not r:
            continue
        parts = sorted(r["by_comm"].items(), key=lambda kv: -kv[1][1])
        out.append(f"- {label(name)}, {r['plugins']} plugins"
                   + (f" (the service has {r['service_threads']} threads)"
                      if r["service_threads"] else "") + ":")
        out += [f"  - `{k}`: {c} × {s / c / 1024:.2f} MiB" for k, (c, s) in parts]
        out.append(f"  - the plugins themselves: "
                   f"{r['plugin_kb'] / max(1, r['plugins']) / 1024:.2f} MiB each"
                   + (f"; {r['unread']} processes unreadable" if r["unread"] else "")
                   + (f"; {r['zombies']} zombies not counted" if r.get("zombies") else ""))
    out += ["", "**What bounded the counts:** " + (
        "; ".join(f"{label(k)}: {v}" for k, v in res["limit_note"].items())
        if res["limit_note"] else f"nothing: every variant reached {max(res['counts'])}")
        + ".", "", "Bounds that were not reached:", "",
        f"- the service's own, `[launcher] max_launches`: 256 by default (its maximum,"
        f" {MAX_LAUNCHES}, was set here); beyond it a launch is refused (`launcher-busy`);",
        f"- RLIMIT_NPROC of the user: {res['limits']['nproc'][0]}; RLIMIT_NOFILE: "
        f"{res['limits']['nofile'][0]} (setpriv keeps its caller's limits);",
        f"- the kernel's: pid_max {Path('/proc/sys/kernel/pid_max').read_text().strip()},"
        f" user.max_user_namespaces {Path('/proc/sys/user/max_user_namespaces').read_text().strip()},"
        f" user.max_net_namespaces {Path('/proc/sys/user/max_net_namespaces').read_text().strip()};"
        f" MemAvailable {mem_available_kb() // 1024} MiB now.", ""]
    for name in ("bwrap", "oneshot", "svc-d1"):
        starts = [f"{r['plugins']} in {r['start_s']:.1f} s" for r in idle[name] if "start_s" in r]
        out.append(f"- {label(name)}: started (cumulative ladder) " + ", ".join(starts) + ".")
    out += [""]

    # 4. latency
    out += ["### 4. Launch latency while N plugins of the service sleep", "",
            f"Paced launches of `/bin/true` ({args.pause_ms} ms pause before each), through the",
            "depth-1 service while N of its plugins sleep, beside bubblewrap and the one-shot "
            "`run` in the same rounds.", "",
            "| N sleeping | rounds | service median | p90 | one-shot median | bubblewrap median | p90 |"
            " service / bubblewrap | one-shot / bubblewrap |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in idle["svc-d1"]:
        lat = r.get("latency")
        if not lat:
            continue
        s, o, w = lat["svc-d1"], lat["oneshot"], lat["bwrap"]
        out.append(f"| {r['plugins']} | {len(s)} | {med(s):.2f} ms | {percentile(s, 0.9):.2f} ms "
                   f"| {med(o):.2f} ms | {med(w):.2f} ms | {percentile(w, 0.9):.2f} ms | "
                   f"{med(s) / med(w):.2f}× (goal ≤ {GOALS['service_paced']}) | "
                   f"{med(o) / med(w):.2f}× (goal ≤ {GOALS['oneshot_paced']}) |")
    out += ["", f"Back-to-back, nothing idle: {args.b2b_rounds} rounds of {args.series} launches "
            "one after the other per variant (each timed, the services idle before each series):",
            "", "| variant | median | p10 … p90 | ratio to bubblewrap |", "|---|---|---|---|"]
    refb = med(res["b2b"]["bwrap"])
    for name, xs in res["b2b"].items():
        out.append(f"| {label(name)} | {med(xs):.2f} ms | {percentile(xs, 0.1):.2f} … "
                   f"{percentile(xs, 0.9):.2f} ms | {med(xs) / refb:.2f}× |")
    out += ["", "### Checked before timing", "",
            "As the same user, the one-shot `run` and the client through each service: "
            "`/bin/true` exits 0, and a shell inside sees:", "", "```", *res["checks"], "```", "",
            "The services' audit logs had " + ", ".join(f"{n} records (depth {d})"
                                                         for d, n in res["audit"].items()) + ".",
            "", "### Exactly what ran", "",
            f"`{BACKEND_ENV}=namespaces` in every environment; `<tmp>` is a world-readable copy "
            "of the build (sandbox-host, the client, the broker, the modules)"
            + (", with its debug info." if args.unstripped else
               ", stripped (`strip --strip-unneeded`) as the Debian package installs them."),
            "", "```sh",
            command, "```", "", "The variants, each service's config and the one-shot's:", "",
            "```"]
    for name, argv in res["commands"].items():
        line = f"{name}: {shlex.join(argv)}"
        while len(line) > 100:
            cut = line.rfind(" ", 0, 100)
            out.append(line[:cut] + " \\")
            line = "  " + line[cut + 1:]
        out.append(line)
    out += ["```", "", "```toml", service_config("<work>", "N").rstrip("\n"), "```", "",
            "```toml", oneshot_config("<work>").rstrip("\n"), "```", ""]
    out += machine_lines(env_info)
    out += [f"- CPU time used by anything but this run and the kernel's threads while it ran:"
            f" {foreign:.1%} of the machine",
            f"- the kernel's threads (kworkers, which tear down the sandboxes' namespaces,"
            f" bubblewrap's too) used {kernel:.1f} s of CPU meanwhile, in no row above",
            f"- load average before / after: {load_before} / {load_after}",
            f"- source: {revision}", f"- build: `{display_path(args.build)}`"]
    out += [f"- {v}" for v in versions]
    out += ["", END]
    text = "\n".join(out) + "\n"
    text = text.replace(str(Path(args.tmp_name)), "<tmp>")
    return text
