"""``verbatim.most_alike``, the "closest line" search behind the fidelity graders' reasons, keeps
what it compared by value and skips lines by their quick bounds: it must give what comparing every
line in full gives, on a first call and on a repeated one (remembered ratios)."""

from __future__ import annotations

import difflib

from hypothesis import given, strategies as st

from pytest_ctxeval.reading import verbatim
from pytest_ctxeval.reading.verbatim import most_alike

words = st.sampled_from(["run", "the", "tests", "fix", "login", "bug", "a", "", "tests?", "logout"])
texts = st.lists(words, max_size=12).map(" ".join)


def _every_line_in_full(target: str, lines: list[str], at_least: float, autojunk: bool):
    """The first line with the highest full ratio, when at least ``at_least``."""
    best = None
    for line in lines:
        ratio = difflib.SequenceMatcher(None, target, line[:300], autojunk=autojunk).ratio()
        if ratio >= at_least and (best is None or ratio > best[1]):
            best = (line, ratio)
    return best


@given(texts, st.lists(texts, max_size=8), st.sampled_from([0.0, 0.3, 0.5, 0.8, 1.0]), st.booleans())
def test_most_alike_is_the_best_full_comparison(target: str, lines: list[str], at_least: float,
                                                 autojunk: bool) -> None:
    expected = _every_line_in_full(target, lines, at_least, autojunk)
    assert most_alike(target, lines, at_least, autojunk=autojunk) == expected
    assert most_alike(target, lines, at_least, autojunk=autojunk) == expected  # from what it remembered
    assert most_alike(target, lines[::-1], at_least, autojunk=autojunk) == \
        _every_line_in_full(target, lines[::-1], at_least, autojunk)


def test_long_lines_compare_by_their_first_300_characters_and_the_memory_is_bounded(monkeypatch) -> None:
    line = "x" * 300 + "y" * 50
    assert most_alike("x" * 300, [line], 0.5, autojunk=False) == (line, 1.0)
    monkeypatch.setattr(verbatim, "_PAIRS_KEPT", 3)
    for n in range(10):
        most_alike(f"target {n}", [f"line {n}", f"other {n}"], 0.0, autojunk=False)
    assert len(verbatim._RATIOS) <= 5 and len(verbatim._QUICK) <= 5


def test_a_region_haystack_is_shared_by_value_and_reads_the_same() -> None:
    region = "- Fix the login bug\n- run the tests ?"
    shared = verbatim.haystack(region)
    assert verbatim.haystack("".join(list(region))) is shared  # an equal string, not the same object
    fresh = verbatim.Haystack(region)
    for needle in ("fix the login bug", "run the tests?", "fix the logout bug"):
        assert verbatim.find(needle, shared) == verbatim.find(needle, fresh)
