"""The scenario library as a whole: one scenario per risk, each 50-400 scripted turns with
expectations and four kinds of probes; what each risk's scenario must make happen; and the two
prompts side by side — the built-in one passes every rule grader on every scenario, a deliberately
weak one (tests/fixtures/weak_prompt.j2, a three-line summary) fails several, with reasons that
name the scenario's risk."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.evaluation import evaluate_run
from pytest_ctxeval.reading.extract import person_messages
from pytest_ctxeval.scenario.fillers import pdf, png
from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.core.messages import plain_text
from pytest_ctxeval.runner import run_scenario
from pytest_ctxeval.scenario.expansion import expand
from pytest_ctxeval.scenario.schema import load_scenario
from reference_runs import GROUP, reference_runs as shared_reference_runs

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "scenarios"
WEAK = REPO / "tests" / "fixtures" / "weak_prompt.j2"

#: The issue's seventeen risks and the scenario that covers each.
RISKS = {
    1: ("auth_refactor", "the user corrects the approach midway"),
    2: ("migrations_constraint", "an early constraint survives two compactions"),
    3: ("debug_failing_test", "a debugging loop with three wrong fixes"),
    4: ("multi_file_refactor", "Edits and Writes across 10+ files"),
    5: ("tool_result_budget", "parallel tool calls and a per-message budget overflow"),
    6: ("parallel_search_huge_output", "one huge Bash output holding the fact a probe asks for"),
    7: ("repeated_reads", "the same file read repeatedly, then edited"),
    8: ("idle_gap", "an idle gap over an hour before a question about an old result"),
    9: ("screenshot_and_pdf", "a pasted screenshot and a PDF"),
    10: ("evolving_todos", "a todo list that evolves"),
    11: ("subagent_finding", "a subagent whose result carries the key finding"),
    12: ("long_migration", "three compactions"),
    13: ("multilingual_verbatim", "other languages, code blocks and quotes"),
    14: ("compaction_overflow", "the compaction request overflows (PTL)"),
    15: ("memory_file_rule", "a CLAUDE.md rule followed before and after compaction"),
    16: ("multi_part_request", "a multi-part last request as compaction triggers"),
    17: ("tool_calls_in_flight", "compaction with tool calls in flight"),
}
CIRCUIT_BREAKER = "summariser_circuit_breaker"  # risk 14, second half
FILES = sorted(SCENARIOS.glob("*.yaml"))
# pytest-xdist: one worker replays the library for this module and tests/test_builtin_scenarios.py.
pytestmark = pytest.mark.xdist_group(GROUP)


@pytest.fixture(scope="module")
def registry():
    return load_graders()


@pytest.fixture(scope="module")
def reference_runs() -> dict:
    return shared_reference_runs()  # the runs tests/test_builtin_scenarios.py reads too


@pytest.fixture(scope="module")
def weak_outcomes(tmp_path_factory: pytest.TempPathFactory, registry) -> dict:
    base = tmp_path_factory.mktemp("weak")
    rules = registry.select(kinds=["rule"])
    prompts = PromptSet(WEAK)
    return {p.stem: evaluate_run(run_scenario(p, session_dir=base / p.stem, prompts=prompts), registry, rules)
            for p in FILES}


# --- the library's shape ------------------------------------------------------------------------


def test_every_risk_has_its_scenario() -> None:
    names = {p.stem for p in FILES}
    assert {name for name, _ in RISKS.values()} | {CIRCUIT_BREAKER} <= names
    assert len(names) >= 17


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_each_scenario_has_50_to_400_turns_expectations_and_four_kinds_of_probes(path: Path) -> None:
    scenario = load_scenario(path)
    assert 50 <= len(expand(scenario).steps) <= 400
    expect = scenario.expect
    assert expect.intent, "expect.intent"
    assert expect.files or expect.errors or expect.constraints, "something concrete to keep"
    assert len(expect.probes) >= 4
    assert {p.kind for p in expect.probes} == {"recall", "artifact", "continuation", "decision"}


# --- what each risk's scenario makes happen ----------------------------------------------------------


def events(run) -> list[tuple[str, str]]:
    return [(e.tier, e.action) for e in run.events]


def test_the_constraint_scenarios_compact_at_least_twice_after_the_rule(reference_runs: dict) -> None:
    for name, rule in (("migrations_constraint", "never touch the migrations folder"),
                       ("memory_file_rule", "Always back up a file before editing it on the server")):
        run = reference_runs[name]
        after = [c for c in run.compactions if rule.lower() in plain_text(c.history).lower()]
        assert len(after) >= 2, name
    autos = [c for c in reference_runs["migrations_constraint"].compactions if c.result.trigger == "auto"]
    assert len(autos) == 2


def test_the_memory_file_is_a_meta_system_reminder_that_compaction_summarises(reference_runs: dict) -> None:
    run = reference_runs["memory_file_rule"]
    memory = [m for m in run.history if getattr(m, "is_meta", False)]
    assert len(memory) == 1 and memory[0].content.startswith("<system-reminder>")
    first = run.compactions[0].result
    assert memory[0].uuid in {m.uuid for m in first.summarized}
    assert "Rules from memory files (CLAUDE.md), still in force:" in first.summary


def test_the_debugging_loop_has_three_reverted_attempts(reference_runs: dict) -> None:
    run = reference_runs["debug_failing_test"]
    summary = run.compactions[-1].result.summary
    for attempt in ("coupons.get(key) did not fix it", "cache.clear() did not help", "code.upper() did not change"):
        assert attempt in summary


def test_the_refactor_touches_more_than_ten_files(reference_runs: dict) -> None:
    from pytest_ctxeval.reading.extract import edited_files

    assert len(edited_files(reference_runs["multi_file_refactor"].history)) >= 15


def test_the_budget_scenarios_persist_and_run_parallel_calls(reference_runs: dict) -> None:
    from pytest_ctxeval.core.messages import tool_uses

    for name in ("tool_result_budget", "parallel_search_huge_output"):
        run = reference_runs[name]
        assert max(len(tool_uses(m)) for m in run.history) >= 8
        assert ("budget", "persisted") in events(run)


def test_images_and_documents_never_reach_the_summariser(reference_runs: dict) -> None:
    run = reference_runs["screenshot_and_pdf"]
    payloads = [png(seed="safari-checkout", width=24, height=40)[:40], pdf(seed="psp-changelog")[:12]]
    assert base64.b64decode(payloads[0] + "=" * (-len(payloads[0]) % 4))[:4] == b"\x89PNG"
    for comp in run.compactions:
        body = repr(comp.result.request)
        assert "[image]" in body or "[document]" in body or comp.index > 1
        assert payloads[0] not in body and "JVBERi0x" not in body, "base64 media in a compaction request"
    assert any(payloads[0] in repr(r) for r in run.requests), "the model itself did see the screenshot"


def test_the_multi_part_request_arrives_just_as_compaction_triggers(reference_runs: dict) -> None:
    run = reference_runs["multi_part_request"]
    first = run.compactions[0]
    people = person_messages(first.history)
    assert people[-1].text.startswith("Before you stop, four things, in this order")
    assert first.result.summarized[-1].uuid == people[-1].uuid, "compacted right after the request arrived"
    assert first.result.trigger == "auto"


def test_the_circuit_breaker_trips_after_three_failures_and_a_manual_compact_succeeds(reference_runs: dict) -> None:
    run = reference_runs[CIRCUIT_BREAKER]
    actions = events(run)
    failed = [i for i, a in enumerate(actions) if a == ("autocompact", "failed")]
    tripped = actions.index(("autocompact", "circuit_breaker_tripped"))
    assert len(failed) == 3 and failed[-1] < tripped
    assert ("autocompact", "blocking_limit") in actions[tripped:]
    assert all(a[0] != "autocompact" or a[1] == "blocking_limit" for a in actions[tripped + 1:]), \
        "no automatic attempt after the trip"
    assert [c.result.trigger for c in run.compactions] == ["manual", "manual"]


def test_the_in_flight_compaction_keeps_the_calls_paired(reference_runs: dict) -> None:
    run = reference_runs["tool_calls_in_flight"]
    assert ("compact", "in_flight_kept") in events(run)
    record = next(c for c in run.compactions if c.result.in_flight)
    assert len(record.result.in_flight) == 1 and record.requests_after


def test_the_idle_gap_clears_old_results_before_the_question(reference_runs: dict) -> None:
    actions = events(reference_runs["idle_gap"])
    assert actions.index(("microcompact", "time_based_clear")) < actions.index(("compact", "full_compaction"))


def test_the_long_session_compacts_three_times(reference_runs: dict) -> None:
    assert len(reference_runs["long_migration"].compactions) >= 3


# --- the two prompts -------------------------------------------------------------------------------------


def test_the_reference_prompt_passes_every_rule_grader_on_every_scenario(reference_runs: dict, registry) -> None:
    rules = registry.select(kinds=["rule"])
    bad = {}
    for name, run in reference_runs.items():
        outcome = evaluate_run(run, registry, rules)
        for grader in outcome.graders:
            if outcome.expectation(grader) in ("fail", "xpass"):
                bad[(name, grader)] = outcome.grader_verdict(grader).reasons[:2]
    assert not bad


def _failures(outcome) -> dict[str, str]:
    return {g: " ".join(outcome.grader_verdict(g).reasons) for g in outcome.graders
            if outcome.grader_verdict(g).status == "fail"}


def test_the_weak_prompt_fails_every_scenario_on_several_graders(weak_outcomes: dict) -> None:
    for name, outcome in weak_outcomes.items():
        failed = _failures(outcome)
        assert {"nine_sections", "verbatim_user_messages", "files_preserved"} <= set(failed), (name, sorted(failed))
        assert len(failed) >= 4, (name, sorted(failed))
    # Structure that does not depend on the prompt's wording still holds.
    for outcome in weak_outcomes.values():
        assert outcome.grader_verdict("tool_pairing").status == "pass"
        assert outcome.grader_verdict("analysis_stripped").status == "pass"


@pytest.mark.parametrize(("scenario", "grader", "named"), [
    ("migrations_constraint", "constraints_preserved",
     'constraint lost: "never touch the migrations folder (src/shop/migrations/)" (set by the user in message 2)'),
    ("memory_file_rule", "constraints_preserved",
     'constraint lost: "Always back up a file before editing it on the server" (set by a memory file (CLAUDE.md)'),
    ("long_migration", "constraints_preserved", 'constraint lost: "never touch src/app/vendor/"'),
    ("debug_failing_test", "failed_approaches_preserved", 'failed approach "coupons.get(key)" is not recorded'),
    ("debug_failing_test", "errors_preserved", "KeyError: 'coupon:SUMMER24'"),
    ("multi_file_refactor", "files_preserved", "services/accounts/compat.go"),
    ("evolving_todos", "pending_tasks", "Email the report to finance@ on the 1st, cc the CFO"),
    ("multilingual_verbatim", "verbatim_user_messages", "日本語の訳はネイティブチェック済みのものを使ってください"),
    ("screenshot_and_pdf", "errors_preserved", "expected window.open to be called once"),
    ("subagent_finding", "constraints_preserved", "No floats anywhere in billing."),
    ("tool_calls_in_flight", "pending_tasks", "Tag v4.2.0 once the user confirms"),
])
def test_the_weak_prompts_failures_name_the_scenarios_risk(weak_outcomes: dict, scenario: str, grader: str,
                                                           named: str) -> None:
    failed = _failures(weak_outcomes[scenario])
    assert grader in failed, (scenario, sorted(failed))
    assert named in failed[grader], failed[grader]


def test_the_weak_prompt_is_a_three_line_summary() -> None:
    text = PromptSet(WEAK).render_compact()
    assert "three short lines" in text
    assert not re.search(r"^\s*\d\.\s", text, re.MULTILINE), "no numbered sections"
