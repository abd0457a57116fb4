"""``ctxeval grade`` on folders or several files (see :mod:`pytest_ctxeval.grading.folders`).

:func:`add_folder_options` adds the options folder mode needs to the ``grade`` parser;
:func:`run_grade_folder` runs it. One file named alone is graded as before (``cli._cmd_grade``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from ..errors import UsageError
from ..grading.folders import exit_status, find_sessions, folder_document, grade_paths, judge_label, nothing_graded
from ..reporting.folder_report import (
    check_report_path, render_folder_html, render_folder_markdown, text_lines, write_text,
)
from ..options import RunOptions, positive_int
from ..core.redact import scrub_output
from ..core.words import plural

__all__ = ["add_folder_options", "run_grade_folder"]


def add_folder_options(grade: argparse.ArgumentParser) -> None:
    """Options of ``ctxeval grade`` that folder mode adds."""
    grade.add_argument("--workers", type=positive_int, metavar="N", default=None,
                       help="folder mode: grade in N processes (default: one per core)")
    grade.add_argument("--md", dest="md_out", metavar="OUT.md",
                       help="write the folder report (tables per grader and version, failures) as Markdown; "
                            "with one file, the report of that session (as ctxeval report renders its --json)")
    grade.add_argument("--html", dest="html_out", metavar="OUT.html",
                       help="the same report as a self-contained HTML page (with one file: its verdicts, "
                            "summaries by section and what each compaction lost)")


#: How many of the files not read (not ending in .jsonl) the report names.
_EXAMPLES = 3


def not_jsonl_note(others: list[Path]) -> str:
    """One line for the files below the folders that were not read, naming a few of them."""
    names = ", ".join(p.name for p in others[:_EXAMPLES]) + (", …" if len(others) > _EXAMPLES else "")
    verb = "was" if len(others) == 1 else "were"
    return (f"{plural(len(others), 'file')} not ending in .jsonl {verb} not read ({names}); Claude Code's session "
            "files end in .jsonl: name a session saved under another name on the command line, or rename it")


def run_grade_folder(args: argparse.Namespace) -> int:
    """Grade every session under ``args.transcript`` (folders and files); print the tables."""
    given = f"{len(args.transcript)} paths were given" if len(args.transcript) > 1 else "a folder was given"
    if args.summary:
        raise UsageError(f"--summary grades one text against one transcript: give a single .jsonl file ({given})")
    if args.expect:
        raise UsageError(f"--expect describes one session: give a single .jsonl file with it ({given})")
    for value, flag in ((args.json_out, "--json"), (args.md_out, "--md"), (args.html_out, "--html")):
        check_report_path(value, flag)
    subagents: list[Path] = []
    others: list[Path] = []
    files = find_sessions(args.transcript, subagents, others)
    if not files:
        raise UsageError(f"{', '.join(args.transcript)}: no .jsonl session file in "
                         f"{'this folder' if len(args.transcript) == 1 else 'these folders'} or below (Claude Code "
                         "keeps them in ~/.claude/projects/<project>/<session>.jsonl)"
                         + (f"; {plural(len(subagents), 'subagent transcript')} "
                            "(subagents/agent-*.jsonl) left out: name one to grade it" if subagents else "")
                         + (f"; {not_jsonl_note(others)}" if others else ""))
    options = RunOptions.from_namespace(args, graders_dirs=tuple(Path(d) for d in (args.graders_dir or [])))
    options.check_key()
    from ..grading.registry import load_graders

    registry = load_graders([Path(d) for d in (args.graders_dir or [])])
    graders = [s.name for s in registry.select(args.graders)]
    workers = max(1, min(args.workers or os.cpu_count() or 1, len(files)))
    start = time.perf_counter()
    results = list(grade_paths(files, grader_names=args.graders, graders_dirs=args.graders_dir or [],
                               options=options, workers=workers, strict=args.strict,
                               progress=sys.stderr.isatty()))
    doc = folder_document(results, paths=list(args.transcript), graders=graders, workers=workers,
                          seconds=time.perf_counter() - start)
    doc["summary"]["subagents"] = len(subagents)
    doc["summary"]["not_jsonl"] = len(others)
    if others:
        doc["not_jsonl"] = {"count": len(others), "note": not_jsonl_note(others),
                            "examples": [str(p) for p in others[:_EXAMPLES]]}
    if judge_label() is not None:  # the reports say which judge scored the llm graders (offline: a heuristic)
        doc["judge"] = judge_label()
    for line in text_lines(doc, verbose=args.verbose):
        print(line)
    if any(r.usage for r in results):
        from ..evaluation import merge_usage, usage_lines

        doc["usage"] = merge_usage([r.usage for r in results if r.usage])
        print()
        for line in usage_lines(doc["usage"], options.backend):
            print(line)
    if args.json_out:
        print(f"results written to {write_text(args.json_out, scrub_output(json.dumps(doc, indent=2, ensure_ascii=False)) + chr(10))}")
    if args.md_out:
        print(f"Markdown written to {write_text(args.md_out, render_folder_markdown(doc))}")
    if args.html_out:
        print(f"HTML written to {write_text(args.html_out, render_folder_html(doc))}")
    why = nothing_graded(doc)
    if why is not None:  # the reports are written all the same: they say what was skipped and why
        print(f"ctxeval: error: {why}", file=sys.stderr)
    return exit_status(doc)

