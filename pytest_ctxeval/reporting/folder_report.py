"""The ``ctxeval grade FOLDER`` report as terminal text, Markdown and HTML.

All three show the same document (:func:`pytest_ctxeval.grading.folders.folder_document`): totals,
one table per grader, one per Claude Code version, the failures, then the skipped sessions, the
inherited compactions, the compactions with no summary and the files that could not be read. Text from transcripts is made inert in
each: control characters shown as ``\\xNN`` on the terminal, Markdown punctuation escaped, HTML
escaped (and the page forbids scripts and remote loads); key-shaped strings are scrubbed before
anything is written.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..grading.folders import STATUSES, _clean
from ..core.redact import scrub_output
from .report import md, md_code

__all__ = ["text_lines", "render_folder_markdown", "render_folder_html", "check_report_path", "write_text"]

_MAX_LISTED = 20


def _pct(n: int, total: int) -> str:
    return f"{100 * n / total:.0f}%" if total else "-"


def _grader_rows(doc: dict[str, Any]) -> list[list[str]]:
    rows = []
    for g, c in doc["graders"].items():
        graded = c["pass"] + c["fail"]
        rows.append([g] + [str(c[s]) for s in STATUSES] + [_pct(c["pass"], graded)])
    return rows


def _never_applied(doc: dict[str, Any]) -> list[str]:
    """The graders that were n/a on every graded compaction (when there was one)."""
    return [g for g, c in doc["graders"].items() if c["n/a"] and not any(c[s] for s in STATUSES if s != "n/a")]


def _version_rows(doc: dict[str, Any]) -> list[list[str]]:
    rows = []
    for v, c in doc["versions"].items():
        graded = c["pass"] + c["fail"]
        rows.append([v, str(c["sessions"]), str(c["compactions"])] + [str(c[s]) for s in STATUSES]
                    + [_pct(c["pass"], graded)])
    return rows


_PROBLEMS_TITLE = "Lines skipped or moved by the reader (--strict makes a malformed line an error)"
_INCOMPLETE_TITLE = "Compactions with no summary after the boundary (not graded)"
_GRADER_HEAD = ["grader", *STATUSES, "pass rate"]
_VERSION_HEAD = ["Claude Code", "sessions", "compactions", *STATUSES, "pass rate"]


def _totals(doc: dict[str, Any]) -> str:
    s = doc["summary"]
    rate = f", {s['mb_per_s']} MB/s" if s.get("mb_per_s") else ""
    return (f"{_lines(s['sessions'], 'session file')}: {s['graded']} graded ({_lines(s['compactions'], 'compaction')}), "
            f"{s['skipped']} skipped, {s['errors']} unreadable; "
            f"{_lines(s['inherited'], 'inherited compaction')} not graded; "
            + (f"{_lines(s['incomplete'], 'compaction')} with no summary not graded (listed below); "
               if s.get("incomplete") else "")
            + (f"{_lines(s['problems'])} skipped or moved (listed below); " if s.get("problems") else "")
            + (f"{_lines(s['subagents'], 'subagent transcript')} (subagents/agent-*.jsonl) not graded as "
               "sessions; " if s.get("subagents") else "") +
            f"{s['bytes'] / 1e6:.1f} MB in {s['seconds']:.1f} s on {_lines(s['workers'], 'worker')}{rate}")


def _lines(n: int, word: str = "line") -> str:
    """``1 line``, ``2 lines``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)] if rows else [len(h) for h in head]
    fmt = lambda r: "  ".join(str(x).ljust(w) if i == 0 else str(x).rjust(w) for i, (x, w) in enumerate(zip(r, widths)))  # noqa: E731
    return [fmt(head), "  ".join("-" * w for w in widths)] + [fmt(r) for r in rows]


def _where(item: dict[str, Any]) -> str:
    return f"{item['path']}:{item['line']}" if item.get("line") else item["path"]


#: The reasons of a failure the terminal shows without -v.
_MAX_REASONS = 3


def text_lines(doc: dict[str, Any], *, verbose: bool = False) -> list[str]:
    """The report for the terminal."""
    out = [_totals(doc)] + ([f"judge: {doc['judge']}"] if doc.get("judge") else [])
    out += [_clean(doc["not_jsonl"]["note"])] if doc.get("not_jsonl") else []
    out += ["", "By grader (verdicts over all compactions):"]
    out += ["  " + line for line in _table(_GRADER_HEAD, _grader_rows(doc))]
    idle = _never_applied(doc)
    if idle:
        out.append(f"  n/a on every compaction: {', '.join(idle)} (most need an expect: file, ctxeval grade FILE "
                   "--expect expect.yaml, or a scenario run; ctxeval grade FILE -v says why for each)")
    out += ["", "By Claude Code version (the version that wrote each compaction):"]
    out += ["  " + line for line in _table(_VERSION_HEAD, _version_rows(doc))]
    if doc["failures"]:
        out += ["", f"Failures ({len(doc['failures'])}):"]
        for f in doc["failures"]:
            out.append(f"  {_clean(_where(f))} (compaction {f['index']}, {f['version'] or 'unknown version'}) "
                       f"{f['status'].upper()} {f['grader']}")
            shown = f["reasons"] if verbose else f["reasons"][:_MAX_REASONS]
            out += [f"      {_clean(r)}" for r in shown]
            if len(shown) < len(f["reasons"]):
                out.append(f"      … and {len(f['reasons']) - len(shown)} more (-v lists them all; "
                           "--json/--md/--html hold them)")
    for key, title in (("errors", "Could not be read"), ("problems", _PROBLEMS_TITLE),
                       ("skipped", "Skipped (no compaction of their own to grade)"),
                       ("inherited", "Inherited compactions (copied from a parent session, not graded)"),
                       ("incomplete", _INCOMPLETE_TITLE)):
        items = doc.get(key, [])
        if not items:
            continue
        out += ["", f"{title} ({len(items)}):"]
        shown = items if verbose or key == "errors" else items[:_MAX_LISTED]
        out += [f"  {_clean(_where(i))}: {_clean(i['reason'])}" for i in shown]
        if len(shown) < len(items):
            out.append(f"  … and {len(items) - len(shown)} more (-v lists them all; --json/--md/--html hold them)")
    return [scrub_output(line) for line in out]


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(md(h) for h in head) + " |", "|" + "---|" * len(head)] + [
        "| " + " | ".join(md(x) for x in r) + " |" for r in rows]


def render_folder_markdown(doc: dict[str, Any]) -> str:
    """The report as Markdown (escaped: no HTML, links, tables or mentions can come from a transcript)."""
    out = ["# ctxeval grade: real sessions", "", md(_totals(doc), 1000), ""]
    out += [md(doc["not_jsonl"]["note"], 600), ""] if doc.get("not_jsonl") else []
    if doc.get("judge"):
        out += [f"judge of the llm graders: {md(doc['judge'], 400)}", ""]
    out += ["## By grader", ""]
    out += _md_table(_GRADER_HEAD, _grader_rows(doc))
    out += ["", "## By Claude Code version", ""] + _md_table(_VERSION_HEAD, _version_rows(doc))
    out += ["", f"## Failures ({len(doc['failures'])})", ""] + ([] if doc["failures"] else ["none"])
    for f in doc["failures"]:
        out.append(f"- **{md(f['grader'])}** {md(f['status'])}: {md_code(_where(f), 400)} "
                   f"(compaction {f['index']}, {md(f['version'] or 'unknown version')})")
        out += [f"  - {md(r, 400)}" for r in f["reasons"]]
    for key, title in (("errors", "Could not be read"), ("problems", _PROBLEMS_TITLE), ("skipped", "Skipped"),
                       ("inherited", "Inherited compactions"), ("incomplete", _INCOMPLETE_TITLE)):
        if not doc.get(key):
            continue  # an empty section is left out (the totals line counts it)
        out += ["", f"## {title} ({len(doc.get(key, []))})", ""]
        out += [f"- {md_code(_where(i), 400)}: {md(i['reason'], 400)}" for i in doc.get(key, [])]
    return scrub_output("\n".join(out) + "\n")


_CSS = ("body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:.5em 0}"
        "td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}td:first-child,th:first-child{text-align:left}"
        ".fail{color:#b00}.ok{color:#070}code{font-size:12px}li{margin:.2em 0}")


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    e = html.escape
    return ("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr>"
            + "".join("<tr>" + "".join(f"<td>{e(x)}</td>" for x in r) + "</tr>" for r in rows) + "</table>")


def render_folder_html(doc: dict[str, Any]) -> str:
    """The report as one self-contained HTML page; every value is escaped."""
    e = html.escape
    parts = ["<!doctype html><html><head><meta charset='utf-8'>",
             "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'\">",
             f"<title>ctxeval grade</title><style>{_CSS}</style></head><body>",
             "<h1>ctxeval grade: real sessions</h1>", f"<p>{e(_totals(doc))}</p>",
             f"<p>{e(doc['not_jsonl']['note'])}</p>" if doc.get("not_jsonl") else "",
             f"<p>judge of the llm graders: {e(doc['judge'])}</p>" if doc.get("judge") else "",
             "<h2>By grader</h2>", _html_table(_GRADER_HEAD, _grader_rows(doc)),
             "<h2>By Claude Code version</h2>", _html_table(_VERSION_HEAD, _version_rows(doc)),
             f"<h2>Failures ({len(doc['failures'])})</h2>" + ("" if doc["failures"] else "<p>none</p>") + "<ul>"]
    for f in doc["failures"]:
        parts.append(f"<li><b class='fail'>{e(f['grader'])}</b> {e(f['status'])}: <code>{e(_where(f))}</code> "
                     f"(compaction {e(str(f['index']))}, {e(f['version'] or 'unknown version')})<ul>"
                     + "".join(f"<li>{e(r)}</li>" for r in f["reasons"]) + "</ul></li>")
    parts.append("</ul>")
    for key, title in (("errors", "Could not be read"), ("problems", _PROBLEMS_TITLE), ("skipped", "Skipped"),
                       ("inherited", "Inherited compactions"), ("incomplete", _INCOMPLETE_TITLE)):
        items = doc.get(key, [])
        if not items:
            continue  # an empty section is left out (the totals line counts it)
        parts.append(f"<h2>{e(title)} ({len(items)})</h2><ul>"
                     + "".join(f"<li><code>{e(_where(i))}</code>: {e(i['reason'])}</li>" for i in items) + "</ul>")
    parts.append("</body></html>\n")
    return scrub_output("".join(parts))


def check_report_path(path: str | None, flag: str) -> None:
    """Refuse, before any grading, an output path that cannot be written as a regular file."""
    if not path:
        return
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{flag} {path}: is a folder; give a file name")
    if p.exists() and not p.is_file():
        raise UsageError(f"{flag} {path}: not a regular file (a device or pipe); give a file name")
    parent = p.parent if str(p.parent) else Path(".")
    if parent.exists() and not parent.is_dir():
        raise UsageError(f"{flag} {path}: {parent} is not a folder")


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` through a temporary file created exclusively beside ``path``, then rename it
    over ``path`` (a reader never sees half a file; a planted ``.tmp`` name is never followed). The
    file gets the permissions every other report gets (an existing file's, else 0666 less the
    umask), not the 0600 of a temporary file."""
    from ..core.outputs import write_text_safely

    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{p}: cannot write ({exc.strerror or exc})") from None
    return write_text_safely(p, text, what="the report")
