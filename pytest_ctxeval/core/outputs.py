"""Writing output files without touching anything but the file named.

Every file ctxeval writes (results, baselines, reports, imported scenarios, HTML comparisons) goes
through :func:`write_text_safely`:

* a regular file (or a new one) is written to a temporary file created exclusively (``O_EXCL``,
  a random name) in the target's folder, then renamed over the target: a reader never sees half a
  file, a planted ``OUT.tmp`` symlink is never followed, and concurrent writers to one path do not
  collide (the last rename wins, whole);
* a character device or a FIFO (``--json /dev/stdout``, a pipe) is written to directly, never
  replaced by a regular file;
* a name for an open file descriptor (``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``,
  ``/proc/self/fd/N``, or a symlink to one) is a stream whatever it is open on: when the shell
  redirected stdout to a regular file, ``/dev/stdout`` resolves to that file, and renaming a temporary
  file over it would replace the ``/dev/stdout`` link itself (by root, in ``/dev``) and leave the
  redirected file without the output; this process's own descriptor is written to through a copy of
  it (so the output lands after what was printed, and what is printed next lands after the output);
* anything else (a folder, a socket) is refused.

:func:`check_output_path` applies the same rules before a run, so a bad ``--json``/``--html``/``-o``
fails in a second, not after a paid run, and leaves nothing behind.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import tempfile
from pathlib import Path

from ..errors import UsageError

__all__ = ["check_output_path", "write_text_safely"]


#: A path that names an open file descriptor (after the symlinks of its folders are resolved).
_FD_PATH = re.compile(r"^/(?:dev|proc/(?P<pid>self|thread-self|\d+)(?:/task/\d+)?)/fd/(?P<fd>\d+)$")
_MAX_LINKS = 40  # as the kernel's own limit on symlinks followed in one lookup


def _descriptor(p: Path) -> re.Match[str] | None:
    """The ``/dev/fd/N`` or ``/proc/<pid>/fd/N`` that ``p`` is, or leads to through symlinks."""
    cur = os.path.abspath(p)
    for _ in range(_MAX_LINKS):
        cur = os.path.join(os.path.realpath(os.path.dirname(cur)), os.path.basename(cur))
        match = _FD_PATH.match(cur)
        if match:
            return match
        try:
            target = os.readlink(cur)
        except OSError:  # not a symlink (or nothing there)
            return None
        cur = os.path.join(os.path.dirname(cur), target)
    return None


def _own_fd(p: Path) -> int | None:
    """The number of this process's descriptor that ``p`` names (``/dev/stdout`` is 1), else None."""
    match = _descriptor(p)
    if match is None or match["pid"] not in (None, "self", "thread-self", str(os.getpid())):
        return None
    return int(match["fd"])


def _kind(p: Path) -> str | None:
    """``None`` (nothing there), ``file``, ``stream`` (char device, FIFO, or a name for an open file
    descriptor), ``descriptor`` (such a name open on a regular file) or ``other``."""
    try:
        mode = os.stat(p).st_mode
    except (FileNotFoundError, NotADirectoryError):
        if os.path.islink(p):  # a dangling symlink: writing would create its target elsewhere
            return "other"
        return None
    except OSError:
        return "other"
    if stat.S_ISREG(mode):
        return "descriptor" if _descriptor(p) is not None else "file"
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
    if kind in ("stream", "descriptor"):
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
    kind = _kind(p)
    if kind in ("stream", "descriptor"):
        try:
            own = _own_fd(p) if kind == "descriptor" else None
            if own is not None:  # this process's stdout (say): write at its offset, after what was printed
                for stream in (sys.stdout, sys.stderr):
                    stream.flush()
                fd = os.dup(own)
            else:  # a device, a pipe, or another process's descriptor on a file: append, never truncate
                fd = os.open(p, os.O_WRONLY | (os.O_APPEND if kind == "descriptor" else 0))
            with open(fd, "wb", buffering=0) as fh:
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
