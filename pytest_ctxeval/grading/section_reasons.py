"""Where the rule graders look for a fact in a compaction's summary, and how their reasons name
the place: the section of a fact's kind (or the whole summary when it has no such section and is not
in the nine sections), a reason's short quote, the summary line a sentence is on, the fail for a
missing section, and the values a section tells that the session never showed.

Shared by the graders in ``graders/`` that check one section each (``files_preserved``,
``errors_preserved``, ``pending_tasks``...): a grader module is loaded by its file path
(:func:`pytest_ctxeval.grading.registry.load_graders`), so what several of them use lives here.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.messages import plain_text
from ..reading.summary import Section, normalize_ws, plain_emphasis
from ..reading.summary_form import free_form
from ..reading.unseen_values import unseen_reasons
from .registry import CompactionCase, Verdict


def short(text: str, n: int = 70) -> str:
    """``text`` on one line, cut to ``n`` characters with "…" (a quote in a reason)."""
    text = normalize_ws(text)
    return text if len(text) <= n else text[: n - 1] + "…"


def section_place(case: CompactionCase, kind: str, number: int) -> str:
    """How a reason names the place it looked: ``section 3 'Files and Code Sections' (line 12)``."""
    section = case.sections.get(kind)
    if case.summary_format is not None:  # another compactor's format
        if section is None:
            return "the post-compact context (summary and kept messages)"
        kept = " or the kept messages" if case.kept_text else ""
        return f"the '{section.title}' section (line {section.line}){kept}"
    if case.kind == "session_memory" or section is None:
        return "the post-compact context (session notes and kept messages)"
    kept = " or the kept messages" if case.kept_text else ""
    number, title = case.section_name(kind)  # the prompt's name for it (a renamed prompt's title)
    return f"section {number} '{title}' (line {section.line}){kept}"


def section_missing(case: CompactionCase, kind: str, number: int, what: str, items: Sequence[str] = ()) -> Verdict:
    """The fail for a summary without the section; names the first items that are lost with it."""
    lost = ""
    if items:
        shown = "; ".join(f"\"{short(i, 60)}\"" for i in items[:3])
        lost = f": {shown}" + (f" (+{len(items) - 3} more)" if len(items) > 3 else "")
    fmt = case.summary_format
    if fmt is not None:
        return Verdict.failed(f"the '{fmt.title_for(kind)}' section of the {fmt.name} is missing, so {what} cannot "
                              f"survive{lost} (sections found: "
                              f"{', '.join(s.title for s in case.sections.sections) or 'none'})", missing=list(items))
    number, title = case.section_name(kind)  # the prompt's name for it (a renamed prompt's title)
    return Verdict.failed(f"section {number} '{title}' is missing, so {what} cannot survive{lost} "
                          f"(sections found: {', '.join(case.sections.kinds) or 'none'})", missing=list(items))


def free_form_why(case: CompactionCase, kind: str) -> str | None:
    """Why the facts of section ``kind`` are looked for in the whole summary: it lacks that section
    and is not in the nine sections (or a /compact asked for another structure), so a fact may be in
    any part of it (reading.summary_form). None for a summary in the nine sections, or another
    compactor's format."""
    if case.summary_format is not None or case.kind == "session_memory" or case.sections.get(kind) is not None:
        return None
    return free_form(len(set(case.sections.kinds)), case.compact_args)


def whole_region(case: CompactionCase) -> str:
    """The whole summary and what the compaction kept verbatim."""
    return case.summary + ("\n" + case.kept_text if case.kept_text else "")


def free_form_place(case: CompactionCase, kind: str, number: int, why: str) -> str:
    """How a reason names the place it looked in a summary without the nine sections."""
    kept = " or the kept messages" if case.kept_text else ""
    return f"the summary{kept} (read whole: it has no section {number} '{case.section_name(kind)[1]}'; {why})"


def line_of(lines: list[str], section: Section, text: str) -> int:
    """The summary line (1-based) at or after ``section``'s heading where ``text`` (a sentence or item
    of the section, emphasis unwrapped) starts, or the heading's line."""
    start = normalize_ws(text)[:40]
    return next((i + 1 for i in range(max(section.line - 1, 0), len(lines))
                 if start and start in normalize_ws(plain_emphasis(lines[i]))), section.line)


def unseen_in(case: CompactionCase, *kinds: str) -> list[str]:
    """Reasons for values the summary's sections of ``kinds`` tell that nothing in the session shows
    (pytest_ctxeval.reading.unseen_values); the nine-section summaries of Claude Code's prompt only."""
    if case.summary_format is not None or case.kind == "session_memory":
        return []
    sections = [s for k in kinds if (s := case.sections.get(k)) is not None]
    if not sections:
        return []
    def raw() -> str:
        return case.shared_view("session_text", lambda: plain_text(case.history), case.history)

    return unseen_reasons(sections, case.summary, case.history_text, raw)
