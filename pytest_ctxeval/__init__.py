"""pytest-ctxeval: evaluate context compaction in long-running LLM coding agents.

The public surface is re-exported here; everything else is importable from its module but may
change between minor versions.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# The public names are imported when first used (PEP 562): pytest imports this package for the
# plugin in every run of a project that has it installed, and most runs never need the engine.
_EXPORTS = {
    "EngineConfig": "core.config", "resolve_context_window": "core.config",
    "CtxEvalError": "errors", "GraderError": "errors", "ModelError": "errors", "PromptTooLongError": "errors",
    "ScenarioError": "errors", "TranscriptError": "errors", "UsageError": "errors",
    "CompactionCase": "grading.registry", "GraderRegistry": "grading.registry", "Verdict": "grading.registry", "grader": "grading.registry",
    "load_graders": "grading.registry", "LLM": "llm", "make_llm": "llm", "RunResult": "runner", "run_scenario": "runner",
    "Scenario": "scenario.schema", "load_scenario": "scenario.schema", "read_transcript": "transcript.jsonl",
    "mutation": "grading.mutants", "Mutant": "grading.mutants",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from .core.config import EngineConfig, resolve_context_window
    from .errors import (
        CtxEvalError, GraderError, ModelError, PromptTooLongError, ScenarioError, TranscriptError, UsageError,
    )
    from .grading.registry import CompactionCase, GraderRegistry, Verdict, grader, load_graders
    from .llm import LLM, make_llm
    from .grading.mutants import Mutant, mutation
    from .runner import RunResult, run_scenario
    from .scenario.schema import Scenario, load_scenario
    from .transcript.jsonl import read_transcript

__all__ = [
    "__version__", "EngineConfig", "resolve_context_window", "CtxEvalError", "GraderError", "ModelError",
    "PromptTooLongError", "ScenarioError", "TranscriptError", "UsageError", "CompactionCase", "GraderRegistry",
    "Verdict", "grader", "load_graders", "LLM", "make_llm", "RunResult", "run_scenario", "Scenario",
    "load_scenario", "read_transcript", "mutation", "Mutant",
]


def __getattr__(name: str) -> Any:
    """A public name, imported on first use; else a submodule (``pytest_ctxeval.runner`` after a
    bare ``import pytest_ctxeval``, as when this file imported them all)."""
    module = _EXPORTS.get(name)
    if module is None:
        if name.startswith("_") or importlib.util.find_spec(f"{__name__}.{name}") is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return importlib.import_module(f".{name}", __name__)
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
