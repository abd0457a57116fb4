"""``ctxeval compare-real``: our engine's compaction of exactly what each real compaction
summarised, both graded side by side (:mod:`pytest_ctxeval.compare_real`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..evaluation import merge_usage, usage_lines
from ..options import RunOptions, add_model_options, window_tokens
from ..results import write_results
from .common import EXIT_FAIL, EXIT_OK, check_writable, grader_args, load_expectations, registry_of

__all__ = ['add_compare_real_command', 'cmd_compare_real']


def add_compare_real_command(sub: Any) -> None:
    """The ``compare-real`` verb's parser."""
    cmp = sub.add_parser(
        "compare-real", help="compact the conversation each real compaction summarised with our engine, grade both",
        description="For each compaction in a Claude Code session file, run our engine's compaction (the prompt "
                    "under test, offline or anthropic backend) on exactly the conversation Claude Code summarised, "
                    "grade both summaries with the same graders and show them side by side. With Claude Code's "
                    "compaction call (agent-acompact-*.jsonl, found next to a 2.1 session or given with "
                    "--acompact), also compare the two compaction requests. Exit 0 if every verdict on our summary "
                    "passes, 1 if one fails, 2 on bad input.")
    cmp.add_argument("transcript", metavar="TRANSCRIPT.jsonl")
    cmp.add_argument("--acompact", action="append", default=[], metavar="FILE",
                     help="Claude Code's compaction call file for this session (repeatable)")
    cmp.add_argument("--expect", metavar="FILE.yaml", help="expectations (scenario 'expect:' schema), probes included")
    cmp.add_argument("--prompt", dest="ctxeval_prompt", default=None, metavar="PATH",
                     help="a jinja2 compaction prompt to test instead of the built-in one")
    cmp.add_argument("--context-window", dest="ctxeval_context_window", type=window_tokens, default=None, metavar="N",
                     help="the window our engine assumes (default: the session model's, 200,000)")
    add_model_options(cmp.add_argument, "--")
    cmp.add_argument("--json", dest="json_out", metavar="OUT", help="write the comparison JSON here")
    cmp.add_argument("--html", dest="html_out", metavar="OUT", help="write a self-contained HTML page here")
    grader_args(cmp)
    cmp.add_argument("--strict", action="store_true",
                     help="a malformed transcript line (or a record of a type the reader does not know) is an error (exit 2) instead of being reported and skipped")
    cmp.add_argument("--no-redact", dest="redact", action="store_false",
                     help="print and write the summaries as they are (key- and token-shaped strings are replaced "
                          "by [REDACTED:<kind>] by default)")
    cmp.add_argument("-v", "--verbose", action="store_true", help="print every verdict, not only failures")


def cmd_compare_real(args: argparse.Namespace) -> int:
    from ..compare_real import comparison_html, compare_real, format_real_comparison

    options = RunOptions.from_namespace(args, graders_dirs=tuple(Path(d) for d in (args.graders_dir or [])))
    options.check_key()
    for out in (args.json_out, args.html_out):
        if out:
            check_writable(Path(out))
    registry, specs = registry_of(args)
    expect = load_expectations(args.expect) if args.expect else None
    llm = options.make_llm()
    judge = options.make_judge() if any(s.kind == "llm" for s in specs) else None
    comparison = compare_real(args.transcript, llm=llm, registry=registry, specs=specs, prompts=options.prompts(),
                              context_window=options.context_window, expect=expect, calls=args.acompact,
                              strict=args.strict, judge=judge, redact_output=args.redact)
    usage = merge_usage([llm.usage.as_dict()] + ([judge.llm.usage.as_dict()] if judge else []))
    comparison.usage = usage
    for line in format_real_comparison(comparison, verbose=args.verbose):
        print(line)
    print()
    for line in usage_lines(usage, options.backend):
        print(line)
    if judge is not None:
        print(f"judge: {judge.label}")
    if args.json_out:
        print(f"comparison written to {write_results(args.json_out, comparison.as_dict())}")
    if args.html_out:
        from ..core.outputs import write_text_safely
        from ..core.redact import scrub_output

        out = write_text_safely(args.html_out, scrub_output(comparison_html(comparison)), what="the HTML report")
        print(f"HTML written to {out}")
    return EXIT_FAIL if comparison.failed else EXIT_OK
