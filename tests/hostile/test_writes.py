"""Issue 23, writes: only a regular file at the named path is ever replaced."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.errors import UsageError
from pytest_ctxeval.core.outputs import check_output_path, write_text_safely

from tests.scenario_texts import TINY

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


def test_a_planted_tmp_symlink_is_never_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "results.json"
    for name in ("results.json.tmp", ".results.json.tmp"):
        (tmp_path / name).symlink_to(victim)
    write_text_safely(out, "{}\n")
    assert victim.read_text() == "precious" and out.read_text() == "{}\n" and not out.is_symlink()


def test_a_character_device_is_written_to_not_replaced(tmp_path: Path) -> None:
    write_text_safely("/dev/null", "discarded")
    assert Path("/dev/null").is_char_device()


def test_a_fifo_is_written_to_directly(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_text_safely(fifo, "through the pipe")
    reader.join(10)
    assert got == [b"through the pipe"] and fifo.is_fifo()


def test_a_folder_target_fails_before_the_run_and_leaves_nothing(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(TINY)
    target = tmp_path / "out"
    target.mkdir()
    assert main(["run", str(scenario), "--json", str(target)]) == 2
    err = capsys.readouterr()
    assert "is a folder" in err.err and err.out == ""  # nothing ran
    assert list(target.iterdir()) == [] and not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*tmp"))


@pytest.mark.parametrize("verb", ["grade", "report", "import", "compare-real", "diff"])
def test_every_verb_checks_its_outputs_first(tmp_path: Path, verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "taken"
    folder.mkdir()
    missing = str(tmp_path / "does-not-exist.jsonl")
    argv = {"grade": ["grade", missing, "--json", str(folder)],
            "report": ["report", missing, "-o", str(tmp_path / "taken.html")],
            "import": ["import", missing, "-o", str(folder)],
            "compare-real": ["compare-real", missing, "--html", str(folder)],
            "diff": ["diff", missing, missing, "--json", str(folder)]}[verb]
    if verb == "report":
        (tmp_path / "taken.html").mkdir()
    assert main(argv) == 2
    assert "is a folder" in capsys.readouterr().err  # refused before reading the (missing) input


def test_concurrent_writes_to_one_path_all_succeed(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    errors: list[BaseException] = []

    def write(i: int) -> None:
        try:
            write_text_safely(out, f"{i}\n" * 100)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(64)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    lines = out.read_text().splitlines()
    assert len(lines) == 100 and len(set(lines)) == 1  # one writer's whole file, never a mix
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_permissions_of_an_existing_file_are_kept(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    out.write_text("old")
    out.chmod(0o640)
    write_text_safely(out, "new")
    assert out.read_text() == "new" and (out.stat().st_mode & 0o777) == 0o640


def test_a_dangling_symlink_and_a_socket_are_refused(tmp_path: Path) -> None:
    import socket

    link = tmp_path / "dangling.json"
    link.symlink_to(tmp_path / "nowhere" / "x.json")
    with pytest.raises(UsageError, match="not a regular file"):
        check_output_path(link)
    sock_path = tmp_path / "s.sock"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(sock_path))
        with pytest.raises(UsageError, match="not a regular file"):
            check_output_path(sock_path)
    finally:
        sock.close()


def test_plugin_output_paths_are_checked_before_the_run(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", **{"scenarios/tiny": TINY})
    (pytester.path / "out.json").mkdir()
    result = pytester.runpytest("--ctxeval", "--ctxeval-report", "out.json", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*out.json: is a folder*"])
