"""``opencode``: sst/opencode's session compaction (PEERS.md lines 40-49, session/compaction.ts,
overflow.ts).

* **Prune** (PEERS 41-43, :func:`prune_candidates`): when a user turn starts (the agent loop has
  ended), walk back from the newest message, skipping the last 2 user turns
  (:data:`PROTECTED_TURNS`); completed tool outputs older than the newest 40,000 tokens of outputs
  (:data:`PRUNE_PROTECT_TOKENS`, scaled) are candidates; prune only if more than 20,000 tokens
  (:data:`PRUNE_MINIMUM_TOKENS`, scaled) would be freed. A pruned output reads ``[Old tool result
  content cleared]`` — the marker of the engine's microcompact, whose frozen clearing does it
  here. The ``skill`` tool is protected; the walk stops at an earlier summary or an output already
  cleared. opencode makes prune opt-in; here it is on unless ``prune=False``, since the issue
  describes the compactor with it.
* **When** (PEERS 44): the context overflows the usable window: ``window - max output -
  min(20,000, max output)`` (:func:`usable_tokens`; the engine's ``max_output_tokens``, scaled).
* **Tail** (PEERS 44-45, :func:`select_tail`): 25 % of usable, clamped to 2,000-15,000 tokens
  (scaled), in whole turns, newest first; the first turn that does not fit may be split at a
  message (never between a tool call and its result, which are one message in opencode).
* **Head** (PEERS 46-47, :func:`serialise`): written out as text lines (``[User]:``,
  ``[Assistant]:``, ``[Assistant tool call]:``, ``[Tool result]:`` cut at 2,000 characters, scaled)
  and sent as one user message, so no structured pair reaches the summariser.
* **Summary** (PEERS 47-49): Objective / Important Details / Work State (Completed, Active,
  Blocked) / Next Move / Relevant Files (``prompts/opencode_summary.j2``, our wording); the heading
  order is checked; a later compaction updates the earlier summary (it is sent as the anchor).

Assumed where PEERS.md is silent: a summary whose headings are wrong is asked for once more, then
the compaction fails; failed tool results are not pruned (opencode prunes completed ones); the tool
result cut is a budget like the engine's preview and scales; tokens are the engine's estimate
without its 4/3 margin (opencode's estimate has none).
"""

from __future__ import annotations

import json
from typing import Any

from ..engine.compact import CompactionFailed
from ..engine.microcompact import CLEARED
from ..core.messages import (
    AssistantMessage, AttachmentMessage, CompactBoundary, TextBlock, ToolUseBlock, UserMessage, person_text,
    result_text, text_of, tool_results, tool_uses,
)
from ..core.tokens import estimate_message, estimate_text
from .base import BaseCompactor, Compacted, CompactionState, option, render, scaled
from .formats import FormatSection, SummaryFormat

__all__ = ["Opencode", "PROTECTED_TURNS", "PRUNE_PROTECT_TOKENS", "PRUNE_MINIMUM_TOKENS", "PROTECTED_TOOLS",
           "OUTPUT_RESERVE_TOKENS", "TAIL_FRACTION", "TAIL_MIN_TOKENS", "TAIL_MAX_TOKENS", "RESULT_CHARS",
           "prune_candidates", "usable_tokens", "tail_budget", "select_tail", "serialise", "OPENING"]

#: PEERS 41: "skip the last 2 user turns".
PROTECTED_TURNS = 2
#: PEERS 41-42: "once completed tool outputs pass 40,000 tokens older ones become candidates" (scaled).
PRUNE_PROTECT_TOKENS = 40_000
#: PEERS 42: "prune only if more than 20,000 would be freed" (scaled).
PRUNE_MINIMUM_TOKENS = 20_000
#: PEERS 43: "the `skill` tool is protected" (compared case-insensitively: Claude Code's is ``Skill``).
PROTECTED_TOOLS = ("skill",)
#: PEERS 44: usable = context - max output - min(20,000, max output) (scaled).
OUTPUT_RESERVE_TOKENS = 20_000
#: PEERS 45: "a tail of 25 % of usable, clamped to 2,000-15,000 tokens" (scaled).
TAIL_FRACTION, TAIL_MIN_TOKENS, TAIL_MAX_TOKENS = 0.25, 2_000, 15_000
#: PEERS 46: "[Tool result]: cut at 2,000 chars" (scaled, like the engine's preview).
RESULT_CHARS = 2_000
#: The first line of the summary message; the offline reference model knows it
#: (pytest_ctxeval.llm.reference.SUMMARY_OPENINGS).
OPENING = "The older part of this session was compacted into the summary below; the messages after it are kept as they were."

FORMAT = SummaryFormat("opencode summary", (
    FormatSection("Objective", ("request",)),
    FormatSection("Important Details", ("critical",)),
    FormatSection("Work State", ("current", "pending")),
    FormatSection("Next Move", ("next",)),
    FormatSection("Relevant Files", ("files",)),
))


def tail_budget(config: Any) -> int:
    """PEERS 45: 25 % of the usable window, clamped to 2,000-15,000 tokens (both scaled)."""
    return min(max(round(TAIL_FRACTION * usable_tokens(config)), scaled(TAIL_MIN_TOKENS, config)),
               scaled(TAIL_MAX_TOKENS, config))


def usable_tokens(config: Any) -> int:
    """PEERS 44: ``window - max output - min(20,000, max output)``, the 20,000 scaled."""
    return config.context_window - config.max_output_tokens - min(scaled(OUTPUT_RESERVE_TOKENS, config),
                                                                   config.max_output_tokens)


def prune_candidates(messages: list[Any], view: list[Any], config: Any) -> list[str]:
    """The tool_use ids opencode's prune would clear (PEERS 41-43), or [] when it would free 20,000
    tokens (scaled) or less. Sizes are read on ``view`` (what the model sees)."""
    names = {u.id: u.name.lower() for m in messages for u in tool_uses(m)}
    protect, minimum = scaled(PRUNE_PROTECT_TOKENS, config), scaled(PRUNE_MINIMUM_TOKENS, config)
    turns = total = freed = 0
    ids: list[str] = []
    for message, shown in zip(reversed(messages), reversed(view)):
        if person_text(message) is not None:
            turns += 1
        if turns < PROTECTED_TURNS:
            continue
        if isinstance(message, UserMessage) and message.is_compact_summary:
            break  # an earlier summary: what is before it is gone already
        for block in reversed(tool_results(shown)):
            if block.is_error or names.get(block.tool_use_id, "") in PROTECTED_TOOLS:
                continue
            text = result_text(block)
            if text == CLEARED:
                return ids if freed > minimum else []  # already pruned from here back
            cost = estimate_text(text, config)
            total += cost
            if total > protect:
                freed += cost
                ids.append(block.tool_use_id)
    return ids if freed > minimum else []


def _turn_starts(messages: list[Any]) -> list[int]:
    starts = [i for i, m in enumerate(messages) if person_text(m) is not None]
    return ([0] if not starts or starts[0] != 0 else []) + starts


def _cut_ok(message: Any) -> bool:
    """A tail may start here: not at a tool result (its call would be left in the head)."""
    return not (isinstance(message, UserMessage) and tool_results(message)) and not isinstance(message, CompactBoundary)


def select_tail(messages: list[Any], budget: int, config: Any) -> int:
    """Index of the first message of the kept tail (PEERS 44-45): whole turns, newest first, while
    they fit in ``budget`` tokens; the first turn that does not fit is split at a message."""
    size = [estimate_message(m, config) for m in messages]
    start, used = len(messages), 0
    for turn in reversed(_turn_starts(messages)):
        cost = sum(size[turn:start])
        if used + cost <= budget:
            start, used = turn, used + cost
            continue
        end = start
        for i in range(end - 1, turn - 1, -1):  # split this turn at a message
            if used + sum(size[i:end]) > budget:
                break
            if _cut_ok(messages[i]):
                start = i
        break
    return start


def serialise(messages: list[Any], cut: int) -> str:
    """The head as text lines (PEERS 46); continuation lines are indented by two spaces."""
    lines: list[str] = []

    def add(tag: str, text: str) -> None:
        body = text.strip("\n").split("\n") or [""]
        lines.append(f"[{tag}]: {body[0]}")
        lines.extend("  " + line for line in body[1:])

    for m in messages:
        if isinstance(m, (CompactBoundary,)) or (isinstance(m, UserMessage) and m.is_compact_summary):
            continue
        if isinstance(m, AttachmentMessage):
            add("User", m.content)
        elif isinstance(m, UserMessage):
            for res in tool_results(m):
                text = result_text(res)
                add("Tool error" if res.is_error else "Tool result",
                    text if len(text) <= cut else text[:cut] + f" [… {len(text) - cut:,} more characters cut]")
            text = text_of(m.content)
            if text.strip():
                add("User", text)
        elif isinstance(m, AssistantMessage):
            for block in m.content:
                if isinstance(block, TextBlock) and block.text.strip():
                    add("Assistant", block.text)
                elif isinstance(block, ToolUseBlock):
                    add("Assistant tool call", f"{block.name} {json.dumps(block.input, ensure_ascii=False)}")
    return "\n".join(lines)


class Opencode(BaseCompactor):
    """opencode: prune, keep a 2K-15K-token tail, summarise the head as text in five sections."""

    name = "opencode"
    description = "opencode: prune old outputs, keep a 2K-15K-token tail, five-section summary of the head as text"
    summary_format = FORMAT

    def __init__(self, *, tiers: str = "all", prune: bool = True, **options: Any):
        super().__init__(tiers=tiers, **options)
        self.prune_enabled = option(self.name, "prune", prune, bool)

    def prune(self, state: CompactionState) -> list[str]:
        """Results to clear when a user turn starts (the agent loop ended before it)."""
        if not self.prune_enabled or not state.messages or person_text(state.messages[-1]) is None:
            return []
        return prune_candidates(state.messages, state.view, state.config)

    def should_compact(self, state: CompactionState) -> bool:
        return state.tokens > usable_tokens(state.config)

    def compact(self, state: CompactionState) -> Compacted | None:
        config = state.config
        budget = tail_budget(config)
        start = select_tail(state.messages, budget, config)
        head = [m for m in state.view[:start] if not isinstance(m, CompactBoundary)]
        previous = [text_of(m.content) for m in head if isinstance(m, UserMessage) and m.is_compact_summary]
        if not [m for m in head if not (isinstance(m, UserMessage) and m.is_compact_summary)]:
            return None  # everything fits in the tail: nothing to summarise
        anchor = previous[-1].removeprefix(OPENING).strip() if previous else ""
        prompt = render("opencode_summary.j2", conversation=serialise(head, scaled(RESULT_CHARS, config)),
                        previous=anchor, instructions=state.instructions or "")
        system = render("opencode_system.j2")
        for attempt in (1, 2):
            text, usage, request = state.ask([], prompt, system=system)
            summary = text.strip()
            found = [s.title for s in FORMAT.parse(summary).sections]
            if found == FORMAT.titles:
                break
            if attempt == 2:
                raise CompactionFailed(f"the summary's headings are not the five sections in order (found: "
                                       f"{', '.join(found) or 'none'}), twice", request, text)
            state.emit("compact", "opencode_headings_retry",
                       detail=f"summary headings {found or 'none'} are not {FORMAT.titles}; asking once more")
        message = state.summary_message(f"{OPENING}\n\n{summary}")
        return Compacted(messages=[message, *state.messages[start:]], summary=summary,
                         summarized=state.messages[:start], raw_reply=text, request=request, usage=usage,
                         notes=[f"tail of {len(state.messages) - start} message(s) within {budget:,} tokens"])
