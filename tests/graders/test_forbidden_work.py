"""A next step or pending task that does what the person forbade ("don't touch the sitemap") or
revives work they cancelled in everyday words ("scrap the PDF export", "instead of X, just Y")
fails ``no_superseded_work`` with a reason that quotes them (review 4, G2); an instruction about
code ("drop the index on users", "remove the debug print") is work, not a cancellation; every grader
numbers the person's messages the same way (G3)."""

from __future__ import annotations

import pytest

from pytest_ctxeval.reading.cancellations import _readings, typed_cancellations

ASK = "Fix the feed dates: they are off by one day in blog/templates/feed.xml."
PLAN = "I'll fix the feed template first, then update the sitemap generator so sitemap dates match."
LAST = "good. now write a regression test for the dates in tests/test_feed.py"
GOOD_NEXT = f'Write the regression test, as asked: "{LAST}"'


def _messages(kit, forbid, *, plan=PLAN, rejected=None):
    messages = [kit.user(ASK), kit.say(plan)]
    messages += kit.tool("Edit", {"file_path": "blog/templates/feed.xml", "old_string": "{{ d }}",
                                  "new_string": "{{ d|localtime }}"})
    if rejected is not None:   # feedback typed when rejecting a tool use: a message of the person's
        messages += kit.tool("Edit", {"file_path": "blog/sitemap.py", "old_string": "a", "new_string": "b"},
                             "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. "
                             "if it was a file edit, the new_string was NOT written to the file). To tell you how "
                             f"to proceed, the user said:\n{rejected}", is_error=True)
    messages += [kit.user(forbid), kit.say("Understood."), kit.user(LAST)]
    return messages


def _summary(kit, forbid, *, pending="- Write the regression test for the dates", nxt=GOOD_NEXT,
             current="Writing tests/test_feed.py."):
    return kit.summary({
        "request": "Fix the off-by-one feed dates, then a regression test.",
        "concepts": "- Jinja localtime filter",
        "files": "- blog/templates/feed.xml: dates use |localtime",
        "errors": "None.", "problem": "None.",
        "user_messages": "\n".join(f'- "{m}"' for m in (ASK, forbid, LAST)),
        "pending": pending, "current": current, "next": nxt})


PROHIBITIONS = [
    "wait, don't touch the sitemap, only the feed",
    "leave the sitemap alone, only the feed",
    "no changes to the sitemap please",
    "no need to update the sitemap",
    "please do not modify the sitemap",
    "stop working on the sitemap, only the feed",
    "skip the sitemap, just the feed",
    "forget about the sitemap",
]


@pytest.mark.parametrize("forbid", PROHIBITIONS)
def test_a_step_that_does_what_the_person_forbade_fails_and_quotes_them(grade, kit, forbid):
    bad = kit.case(_messages(kit, forbid), _summary(
        kit, forbid, nxt="Update the sitemap generator so sitemap dates use localtime too."))
    verdict = grade("no_superseded_work", bad)
    assert verdict.status == "fail", verdict.reasons
    assert "section 9" in verdict.reasons[0] and "sitemap" in verdict.reasons[0]
    assert f"user message 2 of 3: \"{forbid}\"" in verdict.reasons[0]
    good = kit.case(_messages(kit, forbid), _summary(kit, forbid))
    assert grade("no_superseded_work", good).status == "pass", grade("no_superseded_work", good).reasons


@pytest.mark.parametrize("forbid", PROHIBITIONS[:5])
def test_a_pending_task_that_changes_the_forbidden_thing_fails_too(grade, kit, forbid):
    case = kit.case(_messages(kit, forbid), _summary(
        kit, forbid, pending="- Write the regression test for the dates\n- Update the sitemap dates"))
    verdict = grade("no_superseded_work", case)
    assert verdict.status == "fail" and "section 7" in verdict.reasons[0], verdict.reasons


@pytest.mark.parametrize("step", [
    "Write the regression test; then check that the sitemap still validates.",   # reading it changes nothing
    "Write the regression test. The sitemap stays untouched, as the user asked.",
    "Write the regression test (do not touch the sitemap).",
    "Write the regression test, then update the docs for the sitemap.",            # the docs about it
    "Write the regression test; leave the sitemap alone.",
])
def test_a_step_that_only_mentions_the_forbidden_thing_passes(grade, kit, step):
    forbid = "don't touch the sitemap"
    verdict = grade("no_superseded_work", kit.case(_messages(kit, forbid), _summary(kit, forbid, nxt=step)))
    assert verdict.status == "pass", verdict.reasons


@pytest.mark.parametrize("current, nxt", [
    ("I had updated the sitemap generator before the user asked me not to touch it.", GOOD_NEXT),
    ("Writing tests/test_feed.py.", "Write the regression test; the sitemap generator was updated earlier by mistake."),
])
def test_narration_of_a_change_already_made_is_no_proposal(grade, kit, current, nxt):
    forbid = "don't touch the sitemap"
    case = kit.case(_messages(kit, forbid), _summary(kit, forbid, current=current, nxt=nxt))
    assert grade("no_superseded_work", case).status == "pass", grade("no_superseded_work", case).reasons


def test_a_prohibition_lifted_later_holds_nothing(grade, kit):
    forbid = "don't touch the sitemap"
    messages = _messages(kit, forbid) + [kit.user("ok, you can update the sitemap too now")]
    assert typed_cancellations(messages) == []


def test_rejection_feedback_that_forbids_counts_and_is_numbered_as_verbatim_numbers_it(grade, kit):
    """G3: the message that forbids is numbered as verbatim_user_messages numbers it (the rejection
    feedback before it is a message of the person's)."""
    forbid = "no, leave the sitemap alone"
    messages = _messages(kit, "thanks", rejected=forbid)
    [held] = typed_cancellations(messages)
    assert (held.subject, held.kind, held.number, held.of) == ("sitemap", "hands_off", 2, 4)
    summary = kit.summary({**dict.fromkeys(kit.SECTION_KINDS, "x"),
                           "user_messages": "\n".join(f'- "{m}"' for m in (ASK, "thanks", LAST)),
                           "next": "Update the sitemap generator too."})
    case = kit.case(messages, summary)
    verbatim = grade("verbatim_user_messages", case)
    assert verbatim.status == "fail" and "user message 2 of 4" in verbatim.reasons[0] and forbid[:20] in \
        verbatim.reasons[0]
    superseded = grade("no_superseded_work", case)
    assert superseded.status == "fail" and "user message 2 of 4" in superseded.reasons[0], superseded.reasons


# -- cancelled tasks, in everyday words -------------------------------------------------------------

FIRST = "Add discount codes at checkout, with tests."
PDF = "Export invoice as PDF"


def _todo_session(kit, cancel):
    return [kit.user(FIRST), *kit.todo(("Add discount model", "in_progress"), (PDF, "pending")),
            kit.say("Discount model added."), kit.user(cancel), kit.say("OK.")]


@pytest.mark.parametrize("cancel", [
    "scrap the PDF invoice export.",
    "drop the PDF invoice export, nobody uses it.",
    "instead of the PDF invoice export, just email a plain-text receipt.",
    "remove the PDF invoice export from the todo list.",
    "don't do the PDF invoice export.",
])
def test_everyday_cancellations_of_a_todo(grade, kit, cancel):
    messages = _todo_session(kit, cancel)
    bodies = {**dict.fromkeys(kit.SECTION_KINDS, "x"), "user_messages": f'- "{FIRST}"\n- "{cancel}"',
              "next": "Finish the discount model."}
    good = kit.case(messages, kit.summary({**bodies, "pending": "- Add discount model (in progress)"}))
    assert grade("pending_tasks", good).status == "pass", grade("pending_tasks", good).reasons
    assert grade("no_superseded_work", good).status == "pass"
    marked = kit.case(messages, kit.summary({**bodies, "pending": "- Add discount model\n- PDF invoice export "
                                                                  "(cancelled by the user)"}))
    assert grade("no_superseded_work", marked).status == "pass", grade("no_superseded_work", marked).reasons
    bad = kit.case(messages, kit.summary({**bodies, "pending": f"- Add discount model\n- {PDF}"}))
    verdict = grade("no_superseded_work", bad)
    assert verdict.status == "fail" and f'cancelled in user message 2 of 2: "{cancel}"' in verdict.reasons[0]


@pytest.mark.parametrize("said", [
    "drop the index on users, it slows the writes",          # a database object: work
    "actually, drop the orders table, nobody uses it",
    "remove the debug print in checkout.py",                 # code to change, not a task to cancel
    "actually, drop the debug logging, nobody reads it",     # it exists; nobody planned it
    "instead of a for loop, just use a comprehension",
    "skip the flaky retry tests in CI",                      # a task of its own
    "don't forget the PDF invoice export",
    "if the export keeps failing, scrap the PDF invoice export",   # a condition, not a decision
])
def test_instructions_about_code_are_not_cancellations(kit, said):
    messages = [kit.user(FIRST), kit.say("I added debug logging and an index on users; next, the checkout loop."),
                *kit.todo(("Add discount model", "in_progress"), (PDF, "pending")),
                kit.user(said)]
    held = [c.subject for c in typed_cancellations(messages)]
    assert held == [], (said, held)


def test_a_code_instruction_leaves_a_summary_that_does_the_work_passing(grade, kit):
    messages = [kit.user(FIRST), kit.say("Added an index on users."), kit.user("drop the index on users, it slows the writes")]
    summary = kit.summary({**dict.fromkeys(kit.SECTION_KINDS, "x"),
                           "next": "Write a migration that drops the index on users, then rerun the write benchmark."})
    assert grade("no_superseded_work", kit.case(messages, summary)).status == "n/a"


@pytest.mark.parametrize("said, expected", [
    ("wait, don't touch the sitemap, only the feed", [("sitemap", "hands_off")]),
    ("no changes to package.json please", [("package.json", "hands_off")]),
    ("keep the public API as is", [("public API", "hands_off")]),
    ("stop working on the sitemap", [("sitemap", "stop")]),
    ("scrap the CSV export.", [("CSV export", "cancel")]),
    ("don't change anything else", []),        # a generic object
    ("don't touch the sitemap yet, do the feed first", []),       # a matter of order
    ("leave the sitemap alone until the feed works", []),
    ("don't do the migration yet", []),
    ("don't touch it", []),
])
def test_readings(said, expected):
    assert _readings(said) == expected


def test_slash_command_arguments_are_counted_but_not_read(kit):
    compact = kit.user("<command-name>/compact</command-name>\n<command-message>compact</command-message>\n"
                       "<command-args>skip the PDF invoice export for now</command-args>")
    messages = [kit.user(FIRST), *kit.todo((PDF, "pending")), compact, kit.user("scrap the PDF invoice export")]
    assert typed_cancellations(messages[:-1]) == []     # "/compact skip X" instructs the summary, not the work
    [held] = typed_cancellations(messages)
    assert (held.number, held.of) == (3, 3)             # the command's arguments are message 2
