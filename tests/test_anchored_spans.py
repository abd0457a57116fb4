"""``anchored_spans`` (grading/mutation_ops.py) tries only the segments where its hint is: the same
spans as ``finditer`` of the continuation and transcript-path patterns, on texts built from the
pieces those patterns and their near misses are made of."""

from __future__ import annotations

import re

import hypothesis
import hypothesis.strategies as st

from pytest_ctxeval.grading.mutation_ops import _CONTINUE_SENTENCE, _PATH_HINT, _PATH_LINE, anchored_spans
from pytest_ctxeval.grading.versions import CONTINUATION_WORDINGS

_PIECES = ["continue", "Continue the conversation", " from where ", "we", "it", "you", " left off", " left it off",
           "resume directly", "RESUME DIRECTLY", "pick up the last task", "Please ", "without asking",
           "read the full transcript at:", "Read the full transcript at: ", "If you need, read", "already",
           "/home/u/.claude/projects/x.jsonl", ".", ". ", "\n", "\n\n", " ", "\t", "x", "ſ", "résumé"]


@hypothesis.given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_the_spans_are_those_of_finditer(text: str) -> None:
    for pattern, hint, stops in ((_CONTINUE_SENTENCE, CONTINUATION_WORDINGS, ".\n"), (_PATH_LINE, _PATH_HINT, "\n")):
        assert anchored_spans(pattern, text, hint, stops) == [m.span() for m in pattern.finditer(text)], pattern


def test_a_real_summary_tail() -> None:
    text = ("9. Optional Next Step: finish.\n\nIf you need specific details, read the full transcript at:\n"
            "/home/user/.claude/projects/p/s.jsonl\nPlease continue the conversation from where we left off without "
            "asking the user any further questions. Continue with the last task.")
    assert anchored_spans(_PATH_LINE, text, _PATH_HINT, "\n") == [m.span() for m in _PATH_LINE.finditer(text)] != []
    got = anchored_spans(_CONTINUE_SENTENCE, text, CONTINUATION_WORDINGS, ".\n")
    assert got == [m.span() for m in _CONTINUE_SENTENCE.finditer(text)] and len(got) == 1
    assert re.search("continue the conversation", text[got[0][0]:got[0][1]], re.I)
