"""The targets of the broker-bench section (bench/broker_report.py) and the formatting of
its numbers: latencies, verdicts, CPU per request, the scenario and requests cells.
"""

from broker_run import design_label, PACED_CLIENTS


TARGET_P50_MS = 0.5
TARGET_P99_MS = 2.0


def ms(us):
    return "–" if us is None else f"{us / 1e3:,.3f}"


def verdict(row):
    if row["answered"] == 0:
        return "no answer"
    p50 = row["p50_us"] / 1e3 <= TARGET_P50_MS
    p99 = row["p99_us"] / 1e3 <= TARGET_P99_MS
    if p50 and p99:
        return "met"
    missed = [name for name, ok in (("p50", p50), ("p99", p99)) if not ok]
    return "**missed**: " + " and ".join(missed)


def per_request(cpu_ms, row):
    # The broker also answered the readiness ping and the warm-up, untimed.
    answered = max(1, row["broker_answered"] if row["broker_answered"] > 0 else row["answered"])
    return cpu_ms / answered * 1e3


def cpu_per_request(row):
    """The broker's and the clients' CPU per request together, in µs."""
    return (per_request(row["broker_cpu_ms"], row)
            + row["clients_cpu_ms"] / max(1, row["answered"] + row["lost"]) * 1e3)


def clients_text(n):
    return f"{n} client" + ("" if n == 1 else "s")


def share_text(requests):
    low, high = requests // PACED_CLIENTS, -(-requests // PACED_CLIENTS)
    return f"{low:,}" if low == high else f"{low:,} or {high:,}"


def pace_cell(row):
    if not row.get("rate"):
        return "back to back"
    return f"{row['rate']:,}/s each ({row['offered_per_s']:,}/s)"


def scenario_text(design, row):
    """A scenario named in a sentence: design, clients, pace and idle."""
    pace = f" at {row['rate']:,}/s each" if row.get("rate") else ""
    return (f"{design_label(*design)} at {clients_text(row['clients'])}{pace}, idle "
            f"{row['idle']:,}")


def requests_cell(row):
    text = f"{row['answered']:,}"
    if row["answered"] != row["requests"]:
        text += f" of {row['requests']:,}"
    if row["capped"]:
        text += f" (stopped at the {row['cap_s']} s cap)"
    return text


def key_of(row):
    return (row["transport"], row["identity"], row["wake"], row["clients"], row["idle"],
            row.get("rate", 0))
