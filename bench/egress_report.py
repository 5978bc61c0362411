#!/usr/bin/env python3
"""The egress proxy against nginx on loopback, straight (direct) and through tinyproxy and
`sandbox-host egress` (the real binary of the build), in ONE run: CONNECT-tunnel bulk
throughput of one large file, connect + small GET latency (a new connection per request,
one after the other), TLS-terminated keep-alive requests/s to an inject host against direct
TLS to the same nginx, and the proxies' memory with 10,000 idle CONNECT tunnels. Rewrites
the egress-bench section of docs/benchmarks.md.

Usage, as root, from the repository root after building egress_bench and sandbox-host:
    python3 bench/egress_report.py --build build-egE [--bulk-mib 1024] [--bulk-rounds 3]
        [--requests 2000] [--tls-connections 1,8] [--tls-seconds 10] [--tunnels 10000]

Builds nothing. Root is needed for nginx's ports 80 and 443 on a loopback address of its
own (127.A.B.2, from this process's id: the inject host's TLS is terminated on port 443
only) and for raising RLIMIT_NOFILE (prlimit) for the 10,000 tunnels. Everything listens on
loopback; nginx's workers and tinyproxy drop to nobody, sandbox-host and egress_bench stay
root (the proxy serves its own uid only, `same_user`, the default). Configs, certificates
(a test CA for nginx, made here with openssl), the served files and the logs live in a
temporary directory that is removed at the end (--keep keeps it).

Before timing it waits (every --wait-every s, up to --wait-max s) for /proc/loadavg's
1-minute value to fall below --quiet-load, then runs every measurement once. Only the text
between the egress-bench begin/end markers is rewritten; the section is appended when the
markers are missing.
"""

import argparse
import json
import os
import resource
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_common import (DOCS, REPO, cpu_jiffies, die, display_path, load_average, machine,
                          machine_lines, output_of, percentile, source_revision, write_section)

BEGIN = "<!-- egress-bench:begin -->"
END = "<!-- egress-bench:end -->"
BENCH = "egress_bench"
BUILD_TARGETS = "sandbox-host egress_bench"
NAME = "bench.test"          # the upstream's name (sandbox-host resolves it by [egress] resolve)
IDLE_NAME = "idle.bench.test"
IDLE_PORT = 7000             # the idle TCP server of egress_bench idle, on the upstream address
TOKEN = "egress-bench-token"
SMALL_BYTES = 1024
# RLIMIT_NOFILE for every process: the hard limit this process has. Raising it further
# needs CAP_SYS_RESOURCE, which root may lack in a container; then a proxy, with two
# descriptors per tunnel, holds fewer than 10,000 tunnels (the section says so).
NOFILE = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
WANT_NOFILE = 65536
IDLE_BATCHES = 4
TARGET_RATIO_BULK = 0.8
TARGET_ADDED_P50_MS = 0.10
TARGET_RATIO_TLS = 0.7
TARGET_TUNNEL_MB = 200
PRIOR = ("measured here before the project existed (issue 6): direct ~2.4 GB/s, squid 0.33x, "
         "tinyproxy 0.12x; added p50 latency tinyproxy +0.22 ms, squid +0.40 ms")


def log(message):
    print(f"egress_report: {message}", file=sys.stderr, flush=True)


# ---- the world: addresses, certificates, files, configs --------------------------------------

def upstream_address():
    pid = os.getpid()
    return f"127.{100 + pid % 100}.{(pid // 100) % 250 + 1}.2"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_checked(argv, **kwargs):
    r = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if r.returncode != 0:
        die(f"{shlex.join(argv)} exited {r.returncode}: {r.stderr.strip()[-2000:]}")
    return r.stdout


def make_certificates(tmp):
    """A test CA of nginx's own and one certificate for NAME, EC P-256."""
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run_checked(["openssl", "req", "-x509", *key, "-keyout", str(tmp / "test-ca.key"), "-out",
                 str(tmp / "test-ca.pem"), "-days", "2", "-subj", "/CN=egress bench test CA",
                 "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
                 "keyUsage=critical,keyCertSign"])
    run_checked(["openssl", "req", *key, "-keyout", str(tmp / "nginx.key"), "-out",
                 str(tmp / "nginx.csr"), "-subj", f"/CN={NAME}"])
    (tmp / "nginx.ext").write_text(f"subjectAltName=DNS:{NAME}\nextendedKeyUsage=serverAuth\n")
    run_checked(["openssl", "x509", "-req", "-in", str(tmp / "nginx.csr"), "-CA",
                 str(tmp / "test-ca.pem"), "-CAkey", str(tmp / "test-ca.key"),
                 "-CAcreateserial", "-out", str(tmp / "nginx.pem"), "-days", "2", "-extfile",
                 str(tmp / "nginx.ext")])


def make_files(www, bulk_bytes):
    """The small file and the bulk file (not sparse: 1 MiB of random bytes repeated)."""
    www.mkdir()
    (www / "small").write_bytes(os.urandom(SMALL_BYTES))
    block = os.urandom(1 << 20)
    with open(www / "bulk", "wb") as f:
        left = bulk_bytes
        while left > 0:
            f.write(block[:min(left, len(block))])
            left -= len(block)
    for path in (www, www / "small", www / "bulk"):
        path.chmod(0o755 if path.is_dir() else 0o644)


def nginx_config(tmp, address):
    temp = tmp / "nginx-temp"
    temp.mkdir()
    return f"""# egress bench: nginx as the upstream, on its own loopback address
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
worker_rlimit_nofile {min(NOFILE, 8192)};
events {{ worker_connections 4096; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 10000000;
    keepalive_timeout 300s;
    default_type application/octet-stream;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    server {{
        listen {address}:80;
        listen {address}:443 ssl;
        server_name {NAME};
        root {tmp}/www;
        ssl_certificate {tmp}/nginx.pem;
        ssl_certificate_key {tmp}/nginx.key;
        ssl_protocols TLSv1.2 TLSv1.3;
    }}
}}
"""


def nginx_proxy_config(tmp, address, port):
    """nginx as the other TLS-terminating proxy of the TLS phase, a process of its own: it
    terminates the client's TLS with the test CA's certificate, sets Authorization, and
    re-originates each request over keep-alive TLS to the upstream nginx, verified."""
    temp = tmp / "nginx-proxy-temp"
    temp.mkdir()
    return f"""# egress bench: nginx as a TLS-terminating reverse proxy in front of the upstream nginx
worker_processes 1;
daemon off;
pid {tmp}/nginx-proxy.pid;
error_log {tmp}/nginx-proxy-error.log warn;
worker_rlimit_nofile {min(NOFILE, 8192)};
events {{ worker_connections 4096; }}
http {{
    access_log off;
    tcp_nodelay on;
    keepalive_requests 10000000;
    keepalive_timeout 300s;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    upstream bench_upstream {{
        server {address}:443;
        keepalive 64;
    }}
    server {{
        listen 127.0.0.1:{port} ssl;
        server_name {NAME};
        ssl_certificate {tmp}/nginx.pem;
        ssl_certificate_key {tmp}/nginx.key;
        ssl_protocols TLSv1.2 TLSv1.3;
        location / {{
            proxy_pass https://bench_upstream;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host {NAME};
            proxy_set_header Authorization "token {TOKEN}";
            proxy_ssl_server_name on;
            proxy_ssl_name {NAME};
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate {tmp}/test-ca.pem;
            proxy_ssl_session_reuse on;
            proxy_redirect off;
        }}
    }}
}}
"""


def tinyproxy_config(tmp, port, idle_port):
    return f"""# egress bench: tinyproxy on loopback, CONNECT to 80, 443 and the idle server's port
User nobody
Group nogroup
Port {port}
Listen 127.0.0.1
Timeout 600
MaxClients 20000
LogFile "{tmp}/tinyproxy.log"
LogLevel Error
PidFile "{tmp}/tinyproxy.pid"
Allow 127.0.0.1
DisableViaHeader Yes
ConnectPort 80
ConnectPort 443
ConnectPort {idle_port}
"""


def sandbox_host_config(tmp, port, address):
    (tmp / "run").mkdir(exist_ok=True)
    token = tmp / "token.sh"
    token.write_text(f"#!/bin/sh\necho {TOKEN}\n")
    token.chmod(0o755)
    return f"""# egress bench: sandbox-host egress; {NAME} is the inject host (TLS terminated on 443)
[egress]
listen = "127.0.0.1:{port}"
socket = "{tmp}/egress.sock"
allow = ["{NAME}", "{IDLE_NAME}:{IDLE_PORT}"]
allow_addresses = ["{address}/32"]
inject = ["{NAME}"]
resolve = {{ "{NAME}" = ["{address}"], "{IDLE_NAME}" = ["{address}"] }}
token_command = ["{token}"]
upstream_ca_bundle = "{tmp}/test-ca.pem"
runtime_dir = "{tmp}/run"
"""


# ---- processes ------------------------------------------------------------------------------

def prlimit():
    return ["prlimit", f"--nofile={NOFILE}:{NOFILE}", "--"]


def wait_port(address, port, process, name, log_path, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            die(f"{name} exited {process.returncode} before it listened on {address}:{port}: "
                f"{Path(log_path).read_text().strip()[-1500:]}")
        try:
            with socket.create_connection((address, port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    die(f"{name} does not listen on {address}:{port} after {timeout:.0f} s")


class Server:
    def __init__(self, name, argv, log_path, address, port, env=None):
        self.name, self.argv, self.log_path = name, argv, log_path
        self.log = open(log_path, "w")
        self.process = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True, env=env)
        wait_port(address, port, self.process, name, log_path)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()

    def pids(self):
        """The server's process and its descendants (nginx's worker)."""
        children = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        out, todo = [], [self.process.pid]
        while todo:
            pid = todo.pop()
            out.append(pid)
            todo += children.get(pid, [])
        return out

    def cpu_s(self):
        """User + system CPU seconds of the server's processes (all threads), as now."""
        tick = os.sysconf("SC_CLK_TCK")
        total = 0
        for pid in self.pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])
        return total / tick

    def status(self):
        """VmRSS, VmHWM (bytes), Threads and open descriptors of the main process."""
        out = {}
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) * 1024
            elif key == "Threads":
                out[key] = int(value)
        out["fds"] = len(os.listdir(f"/proc/{self.process.pid}/fd"))
        return out


def sockstat_tcp_mem_bytes():
    """The kernel's TCP memory (pages of socket buffers), from /proc/net/sockstat."""
    for line in Path("/proc/net/sockstat").read_text().splitlines():
        if line.startswith("TCP:"):
            fields = line.split()
            return int(fields[fields.index("mem") + 1]) * os.sysconf("SC_PAGE_SIZE")
    return None


# ---- the load generator -----------------------------------------------------------------------

class World:
    def __init__(self, args, tmp):
        self.args, self.tmp = args, tmp
        self.bench = args.build / "bin" / BENCH
        self.exe = args.build / "bin" / "sandbox-host"
        self.address = upstream_address()
        self.tinyproxy_port = free_port()
        self.sandbox_port = free_port()
        self.nginx_proxy_port = free_port()
        self.servers = {}
        self.starts = 0

    def start_nginx(self):
        (self.tmp / "nginx.conf").write_text(nginx_config(self.tmp, self.address))
        self.servers["nginx"] = Server(
            "nginx", prlimit() + ["nginx", "-p", str(self.tmp), "-c", str(self.tmp / "nginx.conf"),
                                  "-e", str(self.tmp / "nginx-error.log")],
            self.tmp / "nginx.out", self.address, 80)

    def start_nginx_proxy(self):
        (self.tmp / "nginx-proxy.conf").write_text(
            nginx_proxy_config(self.tmp, self.address, self.nginx_proxy_port))
        self.servers["nginx-proxy"] = Server(
            "nginx (TLS proxy)",
            prlimit() + ["nginx", "-p", str(self.tmp), "-c", str(self.tmp / "nginx-proxy.conf"),
                         "-e", str(self.tmp / "nginx-proxy-error.log")],
            self.tmp / "nginx-proxy.out", "127.0.0.1", self.nginx_proxy_port)

    def start_tinyproxy(self):
        (self.tmp / "tinyproxy.conf").write_text(
            tinyproxy_config(self.tmp, self.tinyproxy_port, IDLE_PORT))
        (self.tmp / "tinyproxy.log").touch()
        shutil.chown(self.tmp / "tinyproxy.log", "nobody")
        self.servers["tinyproxy"] = Server(
            "tinyproxy", prlimit() + ["tinyproxy", "-d", "-c", str(self.tmp / "tinyproxy.conf")],
            self.tmp / "tinyproxy.out", "127.0.0.1", self.tinyproxy_port)

    def start_sandbox_host(self):
        self.config_text = sandbox_host_config(self.tmp, self.sandbox_port, self.address)
        (self.tmp / "egress.toml").write_text(self.config_text)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWPATROL_")}
        self.starts += 1
        self.servers["sandbox-host"] = Server(
            "sandbox-host egress", prlimit() + [str(self.exe), "egress", "--config",
                                                str(self.tmp / "egress.toml")],
            self.tmp / f"sandbox-host-{self.starts}.out", "127.0.0.1", self.sandbox_port, env)

    def stop(self, name):
        server = self.servers.pop(name, None)
        if server:
            server.stop()

    def stop_all(self):
        for name in list(self.servers):
            self.stop(name)

    # Routes: (label, design, via, the bench's --connect and --target)
    def route(self, design, via, port=80):
        if design == "direct":
            return ["--connect", f"{self.address}:{port}"]
        if design == "nginx-proxy":
            return ["--connect", f"127.0.0.1:{self.nginx_proxy_port}"]
        if design == "tinyproxy":
            return ["--connect", f"127.0.0.1:{self.tinyproxy_port}", "--via", via,
                    "--target", f"{self.address}:{port}"]
        return ["--connect", f"127.0.0.1:{self.sandbox_port}", "--via", via,
                "--target", f"{NAME}:{port}"]

    def run(self, argv, timeout=600):
        command = prlimit() + [str(self.bench)] + argv
        r = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            die(f"{shlex.join(command)} exited {r.returncode}: {r.stderr.strip()[-2000:]}")
        return json.loads(r.stdout.strip().splitlines()[-1])


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

def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(REPO / "build"), type=Path,
                        help="build tree with bin/sandbox-host and bin/egress_bench "
                             "(default: build)")
    parser.add_argument("--bulk-mib", type=int, default=1024,
                        help="size of the bulk file in MiB (default: 1024)")
    parser.add_argument("--bulk-rounds", type=int, default=3,
                        help="timed transfers per route (default: 3)")
    parser.add_argument("--requests", type=int, default=2000,
                        help="timed connect + GET requests per latency route (default: 2000)")
    parser.add_argument("--latency-rounds", type=int, default=4,
                        help="the requests split into this many interleaved rounds (default: 4)")
    parser.add_argument("--warmup", type=int, default=20,
                        help="untimed requests before each latency round (default: 20)")
    parser.add_argument("--tls-connections", default="1,8",
                        help="keep-alive TLS connections, one row each (default: 1,8)")
    parser.add_argument("--tls-seconds", type=float, default=10,
                        help="timed seconds per TLS run (default: 10)")
    parser.add_argument("--tls-rounds", type=int, default=3,
                        help="TLS runs per row, interleaved (default: 3)")
    parser.add_argument("--tunnels", type=int, default=10000,
                        help="idle CONNECT tunnels held open (default: 10000)")
    parser.add_argument("--no-tinyproxy-tunnels", action="store_true",
                        help="skip tinyproxy's idle-tunnel memory")
    parser.add_argument("--quiet-load", type=float, default=0.6,
                        help="wait until the 1-minute load average is below this (default 0.6)")
    parser.add_argument("--wait-every", type=float, default=30,
                        help="seconds between load checks (default: 30)")
    parser.add_argument("--wait-max", type=float, default=1500,
                        help="seconds to wait for a quiet machine before running anyway "
                             "(default: 1500)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--no-write", action="store_true",
                        help="print the section instead of writing docs/benchmarks.md")
    args = parser.parse_args()
    try:
        args.tls_connections = [int(x) for x in args.tls_connections.split(",")]
    except ValueError:
        parser.error("--tls-connections: want integers, e.g. 1,8")
    if min([args.bulk_mib, args.bulk_rounds, args.requests, args.latency_rounds,
            args.tls_rounds, args.tunnels, *args.tls_connections]) < 1 or args.tls_seconds <= 0:
        parser.error("sizes, counts and rounds must be at least 1")
    if not args.no_write and (args.bulk_mib < 1024 or args.requests < 2000 or
                              args.tunnels < 10000):
        parser.error("writing docs/benchmarks.md needs --bulk-mib >= 1024, --requests >= 2000 "
                     "and --tunnels >= 10000 (use --no-write to try smaller ones)")
    args.build = args.build.resolve()
    return args


def main():
    args = parse_args()
    if os.geteuid() != 0:
        die("run as root: nginx binds ports 80 and 443 of a loopback address, and prlimit "
            "raises RLIMIT_NOFILE")
    for tool in ("nginx", "tinyproxy", "openssl", "prlimit"):
        if shutil.which(tool) is None:
            die(f"`{tool}` is not installed (scripts/setup.sh installs it)")
    for path in (args.build / "bin" / "sandbox-host", args.build / "bin" / BENCH):
        if not os.access(path, os.X_OK):
            die(f"{path}: not an executable; build the targets {BUILD_TARGETS} first")
    env_info = machine()
    tmp = Path(tempfile.mkdtemp(prefix="egress-bench-"))
    tmp.chmod(0o755)
    world = World(args, tmp)
    try:
        make_certificates(tmp)
        make_files(tmp / "www", args.bulk_mib << 20)
        world.start_nginx()
        world.start_tinyproxy()
        world.start_nginx_proxy()
        world.start_sandbox_host()
        ca = tmp / "run" / "clawpatrol-sandbox" / "egress" / "ca.pem"
        if not ca.exists():
            die(f"sandbox-host wrote no {ca}")
        shutil.copy(ca, tmp / "proxy-ca.pem")
        check(world)
        log("every route answers; waiting for a quiet machine")
        quiet = wait_for_quiet(args)
        results = {"loads": [], "load_before": load_average()}
        with ForeignShare(world) as foreign:
            results["bulk"] = bulk_phase(world, args, results["loads"])
            results["latency"] = latency_phase(world, args, results["loads"])
            results["tls"] = tls_phase(world, args, results["loads"])
            results["main_sandbox_host"] = world.servers["sandbox-host"].status()
            world.stop("nginx-proxy")
            world.stop("sandbox-host")
            world.stop("tinyproxy")
            sample_load(results["loads"], "idle tunnels")
            results["idle"] = {"sandbox-host": idle_phase(world, args, "sandbox-host",
                                                          world.start_sandbox_host)}
            if not args.no_tinyproxy_tunnels:
                results["idle"]["tinyproxy"] = idle_phase(world, args, "tinyproxy",
                                                          world.start_tinyproxy)
        results["load_after"] = load_average()
        said = "".join(p.read_text() for p in sorted(tmp.glob("sandbox-host-*.out")))
    finally:
        world.stop_all()
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    raw = Path(tempfile.gettempdir()) / "egress-bench-last.json"
    raw.write_text(json.dumps({k: ({" ".join(map(str, key)) if isinstance(key, tuple) else key: v
                                    for key, v in val.items()} if isinstance(val, dict) else val)
                               for k, val in results.items()}, indent=1))
    log(f"the run's JSON: {raw}")
    log(f"sandbox-host said (last run's stderr): {said.strip()[-1500:]}")
    ran = ("python3 " + " ".join(sys.argv)).replace(str(REPO) + "/", "")
    section = render(results, env_info, world, args, source_revision(), ran, foreign.share,
                     quiet)
    if args.no_write:
        print(section)
    else:
        write_section(section, BEGIN, END)
        log(f"wrote {DOCS}")


if __name__ == "__main__":
    main()
