"""Records of a type the reader does not know are never dropped in silence (review 5, #3 and #14):
one note per type (count, first line, whether on the conversation), an error under ``strict``, a
summary under an unknown type named on its own line; the types Claude Code writes (messages,
progress, snapshots, queue operations, titles, metadata) stay silent."""

from __future__ import annotations

import pytest

from pytest_ctxeval.errors import TranscriptError
from pytest_ctxeval.core.messages import person_text
from pytest_ctxeval.transcript import read_transcript

from session_kit import SESSION, Session

SUMMARY = ("This session is being continued from a previous conversation that ran out of context. "
           "Summary:\n1. Primary Request and Intent:\n   fix the parser\n")


def _renamed(s: Session, text: str, rtype: str) -> int:
    """A person's message written under another record type; returns its line."""
    s.add({"type": rtype, "message": {"role": "user", "content": text}})
    return len(s.records)


def test_an_unknown_type_on_the_chain_is_reported_with_its_line_and_the_chain_goes_on(tmp_path):
    s = Session()
    s.user("first request")
    s.assistant(text="ok")
    line = _renamed(s, "second request", "human")
    s.assistant(text="done")
    t = read_transcript(s.write(tmp_path / "s.jsonl"))
    assert [person_text(m) for m in t.messages if person_text(m)] == ["first request"]
    assert len(t.messages) == 3                      # the records after it are still read, in place
    assert t.messages[-1].content[0].text == "done"
    (problem,) = t.problems
    assert problem.line == line
    assert "unknown record type 'human' on the conversation chain; skipped" in problem.message
    assert "--strict" in problem.message


def test_unknown_records_are_counted_once_per_type_on_and_off_the_chain(tmp_path):
    s = Session()
    s.user("hi")
    first = _renamed(s, "typed", "human")
    s.assistant(text="hello")
    s.records.append({"type": "human", "uuid": "off-1", "parentUuid": None, "sessionId": SESSION})
    s.records.append({"type": "weird-new-thing", "uuid": "x1", "parentUuid": None, "foo": 1})
    t = read_transcript(s.write(tmp_path / "s.jsonl"))
    human, weird = sorted(t.problems, key=lambda p: p.line)
    assert human.line == first and human.message.startswith(
        "2 records of unknown type 'human' (the first on this line; 1 on the conversation chain)")
    assert weird.line == len(s.records) and "unknown record type 'weird-new-thing'; skipped" in weird.message
    assert "conversation chain" not in weird.message


def test_strict_refuses_an_unknown_type_naming_file_and_line(tmp_path):
    s = Session()
    s.user("hi")
    _renamed(s, "typed", "human")
    path = s.write(tmp_path / "s.jsonl")
    with pytest.raises(TranscriptError, match=r"s\.jsonl:2: unknown record type 'human' \(strict mode: .*"
                                               r"leave out --strict"):
        read_transcript(path, strict=True)


def test_a_summary_under_an_unknown_type_is_named_on_its_own_line(tmp_path):
    s = Session()
    s.user("fix the parser")
    s.assistant(text="fixing")
    last = s.parent
    s.parent = None
    s.add({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
           "logicalParentUuid": last, "compactMetadata": {"trigger": "manual", "preTokens": 5000}})
    s.add({"type": "assistantX", "isCompactSummary": True, "message": {"role": "user", "content": SUMMARY}})
    s.user("next")
    t = read_transcript(s.write(tmp_path / "s.jsonl"))
    (problem,) = t.problems
    assert problem.line == 4 and "isCompactSummary but unknown type 'assistantX'" in problem.message
    (c,) = t.compactions
    assert c.summary is None and "line 4 holds one, flagged isCompactSummary, but its record type is unknown" \
        in c.no_summary


def test_the_types_claude_code_writes_are_not_reported(tmp_path):
    s = Session()
    s.user("hi")
    s.noise()                                             # progress, file-history-snapshot, queue-operation
    s.add({"type": "system", "subtype": "stop_hook_summary"})
    s.add({"type": "system", "subtype": "some_future_subtype"})
    s.records.append({"type": "summary", "summary": "a title", "leafUuid": s.parent})
    s.records.append({"type": "result", "uuid": "r1", "session_id": SESSION})  # SDK's closing record, in an export
    for kind in ("custom-title", "ai-title", "agent-name", "worktree-state", "a-future-metadata-kind"):
        s.records.append({"type": kind, "sessionId": SESSION})      # no uuid, no message: metadata
    s.assistant(text="hello")
    t = read_transcript(s.write(tmp_path / "s.jsonl"), strict=True)
    assert t.problems == [] and len(t.messages) == 2


def test_a_file_of_unknown_types_only_says_so(tmp_path):
    s = Session()
    _renamed(s, "typed", "human")
    _renamed(s, "more", "human")
    with pytest.raises(TranscriptError, match=r"no user or assistant records \(0 bad lines; 2 records of unknown "
                                               r"type 'human'\)"):
        read_transcript(s.write(tmp_path / "s.jsonl"))
