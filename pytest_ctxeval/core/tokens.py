"""Token estimation and anchored counting, as in the seeds.

* :func:`estimate_text`: 4 bytes per token for prose, 2 when the text starts with ``{`` (000:90-95,
  003:345-349), rounded half up like JavaScript's ``Math.round`` (003:348).
* :func:`estimate_messages`: the sum of block estimates times the conservative 4/3 margin, rounded
  up (003:351-353), so a compaction is never missed by under-counting.
* :func:`count_tokens`: anchored on the most recent real API usage, plus the conservative estimate
  of whatever came after it (000:57-86, ``tokenCountWithEstimation``). Each API response resets
  the anchor to ground truth, so estimates never accumulate drift.

Images and documents count a fixed ``image_tokens`` each (003:106).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any
from collections.abc import Iterable

from .config import EngineConfig
from .messages import (
    AssistantMessage, AttachmentMessage, CompactBoundary, DocumentBlock, ImageBlock, OpaqueBlock, RedactedThinkingBlock,
    TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock, UserMessage, _attachment_text,
)

__all__ = ["estimate_text", "estimate_block", "estimate_message", "estimate_api_message", "estimate_messages", "with_margin",
           "estimate_api_request", "count_tokens", "anchor_tokens"]

_DEFAULT = EngineConfig()
#: ``json.dumps(x, ensure_ascii=False)`` without building an encoder per call (a tool call's input
#: is encoded each time its message is estimated: tens of thousands of times in a long session).
_dumps = json.JSONEncoder(ensure_ascii=False).encode
#: A character ``json.dumps`` writes escaped (two or six characters), or a non-ASCII one.
_NOT_PLAIN = re.compile(r'[\x00-\x1f"\\\x80-\U0010ffff]')


def _input_tokens(value: Any, config: EngineConfig) -> int:
    """``estimate_text(_dumps(value), config)`` for a tool call's input. A flat mapping of plain
    ASCII strings (a path, a pattern, a command) is sized without encoding it: ``{"k": "v", ...}``
    is its keys and values, 6 characters for each pair's quotes and ``": "``, and ``", "`` between
    pairs; anything else is encoded (``tests/test_long_session_fast_paths.py`` checks both agree)."""
    if type(value) is dict:
        size = 2 + 8 * len(value) - 2 if value else 2
        for k, v in value.items():
            if type(k) is not str or type(v) is not str or _NOT_PLAIN.search(k) or _NOT_PLAIN.search(v):
                return estimate_text(_dumps(value), config)
            size += len(k) + len(v)
        return math.floor(size / config.json_bytes_per_token + 0.5)
    return estimate_text(_dumps(value), config)


def estimate_text(text: str, config: EngineConfig = _DEFAULT) -> int:
    """Rough tokens in ``text`` (000:93): UTF-8 bytes / 4, or / 2 when it starts with ``{``.

    >>> estimate_text("hello world!")
    3
    >>> estimate_text('{"a": 1, "b": 2}')
    8
    """
    if not text:
        return 0
    bpt = config.json_bytes_per_token if text.lstrip().startswith("{") else config.bytes_per_token
    # ASCII text is one byte a character (isascii is a flag check: no copy of a large result).
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    # Math.round in the seed rounds halves up; Python's round() would round them to even.
    return math.floor(size / bpt + 0.5)


def estimate_block(block: Any, config: EngineConfig = _DEFAULT) -> int:
    """Rough tokens of one content block (object or API dict)."""
    if isinstance(block, dict):
        kind = block.get("type")
        if kind == "text":
            return estimate_text(block.get("text", ""), config)
        if kind in ("image", "document"):
            return config.image_tokens
        if kind == "thinking":
            return estimate_text(block.get("thinking", ""), config)
        if kind == "redacted_thinking":
            return estimate_text(block.get("data", ""), config)
        if kind == "tool_use":
            return estimate_text(block.get("name", ""), config) + _input_tokens(block.get("input", {}), config)
        if kind == "tool_result":
            content = block.get("content", "")
            if isinstance(content, str):
                return estimate_text(content, config)
            return sum(estimate_block(b, config) for b in content)
        return estimate_text(_dumps(block), config)
    if isinstance(block, TextBlock):
        return estimate_text(block.text, config)
    if isinstance(block, (ImageBlock, DocumentBlock)):
        return config.image_tokens
    if isinstance(block, ThinkingBlock):
        return estimate_text(block.thinking, config)
    if isinstance(block, RedactedThinkingBlock):
        return estimate_text(block.data, config)
    if isinstance(block, ToolUseBlock):
        return estimate_text(block.name, config) + _input_tokens(block.input, config)
    if isinstance(block, ToolResultBlock):
        if isinstance(block.content, str):
            return estimate_text(block.content, config)
        return sum(estimate_block(b, config) for b in block.content)
    if isinstance(block, OpaqueBlock):  # a type we do not model (tool_reference, server tool blocks): its JSON
        return estimate_text(_dumps(block.model_dump()), config)
    raise TypeError(f"not a content block: {block!r}")


def estimate_message(message: Any, config: EngineConfig = _DEFAULT) -> int:
    """Rough tokens of one message, without the margin. Boundaries cost nothing."""
    if isinstance(message, CompactBoundary):
        return 0
    if isinstance(message, AttachmentMessage):
        return estimate_text(message.content, config)
    if isinstance(message, (UserMessage, AssistantMessage)):
        content = message.content
        if isinstance(content, str):
            return estimate_text(content, config)
        return sum(estimate_block(b, config) for b in content)
    if isinstance(message, dict):  # an API message
        content = message.get("content", "")
        if isinstance(content, str):
            return estimate_text(content, config)
        return sum(estimate_block(b, config) for b in content)
    raise TypeError(f"not a message: {message!r}")


def estimate_api_message(message: Any, config: EngineConfig = _DEFAULT) -> int:
    """What :func:`estimate_api_request` counts for ``message`` once ``to_api`` has sent it: a
    boundary is not sent, an attachment is sent as its ``<system-reminder>`` text, any other message
    as its content (the API dict's blocks estimate as the blocks do). Merging consecutive same-role
    messages concatenates their blocks, so a merged API message counts the sum of its members'.
    """
    if isinstance(message, CompactBoundary):
        return 0
    if isinstance(message, AttachmentMessage):
        return estimate_text(_attachment_text(message), config)
    return estimate_message(message, config)


def estimate_messages(messages: Iterable[Any], config: EngineConfig = _DEFAULT) -> int:
    """Conservative estimate: ``ceil(sum * 4/3)`` (003:351-353)."""
    return with_margin(sum(estimate_message(m, config) for m in messages), config)


def with_margin(raw: int, config: EngineConfig = _DEFAULT) -> int:
    """``ceil(raw * 4/3)`` (003:353): the margin on a sum of :func:`estimate_message` values. A
    running sum kept as messages arrive gives the same count as :func:`estimate_messages`.

    >>> with_margin(3)
    4
    """
    return math.ceil(raw * config.estimate_margin)


def estimate_api_request(request: dict[str, Any], config: EngineConfig = _DEFAULT) -> int:
    """Raw (margin-free) size of a Messages-API request body: system, tools and messages.

    This is what the offline model reports as ``input_tokens`` and compares with the window.
    """
    total = 0
    system = request.get("system")
    if isinstance(system, str):
        total += estimate_text(system, config)
    elif isinstance(system, list):
        total += sum(estimate_block(b, config) for b in system)
    for tool in request.get("tools") or []:
        total += estimate_text(_dumps(tool), config)
    total += sum(estimate_message(m, config) for m in request.get("messages", []))
    return total


def count_tokens(messages: list[Any], config: EngineConfig = _DEFAULT) -> int:
    """Context size now: the last API usage plus the estimate of what came after (000:57-86).

    Without any usage in ``messages`` (a new session, or right after a compaction) it is the
    conservative estimate of everything.
    """
    for index in range(len(messages) - 1, -1, -1):
        anchor = anchor_tokens(messages[index])
        if anchor:
            return anchor + estimate_messages(messages[index + 1:], config)
    return estimate_messages(messages, config)


def anchor_tokens(message: Any) -> int:
    """The context size ``message`` anchors the count on: an assistant message's API usage, else 0
    (no usage, or a usage of 0, is no anchor)."""
    if isinstance(message, AssistantMessage) and message.usage is not None:
        return message.usage.context_tokens
    return 0
