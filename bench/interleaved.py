#!/usr/bin/env python3
"""Spawn-to-exit of several commands, interleaved: each round runs every command once, in an
order that rotates from round to round, with a pause before each run. On a machine whose
speed drifts within a minute (docs/benchmarks.md: bare /bin/true from 2.8 to 4.3 ms between
two runs), hyperfine's command-after-command order puts the drift into the ratios; here
every command sees the same drift. Prints each command's median and its ratio to the
first one's.

Usage (as the user to measure, e.g. through `setpriv --reuid=65534 --regid=65534
--clear-groups --`):
    python3 bench/interleaved.py [--rounds 60] [--pause-ms 200] NAME=COMMAND...

COMMAND is split as a shell would (shlex) and started without one; its first word must be
an absolute path. Output goes to /dev/null; a command that exits non-zero stops the run.
"""

import argparse
import os
import shlex
import statistics
import sys
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--pause-ms", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("commands", nargs="+", metavar="NAME=COMMAND")
    args = parser.parse_args()

    commands = {}
    for spec in args.commands:
        name, sep, command = spec.partition("=")
        argv = shlex.split(command)
        if not sep or not name or not argv or not argv[0].startswith("/"):
            sys.exit(f"interleaved.py: {spec!r} is not NAME=/absolute/path [ARGS...]")
        commands[name] = argv

    null = os.open(os.devnull, os.O_RDWR)

    def run_once(name):
        argv = commands[name]
        start = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ,
                             file_actions=[(os.POSIX_SPAWN_DUP2, null, 1),
                                           (os.POSIX_SPAWN_DUP2, null, 2)])
        _, status = os.waitpid(pid, 0)
        elapsed = (time.perf_counter() - start) * 1000
        if status != 0:
            sys.exit(f"interleaved.py: {name} ({shlex.join(argv)}) exited, wait status {status}")
        return elapsed

    names = list(commands)
    for name in names:
        for _ in range(args.warmup):
            run_once(name)
    times = {name: [] for name in names}
    for round_number in range(args.rounds):
        first = round_number % len(names)
        for name in names[first:] + names[:first]:
            time.sleep(args.pause_ms / 1000)
            times[name].append(run_once(name))

    reference = statistics.median(times[names[0]])
    print(f"{args.rounds} rounds, {args.pause_ms} ms pause before each run; ratios to {names[0]}")
    for name in names:
        median = statistics.median(times[name])
        deciles = statistics.quantiles(times[name], n=10)
        low, high = deciles[0], deciles[-1]
        print(f"  {name:<24} median {median:7.2f} ms  p10 {low:6.2f}  p90 {high:6.2f}  "
              f"{median / reference:5.2f}x")


if __name__ == "__main__":
    main()
