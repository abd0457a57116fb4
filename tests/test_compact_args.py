"""The arguments of a manual ``/compact`` are the person's latest words before the summary.

Claude Code writes the boundary and the summary before the command's own records (``<command-name>
/compact</command-name> … <command-args>…</command-args>``: every manual compaction of the corpus,
2.0.60 to 2.1.183), so the arguments are not in the summarised span. A summary whose next step
follows them ("Park the SVG work on a branch, then …", a real 2.1.2xx summary found by a fresh
reviewer) was failed by ``next_step_quote`` as "not verbatim in the most recent conversation".
"""

from __future__ import annotations

import pytest

from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.grading.registry import cases_from_transcript
from pytest_ctxeval.transcript import read_transcript

from session_kit import Session
from shared_paths import CORPUS

ARGS = "Park all of the SVG changes on a separate branch, then start on the PNG export of the prompt"
OLDER = "Render the prompt as SVG so it can be embedded in the docs"
LAST = "fix the top offset too"


def _summary(next_step: str) -> str:
    sections = ["Primary Request and Intent", "Key Technical Concepts", "Files and Code Sections", "Errors and fixes",
                "Problem Solving", "All user messages", "Pending Tasks", "Current Work", "Optional Next Step"]
    bodies = ["The user wants the prompt rendered as SVG.", "- SVG", "- src/svg.go", "- None.", "Fixed the offset.",
              f'- "{OLDER}"\n   - "{LAST}"', "- PNG export", "Fixing the top offset.", next_step]
    return ("This session is being continued from a previous conversation that ran out of context. The summary "
            "below covers the earlier portion of the conversation.\n\nSummary:\n"
            + "\n".join(f"{i}. {t}:\n   {b}" for i, (t, b) in enumerate(zip(sections, bodies), start=1)))


def _case(tmp_path, next_step: str, *, args: str = ARGS, trigger: str = "manual"):
    s = Session(version="2.1.150")
    s.user(OLDER)
    s.assistant(text="Rendering it as SVG now.")
    s.user(LAST)
    s.assistant(text="Fixed the top offset.")
    s.compact(_summary(next_step), trigger=trigger, args=args)
    (case,) = cases_from_transcript(read_transcript(s.write(tmp_path / "s.jsonl")))
    return case


@pytest.fixture(scope="module")
def next_step_quote():
    registry = load_graders()
    spec = [g for g in registry if g.name == "next_step_quote"]
    return lambda case: registry.run(case, spec)[0]


def test_a_next_step_that_quotes_the_compact_instructions_passes(tmp_path, next_step_quote):
    case = _case(tmp_path, f'Per the /compact instructions: "{ARGS}".')
    assert case.compact_args == ARGS
    verdict = next_step_quote(case)
    assert verdict.status == "pass", verdict.reasons
    assert "Park all of the SVG changes" in verdict.reasons[0]


def test_the_last_request_still_counts_and_an_older_one_still_drifts(tmp_path, next_step_quote):
    assert next_step_quote(_case(tmp_path, f'Continue: "{LAST}".')).status == "pass"
    drift = next_step_quote(_case(tmp_path, f'Continue with "{OLDER}".'))
    assert drift.status == "fail" and "older message" in drift.reasons[0]


def test_without_arguments_or_for_an_automatic_compaction_there_are_none(tmp_path, next_step_quote):
    assert _case(tmp_path, f'"{LAST}"', args="").compact_args is None
    auto = _case(tmp_path, f'Next: "{ARGS}".', trigger="auto")
    assert auto.compact_args is None
    # an automatic compaction has no /compact instructions to follow: the quote is of nothing said
    assert next_step_quote(auto).status == "fail"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present (set CTXEVAL_SHARED)")
def test_the_corpus_manual_compactions_read_their_arguments():
    found = {}
    for name in ("roo-oliv__monodreams__2.1.150-manual-compact-args-469e58d2.jsonl",
                 "roo-oliv__monodreams__2.1.177-183-manual-resumed-d9b49d30.jsonl",
                 "FSM1__cipher-box__2.1.49-manual-rejects-12f1f541.jsonl"):
        (case,) = cases_from_transcript(read_transcript(CORPUS / name))
        found[name[:30]] = case.compact_args
    assert found["roo-oliv__monodreams__2.1.150-"].startswith("compact your context in the best way")
    assert found["roo-oliv__monodreams__2.1.177-"] is None and found["FSM1__cipher-box__2.1.49-manua"] is None


def test_the_summary_quoting_an_echo_is_not_the_command(tmp_path, next_step_quote):
    # a summary that quotes another /compact's echo does not make its arguments this one's
    echo = "<command-name>/compact</command-name><command-args>switch to the Godot port</command-args>"
    case = _case(tmp_path, f'Per the earlier request {echo}: "switch to the Godot port".', args="")
    assert case.compact_args is None
    assert next_step_quote(case).status == "fail"
