"""File names written in shorthand: several files of one stem or folder in one word.

Summaries name related files together: ``popup.html/css/js`` (a real 1.0.x section 3, for
``popup.html``, ``popup.css`` and ``popup.js``), ``Button.tsx/.css``, or with a shell's braces,
``popup.{html,css,js}`` and ``src/{api,cli}/main.go``. :func:`expand_file_shorthand` spells such a
word out, so the file-name checks (:func:`pytest_ctxeval.reading.extract.file_mentioned`) find each
file it stands for. Only a word of that exact form is spelled out: an extension after the slash is a
short word of letters (``conf.d/nginx`` reads as ``conf.d`` and ``conf.nginx``, which names nothing
the session changed), and a brace holds two or more plain alternatives.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["expand_file_shorthand"]

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
