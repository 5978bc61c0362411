"""What bench/launch_cost.py reads of /proc (process tables, CPU, PSS, threads,
MemAvailable), its log and its SIGALRM time limits.
"""

import json
import os
import signal
import sys
import time
from pathlib import Path

from bench_common import die


PYTHON = "/usr/bin/python3"
SLEEP = ["/bin/sleep", "3600"]
MAX_LAUNCHES = 4096  # [launcher] max_launches' upper bound: the service's own is 256
TICK = os.sysconf("SC_CLK_TCK")
ZOMBIE = " <zombie>"


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def bounded(seconds):
    """Arms SIGALRM: a blocking wait that takes longer raises Timeout."""
    signal.setitimer(signal.ITIMER_REAL, seconds)


def unbounded():
    signal.setitimer(signal.ITIMER_REAL, 0)


def log(message):
    print(f"launch_cost: {message}", file=sys.stderr, flush=True)


# ---- /proc -----------------------------------------------------------------------------------

def stat_fields(pid):
    """(comm, fields after comm) of /proc/<pid>/stat, or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    left, right = text.find("("), text.rfind(")")
    return text[left + 1:right], text[right + 2:].split()


def process_table():
    """{pid: (ppid, comm, cpu seconds of the process itself and its reaped children)}; a
    zombie's comm ends in ZOMBIE."""
    table = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            s = stat_fields(entry.name)
            if s:
                comm, f = s
                table[int(entry.name)] = (int(f[1]), comm + (ZOMBIE if f[0] == "Z" else ""),
                                          sum(int(x) for x in f[11:15]) / TICK)
    return table


def descendants(table, root):
    children = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def own_cpu(pid):
    """utime + stime + cutime + cstime of pid (fields 14-17), in seconds."""
    s = stat_fields(pid)
    return sum(int(x) for x in s[1][11:15]) / TICK if s else 0.0


PSS_FDS = None  # (read, write): the root parent reads smaps_rollup for the worker


def pss_many(pids):
    """{pid: PSS kB} for pids, None where unreadable. The sandboxes' inits are not dumpable
    and were exec'd in the initial user namespace, so their user cannot read their
    smaps_rollup; when the script runs as root, its root part reads them for the worker."""
    if PSS_FDS is None:
        return {p: pss_kb(p) for p in pids}
    os.write(PSS_FDS[1], (json.dumps(list(pids)) + "\n").encode())
    line = b""
    while not line.endswith(b"\n"):
        chunk = os.read(PSS_FDS[0], 1 << 16)
        if not chunk:
            die("the root part stopped answering")
        line += chunk
    return {int(k): v for k, v in json.loads(line).items()}


def serve_pss(request_fd, answer_fd, process, timeout):
    """The root part's loop: answers the worker's PSS requests until it exits."""
    import select
    deadline = time.monotonic() + timeout
    buffer = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            process.kill()
            die("the worker ran for longer than its bound")
        ready, _, _ = select.select([request_fd], [], [], min(left, 5))
        if not ready:
            continue
        chunk = os.read(request_fd, 1 << 16)
        if not chunk:
            return
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            answer = {p: pss_kb(p) for p in json.loads(line)}
            os.write(answer_fd, (json.dumps(answer) + "\n").encode())


def pss_kb(pid):
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def in_own_pid_namespace(pid):
    """Whether pid lives in a pid namespace below this one (NSpid has more than one id)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return len(line.split()) > 2
    except OSError:
        pass
    return False


def threads_of(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Threads:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def kernel_threads_cpu():
    """CPU seconds of the kernel's threads (kthreadd's children: kworkers tearing down the
    sandboxes' network namespaces, RCU), which work for the launches without being any
    process's child."""
    table = process_table()
    return sum(cpu for pid, (ppid, _, cpu) in table.items() if ppid == 2 or pid == 2)


def mem_available_kb():
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1])
    return 0
