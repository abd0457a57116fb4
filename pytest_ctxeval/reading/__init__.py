"""How a careful reader reads a conversation and a summary: the nine sections, the facts a summary
must carry (people's messages, files, errors, todos), verbatim matching and quoting. Shared by the
engine, the reference model, the compactors and the graders, so it sits below all of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from .summary import SECTION_TITLES, Section, ParsedSummary, parse_summary, format_compact_summary
    from .extract import PersonMessage, person_messages, edited_files, failing_results, open_todos

#: Public name -> the module of this package that defines it (imported on first use).
_EXPORTS = {
    "SECTION_TITLES": "summary", "Section": "summary", "ParsedSummary": "summary", "parse_summary": "summary",
    "format_compact_summary": "summary", "PersonMessage": "extract", "person_messages": "extract",
    "edited_files": "extract", "failing_results": "extract", "open_todos": "extract",
}

__all__ = [
    "SECTION_TITLES", "Section", "ParsedSummary", "parse_summary", "format_compact_summary", "PersonMessage",
    "person_messages", "edited_files", "failing_results", "open_todos",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
