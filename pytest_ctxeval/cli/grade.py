"""``ctxeval grade``: grade the compaction summaries of Claude Code transcripts (one file
here; folders and several files in :mod:`.grade_folder`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..evaluation import usage_lines
from ..grading.folders import is_folder_mode
from ..options import RunOptions, add_model_options
from ..results import results_document, write_results
from ..transcript.compactions import micro_note, nothing_to_grade
from ..transcript.jsonl import read_transcript
from .common import check_writable, exit_code, grader_args, load_expectations, print_outcomes, registry_of
from .grade_folder import add_folder_options, run_grade_folder

__all__ = ['add_grade_command', 'cmd_grade', 'read_summary']


def add_grade_command(sub: Any) -> None:
    """The ``grade`` verb's parser."""
    grade = sub.add_parser("grade", help="grade the compaction summaries in Claude Code transcripts (files or folders)",
                           description="Grade each real compaction in a Claude Code session file (the "
                                       "conversation before each compact_boundary against the summary after "
                                       "it); with --summary, grade that text as a summary of the whole "
                                       "transcript. Given folders (e.g. ~/.claude/projects) or several files, grade "
                                       "every session with a compaction in parallel and print tables per grader "
                                       "and per Claude Code version. Exit 0 if all verdicts pass, 1 if any fails, "
                                       "2 on bad input, or when nothing was graded: the one file given has "
                                       "nothing of its own to grade (no compaction, only one inherited from a "
                                       "parent session, only ones with no summary, or it is not a session "
                                       "transcript, such as claude -p stream-json output), or every file given "
                                       "was skipped (folder mode lists each skipped file with the reason).")
    grade.add_argument("transcript", metavar="PATH", nargs="+",
                       help="a session .jsonl file, or folders / several files (graded recursively)")
    add_folder_options(grade)
    grade.add_argument("--summary", metavar="FILE", help="grade this summary text against the whole transcript")
    grade.add_argument("--expect", metavar="FILE.yaml",
                       help="expectations in the scenario 'expect:' schema (intent, files, errors, pending, "
                            "superseded, probes)")
    grade.add_argument("--json", dest="json_out", metavar="OUT", help="write the versioned results JSON here")
    add_model_options(grade.add_argument, "--", summarises=False)
    grader_args(grade)
    grade.add_argument("-v", "--verbose", action="store_true", help="print every verdict, not only failures")
    grade.add_argument("--strict", action="store_true",
                       help="a malformed transcript line (or a record of a type the reader does not know) is an error (exit 2) instead of being reported and skipped; "
                            "an ungraded verdict (a judge that could not decide) fails the run (exit 1)")


def cmd_grade(args: argparse.Namespace) -> int:
    if is_folder_mode(args.transcript):
        return run_grade_folder(args)
    args.transcript = args.transcript[0]
    options = RunOptions.from_namespace(args)
    options.check_key()
    for out in (args.json_out, args.md_out, args.html_out):
        if out:
            check_writable(Path(out))
    if not Path(args.transcript).exists():
        raise UsageError(f"{args.transcript}: no such file or folder (give a session .jsonl file, or a folder "
                         "such as ~/.claude/projects)")
    registry, specs = registry_of(args)
    from ..evaluate import Evaluator

    evaluator = Evaluator(options, registry, specs, compactor=None)
    expect = load_expectations(args.expect) if args.expect else None
    summary = None
    if args.summary:
        summary = read_summary(Path(args.summary))
    transcript = read_transcript(args.transcript, strict=args.strict)
    if summary is None:
        _check_something_to_grade(args.transcript, transcript)
    evaluation = evaluator.evaluate(transcript, expect=expect, summary_text=summary)
    outcome = evaluation.outcome
    print_outcomes([outcome], args.verbose)
    usage = evaluation.usage
    if evaluator.judge_label is not None:
        print()
        for line in usage_lines(usage, options.backend):
            print(line)
        print(f"judge: {evaluator.judge_label}")
    if args.json_out or args.md_out or args.html_out:
        # One format for one file, whatever else is asked for: --json is the results file `ctxeval report`
        # reads, and --html/--md are the report it renders of it (the session's verdicts, summaries, losses).
        doc = results_document([outcome], usage=usage, backend=options.backend, model=None,
                               judge=evaluator.judge_label)
        if args.json_out:
            print(f"results written to {write_results(args.json_out, doc)}")
        from ..reporting.report import write_report

        for out, kind in ((args.md_out, "md"), (args.html_out, "html")):
            if out:
                print(f"report written to {write_report(out, doc, kind=kind)}")
    return exit_code([outcome], strict=args.strict)


def _check_something_to_grade(path: str, transcript: Any) -> None:
    """A file with no compaction of its own that has a summary is a usage error (exit 2), as a file
    with no compaction at all: nothing was graded, so no verdict passed or failed. Folder mode lists
    such a file as skipped, in the same words."""
    why = nothing_to_grade(transcript.compactions, transcript.left_boundaries, transcript.microcompactions)
    if why is None:
        return
    from ..scenario.importer import compaction_call_message, is_compaction_call

    if is_compaction_call(transcript):  # as `ctxeval import` recognises it (its notes would mislead)
        raise UsageError(compaction_call_message(Path(path), transcript, "grade", "Grade"))
    for problem in transcript.problems:  # the lines skipped on the way, as a graded file shows them
        print(f"note: {path}: {problem}", file=sys.stderr)
    if not transcript.compactions and transcript.left_boundaries:
        raise UsageError(f"{path}: {why}; nothing to grade: pass --summary FILE to grade a summary of it")
    if not transcript.compactions:
        raise UsageError(f"{path}: no compaction in this transcript (no compact_boundary record)"
                         f"{micro_note(transcript.microcompactions)}; "
                         "pass --summary FILE to grade a summary of it")
    if why.startswith("only a compaction inherited"):
        first = transcript.compactions[0]
        raise UsageError(f"{path}: skipped: {why} (line {first.boundary_line}: {first.inherited_reason}); "
                         "nothing of this session to grade: grade the parent session's file, or pass "
                         "--summary FILE to grade a summary of this one")
    detail = "; ".join(c.not_graded.removesuffix("; not graded") for c in transcript.compactions if c.no_summary)
    raise UsageError(f"{path}: skipped: {why} ({detail}); nothing to grade: grade the complete file once "
                     "the session has written its summary, or pass --summary FILE to grade a summary of it")


def read_summary(p: Path) -> str:
    """The ``--summary`` file: a regular file (or a pipe/FIFO that ends) of at most
    :data:`~pytest_ctxeval.core.limits.MAX_SUMMARY_BYTES`; a FIFO nobody writes to is refused rather than
    waited on forever (opened non-blocking, read only once a writer is there)."""
    import select
    import stat as stat_mod

    from ..core import limits

    MAX_SUMMARY_BYTES = limits.MAX_SUMMARY_BYTES

    def fail(why: str) -> UsageError:
        return UsageError(f"{p}: cannot read the summary ({why})")

    try:
        mode = os.stat(p).st_mode
        if stat_mod.S_ISDIR(mode):
            raise fail("is a folder")
        fd = os.open(p, os.O_RDONLY | (os.O_NONBLOCK if stat_mod.S_ISFIFO(mode) else 0))
    except OSError as exc:
        raise fail(exc.strerror or str(exc)) from None
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            if stat_mod.S_ISFIFO(mode) and not select.select([fd], [], [], limits.PIPE_WAIT_SECONDS)[0]:
                raise fail(f"a pipe with no data for {limits.PIPE_WAIT_SECONDS:g} s (limits.PIPE_WAIT_SECONDS); "
                           "write the summary to a file")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                if stat_mod.S_ISFIFO(mode) and not chunks:
                    raise fail("a pipe with no writer; write the summary to a file")
                break
            size += len(chunk)
            if size > MAX_SUMMARY_BYTES:
                raise fail(f"over {MAX_SUMMARY_BYTES:,} bytes (limits.MAX_SUMMARY_BYTES)")
            chunks.append(chunk)
    except BlockingIOError:
        raise fail("a pipe with no writer; write the summary to a file") from None
    except OSError as exc:
        raise fail(exc.strerror or str(exc)) from None
    finally:
        os.close(fd)
    try:
        text = b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"not UTF-8 at byte {exc.start}") from None
    if not text.strip():
        # graded, an empty text would read as a summary that lost everything: bad input, not a verdict
        what = "empty" if not text else f"blank ({len(text):,} whitespace characters)"
        raise UsageError(f"{p}: the summary file is {what}; give the file holding the summary text "
                         "(e.g. the text after 'Summary:' that Claude Code wrote)")
    return text
