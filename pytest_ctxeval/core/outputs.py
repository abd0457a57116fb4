"""Writing output files without touching anything but the file named.

Every file ctxeval writes (results, baselines, reports, imported scenarios, HTML comparisons) goes
through :func:`write_text_safely`:

* a regular file (or a new one) is written to a temporary file created exclusively (``O_EXCL``,
  a random name) in the target's folder, then renamed over the target: a reader never sees half a
  file, a planted ``OUT.tmp`` symlink is never followed, and concurrent writers to one path do not
  collide (the last rename wins, whole);
* a character device or a FIFO (``--json /dev/stdout``, a pipe) is written to directly, never
  replaced by a regular file;
* anything else (a folder, a socket) is refused.

:func:`check_output_path` applies the same rules before a run, so a bad ``--json``/``--html``/``-o``
fails in a second, not after a paid run, and leaves nothing behind.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from ..errors import UsageError

__all__ = ["check_output_path", "write_text_safely"]


def _kind(p: Path) -> str | None:
    """``None`` (nothing there), ``file``, ``stream`` (char device or FIFO) or ``other``."""
    try:
        mode = os.stat(p).st_mode
    except (FileNotFoundError, NotADirectoryError):
        if os.path.islink(p):  # a dangling symlink: writing would create its target elsewhere
            return "other"
        return None
    except OSError:
        return "other"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return "stream"
    return "dir" if stat.S_ISDIR(mode) else "other"


def check_output_path(path: str | os.PathLike[str]) -> Path:
    """Refuse an output path that cannot be written, before any work: a folder, a socket, a dangling
    symlink, a folder that cannot be created or written. Returns the path."""
    p = Path(path)
    kind = _kind(p)
    if kind == "dir":
        raise UsageError(f"{p}: is a folder; name a file to write (e.g. {p / 'results.json'})")
    if kind == "other":
        raise UsageError(f"{p}: not a regular file, a device or a pipe; name a file to write")
    if kind == "stream":
        return p
    folder = p.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{folder}: cannot create the output folder ({exc.strerror or exc})") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{folder}: the output folder is not writable")
    return p


def write_text_safely(path: str | os.PathLike[str], text: str, *, what: str = "the file") -> Path:
    """Write ``text`` (UTF-8) to ``path`` as the module docstring says; a :class:`UsageError`
    naming the path otherwise. Returns the path."""
    p = check_output_path(path)
    data = text.encode("utf-8")
    if _kind(p) == "stream":
        try:
            with open(p, "wb", buffering=0) as fh:
                fh.write(data)
        except OSError as exc:
            raise UsageError(f"{p}: cannot write {what} ({exc.strerror or exc})") from None
        return p
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name[:100]}.", suffix=".tmp", dir=p.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(tmp, _mode(p))
            os.replace(tmp, p)
            tmp = None
        finally:
            if tmp is not None:
                os.unlink(tmp)
    except OSError as exc:
        raise UsageError(f"{p}: cannot write {what} ({exc.strerror or exc})") from None
    return p


def _mode(p: Path) -> int:
    """The existing file's permissions, else what ``open()`` would give a new file (0666 & ~umask)."""
    try:
        return stat.S_IMODE(os.stat(p).st_mode)
    except OSError:
        return 0o666 & ~_UMASK


def _read_umask() -> int:
    umask = os.umask(0o022)  # read once, at import (os.umask can only be read by setting it)
    os.umask(umask)
    return umask


_UMASK = _read_umask()
