"""Words the person types when rejecting a tool use are a message of theirs (review 3, F14): the graders
that read person messages require them, and only the typed words, not Claude Code's rejection text."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_ctxeval.reading.extract import person_messages
from pytest_ctxeval.reading.feedback import rejection_feedback
from pytest_ctxeval.transcript.jsonl import read_transcript

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: shared_paths
from shared_paths import CORPUS_DIR, needs_shared

REJECTED = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
            "edit, the new_string was NOT written to the file).")
FIRST = "Add a weekly digest e-mail job in jobs/digest.py"
STEER = "leave jobs/digest.py alone, put the job in jobs/weekly.py and never send on Sundays"
SHAPES = {
    "2.1.50": f"{REJECTED} To tell you how to proceed, the user said:\n{STEER}",
    # later versions append a note to the model after the person's words
    "note": (f"{REJECTED} To tell you how to proceed, the user said:\n{STEER}\n\nNote: The user's next message may "
             "contain a correction or preference. Pay close attention to it."),
    "subagent": f"Permission for this tool use was denied. The tool use was rejected. The user said:\n{STEER}",
}


def _session(kit, feedback: str):
    edit = kit.call("Edit", {"file_path": "/home/me/app/jobs/digest.py", "old_string": "a", "new_string": "b"})
    return [kit.user(FIRST), kit.say("I'll add it to jobs/digest.py."), edit,
            kit.answer(edit, feedback, is_error=True),
            *kit.tool("Write", {"file_path": "/home/me/app/jobs/weekly.py", "content": "def run(): ..."},
                      "File created successfully at: /home/me/app/jobs/weekly.py")]


def _summary(kit, *, kept: bool):
    messages = f'- "{FIRST}"' + (f'\n- "{STEER}"' if kept else "")
    step = (f'Test jobs/weekly.py: the user said "{STEER}".' if kept
            else f'Add the job to jobs/digest.py, as asked: "{FIRST}".')
    return kit.summary({"request": "A weekly digest job.", "concepts": "cron", "files": "- jobs/weekly.py: created",
                        "errors": "None.", "solving": "Done.", "user_messages": messages, "pending": "None.",
                        "current": "Wrote jobs/weekly.py.", "next": step})


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_typed_words_are_a_person_message(kit, shape):
    people = person_messages(_session(kit, SHAPES[shape]))
    assert [p.text for p in people] == [FIRST, STEER]


@pytest.mark.parametrize("text", [
    f"{REJECTED} STOP what you are doing and wait for the user to tell you how to proceed.",
    "User rejected tool use",
    f"{REJECTED} To tell you how to proceed, the user said:\n",
    # Claude Code's words when the person picks "clarify" on an AskUserQuestion: not typed by them
    (f"{REJECTED} To tell you how to proceed, the user said:\nThe user wants to clarify these questions.\n"
     "    Start by asking them what they would like to clarify.\n\n    Questions asked:\n- \"Which queue?\""),
    # a file that merely holds the sentence (a Read of a log) is no rejection
    f"     1→{REJECTED} To tell you how to proceed, the user said:\n{STEER}",
])
def test_a_rejection_with_nothing_typed_is_no_message(kit, text):
    assert [p.text for p in person_messages(_session(kit, text))] == [FIRST]


@pytest.mark.parametrize("grader", ["verbatim_user_messages", "last_request_intact", "next_step_quote"])
def test_graders_require_the_feedback(grade, kit, grader):
    messages = _session(kit, SHAPES["2.1.50"])
    good = grade(grader, kit.case(messages, _summary(kit, kept=True)))
    assert good.status == "pass", good.reasons
    bad = grade(grader, kit.case(messages, _summary(kit, kept=False)))
    assert bad.status == "fail", bad.reasons
    assert "leave jobs/digest.py alone" in bad.reasons[0]
    if grader == "verbatim_user_messages":
        assert "user message 2 of 2" in bad.reasons[0] and "rejecting a tool use" in bad.reasons[0]
        assert "want to proceed" not in bad.reasons[0]


@needs_shared
def test_corpus_rejections_of_every_shape():
    """2.1.49/2.1.50 write the person's words after "the user said:"; a rejection with none, and the
    AskUserQuestion "clarify" text, are no message."""
    found = {}
    for name in ("fenv-org__mementor__2.1.50-auto-planmode-rejects-063071b3.jsonl",
                 "FSM1__cipher-box__2.1.49-manual-rejects-12f1f541.jsonl"):
        messages = read_transcript(CORPUS_DIR / name).messages
        found[name[:9]] = [t for m in messages if (t := rejection_feedback(m))]
    assert len(found["fenv-org_"]) == 4
    assert found["fenv-org_"][0].startswith("perhaps, now it's the time to extract rust coding convention")
    assert not any("want to proceed" in t or "Note:" in t for t in found["fenv-org_"])
    assert found["FSM1__cip"] == []
