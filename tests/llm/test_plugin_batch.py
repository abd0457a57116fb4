"""``pytest --ctxeval --ctxeval-batch`` sends ONE Message Batch per run stage, as ``ctxeval run
--batch`` does (issue 16, item 10), over the Messages-API server on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_ctxeval.llm.server import ApiServer
from tests.scenario_texts import TINY

NAMES = ("alpha", "beta", "gamma")


def batches_created(server: ApiServer) -> int:
    return sum(1 for r in server.wire.log if r["endpoint"] == "batches" and r["method"] == "POST")


def run(pytester: pytest.Pytester, label: str, *options: str) -> dict[str, Any]:
    for name in NAMES:
        (pytester.path / f"{name}.yaml").write_text(TINY.replace("name: tiny", f"name: {name}"), encoding="utf-8")
    report = pytester.path / f"{label}.json"
    result = pytester.runpytest("--ctxeval", *(f"{n}.yaml" for n in NAMES), "-p", "no:cacheprovider",
                                "--ctxeval-backend", "anthropic", "--ctxeval-cassettes", str(pytester.path / label),
                                "--ctxeval-report", str(report), *options)
    assert result.ret == 0, result.stdout.str()[-3000:]
    return json.loads(report.read_text(encoding="utf-8"))


def verdicts(doc: dict[str, Any]) -> dict[str, Any]:
    return {s["name"]: {g: (v["status"], v["score"]) for g, v in s["graders"].items()} for s in doc["scenarios"]}


def test_one_batch_per_stage_and_the_verdicts_of_a_direct_run(api_server: ApiServer, pytester: pytest.Pytester) -> None:
    direct = run(pytester, "direct")
    assert batches_created(api_server) == 0
    batched = run(pytester, "batched", "--ctxeval-batch")
    # Three scenarios, each with intent, probe and drift judgements: one stage, one batch (it was
    # one batch per grader call, polled one after another).
    assert batches_created(api_server) == 1
    assert verdicts(batched) == verdicts(direct)
    assert {v["intent_preservation"][0] for v in verdicts(batched).values()} == {"pass"}
    # The judgements were paid at the batch rate, and the totals hold them.
    assert batched["usage"]["batch_output_tokens"] > 0
    assert batched["usage"]["usd"] < direct["usage"]["usd"]


def test_an_errored_batch_result_keeps_the_api_message(api_server: ApiServer, pytester: pytest.Pytester) -> None:
    api_server.wire.plan("batch_item", ["errored"])
    doc = run(pytester, "errored", "--ctxeval-batch")
    ungraded = [r for s in doc["scenarios"] for v in s["graders"].values() if v["status"] == "ungraded"
                for r in v["reasons"]]
    assert any("api_error: Internal server error" in r for r in ungraded), ungraded
    assert batches_created(api_server) == 1


def test_batch_under_xdist_is_one_usage_error(pytester: pytest.Pytester) -> None:
    # Workers get their items a few at a time, so none could gather a stage: refused up front
    # rather than sending one batch per judge call.
    (pytester.path / "alpha.yaml").write_text(TINY.replace("name: tiny", "name: alpha"), encoding="utf-8")
    result = pytester.runpytest("--ctxeval", "alpha.yaml", "-p", "no:cacheprovider", "-n", "2", "--ctxeval-batch")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "pytest-xdist workers cannot share" in result.stderr.str() + result.stdout.str()
