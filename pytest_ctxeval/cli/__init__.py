"""The ``ctxeval`` command: the same runs and grading as ``pytest --ctxeval``, outside pytest.

    ctxeval run scenarios/ --json results.json [--context-window N] [--compact-at-end]
    ctxeval grade TRANSCRIPT.jsonl [--summary FILE] [--expect FILE.yaml] [--graders a,b] [--json OUT]
    ctxeval import TRANSCRIPT.jsonl -o scenarios/NAME.yaml [--all | --until-first-compaction] [--no-redact]
    ctxeval compare-real TRANSCRIPT.jsonl [--acompact FILE] [--backend anthropic] [--json OUT] [--html OUT]
    ctxeval lint [PATHS]                      # every problem of the scenario files, as file:line: field: message
    ctxeval diff BASELINE.json RESULTS.json [--tolerance 0.05] [--json OUT]   # exit 1 on regressions
    ctxeval report RESULTS.json -o report.html [-o report.md] [--baseline BASELINE.json]
    ctxeval compare --compactors claude_code,codex,gemini_cli,opencode,observation_masking scenarios/ [--json OUT] [--html OUT]
    ctxeval validate [PATHS] [--graders a,b] [--json OUT] [--html OUT] [--min-kill 0.95]   # graders' kill rates
    ctxeval graders                           # every grader: kind, what it checks, expect: keys, operators

One module per verb (``cli/run.py``, ``cli/grade.py``...), each with a function that adds its
parser and one that runs it; what they share is :mod:`.common`. This module only assembles the
parser and dispatches.

Exit codes: 0 every applicable verdict passed, 1 some verdict failed (or a scenario could not run),
2 usage or input error.
"""

from __future__ import annotations

import argparse
import functools
import sys
from typing import Any
from collections.abc import Callable, Sequence

from .. import __version__
from ..core.renamed import conflict_message, option_message, renamed_conflicts, renamed_used
from ..errors import CtxEvalError
from .common import EXIT_USAGE, ClosedPipeSafe, Parser, grader_args

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    """The ``ctxeval`` parser: every verb, in ``--help`` order."""
    from .compare import add_compare_command
    from .compare_real import add_compare_real_command
    from .diff import add_diff_command
    from .facts import add_facts_command
    from .grade import add_grade_command
    from .grade_output import add_grade_output_command
    from .import_ import add_import_command
    from .lint import add_lint_command
    from .plan import add_plan_command
    from .prompt import add_prompt_command
    from .report import add_report_command
    from .run import add_run_command
    from .validate import add_validate_commands

    parser = Parser(prog="ctxeval", description="Evaluate context compaction of LLM coding agents: replay "
                    "scripted sessions through the reference engine and grade every compaction summary.")
    parser.add_argument("--version", action="version", version=f"ctxeval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for add in (add_run_command, add_grade_command, add_import_command, add_compare_real_command, add_lint_command,
                add_diff_command, add_report_command, add_compare_command):
        add(sub)
    add_validate_commands(sub, grader_args)  # validate and graders
    for add in (add_prompt_command, add_plan_command, add_facts_command, add_grade_output_command):
        add(sub)
    return parser


@functools.cache
def _parser() -> argparse.ArgumentParser:
    """:func:`build_parser`, built once per process for :func:`main`: parsing leaves a parser as it
    was, and building all 14 verbs costs about 10 ms, which a process that calls :func:`main` many
    times (a test suite, a script) would pay on every call."""
    return build_parser()


def _command(name: str) -> Callable[[argparse.Namespace], int]:
    """The function that runs verb ``name`` (its module is imported only when it runs)."""
    module, function = {
        "run": ("run", "cmd_run"), "grade": ("grade", "cmd_grade"), "import": ("import_", "cmd_import"),
        "compare-real": ("compare_real", "cmd_compare_real"), "compare": ("compare", "cmd_compare"),
        "lint": ("lint", "cmd_lint"), "diff": ("diff", "cmd_diff"), "report": ("report", "cmd_report"),
        "validate": ("validate", "cmd_validate"), "graders": ("validate", "cmd_graders"),
        "prompt": ("prompt", "run_prompt"), "plan": ("plan", "run_plan"), "facts": ("facts", "run_facts"),
        "grade-output": ("grade_output", "run_grade_output"),
    }[name]
    import importlib

    return getattr(importlib.import_module(f".{module}", __name__), function)


def _verb_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the verb (and sub-verb, ``prompt show``) that ``args`` ran."""
    while True:
        verbs = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        chosen = getattr(args, verbs.dest, None) if verbs is not None and verbs.dest != argparse.SUPPRESS else None
        if verbs is None or chosen not in verbs.choices:
            return parser
        parser = verbs.choices[chosen]


def _option_hints(parser: Any, extra: Sequence[str]) -> str:
    """"; did you mean --workers for --workres?" for each refused option one slip away from one of the
    verb's own (core.near_names.near_miss), else ""."""
    from ..core.near_names import near_miss

    known = [o for o in parser._option_string_actions if o.startswith("--")]
    hints = []
    for token in extra:
        name = token.split("=", 1)[0]
        if name.startswith("--") and (near := near_miss(name, known)):
            hints.append(f"{near} for {name}")
    return f"; did you mean {', '.join(hints)}? (ctxeval {parser.prog.split()[-1]} --help lists them)" if hints else ""


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ctxeval`` with ``argv`` (default: the command line); return the exit code."""
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # refused by the verb's own parser: its usage, not the top-level one, goes with the error
        verb = _verb_parser(parser, args)
        verb.error(f"unrecognized arguments: {' '.join(extra)}{_option_hints(verb, extra)}")
    for old, new in renamed_conflicts(args):  # both spellings: refused, never the last one silently winning
        print(f"ctxeval: error: {conflict_message(old, new)}", file=sys.stderr)
        return EXIT_USAGE
    for old, new in renamed_used(args):  # an old spelling of an option: deprecated, still accepted
        print(f"ctxeval: warning: {option_message(old, new)}", file=sys.stderr)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    from .. import options  # noqa: F401 - registers the pytest spelling first; ours replaces it while we run
    from ..errors import spell_options

    spelling = spell_options(lambda option: f"--{option} (pytest: --ctxeval-{option})")
    stdout, sys.stdout = sys.stdout, ClosedPipeSafe(sys.stdout)
    stderr, sys.stderr = sys.stderr, ClosedPipeSafe(sys.stderr)
    try:
        return _main(args)
    finally:
        sys.stdout.flush()  # through the wrapper: what is left must not raise at exit
        sys.stdout, sys.stderr = stdout, stderr
        spell_options(spelling)


def _main(args: Any) -> int:
    from .project import apply_project_config

    try:
        apply_project_config(args)  # the project's ctxeval_graders / ctxeval_scenarios, as pytest --ctxeval
        return _command(args.command)(args)
    except CtxEvalError as exc:
        print(f"ctxeval: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("ctxeval: interrupted", file=sys.stderr)
        return 130
