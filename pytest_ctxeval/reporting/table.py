"""The per-scenario summary table printed by ``pytest --ctxeval`` and ``ctxeval run``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ScenarioRow", "format_table", "format_tokens"]


@dataclass
class ScenarioRow:
    name: str
    compactions: int = 0
    tokens: list[tuple[int, int]] = field(default_factory=list)   # (pre, post) per compaction
    counts: dict[str, int] = field(default_factory=lambda: {"pass": 0, "fail": 0, "n/a": 0, "ungraded": 0,
                                                            "xfail": 0, "xpass": 0, "error": 0})
    tiers: dict[str, int] = field(default_factory=dict)           # events per tier
    error: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScenarioRow:
        return cls(name=data["name"], compactions=data.get("compactions", 0),
                   tokens=[tuple(t) for t in data.get("tokens", [])], counts=dict(data.get("counts", {})),
                   tiers=dict(data.get("tiers", {})), error=data.get("error"))

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "compactions": self.compactions, "tokens": [list(t) for t in self.tokens],
                "counts": dict(self.counts), "tiers": dict(self.tiers), "error": self.error}


def format_tokens(tokens: list[tuple[int, int]], limit: int = 3) -> str:
    """``16,950 → 607, 17,102 → 1,020`` (the first ``limit``, then ``+N more``)."""
    if not tokens:
        return "-"
    parts = [f"{pre:,} → {post:,}" for pre, post in tokens[:limit]]
    if len(tokens) > limit:
        parts.append(f"+{len(tokens) - limit} more")
    return ", ".join(parts)


def format_table(rows: list[ScenarioRow], first: str = "scenario") -> list[str]:
    """Plain-text table lines: ``first`` (scenario or transcript), compactions, tokens before →
    after, graders, tiers. The counts are graders (pytest's items), not verdicts: a grader that
    fails on any compaction counts once. "failed" counts unexpected failures, known failures that
    passed and graders that crashed; "other" counts n/a, ungraded and known (expected) failures."""
    header = (first, "compactions", "tokens before → after", "passed", "failed", "other", "tiers")
    body = []
    for r in rows:
        other = r.counts.get("n/a", 0) + r.counts.get("ungraded", 0) + r.counts.get("xfail", 0)
        tiers = ", ".join(f"{k} {v}" for k, v in sorted(r.tiers.items())) or "-"
        failed = r.counts.get("fail", 0) + r.counts.get("xpass", 0) + r.counts.get("error", 0)
        body.append((r.name, str(r.compactions), format_tokens(r.tokens) if not r.error else f"error: {r.error[:60]}",
                     str(r.counts.get("pass", 0)), str(failed), str(other), tiers))
    widths = [max(len(h), *(len(row[i]) for row in body)) if body else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    for row in body:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    return lines
