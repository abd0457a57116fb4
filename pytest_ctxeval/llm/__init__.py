"""Model backends. Every call goes through the official anthropic SDK (:class:`LLM`).

* ``offline`` (default): the deterministic reference model, in process, through an httpx2 mock
  transport. No key, no network.
* ``anthropic``: the real API; the key comes from ``ANTHROPIC_API_KEY``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import anthropic
import httpx2

from ..errors import UsageError
from .base import LLM, ModelReply, UsageTotals, parse_prompt_too_long
from .offline import FAULTS, REFERENCE_MODEL_NAME, ReferenceModel

__all__ = ["LLM", "ModelReply", "UsageTotals", "ReferenceModel", "make_llm", "BACKENDS",
           "DEFAULT_MODEL", "FAULTS", "parse_prompt_too_long"]

BACKENDS = ("offline", "anthropic")
#: Summariser model for the anthropic backend when none is given (an option, never logic).
DEFAULT_MODEL = "claude-sonnet-4-5"
#: SDK retries for 429/5xx/connection errors; the SDK's own backoff honours retry-after.
DEFAULT_MAX_RETRIES = 2


def make_llm(
    backend: str = "offline",
    model: str | None = None,
    *,
    faults: Mapping[str, Sequence[str]] | None = None,
    max_retries: int = DEFAULT_MAX_RETRIES,
    timeout: float = 600.0,
) -> LLM:
    """An :class:`LLM` for ``backend``.

    >>> make_llm("offline").backend
    'offline'
    >>> make_llm("nope")
    Traceback (most recent call last):
    ...
    pytest_ctxeval.errors.UsageError: unknown backend 'nope'; choose one of: offline, anthropic
    """
    if backend == "offline":
        handler = ReferenceModel(faults)
        client = anthropic.Anthropic(
            api_key="offline-no-key",
            base_url="http://ctxeval.offline",
            http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
            max_retries=max_retries,
            timeout=timeout,
        )
        llm = LLM(client, model=model or REFERENCE_MODEL_NAME, backend="offline")
        llm.reference = handler  # type: ignore[attr-defined]
        return llm
    if backend == "anthropic":
        if faults:
            raise UsageError("fault plans only apply to the offline backend")
        if not os.environ.get("ANTHROPIC_API_KEY"):
            raise UsageError("the anthropic backend needs ANTHROPIC_API_KEY in the environment "
                             "(or use --ctxeval-backend offline, the default)")
        client = anthropic.Anthropic(max_retries=max_retries, timeout=timeout)
        return LLM(client, model=model or DEFAULT_MODEL, backend="anthropic")
    raise UsageError(f"unknown backend {backend!r}; choose one of: {', '.join(BACKENDS)}")
