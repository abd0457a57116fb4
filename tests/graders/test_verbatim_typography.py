"""Verbatim as a careful reader counts it, typography included: a summariser that sets the person's
``...`` as ``…``, ``->`` as ``→`` or `` - `` as `` — `` kept the message; one that changed a word,
cut the message (with or without an ``…``) did not. Also: section 9's quote in an inline code span
or without marks, and the reason for a message kept verbatim only outside section 6."""

from __future__ import annotations

import pytest

from pytest_ctxeval.reading.verbatim import normalize, percent_alike


@pytest.mark.parametrize("typed, set", [
    ("lets shorten that feedback loop...", "lets shorten that feedback loop…"),
    ("login -> dashboard -> settings", "login → dashboard → settings"),
    ("undo <- redo", "undo ← redo"),
    ("a => b", "a ⇒ b"),
    ("x >= 1 and y <= 2 and z != 3", "x ≥ 1 and y ≤ 2 and z ≠ 3"),
    ("fix the tests - then push", "fix the tests — then push"),
    ("fix the tests - then push", "fix the tests—then push"),
    ("fix the tests -- then push", "fix the tests – then push"),
    ("fix the tests--then push", "fix the tests — then push"),
    ("pages 1-5", "pages 1–5"),
    ("don't touch it", "don’t touch it"),
    ("say \"hi\"", "say “hi”"),
    ("wait for it", "wait\u202ffor\u2009it"),
    ("ok, done!", "ok，done！"),
], ids=lambda v: v if len(v) < 12 else v[-12:])
def test_typographic_equivalents_normalise_alike(typed, set):
    assert normalize(typed) == normalize(set)


@pytest.mark.parametrize("a, b", [
    ("run --seed 1", "run -seed 1"),          # a flag is not a dash
    ("block--modifier", "block-modifier"),
    ("fix the login bug", "fix the logout bug"),
    ("rerun the suite", "rerun the suite…"),   # an ellipsis the person did not type
    ("version 1.0.5", "version 1.0.6"),
])
def test_differences_that_carry_meaning_stay(a, b):
    assert normalize(a) != normalize(b)


def test_a_similarity_short_of_identical_never_shows_as_100_percent():
    assert percent_alike(0.996) == "99%"
    assert percent_alike(1.0) == "100%"


# ---------------------------------------------------------------------------------------------
# verbatim_user_messages and last_request_intact

REQUEST = ("ok the e2e tests are still failing - can we maybe go through the e2e tests locally first -> "
           "lets shorten that feedback loop...")


def _s6(kit, *items: str) -> str:
    return kit.section("user_messages", "\n".join(f'- "{i}"' for i in items))


@pytest.mark.parametrize("typeset", [
    REQUEST.replace("...", "…"),
    REQUEST.replace("->", "→"),
    REQUEST.replace(" - ", " — "),
    REQUEST.replace(" - ", " – ").replace("->", "→").replace("...", "…"),
], ids=["ellipsis", "arrow", "em-dash", "all"])
@pytest.mark.parametrize("name", ["verbatim_user_messages", "last_request_intact"])
def test_a_message_set_typographically_is_verbatim(grade, kit, name, typeset):
    verdict = grade(name, kit.case([kit.user(REQUEST)], _s6(kit, typeset)))
    assert verdict.status == "pass", verdict.reasons


@pytest.mark.parametrize("name", ["verbatim_user_messages", "last_request_intact"])
@pytest.mark.parametrize("kept", [
    "ok the e2e tests are still failing - can we maybe go through the e2e tests locally first…",
    "ok the e2e tests are still failing — can we maybe go through the e2e tests locally first -> lets shorten it…",
    REQUEST.replace("locally", "remotely").replace("...", "…"),
], ids=["cut-with-ellipsis", "cut-and-typeset", "changed-word"])
def test_a_cut_or_changed_message_still_fails_however_it_is_typeset(grade, kit, name, kept):
    verdict = grade(name, kit.case([kit.user(REQUEST)], _s6(kit, kept)))
    assert verdict.status == "fail", verdict.reasons


def test_a_failing_item_that_is_nearly_identical_is_not_called_100_percent_similar(grade, kit):
    message = ("Bump the pinned version of the auth client in requirements.txt to 1.0.5 and rerun the whole "
               "integration suite against the staging database before you open the pull request for review, "
               "and say in its description which of the flaky upload tests you had to retry and why")
    verdict = grade("verbatim_user_messages",
                    kit.case([kit.user(message)], _s6(kit, message.replace("1.0.5", "1.0.6"))))
    assert verdict.status == "fail"
    assert "100% similar" not in verdict.reasons[0]
    assert "99% similar" in verdict.reasons[0]  # 0.996 alike: one character in 250
    assert "[-1.0.5-]{+1.0.6+}" in verdict.reasons[0]


# ---------------------------------------------------------------------------------------------
# verbatim_user_messages: a message verbatim outside section 6


FIRST = "Refactor the session handling in src/auth/ so that tokens are opaque"
SECOND = "Then rerun the whole test suite and fix whatever breaks"


def test_a_message_only_in_another_section_fails_and_the_reason_says_where_it_is(grade, kit):
    # section 6 is the list the prompt asks for: a copy in section 9 does not stand in for it
    text = kit.summary({"user_messages": f'- "{SECOND}"', "next": f'Refactor it, as asked: "{FIRST}"'})
    verdict = grade("verbatim_user_messages", kit.case([kit.user(FIRST), kit.say("ok"), kit.user(SECOND)], text))
    assert verdict.status == "fail"
    line = kit.line_of(text, "9. Optional Next Step")
    assert f"it is verbatim in section 9 (line {line}), but section 6 is where the prompt asks" in verdict.reasons[0]


def test_a_message_in_no_section_fails_without_pointing_elsewhere(grade, kit):
    text = kit.summary({"user_messages": f'- "{SECOND}"', "next": "Refactor the session handling."})
    verdict = grade("verbatim_user_messages", kit.case([kit.user(FIRST), kit.say("ok"), kit.user(SECOND)], text))
    assert verdict.status == "fail"
    assert "user message 1 of 2" in verdict.reasons[0]
    assert "it is verbatim in" not in verdict.reasons[0]


# ---------------------------------------------------------------------------------------------
# next_step_quote: a code span, bold or plain text holding the request


LAST = "5 line breaks after summary. update the skill too"
OLD = "show before vs after first and then summarize what changed in two lines"


def _convo(kit) -> list:
    return [kit.user(OLD), kit.say("Done: the skill shows before and after."), kit.user(LAST)]


def _next(kit, body: str) -> str:
    return kit.summary({"user_messages": f'- "{OLD}"\n- "{LAST}"', "next": body})


@pytest.mark.parametrize("body", [
    f"Update the skill. The user's last message: `{LAST}`",
    f"Update the skill. The user's last message: **{LAST}**",
    f"Update the skill. The user's last message: {LAST}",
    f"Update the skill. The user's last message: {LAST.replace('.', '…')}",
], ids=["backticks", "bold", "plain", "plain-typeset"])
def test_the_last_request_in_a_code_span_bold_or_plain_is_quoted(grade, kit, body):
    verdict = grade("next_step_quote", kit.case(_convo(kit), _next(kit, body)))
    assert verdict.status == "pass", verdict.reasons
    assert "5 line breaks after summary" in verdict.reasons[0]


def test_code_in_backticks_is_not_a_quote(grade, kit):
    body = "Fix the 3 clippy errors in `crates/mementor-lib/src/pipeline/ingest.rs` with `cargo clippy --fix`."
    verdict = grade("next_step_quote", kit.case(_convo(kit), _next(kit, body)))
    assert verdict.status == "fail"
    assert "quotes nothing" in verdict.reasons[0]


@pytest.mark.parametrize("body, found", [
    (f"Redo the summary format. The user asked: `{OLD}`", "quotes an older message"),
    (f"Redo the summary format: {OLD}.", "repeats an older message word for word, without quote marks"),
    (f"Redo the summary format: **{OLD}**.", "repeats an older message word for word, without quote marks"),
], ids=["backticks", "plain", "bold"])
def test_an_older_request_in_a_code_span_or_unmarked_is_drift(grade, kit, body, found):
    verdict = grade("next_step_quote", kit.case(_convo(kit), _next(kit, body)))
    assert verdict.status == "fail"
    assert found in verdict.reasons[0]
    assert "show before vs after first" in verdict.reasons[0]
    assert "drift" in verdict.reasons[0]


def test_a_misquote_is_not_rescued_by_the_words_inside_its_marks(grade, kit):
    # nine words of the request are inside the quote marks, but the quote as a whole is not verbatim
    misquoted = LAST.replace("update the skill too", "leave the skill alone")
    verdict = grade("next_step_quote", kit.case(_convo(kit), _next(kit, f'Continue: "{misquoted}"')))
    assert verdict.status == "fail"
    assert "not verbatim" in verdict.reasons[0]


def test_a_few_words_of_the_request_in_the_step_are_not_a_quote(grade, kit):
    verdict = grade("next_step_quote", kit.case(_convo(kit), _next(kit, "Next: update the skill too, then stop.")))
    assert verdict.status == "fail"
    assert "quotes nothing" in verdict.reasons[0]


LONG = "lets address all redundant and orphaned comments for staged files in fact. then push it to the branch"


@pytest.mark.parametrize("body, status", [
    (f"Next: {LONG}", "pass"),                                                    # the whole message
    ("Next: lets address all redundant and orphaned comments for staged files in fact.", "pass"),  # a clause
    ("Next: lets address all redundant and orphaned comments for unstaged files in fact.", "fail"),  # a word changed
    ("Next: **lets address all redundant and orphaned comments for staged documents** then.", "fail"),  # cut mid-clause
    ("Next: lets address all redundant and orphaned comments for the docs.", "fail"),  # its own ending
])
def test_an_unmarked_repeat_counts_only_unedited_and_up_to_a_clause_end(grade, kit, body, status):
    convo = [kit.user(OLD), kit.say("Done."), kit.user(LONG)]
    summary = kit.summary({"user_messages": f'- "{OLD}"\n- "{LONG}"', "next": body})
    verdict = grade("next_step_quote", kit.case(convo, summary))
    assert verdict.status == status, verdict.reasons


def test_a_code_span_of_a_command_the_assistant_ran_is_code_not_a_misquote(grade, kit):
    command = "pnpm --filter e2e test -- --reporter=list tests/e2e/sharing.spec.ts"
    convo = [kit.user(OLD), kit.say("Done."), kit.user(LAST),
             *kit.tool("Bash", {"command": command}, "1 passed"), kit.say(f"Ran {command}")]
    body = f"Run `{command}` again."
    verdict = grade("next_step_quote", kit.case(convo, _next(kit, body)))
    assert verdict.status == "fail" and "quotes nothing" in verdict.reasons[0], verdict.reasons
