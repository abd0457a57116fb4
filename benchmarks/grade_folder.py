"""``ctxeval grade FOLDER`` throughput, and how grading one session grows with its length (not a test).

    python benchmarks/grade_folder.py [--sessions 120] [--workers N] [--doublings 3] [--keep DIR]

(``--sessions 0`` or ``--doublings 0`` leaves that part out.)

1. **Throughput.** Generates a folder of ``--sessions`` synthetic Claude Code sessions
   (``benchmarks/_session_builder.py``: 2.1-style records, progress and snapshots, one or two
   compactions each with a nine-section summary; one in ten has none and is skipped) and grades it
   the way ``ctxeval grade FOLDER`` does, with every built-in grader (the llm ones with the offline
   reference judge) in ``--workers`` processes (default: one per core). Prints MB of transcript per
   second of wall time, and per CPU-second summed over the workers (what the code costs, whatever
   else the machine is running; the load average is printed beside it).
2. **Linearity.** One session (a mixed one, then one where every call fails or edits a file) doubled ``--doublings`` times (records x2 each step): reading and
   grading (with the "what was lost" facts ``--json`` writes) timed separately in CPU seconds of
   this process; prints the time ratio of each doubling (linear: ~2.0).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _session_builder import build_session

from pytest_ctxeval.grading.folders import _setup, _WORKER, find_sessions, folder_document, grade_paths
import pytest_ctxeval.cli  # noqa: F401 - as `ctxeval grade` runs: the CLI's imports are paid before the workers fork
from pytest_ctxeval.grading.registry import cases_from_transcript
from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.grading.lost import lost_facts
from pytest_ctxeval.options import RunOptions
from pytest_ctxeval.transcript import read_transcript


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def throughput(folder: Path, sessions: int, workers: int) -> None:
    total = 0
    for i in range(sessions):
        rounds = 6 + (i * 37) % 30                        # 6 - 35 requests: ~0.15 - 1 MB
        comps = 0 if i % 10 == 9 else (2 if i % 4 == 0 else 1)
        sub = folder / f"project-{i % 7}"
        sub.mkdir(parents=True, exist_ok=True)
        total += build_session(sub / f"s{i:03d}.jsonl", rounds=rounds, seed=i, compactions=comps, dangling=i % 3 == 0)
    files = find_sessions([str(folder)])
    graders = [s.name for s in load_graders().select(None)]
    options = RunOptions(backend="offline")
    start, cpu0 = time.perf_counter(), _cpu()
    results = list(grade_paths(files, options=options, workers=workers))
    wall, cpu = time.perf_counter() - start, _cpu() - cpu0
    doc = folder_document(results, paths=[str(folder)], graders=graders, workers=workers, seconds=wall)
    s = doc["summary"]
    mb = total / 1e6
    print(f"folder: {len(files)} sessions, {mb:.1f} MB; {s['graded']} graded ({s['compactions']} compactions), "
          f"{s['skipped']} skipped, {s['errors']} errors; {len(graders)} graders")
    print(f"wall: {wall:.2f} s on {workers} workers -> {mb / wall:.1f} MB/s")
    print(f"cpu:  {cpu:.2f} CPU-s -> {mb / cpu:.1f} MB per CPU-second ({workers} cores: "
          f"{workers * mb / cpu:.1f} MB/s with the cores to ourselves); load average {os.getloadavg()[0]:.1f}")


def linearity(folder: Path, doublings: int, *, errors: bool = False) -> None:
    """``errors``: every call fails or edits a file (each error and file distinct), so the sections
    searched for each of them grow with the session: the case that was quadratic."""
    _setup(None, [], RunOptions(backend="offline"))
    registry, specs, judge = _WORKER["registry"], _WORKER["specs"], _WORKER["judge"]
    rows = []
    rounds = 250
    extra = {"tools": ("Bash", "Edit"), "error_rate": 1.0} if errors else {}
    for _step in range(doublings + 1):
        path = folder / f"long-{rounds}.jsonl"
        size = build_session(path, rounds=rounds, seed=7, compactions=2, **extra)
        best_read = best_grade = float("inf")
        for _ in range(2):                 # the better of two runs: a shared machine's noise only adds
            t0 = time.process_time()       # CPU time: the machine's other load does not blur the ratios
            transcript = read_transcript(path)
            t1 = time.process_time()
            for case in cases_from_transcript(transcript):
                case.judge = judge
                registry.run(case, specs)
                lost_facts(case.summarized, case.post_messages, case.history)   # what `grade --json` adds
            t2 = time.process_time()
            best_read, best_grade = min(best_read, t1 - t0), min(best_grade, t2 - t1)
        records = sum(1 for _ in path.open("rb"))
        rows.append((records, size, best_read, best_grade))
        path.unlink()
        rounds *= 2
    print(f"\n({'every call an error or an edit' if errors else 'a mixed session'}; CPU seconds, this process)\n{'records':>8} {'MB':>6} {'read s':>7} {'grade s':>8} {'x read':>7} {'x grade':>8} {'x total':>8}")
    prev = None
    for records, size, r, g in rows:
        ratios = ("", "", "") if prev is None else (f"{r / prev[2]:.2f}", f"{g / prev[3]:.2f}",
                                                     f"{(r + g) / (prev[2] + prev[3]):.2f}")
        print(f"{records:>8,} {size / 1e6:>6.1f} {r:>7.2f} {g:>8.2f} {ratios[0]:>7} {ratios[1]:>8} {ratios[2]:>8}")
        prev = (records, size, r, g)
    worst = max((b[2] + b[3]) / (a[2] + a[3]) for a, b in zip(rows, rows[1:]))
    overall = ((rows[-1][2] + rows[-1][3]) / (rows[0][2] + rows[0][3])) ** (1 / (len(rows) - 1))
    print(f"worst doubling ratio (read + grade): {worst:.2f}; mean per doubling: {overall:.2f} (linear: 2.0)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=120)
    ap.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--doublings", type=int, default=3)
    ap.add_argument("--keep", help="generate into this folder and keep it (else a temporary one)")
    args = ap.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ctxeval-grade-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"machine: {platform.machine()}, {len(os.sched_getaffinity(0))} cores, Python {platform.python_version()}")
    try:
        if args.sessions:
            throughput(folder / "projects", args.sessions, args.workers)
        if args.doublings:
            linearity(folder, args.doublings)
            linearity(folder, args.doublings, errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
