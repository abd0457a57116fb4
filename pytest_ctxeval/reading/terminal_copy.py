"""A compaction summary copied from Claude Code's terminal, and whether a text is Claude Code's summary.

People save the summary Claude Code shows after ``/compact`` (ctrl+o) by copying it from the
terminal, and grade that file with ``ctxeval grade SESSION --summary FILE``. The copy carries the
terminal's drawing around the summary message: a ``● Compact summary`` title line, a ``⎿`` marker
before the first line, every line indented, and after the summary one ``⎿  Read FILE (N lines)`` /
``⎿  Todo list read (N items)`` line per attachment Claude Code put in after it. Those are not the
summary's words: :func:`from_terminal` removes them (and nothing else), so section 9 does not end
with a file listing.

A text that opens with Claude Code's own preamble ("This session is being continued from a previous
conversation…", written by Claude Code, not by the model) is a Claude Code summary
(:func:`claude_code_summary`), held to what its version promised.
"""

from __future__ import annotations

import re

__all__ = ["from_terminal", "claude_code_summary", "PREAMBLE"]

#: The first words of every Claude Code summary message (2.0.x - 2.1.x), written by Claude Code itself.
PREAMBLE = "This session is being continued from a previous conversation"

_TITLE = re.compile(r"\A\s*[●⏺•]\s*Compact summary[^\n]*\n")
_FIRST_MARK = re.compile(r"\A(\s*)⎿[ \t]?")
_TRAILING_MARK = re.compile(r"(?:\n[ \t]*⎿[^\n]*)+\s*\Z")


def from_terminal(text: str) -> str:
    """``text`` without the terminal's drawing around a copied summary (the title line, the ``⎿``
    markers); any other text is returned unchanged.

    >>> copy = "● Compact summary\\n  ⎿ " + PREAMBLE + ". ...\\n    Summary:\\n  ⎿  Read a.py (3 lines)\\n"
    >>> from_terminal(copy) == "    " + PREAMBLE + ". ...\\n    Summary:"
    True
    >>> from_terminal("Summary:\\n1. x")
    'Summary:\\n1. x'
    """
    title = _TITLE.match(text)
    if title is None and not _FIRST_MARK.match(text):
        return text
    body = text[title.end():] if title else text
    mark = _FIRST_MARK.match(body)
    if mark is None or not body[mark.end():].startswith(PREAMBLE):
        return text
    body = mark.group(1) + "  " + body[mark.end():]
    return _TRAILING_MARK.sub("", body)


def claude_code_summary(text: str) -> bool:
    """Whether ``text`` (or its terminal copy) opens with Claude Code's summary preamble."""
    return from_terminal(text).lstrip().startswith(PREAMBLE)
