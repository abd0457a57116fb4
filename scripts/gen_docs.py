"""Generate the parts of the docs that must not drift from the code.

* ``docs/cli.md``: ``ctxeval --help`` and every verb's ``--help``, from the argument parsers.
* the grader registry table in ``docs/graders.md`` (between the ``generated: grader-table`` markers),
  from :func:`pytest_ctxeval.grading.registry.load_graders`.
* the table of ``pytest --ctxeval`` options and ini keys in ``docs/running.md`` (between the
  ``generated: pytest-options`` markers), from the plugin's ``pytest_addoption``.

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
RUNNING_PAGE = DOCS / "running.md"
OPTIONS_BEGIN = "<!-- generated: pytest-options (python scripts/gen_docs.py; do not edit by hand) -->"
OPTIONS_END = "<!-- end generated: pytest-options -->"
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


def _between(page: Path, current: str, begin: str, end: str, block: str) -> str:
    """``current`` with the text between ``begin`` and ``end`` (markers included) replaced by ``block``."""
    if begin not in current or end not in current:
        raise SystemExit(f"{page}: the markers {begin!r} and {end!r} are missing; add them where the table goes")
    head, rest = current.split(begin, 1)
    return head + block + rest.split(end, 1)[1]


def graders_page(current: str) -> str:
    """``current`` with the text between the markers replaced by :func:`grader_table`."""
    return _between(GRADERS_PAGE, current, BEGIN, END, grader_table())


class _Options:
    """Stands in for pytest's parser and option group: records what the plugin registers."""

    def __init__(self) -> None:
        self.options: list[tuple[tuple[str, ...], dict]] = []
        self.ini: dict[str, tuple[str, object]] = {}

    def getgroup(self, *args: object, **kwargs: object) -> _Options:
        return self

    def addoption(self, *names: str, **attrs: object) -> None:
        self.options.append((names, attrs))

    def addini(self, name: str, help: str, type: object = None, default: object = None) -> None:
        self.ini[name] = (help, default)


def _spelled(names: tuple[str, ...], attrs: dict) -> str:
    if attrs.get("action") in ("store_true", "store_false"):
        return names[0]
    choices = attrs.get("choices")
    value = "{" + ",".join(map(str, choices)) + "}" if choices else attrs.get("metavar") or str(attrs["dest"]).upper()
    return f"{names[0]} {value}"


def _prose(text: str) -> str:
    """A help text as a table cell: ``_`` and ``*`` are letters here, not emphasis."""
    return _cell(text).replace("_", "\\_").replace("*", "\\*")


def options_table() -> str:
    """One row per ``pytest --ctxeval`` option (its ini key beside it) and per ini-only key."""
    from pytest_ctxeval import plugin

    rec = _Options()
    plugin.pytest_addoption(rec)  # type: ignore[arg-type]
    rows = ["| option | ini key | meaning |", "|---|---|---|"]
    keys_shown = set()
    for names, attrs in rec.options:
        if attrs.get("help") == argparse.SUPPRESS:  # an old spelling, kept as a hidden alias
            continue
        key = str(attrs.get("dest", ""))
        ini = key if key in rec.ini else ""
        keys_shown.add(ini)
        rows.append(f"| `{_spelled(names, attrs)}` | {f'`{ini}`' if ini else ''} | {_prose(str(attrs.get('help', '')))} |")
    for name, (help_text, _default) in rec.ini.items():
        if name not in keys_shown and not help_text.startswith("deprecated"):
            rows.append(f"| | `{name}` | {_prose(help_text)} |")
    return "\n".join([OPTIONS_BEGIN, "", *rows, "", OPTIONS_END])


def running_page(current: str) -> str:
    """``current`` with the option table between its markers replaced by :func:`options_table`."""
    return _between(RUNNING_PAGE, current, OPTIONS_BEGIN, OPTIONS_END, options_table())


def expected() -> dict[Path, str]:
    """Each generated file and the text it should hold."""
    return {CLI_PAGE: cli_page(), GRADERS_PAGE: graders_page(GRADERS_PAGE.read_text(encoding="utf-8")),
            RUNNING_PAGE: running_page(RUNNING_PAGE.read_text(encoding="utf-8"))}


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
