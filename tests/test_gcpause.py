"""``paused_gc``: the collector is off inside, and left exactly as found on the way out (a reader
that forgot to re-enable it would leak every cycle of the rest of the process)."""

from __future__ import annotations

import gc
from pathlib import Path
from collections.abc import Iterator

import pytest

from pytest_ctxeval.core.gcpause import paused_gc
from pytest_ctxeval.scenario.lint import lint_file
from pytest_ctxeval.core.yaml_safe import BadYAML, load_yaml


@pytest.fixture(autouse=True)
def _gc_enabled_after() -> Iterator[None]:
    yield
    gc.enable()


def test_paused_inside_and_restored_after_even_on_error() -> None:
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with paused_gc():
            assert not gc.isenabled()
            with paused_gc():  # nested: the inner one must not switch it back on
                assert not gc.isenabled()
            assert not gc.isenabled()
            raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_caller_that_disabled_the_collector_keeps_it_disabled() -> None:
    gc.disable()
    with paused_gc():
        pass
    assert not gc.isenabled()


def test_readers_leave_the_collector_on(tmp_path: Path) -> None:
    assert load_yaml("a: [1, 2]\n")[0] == {"a": [1, 2]}
    assert gc.isenabled()
    with pytest.raises(BadYAML):
        load_yaml("a: 1\na: 2\n")
    assert gc.isenabled()
    bad = tmp_path / "bad.yaml"
    bad.write_text("turns:\n  - user: hi\n    user: again\n")
    assert lint_file(bad) and gc.isenabled()


def test_transcript_readers_leave_the_collector_on(tmp_path: Path) -> None:
    from pytest_ctxeval.scenario.importer import import_transcript, write_scenario
    from pytest_ctxeval.transcript import read_transcript

    src = Path(__file__).parent / "hostile" / "inputs" / "terminal_escapes.jsonl"
    assert read_transcript(src).messages and gc.isenabled()
    write_scenario(import_transcript(src), tmp_path / "s.yaml")
    assert (tmp_path / "s.yaml").is_file() and gc.isenabled()
