#!/usr/bin/env python3
"""What serve's [metrics] costs: a launch through the launch service and a request through
the egress proxy, on three builds side by side in ONE run of bench/interleaved.py (every
command once per round, in a rotating order): the build before [metrics] (OLD), this build
without a [metrics] table (NEW, off), and this build with one (NEW, on, scraped once a
second meanwhile). Also the libraries each build's sandbox-host (every sandbox's stage 1)
and sandbox-host-broker (serve) load. Rewrites the metrics-bench section of
docs/benchmarks.md.

Usage, from the repository root, as root (the three serves and the commands run as root):
    python3 bench/metrics_report.py --old OLD_BUILD --new build [--old-revision TEXT]
                                    [--rounds 200] [--pause-ms 20]

Each serve has [launcher] (namespaces, network none, depth 1) and [egress] in front of one
stand-in upstream on loopback (python3 -m http.server); the timed commands are
`sandbox-host-launch --via SOCKET -- /bin/true` and `curl -x PROXY http://plain.test:PORT/`,
and beside them the one-shot `sandbox-host run --backend namespaces -- /bin/true` of both
builds.
"""

import argparse
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_common import die, load_average, machine, source_revision, write_section

BEGIN = "<!-- metrics-bench:begin -->"
END = "<!-- metrics-bench:end -->"
HERE = Path(__file__).resolve().parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(check, what, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    die(f"{what} did not come up within {seconds} s")


def answers(argv):
    return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def libraries(binary):
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True).stdout
    return sorted(line.split()[0] for line in out.splitlines() if "=>" in line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, type=Path, help="the build before [metrics]")
    parser.add_argument("--new", required=True, type=Path, help="this build")
    parser.add_argument("--old-revision", default="the build before [metrics]",
                        help="what --old was built from, for the report")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--pause-ms", type=int, default=20)
    args = parser.parse_args()
    if os.geteuid() != 0:
        die("run as root")
    old, new = args.old.resolve(), args.new.resolve()
    work = Path(tempfile.mkdtemp(prefix="metrics-bench-"))
    (work / "www").mkdir()
    (work / "www/index.html").write_text("upstream\n")
    upstream_port = free_port()
    processes = [subprocess.Popen(["python3", "-m", "http.server", "--bind", "127.0.0.1",
                                   "--directory", str(work / "www"), str(upstream_port)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    variants = {"old": (old, False), "off": (new, False), "on": (new, True)}
    commands, metrics_url = [], None
    try:
        for name, (build, metrics) in variants.items():
            home = work / name
            home.mkdir()
            proxy_port = free_port()
            config = (f'[broker]\nstate_dir = "{home}/state"\n'
                      f'[launcher]\nsocket = "{home}/l/launch.sock"\n'
                      f'[egress]\nlisten = "127.0.0.1:{proxy_port}"\n'
                      f'allow = ["plain.test:{upstream_port}"]\nallow_addresses = ["127.0.0.1"]\n'
                      f'resolve = {{ "plain.test" = ["127.0.0.1"] }}\n'
                      f'[audit]\npath = "{home}/audit.log"\n')
            if metrics:
                metrics_url = f"http://127.0.0.1:{free_port()}/metrics"
                config += f'[metrics]\nlisten = "{metrics_url[7:-8]}"\n'
            (home / "config.toml").write_text(config)
            processes.append(subprocess.Popen(
                [str(build / "bin/sandbox-host"), "serve", "--config", str(home / "config.toml")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            launch = [str(build / "bin/sandbox-host-launch"), "--via", f"{home}/l/launch.sock",
                      "--", "/bin/true"]
            request = ["/usr/bin/curl", "-sf", "-o", "/dev/null", "-x",
                       f"http://127.0.0.1:{proxy_port}", f"http://plain.test:{upstream_port}/"]
            wait_for(lambda: answers(launch) and answers(request), f"the {name} serve")
            commands += [f"launch_{name}={shlex.join(launch)}", f"proxy_{name}={shlex.join(request)}"]
        # The one-shot launch re-executes sandbox-host as stage 1 whatever serve does.
        for name, build in (("old", old), ("new", new)):
            commands.append(f"oneshot_{name}={build}/bin/sandbox-host run --backend namespaces "
                            "-- /bin/true")
        # Scraped meanwhile, as a Prometheus would, more often than its default 15 s.
        processes.append(subprocess.Popen(
            ["sh", "-c", f"while true; do curl -sf -o /dev/null {metrics_url}; sleep 1; done"]))
        load_before = load_average()
        run = [sys.executable, str(HERE / "interleaved.py"), "--rounds", str(args.rounds),
               "--pause-ms", str(args.pause_ms), "--warmup", "10"] + commands
        out = subprocess.run(run, capture_output=True, text=True, check=True).stdout
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait()
    medians = {}
    for line in out.splitlines():
        match = re.match(r"\s+(\S+)\s+median\s+([\d.]+) ms\s+p10\s+([\d.]+)\s+p90\s+([\d.]+)", line)
        if match:
            medians[match[1]] = tuple(float(v) for v in match.groups()[1:])
    rows = []
    for path, label in (("launch", "a launch through the launch service (`sandbox-host-launch "
                                   "--via`, a prepared namespaces sandbox, `/bin/true`)"),
                        ("proxy", "a forwarded GET through the egress proxy (`curl -x`), "
                                  "curl's own start-up included")):
        base = medians[f"{path}_old"][0]
        cells = [f"{medians[f'{path}_{v}'][0]:.2f} ms (p10 {medians[f'{path}_{v}'][1]:.2f}, "
                 f"p90 {medians[f'{path}_{v}'][2]:.2f})" for v in variants]
        ratios = [f"{medians[f'{path}_{v}'][0] / base:.2f}" for v in ("off", "on")]
        rows.append(f"| {label} | {cells[0]} | {cells[1]} | {cells[2]} | {ratios[0]} | "
                    f"{ratios[1]} |")
    oneshot = {v: medians[f"oneshot_{v}"] for v in ("old", "new")}
    rows.append("| a one-shot `sandbox-host run --backend namespaces -- /bin/true` (stage 1 is "
                "`sandbox-host`; `[metrics]` does not apply) | "
                f"{oneshot['old'][0]:.2f} ms (p10 {oneshot['old'][1]:.2f}, "
                f"p90 {oneshot['old'][2]:.2f}) | {oneshot['new'][0]:.2f} ms (p10 "
                f"{oneshot['new'][1]:.2f}, p90 {oneshot['new'][2]:.2f}) | | "
                f"{oneshot['new'][0] / oneshot['old'][0]:.2f} | |")
    old_libs, new_libs = libraries(old / "bin/sandbox-host"), libraries(new / "bin/sandbox-host")
    broker = "libexec/sandbox-host/sandbox-host-broker"
    added = sorted(set(libraries(new / broker)) - set(libraries(old / broker)))
    info = machine()
    command = (f"python3 bench/metrics_report.py --old {args.old} --new {args.new} "
               f"--old-revision {shlex.quote(args.old_revision)} --rounds {args.rounds} "
               f"--pause-ms {args.pause_ms}")
    section = f"""{BEGIN}
## What serve's `[metrics]` costs a launch and a proxied request (as root, one interleaved run)

Three `sandbox-host serve`s side by side, each with a launch service and an egress proxy in
front of one stand-in upstream on loopback: the build before `[metrics]` (`--old`,
{args.old_revision}), this
build without a `[metrics]` table (off), and this build with one (on), its endpoint scraped
once a second meanwhile. One run of `bench/interleaved.py`: {args.rounds} rounds, every
command once per round in a rotating order, {args.pause_ms} ms pause before each, as root,
on {info['nproc']} CPUs ({info['cpu']}), kernel {info['kernel']}, load before {load_before};
{info['date']}, source {source_revision()}.

```sh
{command}
```

| what | before `[metrics]` | this build, off | this build, on | off / before | on / before |
|---|---|---|---|---|---|
{chr(10).join(rows)}

- `sandbox-host`, which every sandbox's stage 1 re-executes, loads the same
  {len(new_libs)} libraries as before ({'unchanged' if old_libs == new_libs else 'CHANGED'}:
  {', '.join(f'`{lib}`' for lib in new_libs)}); prometheus-cpp is linked into
  `sandbox-host-broker` alone, which runs `serve` once: it adds {', '.join(f'`{lib}`' for lib in added) or 'nothing'}.
- With the endpoint on, each launch and each proxied request adds one counter (and a
  histogram) update under prometheus-cpp's per-family lock, and one atomic load of the
  installed recorder; off, the same calls go to a recorder that does nothing.
{END}
"""
    write_section(section, BEGIN, END)
    print(out)
    print(section)


if __name__ == "__main__":
    main()
