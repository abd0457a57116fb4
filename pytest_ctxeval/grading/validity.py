"""Grader validity as a number: the built-in graders against hand-labelled real compactions.

A labels file (``tests/validity/labels.yaml`` holds the corpus's) names each compaction by its file
and the line of its ``compact_boundary`` record, and gives for each grader the status a careful reader
expects (``pass`` / ``fail`` / ``n/a``) with a one-line reason read from the transcript. A ``fail``
label is a labelled defect.

:func:`check` grades every labelled compaction and returns one :class:`Row` per (compaction, grader);
:func:`rates` turns them into the two numbers that matter per grader:

* **false alarms among failing verdicts**: of the compactions a grader failed, the share labelled
  ``pass`` or ``n/a``;
* **misses among labelled defects**: of the compactions labelled ``fail``, the share the grader did
  not fail.

A labelled compaction the reader does not find is reported as such (:attr:`Report.not_found`), never
skipped silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Iterable

from ..errors import CtxEvalError

__all__ = ["Labelled", "Row", "Report", "load_labels", "check", "rates", "format_rates"]

_STATUSES = ("pass", "fail", "n/a")


@dataclass(frozen=True)
class Labelled:
    """One labelled compaction."""

    file: str
    boundary_line: int
    labels: dict[str, tuple[str, str]]          # grader -> (status, reason)
    version: str | None = None
    trigger: str | None = None
    inherited: bool = False

    @property
    def name(self) -> str:
        return f"{self.file}:{self.boundary_line}"


@dataclass(frozen=True)
class Row:
    compaction: str
    grader: str
    expected: str
    got: str
    label_reason: str
    verdict_reasons: tuple[str, ...]

    @property
    def agrees(self) -> bool:
        return self.expected == self.got


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    not_found: list[str] = field(default_factory=list)      # labelled, not found by the reader
    unlabelled: list[str] = field(default_factory=list)     # found by the reader, not labelled
    missing_files: list[str] = field(default_factory=list)  # labelled file absent from the corpus


def _label(value: Any, where: str) -> tuple[str, str]:
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
        raise CtxEvalError(f"{where}: a label is [status, reason], got {value!r}")
    status, reason = value
    if status not in _STATUSES:
        raise CtxEvalError(f"{where}: status must be one of {', '.join(_STATUSES)}, got {status!r}")
    if not reason.strip():
        raise CtxEvalError(f"{where}: the reason is empty; say what a reader finds in the transcript")
    return status, reason


def load_labels(path: str | Path) -> list[Labelled]:
    """The labelled compactions of a labels file (defaults merged into each)."""
    import yaml

    path = Path(path)
    try:
        raw = path.read_bytes()
        doc = yaml.safe_load(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        from ..core.userfiles import not_utf8

        raise CtxEvalError(not_utf8(path, raw, exc)) from None
    except (OSError, yaml.YAMLError) as exc:
        raise CtxEvalError(f"{path}: cannot read the labels ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != "pytest-ctxeval/validity-labels":
        raise CtxEvalError(f"{path}: not a labels file (expected format: pytest-ctxeval/validity-labels)")
    defaults = {g: _label(v, f"{path}: defaults.{g}") for g, v in (doc.get("defaults") or {}).items()}
    out, seen = [], set()
    for i, entry in enumerate(doc.get("compactions") or []):
        where = f"{path}: compactions[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str) \
                or not isinstance(entry.get("boundary_line"), int):
            raise CtxEvalError(f"{where}: needs 'file' (a corpus file name) and 'boundary_line' (an integer)")
        labels = dict(defaults)
        labels.update({g: _label(v, f"{where}.labels.{g}") for g, v in (entry.get("labels") or {}).items()})
        item = Labelled(entry["file"], entry["boundary_line"], labels, str(entry.get("version") or "") or None,
                        entry.get("trigger"), bool(entry.get("inherited")))
        if item.name in seen:
            raise CtxEvalError(f"{where}: {item.name} is labelled twice")
        seen.add(item.name)
        out.append(item)
    return out


def check(corpus: str | Path, labelled: Iterable[Labelled], registry: Any, *, judge: Any = None) -> Report:
    """Grade every labelled compaction of ``corpus`` with ``registry``'s graders and compare."""
    from .registry import cases_from_transcript
    from ..transcript.jsonl import read_transcript

    corpus = Path(corpus)
    report = Report()
    by_file: dict[str, list[Labelled]] = {}
    for item in labelled:
        by_file.setdefault(item.file, []).append(item)
    for name, items in sorted(by_file.items()):
        path = corpus / name
        if not path.is_file():
            report.missing_files.append(name)
            continue
        transcript = read_transcript(path)
        # A 1.0.x summary written without a boundary is named by its own line.
        comps = {c.boundary_line or c.summary_line: c for c in transcript.compactions}
        cases = {c.index: c for c in cases_from_transcript(transcript)}
        for c in cases.values():
            c.judge = judge
        wanted = {i.boundary_line for i in items}
        report.unlabelled += [f"{name}:{line}" for line in comps if line not in wanted]
        for item in items:
            comp = comps.get(item.boundary_line)
            if comp is None:
                report.not_found.append(f"{item.name} (the reader found compactions at boundary lines "
                                        f"{sorted(comps) or 'none'})")
                continue
            if getattr(comp, "inherited", False) != item.inherited:
                report.not_found.append(f"{item.name}: labelled {'inherited' if item.inherited else 'own'}, "
                                        f"read as {'inherited' if getattr(comp, 'inherited', False) else 'own'}")
                continue
            case = next((c for c in cases.values() if c.index == comp.index), None)
            if case is None:
                if not item.inherited:
                    report.not_found.append(f"{item.name}: found, but no case was built for it")
                continue
            specs = [s for s in registry if s.name in item.labels]
            for spec, verdict in zip(specs, registry.run(case, specs)):
                expected, why = item.labels[spec.name]
                report.rows.append(Row(item.name, spec.name, expected, verdict.status, why, tuple(verdict.reasons)))
    return report


def rates(rows: Iterable[Row]) -> dict[str, dict[str, Any]]:
    """Per grader: verdicts, failing verdicts, false alarms among them, labelled defects, misses."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        r = out.setdefault(row.grader, {"verdicts": 0, "failing": 0, "false_alarms": 0, "defects": 0, "misses": 0,
                                        "disagreements": 0})
        r["verdicts"] += 1
        r["disagreements"] += not row.agrees
        if row.got == "fail":
            r["failing"] += 1
            r["false_alarms"] += row.expected != "fail"
        if row.expected == "fail":
            r["defects"] += 1
            r["misses"] += row.got != "fail"
    for r in out.values():
        r["false_alarm_rate"] = r["false_alarms"] / r["failing"] if r["failing"] else 0.0
        r["miss_rate"] = r["misses"] / r["defects"] if r["defects"] else 0.0
    return out


def format_rates(table: dict[str, dict[str, Any]]) -> list[str]:
    """The rates as a fixed-width table, one grader a line, a total line last."""
    lines = [f"{'grader':<28} {'verdicts':>8} {'failing':>8} {'false alarms':>13} {'defects':>8} {'misses':>7} "
             f"{'disagree':>8}"]
    tot = {k: 0 for k in ("verdicts", "failing", "false_alarms", "defects", "misses", "disagreements")}
    for name, r in sorted(table.items()):
        for k in tot:
            tot[k] += r[k]
        lines.append(f"{name:<28} {r['verdicts']:>8} {r['failing']:>8} "
                     f"{r['false_alarms']:>4} ({r['false_alarm_rate']:>5.1%}) {r['defects']:>8} "
                     f"{r['misses']:>2} ({r['miss_rate']:>4.0%}) {r['disagreements']:>8}")
    fa = tot["false_alarms"] / tot["failing"] if tot["failing"] else 0.0
    mi = tot["misses"] / tot["defects"] if tot["defects"] else 0.0
    lines.append(f"{'all graders':<28} {tot['verdicts']:>8} {tot['failing']:>8} {tot['false_alarms']:>4} ({fa:>5.1%}) "
                 f"{tot['defects']:>8} {tot['misses']:>2} ({mi:>4.0%}) {tot['disagreements']:>8}")
    return lines
