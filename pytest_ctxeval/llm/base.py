"""One way to call a model: the official anthropic SDK, whatever the backend.

:class:`LLM` wraps an ``anthropic.Anthropic`` client. The ``anthropic`` backend gives it a real
client; the ``offline`` backend gives it a client whose ``httpx2`` transport is the in-process
reference model (:mod:`pytest_ctxeval.llm.offline`). Retries, error classes and usage parsing are
therefore the SDK's own code paths in both cases.

Two request headers tell the offline model what it is looking at; the real API ignores them:
``x-ctxeval-task`` (``compact``, ``session_memory``, ``judge``, ``probe``, ``chat``) and
``x-ctxeval-context-window`` (the scenario's window, which the offline model enforces with the real
API's ``prompt is too long`` error).
"""

from __future__ import annotations

import asyncio
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

import anthropic
import httpx2

from ..errors import ModelError, PromptTooLongError
from ..messages import Usage

__all__ = ["LLM", "ModelReply", "UsageTotals", "parse_prompt_too_long"]

_PTL = re.compile(r"prompt is too long", re.IGNORECASE)
_PTL_NUMBERS = re.compile(r"(\d[\d,]*)\s*tokens?\s*>\s*(\d[\d,]*)", re.IGNORECASE)


def parse_prompt_too_long(message: str) -> PromptTooLongError | None:
    """A :class:`PromptTooLongError` when ``message`` is the API's prompt-too-long error.

    >>> e = parse_prompt_too_long("prompt is too long: 210345 tokens > 200000 maximum")
    >>> (e.actual, e.maximum, e.gap)
    (210345, 200000, 10345)
    >>> parse_prompt_too_long("prompt is too long").gap is None
    True
    """
    if not _PTL.search(message):
        return None
    match = _PTL_NUMBERS.search(message)
    if match:
        actual, maximum = (int(g.replace(",", "")) for g in match.groups())
        return PromptTooLongError(message, actual, maximum)
    return PromptTooLongError(message)


@dataclass
class ModelReply:
    text: str
    usage: Usage
    model: str
    stop_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass
class UsageTotals:
    """Calls and tokens spent through one :class:`LLM`, per model."""

    api_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    by_model: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, model: str, usage: Usage) -> None:
        self.api_calls += 1
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cache_creation_input_tokens += usage.cache_creation_input_tokens
        self.cache_read_input_tokens += usage.cache_read_input_tokens
        row = self.by_model.setdefault(model, {"api_calls": 0, "input_tokens": 0, "output_tokens": 0,
                                               "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0})
        row["api_calls"] += 1
        row["input_tokens"] += usage.input_tokens
        row["output_tokens"] += usage.output_tokens
        row["cache_creation_input_tokens"] += usage.cache_creation_input_tokens
        row["cache_read_input_tokens"] += usage.cache_read_input_tokens

    def as_dict(self) -> dict[str, Any]:
        from ..pricing import cost_of

        by_model = {k: dict(v) for k, v in sorted(self.by_model.items())}
        for model, row in by_model.items():
            row["usd"] = cost_of(model, row)
        return {"api_calls": self.api_calls, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "cache_creation_input_tokens": self.cache_creation_input_tokens,
                "cache_read_input_tokens": self.cache_read_input_tokens,
                "usd": round(sum(r["usd"] for r in by_model.values()), 6),
                "by_model": by_model}


class LLM:
    """A model behind the anthropic SDK.

    >>> from pytest_ctxeval.llm import make_llm
    >>> llm = make_llm("offline")
    >>> llm.complete(task="chat", messages=[{"role": "user", "content": "hi"}]).text[:9]
    'Reference'
    """

    def __init__(self, client: anthropic.Anthropic, *, model: str, backend: str,
                 async_transport: Callable[[], Any] | None = None, concurrency: int = 8,
                 stats: Any = None, client_kwargs: dict[str, Any] | None = None, store: Any = None,
                 secret: str | None = None):
        self.client = client
        self.model = model
        self.backend = backend
        self.usage = UsageTotals()
        self.concurrency = max(1, concurrency)
        self.stats = stats  # cassette hits / requests forwarded, when cassettes are in use
        self.store = store  # the cassette store, when there is one (batch results are kept there)
        self.secret = secret
        self._async_transport = async_transport
        self._client_kwargs = client_kwargs or {}
        self._lock = threading.Lock()

    def complete(
        self,
        *,
        task: str,
        messages: list[dict[str, Any]],
        system: str | None = None,
        max_tokens: int = 4_096,
        context_window: int | None = None,
        model: str | None = None,
        output_config: dict[str, Any] | None = None,
    ) -> ModelReply:
        """Send one Messages request; return its text and usage.

        Raises :class:`PromptTooLongError` for the API's prompt-too-long error (so the caller can
        take the PTL path) and :class:`ModelError` for anything else that failed after the SDK's
        retries.
        """
        kwargs = self._kwargs(task=task, messages=messages, system=system, max_tokens=max_tokens,
                              context_window=context_window, model=model, output_config=output_config)
        try:
            response = self.client.messages.create(**kwargs)
        except anthropic.APIError as exc:
            raise _model_error(task, exc, self.client.max_retries) from None
        return self._reply(response, kwargs["model"])

    def _kwargs(self, *, task: str, messages: list[dict[str, Any]], system: str | None, max_tokens: int,
                context_window: int | None, model: str | None, output_config: dict[str, Any] | None) -> dict[str, Any]:
        headers = {"x-ctxeval-task": task}
        if context_window:
            headers["x-ctxeval-context-window"] = str(context_window)
        kwargs: dict[str, Any] = {"model": model or self.model, "max_tokens": max_tokens, "messages": messages,
                                  "extra_headers": headers}
        if system:
            kwargs["system"] = system
        if output_config:
            kwargs["output_config"] = output_config
        return kwargs

    def _reply(self, response: Any, model: str) -> ModelReply:
        text = "".join(getattr(block, "text", "") for block in response.content
                       if getattr(block, "type", None) == "text")
        u = response.usage
        usage = Usage(input_tokens=u.input_tokens or 0, output_tokens=u.output_tokens or 0,
                      cache_creation_input_tokens=getattr(u, "cache_creation_input_tokens", 0) or 0,
                      cache_read_input_tokens=getattr(u, "cache_read_input_tokens", 0) or 0)
        with self._lock:
            self.usage.add(response.model or model, usage)
        return ModelReply(text=text, usage=usage, model=response.model or model,
                          stop_reason=response.stop_reason, raw=response.model_dump(mode="json"))

    def complete_many(self, requests: list[dict[str, Any]]) -> list[ModelReply | ModelError]:
        """Send independent requests concurrently with ``AsyncAnthropic`` under a semaphore of
        ``concurrency``; each result is a :class:`ModelReply` or the :class:`ModelError` it raised.
        Every request is a dict of :meth:`complete`'s keyword arguments."""
        if not requests:
            return []
        if self._async_transport is None or len(requests) == 1:
            out: list[ModelReply | ModelError] = []
            for r in requests:
                try:
                    out.append(self.complete(**r))
                except ModelError as exc:
                    out.append(exc)
            return out
        return asyncio.run(self._gather(requests))

    def complete_batch(self, requests: list[dict[str, Any]], *, poll_seconds: float = 10.0,
                       timeout_seconds: float = 24 * 3600) -> list[ModelReply | ModelError]:
        """Send requests through the Message Batches API: create, poll until it has ended, read the
        results (matched by ``custom_id``). Replies already in the cassette store are not sent again;
        new ones are stored, so a rerun is free."""
        import time

        from .cassettes import request_key

        results: list[ModelReply | ModelError | None] = [None] * len(requests)
        pending = []
        for i, req in enumerate(requests):
            kwargs = self._kwargs(task=req["task"], messages=req["messages"], system=req.get("system"),
                                  max_tokens=req.get("max_tokens", 4_096), context_window=req.get("context_window"),
                                  model=req.get("model"), output_config=req.get("output_config"))
            params = {k: v for k, v in kwargs.items() if k != "extra_headers"}
            key = request_key(params, req["task"])
            cached = self.store.get(key) if self.store is not None else None
            if cached is not None:
                results[i] = self._reply(_message_from(cached["response"]["json"]), params["model"])
            else:
                pending.append((i, key, req["task"], params))
        if pending:
            try:
                batch = self.client.messages.batches.create(
                    requests=[{"custom_id": f"r{i}", "params": params} for i, _, _, params in pending],
                    extra_headers={"x-ctxeval-task": "batch"})
                deadline = time.monotonic() + timeout_seconds
                while batch.processing_status != "ended":
                    if time.monotonic() > deadline:
                        raise ModelError(f"message batch {batch.id} did not end within {timeout_seconds:.0f} s")
                    time.sleep(poll_seconds)
                    batch = self.client.messages.batches.retrieve(batch.id)
                by_id = {r.custom_id: r for r in self.client.messages.batches.results(batch.id)}
            except anthropic.APIError as exc:
                err = _model_error("batch", exc, self.client.max_retries)
                for i, *_ in pending:
                    results[i] = err
                return [r for r in results if r is not None]  # type: ignore[misc]
            for i, key, task, params in pending:
                item = by_id.get(f"r{i}")
                if item is None or item.result.type != "succeeded":
                    kind = item.result.type if item is not None else "missing"
                    results[i] = ModelError(f"{task} request in batch {batch.id}: {kind}")
                    continue
                message = item.result.message
                results[i] = self._reply(message, params["model"])
                if self.store is not None:
                    self.store.put(key, task, params, {"status": 200, "json": message.model_dump(mode="json")},
                                   self.secret)
        return results  # type: ignore[return-value]

    async def _gather(self, requests: list[dict[str, Any]]) -> list[ModelReply | ModelError]:
        gate = asyncio.Semaphore(self.concurrency)
        async with anthropic.AsyncAnthropic(
                http_client=httpx2.AsyncClient(transport=self._async_transport()), **self._client_kwargs) as client:

            async def one(req: dict[str, Any]) -> ModelReply | ModelError:
                req = dict(req)
                task = req.pop("task")
                kwargs = self._kwargs(task=task, messages=req.pop("messages"), system=req.pop("system", None),
                                      max_tokens=req.pop("max_tokens", 4_096),
                                      context_window=req.pop("context_window", None), model=req.pop("model", None),
                                      output_config=req.pop("output_config", None))
                async with gate:
                    try:
                        response = await client.messages.create(**kwargs)
                    except anthropic.APIError as exc:
                        return _model_error(task, exc, client.max_retries)
                return self._reply(response, kwargs["model"])

            return list(await asyncio.gather(*(one(r) for r in requests)))


def _message_from(payload: dict[str, Any]) -> Any:
    from anthropic.types import Message

    return Message.model_validate(payload)


def _scrub_key(text: str) -> str:
    """An error message never carries the API key, even if a server echoed it back."""
    from ..redact import scrub_output

    return scrub_output(text)


def _model_error(task: str, exc: Exception, retries: int) -> ModelError:
    """The SDK's error as ours: prompt-too-long keeps its numbers for the PTL path."""
    err = _model_error_raw(task, exc, retries)
    scrubbed = _scrub_key(str(err))
    if scrubbed != str(err):
        err.args = (scrubbed,)
    return err


def _model_error_raw(task: str, exc: Exception, retries: int) -> ModelError:
    if isinstance(exc, anthropic.BadRequestError):
        message = _error_message(exc)
        ptl = parse_prompt_too_long(message)
        if ptl is not None:
            return ptl
        return ModelError(f"{task} request rejected (400): {message}")
    if isinstance(exc, anthropic.APIStatusError):
        return ModelError(f"{task} request failed with HTTP {exc.status_code}: {_error_message(exc)} "
                          f"(after {retries} SDK retries)")
    if isinstance(exc, anthropic.APIConnectionError):
        kind = "timed out" if isinstance(exc, anthropic.APITimeoutError) else "could not connect"
        return ModelError(f"{task} request {kind}: {exc} (after {retries} SDK retries)")
    return ModelError(f"{task} request failed: {exc}")


def _error_message(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(exc.message)
