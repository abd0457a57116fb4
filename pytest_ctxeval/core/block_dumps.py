"""A content block as a plain dict (``model_dump(exclude_none=True)``), dumped once for the
transcript and the request.

Every message is written to the transcript when it arrives (``transcript.jsonl.record_for``) and
enters the request view at the next request (``core.messages.to_api``): both dumped each block the
same way, so a 10,000-turn session dumped some 100,000 blocks twice. :func:`block_dict` keeps the
last :data:`RECENT` blocks' dumps (holding the block, so its ``id`` cannot be reused meanwhile) and
gives each caller its own top-level dict; the values inside are shared, which is safe because
blocks are frozen and neither caller changes the values it gets (a transcript record is encoded
and dropped; request bodies are read-only). ``tests/test_long_session_fast_paths.py`` checks
remembered and fresh dumps agree.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

__all__ = ["block_dict", "RECENT", "FAST", "plain_dumper"]

RECENT = 4_096
_recent: dict[int, tuple[Any, dict[str, Any]]] = {}


#: Block types whose dump is their fields as they are, as a dict literal instead of pydantic's
#: serializer (registered by ``core.messages``: text blocks and tool results with text content);
#: a dumper returns None for a block whose values are not of the declared types (then it is dumped
#: by the model). ``tests/test_block_dump_fast_path.py`` checks both give the same dict.
FAST: dict[type, Callable[[Any], dict[str, Any] | None]] = {}


def plain_dumper(fields: tuple[tuple[str, type], ...]) -> Callable[[Any], dict[str, Any] | None]:
    """A dumper for a model whose fields are exactly ``fields`` (in their order), each of exactly
    the type given (no subclass, no None: then a dump holds each value as it is)."""
    count = len(fields)

    def dump(block: Any) -> dict[str, Any] | None:
        values = block.__dict__
        if len(values) != count:
            return None
        data = {}
        for name, kind in fields:
            value = values.get(name)
            if type(value) is not kind:
                return None
            data[name] = value
        return data

    return dump


def block_dict(block: Any) -> dict[str, Any]:
    """``block.model_dump(exclude_none=True)``: a new dict, whose values may be shared with the
    dict an earlier call for the same block returned."""
    fast = FAST.get(type(block))
    if fast is not None:
        data = fast(block)
        if data is not None:
            return data
    hit = _recent.get(id(block))
    if hit is not None and hit[0] is block:
        return dict(hit[1])
    data = block.model_dump(exclude_none=True)
    if len(_recent) >= RECENT:
        _recent.clear()  # the next request takes what the transcript just wrote: recent ones matter
    _recent[id(block)] = (block, data)
    return dict(data)
