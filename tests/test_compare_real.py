"""ctxeval compare-real: the three corpus compactions side by side, the spotter compaction call,
outputs (table, JSON, HTML) and the CLI."""

from __future__ import annotations

import json
import shutil

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.compare_real import (
    COMPARE_FORMAT, compare_real, comparison_html, format_real_comparison, read_compaction_call,
)
from pytest_ctxeval.errors import TranscriptError, UsageError
from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.scenario.schema import Expectations, Probe
from pytest_ctxeval.reading.summary import SECTION_KINDS

from session_kit import FAKE_KEY, INJECTION, injection_session
from shared_paths import CORPUS

FASTHOOKS = CORPUS / "oneryalcin__fasthooks__sample_main_transcript.jsonl"
THISNESS = CORPUS / "M-Thisness__M-Claude__97b0ffde-ece9-4977-91cb-5c8cdeabdf3f.jsonl"
SPOTTER = CORPUS / "marot__spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20__prefix-715.jsonl"
ACOMPACT = CORPUS / "marot__spotter__agent-acompact-f46190.jsonl"
IMAGES = CORPUS / "moredip__session-share__images-in-user-messages.jsonl"
REGISTRY = load_graders()
RULES = REGISTRY.select(kinds=["rule"])


def _compare(path, **kw):
    return compare_real(path, llm=make_llm(), registry=REGISTRY, specs=kw.pop("specs", RULES), **kw)


@pytest.mark.parametrize("path,trigger,pre", [(FASTHOOKS, "manual", 21_558), (THISNESS, "manual", 31_469),
                                              (SPOTTER, "auto", 167_731)], ids=["fasthooks", "thisness", "spotter"])
def test_each_corpus_compaction_is_compared(path, trigger, pre):
    cmp = _compare(path, calls=[ACOMPACT] if path == SPOTTER else [])
    [c] = cmp.compactions
    assert (c.trigger, c.real.tokens_before) == (trigger, pre)
    assert c.ours.error is None and c.ours.case is not None
    # ours was given exactly the conversation Claude Code summarised (plus, for spotter, the
    # hook reminders recorded only in the compaction call)
    assert c.ours.case.summarized == c.real.case.summarized
    assert abs(c.ours.tokens_before - pre) / pre < 0.02     # anchored on the session's last usage
    names = [s.name for s in RULES]
    assert [v.grader for v in c.real.verdicts] == [v.grader for v in c.ours.verdicts] == names
    assert c.real.metrics["sections"] == {"found": 9, "total": 9}
    assert c.ours.metrics["sections"] == {"found": len(SECTION_KINDS), "total": 9}
    assert c.ours.metrics["user_messages"]["found"] == c.ours.metrics["user_messages"]["total"] > 0
    assert not cmp.failed   # the reference engine passes every rule grader on these conversations
    table = "\n".join(format_real_comparison(cmp))
    assert "Claude Code" in table and "ctxeval" in table and f"{pre:,} →" in table


def test_spotter_compaction_call_is_read_and_compared():
    call = read_compaction_call(ACOMPACT)
    assert call.agent_id == "acompact-f46190" and len(call.meta) == 5
    assert call.prompt.startswith("Your task is to create a detailed summary")
    assert "<analysis>" in call.reply and "<summary>" in call.reply
    assert call.input_tokens == 3 + 2_814 + 167_093
    assert call.additional_instructions.startswith("# Beads Workflow Context")
    cmp = _compare(SPOTTER, calls=[ACOMPACT])
    [c] = cmp.compactions
    assert c.call == ACOMPACT
    findings = {f.aspect: f for f in c.findings}
    assert findings["sections asked for"].same and "number 6 used twice" in findings["sections asked for"].claude_code
    assert findings["hook reminders in the conversation"].same
    assert findings["hook reminders in the conversation"].ours == "5 put back after their parent records"
    assert not findings["system prompt"].same and "deliberate" in findings["system prompt"].note
    assert not findings["user messages"].same
    assert findings["additional instructions"].same
    assert c.instructions == call.additional_instructions
    sent = json.dumps(c.ours.case.compaction_request["messages"])
    assert "PostToolUse:Edit hook additional context" in sent and "# Beads Workflow Context" in sent
    # without the call file: no request comparison, and the summary is still compared
    [plain] = _compare(SPOTTER).compactions
    assert plain.findings == [] and plain.instructions is None


def test_compaction_call_found_next_to_a_2_1_session(tmp_path):
    session = tmp_path / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
    shutil.copy(SPOTTER, session)
    (session.with_suffix("") / "subagents").mkdir(parents=True)
    shutil.copy(ACOMPACT, session.with_suffix("") / "subagents" / "agent-acompact-f46190.jsonl")
    [c] = _compare(session).compactions
    assert c.call is not None and c.call.name == "agent-acompact-f46190.jsonl"


def test_a_call_of_another_session_is_reported_not_used():
    cmp = _compare(FASTHOOKS, calls=[ACOMPACT])
    assert cmp.compactions[0].call is None
    assert any("matches no compaction" in n for n in cmp.notes)


def test_not_a_compaction_call_is_an_input_error():
    with pytest.raises(TranscriptError, match="not a Claude Code compaction call"):
        read_compaction_call(FASTHOOKS)


def test_probes_are_scored_on_both_sides_when_given():
    from pytest_ctxeval.grading.judging import Judge

    llm = make_llm()
    expect = Expectations(probes=[Probe(kind="artifact", question="Which Python file was created?",
                                        answer="hello_world.py")])
    cmp = compare_real(FASTHOOKS, llm=llm, registry=REGISTRY, specs=REGISTRY.select(["probes", "nine_sections"]),
                       expect=expect, judge=Judge(llm))
    [c] = cmp.compactions
    assert c.real.metrics["probes"]["status"] in ("pass", "fail")
    assert c.ours.metrics["probes"]["status"] in ("pass", "fail")
    assert any(row.startswith("  probes") for row in format_real_comparison(cmp))


def test_json_and_html_outputs_keep_transcript_text_inert(tmp_path):
    src = injection_session(tmp_path / "session.jsonl")
    cmp = _compare(src)
    [c] = cmp.compactions
    assert c.instructions == "keep the config details"
    doc = cmp.as_dict()
    assert doc["format"] == COMPARE_FORMAT and doc["version"] == 1
    dumped = json.dumps(doc)
    assert FAKE_KEY not in dumped and "[REDACTED:anthropic]" in dumped and INJECTION in dumped
    html = comparison_html(cmp)
    assert "</script>" not in html and "&lt;/script&gt;" in html
    assert INJECTION in html and FAKE_KEY not in html
    assert FAKE_KEY in json.dumps(_compare(src, redact_output=False).as_dict())


def test_cli_compare_real(tmp_path, capsys):
    out, page = tmp_path / "cmp.json", tmp_path / "cmp.html"
    code = main(["compare-real", str(SPOTTER), "--acompact", str(ACOMPACT), "--graders",
                 ",".join(s.name for s in RULES), "--json", str(out), "--html", str(page)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "compaction request vs Claude Code's" in printed and "[DIFF] system prompt" in printed
    assert json.loads(out.read_text())["compactions"][0]["claude_code"]["tokens_before"] == 167_731
    assert page.read_text().startswith("<!doctype html>")
    assert main(["compare-real", str(IMAGES)]) == 2
    assert "no compaction" in capsys.readouterr().err
    assert main(["compare-real", str(FASTHOOKS), "--acompact", str(FASTHOOKS)]) == 2
    with pytest.raises(SystemExit) as exc:
        main(["compare-real", "--help"])
    assert exc.value.code == 0 and "--acompact" in capsys.readouterr().out


def test_cli_compare_real_fails_when_our_summary_fails_a_grader(tmp_path, capsys):
    weak = tmp_path / "weak.j2"
    weak.write_text("Summarise the conversation in three sections:\n1. Primary Request and Intent:\n"
                    "2. Current Work:\n3. Optional Next Step:\n", encoding="utf-8")
    code = main(["compare-real", str(FASTHOOKS), "--prompt", str(weak), "--graders", "nine_sections"])
    assert code == 1
    assert "ctxeval: FAIL nine_sections" in capsys.readouterr().out


def test_no_compaction_raises():
    with pytest.raises(UsageError, match="no compaction"):
        _compare(IMAGES)


def test_claude_codes_column_is_graded_as_grade_grades_the_transcript():
    """Review finding A7: the Claude Code column showed drift "pass" (3 generations, 2 forced by our
    engine re-compacting Claude Code's summary) and fits_window "pass" (our estimate), where
    ``ctxeval grade`` says n/a for both. The column is Claude Code's own verdicts; ours keeps its
    forced generations and its window check, both of our engine."""
    from pytest_ctxeval.grading.judging import Judge
    from pytest_ctxeval.grading.registry import cases_from_transcript
    from pytest_ctxeval.transcript import read_transcript

    specs = [REGISTRY.get("drift"), REGISTRY.get("fits_window"), REGISTRY.get("nine_sections")]
    judge = Judge(make_llm())
    cmp = compare_real(SPOTTER, llm=make_llm(), registry=REGISTRY, specs=specs, calls=[ACOMPACT], judge=judge)
    [c] = cmp.compactions
    real = {v.grader: v for v in c.real.verdicts}
    case = cases_from_transcript(read_transcript(SPOTTER))[0]
    case.judge = judge
    graded = {v.grader: v for v in REGISTRY.run(case, specs)}
    assert {g: (v.status, v.reasons) for g, v in real.items()} == {g: (v.status, v.reasons) for g, v in graded.items()}
    assert real["drift"].status == real["fits_window"].status == "n/a"
    assert "a transcript cannot be re-compacted" in real["drift"].reasons[0]
    ours = {v.grader: v for v in c.ours.verdicts}
    assert ours["fits_window"].status == "pass"
    assert ours["drift"].status != "n/a" and "forced" in ours["drift"].reasons[0]
