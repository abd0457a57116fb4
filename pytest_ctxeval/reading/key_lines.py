"""Whether a key line or a task is kept in a section of a summary: verbatim, or by most of its
significant tokens within one item of the section (a list entry with its continuation lines), every
short quoted value of it in that item too.

Shared by the rule graders that look for a line the session produced in one section:
``errors_preserved`` (an error's key line in section 4) and ``pending_tasks`` (a todo in section 7).
"""

from __future__ import annotations

import re

from .extract import significant_tokens, text_index
from .summary import normalize_ws

#: A key line or todo counts as present when this share of its significant tokens appears.
TOKEN_OVERLAP = 0.8

_PRESENT_ITEMS = re.compile(r"\n(?=\s{0,3}(?:[-*]|\d+[.)])\s)")

#: A short quoted value in a key line or todo (``KeyError: 'XK'``, ``exit status "2"``): often the only
#: thing that tells one error from another of its type, and too short to count as a significant token.
_QUOTED_VALUE = re.compile(r"(?<![\w])(['\"`])([^'\"`\n]{1,40})\1(?![\w])")


def section_items(text: str) -> list[str]:
    """A section split into items: a line starting a list entry, with its continuation lines."""
    return re.split(r"\n(?=\s{0,3}(?:[-*]|\d+[.)])\s)", text)


def present_in_section(needle: str, haystack: str) -> bool:
    """Verbatim (whitespace- and case-insensitive), or most of its significant tokens within one
    item of the section (a line, with its continuation lines), not scattered over the section.

    (The section is indexed once for all needles: text_index.) In the second case every short quoted
    value of the needle must be in that item too: "a KeyError for Kosovo" does not keep
    ``KeyError: 'XK'`` (its one significant token is the exception type)."""
    index = text_index(haystack, _PRESENT_ITEMS)
    tokens = significant_tokens(needle)
    if index.contains(normalize_ws(needle.lower()), tokens):
        return True
    if not index.overlap(tokens, TOKEN_OVERLAP):
        return False
    values = [normalize_ws(m.group(2)).lower() for m in _QUOTED_VALUE.finditer(needle) if m.group(2).strip()]
    if not values:
        return True
    for item in section_items(haystack):  # rare: an item holds the tokens; does it hold the quoted values too?
        have = set(significant_tokens(item))
        if sum(t in have for t in tokens) / len(tokens) >= TOKEN_OVERLAP and all(
                re.search(rf"(?<![\w]){re.escape(v)}(?![\w])", normalize_ws(item).lower()) for v in values):
            return True
    return False
