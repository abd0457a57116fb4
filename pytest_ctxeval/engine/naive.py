"""The request view, the straightforward way: every request re-derives it from the whole context.

This is the reference the incremental pipeline (:mod:`.incremental`) is checked against: the
property test ``tests/engine/test_incremental.py`` replays random sessions through both and
requires identical requests, events, token counts and transcripts; ``benchmarks/pipeline_scaling.py``
times both. Build a :class:`~.pipeline.ContextManager` with ``naive=True`` to use it.

Each request here costs O(history), like Claude Code's own loop, which re-scans the message array
before every call (budget, microcompact, token count; 000:98-175, 003:22-26): tier 1 re-applies
its frozen replacements to every message, tier 3 re-scans for candidates and re-copies every
cleared result, the count re-finds its anchor, and the whole ``messages`` list is rebuilt.

A request view object (this one or :class:`~.incremental.IncrementalView`) answers, for its
:class:`~.pipeline.ContextManager`:

* ``apply(now) -> (tokens, cache_edits)``: tiers 1-3 for a request (events emitted), then
  ``current()`` is the view and ``api_messages()`` its Messages-API ``messages``;
* ``budget_view()`` and ``view()``: tier 1 alone, and tiers 1 and 3 as decided so far;
* ``context_tokens()``: the anchored count of ``view()`` (the session-memory hook's count);
* ``input_tokens(body)``: what the API would report for a request body;
* ``results_in_context()``: the tool_use ids with a result in the context (the dedupe check);
* ``tool_renamed(tool_use_id)``: a tool_use id was given a tool name it did not have.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any
from collections.abc import Callable

from ..core.messages import to_api, tool_results
from ..core.tokens import anchor_tokens, count_tokens, estimate_api_request
from .budget import BudgetDecision, apply_budget
from .microcompact import apply_cleared, cached_edits, freed_tokens, time_based_clear, time_based_due

if TYPE_CHECKING:  # pragma: no cover
    from .pipeline import ContextManager

__all__ = ["NaiveView", "emit_budget", "emit_microcompact"]


def emit_budget(cm: ContextManager, decisions: list[BudgetDecision]) -> None:
    """One ``budget/persisted`` event per tier-1 decision, in the order taken."""
    for d in decisions:
        cm.emit("budget", "persisted", ids=[d.tool_use_id], detail=d.detail)


def emit_microcompact(cm: ContextManager, minutes: float | None, new: list[str], edits: list[dict[str, str]],
                      tokens: int, freed_all: Callable[[], int]) -> None:
    """The tier-3 event of a request, if it cleared anything: ``freed_all()`` gives the tokens the
    newly cleared results took in the whole view (the event's before/after difference)."""
    if minutes is not None and new:
        cm.emit("microcompact", "time_based_clear", tokens_before=tokens + freed_all(), tokens_after=tokens,
                ids=new, detail=f"{minutes:.0f} min since the last response; {len(set(new))} old results cleared")
    elif edits:
        cm.emit("microcompact", "cache_edits", tokens_before=tokens + freed_all(), tokens_after=tokens, ids=new,
                detail=f"{len(edits)} old results deleted server-side; local messages unchanged")


def _anchor_index(messages: list[Any]) -> int:
    """Index of the last assistant message carrying API usage (the count's anchor), or -1."""
    for i in range(len(messages) - 1, -1, -1):
        if anchor_tokens(messages[i]):
            return i
    return -1


class NaiveView:
    """Tiers 1-3 re-applied to the whole context on every request (O(history) per request)."""

    def __init__(self, cm: ContextManager):
        self.cm = cm
        self._current: list[Any] = []

    def budget_view(self) -> list[Any]:
        cm = self.cm
        view, decisions = apply_budget(cm.messages, config=cm.config, state=cm.replacements, store=cm.store,
                                       tool_name=cm.tool_name)
        emit_budget(cm, decisions)
        return view

    def view(self) -> list[Any]:
        return apply_cleared(self.budget_view(), self.cm.micro.cleared_ids)

    def apply(self, now: datetime) -> tuple[int, list[dict[str, str]]]:
        """Tokens freed by microcompact are subtracted before the threshold check (003:526-532):
        only for results behind the usage anchor, which counted them; results after the anchor are
        estimated from the cleared view already."""
        cm, config = self.cm, self.cm.config
        view = self.budget_view()
        edits: list[dict[str, str]] = []
        new: list[str] = []
        minutes = time_based_due(view, now, config)
        if minutes is not None:
            new = time_based_clear(view, config, cm.micro, cm._name)
        elif config.cached_microcompact:
            edits = cached_edits(view, config, cm.micro, cm._name)
            new = [e["tool_use_id"] for e in edits]
        new_ids = set(new)
        anchor = _anchor_index(view)
        freed = freed_tokens(view[: anchor + 1], new_ids, config) if anchor >= 0 else 0
        cleared = apply_cleared(view, cm.micro.cleared_ids)
        tokens = max(0, count_tokens(cleared, config) - freed)
        emit_microcompact(cm, minutes, new, edits, tokens, lambda: freed_tokens(view, new_ids, config))
        self._current = cleared
        return tokens, edits

    def current(self) -> list[Any]:
        return self._current

    def api_messages(self) -> list[dict[str, Any]]:
        return to_api(self._current)

    def context_tokens(self) -> int:
        self._current = self.view()
        return count_tokens(self._current, self.cm.config)

    def input_tokens(self, body: dict[str, Any]) -> int:
        cm = self.cm
        total = estimate_api_request(body, cm.config)
        if cm.micro.cache_deleted_ids:
            total -= freed_tokens(self.view(), cm.micro.cache_deleted_ids, cm.config)
        return max(0, total)

    def results_in_context(self) -> set[str]:
        return {b.tool_use_id for m in self.cm.messages for b in tool_results(m)}

    def tool_renamed(self, tool_use_id: str) -> None:
        """Nothing to do: every request reads the tool names afresh."""
