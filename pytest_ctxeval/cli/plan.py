"""``ctxeval plan SCENARIO`` (and ``ctxeval lint --plan``): where a scenario's tiers will fire.

Writing a scenario is sizing tool results until a compaction lands where you want it. The plan
replays the scenario through the reference engine with the offline reference model (never the
API, no key needed) and prints, per request the agent makes, the tokens it will have against the
warning and auto-compact thresholds and the window, and what each tier did before it: results
persisted (budget), reads deduplicated, old results cleared (microcompact), session memory or a
full compaction, a prompt-too-long retry. Manual ``compact:`` steps appear where they run.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["add_plan_command", "run_plan", "plan_lines", "add_plan_flag"]

_BAR = 20


def add_plan_command(sub: Any) -> None:
    """Register ``ctxeval plan``."""
    p = sub.add_parser("plan", help="print where each tier and compaction of a scenario will fire (no API call)",
                       description="Replay scenarios through the reference engine with the offline reference model "
                                   "(no API call, no key) and print per request the tokens it will have against the "
                                   "warning and auto-compact thresholds, and where each tier and compaction fires. "
                                   "Exit 0, or 2 on bad input.")
    p.add_argument("paths", nargs="+", metavar="SCENARIO", help="scenario files or folders")
    p.add_argument("--context-window", type=int, default=None, metavar="N",
                   help="plan under this window instead of the scenario's")


def add_plan_flag(parser: Any) -> None:
    """``--plan`` for ``ctxeval lint``."""
    parser.add_argument("--plan", action="store_true",
                        help="after a clean lint, print each scenario's plan (see ctxeval plan)")


def run_plan(args: argparse.Namespace) -> int:
    """Run ``ctxeval plan``."""
    from ..errors import UsageError
    from ..scenario.schema import find_scenarios

    files = find_scenarios([Path(p) for p in args.paths])
    if not files:
        raise UsageError(f"no scenario files (*.yaml, *.yml) under {', '.join(args.paths)}")
    for n, path in enumerate(files):
        if n:
            print()
        for line in plan_lines(path, context_window=getattr(args, "context_window", None)):
            print(line)
    return 0


def _bar(tokens: int, threshold: int) -> str:
    filled = min(_BAR, round(_BAR * tokens / threshold)) if threshold else 0
    return "#" * filled + "." * (_BAR - filled)


def _event(e: Any) -> str:
    sizes = ""
    if e.tokens_before is not None and e.tokens_after is not None:
        sizes = f" {e.tokens_before:,} → {e.tokens_after:,}"
    what = f"{e.tier} {e.action}".replace("_", " ")
    return what + sizes + (f" ({e.detail})" if e.detail and len(e.detail) <= 60 else "")


def plan_lines(path: str | Path, *, context_window: int | None = None) -> list[str]:
    """The plan of one scenario file as text lines."""
    import tempfile

    from ..runner import run_scenario
    from ..scenario.schema import load_scenario

    scenario = load_scenario(path)
    rows: list[tuple[int, int, Any, list[Any]]] = []
    with tempfile.TemporaryDirectory(prefix="ctxeval-plan-") as folder:
        run = run_scenario(scenario, backend="offline", context_window=context_window, session_dir=folder,
                           on_prepare=lambda p: rows.append((p.turn, p.tokens, p.warning, list(p.events))))
    cfg = run.config
    out = [f"{scenario.display_name} ({path}): window {cfg.context_window:,}, warning at {cfg.warning_threshold:,}, "
           f"auto-compact at {cfg.autocompact_threshold:,}, blocking at {cfg.blocking_limit:,} tokens",
           f"{'request':>7}  {'tokens':>8}  {'of auto-compact':<{_BAR + 7}}  state      what fired before it "
           "(tokens: the size the next request has before the tiers act)"]
    seen = {id(e) for _, _, _, events in rows for e in events}
    manual = [e for e in run.events if id(e) not in seen]
    previous, unexplained_drop = None, False
    for n, (turn, tokens, warning, events) in enumerate(rows, start=1):
        for e in [m for m in manual if m.turn < turn]:
            out.append(f"{'':>7}  {'':>8}  {'':<{_BAR + 7}}  {'':9}  {_between(e)}")
            manual.remove(e)
        # A request a compaction shrank is shown at the size that triggered it.
        before = max([tokens] + [e.tokens_before for e in events if e.tier in ("autocompact", "session_memory")
                                 and e.tokens_before is not None])
        pct = before / cfg.autocompact_threshold if cfg.autocompact_threshold else 0
        state = ("COMPACTED" if before > tokens else "BLOCKING" if warning.at_blocking_limit
                 else "OVER" if warning.above_autocompact else "warning" if warning.above_warning else "ok")
        tokens = before
        counts: dict[str, int] = {}
        for e in events:
            counts[_event(e)] = counts.get(_event(e), 0) + 1
        fired = "; ".join(f"{what} ×{k}" if k > 1 else what for what, k in counts.items())
        if previous is not None and tokens < previous and not events and state == "ok":
            fired, unexplained_drop = "re-anchored on the reply's real usage (see below)", True
        previous = tokens
        out.append(f"{n:>7}  {tokens:>8,}  {_bar(tokens, cfg.autocompact_threshold)} {pct:>4.0%}  {state:9}  {fired}".rstrip())
    for e in manual:
        out.append(f"{'':>7}  {'':>8}  {'':<{_BAR + 7}}  {'':9}  {_between(e)}")
    compactions = [c for c in run.compactions]
    out.append(f"{len(rows)} requests, {len(compactions)} compaction{'s' if len(compactions) != 1 else ''}"
               + (": " + ", ".join(f"#{c.index} {c.result.trigger} at request {_request_of(rows, c.turn)} "
                                  f"({c.result.pre_tokens:,} → {c.result.post_tokens:,})" for c in compactions)
                  if compactions else " (grow a tool result, e.g. lorem(words=N), or add a compact: step)"))
    if unexplained_drop:
        out.append("(a count can drop with no tier firing: what came after the last reply is estimated with Claude "
                   "Code's 4/3 margin (seed 003:353); the next reply's real usage then replaces that estimate "
                   "(000:57-86, tokenCountWithEstimation))")
    out.append("(planned with the offline reference model; a real model's summaries differ in size, so later "
               "rows may shift)")
    return out


def _between(e: Any) -> str:
    """An event between requests: a scripted compact: step, or work after a reply (session notes)."""
    return f"({'manual' if e.tier == 'compact' else 'after the reply'}) {_event(e)}"


def _request_of(rows: list[tuple[int, int, Any, list[Any]]], turn: int) -> str:
    for n, (t, *_rest) in enumerate(rows, start=1):
        if t >= turn:
            return str(n)
    return "end"
