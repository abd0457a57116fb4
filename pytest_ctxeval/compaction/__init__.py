"""Compactors: Claude Code's and its peers', side by side under the same graders.

(Not :mod:`pytest_ctxeval.strategies`, which holds Hypothesis strategies.)

* :class:`Compactor`: when to compact, and what the model sees afterwards
  (:mod:`~pytest_ctxeval.compaction.base`);
* built-ins, each modelled on its facts in ``shared/PEERS.md`` with our own prompt text:
  ``claude_code`` (the reference engine), ``codex``, ``gemini_cli``, ``opencode``,
  ``observation_masking`` and ``anthropic_server`` (the API's own, real API only);
* :func:`load_compactor`: a built-in name or ``package.module:Name``, with options;
* :mod:`~pytest_ctxeval.compaction.compare`: every scenario under several compactors, one table.
"""

from __future__ import annotations

import warnings
from typing import Any

from .base import BaseCompactor, Compacted, CompactionState, Compactor, CompactorUnavailable, scaled
from .formats import FormatSection, SummaryFormat
from .loader import BUILTIN, load_compactor, split_specs

__all__ = ["Compactor", "BaseCompactor", "CompactionState", "Compacted", "CompactorUnavailable", "SummaryFormat",
           "FormatSection", "load_compactor", "split_specs", "BUILTIN", "BUILTIN_NAMES", "scaled", "DEFAULT_COMPARE"]

#: The built-in compactors' names.
BUILTIN_NAMES: tuple[str, ...] = tuple(BUILTIN)
#: What ``ctxeval compare`` compares by default: every built-in that runs offline.
DEFAULT_COMPARE: tuple[str, ...] = ("claude_code", "codex", "gemini_cli", "opencode", "observation_masking")


def __getattr__(name: str) -> Any:
    """The names this package had before the compactor rename
    (:data:`~pytest_ctxeval.core.renamed.RENAMED_NAMES`), deprecated: the same objects, with a
    :class:`~pytest_ctxeval.core.renamed.CtxEvalDeprecationWarning` naming the new name."""
    from ..core.renamed import RENAMED_NAMES, CtxEvalDeprecationWarning, name_message

    if name in RENAMED_NAMES:
        warnings.warn(name_message(__name__, name), CtxEvalDeprecationWarning, stacklevel=2)
        return globals()[RENAMED_NAMES[name]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
