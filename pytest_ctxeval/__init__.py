"""pytest-ctxeval: evaluate context compaction in long-running LLM coding agents.

The public surface is re-exported here; everything else is importable from its module but may
change between minor versions.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .config import EngineConfig, resolve_context_window
from .errors import (
    CtxEvalError, GraderError, ModelError, PromptTooLongError, ScenarioError, TranscriptError, UsageError,
)
from .grading import CompactionCase, GraderRegistry, Verdict, grader, load_graders
from .llm import LLM, make_llm
from .runner import RunResult, run_scenario
from .scenarios import Scenario, load_scenario
from .transcript import read_transcript

__all__ = [
    "__version__", "EngineConfig", "resolve_context_window", "CtxEvalError", "GraderError", "ModelError",
    "PromptTooLongError", "ScenarioError", "TranscriptError", "UsageError", "CompactionCase", "GraderRegistry",
    "Verdict", "grader", "load_graders", "LLM", "make_llm", "RunResult", "run_scenario", "Scenario",
    "load_scenario", "read_transcript",
]
