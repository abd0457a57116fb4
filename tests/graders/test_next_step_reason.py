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
