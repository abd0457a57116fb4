"""``ctxeval compare``: the scenarios under several compactors, one table
(:mod:`pytest_ctxeval.compaction.compare`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..core.words import plural
from ..core.renamed import add_renamed_option
from ..errors import UsageError
from ..evaluation import usage_lines
from ..options import RunOptions, add_run_options
from ..results import write_results
from ..runner import check_unique_names
from ..scenario.schema import find_scenarios, load_scenario
from .common import EXIT_FAIL, EXIT_OK, Progress, default_scenarios, check_writable, grader_args, registry_of

__all__ = ['add_compare_command', 'cmd_compare']


def add_compare_command(sub: Any) -> None:
    """The ``compare`` verb's parser."""
    from ..compaction import DEFAULT_COMPARE

    cmp = sub.add_parser(
        "compare", help="run the scenarios under several compactors and compare them",
        description="Run every scenario under each compactor (Claude Code's reference engine and the "
                    "peers modelled from their source: codex, gemini_cli, opencode, observation_masking; "
                    "anthropic_server on the real API; or your own as package.module:Name) and grade every "
                    "compaction with the same graders. Prints per compactor the pass rate of each grader, probe "
                    "scores by kind, tokens after compaction, compactions, model calls and cost, and per scenario "
                    "which compactor failed which grader and why. Offline the summaries come from the reference "
                    "model, so it measures structure (what is kept, pairing, budgets); with --backend anthropic it "
                    "measures summary quality too. Exit 0 when every scenario ran under every compactor (the "
                    "verdicts are the comparison, not errors), 1 when one could not run, 2 on bad input.")
    cmp.add_argument("paths", nargs="*", metavar="PATH",
                     help="scenario files or folders (default: ./scenarios, else the built-in library)")
    add_renamed_option(cmp.add_argument, "--", "compactors", dest="compactors", default=",".join(DEFAULT_COMPARE),
                       metavar="a,b,...", help="the compactors to compare, comma-separated, options in parentheses "
                       f"(default: {','.join(DEFAULT_COMPARE)})")
    cmp.add_argument("--json", dest="json_out", metavar="OUT", help="write the comparison (table and every "
                     "compactor's results) as JSON here")
    cmp.add_argument("--html", dest="html_out", metavar="OUT", help="write an HTML report here: the compactors "
                     "section, then the first compactor's scenarios in full")
    add_run_options(cmp.add_argument, "--")
    for action in cmp._actions:  # --compactor picks the one compactor of a run; compare takes --compactors
        if "--compactor" in action.option_strings:
            action.help = argparse.SUPPRESS
    grader_args(cmp)
    cmp.add_argument("--session-dir", metavar="DIR",
                     help="where transcripts and persisted tool results go, one folder per compactor (default: "
                          "temporary folders)")


def cmd_compare(args: argparse.Namespace) -> int:
    from ..compaction import split_specs
    from ..compaction.compare import comparison_document, format_compactor_table, run_compactors

    if args.ctxeval_compactor:
        raise UsageError("ctxeval compare: --compactor picks one compactor for run; compare takes --compactors a,b,...")
    options = RunOptions.from_namespace(args, graders_dirs=tuple(Path(d) for d in (args.graders_dir or [])))
    options.check_key()
    specs = split_specs(args.compactors or "")
    if not specs:
        raise UsageError("--compactors: name at least one compactor, e.g. --compactors claude_code,codex")
    for spec in specs:
        options.make_compactor(spec)  # every spec checked before any run
    registry, graders = registry_of(args)
    paths = default_scenarios(args.paths)
    files = find_scenarios(paths)
    if not files:
        raise UsageError(f"no scenario files (*.yaml, *.yml) under {', '.join(map(str, paths))}")
    scenarios = [load_scenario(f) for f in files]
    check_unique_names(scenarios)
    for out in (args.json_out, args.html_out):
        if out:
            check_writable(Path(out))
    progress = Progress(len(scenarios) * len(specs))
    results = run_compactors(scenarios, specs, options=options, registry=registry, graders=graders,
                             session_root=Path(args.session_dir) if args.session_dir else None,
                             on_done=lambda compactor, name: progress.step(f"{compactor}: {name}", []))
    progress.close()
    from ..llm import DEFAULT_MODEL

    price = DEFAULT_MODEL if options.backend == "offline" else None
    doc = comparison_document(results, backend=options.backend, model=options.model, price_model=price)
    print(f"ctxeval compare: {plural(len(specs), 'compactor')} x {plural(len(scenarios), 'scenario')} ({options.backend})")
    for line in format_compactor_table(doc["table"]):
        print(line)
    print()
    for line in usage_lines(doc["usage"], options.backend):
        print(line)
    if args.json_out:
        print(f"comparison written to {write_results(args.json_out, doc)}")
    if args.html_out:
        from ..reporting.report import write_report

        page = dict(results[0].doc)
        page["compactors"] = doc["table"]
        print(f"HTML written to {write_report(args.html_out, page)}")
    errors = [(r.name, o.name, o.error) for r in results for o in r.outcomes if o.error]
    for name, scenario, error in errors:
        print(f"ctxeval compare: {scenario} could not run under {name}: {error}", file=sys.stderr)
    return EXIT_FAIL if errors else EXIT_OK
