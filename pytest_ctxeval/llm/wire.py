"""The Messages API as it really answers, around the reference model (served by :mod:`.server`).

:class:`WireModel` is an ``httpx2`` handler (``handle(request) -> response``) that wraps a
:class:`~pytest_ctxeval.llm.offline.ReferenceModel` (which writes the *text* of each reply) and adds
what the real API does around that text, as its documentation describes it:

* **Auth and routing**: ``x-api-key`` (or ``Authorization: Bearer``) on ``/v1/messages``; the
  Bedrock shape ``/model/{model}/invoke[-with-response-stream]`` with a SigV4 signature verified
  against :attr:`WireModel.aws` (or a Bedrock API key as bearer); the Vertex shape
  ``/v1/projects/{p}/locations/{r}/publishers/anthropic/models/{model}:rawPredict|streamRawPredict``
  with ``Authorization: Bearer`` (:mod:`.wire_auth`, which also answers their errors in their own
  shapes). A wrong key is 401 ``authentication_error``; a model not in :attr:`WireModel.models` is
  404 ``not_found_error``.
* **Errors** with the documented body ``{"type": "error", "error": {"type", "message"},
  "request_id"}`` and headers ``request-id``, ``x-should-retry`` and, for 429/529, ``retry-after``.
* **Thinking first**: models think by default (``thinking`` absent or ``adaptive``/``enabled``);
  a reply starts with a signed ``thinking`` block and a ``redacted_thinking`` block, and thinking
  tokens count toward ``max_tokens``. Thinking blocks sent back are checked: a signature this
  server did not make is a 400, as a model that verifies signatures answers.
* **Stop reasons**: ``max_tokens`` (text cut where the budget ends), ``model_context_window_exceeded``
  (input plus output reached the window), and, from the fault plan, ``refusal`` and ``pause_turn``
  (the turn continues when the paused content is sent back as the last assistant message).
* **Structured outputs**: ``output_config.format`` JSON schemas are checked as the API checks
  them (:func:`schema_problem`): numeric and string bounds are refused, objects must set
  ``additionalProperties: false``.
* **Streaming** (``"stream": true``): the same reply as server-sent events.
* **Message Batches** (:mod:`.wire_batches`): create, poll, results with ``errored`` and
  ``expired`` entries.

Every request passes through :meth:`WireModel.handle`, which records it in :attr:`WireModel.log`
and bounds nothing: tests read how many requests came, how many were in flight at once
(:attr:`WireModel.max_in_flight`) and what each carried. That method is the seam for more API
behaviour. Prompt caching is the reference model's (:mod:`.prompt_cache`): the ``cache_control``
breakpoints pass through to it and ``usage`` carries its split of the prompt.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import httpx2

from ..core.tokens import estimate_text
from .offline import ReferenceModel
from .wire_auth import AwsKeys, aws_event_stream, bedrock_error, plain_model, provider_body_problem, sigv4_problem, vertex_error
from .wire_errors import error_response

__all__ = ["WireModel", "WIRE_FAULTS", "schema_problem", "KNOWN_MODELS"]

#: Models the server answers for (any other is a 404, as an unknown model is on the API).
KNOWN_MODELS = ("claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5", "claude-sonnet-5", "ctxeval-reference",
                "claude-unpriced-test")
#: Faults of the wire, on top of :data:`pytest_ctxeval.llm.offline.FAULTS` (played per task, one
#: per request): a refusal, a paused turn, a reply cut at max_tokens whatever the budget.
WIRE_FAULTS = ("refusal", "pause_turn", "truncate", "expired", "errored")

_BEDROCK = re.compile(r"^/model/(?P<model>[^/]+)/(?P<verb>invoke|invoke-with-response-stream)$")
_VERTEX = re.compile(r"^/v1/projects/[^/]+/locations/[^/]+/publishers/anthropic/models/(?P<model>[^/:]+)"
                     r":(?P<verb>rawPredict|streamRawPredict)$")
#: Keywords the structured-output schema accepts (anything else is refused, as the API does).
_SCHEMA_KEYWORDS = {"type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf",
                    "allOf", "$ref", "$defs", "definitions", "description", "title", "default", "format"}
_STRING_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid",
                   "text"}


def schema_problem(schema: Any, path: str = "output_config.format.schema") -> str | None:
    """Why the API would refuse ``schema`` for structured outputs, or None.

    >>> schema_problem({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}},
    ...                 "additionalProperties": False})
    "output_config.format.schema.properties.n: For 'integer' type, property 'minimum' is not supported"
    >>> schema_problem({"type": "object", "properties": {}}) is not None
    True
    """
    if not isinstance(schema, dict):
        return f"{path}: a schema must be an object"
    kind = schema.get("type")
    for key in schema:
        if key not in _SCHEMA_KEYWORDS and not (key == "minItems" and schema[key] in (0, 1)):
            return f"{path}: For {kind!r} type, property {key!r} is not supported"
    if kind == "object":
        if schema.get("additionalProperties") is not False:
            return f"{path}: For 'object' type, 'additionalProperties' must be explicitly set to false"
        for name, sub in (schema.get("properties") or {}).items():
            problem = schema_problem(sub, f"{path}.properties.{name}")
            if problem:
                return problem
    if kind == "string" and "format" in schema and schema["format"] not in _STRING_FORMATS:
        return f"{path}: string format {schema['format']!r} is not supported"
    if "items" in schema:
        problem = schema_problem(schema["items"], f"{path}.items")
        if problem:
            return problem
    for key in ("anyOf", "allOf"):
        for i, sub in enumerate(schema.get(key) or []):
            problem = schema_problem(sub, f"{path}.{key}[{i}]")
            if problem:
                return problem
    for name, sub in (schema.get("$defs") or {}).items():
        problem = schema_problem(sub, f"{path}.$defs.{name}")
        if problem:
            return problem
    return None


class WireModel:
    """The Messages API's wire behaviour around a :class:`ReferenceModel` (see the module doc).

    ``thinking_tokens``: what the model thinks by default per reply (counted toward ``max_tokens``
    and ``output_tokens``). ``outage``: a status every Messages request answers (529 for a
    sustained overload). ``delay``: seconds each Messages request takes (to observe concurrency).
    ``retry_after_ms``: sent with 429/529 beside the API's ``retry-after`` so the SDK's retries
    wait a millisecond in tests (``None`` sends ``retry-after`` alone, as the API does).
    ``context_window``: the model's window, which bounds input plus output.
    """

    def __init__(self, reference: ReferenceModel | None = None, *, api_key: str = "sk-ant-test-key",
                 models: Iterable[str] = KNOWN_MODELS, thinking_tokens: int = 600, context_window: int = 200_000,
                 retry_after_ms: str | None = "1", secret: bytes = b"ctxeval-wire-secret"):
        self.reference = reference or ReferenceModel()
        self.api_key = api_key
        self.models = set(models)
        self.thinking_tokens = thinking_tokens
        self.context_window = context_window
        self.retry_after_ms = retry_after_ms
        self.outage: int | None = None
        self.delay = 0.0
        self.log: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._secret = secret
        #: The AWS keys a Bedrock SigV4 signature must be made with (:mod:`.wire_auth`).
        self.aws = AwsKeys()
        self._plan: dict[str, deque[str]] = {}
        self._lock = threading.Lock()
        self._ids = 0
        self._seen: dict[str, int] = {}
        from .wire_batches import Batches

        self.batches = Batches(self)

    # -- plan and bookkeeping ------------------------------------------------------------------

    def plan(self, task: str, faults: Sequence[str]) -> None:
        """Queue faults for ``task`` (``*`` for any): wire faults (:data:`WIRE_FAULTS`) are played
        here, the reference model's own (``overloaded``, ``rate_limit``, ...) are passed to it."""
        with self._lock:
            self._plan.setdefault(task, deque()).extend(faults)

    def _next_fault(self, task: str) -> str | None:
        with self._lock:
            for key in (task, "*"):
                queue = self._plan.get(key)
                if queue:
                    return queue.popleft()
        return None

    def next_id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}_{self._ids:06d}"

    def content_id(self, prefix: str, content: bytes) -> str:
        """An id made from ``content`` (and how many times the same content came before)."""
        digest = hashlib.sha256(content).hexdigest()[:20]
        with self._lock:
            n = self._seen.get(digest, 0) + 1
            self._seen[digest] = n
        return f"{prefix}_{digest}" + (f"_{n}" if n > 1 else "")

    def messages_requests(self) -> list[dict[str, Any]]:
        """The logged requests that reached a Messages endpoint (any provider shape)."""
        return [r for r in self.log if r["endpoint"] == "messages"]

    def sign(self, text: str) -> str:
        """The signature this server gives a thinking block's text."""
        return base64.b64encode(hmac.new(self._secret, text.encode(), hashlib.sha256).digest()).decode()

    # -- the seam ------------------------------------------------------------------------------

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        """Answer one HTTP request as the API would (the one entry point; see the module doc)."""
        path = request.url.path
        # Ids follow from what was asked (the n-th identical request gets its own), not from the
        # arrival order: a concurrent run then records the same cassettes as a serial one.
        request_id = self.content_id("req_wire", request.method.encode() + path.encode() + request.content)
        entry: dict[str, Any] = {"method": request.method, "path": path, "request_id": request_id,
                                 "headers": {k.lower(): v for k, v in request.headers.items()
                                             if k.lower() not in ("x-api-key", "authorization")},
                                 "endpoint": "other"}
        with self._lock:
            self.log.append(entry)
        provider, model, stream = "anthropic", None, False
        if m := _BEDROCK.match(path):
            provider, model, stream = "bedrock", m.group("model"), m.group("verb").endswith("stream")
        elif m := _VERTEX.match(path):
            provider, model, stream = "vertex", m.group("model"), m.group("verb").startswith("stream")
        entry["provider"] = provider
        problem = self._auth_problem(provider, request)
        if problem:
            if provider == "bedrock":
                kind = "UnrecognizedClientException" if "token" in problem else "InvalidSignatureException"
                return bedrock_error(403, problem, kind, request_id)
            if provider == "vertex":
                return vertex_error(401, problem, request_id)
            return error_response(401, problem, request_id=request_id)
        if path.startswith("/v1/messages/batches"):
            entry["endpoint"] = "batches"
            return self.batches.handle(request, request_id)
        if provider == "anthropic" and not (request.method == "POST" and path == "/v1/messages"):
            return error_response(404, f"Not found: {request.method} {path}", request_id=request_id)
        entry["endpoint"] = "messages"
        try:
            body = json.loads(request.content)
        except ValueError:
            return error_response(400, "The request body is not valid JSON.", request_id=request_id)
        if model is not None:  # Bedrock and Vertex: the model is in the path, the version in the body
            problem = provider_body_problem(provider, body)
            if problem:
                return (bedrock_error(400, problem, "ValidationException", request_id) if provider == "bedrock"
                        else vertex_error(400, problem, request_id))
            body["model"] = plain_model(provider, model)
        stream = stream or bool(body.get("stream"))
        entry["body"] = body
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                time.sleep(self.delay)
            return self.messages(body, task=request.headers.get("x-ctxeval-task", "chat"),
                                 window=request.headers.get("x-ctxeval-context-window"), request_id=request_id,
                                 stream=stream, provider=provider)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _auth_problem(self, provider: str, request: httpx2.Request) -> str | None:
        auth = request.headers.get("authorization", "")
        if provider == "bedrock":  # a SigV4 signature made with self.aws's keys, or a Bedrock API key
            if auth.startswith("Bearer "):
                return None if hmac.compare_digest(auth[7:], self.api_key) else \
                    "The security token included in the request is invalid."
            return sigv4_problem(request, self.aws, service="bedrock")
        if provider == "vertex":
            return None if auth == f"Bearer {self.api_key}" else (
                "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or "
                "other valid authentication credential.")
        key = request.headers.get("x-api-key") or (auth[7:] if auth.startswith("Bearer ") else None)
        if key is None:
            return "x-api-key header is required"
        return None if key == self.api_key else "invalid x-api-key"

    # -- Messages ------------------------------------------------------------------------------

    def messages(self, body: dict[str, Any], *, task: str, window: str | None, request_id: str,
                 stream: bool = False, provider: str = "anthropic") -> httpx2.Response:
        """A ``/v1/messages`` request: validation, then the reference model's text as a full reply."""
        def fail(status: int, message: str) -> httpx2.Response:
            return error_response(status, message, request_id=request_id, retry_after_ms=self.retry_after_ms)

        if self.outage:
            return fail(self.outage, "Overloaded" if self.outage == 529 else "Internal server error")
        model = body.get("model")
        if model not in self.models:
            return fail(404, f"model: {model}")
        problem = self._request_problem(body)
        if problem:
            return fail(400, problem)
        fault = self._next_fault(task)
        messages = list(body.get("messages") or [])
        prefix = ""
        if messages and messages[-1].get("role") == "assistant":  # a paused turn sent back: continue it
            prefix = "".join(b.get("text", "") for b in _blocks(messages[-1]) if b.get("type") == "text")
            messages = messages[:-1]
        inner_body = {**body, "messages": _without_thinking(messages)}
        inner_body.pop("stream", None)
        headers = {"x-ctxeval-task": task, **({"x-ctxeval-context-window": window} if window else {})}
        if fault and fault not in WIRE_FAULTS:
            self.reference.add_faults(task, [fault])
        try:
            inner = self.reference(httpx2.Request("POST", "http://reference/v1/messages", json=inner_body,
                                                  headers=headers))
        except httpx2.TransportError as exc:  # a scripted timeout or reset: the connection drops
            raise ConnectionResetError(str(exc)) from None
        if inner.status_code != 200:
            err = inner.json().get("error", {})
            return fail(inner.status_code, err.get("message", "error"))
        reply = inner.json()
        text = "".join(b.get("text", "") for b in reply["content"] if b.get("type") == "text")
        if prefix and text.startswith(prefix):
            text = text[len(prefix):]
        message = self._shape(body, text, fault, reply["usage"], window, request_id)
        if stream:
            from .wire_batches import sse_events

            if provider == "bedrock":
                return httpx2.Response(200, content=aws_event_stream(sse_events(message)), headers={
                    "content-type": "application/vnd.amazon.eventstream", "request-id": request_id})
            return httpx2.Response(200, content=sse_events(message), headers={
                "content-type": "text/event-stream", "request-id": request_id})
        return httpx2.Response(200, json=message, headers={"request-id": request_id})

    def _request_problem(self, body: dict[str, Any]) -> str | None:
        if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
            return "max_tokens: Field required (a positive integer)"
        fmt = (body.get("output_config") or {}).get("format")
        if fmt is not None:
            if fmt.get("type") != "json_schema":
                return "output_config.format.type: Input should be 'json_schema'"
            problem = schema_problem(fmt.get("schema"))
            if problem:
                return problem
        thinking = body.get("thinking") or {}
        if thinking.get("type") == "enabled" and thinking.get("budget_tokens", 0) >= body["max_tokens"]:
            return "`max_tokens` must be greater than `thinking.budget_tokens`"
        for i, message in enumerate(body.get("messages") or []):
            for j, block in enumerate(_blocks(message)):
                where = f"messages.{i}.content.{j}"
                if block.get("type") == "thinking":
                    if message.get("role") != "assistant":
                        return f"{where}: thinking blocks may only appear in assistant messages"
                    if not block.get("signature"):
                        return f"{where}.thinking.signature: Field required"
                    if not hmac.compare_digest(block["signature"], self.sign(block.get("thinking", ""))):
                        return f"{where}: Invalid `signature` in `thinking` block"
                if block.get("type") == "redacted_thinking":
                    data = str(block.get("data", ""))
                    text, _, sig = data.rpartition(".")
                    if not text or not hmac.compare_digest(sig, self.sign(text)):
                        return f"{where}: Invalid `data` in `redacted_thinking` block"
        return None

    def _shape(self, body: dict[str, Any], text: str, fault: str | None, usage: dict[str, int], window: str | None,
               request_id: str) -> dict[str, Any]:
        """Thinking first, then the text as far as the budget and the window let it go. ``usage``
        is the reference model's split of the prompt (cache reads, writes, uncached input)."""
        cache = {k: int(usage.get(k) or 0) for k in ("cache_creation_input_tokens", "cache_read_input_tokens")}
        input_tokens = int(usage["input_tokens"]) + sum(cache.values())
        max_tokens = int(body["max_tokens"])
        thinking = body.get("thinking") or {"type": "adaptive"}
        think = 0
        if thinking.get("type") == "enabled":
            think = min(self.thinking_tokens, int(thinking.get("budget_tokens", self.thinking_tokens)))
        elif thinking.get("type") == "adaptive":
            think = self.thinking_tokens
        # The model's own window bounds input plus output (a scenario's smaller window is enforced
        # on the input by the reference model's prompt-too-long error, as a real window would be).
        room = min(max_tokens, max(0, self.context_window - input_tokens))
        stop = "end_turn"
        content: list[dict[str, Any]] = []
        spent = 0
        if think:
            shown = min(think, room)
            thought = _filler("Considering what the request needs before answering. ", shown)
            content.append({"type": "thinking", "thinking": thought, "signature": self.sign(thought)})
            hidden = f"redacted-{request_id}"
            content.append({"type": "redacted_thinking", "data": f"{hidden}.{self.sign(hidden)}"})
            spent = shown
        budget = room - spent
        if fault == "truncate":
            budget = min(budget, max(1, estimate_text(text) // 2))
        if fault == "refusal":
            text, stop = text[: len(text) // 4], "refusal"
        elif fault == "pause_turn":
            text, stop = text[: len(text) // 2], "pause_turn"
        elif estimate_text(text) > budget:
            text = _cut(text, budget)
            stop = "max_tokens" if room == max_tokens or fault == "truncate" else "model_context_window_exceeded"
        if text:
            content.append({"type": "text", "text": text})
        return {"id": "msg_wire_" + request_id.partition("_wire_")[2], "type": "message", "role": "assistant", "model": body["model"],
                "content": content, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": int(usage["input_tokens"]),
                          "output_tokens": spent + (estimate_text(text) if text else 0), **cache}}


def _blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _without_thinking(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        if isinstance(m.get("content"), list):
            m = {**m, "content": [b for b in m["content"]
                                  if not (isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking"))]}
        out.append(m)
    return out


def _filler(sentence: str, tokens: int) -> str:
    text = ""
    while estimate_text(text + sentence) <= tokens:
        text += sentence
    return text or sentence[: max(1, tokens * 4)]


def _cut(text: str, tokens: int) -> str:
    """``text`` cut to at most ``tokens`` by the shared estimator."""
    if tokens <= 0:
        return ""
    cut = min(len(text), tokens * 4)
    while cut > 0 and estimate_text(text[:cut]) > tokens:
        cut = int(cut * 0.9)
    return text[:cut]
