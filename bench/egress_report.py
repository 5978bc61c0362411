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
import shutil
import sys
import tempfile
from pathlib import Path

from bench_common import die, DOCS, load_average, machine, REPO, source_revision, write_section
from egress_peers import BENCH, BUILD_TARGETS, log, make_certificates, make_files, World
from egress_measure import (bulk_phase, check, ForeignShare, idle_phase, latency_phase, sample_load,
                            tls_phase, wait_for_quiet)
from egress_render import BEGIN, END, render


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
