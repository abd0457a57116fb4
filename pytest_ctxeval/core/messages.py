"""Content blocks and engine messages, shaped like the Anthropic Messages API.

Blocks are a pydantic union discriminated on ``type`` (as in anthropic-sdk-python); engine messages
are a union discriminated on ``kind``: ``user``, ``assistant``, ``compact_boundary`` (a marker that
is never sent to the API, 003:221-229) and ``attachment`` (system-injected context, 000:32).

:func:`to_api` turns an engine history into the ``messages`` list of a request the way Claude
Code's ``normalizeMessagesForAPI`` does (000:38-50): boundaries dropped, attachments become user
messages, consecutive same-role messages merged, tool_result blocks first in a user message.
:func:`validate_api` checks the invariants the API enforces; a compaction that breaks them is an
API error in a real agent, which is exactly what the ``tool_pairing`` grader looks for.
"""

from __future__ import annotations

import re
from datetime import datetime, UTC
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter

from .block_dumps import FAST as FAST_DUMPS, block_dict, plain_dumper

__all__ = [
    "TextBlock", "ImageBlock", "DocumentBlock", "ThinkingBlock", "RedactedThinkingBlock",
    "ToolUseBlock", "ToolResultBlock", "OpaqueBlock", "ContentBlock", "Block",
    "Usage", "UserMessage", "AssistantMessage", "CompactBoundary", "AttachmentMessage", "Message",
    "to_api", "from_api", "validate_api", "RequestValidator", "person_text", "is_person_typed", "text_of",
    "tool_uses", "tool_results", "result_text", "plain_text", "utcnow",
]


def utcnow() -> datetime:
    return datetime.now(UTC)


class _Block(BaseModel):
    # Real transcripts carry fields we do not model (citations, cache_control, caller): ignore
    # them rather than fail, so any real session loads.
    model_config = ConfigDict(extra="ignore", frozen=True)


class TextBlock(_Block):
    type: Literal["text"] = "text"
    text: str


class ImageBlock(_Block):
    type: Literal["image"] = "image"
    source: dict[str, Any]


class DocumentBlock(_Block):
    type: Literal["document"] = "document"
    source: dict[str, Any]
    title: str | None = None


class ThinkingBlock(_Block):
    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = ""


class RedactedThinkingBlock(_Block):
    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str


class ToolUseBlock(_Block):
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class OpaqueBlock(BaseModel):
    """A content block of a type we do not model (``tool_reference`` in ToolSearch results, server
    tool blocks such as ``server_tool_use`` / ``web_search_tool_result``, newer API types): kept
    whole, every field, so it survives reading and writing and its message still counts (a
    tool_result holding one still answers its tool_use)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    type: str


_MODELLED = frozenset({"text", "image", "document", "thinking", "redacted_thinking", "tool_use", "tool_result"})


def _block_tag(known: frozenset[str]) -> Any:
    def tag(value: Any) -> str:
        kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
        # A modelled type where it does not belong (a tool_use inside a tool_result) stays an error.
        return kind if kind in known or kind in _MODELLED else "opaque"
    return tag


ResultContent = Annotated[TextBlock | ImageBlock | DocumentBlock, Field(discriminator="type")]
#: What a tool_result's list may hold when read: the modelled types, anything else as an OpaqueBlock.
ResultItem = Annotated[Annotated[TextBlock, Tag("text")] | Annotated[ImageBlock, Tag("image")]
                       | Annotated[DocumentBlock, Tag("document")] | Annotated[OpaqueBlock, Tag("opaque")],
                       Discriminator(_block_tag(frozenset({"text", "image", "document"})))]


class ToolResultBlock(_Block):
    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str | list[ResultItem] = ""
    is_error: bool = False


#: The modelled block types, strict (scenario files: a misspelt type is an error there).
ContentBlock = Annotated[
    TextBlock | ImageBlock | DocumentBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | ToolResultBlock,
    Field(discriminator="type"),
]
_KNOWN = {"text": TextBlock, "image": ImageBlock, "document": DocumentBlock, "thinking": ThinkingBlock,
          "redacted_thinking": RedactedThinkingBlock, "tool_use": ToolUseBlock, "tool_result": ToolResultBlock}
#: A block of a message: a modelled type (validated as strictly as :data:`ContentBlock`), any other
#: type kept whole as an :class:`OpaqueBlock`.
if TYPE_CHECKING:  # the same union, spelled out for the type checker (it cannot read the computed one)
    Block = (TextBlock | ImageBlock | DocumentBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock
             | ToolResultBlock | OpaqueBlock)
else:
    Block = Annotated[Union[tuple(Annotated[cls, Tag(name)] for name, cls in _KNOWN.items())  # noqa: UP007 - a computed Union
                            + (Annotated[OpaqueBlock, Tag("opaque")],)],
                      Discriminator(_block_tag(frozenset(_KNOWN)))]


# A text block, and a tool result with text content, dump as their fields (see core.block_dumps).
FAST_DUMPS[TextBlock] = plain_dumper((("type", str), ("text", str)))
FAST_DUMPS[ToolResultBlock] = plain_dumper((("type", str), ("tool_use_id", str), ("content", str), ("is_error", bool)))


class Usage(BaseModel):
    """API usage of one response; ``context_tokens`` is what the context holds after it."""

    model_config = ConfigDict(frozen=True)
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @property
    def context_tokens(self) -> int:
        # The response is part of the context from now on, so its output counts (000:57-86 anchors
        # on the last usage; Claude Code's getTokenCountFromUsage adds all four).
        return (self.input_tokens + self.cache_creation_input_tokens
                + self.cache_read_input_tokens + self.output_tokens)


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid")
    uuid: str
    timestamp: datetime = Field(default_factory=utcnow)


class UserMessage(_Message):
    """A user-role message: typed by the person, tool results, meta reminders or a summary."""

    kind: Literal["user"] = "user"
    content: str | list[Block]
    is_meta: bool = False
    is_compact_summary: bool = False


class AssistantMessage(_Message):
    kind: Literal["assistant"] = "assistant"
    content: list[Block]
    message_id: str | None = None
    usage: Usage | None = None
    model: str | None = None


class CompactBoundary(_Message):
    """Marks where a compaction replaced the history (never sent to the API)."""

    kind: Literal["compact_boundary"] = "compact_boundary"
    trigger: Literal["auto", "manual"] = "auto"
    pre_tokens: int = 0
    logical_parent_uuid: str | None = None


class AttachmentMessage(_Message):
    """System-injected context: a re-read file, a plan, a skill, a memory file, a tool or MCP
    instruction delta (000:25), or a hook's output (000:27, ``attachment_type="hook_result"``)."""

    kind: Literal["attachment"] = "attachment"
    attachment_type: str
    content: str
    path: str | None = None
    #: What it is about when it is not a file: the skill, the MCP server, the hook event.
    name: str | None = None


Message = Annotated[
    UserMessage | AssistantMessage | CompactBoundary | AttachmentMessage,
    Field(discriminator="kind"),
]

# ---------------------------------------------------------------------------------------------
# Reading blocks

_CLIENT_MARKERS = (
    # Strings the client writes into user messages; the person did not type them.
    "<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>",
    "<local-command-stderr>", "<local-command-caveat>", "<bash-input>", "<bash-stdout>",
    "<bash-stderr>", "<user-memory-input>",
)
_INJECTED_TEXT = re.compile(r"^\s*<(system-reminder|ide_opened_file|ide_selection|ide_diagnostics)\b")
# Texts the client writes as user text without a marker tag.
_CLIENT_TEXT = re.compile(r"^\s*(?:Caveat: The messages below were generated by the user while running local commands"
                          # plan mode's "clear context and implement": the plan is the model's text
                          r"|Implement the following plan:"
                          # /fork's note in the parent session (2.1.23x+): where the fork runs, not typed
                          r"|The fork runs as its own separate session\b"
                          # a pasted image's marker, alone in its text block
                          r"|\[Image(?: #\d+|: source: [^\]\n]*)\]\s*$)")
#: The notes the client writes beside a pasted image it resized, converted or left out (2.1.1xx+):
#: ``[Image: original 1206x2622, displayed at 920x2000. Multiply coordinates by 1.31 to map to original
#: image.]``, ``[Image converted from image/heic to image/jpeg.]``, ``[Image omitted: …]``. Not typed,
#: wherever they stand (alone in a text block, or after the words the person typed with the image).
_IMAGE_NOTE = re.compile(r"\[Image(?:: (?:source: [^\]\n]*?, )?original \d+x\d+, displayed at \d+x\d+\.[^\]\n]*"
                         r"| converted from [^\]\n]*| omitted: [^\]\n]*)\][ \t]*")
_CLIENT_NOTICE = re.compile(r"\[Request interrupted by user[^\]]*\]")
# A wrapper a host (IDE, hook, client) puts around what it injects: the element is removed, what the
# person typed around it stays. Named by what such tags are called (system_instruction,
# system-reminder, ide_selection, user-prompt-submit-hook, environment_details, ...).
_WRAPPER_NAME = (r"(?:system[\w-]*|[\w-]*reminder|ide[_-][\w-]+|[\w-]*hook[\w-]*|[\w-]*instructions?|environment[_-]details"
                 # what other agents send in (agent teams' teammate messages, background task notifications)
                 r"|[\w-]*[_-](?:message|notification)s?)")
_WRAPPER = re.compile(rf"<({_WRAPPER_NAME})(?:\s[^>]*)?>[\s\S]*?</\1\s*>", re.IGNORECASE)
#: A notification Claude Code writes as a user record of its own (a background command or agent
#: finished: ``<task-notification>``, 2.1.49+), with the lines it appends after the element that
#: point at the task's output ("Full transcript available at: <path>", "Read the output file to
#: retrieve the result: <path>"): all of it the client's, none of it typed.
_NOTIFICATION = re.compile(r"<([\w-]*notification)(?:\s[^>]*)?>([\s\S]*?)</\1\s*>", re.IGNORECASE)
_TRAILER_PHRASE = re.compile(r"^\s*(?:Full transcript available at|Read the output file to retrieve the result)\b",
                             re.IGNORECASE)
#: A trailer line by its shape: a short lead, a colon, and one path (the task's output file).
_TRAILER_POINTER = re.compile(r"^\s*[A-Z][\w ,'-]{2,80}:\s*(\S+)\s*$")
_COMMAND_ARGS = re.compile(r"<command-args>([\s\S]*?)</command-args>")
#: The client's elements whole (``<command-name>/model</command-name>``, ``<local-command-stdout>…``).
_CLIENT_ELEMENTS = re.compile(r"<(%s)>[\s\S]*?</\1>" % "|".join(m.strip("<>") for m in _CLIENT_MARKERS))


def _without_notifications(text: str) -> str:
    """``text`` without the client's notification elements and the trailer lines after each: a line
    in the known wording, or a lead and the task's output file (its ``<output-file>``, or a path
    ending in ``<task-id>.output``).

    >>> _without_notifications("<task-notification><task-id>ab1</task-id></task-notification>\\n"
    ...                        "Full transcript available at: /tmp/t/tasks/ab1.output\\nthanks, go on")
    '\\nthanks, go on'
    """
    out: list[str] = []
    pos = 0
    for m in _NOTIFICATION.finditer(text):
        if m.start() < pos:
            continue
        out.append(text[pos:m.start()])
        body = m.group(2)
        outputs = set(re.findall(r"<output-file>\s*([^<\s]+)\s*</output-file>", body))
        ids = re.findall(r"<task-id>\s*([^<\s]+)\s*</task-id>", body)
        pos = m.end()
        while True:
            nl = text.find("\n", pos)
            if nl < 0 or text[pos:nl].strip():
                break
            end = text.find("\n", nl + 1)
            line = text[nl + 1:] if end < 0 else text[nl + 1:end]
            pointer = _TRAILER_POINTER.match(line)
            if not (_TRAILER_PHRASE.match(line) or (pointer and (
                    pointer.group(1) in outputs or any(pointer.group(1).endswith(f"{i}.output") for i in ids)))):
                break
            pos = len(text) if end < 0 else end
    out.append(text[pos:])
    return "".join(out)


def blocks_of(content: str | list[Any]) -> list[Any]:
    return [TextBlock(text=content)] if isinstance(content, str) else list(content)


def text_of(content: str | list[Any], *, include_results: bool = False) -> str:
    """All text in ``content`` (text blocks; tool results too when asked), joined by newlines."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif include_results and isinstance(block, ToolResultBlock):
            parts.append(result_text(block))
    return "\n".join(parts)


def result_text(block: ToolResultBlock) -> str:
    """The text of a tool result (string content or its text blocks; media as markers)."""
    if isinstance(block.content, str):
        return block.content
    out = []
    for item in block.content:
        if isinstance(item, TextBlock):
            out.append(item.text)
        elif isinstance(item, ImageBlock):
            out.append("[image]")
        elif isinstance(item, DocumentBlock):
            out.append("[document]")
        else:
            out.append(f"[{item.type}]")
    return "\n".join(out)


def person_text(message: Any) -> str | None:
    """What the person typed in ``message``, or None when it is not a person-typed message.

    Policy (documented in the README, used by every grader): a user message counts when it is not
    meta, not a compaction summary, carries at least one text block that is not a tool result, a
    client marker (slash-command echo, local command output), an IDE/system-reminder injection or
    a client-written notice (``[Request interrupted by user]``, a command caveat). A wrapper a host
    injects into the person's text (``<system_instruction>…</system_instruction>`` an IDE prepends,
    a ``<system-reminder>``) is removed and the rest counts. The arguments of a ``/command`` are
    what the person typed (``/fix-issue 123`` -> ``123``). Images pasted with the text do not count.

    >>> person_text(UserMessage(uuid="u", content="<system_instruction>be brief</system_instruction>fix it"))
    'fix it'
    """
    if not isinstance(message, UserMessage) or message.is_meta or message.is_compact_summary:
        return None
    texts: list[str] = []
    for block in blocks_of(message.content):
        if not isinstance(block, TextBlock):
            continue
        text = block.text
        if any(marker in text for marker in _CLIENT_MARKERS):
            if "<command-name>" in text and (args := _COMMAND_ARGS.search(text)) and args.group(1).strip():
                texts.append(args.group(1).strip())
                continue
            if not _CLIENT_ELEMENTS.sub("", text).strip():
                return None
            # Words outside the client's elements: the client writes nothing there (every such record
            # of the corpus is its elements alone), so the person typed this, tags and all (a log line
            # quoted with its ``<command-message>``, a question about ``<bash-input>``).
        if "<" in text:
            text = _WRAPPER.sub("", _without_notifications(text)).strip()
        if "[Request interrupted" in text:
            text = _CLIENT_NOTICE.sub("", text).strip()
        if "[Image" in text:
            text = _IMAGE_NOTE.sub("", text).strip()
        if _INJECTED_TEXT.match(text) or _CLIENT_TEXT.match(text) or not text.strip():
            continue
        texts.append(text)
    if not texts:
        return None
    return "\n".join(texts)


def plain_text(messages: Iterable[Any]) -> str:
    """Everything said or done in ``messages`` as text: text blocks, tool inputs (as JSON), tool
    results and attachments, one per line. For searching, not for sending."""
    import json

    parts: list[str] = []
    for m in messages:
        content = getattr(m, "content", "")
        if isinstance(content, str):
            parts.append(content)
            continue
        for b in content:
            if isinstance(b, TextBlock):
                parts.append(b.text)
            elif isinstance(b, ToolUseBlock):
                parts.append(json.dumps(b.input, ensure_ascii=False))
            elif isinstance(b, ToolResultBlock):
                parts.append(result_text(b))
    return "\n".join(parts)


def is_person_typed(message: Any) -> bool:
    return person_text(message) is not None


def tool_uses(message: Any) -> list[ToolUseBlock]:
    if isinstance(message, AssistantMessage):
        return [b for b in message.content if isinstance(b, ToolUseBlock)]
    return []


def tool_results(message: Any) -> list[ToolResultBlock]:
    if isinstance(message, UserMessage) and not isinstance(message.content, str):
        return [b for b in message.content if isinstance(b, ToolResultBlock)]
    return []


# ---------------------------------------------------------------------------------------------
# To and from the Messages API


def _attachment_text(message: AttachmentMessage) -> str:
    return f"<system-reminder>\n{message.content}\n</system-reminder>"


def _dump_block(block: Any) -> dict[str, Any]:
    data = block_dict(block)  # the transcript dumped it when the message arrived
    if isinstance(block, ToolResultBlock) and not block.is_error:
        data.pop("is_error", None)
    return data


def to_api(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """The ``messages`` of a request for this history (000:38-50, ``normalizeMessagesForAPI``).

    Boundaries are dropped, attachments become user messages, consecutive messages of one role
    are merged (the API needs alternation), and in a merged user message the tool_result blocks
    come first, as the API requires.
    """
    out: list[dict[str, Any]] = []
    content: str | list[dict[str, Any]]
    for message in messages:
        if isinstance(message, CompactBoundary):
            continue
        if isinstance(message, AttachmentMessage):
            role, content = "user", _attachment_text(message)
        elif isinstance(message, UserMessage):
            role = "user"
            content = message.content if isinstance(message.content, str) else [
                _dump_block(b) for b in message.content]
        elif isinstance(message, AssistantMessage):
            role, content = "assistant", [_dump_block(b) for b in message.content]
        else:  # pragma: no cover - the union is closed
            raise TypeError(f"not a message: {message!r}")
        if out and out[-1]["role"] == role:
            prev = out[-1]
            merged = _as_blocks(prev["content"]) + _as_blocks(content)
            if role == "user":
                merged = ([b for b in merged if b.get("type") == "tool_result"]
                          + [b for b in merged if b.get("type") != "tool_result"])
            prev["content"] = merged
        else:
            out.append({"role": role, "content": content})
    return out


def _as_blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content)


def from_api(messages: list[dict[str, Any]], *, uuid_prefix: str = "api") -> list[Any]:
    """Engine messages for a Messages-API ``messages`` list (inverse of :func:`to_api` up to merging)."""
    items: list[dict[str, Any]] = []
    for i, item in enumerate(messages):
        uid, content = f"{uuid_prefix}-{i}", item["content"]
        if item["role"] == "user":
            items.append({"kind": "user", "uuid": uid, "content": content})
        else:
            items.append({"kind": "assistant", "uuid": uid,
                          "content": _as_blocks(content) if isinstance(content, str) else content})
    # One validation for the whole list: ~10x faster than a model per message (the offline
    # model reads every summarisation request this way; benchmarks/long_session.py).
    return _MESSAGE_LIST.validate_python(items)


_MESSAGE_LIST: TypeAdapter[list[Any]] = TypeAdapter(list[Message])


def validate_api(messages: list[dict[str, Any]], *, allow_pending_tool_use: bool = False) -> list[str]:
    """Problems that would make the API reject this ``messages`` list; empty when valid.

    Checks: the first message is a user message; roles alternate; no empty content; every
    tool_result answers a tool_use of the *previous* assistant message and comes before other
    blocks; every tool_use is answered in the next message (the last assistant message may have
    calls in flight when ``allow_pending_tool_use``); tool_use ids are unique.
    Each problem names the message index: ``messages[4]: tool_result toolu_9 answers no tool_use
    in messages[3]``. :class:`RequestValidator` gives the same for a sequence of requests, checking
    again only what changed from one request to the next.
    """
    if not messages:
        return ["messages: empty (a request needs at least one user message)"]
    problems: list[str] = []
    seen_ids: dict[str, int] = {}
    for i in range(len(messages)):
        problems += _problems_at(messages, i, seen_ids, allow_pending_tool_use)
    return problems


def _problems_at(messages: list[dict[str, Any]], i: int, seen_ids: dict[str, int],
                 allow_pending_tool_use: bool) -> list[str]:
    """:func:`validate_api`'s problems of ``messages[i]``: they depend on it, the messages right
    before and after it, whether it is the last, and the tool_use ids before it (``seen_ids``: id ->
    first index, updated with this message's)."""
    problems: list[str] = []
    msg = messages[i]
    if i == 0 and msg.get("role") != "user":
        problems.append(f"messages[0]: starts with role {msg.get('role')!r}, must be 'user'")
    role = msg.get("role")
    if role not in ("user", "assistant"):
        problems.append(f"messages[{i}]: unknown role {role!r}")
        return problems
    if i and messages[i - 1].get("role") == role:
        problems.append(f"messages[{i}]: two {role} messages in a row (roles must alternate)")
    blocks = _as_blocks(msg.get("content", ""))
    if not blocks or all(b.get("type") == "text" and not str(b.get("text", "")).strip() for b in blocks):
        problems.append(f"messages[{i}]: empty content")
    for b in blocks:
        if b.get("type") == "text" and not b.get("text"):
            problems.append(f"messages[{i}]: empty text block")
    if role == "assistant":
        uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        for uid in uses:
            if uid in seen_ids:
                problems.append(f"messages[{i}]: duplicate tool_use id {uid} (first in messages[{seen_ids[uid]}])")
            seen_ids.setdefault(uid, i)
        if uses:
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            if nxt is None:
                if not allow_pending_tool_use:
                    problems.append(f"messages[{i}]: tool_use {', '.join(uses)} never answered (last message)")
                return problems
            answered = {b.get("tool_use_id") for b in _as_blocks(nxt.get("content", ""))
                        if b.get("type") == "tool_result"}
            missing = [u for u in uses if u not in answered]
            if missing:
                problems.append(f"messages[{i}]: tool_use {', '.join(missing)} not answered in messages[{i + 1}]")
    else:
        prev_uses = set()
        if i and messages[i - 1].get("role") == "assistant":
            prev_uses = {b.get("id") for b in _as_blocks(messages[i - 1].get("content", ""))
                         if b.get("type") == "tool_use"}
        seen_other = False
        for b in blocks:
            if b.get("type") == "tool_result":
                if seen_other:
                    problems.append(f"messages[{i}]: tool_result {b.get('tool_use_id')} after other content "
                                    "(tool_result blocks must come first)")
                if b.get("tool_use_id") not in prev_uses:
                    problems.append(f"messages[{i}]: tool_result {b.get('tool_use_id')} answers no tool_use "
                                    f"in messages[{i - 1}]" if i else
                                    f"messages[{i}]: tool_result {b.get('tool_use_id')} with no assistant message before it")
            else:
                seen_other = True
    return problems


class RequestValidator:
    """:func:`validate_api` for each request of a sequence, at the cost of what changed.

    Consecutive requests of one session share most of their messages; the engine's bodies share
    the very dicts (``engine/incremental.py``). A message's problems depend only on it, its
    neighbours, whether it is last and the tool_use ids before it, so from one call to the next
    only the messages from the first one that is not the same object as before are checked again
    (finding it is one identity comparison per message). Lists must not be changed in place
    after they were checked (request bodies are read-only).

    >>> check = RequestValidator()
    >>> first = [{"role": "user", "content": "hi"}]
    >>> check(first), check(first + [{"role": "user", "content": "again"}])
    ([], ['messages[1]: two user messages in a row (roles must alternate)'])
    """

    def __init__(self, *, allow_pending_tool_use: bool = False):
        self.allow_pending_tool_use = allow_pending_tool_use
        self._last: list[dict[str, Any]] = []
        self._problems: list[list[str]] = []   # per message of the last list
        self._count = 0                        # how many problems in all
        self._seen: dict[str, int] = {}        # tool_use id -> first index (inserted in index order)

    def __call__(self, messages: list[dict[str, Any]]) -> list[str]:
        if not messages:
            self._last, self._problems, self._count, self._seen = [], [], 0, {}
            return validate_api(messages, allow_pending_tool_use=self.allow_pending_tool_use)
        last, same = self._last, 0
        limit = min(len(last), len(messages))
        while same < limit and messages[same] is last[same]:
            same += 1
        # Message i's problems stand while i + 1 is unchanged too (it reads its successor).
        start = max(0, same - 1)
        while self._seen and next(reversed(self._seen.values())) >= start:
            self._seen.popitem()
        self._count -= sum(len(per) for per in self._problems[start:])
        del self._problems[start:]
        for i in range(start, len(messages)):
            per = _problems_at(messages, i, self._seen, self.allow_pending_tool_use)
            self._problems.append(per)
            self._count += len(per)
        self._last = messages
        return [p for per in self._problems for p in per] if self._count else []
