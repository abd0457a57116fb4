"""A plain compact(messages, *, instructions=None) function is a compactor (compaction/function.py),
and a saved output is graded against a scenario's facts (ctxeval grade-output)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.compaction.function import FunctionCompactor, is_compact_function
from pytest_ctxeval.compaction.loader import load_compactor
from pytest_ctxeval.errors import UsageError
from pytest_ctxeval.evaluation import evaluate_run
from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.runner import run_scenario

LIBRARY = Path(__file__).resolve().parents[2] / "scenarios"
TOOL_ONLY = LIBRARY / "facts_in_tool_results.yaml"

MODULE = textwrap.dedent('''\
    SEEN = []

    def keep_facts(messages, *, instructions=None):
        """Keeps every text line that states a rule or a setting (a crude fact keeper)."""
        SEEN.append(instructions)
        lines = []
        for m in messages:
            content = m["content"]
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for b in blocks:
                text = b.get("text") or (b.get("content") if isinstance(b.get("content"), str) else "") or ""
                lines += [l for l in text.splitlines()
                          if any(w in l.lower() for w in ("never", "must", "listens", "done means", "rather than"))]
        return "Summary:\\n" + "\\n".join(dict.fromkeys(lines))

    def forgetful(messages):
        return "Summary: we hardened some modules."

    def grows(messages, *, instructions=None):
        texts = [m["content"] if isinstance(m["content"], str) else
                 " ".join(str(b.get("text") or b.get("content") or "") for b in m["content"]) for m in messages]
        text = "\\n".join(texts)[:30000]
        return "Summary:\\n" + text + "\\n" + text

    def as_messages(messages, *, instructions=None):
        return [{"role": "user", "content": "Summary: the hardening work so far."},
                {"role": "assistant", "content": "Understood."}]

    def broken(messages, *, instructions=None):
        raise RuntimeError("the compactor's model is down")

    def make_compactor(level=1):
        return None
''')


@pytest.fixture
def compactors(tmp_path, monkeypatch):
    (tmp_path / "my_compactors.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("my_compactors", None)
    import my_compactors

    yield my_compactors
    sys.modules.pop("my_compactors", None)


def graded(compactor, tmp_path, scenario=TOOL_ONLY):
    run = run_scenario(scenario, session_dir=tmp_path / "s", compactor=compactor)
    registry = load_graders()
    return run, evaluate_run(run, registry, registry.select(["facts_survive", "compresses", "tool_pairing"]))


def test_a_function_spec_loads_as_a_compactor_named_after_it(compactors) -> None:
    compactor = load_compactor("my_compactors:keep_facts")
    assert isinstance(compactor, FunctionCompactor) and compactor.name == "keep_facts"
    assert compactor.description.startswith("Keeps every text line that states")
    assert load_compactor("my_compactors:keep_facts(name=mine, tiers=none)").name == "mine"
    with pytest.raises(UsageError, match="unknown option keep; it takes tiers, name"):
        load_compactor("my_compactors:keep_facts(keep=3)")
    assert is_compact_function(compactors.keep_facts) and not is_compact_function(compactors.make_compactor)
    assert load_compactor(compactors.forgetful).name == "forgetful"  # a function object works too


def test_a_function_that_keeps_the_facts_passes_and_one_that_forgets_fails_naming_them(compactors, tmp_path) -> None:
    run, outcome = graded("my_compactors:keep_facts", tmp_path / "a")
    assert [c.kind for c in outcome.cases] == ["keep_facts"] * 5
    assert outcome.grader_verdict("facts_survive").status == "pass", outcome.grader_verdict("facts_survive").reasons
    assert outcome.grader_verdict("tool_pairing").status == "pass"
    assert compactors.SEEN and set(compactors.SEEN) == {None}  # manual /compact steps without instructions
    _, outcome = graded("my_compactors:forgetful", tmp_path / "b")
    v = outcome.grader_verdict("facts_survive")
    assert v.status == "fail"
    assert "round 1: safety_rule 'safety_rule-1' planted in a tool result (Read docs/notes/ops-1.md" in v.reasons[0]


def test_a_function_whose_output_grows_the_context_fails_compresses(compactors, tmp_path) -> None:
    _, outcome = graded("my_compactors:grows", tmp_path)
    v = outcome.grader_verdict("compresses")
    assert v.status == "fail" and "it does not compress" in v.reasons[0]
    assert "round 1: the compaction replaced" in v.reasons[0]


def test_a_list_of_messages_becomes_the_context_and_a_raise_is_a_failed_compaction(compactors, tmp_path) -> None:
    run, outcome = graded("my_compactors:as_messages", tmp_path / "a")
    first = outcome.cases[0]
    assert first.summary == "Summary: the hardening work so far."
    assert [type(m).__name__ for m in first.post_messages] == ["CompactBoundary", "UserMessage", "AssistantMessage"]
    run = run_scenario(TOOL_ONLY, session_dir=tmp_path / "b", compactor="my_compactors:broken")
    failed = [e for e in run.events if e.action == "failed"]
    assert failed and "the broken compactor raised RuntimeError: the compactor's model is down" in failed[0].detail
    assert not run.compactions


def test_grade_output_scores_a_saved_summary_against_the_facts(tmp_path, capsys) -> None:
    run = run_scenario(TOOL_ONLY, session_dir=tmp_path / "ref")
    good = tmp_path / "good.txt"
    good.write_text(run.compactions[1].result.summary, encoding="utf-8")  # the reference's own round-2 output
    assert main(["grade-output", str(good), "--scenario", str(TOOL_ONLY), "--round", "2"]) == 0
    out = capsys.readouterr().out
    assert "planted facts held at round 2: safety_rule 100%" in out
    bad = tmp_path / "bad.txt"
    bad.write_text("Summary: modules 1 and 2 were hardened; retries are bounded.", encoding="utf-8")
    assert main(["grade-output", str(bad), "--scenario", str(TOOL_ONLY), "--round", "2",
                 "--graders", "facts_survive,compresses"]) == 1
    out = capsys.readouterr().out
    assert "FAIL      facts_survive" in out and "round 2: safety_rule 'safety_rule-1' planted in a tool result" in out
    as_json = tmp_path / "out.json"
    as_json.write_text(json.dumps([{"role": "user", "content": "Summary: nothing kept."}]), encoding="utf-8")
    assert main(["grade-output", str(as_json), "--scenario", str(TOOL_ONLY), "--graders", "facts_survive"]) == 1


@pytest.mark.parametrize(("args", "message"), [
    (["--round", "9"], "--round must be from 1 to 5"),
    (["--graders", "nope"], "unknown grader 'nope'"),
])
def test_grade_output_refuses_bad_input_with_a_reason(tmp_path, capsys, args, message) -> None:
    out = tmp_path / "s.txt"
    out.write_text("Summary.", encoding="utf-8")
    assert main(["grade-output", str(out), "--scenario", str(TOOL_ONLY), *args]) == 2
    assert message in capsys.readouterr().err
    bad = tmp_path / "s.json"
    bad.write_text("{not json", encoding="utf-8")
    assert main(["grade-output", str(bad), "--scenario", str(TOOL_ONLY)]) == 2
    assert "s.json:1: not JSON" in capsys.readouterr().err
