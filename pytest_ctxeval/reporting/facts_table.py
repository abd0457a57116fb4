"""Survival tables and token series: planted facts per type and round, as printed and reported.

The results JSON holds, per scenario with ``facts:``, ``survival`` (:func:`pytest_ctxeval.scenario.planted.survival_entry`:
by type and by place, held and planted per round) and, per run, ``tokens`` (:func:`request_tokens`: the
input tokens of every request and where the compactions fell). This module adds scenarios up and
prints them: ``pytest --ctxeval`` (terminal summary), ``ctxeval run``, ``ctxeval facts survival`` and
the Markdown report use :func:`survival_lines`; the HTML report draws the same numbers.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Iterable

__all__ = ["request_tokens", "combine", "survival_lines", "pct", "print_survival"]


def request_tokens(run: Any) -> dict[str, Any]:
    """``{"requests": [tokens of request 1, 2, ...], "compactions": [[after request n, pre, post], ...],
    "window": N}``: the input tokens the API reported for each model request (the usage anchor of each
    assistant message) and, per compaction, how many requests came before it and its sizes."""
    from ..core.messages import AssistantMessage

    def count(messages: Iterable[Any]) -> int:
        return sum(1 for m in messages if isinstance(m, AssistantMessage) and m.usage is not None)

    tokens = [m.usage.input_tokens for m in run.history if isinstance(m, AssistantMessage) and m.usage is not None]
    comps = [[count(rec.history), rec.result.pre_tokens, rec.result.post_tokens] for rec in run.compactions]
    return {"requests": tokens, "compactions": comps, "window": run.config.context_window}


def combine(entries: Iterable[dict[str, Any]], by: str = "by_type") -> dict[str, dict[str, list[int]]]:
    """Held and planted per group and round, added up over scenarios' ``survival`` entries:
    ``{"safety_rule": {"held": [8, 7, ...], "planted": [8, 8, ...], "bar": [1.0]}}``."""
    out: dict[str, dict[str, Any]] = {}
    for entry in entries:
        data = (entry.get("survival") or {}).get(by)
        if not data:
            continue
        for group, row in data["types"].items():
            agg = out.setdefault(group, {"held": [], "planted": [], "bar": row.get("bar", 0.0)})
            for i, (h, p) in enumerate(zip(row["held"], row["planted"])):
                while len(agg["held"]) <= i:
                    agg["held"].append(0)
                    agg["planted"].append(0)
                agg["held"][i] += h
                agg["planted"][i] += p
    return out


def pct(held: int, planted: int) -> str:
    return f"{held / planted:.0%}" if planted else "-"


def _cliff(row: dict[str, Any]) -> str:
    bar = row.get("bar", 0.0)
    for i, (h, p) in enumerate(zip(row["held"], row["planted"]), start=1):
        if p and h / p < bar:
            return str(i)
    return "-" if bar else "(no bar)"


def survival_lines(entries: Iterable[dict[str, Any]], *, label: str | None = None,
                   places: bool = True) -> list[str]:
    """The survival table of ``entries`` (results-JSON scenario entries): one row per fact type (and,
    with ``places``, per place planted), the share held in each round, the bar and the cliff round.
    Empty when no entry has planted facts."""
    entries = list(entries)
    by_type = combine(entries, "by_type")
    if not by_type:
        return []
    n = sum(1 for e in entries if e.get("survival"))
    rounds = max(len(r["held"]) for r in by_type.values())
    title = "planted facts held" + (f" ({label})" if label else "")
    by_place = combine(entries, "by_place") if places else {}
    width = max(30, len(title) + 2, *(len(g) + 4 for g in by_type), *(len(g) + 15 for g in by_place))
    head = f"{title:<{width}}" + "".join(
        f"{'round ' + str(i):>9}" for i in range(1, rounds + 1)) + f"{'bar':>7}{'cliff':>10}"
    lines = [head]
    for group, row in by_type.items():
        cells = "".join(f"{pct(h, p):>9}" for h, p in zip(row["held"], row["planted"]))
        cells += " " * 9 * (rounds - len(row["held"]))
        bar = row.get("bar", 0.0)
        lines.append(f"  {group:<{width - 2}}{cells}{(f'{bar:.0%}' if bar else '-'):>7}{_cliff(row):>10}")
    for group, row in by_place.items():
        cells = "".join(f"{pct(h, p):>9}" for h, p in zip(row["held"], row["planted"]))
        lines.append(f"  {'planted in ' + group:<{width - 2}}{cells}")
    total = sum(max(r["planted"], default=0) for r in by_type.values())
    lines.append(f"  ({n} scenario{'s' if n != 1 else ''}, {total} facts; a fact counts from the round it is planted)")
    return lines


def print_survival(outcomes: Iterable[Any]) -> None:
    """Print the survival table of evaluated outcomes that plant facts (``ctxeval run``)."""
    from ..scenario.planted import survival_entry

    entries = []
    for o in outcomes:
        scenario = o.run.scenario if getattr(o, "run", None) is not None else None
        if scenario is not None and scenario.facts and o.cases:
            entries.append({"survival": survival_entry(list(scenario.facts), o.cases, scenario.expect)})
    lines = survival_lines(entries)
    if lines:
        print()
        for line in lines:
            print(line)
