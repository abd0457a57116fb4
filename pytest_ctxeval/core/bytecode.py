"""Compiled Jinja templates kept in memory for the life of the process, by template file and the
sha1 of its source (jinja2's own :class:`~jinja2.BytecodeCache` protocol), so a prompt or rubric
that every run loads is compiled once, not once per run.

The key is the source's checksum, never its modification time: a template edited between two runs
(or rewritten within one timestamp tick, as tests do) is compiled again. Use one cache per
environment configuration (the compiled code depends on the lexer's settings).
"""

from __future__ import annotations

import threading
from types import CodeType

import jinja2
from jinja2 import nodes
from jinja2.bccache import Bucket, BytecodeCache

__all__ = ["MemoryBytecodeCache", "from_source"]


def from_source(env: jinja2.Environment, source: str, codes: dict[str, CodeType], limit: int,
                tree: nodes.Template | None = None) -> jinja2.Template:
    """``env.from_string(source)`` with the compiled code kept in ``codes`` by source (at most
    ``limit`` entries, oldest dropped first): for templates made from strings, which jinja's
    bytecode cache does not see. ``codes`` must serve environments of one configuration. ``tree``:
    ``env.parse(source)`` when the caller has it (compiled from it instead of parsing again; an
    error compiling it is raised by compiling the source, so it names the source as usual)."""
    code = codes.get(source)
    if code is None:
        code = None
        if tree is not None:
            try:
                code = env.compile(tree)
            except jinja2.TemplateError:
                code = None
        if code is None:
            code = env.compile(source)
        while len(codes) >= limit:
            codes.pop(next(iter(codes)), None)
        codes[source] = code
    return env.template_class.from_code(env, code, env.make_globals(None), None)


class MemoryBytecodeCache(BytecodeCache):
    """Compiled template code by (template, source checksum), at most ``size`` templates."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._codes: dict[tuple[str, str], CodeType] = {}
        self._lock = threading.Lock()

    def load_bytecode(self, bucket: Bucket) -> None:
        with self._lock:
            code = self._codes.get((bucket.key, bucket.checksum))
        if code is not None:
            bucket.code = code

    def dump_bytecode(self, bucket: Bucket) -> None:
        if bucket.code is None:
            return
        with self._lock:
            if len(self._codes) >= self.size:
                self._codes.pop(next(iter(self._codes)))
            self._codes[(bucket.key, bucket.checksum)] = bucket.code

    def clear(self) -> None:
        with self._lock:
            self._codes.clear()
