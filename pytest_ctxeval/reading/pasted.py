"""Whether a long message is the person's own prose or mostly pasted content.

The verbatim policy keeps a long message (over
:data:`pytest_ctxeval.reading.extract.LONG_MESSAGE_CHARS`) by its first and last characters only when
what lies between them was pasted: machine output, code, or a document with Markdown structure (a
log, a stack trace, another assistant's answer). Prose the person typed (a detailed request, a spec
of requirements) is theirs in full: a rule in its middle ("IMPORTANT: never write to /mnt/shared")
is as binding as its first sentence.
"""

from __future__ import annotations

import re

from .pasted_chat import chat_start
from .verbatim import Haystack, find, machine_line

__all__ = ["TYPED_PROSE_SHARE", "prose_share", "mostly_prose", "prose_kept"]

#: A long message is the person's prose when at least this share of its characters are in lines of
#: prose. The real corpus's long messages (pasted logs and builds 0.1-0.37, a pasted assistant's
#: answer after a typed lead 0.53, Claude Code's compaction prompt 0.56) are all below it; a typed
#: spec is 1.0.
TYPED_PROSE_SHARE = 0.8

#: Lines of a pasted document's structure: headings, table rows, block quotes, a list item or line
#: that opens in bold, rules, and code fences.
_DOCUMENT_LINE = re.compile(r"^\s{0,3}#{1,6}\s|^\s*\|.*\|\s*$|^\s*>|^\s*(?:[-*+•]|\d+[.)])\s+\*\*|^\s*\*\*[^*\n]+\*\*|"
                            r"^\s*[-=*_]{3,}\s*$")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
#: A line this long is prose when most of its words are words: the machine-line patterns look for a
#: token anywhere in a line ("TypeError", "main.py:12"), which a typed paragraph may mention.
_LONG_LINE = 200


def _prose_lines(text: str) -> list[tuple[str, bool]]:
    """Each non-blank line of ``text``, stripped, and whether it is a line of prose: mostly words of
    letters, not machine output or code (:func:`pytest_ctxeval.reading.verbatim.machine_line`, for a
    line under 200 characters), not a document's structure, not inside a code fence."""
    out = []
    fenced = False
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if _FENCE.match(line):
            fenced = not fenced
            out.append((stripped, False))
            continue
        prose = not fenced and not _DOCUMENT_LINE.search(line) and _prose_words(stripped) and \
            not (len(stripped) < _LONG_LINE and machine_line(line))
        out.append((stripped, prose))
    return out


def prose_share(text: str) -> float:
    """The share of ``text``'s characters (non-blank lines, stripped) in lines of prose."""
    lines = _prose_lines(text)
    total = sum(len(line) for line, _ in lines)
    return sum(len(line) for line, prose in lines if prose) / total if total else 0.0


def prose_kept(text: str, hay: Haystack) -> bool:
    """A message of prose with some pasted lines in it (a log or snippet inside a long request) is
    kept when every line of its prose is verbatim in ``hay``: the pasted lines may be summarised."""
    lines = _prose_lines(text)
    return any(not prose for _, prose in lines) and all(find(line, hay) for line, prose in lines if prose)


def _prose_words(line: str) -> bool:
    """Most of the line's words are words of letters (a "word" of over 40 ASCII letters is a hash or
    a blob), or most of its characters are letters of a script written without spaces (Chinese,
    Japanese: a typed sentence is one run of them)."""
    words = line.split()
    if sum(w.strip(".,;:!?()'\"").isalpha() and len(w) <= 40 for w in words) >= 0.6 * len(words):
        return True
    return sum(ch.isalpha() and not ch.isascii() for ch in line) >= 0.6 * len(line)


def mostly_prose(text: str) -> bool:
    """Whether ``text`` is the person's own prose (:data:`TYPED_PROSE_SHARE`), not mostly pasted.

    >>> mostly_prose("I want an export feature. " * 100)
    True
    >>> mostly_prose("it fails:\\n" + "\\n".join(f"  at f{i} (app.js:{i}:7)" for i in range(80)))
    False
    >>> mostly_prose("请把导出功能加到报表页面，不要写到共享目录。" * 100)
    True
    """
    if (chat := chat_start(text)) > 0 and text[:chat].strip():
        return False   # a conversation pasted after a typed lead is a paste (reading/pasted_chat.py)
    return prose_share(text) >= TYPED_PROSE_SHARE
