"""Compaction cases of the built-in scenario library and of the corpus, run once per test process,
for the mutation and validation tests."""

from __future__ import annotations

from functools import lru_cache

from pytest_ctxeval.cli.validate import collect_cases
from pytest_ctxeval.grading import CompactionCase, GraderRegistry, load_graders
from pytest_ctxeval.options import RunOptions, builtin_scenarios_dir
from shared_paths import CORPUS_DIR as CORPUS


@lru_cache(maxsize=1)
def registry() -> GraderRegistry:
    return load_graders()


def rule_specs() -> list:
    return [s for s in registry() if s.kind == "rule"]


@lru_cache(maxsize=1)
def library_cases() -> tuple[tuple[CompactionCase, frozenset[str]], ...]:
    """Every compaction of the built-in scenarios (offline reference engine), with known failures."""
    cases, _notes = collect_cases([builtin_scenarios_dir()], RunOptions())
    return tuple(cases)


@lru_cache(maxsize=1)
def corpus_cases() -> tuple[tuple[CompactionCase, frozenset[str]], ...]:
    """Every compaction Claude Code wrote in the shared corpus (empty when the corpus is absent)."""
    if not CORPUS.is_dir():
        return ()
    cases, _notes = collect_cases([CORPUS], RunOptions())
    return tuple(cases)


def statuses(case: CompactionCase, specs: list | None = None) -> dict[str, str]:
    """Each grader's status on ``case``."""
    return {v.grader: v.status for v in registry().run(case, specs if specs is not None else rule_specs())}
