"""Tier 4a: session memory and session-memory compaction (000:126-139, 004:318-442).

**Extraction.** After each model response (a post-sampling hook) the session notes may be updated
by a model call with the ten-section template (Session Title ... Worklog, 004:360-390):

* the first time when the context reaches 10,000 tokens (004:333);
* afterwards only when the context grew by at least 5,000 tokens since the last extraction AND
  (at least 3 tool calls since then OR no tool call in the last turn) (004:334-350: the token
  threshold is always required). The prose at 004:335 says "more than three tool calls in the last
  turn"; the source comment it quotes (004:339-349, ``hasMetToolCallThreshold``) and the issue
  counting calls since the last update are followed here: at least 3, since the last extraction.

Each extraction records ``last_summarized_message_id`` (the last message the notes cover).

**Compaction.** At the auto-compact threshold, session-memory compaction is tried first
(004:279-282, 004:400-442): the notes are the summary, and the messages after the last summarised
one are kept verbatim, the window expanding backwards until it holds at least 10,000 tokens and 5
messages with text blocks, stopping at 40,000 tokens. It never crosses the last compact boundary,
never splits a tool_use from its tool_result, and never splits assistant records that share a
message id (``calculateMessagesToKeepIndex`` / ``adjustIndexToPreserveAPIInvariants``). If the
result is still above the auto-compact threshold, full compaction runs instead. When the last
summarised message is no longer in the context (a resumed session), its index is taken as the
last message's (004:406).
"""

from __future__ import annotations

import math

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.config import EngineConfig
from ..core.messages import (
    AssistantMessage, CompactBoundary, TextBlock, UserMessage, Usage, to_api, tool_uses,
)
from ..core.tokens import estimate_message, estimate_messages
from .boundaries import adjust_index_to_preserve_invariants, last_boundary_floor
from .compact import CompactionResult
from .dedupe import media_stripped

__all__ = ["SessionMemoryState", "should_extract", "has_text_block", "calculate_keep_index",
           "session_memory_compact", "extraction_request"]


@dataclass
class SessionMemoryState:
    path: Path | None = None
    content: str | None = None
    last_summarized_message_id: str | None = None
    tokens_at_last_extraction: int = 0
    tool_calls_since: int = 0
    extractions: int = 0
    failures: list[str] = field(default_factory=list)

    def note_response(self, message: AssistantMessage) -> int:
        """Count the tool calls of a new response; return how many it made."""
        calls = len(tool_uses(message))
        self.tool_calls_since += calls
        return calls

    def record(self, content: str, last_id: str | None, tokens: int) -> None:
        self.content = content
        self.last_summarized_message_id = last_id
        self.tokens_at_last_extraction = tokens
        self.tool_calls_since = 0
        self.extractions += 1
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(content, encoding="utf-8")


def should_extract(state: SessionMemoryState, tokens: int, last_turn_tool_calls: int, config: EngineConfig) -> bool:
    """Whether the notes are due for an update (004:331-350).

    >>> cfg = EngineConfig()
    >>> should_extract(SessionMemoryState(), 9_999, 0, cfg), should_extract(SessionMemoryState(), 10_000, 0, cfg)
    (False, True)
    """
    if state.extractions == 0:
        return tokens >= config.sm_init_tokens
    grown = tokens - state.tokens_at_last_extraction >= config.sm_update_growth_tokens
    return grown and (state.tool_calls_since >= config.sm_update_tool_calls or last_turn_tool_calls == 0)


def has_text_block(message: Any) -> bool:
    """A message with at least one non-empty text block (004:430's 'text block' messages)."""
    if isinstance(message, UserMessage):
        if isinstance(message.content, str):
            return bool(message.content.strip())
        return any(isinstance(b, TextBlock) and b.text.strip() for b in message.content)
    if isinstance(message, AssistantMessage):
        return any(isinstance(b, TextBlock) and b.text.strip() for b in message.content)
    return False


def calculate_keep_index(messages: list[Any], last_summarized_index: int, config: EngineConfig,
                         floor: int = 0) -> int:
    """Where the kept part starts (``calculateMessagesToKeepIndex``, 004:408-436).

    Start after the last summarised message; expand backwards while the kept part has fewer than
    ``sm_keep_min_tokens`` tokens or fewer than ``sm_keep_min_text_messages`` messages with text,
    stopping once it reaches ``sm_keep_max_tokens``; never below ``floor`` (the message after the
    last compact boundary); then keep API invariants (which may pass the maximum to keep a pair).
    The kept part is measured as :func:`~pytest_ctxeval.core.tokens.estimate_messages` measures it, with
    the 4/3 margin of ``estimateMessageTokens`` (003:351-354), the estimate the seed says runs
    through the whole system.
    """
    start = min(max(last_summarized_index + 1, floor), len(messages))
    raw = sum(estimate_message(m, config) for m in messages[start:])
    texts = sum(has_text_block(m) for m in messages[start:])
    while start > floor:
        tokens = math.ceil(raw * config.estimate_margin)  # = estimate_messages(messages[start:])
        if tokens >= config.sm_keep_max_tokens:
            break
        if tokens >= config.sm_keep_min_tokens and texts >= config.sm_keep_min_text_messages:
            break
        start -= 1
        raw += estimate_message(messages[start], config)
        texts += has_text_block(messages[start])
    return adjust_index_to_preserve_invariants(messages, start, floor)


def extraction_request(view: list[Any], notes: str | None, prompt: str, *, cache: bool = False) -> list[dict[str, Any]]:
    """The extraction's messages: the conversation, then the update prompt. ``cache``: a
    ``cache_control`` breakpoint on the conversation's last block (prompt caching). The next
    extraction sends the same conversation grown by a few turns, so it reads this prefix (the API
    looks up to 20 blocks back from a breakpoint) and pays full price only for what is new; in
    Claude Code the extraction is a fork that shares the main loop's cache the same way."""
    messages = to_api(media_stripped([m for m in view if not isinstance(m, CompactBoundary)])
                      + [UserMessage(uuid="session-memory-request", content=prompt)])
    if cache and len(messages) >= 2 and messages[-2].get("role") == "assistant":  # the prompt is a message of its own
        from ..llm.prompt_cache import mark_last_block

        messages = [*mark_last_block(messages[:-1]), messages[-1]]
    return messages


def session_memory_compact(
    context: list[Any],
    view: list[Any],
    state: SessionMemoryState,
    *,
    config: EngineConfig,
    prompts: Any,
    ids: Any,
    now: Any,
    transcript_path: str,
    pre_tokens: int,
    attachments: list[Any] | None = None,
    trigger: str = "auto",
) -> Any:
    """Session-memory compaction (``trySessionMemoryCompaction``): the notes become the summary and
    the messages from the keep index on are kept verbatim. None when there are no notes yet.

    The caller falls back to full compaction when the result is still above the threshold.
    """

    if not state.content:
        return None
    idx = next((i for i, m in enumerate(view) if m.uuid == state.last_summarized_message_id), len(view) - 1)
    floor = last_boundary_floor(view)
    start = calculate_keep_index(view, idx, config, floor)
    summarized = [m for m in view[:start] if not isinstance(m, CompactBoundary)]
    kept = [m for m in context[start:] if not isinstance(m, CompactBoundary)]
    if not summarized:
        return None  # nothing older than the keep window: the notes would replace nothing
    boundary = CompactBoundary(uuid=ids.uuid(), timestamp=now, trigger="manual" if trigger == "manual" else "auto",
                               pre_tokens=pre_tokens, logical_parent_uuid=view[-1].uuid)
    summary_message = UserMessage(uuid=ids.uuid(), timestamp=now, is_compact_summary=True,
                                  content=prompts.render_continuation(state.content, transcript_path,
                                                                      auto=boundary.trigger == "auto"))
    result = CompactionResult(
        kind="session_memory", trigger=boundary.trigger, boundary=boundary, summary_message=summary_message,
        summary=state.content, raw_reply=state.content, summarized=summarized, kept=kept,
        attachments=list(attachments or []), pre_tokens=pre_tokens, post_tokens=0, request=None, usage=Usage())
    result.post_tokens = estimate_messages(result.post_messages, config)
    return result
