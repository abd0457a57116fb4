"""The ``ctxeval`` command: the same runs and grading as ``pytest --ctxeval``, outside pytest.

    ctxeval run scenarios/ --json results.json [--context-window N] [--compact-at-end]
    ctxeval grade TRANSCRIPT.jsonl [--summary FILE] [--expect FILE.yaml] [--graders a,b] [--json OUT]
    ctxeval import TRANSCRIPT.jsonl -o scenarios/NAME.yaml [--all | --until-first-compaction] [--no-redact]
    ctxeval compare-real TRANSCRIPT.jsonl [--acompact FILE] [--backend anthropic] [--json OUT] [--html OUT]
    ctxeval lint [PATHS]                      # every problem of the scenario files, as file:line: field: message
    ctxeval diff BASELINE.json RESULTS.json [--tolerance 0.05] [--json OUT]   # exit 1 on regressions
    ctxeval report RESULTS.json -o report.html [-o report.md] [--baseline BASELINE.json]
    ctxeval compare --strategies claude_code,codex,gemini_cli,opencode,observation_masking scenarios/ [--json OUT] [--html OUT]
    ctxeval validate [PATHS] [--graders a,b] [--json OUT] [--html OUT] [--min-kill 0.95]   # graders' kill rates
    ctxeval graders                           # every grader: kind, what it checks, expect: keys, operators

Exit codes: 0 every applicable verdict passed, 1 some verdict failed (or a scenario could not run),
2 usage or input error.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, NoReturn
from collections.abc import Sequence

import jinja2
from pydantic import ValidationError

from . import __version__
from .errors import CtxEvalError, ProviderError, UsageError
from .evaluation import (
    Outcome, evaluate_run, evaluate_transcript, make_recompact, merge_usage, results_document, usage_lines,
    write_results,
)
from .compaction import StrategyUnavailable
from .cli_grade_folder import add_folder_options, run_grade_folder
from .folder_grading import is_folder_mode
from .grading import GraderRegistry, load_graders
from .options import (
    RunOptions, add_model_options, add_run_options, builtin_scenarios_dir, tolerance, window_tokens,
)
from .runner import check_unique_names, fresh_folder, run_scenario
from .scenarios import Expectations, find_scenarios, format_path, load_scenario
from .table import ScenarioRow, format_table
from .terminal import safe_text
from .transcript import read_transcript

__all__ = ["main", "build_parser"]

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse's default exits 2 too; keep one line
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
    run.add_argument("--strict", action="store_true",
                     help="an ungraded verdict (a judge that could not decide) fails the run (exit 1)")

    grade = sub.add_parser("grade", help="grade the compaction summaries in Claude Code transcripts (files or folders)",
                           description="Grade each real compaction in a Claude Code session file (the "
                                       "conversation before each compact_boundary against the summary after "
                                       "it); with --summary, grade that text as a summary of the whole "
                                       "transcript. Given folders (e.g. ~/.claude/projects) or several files, grade "
                                       "every session with a compaction in parallel and print tables per grader "
                                       "and per Claude Code version. Exit 0 if all verdicts pass, 1 if any fails, "
                                       "2 on bad input.")
    grade.add_argument("transcript", metavar="PATH", nargs="+",
                       help="a session .jsonl file, or folders / several files (graded recursively)")
    add_folder_options(grade)
    grade.add_argument("--summary", metavar="FILE", help="grade this summary text against the whole transcript")
    grade.add_argument("--expect", metavar="FILE.yaml",
                       help="expectations in the scenario 'expect:' schema (intent, files, errors, pending, "
                            "superseded, probes)")
    grade.add_argument("--json", dest="json_out", metavar="OUT", help="write the versioned results JSON here")
    add_model_options(grade.add_argument, "--")
    _grader_args(grade)
    grade.add_argument("-v", "--verbose", action="store_true", help="print every verdict, not only failures")
    grade.add_argument("--strict", action="store_true",
                       help="a malformed transcript line is an error (exit 2) instead of being reported and skipped; "
                            "an ungraded verdict (a judge that could not decide) fails the run (exit 1)")
    _add_import_commands(sub)
    _add_lint_command(sub)
    _add_report_commands(sub)
    _add_compare_command(sub)
    from .cli_validate import add_validate_commands

    add_validate_commands(sub, _grader_args)
    from .cli_plan import add_plan_command
    from .cli_prompt import add_prompt_command

    add_prompt_command(sub)
    add_plan_command(sub)
    from .cli_facts import add_facts_command
    from .cli_grade_output import add_grade_output_command

    add_facts_command(sub)
    add_grade_output_command(sub)
    return parser


def _add_import_commands(sub: Any) -> None:
    """``ctxeval import`` and ``ctxeval compare-real`` (real Claude Code sessions)."""
    imp = sub.add_parser(
        "import", help="turn a Claude Code session file into a scenario that replays it",
        description="Write a scenario that replays a real Claude Code session (~/.claude/projects/<project>/"
                    "<session>.jsonl): person-typed messages, assistant text and tool calls, tool results, real "
                    "timestamps; meta records, command echoes and progress are not turns. Content is never "
                    "rendered as a template; key- and token-shaped strings are redacted. Exit 0 on success, "
                    "2 on bad input.")
    imp.add_argument("transcript", metavar="TRANSCRIPT.jsonl")
    imp.add_argument("-o", "--output", required=True, metavar="OUT.yaml", help="the scenario file to write")
    cut = imp.add_mutually_exclusive_group()
    cut.add_argument("--until-first-compaction", dest="mode", action="store_const", const="until_first_compaction",
                     help="stop before the first compaction and compact there (the default when the file has one)")
    cut.add_argument("--all", dest="mode", action="store_const", const="all",
                     help="keep the whole line; each compaction becomes a recorded_compaction turn installing "
                          "Claude Code's own summary")
    imp.add_argument("--thinking", choices=("keep", "drop"), default="keep",
                     help="keep the assistant's thinking blocks (default) or drop them")
    imp.add_argument("--no-redact", dest="redact", action="store_false",
                     help="keep key- and token-shaped strings (they are replaced by [REDACTED:<kind>] by default)")
    imp.add_argument("--no-subagents", dest="subagents", action="store_false",
                     help="leave subagent conversations out (by default they go under sidechains:, not replayed)")
    imp.add_argument("--name", help="the scenario's name (default: the output file's name)")
    imp.add_argument("--strict", action="store_true",
                     help="a malformed transcript line is an error (exit 2) instead of being reported and skipped")
    imp.add_argument("--force", action="store_true", help="overwrite OUT.yaml if it exists")

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
    _grader_args(cmp)
    cmp.add_argument("--strict", action="store_true",
                     help="a malformed transcript line is an error (exit 2) instead of being reported and skipped")
    cmp.add_argument("--no-redact", dest="redact", action="store_false",
                     help="print and write the summaries as they are (key- and token-shaped strings are replaced "
                          "by [REDACTED:<kind>] by default)")
    cmp.add_argument("-v", "--verbose", action="store_true", help="print every verdict, not only failures")


def _add_lint_command(sub: Any) -> None:
    """``ctxeval lint``: check scenario files without running them."""
    lint = sub.add_parser(
        "lint", help="check scenario files: schema, templates, tool calls, expectations, probes",
        description="Check scenario files without running them and print every problem as file:line: field: "
                    "message (schema errors, templates that fail, tool calls without a result or with inputs their "
                    "tool cannot take, results that name another file, Reads over the window's limit, expectations "
                    "the script never reaches, probes without an answer). Exit 0 when clean, 1 when a problem is "
                    "found, 2 on bad input.")
    lint.add_argument("paths", nargs="*", metavar="PATH",
                      help="scenario files or folders (default: ./scenarios, else the built-in library)")
    lint.add_argument("--graders-dir", action="append", default=None, metavar="DIR",
                      help="a folder of your own graders, so known_failures may name them (repeatable)")
    from .cli_plan import add_plan_flag

    add_plan_flag(lint)


def _cmd_lint(args: argparse.Namespace) -> int:
    from .lint import lint_paths

    registry = load_graders([Path(d) for d in (args.graders_dir or [])])
    paths = args.paths or [Path("scenarios") if Path("scenarios").is_dir() else builtin_scenarios_dir()]
    problems = lint_paths(paths, graders=registry.names)
    for problem in problems:
        print(problem)
    files = len(find_scenarios(paths))
    if problems:
        print(f"{len(problems)} problem{'s' if len(problems) > 1 else ''} in "
              f"{len({p.path for p in problems})} of {files} scenario file{'s' if files > 1 else ''}")
        return EXIT_FAIL
    print(f"{files} scenario file{'s' if files > 1 else ''}: no problems")
    if args.plan:
        from .cli_plan import plan_lines

        for path in find_scenarios(paths):
            print()
            print("\n".join(plan_lines(path)))
    return EXIT_OK


def _add_report_commands(sub: Any) -> None:
    """``ctxeval diff`` (baselines) and ``ctxeval report`` (HTML/Markdown/JSON from a results file)."""
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


def _cmd_diff(args: argparse.Namespace) -> int:
    from .baseline import DEFAULT_TOLERANCE, compare, format_comparison, load_document

    if args.json_out:
        _check_writable(Path(args.json_out))
    baseline, results = load_document(args.baseline), load_document(args.results)
    try:
        cmp = compare(baseline, results, tolerance=DEFAULT_TOLERANCE if args.tolerance is None else args.tolerance,
                      name=str(args.baseline))
    except (TypeError, ValueError, AttributeError, LookupError, ArithmeticError) as exc:
        raise UsageError(f"{args.baseline} vs {args.results}: malformed file ({type(exc).__name__}: {exc})") from None
    for line in format_comparison(cmp):
        print(line)
    if args.json_out:
        print(f"comparison written to {write_results(args.json_out, cmp.as_dict())}")
    return EXIT_FAIL if cmp.failed else EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    from .baseline import DEFAULT_TOLERANCE, RESULTS_FORMAT, compare, load_document
    from .report import write_report

    for out in args.outputs:  # before any work
        if Path(out).suffix.lower() not in (".html", ".htm", ".md", ".json"):
            raise UsageError(f"{out}: the suffix says which report: .html, .md or .json")
        _check_writable(Path(out))
    doc = load_document(args.results)
    if doc.get("format") != RESULTS_FORMAT:
        raise UsageError(f"{args.results}: a baseline holds no events or verdict reasons; render a results file "
                         "(pytest --ctxeval-report OUT.json, or ctxeval run --json OUT.json)")
    baseline = load_document(args.baseline) if args.baseline else None
    if baseline is not None:
        doc = dict(doc)
        doc["comparison"] = compare(baseline, doc, tolerance=DEFAULT_TOLERANCE if args.tolerance is None
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


def _grader_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--graders", type=_grader_names, metavar="a,b",
                   help="run only these graders (default: all); `ctxeval graders` lists them")
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
        if o.skipped:
            print(f"\n{o.name}: SKIPPED: {o.skipped}")
            continue
        if o.error:
            print(f"\n{o.name}: ERROR: {o.error}")
            continue
        if not o.cases and o.graders:  # nothing to grade: say why once, not once per grader
            print(f"\n{o.name}: FAIL: {o.grader_verdict(o.graders[0]).reasons[0]}")
            continue
        for case, verdicts in zip(o.cases, o.verdicts):
            shown = [v for v in verdicts if verbose or v.status in ("fail", "ungraded", "error")
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


def _exit_code(outcomes: list[Outcome], strict: bool = False) -> int:
    """1 when a verdict failed, a grader crashed or a scenario could not run (with ``strict``: or a
    verdict is ungraded), else 0. Prints how many verdicts were ungraded or crashed."""
    ungraded = sum(o.counts["ungraded"] for o in outcomes)
    errors = sum(o.counts["error"] for o in outcomes)
    if errors:
        print(f"ctxeval: {errors} grader error{'s' if errors > 1 else ''} (a grader raised: see ERROR above); "
              "the run fails")
    if ungraded:
        print(f"ctxeval: {ungraded} ungraded verdict{'s' if ungraded > 1 else ''} (a judge could not decide)"
              + ("; --strict makes them failures" if not strict else "; failing under --strict"))
    bad = any(o.failed_strict() if strict else o.failed for o in outcomes)
    return EXIT_FAIL if bad else EXIT_OK


class _Progress:
    """A live line on a terminal ("[3/9] auth_refactor  41 calls  230,114 tokens  $0.84"); silent
    when the output is not a terminal."""

    def __init__(self, total: int, llms: list[Any]):
        self.total, self.done, self.llms = total, 0, llms
        self.live = sys.stdout.isatty()

    def step(self, name: str, usages: list[dict[str, Any]]) -> None:
        self.done += 1
        if not self.live:
            return
        usage = merge_usage(usages + [llm.usage.as_dict() for llm in self.llms if llm is not None])
        line = (f"[{self.done}/{self.total}] {name}  {usage['api_calls']} calls  "
                f"{usage['input_tokens'] + usage['output_tokens']:,} tokens  ${usage['usd']:.4f}")
        _write_raw("\r" + safe_text(line)[:120].ljust(120))  # the name is escaped, the redraw is ours

    def close(self) -> None:
        if self.live and self.done:
            _write_raw("\r" + " " * 120 + "\r")


def _write_raw(text: str) -> None:
    """Write our own control characters (the progress line's carriage returns) past the guard."""
    write = getattr(sys.stdout, "write_raw", sys.stdout.write)
    write(text)
    sys.stdout.flush()


def _cmd_run(args: argparse.Namespace) -> int:
    options = RunOptions.from_namespace(args, graders_dirs=tuple(Path(d) for d in (args.graders_dir or [])))
    options.check_key()
    registry, specs = _registry(args)
    prompts = options.prompts()
    paths = args.paths or [Path("scenarios") if Path("scenarios").is_dir() else builtin_scenarios_dir()]
    files = find_scenarios(paths)
    if not files:
        raise UsageError(f"no scenario files (*.yaml) under {', '.join(map(str, paths))}")
    scenarios, broken = _load_all(files)  # all input errors before any run
    check_unique_names(scenarios)
    if args.json_out:
        _check_writable(Path(args.json_out))  # before the run, which may be a paid one
    if args.session_dir:
        _check_writable(Path(args.session_dir) / "probe")
    wants_judge = any(s.kind == "llm" for s in specs)
    judge = options.make_judge() if wants_judge else None
    regen = options.make_llm() if wants_judge else None
    strategy = options.make_strategy()
    recompact = None
    if regen is not None:
        from .compaction.driver import strategy_recompact

        recompact = (strategy_recompact(strategy, regen) if strategy is not None and not getattr(strategy, "native", False)
                     else make_recompact(regen, prompts))
    progress = _Progress(len(scenarios), [getattr(judge, "llm", None), regen])
    usages: list[dict[str, Any]] = []
    graded: list[tuple[int, Outcome, Any, Any]] = []
    staged = judge is not None and options.batch and judge.llm.store is not None
    if staged and judge is not None:  # every judge request of a stage in one Message Batch (see Judge.flush)
        judge.collecting = True

    def one(scenario: Any) -> Outcome:
        try:
            session_dir = fresh_folder(Path(args.session_dir), scenario.display_name) if args.session_dir else None
            run = run_scenario(scenario, llm=options.make_llm(scenario.faults or None),
                               context_window=options.context_window, compact_at_end=options.compact_at_end,
                               session_dir=session_dir, prompts=prompts, strategy=strategy)
        except StrategyUnavailable as exc:
            return Outcome(name=scenario.display_name, source=str(scenario.path), kind="scenario",
                           skipped=str(exc), graders=[s.name for s in specs],
                           strategy=getattr(strategy, "name", "claude_code"))
        except ProviderError:
            raise  # the endpoint cannot serve the run: one error for it (exit 2), not a failed scenario
        except CtxEvalError as exc:
            return Outcome(name=scenario.display_name, source=str(scenario.path), kind="scenario",
                           error=str(exc), graders=[s.name for s in specs])
        except OSError as exc:  # a full disk, a folder that went away: this scenario fails, the rest run
            return Outcome(name=scenario.display_name, source=str(scenario.path), kind="scenario",
                           error=f"cannot write the session files: {exc.filename or ''} {exc.strerror or exc}".strip(),
                           graders=[s.name for s in specs])
        usages.append(run.usage)
        own = None
        if judge is not None and {"judge", "probe"} & set(scenario.faults):
            # A scenario that scripts judge failures gets its own judge, so the plan cannot leak.
            own = options.make_judge(scenario.faults)
        outcome = evaluate_run(run, registry, specs, judge=own or judge, recompact=recompact)
        if own is not None:
            usages.append(own.llm.usage.as_dict())
        graded.append((len(graded), outcome, run, own))
        return outcome

    # Scenarios are independent: run them on a bounded pool (results in file order).
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, min(options.concurrency, len(scenarios)))) as pool:
        futures = [pool.submit(one, sc) for sc in scenarios]
        outcomes = []
        for sc, fut in zip(scenarios, futures):
            try:
                outcomes.append(fut.result())
            except ProviderError:
                pool.shutdown(wait=True, cancel_futures=True)  # nothing more is sent to a failed endpoint
                progress.close()
                raise
            progress.step(sc.display_name, usages)
    progress.close()
    if staged:
        outcomes = _batch_stages(outcomes, graded, judge, registry, specs, recompact)
    outcomes += [Outcome(name=path.stem, source=str(path), kind="scenario", error=message,
                         graders=[s.name for s in specs]) for path, message in broken]
    _print_outcomes(outcomes, args.verbose)
    from .facts_table import print_survival

    print_survival(outcomes)  # planted facts (issue 19): share held per type and round
    usage = merge_usage(usages + [llm.usage.as_dict() for llm in (getattr(judge, "llm", None), regen) if llm])
    print()
    for line in usage_lines(usage, options.backend):
        print(line)
    if judge is not None:
        print(f"judge: {judge.label}")
    from .prompt_coverage import coverage_note, format_coverage

    note = (coverage_note(prompts.render_compact())  # other strategies write their own prompts
            if getattr(strategy, "name", "claude_code") == "claude_code" else None)
    if note is not None:
        print()
        print("\n".join(format_coverage(note)))
    if args.json_out:
        model = next((o.run.requests[0]["model"] for o in outcomes if o.run and o.run.requests), options.model)
        doc = results_document(outcomes, usage=usage, backend=options.backend, model=model,
                               prompt={"path": str(prompts.compact_path), "fingerprint": prompts.fingerprint,
                                       "text": prompts.render_compact()},
                               judge=judge.label if judge else None,
                               strategy=strategy.name if strategy is not None else None)
        if note is not None:
            doc["prompt_coverage"] = note
        print(f"results written to {write_results(args.json_out, doc)}")
    for _, message in broken:
        print(f"ctxeval: error: {message}", file=sys.stderr)
    return EXIT_USAGE if broken else _exit_code(outcomes, strict=args.strict)


def _batch_stages(outcomes: list[Outcome], graded: list[tuple[int, Outcome, Any, Any]], judge: Any,
                  registry: GraderRegistry, specs: list[Any], recompact: Any, max_stages: int = 4) -> list[Outcome]:
    """Grade again after each Message Batch until no judge request is left over: stage 1 sends
    every first judgement of the run in one batch, stage 2 what depended on those (a retry after
    an unusable reply). The verdicts of the last pass are the run's."""
    regraded = {id(o): o for o in outcomes}
    for _ in range(max_stages):
        if not judge.flush():
            break
        for _, outcome, run, own in graded:
            regraded[id(outcome)] = evaluate_run(run, registry, specs, judge=own or judge, recompact=recompact)
    judge.collecting = False
    if judge.flush():  # still set aside after the last stage: sent, and graded once more
        for _, outcome, run, own in graded:
            regraded[id(outcome)] = evaluate_run(run, registry, specs, judge=own or judge, recompact=recompact)
    return [regraded[id(o)] for o in outcomes]


def _load_all(files: list[Path]) -> tuple[list[Any], list[tuple[Path, str]]]:
    """The scenarios that load, and ``(path, message)`` for each that does not: a bad file in a
    folder is reported (exit 2) and the others still run and are written. One file that does not
    load is the usual one-line error."""
    scenarios, broken = [], []
    for f in files:
        try:
            scenarios.append(load_scenario(f))
        except CtxEvalError as exc:
            if len(files) == 1:
                raise
            broken.append((f, str(exc)))
    if not scenarios:
        raise UsageError("; ".join(message for _, message in broken))
    return scenarios, broken


def load_expectations(path: str | Path) -> Expectations:
    """An ``expect:`` mapping from a YAML file (bare, or under a top-level ``expect:`` key)."""
    p = Path(path)
    from .yaml_safe import BadYAML, load_yaml

    try:
        data = load_yaml(p.read_text(encoding="utf-8"))[0]
    except OSError as exc:
        raise UsageError(f"{p}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise UsageError(f"{p}: not UTF-8") from None
    except BadYAML as exc:
        raise UsageError(f"{p}{':' + str(exc.line) if exc.line else ''}: {exc.message}") from None
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
        msg = "unknown key (allowed: intent, files, errors, pending, superseded, constraints, failed_approaches, " \
              "probes)" \
            if err["type"] == "extra_forbidden" else err["msg"]
        raise UsageError(f"{p}: {field}: {msg}") from None


def _cmd_grade(args: argparse.Namespace) -> int:
    if is_folder_mode(args.transcript):
        return run_grade_folder(args)
    args.transcript = args.transcript[0]
    options = RunOptions.from_namespace(args)
    options.check_key()
    if args.json_out:
        _check_writable(Path(args.json_out))
    registry, specs = _registry(args)
    judge = options.make_judge() if any(s.kind == "llm" for s in specs) else None
    expect = load_expectations(args.expect) if args.expect else None
    summary = None
    if args.summary:
        summary = _read_summary(Path(args.summary))
    transcript = read_transcript(args.transcript, strict=args.strict)
    if summary is None and not transcript.compactions:
        raise UsageError(f"{args.transcript}: no compaction in this transcript (no compact_boundary record); "
                         "pass --summary FILE to grade a summary of it")
    outcome = evaluate_transcript(transcript, registry, specs, expect=expect, summary_text=summary, judge=judge)
    _print_outcomes([outcome], args.verbose)
    usage = merge_usage([judge.llm.usage.as_dict()] if judge else [])
    if judge is not None:
        print()
        for line in usage_lines(usage, options.backend):
            print(line)
        print(f"judge: {judge.label}")
    if args.json_out:
        doc = results_document([outcome], usage=usage, backend=options.backend, model=None,
                               judge=judge.label if judge else None)
        print(f"results written to {write_results(args.json_out, doc)}")
    return _exit_code([outcome], strict=args.strict)


def _read_summary(p: Path) -> str:
    """The ``--summary`` file: a regular file (or a pipe/FIFO that ends) of at most
    :data:`~pytest_ctxeval.limits.MAX_SUMMARY_BYTES`; a FIFO nobody writes to is refused rather than
    waited on forever (opened non-blocking, read only once a writer is there)."""
    import select
    import stat as stat_mod

    from . import limits

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
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"not UTF-8 at byte {exc.start}") from None


def _cmd_import(args: argparse.Namespace) -> int:
    from .importer import import_transcript, write_scenario

    _check_writable(Path(args.output))
    result = import_transcript(args.transcript, mode=args.mode or "auto", thinking=args.thinking == "keep",
                               redact=args.redact, strict=args.strict, subagents=args.subagents,
                               name=args.name or Path(args.output).stem)
    path, size = write_scenario(result, args.output, force=args.force)
    print(f"imported {args.transcript} -> {path} ({size:,} bytes)")
    for line in result.summary_lines():
        print(line)
    return EXIT_OK


def _cmd_compare_real(args: argparse.Namespace) -> int:
    from .compare import comparison_html, compare_real, format_comparison

    options = RunOptions.from_namespace(args, graders_dirs=tuple(Path(d) for d in (args.graders_dir or [])))
    options.check_key()
    for out in (args.json_out, args.html_out):
        if out:
            _check_writable(Path(out))
    registry, specs = _registry(args)
    expect = load_expectations(args.expect) if args.expect else None
    llm = options.make_llm()
    judge = options.make_judge() if any(s.kind == "llm" for s in specs) else None
    comparison = compare_real(args.transcript, llm=llm, registry=registry, specs=specs, prompts=options.prompts(),
                              context_window=options.context_window, expect=expect, calls=args.acompact,
                              strict=args.strict, judge=judge, redact_output=args.redact)
    usage = merge_usage([llm.usage.as_dict()] + ([judge.llm.usage.as_dict()] if judge else []))
    comparison.usage = usage
    for line in format_comparison(comparison, verbose=args.verbose):
        print(line)
    print()
    for line in usage_lines(usage, options.backend):
        print(line)
    if judge is not None:
        print(f"judge: {judge.label}")
    if args.json_out:
        print(f"comparison written to {write_results(args.json_out, comparison.as_dict())}")
    if args.html_out:
        from .outputs import write_text_safely
        from .redact import scrub_output

        out = write_text_safely(args.html_out, scrub_output(comparison_html(comparison)), what="the HTML report")
        print(f"HTML written to {out}")
    return EXIT_FAIL if comparison.failed else EXIT_OK


def _add_compare_command(sub: Any) -> None:
    """``ctxeval compare``: the scenarios under several compaction strategies, one table."""
    from .compaction import DEFAULT_COMPARE

    cmp = sub.add_parser(
        "compare", help="run the scenarios under several compaction strategies and compare them",
        description="Run every scenario under each compaction strategy (Claude Code's reference engine and the "
                    "peers modelled from their source: codex, gemini_cli, opencode, observation_masking; "
                    "anthropic_server on the real API; or your own as package.module:Name) and grade every "
                    "compaction with the same graders. Prints per strategy the pass rate of each grader, probe "
                    "scores by kind, tokens after compaction, compactions, model calls and cost, and per scenario "
                    "which strategy failed which grader and why. Offline the summaries come from the reference "
                    "model, so it measures structure (what is kept, pairing, budgets); with --backend anthropic it "
                    "measures summary quality too. Exit 0 when every scenario ran under every strategy (the "
                    "verdicts are the comparison, not errors), 1 when one could not run, 2 on bad input.")
    cmp.add_argument("paths", nargs="*", metavar="PATH",
                     help="scenario files or folders (default: ./scenarios, else the built-in library)")
    cmp.add_argument("--strategies", dest="strategies", default=",".join(DEFAULT_COMPARE), metavar="a,b,...",
                     help="the strategies to compare, comma-separated, options in parentheses "
                          f"(default: {','.join(DEFAULT_COMPARE)})")
    cmp.add_argument("--json", dest="json_out", metavar="OUT", help="write the comparison (table and every "
                     "strategy's results) as JSON here")
    cmp.add_argument("--html", dest="html_out", metavar="OUT", help="write an HTML report here: the strategies "
                     "section, then the first strategy's scenarios in full")
    add_run_options(cmp.add_argument, "--")
    for action in cmp._actions:  # --strategy picks the one strategy of a run; compare takes --strategies
        if "--strategy" in action.option_strings:
            action.help = argparse.SUPPRESS
    _grader_args(cmp)
    cmp.add_argument("--session-dir", metavar="DIR",
                     help="where transcripts and persisted tool results go, one folder per strategy (default: "
                          "temporary folders)")


def _cmd_compare(args: argparse.Namespace) -> int:
    from .compaction import split_specs
    from .compaction.compare import comparison_document, format_strategy_table, run_strategies

    if args.ctxeval_strategy:
        raise UsageError("ctxeval compare: --strategy picks one strategy for run; compare takes --strategies a,b,...")
    options = RunOptions.from_namespace(args, graders_dirs=tuple(Path(d) for d in (args.graders_dir or [])))
    options.check_key()
    specs = split_specs(args.strategies or "")
    if not specs:
        raise UsageError("--strategies: name at least one strategy, e.g. --strategies claude_code,codex")
    for spec in specs:
        options.make_strategy(spec)  # every spec checked before any run
    registry, graders = _registry(args)
    paths = args.paths or [Path("scenarios") if Path("scenarios").is_dir() else builtin_scenarios_dir()]
    files = find_scenarios(paths)
    if not files:
        raise UsageError(f"no scenario files (*.yaml) under {', '.join(map(str, paths))}")
    scenarios = [load_scenario(f) for f in files]
    check_unique_names(scenarios)
    for out in (args.json_out, args.html_out):
        if out:
            _check_writable(Path(out))
    progress = _Progress(len(scenarios) * len(specs), [])
    results = run_strategies(scenarios, specs, options=options, registry=registry, graders=graders,
                             session_root=Path(args.session_dir) if args.session_dir else None,
                             on_done=lambda strategy, name: progress.step(f"{strategy}: {name}", []))
    progress.close()
    from .llm import DEFAULT_MODEL

    price = DEFAULT_MODEL if options.backend == "offline" else None
    doc = comparison_document(results, backend=options.backend, model=options.model, price_model=price)
    print(f"ctxeval compare: {len(specs)} strategies x {len(scenarios)} scenarios ({options.backend})")
    for line in format_strategy_table(doc["table"]):
        print(line)
    print()
    for line in usage_lines(doc["usage"], options.backend):
        print(line)
    if args.json_out:
        print(f"comparison written to {write_results(args.json_out, doc)}")
    if args.html_out:
        from .report import write_report

        page = dict(results[0].doc)
        page["strategies"] = doc["table"]
        print(f"HTML written to {write_report(args.html_out, page)}")
    errors = [(r.name, o.name, o.error) for r in results for o in r.outcomes if o.error]
    for name, scenario, error in errors:
        print(f"ctxeval compare: {scenario} could not run under {name}: {error}", file=sys.stderr)
    return EXIT_FAIL if errors else EXIT_OK


def _check_writable(path: Path) -> None:
    """Refuse an output path that cannot be written (a folder, a socket, an unwritable folder),
    before any work (:func:`~pytest_ctxeval.outputs.check_output_path`)."""
    from .outputs import check_output_path

    check_output_path(path)


class _ClosedPipeSafe:
    """stdout that stops printing, quietly, once its reader has gone (``ctxeval grade … | head``):
    the command still writes its files and returns its own exit code."""

    def __init__(self, stream: Any):
        self._stream, self.closed_pipe = stream, False

    def write(self, text: str) -> int:
        if not self.closed_pipe:
            try:
                self._stream.write(safe_text(text))  # no terminal escapes, no secrets
                return len(text)
            except BrokenPipeError:
                self._gone()
        return len(text)

    def write_raw(self, text: str) -> int:
        """Write ``text`` as it is: only for what ctxeval itself composes (no transcript text)."""
        if not self.closed_pipe:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._gone()
        return len(text)

    def flush(self) -> None:
        if not self.closed_pipe:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._gone()

    def _gone(self) -> None:
        self.closed_pipe = True
        try:  # what is still buffered must not raise again when Python exits
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, self._stream.fileno())
            finally:
                os.close(null)
        except (OSError, ValueError):
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    stdout, sys.stdout = sys.stdout, _ClosedPipeSafe(sys.stdout)
    stderr, sys.stderr = sys.stderr, _ClosedPipeSafe(sys.stderr)
    try:
        return _main(args)
    finally:
        sys.stdout.flush()  # through the wrapper: what is left must not raise at exit
        sys.stdout, sys.stderr = stdout, stderr


def _main(args: Any) -> int:
    try:
        commands = {"run": _cmd_run, "grade": _cmd_grade, "import": _cmd_import, "compare-real": _cmd_compare_real,
                    "compare": _cmd_compare,
                    "lint": _cmd_lint, "diff": _cmd_diff, "report": _cmd_report}
        from .cli_validate import cmd_graders, cmd_validate

        commands.update({"validate": cmd_validate, "graders": cmd_graders})
        if args.command == "prompt":
            from .cli_prompt import run_prompt

            return run_prompt(args)
        if args.command == "plan":
            from .cli_plan import run_plan

            return run_plan(args)
        if args.command == "facts":
            from .cli_facts import run_facts

            return run_facts(args)
        if args.command == "grade-output":
            from .cli_grade_output import run_grade_output

            return run_grade_output(args)
        return commands[args.command](args)
    except CtxEvalError as exc:
        print(f"ctxeval: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("ctxeval: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
