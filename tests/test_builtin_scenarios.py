"""The built-in scenario library: every scenario runs offline, every request it sends is API-valid,
each tier's scenario makes its tier fire, and known failures behave like strict xfails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.evaluation import evaluate_run
from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.core.messages import to_api, validate_api
from pytest_ctxeval.runner import run_scenario
from pytest_ctxeval.scenario.schema import load_scenario
from reference_runs import GROUP, reference_runs

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
FILES = sorted(SCENARIOS.glob("*.yaml"))
# pytest-xdist: one worker replays the library for this module and tests/test_library.py.
pytestmark = pytest.mark.xdist_group(GROUP)


@pytest.fixture(scope="module")
def runs() -> dict[str, object]:
    return reference_runs()  # the runs tests/test_library.py reads too


def test_library_is_there() -> None:
    assert len(FILES) >= 17  # one scenario per risk at least (tests/test_library.py)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_request_is_api_valid(path: Path, runs: dict) -> None:
    run = runs[path.stem]
    assert run.requests, "the scenario prepared no request"
    for i, body in enumerate(run.requests):
        assert validate_api(body["messages"]) == [], f"request {i + 1}"
    for comp in run.compactions:
        assert validate_api(comp.result.request["messages"] if comp.result.request else [{"role": "user", "content": "x"}]) == []
        assert validate_api(to_api(comp.result.post_messages), allow_pending_tool_use=True) == []


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_scenario_compacts_and_passes_or_knows_why(path: Path, runs: dict) -> None:
    run = runs[path.stem]
    assert run.compactions, f"{path.name} never compacts"
    outcome = evaluate_run(run, load_graders())
    assert not outcome.failed, {g: outcome.grader_verdict(g).reasons for g in outcome.graders
                                if outcome.expectation(g) in ("fail", "xpass")}


@pytest.mark.parametrize(("scenario", "tier", "action"), [
    ("tool_result_budget", "budget", "persisted"),
    ("repeated_reads", "dedupe", "file_unchanged_stub"),
    ("idle_gap", "microcompact", "time_based_clear"),
    ("session_memory_then_full", "session_memory", "extracted"),
    ("session_memory_then_full", "autocompact", "session_memory_compaction"),
    ("session_memory_then_full", "compact", "full_compaction"),
    ("compaction_overflow", "ptl", "truncated"),
    ("long_migration", "autocompact", "full_compaction"),
    ("summariser_circuit_breaker", "autocompact", "circuit_breaker_tripped"),
    ("summariser_circuit_breaker", "autocompact", "blocking_limit"),
    ("tool_calls_in_flight", "compact", "in_flight_kept"),
])
def test_each_tier_fires_in_its_scenario(scenario: str, tier: str, action: str, runs: dict) -> None:
    events = [(e.tier, e.action) for e in runs[scenario].events]
    assert (tier, action) in events, events


def test_tool_result_budget_uses_both_levels(runs: dict) -> None:
    details = [e.detail for e in runs["tool_result_budget"].events if e.action == "persisted"]
    assert any(d.startswith("tool_threshold") for d in details)
    assert any(d.startswith("message_budget") for d in details)


def test_long_migration_compacts_twice_on_its_own(runs: dict) -> None:
    autos = [c for c in runs["long_migration"].compactions if c.result.trigger == "auto"]
    assert len(autos) >= 2


def test_idle_gap_profiles_show_the_difference(tmp_path: Path) -> None:
    """Seed 003 (Edit/Write never cleared) keeps the failed edit's error; the 000/004 default
    clears it before the summary is written, and errors_preserved says what was lost."""
    registry = load_graders()
    spec = [registry.get("errors_preserved")]
    read_only = load_scenario(SCENARIOS / "idle_gap.yaml")
    default = read_only.model_copy(update={"config": {"microcompact_profile": "default"}})
    default.path, default.lines = read_only.path, read_only.lines
    kept = evaluate_run(run_scenario(read_only, session_dir=tmp_path / "a"), registry, spec)
    lost = evaluate_run(run_scenario(default, session_dir=tmp_path / "b"), registry, spec)
    assert kept.grader_verdict("errors_preserved").status == "pass"
    verdict = lost.grader_verdict("errors_preserved")
    assert verdict.status == "fail"
    assert "String to replace not found in file." in " ".join(verdict.reasons)


def test_known_failure_that_passes_fails_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (SCENARIOS / "auth_refactor.yaml").read_text()
    path = tmp_path / "auth.yaml"
    path.write_text(text + "\nknown_failures:\n  nine_sections: pretend it fails\n")
    out = tmp_path / "r.json"
    assert main(["run", str(path), "--json", str(out)]) == 1
    assert "XPASS" in capsys.readouterr().out
    row = json.loads(out.read_text())["scenarios"][0]["graders"]["nine_sections"]
    assert row["known_failure"] == "pretend it fails" and row["expectation"] == "xpass"


def test_known_failure_of_an_unknown_grader_is_an_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text((SCENARIOS / "idle_gap.yaml").read_text() + "\nknown_failures:\n  no_such_grader: because\n")
    assert main(["run", str(path)]) == 2
    assert "known_failures names unknown grader 'no_such_grader'" in capsys.readouterr().err


def test_known_failures_are_strict_xfails_in_pytest(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", **{"scenarios/overflow": (SCENARIOS / "compaction_overflow.yaml").read_text()})
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "-rx")
    # facts_survive: n/a (no facts); stale_values passes: the summary names the session's commits as it shows them
    result.assert_outcomes(passed=13, skipped=6, xfailed=2)
    result.stdout.fnmatch_lines(["XFAIL scenarios/overflow.yaml::verbatim_user_messages - known failure: PTL retry*"])


def test_a_run_case_carries_its_compact_instructions(runs: dict) -> None:
    """A scenario's ``compact: {instructions: …}`` reaches the graders as the case's /compact text,
    so a leave-out in it is obeyed in ``ctxeval run`` as in a real session (review 4, G5)."""
    from pytest_ctxeval.grading.registry import cases_from_run
    cases = cases_from_run(runs["tool_calls_in_flight"])
    assert [c.compact_args for c in cases if c.compact_args] == ["Keep the release checklist and the test results."]
    assert all(c.compact_args is None for c in cases if c.trigger != "manual")
