"""What the benchmark report scripts share: running a command for its output, the machine's
description, the source revision, and rewriting one marked section of docs/benchmarks.md."""

import datetime
import os
import platform
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs" / "benchmarks.md"


def die(message):
    print(f"{Path(sys.argv[0]).name}: {message}", file=sys.stderr)
    sys.exit(1)


def output_of(command):
    try:
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def display_path(path):
    """path relative to the repository root when it lies inside it (the command is run there)."""
    resolved = Path(path).resolve()
    try:
        return str(resolved.relative_to(REPO))
    except ValueError:
        return str(resolved)


def load_average():
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return None


def machine():
    cpu = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "nproc": output_of(["nproc"]) or str(os.cpu_count()),
        "kernel": platform.release(),
        "cpu": cpu,
        "load_before": load_average(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "os": next((line.split("=", 1)[1].strip('"') for line in
                    Path("/etc/os-release").read_text().splitlines()
                    if line.startswith("PRETTY_NAME=")), None),
    }


def source_revision():
    head = output_of(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"])
    if head is None:
        return None
    try:
        # --no-optional-locks: read-only, never refreshes the index.
        dirty = subprocess.run(["git", "--no-optional-locks", "-C", str(REPO), "status",
                                "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        dirty = ""
    if not dirty.strip():
        return head
    # Which top-level directories differ: bench/ and docs/ do not change what is measured.
    dirs = sorted({line[3:].split("/")[0] + ("/" if "/" in line[3:] else "")
                   for line in dirty.splitlines() if len(line) > 3})
    return head + " with uncommitted changes in " + ", ".join(f"`{d}`" for d in dirs)


def write_section(section, begin, end):
    """Replaces the text between the markers begin and end, or appends the section."""
    text = DOCS.read_text() if DOCS.exists() else "# Benchmarks\n"
    start, stop = text.find(begin), text.find(end)
    if start != -1 and stop != -1 and start < stop:
        text = text[:start] + section.rstrip("\n") + text[stop + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    DOCS.write_text(text)
