"""Section 9 quoting the assistant's own plan as inline code (real-session round 3 left it open).

The prompt asks section 9 for a quote of the most recent conversation: the last request, or what
was said and done after it. A real summary set the assistant's last sentence in backticks
(`` `I'll wrap the upload call in the retry helper` ``); a code span counted only when it held the
person's words, so the next step "quoted nothing" (a false alarm; the same words in double quotes
passed). A code span that reads as a sentence and is verbatim in the assistant's words after the
request is a quote now; a command or path it ran stays code, and a sentence it never said is no quote.
"""

from __future__ import annotations

import pytest

REQUEST = "The nightly upload job keeps failing on timeouts; make it robust."
PLAN = "I'll wrap the upload call in the retry helper and then rerun the integration suite."
COMMAND = "pytest tests/integration -k upload --maxfail 1"


def _case(kit, next_step: str):
    messages = [kit.user(REQUEST), kit.say(PLAN), *kit.tool("Bash", {"command": COMMAND}, "1 failed, 12 passed")]
    summary = kit.summary({"request": "Make the upload job robust", "user_messages": f'- "{REQUEST}"',
                           "next": next_step})
    return kit.case(messages, summary)


@pytest.mark.parametrize("next_step", [
    "Continue with the plan: `I'll wrap the upload call in the retry helper`",
    'Continue with the plan: "I\'ll wrap the upload call in the retry helper"',
])
def test_the_assistants_plan_quoted_in_backticks_or_quote_marks_passes(grade, kit, next_step):
    v = grade("next_step_quote", _case(kit, next_step))
    assert v.status == "pass", v.reasons
    assert "quotes the most recent conversation: \"I'll wrap the upload call in the retry helper\"" in v.reasons[0]


@pytest.mark.parametrize("next_step", [
    f"Continue: `{COMMAND}`",                                  # a command it ran is code
    "Continue: `I'll rewrite the whole upload module from scratch`",  # a sentence nobody said
])
def test_a_command_or_an_invented_sentence_in_backticks_is_no_quote(grade, kit, next_step):
    v = grade("next_step_quote", _case(kit, next_step))
    assert v.status == "fail", v.reasons
    assert "proposes a step but quotes nothing" in v.reasons[0]
