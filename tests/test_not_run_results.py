"""A scenario that never ran (a template or schema error) is ONE error in the results JSON, the
HTML/Markdown report and a baseline comparison, as the terminal summary counts it; never one
failure per grader (review 2, F8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.reporting.baseline import diff_runs, format_run_diff
from pytest_ctxeval.reporting.report import report_context

ROOT = Path(__file__).resolve().parents[1]
IDLE_GAP = ROOT / "scenarios" / "idle_gap.yaml"
TEMPLATE_ERROR = 'name: undefined\nturns:\n  - user: "hello"\n  - assistant: "hi {{ undefined_var }}"\n'


@pytest.fixture
def run_docs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict, dict, str]:
    """The results of idle_gap and of the same scenario name after a template error broke it."""
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.mkdir()
    bad.mkdir()
    (good / "idle_gap.yaml").write_text(IDLE_GAP.read_text(encoding="utf-8"), encoding="utf-8")
    (good / "undefined.yaml").write_text(TEMPLATE_ERROR.replace("{{ undefined_var }}", "there"), encoding="utf-8")
    (bad / "idle_gap.yaml").write_text(IDLE_GAP.read_text(encoding="utf-8"), encoding="utf-8")
    (bad / "undefined.yaml").write_text(TEMPLATE_ERROR, encoding="utf-8")
    main(["run", str(good), "--json", str(tmp_path / "good.json"), "--compact-at-end"])
    capsys.readouterr()
    assert main(["run", str(bad), "--json", str(tmp_path / "bad.json"), "--compact-at-end"]) == 1
    return (json.loads((tmp_path / "good.json").read_text(encoding="utf-8")),
            json.loads((tmp_path / "bad.json").read_text(encoding="utf-8")), capsys.readouterr().out)


def _entry(doc: dict, name: str) -> dict:
    return next(s for s in doc["scenarios"] if s["name"] == name)


def test_the_results_json_holds_one_error_and_no_grader_failure(run_docs):
    _, bad, out = run_docs
    broken = _entry(bad, "undefined")
    assert "template error: 'undefined_var' is undefined" in broken["error"]
    assert broken["graders"] == {}  # no grader graded anything: none is written as failed
    assert "verbatim_user_messages" in broken["not_run"] and len(broken["not_run"]) > 10
    # The scenario beside it ran and was graded as usual.
    assert _entry(bad, "idle_gap")["graders"]["nine_sections"]["status"] == "pass"
    # The terminal table of the same run counted it once, as an error ("failed 1", not 21).
    row = next(l for l in out.splitlines() if l.startswith("undefined "))
    assert row.split()[1:3] == ["0", "error:"] and row.split()[-4:] == ["0", "1", "0", "-"], row
    assert "ctxeval: 1 scenario could not run (one error each" in out
    assert "grader error" not in out  # no grader raised


def test_the_report_counts_the_scenario_that_never_ran_once(run_docs):
    _, bad, _ = run_docs
    ctx = report_context(bad)
    row = next(r for r in ctx["rows"] if r["name"] == "undefined")
    assert (row["passed"], row["failed"], row["other"], row["bad"]) == (0, 1, 0, True)


def test_a_baseline_comparison_reports_one_regression_for_a_scenario_that_stopped_running(run_docs):
    good, bad, _ = run_docs
    cmp = diff_runs(good, bad)
    mine = [c for c in cmp.regressions if c.scenario == "undefined"]
    assert len(mine) == 1 and mine[0].grader is None, cmp.regressions
    assert (mine[0].before, mine[0].after) == ("ran", "error")
    assert "undefined_var" in mine[0].reason
    assert not [c for c in cmp.notes if c.scenario == "undefined" and c.grader], cmp.notes  # no "grader no longer run"
    text = "\n".join(format_run_diff(cmp))
    assert "REGRESSED undefined  ran → error" in text
    # And back: the scenario runs again, one note, no "new grader" notes, no regression.
    back = diff_runs(bad, good)
    assert not [c for c in back.regressions if c.scenario == "undefined"]
    assert [c.reason for c in back.notes if c.scenario == "undefined"] == ["the scenario runs again"]
