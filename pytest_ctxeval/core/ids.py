"""Deterministic identifiers, so two runs of one scenario produce byte-identical results."""

from __future__ import annotations

import hashlib
import uuid

__all__ = ["IdFactory"]

_NAMESPACE = uuid.UUID("6f1c2b1e-9d0a-4b55-8c1e-c7e5a0d3f001")


class IdFactory:
    """Message uuids, tool_use ids and message ids derived from a seed and a counter.

    >>> ids = IdFactory("demo")
    >>> ids.uuid() == IdFactory("demo").uuid()
    True
    >>> ids.tool_use_id().startswith("toolu_")
    True
    """

    def __init__(self, seed: str):
        self.seed = seed
        self._n = 0

    def _next(self, kind: str) -> str:
        self._n += 1
        return f"{self.seed}:{kind}:{self._n}"

    def uuid(self) -> str:
        return str(uuid.uuid5(_NAMESPACE, self._next("uuid")))

    def tool_use_id(self) -> str:
        return "toolu_" + hashlib.sha256(self._next("tool").encode()).hexdigest()[:24]

    def message_id(self) -> str:
        return "msg_" + hashlib.sha256(self._next("msg").encode()).hexdigest()[:24]
