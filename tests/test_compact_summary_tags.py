"""format_compact_summary: each tag is looked for on its own (reading.summary._format_by_search);
it keeps exactly what the regular expressions as written keep, for any arrangement of the tags
(closed, unclosed, nested, repeated, in any case)."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from pytest_ctxeval.reading import summary
from pytest_ctxeval.reading.summary import format_compact_summary

_PIECES = ["<analysis>", "</analysis>", "<ANALYSIS>", "</Analysis>", "<summary>", "</summary>", "<Summary>",
           "</SUMMARY>", "<analysis", "analysis>", "</", "<", ">", "summary", "x", "1. Primary Request:", " ", "\n",
           "\t", "é", "ſ", "K", "İ", "ı", "\u212a", "<ANALYSİS>", "</ANALYſIS>", "<ſummary>", "</SUMMARY>"]


@settings(deadline=None)  # examples: the profile's (conftest.py: 50 in the suite, 1,000 in .ci/soak)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join))
def test_the_tags_are_read_as_the_regular_expressions_read_them(raw: str) -> None:
    assert format_compact_summary(raw) == summary._format_by_regex(raw)


def test_examples() -> None:
    assert format_compact_summary("<analysis>a</analysis><analysis>b</ANALYSIS>\n<summary> s </summary>tail") == "s"
    assert format_compact_summary("<Summary>kept<analysis>cut off") == "kept"
    assert format_compact_summary("<summary>first</summary><summary>second</summary>") == "first"
    assert format_compact_summary("no tags at all  ") == "no tags at all"
    assert format_compact_summary("<summary>unclosed</SUMMARY") == "unclosed</SUMMARY"
