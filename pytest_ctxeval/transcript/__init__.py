"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``): read every
version, write, and the compactions they hold."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from .jsonl import Transcript, TranscriptWriter, read_transcript, record_for, RecordProblem
    from .compactions import Compaction, compactions_of

#: Public name -> the module of this package that defines it (imported on first use).
_EXPORTS = {
    "Transcript": "jsonl", "TranscriptWriter": "jsonl", "read_transcript": "jsonl", "record_for": "jsonl",
    "RecordProblem": "jsonl", "Compaction": "compactions", "compactions_of": "compactions",
}

__all__ = [
    "Transcript", "TranscriptWriter", "read_transcript", "record_for", "RecordProblem", "Compaction",
    "compactions_of",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
