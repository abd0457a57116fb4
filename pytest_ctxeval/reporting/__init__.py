"""Reporting: the HTML and Markdown reports and their charts, baselines and run diffs, the summary
tables, the planted-fact survival tables and the prompt-change coverage note."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from .report import write_report, render_html, render_markdown
    from .baseline import RunDiff, diff_runs, load_document, write_baseline
    from .table import ScenarioRow, format_table

#: Public name -> the module of this package that defines it (imported on first use).
_EXPORTS = {
    "write_report": "report", "render_html": "report", "render_markdown": "report", "RunDiff": "baseline",
    "diff_runs": "baseline", "load_document": "baseline", "write_baseline": "baseline", "ScenarioRow": "table",
    "format_table": "table",
}

__all__ = [
    "write_report", "render_html", "render_markdown", "RunDiff", "diff_runs", "load_document", "write_baseline",
    "ScenarioRow", "format_table",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
