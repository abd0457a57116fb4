"""The offline judge's term sets (``llm.reference._terms``) are what the loop before the shortcut
gave: every token stemmed, and every part of 3+ characters of a path or identifier, token by token
in order. The shortcut reads each distinct token once and splits only tokens with a separator.
Chinese, Japanese and Korean text, which has no word tokens, adds its pairs of characters."""

from __future__ import annotations

import re

from hypothesis import given, strategies as st

from pytest_ctxeval.llm.reference import _CONTRACTIONS, _stem, _terms, _terms_cached, cjk_terms
from pytest_ctxeval.reading.extract import significant_tokens


def before(text: str) -> frozenset[str]:
    """The loop as it was (every token, ``re.split`` on each)."""
    text = text.replace("’", "'")
    for short, full in _CONTRACTIONS.items():
        text = text.replace(short, full)
    out = set()
    for t in significant_tokens(text):
        out.add(_stem(t))
        for part in re.split(r"[/._\-()]+", t):
            if len(part) >= 3:
                out.add(_stem(part))
    out.update(cjk_terms(text))  # added since: CJK text, which has no word tokens, as character pairs
    return frozenset(out)


PIECES = st.sampled_from([
    "src/auth/session.py", "parse_date()", "MAX_RETRIES", "v1.2.3", "user-id", "a.b", "(x)", "__init__",
    "-flag", "trailing.", "/abs/path/", "can't", "won't", "it's", "they're", "we'll", "don’t", "revoked", "revokes",
    "studies", "testing", "42", "7", "3.14", "the", "and", "naïve", "Ünïcode", "x_y_z", "a-b-c-d", "..", "--",
    " ", "\n", "\t", ", ", ". ",
])


@given(st.lists(st.one_of(PIECES, st.text(max_size=12)), max_size=40).map("".join))
def test_terms_are_those_of_the_loop_before(text: str) -> None:
    _terms_cached.cache_clear()
    assert _terms(text) == before(text)


def test_a_context_repeating_its_words_gives_the_same_terms() -> None:
    line = "Fixed src/auth/session.py: parse_date() now keeps MAX_RETRIES at 30; the user's tests pass.\n"
    text = line * 500 + "Then revoked the token in api/v2/tokens.py (can't keep it).\n"
    _terms_cached.cache_clear()
    got = _terms(text)
    assert got == before(text)
    # whole tokens and their parts, stemmed; contractions spelled out
    assert {"src/auth/session.py", "session", "parse_dat", "max_retry", "retry", "revok", "token", "cannot"} <= got
