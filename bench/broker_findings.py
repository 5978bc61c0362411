"""The paragraphs under the broker-bench section's table (bench/broker_report.py): what the
numbers say, back to back and at a steady pace.
"""

import os

from broker_run import design_label, DESIGNS, PACED_CLIENTS, PACED_RATE, PACED_RATE_WHY, TICK_MS
from broker_cells import (clients_text, cpu_per_request, key_of, ms, per_request, scenario_text,
                          TARGET_P50_MS, TARGET_P99_MS, verdict)


def paced_findings(row, args):
    """The paragraphs on the 64 clients at a steady pace, against the back-to-back rows."""
    rate, idle = args.paced_rate, args.idle
    offered = PACED_CLIENTS * rate
    out = []
    lock_b2b = [r for r in (row("spool", "lock", "inotify", 64, 0),
                            row("spool", "lock", "inotify", 64, idle)) if r]
    if lock_b2b:
        out.append(
            f"- **{PACED_CLIENTS} clients at a steady pace** (*{rate}/s each*) are what a "
            f"gateway with {PACED_CLIENTS} sandboxes sharing one broker sees: requests that "
            "arrive when their sandbox needs them, not 64 always waiting. One rate for every "
            "design, because the load a gateway puts on its broker does not depend on how the "
            "broker is built, and a fixed one rather than one derived from each run's "
            "saturation, so that runs compare at the same offered load: "
            f"{rate} requests/s per client (one every {1000 / rate:g} ms), {offered:,}/s in "
            "all"
            + (", " + PACED_RATE_WHY if rate == PACED_RATE else "")
            + ". In this run it is "
            + " and ".join(f"{offered / r['requests_per_s']:.0%} of the "
                           f"{r['requests_per_s']:,.0f}/s spool `lock` answered back to back at "
                           f"64 clients, idle {r['idle']:,}" for r in lock_b2b)
            + ". The latency is "
            "from each request's scheduled time; the service time (from the call) and how "
            "many requests started more than 1 ms behind schedule are given here too:")
    keeps, falls = [], []
    for design in DESIGNS:
        if design[2] == "poll":
            continue
        for count in (0, idle):
            r = row(*design, PACED_CLIENTS, count, rate)
            b2b = row(*design, 64, count)
            if not r or not r["answered"]:
                continue
            capacity = b2b["requests_per_s"] if b2b else None
            kept = capacity is not None and capacity > offered \
                and r["requests_per_s"] >= 0.95 * offered
            (keeps if kept else falls).append((design, r, capacity))
            out.append(
                f"  - {design_label(*design)}, idle {count:,}: p50 {ms(r['p50_us'])} ms, p99 "
                f"{ms(r['p99_us'])} ms, max {ms(r['max_us'])} ms (service time p50 "
                f"{ms(r['service_p50_us'])}, p99 {ms(r['service_p99_us'])} ms); "
                f"{r['requests_per_s']:,.0f} answered/s of {offered:,} offered"
                + (f" (back to back it answered {capacity:,.0f}/s)" if capacity else "")
                + f"; {r['behind']:,} of {r['taken']:,} started behind schedule; "
                f"target {verdict(r).replace('**', '')}.")
    if keeps:
        late = max(r["behind"] / max(1, r["taken"]) for _, r, _ in keeps)
        close = all(r["p50_us"] <= 1.25 * r["service_p50_us"] for _, r, _ in keeps)
        one = row("spool", "lock", "inotify", 1, 0)
        sock = row("socket", "lock", "inotify", 1, 0)
        text = ("- Where the offered load is below the design's back-to-back throughput ("
                + "; ".join(f"{design_label(*d)}, idle {r['idle']:,}" for d, r, _ in keeps)
                + "), the broker keeps up: it answers what is asked, when it is asked; "
                + (f"few requests start more than 1 ms late (at most {late:.1%} in one row)"
                   if late <= 0.01 else
                   f"up to {late:.1%} of a row's requests start more than 1 ms late")
                + ", and the latency from the schedule is " + ("close to" if close else "above")
                + " the service time. What queueing there is comes from random arrivals "
                f"bunching up ({PACED_CLIENTS} clients, random phases, {os.cpu_count() or 1} "
                "CPUs), not from a standing queue, so these rows, "
                "unlike the back-to-back ones, show the round trip a sandbox waits for under a "
                "gateway's load, and the target applies to them as it is meant to.")
        if one and sock:
            lock_p = [r for d, r, _ in keeps if d == ("spool", "lock", "inotify")]
            sock_p = [r for d, r, _ in keeps if d[0] == "socket"]
            if lock_p and sock_p and lock_p[0]["service_p50_us"] > one["p50_us"] \
                    and sock_p[0]["service_p50_us"] > sock["p50_us"]:
                text += (
                    f" Their service time is longer than the one-client back-to-back round "
                    f"trip (spool `lock` p50 {ms(lock_p[0]['service_p50_us'])} against "
                    f"{ms(one['p50_us'])} ms, the socket {ms(sock_p[0]['service_p50_us'])} "
                    f"against {ms(sock['p50_us'])} ms): back to back, one client and the "
                    "broker keep a CPU each busy and hot; at a pace, both sleep between "
                    "requests, so a request pays for waking them and for cold caches (likely "
                    "more so on this virtual machine, whose idle vCPUs halt), and requests of "
                    f"different clients sometimes overlap on the {os.cpu_count() or 1} CPUs. "
                    "Each request costs more CPU that way "
                    f"too: broker and client together {cpu_per_request(lock_p[0]):,.0f} µs for "
                    f"spool `lock` at idle {lock_p[0]['idle']:,}, against "
                    f"{cpu_per_request(one):,.0f} µs back to back at one client, so the paced "
                    "load keeps "
                    f"{offered * cpu_per_request(lock_p[0]) / 1e6 / (os.cpu_count() or 1):.0%} "
                    "of the machine's CPU busy.")
        out.append(text)
    if falls:
        out.append(
            "- Where the offered load is above what the design answers back to back ("
            + "; ".join(f"{design_label(*d)}, idle {r['idle']:,}: "
                        + (f"{c:,.0f}/s" if c else "unknown") for d, r, c in falls)
            + f", against {offered:,}/s offered), the broker cannot keep up: each client falls "
            "further behind its schedule with every request, the latency from the schedule "
            "grows for the whole run, and the row's requests/s is what the design can answer, "
            "not what was asked. Its percentiles are no steady state: they grow with the "
            f"length of the run (here {args.requests:,} requests, "
            f"{args.requests / offered:.2f} s of schedule). The service time stays bounded, "
            "since each client has one request outstanding at most; the wait is in the "
            "requests not yet made.")
    met = [(d, r) for d, r, _ in keeps + falls if verdict(r) == "met"]
    missed = [(d, r, c) for d, r, c in keeps + falls if verdict(r) != "met"]
    if keeps or falls:
        def why(d, r, c):
            if (d, r, c) in falls:
                return "it cannot keep up with the offered load"
            service_misses = (r["service_p50_us"] / 1e3 > TARGET_P50_MS
                              and r["p50_us"] / 1e3 > TARGET_P50_MS) \
                or (r["service_p99_us"] / 1e3 > TARGET_P99_MS
                    and r["p99_us"] / 1e3 > TARGET_P99_MS)
            return (f"it keeps up; from the call alone (service time) p50 "
                    f"{ms(r['service_p50_us'])}, p99 {ms(r['service_p99_us'])} ms, so "
                    + ("the broker's round trip under this load misses the target by itself"
                       if service_misses else
                       "the time from the schedule to the call (the client waking, now and "
                       "then a previous answer that came late) tips it over"))
        out.append(
            f"- **The target at this pace** (p50 ≤ {TARGET_P50_MS} ms, p99 ≤ "
            f"{TARGET_P99_MS:g} ms from the schedule) is met by "
            + (" and ".join(f"{design_label(*d)} at idle {r['idle']:,}" for d, r in met)
               or "no design")
            + (". It is missed by " + "; ".join(
                f"{design_label(*d)} at idle {r['idle']:,} (p50 {ms(r['p50_us'])}, p99 "
                f"{ms(r['p99_us'])} ms): {why(d, r, c)}" for d, r, c in missed)
               if missed else "") + ". "
            f"A paced row lasts {args.requests / offered:.2f} s of schedule, so its p99 is the "
            f"slowest {args.requests // 100:,} requests of those seconds: a stall of some tens "
            "of milliseconds anywhere in them (the clients, the broker or this shared "
            "machine) moves it, and it varies more from run to run than the back-to-back "
            "rows' p99.")
    return out


def findings(rows, designs, args):
    """The paragraphs under the table, from the numbers."""
    by = {key_of(r): r for r in rows}
    idle = args.idle
    out = ["", "### How to read it", ""]

    def row(transport, identity, wake, clients, idle_count, rate=0):
        return by.get((transport, "peercred" if transport == "socket" else identity,
                       "socket" if transport == "socket" else wake, clients, idle_count, rate))

    # One client: the round trip itself.
    lock1, sock1 = row("spool", "lock", "inotify", 1, 0), row("socket", "lock", "", 1, 0)
    if lock1 and sock1:
        out.append(
            f"- **One client** measures the round trip itself: {ms(lock1['p50_us'])} ms (p50) "
            f"over the spool with identity `lock`, {ms(sock1['p50_us'])} ms over the socket. "
            "A spool request is a FIFO made, a file written, locked and renamed, an inotify "
            "wake-up, the broker's claim (open, fstat, unlink), the lock owner and its "
            "descendants read from `/proc`, the requester's `cwd` and mount namespace read, "
            "the reply written to the FIFO and the names removed; a socket request is a "
            "connect, one message each way and the peer's credentials from the kernel.")
    # 64 clients: Little's law.
    lines = []
    cpus = os.cpu_count() or 1
    for design in DESIGNS:
        transport, identity, wake = design
        r = row(transport, identity, wake, 64, 0)
        if r and r["requests_per_s"] and wake == "poll":
            lines.append(f"{design_label(*design)}: {r['requests_per_s']:,.0f} requests/s, "
                         f"so 64 / that = {64 / r['requests_per_s'] * 1e3:.2f} ms against a "
                         f"measured mean of {ms(r['mean_us'])} ms; it is bounded by the tick "
                         f"rather than by CPU: at most 64 requests per {TICK_MS} ms tick, "
                         f"{64 * 1000 // TICK_MS:,} requests/s")
        elif r and r["requests_per_s"]:
            lines.append(f"{design_label(*design)}: {r['requests_per_s']:,.0f} requests/s, "
                         f"so 64 / that = {64 / r['requests_per_s'] * 1e3:.2f} ms against a "
                         f"measured mean of {ms(r['mean_us'])} ms; its CPU ceiling, {cpus} CPUs "
                         f"/ {cpu_per_request(r):,.0f} µs per request, is "
                         f"{cpus / cpu_per_request(r) * 1e6:,.0f} requests/s")
    if lines:
        out.append(
            "- **64 clients asking back to back** measure throughput, not the round trip: "
            "with 64 requests always outstanding, each waits for the ones ahead of it, and "
            "the mean latency is 64 divided by the throughput (Little's law): "
            + "; ".join(lines) + f". The throughput of inotify and the socket is bounded by "
            f"CPU: this machine has "
            f"{cpus} CPUs, and each request costs the broker and its client the CPU in the "
            f"last two columns. At 64 clients, a p50 of {TARGET_P50_MS} ms would need "
            f"{64 / (TARGET_P50_MS / 1e3):,.0f} requests/s, i.e. under "
            f"{cpus / (64 / (TARGET_P50_MS / 1e3)) * 1e6:.0f} µs of CPU per request, "
            f"broker and client together, and p99 ≤ {TARGET_P99_MS:g} ms alone at least "
            f"{64 / (TARGET_P99_MS / 1e3):,.0f} requests/s (the mean lies below the p99); no "
            "design comes near it on this machine, so at 64 clients asking back to back the "
            "target is out of reach for all of them, and what tells the designs apart there "
            "is their throughput (requests/s), i.e. their CPU per request. That is a "
            "saturated broker, not what 64 sandboxes ordinarily do to it; the paced rows are.")
    out += paced_findings(row, args)
    # Idle processes: does the scan grow?
    growth = []
    for design in DESIGNS:
        transport, identity, wake = design
        a, b = row(transport, identity, wake, 1, 0), row(transport, identity, wake, 1, idle)
        if a and b and a["answered"] and b["answered"]:
            growth.append((design, a, b))
    if growth:
        parts = []
        for design, a, b in growth:
            parts.append(
                f"{design_label(*design)}: p50 {ms(a['p50_us'])} → {ms(b['p50_us'])} ms, broker "
                f"CPU {per_request(a['broker_cpu_ms'], a):,.0f} → "
                f"{per_request(b['broker_cpu_ms'], b):,.0f} µs per request")
        out.append(
            f"- **{idle:,} idle processes** (one client, idle 0 → {idle:,}): "
            + "; ".join(parts) + ". Identity `lock` and the socket never walk `/proc`: the "
            "kernel names the lock's owner (or the socket's peer), and the broker reads that "
            "one process's descriptors and its descendants' (none here), so the number of "
            "other processes does not enter. Identity `scan` walks every process of the "
            "broker's user (`/proc/<pid>` owned by it) and stats each one's descriptors, "
            "once per request: its cost grows linearly with the processes of that user, "
            "without bound. The processes of other users are skipped by a `stat` of "
            "`/proc/<pid>` each, so they cost little, but they are still listed.")
        a, b = row("spool", "lock", "inotify", 64, 0), row("spool", "lock", "inotify", 64, idle)
        if a and b:
            out.append(
                f"- Identity `lock` walks no `/proc` at any load, so what differs between its "
                f"idle-0 and idle-{idle:,} rows at 64 clients back to back is the machine's "
                f"noise (others' "
                f"load, see below): broker CPU per request "
                f"{per_request(a['broker_cpu_ms'], a):,.0f} µs at idle 0, "
                f"{per_request(b['broker_cpu_ms'], b):,.0f} µs at idle {idle:,}; p50 "
                f"{ms(a['p50_us'])} and {ms(b['p50_us'])} ms.")
        scan1 = row("spool", "scan", "inotify", 1, 0)
        scan64 = row("spool", "scan", "inotify", 64, 0)
        locks = [r for r in (row("spool", "lock", "inotify", 1, 0),
                             row("spool", "lock", "inotify", 64, 0)) if r]
        if scan1 and scan64 and scan1["answered"] and scan64["answered"]:
            out.append(
                "- The clients are processes of the broker's user too, so under identity "
                "`scan` concurrency alone makes every scan longer: broker CPU per request "
                f"{per_request(scan1['broker_cpu_ms'], scan1):,.0f} µs at 1 client, "
                f"{per_request(scan64['broker_cpu_ms'], scan64):,.0f} µs at 64 (idle 0), "
                "against " + " and ".join(f"{per_request(r['broker_cpu_ms'], r):,.0f} µs"
                                          for r in locks)
                + " for `lock`: n requesters waiting at once cost n scans of n processes.")
    seed1 = row("spool", "scan", "poll", 1, 0)
    seed64 = row("spool", "scan", "poll", 64, 0)
    if seed1:
        out.append(
            f"- **The seed's design** finds a request only at the next tick: a request "
            f"waits up to {TICK_MS} ms for it, and a client asking back to back waits "
            f"almost the whole tick every time, because its next request arrives just after "
            f"the scan that found the last one (p50 {ms(seed1['p50_us'])} ms at one client). "
            f"A request arriving at a random time would wait {TICK_MS / 2:g} ms on average. "
            "Its rows ran fewer requests (" + ", ".join(
                f"{r['requests']:,} at {clients_text(r['clients'])}"
                for r in (seed1, seed64) if r)
            + f"), since one client makes only {1000 // TICK_MS} requests a second.")
    capped = [(d, r) for d, r in zip(designs, rows) if r["capped"]]
    if capped:
        out.append("- Stopped at the cap: " + "; ".join(
            f"{scenario_text(d, r)} "
            f"({r['answered']:,} of {r['requests']:,} answered in {r['wall_s']:.0f} s)"
            for d, r in capped) + ". Their percentiles are over the requests answered.")
    out.append(
        "- *broker CPU / request* is the broker's user + system time (`wait4`) divided by "
        "the requests it answered (the timed ones, the readiness ping and the warm-up); "
        "*clients' CPU / request* is the clients' (`wait4`) divided by their requests. "
        "Both include the kernel's work in the system calls they made.")
    return out
