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
    from .base import LLM, Gate, ModelReply, UsageTotals, parse_prompt_too_long
    from .cassettes import CassetteStore, CassetteTransport, TransportStats
    from ..core.faults import FAULTS
    from .offline import REFERENCE_MODEL_NAME, ReferenceModel
    from .prompt_cache import PromptCache
    from .server import ApiServer
    from .wire import WireModel

__all__ = ["LLM", "Gate", "ModelReply", "UsageTotals", "parse_prompt_too_long", "ReferenceModel", "FAULTS",
           "REFERENCE_MODEL_NAME", "ApiServer", "WireModel", "PromptCache", "CassetteStore", "CassetteTransport",
           "TransportStats", "make_llm", "BACKENDS", "PROVIDERS", "DEFAULT_MODEL", "DEFAULT_CASSETTES",
           "DEFAULT_MAX_RETRIES"]

BACKENDS = ("offline", "anthropic", "record", "replay")
#: Where the real backends send requests: the SDK's own clients for each.
PROVIDERS = ("anthropic", "bedrock", "vertex")
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
    cassettes: str | os.PathLike[str] | None = None,
    concurrency: int = 8,
    reference: ReferenceModel | None = None,
    network: Any = None,
    base_url: str | None = None,
    provider: str = "anthropic",
    gate: Gate | None = None,
    cache: Any = None,
    latency: float = 0.0,
    caching: bool = True,
    clients: dict[Any, Any] | None = None,
) -> LLM:
    """An :class:`LLM` for ``backend``.

    Real backends use the SDK client of ``provider`` with its own HTTP client (proxies,
    keep-alive, timeouts, the streaming guard) and retries; ``base_url`` (else
    ``ANTHROPIC_BASE_URL``, read by the SDK) points it at any endpoint speaking the Messages API.
    ``gate`` is the run's one concurrency limit (:class:`~pytest_ctxeval.llm.base.Gate`);
    ``clients``, a dict the run keeps, shares one SDK client (one connection pool) between the
    models it makes.
    ``caching``: requests that share a prefix mark it with ``cache_control`` (prompt caching);
    ``cache`` is the offline model's :class:`~pytest_ctxeval.llm.prompt_cache.PromptCache` (one per
    run) and ``latency`` the seconds it takes to answer (``--ctxeval-offline-latency``).
    ``reference`` replaces the offline model's handler; ``network`` replaces the real network
    (an ``httpx2`` transport): seams for tests.

    >>> make_llm("offline").backend
    'offline'
    >>> make_llm("nope")
    Traceback (most recent call last):
    ...
    pytest_ctxeval.errors.UsageError: unknown backend 'nope'; choose one of: offline, anthropic, record, replay
    """
    if backend not in BACKENDS:
        raise UsageError(f"unknown backend {backend!r}; choose one of: {', '.join(BACKENDS)}")
    if provider not in PROVIDERS:
        raise UsageError(f"unknown provider {provider!r}; choose one of: {', '.join(PROVIDERS)}")
    import anthropic
    import httpx2

    from ..core.redact import scrub_logs
    from .base import LLM
    from .cassettes import CassetteStore, TransportStats
    from .offline import REFERENCE_MODEL_NAME, ReferenceModel

    if faults and backend != "offline":
        raise UsageError("fault plans only apply to the offline backend")
    if backend == "offline":
        handler = reference or ReferenceModel(faults, cache=cache, latency=latency)
        # In process, no network: an explicit timeout (the SDK's streaming guard has nothing to guard).
        client = anthropic.Anthropic(api_key="offline-no-key", base_url="http://ctxeval.offline",
                                     max_retries=max_retries, timeout=600.0,
                                     http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
        llm = LLM(client, model=model or REFERENCE_MODEL_NAME, backend="offline", concurrency=concurrency,
                  gate=gate, stream=False)
        llm.reference = handler  # type: ignore[attr-defined]
        llm.caching = caching
        # The reference model answers at once unless it simulates a latency, so requests go one
        # after another (LLM.waits), except: a handler a test gives may block; and a fault plan is
        # handed out in the order requests arrive, so with one the requests of a batch (votes,
        # probes) go side by side as before, each taking the next fault (one after another, the
        # first request would take them all).
        llm.waits = latency > 0 or reference is not None or bool(faults)
        return llm
    store = CassetteStore(Path(cassettes) if cassettes else DEFAULT_CASSETTES)
    stats = TransportStats()
    if backend == "replay":
        if not store.root.is_dir():
            raise UsageError(f"replay needs recorded cassettes in {store.root}; record them with "
                             f"{flag('backend record')} and {flag(f'cassettes {store.root}')}")

        def refuse(request: Any) -> Any:  # replay answers from disk only; this is never reached
            return httpx2.Response(404, json={"type": "error", "error": {
                "type": "not_found_error", "message": "replay mode never opens a connection"}},
                headers={"x-should-retry": "false"})

        client = anthropic.Anthropic(api_key="replay-no-key", base_url="http://ctxeval.replay", max_retries=0,
                                     http_client=httpx2.Client(transport=httpx2.MockTransport(refuse)))
        llm = LLM(client, model=model or DEFAULT_MODEL, backend="replay", concurrency=concurrency, stats=stats,
                  store=store, mode="replay", gate=gate)
        llm.caching = caching
        return llm
    scrub_logs()  # the SDK logs request bodies at DEBUG; a pasted key would be in them
    shared = (provider, base_url, max_retries, os.environ.get("ANTHROPIC_API_KEY"), os.environ.get("ANTHROPIC_BASE_URL"))
    if clients is not None and network is None and shared in clients:
        client, secret = clients[shared]
    else:
        client, secret = _provider_client(provider, backend, base_url, max_retries, network)
        if clients is not None and network is None:
            clients[shared] = (client, secret)
    llm = LLM(client, model=model or DEFAULT_MODEL, backend=backend, concurrency=concurrency, stats=stats,
              store=store, mode="record" if backend == "record" else "cache", secret=secret, gate=gate)
    llm.caching = caching
    return llm


def _provider_client(provider: str, backend: str, base_url: str | None, max_retries: int,
                     network: Any) -> tuple[Any, str | None]:
    """The SDK client of ``provider`` (and the secret to scrub from cassettes). No timeout is
    set, so the SDK keeps its defaults and its streaming guard; no ``http_client`` unless a test
    gives a ``network``, so proxies and keep-alive are the SDK's."""
    import anthropic
    import httpx2

    extra: dict[str, Any] = {"max_retries": max_retries}
    if network is not None:
        extra["http_client"] = httpx2.Client(transport=network)
    if base_url:
        extra["base_url"] = base_url
    try:
        if provider == "bedrock":
            token = os.environ.get("AWS_BEARER_TOKEN_BEDROCK")
            if not token:
                _needs("botocore", "bedrock", "to sign requests with AWS credentials (SigV4)")
                # Keys from the environment are passed on: the SDK keeps one boto3 session per set of
                # keys it is given for the life of the process, so keys it read from the environment
                # itself would stay in use after the environment changed (a second run in one process).
                keys = {"aws_access_key": os.environ.get("AWS_ACCESS_KEY_ID"),
                        "aws_secret_key": os.environ.get("AWS_SECRET_ACCESS_KEY"),
                        "aws_session_token": os.environ.get("AWS_SESSION_TOKEN")}
                if keys["aws_access_key"] and keys["aws_secret_key"]:
                    extra.update({k: v for k, v in keys.items() if v})
            return anthropic.AnthropicBedrock(**extra), token
        if provider == "vertex":
            token = os.environ.get("ANTHROPIC_VERTEX_ACCESS_TOKEN")
            if not token:
                _needs("google.auth", "vertex", "to use Google application-default credentials")
            return anthropic.AnthropicVertex(access_token=token, **extra), token
    except (ValueError, RuntimeError, ImportError, anthropic.AnthropicError) as exc:
        extra_name = "bedrock" if provider == "bedrock" else "vertex"
        raise UsageError(f"the {provider} provider cannot be set up: {exc}. Fix: install pytest-ctxeval[{extra_name}] "
                         f"and set its credentials and region (see docs/real-api.md)") from None
    key = os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        raise UsageError(f"the {backend} backend needs ANTHROPIC_API_KEY in the environment (or use "
                         f"{flag('backend offline')}, the default, or replay with recorded cassettes)")
    return anthropic.Anthropic(api_key=key, **extra), key


def _needs(module: str, extra: str, purpose: str) -> None:
    """A :class:`UsageError` naming the extra to install when ``module`` is missing (checked
    before the first request, not discovered by it)."""
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        top = module.partition(".")[0].replace("google", "google-auth")
        raise UsageError(f"the {extra} provider needs {top} {purpose}. Fix: pip install 'pytest-ctxeval[{extra}]'"
                         + (" (or set AWS_BEARER_TOKEN_BEDROCK to a Bedrock API key)" if extra == "bedrock" else
                            " (or set ANTHROPIC_VERTEX_ACCESS_TOKEN to an access token)")) from None


_LAZY = {"LLM": "base", "Gate": "base", "ApiServer": "server", "WireModel": "wire", "ModelReply": "base", "UsageTotals": "base", "parse_prompt_too_long": "base",
         "ReferenceModel": "offline", "FAULTS": "..core.faults", "REFERENCE_MODEL_NAME": "offline",
         "PromptCache": "prompt_cache", "CassetteStore": "cassettes", "CassetteTransport": "cassettes", "TransportStats": "cassettes"}


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
