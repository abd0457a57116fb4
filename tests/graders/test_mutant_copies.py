"""A mutation operator removes what the graders would still count (review finding A6).

fasthooks 2.0.76: drop_latest_request removed "do something requiring multiple tools in one turn,"
from section 6 but left the Analysis part's copy without the trailing comma (summary line 26), which
last_request_intact rightly still found: a false "survived". The operators now find copies the way
the graders do and check their mutant by the graders' own reading; quote_old_message takes "recent"
as next_step_quote does (the request a go-ahead started is recent, not old).
"""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.grading.mutation_library import builtin_mutations
from pytest_ctxeval.grading.registry import cases_from_transcript
from pytest_ctxeval.transcript import read_transcript

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: shared_paths
from shared_paths import CORPUS_DIR, needs_shared

OPS = {op.name: op for op in builtin_mutations()}
LAST = "do something requiring multiple tools in one turn, "


def _case(kit, next_step: str = 'Done. The user asked: "do something requiring multiple tools in one turn,"'):
    msgs = [kit.user("can you read it back with Read tool?"), kit.say("Read it."),
            kit.user(LAST), kit.say("Ran three tools.")]
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies.update(user_messages='- "can you read it back with Read tool?"\n- "do something requiring multiple tools '
                                'in one turn,"', next=next_step)
    summary = kit.summary(bodies)
    analysis = ('Analysis:\n5. **Fifth User Message**: "do something requiring multiple tools in one turn"\n\n'
                "Summary:\n")
    return kit.case(msgs, summary, summary_message=analysis + summary)


def test_drop_latest_request_removes_the_analysis_copy_too(grade, kit):
    case = _case(kit)
    assert grade("last_request_intact", case).status == "pass"
    (mutant,) = OPS["drop_latest_request"].apply(case, seed=0)
    assert "multiple tools" not in mutant.case.summary_message
    verdict = grade("last_request_intact", mutant.case)
    assert verdict.status == "fail" and "do something requiring multiple tools" in verdict.reasons[0]


def test_a_copy_the_operator_cannot_reach_makes_no_mutant(grade, kit):
    # the request kept in a form no operator pattern removes (its words spread over two quotes):
    # the grader still finds it, so a mutant would be a false "survived"; none is made
    case = _case(kit)
    case.summary_message = case.summary_message.replace(
        '"do something requiring multiple tools in one turn"', '"do something requiring multiple  \n tools" "in one turn"')
    assert grade("last_request_intact", case).status == "pass"
    assert OPS["drop_latest_request"].apply(case, seed=0) == []
    # with that copy gone too, the operator makes its mutant and the grader kills it
    case.summary_message = case.summary_message.replace('"do something requiring multiple  \n tools" "in one turn"', "")
    (mutant,) = OPS["drop_latest_request"].apply(case, seed=0)
    assert grade("last_request_intact", mutant.case).status == "fail"


def test_quote_old_message_does_not_call_the_request_a_go_ahead_started_old(grade, kit):
    # monodreams 2.1.150: "Setup tasks ... in this branch." then "Kick it off": both are the request
    msgs = [kit.user("Split the engine into packages and write the plan down first"), kit.say("Plan written."),
            kit.user("Setup tasks so you promote and then create the registry and the CLI tool"),
            kit.say("Shall I start?"), kit.user("Kick it off"), kit.say("Starting.")]
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies["next"] = 'Create the registry. The user said: "Kick it off"'
    case = kit.case(msgs, kit.summary(bodies))
    mutants = OPS["quote_old_message"].apply(case, seed=0)
    assert [m.text for m in mutants] == ["Split the engine into packages and write the plan down first"]
    verdict = grade("next_step_quote", mutants[0].case)
    assert verdict.status == "fail" and "quotes an older message" in verdict.reasons[0]


@needs_shared
def test_fasthooks_drop_latest_request_is_killed():
    transcript = read_transcript(CORPUS_DIR / "oneryalcin__fasthooks__sample_main_transcript.jsonl")
    (case,) = cases_from_transcript(transcript)
    registry = load_graders()
    (mutant,) = OPS["drop_latest_request"].apply(case, seed=0)
    assert "multiple tools" not in mutant.case.summary_message
    (verdict,) = registry.run(mutant.case, [registry.get("last_request_intact")])
    assert verdict.status == "fail"
