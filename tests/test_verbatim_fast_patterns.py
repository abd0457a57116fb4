"""``verbatim.typography`` and ``verbatim.normalize`` read dashes and single emphasis with patterns
written to be searched fast (each branch starts with its character; runs of spaces read once). They
must match exactly what the one-line patterns they replaced matched, on every text: those are kept
here as the reference."""

from __future__ import annotations

import re
import sys

from hypothesis import example, given, strategies as st

from pytest_ctxeval.reading import verbatim

#: The patterns as they were first written (slow: every branch tried at every character).
DASH_BEFORE = re.compile(r"(?<=\d)\u2013(?=\d)|[^\S\n]*[\u2013\u2014\u2015\u2e3a\u2e3b][^\S\n]*|(?<=\w)-{2,3}(?=\w)"
                         r"|(?<=\s)-{2,3}(?=\s)")
EM_BEFORE = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])"
                       r"|(?<![\w_])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?![\w_])")

WHITESPACE = "".join(re.findall(r"\s", "".join(map(chr, range(sys.maxunicode + 1)))))
#: What the patterns look at: spaces of every kind, line breaks, digits, letters, the dashes,
#: hyphens, the emphasis markers, punctuation.
_PIECES = [*WHITESPACE, *"ab1_9*-.\u2013\u2014\u2015\u2e3a\u2e3b", "--", "---", "----", "  ", "\t\t", "**", "__",
           "1\u20135", "a \u2014 b", "snake_case", "*x*", "_y_", "--flag"]
texts = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join) | st.text(max_size=40)


def _dash_before(text: str) -> str:
    if any(c in text for c in "\u2013\u2014\u2015\u2e3a\u2e3b") or "--" in text:
        text = DASH_BEFORE.sub(lambda m: "-" if m.group() == "\u2013" else " - ", text)
    return text


def _dash_now(text: str) -> str:
    """``typography``'s dash pass alone (no typographic character besides the dashes is in the texts
    drawn here, except by chance in ``st.text``: compared through ``typography`` both sides)."""
    return verbatim.typography(text)


@given(texts)
@example("a  \u2014  b")          # spaces on both sides, a run of two
@example("x -- \u2014 y")         # a ``--`` match ending at a space before a dash
@example("1\u20135 and 2 \u2013 3")
@example("a---b a----b -- --flag")
@example("\n \u2014\n")
def test_the_dash_pattern_matches_what_the_one_line_pattern_matched(text: str) -> None:
    typographic = verbatim._TYPOGRAPHY_CHARS.sub(lambda m: verbatim._TYPOGRAPHY[m.group()], text)
    assert _dash_now(text) == _dash_before(typographic)


@given(texts)
@example("*bold* and _it_ but not *.py or snake_case_name")
@example("**x** *a b* _c d_ a*b* _e_f")
@example("*\n* _ _ *x*y")
def test_the_emphasis_pattern_matches_what_the_one_line_pattern_matched(text: str) -> None:
    def keep(m: re.Match[str]) -> str:
        return m.group(1) or m.group(2)

    assert verbatim._MD_EM.sub(keep, text) == EM_BEFORE.sub(keep, text)
    assert [m.span() for m in verbatim._MD_EM.finditer(text)] == [m.span() for m in EM_BEFORE.finditer(text)]


def test_the_patterns_still_do_their_job() -> None:
    """Not only equal to the old ones: what they are for (a test that fails if both broke alike)."""
    assert verbatim.typography("wait \u2014 then 1\u20135, a -- b, a--b, --flag, a----b") == \
        "wait - then 1-5, a  -  b, a - b, --flag, a----b"
    assert verbatim.normalize("use *small* _steps_ in snake_case *.py") == "use small steps in snake_case *.py"
