"""The whitespace collapsing the graders and the reference model run on whole histories
(``normalize_ws``, ``verbatim.normalize``) is ``str.split`` based for speed; it must stay exactly
the regular expression it replaced, on every kind of whitespace Python knows."""

from __future__ import annotations

import re
import sys
import unicodedata

from hypothesis import given, strategies as st

from pytest_ctxeval.reading.summary import normalize_ws
from pytest_ctxeval.reading import verbatim

#: Every character ``\s`` matches in a str pattern (29 on CPython: ASCII, NEL, NBSP, the Unicode spaces).
WHITESPACE = "".join(re.findall(r"\s", "".join(map(chr, range(sys.maxunicode + 1)))))
texts = st.text(alphabet=st.sampled_from(list(WHITESPACE) + list("ab.?\u200b*\"")), max_size=40) | st.text(max_size=40)
#: For verbatim.normalize: also what each of its passes looks for (media markers, Markdown escapes
#: and emphasis, quotes, punctuation after a space), which it skips in a text that holds none.
_PIECES = [*WHITESPACE, *"ab.?\u200b*\"[]\\_~,;:)!'`\u00a0\u2028\u0301", "[Image #1]", "[Pasted text #2 +3 lines]",
           "[Document: a.pdf]", "**", "__", "~~", "\\*", "\\_"]
verbatim_texts = st.lists(st.sampled_from(_PIECES), max_size=30).map("".join) | st.text(max_size=40)


def test_the_whitespace_set_is_the_one_str_split_uses() -> None:
    assert len(WHITESPACE) >= 25 and "\u00a0" in WHITESPACE and "\u3000" in WHITESPACE
    assert all(("x" + c + "y").split() == ["x", "y"] for c in WHITESPACE)
    assert "\u200b".split() == ["\u200b"]  # a zero-width space is not whitespace to either


@given(texts)
def test_normalize_ws_is_the_regex_it_replaced(text: str) -> None:
    assert normalize_ws(text) == re.sub(r"\s+", " ", text).strip()


def _normalize_by_regex(text: str) -> str:
    """``verbatim.normalize`` as it was written with ``re.sub(r"\\s+", ...)``."""
    text = unicodedata.normalize("NFC", text)
    text = verbatim._INVISIBLE.sub("", text)
    text = text.replace("\u00a0", " ").replace("\u2028", "\n").replace("\u2029", "\n")
    text = verbatim._MEDIA.sub(" ", text)
    text = verbatim._MD_ESCAPE.sub(r"\1", text)
    text = verbatim._MD_STRONG.sub("", text)
    text = verbatim._QUOTE_CHARS.sub("", text)
    text = re.sub(r"\s+([?!.,;:)])", r"\1", text)
    return re.sub(r"\s+", " ", text).strip().casefold()


@given(verbatim_texts)
def test_verbatim_normalize_is_the_regex_it_replaced(text: str) -> None:
    assert verbatim.normalize(text) == _normalize_by_regex(text)


def test_examples() -> None:
    assert normalize_ws("\u3000 a \u2028\u2029 b\x1c\x1d c\u0085") == "a b c"
    assert verbatim.normalize("  Keep \u00a0 IT\n\tso ?") == "keep it so?"
