"""``claude_code``: the reference engine, unchanged (PEERS.md lines 6-12; the seeds).

Auto-compaction at ``effective window - 13,000`` tokens (167,000 of 200,000), session memory first
when it is on, else a nine-section summary after an ``<analysis>`` scratchpad, prompt-too-long
retries, a circuit breaker after 3 failures, partial compaction, re-injected files: all of it is
the engine's (:mod:`pytest_ctxeval.engine`), run as it runs without a compactor. ``native = True``
tells the runner to leave tier 4-5 to the engine; :meth:`ClaudeCode.should_compact` and
:meth:`ClaudeCode.compact` give the same decision and the same full compaction through the
:class:`~pytest_ctxeval.compaction.base.Compactor` protocol, for a subclass that sets ``native =
False`` to change one of them.
"""

from __future__ import annotations

from typing import Any

from ..engine.autocompact import AutoCompactTracking, should_autocompact
from ..engine.compact import compact_conversation
from ..engine.pipeline import shown_transcript_path
from ..engine.prompt import PromptSet
from ..core.messages import CompactBoundary
from ..errors import UsageError, flag
from .base import BaseCompactor, CompactionState, Compacted, option, tier_changes

__all__ = ["ClaudeCode"]


class ClaudeCode(BaseCompactor):
    """Claude Code's compaction: the reference engine."""

    name = "claude_code"
    description = "Claude Code: nine-section summary after an <analysis> scratchpad at 83.5 % of the window (the engine)"
    summary_format = None  # the nine sections, read by pytest_ctxeval.reading.summary
    native = True

    def __init__(self, *, tiers: str = "all", prompt: str | None = None, **options: Any):
        super().__init__(tiers=tiers, **options)
        if prompt is not None and self.native:
            raise UsageError(f"compactor {self.name}: the prompt option is for a subclass that compacts itself "
                             "(native = False); the engine compacts with the run's prompt: "
                             f"{flag('prompt PATH')}")
        self.prompts = PromptSet(option(self.name, "prompt", prompt, str)) if prompt else PromptSet()

    def configure(self, config: Any) -> Any:
        """Native: the engine's config with only the tiers ``tiers`` leaves out turned off (tier 4
        stays the engine's); otherwise as any compactor."""
        return config.replace(**tier_changes(self.tiers)) if self.native else super().configure(config)

    def should_compact(self, state: CompactionState) -> bool:
        """``shouldAutoCompact`` (004:240-266): at or above ``autocompact_threshold``."""
        enabled = state.config.replace(autocompact_enabled=True)
        return should_autocompact(state.tokens, enabled, AutoCompactTracking())

    def compact(self, state: CompactionState) -> Compacted:
        """A full compaction (003:177-277) of the view: the nine-section summary replaces it."""
        context = [m for m in state.view if not isinstance(m, CompactBoundary)]
        if state.ids is None or state.now is None:
            raise UsageError("the claude_code compactor needs CompactionState.now and .ids (the run's clock and ids)")
        result = compact_conversation(context, llm=state.llm, config=state.config, prompts=self.prompts,
                                      ids=state.ids, now=state.now, transcript_path=shown_transcript_path("session"),
                                      pre_tokens=state.tokens, trigger=state.trigger,
                                      custom_instructions=state.instructions)
        return Compacted(messages=[result.summary_message], summary=result.summary, raw_reply=result.raw_reply,
                         request=result.request, usage=result.usage, kind="full")
