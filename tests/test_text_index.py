"""extract.TextIndex answers exactly as the per-needle scans it replaces (a section searched for every
error line once per line made grading quadratic in the session's length)."""

from __future__ import annotations

import random
import re

import pytest

from pytest_ctxeval.reading.extract import ItemIndex, contains_text, significant_tokens
from pytest_ctxeval.reading.summary import normalize_ws

SPLIT = re.compile(r"\n(?=\s{0,3}(?:[-*]|\d+[.)])\s)")
WORDS = "alpha beta gamma test_mod1 src/a.py FAILED error KeyError x1 x2 value tests/test_b.py::test_c 42".split()


def _scan_overlap(hay: str, tokens: list[str], share: float) -> bool:
    return any(sum(t in set(significant_tokens(item)) for t in tokens) / len(tokens) >= share
               for item in SPLIT.split(hay)) if tokens else False


@pytest.mark.parametrize("seed", range(5))
def test_index_agrees_with_the_scans_it_replaces(seed):
    rnd = random.Random(seed)
    for _ in range(600):
        hay = "\n".join(rnd.choice(["- ", "1. ", "", "  "]) + " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 6)))
                        for _ in range(rnd.randint(1, 7)))
        needle = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 5)))
        tokens = significant_tokens(needle)
        index = ItemIndex(hay, SPLIT)
        for share in (0.5, 0.8, 1.0):
            assert index.overlap(tokens, share) == _scan_overlap(hay, tokens, share), (hay, needle, share)
        assert index.contains(normalize_ws(needle.lower()), tokens) == contains_text(hay.lower(), needle.lower())


def test_a_needle_across_two_items_is_still_found_verbatim():
    hay = "- the build FAILED\n- because KeyError: 'x'"
    index = ItemIndex(hay, SPLIT)
    needle = "failed - because keyerror"
    assert index.contains(needle, significant_tokens(needle))
