"""Prompt caching as the Messages API accounts it, for the offline model and the local server.

A request marks up to four **breakpoints** (``cache_control: {"type": "ephemeral"}`` on a tools
entry, a system block or a content block). The API documents (Anthropic, "Prompt caching"):

* the prefix is ``tools``, then ``system``, then ``messages``, in that order, up to and including
  the marked block; a hit needs the exact same prefix (same model), byte for byte;
* at each breakpoint the API also checks the block boundaries before it (up to 20 blocks back)
  for an entry, and reads the longest prefix it finds;
* a prefix shorter than the model's **minimum cacheable length** is not cached (no error);
* an entry lives 5 minutes (``ttl: "1h"``: an hour), and every hit refreshes it;
* an entry exists once the first reply *begins*: concurrent requests with the same new prefix all
  write it, so callers send one first and the rest after it;
* more than 4 breakpoints, or one on a thinking block or an empty text block, is a 400.

``usage`` then splits the input: ``cache_read_input_tokens`` (the longest hit), then
``cache_creation_input_tokens`` (from there to the last breakpoint that meets the minimum), then
``input_tokens`` (the rest, after the last breakpoint); the three add up to the whole prompt.
Writes cost 1.25 x the input price (5 minutes), reads 0.1 x (:mod:`pytest_ctxeval.llm.pricing`).

:class:`PromptCache` keeps the entries of one run (one per run options, like one organisation's
cache on the API) on the run's clock (``clock``: seconds; ``time.monotonic`` unless a test gives
its own).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.tokens import estimate_block, estimate_text

__all__ = ["PromptCache", "CacheUsage", "MAX_BREAKPOINTS", "LOOKBACK_BLOCKS", "min_cacheable", "breakpoint_problem",
           "mark_last_block", "strip_cache_control"]

#: The API's limits (platform.claude.com/docs/en/build-with-claude/prompt-caching).
MAX_BREAKPOINTS = 4
LOOKBACK_BLOCKS = 20
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
#: Minimum cacheable prompt length by model-name prefix (the longest prefix wins), from the same
#: page: 4,096 for Opus 4.5 and later and Haiku 4.5 and later, 2,048 for Haiku 3.x, 1,024 for
#: Sonnet and the older Opus models. The 5.x generation is taken to keep its family's figure; the
#: offline reference model stands for the default Sonnet (1,024). Unknown models: 1,024.
MIN_CACHEABLE: dict[str, int] = {
    "claude-opus-4-5": 4096, "claude-opus-4-6": 4096, "claude-opus-4-7": 4096, "claude-opus-4-8": 4096,
    "claude-opus-5": 4096, "claude-haiku-4-5": 4096, "claude-haiku-5": 4096, "claude-haiku-3": 2048,
    "claude-sonnet": 1024, "claude-opus": 1024, "ctxeval-reference": 1024,
}
DEFAULT_MIN_CACHEABLE = 1024


def min_cacheable(model: str) -> int:
    """The minimum cacheable prompt length of ``model`` (see :data:`MIN_CACHEABLE`).

    >>> min_cacheable("claude-sonnet-5-5-20261001"), min_cacheable("claude-opus-4-1"), min_cacheable("x")
    (1024, 1024, 1024)
    >>> min_cacheable("claude-haiku-5-5"), min_cacheable("us.anthropic.claude-opus-5-5-v1:0")
    (4096, 4096)
    """
    model = model.rpartition("anthropic.")[2] if "anthropic." in model else model
    best = max((name for name in MIN_CACHEABLE if model.startswith(name)), key=len, default=None)
    return MIN_CACHEABLE[best] if best else DEFAULT_MIN_CACHEABLE


@dataclass(frozen=True)
class CacheUsage:
    """How one request's prompt splits: the three add up to the whole prompt."""

    input_tokens: int
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


def _blocks(body: dict[str, Any]) -> list[tuple[Any, int, dict[str, Any] | None]]:
    """The prompt's blocks in cache order: (canonical part for the hash, tokens, cache_control)."""
    out: list[tuple[Any, int, dict[str, Any] | None]] = []
    for tool in body.get("tools") or []:
        clean = {k: v for k, v in tool.items() if k != "cache_control"}
        out.append((("tool", clean), estimate_text(json.dumps(tool, ensure_ascii=False)), tool.get("cache_control")))
    system = body.get("system")
    if isinstance(system, str) and system:
        out.append((("system", system), estimate_text(system), None))
    elif isinstance(system, list):
        for block in system:
            clean = {k: v for k, v in block.items() if k != "cache_control"}
            out.append((("system", clean), estimate_block(block), block.get("cache_control")))
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        role = message.get("role")
        if isinstance(content, str):
            out.append(((i, role, content), estimate_text(content), None))
            continue
        for block in content or []:
            if not isinstance(block, dict):
                continue
            clean = {k: v for k, v in block.items() if k != "cache_control"}
            out.append(((i, role, clean), estimate_block(block), block.get("cache_control")))
    return out


def breakpoint_problem(body: dict[str, Any]) -> str | None:
    """Why the API would refuse the request's ``cache_control`` marks (a 400), or None."""
    count = 0
    ttls: list[str] = []
    places = [("tools", t) for t in body.get("tools") or []]
    if isinstance(body.get("system"), list):
        places += [("system", b) for b in body["system"]]
    for i, message in enumerate(body.get("messages") or []):
        if isinstance(message.get("content"), list):
            places += [(f"messages.{i}.content", b) for b in message["content"] if isinstance(b, dict)]
    for where, block in places:
        mark = block.get("cache_control")
        if mark is None:
            continue
        count += 1
        if not isinstance(mark, dict) or mark.get("type") != "ephemeral":
            return f"{where}: cache_control.type: Input should be 'ephemeral'"
        ttl = mark.get("ttl", "5m")
        if ttl not in TTL_SECONDS:
            return f"{where}: cache_control.ttl: Input should be '5m' or '1h'"
        ttls.append(ttl)
        if block.get("type") in ("thinking", "redacted_thinking"):
            return f"{where}: cache_control cannot be set on {block['type']} blocks"
        if block.get("type") == "text" and not block.get("text"):
            return f"{where}: cache_control cannot be set for empty text blocks"
    if count > MAX_BREAKPOINTS:
        return f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {count}."
    if "5m" in ttls and "1h" in ttls[ttls.index("5m"):]:
        return "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block"
    return None


class PromptCache:
    """The cache entries of one run; :meth:`account` splits a request's prompt and updates them."""

    def __init__(self, clock: Callable[[], float] | None = None):
        self.clock = clock or time.monotonic
        self._entries: dict[tuple[str, str], tuple[float, float]] = {}  # (model, prefix hash) -> (expires, ttl)
        self._lock = threading.Lock()

    def account(self, body: dict[str, Any], total: int) -> CacheUsage:
        """The split of ``total`` prompt tokens for ``body``, and the entries it reads or writes.

        Call it when the reply begins (after any validation error): a refused request neither
        reads nor writes the cache."""
        blocks = _blocks(body)
        marks = [i for i, (_, _, mark) in enumerate(blocks) if mark is not None]
        if not marks:
            return CacheUsage(total)
        model = str(body.get("model") or "")
        floor = min_cacheable(model)
        hashes, cumulative = [], []
        digest = hashlib.sha256()
        tokens = 0
        for part, n, _ in blocks[: marks[-1] + 1]:
            digest.update(json.dumps(part, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass"))
            digest.update(b"\x00")
            hashes.append(digest.copy().hexdigest())
            tokens += n
            cumulative.append(tokens)
        now = self.clock()
        with self._lock:
            read_at = -1
            for mark in marks:  # the longest entry at or up to 20 blocks before any breakpoint
                for i in range(mark, max(-1, mark - LOOKBACK_BLOCKS - 1), -1):
                    entry = self._entries.get((model, hashes[i]))
                    if entry is not None and entry[0] > now:
                        read_at = max(read_at, i)
                        break
            read = cumulative[read_at] if read_at >= 0 else 0
            written_to = read_at
            for mark in marks:
                if cumulative[mark] < floor:
                    continue  # too short to cache: processed as ordinary input
                ttl = TTL_SECONDS[blocks[mark][2].get("ttl", "5m")]  # type: ignore[union-attr]
                self._entries[(model, hashes[mark])] = (now + ttl, ttl)
                written_to = max(written_to, mark)
            if read_at >= 0:  # a hit refreshes the entry's lifetime
                key = (model, hashes[read_at])
                self._entries[key] = (now + self._entries[key][1], self._entries[key][1])
        written = (cumulative[written_to] if written_to >= 0 else 0) - read
        cached = read + written
        return CacheUsage(max(0, total - cached), written, read)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def mark_last_block(messages: list[dict[str, Any]], ttl: str | None = None) -> list[dict[str, Any]]:
    """``messages`` with a breakpoint on the last content block of the last message (a string
    content becomes one text block). The inputs are not changed.

    >>> mark_last_block([{"role": "user", "content": "hi"}])
    [{'role': 'user', 'content': [{'type': 'text', 'text': 'hi', 'cache_control': {'type': 'ephemeral'}}]}]
    """
    if not messages:
        return messages
    last = messages[-1]
    content = last.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    for i in range(len(blocks) - 1, -1, -1):
        block = blocks[i]
        if isinstance(block, dict) and block.get("type") not in ("thinking", "redacted_thinking") \
                and not (block.get("type") == "text" and not block.get("text")):
            mark = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
            blocks[i] = {**block, "cache_control": mark}
            return [*messages[:-1], {**last, "content": blocks}]
    return messages


def strip_cache_control(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` (a request, or the part of one a cassette key reads) without the ``cache_control``
    of its tools, system blocks and content blocks (a tool's input is data and is kept as it is):
    a breakpoint changes what a request costs, never what the model answers.

    >>> strip_cache_control({"system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}]})
    {'system': [{'type': 'text', 'text': 's'}]}
    """
    def block(b: Any) -> Any:
        if not isinstance(b, dict):
            return b
        out = {k: v for k, v in b.items() if k != "cache_control"}
        if b.get("type") == "tool_result" and isinstance(b.get("content"), list):
            out["content"] = [block(x) for x in b["content"]]
        return out

    out = dict(body)
    if isinstance(body.get("system"), list):
        out["system"] = [block(b) for b in body["system"]]
    if isinstance(body.get("tools"), list):
        out["tools"] = [block(t) for t in body["tools"]]
    if isinstance(body.get("messages"), list):
        out["messages"] = [{**m, "content": [block(b) for b in m["content"]]}
                           if isinstance(m, dict) and isinstance(m.get("content"), list) else m
                           for m in body["messages"]]
    return out
