"""``ctxeval diff``: a results file against a baseline: regressions, improvements, changes.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..options import tolerance
from ..results import write_results
from .common import EXIT_FAIL, EXIT_OK, check_writable

__all__ = ['add_diff_command', 'cmd_diff']


def add_diff_command(sub: Any) -> None:
    """The ``diff`` verb's parser."""
    diff = sub.add_parser(
        "diff", help="compare a results file against a baseline: regressions, improvements, changes",
        description="Compare RESULTS.json (from pytest --ctxeval-report, --ctxeval-save-baseline or ctxeval run "
                    "--json) against BASELINE.json, per scenario x compaction x grader. A grader that starts "
                    "failing, or a score that drops by more than the tolerance, is a regression. Exit 0 when "
                    "nothing regressed, 1 on a regression, 2 on bad input.")
    diff.add_argument("baseline", metavar="BASELINE.json")
    diff.add_argument("results", metavar="RESULTS.json")
    diff.add_argument("--tolerance", type=tolerance, default=None, metavar="X",
                      help="how much a score may drop before it is a regression (default 0.05)")
    diff.add_argument("--json", dest="json_out", metavar="OUT", help="write the comparison as JSON here")


def cmd_diff(args: argparse.Namespace) -> int:
    from ..reporting.baseline import (DEFAULT_TOLERANCE, diff_runs, format_run_diff, load_document, nothing_in_common,
                                      scenario_names)

    if args.json_out:
        check_writable(Path(args.json_out))
    baseline, results = load_document(args.baseline), load_document(args.results)
    refused = nothing_in_common(scenario_names(baseline), scenario_names(results), str(args.baseline),
                                str(args.results), "diff results against a baseline of the same scenarios or transcripts")
    if refused:
        raise UsageError(refused)
    try:
        cmp = diff_runs(baseline, results, tolerance=DEFAULT_TOLERANCE if args.tolerance is None else args.tolerance,
                      name=str(args.baseline))
    except (TypeError, ValueError, AttributeError, LookupError, ArithmeticError) as exc:
        raise UsageError(f"{args.baseline} vs {args.results}: malformed file ({type(exc).__name__}: {exc})") from None
    for line in format_run_diff(cmp):
        print(line)
    if args.json_out:
        print(f"comparison written to {write_results(args.json_out, cmp.as_dict())}")
    return EXIT_FAIL if cmp.failed else EXIT_OK
