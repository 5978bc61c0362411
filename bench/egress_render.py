"""The egress-bench section of docs/benchmarks.md that bench/egress_report.py writes: its
tables, verdicts against the targets, and how to read them.
"""

import os
import statistics

from bench_common import display_path, machine_lines, percentile
from egress_peers import BUILD_TARGETS, IDLE_BATCHES, IDLE_PORT, NAME, NOFILE, SMALL_BYTES
from egress_measure import DESIGNS, LATENCY_ROUTES, TLS_DESIGNS, version_lines


BEGIN = "<!-- egress-bench:begin -->"
END = "<!-- egress-bench:end -->"


TARGET_RATIO_BULK = 0.8
TARGET_ADDED_P50_MS = 0.10
TARGET_RATIO_TLS = 0.7
TARGET_TUNNEL_MB = 200
PRIOR = ("measured here before the project existed (issue 6): direct ~2.4 GB/s, squid 0.33x, "
         "tinyproxy 0.12x; added p50 latency tinyproxy +0.22 ms, squid +0.40 ms")


# ---- the section -----------------------------------------------------------------------------

def gbs(bytes_, seconds):
    return bytes_ / seconds / 1e9


def ms(us):
    return f"{us / 1e3:.3f}"


def mb(b):
    return f"{b / 1e6:,.1f}"


def met(ok):
    return "met" if ok else "**missed**"


def bold_met(ok):
    return "**met**" if ok else "**missed**"


def render(results, env_info, world, args, revision, ran, foreign, quiet):
    bulk, latency, tls, idle = (results[k] for k in ("bulk", "latency", "tls", "idle"))
    bulk_bytes = args.bulk_mib << 20
    out = [BEGIN, "",
           "## The egress proxy: CONNECT throughput, connect + GET latency, TLS-terminated "
           "requests/s and 10,000 idle tunnels, against nginx, beside tinyproxy",
           "",
           "How much does `sandbox-host egress` cost a client on this host? One run of "
           "`bench/egress_report.py` on loopback: nginx",
           f"is the upstream (its own address {world.address}, ports 80 and 443, one worker, "
           "`sendfile on`), reached *direct* (no",
           "proxy), through **tinyproxy**, and through **sandbox-host** (`sandbox-host egress "
           "--config <tmp>/egress.toml`, the real",
           "binary of this build). The client is `bench/egress_bench.cpp` in every case "
           "(the same code, only the route differs). Targets",
           f"from issue 6; for reference, {PRIOR}.",
           ""]

    # Bulk.
    med = {d: statistics.median(gbs(bulk_bytes, r["seconds"]) for r in bulk[d]) for d in DESIGNS}
    out += [f"### 1. Bulk throughput through a CONNECT tunnel ({args.bulk_mib:,} MiB)", "",
            f"One GET of a {args.bulk_mib:,} MiB file ({bulk_bytes:,} bytes, not sparse) on a "
            "new connection, timed from the request to the",
            "last byte; through a proxy the request goes inside a CONNECT tunnel opened before "
            "the clock starts. The client reads",
            "with `recv` into a 1 MiB buffer. GB = 10^9 bytes. "
            f"{args.bulk_rounds} transfers per design, interleaved (direct, tinyproxy, "
            "sandbox-host, then again), after one untimed each; the",
            "table gives the median and every transfer. *CPU / GiB* is the CPU time (user + "
            "system, all threads, from `/proc/<pid>/stat`) of the proxy and of nginx per GiB "
            "moved.",
            "",
            "| route | GB/s (median) | each transfer, GB/s | vs direct | proxy CPU / GiB | "
            f"nginx CPU / GiB | target ≥ {TARGET_RATIO_BULK}× direct |",
            "|---|---|---|---|---|---|---|"]
    for d in DESIGNS:
        gib = bulk_bytes / (1 << 30)
        proxy_cpu = statistics.median(r["cpu_s"].get(d, 0) for r in bulk[d]) / gib
        nginx_cpu = statistics.median(r["cpu_s"]["nginx"] for r in bulk[d]) / gib
        ratio = med[d] / med["direct"]
        out.append(f"| {d} | **{med[d]:.2f}** | "
                   + ", ".join(f"{gbs(bulk_bytes, r['seconds']):.2f}" for r in bulk[d])
                   + f" | {ratio:.2f}× | "
                   + ("–" if d == "direct" else f"{proxy_cpu:.2f} s") + f" | {nginx_cpu:.2f} s | "
                   + ("–" if d == "direct" else met(ratio >= TARGET_RATIO_BULK)) + " |")

    # Latency.
    samples = {route: [x for r in runs for x in r["samples_us"]][:args.requests]
               for route, runs in latency.items()}
    p50 = {route: percentile(s, 0.5) for route, s in samples.items()}
    direct_p50 = p50[("direct", "direct")]
    per_round = -(-args.requests // args.latency_rounds)
    out += ["", "### 2. Connect + small GET latency", "",
            f"{args.requests:,} requests per route, each on a new TCP connection, one after "
            f"the other ({args.latency_rounds} rounds of {per_round:,} with the routes "
            f"interleaved, {args.warmup} untimed",
            f"requests before each round); each timed from `socket()` to the last byte of the "
            f"{SMALL_BYTES:,}-byte body (`Connection: close`). *forward*: an",
            "absolute-form `GET http://…` to the proxy; *CONNECT*: `CONNECT`, the proxy's "
            "`200`, then the GET inside the tunnel, all in",
            "the time. sandbox-host is asked for its name `bench.test` (its `[egress] resolve` "
            "maps it to nginx's address, no DNS), tinyproxy",
            "for the IP literal (no DNS either). *added* is the route's p50 minus direct's.",
            "",
            "| route | p50 | p99 | mean | max | added p50 vs direct | target ≤ "
            f"+{TARGET_ADDED_P50_MS:.2f} ms |",
            "|---|---|---|---|---|---|---|"]
    for route in LATENCY_ROUTES:
        s = samples[route]
        design, via = route
        label = "direct" if design == "direct" else \
            f"{design}, {'forward' if via == 'forward' else 'CONNECT'}"
        added = p50[route] - direct_p50
        out.append(f"| {label} | {ms(p50[route])} ms | {ms(percentile(s, 0.99))} ms | "
                   f"{ms(statistics.mean(s))} ms | {ms(max(s))} ms | "
                   + ("–" if design == "direct" else f"{added / 1e3:+.3f} ms") + " | "
                   + ("–" if design == "direct" else met(added / 1e3 <= TARGET_ADDED_P50_MS))
                   + " |")

    # TLS.
    out += ["", "### 3. TLS-terminated requests/s", "",
            f"Keep-alive HTTPS clients, each a thread with one TLS connection, sending GETs "
            f"of the {SMALL_BYTES:,}-byte file back to back for {args.tls_seconds:g} s",
            "after every connection has finished its handshake and one untimed request. "
            f"*direct*: TLS to nginx ({NAME}:443, verified against the",
            f"test CA). *sandbox-host*: `CONNECT {NAME}:443`, an inject host, so the proxy "
            "terminates TLS with a leaf of its own CA (the client",
            "verifies against that CA, `<tmp>/proxy-ca.pem`, the `ca.pem` sandbox-host wrote "
            "in its egress directory), reads each request, sets",
            "`Authorization` from its token, and re-originates it over its own keep-alive TLS "
            "connection to nginx, verified against the test CA",
            f"(`upstream_ca_bundle`). {args.tls_rounds} runs per row, interleaved; the median "
            "requests/s and every run. Latency: p50 of every request of the median run.",
            "",
            "*nginx as TLS proxy*: a second nginx (one worker, a process of its own) "
            f"terminating the client's TLS with the test CA's certificate for {NAME}, setting "
            "`Authorization` and re-originating each request over keep-alive TLS (`keepalive "
            "64`, verified, sessions reused) to the same upstream nginx: what the field's "
            "common tool does with the same work.",
            "",
            "| connections | direct requests/s | nginx as TLS proxy | sandbox-host | each run, "
            "direct / nginx proxy / sandbox-host | vs direct, nginx proxy / sandbox-host | "
            f"p50 direct / nginx proxy / sandbox-host | target ≥ {TARGET_RATIO_TLS}× |",
            "|---|---|---|---|---|---|---|---|"]
    tls_ratios, tls_peer_ratios = {}, {}

    def median_run(runs):
        return sorted(runs, key=lambda r: r["requests_per_s"])[len(runs) // 2]

    for c in args.tls_connections:
        d, n, s = (tls[(design, c)] for design in TLS_DESIGNS)
        md, mn, msh = (statistics.median(r["requests_per_s"] for r in runs)
                       for runs in (d, n, s))
        tls_ratios[c], tls_peer_ratios[c] = msh / md, mn / md
        out.append(f"| {c} | {md:,.0f} | {mn:,.0f} | {msh:,.0f} | "
                   + " / ".join(", ".join(f"{r['requests_per_s']:,.0f}" for r in runs)
                                for runs in (d, n, s))
                   + f" | {mn / md:.2f}× / **{msh / md:.2f}×** | "
                   + " / ".join(ms(median_run(runs)["p50_us"]) for runs in (d, n, s))
                   + f" ms | {met(msh / md >= TARGET_RATIO_TLS)} |")
    any_tls = next(iter(tls.values()))[0]
    out += ["", f"Negotiated: {any_tls['protocol']}, {any_tls['cipher']} (client ↔ nginx and "
            "client ↔ proxy alike)."]

    # Memory.
    out += memory_section(idle, args)

    # Verdicts.
    sh_bulk = med["sandbox-host"] / med["direct"]
    lat_sh = {via: (p50[("sandbox-host", via)] - direct_p50) / 1e3
              for via in ("forward", "connect")}
    lat_tp = {via: (p50[("tinyproxy", via)] - direct_p50) / 1e3 for via in ("forward", "connect")}
    m = idle.get("sandbox-host")
    mem_ok, mem_text = memory_verdict(m, args) if m else (False, "not measured")
    out += ["", "### Targets", "",
            f"- throughput ≥ {TARGET_RATIO_BULK}× direct: "
            f"{bold_met(sh_bulk >= TARGET_RATIO_BULK)} "
            f"({sh_bulk:.2f}×; tinyproxy {med['tinyproxy'] / med['direct']:.2f}×)",
            f"- added p50 ≤ +{TARGET_ADDED_P50_MS:.2f} ms: forward "
            f"{bold_met(lat_sh['forward'] <= TARGET_ADDED_P50_MS)} ({lat_sh['forward']:+.3f} ms), "
            f"CONNECT {bold_met(lat_sh['connect'] <= TARGET_ADDED_P50_MS)} "
            f"({lat_sh['connect']:+.3f} ms); tinyproxy {lat_tp['forward']:+.3f} / "
            f"{lat_tp['connect']:+.3f} ms",
            f"- TLS-terminated ≥ {TARGET_RATIO_TLS}× direct: " + "; ".join(
                f"{c} connection{'s' if c != 1 else ''} {bold_met(r >= TARGET_RATIO_TLS)} "
                f"({r:.2f}×; nginx as TLS proxy {tls_peer_ratios[c]:.2f}×)"
                for c, r in tls_ratios.items()),
            f"- {args.tunnels:,} idle tunnels in ≤ {TARGET_TUNNEL_MB} MB: {bold_met(mem_ok)} "
            f"({mem_text})"]

    out += how_to_read(results, world, args, med, p50, tls_ratios, tls_peer_ratios)

    # What ran.
    out += ["", "### Exactly what ran", "",
            "As root, from the repository root; `<tmp>` is a fresh temporary directory "
            "(removed afterwards):", "", "```sh", ran, "```", "",
            "`<tmp>/egress.toml`, sandbox-host's whole config:", "", "```toml"]
    out += [line.replace(str(world.tmp), "<tmp>") for line in world.config_text.splitlines()]
    out += ["```", "",
            "The other `[egress]` keys are the defaults (`same_user = true`, `max_tunnels = "
            "20000`, `idle_timeout_s = 300`, …). nginx: `worker_processes 1; sendfile on; "
            "tcp_nodelay on; keepalive_requests 10000000; access_log off;`, TLSv1.2 and "
            "TLSv1.3 with an EC P-256 certificate of the test CA. nginx as TLS proxy: the "
            "same settings and certificate, `proxy_pass https://` to an `upstream` with "
            "`keepalive 64`, `proxy_http_version 1.1`, `proxy_ssl_verify on` against the test "
            "CA, `proxy_ssl_session_reuse on`, `proxy_set_header Authorization`. "
            "tinyproxy: `MaxClients "
            "20000`, `Timeout 600`, `DisableViaHeader Yes`, `LogLevel Error`, `ConnectPort` "
            f"80, 443 and {IDLE_PORT}. The per-measurement commands are "
            "`egress_bench bulk|latency|tls|idle|hold …` (their options in the file's header); "
            "`sandbox-host egress` executes the build's `libexec/sandbox-host/"
            "sandbox-host-broker`, where serve, ask and egress live, so that is the process "
            "measured; "
            "the raw JSON of the run is left in `/tmp/egress-bench-last.json`.", ""]
    out += machine_lines(env_info)
    loads = ", ".join(f"{phase} {value}" for phase, value in results["loads"])
    out.append(f"- load average (1, 5, 15 min) before the run: {results['load_before']}; at "
               f"the start of each phase: {loads}; after: {results['load_after']} (the run's own "
               "processes count in it: the TLS phase keeps both CPUs busy; the share of CPU "
               "used by others is on the next line)")
    waited, ok, wait_s = quiet
    out.append(f"- quiet-machine wait: the 1-minute load average was "
               + (f"below {args.quiet_load} after {wait_s / 60:.1f} min"
                  if ok else f"never below {args.quiet_load} within {args.wait_max / 60:.0f} "
                             f"min (last {waited[-1]:.2f}); the run went ahead anyway, so its "
                             "numbers carry others' load")
               + f"; CPU time used by anything but this run's processes during it: "
                 f"{foreign:.1%} of the machine")
    if revision:
        out.append(f"- source: {revision}")
    out.append(f"- build: RelWithDebInfo, `{display_path(args.build)}`")
    out += [f"- {v}" for v in version_lines(world)]
    command = (f"python3 bench/egress_report.py --build {display_path(args.build)} "
               f"--bulk-mib {args.bulk_mib} --bulk-rounds {args.bulk_rounds} "
               f"--requests {args.requests} --latency-rounds {args.latency_rounds} "
               f"--tls-connections {','.join(map(str, args.tls_connections))} "
               f"--tls-seconds {args.tls_seconds:g} --tls-rounds {args.tls_rounds} "
               f"--tunnels {args.tunnels}")
    out += ["", "### Reproduce", "",
            "As root (nginx binds ports 80 and 443 of a loopback address; prlimit), from the "
            "repository root; `scripts/setup.sh` installs nginx and tinyproxy:", "", "```sh",
            f"cmake -S . -B {display_path(args.build)} -DCMAKE_BUILD_TYPE=RelWithDebInfo "
            "-DSANDBOX_HOST_BENCH=ON -DSANDBOX_HOST_TESTS=OFF",
            f"cmake --build {display_path(args.build)} -j2 --target {BUILD_TARGETS}",
            command, "```", "", END]
    return "\n".join(out) + "\n"


def per_tunnel(m):
    return (m["held"]["VmRSS"] - m["before"]["VmRSS"]) / max(1, m["opened"]["opened"])


def extrapolated_hwm(m, tunnels):
    """VmHWM with `tunnels` open: measured when they all were, else the measured peak plus
    the measured cost per tunnel for the ones that did not fit."""
    missing = max(0, tunnels - m["opened"]["opened"])
    return m["held"]["VmHWM"] + per_tunnel(m) * missing


def memory_verdict(m, args):
    opened = m["opened"]["opened"]
    hwm = extrapolated_hwm(m, args.tunnels)
    ok = hwm <= TARGET_TUNNEL_MB * 1e6 and not m["opened"]["failed"]
    if opened >= args.tunnels:
        return ok, f"VmHWM {mb(hwm)} MB with {opened:,} open"
    return ok, (f"VmHWM {mb(m['held']['VmHWM'])} MB with {opened:,} open, the most this "
                f"machine's descriptor limit lets one process hold; {mb(hwm)} MB extrapolated "
                f"to {args.tunnels:,} at the measured {per_tunnel(m) / 1e3:.2f} kB per tunnel")


def memory_section(idle, args):
    out = ["", f"### 4. Memory with {args.tunnels:,} idle CONNECT tunnels", ""]
    capped = [n for n, m in idle.items() if m["count"] < args.tunnels]
    if capped:
        m = idle[capped[0]]
        out += [f"**This machine lets a process hold {NOFILE:,} descriptors at most** "
                f"(RLIMIT_NOFILE's hard limit here is {NOFILE:,}, and root in this container "
                "lacks CAP_SYS_RESOURCE, so `prlimit` cannot raise it: `prlimit: failed to set "
                "the NOFILE resource limit: Operation not permitted`). A proxy holds two "
                f"descriptors per tunnel, so {args.tunnels:,} tunnels need "
                f"{2 * args.tunnels:,} plus its own ({m['before']['fds']} at rest): they do "
                f"not fit. The tunnels were opened up to {m['count']:,} (the most that fits, "
                "rounded down to a hundred), in "
                f"{IDLE_BATCHES} batches, and the memory at {args.tunnels:,} is extrapolated "
                "from the measured cost per tunnel; the batches show that it is linear.", ""]
    out += [f"A fresh proxy process each. {IDLE_BATCHES} `egress_bench idle` processes, one "
            "after the other, open their share of the tunnels one at a time (`CONNECT` and "
            "the proxy's `200`) to",
            f"one `egress_bench hold` process on nginx's address (port {IDLE_PORT}), an idle "
            "TCP server that accepts and holds every connection and reads and sends nothing; "
            "the clients hold them without a byte.",
            "After each batch, 2 s later and then over 3 s, the proxy's `VmRSS`/`VmHWM`/"
            "`Threads` (`/proc/<pid>/status`), its open descriptors, and its CPU; *after close* "
            "is 2 s after every tunnel closed.",
            f"RLIMIT_NOFILE {NOFILE:,} for every process (`prlimit`). MB = 10^6 bytes. "
            "*kernel TCP memory* is `/proc/net/sockstat`'s TCP `mem`, the socket buffers of "
            "all TCP sockets of the host, in no process's RSS.",
            "",
            "| proxy | tunnels open | VmRSS | VmHWM | threads | descriptors | CPU while idle |",
            "|---|---|---|---|---|---|---|"]
    for name in ("sandbox-host", "tinyproxy"):
        m = idle.get(name)
        if not m:
            continue
        b = m["before"]
        out.append(f"| {name} | 0 (fresh) | {mb(b['VmRSS'])} MB | {mb(b['VmHWM'])} MB | "
                   f"{b['Threads']:,} | {b['fds']:,} | – |")
        for step in m["steps"]:
            out.append(f"| {name} | {step['tunnels']:,} | {mb(step['VmRSS'])} MB | "
                       f"{mb(step['VmHWM'])} MB | {step['Threads']:,} | {step['fds']:,} | "
                       f"{step['idle_cpu_s_per_s'] * 100:.1f}% of a CPU |")
        a = m["after"]
        out.append(f"| {name} | 0 (after close) | {mb(a['VmRSS'])} MB | {mb(a['VmHWM'])} MB | "
                   f"{a['Threads']:,} | {a['fds']:,} | – |")
    out += ["", f"| proxy | tunnels held | RSS per tunnel | VmHWM at {args.tunnels:,} "
            f"(measured or extrapolated) | kernel TCP memory, before → with them | "
            f"target ≤ {TARGET_TUNNEL_MB} MB |", "|---|---|---|---|---|---|"]
    for name in ("sandbox-host", "tinyproxy"):
        m = idle.get(name)
        if not m:
            continue
        opened = m["opened"]["opened"]
        ok, _ = memory_verdict(m, args)
        hwm = extrapolated_hwm(m, args.tunnels)
        measured = opened >= args.tunnels
        tcp = (f"{mb(m['tcp_mem_before'])} → {mb(m['tcp_mem_held'])} MB"
               if m["tcp_mem_held"] is not None else "–")
        out.append(f"| {name} | {opened:,} of {m['count']:,} | {per_tunnel(m) / 1e3:,.2f} kB | "
                   f"**{mb(hwm)} MB**{'' if measured else ' (extrapolated)'} | {tcp} | "
                   + (met(ok) if name == "sandbox-host" else "– (comparison)") + " |")
    for name in ("sandbox-host", "tinyproxy"):
        m = idle.get(name)
        if m and m["opened"]["failed"]:
            out.append(f"\n{name} could not hold {m['count']:,} tunnels: "
                       f"{m['opened']['opened']:,} opened, {m['opened']['failed']} failed "
                       f"(first: `{m['opened']['first_error']}`).")
        if m and m["closed"].get("closed_meanwhile"):
            out.append(f"\n{name}: {m['closed']['closed_meanwhile']:,} tunnels were closed "
                       "by the proxy while they were held.")
        if m and m["steps"] and m["steps"][-1]["accepted"] < m["opened"]["opened"]:
            out.append(f"\n{name}: the idle server accepted {m['steps'][-1]['accepted']:,} "
                       f"connections for {m['opened']['opened']:,} tunnels.")
    out += ["", "Opening them (one at a time, sequentially) took " + "; ".join(
        f"{n} {m['opened']['opening_s']:.1f} s "
        f"({m['opened']['opened'] / max(1e-9, m['opened']['opening_s']):,.0f} tunnels/s)"
        for n, m in idle.items()) + "."]
    return out


def how_to_read(results, world, args, med, p50, tls_ratios, tls_peer_ratios):
    bulk, latency, tls = results["bulk"], results["latency"], results["tls"]
    bulk_bytes = args.bulk_mib << 20
    gib = bulk_bytes / (1 << 30)
    out = ["", "### How to read it", ""]
    sh = statistics.median(r["cpu_s"]["sandbox-host"] for r in bulk["sandbox-host"]) / gib
    tp = statistics.median(r["cpu_s"]["tinyproxy"] for r in bulk["tinyproxy"]) / gib
    client = {d: statistics.median(r["client_user_s"] + r["client_sys_s"] for r in bulk[d]) / gib
              for d in DESIGNS}
    cpus = os.cpu_count() or 1
    together = {d: statistics.median(r["client_user_s"] + r["client_sys_s"] +
                                     sum(r["cpu_s"].values()) for r in bulk[d]) / gib
                for d in DESIGNS}
    out.append(
        f"- **Throughput.** Direct, two processes share the {cpus} CPUs: nginx (`sendfile`) "
        f"and the client ({client['direct']:.2f} s of CPU per GiB, mostly the kernel copying "
        "into its buffer). Through a proxy a third process moves every byte: sandbox-host's "
        f"relay thread `splice`s socket → pipe → socket ({sh:.2f} s of CPU per GiB), "
        f"tinyproxy `read`s and `write`s through a userspace buffer ({tp:.2f} s per GiB). On "
        f"loopback each byte is then handled by two TCP connections instead of one, and "
        f"with {cpus} CPUs the three processes contend for them, so the ratio to direct "
        "measures the proxy's CPU per byte as much as its design: client, nginx and proxy "
        f"together used {together['sandbox-host']:.2f} s of CPU per GiB through sandbox-host "
        f"(median), {together['direct']:.2f} s direct. On loopback the kernel charges "
        "a socket's receive processing to whichever process is running when it happens "
        "(often the sender, in its system call), so the split between the processes is "
        "approximate and their sum is not; the transfers through sandbox-host also vary "
        "more than the others, with where the scheduler puts the three processes.")
    lat_direct = p50[("direct", "direct")]
    sh_cpu = {via: sum(r["cpu_s"]["sandbox-host"] for r in latency[("sandbox-host", via)])
              / sum(r["requests"] + r["warmup"] for r in latency[("sandbox-host", via)]) * 1e6
              for via in ("forward", "connect")}
    tp_cpu = {via: sum(r["cpu_s"]["tinyproxy"] for r in latency[("tinyproxy", via)])
              / sum(r["requests"] + r["warmup"] for r in latency[("tinyproxy", via)]) * 1e6
              for via in ("forward", "connect")}
    out.append(
        f"- **Latency.** Direct is one TCP handshake to nginx and one request "
        f"({ms(lat_direct)} ms p50). Through a proxy it is two handshakes (client → proxy, "
        "proxy → nginx) in series, the proxy's reading and checking of the request, and for "
        "CONNECT one more round trip (the `200`) before the GET. The proxy's CPU per "
        f"request: sandbox-host {sh_cpu['forward']:.0f} µs forward, {sh_cpu['connect']:.0f} µs "
        f"CONNECT; tinyproxy {tp_cpu['forward']:.0f} / {tp_cpu['connect']:.0f} µs. "
        "sandbox-host accepts on one thread (`TCP_DEFER_ACCEPT`, so the request is there when "
        "it wakes), checks the peer's uid with one `sock_diag` lookup on a netlink socket it "
        "keeps, and hands the request to a kept session thread, which dials nginx; a "
        "CONNECT's sockets then move to the relay thread, which copies small reads and "
        "splices bulk ones.")
    ratios = ", ".join(f"{c} connection{'s' if c != 1 else ''} {r:.2f}× (nginx as TLS proxy "
                       f"{tls_peer_ratios[c]:.2f}×)" for c, r in tls_ratios.items())
    cpu_lines = []
    for c in args.tls_connections:
        s = tls[("sandbox-host", c)]
        reqs = sum(r["requests"] for r in s)
        n = tls[("nginx-proxy", c)]
        n_reqs = sum(r["requests"] for r in n)
        cpu_lines.append(
            f"{c} connection{'s' if c != 1 else ''}: sandbox-host "
            f"{sum(r['cpu_s']['sandbox-host'] for r in s) / max(1, reqs) * 1e6:.0f} µs "
            f"(upstream nginx {sum(r['cpu_s']['nginx'] for r in s) / max(1, reqs) * 1e6:.0f} "
            f"µs), nginx as TLS proxy "
            f"{sum(r['cpu_s']['nginx-proxy'] for r in n) / max(1, n_reqs) * 1e6:.0f} µs "
            f"(upstream nginx {sum(r['cpu_s']['nginx'] for r in n) / max(1, n_reqs) * 1e6:.0f} "
            "µs)")
    def per_request(runs, key):
        reqs = sum(r["requests"] + r["connections"] for r in runs)
        return sum(key(r) for r in runs) / max(1, reqs) * 1e6
    c = max(args.tls_connections)
    d, p = tls[("direct", c)], tls[("sandbox-host", c)]
    cost_d = (per_request(d, lambda r: r["client_cpu_s"]) +
              per_request(d, lambda r: r["cpu_s"]["nginx"]))
    cost_p = (per_request(p, lambda r: r["client_cpu_s"]) +
              per_request(p, lambda r: r["cpu_s"]["nginx"]) +
              per_request(p, lambda r: r["cpu_s"]["sandbox-host"]))
    bound = (f" All processes together, with {c} connections: client + nginx {cost_d:.0f} µs "
             f"of CPU per request direct, client + nginx + sandbox-host {cost_p:.0f} µs through "
             f"the proxy ({cost_p / cost_d:.1f}× as much, on the same {cpus} CPUs). The proxy "
             "repeats the TLS and HTTP work of both ends (a server to the client, a client to "
             "nginx), and every request crosses two more wake-ups (client → proxy → nginx and "
             "back), which is what one connection, bound by latency rather than CPU, shows.")
    out.append(
        f"- **TLS termination** ({ratios}). Each request through the proxy is decrypted from "
        "the client, parsed, given the token, encrypted to nginx, and the response decrypted, "
        "parsed and re-framed, and encrypted to the client: two TLS connections per request "
        "instead of one, on the same CPUs as the client and nginx. CPU per request "
        f"(untimed handshakes included): {'; '.join(cpu_lines)}." + bound)
    m = results["idle"].get("sandbox-host")
    if m:
        out.append(
            f"- **Idle tunnels.** sandbox-host hands a tunnel to its relay thread once the "
            "upstream answers: two sockets in one epoll set and a small record, no pipe unless "
            "bulk data moves and no thread of its own, so its RSS grows by "
            f"{per_tunnel(m) / 1e3:.2f}"
            " kB per tunnel. The sockets' buffers are the kernel's, not the proxy's RSS "
            "(last column).")
    t = results["idle"].get("tinyproxy")
    if t:
        out.append(
            f"- tinyproxy serves each connection with a thread of its own: "
            f"{t['held']['Threads']:,} threads with {t['opened']['opened']:,} tunnels open.")
    return out


# ---- main -------------------------------------------------------------------------------------
