"""``ctxeval lint``: check scenario files without running them.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..grading.registry import load_graders
from ..scenario.schema import find_scenarios
from .common import EXIT_FAIL, EXIT_OK, default_scenarios

__all__ = ['add_lint_command', 'cmd_lint']


def add_lint_command(sub: Any) -> None:
    """The ``lint`` verb's parser."""
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
    from .plan import add_plan_flag

    add_plan_flag(lint)


def cmd_lint(args: argparse.Namespace) -> int:
    from ..scenario.lint import lint_paths

    registry = load_graders([Path(d) for d in (args.graders_dir or [])])
    paths = default_scenarios(args.paths)
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
        from .plan import plan_lines

        for path in find_scenarios(paths):
            print()
            print("\n".join(plan_lines(path)))
    return EXIT_OK
