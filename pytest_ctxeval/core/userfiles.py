"""Reading a text file the user named (a prompt, a rubric, an expectations file, a grader).

Every file a user points ctxeval at can be missing, a folder, unreadable or saved in another
encoding (Latin-1 and UTF-16 from Windows editors). :func:`read_user_text` turns each of these into
one :class:`~pytest_ctxeval.errors.UsageError` that names the file, the line and byte of a bad
encoding and how to fix it, instead of a Python traceback; :func:`not_utf8` words the message for
readers that decode the bytes themselves.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import UsageError

__all__ = ["read_user_text", "not_utf8", "check_utf8"]

_BOMS = ((b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


def not_utf8(path: str | os.PathLike[str], raw: bytes, exc: UnicodeDecodeError) -> str:
    """``PATH:LINE: not UTF-8 (REASON at byte N); save the file as UTF-8`` for bytes that failed.

    >>> try:
    ...     b"ok\\nR\\xe9sum\\xe9".decode("utf-8")
    ... except UnicodeDecodeError as e:
    ...     print(not_utf8("p.j2", b"ok\\nR\\xe9sum\\xe9", e))
    p.j2:2: not UTF-8 (invalid continuation byte at byte 4); save the file as UTF-8
    """
    line = raw[: exc.start].count(b"\n") + 1
    saved_as = next((f", it looks like {name}" for bom, name in _BOMS if raw.startswith(bom)), "")
    return f"{os.fspath(path)}:{line}: not UTF-8 ({exc.reason} at byte {exc.start}{saved_as}); save the file as UTF-8"


def read_user_text(path: str | os.PathLike[str], what: str, folder_hint: str = "") -> str:
    """The text of the file ``path`` the user gave as ``what`` (e.g. ``"compaction prompt"``).

    A missing file, a folder (``folder_hint`` says what to pass instead), an unreadable file or
    bytes that are not UTF-8 raise a :class:`UsageError` naming the file."""
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{what} {p}: is a folder{'; ' + folder_hint if folder_hint else ''}")
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{what} {p}: no such file") from None
    except OSError as exc:
        raise UsageError(f"{what} {p}: cannot read ({exc.strerror or exc})") from None
    return check_utf8(p, raw, what)


def check_utf8(path: str | os.PathLike[str], raw: bytes, what: str = "") -> str:
    """``raw`` decoded as UTF-8 (a leading byte-order mark dropped), else a :class:`UsageError`."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what + ' ' if what else ''}{not_utf8(path, raw, exc)}") from None
