"""The servers of bench/egress_report.py: nginx (straight and as a TLS-terminating
reverse proxy), tinyproxy and `sandbox-host egress`, their configs, certificates and
served files, and the World that starts, checks and stops them.
"""

import json
import os
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from bench_common import die


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
