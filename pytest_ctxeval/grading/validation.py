"""Mutation analysis of graders: how often each grader catches the defect it exists for.

For every compaction case (a scenario's, or one Claude Code wrote in a real transcript) every
mutation operator derives its mutants (:mod:`pytest_ctxeval.grading.mutants`); every grader then judges
the original and the mutants:

* a mutant **targets** the graders its operator names (and the graders that name the operator in
  their own ``targets``); it counts for a target grader only when that grader *passed* the original
  (a grader that is n/a, or already fails, cannot catch anything new there);
* a target grader that fails the mutant **killed** it; one that passes it (or is n/a) let it
  **survive**: the survivor is listed with the text that slipped through;
* a grader that fails an unmutated summary raises a **false alarm** when the summary comes from a
  scenario (whose expectations we wrote; a ``known_failures`` entry of the scenario is a documented
  defect, not a false alarm); on a real transcript's summary the failure is listed as a **failure
  on a real summary** (a genuine defect or a false alarm: read it), not counted as a false alarm;
* a rule grader that fails a mutant which does not target it, and passed the original, counts as
  **collateral** of that mutant's operator (reported separately; it does not change the exit);
* a grader that raises is an **error** (and fails the validation), never a kill or a survival.

LLM graders judge only their own mutants (collateral is computed over rule graders: a paid judge
is not asked about every mutant). Offline their judge is the reference model's heuristic: the rates
are printed, labelled as a heuristic, and not held to ``--min-kill``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterable

from .registry import CompactionCase, GraderRegistry, GraderSpec, Verdict
from .mutants import MutationSpec
from ..reading.summary import normalize_ws

__all__ = ["GraderStats", "ValidationReport", "validate_cases", "VALIDATE_FORMAT", "VALIDATE_VERSION"]

VALIDATE_FORMAT = "pytest-ctxeval/validate"
VALIDATE_VERSION = 1


def _short(text: str, n: int = 160) -> str:
    text = normalize_ws(text)
    return text if len(text) <= n else text[: n - 1] + "…"


@dataclass
class GraderStats:
    """One grader's results over every case and mutant."""

    grader: str
    kind: str
    mutants: int = 0
    killed: int = 0
    heuristic: bool = False
    operators: list[str] = field(default_factory=list)          # operators that target it
    survivors: list[dict[str, Any]] = field(default_factory=list)
    false_alarms: list[dict[str, Any]] = field(default_factory=list)
    collateral: list[dict[str, Any]] = field(default_factory=list)
    real_failures: list[dict[str, Any]] = field(default_factory=list)
    known_failures: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def kill_rate(self) -> float | None:
        return round(self.killed / self.mutants, 4) if self.mutants else None

    def ok(self, min_kill: float) -> bool:
        """No crash, no false alarm, and (with mutants, judged by a model or a rule) the kill rate."""
        if self.errors or self.false_alarms:
            return False
        return self.heuristic or not self.mutants or (self.kill_rate or 0.0) >= min_kill

    def as_dict(self) -> dict[str, Any]:
        return {"grader": self.grader, "kind": self.kind, "heuristic": self.heuristic, "mutants": self.mutants,
                "killed": self.killed, "kill_rate": self.kill_rate, "false_alarms": len(self.false_alarms),
                "collateral": len(self.collateral), "operators": list(self.operators),
                "survivors": self.survivors, "false_alarm_cases": self.false_alarms,
                "collateral_mutants": self.collateral, "real_failures": self.real_failures,
                "known_failures": self.known_failures, "errors": self.errors}


@dataclass
class ValidationReport:
    """Per-grader statistics, the cases and mutants behind them, and any crash."""

    graders: dict[str, GraderStats]
    min_kill: float
    cases: int = 0
    real_cases: int = 0
    mutants: int = 0
    seed: int = 0
    judge: str | None = None
    errors: list[str] = field(default_factory=list)       # operator crashes and grader crashes
    sources: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.errors and all(s.ok(self.min_kill) for s in self.graders.values())

    def as_dict(self) -> dict[str, Any]:
        return {"format": VALIDATE_FORMAT, "version": VALIDATE_VERSION, "min_kill": self.min_kill, "seed": self.seed,
                "cases": self.cases, "real_cases": self.real_cases, "mutants": self.mutants, "judge": self.judge,
                "passed": self.passed, "errors": list(self.errors), "sources": list(self.sources),
                "graders": [s.as_dict() for s in self.graders.values()]}


def _where(case: CompactionCase) -> dict[str, Any]:
    return {"source": case.source, "compaction": case.index, "origin": case.origin}


def _reason(v: Verdict) -> str:
    return _short("; ".join(v.reasons), 300)


def validate_cases(cases: Iterable[tuple[CompactionCase, frozenset[str]]], registry: GraderRegistry,
                   specs: list[GraderSpec], operators: list[MutationSpec], *, seed: int = 0, min_kill: float = 0.95,
                   heuristic_judge: bool = False, judge_label: str | None = None) -> ValidationReport:
    """Run every operator on every case and every grader on the originals and the mutants.

    ``cases`` pairs each case with the graders its scenario lists as known failures.
    """
    stats = {s.name: GraderStats(s.name, s.kind, heuristic=heuristic_judge and s.kind == "llm",
                                 operators=[o.name for o in operators if s.name in o.targets or o.name in s.targets])
             for s in specs}
    report = ValidationReport(stats, min_kill, seed=seed, judge=judge_label)
    by_name = {s.name: s for s in specs}
    rules = [s for s in specs if s.kind == "rule"]
    sources: dict[str, None] = {}
    for case, known in cases:
        report.cases += 1
        sources[case.source] = None
        real = case.origin != "engine"
        report.real_cases += real
        original = {v.grader: v for v in registry.run(case, specs)}
        for name, v in original.items():
            st = stats[name]
            if v.status == "error":
                st.errors.append(v.reasons[0])
                report.errors.append(v.reasons[0])
            elif v.status == "fail":
                entry = {**_where(case), "reason": _reason(v)}
                if name in known:
                    st.known_failures += 1
                elif real:
                    st.real_failures.append(entry)
                else:
                    st.false_alarms.append(entry)
        for op in operators:
            try:
                mutants = op.apply(case, seed)
            except Exception as exc:  # noqa: BLE001 - an operator bug fails the validation, loudly
                report.errors.append(f"mutation operator {op.name} crashed on {case.source} ({case.label}): "
                                     f"{type(exc).__name__}: {exc} ({op.origin})")
                continue
            for m in mutants:
                targets = set(m.targets) | {s.name for s in specs if op.name in s.targets}
                judged = [s for s in rules] + [by_name[t] for t in targets if t in by_name and by_name[t].kind == "llm"]
                counted = [t for t in targets if t in by_name and original[t].status == "pass"]
                if not counted and not any(original[s.name].status == "pass" for s in rules):
                    continue
                report.mutants += 1
                verdicts = {v.grader: v for v in registry.run(m.case, judged)}
                entry = {**_where(case), "operator": op.name, "what": m.what, "text": _short(m.text, 300)}
                for t in counted:
                    st, v = stats[t], verdicts[t]
                    if v.status == "error":
                        st.errors.append(v.reasons[0])
                        report.errors.append(v.reasons[0])
                        continue
                    st.mutants += 1
                    if v.status == "fail":
                        st.killed += 1
                    else:
                        st.survivors.append({**entry, "status": v.status, "reason": _reason(v)})
                for s in rules:
                    v = verdicts[s.name]
                    if s.name in targets or original[s.name].status != "pass":
                        continue
                    if v.status == "fail":
                        stats[s.name].collateral.append({**entry, "reason": _reason(v)})
                    elif v.status == "error":
                        stats[s.name].errors.append(v.reasons[0])
                        report.errors.append(v.reasons[0])
    report.sources = list(sources)
    return report
