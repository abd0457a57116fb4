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

__all__ = ["block_dict", "RECENT"]

RECENT = 4_096
_recent: dict[int, tuple[Any, dict[str, Any]]] = {}


def block_dict(block: Any) -> dict[str, Any]:
    """``block.model_dump(exclude_none=True)``: a new dict, whose values may be shared with the
    dict an earlier call for the same block returned."""
    hit = _recent.get(id(block))
    if hit is not None and hit[0] is block:
        return dict(hit[1])
    data = block.model_dump(exclude_none=True)
    if len(_recent) >= RECENT:
        _recent.clear()  # the next request takes what the transcript just wrote: recent ones matter
    _recent[id(block)] = (block, data)
    return dict(data)
