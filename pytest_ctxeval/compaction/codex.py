"""``codex``: OpenAI Codex CLI's compaction (PEERS.md lines 14-27, codex-rs/core/src/compact.rs).

* **When** (PEERS 21): at 90 % of the context window (:data:`AUTO_COMPACT_FRACTION`).
* **Summary** (PEERS 15-16): a handoff summary — goal, progress and decisions, constraints, what
  remains, critical data (``prompts/codex_handoff.j2``, our wording) — prefixed with a note that
  another model wrote it (``prompts/codex_prefix.j2``).
* **New history** (PEERS 17-19): the real user messages, newest first, while they fit in 20,000
  tokens (:data:`USER_MESSAGES_TOKENS`, scaled); the first that does not fit is truncated with a
  marker and the older ones dropped; chronological order; then one user message with the summary.
  Assistant messages, tool calls and results, attachments and meta messages are dropped. An earlier
  summary is not a real user message (it is carried by the new summary, which read it).
* **Overflow** (PEERS 20-21): a compaction request that is too long is retried without the oldest
  history item and the call or output paired with it, one item at a time.
* **Pairing repair** (PEERS 22-23): :func:`repair_pairing` gives a call without output a synthetic
  "aborted" output and removes an output without a call.

Assumed where PEERS.md is silent: the truncation keeps the head and the tail of the message with
the marker in the middle; the token count is the engine's estimate (4 bytes per token); a request
left starting with an assistant message after a drop gets a one-line user marker first (the
Messages API requires a user turn first; Codex's Responses API does not).
"""

from __future__ import annotations

from typing import Any

from ..engine.compact import CompactionFailed
from ..errors import PromptTooLongError
from ..reading.extract import person_messages
from ..core.messages import (
    AssistantMessage, CompactBoundary, ToolResultBlock, UserMessage, Usage, tool_results, tool_uses,
)
from ..core.tokens import estimate_text
from .base import BaseCompactor, Compacted, CompactionState, option, render, scaled
from .formats import FormatSection, SummaryFormat

__all__ = ["Codex", "AUTO_COMPACT_FRACTION", "USER_MESSAGES_TOKENS", "select_user_messages", "drop_oldest_item",
           "repair_pairing", "ABORTED_OUTPUT", "TRUNCATION_MARKER", "OPENING"]

#: PEERS 21: "Auto-compact at 90 % of the context window by default."
AUTO_COMPACT_FRACTION = 0.9
#: PEERS 17-18: real user messages kept "while they fit in 20,000 tokens" (scaled).
USER_MESSAGES_TOKENS = 20_000
#: PEERS 18: the first message that does not fit "is truncated with a marker" (our wording).
TRUNCATION_MARKER = "\n[… {tokens} tokens of this message truncated at compaction …]\n"
#: PEERS 22: a call without output gets a synthetic "aborted" output.
ABORTED_OUTPUT = "aborted"
#: The first line of the note before the summary (prompts/codex_prefix.j2); the offline reference
#: model knows it (pytest_ctxeval.llm.reference.SUMMARY_OPENINGS), so it reads the message back as
#: an earlier summary, not as a request.
OPENING = "A previous model worked on this task and handed it over with the summary below."
#: Marker before a compaction request that the drops left opening with an assistant message.
DROPPED_MARKER = "[older conversation dropped to fit the compaction request]"

FORMAT = SummaryFormat("Codex handoff summary", (
    FormatSection("Goal", ("request",)),
    FormatSection("Progress and decisions", ("problem",)),
    FormatSection("Constraints", ("constraints",)),
    FormatSection("Remaining work", ("pending",)),
    FormatSection("Critical data", ("critical",)),
))


def truncate_middle(text: str, tokens: int, config: Any) -> str:
    """``text`` cut to about ``tokens`` tokens, head and tail kept around the marker."""
    if estimate_text(text, config) <= tokens:
        return text
    dropped = estimate_text(text, config) - tokens
    marker = TRUNCATION_MARKER.format(tokens=f"{dropped:,}")
    room = max(0, tokens * config.bytes_per_token - len(marker))
    head, tail = room // 2, room - room // 2
    return text[:head] + marker + (text[-tail:] if tail else "")


def select_user_messages(messages: list[Any], budget: int, config: Any) -> list[UserMessage]:
    """The real user messages of ``messages`` that Codex keeps (PEERS 17-19): newest first while
    they fit in ``budget`` tokens, the first that does not fit truncated, in chronological order.
    A kept message keeps its uuid (a truncated one is a copy with the cut text)."""
    people = person_messages(messages)
    chosen: list[UserMessage] = []
    remaining = budget
    for person in reversed(people):
        if remaining <= 0:
            break
        message = messages[person.index]
        cost = estimate_text(person.text, config)
        if cost <= remaining:
            chosen.append(message)
            remaining -= cost
        else:
            chosen.append(message.model_copy(update={"content": truncate_middle(person.text, remaining, config)}))
            break
    return list(reversed(chosen))


def drop_oldest_item(messages: list[Any]) -> list[Any] | None:
    """``messages`` without the oldest history item and the calls or outputs paired with it
    (PEERS 20-21); None when nothing is left to drop.

    >>> from pytest_ctxeval.core.messages import TextBlock, ToolUseBlock
    >>> call = AssistantMessage(uuid="a", content=[ToolUseBlock(id="t1", name="Read", input={})])
    >>> out = UserMessage(uuid="r", content=[ToolResultBlock(tool_use_id="t1", content="x")])
    >>> [m.uuid for m in drop_oldest_item([call, out, UserMessage(uuid="u", content="go on")])]
    ['u']
    """
    body = [m for m in messages if not isinstance(m, CompactBoundary)]
    if len(body) <= 1:
        return None
    first, rest = body[0], body[1:]
    paired = {u.id for u in tool_uses(first)} | {r.tool_use_id for r in tool_results(first)}
    if not paired:
        return rest
    out = []
    for m in rest:
        if isinstance(m, UserMessage) and tool_results(m):
            kept = [b for b in m.content if not (isinstance(b, ToolResultBlock) and b.tool_use_id in paired)]
            if not kept:
                continue
            m = m.model_copy(update={"content": kept})
        elif isinstance(m, AssistantMessage) and paired & {u.id for u in tool_uses(m)}:
            kept = [b for b in m.content if getattr(b, "id", None) not in paired]
            if not kept:
                continue
            m = m.model_copy(update={"content": kept})
        out.append(m)
    return out or None


def repair_pairing(messages: list[Any]) -> list[Any]:
    """Codex's normalisation after an edit of the history (PEERS 22-23): a call with no output
    right after it gets a synthetic ``aborted`` output; an output answering no call is removed."""
    out: list[Any] = []
    for i, m in enumerate(messages):
        if isinstance(m, UserMessage) and tool_results(m):
            prev = next((p for p in reversed(out) if not isinstance(p, CompactBoundary)), None)
            calls = {u.id for u in tool_uses(prev)} if prev is not None else set()
            kept = [b for b in m.content if not isinstance(b, ToolResultBlock) or b.tool_use_id in calls]
            if not kept:
                continue
            m = m.model_copy(update={"content": kept}) if len(kept) != len(m.content) else m
        out.append(m)
        uses = tool_uses(m)
        if uses:
            nxt = next((n for n in messages[i + 1:] if not isinstance(n, CompactBoundary)), None)
            answered = {r.tool_use_id for r in tool_results(nxt)} if nxt is not None else set()
            missing = [u for u in uses if u.id not in answered]
            if missing and nxt is not None:
                out.append(UserMessage(uuid=f"{m.uuid}-aborted", timestamp=m.timestamp, content=[
                    ToolResultBlock(tool_use_id=u.id, content=ABORTED_OUTPUT, is_error=True) for u in missing]))
    return out


class Codex(BaseCompactor):
    """Codex CLI: handoff summary + the newest real user messages within 20,000 tokens."""

    name = "codex"
    description = "Codex CLI: handoff summary + the newest user messages within 20K tokens, at 90 % of the window"
    summary_format = FORMAT

    def __init__(self, *, tiers: str = "all", fraction: float = AUTO_COMPACT_FRACTION,
                 user_tokens: int = USER_MESSAGES_TOKENS, **options: Any):
        super().__init__(tiers=tiers, **options)
        self.fraction = option(self.name, "fraction", fraction, float, low=0.01, high=1)
        self.user_tokens = option(self.name, "user_tokens", user_tokens, int, low=0)

    def should_compact(self, state: CompactionState) -> bool:
        return state.tokens >= self.fraction * state.config.context_window

    def compact(self, state: CompactionState) -> Compacted:
        prompt = render("codex_handoff.j2", instructions=state.instructions or "")
        system = render("codex_system.j2")
        context = [m for m in state.view if not isinstance(m, CompactBoundary)]
        dropped = 0
        while True:
            sent = context if not context or not isinstance(context[0], AssistantMessage) else [
                UserMessage(uuid="dropped-marker", timestamp=context[0].timestamp, content=DROPPED_MARKER), *context]
            try:
                text, usage, request = state.ask(sent, prompt, system=system)
                break
            except PromptTooLongError as exc:
                smaller = drop_oldest_item(context)
                if smaller is None:
                    raise CompactionFailed(f"compaction request too long ({exc}) with a single history item left",
                                           ptl_steps=[]) from None
                context, dropped = smaller, dropped + 1
        summary = text.strip()
        if not summary:
            raise CompactionFailed("the summariser returned no text", request, text)
        if dropped:
            state.emit("compact", "codex_dropped_items", tokens_before=state.tokens,
                       detail=f"the compaction request was too long: retried {dropped} time(s), one oldest history "
                              "item (with its paired call or output) fewer each time")
        budget = scaled(self.user_tokens, state.config)
        users = select_user_messages(state.messages, budget, state.config)
        message = state.summary_message(render("codex_prefix.j2", summary=summary))
        notes = [f"kept {len(users)} user message(s) within {budget:,} tokens"]
        return Compacted(messages=repair_pairing([*users, message]), summary=summary, raw_reply=text,
                         request=request, usage=usage if isinstance(usage, Usage) else Usage(), notes=notes)
