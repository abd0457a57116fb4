"""Cassettes: one file per model request, keyed by a stable hash of the request body.

:class:`CassetteStore` sits in front of the SDK client (:meth:`pytest_ctxeval.llm.base.LLM.send`),
so a recorded reply needs no HTTP request and the real requests keep the SDK's own HTTP client
(proxies, keep-alive, timeouts) and retries. A successful reply is stored, and so is a
prompt-too-long error (deterministic, and the engine's PTL path depends on it). Three modes:

* ``cache`` (the ``anthropic`` backend with a cassette folder): a recorded request is answered from
  disk, anything else goes to the API and its successful reply is stored. A rerun with unchanged
  prompts makes zero API calls.
* ``record``: like ``cache``, but always asks the API and overwrites what was stored.
* ``replay``: never opens a network connection. A request that was not recorded gets a 404 whose
  message is a readable deepdiff against the nearest recorded request (same task first), so a
  prompt change shows as "messages[3].content: 'old' -> 'new'", not as a hash.

The key covers what determines the reply: model, system, messages, tools, tool_choice, max_tokens,
output_config, context_management, metadata and the task header. Headers are never stored, so API
keys and auth headers cannot reach disk; as a second guard every stored string is scanned for the
key in use and for key- or token-shaped strings (every shape :mod:`pytest_ctxeval.core.redact` knows:
Anthropic, OpenAI, AWS, GitHub, GitLab, Slack, Google, Stripe, JWT, bearer tokens, private keys),
which are replaced by ``[REDACTED:<kind>]``. The request key is computed before scrubbing, so a
replay still finds the cassette.

A reply is stored so that replay returns its original bytes while no key-shaped string is written:

* a key-shaped string the reply shares with the request (the model quoting a key from the session)
  is stored as ``[REDACTED:<kind>:<hash>]``, a keyed sha256 of the value; replay takes the value
  back from the incoming request, which is the same request (it has the same key) and holds it;
* one that appears in no request (the model wrote it) cannot be a secret the session gave it: it
  is stored hex-encoded as ``[KEYSHAPED:<hex>]`` (not key-shaped) and decoded on replay;
* the API key in use is never stored in any form (``[REDACTED:anthropic]``).

So a recorded run replays exactly, and later requests never carry ``[REDACTED:…]`` the recording
did not. Every reader (:meth:`LLM.send`, batches, batch stages, :class:`CassetteTransport`) takes a reply
through :meth:`CassetteStore.recorded`, which restores the placeholders. A cassette that is not
valid JSON or lacks ``response.json`` is reported naming its file and field (a ``ModelError`` in
replay mode; asked again and re-recorded otherwise), never as a connection error.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
from pathlib import Path
from typing import Any

import httpx2

from ..errors import ModelError, flag
from ..core.redact import redact, secret_values


class BadCassette(ValueError):
    """A cassette file that exists but cannot be used (what and where in the message)."""

__all__ = ["request_key", "CassetteStore", "BadCassette", "encode_reply", "decode_reply", "CassetteTransport", "TransportStats", "MODES", "KEY_FIELDS"]


class TransportStats:
    """Requests answered from cassettes (``hits``) and forwarded to the API (``forwarded``),
    shared by the sync and async transports of one model client."""

    def __init__(self) -> None:
        self.hits = 0
        self.forwarded = 0
        self._lock = threading.Lock()

    def hit(self) -> None:
        with self._lock:
            self.hits += 1

    def forward(self) -> None:
        with self._lock:
            self.forwarded += 1

MODES = ("cache", "record", "replay")
KEY_FIELDS = ("model", "system", "messages", "tools", "tool_choice", "max_tokens", "output_config",
              "context_management", "metadata", "stop_sequences", "thinking")


def request_key(body: dict[str, Any], task: str | None = None) -> str:
    """sha256 of the canonical JSON of the fields that determine a reply. Prompt-cache
    breakpoints (``cache_control``) change what a request costs, not the reply: they are left out,
    so cassettes recorded with or without them answer the same request.

    >>> request_key({"model": "m", "messages": []}) == request_key({"messages": [], "model": "m"})
    True
    """
    canonical = {k: body[k] for k in KEY_FIELDS if k in body}
    canonical["_task"] = task or "chat"
    data = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    if '"cache_control"' in data:  # only then walk the body to take the breakpoints out
        from .prompt_cache import strip_cache_control

        data = json.dumps(strip_cache_control(canonical), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


def _scrub(value: Any, secret: str | None) -> Any:
    if isinstance(value, str):
        if secret and secret in value:
            value = value.replace(secret, "[REDACTED:anthropic]")
        return redact(value)[0]
    if isinstance(value, list):
        return [_scrub(v, secret) for v in value]
    if isinstance(value, dict):
        return {k: _scrub(v, secret) for k, v in value.items()}
    return value


_PLACEHOLDER = re.compile(r"\[REDACTED:([a-z-]+):([0-9a-f]{16})\]|\[KEYSHAPED:((?:[0-9a-f]{2}){1,2048})\]")


def _strings(value: Any) -> list[str]:
    out, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


def _tag(key: str, value: str) -> str:
    return hashlib.sha256(f"{key}\x00{value}".encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _request_values(key: str, request: dict[str, Any]) -> dict[str, str]:
    """tag -> value of every key-shaped value in the request body."""
    return {_tag(key, v): v for text in _strings(request) for _, v in secret_values(text)}


def encode_reply(value: Any, key: str, request: dict[str, Any], secret: str | None) -> Any:
    """The reply as stored: key-shaped values replaced by restorable placeholders (module docstring)."""
    known = set(_request_values(key, request).values())

    def one(text: str) -> str:
        if secret and secret in text:
            text = text.replace(secret, "[REDACTED:anthropic]")
        for kind, v in sorted(secret_values(text), key=lambda kv: -len(kv[1])):
            if v in known:
                text = text.replace(v, f"[REDACTED:{kind}:{_tag(key, v)}]")
            else:
                text = text.replace(v, f"[KEYSHAPED:{v.encode('utf-8', 'surrogatepass').hex()}]")
        return redact(text)[0]

    return _map_strings(value, one)


def decode_reply(value: Any, key: str, request: dict[str, Any]) -> Any:
    """The stored reply with its placeholders replaced by the original values (module docstring)."""
    values: dict[str, str] | None = None  # read from the request only when a placeholder needs it

    def one(text: str) -> str:
        nonlocal values
        if "[REDACTED:" not in text and "[KEYSHAPED:" not in text:
            return text
        if values is None:
            values = _request_values(key, request)

        def back(m: re.Match[str]) -> str:
            if m.group(3) is not None:
                return bytes.fromhex(m.group(3)).decode("utf-8", "surrogatepass")
            return values.get(m.group(2), m.group(0)) if values is not None else m.group(0)

        return _PLACEHOLDER.sub(back, text)

    return _map_strings(value, one)


def _map_strings(value: Any, f: Any) -> Any:
    if isinstance(value, str):
        return f(value)
    if isinstance(value, list):
        return [_map_strings(v, f) for v in value]
    if isinstance(value, dict):
        return {k: _map_strings(v, f) for k, v in value.items()}
    return value


class CassetteStore:
    """``<dir>/<key[:2]>/<key>.json`` holding ``{"task", "request", "response"}``."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root)
        self._lock = threading.Lock()

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The cassette recorded for ``key``, None when there is none; :class:`BadCassette` naming
        the file and the field when there is one that cannot be used."""
        p = self.path(key)
        if not p.is_file():
            return None
        from ..core.documents import BadDocument, loads_strict
        from ..core.limits import MAX_JSON_BYTES

        try:
            if p.stat().st_size > MAX_JSON_BYTES:
                raise BadCassette(f"{p}: over the {MAX_JSON_BYTES:,}-byte limit (limits.MAX_JSON_BYTES)")
            record = loads_strict(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise BadCassette(f"{p}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
        except BadDocument as exc:
            raise BadCassette(f"{p}: {exc}") from None
        response = record.get("response") if isinstance(record, dict) else None
        if not isinstance(response, dict):
            raise BadCassette(f"{p}: response: missing or not an object")
        if not isinstance(response.get("json"), dict):
            raise BadCassette(f"{p}: response.json: {type(response.get('json')).__name__}, expected the reply object")
        status = response.get("status", 200)
        if isinstance(status, bool) or not isinstance(status, int) or not 200 <= status <= 599:
            raise BadCassette(f"{p}: response.status: {status!r} is not an HTTP status")
        return record

    def recorded(self, key: str, task: str, request: dict[str, Any], mode: str | None) -> dict[str, Any] | None:
        """The response recorded for ``request`` (``{"status", "json"}``) with its placeholders
        restored (:func:`decode_reply`), as every reader of the store takes it; None when none is
        recorded. A broken cassette is a :class:`~pytest_ctxeval.errors.ModelError` naming its file
        and field in ``replay`` mode, and None otherwise (the request is asked again and re-recorded)."""
        try:
            found = self.get(key)
        except BadCassette as exc:
            if mode != "replay":
                return None
            raise ModelError(f"{task} request: broken cassette: {exc}; record it again with "
                             f"{flag('backend record')}") from None
        if found is None:
            return None
        response = found["response"]
        return {**response, "status": response.get("status", 200), "json": decode_reply(response["json"], key, request)}

    def put(self, key: str, task: str, request: dict[str, Any], response: dict[str, Any], secret: str | None) -> Path:
        p = self.path(key)
        record = {"task": task,
                  "request": _scrub({k: request[k] for k in KEY_FIELDS if k in request}, secret),
                  "response": encode_reply(response, key, request, secret)}
        with self._lock:
            p.parent.mkdir(parents=True, exist_ok=True)
            # Created exclusively under a random name: a planted symlink is never followed.
            fd, tmp_name = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(json.dumps(record, indent=1, ensure_ascii=False, sort_keys=True))
                os.replace(tmp_name, p)
            except BaseException:
                Path(tmp_name).unlink(missing_ok=True)
                raise
        return p

    def all(self) -> list[dict[str, Any]]:
        out = []
        if self.root.is_dir():
            for p in sorted(self.root.glob("*/*.json")):
                try:
                    out.append(json.loads(p.read_text(encoding="utf-8")))
                except (OSError, ValueError):
                    continue
        return out

    def nearest_diff(self, task: str, request: dict[str, Any]) -> str:
        """A short, readable deepdiff between ``request`` and the most similar recorded one."""
        from deepdiff import DeepDiff

        candidates = [c for c in self.all() if c.get("task") == task] or self.all()
        if not candidates:
            return f"no cassettes recorded under {self.root} (record them with {flag('backend record')})"
        wanted = {k: request[k] for k in KEY_FIELDS if k in request}
        best, best_size = None, None
        for c in candidates:
            diff = DeepDiff(c.get("request", {}), wanted, ignore_order=False, verbose_level=2)
            size = len(diff.affected_paths) if hasattr(diff, "affected_paths") else len(str(diff))
            if best_size is None or size < best_size:
                best, best_size = diff, size
        return _describe_diff(best)


def _short(value: Any, n: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    text = " ".join(text.split())
    return repr(text if len(text) <= n else text[: n - 1] + "…")


def _changed(old: Any, new: Any, n: int = 80) -> str:
    """``'old' -> 'new'``; two long strings are shown from a little before their first difference,
    so a changed word deep in a prompt is visible.

    >>> _changed("x" * 200 + "old tail", "x" * 200 + "new tail")
    "'…xxxxxxxxxxxxxxxxxxxxold tail' -> '…xxxxxxxxxxxxxxxxxxxxnew tail'"
    """
    if not (isinstance(old, str) and isinstance(new, str)):
        return f"{_short(old, n)} -> {_short(new, n)}"
    at = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
    start = max(0, at - 20)
    lead = "…" if start else ""
    return f"{_short(lead + old[start:], n)} -> {_short(lead + new[start:], n)}"


def _describe_diff(diff: Any) -> str:
    lines = []
    for kind, changes in (diff or {}).items():
        if kind == "values_changed":
            for path, ch in changes.items():
                lines.append(f"{path.replace('root', 'request', 1)}: {_changed(ch['old_value'], ch['new_value'])}")
        elif kind in ("dictionary_item_added", "iterable_item_added"):
            for path in changes:
                lines.append(f"{str(path).replace('root', 'request', 1)}: added")
        elif kind in ("dictionary_item_removed", "iterable_item_removed"):
            for path in changes:
                lines.append(f"{str(path).replace('root', 'request', 1)}: removed")
        elif kind == "type_changes":
            for path, ch in changes.items():
                lines.append(f"{path.replace('root', 'request', 1)}: type {ch['old_type'].__name__} -> {ch['new_type'].__name__}")
    if not lines:
        return "the nearest recorded request differs only in fields outside the key"
    more = f" (+{len(lines) - 6} more differences)" if len(lines) > 6 else ""
    return "nearest recorded request differs: " + "; ".join(lines[:6]) + more


class CassetteTransport(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """An httpx2 transport that answers from cassettes and records what it forwards (for an
    ``httpx2`` client of your own; the backends use the store directly, in front of the SDK).

    ``inner``/``ainner`` are the real sync/async transports (None in replay mode). ``stats``
    counts cassette hits and the requests that reached the API: a rerun from cache forwards 0.
    """

    def __init__(self, store: CassetteStore, mode: str, inner: Any = None, secret: str | None = None,
                 ainner: Any = None, stats: TransportStats | None = None):
        if mode not in MODES:
            raise ValueError(f"cassette mode must be one of {MODES}, not {mode!r}")
        if mode != "replay" and inner is None and ainner is None:
            raise ValueError(f"cassette mode {mode!r} needs a transport to forward to")
        self.store = store
        self.mode = mode
        self.inner = inner      # sync transport
        self.ainner = ainner    # async transport
        self.secret = secret
        self.stats = stats or TransportStats()

    def _lookup(self, request: httpx2.Request) -> tuple[str | None, str, dict[str, Any] | None, httpx2.Response | None]:
        if request.method != "POST" or not request.url.path.endswith("/v1/messages"):
            return None, "", None, None  # batches and other endpoints pass through
        try:
            body = json.loads(request.content)
        except ValueError:
            return None, "", None, None
        task = request.headers.get("x-ctxeval-task", "chat")
        key = request_key(body, task)
        if self.mode != "record":
            try:
                resp = self.store.recorded(key, task, body, self.mode)
            except ModelError as exc:
                return key, task, body, httpx2.Response(400, json={"type": "error", "error": {
                    "type": "invalid_request_error", "message": str(exc)}}, headers={"x-should-retry": "false"})
            if resp is not None:
                self.stats.hit()
                return key, task, body, httpx2.Response(resp["status"], json=resp["json"],
                                                        headers={"x-ctxeval-cassette": "hit"})
        if self.mode == "replay":
            message = (f"cassette miss in replay mode (no network): {self.store.nearest_diff(task, body)}; "
                       f"record with {flag('backend record')} and {flag(f'cassettes {self.store.root}')}")
            return key, task, body, httpx2.Response(404, json={"type": "error", "error": {
                "type": "not_found_error", "message": message}}, headers={"x-should-retry": "false"})
        return key, task, body, None

    def _keep(self, key: str | None, task: str, body: dict[str, Any] | None, response: httpx2.Response) -> None:
        if key is None or body is None or response.status_code != 200:
            return
        try:
            payload = response.json()
        except ValueError:
            return
        self.store.put(key, task, body, {"status": 200, "json": payload}, self.secret)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.read()
        key, task, body, answer = self._lookup(request)
        if answer is not None:
            return answer
        if self.inner is None:
            return httpx2.Response(404, json={"type": "error", "error": {
                "type": "not_found_error", "message": f"replay mode serves only /v1/messages, not {request.url.path}"}},
                headers={"x-should-retry": "false"})
        self.stats.forward()
        response = self.inner.handle_request(request)
        response.read()
        self._keep(key, task, body, response)
        return response

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        key, task, body, answer = self._lookup(request)
        if answer is not None:
            return answer
        if self.ainner is None:
            return httpx2.Response(404, json={"type": "error", "error": {
                "type": "not_found_error", "message": f"replay mode serves only /v1/messages, not {request.url.path}"}},
                headers={"x-should-retry": "false"})
        self.stats.forward()
        response = await self.ainner.handle_async_request(request)
        await response.aread()
        self._keep(key, task, body, response)
        return response

    def close(self) -> None:
        if self.inner is not None and hasattr(self.inner, "close"):
            self.inner.close()

    async def aclose(self) -> None:
        if self.ainner is not None and hasattr(self.ainner, "aclose"):
            await self.ainner.aclose()
