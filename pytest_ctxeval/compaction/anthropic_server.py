"""``anthropic_server``: the Messages API's server-side compaction, the ``compact_20260112``
context edit (PEERS.md lines 71-73).

The API compacts by itself once a request's input passes the edit's ``trigger`` (default 150,000
input tokens; :data:`TRIGGER_TOKENS`, scaled), writing its own summary (optional
``instructions``), and returns it as a ``compaction`` block. With ``pause_after_compaction`` the
response stops right after the block, so the harness gets the summary without a scripted reply
being generated. What the model sees afterwards is that summary, then the new messages (the server
ignores what the block replaced); the harness keeps it as a summary message. (The real client
round-trips the block in an assistant message; the engine's message model has no such block, so
requests after it are not byte-identical to the client's, but they carry the same summary.)

It runs only where the API runs: the ``anthropic`` backend (or ``record``/``replay`` with
cassettes). Offline, the reference model does not implement the edit, and every scenario is
skipped with that reason: there is no honest offline stand-in for a server's summary.

Assumed where PEERS.md is silent: the beta flag is ``compact-2026-01-12`` (the SDK's); the request
carries the whole context view as it is and ``max_tokens`` of the engine's summary reserve; when the
API does not compact (its own count stayed under the trigger), the compaction fails and is retried
on a later request.
"""

from __future__ import annotations

from typing import Any

import anthropic

from ..errors import flag, ModelError
from ..engine.compact import CompactionFailed
from ..engine.dedupe import media_stripped
from ..core.messages import CompactBoundary, Usage, to_api
from .base import BaseCompactor, Compacted, CompactionState, option, scaled
from .formats import FREE_FORM

__all__ = ["AnthropicServer", "TRIGGER_TOKENS", "BETA", "EDIT_TYPE"]

#: PEERS 72-73: "server-side compact_20260112 (trigger, default 150,000 input tokens ...)" (scaled).
TRIGGER_TOKENS = 150_000
#: The edit's type and the beta flag the SDK knows it by.
EDIT_TYPE, BETA = "compact_20260112", "compact-2026-01-12"
BACKENDS = ("anthropic", "record", "replay")


class AnthropicServer(BaseCompactor):
    """The API's own compaction (``compact_20260112``), real API only."""

    name = "anthropic_server"
    description = "Anthropic API server-side compaction (compact_20260112), at 150K input tokens (scaled)"
    summary_format = FREE_FORM
    backends = BACKENDS

    def __init__(self, *, tiers: str = "all", instructions: str | None = None, trigger: int = TRIGGER_TOKENS,
                 **options: Any):
        super().__init__(tiers=tiers, **options)
        self.instructions = None if instructions is None else option(self.name, "instructions", instructions, str)
        self.trigger = option(self.name, "trigger", trigger, int, low=1)

    @staticmethod
    def unavailable_reason(backend: str) -> str:
        return (f"anthropic_server is the API's server-side compaction (the {EDIT_TYPE} context edit): it needs the "
                f"real API ({flag('backend anthropic')}, or record/replay with cassettes); the {backend} backend's "
                "reference model does not implement it")

    def should_compact(self, state: CompactionState) -> bool:
        return state.tokens >= scaled(self.trigger, state.config)

    def edit(self, state: CompactionState) -> dict[str, Any]:
        edit: dict[str, Any] = {"type": EDIT_TYPE, "pause_after_compaction": True,
                                "trigger": {"type": "input_tokens", "value": scaled(self.trigger, state.config)}}
        instructions = state.instructions or self.instructions
        if instructions:
            edit["instructions"] = instructions
        return edit

    def compact(self, state: CompactionState) -> Compacted:
        llm = state.llm
        context = [m for m in state.view if not isinstance(m, CompactBoundary)]
        request: dict[str, Any] = {"model": llm.model, "max_tokens": state.config.summary_output_reserve_tokens,
                   "messages": to_api(media_stripped(context)), "context_management": {"edits": [self.edit(state)]}}
        kwargs = {**request, "betas": [BETA], "extra_headers": {
            "x-ctxeval-task": "compact", "x-ctxeval-context-window": str(state.config.context_window)}}
        cached = False
        try:
            if hasattr(llm, "send"):  # cassettes, the run's gate and one retry policy, as for any request
                from anthropic.types.beta import BetaMessage

                response, cached = llm.send("compact", kwargs, create=llm.client.beta.messages.create,
                                            parse=BetaMessage.model_validate)
            else:
                response = llm.client.beta.messages.create(**kwargs)
        except (anthropic.APIError, ModelError) as exc:
            raise CompactionFailed(f"the API's compaction request failed: {type(exc).__name__}: {exc}", request) from None
        usage = _usage(response)
        if cached:
            llm.usage.add_cached(response.model or llm.model)
        else:
            llm.usage.add(response.model or llm.model, usage)
        blocks = [b for b in response.content if getattr(b, "type", None) == "compaction"]
        if not blocks:
            raise CompactionFailed(f"the API did not compact (stop_reason {response.stop_reason!r}): its count of the "
                                   f"request stayed under the {request['context_management']['edits'][0]['trigger']['value']:,}"
                                   "-token trigger", request)
        summary = blocks[-1].content
        if not summary:
            raise CompactionFailed("the API's compaction block has no summary (a failed compaction)", request)
        return Compacted(messages=[state.summary_message(summary)], summary=summary, raw_reply=summary,
                         request=request, usage=usage)


def _usage(response: Any) -> Usage:
    """The response's usage plus its compaction iterations (which the top-level fields leave out)."""
    u = response.usage
    total = {"input_tokens": u.input_tokens or 0, "output_tokens": u.output_tokens or 0,
             "cache_creation_input_tokens": getattr(u, "cache_creation_input_tokens", 0) or 0,
             "cache_read_input_tokens": getattr(u, "cache_read_input_tokens", 0) or 0}
    for it in getattr(u, "iterations", None) or []:
        if getattr(it, "type", None) == "compaction":
            for key in total:
                total[key] += getattr(it, key, 0) or 0
    return Usage(**total)
