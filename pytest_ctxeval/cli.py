"""The ``ctxeval`` command: the same runs and grading as ``pytest --ctxeval``, outside pytest.

    ctxeval run scenarios/ --json results.json [--context-window N] [--compact-at-end]
    ctxeval grade TRANSCRIPT.jsonl [--summary FILE] [--expect FILE.yaml] [--graders a,b] [--json OUT]

Exit codes: 0 every applicable verdict passed, 1 some verdict failed (or a scenario could not run),
2 usage or input error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Sequence

import yaml
from pydantic import ValidationError

from . import __version__
from .errors import CtxEvalError, UsageError
from .evaluation import Outcome, evaluate_run, evaluate_transcript, merge_usage, results_document, write_results
from .grading import GraderRegistry, load_graders
from .options import RunOptions, add_run_options, builtin_scenarios_dir
from .runner import run_scenario
from .scenarios import Expectations, find_scenarios, format_path, load_scenario
from .table import ScenarioRow, format_table
from .transcript import read_transcript

__all__ = ["main", "build_parser"]

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's default exits 2 too; keep one line
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _grader_names(value: str) -> list[str]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected grader names separated by commas")
    return names


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ctxeval", description="Evaluate context compaction of LLM coding agents: replay "
                     "scripted sessions through the reference engine and grade every compaction summary.")
    parser.add_argument("--version", action="version", version=f"ctxeval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    run = sub.add_parser("run", help="replay scenarios through the engine and grade each compaction",
                         description="Replay scenario files through the reference engine and grade every "
                                     "compaction. Exit 0 if all verdicts pass, 1 if any fails, 2 on bad input.")
    run.add_argument("paths", nargs="*", metavar="PATH",
                     help="scenario files or folders (default: ./scenarios, else the built-in library)")
    run.add_argument("--json", dest="json_out", metavar="OUT", help="write the versioned results JSON here")
    add_run_options(run.add_argument, "--")
    _grader_args(run)
    run.add_argument("--session-dir", metavar="DIR",
                     help="where transcripts and persisted tool results go (default: a temporary folder)")
    run.add_argument("-v", "--verbose", action="store_true", help="print every verdict, not only failures")

    grade = sub.add_parser("grade", help="grade the compaction summaries in a Claude Code transcript",
                           description="Grade each real compaction in a Claude Code session file (the "
                                       "conversation before each compact_boundary against the summary after "
                                       "it); with --summary, grade that text as a summary of the whole "
                                       "transcript. Exit 0 if all verdicts pass, 1 if any fails, 2 on bad input.")
    grade.add_argument("transcript", metavar="TRANSCRIPT.jsonl")
    grade.add_argument("--summary", metavar="FILE", help="grade this summary text against the whole transcript")
    grade.add_argument("--expect", metavar="FILE.yaml",
                       help="expectations in the scenario 'expect:' schema (intent, files, errors, pending, "
                            "superseded, probes)")
    grade.add_argument("--json", dest="json_out", metavar="OUT", help="write the versioned results JSON here")
    _grader_args(grade)
    grade.add_argument("-v", "--verbose", action="store_true", help="print every verdict, not only failures")
    return parser


def _grader_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--graders", type=_grader_names, metavar="a,b",
                   help="run only these graders (default: all); see the README for the list")
    p.add_argument("--graders-dir", action="append", default=None, metavar="DIR",
                   help="a folder of your own graders (repeatable); the built-in graders always load")


def _registry(args: argparse.Namespace) -> tuple[GraderRegistry, list[Any]]:
    registry = load_graders([Path(d) for d in (args.graders_dir or [])])
    return registry, registry.select(args.graders)


def _print_outcomes(outcomes: list[Outcome], verbose: bool) -> None:
    rows = []
    for o in outcomes:
        row = ScenarioRow(name=o.name, compactions=len(o.cases),
                          tokens=[(c.pre_tokens, c.post_tokens) for c in o.cases], error=o.error)
        if o.run is not None:
            for e in o.run.events:
                row.tiers[e.tier] = row.tiers.get(e.tier, 0) + 1
        row.counts = o.counts
        rows.append(row)
    for line in format_table(rows):
        print(line)
    for o in outcomes:
        for note in o.notes:
            print(f"note: {o.source}: {note}")
        if o.error:
            print(f"\n{o.name}: ERROR: {o.error}")
            continue
        for case, verdicts in zip(o.cases, o.verdicts):
            shown = [v for v in verdicts if verbose or v.status in ("fail", "ungraded")
                     or (v.grader in o.known_failures and v.status == "pass")]
            if not shown:
                continue
            print(f"\n{o.name} — {case.label}: {case.pre_tokens:,} → {case.post_tokens:,} tokens")
            for v in shown:
                label = v.status.upper()
                if v.grader in o.known_failures:
                    label = "XFAIL" if v.status == "fail" else ("XPASS" if v.status == "pass" else label)
                print(f"  {label:9} {v.grader} ({v.score:.2f})"
                      + (f" [known failure: {o.known_failures[v.grader]}]" if v.grader in o.known_failures else ""))
                for r in v.reasons:
                    print(f"            {r}")


def _exit_code(outcomes: list[Outcome]) -> int:
    return EXIT_FAIL if any(o.failed for o in outcomes) else EXIT_OK


def _cmd_run(args: argparse.Namespace) -> int:
    options = RunOptions(backend=args.ctxeval_backend or "offline", model=args.ctxeval_model,
                         context_window=args.ctxeval_context_window, compact_at_end=args.ctxeval_compact_at_end,
                         prompt=Path(args.ctxeval_prompt) if args.ctxeval_prompt else None,
                         graders_dirs=tuple(Path(d) for d in (args.graders_dir or [])))
    registry, specs = _registry(args)
    prompts = options.prompts()
    paths = args.paths or [Path("scenarios") if Path("scenarios").is_dir() else builtin_scenarios_dir()]
    files = find_scenarios(paths)
    if not files:
        raise UsageError(f"no scenario files (*.yaml) under {', '.join(map(str, paths))}")
    scenarios = [load_scenario(f) for f in files]  # all input errors before any run
    outcomes, usages = [], []
    for scenario in scenarios:
        session_dir = Path(args.session_dir) / scenario.display_name if args.session_dir else None
        try:
            run = run_scenario(scenario, llm=options.make_llm(scenario.faults or None),
                               context_window=options.context_window, compact_at_end=options.compact_at_end,
                               session_dir=session_dir, prompts=prompts)
        except CtxEvalError as exc:
            outcomes.append(Outcome(name=scenario.display_name, source=str(scenario.path), kind="scenario",
                                    error=str(exc), graders=[s.name for s in specs]))
            continue
        usages.append(run.usage)
        outcomes.append(evaluate_run(run, registry, specs))
    _print_outcomes(outcomes, args.verbose)
    usage = merge_usage(usages)
    print(f"\nmodel usage ({options.backend}): {usage['api_calls']} calls, {usage['input_tokens']:,} input tokens, "
          f"{usage['output_tokens']:,} output tokens")
    if args.json_out:
        doc = results_document(outcomes, usage=usage, backend=options.backend,
                               model=outcomes[0].run.requests[0]["model"] if outcomes and outcomes[0].run and outcomes[0].run.requests else options.model,
                               prompt={"path": str(prompts.compact_path), "fingerprint": prompts.fingerprint})
        print(f"results written to {write_results(args.json_out, doc)}")
    return _exit_code(outcomes)


def load_expectations(path: str | Path) -> Expectations:
    """An ``expect:`` mapping from a YAML file (bare, or under a top-level ``expect:`` key)."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{p}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise UsageError(f"{p}: not UTF-8") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise UsageError(f"{p}{':' + str(mark.line + 1) if mark else ''}: invalid YAML: "
                         f"{getattr(exc, 'problem', None) or exc}") from None
    if data is None:
        data = {}
    if isinstance(data, dict) and "expect" in data and isinstance(data["expect"], dict):
        data = data["expect"]
    if not isinstance(data, dict):
        raise UsageError(f"{p}: expected a mapping with keys such as intent, files, errors, pending, superseded, probes")
    try:
        return Expectations.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = format_path(tuple(err["loc"]))
        msg = "unknown key (allowed: intent, files, errors, pending, superseded, probes)" \
            if err["type"] == "extra_forbidden" else err["msg"]
        raise UsageError(f"{p}: {field}: {msg}") from None


def _cmd_grade(args: argparse.Namespace) -> int:
    registry, specs = _registry(args)
    expect = load_expectations(args.expect) if args.expect else None
    summary = None
    if args.summary:
        try:
            summary = Path(args.summary).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{args.summary}: cannot read the summary ({getattr(exc, 'strerror', None) or exc})") from None
    transcript = read_transcript(args.transcript)
    if summary is None and not transcript.compactions:
        raise UsageError(f"{args.transcript}: no compaction in this transcript (no compact_boundary record); "
                         "pass --summary FILE to grade a summary of it")
    outcome = evaluate_transcript(transcript, registry, specs, expect=expect, summary_text=summary)
    _print_outcomes([outcome], args.verbose)
    if args.json_out:
        doc = results_document([outcome], usage=merge_usage([]), backend="none", model=None)
        print(f"results written to {write_results(args.json_out, doc)}")
    return _exit_code([outcome])


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return _cmd_run(args) if args.command == "run" else _cmd_grade(args)
    except CtxEvalError as exc:
        print(f"ctxeval: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("ctxeval: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and closed: not an error of ours
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
