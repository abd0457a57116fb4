"""What a full real run of the built-in library costs and how long it waits (issue 21; not a test).

    python benchmarks/real_run.py [--latency 1.0] [--concurrency 8] [--price-as claude-sonnet-5-5]

In one run, offline (the reference model behind the anthropic SDK, no key, no network):

* **Cost**: ``ctxeval run`` over the built-in scenarios, every grader: as the requests were before
  issue 21 without caching ("today": a fresh call per probe question, a judgement per probe answer
  and per drift generation; ``Judge.combined = False``), and as they are now (every probe of a
  context, and every drift generation, in one judgement) without and with prompt caching
  (``--prompt-caching off|on``). The reference model accounts cache writes and reads as the
  API does (:mod:`pytest_ctxeval.llm.prompt_cache`), so each run's usage is what the real run would
  be billed; both are priced at the list prices of ``--price-as`` (the default summariser and
  judge model). Printed: the three costs, whether every verdict is the same in the three runs, and
  ``cost ratio`` (now with caching / today's).
* **Wall time**: ``pytest --ctxeval scenarios/`` with the reference model answering after
  ``--latency`` seconds (``--ctxeval-offline-latency``), once as before this issue (scenarios one
  after another; each scenario's own independent calls still concurrent) and once with scenarios
  running concurrently under the one ``--ctxeval-concurrency`` limit. The bound is
  ``1.5 x max(longest chain x latency, all calls x latency / concurrency)``; a scenario's chain of
  calls is at most its number of calls, so the script prints the bound with that (an upper
  bound of the chain; when it is below the second term, the bound is exact). Printed: both wall
  times, ``wall ratio`` (concurrent / bound) and the speed-up over the serial run; the results of
  the two runs are compared (they must be identical).

The machine is shared: wall times move with its load, the ratios less so.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def library_cost(caching: str, out: Path, votes: int, combined: bool = True) -> dict:
    """The run's usage; ``combined=False``: the requests as they were before issue 21 (a fresh call
    per probe, a judgement per probe answer and per drift generation)."""
    from pytest_ctxeval.cli import main
    from pytest_ctxeval.grading.judging import Judge

    Judge.combined = combined
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(["run", str(ROOT / "scenarios"), "--prompt-caching", caching, "--judge-votes", str(votes),
                         "--json", str(out)])
    finally:
        Judge.combined = True
    if code not in (0, 1):
        raise SystemExit(f"ctxeval run exited {code}")
    return json.loads(out.read_text())["usage"]


def verdicts(out: Path) -> dict:
    """Every grader's status and score per scenario: the layouts must grade alike."""
    return {(s["name"], g): (v["status"], v.get("score")) for s in json.loads(out.read_text())["scenarios"]
            for g, v in s["graders"].items()}


def priced(usage: dict, model: str) -> float:
    from pytest_ctxeval.llm.pricing import cost_of

    return sum(cost_of(model, row) for row in usage["by_model"].values())


class _Probe:
    """A pytest plugin: scenarios one after another (``serial``), as before this issue; records
    the most model calls one scenario made."""

    def __init__(self, serial: bool):
        self.serial = serial
        self.most_calls = 0

    def pytest_collection_finish(self, session) -> None:
        from pytest_ctxeval.session import SESSION

        if self.serial:
            session.config.stash[SESSION]._prefetched = True

    def pytest_sessionfinish(self, session) -> None:
        from pytest_ctxeval.session import SESSION

        entries = session.config.stash[SESSION].entries.values()
        self.most_calls = max((e["usage"].get("api_calls", 0) for e in entries), default=0)


def timed_suite(latency: float, concurrency: int, report: Path, serial: bool) -> tuple[float, int]:
    import pytest

    args = ["--ctxeval", str(ROOT / "scenarios"), "-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT),
            "--ctxeval-offline-latency", str(latency), "--ctxeval-concurrency", str(concurrency),
            "--ctxeval-report", str(report)]
    probe = _Probe(serial)
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = pytest.main(args, plugins=[probe])
    wall = time.perf_counter() - started
    if code not in (0, 1):
        raise SystemExit(f"pytest exited {code}")
    return wall, probe.most_calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency", type=float, default=1.0, help="seconds the offline model takes per reply")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--price-as", default="claude-sonnet-5-5", help="the model whose list prices cost the run")
    ap.add_argument("--votes", type=int, default=1, help="judge votes (the library's default is 1)")
    ap.add_argument("--cost-only", action="store_true", help="skip the wall-time runs")
    ap.add_argument("--no-serial", action="store_true", help="skip the serial run (slow at a long latency)")
    args = ap.parse_args()
    os.chdir(ROOT)
    print(f"machine: {platform.machine()}, {len(os.sched_getaffinity(0))} cores, Python {platform.python_version()}"
          f" (shared: wall times move with its load)")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        today = library_cost("off", work / "today.json", args.votes, combined=False)
        off = library_cost("off", work / "off.json", args.votes)
        on = library_cost("on", work / "on.json", args.votes)
        usd_today, usd_off, usd_on = (priced(u, args.price_as) for u in (today, off, on))
        print(f"\nthe built-in library, every grader, judge votes {args.votes}, priced as {args.price_as}:")
        for label, u, usd in (("today (a request per probe and per judgement, no caching)", today, usd_today),
                              ("one judgement per context, no caching", off, usd_off),
                              ("one judgement per context, caching", on, usd_on)):
            print(f"  {label}:\n    {u['api_calls']} calls, {u['input_tokens']:,} input, "
                  f"{u['cache_creation_input_tokens']:,} cache-write, {u['cache_read_input_tokens']:,} cache-read, "
                  f"{u['output_tokens']:,} output tokens: ${usd:.4f}")
        same = verdicts(work / "today.json") == verdicts(work / "on.json") == verdicts(work / "off.json")
        print(f"  every grader's verdict and score the same in the three runs: {'yes' if same else 'NO'}")
        print(f"caching alone: {usd_on / usd_off:.3f}")
        print(f"cost ratio: {usd_on / usd_today:.3f}   (with caching / today's; target <= 0.5)   "
              f"{'met' if usd_on <= usd_today / 2 else 'NOT met'}")

        if args.cost_only:
            return
        serial = None
        if not args.no_serial:
            serial, _ = timed_suite(args.latency, args.concurrency, work / "serial.json", serial=True)
        concurrent, chain = timed_suite(args.latency, args.concurrency, work / "concurrent.json", serial=False)
        calls = json.loads((work / "concurrent.json").read_text())["usage"]["api_calls"]
        same = serial is None or (json.loads((work / "serial.json").read_text())
                                  == json.loads((work / "concurrent.json").read_text()))
        bound = 1.5 * max(chain * args.latency, calls * args.latency / args.concurrency)
        print(f"\npytest --ctxeval scenarios/ with the model answering after {args.latency:g} s, "
              f"--ctxeval-concurrency {args.concurrency}: {calls} calls, the most of one scenario {chain}")
        if serial is not None:
            print(f"  scenarios one after another: {serial:.1f} s; concurrently: {concurrent:.1f} s "
                  f"({serial / concurrent:.1f}x); results identical: {'yes' if same else 'NO'}")
        else:
            print(f"  concurrently: {concurrent:.1f} s (serial run skipped)")
        print(f"  bound: 1.5 x max({chain} x {args.latency:g}, {calls} x {args.latency:g} / {args.concurrency}) "
              f"= {bound:.1f} s")
        print(f"wall ratio: {concurrent / bound:.3f}   (target <= 1)   {'met' if concurrent <= bound else 'NOT met'}")
        if not same:
            sys.exit(1)


if __name__ == "__main__":
    main()
