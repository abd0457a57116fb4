"""Deterministic identifiers, so two runs of one scenario produce byte-identical results."""

from __future__ import annotations

import hashlib
import uuid

__all__ = ["IdFactory", "uuid5"]

_NAMESPACE = uuid.UUID("6f1c2b1e-9d0a-4b55-8c1e-c7e5a0d3f001")


_NAMESPACE_BYTES = _NAMESPACE.bytes


def uuid5(name: str) -> str:
    """``str(uuid.uuid5(_NAMESPACE, name))`` without the :class:`uuid.UUID` object: the SHA-1 of
    the namespace and the name, version 5 and the RFC 4122 variant set in its first 16 bytes (a
    session writes a uuid per message; ``tests/test_fast_paths.py`` checks both give the same ids).

    >>> import uuid
    >>> uuid5("demo:uuid:1") == str(uuid.uuid5(_NAMESPACE, "demo:uuid:1"))
    True
    """
    digest = bytearray(hashlib.sha1(_NAMESPACE_BYTES + name.encode("utf-8"), usedforsecurity=False).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # variant RFC 4122
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


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
        return uuid5(self._next("uuid"))

    def tool_use_id(self) -> str:
        return "toolu_" + hashlib.sha256(self._next("tool").encode()).hexdigest()[:24]

    def message_id(self) -> str:
        return "msg_" + hashlib.sha256(self._next("msg").encode()).hexdigest()[:24]
