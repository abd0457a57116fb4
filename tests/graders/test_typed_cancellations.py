"""Work the person cancelled in words: ``pending_tasks`` no longer demands it, ``no_superseded_work``
holds a summary to it without ``expect.superseded``, and a superseded intent is found reworded."""

from __future__ import annotations

import pytest

from pytest_ctxeval.reading.cancellations import _cancelled_objects, typed_cancellations
from pytest_ctxeval.reading.proposals import proposals, reworded_mentions

FIRST = "Add retries with exponential backoff to the webhook sender in src/hooks/send.py, and a Slack notification when a delivery finally fails."
CANCEL = "actually, never mind the Slack notification, ops reads the email digest anyway. just finish the backoff and its tests"
BACKOFF = "Add exponential backoff to send()"
SLACK = "Post a Slack notification on final failure"
TESTS = "Write tests for the backoff"


def _session(kit, *later):
    return [
        kit.user(FIRST),
        *kit.todo((BACKOFF, "in_progress"), (SLACK, "pending"), (TESTS, "pending")),
        *kit.tool("Edit", {"file_path": "src/hooks/send.py", "old_string": "post(url)", "new_string": "retry(post, url)"}),
        kit.say("Backoff is in. Next I'll wire the Slack notification, then the tests."),
        kit.user(CANCEL),
        kit.say("OK, no Slack notification. Writing the backoff tests."),
        *later,
    ]


def _bodies(pending: str, nxt: str = 'Write the backoff tests, as asked: "just finish the backoff and its tests"') -> dict:
    return {
        "request": "Retries with exponential backoff for the webhook sender. The Slack notification was called off.",
        "concepts": "- exponential backoff",
        "files": "- src/hooks/send.py (modified): send() retries with backoff",
        "errors": "None.",
        "problem": "None.",
        "user_messages": f'- "{FIRST}"\n- "{CANCEL}"',
        "pending": pending,
        "current": "Writing tests for the backoff.",
        "next": nxt,
    }


GOOD = "- Add exponential backoff to send() (in progress)\n- Write tests for the backoff"


def test_a_todo_the_person_cancelled_later_is_not_required(grade, kit):
    case = kit.case(_session(kit), kit.summary(_bodies(GOOD)))
    verdict = grade("pending_tasks", case)
    assert verdict.status == "pass", verdict.reasons
    assert "not required, as superseded" in verdict.reasons[0] and "user message 2 of 2" in verdict.reasons[0]
    assert grade("no_superseded_work", case).status == "pass"


def test_a_todo_marked_cancelled_passes_both(grade, kit):
    case = kit.case(_session(kit), kit.summary(_bodies(GOOD + "\n- ~~Slack notification~~ (called off by the user)")))
    assert grade("pending_tasks", case).status == "pass"
    case = kit.case(_session(kit), kit.summary(_bodies(GOOD + "\n- Post a Slack notification on final failure: cancelled")))
    assert grade("pending_tasks", case).status == "pass"
    assert grade("no_superseded_work", case).status == "pass"


def test_the_cancelled_todo_revived_in_section_7_fails_without_expect(grade, kit):
    case = kit.case(_session(kit), kit.summary(_bodies(GOOD + "\n- " + SLACK)))
    verdict = grade("no_superseded_work", case)
    assert verdict.status == "fail"
    assert "section 7" in verdict.reasons[0] and "Slack notification" in verdict.reasons[0]
    assert "cancelled in user message 2 of 2" in verdict.reasons[0]


@pytest.mark.parametrize("step", [
    "Then add the Slack notification for failed deliveries.",
    "Finish the tests, then send a notification to Slack when the last retry fails.",
    "We could still hook up the Slack notification after the tests.",
])
def test_the_cancelled_task_revived_in_section_9_fails(grade, kit, step):
    case = kit.case(_session(kit), kit.summary(_bodies(GOOD, nxt=step)))
    verdict = grade("no_superseded_work", case)
    assert verdict.status == "fail", verdict.reasons
    assert "section 9" in verdict.reasons[0]


@pytest.mark.parametrize("step", [
    "Write the backoff tests; skip the Slack notification as the user asked.",
    "Write the backoff tests. No Slack notification (the user dropped it).",
    "Write the backoff tests. The Slack notification is on hold.",
])
def test_a_step_that_names_the_cancelled_task_as_dropped_passes(grade, kit, step):
    verdict = grade("no_superseded_work", kit.case(_session(kit), kit.summary(_bodies(GOOD, nxt=step))))
    assert verdict.status == "pass", verdict.reasons


def test_an_open_todo_nobody_cancelled_is_still_required_and_its_reason_says_done_or_cancelled(grade, kit):
    bodies = {**_bodies("- Add exponential backoff to send() (in progress)", nxt="Tune the backoff delays."),
              "current": "Tuning the backoff delays."}
    verdict = grade("pending_tasks", kit.case(_session(kit), kit.summary(bodies)))
    assert verdict.status == "fail" and "Write tests for the backoff" in verdict.reasons[0]
    bodies["pending"] = GOOD + " (cancelled)"
    verdict = grade("pending_tasks", kit.case(_session(kit), kit.summary(bodies)))
    assert verdict.status == "fail" and "marked as done or cancelled" in verdict.reasons[0]


def test_a_cancellation_taken_back_holds_the_summary_to_the_task(grade, kit):
    messages = _session(kit, kit.user("hmm, on second thought, do add the Slack notification after all"))
    case = kit.case(messages, kit.summary(_bodies(GOOD)))
    verdict = grade("pending_tasks", case)
    assert verdict.status == "fail" and SLACK in verdict.reasons[0]
    assert grade("no_superseded_work", case).status == "n/a"


def test_a_todo_rewritten_after_a_later_message_takes_the_cancellation_back(grade, kit):
    messages = _session(kit, kit.user("my manager says ops wants it in the channel"),
                        *kit.todo((BACKOFF, "completed"), (SLACK, "in_progress")))
    assert typed_cancellations(messages) == []


@pytest.mark.parametrize("said", [
    "and don't forget the Slack notification, ops relies on it",
    "did you forget the Slack notification?",
    "cancel the job that sends the Slack notification",
    "never mind, the tests can wait",
    "forget it, I'll look at the logs myself",
    "if the retries keep failing, forget the Slack notification and page me",   # a condition, not a decision
    # a pasted log whose lines happen to hold a cancel phrase (one such line alone would cancel)
    "the log says:\n" + "\n".join(f"  2026-03-0{i % 9 + 1}T10:{i:02d}:07Z worker[{i}] warn: never mind the Slack "
                                   f"notification, retry={i} backoff_ms={i * 250}" for i in range(90)),
])
def test_words_that_cancel_nothing_the_reader_can_name(grade, kit, said):
    messages = [kit.user(FIRST), *kit.todo((BACKOFF, "in_progress"), (SLACK, "pending")), kit.user(said)]
    assert typed_cancellations(messages) == [], said
    case = kit.case(messages, kit.summary(_bodies("- " + BACKOFF)))
    assert grade("pending_tasks", case).status == "fail"
    assert grade("no_superseded_work", case).status == "n/a"


def test_a_cancel_phrase_about_something_that_never_came_up_is_no_cancellation(kit):
    messages = [kit.user(FIRST), kit.say("Starting with the backoff."), kit.user("forget the request cache, read from disk")]
    assert typed_cancellations(messages) == []


@pytest.mark.parametrize("said, subject", [
    ("actually, forget about the Slack notification", "Slack notification"),
    ("ok never mind the Slack notification", "Slack notification"),
    ("we won't do the Slack notification", "Slack notification"),
    ("let's not do the Slack notification", "Slack notification"),
    ("we don't need the Slack notification anymore", "Slack notification"),
    ("no need for the Slack notification", "Slack notification"),
    ("the Slack notification is no longer needed.", "Slack notification"),
    ("skip the Slack notification for now", "Slack notification"),
    ("Change of plan: drop the Slack notification, we don't need it", "Slack notification"),
])
def test_cancel_phrases_name_their_task(said, subject):
    assert _cancelled_objects(said) == [subject]


@pytest.mark.parametrize("said", [
    "skip the flaky retry tests in CI",      # a task of its own: no word says the plan changed
    "actually, drop the deliveries table",    # a database object
    "the retry limit is not required to be configurable",
])
def test_task_verbs_are_not_read_as_cancellations(said):
    assert _cancelled_objects(said) == []


def test_expect_superseded_lets_a_summary_pass_both_graders(grade, kit):
    """A scenario drops an intent in words the reader does not read: the two graders still agree."""
    messages = [kit.user(FIRST), *kit.todo((BACKOFF, "in_progress"), (SLACK, "pending")),
                kit.user("ops reads the email digest, so email is enough. just finish the backoff")]
    expect = {"superseded": ["Slack notification"]}
    good = kit.case(messages, kit.summary(_bodies("- " + BACKOFF)), expect=expect)
    assert grade("pending_tasks", good).status == "pass"
    assert grade("no_superseded_work", good).status == "pass"
    bad = kit.case(messages, kit.summary(_bodies("- " + BACKOFF + "\n- " + SLACK)), expect=expect)
    verdict = grade("no_superseded_work", bad)
    assert verdict.status == "fail" and "(expect.superseded)" in verdict.reasons[0]


@pytest.mark.parametrize("step, proposes", [
    ("Then produce an export of the invoices in CSV format.", True),
    ("Then export the invoices as CSV.", True),
    ("Export the invoices to Parquet, not CSV.", False),
    ("Skip the CSV export as the user asked.", False),
    ("Build the CSV parser and the Parquet export.", False),    # two things joined: neither is the intent
    ("Do not produce a CSV version of the export.", False),
])
def test_a_superseded_intent_is_found_reworded(grade, kit, session, step, proposes):
    assert bool(proposals(step, "CSV export", reworded=True)) is proposes
    verdict = grade("no_superseded_work", kit.case(session.messages, kit.summary({**session.bodies, "next": step}),
                                                   expect={"superseded": ["CSV export"]}))
    assert verdict.status == ("fail" if proposes else "pass"), verdict.reasons


def test_reworded_mentions_keep_to_one_clause():
    assert reworded_mentions("CSV files are read. The export is done.", "CSV export") == []
    assert reworded_mentions("an export of the invoices in CSV", "CSV export")


def test_a_task_tracked_with_task_create_and_cancelled_is_not_required(grade, kit):
    messages = [kit.user(FIRST)]
    for subject in (BACKOFF, SLACK):
        messages += kit.tool("TaskCreate", {"subject": subject, "description": subject}, "Task created")
    messages += [kit.user(CANCEL)]
    good = kit.case(messages, kit.summary(_bodies("- " + BACKOFF)))
    verdict = grade("pending_tasks", good)
    assert verdict.status == "pass" and SLACK in verdict.reasons[0]
    bad = kit.case(messages, kit.summary(_bodies("- " + BACKOFF + "\n- " + SLACK)))
    assert grade("no_superseded_work", bad).status == "fail"
