"""Full compaction (003:177-277, 004:456-545): summarise the whole context, replace it.

Steps, as in ``compactConversation``:

1. images and documents in what is summarised become ``[image]`` / ``[document]`` (003:97-104);
2. the compaction prompt (no-tools preamble, nine sections, optional extra instructions, trailer;
   004:477-483) is appended as a user message and sent with the summariser system prompt;
3. an empty reply is an error (004:512); otherwise ``<analysis>`` is stripped and ``<summary>``
   extracted (003:537-550);
4. the post-compact list is ``[boundary, summary message, kept messages, attachments]``
   (003:221-229); the summary message carries the continuation text and the transcript path
   (003:269-277, 003:575-583).

Prompt-too-long on the compaction request itself is the PTL tier's job (``engine/ptl.py``, issue 3);
until then it is a failure like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..config import EngineConfig
from ..errors import CtxEvalError, ModelError, PromptTooLongError
from ..ids import IdFactory
from ..llm import LLM
from ..messages import (
    AssistantMessage, AttachmentMessage, CompactBoundary, UserMessage, Usage, strip_media, to_api,
)
from ..summary import format_compact_summary
from ..tokens import estimate_messages
from .prompt import PromptSet

__all__ = ["CompactionResult", "CompactionFailed", "compact_conversation", "media_stripped"]


class CompactionFailed(CtxEvalError):
    """A compaction attempt produced nothing usable; counts toward the circuit breaker."""

    def __init__(self, reason: str, request: dict[str, Any] | None = None, raw_reply: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.request = request
        self.raw_reply = raw_reply


@dataclass
class CompactionResult:
    kind: str                              # "full" (later: "session_memory", "partial")
    trigger: str                           # "auto" | "manual"
    boundary: CompactBoundary
    summary_message: UserMessage
    summary: str                           # the extracted <summary> text
    raw_reply: str
    summarized: list[Any]                  # the context that was summarised
    kept: list[Any]
    attachments: list[AttachmentMessage]
    pre_tokens: int
    post_tokens: int
    request: dict[str, Any]
    usage: Usage
    custom_instructions: str | None = None
    ptl_retries: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def post_messages(self) -> list[Any]:
        return [self.boundary, self.summary_message, *self.kept, *self.attachments]


def media_stripped(messages: list[Any]) -> list[Any]:
    """Copies of ``messages`` with image/document blocks replaced by text markers (003:97-104)."""
    out = []
    for m in messages:
        if isinstance(m, (UserMessage, AssistantMessage)) and not isinstance(m.content, str):
            stripped = strip_media(m.content)
            out.append(m.model_copy(update={"content": stripped}) if stripped != m.content else m)
        else:
            out.append(m)
    return out


def compact_conversation(
    messages: list[Any],
    *,
    llm: LLM,
    config: EngineConfig,
    prompts: PromptSet,
    ids: IdFactory,
    now: datetime,
    transcript_path: str,
    pre_tokens: int,
    trigger: str = "auto",
    custom_instructions: str | None = None,
) -> CompactionResult:
    """Summarise ``messages`` and build the post-compact context; raise :class:`CompactionFailed`."""
    context = [m for m in messages if not isinstance(m, CompactBoundary)]
    if not context:
        raise CompactionFailed("nothing to compact: the context is empty")
    prompt = prompts.render_compact(custom_instructions)
    request_messages = to_api(media_stripped(context) + [UserMessage(uuid="compact-request", content=prompt)])
    request = {"system": prompts.system_compact, "messages": request_messages,
               "max_tokens": config.summary_output_reserve_tokens}
    try:
        reply = llm.complete(task="compact", system=request["system"], messages=request_messages,
                             max_tokens=request["max_tokens"], context_window=config.context_window)
    except PromptTooLongError as exc:
        raise CompactionFailed(f"compaction request is too long ({exc})", request) from None
    except ModelError as exc:
        raise CompactionFailed(str(exc), request) from None
    if not reply.text.strip():
        raise CompactionFailed("the summariser returned no text", request, reply.text)
    summary = format_compact_summary(reply.text)
    if not summary:
        raise CompactionFailed("the summariser's reply held no summary once <analysis> was removed",
                               request, reply.text)
    boundary = CompactBoundary(uuid=ids.uuid(), timestamp=now, trigger="manual" if trigger == "manual" else "auto",
                               pre_tokens=pre_tokens, logical_parent_uuid=context[-1].uuid)
    summary_message = UserMessage(
        uuid=ids.uuid(), timestamp=now, is_compact_summary=True,
        content=prompts.render_continuation(summary, transcript_path, auto=trigger == "auto"))
    result = CompactionResult(
        kind="full", trigger=boundary.trigger, boundary=boundary, summary_message=summary_message,
        summary=summary, raw_reply=reply.text, summarized=context, kept=[], attachments=[],
        pre_tokens=pre_tokens, post_tokens=0, request=request, usage=reply.usage,
        custom_instructions=custom_instructions)
    result.post_tokens = estimate_messages(result.post_messages, config)
    return result
