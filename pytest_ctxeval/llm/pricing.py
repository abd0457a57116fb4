"""Dollars per model: a price table (USD per million tokens), overridable.

Prices change; the table is a default, not a fact. Override it with a YAML/JSON file mapping model
names (or prefixes) to ``{input, output, cache_write, cache_read}`` (``--ctxeval-prices FILE`` /
``ctxeval run --prices FILE``). A model that matches no entry costs 0 and is reported as unpriced.
The offline reference model is free.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any
from collections.abc import Mapping

from ..core.yaml_safe import load_yaml

from ..errors import UsageError

__all__ = ["DEFAULT_PRICES", "cost_of", "load_prices", "set_prices", "price_for"]

#: USD per million tokens (5-minute cache writes), Anthropic's list prices as of 2026-11
#: (platform.claude.com/docs/en/about-claude/pricing and the model overview pages). Prefixes: the
#: longest one that starts a model name wins. Haiku 5.5 is billed in two bands by prompt length; the
#: entry is the band up to 100k tokens. Check the current list and override (module docstring).
DEFAULT_PRICES: dict[str, dict[str, float]] = {
    "claude-fable-5": {"input": 10.0, "output": 50.0, "cache_write": 12.50, "cache_read": 1.00},
    "claude-fable-5-1": {"input": 10.0, "output": 50.0, "cache_write": 12.50, "cache_read": 0.25},
    "claude-opus-5": {"input": 5.0, "output": 25.0, "cache_write": 6.25, "cache_read": 0.50},
    "claude-opus-5-5": {"input": 4.0, "output": 20.0, "cache_write": 5.00, "cache_read": 0.20},
    "claude-opus-4": {"input": 15.0, "output": 75.0, "cache_write": 18.75, "cache_read": 1.50},
    **{f"claude-opus-4-{minor}": {"input": 5.0, "output": 25.0, "cache_write": 6.25, "cache_read": 0.50}
       for minor in (5, 6, 7, 8)},
    "claude-sonnet-5": {"input": 2.0, "output": 10.0, "cache_write": 2.50, "cache_read": 0.20},
    "claude-sonnet-5-5": {"input": 2.0, "output": 10.0, "cache_write": 2.50, "cache_read": 0.10},
    "claude-sonnet-4": {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.30},
    "claude-haiku-5-5": {"input": 0.10, "output": 0.50, "cache_write": 0.125, "cache_read": 0.01},
    "claude-haiku-4": {"input": 1.0, "output": 5.0, "cache_write": 1.25, "cache_read": 0.10},
    "ctxeval-reference": {"input": 0.0, "output": 0.0, "cache_write": 0.0, "cache_read": 0.0},
}
_PRICES: dict[str, dict[str, float]] = dict(DEFAULT_PRICES)


def price_for(model: str) -> dict[str, float] | None:
    """The entry whose name is the longest prefix of ``model`` (``claude-sonnet-4-6`` ->
    ``claude-sonnet-4``, ``claude-sonnet-5-5-20261001`` -> ``claude-sonnet-5-5``), or None."""
    best = None
    model = model.rpartition("anthropic.")[2] if "anthropic." in model else model  # Bedrock ids: us.anthropic.x
    for name in _PRICES:
        if model.startswith(name) and (best is None or len(name) > len(best)):
            best = name
    return _PRICES.get(best) if best else None


def cost_of(model: str, usage: Mapping[str, Any]) -> float:
    """Dollars for ``usage`` (a by-model usage row) of ``model``; 0 when unpriced (the usage
    totals list such a model under ``unpriced``). Tokens also counted under ``batch_input_tokens``
    / ``batch_output_tokens`` came through the Message Batches API and cost half."""
    price = price_for(model)
    if price is None:
        return 0.0
    total = (usage.get("input_tokens", 0) * price["input"] + usage.get("output_tokens", 0) * price["output"]
             + usage.get("cache_creation_input_tokens", 0) * price.get("cache_write", price["input"])
             + usage.get("cache_read_input_tokens", 0) * price.get("cache_read", price["input"]))
    total -= 0.5 * (usage.get("batch_input_tokens", 0) * price["input"]
                    + usage.get("batch_output_tokens", 0) * price["output"])
    return round(total / 1_000_000, 6)


def load_prices(path: str | Path) -> dict[str, dict[str, float]]:
    from ..core.userfiles import read_user_text

    p = Path(path)
    text = read_user_text(p, "price table", "pass the YAML or JSON file in it")  # a folder, not UTF-8: named
    try:
        data = json.loads(text) if p.suffix == ".json" else load_yaml(text)[0]
    except (OSError, ValueError, RecursionError) as exc:  # BadYAML is a ValueError naming the line
        raise UsageError(f"{p}: cannot read the price table ({exc})") from None
    if not isinstance(data, dict):
        raise UsageError(f"{p}: a price table maps model names to {{input, output, cache_write, cache_read}}")
    out = {}
    for model, row in data.items():
        if not isinstance(row, dict) or not {"input", "output"} <= set(row):
            raise UsageError(f"{p}: {model}: needs at least 'input' and 'output' (USD per million tokens)")
        try:
            out[str(model)] = {k: float(v) for k, v in row.items()}
        except (TypeError, ValueError):
            raise UsageError(f"{p}: {model}: prices must be numbers") from None
        if not all(math.isfinite(v) and v >= 0 for v in out[str(model)].values()):
            raise UsageError(f"{p}: {model}: prices must be finite numbers, 0 or more")
    return out


def set_prices(overrides: Mapping[str, Mapping[str, float]] | None) -> None:
    """Install ``overrides`` on top of the defaults (None restores the defaults)."""
    _PRICES.clear()
    _PRICES.update(DEFAULT_PRICES)
    if overrides:
        _PRICES.update({k: dict(v) for k, v in overrides.items()})
