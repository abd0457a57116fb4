"""Where a compaction may cut a conversation: never across the last compact boundary, never
between a tool_use and its tool_result, never between assistant records that share a message id
(004:400-442, ``adjustIndexToPreserveAPIInvariants``). Used by session-memory compaction
(:mod:`.session_memory`) and partial compaction (:mod:`.compact`), below both.
"""

from __future__ import annotations

from typing import Any

from ..core.messages import AssistantMessage, CompactBoundary, ToolResultBlock, UserMessage, tool_uses

__all__ = ["adjust_index_to_preserve_invariants", "last_boundary_floor"]


def adjust_index_to_preserve_invariants(messages: list[Any], start: int, floor: int) -> int:
    """Move ``start`` back so the kept part ``messages[start:]`` splits no tool_use from its
    tool_result and no assistant message from a record sharing its message id; never below
    ``floor`` (``adjustIndexToPreserveAPIInvariants``)."""
    start = max(start, floor)
    while start > floor:
        first = messages[start] if start < len(messages) else None
        moved = False
        if isinstance(first, UserMessage) and not isinstance(first.content, str):
            wanted = {b.tool_use_id for b in first.content if isinstance(b, ToolResultBlock)}
            if wanted:
                for j in range(start - 1, floor - 1, -1):
                    if {u.id for u in tool_uses(messages[j])} & wanted:
                        start, moved = j, True
                        break
        if not moved and isinstance(first, AssistantMessage) and first.message_id:
            prev = messages[start - 1]
            if isinstance(prev, AssistantMessage) and prev.message_id == first.message_id:
                start, moved = start - 1, True
        if not moved:
            # A kept tool_result must not lose its call: check every kept result, not only the first.
            calls_before = {u.id for m in messages[floor:start] for u in tool_uses(m)}
            answered_later = {b.tool_use_id for m in messages[start:] if isinstance(m, UserMessage)
                              and not isinstance(m.content, str) for b in m.content if isinstance(b, ToolResultBlock)}
            orphan = calls_before & answered_later
            if orphan:
                for j in range(start - 1, floor - 1, -1):
                    if {u.id for u in tool_uses(messages[j])} & orphan:
                        start, moved = j, True
                        break
        if not moved:
            break
    return start


def last_boundary_floor(messages: list[Any]) -> int:
    """Index just after the last compact boundary (0 when there is none)."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], CompactBoundary):
            return i + 1
    return 0
