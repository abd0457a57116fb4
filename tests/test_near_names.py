"""Near misses of known names (review 5, #16): a misspelled built-in tool in a scenario is a lint
problem with "did you mean", a tool name of the user's own is not; a misspelled grader name on the
command line gets "did you mean" too."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ctxeval.core.near_names import edits, near_miss, near_tool
from pytest_ctxeval.errors import GraderError
from pytest_ctxeval.grading.registry import load_graders
from pytest_ctxeval.scenario.lint import lint_file


@pytest.mark.parametrize(("name", "meant"), [("Raed", "Read"), ("Edti", "Edit"), ("read", "Read"), ("Wirte", "Write"),
                                             ("Grepp", "Grep"), ("TodoWrtie", "TodoWrite"), ("MultiEdti", "MultiEdit"),
                                             ("WebFetcher", "WebFetch"), ("ls", "LS")])
def test_a_slip_of_a_built_in_tool_is_named(name: str, meant: str) -> None:
    assert near_tool(name) == meant


@pytest.mark.parametrize("name", ["Read", "Edit", "mcp__github__issue_read", "deploy", "run_tests", "Search", "Ask",
                                  "small", "Lint", "Build", "notify_slack", "Lookup"])
def test_built_in_mcp_and_own_tool_names_are_accepted(name: str) -> None:
    assert near_tool(name) is None


def test_edits_counts_a_swap_as_one() -> None:
    assert (edits("raed", "read"), edits("edti", "edit"), edits("grepp", "grep"), edits("small", "skill")) == (1, 1, 1, 2)


SCENARIO = """\
name: typo
context_window: 20000
turns:
  - user: "Add a retry to src/net/client.py"
  - assistant: "Reading the client."
    tools:
      - name: {tool}
        input: {{file_path: src/net/client.py}}
        result: "x"
  - compact: {{}}
"""


def test_lint_names_a_misspelled_tool_and_accepts_a_custom_one(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(SCENARIO.format(tool="Raed"), encoding="utf-8")
    [problem] = lint_file(bad)
    assert str(problem) == (f"{bad}:7: turns[1].tools[0].name: 'Raed' is not a Claude Code tool (did you mean "
                            "'Read'?); use mcp__server__tool for your own tools")
    for tool in ("Read", "mcp__files__read_file", "fetch_ticket"):
        good = tmp_path / f"{tool}.yaml"
        good.write_text(SCENARIO.format(tool=tool), encoding="utf-8")
        assert lint_file(good) == [], tool


def test_a_misspelled_grader_name_gets_did_you_mean() -> None:
    registry = load_graders()
    with pytest.raises(GraderError, match=r"unknown grader 'verbatim_user_mesages' \(did you mean "
                                          r"'verbatim_user_messages'\?\); known graders: "):
        registry.select(["verbatim_user_mesages"])
    with pytest.raises(GraderError) as exc:
        registry.select(["my_own_grader"])
    assert "did you mean" not in str(exc.value)
    assert near_miss("drif", registry.names) == "drift"
