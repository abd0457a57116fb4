"""Model backends. Every call goes through the official anthropic SDK (:class:`LLM`).

* ``offline`` (default): the deterministic reference model, in process, through an httpx2 mock
  transport. No key, no network.
* ``anthropic``: the real API; the key comes from ``ANTHROPIC_API_KEY``. With a cassette folder,
  replies are cached: a rerun with unchanged prompts makes no API call.
* ``record``: the real API, every reply (re)written to the cassette folder.
* ``replay``: cassettes only; never opens a network connection.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from typing import TYPE_CHECKING

from ..errors import UsageError, flag

if TYPE_CHECKING:  # pragma: no cover
    from .base import LLM, ModelReply, UsageTotals, parse_prompt_too_long
    from .offline import FAULTS, REFERENCE_MODEL_NAME, ReferenceModel

__all__ = ["LLM", "ModelReply", "UsageTotals", "ReferenceModel", "make_llm", "BACKENDS",
           "DEFAULT_MODEL", "DEFAULT_CASSETTES", "FAULTS", "parse_prompt_too_long"]

BACKENDS = ("offline", "anthropic", "record", "replay")
#: Summariser model for the real API when none is given (an option, never logic).
DEFAULT_MODEL = "claude-sonnet-5-5"
#: Where the anthropic backend caches replies and replay looks, unless a folder is given.
DEFAULT_CASSETTES = Path(".ctxeval") / "cassettes"
#: SDK retries for 429/5xx/connection errors; the SDK's own backoff honours retry-after.
DEFAULT_MAX_RETRIES = 2


def make_llm(
    backend: str = "offline",
    model: str | None = None,
    *,
    faults: Mapping[str, Sequence[str]] | None = None,
    max_retries: int = DEFAULT_MAX_RETRIES,
    timeout: float = 600.0,
    cassettes: str | os.PathLike[str] | None = None,
    concurrency: int = 8,
    reference: ReferenceModel | None = None,
    network: Any = None,
) -> LLM:
    """An :class:`LLM` for ``backend``.

    ``reference`` replaces the offline model's handler; ``network`` replaces the real network under
    the cassettes (an object serving both sync and async requests, e.g. ``httpx2.MockTransport``):
    seams for tests, so the record/cache path runs without a connection.

    >>> make_llm("offline").backend
    'offline'
    >>> make_llm("nope")
    Traceback (most recent call last):
    ...
    pytest_ctxeval.errors.UsageError: unknown backend 'nope'; choose one of: offline, anthropic, record, replay
    """
    if backend not in BACKENDS:
        raise UsageError(f"unknown backend {backend!r}; choose one of: {', '.join(BACKENDS)}")
    import anthropic
    import httpx2

    from ..redact import scrub_logs
    from .base import LLM
    from .cassettes import CassetteStore, CassetteTransport, TransportStats
    from .offline import REFERENCE_MODEL_NAME, ReferenceModel

    if faults and backend != "offline":
        raise UsageError("fault plans only apply to the offline backend")
    if backend == "offline":
        handler = reference or ReferenceModel(faults)
        transport = httpx2.MockTransport(handler)
        kwargs = {"api_key": "offline-no-key", "base_url": "http://ctxeval.offline", "max_retries": max_retries,
                  "timeout": timeout}
        client = anthropic.Anthropic(http_client=httpx2.Client(transport=transport), **kwargs)
        llm = LLM(client, model=model or REFERENCE_MODEL_NAME, backend="offline",
                  async_transport=lambda: transport, concurrency=concurrency, client_kwargs=kwargs)
        llm.reference = handler  # type: ignore[attr-defined]
        return llm
    store = CassetteStore(Path(cassettes) if cassettes else DEFAULT_CASSETTES)
    stats = TransportStats()
    if backend == "replay":
        if not store.root.is_dir():
            raise UsageError(f"replay needs recorded cassettes in {store.root}; record them with "
                             f"{flag('backend record')} and {flag(f'cassettes {store.root}')}")
        transport = CassetteTransport(store, "replay", stats=stats)
        kwargs = {"api_key": "replay-no-key", "max_retries": 0, "timeout": timeout}
        client = anthropic.Anthropic(http_client=httpx2.Client(transport=transport), **kwargs)
        return LLM(client, model=model or DEFAULT_MODEL, backend="replay", async_transport=lambda: transport,
                   concurrency=concurrency, stats=stats, client_kwargs=kwargs, store=store)
    key = os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        raise UsageError(f"the {backend} backend needs ANTHROPIC_API_KEY in the environment "
                         f"(or use {flag('backend offline')}, the default, or replay with recorded cassettes)")
    scrub_logs()  # the SDK logs request bodies at DEBUG; a pasted key would be in them
    mode = "record" if backend == "record" else "cache"
    sync = CassetteTransport(store, mode, inner=network or httpx2.HTTPTransport(), secret=key, stats=stats)
    kwargs = {"max_retries": max_retries, "timeout": timeout}
    client = anthropic.Anthropic(http_client=httpx2.Client(transport=sync), **kwargs)
    return LLM(client, model=model or DEFAULT_MODEL, backend=backend,
               async_transport=lambda: CassetteTransport(store, mode, ainner=network or httpx2.AsyncHTTPTransport(),
                                                         secret=key, stats=stats),
               concurrency=concurrency, stats=stats, client_kwargs=kwargs, store=store, secret=key)


_LAZY = {"LLM": "base", "ModelReply": "base", "UsageTotals": "base", "parse_prompt_too_long": "base",
         "ReferenceModel": "offline", "FAULTS": "offline", "REFERENCE_MODEL_NAME": "offline",
         "CassetteStore": "cassettes", "CassetteTransport": "cassettes", "TransportStats": "cassettes",
         "scrub_logs": "..redact"}


def __getattr__(name: str) -> Any:
    """The SDK-backed names, imported when first used: the option definitions need only the
    constants above, and pytest loads them in every run (see :mod:`pytest_ctxeval.plugin`)."""
    import importlib
    import importlib.util

    module = _LAZY.get(name)
    if module is None:  # a submodule (pytest_ctxeval.llm.offline), as when this file imported them
        if name.startswith("_") or importlib.util.find_spec(f"{__name__}.{name}") is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return importlib.import_module(f".{name}", __name__)
    value = getattr(importlib.import_module(module if module.startswith("..") else f".{module}", __name__), name)
    globals()[name] = value
    return value
