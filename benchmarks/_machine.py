"""What the benchmarks that time whole commands read about the machine: the CPU time of the
processes they started and the load average."""

from __future__ import annotations

import resource
from pathlib import Path


def children_cpu() -> float:
    """User + system seconds of every finished child process (and theirs) so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def load() -> str:
    """The 1, 5 and 15 minute load averages, or ``n/a``."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"
