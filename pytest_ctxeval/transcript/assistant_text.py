"""The JSON text of an assistant record, written directly: the other half of a session's records
(every reply: its text and its tool calls).

``TranscriptWriter`` writes ``json.dumps(record_for(message), ensure_ascii=False)``. For a reply
that builds the record's dicts (the base fields, the message body, a dump of each block and of the
usage) to encode them at once, most of it a handful of short strings. Here the text is joined from
its fixed parts and its values, each string encoded by the encoder ``json.dumps`` uses for a string
(``encode_basestring``; a dict's keys and values are encoded the same way, and nested values the
same wherever they stand, as the encoder has no indent). A tool call's input is its dump's
(:func:`~pytest_ctxeval.core.block_dumps.block_dict`, as ``record_for`` takes it): a flat mapping of
strings joined here, anything else encoded by ``json.dumps``. A reply holding any other block, or
a value not of its declared type, gets None and goes the general way
(``tests/test_transcript_assistant_text.py`` checks both write the same text, Hypothesis).
"""

from __future__ import annotations

import hashlib
import json
from json.encoder import encode_basestring
from typing import Any

from ..core.block_dumps import block_dict
from ..core.messages import AssistantMessage, TextBlock, ToolUseBlock, Usage
from .stamps import iso_timestamp

__all__ = ["assistant_record"]

_dumps = json.JSONEncoder(ensure_ascii=False).encode  # as the writer's
_USAGE = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
_TOOL_USE_KEYS = ["type", "id", "name", "input"]


def _input_text(value: dict[str, Any]) -> str | None:
    """``json.dumps(value, ensure_ascii=False)``; None when it cannot be encoded (the general way
    raises as before)."""
    parts = []
    for k, v in value.items():
        if type(k) is not str or type(v) is not str:
            try:
                return _dumps(value)
            except (TypeError, ValueError, RecursionError):
                return None
        parts.append(f"{encode_basestring(k)}: {encode_basestring(v)}")
    return "{" + ", ".join(parts) + "}"


def _block_text(block: Any) -> str | None:
    kind = type(block)
    if kind is TextBlock:
        values = block.__dict__
        kind_value, text = values.get("type"), values.get("text")
        if len(values) != 2 or type(kind_value) is not str or type(text) is not str:
            return None
        return f'{{"type": {encode_basestring(kind_value)}, "text": {encode_basestring(text)}}}'
    if kind is ToolUseBlock:
        dumped = block_dict(block)
        if list(dumped) != _TOOL_USE_KEYS:
            return None
        kind_value, use_id, name, given = dumped["type"], dumped["id"], dumped["name"], dumped["input"]
        if type(kind_value) is not str or type(use_id) is not str or type(name) is not str or type(given) is not dict:
            return None
        encoded = _input_text(given)
        if encoded is None:
            return None
        return (f'{{"type": {encode_basestring(kind_value)}, "id": {encode_basestring(use_id)}, '
                f'"name": {encode_basestring(name)}, "input": {encoded}}}')
    return None


def assistant_record(message: Any, parent_uuid: str | None, session_id: str, version: str) -> str | None:
    """``json.dumps(record_for(message, ...), ensure_ascii=False)`` for an assistant message of
    text and tool-call blocks; None for anything else."""
    if type(message) is not AssistantMessage:
        return None
    blocks = []
    for block in message.content:
        text = _block_text(block)
        if text is None:
            return None
        blocks.append(text)
    uuid, mid, model, usage = message.uuid, message.message_id, message.model, message.usage
    if (type(uuid) is not str or type(session_id) is not str or type(version) is not str
            or (parent_uuid is not None and type(parent_uuid) is not str)):
        return None
    if mid is None or mid == "":  # record_for's ``message_id or`` the id derived from the uuid
        mid = "msg_" + hashlib.sha256(uuid.encode()).hexdigest()[:24]
    elif type(mid) is not str:
        return None
    tail = ""
    if model is not None:
        if type(model) is not str:
            return None
        tail = f', "model": {encode_basestring(model)}'
    if usage is not None:
        counts = usage.__dict__ if type(usage) is Usage else {}
        values = [counts.get(k) for k in _USAGE]
        if len(counts) != len(_USAGE) or any(type(v) is not int for v in values):
            return None
        tail += ', "usage": {' + ", ".join(f'"{k}": {v}' for k, v in zip(_USAGE, values)) + "}"
    parent = "null" if parent_uuid is None else encode_basestring(parent_uuid)
    return (f'{{"parentUuid": {parent}, "isSidechain": false, "userType": "external", '
            f'"sessionId": {encode_basestring(session_id)}, "version": {encode_basestring(version)}, '
            f'"uuid": {encode_basestring(uuid)}, "timestamp": {encode_basestring(iso_timestamp(message.timestamp))}, '
            f'"type": "assistant", "message": {{"id": {encode_basestring(mid)}, "type": "message", '
            f'"role": "assistant", "content": [{", ".join(blocks)}]{tail}}}}}')
