"""Text Claude Code writes into a user record is not person-typed (review finding A1).

A background command or agent finishing comes back as a user record of its own: a
``<task-notification>`` element and a trailer line Claude Code appends after it ("Full transcript
available at: <path>" for an agent, 2.1.69; "Read the output file to retrieve the result: <path>"
for a background command, 2.1.49). Neither was typed, so no grader may ask a summary to keep them,
count them among the person's messages, or take one for the most recent request; ``ctxeval import``
marks such records ``meta``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_ctxeval.core.messages import UserMessage, person_text
from pytest_ctxeval.grading.registry import cases_from_transcript
from pytest_ctxeval.scenario import load_scenario
from pytest_ctxeval.scenario.importer import import_transcript, write_scenario
from pytest_ctxeval.transcript import read_transcript

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: session_kit, shared_paths
from session_kit import Session
from shared_paths import CORPUS_DIR, needs_shared

AGENT_DONE = ("<task-notification>\n<task-id>ab02f0b2ab5d6f7a7</task-id>\n<tool-use-id>toolu_01</tool-use-id>\n"
              "<status>completed</status>\n<summary>Agent \"schema critique\" completed</summary>\n"
              "<result>Use a dedicated session_facets table.</result>\n<usage><total_tokens>53476</total_tokens>"
              "</usage>\n</task-notification>\n"
              "Full transcript available at: /private/tmp/claude-501/-Users-me-app/tasks/ab02f0b2ab5d6f7a7.output")
COMMAND_DONE = ("<task-notification>\n<task-id>bf7a97f</task-id>\n<tool-use-id>REDACTED</tool-use-id>\n"
                "<output-file>/tmp/claude-1000/-home-me-app/tasks/bf7a97f.output</output-file>\n"
                "<status>completed</status>\n<summary>Background command \"Start web dev server\" completed "
                "(exit code 0)</summary>\n</task-notification>\n"
                "Read the output file to retrieve the result: /tmp/claude-1000/-home-me-app/tasks/bf7a97f.output")
#: A trailer in wording not seen yet, pointing at the task's output file: Claude Code's by its shape.
NEW_WORDING = COMMAND_DONE.replace("Read the output file to retrieve the result", "Output saved to")
CODE_INSIGHTS = "melagiri__code-insights__2.1.69-two-auto-toolsearch-3cbc097a.jsonl"


@pytest.mark.parametrize("content, typed", [
    (AGENT_DONE, None),
    (COMMAND_DONE, None),
    (NEW_WORDING, None),
    (COMMAND_DONE.replace("/tmp/claude-1000/-home-me-app/tasks/bf7a97f.output", "REDACTED.output"), None),
    # the person's own words around a notification still count (a queued message merged with it)
    (AGENT_DONE + "\nok, apply the reviewers' points", "ok, apply the reviewers' points"),
    ("look at this first\n" + COMMAND_DONE, "look at this first"),
    # a line after the element that does not point at the task's output is the person's
    (COMMAND_DONE.rsplit("\n", 1)[0] + "\nSee: /tmp/other.log", "See: /tmp/other.log"),
])
def test_a_notification_and_its_trailer_are_not_typed(content, typed):
    assert person_text(UserMessage(uuid="u", content=content)) == typed
    assert person_text(UserMessage(uuid="u", content=[{"type": "text", "text": content}])) == typed


def _session(kit):
    """Two typed requests, an agent launched, its notification arriving last."""
    return [kit.user("Review the facets design with three experts"), kit.say("Launching three reviewers."),
            *kit.tool("Agent", {"prompt": "critique the schema"}, "Launched in the background"),
            kit.user("while they run, fix the typo in docs/facets.md"), kit.say("Fixed."),
            kit.user(AGENT_DONE), kit.say("The schema reviewer suggests a dedicated table."),
            kit.user(COMMAND_DONE)]


def _summary(kit, messages: str, next_step: str) -> str:
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies.update(user_messages=messages, next=next_step)
    return kit.summary(bodies)


GOOD_MESSAGES = '- "Review the facets design with three experts"\n- "while they run, fix the typo in docs/facets.md"'
GOOD_NEXT = 'Apply the review. The user said: "while they run, fix the typo in docs/facets.md"'


def test_verbatim_user_messages_counts_only_typed_messages(grade, kit):
    msgs = _session(kit)
    verdict = grade("verbatim_user_messages", kit.case(msgs, _summary(kit, GOOD_MESSAGES, GOOD_NEXT)))
    assert verdict.status == "pass", verdict.reasons
    assert "all 2 person-typed messages" in verdict.reasons[0]
    bad = _summary(kit, '- "Review the facets design with three experts"', GOOD_NEXT)
    verdict = grade("verbatim_user_messages", kit.case(msgs, bad))
    assert verdict.status == "fail" and verdict.score == 0.5
    assert len(verdict.reasons) == 1 and "user message 2 of 2" in verdict.reasons[0]
    assert "fix the typo" in verdict.reasons[0]
    assert not any("transcript available" in r or "output file" in r for r in verdict.reasons)


def test_the_last_request_is_the_persons_not_a_notification(grade, kit):
    msgs = _session(kit)
    good = _summary(kit, GOOD_MESSAGES, GOOD_NEXT)
    for name in ("last_request_intact", "next_step_quote"):
        verdict = grade(name, kit.case(msgs, good))
        assert verdict.status == "pass", (name, verdict.reasons)
    lost = _summary(kit, '- "Review the facets design with three experts"', "Apply the review.")
    verdict = grade("last_request_intact", kit.case(msgs, lost))
    assert verdict.status == "fail" and "fix the typo in docs/facets.md" in verdict.reasons[0]
    verdict = grade("next_step_quote", kit.case(msgs, lost))
    assert verdict.status == "fail" and "fix the typo in docs/facets.md" in verdict.reasons[0]
    assert "Read the output file" not in verdict.reasons[0] and "transcript available" not in verdict.reasons[0]


def test_import_marks_a_notification_meta(tmp_path):
    s = Session(version="2.1.69")
    s.user("start the dev server in the background")
    s.assistant(tools=[("toolu_01", "Bash", {"command": "npm run dev", "run_in_background": True})])
    s.result("toolu_01", "Command running in background with ID: bf7a97f")
    s.assistant(text="Started.")
    s.user(COMMAND_DONE)
    s.assistant(text="The server is up.")
    s.user("now open the login page")
    s.assistant(text="Opening it.")
    result = import_transcript(s.write(tmp_path / "s.jsonl"))
    out, _ = write_scenario(result, tmp_path / "s.yaml")
    turns = [t for t in load_scenario(out).turns if hasattr(t, "user")]
    assert [(t.meta, t.user[:30]) for t in turns] == [
        (False, "start the dev server in the ba"), (True, "<task-notification>\n<task-id>b"),
        (False, "now open the login page")]
    assert result.counts["client_text"] == 1 and result.counts["user"] == 2


@needs_shared
def test_code_insights_agent_notifications_are_not_typed_messages():
    """melagiri 2.1.69, lines 288, 297, 304: three agents' notifications; the summaries' true defects
    (messages 5 and 9 shortened with "...", message 11 missing) still fail compaction 1."""
    transcript = read_transcript(CORPUS_DIR / CODE_INSIGHTS)
    notified = [m for m in transcript.messages if isinstance(m, UserMessage) and "<task-notification>" in str(m.content)]
    assert len(notified) == 3 and all(person_text(m) is None for m in notified)
    from pytest_ctxeval.grading import load_graders
    registry = load_graders()
    first = cases_from_transcript(transcript)[0]
    (verdict,) = registry.run(first, [registry.get("verbatim_user_messages")])
    assert verdict.status == "fail"
    assert [r.split(" is not")[0] for r in verdict.reasons] == [
        "user message 5 of 16", "user message 9 of 16", "user message 11 of 16"]
    assert not any("Full transcript" in r for r in verdict.reasons)
