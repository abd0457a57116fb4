"""File names written in shorthand: several files of one stem or folder in one word.

Summaries name related files together: ``popup.html/css/js`` (a real 1.0.x section 3, for
``popup.html``, ``popup.css`` and ``popup.js``), ``Button.tsx/.css``, or with a shell's braces,
``popup.{html,css,js}`` and ``src/{api,cli}/main.go``. :func:`expand_file_shorthand` spells such a
word out, so the file-name checks (:func:`pytest_ctxeval.reading.extract.file_mentioned`) find each
file it stands for. Only a word of that exact form is spelled out: an extension after the slash is a
short word of letters (``conf.d/nginx`` reads as ``conf.d`` and ``conf.nginx``, which names nothing
the session changed), and a brace holds two or more plain alternatives.

Two more shorthands name files the summary does not spell out, so they are matched against the
changed files instead (:func:`named_by_pattern`): a glob whose file name keeps a literal lead
(``spec/RFC-0001-*.md``, a real 2.1.251 section 3 for the RFC it amended), when it matches that one
changed file and no other; and a numbered file named by its folder and its number or a range of
numbers (``docs/adr/0006-0009 — the 4 fork ADRs``, a real 2.1.205 section 3, for
``docs/adr/0007-tenant-scoping.md``), the number written as the file name writes it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import fnmatchcase
from functools import lru_cache

__all__ = ["expand_file_shorthand", "named_by_pattern"]

_EXT = r"[A-Za-z][A-Za-z0-9]{0,4}"
#: ``[folders/]stem.ext/ext2[/ext3…]`` (each later extension with or without its dot).
_SLASHED = re.compile(rf"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]*\w)\.({_EXT})((?:/\.?{_EXT})+)(?![\w/.-])")
#: ``prefix{a,b[,c…]}suffix`` as a shell expands it (one level of braces).
_BRACED = re.compile(r"(?<![\w/.{-])([\w./-]*)\{([\w.-]+(?:,[\w.-]+)+)\}([\w./-]*)")


@lru_cache(maxsize=64)
def expand_file_shorthand(text: str) -> str:
    """``text`` followed by the files its shorthand words stand for, one per line ("" added when
    it has none).

    >>> expand_file_shorthand("- popup.html/css/js: the settings page").splitlines()[1:]
    ['popup.html', 'popup.css', 'popup.js']
    >>> expand_file_shorthand("edited src/{api,cli}/main.go").splitlines()[1:]
    ['src/api/main.go', 'src/cli/main.go']
    >>> expand_file_shorthand("src/app.py and docs/") == "src/app.py and docs/"
    True
    """
    if "/" not in text and "{" not in text:
        return text
    spelled: list[str] = []
    for m in _SLASHED.finditer(text):
        stem = m.group(1)
        exts = [m.group(2)] + [e.lstrip(".") for e in m.group(3).split("/") if e]
        spelled += [f"{stem}.{e}" for e in exts]
    if "{" in text:
        for m in _BRACED.finditer(text):
            spelled += [f"{m.group(1)}{alt}{m.group(3)}" for alt in m.group(2).split(",")]
    return text + ("\n" + "\n".join(spelled) if spelled else "")


#: A glob word: path characters with a ``*`` in its last component (``spec/RFC-0001-*.md``).
_GLOB = re.compile(r"(?<![\w/.*-])((?:[\w.-]+/)*[\w.*-]*\*[\w.*-]*)(?![\w/.*-])")
#: The literal lead a glob's file name must keep to name one file: three characters or more.
_GLOB_LEAD = re.compile(r"^[^*?]{3,}")
#: A folder then a number or a range of numbers (``docs/adr/0006-0009``, ``migrations/021–023``).
_NUMBERED = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+)(\d+)(?:\s?[-–]\s?(\d+))?(?![\w/.-]|-\w)")
#: A numbered file name: its number, then a separator (``0007-tenant-scoping.md``, ``021_add_rows.sql``).
_NUMBER_LEAD = re.compile(r"^(\d+)[-_.]")


@lru_cache(maxsize=256)
def _patterns(text: str) -> tuple[tuple[str, ...], tuple[tuple[str, str, str], ...]]:
    """The glob words and the (folder, first, last) number ranges of ``text``."""
    globs = tuple(g for g in _GLOB.findall(text) if _GLOB_LEAD.match(g.rsplit("/", 1)[-1]))
    ranges = tuple((m.group(1), m.group(2), m.group(3) or m.group(2)) for m in _NUMBERED.finditer(text))
    return globs, ranges


def _tail(path: str, k: int) -> str:
    return "/".join(path.replace("\\", "/").rstrip("/").split("/")[-k:])


def named_by_pattern(path: str, text: str, all_paths: Iterable[str] = ()) -> bool:
    """Whether a glob or a numbered range in ``text`` names ``path`` (see the module docstring).

    >>> named_by_pattern("/r/spec/RFC-0001-taxonomy.md", "- `spec/RFC-0001-*.md`: two sections added")
    True
    >>> named_by_pattern("/r/docs/adr/0007-scoping.md", "- docs/adr/0006-0009 — the 4 fork ADRs")
    True
    >>> named_by_pattern("/r/docs/adr/0010-later.md", "- docs/adr/0006-0009 — the 4 fork ADRs")
    False
    >>> named_by_pattern("/r/src/a.py", "- src/*.py", ["/r/src/a.py", "/r/src/b.py"])
    False
    """
    if "*" not in text and not any(c.isdigit() for c in text):
        return False
    globs, ranges = _patterns(text)
    if not globs and not ranges:
        return False
    norm = path.replace("\\", "/").rstrip("/")
    for glob in globs:
        k = glob.count("/") + 1
        if fnmatchcase(_tail(norm, k), glob):
            others = [p for p in all_paths if p != path and fnmatchcase(_tail(p, k), glob)]
            if not others:
                return True
    name = norm.rsplit("/", 1)[-1]
    lead = _NUMBER_LEAD.match(name)
    if lead is None:
        return False
    number = lead.group(1)
    where = norm.rsplit("/", 1)[0] if "/" in norm else ""
    for folder, first, last in ranges:
        folder = folder.rstrip("/")
        if len(first) == len(number) == len(last) and first <= number <= last and (
                where == folder or where.endswith("/" + folder)):
            return True
    return False
