"""Where a tool's output places an error, and a summary that tells it against another file.

A linter, compiler or formatter prints where each problem is: ``src/a/formatters.py:336:5: F841 …``
(ruff, eslint, tsc, go vet, gcc), ``--> crates/x/src/ingest.rs:187:20`` under a rustc or clippy
``error``/``warning`` line, `` at frontend/src/ContextTab.tsx:3:10 lint/…`` (Biome), ``Diff in
…/parser.rs:12:`` (cargo fmt). When section 4 tells that problem "in ``commands.py``", the next
context window opens the wrong file.

:func:`located_lines` reads those places; :func:`misplaced_errors` reads the items of a summary's
section: an item that names a problem of the output (its code such as ``F841`` or ``E0425``, or a
name in backticks the output prints on the problem's line) *in* a file (``in commands.py``, ``at
`commands.py```, ``commands.py:12``) that the output never names, while every line of the output
holding that problem places it in one other file the item does not name, is an error told against
the wrong file. Nothing is judged where the output names no place, places the problem in several
files, or where the item also names the file the output gives (a cause in one file, the report in
another: "after changes in ``ContextTab.tsx``, Biome flagged ``AgentLogos.tsx``").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Located", "Misplaced", "located_lines", "misplaced_errors"]

_EXT = r"[A-Za-z][A-Za-z0-9]{0,5}"
_PATH = rf"(?:[\w.@~+-]+[/\\])*[\w.@+-]+\.{_EXT}"
#: ``path:line`` at the start of a line (ruff, eslint, tsc, go, gcc), Biome's `` at path:line``,
#: cargo fmt's ``Diff in path:line:``.
_AT_START = re.compile(rf"^\s*(?:at\s+|Diff in\s+)?(?P<path>/?{_PATH})(?::\d+|\(\d+,\d+\)|\s+(?:format|lint/))")
#: git's ``CONFLICT (content): Merge conflict in path``.
_CONFLICT = re.compile(rf"^CONFLICT \([\w/ -]+\): Merge conflict in (?P<path>{_PATH})\s*$")
#: rustc/clippy's pointer line under an error or warning: ``  --> src/x.rs:12:5``.
_ARROW = re.compile(rf"^\s*-->\s*(?P<path>/?{_PATH}):\d+")
_HEAD = re.compile(r"^\s*(?:error|warning)(?:\[\w+\])?:", re.IGNORECASE)
#: Error codes: ``F841``, ``UP038``, ``E0425``, ``TS2345``; rule names such as ``noUnusedImports``,
#: ``too_many_lines``, ``no-unused-vars``.
_CODE = re.compile(r"(?<![\w-])(?:[A-Z]{1,5}\d{2,5}|[a-z]+(?:_[a-z]+){2,}|[a-z]+(?:-[a-z]+){2,}|no[A-Z]\w{4,})(?![\w-])")
_TICKED = re.compile(r"`([A-Za-z_][\w.]{3,})`|'([A-Za-z_][\w.]{3,})'")
#: A file named as the place of something in a summary item: "in `x.py`", "at x.py", "x.py:12".
_PLACE = re.compile(rf"(?:\b(?:in|at|inside|within|from)\s+(?:the\s+)?(?:file\s+)?[`*_\"']*(?P<a>{_PATH})|"
                    rf"(?P<b>{_PATH}):\d+)")


#: Where an item goes on from the error to its fix: a file named after it is where the fix went.
_FIX_PART = re.compile(r"(?:\b(?:fix(?:ed|es)?|resol(?:ved|ution)|solution|workaround|changed|added|updated|moved|"
                       r"removed|replaced|switched|rewrote|rewritten|root cause|caused by|because|after|when|while|"
                       r"since|due to)\b|→|->)", re.IGNORECASE)


def _error_part(item: str) -> str:
    """The part of an item that tells the error, before its fix or cause ("Fix: added a check in
    ``client.ts``" names where the fix went, not where the error was reported)."""
    m = _FIX_PART.search(item)
    return item[:m.start()] if m else item


@dataclass(frozen=True)
class Located:
    path: str       # as the output prints it
    line: str       # the output line that says what the problem is
    marks: tuple[str, ...]  # the codes and ticked names on that line


@dataclass(frozen=True)
class Misplaced:
    item: str       # the summary item
    told: str       # the file the item places the error in
    mark: str       # the code or name both hold
    path: str       # where the output places it
    evidence: str   # the output line


def _base(path: str) -> str:
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def _marks(line: str) -> tuple[str, ...]:
    ticked = [a or b for a, b in _TICKED.findall(line)]
    return tuple(dict.fromkeys([*_CODE.findall(line), *ticked]))


def located_lines(text: str) -> list[Located]:
    """Every problem ``text`` places in a file, with the codes and names its line holds."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        if (m := _AT_START.match(line)) or (m := _CONFLICT.match(line)):
            out.append(Located(m.group("path"), line.strip(), _marks(line)))
        elif m := _ARROW.match(line):
            head = next((lines[j] for j in range(i - 1, max(i - 4, -1), -1) if _HEAD.match(lines[j])), "")
            if head:
                out.append(Located(m.group("path"), head.strip(), _marks(head)))
    return out


def _names(item: str, base: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(base)}(?![\w-])", item) is not None


def misplaced_errors(items: list[str], text: str, files: set[str],
                     tells: Callable[[str], bool] | None = None, key_line: str = "") -> list[Misplaced]:
    """Items of ``items`` that tell a problem of the tool output ``text`` in a file of the session
    (``files``: the base names of the files its tools read or changed) other than the one the
    output places it in (see the module's rules). ``tells`` says whether an item tells this failing
    result at all (by its key line or identifying tokens): then, when the output places every
    problem in one file, an item that places the error elsewhere is misplaced too (``key_line`` is
    what the reason names)."""
    every = located_lines(text)
    if not every:
        return []
    located = [loc for loc in every if loc.marks]
    one = {_base(loc.path) for loc in every}
    out = []
    for item in items:
        told = [p for m in _PLACE.finditer(_error_part(item)) if (p := _base(m.group("a") or m.group("b"))) in files]
        told = [t for t in told if not _names(text, t)]   # a file the output itself names may be a place
        if not told:
            continue
        found = None
        for mark in dict.fromkeys(m for loc in located for m in loc.marks):
            if not _names(item, mark):
                continue
            where = {_base(loc.path) for loc in located if mark in loc.marks}
            if len(where) != 1:
                continue
            (path,) = where
            if _names(item, path) or path in told:
                continue
            evidence = next(loc for loc in located if mark in loc.marks)
            found = Misplaced(item, told[0], mark, evidence.path, evidence.line)
            break
        if found is None and len(one) == 1 and tells is not None and not _names(item, next(iter(one))) and tells(item):
            found = Misplaced(item, told[0], key_line or every[0].line, every[0].path, every[0].line)
        if found is not None:
            out.append(found)
    return out
