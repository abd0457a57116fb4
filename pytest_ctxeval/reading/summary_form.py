"""A summary that is not in Claude Code's nine sections, and a ``/compact`` that asked for another
form (review 4, G14).

Claude Code passes the arguments of a manual ``/compact`` to the summariser after its base prompt
(``[Additional Instructions]`` between ``BASE_COMPACT_PROMPT`` and the trailer, seed 004:477-483), and
the model follows them: ``/compact just 5 short bullets, no sections`` gets five bullets. A summary
can also come without the sections for no asked reason (an old or another prompt). Either way the
facts a section would hold may be anywhere in it, and a grader that looks only in that section
claims they "cannot survive" when they are right there.

* :func:`free_form`: the summary holds fewer than :data:`NINE_FORM_MIN` of the nine sections (or a
  ``/compact`` asked for another structure and the section is missing): the content graders read the
  whole summary for their facts (``files_preserved``, ``errors_preserved``, ``pending_tasks``), and
  their reasons say so. A nine-section summary that lacks one section is graded as before: the
  section is missing.
* :func:`format_request`: the clause of ``/compact`` arguments that asks for a form ("5 short
  bullets", "one paragraph", "no sections", "keep it brief"), and whether it replaces the nine
  sections (a count of bullets, lines or paragraphs, "no sections", "as a table"): ``nine_sections``
  is then ``n/a``, as the person asked for another structure. "Keep it brief" asks for a shorter
  summary, not another structure: the sections are still expected, and a fail names the request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["NINE_FORM_MIN", "FormatRequest", "format_request", "free_form"]

#: A summary with fewer of the nine sections than this is not in the nine-section form.
NINE_FORM_MIN = 5

_N = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|a\s+few|a\s+couple\s+of|a\s+single|a|single)"
#: Asks for another structure than the nine sections.
_STRUCTURE = re.compile(
    r"\b(?:no|without(?:\s+any)?|skip(?:\s+the)?|drop(?:\s+the)?|not?\s+(?:in|use|using)(?:\s+the)?)\s+"
    r"(?:(?:nine|9|numbered)\s+)?(?:sections?|headings?|headers?|structure)\b|"
    rf"\b{_N}\s+(?:(?:short|brief|concise|terse|plain|simple|quick)\s+)*(?:bullets?|bullet\s+points?|points|lines|"
    r"sentences|paragraphs?|items)\b|"
    r"\b(?:bullets?|bullet\s+points?|a\s+(?:flat\s+)?list|prose|plain\s+text)\s+only\b|"
    r"\b(?:only|just)\s+(?:bullets?|bullet\s+points?|a\s+(?:flat\s+)?list|prose)\b|"
    r"\bas\s+(?:a\s+)?(?:table|flat\s+list|bulleted\s+list|bullet\s+list|single\s+paragraph|prose|tl;?dr)\b|"
    r"\btl;?dr\b", re.IGNORECASE)
#: Asks for a shorter or terser summary, not another structure.
_SHORTER = re.compile(r"\b(?:brief|briefly|short|shorter|concise|terse|compact|succinct|minimal|"
                      r"under\s+\d+\s+(?:words|tokens|lines|characters))\b", re.IGNORECASE)
_CLAUSES = re.compile(r"[^.;\n!?]+")


@dataclass(frozen=True)
class FormatRequest:
    """A ``/compact`` request for a form: its words, and whether it replaces the nine sections."""

    said: str
    structure: bool


def format_request(args: str | None) -> FormatRequest | None:
    """The form the ``/compact`` arguments ask for (see the module docstring), or None.

    >>> format_request("just 5 short bullets, no sections")
    FormatRequest(said='just 5 short bullets, no sections', structure=True)
    >>> format_request("focus on the API changes; keep it brief")
    FormatRequest(said='keep it brief', structure=False)
    >>> format_request("leave out the PDF detour") is None
    True
    """
    clauses = [c.strip() for c in _CLAUSES.findall(re.sub(r"(?i)\btl;dr\b", "tldr", args or "")) if c.strip()]
    for clause in clauses:
        if _STRUCTURE.search(clause):
            return FormatRequest(clause, True)
    for clause in clauses:
        if _SHORTER.search(clause):
            return FormatRequest(clause, False)
    return None


def free_form(found: int, args: str | None) -> str | None:
    """Why a summary's facts are looked for in the whole of it, or None: it holds ``found`` of the
    nine sections, fewer than :data:`NINE_FORM_MIN`, or ``/compact`` asked for another structure.

    >>> free_form(0, "just 5 short bullets, no sections")
    'it is not in the nine sections (0 of them found); /compact asked for "just 5 short bullets, no sections"'
    >>> free_form(8, None) is None
    True
    """
    asked = format_request(args)
    if found >= NINE_FORM_MIN and (asked is None or not asked.structure):
        return None
    note = f"it is not in the nine sections ({found} of them found)" if found < NINE_FORM_MIN else \
        f"it has {found} of the nine sections"
    return note + (f"; /compact asked for \"{asked.said}\"" if asked else "")
