"""Fresh-reader review 3, F11: four small verdict points, each a class.

* an emoji beside the words ("looks good 👍 ship it") dropped by the summary: a careful reader's
  harmless edit failed two graders; a swapped emoji (👍 → 👎) or a message that is only emoji still counts;
* a URL the person typed, kept as a Markdown link whose text labels it
  (``[acme/shop#481](https://github.com/acme/shop/issues/481)``): the reader sees the same URL;
* section 9 quoting the last request cut just before its condition ("ship it" of "ship it, but only
  to staging") passed ``next_step_quote``: the quote is verbatim and leaves out the limit;
* a typed message that quotes a Claude Code tag (``<command-message>…</command-message> - can you
  explain …``) was not counted as typed at all, silently.
"""

from __future__ import annotations

import pytest

from pytest_ctxeval.core.messages import UserMessage, person_text
from pytest_ctxeval.reading.verbatim import find

STAGING = "looks good 👍 ship it, but only to staging"
FIRST = "Build the release candidate and run the smoke tests."


def _case(kit, last: str, *, listed: str | None = None, next_step: str = "Deploy it.", span=None):
    messages = [kit.user(FIRST), kit.say("Done; all green."), kit.user(last), kit.say("Deploying.")]
    listed = f'- "{FIRST}"\n- "{last if listed is None else listed}"'
    summary = kit.summary({"request": "Ship the release", "user_messages": listed, "next": next_step})
    return kit.case(messages, summary)


# -- emoji --------------------------------------------------------------------------------------


def test_an_emoji_dropped_beside_the_words_keeps_the_message(grade, kit):
    case = _case(kit, STAGING, listed="looks good ship it, but only to staging")
    v = grade("verbatim_user_messages", case)
    assert v.status == "pass" and "with an emoji dropped" in v.reasons[0], v.reasons
    assert grade("last_request_intact", case).status == "pass"


@pytest.mark.parametrize("needle, hay", [
    ("looks good 👍 ship it", "- looks good 👎 ship it"),  # swapped, not dropped
    ("👍", "- ok"),                                          # a message that is only emoji
    ("looks good 👍 ship it", "- looks good, ship"),       # words changed too
])
def test_an_emoji_swapped_or_a_reply_of_emoji_is_not_kept(needle, hay):
    assert not find(needle, hay)


def test_a_summary_that_drops_words_beside_an_emoji_still_fails(grade, kit):
    v = grade("verbatim_user_messages", _case(kit, STAGING, listed="looks good 👍 ship it"))
    assert v.status == "fail" and "user message 2 of 2 is not verbatim" in v.reasons[0]


# -- a URL kept as a labelled Markdown link -----------------------------------------------------


URL_MESSAGE = "see https://github.com/acme/shop/issues/481 and fix the refund rounding"


@pytest.mark.parametrize("label, kept", [
    ("acme/shop#481", True),          # the URL's own words: a label of it
    ("issue 481", True),
    ("the bug", False),               # words the URL does not hold: the summary's text, not the URL
    ("acme/shop#482", False),         # another issue
])
def test_a_url_kept_as_a_link_labelled_by_its_own_words(label, kept):
    hay = f"- see [{label}](https://github.com/acme/shop/issues/481) and fix the refund rounding"
    assert bool(find(URL_MESSAGE, hay)) is kept


def test_a_link_to_another_url_is_not_the_url_typed():
    assert not find(URL_MESSAGE, "- see [acme/shop#481](https://github.com/acme/shop/issues/482) and fix the refund rounding")


# -- section 9 cut before the request's condition ------------------------------------------------


@pytest.mark.parametrize("next_step", [
    'Deploy: the last request, "looks good 👍 ship it" is done to staging; next, deploy to production',
    'Deploy it: "looks good 👍 ship it"',
])
def test_a_quote_cut_before_the_condition_fails_next_step_quote(grade, kit, next_step):
    v = grade("next_step_quote", _case(kit, STAGING, next_step=next_step))
    assert v.status == "fail", v.reasons
    assert 'cut before its condition: "looks good 👍 ship it" leaves out "but only to staging"' in v.reasons[0]


@pytest.mark.parametrize("next_step", [
    'Deploy to staging as asked: "looks good 👍 ship it, but only to staging"',
    'Deploy it to staging only, as the user said: "looks good 👍 ship it"',
])
def test_the_condition_quoted_or_stated_passes(grade, kit, next_step):
    assert grade("next_step_quote", _case(kit, STAGING, next_step=next_step)).status == "pass"


def test_a_quote_of_a_whole_sentence_is_not_cut_before_the_next_one(grade, kit):
    last = "Ship the release candidate to staging now. Don't forget the changelog entry."
    v = grade("next_step_quote", _case(kit, last, next_step='Deploy: "Ship the release candidate to staging now"'))
    assert v.status == "pass", v.reasons


@pytest.mark.parametrize("last, quote, clause", [
    ("refactor the billing module without touching the public API", "refactor the billing module",
     "without touching the public API"),
    ("merge the release branch into main unless the nightly tests fail", "merge the release branch into main",
     "unless the nightly tests fail"),
])
def test_other_conditions(grade, kit, last, quote, clause):
    v = grade("next_step_quote", _case(kit, last, next_step=f'Next: "{quote}"'))
    assert v.status == "fail" and f'leaves out "{clause}"' in v.reasons[0], v.reasons


# -- a typed message that quotes a client tag ----------------------------------------------------


def test_text_typed_around_a_quoted_client_tag_counts():
    typed = "<command-message>is what you see in the log</command-message> - can you explain where that string comes from?"
    assert person_text(UserMessage(uuid="u", content=typed)) == "- can you explain where that string comes from?"
    assert person_text(UserMessage(uuid="u", content="why does <command-name> show up in my log?")) \
        == "why does <command-name> show up in my log?"


@pytest.mark.parametrize("client", [
    "<command-name>/model</command-name>\n   <command-message>model</command-message>\n   <command-args></command-args>",
    "<local-command-stdout>Set model to opus</local-command-stdout>",
    "<local-command-caveat>Caveat: The messages below were generated by the user while running local commands."
    "</local-command-caveat>",
])
def test_the_clients_own_records_are_still_not_typed(client):
    assert person_text(UserMessage(uuid="u", content=client)) is None


def test_a_dropped_message_around_a_tag_is_counted_and_fails(grade, kit):
    typed = "<command-message>is what you see in the log</command-message> - can you explain where that string comes from?"
    messages = [kit.user(FIRST), kit.say("Done."), kit.user(typed), kit.say("It comes from the CLI."),
                kit.user("thanks, now add a test for it please"), kit.say("Adding it.")]
    summary = kit.summary({"request": FIRST, "user_messages": f'- "{FIRST}"\n- "thanks, now add a test for it please"',
                           "next": 'Add the test: "thanks, now add a test for it please"'})
    v = grade("verbatim_user_messages", kit.case(messages, summary))
    assert v.status == "fail" and "user message 2 of 3 is not verbatim" in v.reasons[0], v.reasons
