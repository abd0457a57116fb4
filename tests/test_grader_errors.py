"""A grader that raises is an ERROR everywhere (pytest, CLI, reports); ungraded stays distinct and
``--strict`` / ``--ctxeval-strict`` turns it into a failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.grading import load_graders
from scenario_texts import TINY

CRASHY = '''
from pytest_ctxeval import grader, Verdict


def _helper(case):
    return case.summary["no such key"]   # TypeError: string indices must be integers


@grader("crashy", kind="rule")
def crashy(case):
    """Raises on every summary."""
    return _helper(case)
'''

UNDECIDED = '''
from pytest_ctxeval import grader, Verdict


@grader("undecided", kind="rule")
def undecided(case):
    """Never decides (as a judge whose reply never parsed)."""
    return Verdict.ungraded("the judge reply never parsed")
'''


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", **{"scenarios/tiny": TINY})
    pytester.makepyfile(**{"mygraders/crashy": CRASHY, "mygraders/undecided": UNDECIDED})
    return pytester


def test_a_crashing_grader_is_a_pytest_error_whose_traceback_ends_in_the_grader(project: pytest.Pytester) -> None:
    result = project.runpytest("--ctxeval", "--ctxeval-graders", "mygraders", "-p", "no:cacheprovider",
                               "-k", "crashy or nine_sections", "--ctxeval-report", "out.json",
                               "--ctxeval-report", "out.md", "--ctxeval-report", "out.html")
    result.assert_outcomes(passed=1, errors=1)
    text = result.stdout.str()
    assert "ERROR at setup of" in text and "crashy" in text
    # The last frame of the traceback is the grader's own file and line.
    raising = 1 + (project.path / "mygraders" / "crashy.py").read_text().split("\n").index(
        '    return case.summary["no such key"]   # TypeError: string indices must be integers')
    frames = [line for line in result.stdout.lines if line.startswith("mygraders/crashy.py:")]
    assert frames and frames[-1] == f"mygraders/crashy.py:{raising}: TypeError", frames
    result.stdout.fnmatch_lines(["*1 grader error*"])
    doc = json.loads((project.path / "out.json").read_text())
    row = doc["scenarios"][0]["graders"]["crashy"]
    assert row["status"] == "error"
    assert row["reasons"][0].startswith("grader crashy crashed on scenario tiny.yaml")
    assert "TypeError" in row["reasons"][0]
    assert "ERROR: grader crashy crashed on scenario tiny.yaml" in (project.path / "out.md").read_text()
    assert "grader crashy crashed on scenario tiny.yaml" in (project.path / "out.html").read_text()


def test_ungraded_is_a_counted_skip_and_a_failure_under_strict(project: pytest.Pytester) -> None:
    args = ["--ctxeval", "--ctxeval-graders", "mygraders", "-p", "no:cacheprovider", "-k", "undecided", "-rs"]
    result = project.runpytest(*args)
    others = len(list(load_graders())) + 1  # every built-in grader and the other custom one ("crashy")
    result.assert_outcomes(skipped=1, deselected=others)
    result.stdout.fnmatch_lines(["*1 ungraded verdict (a judge could not decide); --ctxeval-strict makes them failures*",
                                 "*UNGRADED*the judge reply never parsed*"])
    result = project.runpytest(*args, "--ctxeval-strict")
    result.assert_outcomes(failed=1, deselected=others)
    result.stdout.fnmatch_lines(["*undecided is UNGRADED on tiny.yaml*--ctxeval-strict*"])


def _cli_project(tmp_path: Path) -> Path:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "tiny.yaml").write_text(TINY)
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "crashy.py").write_text(CRASHY)
    (tmp_path / "g" / "undecided.py").write_text(UNDECIDED)
    return tmp_path


def test_cli_run_exits_1_naming_the_crashed_grader(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _cli_project(tmp_path)
    code = main(["run", str(root / "scenarios"), "--graders-dir", str(root / "g"), "--graders", "crashy,nine_sections",
                 "--json", str(root / "r.json")])
    out = capsys.readouterr().out
    assert code == 1
    assert "grader crashy crashed on scenario tiny.yaml" in out and "TypeError" in out and "(crashy.py:" in out
    assert "ERROR" in out
    doc = json.loads((root / "r.json").read_text())
    assert doc["scenarios"][0]["graders"]["crashy"]["status"] == "error"


def test_cli_strict_turns_ungraded_into_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _cli_project(tmp_path)
    args = ["run", str(root / "scenarios"), "--graders-dir", str(root / "g"), "--graders", "undecided,nine_sections"]
    assert main(args) == 0
    assert "1 ungraded verdict" in capsys.readouterr().out
    assert main([*args, "--strict"]) == 1
    assert "failing under --strict" in capsys.readouterr().out


def test_a_grader_returning_no_verdict_is_an_error_too(tmp_path: Path) -> None:
    from pytest_ctxeval.grading import GraderRegistry, CompactionCase
    from pytest_ctxeval.grading.registry import GraderSpec

    registry = GraderRegistry()
    spec = GraderSpec("lazy", "rule", lambda case: None, "here:1")
    registry.add(spec)
    case = CompactionCase(source="s.yaml", index=1, kind="full", trigger="manual", summary="x", summary_message="x",
                          summarized=[], history=[], post_messages=[])
    (v,) = registry.run(case)
    assert v.status == "error" and "returned NoneType, not a Verdict" in v.reasons[0]
