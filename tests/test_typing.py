"""The typed surface (issue 22): the package says it is typed (``py.typed``), and the seams where a
user's code meets ours (a grader's case, the options' judge and compactor, the compactor comparison)
are annotated with the real classes, not ``Any``. ruff and mypy themselves run in ``.ci/run``.

The annotations are strings (``from __future__ import annotations``) naming classes imported only
for the type checker, so they are resolved here against the modules that define those classes: a
misspelt or missing name fails, and so does ``Any`` anywhere in a seam's type.
"""

from __future__ import annotations

import collections.abc
import importlib
import typing
from pathlib import Path
from typing import Any

import pytest

import pytest_ctxeval

#: Names the seams' annotations use, by the module that defines them.
_DEFINED_IN = {
    "EngineConfig": "core.config", "Judge": "grading.judging", "SummaryFormat": "compaction.formats",
    "PlantedFact": "scenario.planted",
    "Compactor": "compaction.base", "CompactionCase": "grading", "GraderRegistry": "grading.registry",
    "GraderSpec": "grading.registry", "RunOptions": "options", "Scenario": "scenario.schema", "PromptSet": "engine.prompt",
    "LLM": "llm", "RunResult": "runner", "Transcript": "transcript.jsonl",
}


def _namespace(module: Any) -> dict[str, Any]:
    ns = dict(vars(module))
    ns.setdefault("Callable", collections.abc.Callable)
    for name, where in _DEFINED_IN.items():
        ns.setdefault(name, getattr(importlib.import_module(f"pytest_ctxeval.{where}"), name))
    return ns


def _mentions_any(tp: Any) -> bool:
    return tp is Any or any(_mentions_any(arg) for arg in typing.get_args(tp))


def _hints(obj: Any) -> dict[str, Any]:
    module = importlib.import_module(obj.__module__)
    return typing.get_type_hints(obj, globalns=_namespace(module))


def _seams() -> list[tuple[str, Any, list[str]]]:
    from pytest_ctxeval.compaction.base import CompactionState
    from pytest_ctxeval.compaction.compare import run_compactors
    from pytest_ctxeval.compaction.driver import compactor_recompact, summary_format_of
    from pytest_ctxeval.compaction.loader import load_compactor
    from pytest_ctxeval.evaluation import evaluate_run, evaluate_transcript, make_recompact
    from pytest_ctxeval.grading import CompactionCase
    from pytest_ctxeval.grading.registry import cases_from_run, cases_from_transcript
    from pytest_ctxeval.options import RunOptions

    return [
        ("CompactionCase", CompactionCase, ["config", "judge", "recompact", "summary_format", "facts"]),
        ("CompactionState", CompactionState, ["config", "llm"]),
        ("RunOptions.make_judge", RunOptions.make_judge, ["return"]),
        ("RunOptions.make_compactor", RunOptions.make_compactor, ["return"]),
        ("load_compactor", load_compactor, ["return"]),
        ("run_compactors", run_compactors, ["scenarios", "options", "registry", "graders", "return"]),
        ("make_recompact", make_recompact, ["llm", "prompts", "return"]),
        ("evaluate_run", evaluate_run, ["judge", "recompact"]),
        ("evaluate_transcript", evaluate_transcript, ["transcript"]),
        ("compactor_recompact", compactor_recompact, ["compactor", "llm", "return"]),
        ("summary_format_of", summary_format_of, ["return"]),
        ("cases_from_run", cases_from_run, ["run"]),
        ("cases_from_transcript", cases_from_transcript, ["transcript"]),
    ]


@pytest.mark.parametrize("label, obj, names", _seams(), ids=[s[0] for s in _seams()])
def test_a_public_seam_names_real_classes_not_any(label: str, obj: Any, names: list[str]) -> None:
    hints = _hints(obj)
    for name in names:
        assert name in hints, f"{label}: {name} has no annotation"
        assert not _mentions_any(hints[name]), f"{label}: {name} is annotated {hints[name]!r}, which holds Any"


def test_the_judge_seam_is_the_judge_class() -> None:
    from pytest_ctxeval.grading import CompactionCase
    from pytest_ctxeval.grading.judging import Judge

    assert typing.get_args(_hints(CompactionCase)["judge"]) == (Judge, type(None))


def test_the_seam_check_catches_any() -> None:
    def loose(x: Any) -> list[dict[str, Any]]:  # what the check must refuse
        return [x]

    hints = typing.get_type_hints(loose)
    assert _mentions_any(hints["x"]) and _mentions_any(hints["return"])
    assert not _mentions_any(typing.get_type_hints(test_the_seam_check_catches_any)["return"])


def test_the_package_is_marked_typed() -> None:
    marker = Path(pytest_ctxeval.__file__).with_name("py.typed")
    assert marker.is_file(), "pytest_ctxeval/py.typed is missing: type checkers would ignore the package's hints"
