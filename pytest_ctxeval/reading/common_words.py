"""Common English words (review 5, #5): a word on this list that a summary changes by one letter is
another word (``ship`` -> ``skip``, ``lock`` -> ``look``, ``public`` -> ``pubic``), so the change is
not a typo fixed. The list is ``common_words.txt`` beside this module: the words of four letters or
more of SCOWL size 35 (its header carries SCOWL's licence and notices), read once."""

from __future__ import annotations

import functools
from pathlib import Path

__all__ = ["is_common_word"]

_FILE = Path(__file__).with_name("common_words.txt")


@functools.lru_cache(maxsize=1)
def _words() -> frozenset[str]:
    lines = _FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(w for w in (line.strip() for line in lines) if w and not w.startswith("#"))


def is_common_word(word: str) -> bool:
    """Whether ``word`` (any case) is a common English word.

    >>> is_common_word("ship"), is_common_word("Public"), is_common_word("pythin")
    (True, True, False)
    """
    return word.lower() in _words()
