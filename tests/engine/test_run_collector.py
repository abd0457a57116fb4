"""A run (``run_scenario``) and an expansion (``expand``) build a tree of steps, messages and
requests that they keep, so the cyclic collector is paused while they do (see core/gcpause: a
10,000-turn run spent a third of its CPU in ten full collections walking that tree). It must be
off inside and left as found on the way out, also when the run or the expansion fails: a run that
left it off would leak every cycle of the rest of the process."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_ctxeval.errors import ScenarioError
from pytest_ctxeval.runner import run_scenario
from pytest_ctxeval.scenario.expansion import expand
from pytest_ctxeval.scenario.schema import load_scenario

SCENARIO = """\
name: collector
turns:
  - user: "Read the config."
  - repeat: 3
    turns:
      - assistant: "Reading it."
        tools:
          - {name: Read, input: {file_path: "app.toml"}, result: "{{ lorem(20, seed=1) }}"}
  - compact: {}
"""


@pytest.fixture(autouse=True)
def _collector_on_after() -> Iterator[None]:
    yield
    gc.enable()


def test_paused_during_a_run_and_on_after_it(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    seen: list[bool] = []
    result = run_scenario(path, session_dir=tmp_path / "out", on_prepare=lambda _: seen.append(gc.isenabled()))
    assert result.compactions and seen and not any(seen)
    assert gc.isenabled()


def test_on_after_a_failed_expansion_and_left_off_when_found_off(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(SCENARIO.replace("lorem(20, seed=1)", "no_such_helper()"))
    scenario = load_scenario(path)
    with pytest.raises(ScenarioError, match="no_such_helper"):
        expand(scenario)
    assert gc.isenabled()
    with pytest.raises(ScenarioError):
        run_scenario(scenario, session_dir=tmp_path / "out")
    assert gc.isenabled()
    gc.disable()
    run_scenario(_good(tmp_path), session_dir=tmp_path / "out2")
    assert not gc.isenabled()


def _good(tmp_path: Path) -> Path:
    path = tmp_path / "good.yaml"
    path.write_text(SCENARIO)
    return path
