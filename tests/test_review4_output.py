"""What a verdict line claims (review 4, G8 and G18 a): an n/a verdict shows no score (``(1.00)``
read as a perfect pass), and the offline judge's score says beside it that it counts shared terms,
not meaning ("intent preserved: 5/5" read as a judgement of the summary's meaning)."""

from __future__ import annotations

import re
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
    assert not [line for line in na if re.search(r"^\s*N/A\s+\S+ \(\d\.\d\d\)", line)], na  # no "(1.00)"
    assert all(re.search(r" \(\d\.\d\d\)$", line) for line in passed)  # pass and fail keep their score
    intent = out.split("intent_preservation", 1)[1].splitlines()[1]
    assert "intent preserved: " in intent and "by the offline heuristic judge (terms shared, not a reading of meaning" in intent


def test_graders_n_a_on_every_compaction_are_said_once_after_them(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # review 4, G18 b: a real transcript's scenario-only graders (planted facts, the window) were
    # listed with every compaction, "the scenario plants no facts" for a file that has no scenario
    path = _session(tmp_path / "s.jsonl", second="now add the --strict flag")
    main(["grade", str(path), "-v"])
    out = capsys.readouterr().out
    per_case, _, once = out.partition("s.jsonl: n/a on its compaction, for one reason each:")
    assert once, out
    assert "facts_survive" not in per_case and "fits_window" not in per_case
    assert "  N/A       facts_survive: no planted facts: only a scenario plants them" in once
    assert "PASS      nine_sections" in per_case  # what applied is still shown with its compaction


def test_continuation_without_a_recorded_version_is_unknown_not_absent(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # review 4, G18 c: "Claude Code (version not recorded) writes neither" claimed a behaviour
    # nobody knows, beside a summary that carried the transcript path
    from session_kit import Session

    s = Session(version=None)
    s.user("fix the parser in src/parse.py")
    s.assistant(text="Editing.")
    s.compact("1. Primary Request and Intent:\n   fix the parser\n6. All user messages:\n   - \"fix the parser in src/parse.py\"\n"
              "9. Optional Next Step:\n   \"fix the parser in src/parse.py\"")
    path = s.write(tmp_path / "noversion.jsonl")
    main(["grade", str(path), "-v", "--graders", "continuation"])
    out = capsys.readouterr().out
    assert "records no Claude Code version" in out and "is not known: neither is required" in out
    assert "writes neither" not in out
