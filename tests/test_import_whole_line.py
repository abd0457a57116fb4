"""An imported whole line (``ctxeval import --all``) is graded as ``ctxeval grade`` grades the
transcript (review findings F22, F23): the importer pre-fills no expectation that would follow every
later compaction (an early error resolved at once; the last request, of a summary written before
it), and an intent is the request, not the acknowledgement it opens with."""

from __future__ import annotations

import pytest

from pytest_ctxeval.evaluation import evaluate_run
from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.grading.registry import cases_from_transcript
from pytest_ctxeval.llm.reference import _coverage, _terms
from pytest_ctxeval.runner import run_scenario
from pytest_ctxeval.scenario.importer import _request_part, import_transcript, write_scenario
from pytest_ctxeval.scenario.schema import load_scenario
from pytest_ctxeval.transcript import read_transcript

from session_kit import Session

REGISTRY = load_graders()
EARLY = "fatal: couldn't find remote ref feature/sync-retry"
LATE = "sqlite3.OperationalError: no such table: order_events"


def _summary(errors: str, request: str) -> str:
    return ("Summary:\n1. Primary Request and Intent:\n   Add retries to the order sync.\n"
            "2. Key Technical Concepts:\n   - retries\n3. Files and Code Sections:\n   - src/sync.py\n"
            f"4. Errors and fixes:\n{errors}\n5. Problem Solving:\n   Done so far.\n"
            f"6. All user messages:\n{request}\n7. Pending Tasks:\n   - none\n"
            "8. Current Work:\n   Working on the sync.\n9. Optional Next Step:\n   Continue the sync work.\n")


def _session(tmp_path, *, second_keeps_late: bool):
    s = Session()
    s.user("Fetch the branch feature/sync-retry and add retries to the order sync in src/sync.py")
    (uid,) = s.assistant(tools=[("t1", "Bash", {"command": "git fetch origin feature/sync-retry"})])
    s.result("t1", EARLY, is_error=True)
    (uid,) = s.assistant(tools=[("t2", "Bash", {"command": "git push -u origin feature/sync-retry"})])
    s.result("t2", "branch 'feature/sync-retry' set up to track 'origin/feature/sync-retry'.")
    (uid,) = s.assistant(tools=[("t3", "Edit", {"file_path": "/app/src/sync.py", "old_string": "a", "new_string": "b"})])
    s.result("t3", "The file /app/src/sync.py has been updated successfully.")
    msgs = '   - "Fetch the branch feature/sync-retry and add retries to the order sync in src/sync.py"'
    s.compact(_summary(f"   - `git fetch origin feature/sync-retry`: {EARLY}; the branch was pushed first", msgs), "auto")
    s.user("this is good. now record each sync in the order_events table")
    (uid,) = s.assistant(tools=[("t4", "Bash", {"command": "python -m app.sync --once"})])
    s.result("t4", f"Traceback (most recent call last):\n  File \"app/sync.py\", line 3\n{LATE}", is_error=True)
    late = f"   - `python -m app.sync --once`: {LATE}; fixed by adding the migration" if second_keeps_late else "   - none"
    s.compact(_summary(late, msgs + '\n   - "this is good. now record each sync in the order_events table"'), "auto")
    s.user("thanks")
    s.assistant(text="Done.")
    return s.write(tmp_path / "sync.jsonl")


def _grade_verdicts(path):
    return [REGISTRY.run(c, [REGISTRY.get("errors_preserved")])[0] for c in cases_from_transcript(read_transcript(path))]


def _run_verdicts(path, tmp_path):
    result = import_transcript(path, mode="all")
    out, _ = write_scenario(result, tmp_path / "sync.yaml")
    outcome = evaluate_run(run_scenario(load_scenario(out)), REGISTRY, [REGISTRY.get("errors_preserved")])
    return result, [vs[0] for vs, c in zip(outcome.verdicts, outcome.cases) if c.kind == "transcript"]


@pytest.mark.parametrize("keeps", [True, False])
def test_run_and_grade_give_a_whole_line_the_same_verdicts(tmp_path, keeps):
    path = _session(tmp_path, second_keeps_late=keeps)
    graded = _grade_verdicts(path)
    result, run = _run_verdicts(path, tmp_path)
    assert [v.status for v in run] == [v.status for v in graded] == ["pass", "pass" if keeps else "fail"]
    if not keeps:   # the second summary drops its own error, not the early one summary 1 already told
        assert LATE in run[1].reasons[0] and EARLY not in " ".join(run[1].reasons)
    expect = result.document["expect"]
    assert "errors" not in expect and "intent" not in expect and "files" not in expect
    assert any("not pre-filled for a whole line" in n for n in result.notes)


def test_the_default_import_intent_is_the_request_without_its_acknowledgement(tmp_path):
    s = Session()
    s.user("Add retries to the order sync")
    s.assistant(text="Added.")
    s.user("this is good. commit it and open a PR")
    s.assistant(text="Committing.")
    result = import_transcript(s.write(tmp_path / "ack.jsonl"))
    assert result.document["expect"]["intent"] == "commit it and open a PR"


@pytest.mark.parametrize("typed, asked", [
    ("Looks great! Now run the tests", "Now run the tests"),
    ("thanks, ok. deploy it", "deploy it"),
    ("ok", "ok"),                                    # nothing else: the message whole
    ("good catch on the cache key, keep it", "good catch on the cache key, keep it"),
])
def test_request_part(typed, asked):
    assert _request_part(typed) == asked


def test_the_offline_heuristic_does_not_count_courtesy_as_intent():
    generation = _terms("Next: commit the plan and open a PR to merge into master.")
    assert _coverage("this is good, thanks. commit the plan and open a PR to merge into master", generation) == 1.0
    # a step the generation dropped still counts
    assert _coverage("this is good. commit the plan, open a PR and deploy to staging", generation) < 0.8
