"""The person's typed answer to the agent's question (AskUserQuestion) must survive the summary,
verbatim or in other words (review 4, G20); a picked option is not typed text, and the person's
messages keep their numbering."""

from __future__ import annotations

import pytest

from pytest_ctxeval.core.messages import ToolResultBlock, UserMessage
from pytest_ctxeval.reading.answers import answer_told, typed_answers

ASK = "Add an admin endpoint to list active discount codes, and write tests for it."
Q = "Which roles may list codes?"
TYPED = "staff and the finance team, but finance read-only"
ANSWERED = (f'User has answered your questions: "{Q}"="{TYPED}", "Paginate?"="Yes (Recommended)". '
            "You can now continue with the user's answers in mind.")


def _messages(kit, result=ANSWERED, options=None):
    questions = [{"question": Q, "options": options or []}, {"question": "Paginate?", "options": []}]
    return [kit.user(ASK), *kit.tool("AskUserQuestion", {"questions": questions}, result), kit.say("Adding it.")]


def _summary(kit, extra=""):
    return kit.summary({**dict.fromkeys(kit.SECTION_KINDS, "x"), "user_messages": f'- "{ASK}"' + extra,
                        "next": f'Add the endpoint: "{ASK}"'})


@pytest.mark.parametrize("extra", [
    f'\n- (answer) "{TYPED}"',
    "\n- User chose: staff and finance (finance read-only); pagination yes",
])
def test_a_typed_answer_told_verbatim_or_in_other_words_passes(grade, kit, extra):
    verdict = grade("verbatim_user_messages", kit.case(_messages(kit), _summary(kit, extra)))
    assert verdict.status == "pass", verdict.reasons
    assert "the 1 person-typed message" in verdict.reasons[0] and "1 typed answer" in verdict.reasons[0]


def test_a_typed_answer_the_summary_drops_fails_and_quotes_it(grade, kit):
    verdict = grade("verbatim_user_messages", kit.case(_messages(kit), _summary(kit)))
    assert verdict.status == "fail"
    assert f'"{Q}"' in verdict.reasons[0] and TYPED in verdict.reasons[0]
    assert verdict.score == 0.5


def test_a_picked_option_is_not_typed_text(grade, kit):
    picked = ('User has answered your questions: "Which roles may list codes?"="Staff and finance team". '
              "You can now continue with the user's answers in mind.")
    options = [{"label": "Staff and finance team"}, {"label": "Staff only"}]
    messages = _messages(kit, picked, options)
    assert typed_answers(messages) == []
    assert grade("verbatim_user_messages", kit.case(messages, _summary(kit))).status == "pass"


def test_user_notes_are_the_typed_words():
    result = ('User has answered your questions: "Where should the key live?"="keep it in the vault, never on disk" '
              "user notes: keep it in the vault, never on disk. You can now continue with the user's answers in mind.")
    [answer] = typed_answers([UserMessage(uuid="r", content=[ToolResultBlock(tool_use_id="t", content=result)])])
    assert answer.answer.rstrip(".") == "keep it in the vault, never on disk"


def test_told_needs_words_of_the_answer_in_one_line():
    assert not answer_told(TYPED, "- staff endpoint added\n- finance report exported")
    assert answer_told(TYPED, "- Roles: staff and finance; finance is read-only")
