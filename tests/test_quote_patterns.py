"""The single-quote pattern of ``quoting.QUOTES`` and the underscore-emphasis pattern of
``summary.plain_emphasis`` are written to be searched fast (they start at their mark; the quote
reads its words only when its closing mark can end a quote). They must match exactly what the
patterns they replaced matched, on every text: those are kept here as the reference."""

from __future__ import annotations

import re

from hypothesis import example, given, strategies as st

from pytest_ctxeval.reading import summary
from pytest_ctxeval.reading.quoting import QUOTES, quotes

SINGLE_BEFORE = re.compile(r"(?:(?<=[\s:(])|^)'([^'\n]*?\s[^'\n]*?\s[^'\n]{2,}?)'(?=[\s.,;:!?)]|$)", re.MULTILINE)
UNDERSCORE_BEFORE = re.compile(r"(?<![\w\\])(__?)(?=[^\s_])([^\n]+?)(?<=[^\s_])\1(?![\w])")

_PIECES = [" ", "  ", "\n", "\t", "'", "''", "_", "__", "a", "bc", "word", ":", "(", ")", ".", ",", "!", "\\", "x_y",
           "it's", " 'a b cd' ", "__init__", "_api.go_", "don't", "(__x__)"]
texts = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join) | st.text(max_size=40)


@given(texts)
@example("'one two three' and 'a b c'x and: 'no close\nat all")
@example("'a\nb\ncd' then 'a\nb\nc\nde'")
@example("x 'w o rd' y")
def test_the_single_quote_pattern_matches_what_the_old_one_matched(text: str) -> None:
    assert [(m.span(), m.group(1)) for m in QUOTES[3].finditer(text)] == \
        [(m.span(), m.group(1)) for m in SINGLE_BEFORE.finditer(text)]


def _unwrap_before(text: str) -> str:
    def unwrap(m: re.Match[str]) -> str:
        inner = m.group(2)
        if re.fullmatch(r"\w+", inner) or (m.group(1) == "_" and "_" in inner):
            return m.group(0)
        return inner
    return UNDERSCORE_BEFORE.sub(unwrap, text) if "_" in text else text


@given(texts)
@example("- __Ruff UP038__: fixed in __init__.py and _api.go_ and snake_case")
@example("\\_x_ a__b__ ___c___ __ d __")
def test_the_underscore_emphasis_pattern_matches_what_the_old_one_matched(text: str) -> None:
    assert [m.span() for m in summary._UNDERSCORE_EMPHASIS.finditer(text)] == \
        [m.span() for m in UNDERSCORE_BEFORE.finditer(text)]
    assert summary.plain_emphasis(text) == _unwrap_before(text)


def test_the_patterns_still_do_their_job() -> None:
    """What they are for, not only equal to the old ones (a test that fails if both broke alike)."""
    assert "we fix the login bug" in quotes("Next: 'we fix the login bug' as asked")
    assert summary.plain_emphasis("- __Ruff UP038__ in __init__.py") == "- Ruff UP038 in __init__.py"
    long_line = "'" + " word" * 20_000 + "'s end"   # a closing mark that cannot end a quote (an apostrophe)
    assert QUOTES[3].search(long_line) is None
