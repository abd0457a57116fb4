"""The intent rule graders: last_request_intact, constraints_preserved, failed_approaches_preserved.

Each passes a faithful summary, fails one that lost what it checks (with a reason naming what is
missing and where), is n/a when there is nothing to check, and looks where the fact may live after
each kind of compaction (full, session memory, partial with kept messages, a real transcript's).
"""

from __future__ import annotations

import pytest

from pytest_ctxeval.core.messages import AttachmentMessage

INTENT = ("last_request_intact", "constraints_preserved", "failed_approaches_preserved")

MEMORY = ("<system-reminder>\nContents of /srv/shop/ops/CLAUDE.md (project instructions, checked into the codebase):\n\n"
          "- Always back up a file before editing it on the server\n</system-reminder>")
MULTI = ("First rename cust_id to customer_id in src/export/columns.py, then regenerate the fixtures with make "
         "fixtures, then update docs/export.md, and finally open a draft PR against develop.")


@pytest.fixture
def expect():
    return {"constraints": ["never touch the migrations folder", "Always back up a file before editing it on the server"],
            "failed_approaches": ["coupons.get(key)"]}


@pytest.fixture
def messages(kit):
    return [
        kit.user("Fix the coupon KeyError in src/checkout/service.py"),
        kit.meta(MEMORY),
        kit.user("One rule: never touch the migrations folder."),
        *kit.tool("Edit", {"file_path": "src/checkout/service.py", "old_string": "coupons[key]",
                           "new_string": "coupons.get(key)"}),
        kit.say("coupons.get(key) did not fix it: the discount is not applied. Reverting."),
        *kit.tool("Edit", {"file_path": "src/checkout/service.py", "old_string": "coupons.get(key)",
                           "new_string": "coupons[key]"}),
        kit.user(MULTI),
    ]


def good_bodies(**over):
    bodies = {
        "request": "Fix the coupon KeyError. Rules: never touch the migrations folder; always back up a file before "
                   "editing it on the server.",
        "concepts": "- Coupon cache keys",
        "files": "- src/checkout/service.py — edited, then reverted",
        "errors": "- None.",
        "problem": "- coupons.get(key) did not fix it (discount not applied); reverted.",
        "user_messages": f'- "Fix the coupon KeyError in src/checkout/service.py"\n- "One rule: never touch the migrations '
                         f'folder."\n- "{MULTI}"',
        "pending": "- The four steps of the last request",
        "current": "Reverted the coupons.get(key) attempt.",
        "next": f'Start on the last request: "{MULTI}"',
    }
    bodies.update(over)
    return bodies


@pytest.mark.parametrize("name", INTENT)
def test_passes_a_good_summary(grade, kit, messages, expect, name):
    verdict = grade(name, kit.case(messages, kit.summary(good_bodies()), expect=expect))
    assert verdict.status == "pass", verdict.reasons
    assert verdict.score == 1.0


@pytest.mark.parametrize(("name", "reason"), [
    ("last_request_intact", "no person-typed message before this compaction"),
    ("constraints_preserved", "expect.constraints is empty"),
    ("failed_approaches_preserved", "expect.failed_approaches is empty"),
])
def test_nothing_to_check_is_not_applicable(grade, kit, name, reason):
    verdict = grade(name, kit.case([kit.meta("<system-reminder>x</system-reminder>")], kit.summary(good_bodies())))
    assert verdict.status == "n/a" and verdict.reasons == [reason]


def test_expectations_not_reached_yet_are_not_applicable(grade, kit):
    case = kit.case([kit.user("hello there")], kit.summary(good_bodies()),
                    expect={"constraints": ["never deploy on Fridays"], "failed_approaches": ["pip install -U"]})
    assert grade("constraints_preserved", case).reasons == ["no constraint of expect.constraints has come up yet"]
    assert grade("failed_approaches_preserved", case).reasons == [
        "no approach of expect.failed_approaches has come up yet"]


# -- last_request_intact ------------------------------------------------------------------------------


def test_last_request_names_the_parts_that_are_missing(grade, kit, messages):
    clipped = "First rename cust_id to customer_id in src/export/columns.py, then regenerate the fixtures"
    bodies = good_bodies(user_messages=f'- "{clipped} …"', next=f'Continue: "{clipped}"')
    verdict = grade("last_request_intact", kit.case(messages, kit.summary(bodies)))
    assert verdict.status == "fail"
    (reason,) = verdict.reasons
    # The second part is cut short ("...then regenerate the fixtures" without "with make fixtures").
    assert reason.startswith("the most recent request (user message 3 of 3) is not in full in the post-compact "
                             "context (summary): 3 of its 4 parts are missing")
    assert '"then update docs/export.md"' in reason and '"finally open a draft PR against develop."' in reason
    assert verdict.score == 0.25
    assert verdict.evidence["missing_parts"] == ["then regenerate the fixtures with make fixtures",
                                                 "then update docs/export.md",
                                                 "finally open a draft PR against develop."]


def test_last_request_says_where_it_was_found(grade, kit, messages):
    only_next = good_bodies(user_messages='- "Fix the coupon KeyError in src/checkout/service.py"')
    verdict = grade("last_request_intact", kit.case(messages, kit.summary(only_next)))
    assert verdict.status == "pass" and "the next-step quote (section 9)" in verdict.reasons[0]
    verdict = grade("last_request_intact", kit.case(messages, kit.summary(good_bodies())))
    assert "is verbatim in section 6" in verdict.reasons[0]


def test_a_paraphrase_of_the_last_request_fails(grade, kit, messages):
    bodies = good_bodies(user_messages="- rename the column, regenerate fixtures, update docs, open a PR",
                         next="Rename the column, then the rest.")
    verdict = grade("last_request_intact", kit.case(messages, kit.summary(bodies)))
    assert verdict.status == "fail" and verdict.score == 0.0
    assert verdict.reasons[0].startswith("the most recent request (user message 3 of 3) is not verbatim in")


def test_last_request_kept_as_a_message_counts(grade, kit, messages):
    """Session-memory or partial compaction: the request kept verbatim as a message."""
    notes = "# Current State\n- renaming columns"
    kept = [messages[-1]]
    case = kit.case(messages, notes, kind="session_memory", post_messages=[kit.boundary(), *kept])
    verdict = grade("last_request_intact", case)
    assert verdict.status == "pass" and "the kept messages" in verdict.reasons[0]
    partial = kit.case(messages, kit.summary(good_bodies(user_messages="- x", next="None.")), kind="partial",
                       post_messages=[kit.boundary(), *kept])
    assert grade("last_request_intact", partial).status == "pass"


def test_a_long_last_request_follows_the_long_message_policy(grade, kit):
    long = "Here is the log: " + " ".join(f"line{i}" for i in range(600)) + " — please find the error."
    head, tail = long[:300], long[-300:]
    ok = kit.case([kit.user(long)], kit.summary(good_bodies(user_messages=f'- "{head} […] {tail}"')))
    assert grade("last_request_intact", ok).status == "pass"
    bad = kit.case([kit.user(long)], kit.summary(good_bodies(user_messages=f'- "{head} […]"', next="None.")))
    verdict = grade("last_request_intact", bad)
    assert verdict.status == "fail" and ("asks for its first and last 300 characters verbatim: its first 300 are "
                                         "there; none of its last 300 are") in verdict.reasons[0]


def test_a_transcript_summary_without_sections_is_searched_whole(grade, kit, messages):
    prose = f'The user wants the coupon fix. Latest: "{MULTI}"'
    case = kit.case(messages, prose, kind="transcript")
    assert grade("last_request_intact", case).status == "pass"


# -- constraints_preserved ----------------------------------------------------------------------------


def test_a_lost_constraint_fails_naming_it_and_who_set_it(grade, kit, messages, expect):
    bodies = good_bodies(request="Fix the coupon KeyError.",
                         user_messages='- "Fix the coupon KeyError in src/checkout/service.py"')
    verdict = grade("constraints_preserved", kit.case(messages, kit.summary(bodies), expect=expect))
    assert verdict.status == "fail" and verdict.score == 0.0
    first, second = verdict.reasons
    assert first == ('constraint lost: "never touch the migrations folder" (set by the user in message 2) is not in '
                     "the post-compact context (summary), so the agent may break it after this compaction")
    assert second.startswith('constraint lost: "Always back up a file before editing it on the server" (set by a '
                             "memory file (CLAUDE.md) shown to the agent)")


def test_a_reworded_constraint_in_one_item_counts(grade, kit, messages):
    bodies = good_bodies(request="- Never touch the migrations folder (the DBA owns it).")
    case = kit.case(messages, kit.summary(bodies), expect={"constraints": ["never touch the migrations folder"]})
    assert grade("constraints_preserved", case).status == "pass"
    scattered = good_bodies(request="- never edit anything\n- the migrations are for the DBA\n- a folder per app",
                            user_messages="- x")
    case = kit.case(messages, kit.summary(scattered), expect={"constraints": ["never touch the migrations folder"]})
    assert grade("constraints_preserved", case).status == "fail"


def test_a_constraint_in_a_reinjected_attachment_counts(grade, kit, messages):
    """A memory file the compaction re-injects (an attachment) is part of the post-compact context."""
    memory = AttachmentMessage(uuid="att-1", attachment_type="memory", content=MEMORY)
    bodies = good_bodies(request="Fix the coupon KeyError.")
    case = kit.case(messages, kit.summary(bodies), post_messages=[kit.boundary(), memory],
                    expect={"constraints": ["Always back up a file before editing it on the server"]})
    verdict = grade("constraints_preserved", case)
    assert verdict.status == "pass" and "summary and kept messages" in verdict.reasons[0]


def test_session_notes_are_searched_whole_for_constraints(grade, kit, messages, expect):
    notes = ("# Task specification\n- Rule: never touch the migrations folder\n"
             "- Rule: Always back up a file before editing it on the server")
    verdict = grade("constraints_preserved", kit.case(messages, notes, kind="session_memory", expect=expect))
    assert verdict.status == "pass", verdict.reasons
    assert "session notes and kept messages" in verdict.reasons[0]


# -- failed_approaches_preserved --------------------------------------------------------------------------


def test_a_failed_approach_that_is_not_recorded_fails(grade, kit, messages, expect):
    bodies = good_bodies(problem="Working on the coupon lookup.", current="Looking at the cache.",
                         files="- src/checkout/service.py — edited")
    verdict = grade("failed_approaches_preserved", kit.case(messages, kit.summary(bodies), expect=expect))
    assert verdict.status == "fail"
    assert verdict.reasons == ['failed approach "coupons.get(key)" is not recorded in the post-compact context '
                               "(summary): the agent may try it again after this compaction (sections 4-5 are where "
                               "a dead end belongs)"]


def test_a_failed_approach_listed_as_a_change_without_saying_it_failed_fails(grade, kit, messages, expect):
    bodies = good_bodies(problem="The coupon lookup was changed.", current="Looking at the cache.",
                         files="- src/checkout/service.py — changed `coupons[key]` to `coupons.get(key)`")
    verdict = grade("failed_approaches_preserved", kit.case(messages, kit.summary(bodies), expect=expect))
    assert verdict.status == "fail"
    assert "is mentioned in the post-compact context (summary) but never as failed" in verdict.reasons[0]
    assert "changed `coupons[key]` to `coupons.get(key)`" in verdict.reasons[0]


def test_a_failed_approach_proposed_again_as_the_next_step_fails(grade, kit, messages, expect):
    bodies = good_bodies(next="Apply coupons.get(key) in the lookup and rerun the test.")
    verdict = grade("failed_approaches_preserved", kit.case(messages, kit.summary(bodies), expect=expect))
    assert verdict.status == "fail"
    assert verdict.reasons[0].startswith("section 9 'Optional Next Step' (line ")
    assert 'proposes the failed approach "coupons.get(key)" again' in verdict.reasons[0]
    negated = good_bodies(next="Do not retry coupons.get(key); read the stack trace instead.")
    assert grade("failed_approaches_preserved",
                 kit.case(messages, kit.summary(negated), expect=expect)).status == "pass"


def test_failed_approaches_in_session_notes_count(grade, kit, messages, expect):
    notes = "# Errors & Corrections\n- Failed approach: coupons.get(key) did not fix it; reverted"
    verdict = grade("failed_approaches_preserved", kit.case(messages, notes, kind="session_memory", expect=expect))
    assert verdict.status == "pass", verdict.reasons


def test_the_reference_summary_passes_the_intent_graders(grade, kit, messages, expect):
    """The offline reference model keeps memory-file rules (section 1) and what the assistant found
    did not work (section 5), so its summary of this session passes all three."""
    from pytest_ctxeval.llm.reference import write_summary
    from pytest_ctxeval.core.messages import to_api
    from pytest_ctxeval.reading.summary import format_compact_summary

    request = to_api(messages) + [{"role": "user", "content": kit.prompts.render_compact()}]
    summary = format_compact_summary(write_summary(request))
    assert "Rules from memory files (CLAUDE.md), still in force:" in summary
    assert "Approaches that did not work (do not retry them):" in summary
    for name in INTENT:
        verdict = grade(name, kit.case(messages, summary, expect=expect))
        assert verdict.status == "pass", (name, verdict.reasons, summary)
