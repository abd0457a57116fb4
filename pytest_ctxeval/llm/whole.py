"""How the engine asks for a reply it will use as a summary or as session notes."""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

__all__ = ["whole_reply"]


def whole_reply(llm: Any) -> Callable[..., Any]:
    """``llm.complete_whole`` (stop reasons checked: see :meth:`pytest_ctxeval.llm.base.LLM.complete_whole`),
    or ``llm.complete`` for a model object of your own that has only that."""
    return getattr(llm, "complete_whole", None) or llm.complete
