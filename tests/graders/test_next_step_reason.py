"""next_step_quote's reason for a next step without a quote says what the rule is (any verbatim quote
of the most recent conversation) and where else the summary quotes it (review finding A3: fenv-org
2.1.50 and slopometry 2.0.65 quote the last request in section 8, not in section 9)."""

from __future__ import annotations

LAST = "5 line breaks after summary. update the skill too"


def _case(kit, current: str, next_step: str):
    msgs = [kit.user("format the summary output"), kit.say("Done."), kit.user(LAST), kit.say("Updating the skill.")]
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies.update(current=current, next=next_step)
    text = kit.summary(bodies)
    return kit.case(msgs, text), text


def test_a_next_step_without_a_quote_names_the_rule_and_the_quote_in_section_8(grade, kit):
    good, _ = _case(kit, f'The user asked: "{LAST}"', f'Update the skill. The user said: "{LAST}"')
    assert grade("next_step_quote", good).status == "pass"
    bad, text = _case(kit, f'The user asked: "{LAST}"', "Update the skill file next.")
    verdict = grade("next_step_quote", bad)
    assert verdict.status == "fail"
    (reason,) = verdict.reasons
    assert "quotes nothing; the prompt asks it to quote the most recent conversation verbatim" in reason
    assert "the most recent request verbatim" not in reason   # the old wording overstated the rule
    assert f"(section 8 quotes it, line {kit.line_of(text, 'The user asked')}" in reason
    assert reason.endswith("but not in the next step)")
    # nothing quoted anywhere: no note
    bare, _ = _case(kit, "Updating the skill.", "Update the skill file next.")
    (reason,) = grade("next_step_quote", bare).reasons
    assert "section 8" not in reason and f'the last request: "{LAST}"' in reason


READY = "Implement debug JSON sidecar and expand controls in shared transcript UI"


def test_a_quote_of_a_tool_output_in_section_8_is_not_called_a_quote_of_the_last_request(grade, kit):
    """An unseen real session (spotter, 2.1.39, auto compaction after autonomous work): section 8
    quotes a task title from a tool's output, section 9 paraphrases the step. The reason said
    'the last request: "Work on …" (section 8 quotes it, …)', as if section 8 quoted the request."""
    request = "Work on the transcript epic and start with the first ready task"
    msgs = [kit.user(request), kit.say("Looking for ready tasks."),
            *kit.tool("Bash", {"command": "bd ready"}, f"1. [task] dov.3: {READY}"), kit.say("Starting dov.3.")]
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies.update(current=f'Working on dov.3 - "{READY}".')
    good_bodies = dict(bodies, next=f'Continue dov.3, "{READY}": fix the compile error.')
    assert grade("next_step_quote", kit.case(msgs, kit.summary(good_bodies))).status == "pass"
    text = kit.summary(dict(bodies, next="Fix the two errors in the components module, then add the tests."))
    verdict = grade("next_step_quote", kit.case(msgs, text))
    assert verdict.status == "fail"
    (reason,) = verdict.reasons
    assert f'the last request: "{request}"' in reason
    # review 5, #20: and it says whose words they are (a tool's output), not "the most recent conversation"
    assert (f"(section 8 quotes a tool's output after the last request (not the person's or the assistant's words), "
            f"line {kit.line_of(text, 'Working on dov.3')}") in reason
    assert "quotes it" not in reason
