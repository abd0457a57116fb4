"""Full and partial compaction (003:177-277, 004:456-612): summarise, replace, re-inject.

Full compaction, as in ``compactConversation``:

1. images and documents in what is summarised become ``[image]`` / ``[document]`` (003:97-104);
2. the compaction prompt (no-tools preamble, nine sections, optional extra instructions, trailer;
   004:477-483) is appended as a user message and sent with the summariser system prompt;
3. ``prompt is too long`` on that request takes the PTL path (tier 5, :mod:`.ptl`): drop the oldest
   API rounds and retry, at most 3 times;
4. an empty reply is an error (004:512); otherwise ``<analysis>`` is stripped and ``<summary>``
   extracted (003:537-550);
5. the post-compact list is ``[boundary, summary message, kept messages, attachments, hook
   results]`` (003:221-229, 004:438-444, 004:536-541); the summary message carries the
   continuation text and the transcript path (003:269-277, 003:612-616); attachments re-inject up
   to 5 recently read files (5,000 tokens each, header included, 50,000 in all), invoked skills
   (5,000 each, header included, 25,000 in all), the current plan, and the tool and MCP
   instruction deltas of a session that declares tools or MCP servers (003:590-612, 000:154-160);
   hook results are the SessionStart hooks' outputs (003:227, 004:530, :mod:`.hooks`).

Partial compaction (004:563-612, the rewind menu's "summarize from here") summarises one side of a
pivot and keeps the other: ``up_to`` summarises the older messages and keeps the newer ones
(``[boundary, summary, newer...]``); ``from`` summarises the newer ones and keeps the older
(``[older..., boundary, summary, attachments, hook results]`` — the older prefix stays first so
the prompt cache survives, 003:337; seed 004:571-575 lists ``[boundary][summary][messagesToKeep]``
for both directions: a documented deviation).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any
from collections.abc import Collection, Sequence

from ..llm.whole import whole_reply
from ..core.config import EngineConfig
from ..errors import CtxEvalError, ModelError, PromptTooLongError
from ..core.ids import IdFactory
from ..core.messages import AttachmentMessage, CompactBoundary, UserMessage, Usage, to_api
from ..reading.summary import format_compact_summary
from ..core.tokens import estimate_messages, estimate_text
from .boundaries import adjust_index_to_preserve_invariants, last_boundary_floor
from .dedupe import ReadRecord, media_stripped
from .prompt import PromptSet
from .ptl import truncate_head_for_ptl_retry

if TYPE_CHECKING:  # the SDK-backed client: its module loads the anthropic SDK
    from ..llm import LLM

__all__ = ["CompactionResult", "CompactionFailed", "compact_conversation", "partial_compact",
           "summarise", "build_attachments", "tool_deltas", "fit_attachment", "truncate_to_tokens", "PtlStep"]


class CompactionFailed(CtxEvalError):
    """A compaction attempt produced nothing usable; counts toward the circuit breaker."""

    def __init__(self, reason: str, request: dict[str, Any] | None = None, raw_reply: str | None = None,
                 ptl_steps: list[PtlStep] | None = None):
        super().__init__(reason)
        self.reason = reason
        self.request = request
        self.raw_reply = raw_reply
        self.ptl_steps = ptl_steps or []


@dataclass(frozen=True)
class PtlStep:
    """One prompt-too-long retry: the gap the API reported and the API rounds dropped."""

    gap: int | None
    dropped_groups: int
    tokens_before: int
    tokens_after: int


@dataclass
class CompactionResult:
    kind: str                              # "full" | "session_memory" | "partial" | "transcript" (recorded)
    trigger: str                           # "auto" | "manual"
    boundary: CompactBoundary
    summary_message: UserMessage
    summary: str                           # the extracted <summary> text (or the session notes)
    raw_reply: str
    summarized: list[Any]                  # the context that was summarised (original content)
    kept: list[Any]
    attachments: list[AttachmentMessage]
    pre_tokens: int
    post_tokens: int
    request: dict[str, Any] | None
    usage: Usage
    custom_instructions: str | None = None
    ptl_steps: list[PtlStep] = field(default_factory=list)
    kept_before: bool = False              # partial "from": kept messages come before the boundary
    sent: list[Any] = field(default_factory=list)  # what the summariser was shown (budget/microcompact view)
    notes: list[str] = field(default_factory=list)
    #: An assistant message whose tool calls were still running when the compaction ran: not
    #: summarised, kept last so the results that arrive next answer it (see ContextManager.compact).
    in_flight: list[Any] = field(default_factory=list)
    #: The SessionStart hooks' results, after the attachments (003:227, 004:571-575).
    hook_results: list[AttachmentMessage] = field(default_factory=list)

    @property
    def ptl_retries(self) -> int:
        return len(self.ptl_steps)

    @property
    def post_messages(self) -> list[Any]:
        if self.kept_before:
            return [*self.kept, self.boundary, self.summary_message, *self.attachments, *self.hook_results,
                    *self.in_flight]
        return [self.boundary, self.summary_message, *self.kept, *self.attachments, *self.hook_results,
                *self.in_flight]


def summarise(
    messages: list[Any], prompt: str, *, llm: LLM, config: EngineConfig, system: str, ids: IdFactory,
    task: str = "compact",
    cache: bool = False,
) -> tuple[str, Usage, dict[str, Any], list[PtlStep]]:
    """Send ``messages`` + ``prompt`` to the summariser, taking the PTL path when the request is
    too long. Returns the reply text, its usage, the last request and the PTL steps taken.
    ``cache``: a ``cache_control`` breakpoint on the conversation's last block, before the prompt
    (prompt caching: another attempt over the same conversation is expected to read it)."""
    context = [m for m in messages if not isinstance(m, CompactBoundary)]
    if not context:
        raise CompactionFailed("nothing to compact: the context is empty")
    steps: list[PtlStep] = []
    while True:
        request_messages = to_api(media_stripped(context) + [UserMessage(uuid="compact-request", content=prompt)])
        if cache:
            request_messages = _mark_conversation_end(request_messages)
        request = {"system": system, "messages": request_messages, "max_tokens": config.summary_request_max_tokens}
        try:
            # a whole reply or an error: a summary cut at max_tokens is never graded (TruncatedReply)
            reply = whole_reply(llm)(task=task, system=system, messages=request_messages,
                                 max_tokens=request["max_tokens"], context_window=config.context_window)
            return reply.text, reply.usage, request, steps
        except PromptTooLongError as exc:
            if len(steps) >= config.max_ptl_retries:
                raise CompactionFailed(f"compaction request still too long after {len(steps)} PTL "
                                       f"retries ({exc})", request, ptl_steps=steps) from None
            before = estimate_messages(context, config)
            cut = truncate_head_for_ptl_retry(context, exc.gap, config, marker_uuid=ids.uuid())
            if cut is None:
                raise CompactionFailed(f"compaction request is too long ({exc}) and a single API round "
                                       "is left to drop", request, ptl_steps=steps) from None
            context, dropped = cut
            steps.append(PtlStep(exc.gap, dropped, before, estimate_messages(context, config)))
        except ModelError as exc:
            raise CompactionFailed(str(exc), request, ptl_steps=steps) from None


def _mark_conversation_end(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` (a conversation, then the compaction prompt: a message of its own, or the last
    block of the conversation's last user message) with a breakpoint on the conversation's last
    block. The inputs are not changed."""
    from ..llm.prompt_cache import mark_last_block

    if len(messages) >= 2 and messages[-2].get("role") == "assistant":  # the prompt is its own message
        return [*mark_last_block(messages[:-1]), messages[-1]]
    last = messages[-1] if messages else {}
    content = last.get("content")
    if not isinstance(content, list) or len(content) < 2:
        return messages  # the prompt alone: no conversation to mark
    head = mark_last_block([{**last, "content": content[:-1]}])[0]
    return [*messages[:-1], {**last, "content": [*head["content"], content[-1]]}]


def _finish(reply_text: str, request: dict[str, Any], steps: list[PtlStep]) -> str:
    if not reply_text.strip():
        raise CompactionFailed("the summariser returned no text", request, reply_text, steps)
    summary = format_compact_summary(reply_text)
    if not summary:
        raise CompactionFailed("the summariser's reply held no summary once <analysis> was removed",
                               request, reply_text, steps)
    return summary


def truncate_to_tokens(text: str, tokens: int, config: EngineConfig) -> str:
    """``text`` cut so its estimate is at most ``tokens``, with a marker when cut."""
    if estimate_text(text, config) <= tokens:
        return text
    marker = f"\n[... truncated to {tokens} tokens for the post-compaction context]"
    cut = max(0, tokens * config.bytes_per_token - len(marker))
    while cut > 0 and estimate_text(text[:cut] + marker, config) > tokens:
        cut = int(cut * 0.9)
    return text[:cut] + marker


def fit_attachment(header: str, body: str, tokens: int, config: EngineConfig) -> str:
    """``header`` and ``body`` as one attachment text of at most ``tokens`` (the cap counts the
    header too, 000:156-158: "5K per file", "5K per skill"); the body's end is cut, with a marker."""
    return truncate_to_tokens(f"{header}\n{body}", tokens, config)


def build_attachments(
    *, files: list[ReadRecord], skills: list[tuple[str, str]], plan: str | None, config: EngineConfig,
    ids: IdFactory, now: datetime, exclude_paths: Collection[str] = frozenset(),
    tools: Sequence[str] = (), mcp_servers: dict[str, str] | None = None,
) -> list[AttachmentMessage]:
    """The context re-injected after compaction (003:590-612, 000:154-160, 004:520-528): recently
    read files, invoked skills, the current plan, each within its budget, then the tool and MCP
    instruction deltas (:func:`tool_deltas`) when the session declares tools or MCP servers."""
    out: list[AttachmentMessage] = []
    used = 0
    for record in files:
        if len([a for a in out if a.attachment_type == "file"]) >= config.post_compact_max_files:
            break
        if record.path in exclude_paths:
            continue
        text = fit_attachment(f"Contents of {record.path} as last read before the compaction:", record.content,
                              config.post_compact_tokens_per_file, config)
        cost = estimate_text(text, config)
        if used + cost > config.post_compact_files_budget:
            break
        used += cost
        out.append(AttachmentMessage(uuid=ids.uuid(), timestamp=now, attachment_type="file", content=text,
                                     path=record.path))
    used = 0
    for name, content in skills:
        text = fit_attachment(f"Skill {name} (invoked before the compaction):", content,
                              config.post_compact_tokens_per_skill, config)
        cost = estimate_text(text, config)
        if used + cost > config.post_compact_skills_budget:
            break
        used += cost
        out.append(AttachmentMessage(uuid=ids.uuid(), timestamp=now, attachment_type="skill", content=text,
                                     name=name))
    if plan:
        out.append(AttachmentMessage(uuid=ids.uuid(), timestamp=now, attachment_type="plan",
                                     content=f"The current plan:\n{plan}"))
    out += tool_deltas(tools, mcp_servers or {}, ids=ids, now=now)
    return out


def tool_deltas(tools: Sequence[str], mcp_servers: dict[str, str], *, ids: IdFactory, now: datetime) -> list[AttachmentMessage]:
    """The tool and MCP instruction deltas (000:160, 003:238-239, 003:610): what tools and MCP
    servers are available, announced when the session starts and again after every compaction
    ("compaction ate the earlier delta attachments; the full delta is generated again from the
    current state"). One ``deferred_tools_delta`` listing the declared tools, then one
    ``mcp_instructions_delta`` per MCP server with its instructions. The wording is ours."""
    out: list[AttachmentMessage] = []
    if tools:
        out.append(AttachmentMessage(uuid=ids.uuid(), timestamp=now, attachment_type="deferred_tools_delta",
                                     content="The following tools are available in this session: "
                                             + ", ".join(tools)))
    for server, instructions in mcp_servers.items():
        out.append(AttachmentMessage(uuid=ids.uuid(), timestamp=now, attachment_type="mcp_instructions_delta",
                                     name=server, content=f"# MCP Server Instructions\n\n## {server}\n{instructions}"))
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
    attachments: list[AttachmentMessage] | None = None,
    cache: bool = False,
) -> CompactionResult:
    """Summarise ``messages`` (the request view of the context) and build the post-compact
    context; raise :class:`CompactionFailed`. ``cache``: mark the conversation as a cached
    prefix (:func:`summarise`)."""
    context = [m for m in messages if not isinstance(m, CompactBoundary)]
    text, usage, request, steps = summarise(context, prompts.render_compact(custom_instructions), llm=llm,
                                            config=config, system=prompts.system_compact, ids=ids, cache=cache)
    summary = _finish(text, request, steps)
    auto = trigger == "auto"
    boundary = CompactBoundary(uuid=ids.uuid(), timestamp=now, trigger="auto" if auto else "manual",
                               pre_tokens=pre_tokens, logical_parent_uuid=context[-1].uuid)
    summary_message = UserMessage(uuid=ids.uuid(), timestamp=now, is_compact_summary=True,
                                  content=prompts.render_continuation(summary, transcript_path, auto=auto))
    result = CompactionResult(
        kind="full", trigger=boundary.trigger, boundary=boundary, summary_message=summary_message,
        summary=summary, raw_reply=text, summarized=context, kept=[], attachments=list(attachments or []),
        pre_tokens=pre_tokens, post_tokens=0, request=request, usage=usage,
        custom_instructions=custom_instructions, ptl_steps=steps)
    result.post_tokens = estimate_messages(result.post_messages, config)
    return result


def partial_compact(
    context: list[Any],
    view: list[Any],
    pivot: int,
    direction: str,
    *,
    llm: LLM,
    config: EngineConfig,
    prompts: PromptSet,
    ids: IdFactory,
    now: datetime,
    transcript_path: str,
    pre_tokens: int,
    custom_instructions: str | None = None,
) -> CompactionResult:
    """Summarise the messages before (``up_to``) or from (``from``) ``pivot`` and keep the rest.

    ``pivot`` is moved back to an API-round boundary so no tool_use is split from its result.
    """
    if direction not in ("up_to", "from"):
        raise CompactionFailed(f"partial compaction direction must be 'up_to' or 'from', not {direction!r}")
    floor = last_boundary_floor(context)
    pivot = adjust_index_to_preserve_invariants(context, max(pivot, floor), floor)
    head_view, tail_view = view[:pivot], view[pivot:]
    head, tail = context[:pivot], context[pivot:]
    summarised, kept = (head_view, tail) if direction == "up_to" else (tail_view, head)
    summarised = [m for m in summarised if not isinstance(m, CompactBoundary)]
    if not summarised:
        raise CompactionFailed(f"partial compaction '{direction}' at message {pivot} leaves nothing to summarise")
    prompt = prompts.render_partial(direction, custom_instructions)
    # "from" keeps the older messages to keep the prompt cache (003:337): the request is the whole
    # conversation, whose prefix is what the cache holds, and the prompt asks for the recent part
    # only. Sending the recent part alone would also open the request with whatever message the
    # pivot lands on, often an assistant's, which the API rejects.
    sent = summarised if direction == "up_to" else [m for m in view if not isinstance(m, CompactBoundary)]
    text, usage, request, steps = summarise(sent, prompt, llm=llm, config=config,
                                            system=prompts.system_compact, ids=ids)
    summary = _finish(text, request, steps)
    boundary = CompactBoundary(uuid=ids.uuid(), timestamp=now, trigger="manual", pre_tokens=pre_tokens,
                               logical_parent_uuid=summarised[-1].uuid)
    summary_message = UserMessage(uuid=ids.uuid(), timestamp=now, is_compact_summary=True,
                                  content=prompts.render_continuation(summary, transcript_path, auto=False,
                                                                      portion="recent" if direction == "from" else "earlier"))
    result = CompactionResult(
        kind="partial", trigger="manual", boundary=boundary, summary_message=summary_message, summary=summary,
        raw_reply=text, summarized=summarised, kept=[m for m in kept if not isinstance(m, CompactBoundary)],
        attachments=[], pre_tokens=pre_tokens, post_tokens=0, request=request, usage=usage,
        custom_instructions=custom_instructions, ptl_steps=steps, kept_before=direction == "from")
    result.post_tokens = estimate_messages(result.post_messages, config)
    return result
