"""Summary formats: the sections a compactor's summary has, and how graders find them.

Claude Code's nine sections are read by :func:`pytest_ctxeval.reading.summary.parse_summary`. Every other
compactor declares a :class:`SummaryFormat`: its sections in order, each with the *kinds* of fact it
holds, using the graders' vocabulary (``request``, ``files``, ``errors``, ``pending``, ``current``,
``next``, ...; see :data:`pytest_ctxeval.reading.summary.SECTION_TITLES`). A grader looking for files reads
the section of kind ``files`` when the format has one (strictly: a summary that drops it fails),
and the whole post-compact context when the format has no such section (a fact may live anywhere).

Two styles: ``headings`` (a section starts at a line naming its title: ``1. Goal:``,
``## Objective``, ``**Next Move**``) and ``xml`` (``<overall_goal>...</overall_goal>`` inside a root
element such as ``<state_snapshot>``). Titles are matched case-insensitively and exactly, so an item
inside a section is never taken for a header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..reading.summary import ParsedSummary, Section

__all__ = ["FormatSection", "SummaryFormat", "FormatSummary", "FoundSection", "NO_SUMMARY", "FREE_FORM"]


@dataclass(frozen=True)
class FormatSection:
    """One section of a summary format: its title as the prompt names it, and the kinds of fact it
    holds (``("current", "pending")`` for opencode's Work State)."""

    title: str
    kinds: tuple[str, ...] = ()


@dataclass
class FoundSection(Section):
    """A section found in a summary, with every kind of fact its format says it holds."""

    kinds: tuple[str, ...] = ()


class FormatSummary(ParsedSummary):
    """A summary split by its format: ``sections`` in the order found; :meth:`get` looks a kind up
    across them (sections of one kind, such as Gemini's artifact trail and file-system state, are
    read as one)."""

    def get(self, kind: str) -> Section | None:
        found = [s for s in self.sections if kind in _kinds(s)]
        if not found:
            return None
        if len(found) == 1:
            return found[0]
        first = found[0]
        return Section(kind, first.number, " + ".join(s.title for s in found),
                       "\n".join(s.body for s in found), first.line)

    @property
    def kinds(self) -> list[str]:
        out: list[str] = []
        for s in self.sections:
            out += [k for k in _kinds(s) if k and k not in out]
        return out


def _kinds(section: Section) -> tuple[str, ...]:
    return section.kinds if isinstance(section, FoundSection) else ((section.kind,) if section.kind else ())


@dataclass(frozen=True)
class SummaryFormat:
    """The sections of a compactor's summary (see the module docstring).

    >>> fmt = SummaryFormat("handoff", (FormatSection("Goal", ("request",)), FormatSection("Remaining work", ("pending",))))
    >>> parsed = fmt.parse("1. Goal:\\n   ship it\\n\\n2. Remaining work:\\n   - tests")
    >>> [(s.title, s.body) for s in parsed.sections]
    [('Goal', 'ship it'), ('Remaining work', '- tests')]
    >>> parsed.get("pending").body
    '- tests'
    """

    name: str                                   # shown in reasons: "Codex handoff summary"
    sections: tuple[FormatSection, ...] = ()
    style: str = "headings"                     # headings | xml
    root: str | None = None                     # xml: the element around the sections
    summary: bool = True                        # False: the compactor writes no summary at all
    _patterns: dict[str, re.Pattern[str]] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def kinds(self) -> set[str]:
        return {k for s in self.sections for k in s.kinds}

    @property
    def titles(self) -> list[str]:
        return [s.title for s in self.sections]

    def title_for(self, kind: str) -> str | None:
        """The title of the first section holding ``kind``, or None."""
        return next((s.title for s in self.sections if kind in s.kinds), None)

    def parse(self, text: str) -> FormatSummary:
        """The sections of ``text``, in the order they appear (absent ones left out)."""
        if self.style == "xml":
            return self._parse_xml(text or "")
        return self._parse_headings(text or "")

    def _header(self) -> re.Pattern[str]:
        if "headings" not in self._patterns:
            titles = "|".join(re.escape(t) for t in sorted(self.titles, key=len, reverse=True))
            self._patterns["headings"] = re.compile(
                r"^[ \t]{0,3}(?:#{1,6}[ \t]*)?(?:\d{1,2}[.)][ \t]+)?(?:\*\*|__)?[ \t]*(?P<title>" + titles
                + r")[ \t]*(?:\*\*|__)?[ \t]*(?::(?:\*\*|__)?[ \t]*(?P<rest>.*))?$", re.IGNORECASE | re.MULTILINE)
        return self._patterns["headings"]

    def _section(self, title: str, number: int, body: str, line: int) -> Section:
        spec = next(s for s in self.sections if s.title.lower() == title.lower())
        return FoundSection(spec.kinds[0] if spec.kinds else None, number, spec.title, body, line, kinds=spec.kinds)

    def _parse_headings(self, text: str) -> FormatSummary:
        out = FormatSummary(text=text)
        if not self.sections:
            return out
        marks = list(self._header().finditer(text))
        seen: set[str] = set()
        chosen = []
        for m in marks:  # the first header of each title opens its section
            key = m.group("title").lower()
            if key not in seen:
                seen.add(key)
                chosen.append(m)
        for i, m in enumerate(chosen):
            stop = chosen[i + 1].start() if i + 1 < len(chosen) else len(text)
            body = ((m.group("rest") or "") + text[m.end():stop]).strip("\n")
            lines = body.split("\n")
            indents = [len(l) - len(l.lstrip()) for l in lines if l.strip()]
            cut = min(indents) if indents else 0
            body = "\n".join(l[cut:] for l in lines).strip()
            out.sections.append(self._section(m.group("title"), i + 1, body, text[: m.start()].count("\n") + 1))
        return out

    def _parse_xml(self, text: str) -> FormatSummary:
        out = FormatSummary(text=text)
        found = []
        for spec in self.sections:
            m = re.search(rf"<{re.escape(spec.title)}>([\s\S]*?)</{re.escape(spec.title)}>", text, re.IGNORECASE)
            if m:
                found.append((m.start(), spec.title, m.group(1)))
        for i, (start, title, body) in enumerate(sorted(found)):
            lines = body.strip("\n").split("\n")
            indents = [len(l) - len(l.lstrip()) for l in lines if l.strip()]
            cut = min(indents) if indents else 0
            out.sections.append(self._section(title, i + 1, "\n".join(l[cut:] for l in lines).strip(),
                                              text[:start].count("\n") + 1))
        return out


#: The format of a compactor that writes no summary (observation masking): every fact lives in the
#: messages it kept.
NO_SUMMARY = SummaryFormat("no summary (the context is kept, old observations masked)", summary=False)
#: A summary with no declared sections (the API's server-side compaction): facts are searched in the
#: whole post-compact context.
FREE_FORM = SummaryFormat("free-form summary")
