"""Scenarios run concurrently under the one ``--ctxeval-concurrency`` limit (issue 21): the
results, reports and cassettes are those of a serial run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ctxeval.llm.server import ApiServer

LIBRARY = Path(__file__).resolve().parent.parent / "scenarios"
# Three built-in scenarios with probes, drift and two compactions each.
CHOSEN = [str(LIBRARY / f"{name}.yaml") for name in ("auth_refactor", "idle_gap", "debug_failing_test")]


def run(pytester: pytest.Pytester, report: Path, *options: str) -> dict:
    result = pytester.runpytest("--ctxeval", *CHOSEN, "-p", "no:cacheprovider", "--ctxeval-report", str(report),
                                *options)
    assert result.ret == 0, result.stdout.str()[-2000:]
    return json.loads(report.read_text(encoding="utf-8"))


def test_offline_concurrent_run_gives_the_serial_results(pytester: pytest.Pytester, tmp_path: Path) -> None:
    # Two judge votes: the second vote of each judgement reads the prompt the first one cached.
    latency = ("--ctxeval-offline-latency", "20ms", "--ctxeval-judge-votes", "2")
    serial = run(pytester, tmp_path / "serial.json", *latency, "--ctxeval-concurrency", "1")
    concurrent = run(pytester, tmp_path / "concurrent.json", *latency, "--ctxeval-concurrency", "8")
    assert concurrent == serial
    assert serial["usage"]["cache_read_input_tokens"] > 0  # later votes read their prompt from the cache
    assert {s["name"] for s in serial["scenarios"]} == {"auth_refactor", "idle_gap", "debug_failing_test"}


def _files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*.json"))}


def test_socket_server_cassettes_of_a_concurrent_run_are_the_serial_ones(pytester: pytest.Pytester, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    docs, cassettes, in_flight = {}, {}, {}
    for label, concurrency in (("serial", "1"), ("concurrent", "4")):
        with ApiServer() as server:  # a fresh server each time: its prompt cache starts empty
            server.wire.delay = 0.02
            for key, value in server.environ().items():
                monkeypatch.setenv(key, value)
            docs[label] = run(pytester, tmp_path / f"{label}.json", "--ctxeval-backend", "record",
                              "--ctxeval-cassettes", str(tmp_path / label), "--ctxeval-concurrency", concurrency)
            in_flight[label] = server.wire.max_in_flight
        cassettes[label] = _files(tmp_path / label)
    assert in_flight["serial"] == 1 and 1 < in_flight["concurrent"] <= 4  # the one limit held, and was used
    # 5 compactions, 4 forced re-compactions (drift), 5 intent, 3 probe and 3 drift judgements
    assert cassettes["concurrent"] == cassettes["serial"] and len(cassettes["serial"]) >= 20
    assert docs["concurrent"] == docs["serial"]


@pytest.mark.parametrize(("text", "seconds"), [("2s", 2.0), ("250ms", 0.25), ("0.5", 0.5), ("0", 0.0)])
def test_the_offline_latency_reads_as_a_duration(text: str, seconds: float) -> None:
    from pytest_ctxeval.options import duration

    assert duration(text) == seconds


@pytest.mark.parametrize("text", ["soon", "-1s", "2h"])
def test_a_bad_offline_latency_says_what_it_expects(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_ctxeval.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["run", f"--offline-latency={text}"])
    assert exc.value.code == 2
    assert "duration" in capsys.readouterr().err


def test_the_offline_latency_is_waited_for_each_reply() -> None:
    import time

    from pytest_ctxeval.llm import make_llm

    llm = make_llm("offline", latency=0.2)
    started = time.monotonic()
    llm.complete_many([{"task": "chat", "messages": [{"role": "user", "content": f"hi {i}"}]} for i in range(4)])
    took = time.monotonic() - started
    assert took >= 0.2  # each reply comes 0.2 s after its request; four in flight at once take one wait
    assert llm.usage.api_calls == 4


@pytest.mark.parametrize(("backend", "latency", "jobs", "threads"), [
    ("offline", 0.0, 10, 1),      # nothing waits: one after another
    ("offline", 0.02, 10, 8),     # the simulated latency is waited for: side by side, up to the limit
    ("offline", 0.02, 3, 3),
    ("replay", 0.0, 10, 8),       # a recording stands in for a real endpoint
    ("anthropic", 0.0, 1, 1),
])
def test_runs_go_side_by_side_only_when_requests_wait(backend: str, latency: float, jobs: int, threads: int,
                                                      tmp_path: Path) -> None:
    from pytest_ctxeval.options import RunOptions

    (tmp_path / "c").mkdir()
    options = RunOptions(backend=backend, offline_latency=latency, cassettes=tmp_path / "c")
    assert options.side_by_side(jobs) == threads
    assert options.waits_on_model == (threads > 1 or backend != "offline")


def _threads_used(llm, n: int = 4) -> set[int]:
    import threading

    seen: set[int] = set()
    real = llm.complete

    def complete(**kw):
        seen.add(threading.get_ident())
        return real(**kw)

    llm.complete = complete
    llm.complete_many([{"task": "chat", "messages": [{"role": "user", "content": f"hi {i}"}]} for i in range(n)])
    return seen


def test_offline_votes_without_a_latency_are_sent_one_after_another() -> None:
    import threading

    from pytest_ctxeval.llm import make_llm

    assert _threads_used(make_llm("offline")) == {threading.get_ident()}  # no pool: the caller's thread
    assert len(_threads_used(make_llm("offline", latency=0.05))) > 1     # a latency to overlap: threads


def test_offline_compare_and_run_start_no_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # Offline without a latency, `ctxeval run` and `ctxeval compare` run one scenario after another
    # and send the judge's votes one after another, on the caller's thread (threads would only take
    # turns); the results are a concurrent run's.
    import threading

    from pytest_ctxeval.cli import main

    def refused(self, *a, **kw):
        raise AssertionError(f"a thread was started for a run that waits on nothing: {self.name}")

    chosen = CHOSEN[:2]
    votes = ("--judge-votes", "3")  # several requests per judgement: LLM.complete_many
    monkeypatch.setattr(threading.Thread, "start", refused)
    assert main(["run", *chosen, *votes, "--json", str(tmp_path / "serial.json")]) == 0
    assert main(["compare", "--compactors", "claude_code,codex", *chosen, *votes,
                 "--json", str(tmp_path / "cmp.json")]) == 0
    monkeypatch.undo()
    assert main(["run", *chosen, *votes, "--json", str(tmp_path / "threads.json"), "--offline-latency", "10ms"]) == 0
    capsys.readouterr()
    serial, threads = (json.loads((tmp_path / f).read_text(encoding="utf-8")) for f in ("serial.json", "threads.json"))
    assert [s["graders"] for s in serial["scenarios"]] == [s["graders"] for s in threads["scenarios"]]


@pytest.mark.parametrize("fault", ["server_error", "overloaded", "timeout"])
def test_a_fault_plan_is_shared_out_as_by_requests_side_by_side(fault: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The offline model hands out a task's scripted faults in the order requests arrive. Side by
    # side, each of three votes takes one fault and its retry succeeds; one after another, the
    # first would take all three and use up its retries. So a fault plan keeps the threads.
    # The retry waits long enough for every thread's first request to arrive on a loaded machine
    # (with the 1 ms the offline model asks for, a late thread found the first one's retry ahead of it).
    from pytest_ctxeval.llm import make_llm, offline
    from pytest_ctxeval.llm.base import ModelError

    monkeypatch.setattr(offline, "_RETRY_FAST", {"retry-after-ms": "500"})

    llm = make_llm("offline", faults={"chat": [fault] * 3}, max_retries=2)
    assert llm.waits
    out = llm.complete_many([{"task": "chat", "messages": [{"role": "user", "content": f"hi {i}"}]} for i in range(3)])
    assert not [o for o in out if isinstance(o, ModelError)]
