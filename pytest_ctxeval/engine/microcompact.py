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

The functions over a message list (:func:`compactable_results`, :func:`time_based_clear`,
:func:`cached_edits`) are the straightforward form: they re-scan the context on every request.
:class:`CandidateIndex` gives the same lists from an index kept as messages arrive, so a request
costs what arrived since the last one plus what it clears (the incremental pipeline).

:func:`context_management` builds the API-side config (``apiMicrocompact.ts``, 000:113-124):
``clear_tool_uses_20250919`` triggering above 180,000 input tokens and clearing down to the last
40,000, and ``clear_thinking_20251015``, in the shape the anthropic SDK's beta types accept.
"""

from __future__ import annotations

import functools

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from collections.abc import Callable

from pydantic import TypeAdapter

from ..core.config import NEVER_CLEARED_TOOLS, EngineConfig
from ..core.messages import AssistantMessage, ToolResultBlock, UserMessage
from ..core.tokens import estimate_block

__all__ = ["CLEARED", "MicrocompactState", "compactable_results", "time_based_due", "minutes_due", "time_based_clear",
           "apply_cleared", "cached_edits", "context_management", "freed_tokens", "message_freed_tokens",
           "cleared_marker_tokens", "CandidateIndex"]

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
        out += _compactable_in(message, allowed, tool_name)
    return out


def _compactable_in(message: Any, allowed: set[str] | frozenset[str],
                    tool_name: Callable[[str], str]) -> list[tuple[str, ToolResultBlock]]:
    if isinstance(message, UserMessage) and not isinstance(message.content, str):
        return [(block.tool_use_id, block) for block in message.content
                if isinstance(block, ToolResultBlock) and tool_name(block.tool_use_id) in allowed]
    return []


def _last_assistant_time(messages: list[Any]) -> datetime | None:
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            return message.timestamp
    return None


def time_based_due(messages: list[Any], now: datetime, config: EngineConfig) -> float | None:
    """Minutes since the last assistant message when they reach the threshold, else None."""
    return minutes_due(_last_assistant_time(messages), now, config)


def minutes_due(last_response: datetime | None, now: datetime, config: EngineConfig) -> float | None:
    """Minutes since ``last_response`` (the last assistant message's time) when they reach the
    threshold (``gapThresholdMinutes``, 004:197), else None."""
    if last_response is None:
        return None
    minutes = (now - last_response).total_seconds() / 60
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
    marker = cleared_marker_tokens(config)
    return sum(message_freed_tokens(message, ids, config, marker) for message in messages)


def cleared_marker_tokens(config: EngineConfig) -> int:
    """The estimate of a result whose content is :data:`CLEARED`."""
    return estimate_block(ToolResultBlock(tool_use_id="x", content=CLEARED), config)


def message_freed_tokens(message: Any, ids: set[str], config: EngineConfig, marker: int) -> int:
    """:func:`freed_tokens` of one message (``marker``: :func:`cleared_marker_tokens`)."""
    total = 0
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


class CandidateIndex:
    """The compactable results of a context, oldest first, kept as messages arrive: what
    :func:`time_based_clear` and :func:`cached_edits` compute by re-scanning, at the cost of what
    arrived and what is cleared.

    ``cleared_upto``: every candidate before it is in ``cleared_ids``; ``live_from``: every
    candidate before it is cleared or cache-deleted. The state sets only grow (decisions are
    frozen), so what lies before those marks can be skipped: the whole-context functions would
    filter it out. A candidate's tool is the one known when its message arrived; the pipeline
    rebuilds the index if a tool_use id already in the context is later given another tool.

    >>> from pytest_ctxeval.core.messages import ToolResultBlock, UserMessage
    >>> cfg, state = EngineConfig(microcompact_keep_recent=1), MicrocompactState()
    >>> msgs = [UserMessage(uuid=f"r{i}", content=[ToolResultBlock(tool_use_id=f"t{i}", content="x")]) for i in range(3)]
    >>> index = CandidateIndex(cfg, lambda _id: "Read")
    >>> for m in msgs:
    ...     index.add(m)
    >>> index.time_based_clear(state) == time_based_clear(msgs, cfg, MicrocompactState(), lambda _id: "Read")
    True
    """

    def __init__(self, config: EngineConfig, tool_name: Callable[[str], str]):
        self.config = config
        self.tool_name = tool_name
        self.allowed = frozenset(config.compactable_tools)
        self.ids: list[str] = []
        self.cleared_upto = 0
        self.live_from = 0

    def add(self, message: Any) -> None:
        """A message entered the context (in order)."""
        self.ids += [rid for rid, _ in _compactable_in(message, self.allowed, self.tool_name)]

    def time_based_clear(self, state: MicrocompactState) -> list[str]:
        """:func:`time_based_clear` over the context indexed so far."""
        keep = self.config.microcompact_keep_recent
        end = len(self.ids) - keep if keep else len(self.ids)
        new = [rid for rid in self.ids[self.cleared_upto:max(end, 0)] if rid not in state.cleared_ids]
        state.cleared_ids.update(new)
        self.cleared_upto = max(self.cleared_upto, end)
        return new

    def cached_edits(self, state: MicrocompactState) -> list[dict[str, str]]:
        """:func:`cached_edits` over the context indexed so far."""
        gone = (state.cache_deleted_ids, state.cleared_ids)
        start = self.live_from
        while start < len(self.ids) and any(self.ids[start] in s for s in gone):
            start += 1
        self.live_from = start
        live = [rid for rid in self.ids[start:] if rid not in gone[0] and rid not in gone[1]]
        if len(live) <= self.config.cache_edits_trigger_results:
            return []
        keep = self.config.cache_edits_keep_recent
        doomed = live[:-keep] if keep else live
        state.cache_deleted_ids.update(doomed)
        return [{"type": "delete", "tool_use_id": rid} for rid in doomed]


@functools.cache
def _cm_adapter() -> TypeAdapter[Any] | None:
    """The SDK's own type, so a config it would reject fails here (built on first use: importing
    the SDK costs about a second, which ``ctxeval --help`` or ``lint`` should not pay)."""
    try:
        from anthropic.types.beta import BetaContextManagementConfigParam
    except ImportError:  # pragma: no cover - an SDK without the beta type
        return None
    return TypeAdapter(BetaContextManagementConfigParam)


def context_management(config: EngineConfig) -> dict[str, Any]:
    """The ``context_management`` request field (beta ``context-management-2025-06-27``).

    "Keep the last 40K tokens" (000:120) is expressed as ``clear_at_least`` = trigger − target,
    so a prompt past 180,000 tokens is cut back to about 40,000 of tool results. Thinking blocks
    of all but the last assistant turn are cleared. ``exclude_tools`` follows the microcompact
    profile: every tool of :data:`~pytest_ctxeval.core.config.NEVER_CLEARED_TOOLS` that the profile
    does not make compactable (under ``read_only``, Edit and Write too), so the API never clears
    what the engine's own tier 3 keeps. Checked against the SDK's type.

    The clearing itself happens server-side (000:122) and is **not simulated**: a Claude Code run
    never sends a request that reaches the trigger. The trigger (180,000 on 200K, scaled like
    every budget) lies above the blocking limit (177,000): a request whose count reaches the
    blocking limit is compacted first or refused, and the count (usage anchor plus 4/3 of what
    came after) is never below the request's input tokens near the limit
    (``tests/engine/test_context_management.py`` checks it on every built-in scenario). The
    thinking edit is not simulated either: usage anchors count earlier turns' thinking blocks.
    """
    cfg = {"edits": [
        {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}},
        {"type": "clear_tool_uses_20250919",
         "trigger": {"type": "input_tokens", "value": config.api_clear_trigger_tokens},
         "clear_at_least": {"type": "input_tokens",
                            "value": max(0, config.api_clear_trigger_tokens - config.api_clear_keep_tokens)},
         "exclude_tools": [t for t in NEVER_CLEARED_TOOLS if t not in config.compactable_tools]},
    ]}
    adapter = _cm_adapter()
    if adapter is not None:
        adapter.validate_python(cfg)
    return cfg
