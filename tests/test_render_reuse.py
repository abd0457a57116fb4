"""The expander renders a template once per values of the names it reads
(``scenario/render_inputs.py``): the expansion must be the one rendering every field gives, and
reuse must stay off where a template is not a function of those values."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from pytest_ctxeval.scenario import expansion
from pytest_ctxeval.scenario.expansion import expand
from pytest_ctxeval.scenario.render_inputs import MAY_CHANGE_VALUES, template_inputs
from pytest_ctxeval.scenario.sandbox import BoundedSandbox
from pytest_ctxeval.scenario.schema import Scenario

FIELDS = ["Reading {{ mods[k % 2] }} {{ k }}.", "{{ log(lines=3, seed=k, service=mods[0]) }}", "{{ g }}-{{ k }}",
          "{% for i in range(k % 3) %}{{ i }}{% endfor %}", "{{ python_file(lines=4, seed=g * 10 + k, name='x') }}",
          "{{ grep_hits(n=2, pattern=mods[1], seed=k) }}", "plain text", "{{ mods | join(',') }} {{ k0 }}"]


def scenario(fields: list[str], outer: int, inner: int) -> Scenario:
    turns = [{"user": f} for f in fields]
    return Scenario.model_validate({"name": "t", "vars": {"mods": ["auth", "billing"]}, "turns": [
        {"user": "start"},
        {"repeat": outer, "var": "g", "turns": [{"repeat": inner, "var": "k", "turns": turns}]}]})


def contents(s: Scenario) -> list[object]:
    return [step.content for step in expand(s).steps]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(FIELDS), min_size=1, max_size=5), st.integers(1, 3), st.integers(1, 4))
def test_reused_outputs_are_the_rendered_ones(fields: list[str], outer: int, inner: int) -> None:
    s = scenario(fields, outer, inner)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(expansion, "template_inputs", lambda *a: None)  # every field rendered
        want = expand(s)
    got = expand(s)
    assert [step.content for step in got.steps] == [step.content for step in want.steps]
    assert got.chars == want.chars


def test_a_repeat_variable_that_shadows_a_var_is_an_input() -> None:
    s = Scenario.model_validate({"name": "t", "vars": {"k": 99}, "turns": [
        {"user": "{{ k }}"}, {"repeat": 3, "var": "k", "turns": [{"user": "{{ k }}"}]}, {"user": "{{ k }}"}]})
    assert [str(c) for c in contents(s)] == ["99", "1", "2", "3", "99"]


def test_a_template_that_may_change_a_value_turns_reuse_off() -> None:
    # The second field appends to `mods`; the first must see the list grow on every pass.
    s = scenario(["{{ mods | length }}", "{{ mods.append('x') or 'appended' }}"], 1, 3)
    assert [str(c) for c in contents(s)][1:] == ["2", "appended", "3", "appended", "4", "appended"]


def test_what_is_reused_and_what_is_not() -> None:
    env = BoundedSandbox()
    pure = {"mods", "log", "range", "ctxeval_loop_guard"}
    assert template_inputs(env, "{{ mods[k] }} {{ log(seed=g) }}", pure) == ("g", "k", "log", "mods")
    assert template_inputs(env, "{% set x = 1 %}{% for i in range(n) %}{{ x }}{% endfor %}", pure) == (
        "ctxeval_loop_guard", "n", "range", "x")  # the sandbox's guard is a global like the fillers
    assert template_inputs(env, "{{ lipsum(1) }}", pure) is None          # random
    assert template_inputs(env, "{{ [1, 2] | random }}", pure) is None    # random
    assert template_inputs(env, "{{ cycler(1, 2).next() }}", pure) is MAY_CHANGE_VALUES
    assert template_inputs(env, "{{ mods.pop() }}", pure) is MAY_CHANGE_VALUES
    assert template_inputs(env, "{{ (mods | attr('pop'))() }}", pure) is MAY_CHANGE_VALUES
    assert template_inputs(env, "{{ unclosed", pure) is None              # rendering reports it
