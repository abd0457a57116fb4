"""What a verdict line claims (review 4, G8 and G18 a): an n/a verdict shows no score (``(1.00)``
read as a perfect pass), and the offline judge's score says beside it that it counts shared terms,
not meaning ("intent preserved: 5/5" read as a judgement of the summary's meaning)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ctxeval.cli import main

from test_grade_folder import _session


def test_n_a_verdicts_show_no_score_and_the_heuristic_judge_says_what_it_is(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = _session(tmp_path / "s.jsonl", second="now add the --strict flag")
    main(["grade", str(path), "-v"])
    out = capsys.readouterr().out
    na = [line for line in out.splitlines() if line.lstrip().startswith("N/A ")]
    passed = [line for line in out.splitlines() if line.lstrip().startswith("PASS ")]
    assert na and passed
    assert all(len(line.split()) == 2 for line in na), na  # "N/A grader", no "(1.00)"
    assert all(line.rstrip().endswith(")") for line in passed)  # pass and fail keep their score
    intent = out.split("intent_preservation", 1)[1].splitlines()[1]
    assert "intent preserved: " in intent and "by the offline heuristic judge (terms shared, not a reading of meaning" in intent
