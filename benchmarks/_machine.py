"""What the benchmarks that time whole commands read about the machine: the CPU time of the
processes they started, the load average, and how fast the machine is running right now.

The last matters on a virtual machine with burstable CPU (the one these figures were measured on
is one): after a minute or so of sustained load its vCPUs are throttled, and the same code takes
up to 2.6 times as long, in CPU time as well as wall time (``process_time`` counts the slowed
cycles too). Idle, the machine earns its speed back over minutes. So a benchmark prints
:func:`speed_probe` before and after what it times: a rise means the machine slowed down under
the run, and its times are not comparable with a run on a fast machine.
"""

from __future__ import annotations

import json
import resource
import time
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


def speed_probe() -> float:
    """CPU seconds of a fixed pure-Python workload (integer arithmetic and a JSON round trip of
    100,000 small dicts), the best of three: about 0.5 s on an unthrottled 2.x GHz core. Only
    its changes mean something: compare the probe before and after a run on the same machine.
    It catches a throttled CPU, not every slowdown: a neighbour's memory traffic slows a run with
    a large heap (the long session's 280 MB) more than this small workload."""
    def once() -> float:
        started = time.process_time()
        total = 0
        for i in range(1_500_000):
            total += i * i % 7
        rows = [{"type": "text", "text": "x" * 50 + str(i), "n": i} for i in range(100_000)]
        json.loads(json.dumps(rows))
        return time.process_time() - started
    return min(once() for _ in range(3))


def speed_note(before: float, after: float) -> str:
    """One line on the probe before and after a run: whether the machine slowed down under it."""
    line = f"machine speed probe: {before:.2f} s before, {after:.2f} s after (lower is faster)"
    if after > 1.25 * before:
        line += (f"; the machine slowed down {after / before:.1f}x during the run (throttled CPU or a busy "
                 "neighbour): its times are not this code's alone")
    return line
