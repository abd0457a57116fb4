"""Review 4: pending tasks told by an item about another action (G1), a todo list gone stale after the
work was finished (G16), and a summary in a form the person asked for with /compact (G14). Synthetic
sessions in our own words."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_ctxeval.reading.finished_tasks import finish_evidence, list_updates
from pytest_ctxeval.reading.summary_form import format_request, free_form
from pytest_ctxeval.reading.task_actions import same_action
from pytest_ctxeval.reading.tasks import task_told

MAKE = "Add a webhook endpoint POST /hooks/billing"
FOLLOW = "Write tests for the billing webhook endpoint"


# --- G1: the action must match ---------------------------------------------------------------------

@pytest.mark.parametrize("task, item", [
    (FOLLOW, f"- {MAKE} (in progress)"),
    ("Document the billing webhook endpoint", f"- {MAKE}"),
    ("Deploy the billing webhook endpoint to staging", f"- {MAKE}"),
    ("Review PR for invoice rounding", "- Add invoice rounding"),
    (MAKE, "- Write tests for the billing webhook endpoint POST /hooks/billing"),
    (MAKE, "- Document the billing webhook endpoint POST /hooks/billing"),
    ("Refactor the billing webhook handler", "- Add the billing webhook handler"),
])
def test_a_follow_up_is_not_told_by_an_item_about_another_action(task, item):
    assert not task_told(task, item), (task, item)


@pytest.mark.parametrize("task, item", [
    ("Implement the invoice PDF renderer", "- Build the invoice PDF renderer (in progress)"),
    ("Create the invoice PDF renderer", "- Implement invoice PDF renderer"),
    ("Fix the rounding bug in invoices", "- Repair the rounding bug in invoices"),
    (FOLLOW, "- Billing webhook endpoint tests (not started)"),
    (FOLLOW, "- Add unit tests covering the billing webhook endpoint"),
    ("Deploy to staging", "- Deploy the billing service to staging once green"),
    ("Refactor the billing webhook handler", "- Clean up the billing webhook handler"),
    ("Add document upload to the portal", "- Document upload for the portal (in progress)"),   # a noun
    ("Implement product reviews page", "- Product reviews page"),                              # a noun
    ("Fix the failing test for refunds", "- Failing refunds test: fix next"),
    (MAKE, f"- {MAKE} and write its tests"),
    (MAKE, "- Webhook endpoint POST /hooks/billing (in progress)"),                          # no action word
])
def test_a_rewording_of_the_same_action_still_tells_the_task(task, item):
    assert same_action(task, item), (task, item)
    assert task_told(task, item), (task, item)


def _tasks_case(kit, pending, current="Working on the webhook.", next_step=None):
    messages = [kit.user("Add a billing webhook and test it."),
                *kit.todo((MAKE, "in_progress"), (FOLLOW, "pending"))]
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies.update(pending=pending, current=current,
                  next=next_step or 'Write the endpoint: "Add a billing webhook and test it."')
    return kit.case(messages, kit.summary(bodies))


def test_a_follow_up_task_dropped_from_the_summary_fails(grade, kit):
    case = _tasks_case(kit, f"- {MAKE} (in progress)", next_step='Finish the endpoint, as the user asked: "Add a billing webhook"')
    verdict = grade("pending_tasks", case)
    assert verdict.status == "fail", verdict.reasons
    assert f'"{FOLLOW}"' in verdict.reasons[0]


def test_both_tasks_listed_pass_and_the_reason_names_where_each_was_found(grade, kit):
    case = _tasks_case(kit, f"- {MAKE} (in progress)\n- {FOLLOW}")
    assert grade("pending_tasks", case).reasons[0].startswith("all 2 open tasks in section 7")
    # the follow-up told only by the next step: the pass says so, and where
    case = _tasks_case(kit, f"- {MAKE} (in progress)", next_step=f"{FOLLOW} once the endpoint works.")
    verdict = grade("pending_tasks", case)
    assert verdict.status == "pass", verdict.reasons
    assert "1 in section 7" in verdict.reasons[0]
    assert f"1 told only in sections 8-9 (as work in progress): \"{FOLLOW}\" (in section 9 'Optional Next Step'" \
        in verdict.reasons[0]


# --- G16: a todo list gone stale after the work was finished ----------------------------------------

ROUTES = "/home/dev/shop/billing/hooks.py"


def _stale_session(kit, *, after):
    """The todo list holds MAKE in progress and FOLLOW pending; ``after`` is what the session did next."""
    return [kit.user("Add a billing webhook and test it."),
            *kit.todo((MAKE, "in_progress"), (FOLLOW, "pending")),
            *kit.tool("Edit", {"file_path": ROUTES, "old_string": "a", "new_string": "b"}, "The file has been updated."),
            *after]


def _commit(kit, message="billing: webhook endpoint"):
    return kit.tool("Bash", {"command": f"git commit -am '{message}'"},
                    f"[main 9f8e7d6] {message}\n 1 file changed, 12 insertions(+)")


def _stale_case(kit, messages, pending, current="The webhook endpoint is committed."):
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies.update(pending=pending, current=current,
                  next='Write the webhook tests: "Add a billing webhook and test it."')
    return kit.case(messages, kit.summary(bodies))


@pytest.mark.parametrize("after", [
    # the person asks to commit the work, and the commit succeeds
    lambda kit: [kit.user("looks right, commit it"), *_commit(kit)],
    # the assistant reports the task done in its own words, and a commit follows
    lambda kit: [kit.say("The webhook endpoint POST /hooks/billing is added."), *_commit(kit)],
    # ... or a green test run
    lambda kit: [*kit.tool("Bash", {"command": "pytest -q tests/test_hooks.py"}, "5 passed in 0.4s"),
                 kit.say("Added the billing webhook endpoint POST /hooks/billing; all green.")],
])
def test_work_finished_after_the_latest_todo_list_is_not_required(grade, kit, after):
    messages = _stale_session(kit, after=after(kit))
    # (a summary may say "Done", not "committed" where nothing was: that claim fails as unbacked)
    for pending in (f"- {FOLLOW}\n- Done: {MAKE}", f"- {FOLLOW}"):
        verdict = grade("pending_tasks", _stale_case(kit, messages, pending, current="The webhook endpoint is added."))
        assert verdict.status == "pass", (pending, verdict.reasons)
        assert "not required, as finished after the latest todo update" in verdict.reasons[0]
        assert "the latest TodoWrite (in the span this summary covers) still calls it in progress" in verdict.reasons[0]


@pytest.mark.parametrize("after", [
    lambda kit: [],                                                                  # edited, nothing more
    lambda kit: [kit.user("commit what you have so far, then do the tests"), *_commit(kit, "wip")],   # a step
    lambda kit: [kit.say("Next I will add the webhook endpoint POST /hooks/billing."), *_commit(kit)],  # intent
    lambda kit: [kit.say("I added a failing test for the webhook endpoint POST /hooks/billing."), *_commit(kit)],
    lambda kit: [kit.user("commit it"),
                 *kit.tool("Bash", {"command": "git commit -am 'x'"}, "nothing to commit, working tree clean")],
])
def test_without_clear_evidence_the_list_still_decides(grade, kit, after):
    messages = _stale_session(kit, after=after(kit))
    verdict = grade("pending_tasks", _stale_case(kit, messages, f"- {FOLLOW}"))
    assert verdict.status == "fail", verdict.reasons
    assert f'"{MAKE}"' in verdict.reasons[0]
    assert "the latest TodoWrite (in the span this summary covers) still calls it in progress; after it the " \
           "session changed hooks.py" in verdict.reasons[0]


def test_a_commit_of_the_task_in_progress_lets_the_summary_mark_it_done(grade, kit):
    """Committed by the agent on its own: the summary may call it done (the transcript bears it out),
    but dropping it silently still fails, with a reason that says what happened after the list."""
    messages = _stale_session(kit, after=_commit(kit))
    verdict = grade("pending_tasks", _stale_case(kit, messages, f"- {FOLLOW}\n- Done: {MAKE} (committed 9f8e7d6)"))
    assert verdict.status == "pass", verdict.reasons
    assert "1 marked done by the summary, as the transcript bears out" in verdict.reasons[0]
    verdict = grade("pending_tasks", _stale_case(kit, messages, f"- {FOLLOW}"))
    assert verdict.status == "fail"
    assert "the commit 9f8e7d6 'billing: webhook endpoint' succeeded: if it is finished, the summary may mark it " \
           "done" in verdict.reasons[0]
    # the pending task the agent never started is not finished by that commit; the reason says where
    # the list last spoke of it
    verdict = grade("pending_tasks", _stale_case(kit, messages, f"- Done: {MAKE}\n- Done: {FOLLOW}"))
    assert verdict.status == "fail"
    assert verdict.reasons == [f"open task not in section 7 'Pending Tasks' (line 19) as an open task (marked as done or "
                               f"cancelled): \"{FOLLOW}\" (as the latest TodoWrite (in the span this summary covers) "
                               "lists it: pending)"]


def test_a_list_from_before_an_earlier_compaction_is_named(kit):
    history = [kit.user("Add a billing webhook and test it."), *kit.todo((MAKE, "in_progress")),
               kit.boundary(), kit.summary_msg("Summary: ..."), kit.user("go on")]
    updates = list_updates(history)
    assert updates[MAKE].where(2) == "the latest TodoWrite (before compaction 1)"
    assert finish_evidence(MAKE, updates[MAKE], history) is None


# --- G14: a summary in the form the person asked for -------------------------------------------------

BULLETS = """- Billing webhook POST /hooks/billing added in billing/hooks.py; signature check in billing/verify.py.
- `test_signature_rejects_stale` failed (assert 401 == 403); fixed, all green.
- Open: write tests for the billing webhook endpoint.
- Next: "now write the tests for it"
"""


def _free_case(kit, summary, args):
    messages = [kit.user("Add a billing webhook that checks signatures."),
                *kit.todo((FOLLOW, "pending")),
                *kit.tool("Write", {"file_path": "billing/hooks.py", "content": "x"}, "File created successfully"),
                *kit.tool("Write", {"file_path": "billing/verify.py", "content": "x"}, "File created successfully"),
                *kit.tool("Bash", {"command": "pytest -q"},
                          "FAILED tests/test_verify.py::test_signature_rejects_stale - assert 401 == 403\n1 failed",
                          is_error=True),
                kit.user("now write the tests for it")]
    return dataclasses.replace(kit.case(messages, summary), compact_args=args)


def test_a_summary_in_the_asked_form_keeps_its_facts(grade, kit):
    case = _free_case(kit, BULLETS, "just 4 short bullets, no sections")
    for name in ("files_preserved", "errors_preserved", "pending_tasks"):
        verdict = grade(name, case)
        assert verdict.status == "pass", (name, verdict.reasons)
        assert "read whole" in verdict.reasons[0] and "/compact asked for \"just 4 short bullets, no sections\"" \
            in verdict.reasons[0]
    nine = grade("nine_sections", case)
    assert nine.status == "n/a" and "just 4 short bullets, no sections" in nine.reasons[0]


def test_a_fact_missing_from_a_free_form_summary_fails_without_claiming_it_cannot_survive(grade, kit):
    bad = BULLETS.replace("; signature check in billing/verify.py", "").replace(
        "- `test_signature_rejects_stale` failed (assert 401 == 403); fixed, all green.\n", "").replace(
        "- Open: write tests for the billing webhook endpoint.\n", "")
    case = _free_case(kit, bad, None)
    for name, lost in (("files_preserved", "billing/verify.py"), ("errors_preserved", "test_signature_rejects_stale"),
                       ("pending_tasks", FOLLOW)):
        verdict = grade(name, case)
        assert verdict.status == "fail", (name, verdict.reasons)
        assert lost in " ".join(verdict.reasons) and "cannot survive" not in " ".join(verdict.reasons)
        assert "it is not in the nine sections (0 of them found)" in verdict.reasons[0]
    # no /compact asked for it: the nine sections are still required
    assert grade("nine_sections", case).status == "fail"


def test_a_nine_section_summary_missing_one_section_still_loses_its_facts(grade, kit):
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies.update(current="Edited billing/hooks.py and billing/verify.py.")
    case = _free_case(kit, kit.summary(bodies, omit=["files"]), None)
    verdict = grade("files_preserved", case)
    assert verdict.status == "fail" and "cannot survive" in verdict.reasons[0], verdict.reasons


@pytest.mark.parametrize("args, structure", [
    ("just 5 short bullets, no sections", True), ("one paragraph please", True), ("as a table", True),
    ("tl;dr only", True), ("keep it brief", False), ("focus on the API; be concise", False),
])
def test_format_requests(args, structure):
    asked = format_request(args)
    assert asked is not None and asked.structure is structure
    assert format_request("leave out the PDF detour") is None
    assert free_form(9, "keep it brief") is None


def test_work_the_person_cancelled_is_found_anywhere_in_a_free_form_summary(grade, kit):
    messages = [kit.user("Add a billing webhook that checks signatures, then an invoice PDF export."), kit.say("On it."),
                kit.user("actually, forget the invoice PDF export, we don't need it"), kit.say("Dropped."),
                kit.user("now write the tests for it")]
    revived = BULLETS + "- Then: build the invoice PDF export.\n"
    case = dataclasses.replace(kit.case(messages, revived), compact_args="just 5 short bullets, no sections")
    verdict = grade("no_superseded_work", case)
    assert verdict.status == "fail", verdict.reasons
    assert verdict.reasons[0].startswith("the summary (read whole: it is not in the nine sections")
    case = dataclasses.replace(kit.case(messages, BULLETS), compact_args="just 5 short bullets, no sections")
    verdict = grade("no_superseded_work", case)
    assert verdict.status == "pass" and "proposed in the summary (read whole: it is not in the nine sections" \
        in verdict.reasons[0], verdict.reasons


def test_a_summary_in_the_form_the_person_asked_for_is_not_held_to_a_section_9_quote(grade, kit):
    # review 4, G14: "/compact just 5 short bullets, no sections" leaves out the section the quote
    # belongs to; next_step_quote said the quote "cannot survive". Without such a request, a summary
    # without section 9 still fails.
    messages = [kit.user("Add a billing webhook that checks signatures."), kit.say("On it."),
                kit.user("now write the tests for it")]
    asked = dataclasses.replace(kit.case(messages, BULLETS), compact_args="just 5 short bullets, no sections")
    verdict = grade("next_step_quote", asked)
    assert verdict.status == "n/a" and 'asked for another structure ("just 5 short bullets, no sections")' in \
        verdict.reasons[0], verdict.reasons
    plain = dataclasses.replace(kit.case(messages, BULLETS), compact_args="keep it brief")
    assert grade("next_step_quote", plain).status == "fail"
