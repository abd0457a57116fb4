"""Graders under other compactors: format-specific graders are n/a with a reason, facts
are looked for where each format keeps them, and the two graders added for compactors
(format_sections, fits_window) pass a good case and fail a bad one with a useful reason."""

from __future__ import annotations

import pytest

from pytest_ctxeval.compaction.codex import FORMAT as CODEX
from pytest_ctxeval.compaction.formats import NO_SUMMARY
from pytest_ctxeval.compaction.opencode import FORMAT as OPENCODE
from pytest_ctxeval.core.config import EngineConfig

CLAUDE_ONLY = ("nine_sections", "analysis_stripped", "continuation", "next_step_quote")

OPENCODE_GOOD = """## Objective
Move sessions to Redis; the user said "Refactor src/auth/session.py to use opaque session tokens instead of JWT".

## Important Details
KeyError: 'user_id' in the loader, still open.

## Work State
### Completed
- Read the auth module
### Active
- Replace JWT encoding with opaque tokens
- Add a revocation table migration
### Blocked
- None.

## Next Move
Fix the loader.

## Relevant Files
- src/auth/session.py: encode() issues opaque tokens
- src/auth/tokens.py: the TokenStore"""


def _as(case, compactor, fmt, **changes):
    case.compactor, case.summary_format = compactor, fmt
    for key, value in changes.items():
        setattr(case, key, value)
    case.__dict__.pop("sections", None)
    case.__dict__.pop("kept_text", None)
    return case


@pytest.mark.parametrize("name", CLAUDE_ONLY)
def test_claude_code_format_graders_are_na_for_another_compactor_with_the_reason(kit, session, grade, name):
    case = _as(kit.case(session.messages, OPENCODE_GOOD), "opencode", OPENCODE)
    verdict = grade(name, case)
    assert verdict.status == "n/a"
    assert verdict.reasons == [f"{name} checks the format of the claude_code compactor; the opencode compactor writes "
                               "an opencode summary"]


def test_a_user_message_kept_as_a_message_counts_like_one_in_section_6(kit, session, grade):
    people = [m for m in session.messages if m.kind == "user" and isinstance(m.content, str)]
    summary_msg = kit.summary_msg("handoff")
    kept = _as(kit.case(session.messages, "1. Goal:\n   opaque tokens", post_messages=[*people, summary_msg]),
               "codex", CODEX)
    verdict = grade("verbatim_user_messages", kept)
    assert verdict.status == "pass", verdict.reasons
    dropped = _as(kit.case(session.messages, "1. Goal:\n   opaque tokens", post_messages=[people[-1], summary_msg]),
                  "codex", CODEX)
    verdict = grade("verbatim_user_messages", dropped)
    assert verdict.status == "fail"
    assert verdict.reasons[0].startswith(
        f'user message 1 of 2 is not verbatim in the post-compact context: "{session.first[:69]}…"')


def test_a_fact_is_looked_for_in_the_formats_section_of_its_kind(kit, session, grade):
    case = _as(kit.case(session.messages, OPENCODE_GOOD), "opencode", OPENCODE)
    assert grade("files_preserved", case).status == "pass"
    assert grade("pending_tasks", case).status == "pass"   # Work State holds pending tasks too
    # a file named only outside "Relevant Files" is lost from where opencode keeps files
    moved = OPENCODE_GOOD.replace("- src/auth/tokens.py: the TokenStore", "") + "\n"
    verdict = grade("files_preserved", _as(kit.case(session.messages, moved), "opencode", OPENCODE))
    assert verdict.status == "fail"
    assert verdict.reasons == ["src/auth/tokens.py was changed but is not named in the 'Relevant Files' section (line 19) "
                               "nor anywhere else in the summary"]
    without = OPENCODE_GOOD.split("## Relevant Files")[0]
    verdict = grade("files_preserved", _as(kit.case(session.messages, without), "opencode", OPENCODE))
    assert verdict.status == "fail" and verdict.reasons[0].startswith(
        "the 'Relevant Files' section of the opencode summary is missing, so the 2 changed files")
    # errors: the format has no errors section, so the whole context is searched
    assert grade("errors_preserved", case).status == "pass"


def test_format_sections_passes_a_complete_summary(kit, session, grade):
    verdict = grade("format_sections", _as(kit.case(session.messages, OPENCODE_GOOD), "opencode", OPENCODE))
    assert verdict.status == "pass" and verdict.reasons == [
        "all 5 sections of the opencode summary present, in order, none empty"]


@pytest.mark.parametrize("summary, reason", [
    (OPENCODE_GOOD.split("## Relevant Files")[0], "the opencode summary lacks 'Relevant Files' (found: 'Objective', "
                                                  "'Important Details', 'Work State', 'Next Move')"),
    (OPENCODE_GOOD.replace("## Next Move\nFix the loader.\n\n", "") + "\n\n## Next Move\nFix the loader.",
     "sections out of order: Objective, Important Details, Work State, Relevant Files, Next Move (the format's order: "
     "Objective, Important Details, Work State, Next Move, Relevant Files)"),
    (OPENCODE_GOOD.replace("KeyError: 'user_id' in the loader, still open.", ""),
     "section 'Important Details' (line 4) is empty"),
], ids=["missing", "out-of-order", "empty"])
def test_format_sections_fails_a_broken_summary_naming_the_section(kit, session, grade, summary, reason):
    verdict = grade("format_sections", _as(kit.case(session.messages, summary), "opencode", OPENCODE))
    assert verdict.status == "fail" and reason in verdict.reasons, verdict.reasons
    assert 0 <= verdict.score < 1


def test_format_sections_is_na_for_the_nine_sections_and_for_no_summary(kit, session, grade, good_case):
    assert grade("format_sections", good_case).reasons == [
        "the claude_code compactor writes Claude Code's nine sections (nine_sections checks them)"]
    masked = _as(kit.case(session.messages, ""), "observation_masking", NO_SUMMARY)
    assert grade("format_sections", masked).status == "n/a"


def test_fits_window_passes_requests_within_the_window_and_fails_one_over_it(kit, session, grade, good_case):
    good_case.config = EngineConfig.for_window(20_000)
    verdict = grade("fits_window", good_case)
    assert verdict.status == "pass" and "of the 20,000-token window" in verdict.reasons[0]
    big = {"messages": [{"role": "user", "content": "x" * 90_000}]}
    good_case.requests = [*good_case.requests, big]
    verdict = grade("fits_window", good_case)
    assert verdict.status == "fail" and verdict.score == 0.5
    assert verdict.reasons == ["1 of 2 exceed the 20,000-token window (request 2 after the compaction: 22,500 "
                               "tokens); the API would answer 'prompt is too long'"]


def test_fits_window_is_na_without_an_engine_run(grade, good_case):
    assert grade("fits_window", good_case).status == "n/a"  # no config: a real transcript


def test_superseded_work_still_open_in_the_todo_list_is_not_held_against_an_early_compaction(kit, session, grade):
    summary = OPENCODE_GOOD
    # the span ends with the todo list (the person has not spoken since): the plan as it stood
    span = session.messages + kit.todo(("Replace JWT encoding with opaque tokens", "in_progress"),
                                       ("Add a revocation table migration", "pending"))
    early = _as(kit.case(span, summary, expect={"superseded": ["Add a revocation table migration"]}),
                "opencode", OPENCODE)
    verdict = grade("no_superseded_work", early)
    assert verdict.status == "n/a" and "still open items of the latest todo list in the summarised span" in verdict.reasons[0]
    # the change of plan in the kept tail (after the summarised head): the head's summary may list it
    tail = kit.todo(("Replace JWT encoding with opaque tokens", "in_progress"))
    split = _as(kit.case(span, summary, history=span + tail,
                         expect={"superseded": ["Add a revocation table migration"]}), "opencode", OPENCODE)
    assert grade("no_superseded_work", split).status == "n/a"
    # once the plan changed (the todo is gone), proposing it is drift, named where it is
    later = session.messages + kit.todo(("Replace JWT encoding with opaque tokens", "in_progress"))
    summary = summary.replace("### Active\n- Replace JWT encoding with opaque tokens\n- Add a revocation table migration",
                              "### Active\n- Add a revocation table migration\n- Replace JWT encoding with opaque tokens")
    verdict = grade("no_superseded_work", _as(kit.case(later, summary, expect={
        "superseded": ["Add a revocation table migration"]}), "opencode", OPENCODE))
    assert verdict.status == "fail"
    assert verdict.reasons[0].startswith("the 'Work State' section (line 7) proposes superseded work "
                                         "\"Add a revocation table migration\"")


def test_a_correction_after_the_todo_list_in_the_span_is_checked(kit, session, grade):
    """The todo list still holds the old plan, but the person corrected it after that list, inside
    the summarised span: the correction is in what was summarised, so proposing the old plan is
    superseded work, not an early compaction (found in review: the n/a hid it)."""
    corrected = session.messages + kit.todo(("Replace JWT encoding with opaque tokens", "in_progress"),
                                            ("Add a revocation table migration", "pending"))
    corrected += [kit.user("Stop: no revocation table. Keep the tokens stateless.")]
    verdict = grade("no_superseded_work", _as(kit.case(corrected, OPENCODE_GOOD, expect={
        "superseded": ["Add a revocation table migration"]}), "opencode", OPENCODE))
    assert verdict.status == "fail"
    assert "proposes superseded work \"Add a revocation table migration\"" in verdict.reasons[0]


def test_drift_is_na_for_a_compactor_that_writes_no_summary(kit, session):
    from pytest_ctxeval.grading import load_graders
    from pytest_ctxeval.grading.judging import Judge
    from pytest_ctxeval.llm import make_llm

    registry = load_graders()
    case = _as(kit.case(session.messages, ""), "observation_masking", NO_SUMMARY)
    case.judge = Judge(make_llm("offline"))
    (verdict,) = registry.run(case, [registry.get("drift")])
    assert verdict.status == "n/a" and "writes no summary" in verdict.reasons[0]
