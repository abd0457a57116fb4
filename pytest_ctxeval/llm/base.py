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

import re
import threading
from dataclasses import dataclass, field
from typing import Any

import anthropic

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
        row = self.by_model.setdefault(model, {"api_calls": 0, "input_tokens": 0, "output_tokens": 0})
        row["api_calls"] += 1
        row["input_tokens"] += usage.input_tokens
        row["output_tokens"] += usage.output_tokens

    def as_dict(self) -> dict[str, Any]:
        return {"api_calls": self.api_calls, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "cache_creation_input_tokens": self.cache_creation_input_tokens,
                "cache_read_input_tokens": self.cache_read_input_tokens,
                "by_model": {k: dict(v) for k, v in sorted(self.by_model.items())}}


class LLM:
    """A model behind the anthropic SDK.

    >>> from pytest_ctxeval.llm import make_llm
    >>> llm = make_llm("offline")
    >>> llm.complete(task="chat", messages=[{"role": "user", "content": "hi"}]).text[:9]
    'Reference'
    """

    def __init__(self, client: anthropic.Anthropic, *, model: str, backend: str):
        self.client = client
        self.model = model
        self.backend = backend
        self.usage = UsageTotals()
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
    ) -> ModelReply:
        """Send one Messages request; return its text and usage.

        Raises :class:`PromptTooLongError` for the API's prompt-too-long error (so the caller can
        take the PTL path) and :class:`ModelError` for anything else that failed after the SDK's
        retries.
        """
        model = model or self.model
        headers = {"x-ctxeval-task": task}
        if context_window:
            headers["x-ctxeval-context-window"] = str(context_window)
        kwargs: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": messages,
                                  "extra_headers": headers}
        if system:
            kwargs["system"] = system
        try:
            response = self.client.messages.create(**kwargs)
        except anthropic.BadRequestError as exc:
            message = _error_message(exc)
            ptl = parse_prompt_too_long(message)
            if ptl is not None:
                raise ptl from None
            raise ModelError(f"{task} request rejected (400): {message}") from None
        except anthropic.APIStatusError as exc:
            raise ModelError(f"{task} request failed with HTTP {exc.status_code}: {_error_message(exc)} "
                             f"(after {self.client.max_retries} SDK retries)") from None
        except anthropic.APIConnectionError as exc:
            kind = "timed out" if isinstance(exc, anthropic.APITimeoutError) else "could not connect"
            raise ModelError(f"{task} request {kind}: {exc} (after {self.client.max_retries} SDK retries)") from None
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


def _error_message(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(exc.message)
