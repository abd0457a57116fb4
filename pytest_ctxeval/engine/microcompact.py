"""Tier 3: microcompact (000:104-124, 003:108-146, 003:473-532, 004:177-226).

Before every request, old results of *compactable* tools lose their content. Two paths:

* **time-based** (the cache is cold): when 60 or more minutes ("60+ minutes", 000:109;
  ``gapThresholdMinutes = 60``, 004:197) have passed since the last assistant message, the content
  of every compactable result but the 5 most recent (``keepRecent = 5``, 004:214) becomes
  ``[Old tool result content cleared]``. The prefix is being re-written anyway, so changing it
  costs nothing. Other tools (Task/Agent, TodoWrite, ...) are never touched.
* **cached** (the cache is warm; behind ``feature('CACHED_MICROCOMPACT')``, 003:137, so off unless
  ``cached_microcompact`` is set): local messages stay unchanged and the request carries
  ``cache_edits`` directives that delete old results server-side without breaking the cached
  prefix. The seeds say the thresholds are count-based (003:480; GrowthBook config, 000:107)
  without giving numbers: here, once more than ``cache_edits_trigger_results`` compactable
  results are live, the oldest are deleted down to ``cache_edits_keep_recent``. Deleted results
  stop counting: the usage the API would report excludes them.

The compactable set is ``EngineConfig.compactable_tools``. The seeds disagree: 000/004 list Read,
shell, Grep, Glob, WebSearch, WebFetch, Edit and Write (the default); 003 says write tools are
never cleared, because the model would lose track of its own changes (profile ``read_only``).

Clearing is frozen like the budget: once cleared, a result stays cleared in every later request
(the engine's context and transcript keep the original). Tokens freed are subtracted before the
auto-compact threshold check (``snipTokensFreed``, 003:526-532).

:func:`context_management` builds the API-side config (``apiMicrocompact.ts``, 000:113-124):
``clear_tool_uses_20250919`` triggering above 180,000 input tokens and clearing down to the last
40,000, and ``clear_thinking_20251015``, in the shape the anthropic SDK's beta types accept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable

from pydantic import TypeAdapter

from ..config import EngineConfig
from ..messages import AssistantMessage, ToolResultBlock, UserMessage
from ..tokens import estimate_block

__all__ = ["CLEARED", "MicrocompactState", "compactable_results", "time_based_due", "time_based_clear",
           "apply_cleared", "cached_edits", "context_management"]

#: 000:109, 004:214.
CLEARED = "[Old tool result content cleared]"


@dataclass
class MicrocompactState:
    cleared_ids: set[str] = field(default_factory=set)        # time-based, frozen
    cache_deleted_ids: set[str] = field(default_factory=set)  # cache_edits sent, frozen


def compactable_results(messages: list[Any], config: EngineConfig,
                        tool_name: Callable[[str], str]) -> list[tuple[str, ToolResultBlock]]:
    """``(tool_use_id, block)`` of every result of a compactable tool, oldest first."""
    allowed = set(config.compactable_tools)
    out = []
    for message in messages:
        if isinstance(message, UserMessage) and not isinstance(message.content, str):
            for block in message.content:
                if isinstance(block, ToolResultBlock) and tool_name(block.tool_use_id) in allowed:
                    out.append((block.tool_use_id, block))
    return out


def _last_assistant_time(messages: list[Any]) -> datetime | None:
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            return message.timestamp
    return None


def time_based_due(messages: list[Any], now: datetime, config: EngineConfig) -> float | None:
    """Minutes since the last assistant message when they reach the threshold, else None."""
    last = _last_assistant_time(messages)
    if last is None:
        return None
    minutes = (now - last).total_seconds() / 60
    return minutes if minutes >= config.microcompact_gap_minutes else None


def time_based_clear(messages: list[Any], config: EngineConfig, state: MicrocompactState,
                     tool_name: Callable[[str], str]) -> list[str]:
    """Clear all compactable results but the most recent ``keep_recent``; the ids newly cleared."""
    results = compactable_results(messages, config, tool_name)
    keep = config.microcompact_keep_recent
    old = results[:-keep] if keep else results
    new = [rid for rid, _ in old if rid not in state.cleared_ids]
    state.cleared_ids.update(new)
    return new


def apply_cleared(messages: list[Any], cleared: set[str]) -> list[Any]:
    """The view with cleared results' content replaced by :data:`CLEARED`."""
    if not cleared:
        return messages
    out = []
    for message in messages:
        if isinstance(message, UserMessage) and not isinstance(message.content, str) and any(
                isinstance(b, ToolResultBlock) and b.tool_use_id in cleared for b in message.content):
            content = [b.model_copy(update={"content": CLEARED})
                       if isinstance(b, ToolResultBlock) and b.tool_use_id in cleared else b
                       for b in message.content]
            out.append(message.model_copy(update={"content": content}))
        else:
            out.append(message)
    return out


def freed_tokens(messages: list[Any], ids: set[str], config: EngineConfig) -> int:
    """Tokens the results ``ids`` take in ``messages`` beyond the cleared marker."""
    if not ids:
        return 0
    marker = estimate_block(ToolResultBlock(tool_use_id="x", content=CLEARED), config)
    total = 0
    for message in messages:
        if isinstance(message, UserMessage) and not isinstance(message.content, str):
            for block in message.content:
                if isinstance(block, ToolResultBlock) and block.tool_use_id in ids:
                    total += max(0, estimate_block(block, config) - marker)
    return total


def cached_edits(messages: list[Any], config: EngineConfig, state: MicrocompactState,
                 tool_name: Callable[[str], str]) -> list[dict[str, str]]:
    """New ``cache_edits`` delete directives for this request (the warm-cache path)."""
    live = [rid for rid, _ in compactable_results(messages, config, tool_name)
            if rid not in state.cache_deleted_ids and rid not in state.cleared_ids]
    if len(live) <= config.cache_edits_trigger_results:
        return []
    keep = config.cache_edits_keep_recent
    doomed = live[:-keep] if keep else live
    state.cache_deleted_ids.update(doomed)
    return [{"type": "delete", "tool_use_id": rid} for rid in doomed]


try:  # the SDK's own type, so a config it would reject fails here
    from anthropic.types.beta import BetaContextManagementConfigParam
    _CM_ADAPTER: TypeAdapter[Any] | None = TypeAdapter(BetaContextManagementConfigParam)
except ImportError:  # pragma: no cover - an SDK without the beta type
    _CM_ADAPTER = None


def context_management(config: EngineConfig) -> dict[str, Any]:
    """The ``context_management`` request field (beta ``context-management-2025-06-27``).

    "Keep the last 40K tokens" (000:120) is expressed as ``clear_at_least`` = trigger − target,
    so a prompt past 180,000 tokens is cut back to about 40,000 of tool results. Thinking blocks
    of all but the last assistant turn are cleared.
    """
    cfg = {"edits": [
        {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}},
        {"type": "clear_tool_uses_20250919",
         "trigger": {"type": "input_tokens", "value": config.api_clear_trigger_tokens},
         "clear_at_least": {"type": "input_tokens",
                            "value": max(0, config.api_clear_trigger_tokens - config.api_clear_keep_tokens)},
         "exclude_tools": [t for t in ("Task", "Agent", "TodoWrite") if t not in config.compactable_tools]},
    ]}
    if _CM_ADAPTER is not None:
        _CM_ADAPTER.validate_python(cfg)
    return cfg
