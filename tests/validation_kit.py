"""Compaction cases of the built-in scenario library and of the corpus, run once per test process,
for the mutation and validation tests; the rule graders' validation of each, also once.

The unit suite validates a sample (:data:`SAMPLE_SCENARIOS`, :data:`SAMPLE_COMPACTIONS`,
:data:`SAMPLE_SESSIONS`): about a third of the library's mutants, and every (rule grader, mutation
operator) pair the whole library gives. The whole library and corpus (1,054 mutants, about 25 s of
CPU) are validated in ``.ci/run``'s library-wide step (tests/library_wide.py), which also checks
that the sample still gives every pair.
"""

from __future__ import annotations

from dataclasses import fields
from functools import lru_cache
from pathlib import Path

from pytest_ctxeval.cli.validate import collect_cases
from pytest_ctxeval.grading import CompactionCase, GraderRegistry, load_graders
from pytest_ctxeval.options import RunOptions, builtin_scenarios_dir
from shared_paths import CORPUS_DIR as CORPUS
from pytest_ctxeval.cli.validate import operators_for
from pytest_ctxeval.grading.validation import GraderStats, ValidationReport, validate_cases


#: Library scenarios whose compactions give mutants for every (rule grader, operator) pair that the
#: whole library gives (42 pairs from 8 of its 22 scenarios; chosen greedily by pairs per second).
SAMPLE_SCENARIOS = frozenset({
    "auth_refactor.yaml", "compaction_overflow.yaml", "debug_failing_test.yaml", "idle_gap.yaml",
    "memory_file_rule.yaml", "session_memory_then_full.yaml", "summariser_circuit_breaker.yaml",
    "tool_calls_in_flight.yaml",
})
#: Single compactions (scenario, index) of other scenarios, for the code paths only they reach: the
#: planted facts' operators and grader (facts_planted_everywhere), an edit that moves a file's
#: entry (long_migration), a request in several parts (multi_part_request). With them the sample
#: runs every line and branch of the package that the whole validation runs (measured with
#: coverage.py: the suite's coverage with the sample holds the whole validation's).
SAMPLE_COMPACTIONS = frozenset({
    ("facts_planted_everywhere.yaml", 1), ("long_migration.yaml", 1), ("multi_part_request.yaml", 2),
})
#: Corpus sessions of four Claude Code generations (a 2.0 session with legacy summaries, a 2.1.50-56
#: session resumed across versions, 2.1.177-183 resumed, and a published sample), their
#: compactions mutated in the suite; the other sessions in the full step.
SAMPLE_SESSIONS = (
    "TensorTemplar__slopometry__2.0.65-auto-legacy-summaries-0f112eb4.jsonl",
    "fenv-org__mementor__2.1.50-56-auto-resumed-81b5b775.jsonl",
    "roo-oliv__monodreams__2.1.177-183-manual-resumed-d9b49d30.jsonl",
    "oneryalcin__fasthooks__sample_main_transcript.jsonl",
)


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


def library_sample() -> list[tuple[CompactionCase, frozenset[str]]]:
    """The cases of :func:`library_cases` from :data:`SAMPLE_SCENARIOS` and :data:`SAMPLE_COMPACTIONS`."""
    return [c for c in library_cases() if Path(c[0].source).name in SAMPLE_SCENARIOS
            or (Path(c[0].source).name, c[0].index) in SAMPLE_COMPACTIONS]


@lru_cache(maxsize=1)
def library_sample_report() -> ValidationReport:
    """The rule graders validated on :func:`library_sample` with every operator."""
    return validate_cases(library_sample(), registry(), rule_specs(), operators_for(registry()))


def corpus_sample_report() -> ValidationReport:
    """The rule graders validated on the compactions of :data:`SAMPLE_SESSIONS` with every operator."""
    cases, _notes = collect_cases([CORPUS / name for name in SAMPLE_SESSIONS], RunOptions())
    return validate_cases(cases, registry(), rule_specs(), operators_for(registry()))


def mutant_pairs(cases) -> set[tuple[str, str]]:
    """(rule grader, operator) for each mutant the operators derive from ``cases`` (seed 0), as
    :func:`validate_cases` pairs a mutant with its targets."""
    specs = rule_specs()
    names = {s.name for s in specs}
    pairs = set()
    for op in operators_for(registry()):
        aimed = {s.name for s in specs if op.name in s.targets}
        for case, _known in cases:
            for m in op.apply(case, 0):
                pairs |= {(t, op.name) for t in set(m.targets) | aimed if t in names}
    return pairs


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
