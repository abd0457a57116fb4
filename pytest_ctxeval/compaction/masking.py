"""``observation_masking``: keep the last N tool observations, no summary — the baseline of
JetBrains' "The Complexity Trap" (PEERS.md lines 66-68) and of OpenHands' observation-masking
condenser (PEERS.md 52-55).

* **What** (PEERS 66-67): every tool result (an *observation*) but the newest ``keep`` (10, as in
  the paper; :data:`KEEP_LAST`) is replaced by a one-line placeholder (our wording,
  :data:`PLACEHOLDER`); the agent's own messages, its calls and every user message stay as they
  are. No model call, no summary.
* **When**: the paper masks at every turn. To compare compactors at the same pressure, masking
  here runs when the context reaches the point where Claude Code would compact (the engine's
  ``autocompact_threshold``) and then keeps exactly the last ``keep`` observations;
  ``every_round=True`` masks before every request instead, as the paper does (one graded
  compaction per request that masks something).

With no summary, masking cannot shrink what is not an observation: a context of long messages
stays above the window (``fits_window`` reports it), a trade-off the paper measures as cost.
"""

from __future__ import annotations

from typing import Any

from ..core.messages import ToolResultBlock, result_text, tool_results, tool_uses
from .base import BaseCompactor, Compacted, CompactionState, option
from .formats import NO_SUMMARY

__all__ = ["ObservationMasking", "KEEP_LAST", "PLACEHOLDER", "mask_observations"]

#: PEERS 66: "masking old observations (keep the last 10)".
KEEP_LAST = 10
#: The placeholder an old observation becomes (our wording).
PLACEHOLDER = "[Old observation masked: {lines} line(s) of {tool} output omitted]"


def _masked(text: str) -> bool:
    return text.startswith("[Old observation masked:")


def mask_observations(messages: list[Any], view: list[Any], keep: int) -> tuple[list[Any], list[str]]:
    """``(messages, ids)``: ``messages`` with every observation but the newest ``keep`` masked, and
    the tool_use ids masked now. Sizes and lines are read on ``view`` (what the model saw).

    >>> from pytest_ctxeval.core.messages import AssistantMessage, ToolUseBlock, UserMessage
    >>> msgs = []
    >>> for i in range(3):
    ...     msgs += [AssistantMessage(uuid=f"a{i}", content=[ToolUseBlock(id=f"t{i}", name="Bash", input={})]),
    ...              UserMessage(uuid=f"r{i}", content=[ToolResultBlock(tool_use_id=f"t{i}", content="x\\ny")])]
    >>> out, ids = mask_observations(msgs, msgs, keep=1)
    >>> ids, result_text(tool_results(out[1])[0])
    (['t0', 't1'], '[Old observation masked: 2 line(s) of Bash output omitted]')
    """
    names = {u.id: u.name for m in messages for u in tool_uses(m)}
    order = [b.tool_use_id for m in messages for b in tool_results(m)]
    old = set(order[:-keep] if keep else order)
    shown = {b.tool_use_id: result_text(b) for m in view for b in tool_results(m)}
    ids: list[str] = []
    out = []
    for m in messages:
        blocks = tool_results(m)
        if not any(b.tool_use_id in old and not _masked(result_text(b)) for b in blocks):
            out.append(m)
            continue
        content = []
        for b in m.content:
            if isinstance(b, ToolResultBlock) and b.tool_use_id in old and not _masked(result_text(b)):
                text = shown.get(b.tool_use_id, result_text(b))
                lines = text.count("\n") + 1 if text else 0
                b = b.model_copy(update={"content": PLACEHOLDER.format(lines=lines, tool=names.get(b.tool_use_id, "tool"))})
                ids.append(b.tool_use_id)
            content.append(b)
        out.append(m.model_copy(update={"content": content}))
    return out, ids


class ObservationMasking(BaseCompactor):
    """Keep the last N tool observations, mask the rest; no summary."""

    name = "observation_masking"
    description = "Observation masking (JetBrains): keep the last 10 tool outputs, mask older ones, no summary"
    summary_format = NO_SUMMARY

    def __init__(self, *, tiers: str = "all", keep: int = KEEP_LAST, every_round: bool = False, **options: Any):
        super().__init__(tiers=tiers, **options)
        self.keep = option(self.name, "keep", keep, int, low=0)
        self.every_round = option(self.name, "every_round", every_round, bool)

    def _live(self, state: CompactionState) -> int:
        return sum(1 for m in state.messages for b in tool_results(m) if not _masked(result_text(b)))

    def should_compact(self, state: CompactionState) -> bool:
        if self._live(state) <= self.keep:
            return False
        return self.every_round or state.tokens >= state.config.autocompact_threshold

    def compact(self, state: CompactionState) -> Compacted | None:
        masked, ids = mask_observations(state.messages, state.view, self.keep)
        if not ids:
            return None
        return Compacted(messages=masked, summary="", kind=self.name,
                         notes=[f"masked {len(ids)} observation(s); the last {self.keep} kept"])
