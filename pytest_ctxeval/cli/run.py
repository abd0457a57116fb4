"""``ctxeval run``: replay scenario files through the engine and grade every compaction
(through :class:`pytest_ctxeval.evaluate.Evaluator`, as ``pytest --ctxeval`` does).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import CtxEvalError, ProviderError, UsageError
from ..evaluation import Outcome, merge_usage, usage_lines
from ..options import RunOptions, add_run_options, add_strict_prompt_option
from ..results import results_document, write_results
from ..runner import check_unique_names, fresh_folder
from ..scenario.schema import find_scenarios, load_scenario
from .common import EXIT_USAGE, Progress, default_scenarios, check_writable, exit_code, grader_args, print_outcomes, registry_of

__all__ = ['add_run_command', 'cmd_run']


def add_run_command(sub: Any) -> None:
    """The ``run`` verb's parser."""
    run = sub.add_parser("run", help="replay scenarios through the engine and grade each compaction",
                         description="Replay scenario files through the reference engine and grade every "
                                     "compaction. Exit 0 if all verdicts pass, 1 if any fails, 2 on bad input.")
    run.add_argument("paths", nargs="*", metavar="PATH",
                     help="scenario files or folders (default: ./scenarios, else the built-in library)")
    run.add_argument("--json", dest="json_out", metavar="OUT", help="write the versioned results JSON here")
    add_run_options(run.add_argument, "--")
    add_strict_prompt_option(run.add_argument, "--")
    grader_args(run)
    run.add_argument("--session-dir", metavar="DIR",
                     help="where transcripts and persisted tool results go (default: a temporary folder)")
    run.add_argument("-v", "--verbose", action="store_true", help="print every verdict, not only failures")
    run.add_argument("--strict", action="store_true",
                     help="an ungraded verdict (a judge that could not decide) fails the run (exit 1)")


def cmd_run(args: argparse.Namespace) -> int:
    options = RunOptions.from_namespace(args, graders_dirs=tuple(Path(d) for d in (args.graders_dir or [])))
    options.check_key()
    registry, specs = registry_of(args)
    prompts = options.prompts()
    paths = default_scenarios(args.paths)
    files = find_scenarios(paths)
    if not files:
        raise UsageError(f"no scenario files (*.yaml, *.yml) under {', '.join(map(str, paths))}")
    scenarios, broken = _load_all(files)  # all input errors before any run
    check_unique_names(scenarios)
    if args.json_out:
        check_writable(Path(args.json_out))  # before the run, which may be a paid one
    if args.session_dir:
        check_writable(Path(args.session_dir) / "probe")
    from ..evaluate import Evaluator

    evaluator = Evaluator(options, registry, specs, prompts=prompts, staged=True)
    compactor = evaluator.compactor
    progress = Progress(len(scenarios))
    session_root = Path(args.session_dir) if args.session_dir else None

    def folder(name: str) -> Path:
        assert session_root is not None
        return fresh_folder(session_root, name)

    # Scenarios are independent: run them on a bounded pool (results in file order), or one after
    # another offline without a simulated latency (nothing to wait on: RunOptions.side_by_side).
    from concurrent.futures import ThreadPoolExecutor

    evaluations = []
    where = folder if session_root else None
    threads = options.side_by_side(len(scenarios))
    if threads == 1:
        for sc in scenarios:
            try:
                evaluations.append(evaluator.evaluate(sc, session_dir=where))
            except ProviderError:
                progress.close()
                raise
            progress.step(sc.display_name, [e.usage for e in evaluations])
    else:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            futures = [pool.submit(evaluator.evaluate, sc, session_dir=where) for sc in scenarios]
            for sc, fut in zip(scenarios, futures):
                try:
                    evaluations.append(fut.result())
                except ProviderError:
                    pool.shutdown(wait=True, cancel_futures=True)  # nothing more is sent to a failed endpoint
                    progress.close()
                    raise
                progress.step(sc.display_name, [e.usage for e in evaluations])
    progress.close()
    evaluations = evaluator.settle(evaluations)  # --batch: one Message Batch per stage of the run
    outcomes = [e.outcome for e in evaluations]
    outcomes += [Outcome(name=path.stem, source=str(path), kind="scenario", error=message,
                         graders=[s.name for s in specs]) for path, message in broken]
    print_outcomes(outcomes, args.verbose)
    from ..reporting.facts_table import print_survival

    print_survival(outcomes)  # planted facts (issue 19): share held per type and round
    usage = merge_usage([e.usage for e in evaluations] + [evaluator.shared_usage()])
    print()
    for line in usage_lines(usage, options.backend):
        print(line)
    if evaluator.judge_label is not None:
        print(f"judge: {evaluator.judge_label}")
    from ..reporting.prompt_coverage import coverage_note, format_coverage

    note = (coverage_note(prompts.render_compact(), prompt=prompts.record(str(prompts.compact_path)))
            # other compactors write their own prompts
            if getattr(compactor, "name", "claude_code") == "claude_code" else None)
    if note is not None:
        print()
        print("\n".join(format_coverage(note)))
    if args.json_out:
        model = next((o.run.requests[0]["model"] for o in outcomes if o.run and o.run.requests), options.model)
        doc = results_document(outcomes, usage=usage, backend=options.backend, model=model,
                               prompt=prompts.record(str(prompts.compact_path)),
                               judge=evaluator.judge_label,
                               compactor=compactor.name if compactor is not None else None)
        if note is not None:
            doc["prompt_coverage"] = note
        print(f"results written to {write_results(args.json_out, doc)}")
    for _, message in broken:
        print(f"ctxeval: error: {message}", file=sys.stderr)
    from ..reporting.prompt_coverage import strict_failure

    strict_prompt = strict_failure(note, options.backend) if args.ctxeval_strict_prompt else []
    for line in strict_prompt:
        print(f"ctxeval: {line}" if not line.startswith(" ") else line, file=sys.stderr)
    code = exit_code(outcomes, strict=args.strict)
    return EXIT_USAGE if broken else max(code, 1 if strict_prompt else 0)


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
