"""The reference summary's text pieces: list items, the sub-list headers it writes and reads
back, quoting and clipping. Shared by the reference model (:mod:`.reference`) and its reading of
other compactors' formats (:mod:`.peer_formats`), below both.
"""

from __future__ import annotations

import re

from ..reading.extract import message_fragments
from ..reading.summary import normalize_ws

__all__ = ["list_items", "sublist", "merge_texts", "unquote", "quote_message", "clip", "RULES_HEADER",
           "FAILED_HEADER", "FINDINGS_HEADER"]

_ITEM = re.compile(r"^- ", re.MULTILINE)


def list_items(body: str) -> list[str]:
    """Top-level ``- `` items of a section body (continuation lines joined)."""
    items: list[str] = []
    for chunk in _ITEM.split("\n" + body)[1:]:
        text = chunk.rstrip()
        items.append(text)
    return [i for i in items if i.strip()]


#: Sub-list headers the reference writes (and reads back from an earlier summary).
RULES_HEADER = "Rules from memory files (CLAUDE.md), still in force:"
FAILED_HEADER = "Approaches that did not work (do not retry them):"
FINDINGS_HEADER = "Findings along the way (the assistant's own words):"


def sublist(body: str, header: str) -> list[str]:
    """The ``- `` items right under the line ``header`` of a section body (continuation lines joined)."""
    lines = body.split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        if line.strip() != header:
            continue
        for item in lines[i + 1:]:
            if item.startswith("- "):
                out.append(item[2:].strip())
            elif item.startswith("  ") and out:
                out[-1] += " " + item.strip()
            else:
                break
    return out


def merge_texts(*lists: list[str]) -> list[str]:
    """The items of ``lists`` in order, each once (compared with whitespace normalised)."""
    seen: dict[str, str] = {}
    for items in lists:
        for item in items:
            seen.setdefault(normalize_ws(item), item)
    return list(seen.values())


def unquote(item: str) -> str:
    """An item without the double quotes around it."""
    text = item.strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        text = text[1:-1]
    return text


def quote_message(text: str) -> str:
    """A person's message as the summary quotes it (a long one as its two ends)."""
    frags = message_fragments(text)
    if len(frags) == 1:
        body = text.strip().replace("\n", "\n     ")
    else:
        body = f"{frags[0]} […] {frags[1]}"
    return f'"{body}"'


def clip(text: str, n: int) -> str:
    """``text`` with whitespace normalised, cut to ``n`` characters with an ellipsis."""
    text = normalize_ws(text)
    return text if len(text) <= n else text[: n - 1] + "…"
