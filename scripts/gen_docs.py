"""Generate the parts of the docs that must not drift from the code.

* ``docs/cli.md``: ``ctxeval --help`` and every verb's ``--help``, from the argument parsers.
* the grader registry table in ``docs/graders.md`` (between the ``generated: grader-table`` markers),
  from :func:`pytest_ctxeval.grading.registry.load_graders`.

``python scripts/gen_docs.py`` rewrites both; ``python scripts/gen_docs.py --check`` exits 1 naming
the file that is out of date (``tests/test_docs.py`` runs the same check in CI).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CLI_PAGE = DOCS / "cli.md"
GRADERS_PAGE = DOCS / "graders.md"
BEGIN = "<!-- generated: grader-table (python scripts/gen_docs.py; do not edit by hand) -->"
END = "<!-- end generated: grader-table -->"
WIDTH = "100"   # argparse wraps help text to $COLUMNS: fixed, so the page is the same on every machine


def _help(parser: argparse.ArgumentParser) -> str:
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        return parser.format_help().rstrip() + "\n"
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def cli_page() -> str:
    """The CLI reference page: the top-level help, then each verb's, in the parser's order."""
    from pytest_ctxeval.cli import build_parser

    parser = build_parser()
    out = ["# CLI reference", "",
           "Generated from the argument parsers by `python scripts/gen_docs.py`; a test fails when this",
           "page and `ctxeval --help` disagree. Exit codes: **0** every applicable verdict passed, **1** a",
           "verdict failed, **2** usage or input error.", "",
           "## `ctxeval`", "", "```text", _help(parser).rstrip(), "```", ""]
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, verb in sub.choices.items():
        out += [f"## `ctxeval {name}`", "", "```text", _help(verb).rstrip(), "```", ""]
    return "\n".join(out)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").strip()


def grader_table() -> str:
    """One row per grader of the built-in registry: name, kind, what it applies to, what it reads."""
    from pytest_ctxeval.grading import load_graders

    registry = load_graders()
    rows = ["| grader | kind | compactions | compactors | reads `expect:` | defined in | what it checks |",
            "|---|---|---|---|---|---|---|"]
    for name in registry.names:
        spec = registry.get(name)
        origin = Path(spec.origin.rsplit(":", 1)[0]).name
        rows.append("| " + " | ".join([
            f"`{name}`", spec.kind,
            ", ".join(spec.applies_to) if spec.applies_to else "all",
            ", ".join(spec.compactors) if spec.compactors else "all",
            ", ".join(f"`{k}`" for k in spec.expect_keys) or "",
            f"`graders/{origin}`", _cell(spec.description)]) + " |")
    return "\n".join([BEGIN, "", *rows, "", END])


def graders_page(current: str) -> str:
    """``current`` with the text between the markers replaced by :func:`grader_table`."""
    if BEGIN not in current or END not in current:
        raise SystemExit(f"{GRADERS_PAGE}: the markers {BEGIN!r} and {END!r} are missing; add them where "
                         "the table goes")
    head, rest = current.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    return head + grader_table() + tail


def expected() -> dict[Path, str]:
    """Each generated file and the text it should hold."""
    return {CLI_PAGE: cli_page(), GRADERS_PAGE: graders_page(GRADERS_PAGE.read_text(encoding="utf-8"))}


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for path, text in expected().items():
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        if check:
            stale.append(path)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    for path in stale:
        print(f"{path.relative_to(ROOT)} is out of date: run python scripts/gen_docs.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
