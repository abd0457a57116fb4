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
