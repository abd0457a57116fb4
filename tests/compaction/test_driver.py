"""Running compactors in the agent loop: the engine unchanged for claude_code, the in-flight rule,
manual and partial compactions, the circuit breaker, tiers as options, your own compactor."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from pytest_ctxeval.evaluation import evaluate_run
from pytest_ctxeval.results import results_document
from pytest_ctxeval.grading.registry import cases_from_run
from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.core.messages import tool_uses
from pytest_ctxeval.runner import run_scenario

COMPACTORS = ["codex", "gemini_cli", "opencode", "observation_masking"]


@pytest.fixture(scope="module")
def registry():
    return load_graders()


def _doc(run, registry):
    rules = registry.select(kinds=["rule"])
    outcome = evaluate_run(run, registry, rules)
    doc = results_document([outcome], usage={}, backend="offline", model=None)
    return json.dumps(doc, sort_keys=True)


@pytest.mark.parametrize("scenario", ["session_memory_then_full", "compaction_overflow", "tool_calls_in_flight"])
def test_claude_code_is_the_engine_unchanged(scenario, registry, tmp_path):
    plain = run_scenario(f"scenarios/{scenario}.yaml", session_dir=tmp_path / "a")
    named = run_scenario(f"scenarios/{scenario}.yaml", compactor="claude_code", session_dir=tmp_path / "b")
    assert [e.as_dict() for e in named.events] == [e.as_dict() for e in plain.events]
    assert named.requests == plain.requests
    assert _doc(named, registry) == _doc(plain, registry)


@pytest.mark.parametrize("compactor", COMPACTORS)
def test_calls_in_flight_at_a_manual_compaction_stay_paired_under_every_compactor(compactor, registry, tmp_path):
    run = run_scenario("scenarios/tool_calls_in_flight.yaml", compactor=compactor, session_dir=tmp_path)
    manual = [c for c in run.compactions if c.result.trigger == "manual" and c.result.in_flight]
    assert manual, "the /compact with calls in flight should compact"
    last = manual[0].result.post_messages[-1]
    assert tool_uses(last), "the in-flight call is kept last"
    for case in cases_from_run(run):
        (v,) = registry.run(case, [registry.get("tool_pairing")])
        assert v.status == "pass", v.reasons


def test_a_compactor_compaction_shares_the_turn_of_the_request_after_it(tmp_path):
    run = run_scenario("scenarios/auth_refactor.yaml", compactor="codex", session_dir=tmp_path)
    auto = [c for c in run.compactions if c.result.trigger == "auto"]
    assert auto
    body = run.requests[auto[0].turn - 1]
    first = body["messages"][0]["content"]
    texts = [first] if isinstance(first, str) else [b.get("text", "") for b in first]
    assert any(auto[0].result.summary in t for t in texts)
    assert run.requests[auto[0].turn - 2] is not body and auto[0].result.summary not in json.dumps(
        run.requests[auto[0].turn - 2])


def test_three_failed_automatic_compactions_in_a_row_stop_asking(tmp_path):
    from pytest_ctxeval.scenario.schema import load_scenario

    scenario = load_scenario("scenarios/summariser_circuit_breaker.yaml")
    scenario = scenario.model_copy(update={"faults": {"compact": ["empty"] * 8}})
    run = run_scenario(scenario, compactor="codex", session_dir=tmp_path)
    auto = [e for e in run.events if e.action == "failed" and e.tier == "autocompact"]
    assert len(auto) == 3 and "no text" in auto[0].detail
    tripped = [e for e in run.events if e.action == "circuit_breaker_tripped"]
    assert tripped and tripped[0].turn == auto[-1].turn
    assert not [c for c in run.compactions if c.result.trigger == "auto"]  # off for the rest of the session


def test_tiers_are_options_of_every_compactor(tmp_path):
    on = run_scenario("scenarios/tool_result_budget.yaml", compactor="codex", session_dir=tmp_path / "on")
    off = run_scenario("scenarios/tool_result_budget.yaml", compactor="codex(tiers=none)", session_dir=tmp_path / "off")
    assert [e for e in on.events if e.tier == "budget"] and not [e for e in off.events if e.tier == "budget"]
    reads = run_scenario("scenarios/repeated_reads.yaml", compactor="codex", session_dir=tmp_path / "r1")
    no_dedupe = run_scenario("scenarios/repeated_reads.yaml", compactor="codex(tiers=budget+microcompact)",
                             session_dir=tmp_path / "r2")
    assert [e for e in reads.events if e.tier == "dedupe"] and not [e for e in no_dedupe.events if e.tier == "dedupe"]
    assert off.config.autocompact_enabled is False and off.config.session_memory_enabled is False


def test_tiers_are_options_of_claude_code_too(tmp_path):
    """The engine keeps its own compaction (tier 4) and drops the tiers left out (found in review:
    claude_code(tiers=none) used to change nothing)."""
    on = run_scenario("scenarios/tool_result_budget.yaml", compactor="claude_code", session_dir=tmp_path / "on")
    off = run_scenario("scenarios/tool_result_budget.yaml", compactor="claude_code(tiers=none)",
                       session_dir=tmp_path / "off")
    assert [e for e in on.events if e.tier == "budget"] and not [e for e in off.events if e.tier == "budget"]
    assert off.config.autocompact_enabled and off.compactions
    reads = run_scenario("scenarios/repeated_reads.yaml", compactor="claude_code(tiers=budget+microcompact)",
                         session_dir=tmp_path / "r")
    assert not [e for e in reads.events if e.tier == "dedupe"]


def _run_with_module(tmp_path, monkeypatch, module, source, spec):
    """auth_refactor under the compactor ``spec`` from a module ``module`` written with ``source``."""
    (tmp_path / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(module, None)
    return run_scenario("scenarios/auth_refactor.yaml", compactor=spec, session_dir=tmp_path / "s")


SUBCLASS = textwrap.dedent('''
    from pytest_ctxeval.compaction.claude_code import ClaudeCode

    class EarlyClaude(ClaudeCode):
        """Claude Code's own summary, asked for earlier: a subclass that compacts itself."""
        name = "early_claude"
        native = False

        def should_compact(self, state):
            return state.tokens >= 0.6 * state.config.context_window
''')


def test_a_claude_code_subclass_is_graded_on_the_nine_sections(tmp_path, monkeypatch, registry):
    """Format graders go by the format a compactor writes, not its name (found in review: a
    subclass used to get n/a from every format check)."""
    run = _run_with_module(tmp_path, monkeypatch, "earlyclaude", SUBCLASS, "earlyclaude:EarlyClaude")
    assert run.compactor == "early_claude" and run.compactions
    verdicts = {v.grader: v for v in registry.run(cases_from_run(run)[0]) if v.kind == "rule"}
    assert verdicts["nine_sections"].status == "pass", verdicts["nine_sections"].reasons
    assert verdicts["analysis_stripped"].status == "pass"
    assert verdicts["format_sections"].status == "n/a"


def test_session_memory_is_claude_codes_and_off_under_another_compactor(tmp_path):
    run = run_scenario("scenarios/session_memory_then_full.yaml", compactor="codex", session_dir=tmp_path)
    assert not [e for e in run.events if e.tier == "session_memory"]


USER_COMPACTOR = textwrap.dedent('''
    from pytest_ctxeval.compaction import Compacted
    from pytest_ctxeval.core.messages import person_text

    class KeepRequests:
        """Keep only the person-typed messages and a one-line summary: a protocol-only compactor."""
        name = "keep_requests"

        def __init__(self, at=0.8):
            self.at = at

        def should_compact(self, state):
            return state.tokens >= self.at * state.config.context_window

        def compact(self, state):
            people = [m for m in state.messages if person_text(m) is not None]
            text = f"{len(state.messages)} messages compacted; the user's requests are kept."
            return Compacted(messages=[*people, state.summary_message(text)], summary=text)
''')


def test_your_own_compactor_by_dotted_path_runs_and_is_graded(tmp_path, monkeypatch, registry):
    run = _run_with_module(tmp_path, monkeypatch, "mystrats", USER_COMPACTOR, "mystrats:KeepRequests(at=0.7)")
    assert run.compactor == "keep_requests" and run.compactions
    assert run.config.autocompact_enabled is False  # the defaults of a protocol-only compactor
    verdicts = {v.grader: v for v in registry.run(cases_from_run(run)[0])
                if v.kind == "rule"}
    assert verdicts["verbatim_user_messages"].status == "pass"   # kept as messages: counts like section 6
    assert verdicts["nine_sections"].status == "n/a"
    assert "keep_requests compactor" in verdicts["nine_sections"].reasons[0]
