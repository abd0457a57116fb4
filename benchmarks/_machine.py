"""What the benchmarks that time whole commands read about the machine: the CPU time of the
processes they started, the load average, and how fast the machine is running right now.

The last matters on a virtual machine with burstable CPU (the one these figures were measured on
is one): after a minute or so of sustained load its vCPUs are throttled, and the same code takes
up to 3.6 times as long, in CPU time as well as wall time (``process_time`` counts the slowed
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


def speed_probe() -> tuple[float, float]:
    """CPU and wall seconds of a fixed pure-Python workload (integer arithmetic and a JSON round
    trip of 100,000 small dicts), the best of three: about 0.4-0.6 s of CPU when this project's
    machine is not throttled, 1.0-1.3 s when it is. The CPU time shows a throttled CPU; a wall time
    well above it shows another process or the hypervisor taking the core. It does not catch every
    slowdown: a neighbour's memory traffic slows a run with a large heap (the long session's 280 MB)
    more than this small workload."""
    def once() -> tuple[float, float]:
        started, cpu = time.perf_counter(), time.process_time()
        total = 0
        for i in range(1_500_000):
            total += i * i % 7
        rows = [{"type": "text", "text": "x" * 50 + str(i), "n": i} for i in range(100_000)]
        json.loads(json.dumps(rows))
        return time.process_time() - cpu, time.perf_counter() - started
    return min(once() for _ in range(3))


#: How much the probe's CPU time moves between two probes on an idle machine (up to 1.6x
#: measured): a rise beyond this is the machine slowing down, not noise.
PROBE_NOISE = 1.8
#: Wall time over CPU time of the probe beyond which something else had the core.
PROBE_SHARED = 1.15


def speed_note(before: tuple[float, float], after: tuple[float, float]) -> str:
    """One line on the probe before and after a run: the CPU seconds, and whether the machine
    slowed down under the run or another process had the core."""
    line = f"machine speed probe: {before[0]:.2f} s of CPU before, {after[0]:.2f} s after (lower is faster)"
    notes = []
    if after[0] > PROBE_NOISE * before[0]:
        notes.append(f"the CPU slowed down {after[0] / before[0]:.1f}x during the run (throttled)")
    shared = max(wall / cpu for cpu, wall in (before, after))
    if shared > PROBE_SHARED:
        notes.append(f"the probe waited {shared:.1f}x its CPU time for the core (another process or the hypervisor)")
    if notes:
        line += "; " + " and ".join(notes) + ": the run's times are not this code's alone"
    return line
