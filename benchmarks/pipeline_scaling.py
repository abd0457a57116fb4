"""Per-request pipeline time against history length (issue 7; not a test: run by hand).

    python benchmarks/pipeline_scaling.py [--sizes 100,1000,10000] [--rounds 41] [--naive-rounds 4] [--repeat 3]

A session of the realistic mix in ``_workload.py`` (tool rounds, results up to 90K chars that tier 1
persists, screenshots, thinking, repeated reads and edits, an idle gap now and then; the budgets of
a 200K window, auto-compaction out of reach so the history only grows) is grown to 100, 1,000 and
10,000 messages. Then one round at a time is appended and ``ContextManager.prepare`` is timed for
the request that follows it (tiers 1-3, the anchored count, the body): the incremental pipeline
first, then the naive one on the same session (its request view swapped for
:class:`~pytest_ctxeval.engine.naive.NaiveView`; the tier state lives in the ContextManager, so
nothing else changes). ``json.dumps`` of each request is timed right after it, as the request is
serialised to be sent (the practical floor; it also leaves the caches cold for the next request,
as in a real run). The run keeps every request, as a real run does.

Three kinds of incremental round: *warm* (back to back), *cold* (right after serialising the
previous request: the realistic loop, but a 10,000-message request is ~30 MB of JSON and evicts the
CPU caches while a 100-message one does not, so cold compares cache states as well as history
lengths) and *flushed* (right after serialising the same 30 MB ballast at every size: caches
evicted alike, so only the history differs). The profile showed that the pipeline's own work per
round is the same at 100 and 10,000 messages once the caches are alike; what grows is the body's
``messages`` list.

The incremental time is split in two: the body's ``messages`` list (a new list holding one
reference per API message, shared dicts: earlier bodies are kept and must not change) and the rest
(tiers 1-3 on the new round, the count, the new API messages, the bookkeeping).

Each size runs in a fresh interpreter (a 100-message session is not charged for the heap of a
10,000-message one), ``--repeat`` times, the sizes alternating so the machine's noise falls on all
of them alike. Figures are medians over the rounds, then the median of the repeats.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _workload import Workload

from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine.naive import NaiveView


def machine() -> str:
    import os

    return (f"{platform.processor() or platform.machine()}, {len(os.sched_getaffinity(0))} cores, "
            f"Python {platform.python_version()}, {platform.system()}")


#: Per-request times are the thread's CPU time (``CLOCK_THREAD_CPUTIME_ID``, ns resolution): on a
#: shared machine, time spent descheduled is not the pipeline's. Cache misses and the garbage
#: collector are counted.
clock = time.thread_time

#: Serialised before a "flushed" round, at every size: as much data as a 10,000-message request
#: (about 30 MB of JSON), so every size starts that round with caches evicted alike.
BALLAST = [{"type": "text", "text": f"{i:08d}" + "x" * 3_000} for i in range(10_000)]


def one(size: int, rounds: int, naive_rounds: int) -> dict[str, float]:
    """In this interpreter: grow a session to ``size`` messages, time rounds (medians, µs)."""
    root = Path(tempfile.mkdtemp(prefix="ctxeval-scaling-"))
    w = Workload(root, EngineConfig(context_window=10**9), seed=size, gaps=True)
    w.timer = clock
    started = time.perf_counter()
    while len(w.cm.messages) < size:
        w.round()
    build = time.perf_counter() - started
    # The timed rounds draw the same content at every size: only the history differs.
    w.rnd = random.Random(2026)

    listing = [0.0]
    body_list = w.cm._tiers.api_messages

    def api_messages() -> list:  # the body's list, timed
        t = clock()
        out = body_list()
        listing[0] = clock() - t
        return out

    w.cm._tiers.api_messages = api_messages

    def timed(n: int) -> dict[str, list[float]]:
        """``n`` pairs: serialise the last request (timed), a round right after it (cold caches,
        as in a real loop), then a round back to back (warm)."""
        out: dict[str, list[float]] = {"cold": [], "warm": [], "flushed": [], "cold_list": [], "warm_list": [],
                                       "flushed_list": [], "json": []}
        for _ in range(n):
            json.dumps(BALLAST)
            listing[0] = 0.0
            w.round()
            out["flushed"].append(w.last_prepare_seconds)
            out["flushed_list"].append(listing[0])
            t = clock()
            json.dumps(w.last_prepared.body)
            out["json"].append(clock() - t)
            for kind in ("cold", "warm"):
                listing[0] = 0.0
                w.round()
                out[kind].append(w.last_prepare_seconds)
                out[f"{kind}_list"].append(listing[0])
        return out

    inc = timed(rounds)
    w.cm._tiers = NaiveView(w.cm)  # the same session from here, re-derived on every request
    naive = timed(naive_rounds)
    w.close()

    def med(xs: list[float]) -> float:
        return statistics.median(xs) * 1e6

    return {"size": size, "messages": len(w.cm.messages), "build_s": build,
            "persisted": sum(e.action == "persisted" for e in w.cm.events),
            "warm_us": med(inc["warm"]), "cold_us": med(inc["cold"]), "list_us": med(inc["cold_list"]),
            "warm_rest_us": med([t - x for t, x in zip(inc["warm"], inc["warm_list"])]),
            "cold_rest_us": med([t - x for t, x in zip(inc["cold"], inc["cold_list"])]),
            "flushed_us": med(inc["flushed"]),
            "flushed_rest_us": med([t - x for t, x in zip(inc["flushed"], inc["flushed_list"])]),
            "naive_us": med(naive["warm"] + naive["cold"]), "json_us": med(inc["json"])}

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100,1000,10000")
    ap.add_argument("--rounds", type=int, default=41, help="timed rounds of each kind per size and repeat, incremental")
    ap.add_argument("--naive-rounds", type=int, default=4, help="timed round pairs per size and repeat, naive")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.rounds, args.naive_rounds)))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    runs: dict[int, list[dict[str, float]]] = {s: [] for s in sizes}
    for _ in range(args.repeat):
        for size in sizes:
            out = subprocess.run([sys.executable, __file__, "--one", str(size), "--rounds", str(args.rounds),
                                  "--naive-rounds", str(args.naive_rounds)], capture_output=True, text=True, check=True)
            runs[size].append(json.loads(out.stdout))
    print(f"machine: {machine()}")
    print(f"{args.repeat} runs per size, each a fresh interpreter; thread CPU time, medians of {args.rounds} "
          f"incremental rounds of each kind and {2 * args.naive_rounds} naive rounds per run, then the median of the runs")
    keys = ("warm_us", "flushed_us", "cold_us", "list_us", "warm_rest_us", "flushed_rest_us", "cold_rest_us",
            "naive_us", "json_us", "persisted")
    rows = [(size, {k: statistics.median(x[k] for x in runs[size]) for k in keys}) for size in sizes]
    print(f"\nµs per request  {'warm':>7} {'flushed':>8} {'cold':>7} {'list':>6} {'naive':>10} {'naive/warm':>11} "
          f"{'json.dumps':>11} {'cold/json':>10}")
    for size, r in rows:
        print(f"{size:>6,} msgs   {r['warm_us']:>7,.0f} {r['flushed_us']:>8,.0f} {r['cold_us']:>7,.0f} {r['list_us']:>6,.0f} "
              f"{r['naive_us']:>10,.0f} {r['naive_us'] / r['warm_us']:>10,.0f}x {r['json_us']:>11,.0f} "
              f"{r['cold_us'] / r['json_us']:>10.3f}")
    print("warm: rounds back to back; flushed: right after serialising the same 30 MB at every size (caches\n"
          "evicted alike); cold: right after serialising the previous request (as in a real loop: at 10,000\n"
          "messages that request is ~30 MB, at 100 it is small, so the caches differ as well as the history);\n"
          "list: of cold, building the body's messages list (one reference per API message, O(history))")
    print("tier-1 persisted results in the sessions: " + ", ".join(f"{r['persisted']:.0f}" for _, r in rows) + "\n")
    (s0, first), (s1, last) = rows[0], rows[-1]
    for kind, target in (("warm", True), ("flushed", True), ("cold", False)):
        growth = last[f"{kind}_us"] / first[f"{kind}_us"]
        rest = last[f"{kind}_rest_us"] / first[f"{kind}_rest_us"]
        verdict = ("met" if growth <= 2 else "NOT met") if target else "not a like-for-like target (see cold above)"
        print(f"t({s1:,}) / t({s0:,}), {kind + ':':8} {growth:5.2f}   (target <= 2)   {verdict}; "
              f"without the body's list {rest:.2f}")
    speedup = last["naive_us"] / last["warm_us"]
    print(f"naive / incremental at {s1:,}: {speedup:,.0f}x   (target >= 50)   {'met' if speedup >= 50 else 'NOT met'}")
    ratios = [r["cold_us"] / r["json_us"] for _, r in rows]
    over = [f"{s:,}" for (s, _), x in zip(rows, ratios) if x > 0.1]
    print(f"pipeline (cold) / json.dumps: {', '.join(f'{x:.3f}' for x in ratios)}   (target <= 0.1)   "
          f"{'met' if not over else 'NOT met at ' + ', '.join(over)}")


if __name__ == "__main__":
    main()
