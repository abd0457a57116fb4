"""The reference engine: Claude Code's five tiers of context management, one module per tier
(budget, dedupe, microcompact, autocompact with session memory, prompt-too-long retry), the
per-request pipeline and the incremental view. Pure over message lists where possible."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from .pipeline import ContextManager, Event, PreparedRequest
    from .compact import CompactionResult, compact_conversation
    from .prompt import PromptSet

#: Public name -> the module of this package that defines it (imported on first use).
_EXPORTS = {
    "ContextManager": "pipeline", "Event": "pipeline", "PreparedRequest": "pipeline",
    "CompactionResult": "compact", "compact_conversation": "compact", "PromptSet": "prompt",
}

__all__ = ["ContextManager", "Event", "PreparedRequest", "CompactionResult", "compact_conversation", "PromptSet"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
