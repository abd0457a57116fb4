"""Issue 23, writes: ``--json /dev/stdout`` while the shell redirects stdout to a regular file.

``/dev/stdout`` then resolves to that file, which looked like a regular target: the results were
written to a temporary file in ``/dev`` and renamed over the ``/dev/stdout`` link (as root), and the
redirected file never got them. A name for an open descriptor is written through the descriptor.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_ctxeval.core.outputs import check_output_path, write_text_safely

INPUTS = Path(__file__).parent / "inputs"

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux /proc/self/fd")


@pytest.mark.parametrize("name", ["/dev/fd/{fd}", "/proc/self/fd/{fd}", "link"])
def test_a_descriptor_on_a_regular_file_is_written_through_not_replaced(tmp_path: Path, name: str) -> None:
    target = tmp_path / "redirected.txt"
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, b"printed before\n")
        path = tmp_path / "link" if name == "link" else Path(name.format(fd=fd))
        if name == "link":
            path.symlink_to(f"/proc/self/fd/{fd}")
        inode = target.stat().st_ino
        assert check_output_path(path) == path
        write_text_safely(path, '{"results": 1}\n')
        os.write(fd, b"printed after\n")
    finally:
        os.close(fd)
    assert target.read_text() == 'printed before\n{"results": 1}\nprinted after\n'
    assert target.stat().st_ino == inode
    assert not list(tmp_path.glob(".*.tmp"))
    if name == "link":
        assert (tmp_path / "link").is_symlink()


def test_dev_stdout_is_recognised_as_a_descriptor() -> None:
    from pytest_ctxeval.core.outputs import _descriptor

    assert _descriptor(Path("/dev/stdout")) is not None and _descriptor(Path("/dev/stderr")) is not None
    assert _descriptor(Path("/etc/hostname")) is None


def test_grade_json_to_redirected_stdout_keeps_table_then_results(tmp_path: Path) -> None:
    """The CLI end to end, stdout redirected to a file; the output path is a symlink to
    ``/proc/self/fd/1`` in ``tmp_path`` (the same case as ``/dev/stdout``, but a regression can
    only replace the link in ``tmp_path``, never this machine's ``/dev/stdout``)."""
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    out = tmp_path / "out.txt"
    code = "import sys; from pytest_ctxeval.cli import main; sys.exit(main(sys.argv[1:]))"
    with out.open("wb") as fh:
        done = subprocess.run([sys.executable, "-c", code, "grade", str(INPUTS / "terminal_escapes.jsonl"),
                               "--json", str(link)], stdout=fh, stderr=subprocess.PIPE, timeout=300, check=False)
    assert done.returncode in (0, 1), done.stderr.decode()[-2000:]
    assert link.is_symlink()
    text = out.read_text()
    start, end = text.index("\n{\n"), text.rindex("\n}\n")
    assert "compaction 1" in text[:start]  # the table printed before the results
    assert json.loads(text[start:end + 2])["scenarios"][0]["compactions"]
    assert text[end + 3:].startswith("results written to")  # and the line printed after them
