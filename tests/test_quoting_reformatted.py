"""A reformatted section-9 quote (pytest_ctxeval.reading.quoting.tokens_in): a list rewritten as one sentence
is a quote; swapped words, a changed word or an inverted prohibition are not."""

from __future__ import annotations

from pytest_ctxeval.reading.quoting import tokens_in

PLAN = ("Step 11: update CLAUDE.md\n- Tech Stack: remove SQLite, sqlite-vector, fastembed\n"
        "- Directory Structure: update to 3 crates\n- Build: do not remove the release profile, remove build.rs")
REQUEST = "Makes sense. Fix it in the cache layer so old keys keep working during the rollout, don't touch the fixture."


def test_a_list_rewritten_as_one_sentence_is_a_quote() -> None:
    assert tokens_in("Step 11: update CLAUDE.md: Tech Stack (remove SQLite, sqlite-vector, fastembed), "
                     "Directory Structure (update to 3 crates), Build (remove build.rs)", [PLAN])


def test_swapped_words_are_a_paraphrase() -> None:
    assert tokens_in("Makes sense. Fix it in the cache layer so old keys keep working during the rollout", [REQUEST])
    assert not tokens_in("Fix sense. Makes it in the cache layer so old keys keep working during the rollout",
                         [REQUEST])


def test_one_word_changed_is_a_misquote() -> None:
    assert not tokens_in("Makes sense. Fix it in the queue layer so old keys keep working during the rollout",
                         [REQUEST])


def test_an_inverted_prohibition_is_not_a_quote() -> None:
    assert not tokens_in("Fix it in the cache layer so old keys keep working during the rollout, "
                         "you may touch the fixture", [REQUEST])
    # every word is in the request: only the polarity check tells the "don't" went missing
    assert not tokens_in("Fix it in the cache layer so old keys keep working during the rollout, "
                         "touch the fixture", [REQUEST])
