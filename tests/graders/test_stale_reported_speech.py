"""stale_values reads section 6 in other words as history (a third fresh review, F12): a prompt that
asks for the user's messages "in your own words" gets items in reported speech, and an old value in
one of them, with the correction listed after it, is what the user said then, not a current claim.
Without the correction after it, the old value still fails."""

from __future__ import annotations

from test_planted import UPDATE, case_for, facts, updated_session

OLD = "- The user said that the billing API listens on port 8080, and asked the assistant to point the client at it."
NEW = "- The user asked the assistant to use port 9090 rather than 8080, the old gateway."


def test_an_old_value_in_reported_speech_before_its_correction_is_history(kit, grade) -> None:
    summary = kit.summary({"user_messages": f"{OLD}\n{NEW}", "current": "The client points at port 9090."})
    v = grade("stale_values", case_for(kit, updated_session(kit), summary, facts(UPDATE)))
    assert v.status == "pass", v.reasons


def test_an_old_value_in_reported_speech_without_its_correction_fails(kit, grade) -> None:
    # the correction is left out of section 6: the list now says the client should use 8080
    summary = kit.summary({"user_messages": OLD, "current": "The client points at port 9090."})
    v = grade("stale_values", case_for(kit, updated_session(kit), summary, facts(UPDATE), index=2))
    assert v.status == "fail"
    assert "section 6 'All user messages' (summary line" in v.reasons[0] and "states it as current" in v.reasons[0]
    # ... and listed after the correction, it is the last word on the port: stale
    summary = kit.summary({"user_messages": f"{NEW}\n{OLD}", "current": "The client points at port 9090."})
    v = grade("stale_values", case_for(kit, updated_session(kit), summary, facts(UPDATE)))
    assert v.status == "fail"


def test_an_old_value_stated_elsewhere_still_fails(kit, grade) -> None:
    summary = kit.summary({"user_messages": f"{OLD}\n{NEW}", "current": "The client talks to port 8080."})
    v = grade("stale_values", case_for(kit, updated_session(kit), summary, facts(UPDATE)))
    assert v.status == "fail" and "section 8 'Current Work'" in v.reasons[0]
