"""The structural rule graders: tool_pairing, nine_sections, analysis_stripped, continuation."""

from __future__ import annotations

import re

import pytest

STRUCTURAL = ("tool_pairing", "nine_sections", "analysis_stripped", "continuation")


def test_registry_holds_the_eighteen_builtin_rule_graders_and_three_llm_ones(registry):
    rules = [s.name for s in registry.select(kinds=["rule"])]
    assert sorted(rules) == sorted(STRUCTURAL + (
        "verbatim_user_messages", "next_step_quote", "files_preserved", "errors_preserved",
        "pending_tasks", "no_superseded_work",
        "last_request_intact", "constraints_preserved", "failed_approaches_preserved",
        "format_sections", "fits_window", "facts_survive", "stale_values", "compresses"))
    assert sorted(s.name for s in registry.select(kinds=["llm"])) == ["drift", "intent_preservation", "probes"]


@pytest.mark.parametrize("name", STRUCTURAL)
def test_passes_a_good_compaction(grade, good_case, name):
    verdict = grade(name, good_case)
    assert verdict.status == "pass", verdict.reasons
    assert verdict.score == 1.0
    assert verdict.kind == "rule"


# ---------------------------------------------------------------------------------------------
# tool_pairing


def test_tool_pairing_counts_every_list_it_checked(grade, good_case):
    verdict = grade("tool_pairing", good_case)
    assert "2 message lists checked" in verdict.reasons[0]  # post-compact context + 1 request


def test_tool_pairing_keeps_a_complete_pair_after_the_summary(grade, kit):
    use = kit.call("Read", {"file_path": "src/a.py"}, id="toolu_keep")
    post = [kit.boundary(), kit.summary_msg("summary"), use, kit.answer(use, "content"), kit.say("Read it.")]
    verdict = grade("tool_pairing", kit.case([], "summary", post_messages=post))
    assert verdict.status == "pass", verdict.reasons


def test_tool_pairing_fails_when_a_kept_tool_use_loses_its_result(grade, kit):
    use = kit.call("Read", {"file_path": "src/a.py"}, id="toolu_split")
    # boundary (dropped from the API list), summary = messages[0], tool_use = messages[1], then a
    # person message where the tool_result should be.
    post = [kit.boundary(), kit.summary_msg("summary"), use, kit.user("please continue")]
    verdict = grade("tool_pairing", kit.case([], "summary", post_messages=post))
    assert verdict.status == "fail"
    assert verdict.score < 1
    (reason,) = verdict.reasons
    assert reason.startswith("post-compact context (as sent to the API):")
    assert "toolu_split" in reason
    assert "messages[1]" in reason and "not answered in messages[2]" in reason


def test_tool_pairing_allows_a_tool_use_still_in_flight_at_the_end(grade, kit):
    use = kit.call("Bash", {"command": "pytest"}, id="toolu_inflight")
    post = [kit.boundary(), kit.summary_msg("summary"), kit.say("Running the tests."), kit.user("ok"), use]
    verdict = grade("tool_pairing", kit.case([], "summary", post_messages=post))
    assert verdict.status == "pass", verdict.reasons


def test_tool_pairing_checks_requests_sent_after_the_compaction(grade, kit, good_case):
    orphan = {"messages": [
        {"role": "user", "content": "summary"},
        {"role": "assistant", "content": [{"type": "text", "text": "Looking."}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_orphan", "content": "x"}]},
    ]}
    good_case.requests = [good_case.requests[0], orphan]
    verdict = grade("tool_pairing", good_case)
    assert verdict.status == "fail"
    assert 0 < verdict.score < 1   # 2 of the 3 lists are fine
    (reason,) = verdict.reasons
    assert reason.startswith("request 2 after the compaction:")
    assert "messages[2]: tool_result toolu_orphan answers no tool_use in messages[1]" in reason


def test_tool_pairing_checks_the_compaction_request_itself(grade, kit):
    bad = {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}
    verdict = grade("tool_pairing", kit.case([], "summary", compaction_request=bad))
    assert verdict.status == "fail"
    assert "compaction request: messages[1]: two user messages in a row" in verdict.reasons[0]


def test_tool_pairing_reports_how_many_more_problems_a_list_has(grade, kit):
    bad = {"messages": [{"role": "assistant", "content": [{"type": "text", "text": "x"}]},
                        {"role": "assistant", "content": [{"type": "text", "text": "y"}]}]}
    verdict = grade("tool_pairing", kit.case([], "summary", requests=[bad]))
    assert verdict.status == "fail"
    assert re.search(r"\(\+\d+ more\)", verdict.reasons[0])
    assert len(verdict.evidence["problems"]["request 1 after the compaction"]) >= 2


def test_tool_pairing_is_na_without_anything_to_check(grade, kit):
    verdict = grade("tool_pairing", kit.case([kit.user("hi")], "summary"))
    assert verdict.status == "n/a"


# ---------------------------------------------------------------------------------------------
# nine_sections


@pytest.mark.parametrize("style", ["colon", "md"])
def test_nine_sections_accepts_both_header_styles(grade, kit, session, style):
    text = kit.summary(session.bodies, style=style)
    assert ("1. Primary Request and Intent:" in text) == (style == "colon")
    assert ("## 1. Primary Request and Intent\n" in text) == (style == "md")
    verdict = grade("nine_sections", kit.case([], text))
    assert verdict.status == "pass", verdict.reasons
    assert verdict.score == 1.0
    assert verdict.evidence["found"] == list(kit.SECTION_KINDS)


def test_nine_sections_accepts_bold_headers(grade, kit, session):
    text = "\n\n".join(f"**{i}. {kit.SECTION_TITLES[k]}:**\n{session.bodies[k]}"
                       for i, k in enumerate(kit.SECTION_KINDS, start=1))
    assert grade("nine_sections", kit.case([], text)).status == "pass"


def test_nine_sections_names_a_missing_section(grade, kit, session):
    text = kit.summary(session.bodies, omit=["problem"])
    verdict = grade("nine_sections", kit.case([], text))
    assert verdict.status == "fail"
    assert verdict.score == pytest.approx(8 / 9, abs=1e-3)
    assert "missing section: 5. Problem Solving" in verdict.reasons
    assert verdict.evidence["missing"] == ["problem"]


def test_nine_sections_names_all_missing_sections_of_a_prose_summary(grade, kit):
    verdict = grade("nine_sections", kit.case([], "We refactored the auth module and fixed a bug."))
    assert verdict.status == "fail"
    assert verdict.score == 0.0
    reason = verdict.reasons[0]
    assert reason.startswith("missing sections: 1. Primary Request and Intent")
    assert "6. All user messages" in reason and reason.endswith("9. Optional Next Step")


def _swapped(kit, session):
    order = list(kit.SECTION_KINDS)
    order[6], order[7] = order[7], order[6]   # Current Work before Pending Tasks
    return kit.summary(session.bodies, order=order)


def test_nine_sections_names_both_sections_and_lines_when_out_of_order(grade, kit, session):
    text = _swapped(kit, session)
    verdict = grade("nine_sections", kit.case([], text))
    assert verdict.status == "fail"
    pending_line = kit.line_of(text, "7. Pending Tasks:")
    current_line = kit.line_of(text, "8. Current Work:")
    assert pending_line > current_line
    assert verdict.reasons == [f"out of order: 'Pending Tasks' (line {pending_line}) comes after "
                               f"'Current Work' (line {current_line})"]


def test_nine_sections_out_of_order_scores_below_one(grade, kit, session):
    verdict = grade("nine_sections", kit.case([], _swapped(kit, session)))
    assert verdict.status == "fail"
    assert verdict.score < 1


def _empty_errors(kit, session):
    return kit.summary({**session.bodies, "errors": ""})


def test_nine_sections_names_an_empty_section_and_its_line(grade, kit, session):
    text = _empty_errors(kit, session)
    verdict = grade("nine_sections", kit.case([], text))
    assert verdict.status == "fail"
    line = kit.line_of(text, "4. Errors and fixes:")
    assert verdict.reasons == [f"section 'Errors and fixes' (line {line}) is empty"]


def test_nine_sections_empty_section_scores_below_one(grade, kit, session):
    verdict = grade("nine_sections", kit.case([], _empty_errors(kit, session)))
    assert verdict.status == "fail"
    assert verdict.score < 1


# ---------------------------------------------------------------------------------------------
# analysis_stripped


def test_analysis_stripped_fails_on_the_real_transcript_form(grade, kit, session):
    """Real transcripts store the scratchpad as 'Analysis:' ... 'Summary:' in the summary message."""
    summary = kit.summary(session.bodies)
    raw = "Analysis:\nLet me go through the conversation chronologically.\n\nSummary:\n" + summary
    message = kit.continuation(raw, auto=False)
    verdict = grade("analysis_stripped", kit.case([], summary, summary_message=message))
    assert verdict.status == "fail"
    assert verdict.score < 1
    (reason,) = verdict.reasons
    line = kit.line_of(message, "Analysis:")
    assert f"still carries the analysis scratchpad (line {line}," in reason
    assert "Let me go through the conversation chronologically" in reason
    assert verdict.evidence["wasted_chars"] > len("Let me go through the conversation chronologically")


def test_analysis_stripped_fails_on_an_analysis_element(grade, kit, session):
    text = "<analysis>\nThe user wants opaque tokens.\n</analysis>\n" + kit.summary(session.bodies)
    verdict = grade("analysis_stripped", kit.case([], text))
    assert verdict.status == "fail"
    assert "analysis scratchpad (line 1," in verdict.reasons[0]
    assert "The user wants opaque tokens" in verdict.reasons[0]


def test_analysis_stripped_fails_on_leftover_summary_tags(grade, kit, session):
    text = "<summary>\n" + kit.summary(session.bodies) + "\n</summary>"
    verdict = grade("analysis_stripped", kit.case([], text))
    assert verdict.status == "fail"
    assert verdict.score < 1
    assert verdict.reasons == ["the <summary> tags were not removed (2 tags left)"]


def test_analysis_stripped_reports_both_problems(grade, kit, session):
    text = "<analysis>think</analysis>\n<summary>\n" + kit.summary(session.bodies) + "\n</summary>"
    verdict = grade("analysis_stripped", kit.case([], text))
    assert verdict.status == "fail"
    assert len(verdict.reasons) == 2


def test_analysis_stripped_passes_a_clean_message(grade, kit, session):
    message = kit.continuation(kit.summary(session.bodies), auto=True)
    verdict = grade("analysis_stripped", kit.case([], "x", summary_message=message))
    assert verdict.status == "pass"
    assert verdict.score == 1.0


# ---------------------------------------------------------------------------------------------
# continuation


def test_continuation_auto_passes_with_path_and_instruction(grade, kit):
    message = kit.continuation("1. Primary Request and Intent:\n   x", auto=True)
    verdict = grade("continuation", kit.case([], "x", summary_message=message, trigger="auto",
                                             transcript_path=kit.TRANSCRIPT))
    assert verdict.status == "pass"
    assert verdict.reasons == ["transcript path and continuation instruction present"]


def test_continuation_auto_fails_without_the_continue_instruction(grade, kit):
    message = kit.continuation("1. Primary Request and Intent:\n   x", auto=False)   # path only
    verdict = grade("continuation", kit.case([], "x", summary_message=message, trigger="auto",
                                             transcript_path=kit.TRANSCRIPT))
    assert verdict.status == "fail"
    assert verdict.score == 0.5
    (reason,) = verdict.reasons
    assert reason.startswith("no continuation instruction")
    assert "continue from where it left off" in reason


def test_continuation_auto_fails_without_the_transcript_path(grade, kit):
    message = ("This session is being continued from a previous conversation.\n\nSummary:\nx\n\n"
               "Continue the conversation from where it left off without asking the user any further questions.")
    verdict = grade("continuation", kit.case([], "x", summary_message=message, trigger="auto"))
    assert verdict.status == "fail"
    assert verdict.score == 0.5
    assert verdict.reasons[0].startswith("no transcript path")
    assert "read the full transcript at: <path>" in verdict.reasons[0]


def test_continuation_auto_with_neither_scores_zero(grade, kit):
    verdict = grade("continuation", kit.case([], "x", summary_message="Summary:\nx", trigger="auto"))
    assert verdict.status == "fail"
    assert verdict.score == 0.0
    assert len(verdict.reasons) == 2


def test_continuation_manual_needs_only_the_path(grade, kit):
    message = kit.continuation("1. Primary Request and Intent:\n   x", auto=False)
    assert "continue the conversation" not in message.lower()
    verdict = grade("continuation", kit.case([], "x", summary_message=message, trigger="manual",
                                             transcript_path=kit.TRANSCRIPT))
    assert verdict.status == "pass"
    assert verdict.reasons == ["transcript path present"]


def test_continuation_manual_without_path_fails(grade, kit):
    verdict = grade("continuation", kit.case([], "x", summary_message="Summary:\n1. x", trigger="manual"))
    assert verdict.status == "fail"
    assert verdict.reasons[0].startswith("no transcript path")


def test_continuation_fails_on_another_sessions_transcript(grade, kit):
    other = "/tmp/ctxeval-tests/other-session.jsonl"
    message = kit.continuation("1. Primary Request and Intent:\n   x", auto=True, path=other)
    verdict = grade("continuation", kit.case([], "x", summary_message=message, trigger="auto",
                                             transcript_path=kit.TRANSCRIPT))
    assert verdict.status == "fail"
    assert verdict.score < 1
    (reason,) = verdict.reasons
    assert repr(other) in reason and repr(kit.TRANSCRIPT) in reason
    assert "is not this session's transcript" in reason


def test_continuation_accepts_a_transcript_path_with_a_space(grade, kit):
    path = "/Users/John Smith/.claude/projects/-Users-John-Smith-app/0b5e7c1e.jsonl"
    message = kit.continuation("1. Primary Request and Intent:\n   x", auto=True, path=path)
    verdict = grade("continuation", kit.case([], "x", summary_message=message, trigger="auto",
                                             transcript_path=path))
    assert verdict.status == "pass", verdict.reasons
