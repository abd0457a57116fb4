"""One way to call a model: the official anthropic SDK, whatever the backend.

:class:`LLM` wraps an SDK client (``Anthropic``, ``AnthropicBedrock`` or ``AnthropicVertex``).
Against a real endpoint the client keeps the SDK's own HTTP client (its connection pool and
keep-alive, ``HTTP(S)_PROXY``, its default timeouts and the guard that asks for streaming when a
reply may take longer than ten minutes) and the SDK's retries are the only ones. The ``offline``
backend gives the client an in-process transport serving the reference model.

* **Cassettes** sit in front of the client (:meth:`LLM._send`): a recorded request is answered
  from disk without any HTTP request (counted as ``cached_calls``, free), anything else goes to the
  API and its reply is stored; ``replay`` never builds a connection.
* **One concurrency limit**: every request of every :class:`LLM` made from one set of run options
  passes one :class:`Gate`, so ``--concurrency N`` bounds the requests in flight, whatever runs
  in parallel (scenarios, judge votes, probes). Concurrent calls are threads; no event loop is
  started, so calling from inside a running loop is fine.
* **Whole replies** (:meth:`LLM.complete_whole`): ``stop_reason`` is checked; a reply cut at
  ``max_tokens`` is asked again with more room, a paused turn is continued, a reply cut by the
  context window or refused is an error, never a summary.
* **Thinking blocks are not sent**: the API lets a request omit the thinking of earlier turns, and
  blocks from a script or an imported session carry no signature the model can verify.

Two request headers tell the offline model what it is looking at; the real API ignores them:
``x-ctxeval-task`` (``compact``, ``session_memory``, ``judge``, ``probe``, ``chat``) and
``x-ctxeval-context-window`` (the scenario's window).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import anthropic

from ..errors import ModelError, PromptTooLongError, ProviderError
from ..core.messages import Usage
from .failures import model_error, parse_prompt_too_long, refusal_error
from .usage import UsageTotals

__all__ = ["LLM", "ModelReply", "UsageTotals", "Gate", "parse_prompt_too_long", "TruncatedReply"]

#: The SDK refuses a non-streaming request whose reply may take over ten minutes (an hour per
#: 128,000 output tokens): above this ``max_tokens`` the request is streamed instead.
STREAM_ABOVE_TOKENS = 21_333
#: A reply cut at ``max_tokens`` is asked again once with this much more room (thinking counts
#: toward ``max_tokens``), up to :data:`MAX_OUTPUT_TOKENS`.
RETRY_ROOM_FACTOR = 2
MAX_OUTPUT_TOKENS = 64_000
#: How many times a paused turn (``stop_reason: pause_turn``) is sent back to continue.
MAX_CONTINUATIONS = 3


class TruncatedReply(ModelError):
    """A reply that did not end on its own: cut at ``max_tokens`` (after a retry with more room)
    or at the model's context window. Never graded as a whole reply."""


@dataclass
class ModelReply:
    text: str
    usage: Usage
    model: str
    stop_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    cached: bool = False


class Gate:
    """The one bound on requests in flight for a run (shared by every :class:`LLM` it makes)."""

    def __init__(self, limit: int):
        self.limit = max(1, limit)
        self._sem = threading.BoundedSemaphore(self.limit)
        #: The first run-level failure (bad key, outage...): later requests of the run raise it
        #: without being sent, so a dead endpoint is not asked again by every grader.
        self.failed: ProviderError | None = None

    def __enter__(self) -> Gate:
        self._sem.acquire()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._sem.release()


class LLM:
    """A model behind the anthropic SDK.

    >>> from pytest_ctxeval.llm import make_llm
    >>> llm = make_llm("offline")
    >>> llm.complete(task="chat", messages=[{"role": "user", "content": "hi"}]).text[:9]
    'Reference'
    """

    def __init__(self, client: Any, *, model: str, backend: str, concurrency: int = 8, stats: Any = None,
                 store: Any = None, secret: str | None = None, gate: Gate | None = None, mode: str | None = None,
                 endpoint: str = "", stream: bool = True):
        self.client = client
        self.model = model
        self.backend = backend
        self.usage = UsageTotals()
        self.concurrency = max(1, concurrency)
        self.gate = gate or Gate(self.concurrency)
        self.stats = stats  # cassette hits / requests sent, when cassettes are in use
        self.store = store  # the cassette store, when there is one (batch results are kept there)
        self.mode = mode    # cassette mode: cache, record, replay (None: no cassettes)
        self.secret = secret
        self.endpoint = endpoint or str(getattr(client, "base_url", ""))
        self.run_level = backend != "offline"  # see pytest_ctxeval.llm.failures
        self.stream = stream
        #: Mark prefixes that later requests share with ``cache_control`` (prompt caching).
        self.caching = True
        #: A request waits on the model, so requests sent side by side overlap (a real endpoint, or
        #: the offline model with a latency or a fault plan: see ``make_llm``). False:
        #: :meth:`complete_many` sends one after another.
        self.waits = True
        self._lock = threading.Lock()

    # -- one request -----------------------------------------------------------------------

    def complete(self, *, task: str, messages: list[dict[str, Any]], system: str | None = None,
                 max_tokens: int = 4_096, context_window: int | None = None, model: str | None = None,
                 output_config: dict[str, Any] | None = None, thinking: dict[str, Any] | None = None) -> ModelReply:
        """Send one Messages request; return its text, usage and stop reason.

        Raises :class:`PromptTooLongError` for the API's prompt-too-long error (so the caller can
        take the PTL path), :class:`ModelError` for anything else this request could not do, and
        :class:`ProviderError` when the endpoint cannot serve the run (see :mod:`.failures`).
        """
        kwargs = self.params(task=task, messages=messages, system=system, max_tokens=max_tokens,
                             context_window=context_window, model=model, output_config=output_config,
                             thinking=thinking)
        message, cached = self._send(task, kwargs)
        return self._reply(message, kwargs["model"], cached=cached)

    def params(self, *, task: str, messages: list[dict[str, Any]], system: str | None = None,
               max_tokens: int = 4_096, context_window: int | None = None, model: str | None = None,
               output_config: dict[str, Any] | None = None, thinking: dict[str, Any] | None = None) -> dict[str, Any]:
        """The SDK keyword arguments of one request (``extra_headers`` carry the task)."""
        headers = {"x-ctxeval-task": task}
        if context_window:
            headers["x-ctxeval-context-window"] = str(context_window)
        kwargs: dict[str, Any] = {"model": model or self.model, "max_tokens": max_tokens,
                                  "messages": without_thinking(messages), "extra_headers": headers}
        if system:
            kwargs["system"] = system
        if output_config:
            kwargs["output_config"] = output_config
        if thinking:
            kwargs["thinking"] = thinking
        return kwargs

    def _send(self, task: str, kwargs: dict[str, Any]) -> tuple[Any, bool]:
        return self.send(task, kwargs)

    def send(self, task: str, kwargs: dict[str, Any], *, create: Any = None, parse: Any = None) -> tuple[Any, bool]:
        """The reply to the SDK call ``create(**kwargs)`` (default ``client.messages.create``) and
        whether it came from a cassette: answered from disk when recorded, else sent (under the
        run's gate, with the SDK's retries only) and stored. ``parse`` reads a stored reply
        (default: ``Message``). For SDK calls other than plain messages, e.g. the beta API."""
        from .cassettes import request_key

        body = {k: v for k, v in kwargs.items() if k not in ("extra_headers", "betas")}
        key = request_key(body, task) if self.store is not None else None
        if key is not None and self.mode != "record":
            found = self.store.recorded(key, task, body, self.mode)  # placeholders restored
            status = (found or {}).get("status", 200)
            if found is not None and status in (200, 400):
                if self.stats is not None:
                    self.stats.hit()
                if status == 400:  # a recorded prompt-too-long: the PTL path replays as it ran
                    message = str(found["json"].get("error", {}).get("message", ""))
                    raise parse_prompt_too_long(message) or ModelError(f"{task} request rejected (400): {message}")
                return (parse or _message_from)(found["json"]), True
        if self.mode == "replay":
            from ..errors import flag

            raise ModelError(f"cassette miss in replay mode (no network): {self.store.nearest_diff(task, body)}; "
                             f"record with {flag('backend record')} and {flag(f'cassettes {self.store.root}')}")
        if self.gate.failed is not None:
            raise self.gate.failed
        with self.gate:
            if self.gate.failed is not None:
                raise self.gate.failed
            if self.stats is not None:
                self.stats.forward()
            try:
                if create is not None:
                    message = create(**kwargs)
                elif self.stream and kwargs["max_tokens"] > STREAM_ABOVE_TOKENS:
                    with self.client.messages.stream(**kwargs) as stream:
                        message = stream.get_final_message()
                else:
                    message = self.client.messages.create(**kwargs)
            except anthropic.APIError as exc:
                err = model_error(task, exc, retries=self.client.max_retries, model=kwargs["model"],
                                  endpoint=self.endpoint, run_level=self.run_level)
                if isinstance(err, ProviderError):
                    self.gate.failed = err
                elif key is not None and isinstance(err, PromptTooLongError):  # deterministic: kept for replay
                    self.store.put(key, task, body, {"status": 400, "json": {"type": "error", "error": {
                        "type": "invalid_request_error", "message": str(err)}}}, self.secret)
                raise err from None
        if key is not None:
            self.store.put(key, task, body, {"status": 200, "json": message.model_dump(mode="json")}, self.secret)
        return message, False

    def _reply(self, response: Any, model: str, *, cached: bool = False, batch: bool = False) -> ModelReply:
        text = "".join(getattr(block, "text", "") for block in response.content
                       if getattr(block, "type", None) == "text")
        u = response.usage
        usage = Usage(input_tokens=u.input_tokens or 0, output_tokens=u.output_tokens or 0,
                      cache_creation_input_tokens=getattr(u, "cache_creation_input_tokens", 0) or 0,
                      cache_read_input_tokens=getattr(u, "cache_read_input_tokens", 0) or 0)
        name = response.model or model
        with self._lock:
            if cached:
                self.usage.add_cached(name)
            else:
                self.usage.add(name, usage, batch=batch)
        return ModelReply(text=text, usage=usage, model=name, stop_reason=response.stop_reason,
                          raw=response.model_dump(mode="json"), cached=cached)

    def complete_whole(self, **request: Any) -> ModelReply:
        """:meth:`complete`, insisting on a reply that ended on its own.

        ``pause_turn``: the paused content is sent back and the turn continued (up to
        :data:`MAX_CONTINUATIONS` times). ``max_tokens``: asked once more with
        :data:`RETRY_ROOM_FACTOR` times the room, then :class:`TruncatedReply`.
        ``model_context_window_exceeded``: :class:`TruncatedReply` (more room cannot help).
        ``refusal``: :func:`~pytest_ctxeval.llm.failures.refusal_error`.
        """
        task = request["task"]
        reply = self.complete(**request)
        first = room = request.get("max_tokens", 4_096)
        if reply.stop_reason == "max_tokens":
            room = min(MAX_OUTPUT_TOKENS, first * RETRY_ROOM_FACTOR)
            if room > first:
                reply = self.complete(**{**request, "max_tokens": room})
        text = reply.text
        for _ in range(MAX_CONTINUATIONS):
            if reply.stop_reason != "pause_turn":
                break
            messages = [*request["messages"], {"role": "assistant", "content": reply.raw.get("content", [])}]
            reply = self.complete(**{**request, "messages": messages})
            text += reply.text
        reply.text = text
        model = reply.model
        if reply.stop_reason == "refusal":
            err = refusal_error(task, model, run_level=self.run_level)
            if isinstance(err, ProviderError):
                self.gate.failed = err
            raise err
        if reply.stop_reason == "max_tokens":
            raise TruncatedReply(f"the {task} reply of {model} was cut off at max_tokens "
                                 f"{request.get('max_tokens', 4_096):,} even with {room:,} tokens of room (stop_reason "
                                 "'max_tokens'; thinking counts toward max_tokens): not graded as a whole reply")
        if reply.stop_reason == "model_context_window_exceeded":
            raise TruncatedReply(f"the {task} reply of {model} was cut off where input and output reached the "
                                 "model's context window (stop_reason 'model_context_window_exceeded'): not graded "
                                 "as a whole reply")
        if reply.stop_reason == "pause_turn":
            raise TruncatedReply(f"the {task} turn of {model} was still paused after {MAX_CONTINUATIONS} continuations")
        return reply

    # -- many requests ---------------------------------------------------------------------

    def complete_many(self, requests: list[dict[str, Any]], *, warm: bool = False) -> list[ModelReply | ModelError]:
        """Send independent requests concurrently (threads, bounded by the run's :class:`Gate`;
        one after another when nothing waits, see :attr:`waits`);
        each result is a :class:`ModelReply` or the :class:`ModelError` it raised. Every request
        is a dict of :meth:`complete`'s keyword arguments. A :class:`ProviderError` is raised.

        ``warm``: the requests share a cached prefix (``cache_control``); the first is sent alone
        and the others once it has answered, because the API makes a cache entry available only
        when the first reply begins (concurrent requests would all pay to write it)."""
        def one(req: dict[str, Any]) -> ModelReply | ModelError:
            try:
                return self.complete(**req)
            except ModelError as exc:
                return exc

        first: list[ModelReply | ModelError] = []
        if warm and len(requests) > 1:
            first, requests = [one(requests[0])], requests[1:]
        if len(requests) <= 1 or not self.waits:  # nothing to wait on: threads would only take turns
            return first + [one(r) for r in requests]
        with ThreadPoolExecutor(max_workers=min(self.gate.limit, len(requests))) as pool:
            futures = [pool.submit(one, r) for r in requests]
            return first + [f.result() for f in futures]  # a ProviderError propagates from here

    def view(self) -> LLM:
        """This model with usage totals of its own (same client, gate, cassettes and cache): what
        one scenario spent while others run beside it on the same model."""
        import copy

        other = copy.copy(self)
        other.usage = UsageTotals()
        other._lock = threading.Lock()
        return other

    def complete_batch(self, requests: list[dict[str, Any]], *, poll_seconds: float = 10.0,
                       timeout_seconds: float = 24 * 3600) -> list[ModelReply | ModelError]:
        """Send requests through the Message Batches API in one batch (see :mod:`.batching`)."""
        from .batching import run_batch

        return run_batch(self, requests, poll_seconds=poll_seconds, timeout_seconds=timeout_seconds)


def without_thinking(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` without thinking and redacted_thinking blocks (an assistant message left empty
    is dropped): the API allows omitting earlier turns' thinking, and a block from a script or an
    imported session has no signature the model would accept.

    >>> without_thinking([{"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": ""},
    ...                                                     {"type": "text", "text": "x"}]}])
    [{'role': 'assistant', 'content': [{'type': 'text', 'text': 'x'}]}]
    """
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking")
                                             for b in content):
            kept = [b for b in content if not (isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking"))]
            if not kept:
                continue
            m = {**m, "content": kept}
        out.append(m)
    return out


def _message_from(payload: dict[str, Any]) -> Any:
    from anthropic.types import Message

    return Message.model_validate(payload)


__all__ += ["ProviderError", "without_thinking"]
