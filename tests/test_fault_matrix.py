"""The fault matrix: every ordinary way a model call fails, on the summariser and on the judge path,
through the SDK's own transport. For each fault the table says what must happen; every run also
keeps every message in its transcript and writes its JSON result."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.grading.judging import Judge
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.runner import run_scenario
from pytest_ctxeval.scenario.schema import load_scenario
from pytest_ctxeval.transcript import read_transcript

from scenario_texts import rename_reads

SCENARIO = rename_reads("faults") + textwrap.dedent("""\
      - user: "Also update the callers."
      - assistant: "The callers already use the new name."
      - compact: true
    expect:
      probes:
        - {kind: recall, question: "Which function was renamed?", answer: "pd to parse_date in src/util.py"}
    """)

# fault -> (what happens, check)
SUMMARISER = {
    "rate_limit": "retried by the SDK (429 with retry-after), then compacts",
    "overloaded": "retried by the SDK (529), then compacts",
    "server_error": "retried by the SDK (500), then compacts",
    "connection_reset": "retried by the SDK (connection error), then compacts",
    "timeout": "retried by the SDK (read timeout), then compacts",
    "ptl": "PTL path: the oldest API rounds dropped until the parsed gap is covered, then compacts",
    "ptl_no_gap": "PTL path: 20% of the API rounds dropped (gap unknown), then compacts",
    "empty": "a failed compaction, counted toward the circuit breaker",
    "no_summary_tags": "compacts: the whole reply (analysis removed if tagged) is the summary",
    "sections_out_of_order": "compacts; nine_sections fails naming the misplaced sections",
}


@pytest.fixture(autouse=True)
def _sdk_backoff_of_a_millisecond(monkeypatch: pytest.MonkeyPatch) -> None:
    """A connection error or a timeout has no retry-after to read: the SDK waits its own backoff
    (0.5 s and up). The retries are the point here, not their wait."""
    import anthropic._base_client

    monkeypatch.setattr(anthropic._base_client, "INITIAL_RETRY_DELAY", 0.001)


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "faults.yaml"
    path.write_text(SCENARIO)
    return path


def run_with(path: Path, tmp_path: Path, plan: dict[str, list[str]], **kw):
    scenario = load_scenario(path)
    llm = make_llm("offline", faults=plan, max_retries=2)
    return run_scenario(scenario, llm=llm, session_dir=tmp_path / "session", **kw), llm


def assert_nothing_lost(run) -> None:
    """Every message the engine was given (and every boundary and summary) is a record of the
    transcript, and the file reads back without a problem."""
    records = [json.loads(line) for line in run.transcript_path.read_text().splitlines()]
    assert {m.uuid for m in run.history} <= {r["uuid"] for r in records}
    assert not read_transcript(run.transcript_path).problems


@pytest.mark.parametrize("fault", list(SUMMARISER), ids=list(SUMMARISER))
def test_summariser_faults(fault: str, scenario_file: Path, tmp_path: Path) -> None:
    run, llm = run_with(scenario_file, tmp_path, {"compact": [fault]})
    events = [(e.tier, e.action) for e in run.events]
    autos = [c for c in run.compactions if c.result.trigger == "auto"]
    if fault in ("rate_limit", "overloaded", "server_error", "connection_reset", "timeout"):
        assert len(autos) == 1 and ("autocompact", "failed") not in events
        assert llm.usage.api_calls == 2  # the retry is invisible above the SDK: one success counted
        assert len(llm.reference.requests) == 3  # but the model saw the failed attempt too
    elif fault in ("ptl", "ptl_no_gap"):
        [ptl] = [e for e in run.events if e.tier == "ptl"]
        assert ("gap unknown" in ptl.detail) == (fault == "ptl_no_gap")
        assert len(autos) == 1 and autos[0].result.ptl_retries == 1
    elif fault == "empty":
        [failed] = [e for e in run.events if e.action == "failed"]
        assert "the summariser returned no text" in failed.detail and "consecutive failures: 1" in failed.detail
    elif fault == "no_summary_tags":
        assert autos and "<summary>" not in autos[0].result.summary and "1. " in autos[0].result.summary
    elif fault == "sections_out_of_order":
        registry = load_graders()
        from pytest_ctxeval.grading.registry import cases_from_run
        case = next(c for c in cases_from_run(run) if c.trigger == "auto")
        [v] = registry.run(case, [registry.get("nine_sections")])
        assert v.status == "fail" and "out of order" in v.reasons[0]
    assert_nothing_lost(run)


def test_persistent_overload_is_a_clear_failure_after_the_sdk_retries(scenario_file: Path, tmp_path: Path) -> None:
    run, llm = run_with(scenario_file, tmp_path, {"compact": ["overloaded"] * 3})
    [failed] = [e for e in run.events if e.tier == "autocompact" and e.action == "failed"]
    assert "HTTP 529" in failed.detail and "after 2 SDK retries" in failed.detail
    assert_nothing_lost(run)


@pytest.mark.parametrize(("plan", "tripped"), [
    (["empty"] * 3, True),                          # exactly 3 consecutive failures trip it
    (["empty"] * 2, False),                         # 2 do not
    (["empty", "empty", "ok", "empty", "empty"], False),  # a success resets the count
], ids=["three", "two", "reset"])
def test_circuit_breaker(plan: list[str], tripped: bool, tmp_path: Path) -> None:
    text = SCENARIO.replace("repeat: 9", "repeat: 16")
    path = tmp_path / "long.yaml"
    path.write_text(text)
    run, _ = run_with(path, tmp_path, {"compact": plan})
    actions = [e.action for e in run.events if e.tier == "autocompact"]
    assert ("circuit_breaker_tripped" in actions) is tripped
    if tripped:
        at = actions.index("circuit_breaker_tripped")
        assert actions[:at].count("failed") == 3
        assert "failed" not in actions[at + 1:] and "full_compaction" not in actions[at + 1:]
    assert_nothing_lost(run)


JUDGE = {
    "rate_limit": ("pass", None),
    "overloaded": ("pass", None),
    "server_error": ("pass", None),
    "connection_reset": ("pass", None),
    "timeout": ("pass", None),
    "prose_json": ("pass", None),
    "malformed_json": ("pass", None),                       # retried once with the validation error
    "malformed_json*2": ("ungraded", "no JSON object in the reply"),
    "ptl*4": ("ungraded", "prompt is too long"),
    "empty*2": ("ungraded", "no JSON object"),
}


@pytest.mark.parametrize("fault", list(JUDGE), ids=list(JUDGE))
def test_judge_faults(fault: str, scenario_file: Path, tmp_path: Path) -> None:
    name, _, times = fault.partition("*")
    plan = [name] * int(times or 1)
    run, _ = run_with(scenario_file, tmp_path, {})
    judge = Judge(make_llm("offline", faults={"judge": plan}, max_retries=1))
    registry = load_graders()
    from pytest_ctxeval.evaluation import evaluate_run
    outcome = evaluate_run(run, registry, [registry.get("intent_preservation")], judge=judge)
    status, reason = JUDGE[fault]
    first = outcome.verdicts[0][0]
    assert first.status == status, first.reasons
    if reason:
        assert reason in first.reasons[0]
        assert first.evidence["prompt"] and "raw_replies" in first.evidence


@pytest.mark.parametrize("faults", [{"compact": ["empty"] * 5}, {"judge": ["malformed_json"] * 9}],
                         ids=["summariser", "judge"])
def test_the_json_result_is_written_whatever_fails(faults: dict, tmp_path: Path) -> None:
    text = SCENARIO + "faults: " + json.dumps(faults) + "\n"
    path = tmp_path / "s.yaml"
    path.write_text(text)
    out = tmp_path / "r.json"
    code = main(["run", str(path), "--json", str(out), "--session-dir", str(tmp_path / "sessions")])
    doc = json.loads(out.read_text())
    entry = doc["scenarios"][0]
    if "compact" in faults:
        assert code == 1 and entry["compactions"] == [] and entry["error"] is None
        assert any(e["action"] == "failed" for e in entry["events"])
    else:
        assert entry["graders"]["intent_preservation"]["status"] == "ungraded"
    transcripts = list((tmp_path / "sessions").rglob("*.jsonl"))
    assert transcripts and all(not read_transcript(t).problems for t in transcripts)
