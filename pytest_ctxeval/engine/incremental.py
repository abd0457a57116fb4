"""The request view, kept as the context grows: a request costs what arrived since the last one.

:class:`IncrementalView` gives exactly what :class:`~.naive.NaiveView` gives (the same requests,
events, token counts and files; ``tests/engine/test_incremental.py`` checks it on random sessions)
without re-deriving the view from the whole context on every request. Each message goes through
the tiers once, when it first enters a request, and what the next request needs is kept:

* **tier 1** (003:437-470): decisions are frozen, so a message's budget view is final once the
  message has been through :func:`~.budget.budget_message` (all its ids are then seen: a later
  pass would take no decision and apply the same replacements);
* **tier 3** (004:197-214): the candidates in order (:class:`~.microcompact.CandidateIndex`), the
  last response's time, and for each tool_use id the messages holding its result, so a clearing
  touches only the messages it clears;
* **token count** (000:57-86): each message's estimate and the running sum, and the last usage
  anchor, so the count is the anchor plus the margin on the few messages after it
  (:func:`~pytest_ctxeval.core.tokens.with_margin`); the tokens of results deleted by ``cache_edits``;
* **the request body**: the Messages-API ``messages`` as :func:`~pytest_ctxeval.core.messages.to_api`
  builds them (consecutive same-role messages merged), one dict per merged group, and their
  estimate (the sum of the members' :func:`~pytest_ctxeval.core.tokens.estimate_api_message`). A group changes only when a message joins it or a result in it is cleared; it is then
  rebuilt as a new dict, so a body handed out earlier never changes. Bodies share the dicts of the
  groups they have in common (the prompt-cache prefix, in memory too): treat them as read-only.
* **dedupe** (003:82-106): the ids of the results in the context.

Compaction replaces the context (a new ``messages`` list): the view is rebuilt from it, O(context),
as is any change it cannot follow — the list replaced, cut or rewritten in place (the last message
taken in is no longer where it was), the tier state objects or the config swapped, results cleared
(or cache-deleted) in place behind the view, a tool_use id whose result is already taken in given
another tool. Messages are treated as immutable once appended, as the transcript already does (it
writes them when they arrive): a message changed in place in the middle of the context is not seen,
nor is an in-place change to the cleared ids that keeps their number (one id swapped for another:
the engine only ever adds ids).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.messages import AssistantMessage, CompactBoundary, UserMessage, to_api, tool_results
from ..core.tokens import anchor_tokens, estimate_api_message, estimate_api_request, estimate_message, with_margin
from .budget import budget_message
from .microcompact import (
    CandidateIndex, apply_cleared, cleared_marker_tokens, message_freed_tokens, minutes_due,
)
from .naive import emit_budget, emit_microcompact

if TYPE_CHECKING:  # pragma: no cover
    from .pipeline import ContextManager

__all__ = ["IncrementalView"]


class IncrementalView:
    """Tiers 1-3, the token count and the request body, kept message by message (see the module
    docstring). Same interface as :class:`~.naive.NaiveView`."""

    def __init__(self, cm: ContextManager):
        self.cm = cm
        self._reset()

    # -- following the context -------------------------------------------------------------------
    def _reset(self) -> None:
        cm = self.cm
        self.source: list[Any] = cm.messages
        self.keys = (cm.replacements, cm.micro, cm.config, cm.store)
        self.done = 0                      # messages of ``source`` taken through the tiers
        self.budget: list[Any] = []        # per message: its tier-1 view
        self.view_: list[Any] = []         # per message: its tier-1 and tier-3 view
        self.est: list[int] = []           # per message: estimate_message of its view
        self.est_total = 0
        self.api_member: list[int] = []    # per message: estimate_api_message of its view
        self.deleted: list[int] = []       # per message: tokens of its cache-deleted results
        self.deleted_total = 0
        self.anchor = -1                   # index of the last message carrying a usage anchor
        self.last_response: datetime | None = None
        self.where: dict[str, list[int]] = {}  # tool_use_id -> the messages holding its result
        self.candidates = CandidateIndex(cm.config, cm._name)
        self.marker = cleared_marker_tokens(cm.config)
        self.api: list[dict[str, Any]] = []    # the merged API messages, one per group
        self.api_total = 0                 # estimate_api_request's count of their messages
        self.group_of: list[int] = []      # per message: its group (-1: a boundary, never sent)
        self.group_start: list[int] = []   # per group: its first message
        self.body_messages: list[dict[str, Any]] | None = None  # the last list handed out, while current
        self.in_context: set[str] = set()  # result ids of ``source[:ids_done]``
        self.ids_done = 0
        self._last_done: Any = None        # source[done - 1] and source[ids_done - 1] when taken in
        self._last_ids: Any = None
        self._micro_sizes = self._sizes()  # the tier-3 id sets' sizes as this view left them

    def _sizes(self) -> tuple[int, int]:
        micro = self.cm.micro
        return len(micro.cleared_ids), len(micro.cache_deleted_ids)

    def _check(self) -> None:
        """Start over when the context is no longer the one followed (see the module docstring)."""
        cm, src = self.cm, self.cm.messages
        if (src is not self.source or len(src) < max(self.done, self.ids_done)
                or self._sizes() != self._micro_sizes  # results cleared in place, behind the view
                or (self.done and src[self.done - 1] is not self._last_done)
                or (self.ids_done and src[self.ids_done - 1] is not self._last_ids)
                or self.keys[0] is not cm.replacements or self.keys[1] is not cm.micro
                or self.keys[2] is not cm.config or self.keys[3] is not cm.store):
            self._reset()

    def _sync(self) -> None:
        """Take the messages appended since the last request through tier 1 (and index them)."""
        self._check()
        src, cm = self.source, self.cm
        if self.done == len(src):
            return
        decisions = []
        for i in range(self.done, len(src)):
            view, taken = budget_message(src[i], config=cm.config, state=cm.replacements, store=cm.store,
                                         tool_name=cm.tool_name)
            decisions += taken
            self._enter(i, src[i], view)
        self.done = len(src)
        self._last_done = src[-1]
        emit_budget(cm, decisions)

    def _enter(self, i: int, message: Any, budgeted: Any) -> None:
        cm = self.cm
        self.budget.append(budgeted)
        view = apply_cleared([budgeted], cm.micro.cleared_ids)[0]
        self.view_.append(view)
        est = estimate_message(view, cm.config)
        self.est.append(est)
        self.est_total += est
        self.api_member.append(self._api_estimate(view, est))
        self.api_total += self.api_member[-1]
        deleted = self._deleted_in(view)
        self.deleted.append(deleted)
        self.deleted_total += deleted
        if anchor_tokens(view):
            self.anchor = i
        if isinstance(message, AssistantMessage):
            self.last_response = message.timestamp
        for block in tool_results(budgeted):
            holders = self.where.setdefault(block.tool_use_id, [])
            if not holders or holders[-1] != i:
                holders.append(i)
        self.candidates.add(budgeted)
        self._join_group(i, view)

    def _api_estimate(self, view: Any, est: int) -> int:
        """:func:`~pytest_ctxeval.core.tokens.estimate_api_message`; for user and assistant messages it
        is ``est`` already (the API dict's blocks estimate as the blocks do)."""
        if isinstance(view, (UserMessage, AssistantMessage)):
            return est
        return estimate_api_message(view, self.cm.config)

    def _deleted_in(self, view: Any) -> int:
        deleted = self.cm.micro.cache_deleted_ids
        return message_freed_tokens(view, deleted, self.cm.config, self.marker) if deleted else 0

    # -- the API messages ------------------------------------------------------------------------
    def _join_group(self, i: int, view: Any) -> None:
        """``to_api`` merges consecutive same-role messages (boundaries are skipped, not breaks)."""
        if isinstance(view, CompactBoundary):
            self.group_of.append(-1)
            return
        role = "assistant" if isinstance(view, AssistantMessage) else "user"
        if self.api and self.api[-1]["role"] == role:
            self.group_of.append(len(self.api) - 1)
            self._rebuild(len(self.api) - 1)
            return
        self.group_of.append(len(self.api))
        self.group_start.append(i)
        self.api.append({})
        self._rebuild(len(self.api) - 1)

    def _rebuild(self, g: int) -> None:
        """Group ``g`` as a new dict (bodies handed out earlier keep the old one)."""
        end = self.group_start[g + 1] if g + 1 < len(self.group_start) else len(self.view_)
        [self.api[g]] = to_api(self.view_[self.group_start[g]:end])
        self.body_messages = None

    # -- tiers 1-3 for a request -----------------------------------------------------------------
    def apply(self, now: datetime) -> tuple[int, list[dict[str, str]]]:
        """As :meth:`.naive.NaiveView.apply`, touching only new messages and what is cleared."""
        self._sync()
        cm, config = self.cm, self.cm.config
        edits: list[dict[str, str]] = []
        new: list[str] = []
        minutes = minutes_due(self.last_response, now, config)
        if minutes is not None:
            new = self.candidates.time_based_clear(cm.micro)
        elif config.cached_microcompact:
            edits = self.candidates.cached_edits(cm.micro)
            new = [e["tool_use_id"] for e in edits]
        new_ids = set(new)
        freed = self._freed(new_ids, self.anchor) if self.anchor >= 0 else 0
        for i in sorted({i for rid in new_ids for i in self.where.get(rid, ())}):
            if minutes is not None:
                self._refresh(i)
            else:  # cache_edits: the local view is unchanged, the results stop counting
                deleted = self._deleted_in(self.view_[i])
                self.deleted_total += deleted - self.deleted[i]
                self.deleted[i] = deleted
        tokens = max(0, self._count() - freed)
        self._micro_sizes = self._sizes()
        emit_microcompact(cm, minutes, new, edits, tokens, lambda: self._freed(new_ids, len(self.budget) - 1))
        return tokens, edits

    def _freed(self, ids: set[str], upto: int) -> int:
        """``freed_tokens(budget_view[:upto + 1], ids)``, over the messages holding ``ids``."""
        if not ids:
            return 0
        holders = {i for rid in ids for i in self.where.get(rid, ()) if i <= upto}
        return sum(message_freed_tokens(self.budget[i], ids, self.cm.config, self.marker) for i in holders)

    def _refresh(self, i: int) -> None:
        """Message ``i`` had a result cleared: its view, estimate and API group again."""
        view = apply_cleared([self.budget[i]], self.cm.micro.cleared_ids)[0]
        self.view_[i] = view
        est = estimate_message(view, self.cm.config)
        self.est_total += est - self.est[i]
        self.est[i] = est
        member = self._api_estimate(view, est)
        self.api_total += member - self.api_member[i]
        self.api_member[i] = member
        deleted = self._deleted_in(view)
        self.deleted_total += deleted - self.deleted[i]
        self.deleted[i] = deleted
        if self.group_of[i] >= 0:
            self._rebuild(self.group_of[i])

    def _count(self) -> int:
        """``count_tokens(view)``: the anchor plus the margin on what came after it (000:57-86)."""
        if self.anchor >= 0:
            return anchor_tokens(self.view_[self.anchor]) + with_margin(sum(self.est[self.anchor + 1:]), self.cm.config)
        return with_margin(self.est_total, self.cm.config)

    # -- the interface shared with NaiveView -----------------------------------------------------
    def budget_view(self) -> list[Any]:
        self._sync()
        return list(self.budget)

    def view(self) -> list[Any]:
        self._sync()
        return list(self.view_)

    def current(self) -> list[Any]:
        return list(self.view_)

    def api_messages(self) -> list[dict[str, Any]]:
        self.body_messages = list(self.api)
        return self.body_messages

    def context_tokens(self) -> int:
        self._sync()
        return self._count()

    def input_tokens(self, body: dict[str, Any]) -> int:
        cm = self.cm
        if body.get("messages") is not None and body.get("messages") is self.body_messages:
            total = estimate_api_request({k: v for k, v in body.items() if k != "messages"}, cm.config) + self.api_total
        else:  # a body from before the last change: estimate it whole
            total = estimate_api_request(body, cm.config)
        if cm.micro.cache_deleted_ids:
            self._sync()
            total -= self.deleted_total
        return max(0, total)

    def results_in_context(self) -> set[str]:
        self._check()
        src = self.source
        for message in src[self.ids_done:]:
            self.in_context.update(b.tool_use_id for b in tool_results(message))
        self.ids_done = len(src)
        self._last_ids = src[-1] if src else None
        return self.in_context

    def tool_renamed(self, tool_use_id: str) -> None:
        """Tier 3 reads a result's tool when its message is taken in; the naive view re-reads it
        on every request. A result already taken in whose id changes tool: start over."""
        if tool_use_id in self.where:
            self._reset()
