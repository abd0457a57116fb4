"""Tool results the relied-facts reader (:mod:`pytest_ctxeval.llm.relied`) has read, kept for
the next summary.

Each compaction's span holds the same test runs, greps, logs and fetched pages as the span before
it, and the reference model reads every line of every result twice: the statement index
(``relied._Index``: its statements lower-cased, and those that say something changed, with their
values) and the fact lines (``relied.tool_facts``). What one summary read from a result is kept
and the next takes it as it is (``tests/llm/test_relied_index.py`` checks an index built from kept
results holds exactly what reading every row gives; ``tests/test_long_session_fast_paths.py``
that the facts are those of reading every line). Results up to :data:`BODY_CHARS` characters are
kept, :data:`BODIES_CHARS` in all for each of the two, the oldest dropped first; a stored entry is
never changed. Thread-safe (the offline model may answer several scenarios at once).
"""

from __future__ import annotations

import functools
import re
import threading
from typing import Any
from collections.abc import Callable

__all__ = ["remember_body", "remembered_body", "remember_facts", "remembered_facts", "may_hold_any",
           "may_hold_any_normalised",
           "read_plain_lines", "Rows"]

#: A result's rows: its statements lower-cased, and its changes ``(statement, lower-cased, values)``.
Rows = tuple[list[str], list[tuple[str, str, set[str]]]]

BODY_CHARS = 50_000
BODIES_CHARS = 2_000_000


class _Kept:
    """Values by result text, bounded by the texts' total length (oldest dropped first)."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.size = 0
        self.lock = threading.Lock()

    def put(self, body: str, value: Any) -> None:
        if len(body) > BODY_CHARS:
            return
        with self.lock:
            if body in self.values:
                return
            self.values[body] = value
            self.size += len(body)
            while self.size > BODIES_CHARS:
                oldest = next(iter(self.values))
                del self.values[oldest]
                self.size -= len(oldest)


_ROWS = _Kept()
_FACTS = _Kept()


def remembered_body(body: str) -> Rows | None:
    """The rows an earlier index read from the result ``body``, if they were kept."""
    return _ROWS.values.get(body)


def remember_body(body: str, rows: Rows) -> None:
    """Keep the index rows of ``body`` (unless it is too long), dropping the oldest over the total."""
    _ROWS.put(body, rows)


def remembered_facts(body: str) -> list[tuple[str, str]] | None:
    """The fact lines an earlier summary read from the result ``body`` (``(fact, normalised)``)."""
    return _FACTS.values.get(body)


def remember_facts(body: str, facts: list[tuple[str, str]]) -> None:
    """Keep the fact lines of ``body`` (unless it is too long), dropping the oldest over the total."""
    _FACTS.put(body, facts)


def may_hold_any(text: str, words: tuple[str, ...]) -> bool:
    r"""False only when no statement of any line of ``text`` can hold one of ``words`` (lower-case
    ASCII, each a single-space phrase): an ASCII text that, lower-cased and whitespace-normalised,
    holds none of them. Each line's statements (whitespace-normalised, lower-cased) lie inside that
    text, as line breaks are whitespace to ``str.split``; so one check of a whole tool result
    stands for a regex search on each of its lines (``_says_changed``).

    The normalised text is not built (:func:`may_hold_any_normalised` does; tests check both
    agree): a word without a space is in it exactly when it is in the lower-cased text (it lies
    within one run of non-whitespace), a phrase exactly when its words are, separated by a run
    of whitespace (``str.split``'s, which is the regex's ``\s``).

    >>> may_hold_any("x = 1\nNO\n  longer 2", ("no longer",)), may_hold_any("x = 1\nknowing", ("now",))
    (True, True)
    >>> may_hold_any("x = 1\nit was\n2", ("now", "no longer"))
    False
    """
    if not text.isascii():
        return True
    low = text.lower()
    singles, phrases = _word_search(words)
    if any(w in low for w in singles):
        return True
    return any(all(part in low for part in parts) and search(low) for parts, search in phrases)


def may_hold_any_normalised(text: str, words: tuple[str, ...]) -> bool:
    """:func:`may_hold_any` by its definition: the whole text normalised, each word looked for."""
    if not text.isascii():
        return True
    low = " ".join(text.lower().split())
    return any(w in low for w in words)


@functools.lru_cache(maxsize=16)
def _word_search(words: tuple[str, ...]) -> tuple[tuple[str, ...], list[tuple[list[str], Callable[[str], Any]]]]:
    """``words`` without whitespace, and for each phrase its words and a search for them separated
    by whitespace. A phrase that is not normalised (a space at an end, two in a row, other
    whitespace; never one the index gives) is looked for as the definition does."""
    singles = tuple(w for w in words if w and not any(c.isspace() for c in w))
    phrases: list[tuple[list[str], Callable[[str], Any]]] = []
    for w in words:
        if w in singles:
            continue
        parts = w.split(" ")
        if w and all(parts) and " ".join(w.split()) == w:
            phrases.append((parts, re.compile(r"\s+".join(map(re.escape, parts))).search))
        else:
            phrases.append(([], functools.partial(_in_normalised, w)))
    return singles, phrases


def _in_normalised(word: str, low: str) -> bool:
    """The definition's check of one word: in the text, whitespace-normalised."""
    return word in " ".join(low.split())


#: Where a line may hold a second sentence: ``.``, ``!`` or ``?`` and whitespace within the line
#: (an ASCII line break ends the line; space, tab and ``\x1f`` are the other whitespace).
_SENTENCE_BREAK = re.compile(r"[.!?][ \t\x1f]")


def read_plain_lines(body: str, at: int, split: dict[str, Any], first: dict[str, int],
                     split_statements: Callable[[str], list[str]]) -> list[str]:
    """The index rows (statements lower-cased) of the lines of ``body``, a result none of whose
    lines says a change (:func:`may_hold_any`), from row ``at`` on: what the index's ``read`` gives
    line by line, inline. ``split`` (a line's rows and changes) and ``first`` (a statement's first
    row) are the index's, updated as ``read`` updates them; ``split_statements`` is
    ``relied._split_statements``, whose fast case (one statement: the line whitespace-normalised)
    is inlined (a line never holds ``\\n``)."""
    if body.isascii() and not _SENTENCE_BREAK.search(body):
        # No line holds two sentences: each line's row is the line, whitespace-normalised and
        # lower-cased (ASCII: lower-casing first changes neither its words nor its line breaks).
        # ``split`` is only a cache of what a line gives; ``first`` gets a row for every statement
        # (a statement already there keeps its earlier row, as when its line was cached).
        plain = [flat for line in body.lower().splitlines() if (flat := " ".join(line.split()))]
        setdefault = first.setdefault
        for n, low in enumerate(plain, at):
            setdefault(low, n)
        return plain
    rows: list[str] = []
    for line in body.splitlines():
        got = split.get(line)
        if got is None:
            flat = " ".join(line.split())
            if not flat:
                lows = []
            elif ". " in flat or "! " in flat or "? " in flat:
                lows = [s.lower() for s in split_statements(line)]
            else:
                lows = [flat.lower()]
            got = split[line] = (lows, [])
            row = at + len(rows)
            for n, low in enumerate(lows):
                first.setdefault(low, row + n)
        rows += got[0]
    return rows
