"""No path of a developer's or CI machine in the repository: the checkout must work wherever it is
cloned (the shared corpus and seeds are found through ``CTXEVAL_SHARED``, never a written path).

Invented paths in examples and test data use a placeholder user (``/home/dev/app``, ``/Users/me``);
any other ``/home/<name>/`` or ``/Users/<name>/``, this machine's ``/work`` layout, the checkout's own
path and the running user's home are reported with file and line."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Placeholder users of the invented paths in examples and test data.
PLACEHOLDER_USERS = {"dev", "me", "u", "user", "USER", "[USER]", "John"}
_USER_PATH = re.compile(r"(?:/home/|/Users/|[A-Za-z]:\\{1,2}Users\\{1,2})([^/\\\s\"'`)]+)")
_WORK = re.compile(r"(?<![\w./:~-])/work(?=/|\b)")


def machine_paths(text: str, own: tuple[str, ...] = ()) -> list[tuple[int, str]]:
    """``(line number, what)`` for every machine path in ``text``; ``own`` are this machine's own
    paths (the checkout, the home folder), found anywhere."""
    hits: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if m := _WORK.search(line):
            hits.append((number, line[m.start():m.start() + 40]))
        for m in _USER_PATH.finditer(line):
            if m.group(1) not in PLACEHOLDER_USERS:
                hits.append((number, m.group(0)))
        hits.extend((number, p) for p in own if p in line)
    return hits


def _own_paths() -> tuple[str, ...]:
    own = [str(ROOT)]
    home = Path.home()
    if len(home.parts) >= 3:           # /home/alice, /Users/alice: not / or /root
        own.append(str(home) + "/")
    return tuple(own)


def _tracked() -> list[Path]:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"git cannot list the tracked files here ({exc})")
    return [ROOT / name for name in out.decode("utf-8").split("\0") if name]


def test_no_tracked_file_names_a_machine_path():
    files = _tracked()
    assert len(files) > 100
    own = _own_paths()
    found = []
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:
            continue             # deleted in the working tree, not yet committed
        if b"\0" in data or path == Path(__file__).resolve():   # this file holds the examples
            continue
        text = data.decode("utf-8", errors="replace")
        found += [f"{path.relative_to(ROOT)}:{n}: {what}" for n, what in machine_paths(text, own)]
    assert not found, "machine paths in tracked files (use CTXEVAL_SHARED or a placeholder such as " \
                      "/home/dev/app):\n" + "\n".join(found)


#: This machine's layout, spelled in parts so the file itself names no machine path.
_W = "/" + "work"


@pytest.mark.parametrize("text,hit", [
    (f"corpus in {_W}/shared/corpus", True),
    (f'"cwd": "{_W}",', True),
    ("cd /home/alice/src && make", True),
    ("C:\\Users\\heejoon\\proj", True),
    (f"/Users/runner{_W}/x", True),
    ("/home/dev/app/src/parser.py", False),
    ("/Users/me/.claude/projects", False),
    ("/home/[USER]/x", False),
    (f"https://example.org{_W}/x and .{_W}/ and ~{_W}", False),
    ("homework/notes.md", False),
])
def test_machine_path_detection(text, hit):
    assert bool(machine_paths(text)) is hit


def test_own_paths_are_found_anywhere():
    own = ("/srv/ci/checkout-7",)
    assert machine_paths("ok\nx = '/srv/ci/checkout-7/tests'", own=own) == [(2, "/srv/ci/checkout-7")]
    assert str(ROOT) in _own_paths()
