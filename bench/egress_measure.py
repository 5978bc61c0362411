"""The measurements of bench/egress_report.py: bulk throughput, connect + GET latency,
TLS-terminated requests/s and idle tunnels' memory, each run through egress_bench, and the
wait for a quiet machine and the CPU others used meanwhile.
"""

import json
import os
import subprocess
import time
from pathlib import Path

from bench_common import cpu_jiffies, die, load_average, output_of, percentile
from egress_peers import (IDLE_BATCHES, IDLE_NAME, IDLE_PORT, log, NAME, NOFILE, prlimit,
                          SMALL_BYTES, sockstat_tcp_mem_bytes)


# ---- the measurements ------------------------------------------------------------------------

DESIGNS = ("direct", "tinyproxy", "sandbox-host")
# nginx as a TLS-terminating reverse proxy is the peer for TLS termination (tinyproxy
# cannot terminate TLS).
TLS_DESIGNS = ("direct", "nginx-proxy", "sandbox-host")
LATENCY_ROUTES = [("direct", "direct"), ("tinyproxy", "forward"), ("tinyproxy", "connect"),
                  ("sandbox-host", "forward"), ("sandbox-host", "connect")]


def sample_load(loads, phase):
    loads.append((phase, load_average()))


def bulk_phase(world, args, loads):
    bulk_bytes = args.bulk_mib << 20
    out = {d: [] for d in DESIGNS}

    def once(design):
        via = "direct" if design == "direct" else "connect"
        cpu = {name: s.cpu_s() for name, s in world.servers.items()}
        r = world.run(["bulk", *world.route(design, via), "--path", "/bulk", "--expect",
                       str(bulk_bytes)])
        r["cpu_s"] = {name: s.cpu_s() - cpu[name] for name, s in world.servers.items()}
        return r

    sample_load(loads, "bulk")
    for design in DESIGNS:  # untimed: the file in the page cache, the paths warm
        once(design)
    for _ in range(args.bulk_rounds):
        for design in DESIGNS:
            out[design].append(once(design))
            log(f"bulk {design}: {bulk_bytes / out[design][-1]['seconds'] / 1e9:.2f} GB/s")
    return out


def latency_phase(world, args, loads):
    out = {route: [] for route in LATENCY_ROUTES}
    per_round = -(-args.requests // args.latency_rounds)
    sample_load(loads, "latency")
    for _ in range(args.latency_rounds):
        for design, via in LATENCY_ROUTES:
            cpu = {name: s.cpu_s() for name, s in world.servers.items()}
            r = world.run(["latency", *world.route(design, via), "--path", "/small", "--expect",
                           str(SMALL_BYTES), "--requests", str(per_round), "--warmup",
                           str(args.warmup)])
            r["cpu_s"] = {name: s.cpu_s() - cpu[name] for name, s in world.servers.items()}
            out[(design, via)].append(r)
    for route, runs in out.items():
        samples = [x for r in runs for x in r["samples_us"]][:args.requests]
        log(f"latency {route}: p50 {percentile(samples, 0.5):.0f} µs, "
            f"p99 {percentile(samples, 0.99):.0f} µs")
    return out


def tls_phase(world, args, loads):
    out = {}
    sample_load(loads, "tls")
    for _ in range(args.tls_rounds):
        for connections in args.tls_connections:
            for design in TLS_DESIGNS:
                via = "connect" if design == "sandbox-host" else "direct"
                cpu = {name: s.cpu_s() for name, s in world.servers.items()}
                r = world.run(["tls", *world.route(design, via, 443), "--sni", NAME, "--ca",
                               str(world.tmp / ("proxy-ca.pem" if design == "sandbox-host" else
                                                "test-ca.pem")),
                               "--path", "/small", "--expect", str(SMALL_BYTES),
                               "--connections", str(connections), "--seconds",
                               str(args.tls_seconds)],
                              timeout=args.tls_seconds + 120)
                r["cpu_s"] = {name: s.cpu_s() - cpu[name] for name, s in world.servers.items()}
                if r["failed_connections"]:
                    die(f"TLS {design} x{connections}: {r['failed_connections']} connections "
                        f"failed: {r['first_error']}")
                out.setdefault((design, connections), []).append(r)
                log(f"tls {design} x{connections}: {r['requests_per_s']:,.0f} requests/s")
    return out


def idle_phase(world, args, name, start):
    """A fresh proxy; its memory before, then after each of IDLE_BATCHES batches of idle
    tunnels (each batch one egress_bench idle process holding its tunnels), and after they
    closed. The tunnels end at one egress_bench hold process."""
    start()
    server = world.servers[name]
    time.sleep(1)
    before = server.status()
    # Two descriptors per tunnel in the proxy, and a margin for the ones it opens meanwhile.
    fit = (NOFILE - before["fds"] - 32) // 2
    count = min(args.tunnels, fit // 100 * 100)
    tcp_before = sockstat_tcp_mem_bytes()
    target = (f"{IDLE_NAME}:{IDLE_PORT}" if name == "sandbox-host"
              else f"{world.address}:{IDLE_PORT}")
    port = world.sandbox_port if name == "sandbox-host" else world.tinyproxy_port

    def spawn(argv):
        return subprocess.Popen(prlimit() + [str(world.bench)] + argv, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def line_of(process, what):
        text = process.stdout.readline()
        if not text:
            process.kill()
            die(f"egress_bench {what} printed nothing: {process.stderr.read()[-2000:]}")
        return json.loads(text)

    hold = spawn(["hold", "--listen", f"{world.address}:{IDLE_PORT}"])
    line_of(hold, "hold")
    clients, steps = [], []
    sizes = [count // IDLE_BATCHES + (1 if i < count % IDLE_BATCHES else 0)
             for i in range(IDLE_BATCHES)]
    opened_total, failed, first_error, opening_s = 0, 0, "", 0.0
    held = None
    for size in sizes:
        client = spawn(["idle", "--connect", f"127.0.0.1:{port}", "--target", target,
                        "--count", str(size)])
        clients.append(client)
        opened = line_of(client, "idle")
        opened_total += opened["opened"]
        failed += opened["failed"]
        first_error = first_error or opened["first_error"]
        opening_s += opened["opening_s"]
        time.sleep(2)  # the relay has taken every tunnel in; nothing moves
        cpu0 = server.cpu_s()
        time.sleep(3)
        held = server.status()
        held["idle_cpu_s_per_s"] = (server.cpu_s() - cpu0) / 3
        hold.stdin.write("\n")
        hold.stdin.flush()
        held["accepted"] = line_of(hold, "hold")["accepted"]
        held["tunnels"] = opened_total
        steps.append(held)
        log(f"idle {name}: {opened_total:,} tunnels, VmRSS {held['VmRSS'] / 1e6:.1f} MB, "
            f"VmHWM {held['VmHWM'] / 1e6:.1f} MB, {held['Threads']} threads")
        if opened["failed"]:
            break
    tcp_held = sockstat_tcp_mem_bytes()
    closed_meanwhile = 0
    for client in clients:
        client.stdin.write("\n")
        client.stdin.flush()
        closed_meanwhile += line_of(client, "idle").get("closed_meanwhile", 0)
        client.wait(timeout=60)
    hold.stdin.close()
    line_of(hold, "hold")
    hold.wait(timeout=60)
    time.sleep(2)
    after = server.status()
    world.stop(name)
    return {"before": before, "held": held, "steps": steps, "after": after, "count": count,
            "fit": fit, "opened": {"opened": opened_total, "failed": failed,
                                   "first_error": first_error, "opening_s": opening_s},
            "closed": {"closed_meanwhile": closed_meanwhile},
            "tcp_mem_before": tcp_before, "tcp_mem_held": tcp_held}


def check(world):
    """Before anything is timed: every route answers, TLS through the proxy is terminated
    with the proxy's CA and verifies, and a tunnel to the idle server opens."""
    for design, via in LATENCY_ROUTES:
        world.run(["latency", *world.route(design, via), "--path", "/small", "--expect",
                   str(SMALL_BYTES), "--requests", "3", "--warmup", "0"], timeout=60)
    for design in DESIGNS:
        world.run(["bulk", *world.route(design, "direct" if design == "direct" else "connect"),
                   "--path", "/small", "--expect", str(SMALL_BYTES)], timeout=60)
    for design, ca in (("direct", "test-ca.pem"), ("nginx-proxy", "test-ca.pem"),
                       ("sandbox-host", "proxy-ca.pem")):
        r = world.run(["tls", *world.route(design, "connect" if design == "sandbox-host"
                                           else "direct", 443),
                       "--sni", NAME, "--ca", str(world.tmp / ca), "--path", "/small",
                       "--expect", str(SMALL_BYTES), "--connections", "1", "--seconds", "0.3"],
                      timeout=60)
        if r["failed_connections"] or r["requests"] == 0:
            die(f"TLS check {design}: {json.dumps(r)}")
    # The terminated TLS must not verify against nginx's test CA: it is the proxy's leaf.
    bad = subprocess.run(prlimit() + [str(world.bench), "tls",
                                      *world.route("sandbox-host", "connect", 443), "--sni", NAME,
                                      "--ca", str(world.tmp / "test-ca.pem"), "--path", "/small",
                                      "--expect", str(SMALL_BYTES), "--connections", "1",
                                      "--seconds", "0.2"], capture_output=True, text=True)
    if bad.returncode == 0 and json.loads(bad.stdout.splitlines()[-1])["failed_connections"] == 0:
        die("TLS through sandbox-host verified against nginx's CA: it was not terminated")


def wait_for_quiet(args):
    """Waits until the 1-minute load average is below args.quiet_load; returns the waits."""
    waited, start = [], time.monotonic()
    while True:
        one = float(Path("/proc/loadavg").read_text().split()[0])
        waited.append(one)
        if one < args.quiet_load:
            return waited, True, time.monotonic() - start
        if time.monotonic() - start + args.wait_every > args.wait_max:
            return waited, False, time.monotonic() - start
        log(f"load average {one:.2f} >= {args.quiet_load}; waiting {args.wait_every:.0f} s")
        time.sleep(args.wait_every)


def version_lines(world):
    nginx = subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip()
    tiny = output_of(["tinyproxy", "-v"])
    pkgs = []
    for package in ("nginx", "tinyproxy-bin", "openssl"):
        v = output_of(["dpkg-query", "-W", "-f=${Version}", package])
        if v:
            pkgs.append(f"{package} {v}")
    return [f"peers: {nginx.replace('nginx version: ', '')}, {tiny} (Debian packages: "
            f"{', '.join(pkgs)})",
            f"compiler: {output_of(['c++', '--version']).splitlines()[0]}"]


class ForeignShare:
    """How much CPU others used while the run went on: all CPUs' busy time minus this run's
    (the bench's reaped children, and the servers' CPU as /proc shows it while they live), as
    a share of the machine."""

    def __init__(self, world):
        self.world = world

    def live_cpu(self):
        return sum(s.cpu_s() for s in self.world.servers.values())

    def __enter__(self):
        self.start = time.monotonic()
        self.jiffies = cpu_jiffies()[0]
        self.children = os.times()
        self.live = self.live_cpu()
        return self

    def __exit__(self, *exc):
        wall = time.monotonic() - self.start
        busy = (cpu_jiffies()[0] - self.jiffies) / os.sysconf("SC_CLK_TCK")
        after = os.times()
        ours = (after.children_user - self.children.children_user + after.children_system
                - self.children.children_system) + self.live_cpu() - self.live
        self.share = max(0.0, busy - ours) / (wall * (os.cpu_count() or 1))
        return False
