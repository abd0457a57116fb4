"""``ctxeval grade FOLDER`` (or several paths): grade every Claude Code session with a compaction.

Every ``*.jsonl`` under the given folders (recursively) and every file named is read and graded in
parallel worker processes (``--workers``, default: one per core), with a progress line on a
terminal. A session is one of

* ``graded``: it holds at least one compaction of its own, each graded by every selected grader;
* ``skipped``: no compaction of its own with a summary (none at all, only one inherited from a
  parent session, or only ones with no summary after the boundary), or not a Claude Code session
  transcript (no user or assistant record; SDK stream-json output): listed with the reason;
* ``error``: it could not be read (unreadable, changed while read): listed with the reason; the
  others' results are still written, and the exit status is 2 (bad input).

A line of a session that could not be read or placed (not JSON, a parent not in the file...) is
listed with its file and line under "Lines skipped or moved", as ``ctxeval grade FILE`` notes it:
never dropped without a word (``--strict`` makes it an error).

The report holds one table per grader (pass / fail / n/a / ungraded over all compactions), one per
Claude Code version (the version that wrote each compaction), then every failure with its file,
line and reasons; ``--json``, ``--md`` and ``--html`` write the same. Exit 0 when no verdict fails,
1 when one does (or a grader crashed), 2 on bad input or when no compaction at all was graded.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Iterable, Iterator

from ..errors import CtxEvalError, TranscriptError, UsageError

__all__ = ["SessionResult", "find_sessions", "grade_session", "judge_label", "grade_paths", "folder_document", "is_folder_mode",
           "nothing_graded", "STATUSES"]

#: Verdict statuses in table order.
STATUSES = ("pass", "fail", "n/a", "ungraded")
DOC_FORMAT = "pytest-ctxeval/grade-folder"
DOC_VERSION = 1


@dataclass
class SessionResult:
    """What grading one session file gave (plain data: it crosses process boundaries)."""

    path: str
    bytes: int = 0
    status: str = "graded"                   # graded | skipped | error
    reason: str = ""
    session_id: str | None = None
    compactions: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)           # "line N: what" (as the one-file notes)
    problem_lines: list[int] = field(default_factory=list)      # the N of each problem, in order
    usage: dict[str, Any] = field(default_factory=dict)   # what the judge spent on this session
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def is_folder_mode(paths: list[str]) -> bool:
    """Several paths, or one that is a folder: the folder report; one file: the single-file report."""
    return len(paths) > 1 or Path(paths[0]).is_dir()


def find_sessions(paths: Iterable[str], subagents: list[Path] | None = None,
                  others: list[Path] | None = None) -> list[Path]:
    """The session files under ``paths``: each file named, and every ``*.jsonl`` below each folder
    (recursively, sorted, symlinked folders not followed). A path that does not exist is a usage
    error naming it.

    Below a folder, the transcripts of subagents and of Claude Code's own compaction calls (the
    2.1 layout's ``<session>/subagents/agent-*.jsonl``) are not sessions of their own: they are
    left out (and added to ``subagents`` when given), unless one holds a compaction of its own.
    Files below a folder whose names do not end in ``.jsonl`` are not read; ``others`` (when given)
    receives them, so the report can say how many were passed over."""
    out: dict[Path, None] = {}
    for raw in paths:
        p = Path(raw).expanduser()
        if p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for name in sorted(files):
                    if not name.endswith(".jsonl"):
                        if others is not None:
                            others.append(Path(root) / name)
                        continue
                    f = Path(root) / name
                    if _is_subagent_file(f):
                        if subagents is not None:
                            subagents.append(f)
                        continue
                    out.setdefault(f)
        elif p.exists() or p.is_symlink():
            out.setdefault(p)
        else:
            raise UsageError(f"{raw}: no such file or folder (give session .jsonl files or folders holding them, "
                             "e.g. ~/.claude/projects)")
    return list(out)


def _is_subagent_file(f: Path) -> bool:
    """A subagent's (or a compaction call's) transcript in a ``subagents`` folder, with no
    compaction of its own to grade."""
    if f.parent.name != "subagents" or not f.name.startswith("agent-"):
        return False
    try:
        with f.open("rb") as fh:
            return not any(b'"compact_boundary"' in line for line in fh)
    except OSError:
        return False  # graded, so the reader reports why it cannot be read


# ---------------------------------------------------------------------------------------------
# One session (runs in a worker process)

_WORKER: dict[str, Any] = {}


def _setup(grader_names: list[str] | None, graders_dirs: list[str], options: Any) -> None:
    """Load the graders (and a judge, when an llm grader is selected) once per process."""
    from .registry import load_graders

    registry = load_graders([Path(d) for d in graders_dirs])
    specs = registry.select(grader_names)
    judge = options.make_judge() if options is not None and any(s.kind == "llm" for s in specs) else None
    _WORKER.update(registry=registry, specs=specs, judge=judge)


def judge_label() -> str | None:
    """How reports name the judge of the llm graders this process set up (the offline one says it
    is a heuristic); None when no llm grader is selected."""
    judge = _WORKER.get("judge")
    return judge.label if judge is not None else None


def grade_session(path: str | os.PathLike[str], *, strict: bool = False) -> SessionResult:
    """Read and grade one session file with the graders of this process (see :func:`_setup`)."""
    from .registry import cases_from_transcript
    from ..transcript.compactions import nothing_to_grade
    from ..transcript.jsonl import read_transcript

    start = time.perf_counter()
    p = Path(path)
    result = SessionResult(path=str(p))
    try:
        result.bytes = p.stat().st_size
    except OSError:
        pass
    try:
        transcript = read_transcript(p, strict=strict)
    except TranscriptError as exc:
        result.status = "skipped" if exc.not_a_session else "error"
        result.reason = exc.not_a_session or str(exc)
        result.seconds = time.perf_counter() - start
        return result
    result.session_id = transcript.session_id
    result.problems = [str(pr) for pr in transcript.problems]
    result.problem_lines = [pr.line for pr in transcript.problems]
    comps = transcript.compactions
    why = nothing_to_grade(comps, transcript.left_boundaries, transcript.microcompactions)
    if why is not None:
        from ..scenario.importer import COMPACTION_CALL, is_compaction_call

        result.status = "skipped"
        result.reason = COMPACTION_CALL if is_compaction_call(transcript) else why
        if is_compaction_call(transcript):
            result.problems, result.problem_lines = [], []   # its notes (a parent not in the file) would mislead
    registry, specs, judge = _WORKER["registry"], _WORKER["specs"], _WORKER.get("judge")
    # As evaluate_transcript does, without importing the run machinery (the model SDK) per worker.
    spent_before = judge.llm.usage.as_dict() if judge is not None else None
    by_index = {}
    for case in cases_from_transcript(transcript) if why is None else []:
        case.judge = judge
        by_index[case.index] = registry.run(case, specs)
    for c in comps:
        row = c.describe()
        if c.gradable:
            row["verdicts"] = [{"grader": v.grader, "status": v.status, "score": round(v.score, 4),
                                "reasons": list(v.reasons)} for v in by_index.get(c.index, [])]
        result.compactions.append(row)
    if spent_before is not None and judge is not None:
        result.usage = _spent(spent_before, judge.llm.usage.as_dict())
    result.seconds = time.perf_counter() - start
    return result


def _spent(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Usage counts of ``after`` minus ``before`` (a worker's judge counts over all its sessions)."""
    out: dict[str, Any] = {k: v - before.get(k, 0) for k, v in after.items() if isinstance(v, int)}
    out["by_model"] = {m: {k: v - before.get("by_model", {}).get(m, {}).get(k, 0) for k, v in row.items()
                           if isinstance(v, int)}
                       for m, row in (after.get("by_model") or {}).items()}
    return out


def _worker_grade(path: str, strict: bool) -> SessionResult:
    try:
        return grade_session(path, strict=strict)
    except CtxEvalError as exc:
        return SessionResult(path=path, status="error", reason=str(exc))
    except Exception as exc:  # noqa: BLE001 - one session's crash must not lose the others' results
        return SessionResult(path=path, status="error", reason=f"crashed while grading: {type(exc).__name__}: {exc}")


# ---------------------------------------------------------------------------------------------
# Many sessions


def grade_paths(files: list[Path], *, grader_names: list[str] | None = None, graders_dirs: Iterable[str] = (),
                options: Any = None, workers: int | None = None, strict: bool = False,
                progress: bool = False) -> Iterator[SessionResult]:
    """Grade ``files`` in ``workers`` processes (default: one per core; 1: in this process),
    yielding each result as it is done (in completion order)."""
    dirs = [str(d) for d in graders_dirs]
    workers = max(1, min(workers or os.cpu_count() or 1, len(files) or 1))
    bar = _Bar(len(files), sum(_size(f) for f in files)) if progress else None
    # Set up here; workers forked from this process inherit the graders and the judge (no import of
    # the model SDK per worker); under another start method each worker sets up its own.
    _setup(grader_names, dirs, options)
    forked = multiprocessing.get_start_method(allow_none=False) == "fork"
    if workers == 1:
        for f in files:
            r = _worker_grade(str(f), strict)
            if bar:
                bar.step(r)
            yield r
    else:
        setup: dict[str, Any] = {} if forked else {"initializer": _setup, "initargs": (grader_names, dirs, options)}
        with ProcessPoolExecutor(max_workers=workers, **setup) as pool:
            futures = [pool.submit(_worker_grade, str(f), strict) for f in files]
            for fut in as_completed(futures):
                r = fut.result()
                if bar:
                    bar.step(r)
                yield r
    if bar:
        bar.close()


def _size(p: Path) -> int:
    try:
        return p.stat().st_size
    except OSError:
        return 0


class _Bar:
    """``[ 37/120] ████████░░░░  12.4 MB  9.8 MB/s  project/session.jsonl`` on stderr, redrawn."""

    def __init__(self, total: int, size: int):
        self.total, self.size, self.done, self.read = total, size, 0, 0
        self.start = time.perf_counter()

    def step(self, r: SessionResult) -> None:
        self.done += 1
        self.read += r.bytes
        frac = self.done / self.total if self.total else 1.0
        width = 24
        filled = int(frac * width)
        rate = self.read / 1e6 / max(time.perf_counter() - self.start, 1e-6)
        name = _clean(Path(r.path).name)[:40]
        line = (f"[{self.done:>{len(str(self.total))}}/{self.total}] {'#' * filled}{'.' * (width - filled)} "
                f"{self.read / 1e6:7.1f} MB  {rate:5.1f} MB/s  {name}")
        sys.stderr.write("\r" + line.ljust(110)[:110])
        sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\r" + " " * 110 + "\r")
        sys.stderr.flush()


# ---------------------------------------------------------------------------------------------
# The report


def folder_document(results: list[SessionResult], *, paths: list[str], graders: list[str], workers: int,
                    seconds: float) -> dict[str, Any]:
    """The folder report as data (what ``--json`` writes and the text, Markdown and HTML show)."""
    results = sorted(results, key=lambda r: r.path)
    by_grader: dict[str, Counter[str]] = {g: Counter() for g in graders}
    by_version: dict[str, dict[str, Any]] = {}
    failures, inherited, incomplete = [], [], []
    for r in results:
        for c in r.compactions:
            if c.get("inherited"):
                inherited.append({"path": r.path, "line": c["line"], "version": c["version"],
                                  "reason": c.get("inherited_reason", "")})
                continue
            if c.get("no_summary"):
                incomplete.append({"path": r.path, "line": c["line"], "version": c["version"],
                                   "reason": c["no_summary"]})
                continue
            version = c.get("version") or "unknown"
            row = by_version.setdefault(version, {"sessions": set(), "compactions": 0, **{s: 0 for s in STATUSES}})
            row["sessions"].add(r.path)
            row["compactions"] += 1
            for v in c.get("verdicts", []):
                by_grader.setdefault(v["grader"], Counter())[v["status"]] += 1
                row[v["status"]] = row.get(v["status"], 0) + 1
                if v["status"] == "fail" or (v["status"] == "ungraded" and _crashed(v)):
                    failures.append({"path": r.path, "line": c["line"], "index": c["index"], "version": c["version"],
                                     "grader": v["grader"], "status": v["status"], "reasons": v["reasons"]})
    total_bytes = sum(r.bytes for r in results)
    summary = {
        "sessions": len(results), "graded": sum(r.status == "graded" for r in results),
        "skipped": sum(r.status == "skipped" for r in results), "errors": sum(r.status == "error" for r in results),
        "compactions": sum(1 for r in results for c in r.compactions
                           if not c.get("inherited") and not c.get("no_summary")),
        "inherited": len(inherited), "incomplete": len(incomplete), "problems": sum(len(r.problems) for r in results), "bytes": total_bytes, "seconds": round(seconds, 3),
        "mb_per_s": round(total_bytes / 1e6 / seconds, 2) if seconds > 0 else None, "workers": workers,
    }
    return {
        "format": DOC_FORMAT, "version": DOC_VERSION, "paths": list(paths), "summary": summary,
        "graders": {g: {s: by_grader[g].get(s, 0) for s in STATUSES} for g in by_grader},
        "versions": {v: {"sessions": len(row["sessions"]), "compactions": row["compactions"],
                         **{s: row.get(s, 0) for s in STATUSES}}
                     for v, row in sorted(by_version.items(), key=lambda kv: _version_key(kv[0]))},
        "failures": failures,
        "skipped": [{"path": r.path, "reason": r.reason} for r in results if r.status == "skipped"],
        "errors": [{"path": r.path, "reason": r.reason} for r in results if r.status == "error"],
        "inherited": inherited,
        # A compaction with no summary after its boundary (a file cut short, a summary record that
        # could not be read or is not marked): listed, never graded against an empty summary.
        "incomplete": incomplete,
        # Lines a reader skipped or moved: each named with its file and line, never dropped silently.
        "problems": [{"path": r.path, "line": line, "reason": _problem_text(text, line)}
                     for r in results for text, line in zip(r.problems, r.problem_lines)],
        "sessions": [r.as_dict() for r in results],
    }


def _problem_text(text: str, line: int) -> str:
    """A problem's message without its ``line N:`` prefix (the line is shown as ``path:N``)."""
    prefix = f"line {line}: "
    return text[len(prefix):] if text.startswith(prefix) else text


def _crashed(v: dict[str, Any]) -> bool:
    return any(str(x).startswith("grader crashed") for x in v.get("reasons", []))


def _version_key(v: str) -> tuple:
    return tuple(int(x) if x.isdigit() else 0 for x in re.split(r"[.\-]", v)) if v != "unknown" else (10**9,)


def exit_status(doc: dict[str, Any]) -> int:
    """2 when a file could not be read (bad input) or nothing at all was graded (every session
    skipped: a CI job must not pass on no verdict), else 1 when a verdict failed (or a grader
    crashed), else 0."""
    if doc["errors"] or not doc["summary"]["compactions"]:
        return 2
    return 1 if doc["failures"] else 0


def nothing_graded(doc: dict[str, Any]) -> str | None:
    """Why the run graded no compaction at all (None when it graded one): the message of exit 2."""
    summary = doc["summary"]
    if summary["compactions"]:
        return None
    n = summary["sessions"]
    what = ("the one session file given holds no compaction of its own with a summary" if n == 1 else
            f"none of the {n} session files given holds a compaction of its own with a summary")
    how = [f"{summary['skipped']} skipped"] if summary["skipped"] else []
    how += [f"{summary['errors']} unreadable"] if summary["errors"] else []
    return (f"nothing graded: {what} ({', '.join(how)}; the reasons are listed above); give session "
            "transcripts with a compaction (Claude Code keeps them in ~/.claude/projects/<project>/<session>.jsonl)")


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x9b]")


def _clean(text: Any) -> str:
    """Text safe to print on a terminal: control characters (escape sequences) made visible."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))
