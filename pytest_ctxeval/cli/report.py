"""``ctxeval report``: render a results file as HTML, Markdown or JSON.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import jinja2

from ..errors import UsageError
from ..options import tolerance
from ..results import read_results
from .common import EXIT_OK, check_writable

__all__ = ['add_report_command', 'cmd_report']


def add_report_command(sub: Any) -> None:
    """The ``report`` verb's parser."""
    rep = sub.add_parser(
        "report", help="render a results file as a self-contained HTML page, a Markdown summary or JSON",
        description="Render RESULTS.json as a report; the output's suffix says which: .html (run table, "
                    "compaction timelines, summaries by section, verdicts, what each compaction lost), .md "
                    "(a short summary for a CI job summary or a pull-request comment) or .json. With "
                    "--baseline, the report shows the regressions and each summary next to the baseline's. "
                    "Exit 0 on success, 2 on bad input.")
    rep.add_argument("results", metavar="RESULTS.json")
    rep.add_argument("-o", "--output", dest="outputs", action="append", required=True, metavar="OUT",
                     help="the report to write: OUT.html, OUT.md or OUT.json (repeatable)")
    rep.add_argument("--baseline", metavar="BASELINE.json", help="compare against this baseline in the report")
    rep.add_argument("--tolerance", type=tolerance, default=None, metavar="X",
                     help="score tolerance for --baseline (default 0.05)")


def cmd_report(args: argparse.Namespace) -> int:
    from ..reporting.baseline import DEFAULT_TOLERANCE, diff_runs, load_document
    from ..reporting.report import write_report

    if args.tolerance is not None and not args.baseline:
        raise UsageError("--tolerance applies to the comparison with --baseline: give --baseline BASELINE.json "
                         "or drop --tolerance")
    for out in args.outputs:  # before any work
        if Path(out).suffix.lower() not in (".html", ".htm", ".md", ".json"):
            raise UsageError(f"{out}: the suffix says which report: .html, .md or .json")
        check_writable(Path(out))
    doc = read_results(args.results)
    baseline = load_document(args.baseline) if args.baseline else None
    if baseline is not None:
        doc = dict(doc)
        doc["comparison"] = diff_runs(baseline, doc, tolerance=DEFAULT_TOLERANCE if args.tolerance is None
                                    else args.tolerance, name=str(args.baseline)).as_dict()
    for out in args.outputs:
        try:
            written = write_report(out, doc, baseline=baseline)
        except (TypeError, ValueError, AttributeError, LookupError, ArithmeticError, jinja2.TemplateError) as exc:
            # A field the checks let through but the page cannot show: still one line, no traceback.
            raise UsageError(f"{args.results}: malformed results file ({type(exc).__name__}: {exc}); "
                             "render a file written by ctxeval") from None
        print(f"report written to {written}")
    return EXIT_OK
