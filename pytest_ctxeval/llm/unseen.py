"""Notes for the compaction instructions of a run the offline model reads nothing in.

A prompt file's change gets the ``prompt-change coverage`` note against a baseline
(:mod:`pytest_ctxeval.reporting.prompt_coverage`). The instructions a scenario gives at a
compaction (``compact: {instructions: ...}``, a PreCompact hook's output) and those of its memory
files (a CLAUDE.md ``## Compact Instructions`` section, :mod:`pytest_ctxeval.reading.context_instructions`)
change one compaction or every one, and a sentence of them the offline model cannot read ("focus on
the cache layer", "keep only the last task") changes nothing offline. Said as a note on the
scenario's outcome, so a run of an instruction that changed nothing offline does not read as "safe".
"""

from __future__ import annotations

from typing import Any

from ..reading.context_instructions import context_instructions
from .instructions import sentence_reading, sentences

__all__ = ["unseen_instruction_notes"]


def _unseen(text: str) -> list[str]:
    """The sentences of ``text`` the offline model reads no instruction in, as written."""
    return [s.raw for s in sentences(text) if not s.title and not sentence_reading(s)]


def unseen_instruction_notes(compactions: list[Any]) -> list[str]:
    """One note per sentence of a compaction's instructions (given at the compaction, or in a
    memory file it showed) the offline model reads nothing in, naming the compactions it was given
    at. ``compactions``: a run's :class:`~pytest_ctxeval.runner.CompactionRecord` list."""
    where: dict[tuple[str, str], list[int]] = {}
    for rec in compactions:
        res = rec.result
        request = getattr(res, "request", None) or {}
        given = [("compaction instructions", t) for t in [getattr(res, "custom_instructions", None)] if t]
        given += [("CLAUDE.md compact instructions", t)
                  for t in context_instructions(request.get("system"), request.get("messages") or [])]
        for source, text in given:
            for sentence in _unseen(text):
                where.setdefault((source, sentence), []).append(rec.index)
    notes = []
    for (source, sentence), indexes in where.items():
        at = ", ".join(str(i) for i in dict.fromkeys(indexes))
        notes.append(f"compaction {at}: {source} \"{sentence}\": not seen offline (the reference model reads "
                     "nothing in it to follow, so the verdicts do not show its effect; a real model may follow "
                     "it: docs/prompts.md)")
    return notes
