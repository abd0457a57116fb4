"""Compaction cases of the built-in scenario library and of the corpus, run once per test process,
for the mutation and validation tests; the rule graders' validation of each, also once."""

from __future__ import annotations

from dataclasses import fields
from functools import lru_cache

from pytest_ctxeval.cli.validate import collect_cases
from pytest_ctxeval.grading import CompactionCase, GraderRegistry, load_graders
from pytest_ctxeval.options import RunOptions, builtin_scenarios_dir
from shared_paths import CORPUS_DIR as CORPUS
from pytest_ctxeval.cli.validate import operators_for
from pytest_ctxeval.grading.validation import GraderStats, ValidationReport, validate_cases


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


@lru_cache(maxsize=1)
def library_report() -> ValidationReport:
    """The rule graders validated on :func:`library_cases` with every operator (read it, do not
    change it: the library and the corpus tests share it)."""
    return validate_cases(library_cases(), registry(), rule_specs(), operators_for(registry()))


def corpus_report() -> ValidationReport:
    """The rule graders validated on :func:`corpus_cases` with every operator."""
    return validate_cases(corpus_cases(), registry(), rule_specs(), operators_for(registry()))


def merged(first: ValidationReport, second: ValidationReport) -> ValidationReport:
    """One report for the cases of both, as ``validate_cases`` over both lists gives (it judges
    each case on its own: counts add, lists join in order)."""
    assert (first.min_kill, first.seed, first.judge) == (second.min_kill, second.seed, second.judge)
    graders = {}
    for name, a in first.graders.items():
        b = second.graders[name]
        assert (a.kind, a.heuristic, a.operators) == (b.kind, b.heuristic, b.operators)
        joined = {f.name: getattr(a, f.name) + getattr(b, f.name) for f in fields(GraderStats)
                  if f.name not in ("grader", "kind", "heuristic", "operators")}
        graders[name] = GraderStats(name, a.kind, heuristic=a.heuristic, operators=list(a.operators), **joined)
    sources = list(dict.fromkeys(first.sources + second.sources))
    return ValidationReport(graders, first.min_kill, cases=first.cases + second.cases,
                            real_cases=first.real_cases + second.real_cases, mutants=first.mutants + second.mutants,
                            seed=first.seed, judge=first.judge, errors=first.errors + second.errors, sources=sources)
