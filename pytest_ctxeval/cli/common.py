"""What every ``ctxeval`` verb shares: exit codes, the argument parser class, grader options, the
outcome table, the exit status, the progress line, output checks and the closed-pipe guard.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

from pydantic import ValidationError

from ..errors import UsageError
from ..evaluation import Outcome, merge_usage
from ..grading.registry import GraderRegistry, load_graders
from ..scenario.schema import Expectations
from ..reporting.table import ScenarioRow, format_table
from ..core.terminal import safe_text

__all__ = ['EXIT_OK', 'EXIT_FAIL', 'EXIT_USAGE', 'Parser', 'grader_names', 'grader_args', 'registry_of', 'print_outcomes', 'exit_code', 'Progress', 'write_raw', 'check_writable', 'ClosedPipeSafe', 'load_expectations', 'default_scenarios']


EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class Parser(argparse.ArgumentParser):
    """argparse's parser with a one-line error (usage, then the message; exit 2)."""

    def error(self, message: str) -> NoReturn:  # argparse's default exits 2 too; keep one line
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def grader_names(value: str) -> list[str]:
    """``--graders a,b``: the names, or an argparse error when there is none."""
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected grader names separated by commas")
    if len(names) == 1 and ("/" in value or os.sep in value) and Path(value).is_dir():
        raise argparse.ArgumentTypeError(f"{value} is a folder: --graders takes grader names (a,b); load a folder "
                                         "of your own graders with --graders-dir")
    return names


def grader_args(p: argparse.ArgumentParser) -> None:
    """``--graders`` and ``--graders-dir``, for every verb that grades."""
    p.add_argument("--graders", type=grader_names, metavar="a,b",
                   help="run only these graders (default: all); `ctxeval graders` lists them")
    p.add_argument("--graders-dir", action="append", default=None, metavar="DIR",
                   help="a folder of your own graders (repeatable); the built-in graders always load")


def registry_of(args: argparse.Namespace) -> tuple[GraderRegistry, list[Any]]:
    """The graders (built-in and ``--graders-dir``) and the specs ``--graders`` selects."""
    registry = load_graders([Path(d) for d in (args.graders_dir or [])])
    for d in args.graders_dir or []:
        if not any(not f.name.startswith("_") for f in Path(d).glob("*.py")):
            print(f"ctxeval: note: --graders-dir {d} holds no grader module (a *.py file with @grader functions); "
                  "only the built-in graders are loaded from it", file=sys.stderr)
    return registry, registry.select(args.graders)


def print_outcomes(outcomes: list[Outcome], verbose: bool) -> None:
    """The scenario table, then each failure (every verdict with ``verbose``) with its reasons."""
    rows = []
    for o in outcomes:
        row = ScenarioRow(name=o.name, compactions=len(o.cases),
                          tokens=[(c.pre_tokens, c.post_tokens) for c in o.cases], error=o.error)
        if o.run is not None:
            for e in o.run.events:
                row.tiers[e.tier] = row.tiers.get(e.tier, 0) + 1
        else:  # a transcript: what the file shows (pytest_ctxeval.transcript.tier_marks)
            row.tiers = dict(o.observed_tiers)
        row.counts = o.counts
        rows.append(row)
    first = "transcript" if outcomes and all(o.kind == "transcript" for o in outcomes) else "scenario"
    for line in format_table(rows, first=first):
        print(line)
    verdicts_failed = sum(1 for o in outcomes for verdicts in o.verdicts for v in verdicts if v.status == "fail"
                          and v.grader not in o.known_failures)
    graders_failed = sum(o.counts["fail"] for o in outcomes)
    if verdicts_failed > graders_failed:  # a grader failed on several compactions: say what the table counts
        print(f"(passed/failed/other count graders: one that fails on any compaction counts once; "
              f"{verdicts_failed} failed verdict{'s' if verdicts_failed != 1 else ''} over all compactions "
              "are listed below)")
    if any(o.kind == "transcript" for o in outcomes):
        from ..transcript.tier_marks import NOT_IN_TRANSCRIPT

        print(f"(tiers of a transcript: what the file shows, its compaction boundaries by trigger and the tool "
              f"results a tier replaced; {NOT_IN_TRANSCRIPT}: docs/transcript-tiers.md)")
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
        # -v: a grader n/a on every compaction for one reason is said once, after them (a transcript's
        # scenario-only graders: facts, stale values, the window), not once per compaction
        idle: dict[str, str] = {}
        if verbose and o.cases:
            for name in o.graders:
                mine = [v for vs in o.verdicts for v in vs if v.grader == name]
                if mine and all(v.status == "n/a" for v in mine) and len({tuple(v.reasons) for v in mine}) == 1:
                    idle[name] = "; ".join(mine[0].reasons)
        for case, verdicts in zip(o.cases, o.verdicts):
            shown = [v for v in verdicts if (verbose and v.grader not in idle) or v.status in ("fail", "ungraded", "error")
                     or (v.grader in o.known_failures and v.status == "pass")]
            if not shown:
                continue
            print(f"\n{o.name} — {case.label}: {case.pre_tokens:,} → {case.post_tokens:,} tokens")
            for v in shown:
                label = v.status.upper()
                if v.grader in o.known_failures:
                    label = "XFAIL" if v.status == "fail" else ("XPASS" if v.status == "pass" else label)
                score = f" ({v.score:.2f})" if v.status in ("pass", "fail") else ""  # an n/a has no score to show
                print(f"  {label:9} {v.grader}{score}"
                      + (f" [known failure: {o.known_failures[v.grader]}]" if v.grader in o.known_failures else ""))
                for r in v.reasons:
                    print(f"            {r}")
        if idle:
            where = "every compaction" if len(o.cases) > 1 else "its compaction"
            print(f"\n{o.name}: n/a on {where}, for one reason each:")
            for name, why in idle.items():
                print(f"  N/A       {name}: {why}")


def exit_code(outcomes: list[Outcome], strict: bool = False) -> int:
    """1 when a verdict failed, a grader crashed or a scenario could not run (with ``strict``: or a
    verdict is ungraded), else 0. Prints how many verdicts were ungraded or crashed."""
    ungraded = sum(o.counts["ungraded"] for o in outcomes)
    not_run = sum(1 for o in outcomes if o.error is not None and o.skipped is None)
    errors = sum(o.counts["error"] for o in outcomes) - not_run
    if not_run:
        print(f"ctxeval: {not_run} scenario{'s' if not_run > 1 else ''} could not run (one error each, see ERROR "
              "above; no grader graded them); the run fails")
    if errors:
        print(f"ctxeval: {errors} grader error{'s' if errors > 1 else ''} (a grader raised: see ERROR above); "
              "the run fails")
    if ungraded:
        print(f"ctxeval: {ungraded} ungraded verdict{'s' if ungraded > 1 else ''} (a judge could not decide)"
              + ("; --strict makes them failures" if not strict else "; failing under --strict"))
    bad = any(o.failed_strict() if strict else o.failed for o in outcomes)
    return EXIT_FAIL if bad else EXIT_OK


class Progress:
    """A live line on a terminal ("[3/9] auth_refactor  41 calls  230,114 tokens  $0.84"); silent
    when the output is not a terminal."""

    def __init__(self, total: int):
        self.total, self.done = total, 0
        self.live = sys.stdout.isatty()

    def step(self, name: str, usages: list[dict[str, Any]]) -> None:
        self.done += 1
        if not self.live:
            return
        usage = merge_usage(usages)
        line = (f"[{self.done}/{self.total}] {name}  {usage['api_calls']} calls  "
                f"{usage['input_tokens'] + usage['output_tokens']:,} tokens  ${usage['usd']:.4f}")
        write_raw("\r" + safe_text(line)[:120].ljust(120))  # the name is escaped, the redraw is ours

    def close(self) -> None:
        if self.live and self.done:
            write_raw("\r" + " " * 120 + "\r")


def write_raw(text: str) -> None:
    """Write our own control characters (the progress line's carriage returns) past the guard."""
    write = getattr(sys.stdout, "write_raw", sys.stdout.write)
    write(text)
    sys.stdout.flush()


def check_writable(path: Path) -> None:
    """Refuse an output path that cannot be written (a folder, a socket, an unwritable folder),
    before any work (:func:`~pytest_ctxeval.core.outputs.check_output_path`)."""
    from ..core.outputs import check_output_path

    check_output_path(path)


class ClosedPipeSafe:
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


def load_expectations(path: str | Path) -> Expectations:
    """An ``expect:`` mapping from a YAML file (bare, or under a top-level ``expect:`` key); an
    error names the file, the line and the field (with a did-you-mean for a misspelt key)."""
    p = Path(path)
    from ..core.yaml_safe import BadYAML, load_yaml
    from ..scenario.schema import node_lines, validation_messages

    from ..core.userfiles import read_user_text

    try:
        data, node = load_yaml(read_user_text(p, "expectations file", "pass the YAML file (expect.yaml) in it"))
    except BadYAML as exc:
        raise UsageError(f"{p}{':' + str(exc.line) if exc.line else ''}: {exc.message}") from None
    if data is None:
        data = {}
    prefix: tuple[Any, ...] = ()
    if isinstance(data, dict) and "expect" in data and isinstance(data["expect"], dict):
        data, prefix = data["expect"], ("expect",)
    if not isinstance(data, dict):
        raise UsageError(f"{p}: expected a mapping with keys such as intent, files, errors, pending, superseded, probes")
    try:
        return Expectations.model_validate(data)
    except ValidationError as exc:  # every error, one a line: there is no other command that lists them
        messages = validation_messages(p, data, node_lines(node), exc, prefix=prefix)
        allowed = "allowed: " + ", ".join(Expectations.model_fields)
        raise UsageError("\n  ".join(m.replace("see the scenario schema in docs/scenarios.md", allowed)
                                      for m in messages)) from None


def default_scenarios(paths: list[Any]) -> list[Any]:
    """``paths`` as given, else ``./scenarios``, else the built-in library: said on stderr, so a
    job started in the wrong folder does not pass on the library without a word."""
    if paths:
        return paths
    if Path("scenarios").is_dir():
        return [Path("scenarios")]
    from ..options import builtin_scenarios_dir
    from ..scenario.schema import find_scenarios

    library = builtin_scenarios_dir()
    print(f"ctxeval: no ./scenarios folder here: using the built-in library ({len(find_scenarios([library]))} "
          f"scenarios in {library}); name your scenario files or folders to run your own", file=sys.stderr)
    return [library]
