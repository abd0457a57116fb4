"""Which context-management tiers a real session's transcript shows acting, and which it cannot show.

A scenario run knows every tier that acted (the engine's events). A transcript only holds what
Claude Code wrote to the JSONL file, so the ``tiers`` column of ``ctxeval grade`` counts what the
file shows, and nothing is inferred:

* ``autocompact`` / ``compact``: a ``compact_boundary`` with ``compactMetadata.trigger`` ``auto`` /
  ``manual`` (this session's compactions; one copied in from a parent session is not counted). A
  session-memory compaction (000, tier 4) also writes a boundary: the file does not say which kind
  of automatic compaction it was, so it counts as ``autocompact``;
* ``budget``: a tool result replaced in the file by its ``<persisted-output>`` preview (the output was
  saved to disk: 004:121-125, 003's source truncation);
* ``microcompact``: a tool result written as ``[Old tool result content cleared]`` (000:109). Claude
  Code clears results only in the request it sends, not in the transcript (004:216), so a file
  normally holds none: 0 here does not mean microcompact never ran;
* ``dedupe``: a Read result written as the unchanged-file stub (003:91-94).

Never visible in a transcript, so never counted: PTL retry truncation (the retried request is not
written), cached microcompact's cache edits (a server-side edit), and the API context management
of 000 (a request field). :data:`NOT_IN_TRANSCRIPT` names them for the table's note.

>>> from pytest_ctxeval.core.messages import UserMessage, ToolResultBlock
>>> m = UserMessage(uuid="u", content=[ToolResultBlock(tool_use_id="t", content="<persisted-output>\\nOutput too large")])
>>> result_marks([m])
{'budget': 1}
"""

from __future__ import annotations

from typing import Any
from collections.abc import Iterable

from ..core.messages import ToolResultBlock, UserMessage, text_of

__all__ = ["observed_tiers", "result_marks", "NOT_IN_TRANSCRIPT"]

#: What a transcript cannot show (the note under ``ctxeval grade``'s table).
NOT_IN_TRANSCRIPT = ("microcompact clears (made in the request, not the file), PTL retries and cache edits leave no "
                     "record in one; a session-memory compaction counts as autocompact")

_PERSISTED = "<persisted-output>"


def result_marks(messages: Iterable[Any]) -> dict[str, int]:
    """Tool results the file holds replaced by a tier: ``budget`` (persisted-output preview),
    ``microcompact`` (the cleared marker), ``dedupe`` (the unchanged-file stub)."""
    # The engine's own markers (deferred: the engine imports this subpackage at load time).
    from ..engine.dedupe import FILE_UNCHANGED_STUB
    from ..engine.microcompact import CLEARED

    counts: dict[str, int] = {}
    for m in messages:
        if not isinstance(m, UserMessage) or isinstance(m.content, str):
            continue
        for b in m.content:
            if not isinstance(b, ToolResultBlock):
                continue
            text = (b.content if isinstance(b.content, str) else text_of(b.content)).lstrip()
            tier = ("budget" if text.startswith(_PERSISTED) else "microcompact" if text.startswith(CLEARED)
                    else "dedupe" if text.startswith(FILE_UNCHANGED_STUB[:40]) else None)
            if tier is not None:
                counts[tier] = counts.get(tier, 0) + 1
    return counts


def observed_tiers(transcript: Any) -> dict[str, int]:
    """Per tier, how many times the transcript shows it acting: this session's compaction
    boundaries by trigger, and the tool results a tier replaced (:func:`result_marks`)."""
    counts = result_marks(transcript.messages)
    for c in transcript.compactions:
        if c.inherited:
            continue
        tier = "compact" if c.trigger == "manual" else "autocompact"
        counts[tier] = counts.get(tier, 0) + 1
    return counts
