"""``ctxeval import``: turn a Claude Code session file into a scenario that replays it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .common import EXIT_OK, check_writable

__all__ = ['add_import_command', 'cmd_import']


def add_import_command(sub: Any) -> None:
    """The ``import`` verb's parser."""
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
                     help="a malformed transcript line (or a record of a type the reader does not know) is an error (exit 2) instead of being reported and skipped")
    imp.add_argument("--force", action="store_true", help="overwrite OUT.yaml if it exists")


def cmd_import(args: argparse.Namespace) -> int:
    from ..scenario.importer import import_transcript, write_scenario

    check_writable(Path(args.output))
    result = import_transcript(args.transcript, mode=args.mode or "auto", thinking=args.thinking == "keep",
                               redact=args.redact, strict=args.strict, subagents=args.subagents,
                               name=args.name or Path(args.output).stem)
    path, size = write_scenario(result, args.output, force=args.force)
    print(f"imported {args.transcript} -> {path} ({size:,} bytes)")
    for line in result.summary_lines():
        print(line)
    return EXIT_OK
