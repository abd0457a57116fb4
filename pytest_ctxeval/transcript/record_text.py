"""The JSON text of the commonest transcript record, written directly: a user message that
returns tool results as text (half the records of a session, and most of its bytes).

``TranscriptWriter`` writes ``json.dumps(record_for(message), ensure_ascii=False)``. For such a
message that builds the record's dicts (a dump of each block) to encode them at once; here the
text is joined from its fixed parts and its values, each encoded by the encoder ``json.dumps``
uses for a string, and a result text met again (a session re-runs the same tests, greps and
reads) is encoded once: the last encodings of texts from :data:`MIN_CHARS` to :data:`MAX_CHARS`
characters are kept, :data:`KEPT_CHARS` in all. Any other message (or a value not a plain
``str``/``bool``) gets None and goes the general way. ``tests/test_transcript_record_text.py``
checks both write the same text (Hypothesis).
"""

from __future__ import annotations

from json.encoder import encode_basestring
from typing import Any

from ..core.messages import ToolResultBlock, UserMessage
from .stamps import iso_timestamp

__all__ = ["tool_results_record", "MIN_CHARS", "MAX_CHARS", "KEPT_CHARS"]

MIN_CHARS = 512
MAX_CHARS = 20_000
KEPT_CHARS = 2_000_000

_kept: dict[int, tuple[str, str]] = {}  # id(text) -> (text, its JSON); holding text keeps its id
_kept_chars = [0]


def _text(value: str) -> str:
    if MIN_CHARS <= len(value) <= MAX_CHARS:
        hit = _kept.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        encoded = encode_basestring(value)
        if _kept_chars[0] + len(encoded) > KEPT_CHARS:
            _kept.clear()
            _kept_chars[0] = 0
        _kept[id(value)] = (value, encoded)
        _kept_chars[0] += len(encoded)
        return encoded
    return encode_basestring(value)


def tool_results_record(message: Any, parent_uuid: str | None, session_id: str, version: str) -> str | None:
    """``json.dumps(record_for(message, ...), ensure_ascii=False)`` for a user message, neither
    meta nor a compact summary, whose content is a list of tool results with text content; None
    for anything else."""
    if type(message) is not UserMessage or message.is_meta or message.is_compact_summary:
        return None
    content = message.content
    if type(content) is not list:
        return None
    blocks = []
    for block in content:
        if type(block) is not ToolResultBlock:
            return None
        values = block.__dict__
        kind, use_id, text, is_error = (values.get("type"), values.get("tool_use_id"), values.get("content"),
                                        values.get("is_error"))
        if (len(values) != 4 or type(kind) is not str or type(use_id) is not str or type(text) is not str
                or type(is_error) is not bool):
            return None
        blocks.append(f'{{"type": {encode_basestring(kind)}, "tool_use_id": {encode_basestring(use_id)}, '
                      f'"content": {_text(text)}, "is_error": {"true" if is_error else "false"}}}')
    uuid = message.uuid
    if (type(uuid) is not str or type(session_id) is not str or type(version) is not str
            or (parent_uuid is not None and type(parent_uuid) is not str)):
        return None
    parent = "null" if parent_uuid is None else encode_basestring(parent_uuid)
    timestamp = iso_timestamp(message.timestamp)
    return (f'{{"parentUuid": {parent}, "isSidechain": false, "userType": "external", '
            f'"sessionId": {encode_basestring(session_id)}, "version": {encode_basestring(version)}, '
            f'"uuid": {encode_basestring(uuid)}, "timestamp": {encode_basestring(timestamp)}, "type": "user", '
            f'"message": {{"role": "user", "content": [{", ".join(blocks)}]}}}}')
