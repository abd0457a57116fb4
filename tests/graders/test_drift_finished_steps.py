"""Offline drift: the finished steps of a request are not "lost intent" (review 2, F23).

An imported real session failed drift at 2/5 ("lost: commit; create; master"): its first request
was a setup step ("can you access the branch ..."), and its latest one was done in steps ("commit and
push this plan and open a PR.. after that plan the implementation in phases"); the summary was at the
last step. Each test is a hand-built case of the class in words written for the test: a generation
at a later step passes, one that drifted fails naming what it lost, and a generation is still held
to a step it never reached and to a constraint that is not a step."""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_ctxeval.grading.judging import Judge
from pytest_ctxeval.grading.registry import cases_from_transcript
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.llm.finished_steps import open_steps
from pytest_ctxeval.transcript.jsonl import read_transcript

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: transcript_builder
from transcript_builder import Builder

SETUP = "can you reach the branch feature/csv-export-7 i pushed from my laptop"
STEPS = ("this is good. commit and push this plan and open a PR against main.. after that you can plan the "
         "export implementation in phases and implement them one by one")
LATER = "after that you can plan the export implementation in phases and implement them one by one"


def _summary(request: str, next_step: str) -> str:
    return ("This session is being continued from a previous conversation that ran out of context. The summary "
            "below covers the earlier portion of the conversation.\n\nSummary:\n"
            f"1. Primary Request and Intent:\n   {request}\n"
            "2. Key Technical Concepts:\n   - CSV writers\n"
            "3. Files and Code Sections:\n   - docs/plans/export.md: the plan\n"
            "4. Errors and fixes:\n   - none\n"
            "5. Problem Solving:\n   The plan is written.\n"
            "6. All user messages:\n   - \"...\"\n"
            "7. Pending Tasks:\n   - phase 1\n"
            "8. Current Work:\n   PR #31 opened for the plan.\n"
            f"9. Optional Next Step:\n   {next_step}\n")


def _drift(registry, tmp_path: Path, requests: list[str], request: str, next_step: str):
    """A session of ``requests`` compacted three times; every summary's request and next step are
    ``request`` and ``next_step``."""
    b = Builder("2.1.69")
    for text in requests:
        b.typed(text)
        b.reply(text="Done.")
    for n in range(3):
        if n:
            b.typed(f"go on with phase {n}")
            b.reply(text=f"Phase {n} done.")
        b.boundary("auto", 150_000)
        b.summary(_summary(request, next_step))
    path = tmp_path / "session.jsonl"
    b.write(path)
    last = cases_from_transcript(read_transcript(path))[-1]
    last.judge = Judge(make_llm("offline"))
    (verdict,) = registry.run(last, [registry.get("drift")])
    return verdict


def test_a_generation_at_the_last_step_of_the_latest_request_stays_on_intent(registry, tmp_path):
    # The later requests ("go on with phase N") are held: the summary says which phase is next.
    good = _drift(registry, tmp_path, [SETUP, STEPS], "Plan the CSV export implementation in phases and implement "
                  "them one by one; go on with phase 1, phase 2", f'Go on with the next phase, as asked: "{LATER}"')
    assert good.status == "pass", good.reasons
    bad = _drift(registry, tmp_path, [SETUP, STEPS], "Migrate the billing service to the new payments API",
                 "Migrate the invoice endpoints next.")
    assert bad.status == "fail", bad.reasons
    assert "falls below the bar" in bad.reasons[0], bad.reasons


def test_the_heuristic_sets_finished_steps_aside_and_says_so():
    have = "plan the export implementation in phases and implement them one by one"
    held = lambda step: len(set(step.split()) & set(have.split())) / max(1, len(set(step.split())))  # noqa: E731
    kept, finished = open_steps(f"First request: {SETUP}\nLatest request: {STEPS}", held)
    assert kept == LATER.replace("after that ", "")  # the step, without the word that moves on to it
    assert finished == [SETUP, "this is good. commit and push this plan and open a PR against main"]


def test_a_step_never_reached_and_a_constraint_are_still_held_to():
    have = {"add", "the", "tokenizer", "keep", "public", "api", "of", "src/parse.py", "unchanged"}
    held = lambda step: len(set(step.lower().split()) & have) / max(1, len(step.split()))  # noqa: E731
    # The generation is at the FIRST step: the later one is not finished, nothing is set aside.
    request = "add the tokenizer, then write the docs for the CLI flags"
    assert open_steps(f"First request: {request}", held) == (request, [])
    # No sequence word: a sentence and its constraint are one step, never "finished".
    request = "Fix the parser crash. Keep the public API of src/parse.py unchanged."
    assert open_steps(f"First request: {request}", held) == (request, [])
    # The latest request not held: the first one is still the intent.
    intent = "First request: add the tokenizer\nLatest request: now write the docs for the CLI flags"
    assert open_steps(intent, held) == ("add the tokenizer\nnow write the docs for the CLI flags", [])


def test_a_generation_holding_only_the_first_step_still_drifts(registry, tmp_path):
    request = "add the tokenizer to src/parse.py, then write the docs for the CLI flags and publish them to the wiki"
    bad = _drift(registry, tmp_path, [request], "Add the tokenizer", "Add the tokenizer.")
    assert bad.status == "fail", bad.reasons
    good = _drift(registry, tmp_path, [request], "Document the CLI flags; the tokenizer in src/parse.py is done",
                  '"write the docs for the CLI flags and publish them to the wiki"')
    assert good.status == "pass", good.reasons
