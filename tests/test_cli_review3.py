"""Findings of the third fresh-user review on the CLI: grade-output reads an output that lost most of
Claude Code's nine sections as that format (F8), and ``grade --summary`` does not hold a bare summary
text to the message Claude Code wraps around it (F9). Each test failed before its fix."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.reading.summary import parse_summary
from pytest_ctxeval.runner import run_scenario

from test_grade_folder import GOOD, _session

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "debug_failing_test.yaml"


@pytest.fixture(scope="module")
def reference_summary(tmp_path_factory) -> str:
    """The reference engine's own round-1 summary of the scenario (all nine sections)."""
    run = run_scenario(SCENARIO, session_dir=tmp_path_factory.mktemp("ref"))
    return run.compactions[0].result.summary


def _keep(summary: str, numbers: set[int]) -> str:
    """``summary`` with only the sections of these numbers."""
    parsed = parse_summary(summary)
    lines = summary.split("\n")
    starts = [s.line - 1 for s in parsed.sections] + [len(lines)]
    kept = lines[: starts[0]]
    for sec, a, b in zip(parsed.sections, starts, starts[1:]):
        if sec.number in numbers:
            kept += lines[a:b]
    return "\n".join(kept)


@pytest.mark.parametrize("numbers", [{1, 3, 4}, {1, 2, 3, 4, 5, 7, 8}, {6}])
def test_an_output_that_lost_sections_is_graded_as_the_nine_sections(tmp_path, capsys, reference_summary, numbers):
    path = tmp_path / "out.txt"
    path.write_text(_keep(reference_summary, numbers), encoding="utf-8")
    assert main(["grade-output", str(path), "--scenario", str(SCENARIO), "-v"]) == 1
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if "nine_sections" in l)
    assert line.split()[0] == "FAIL", out
    reason = out.split(line, 1)[1].splitlines()[1]
    missing = [n for n in range(1, 10) if n not in numbers]
    assert all(f"{n}. " in reason for n in missing) and not any(f" {n}. " in reason for n in numbers), reason
    assert f"read as Claude Code's nine-section summary ({len(numbers)} of 9 sections found)" in out
    assert "next_step_quote" in out and not re.search(r"N/A\s+next_step_quote", out)


def test_the_whole_output_passes_nine_sections_and_says_how_it_was_read(tmp_path, capsys, reference_summary):
    path = tmp_path / "out.txt"
    path.write_text(reference_summary, encoding="utf-8")
    main(["grade-output", str(path), "--scenario", str(SCENARIO), "-v"])
    out = capsys.readouterr().out
    assert re.search(r"PASS\s+nine_sections", out)
    assert "read as Claude Code's nine-section summary (9 of 9 sections found)" in out


def test_only_an_output_with_nothing_of_the_nine_sections_is_free_form(tmp_path, capsys):
    path = tmp_path / "out.txt"
    path.write_text("The user wants the coupon test fixed; the KeyError comes from the cache layer. "
                    "Next: fix it there so old keys keep working.", encoding="utf-8")
    main(["grade-output", str(path), "--scenario", str(SCENARIO), "-v"])
    out = capsys.readouterr().out
    assert re.search(r"N/A\s+nine_sections", out)
    assert "read as a free-form summary: none of Claude Code's nine sections was found" in out


def test_grade_summary_leaves_continuation_out_for_a_bare_summary(tmp_path, capsys):
    session = _session(tmp_path / "s.jsonl", second="now add tests")
    text = GOOD.replace("{second}", "now add tests")
    bare = tmp_path / "summary.md"
    bare.write_text(text.split("Summary:\n", 1)[1], encoding="utf-8")
    main(["grade", "-v", "--summary", str(bare), str(session)])
    out = capsys.readouterr().out
    assert re.search(r"N/A\s+continuation", out) and "the model's output" in out, out
    assert "no transcript path" not in out
    # The whole summary message, as Claude Code writes it, is still checked: held to what the
    # session's version wrote around it (this session is 2.0.76, which wrote neither; real-session
    # round 4), not left out as a bare summary.
    whole = tmp_path / "message.md"
    whole.write_text(text, encoding="utf-8")
    main(["grade", "-v", "--summary", str(whole), str(session)])
    out = capsys.readouterr().out
    assert "the model's output" not in out, out
    assert re.search(r"N/A\s+continuation", out) and "Claude Code 2.0.76 writes neither for a manual compaction" in out, out


# -- F18: diff of two files with nothing in common; a baseline's scenario left out of the run --------

def _results(path: Path, names: list[str]) -> Path:
    import json

    doc = {"format": "pytest-ctxeval/results", "version": 1, "scenarios": [
        {"name": n, "source": f"{n}.yaml", "graders": {"nine_sections": {"kind": "rule", "status": "pass",
                                                                          "score": 1.0, "reasons": []}},
         "compactions": []} for n in names]}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_diff_of_files_with_no_scenario_in_common_is_bad_input(tmp_path, capsys):
    base = _results(tmp_path / "base.json", ["auth_refactor", "idle_gap"])
    other = _results(tmp_path / "other.json", ["session.jsonl"])
    assert main(["diff", str(base), str(other)]) == 2
    err = capsys.readouterr().err
    assert "have no scenario in common (auth_refactor, idle_gap against session.jsonl): nothing to compare" in err


def test_a_scenario_the_run_left_out_is_not_run_not_removed(tmp_path, capsys):
    base = _results(tmp_path / "base.json", ["auth_refactor", "idle_gap", "debug_failing_test", "evolving_todos",
                                             "long_migration"])
    one = _results(tmp_path / "one.json", ["idle_gap"])
    assert main(["diff", str(base), str(one)]) == 0
    out = capsys.readouterr().out
    assert "missing from this run (4): auth_refactor, debug_failing_test, evolving_todos, long_migration" in out
    assert "removed" not in out
