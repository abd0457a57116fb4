"""A 10,000-turn session, offline, end to end (issue 7; not a test: run by hand).

    python benchmarks/long_session.py [--days 5] [--naive] [--keep FILE]

Writes a scenario of over 10,000 turns as YAML (nested ``repeat`` blocks over the filler helpers:
rounds of Reads, greps, failing and passing test runs, edits, parallel calls, fetches and todo
updates; a person-typed request and a pasted screenshot every ~100 turns; a 1,500-line build log
that tier 1 persists; re-reads of unchanged files (tier 2); a 75-minute break every ~2,000 turns
(tier 3)), on the real 200,000-token window, and runs it the way
``ctxeval run`` does: :func:`pytest_ctxeval.runner.run_scenario` with the offline backend (the
reference model behind the anthropic SDK: every compaction is a real request with a real
summary), the transcript and persisted results on disk, every request kept.

The run happens in a fresh interpreter, which reports its wall time (loading and expanding the
scenario, then the run) and its peak RSS (``ru_maxrss``, the interpreter and its imports included).
With ``--naive`` the same session also runs on the naive pipeline, for comparison (slow).
A speed probe before and after the run (``benchmarks/_machine.py``) says whether the machine
slowed down meanwhile: on a virtual machine with burstable CPU the same run takes 3.7 s or 7 s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _machine import speed_note, speed_probe  # benchmarks/, the script's folder

_ROUND = """
- assistant: "Reading the {{ @M@ }} module."
  tools:
    - {name: Read, input: {file_path: "src/{{ @M@ }}/core_{{ r }}_{{ k }}.py"}, result: "{{ python_file(lines=170, seed=g * 1000 + r * 100 + k, name=@M@) }}"}
- assistant: "Searching for the callers."
  tools:
    - {name: Grep, input: {pattern: "{{ @M@ }}_handler", path: src}, result: "{{ grep_hits(n=15, pattern=@M@ ~ '_handler', seed=k) }}"}
- assistant: "Running the tests of {{ @M@ }}."
  tools:
    - {name: Bash, input: {command: "pytest tests/test_{{ @M@ }}.py -q"}, error: "{{ test_output(passed=30, failed=['tests/test_' ~ @M@ ~ '.py::test_case_' ~ k], seed=k) }}"}
- assistant: "test_case_{{ k }} fails; fixing the handler."
  tools:
    - {name: Edit, input: {file_path: "src/{{ @M@ }}/core_{{ r }}_{{ k }}.py", old_string: "return None", new_string: "return result"}, result: "The file src/{{ @M@ }}/core_{{ r }}_{{ k }}.py has been updated."}
- assistant: "Checking the shared API module and the service log in parallel."
  tools:
    - {name: Read, input: {file_path: "src/{{ @M@ }}/api.py"}, result: "{{ python_file(lines=40, seed=@M@, name='api') }}"}
    - {name: Bash, input: {command: "tail -n 30 logs/{{ @M@ }}.log"}, result: "{{ log(lines=30, seed=k, service=@M@) }}"}
- assistant: "The fix holds; test_case_{{ k }} passes now."
  tools:
    - {name: Bash, input: {command: "pytest tests/test_{{ @M@ }}.py -q"}, result: "{{ test_output(passed=31, seed=k) }}"}
- assistant: "Fetching the API response the page renders."
  tools:
    - {name: WebFetch, input: {url: "https://api.example.com/{{ @M@ }}?page={{ k }}"}, result: "{{ json_response(items=4, seed=k) }}"}
- assistant: "Updating the todo list."
  tools:
    - {name: TodoWrite, input: {todos: [{content: "fix {{ @M@ }} case {{ k }}", status: completed}, {content: "review {{ g }}.{{ r + 1 }}", status: pending}]}, result: "Todos have been modified successfully."}
- assistant: "Round {{ g }}.{{ r }}.{{ k }} done: src/{{ @M@ }}/core_{{ r }}_{{ k }}.py returns the result again, tests pass."
"""

_SCENARIO = """\
name: long_session_benchmark
description: A generated session of over 10,000 turns for benchmarks/long_session.py.
vars:
  mods: [auth, billing, search, orders, users, jobs]
turns:
  - user: "We are going through every module of the service, one failing case at a time. Never change the database schema."
  - repeat: {days}
    var: g
    turns:
      - repeat: 10
        var: r
        turns:
          - user: "Part {{{{ g }}}}.{{{{ r }}}}: {{{{ lorem(14, seed=g * 100 + r) }}}} Keep the public API of every module stable."
          - repeat: 11
            var: k
            turns:{first}
          - user: [{{type: text, text: "Part {{{{ g }}}}.{{{{ r }}}}: this is what the dashboard shows now."}}, {{type: image, source: {{type: base64, media_type: image/png, data: "{{{{ png(seed=g * 100 + r) }}}}"}}}}]
          - repeat: 11
            var: k
            turns:{second}
          - assistant: "Building the whole project."
            tools:
              - {{name: Bash, input: {{command: "make build 2>&1"}}, result: "{{{{ log(lines=1500, seed=g * 100 + r, service='make') }}}}"}}
      - after: 75m
"""


def scenario_text(days: int) -> str:
    """The scenario: ``days`` × (10 parts × (2 typed messages, 22 rounds of 9 turns, a build), a
    75-minute break), about 2,011 turns a day."""
    def rounds(first: bool) -> str:
        body = _ROUND.replace("@M@", "mods[(k + %d) %% 6]" % (0 if first else 3))  # the round's module
        return body.replace("\n", "\n              ").rstrip()
    return _SCENARIO.format(days=days, first=rounds(True), second=rounds(False))


_PROBE = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from pytest_ctxeval.scenario.expansion import expand
from pytest_ctxeval.scenario.schema import load_scenario
from pytest_ctxeval.runner import run_scenario
import pytest_ctxeval.runner as runner
# The model client's module, and with it the anthropic SDK (the runner no longer imports it when
# it loads): an import like the others, counted with the interpreter's, not in the run.
from pytest_ctxeval.llm.base import LLM
imported = time.perf_counter()
cpu0 = time.process_time()
path, out, naive = sys.argv[1], sys.argv[2], sys.argv[3] == "naive"
if naive:  # the same run on the naive request view
    from pytest_ctxeval.engine import pipeline
    real = pipeline.ContextManager.__init__
    def init(self, *a, **kw):
        real(self, *a, naive=True, **kw)
    pipeline.ContextManager.__init__ = init
model_s = [0.0]
real_complete = LLM.complete
def complete(self, *a, **kw):  # the model's share of the run: the SDK request, the offline model
    t = time.perf_counter()
    try:
        return real_complete(self, *a, **kw)
    finally:
        model_s[0] += time.perf_counter() - t
LLM.complete = complete
scenario = load_scenario(path)
loaded = time.perf_counter()
expanded = expand(scenario)
expanded_at = time.perf_counter()
cpu_expanded = time.process_time()
runner.expand = lambda s: expanded  # expanded once, timed apart
result = run_scenario(scenario, session_dir=out)
done = time.perf_counter()
cpu_done = time.process_time()
print(json.dumps({
    "turns": len(expanded.steps), "import_s": imported - t0, "load_s": loaded - imported,
    "expand_s": expanded_at - loaded, "run_s": done - expanded_at, "model_s": model_s[0],
    "cpu_s": cpu_done - cpu0, "expand_cpu_s": cpu_expanded - cpu0, "run_cpu_s": cpu_done - cpu_expanded,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "compactions": len(result.compactions), "requests": len(result.requests), "events": len(result.events),
    "kinds": sorted({f"{e.tier}/{e.action}" for e in result.events}),
    "messages": len(result.history), "transcript_mb": result.transcript_path.stat().st_size / 1e6,
    "model_calls": result.usage.get("api_calls"),
}))
"""


def run(path: Path, mode: str) -> dict:
    out = Path(tempfile.mkdtemp(prefix=f"ctxeval-long-{mode}-"))
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _PROBE, str(path), str(out), mode], capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    if proc.returncode:
        raise SystemExit(proc.stderr[-3000:])
    data = json.loads(proc.stdout)
    data["process_s"] = time.perf_counter() - started
    return data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=int, default=5, help="repeats of ~2,011 turns (10 parts and a 75-minute break)")
    ap.add_argument("--naive", action="store_true", help="also run the session on the naive pipeline (slow)")
    ap.add_argument("--keep", help="write the scenario here instead of a temporary file")
    args = ap.parse_args()
    path = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ctxeval-long-")) / "long_session.yaml"
    path.write_text(scenario_text(args.days), encoding="utf-8")
    print(f"machine: {platform.machine()}, {len(os.sched_getaffinity(0))} cores, Python {platform.python_version()}")
    for mode in ("incremental", "naive") if args.naive else ("incremental",):
        probe = speed_probe()
        r = run(path, mode)
        probe_after = speed_probe()
        wall = r["load_s"] + r["expand_s"] + r["run_s"]
        print(f"\n{mode}: {r['turns']:,} turns, {r['requests']:,} requests, {r['compactions']} compactions, "
              f"{r['model_calls']} model calls, {r['messages']:,} messages in the transcript ({r['transcript_mb']:.0f} MB)")
        print(f"  tiers: {', '.join(r['kinds'])}")
        print(f"  {'load (YAML, schema)':<24}{r['load_s']:>7.2f} s")
        print(f"  {'expand (templates)':<24}{r['expand_s']:>7.2f} s")
        print(f"  {'run (engine, model)':<24}{r['run_s']:>7.2f} s   of which the {r['model_calls']} model calls "
              f"{r['model_s']:.2f} s (SDK and offline model), the engine {r['run_s'] - r['model_s']:.2f} s")
        print(f"  {'wall':<24}{wall:>7.2f} s   (target <= 5 s)     {'met' if wall <= 5 else 'NOT met'}")
        print(f"  {'CPU (user+sys)':<24}{r['cpu_s']:>7.2f} s   (load and expand {r['expand_cpu_s']:.2f} s, run "
              f"{r['run_cpu_s']:.2f} s; on a busy machine the wall time is longer than this)")
        print(f"  {'peak RSS':<22}{r['peak_rss_mb']:>8.0f} MB  (target <= 300 MB)  {'met' if r['peak_rss_mb'] <= 300 else 'NOT met'}")
        print(f"  {'compactions':<22}{r['compactions']:>8}     (target >= 20)      {'met' if r['compactions'] >= 20 else 'NOT met'}")
        print(f"  (the interpreter with its imports: {r['import_s']:.2f} s more; whole process {r['process_s']:.2f} s)")
        print(f"  {speed_note(probe, probe_after)}")


if __name__ == "__main__":
    main()
