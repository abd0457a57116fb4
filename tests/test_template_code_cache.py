"""Scenario templates are compiled and read once per process and source (scenario/expansion.py,
scenario/render_inputs.py): a scenario expanded again (every run, every compactor of a comparison)
gives the same steps without compiling again."""

from __future__ import annotations

import pytest

from pytest_ctxeval.scenario import expansion, render_inputs
from pytest_ctxeval.scenario.expansion import expand
from pytest_ctxeval.scenario.sandbox import BoundedSandbox
from pytest_ctxeval.scenario.schema import load_scenario
from scenario_texts import TINY


def test_a_second_expansion_compiles_nothing_and_gives_the_same_steps(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(TINY.replace("Reading the module.", "Reading the {{ 'module' | upper }}."))
    monkeypatch.setattr(expansion, "_CODES", {})
    monkeypatch.setattr(render_inputs, "_READ", {})
    compiled: list[str] = []
    real = BoundedSandbox.compile

    parsed: list[str] = []
    real_parse = BoundedSandbox._parse

    def counting(self, source, *a, **kw):  # type: ignore[no-untyped-def]
        compiled.append(source)
        return real(self, source, *a, **kw)

    def parsing(self, source, *a, **kw):  # type: ignore[no-untyped-def]
        parsed.append(source)
        return real_parse(self, source, *a, **kw)

    monkeypatch.setattr(BoundedSandbox, "compile", counting)
    monkeypatch.setattr(BoundedSandbox, "_parse", parsing)
    first = expand(load_scenario(path))
    n = len(compiled)
    assert n >= 1 and "Reading the {{ 'module' | upper }}." in parsed
    # each source is parsed once: read for what it depends on, then compiled from that same tree
    assert sorted(parsed) == sorted(set(parsed)) and len(parsed) == n
    second = expand(load_scenario(path))
    assert len(compiled) == n and len(parsed) == n
    assert repr(second.steps) == repr(first.steps)
    assert "Reading the MODULE." in repr(first.steps)


def test_a_remembered_reading_still_honours_each_expansions_globals() -> None:
    env = BoundedSandbox()
    source = "{{ x }} and {{ y }}"
    assert render_inputs.template_inputs(env, source, {"x", "y"}) == ("x", "y")
    env.globals["y"] = object()  # a global that is not pure: the output may vary without the key
    assert render_inputs.template_inputs(env, source, {"x"}) is None
    assert render_inputs.template_inputs(BoundedSandbox(), "{{ nope(", set()) is None
    assert render_inputs.template_inputs(BoundedSandbox(), "{{ a.b() }}", set()) is render_inputs.MAY_CHANGE_VALUES
