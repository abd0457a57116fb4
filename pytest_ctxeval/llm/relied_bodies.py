"""Tool results the relied-facts index (:class:`pytest_ctxeval.llm.relied._Index`) has read, kept
for the next index.

Each compaction's span holds the same test runs, greps, logs and fetched pages as the span before
it, and the reference model's index reads every line of every result: a result read once keeps
its rows (its statements lower-cased, and those that say something changed, with their values),
and the next index takes them as they are (``tests/llm/test_relied_index.py`` checks an index
built from remembered results holds exactly what reading every row gives). Results up to
:data:`BODY_CHARS` characters are kept, :data:`BODIES_CHARS` in all, the oldest dropped first;
a stored entry is never changed. Thread-safe (the offline model may answer several scenarios at
once).
"""

from __future__ import annotations

import threading

__all__ = ["remember_body", "remembered_body", "may_hold_any", "Rows"]

#: A result's rows: its statements lower-cased, and its changes ``(statement, lower-cased, values)``.
Rows = tuple[list[str], list[tuple[str, str, set[str]]]]

BODY_CHARS = 50_000
BODIES_CHARS = 2_000_000
_BODIES: dict[str, Rows] = {}
_size = [0]
_lock = threading.Lock()


def remembered_body(body: str) -> Rows | None:
    """The rows an earlier index read from the result ``body``, if it kept them."""
    return _BODIES.get(body)


def remember_body(body: str, rows: Rows) -> None:
    """Keep the rows of ``body`` (unless it is too long), dropping the oldest over the total."""
    if len(body) > BODY_CHARS:
        return
    with _lock:
        if body in _BODIES:
            return
        _BODIES[body] = rows
        _size[0] += len(body)
        while _size[0] > BODIES_CHARS:
            oldest = next(iter(_BODIES))
            del _BODIES[oldest]
            _size[0] -= len(oldest)


def may_hold_any(text: str, words: tuple[str, ...]) -> bool:
    r"""False only when no statement of any line of ``text`` can hold one of ``words`` (lower-case
    ASCII, each a single-space phrase): an ASCII text that, lower-cased and whitespace-normalised,
    holds none of them. Each line's statements (whitespace-normalised, lower-cased) lie inside that
    text, as line breaks are whitespace to ``str.split``; so one check of a whole tool result
    stands for a regex search on each of its lines (``_says_changed``).

    >>> may_hold_any("x = 1\nNO\n  longer 2", ("no longer",)), may_hold_any("x = 1\nknowing", ("now",))
    (True, True)
    >>> may_hold_any("x = 1\nit was\n2", ("now", "no longer"))
    False
    """
    if not text.isascii():
        return True
    low = " ".join(text.lower().split())
    return any(w in low for w in words)
