"""mark_replaced looks up an item's first mention only once a candidate change needs it, and stops
at the first candidate at or before it (changes are in message order): the marks must be exactly
those of the loop before (kept here as the oracle: the first mention looked up for every item with
a candidate, every candidate tried) and of the direct definition (tests/llm/test_relied_index.py).
An item's words, key and values are remembered by its text (relied._item_keys)."""

from __future__ import annotations

import re

from hypothesis import given, settings, strategies as st

from pytest_ctxeval.llm import relied
from pytest_ctxeval.reading.extract import significant_tokens
from pytest_ctxeval.reading.summary import normalize_ws

from test_relied_index import direct, span


def before(items: list[str], history: list) -> list[str]:
    """mark_replaced as it was before the lazy first mention (the oracle)."""
    index = relied._Index(history)
    out = []
    for item in items:
        if relied.REPLACED in item:
            out.append(item)
            continue
        words = [w for w in significant_tokens(item) if not re.search(r"\d", w)]
        if not words:
            out.append(item)
            continue
        key = normalize_ws(item).lower()
        distinct = relied._distinct(item)
        if not distinct:
            out.append(item)
            continue
        candidates = index.changes_with(distinct)
        newer = None
        start = index.first_mention(key) if candidates else -1
        for j in reversed(candidates):
            i, s, low, _ = index.changes[j]
            if i <= start or key[:80] in low or low[:60] in key:
                continue
            have = index.tokens(s)
            if sum(w in have for w in words) / len(words) >= 0.6:
                newer = s
                break
        out.append(item if newer is None else f"{item}{relied.REPLACED}\"{newer[:200]}\")")
    return out


@settings(deadline=None)  # examples: the profile's (conftest.py: 50 in the suite, 1,000 in .ci/soak)
@given(st.integers(0, 10_000), st.integers(0, 150))
def test_marks_are_those_of_the_loop_before(seed: int, start: int) -> None:
    history, items = span(seed)  # items said in the span, and said before it (carried)
    got = relied.mark_replaced(items, history[start:])
    assert got == before(items, history[start:]) == direct(items, history[start:])


def test_the_comparison_sees_marks_and_early_stops() -> None:
    calls = []
    real = relied._Index.first_mention

    def counting(self, key):
        calls.append(key)
        return real(self, key)

    marked = 0
    relied._Index.first_mention = counting
    try:
        for seed in range(4):
            history, items = span(seed)
            got = relied.mark_replaced(items, history[60:])
            marked += sum(relied.REPLACED in x for x in got)
            assert got == before(items, history[60:])
    finally:
        relied._Index.first_mention = real
    assert marked > 10 and calls  # changes were found, and first mentions looked up


@settings(deadline=None)  # examples: the profile's (conftest.py: 50 in the suite, 1,000 in .ci/soak)
@given(st.text(st.sampled_from("ab xyz_/.-09Port now\t\n"), max_size=60))
def test_an_items_keys_are_read_as_before(item: str) -> None:
    """mark_replaced reads an item's words, key and values once per text (relied._item_keys)."""
    for _ in range(2):  # computed, then remembered
        words, key, distinct = relied._item_keys(item)
        assert list(words) == [w for w in significant_tokens(item) if not re.search(r"\d", w)]
        assert key == normalize_ws(item).lower() and distinct == relied._distinct(item)
