"""Baselines and A/B: what changed between two runs, and whether it is a regression.

A **baseline** (``--ctxeval-save-baseline PATH``) is the committed form of a results document
(``format: pytest-ctxeval/baseline``, ``version: 1``): per scenario, each grader's aggregate status
and score, and per compaction each grader's status, score and the facts it found missing, the
summary, the tokens and what the compaction lost. It holds nothing run-dependent (no paths of
temporary folders, no timings) and is written with sorted keys, so an unchanged run rewrites it
byte for byte and a changed one shows as a readable diff in review::

    {"format": "pytest-ctxeval/baseline", "version": 1, "backend": "offline", "model": "...",
     "prompt": {"name": "compact.j2", "fingerprint": "3f2a9c0d1e2b"},
     "scenarios": {"auth_refactor": {
        "error": null,
        "graders": {"verbatim_user_messages": {"status": "pass", "score": 1.0}},
        "compactions": [{"index": 1, "kind": "full", "trigger": "auto", "pre_tokens": 16720,
                         "post_tokens": 4226, "summary": "...", "lost": {...},
                         "graders": {"verbatim_user_messages": {"status": "pass", "score": 1.0}}}]}}}

:func:`compare` diffs two such documents (either side may be a results document) with deepdiff
and classifies every change at the scenario × compaction × grader level:

* **regression** (fails the run): a grader that was not failing fails, or a score that dropped by
  more than the tolerance (default 0.05) between two graded verdicts;
* **improvement**: a failing grader passes, or a score rose by more than the tolerance;
* **notes**: scenarios, graders or compactions that came or went, other status changes
  (pass → n/a, … → ungraded), a scenario error, a different prompt, backend or model.

A change is reported per compaction where both runs have that compaction; a change of the
aggregate (over the scenario's compactions) that no compaction explains, such as a new compaction
that fails, is reported at the scenario level (``compaction: null``).

:func:`ab_table` compares two results of the same scenarios under two prompts (A/B).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CtxEvalError, UsageError
from ..core.documents import dumps_finite
from ..core.outputs import write_text_safely
from ..core.redact import scrub_output, scrub_tree

__all__ = ["BASELINE_FORMAT", "BASELINE_VERSION", "DEFAULT_TOLERANCE", "Change", "RunDiff", "baseline_document",
           "load_document", "write_baseline", "diff_runs", "scenario_names", "ab_table", "format_run_diff", "format_ab", "rollup",
           "verdict_label"]

BASELINE_FORMAT = "pytest-ctxeval/baseline"
BASELINE_VERSION = 1
RESULTS_FORMAT = "pytest-ctxeval/results"
DEFAULT_TOLERANCE = 0.05
_GRADED = ("pass", "fail")


# ---------------------------------------------------------------------------------------------
# The baseline form


def _verdict(v: dict[str, Any], *, reasons: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"status": v.get("status"), "score": round(float(v.get("score", 0.0)), 4)}
    for key in ("missing", "superseded"):
        if v.get(key):
            out[key] = list(v[key])
    if v.get("known_failure"):
        out["known_failure"] = v["known_failure"]
    if reasons and v.get("reasons"):
        out["reasons"] = list(v["reasons"])
    return out


def _lost(lost: dict[str, Any] | None) -> dict[str, Any]:
    if not lost:
        return {}
    out: dict[str, Any] = {}
    for key, items in lost.items():
        if key == "identifiers":
            continue
        if isinstance(items, list) and items:
            out[key] = [item["text"] if isinstance(item, dict) else str(item) for item in items]
    if lost.get("identifiers_total"):
        out["identifiers"] = int(lost["identifiers_total"])
    return out


def _normalise(doc: dict[str, Any], *, reasons: bool = False) -> dict[str, Any]:
    """The baseline form of a results or baseline document (``reasons`` kept when asked and
    present: they explain a regression but are not compared)."""
    fmt = doc.get("format")
    if fmt == BASELINE_FORMAT:
        if doc.get("version") != BASELINE_VERSION:
            raise UsageError(f"baseline version {doc.get('version')!r} is not supported (this ctxeval reads "
                             f"version {BASELINE_VERSION})")
        return doc
    if fmt != RESULTS_FORMAT:
        raise UsageError(f"not a ctxeval results or baseline file (format {fmt!r})")
    scenarios: dict[str, Any] = {}
    for s in doc.get("scenarios", []):
        name = s["name"]
        if name in scenarios:  # two files with one name: keep both, told apart by their source
            name = f"{name} ({s.get('source')})"
        comps = []
        for c in s.get("compactions", []):
            comps.append({
                "index": c["index"], "kind": c.get("kind"), "trigger": c.get("trigger"),
                "pre_tokens": c.get("pre_tokens"), "post_tokens": c.get("post_tokens"),
                "summary": c.get("summary", ""), "lost": _lost(c.get("lost")),
                "graders": {v["grader"]: _verdict(v, reasons=reasons) for v in c.get("verdicts", [])}})
        scenarios[name] = {"error": s.get("error"),
                           "graders": {g: _verdict(v, reasons=reasons) for g, v in s.get("graders", {}).items()},
                           "compactions": comps}
    prompt = doc.get("prompt") or {}
    return {"format": BASELINE_FORMAT, "version": BASELINE_VERSION, "backend": doc.get("backend"),
            "model": doc.get("model"),
            "prompt": {"name": Path(str(prompt.get("path") or "")).name or None,
                       "fingerprint": prompt.get("fingerprint"),
                       # the rendered prompt, so a later run can say which changed lines it can see
                       **({"text": prompt["text"]} if prompt.get("text") else {})} if prompt else None,
            "scenarios": dict(sorted(scenarios.items()))}


def baseline_document(results: dict[str, Any]) -> dict[str, Any]:
    """The committed form of a results document (see the module docstring)."""
    return _normalise(results)


def dumps(doc: dict[str, Any]) -> str:
    """Stable text: sorted keys, two-space indent, UTF-8, a final newline."""
    return dumps_finite(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_baseline(path: str | os.PathLike[str], results: dict[str, Any]) -> Path:
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        write_text_safely(p, scrub_output(dumps(scrub_tree(baseline_document(results)))), what="the baseline")
    except OSError as exc:
        raise CtxEvalError(f"{p}: cannot write the baseline ({exc.strerror or exc})") from None
    return p


#: The format of ``ctxeval grade FOLDER --json`` (:data:`pytest_ctxeval.grading.folders.DOC_FORMAT`).
_FOLDER_FORMAT = "pytest-ctxeval/grade-folder"


def _session_transcript(raw: bytes) -> str | None:
    """What to say when ``raw`` is a Claude Code session transcript given where a results file was
    asked for, else ``None``. A transcript is JSON Lines: each line one record with a string ``type``
    and an id (``uuid``, ``sessionId``, ``leafUuid`` of a title record, ``messageId`` of a file
    snapshot). Parsed whole it fails at its second line ("Extra data"), a message that names neither
    what the file is nor the verb that reads it."""
    import json

    for line in raw.split(b"\n", 20)[:20]:
        if not line.strip():
            continue
        if not line.lstrip().startswith(b"{"):
            return None
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):   # a hostile file nests deep: it is not a transcript either
            return None
        if not (isinstance(record, dict) and isinstance(record.get("type"), str)
                and any(k in record for k in ("uuid", "sessionId", "leafUuid", "messageId"))):
            return None
        return ("a Claude Code session transcript (JSON Lines, one record per line), not a ctxeval results or "
                "baseline file: grade it with ctxeval grade FILE (its --json, --md and --html write the results "
                "and reports that ctxeval report and diff read)")
    return None


def load_document(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A results or baseline JSON file (a :class:`UsageError` naming the file otherwise)."""
    from ..core.documents import BadDocument, check_baseline, check_results, loads_strict
    from ..core.limits import MAX_JSON_BYTES
    from ..core.renamed import upgrade_results

    p = Path(path)
    try:
        if p.is_file() and p.stat().st_size > MAX_JSON_BYTES:
            raise UsageError(f"{p}: {p.stat().st_size:,} bytes is over the {MAX_JSON_BYTES:,}-byte limit for a "
                             "results or baseline file (limits.MAX_JSON_BYTES)")
        if p.exists() and not p.is_file():
            raise UsageError(f"{p}: not a regular file (a results or baseline JSON file is read whole)")
        raw = p.read_bytes()
        doc = loads_strict(raw.decode("utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{p}: no such file (a baseline is written by pytest --ctxeval --ctxeval-save-baseline "
                         "PATH; results by ctxeval run --json PATH or pytest --ctxeval --ctxeval-report PATH.json)"
                         ) from None
    except OSError as exc:
        raise UsageError(f"{p}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        from ..core.userfiles import not_utf8

        raise UsageError(not_utf8(p, raw, exc)) from None
    except BadDocument as exc:
        if (hint := _session_transcript(raw)) is not None:
            raise UsageError(f"{p}: {hint}") from None
        where = exc.where[len("line "):] if exc.where.startswith("line ") else ""
        raise UsageError(f"{p}:{where}: {exc.message}" if where else f"{p}: {exc}") from None
    if isinstance(doc, dict) and doc.get("format") == _FOLDER_FORMAT:
        raise UsageError(f"{p}: a report of ctxeval grade on folders (format {_FOLDER_FORMAT!r}), not the results of "
                         "a run: ctxeval diff and report take ctxeval run --json, pytest --ctxeval --ctxeval-report "
                         "PATH.json, ctxeval grade ONE.jsonl --json or a baseline; for the folder report's pages, "
                         "run ctxeval grade FOLDER --md OUT.md --html OUT.html")
    if not isinstance(doc, dict) or doc.get("format") not in (RESULTS_FORMAT, BASELINE_FORMAT):
        if (hint := _session_transcript(raw)) is not None:
            raise UsageError(f"{p}: {hint}")
        raise UsageError(f"{p}: not a ctxeval results or baseline file (expected format {RESULTS_FORMAT!r} "
                         f"or {BASELINE_FORMAT!r})")
    try:
        if doc["format"] == RESULTS_FORMAT:
            upgrade_results(doc)  # a file written before the compactor rename: the old key names
            check_results(doc)
        elif doc.get("version") == BASELINE_VERSION:
            check_baseline(doc)
        _normalise(doc)
    except BadDocument as exc:
        raise UsageError(f"{p}: {exc}") from None
    except UsageError as exc:
        raise UsageError(f"{p}: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UsageError(f"{p}: malformed {doc.get('format')} file ({type(exc).__name__}: {exc})") from None
    return doc


# ---------------------------------------------------------------------------------------------
# Comparing


def verdict_label(v: dict[str, Any] | None) -> str:
    """``pass 1.00``, ``fail 0.50``, ``n/a``, ``-`` (absent)."""
    if not v:
        return "-"
    status = v.get("status", "?")
    return f"{status} {float(v.get('score', 0.0)):.2f}" if status in _GRADED else str(status)


@dataclass
class Change:
    """One classified difference. ``kind``: ``regression``, ``improvement`` or ``note``."""

    kind: str
    scenario: str
    grader: str | None = None
    compaction: int | None = None
    before: str | None = None
    after: str | None = None
    reason: str = ""

    @property
    def where(self) -> str:
        parts = [self.scenario]
        if self.compaction is not None:
            parts.append(f"compaction {self.compaction}")
        return " ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "scenario": self.scenario, "compaction": self.compaction, "grader": self.grader,
                "before": self.before, "after": self.after, "reason": self.reason}


@dataclass
class RunDiff:
    baseline: str
    tolerance: float
    regressions: list[Change] = field(default_factory=list)
    improvements: list[Change] = field(default_factory=list)
    notes: list[Change] = field(default_factory=list)
    summaries: dict[tuple[str, int], str] = field(default_factory=dict, repr=False)  # baseline's, for diffs
    #: The prompt-change coverage note (:mod:`pytest_ctxeval.reporting.prompt_coverage`) when the prompts differ.
    coverage: dict[str, Any] | None = None

    @property
    def failed(self) -> bool:
        return bool(self.regressions)

    def as_dict(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "tolerance": self.tolerance,
                "regressions": [c.as_dict() for c in self.regressions],
                "improvements": [c.as_dict() for c in self.improvements],
                "notes": [c.as_dict() for c in self.notes],
                **({"coverage": self.coverage} if self.coverage else {})}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunDiff:
        def changes(key: str) -> list[Change]:
            return [Change(**{k: c.get(k) for k in ("kind", "scenario", "grader", "compaction", "before", "after")},
                           reason=c.get("reason") or "") for c in data.get(key, [])]
        return cls(baseline=data.get("baseline", "?"), tolerance=float(data.get("tolerance", DEFAULT_TOLERANCE)),
                   regressions=changes("regressions"), improvements=changes("improvements"), notes=changes("notes"),
                   coverage=data.get("coverage"))


def _reason(after: dict[str, Any] | None, before: dict[str, Any] | None) -> str:
    if after and after.get("reasons"):
        reasons = [r for r in after["reasons"] if r]
        more = f" (+{len(reasons) - 2} more)" if len(reasons) > 2 else ""
        return "; ".join(reasons[:2]) + more
    if after and after.get("missing"):
        new = [m for m in after["missing"] if m not in ((before or {}).get("missing") or [])]
        items = new or after["missing"]
        return "now missing: " + "; ".join(_short(m) for m in items[:3]) + (f" (+{len(items) - 3} more)" if len(items) > 3 else "")
    return ""


def _short(text: str, limit: int = 90) -> str:
    text = " ".join(str(text).split())
    return f'"{text[:limit]}…"' if len(text) > limit else f'"{text}"'


def _classify(before: dict[str, Any] | None, after: dict[str, Any] | None, tolerance: float) -> str | None:
    if not before or not after:
        return None
    b, a = before.get("status"), after.get("status")
    if a == "fail" and b != "fail":
        return "regression"
    if b == "fail" and a == "pass":
        return "improvement"
    if b in _GRADED and a in _GRADED:
        delta = float(after.get("score", 0)) - float(before.get("score", 0))
        if delta < -tolerance - 1e-9:
            return "regression"
        if delta > tolerance + 1e-9:
            return "improvement"
        return None
    return "note" if a != b else None


_EXCLUDE = [r"\['(summary|lost|missing|superseded|reasons|pre_tokens|post_tokens|kind|trigger|index|known_failure)'\]",
            r"root\['format'\]", r"root\['version'\]", r"root\['prompt'\]\['text'\]"]


def scenario_names(doc: dict[str, Any]) -> set[str]:
    """The scenarios (or transcripts) a results or baseline document holds."""
    return set(_normalise(doc)["scenarios"])


#: The note on a baseline scenario the run did not grade. A note, not a regression: a ``-k`` run
#: leaves out most of the baseline on purpose; a run that shares no scenario at all with the
#: baseline is refused instead (:func:`nothing_in_common`).
MISSING = "missing from this run"


def nothing_in_common(old: set[str], new: set[str], baseline: str, results: str, fix: str) -> str | None:
    """The one rule of ``ctxeval diff`` and ``pytest --ctxeval-baseline``: a baseline and a run (or
    results file) that both hold scenarios but none in common compare nothing, so "0 regressions"
    would be a green gate over nothing. The message (bad input), else None."""
    if not old or not new or old & new:
        return None

    def some(names: set[str]) -> str:
        shown = sorted(names)
        return ", ".join(shown[:3]) + (f", … (+{len(shown) - 3})" if len(shown) > 3 else "")

    return f"{baseline} and {results} have no scenario in common ({some(old)} against {some(new)}): nothing to compare; {fix}"


def diff_runs(baseline: dict[str, Any], current: dict[str, Any], *, tolerance: float = DEFAULT_TOLERANCE,
            name: str = "baseline") -> RunDiff:
    """Classify what changed from ``baseline`` to ``current`` (results or baseline documents)."""
    from deepdiff import DeepDiff

    if tolerance < 0:
        raise UsageError(f"tolerance must be at least 0. Current input: {tolerance!r}")
    old, new = _normalise(baseline), _normalise(current, reasons=True)
    result = RunDiff(baseline=name, tolerance=tolerance)
    for sname, s in old["scenarios"].items():
        for c in s.get("compactions", []):
            result.summaries[(sname, c["index"])] = c.get("summary", "")
    # threshold_to_diff_deeper=0: always descend, never report a whole mapping as one changed value.
    diff = DeepDiff(old, new, view="tree", exclude_regex_paths=_EXCLUDE, threshold_to_diff_deeper=0)
    run_notes: set[str] = set()
    candidates: set[tuple[str, int | None, str]] = set()
    for report_type, items in diff.items():
        for item in items:
            path = item.path(output_format="list")
            added = report_type in ("dictionary_item_added", "iterable_item_added")
            removed = report_type in ("dictionary_item_removed", "iterable_item_removed")
            if not path or path[0] != "scenarios":
                if path and path[0] in ("prompt", "backend", "model") and path[0] not in run_notes:
                    run_notes.add(path[0])
                    result.notes.append(Change("note", "(run)", reason=f"{path[0]} changed: "
                                               f"{_describe(old.get(path[0]))} → {_describe(new.get(path[0]))}"))
                continue
            sname = path[1] if len(path) > 1 else None
            if sname is None:
                continue
            if len(path) == 2:
                result.notes.append(Change("note", sname, reason="new scenario" if added else MISSING
                                           if removed else "scenario changed"))
                continue
            before_err, after_err = old["scenarios"][sname].get("error"), new["scenarios"][sname].get("error")
            if path[2] == "error":
                # A scenario that ran and now cannot run is ONE regression (its graders graded
                # nothing), as the terminal summary counts it; one that runs again is a note.
                stopped = bool(after_err and not before_err)
                (result.regressions if stopped else result.notes).append(Change(
                    "regression" if stopped else "note", sname, before="error" if before_err else "ran", after="error" if after_err else "ran",
                    reason=after_err or "the scenario runs again"))
                continue
            if (before_err or after_err) and path[2] in ("graders", "compactions", "not_run") and len(path) == 4 \
                    and (added or removed):
                continue  # what a scenario that did not run lacks is told once, by its error
            if after_err and path[2] in ("graders", "compactions"):
                continue  # an older results file lists the error under every grader: told once, above
            if path[2] == "graders" and len(path) >= 4:
                grader = path[3]
                if len(path) == 4 and (added or removed):
                    result.notes.append(Change("note", sname, grader=grader,
                                               reason="new grader" if added else "grader no longer run"))
                    continue
                candidates.add((sname, None, grader))
            elif path[2] == "compactions" and len(path) >= 4:
                index = path[3]
                if len(path) == 4 and (added or removed):
                    side = new if added else old
                    comp = side["scenarios"][sname]["compactions"][index]
                    result.notes.append(Change("note", sname, compaction=comp["index"],
                                               reason="new compaction" if added else "compaction no longer happens"))
                    continue
                if len(path) >= 6 and path[4] == "graders":
                    grader = path[5]
                    if len(path) == 6 and (added or removed):
                        continue  # reported once, at the scenario level
                    candidates.add((sname, index, grader))
    # Per compaction first; the aggregate only where no compaction explains the change.
    explained: set[tuple[str, str, str]] = set()
    found: list[Change] = []
    for sname, index, grader in sorted((c for c in candidates if c[1] is not None), key=lambda c: (c[0], c[1], c[2])):
        before = old["scenarios"][sname]["compactions"][index]["graders"].get(grader)
        after = new["scenarios"][sname]["compactions"][index]["graders"].get(grader)
        kind = _classify(before, after, tolerance)
        if kind is None:
            continue
        comp_no = new["scenarios"][sname]["compactions"][index]["index"]
        found.append(Change(kind, sname, grader, comp_no, verdict_label(before), verdict_label(after),
                            _reason(after, before) if kind != "improvement" else _gain(before, after)))
        explained.add((sname, grader, kind))
    for sname, _, grader in sorted((c for c in candidates if c[1] is None), key=lambda c: (c[0], c[2])):
        before = old["scenarios"][sname]["graders"].get(grader)
        after = new["scenarios"][sname]["graders"].get(grader)
        kind = _classify(before, after, tolerance)
        if kind is None or (sname, grader, kind) in explained:
            continue
        found.append(Change(kind, sname, grader, None, verdict_label(before), verdict_label(after),
                            _reason(after, before) if kind != "improvement" else _gain(before, after)))
    for change in found:
        {"regression": result.regressions, "improvement": result.improvements}.get(change.kind, result.notes).append(change)
    for bucket in (result.regressions, result.improvements, result.notes):
        bucket.sort(key=lambda c: (c.scenario, c.compaction or 0, c.grader or ""))
    old_text, new_text = ((d.get("prompt") or {}).get("text") for d in (old, new))
    if old_text and new_text:
        from .prompt_coverage import coverage_note

        result.coverage = coverage_note(new_text, old)
    return result


def _gain(before: dict[str, Any] | None, after: dict[str, Any] | None) -> str:
    now = set((after or {}).get("missing") or [])
    regained = [m for m in (before or {}).get("missing") or [] if m not in now]
    if regained:
        return "now kept: " + "; ".join(_short(m) for m in regained[:3]) + (
            f" (+{len(regained) - 3} more)" if len(regained) > 3 else "")
    if after and after.get("reasons"):
        return after["reasons"][0]
    return ""


def _describe(value: Any) -> str:
    if isinstance(value, dict):  # the prompt's text is the coverage note's business
        return ", ".join(f"{k} {v}" for k, v in value.items() if v and k != "text")
    return str(value)


_GROUPED = (MISSING, "new scenario", "grader no longer run", "new grader")


def rollup(changes: list[Change]) -> list[tuple[str, int, str]]:
    """``(grader, count, what it became)`` over ``changes``, most frequent first: 130 regressions
    from one dropped section read as "nine_sections 38 → fail, verbatim_user_messages 38 → fail"
    before the items. ``what it became`` is ``fail`` when any of them now fails, else ``lower score``."""
    by: dict[str, list[Change]] = {}
    for c in changes:
        by.setdefault(c.grader or "(scenario)", []).append(c)
    out = []
    for grader, items in by.items():
        afters = {str(c.after or "").split(" ")[0] for c in items}
        if "fail" in afters:
            after = "fail"
        elif afters == {"pass"}:
            after = "lower score" if all(c.kind == "regression" for c in items) else "pass"
        else:
            after = "/".join(sorted(a for a in afters if a)) or "changed"
        out.append((grader, len(items), after))
    return sorted(out, key=lambda t: (-t[1], t[0]))


def format_run_diff(cmp: RunDiff, *, limit: int = 200, coverage: bool = True) -> list[str]:
    """A short human-readable list: regressions first, then improvements and notes, then the
    prompt-change coverage note (``coverage=False`` leaves it to the caller)."""
    lines = []
    head = (f"{len(cmp.regressions)} regression{'s' if len(cmp.regressions) != 1 else ''}, "
            f"{len(cmp.improvements)} improvement{'s' if len(cmp.improvements) != 1 else ''} against {cmp.baseline} "
            f"(score tolerance {cmp.tolerance:g})")
    lines.append(head)
    for label, bucket in (("regressed by grader", cmp.regressions), ("improved by grader", cmp.improvements)):
        counts = rollup(bucket)
        if len(bucket) > 1:
            lines.append(f"  {label}: " + ", ".join(f"{g} {n} → {after}" for g, n, after in counts))
    # Notes that only name what came or went are grouped (a -k run leaves out most of the baseline).
    grouped: dict[str, list[Change]] = {}
    notes = []
    for c in cmp.notes:
        if c.reason in _GROUPED and c.compaction is None:
            grouped.setdefault(c.reason, []).append(c)
        else:
            notes.append(c)
    for reason, items in grouped.items():
        if reason == MISSING:  # always said in one line, whatever the count: "missing from this run: cache_ttl"
            names = [c.scenario for c in items]
            shown = ", ".join(names[:8]) + (f", … (+{len(names) - 8})" if len(names) > 8 else "")
            notes.append(Change("note", f"{MISSING}{f' ({len(names)})' if len(names) > 1 else ''}: {shown}"))
            continue
        if len(items) <= 3:
            notes += items
            continue
        names = [f"{c.scenario} {c.grader}" if c.grader else c.scenario for c in items]
        shown = ", ".join(names[:8]) + (f", … (+{len(names) - 8})" if len(names) > 8 else "")
        notes.append(Change("note", f"{len(items)} × {reason}:", reason=shown))
    for label, bucket in (("REGRESSED", cmp.regressions), ("improved", cmp.improvements), ("note", notes)):
        for c in bucket:
            what = f"{c.where}  {c.grader}" if c.grader else c.where
            change = f"  {c.before} → {c.after}" if c.before or c.after else ""
            reason = c.reason if len(c.reason) <= limit else c.reason[:limit] + "…"
            lines.append(f"  {label:9} {what}{change}" + (f"  {reason}" if reason else ""))
    if coverage and cmp.coverage:
        from .prompt_coverage import format_coverage

        lines += format_coverage(cmp.coverage)
    return lines


# ---------------------------------------------------------------------------------------------
# A/B


def _rate(verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    graded = [v for v in verdicts if v.get("status") in _GRADED]
    passed = sum(1 for v in graded if v["status"] == "pass")
    return {"graded": len(graded), "passed": passed,
            "pass_rate": round(passed / len(graded), 4) if graded else None,
            "mean_score": round(sum(float(v.get("score", 0)) for v in graded) / len(graded), 4) if graded else None}


def ab_table(a: dict[str, Any], b: dict[str, Any], *, a_label: str = "A", b_label: str = "B") -> dict[str, Any]:
    """Per grader, the pass rate and mean score under each prompt (over the scenarios where the
    grader passed or failed; n/a and ungraded are left out) and the scenarios whose status
    differs. ``a`` and ``b``: results documents (or lists of scenario entries) of the same run
    under prompt A and prompt B."""
    def by_scenario(doc: Any) -> dict[str, dict[str, Any]]:
        entries = doc.get("scenarios", []) if isinstance(doc, dict) else doc
        return {s["name"]: s.get("graders", {}) for s in entries}

    sa, sb = by_scenario(a), by_scenario(b)
    graders: list[str] = []
    for table in (sb, sa):
        for g in table.values():
            graders += [name for name in g if name not in graders]
    rows = []
    for grader in graders:
        va = [sa[s][grader] for s in sorted(sa) if grader in sa[s]]
        vb = [sb[s][grader] for s in sorted(sb) if grader in sb[s]]
        flipped = []
        for s in sorted(set(sa) & set(sb)):
            x, y = sa[s].get(grader), sb[s].get(grader)
            if x and y and x.get("status") != y.get("status"):
                flipped.append({"scenario": s, "a": verdict_label(x), "b": verdict_label(y),
                                "reason": (y.get("reasons") or x.get("reasons") or [""])[0]})
        rows.append({"grader": grader, "a": _rate(va), "b": _rate(vb), "flipped": flipped})
    return {"a": a_label, "b": b_label, "graders": rows}


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def format_ab(table: dict[str, Any]) -> list[str]:
    header = ("grader", "A pass", "A mean", "B pass", "B mean", "flipped (A → B)")
    body = []
    for row in table["graders"]:
        flips = ", ".join(f"{f['scenario']} {f['a']} → {f['b']}" for f in row["flipped"]) or "-"
        body.append((row["grader"], f"{_pct(row['a']['pass_rate'])} ({row['a']['passed']}/{row['a']['graded']})",
                     _num(row["a"]["mean_score"]),
                     f"{_pct(row['b']['pass_rate'])} ({row['b']['passed']}/{row['b']['graded']})",
                     _num(row["b"]["mean_score"]), flips))
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(header)]
    lines = [f"A = {table['a']}, B = {table['b']}",
             "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in body]
    return lines
