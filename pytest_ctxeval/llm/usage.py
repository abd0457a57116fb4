"""What a run really spent: calls and tokens per model, from the replies the API sent.

* A reply served from a cassette (a rerun, or ``replay``) cost nothing and made no HTTP request:
  it is counted in ``cached_calls`` only, never in ``api_calls``, tokens or dollars.
* A reply from the Message Batches API is priced at half the interactive rate, as the API bills
  it; its tokens are counted in the totals and again under ``batch_*`` so the discount is visible.
* A model the price table does not know is listed under ``unpriced`` (its dollars are unknown,
  not zero), and :func:`pytest_ctxeval.evaluation.usage_lines` says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.messages import Usage

__all__ = ["UsageTotals", "USAGE_KEYS", "BATCH_DISCOUNT"]

#: The Message Batches API bills 50 % of the interactive price (input and output).
BATCH_DISCOUNT = 0.5
USAGE_KEYS = ("api_calls", "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
              "batch_input_tokens", "batch_output_tokens", "cached_calls")


def _row() -> dict[str, int]:
    return {k: 0 for k in USAGE_KEYS}


@dataclass
class UsageTotals:
    """Calls and tokens spent through one :class:`~pytest_ctxeval.llm.LLM`, per model."""

    api_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    batch_input_tokens: int = 0
    batch_output_tokens: int = 0
    cached_calls: int = 0
    by_model: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, model: str, usage: Usage, *, batch: bool = False) -> None:
        """One reply the API sent (``batch``: through the Message Batches API)."""
        row = self.by_model.setdefault(model, _row())
        values = {"api_calls": 1, "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                  "cache_creation_input_tokens": usage.cache_creation_input_tokens,
                  "cache_read_input_tokens": usage.cache_read_input_tokens}
        if batch:
            values.update(batch_input_tokens=usage.input_tokens, batch_output_tokens=usage.output_tokens)
        for key, value in values.items():
            setattr(self, key, getattr(self, key) + value)
            row[key] += value

    def add_cached(self, model: str) -> None:
        """One reply served from a cassette: no request, no tokens billed."""
        self.cached_calls += 1
        self.by_model.setdefault(model, _row())["cached_calls"] += 1

    def as_dict(self) -> dict[str, Any]:
        return priced({k: getattr(self, k) for k in USAGE_KEYS}, self.by_model)


def priced(totals: dict[str, Any], by_model: dict[str, dict[str, int]]) -> dict[str, Any]:
    """``totals`` with dollars per model and in all, and the models that have no price."""
    from .pricing import cost_of, price_for

    rows: dict[str, dict[str, Any]] = {k: dict(v) for k, v in sorted(by_model.items())}
    unpriced = []
    for model, row in rows.items():
        row["usd"] = cost_of(model, row)
        if price_for(model) is None and (row.get("input_tokens") or row.get("output_tokens")):
            unpriced.append(model)
    return {**totals, "usd": round(sum(r["usd"] for r in rows.values()), 6), "unpriced": unpriced, "by_model": rows}
