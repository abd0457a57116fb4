"""Grading: the ``@grader`` API, verdicts, compaction cases and the registry; the LLM judge; what a
compaction lost; the mutation operators and the graders' validation and validity; folder grading of
real sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from .registry import CompactionCase, GraderRegistry, Verdict, grader, load_graders
    from .mutants import Mutant, mutation
    from .validation import validate_cases
    from .lost import lost_facts

#: Public name -> the module of this package that defines it (imported on first use).
_EXPORTS = {
    "CompactionCase": "registry", "GraderRegistry": "registry", "Verdict": "registry", "grader": "registry",
    "load_graders": "registry", "Mutant": "mutants", "mutation": "mutants", "validate_cases": "validation",
    "lost_facts": "lost",
}

__all__ = [
    "CompactionCase", "GraderRegistry", "Verdict", "grader", "load_graders", "Mutant", "mutation",
    "validate_cases", "lost_facts",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
