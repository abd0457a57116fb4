"""next_step_quote on what people type every day (review 4: G9, G11, G18 d/e).

* G9: a typed list quoted on one line or as a ``>`` block quote is layout, read the way the verbatim
  check reads the message (its markers kept or dropped); a changed word or a dropped "don't" still
  fails, and a reason never shows two identical strings as a difference.
* G11: the latest message that only refines the request in progress ("also make it require the
  staff role") does not make a quote of that request "drift"; a new task after it still does.
* G18: Claude Code's trailer is not part of section 9; a bracketed editorial replacement is named.
"""

from __future__ import annotations

import pytest

LIST = "three things:\n- cache the tariff lookup\n- log rejected vouchers at WARNING\n- don't log the voucher itself, it's personal data"
NUMBERED = "next:\n1. add the row-error report to the export screen\n2. show the grand total at the bottom"


def _list_case(kit, last: str, next_body: str):
    msgs = [kit.user("Add voucher support to the basket, with an expiry date per voucher"), kit.say("Done, tests pass."),
            kit.user(last), kit.say("Working on it.")]
    return kit.case(msgs, kit.section("next", next_body))


def _flat(text: str) -> str:
    return " ".join(line.strip() for line in text.split("\n"))


@pytest.mark.parametrize("last", [LIST, NUMBERED], ids=["bullets-apostrophe", "numbered-hyphen"])
def test_a_typed_list_quoted_on_one_line_or_as_a_block_quote_is_verbatim(grade, kit, last):
    flat = _flat(last)
    block = "\n".join("> " + line for line in last.split("\n"))
    for body in (f'Do what the user asked: "{flat}"', f"Do what the user asked:\n{block}"):
        verdict = grade("next_step_quote", _list_case(kit, last, body))
        assert verdict.status == "pass", (body, verdict.reasons)
        # a block quote is credited as a whole, not by its first or one of its lines
        assert verdict.evidence["quote"].endswith(_flat(last).split()[-1]), verdict.evidence
    # two items joined, or the lead and its first item: fragments of the list as it was typed
    items = last.split("\n")
    for part in (f"{_flat(items[1])} {_flat(items[2])}", f"{items[0]} {items[1]}"):
        verdict = grade("next_step_quote", _list_case(kit, last, f'Next: "{part}"'))
        assert verdict.status == "pass", (part, verdict.reasons)


def test_items_rewritten_with_semicolons_are_a_reformatted_quote(grade, kit):
    quote = "three things: cache the tariff lookup; log rejected vouchers at WARNING; don't log the voucher itself, it's personal data"
    verdict = grade("next_step_quote", _list_case(kit, LIST, f'Next: "{quote}"'))
    assert verdict.status == "pass" and "reformatted" in verdict.reasons[0], verdict.reasons


@pytest.mark.parametrize("change", [("don't log the voucher", "log the voucher"), ("WARNING", "ERROR")],
                         ids=["dropped-negation", "changed-word"])
def test_a_misquoted_list_still_fails_and_the_reason_shows_a_difference(grade, kit, change):
    quote = _flat(LIST).replace(*change)
    verdict = grade("next_step_quote", _list_case(kit, LIST, f'Next: "{quote}"'))
    assert verdict.status == "fail", verdict.reasons
    reason = verdict.reasons[0]
    assert "not verbatim" in reason
    # the two strings the reason shows are not the same
    shown = reason.split('"')
    assert len(shown) >= 4 and shown[1] != shown[3], reason


def test_two_texts_alike_at_the_start_are_shown_where_they_part():
    from graders.cited_next_step import _apart

    a = "three things: - cache the tariff lookup - log rejected vouchers at WARNING - log the voucher"
    b = "three things: - cache the tariff lookup - log rejected vouchers at WARNING - don't log the voucher"
    said, asked = _apart(a, b)
    assert said != asked and said.startswith("…") and "log the voucher" in said


# ---------------------------------------------------------------------------------------------
# G11: refinements of the request in progress

REQUEST = "Good. Now add a reporting endpoint that lists the expired vouchers, and write tests for it."
STEP = f'Add the endpoint in `basket/reports.py` and test it. The user asked: "{REQUEST}"'


def _refined(kit, latest: str, reply: str, next_body: str, *, request: str = REQUEST):
    msgs = [kit.user("Add voucher support to the basket"), kit.say("Vouchers are in; all tests pass."),
            kit.user(request),
            *kit.tool("Read", {"file_path": "basket/reports.py"}, "def report(): ...", text="Reading the reports module."),
            kit.user(latest), kit.say(reply)]
    return kit.case(msgs, kit.section("next", next_body))


@pytest.mark.parametrize("latest, reply, told", [
    ("also make it require the auditor role", "Sure, the endpoint will require the auditor role.",
     "It must require the auditor role."),
    ("ok, sort them by expiry date", "Sorting by expiry date.", "Sort the rows by expiry date."),
    ("btw the reporting endpoint must only be reachable from the admin network", "Noted.",
     "Keep the reporting endpoint reachable from the admin network only."),
], ids=["also", "ok-them", "btw"])
def test_a_refinement_told_beside_the_quote_of_the_request_passes(grade, kit, latest, reply, told):
    verdict = grade("next_step_quote", _refined(kit, latest, reply, f"{STEP} {told}"))
    assert verdict.status == "pass", verdict.reasons
    assert "request in progress" in verdict.reasons[0] and latest[:40] in verdict.reasons[0]
    # neither quoted nor told: a fail that names the refinement, never "drift"
    verdict = grade("next_step_quote", _refined(kit, latest, reply, STEP))
    assert verdict.status == "fail"
    reason = verdict.reasons[0]
    assert "drift" not in reason and "neither quotes nor tells the latest message" in reason, reason
    assert latest[:40] in reason


def test_a_new_task_after_the_request_still_makes_its_quote_drift(grade, kit):
    for latest in ("now write the release notes for version 2.4 of the shop",
                   "Switch to the checkout page and fix the broken currency symbol",
                   "forget the reporting endpoint, we will buy a tool for that"):
        verdict = grade("next_step_quote", _refined(kit, latest, "OK.", STEP))
        assert verdict.status == "fail", latest
        assert "drift to an old task" in verdict.reasons[0], (latest, verdict.reasons)


def test_a_quote_of_a_finished_older_task_is_drift_even_after_a_refinement(grade, kit):
    older = 'Continue the vouchers: "Add voucher support to the basket"'
    verdict = grade("next_step_quote", _refined(kit, "also make it require the auditor role", "Sure.", older))
    assert verdict.status == "fail" and "drift to an old task" in verdict.reasons[0], verdict.reasons


def test_a_pronoun_alone_needs_the_assistant_to_take_it_up(grade, kit):
    # "write a changelog entry for it": a pronoun, but the reply names neither the request nor the
    # message and works on no file of the request: a request of its own, and quoting the old one drifts
    latest = "write a changelog entry for it"
    verdict = grade("next_step_quote", _refined(kit, latest, "Opening the docs folder.", STEP))
    assert verdict.status == "fail" and "drift to an old task" in verdict.reasons[0], verdict.reasons
    # the same message that the assistant takes up as part of the endpoint work refines it
    verdict = grade("next_step_quote", _refined(kit, latest, "Adding a changelog line about the endpoint.", STEP))
    assert "drift" not in verdict.reasons[0], verdict.reasons


# ---------------------------------------------------------------------------------------------
# G18 d/e


def test_claude_codes_trailer_is_not_read_as_section_9(grade, kit):
    body = ("None; the task is complete.\n\nIf you need specific details from before compaction (like exact code "
            f"snippets, error messages, or content you generated), read the full transcript at: {kit.TRANSCRIPT}")
    verdict = grade("next_step_quote", _list_case(kit, "rename the basket total label", body))
    assert verdict.status == "n/a"
    assert "If you need" not in verdict.reasons[0] and "None; the task is complete." in verdict.reasons[0]


def test_a_bracketed_replacement_is_named_as_such(grade, kit):
    quote = "Now add a reporting endpoint that lists the expired vouchers, and write tests for [the endpoint]."
    verdict = grade("next_step_quote", _refined(kit, REQUEST, "On it.", f'Next: "{quote}"', request="Thanks."))
    assert verdict.status == "pass", verdict.reasons
    assert '"[the endpoint]" stands for "it"' in verdict.reasons[0] and "reformatted" not in verdict.reasons[0]


def test_one_message_left_out_is_singular():
    from pytest_ctxeval.reading.leave_out import LeaveOut, left_out_note

    item = LeaveOut("leave out the PDF detour", frozenset({"user_messages"}), ("pdf", "detour"))
    assert "; 1 message left out as /compact asked" in left_out_note([item], "messages")
    assert "; 1 error line left out as /compact asked" in left_out_note([item], "error lines")


@pytest.mark.parametrize("latest, reply, told", [
    ("should it be paginated?", "Yes, I'll paginate it, 50 per page.", "Paginate it, 50 per page."),
    ("and add pagination too", "Will do.", "Add pagination, 50 per page."),
    ("use 20 per page", "OK, 20 per page.", "Show 20 per page."),
    ("ok, sort them by expiry date", "Sorting by expiry date.", "Sort the rows by expiry date."),
    ("also make it require the auditor role", "Sure.", "It must require the auditor role."),
], ids=["question", "and-too", "parameter", "ok-them", "also"])
def test_short_and_long_refinements_follow_one_rule(grade, kit, latest, reply, told):
    # review 4 G11: four refinements of the same kind got two verdicts, by their length (a message of
    # four words or fewer was joined to the request, a longer one made its quote "drift")
    assert grade("next_step_quote", _refined(kit, latest, reply, f"{STEP} {told}")).status == "pass"
    verdict = grade("next_step_quote", _refined(kit, latest, reply, STEP))
    assert verdict.status == "fail" and "neither quotes nor tells the latest message" in verdict.reasons[0]
    # a bare go-ahead adds nothing to tell
    for go in ("yes go ahead", "Kick it off"):
        assert grade("next_step_quote", _refined(kit, go, "Starting.", STEP)).status == "pass", go


def test_the_quote_old_message_operator_does_not_take_the_request_in_progress_for_an_old_one(kit):
    from pytest_ctxeval.grading.mutation_library import builtin_mutations

    OPS = {op.name: op for op in builtin_mutations()}
    latest = "also make it require the auditor role"
    case = _refined(kit, latest, "Sure, the endpoint will require the auditor role.", f'Next: "{latest}"')
    texts = [m.text for m in OPS["quote_old_message"].apply(case, seed=0)]
    assert texts == ["Add voucher support to the basket"], texts


def test_words_added_or_negated_in_brackets_are_not_an_editors_note(grade, kit):
    for quote in ("Now add a reporting endpoint that lists the expired vouchers, and [do not] write tests for it.",
                  "Now add a reporting endpoint that lists the expired vouchers, and write tests for [no endpoint]."):
        verdict = grade("next_step_quote", _refined(kit, REQUEST, "On it.", f'Next: "{quote}"', request="Thanks."))
        assert "editor's note" not in verdict.reasons[0], (quote, verdict.reasons)


def test_the_request_before_a_change_of_course_is_not_in_progress(grade, kit):
    # "Refactor … with signed cookies" -> "Actually, stop - don't use cookies, keep sessions in Redis"
    # -> "Also set a 14-day expiry": the running task is the corrected one; quoting the overridden
    # request (and so its dropped approach) is drift, however the expiry is told
    first = "Refactor the session store to keep sessions in signed cookies"
    msgs = [kit.user(first), kit.say("Starting with the cookie signer."),
            kit.user("Actually, stop - don't use cookies, keep the sessions in Redis so we can revoke them"),
            kit.say("Switching to Redis."), kit.user("Also set a 14-day sliding expiry on the Redis keys"),
            kit.say("Adding the expiry to the Redis keys.")]
    verdict = grade("next_step_quote", kit.case(msgs, kit.section(
        "next", f'Add the 14-day key expiry next. The user asked: "{first}"')))
    assert verdict.status == "fail" and "drift to an old task" in verdict.reasons[0], verdict.reasons
