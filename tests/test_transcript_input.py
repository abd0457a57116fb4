"""The transcript reader on bad input and the writer's round trip: files written here, so a bare
clone (no shared corpus) runs them. The real corpus is read in ``test_transcript.py``."""

from __future__ import annotations

import json
from datetime import datetime, UTC

import pytest

from pytest_ctxeval.errors import TranscriptError
from pytest_ctxeval.core.messages import (
    AssistantMessage, AttachmentMessage, CompactBoundary, TextBlock, ToolResultBlock, ToolUseBlock, Usage,
    UserMessage, to_api, validate_api,
)
from pytest_ctxeval.transcript.jsonl import RecordProblem
from pytest_ctxeval.transcript import TranscriptWriter, read_transcript, record_for


# --- bad input ------------------------------------------------------------------------------------

def _rec(uid, rtype, parent, content, **extra):
    role = "assistant" if rtype == "assistant" else "user"
    body = {"role": role, "content": content}
    if rtype == "assistant":
        body["id"] = f"msg_{uid}"
    return {"type": rtype, "uuid": uid, "parentUuid": parent, "isSidechain": False, "sessionId": "s",
            "timestamp": "2025-01-01T00:00:00.000Z", "message": body, **extra}


def _line(obj) -> bytes:
    return (json.dumps(obj) + "\n").encode("utf-8")


def test_bad_lines_are_reported_and_the_rest_read(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"".join([
        _line(_rec("u1", "user", None, "hello")),                     # 1
        b'{"type": "assistant", "uuid": "zz", "message": {"con\n',     # 2 truncated JSON
        b"[1, 2, 3]\n",                                               # 3 not an object
        _line({"uuid": "x9", "parentUuid": "u1"}),                    # 4 no type
        b'{"type": "user", "uuid": "bad\xff\xfe", "message": {}}\n',   # 5 invalid UTF-8
        b'{"type": "user",\x00 "uuid": "nul"}\n',                     # 6 NUL byte
        b"\n",                                                        # 7 blank: not a problem
        _line(_rec("a1", "assistant", "u1", [{"type": "text", "text": "hi there"}])),  # 8
        _line(_rec("u2", "user", "a1", "next please")),               # 9
    ]))
    t = read_transcript(path)
    assert [p.line for p in t.problems] == [2, 3, 4, 5, 6]
    messages = [p.message for p in t.problems]
    assert "not valid JSON" in messages[0]
    assert "expected a JSON object, got list" in messages[1]
    assert "no 'type'" in messages[2]
    assert "not UTF-8" in messages[3]
    assert "line skipped" in messages[4]
    assert str(t.problems[0]).startswith("line 2: ")
    assert [m.uuid for m in t.messages] == ["u1", "a1", "u2"]
    assert [t.line_of[m.uuid] for m in t.messages] == [1, 8, 9]
    assert t.messages[1].content == [TextBlock(text="hi there")]


def test_missing_parent_is_reported(tmp_path):
    path = tmp_path / "orphan.jsonl"
    path.write_bytes(_line(_rec("u1", "user", "ghost-uuid", "hello"))
                     + _line(_rec("a1", "assistant", "u1", [{"type": "text", "text": "hi"}])))
    t = read_transcript(path)
    assert [m.uuid for m in t.messages] == ["u1", "a1"]
    assert len(t.problems) == 1
    assert t.problems[0].line == 1 and "ghost-uuid" in t.problems[0].message


def test_parent_cycle_is_reported(tmp_path):
    path = tmp_path / "cycle.jsonl"
    path.write_bytes(_line(_rec("u1", "user", "a1", "hello"))
                     + _line(_rec("a1", "assistant", "u1", [{"type": "text", "text": "hi"}]))
                     + _line(_rec("u2", "user", "a1", "again")))
    t = read_transcript(path)
    assert [m.uuid for m in t.messages] == ["u1", "a1", "u2"]
    assert len(t.problems) == 1
    assert t.problems[0].line == 2 and "loops" in t.problems[0].message


def test_duplicate_uuid_and_invalid_block_are_reported(tmp_path):
    path = tmp_path / "dup.jsonl"
    path.write_bytes(_line(_rec("u1", "user", None, "first"))
                     + _line(_rec("a1", "assistant", "u1", [{"type": "text", "text": "ok"},
                                                            {"type": "tool_use", "name": "NoId"}]))
                     + _line(_rec("u1", "user", None, "second")))
    t = read_transcript(path)
    assert sorted(p.line for p in t.problems) == [2, 3]
    assert any("1 record repeats a uuid" in p.message and p.line == 3 for p in t.problems)
    # The repeat does not become the newest leaf: the conversation read is the first copy's.
    assert [m.uuid for m in t.messages] == ["u1", "a1"] and t.messages[0].content == "first"
    path.write_bytes(_line(_rec("u1", "user", None, "first"))
                     + _line(_rec("a1", "assistant", "u1", [{"type": "text", "text": "ok"},
                                                            {"type": "tool_use", "name": "NoId"}])))
    t = read_transcript(path)
    assert len(t.problems) == 1 and t.problems[0].line == 2
    assert "message.content[1] (tool_use)" in t.problems[0].message
    assert t.messages[1].content == [TextBlock(text="ok")]


def test_missing_file_raises_with_path(tmp_path):
    path = tmp_path / "nope.jsonl"
    with pytest.raises(TranscriptError) as info:
        read_transcript(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("body", [
    b"",
    b"\n\n",
    b'{"type": "summary", "summary": "A title", "leafUuid": "x"}\n{"type": "progress", "data": {}}\n',
    b"not json\n[1]\n",
])
def test_file_without_conversation_raises_with_path(tmp_path, body):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(body)
    with pytest.raises(TranscriptError) as info:
        read_transcript(path)
    assert str(path) in str(info.value)


def test_directory_is_not_a_transcript(tmp_path):
    with pytest.raises(TranscriptError, match=str(tmp_path)) as info:
        read_transcript(tmp_path)
    assert "is a folder; give one session's .jsonl file" in str(info.value)


def test_progress_records_between_messages_are_walked_through(tmp_path):
    path = tmp_path / "progress.jsonl"
    path.write_bytes(_line(_rec("u1", "user", None, "go"))
                     + _line({"type": "progress", "uuid": "p1", "parentUuid": "u1", "data": {}})
                     + _line(_rec("a1", "assistant", "p1", [{"type": "text", "text": "done"}])))
    t = read_transcript(path)
    assert [m.uuid for m in t.messages] == ["u1", "a1"]
    assert t.problems == []


# --- writer round trip ----------------------------------------------------------------------------

TS = datetime(2025, 3, 4, 5, 6, 7, 891000, tzinfo=UTC)


def _session():
    return [
        UserMessage(uuid="u1", timestamp=TS, content="fix the failing login test"),
        AssistantMessage(uuid="a1", timestamp=TS, message_id="msg_a1", model="claude-test",
                         content=[TextBlock(text="Running tests."),
                                  ToolUseBlock(id="toolu_1", name="Bash", input={"command": "pytest -q"})],
                         usage=Usage(input_tokens=1200, output_tokens=40, cache_creation_input_tokens=7,
                                     cache_read_input_tokens=300)),
        UserMessage(uuid="r1", timestamp=TS, content=[ToolResultBlock(tool_use_id="toolu_1",
                                                                      content="1 failed", is_error=True)]),
        AttachmentMessage(uuid="at1", timestamp=TS, attachment_type="file", content="def login(): ...",
                          path="/src/auth.py"),
        UserMessage(uuid="m1", timestamp=TS, content="Caveat: local command output", is_meta=True),
        CompactBoundary(uuid="b1", timestamp=TS, trigger="manual", pre_tokens=54_321, logical_parent_uuid="m1"),
        UserMessage(uuid="s1", timestamp=TS, is_compact_summary=True,
                    content="This session is being continued from a previous conversation.\nSummary:\n"
                            "1. Primary Request and Intent:\n   fix the failing login test"),
        UserMessage(uuid="u2", timestamp=TS, content="go on"),
    ]


def test_writer_round_trip(tmp_path):
    path = tmp_path / "sub" / "session.jsonl"
    session = _session()
    with TranscriptWriter(path, session_id="sess-1", version="9.9.9") as writer:
        for message in session:
            writer.append(message)
    assert writer.records == len(session)
    t = read_transcript(path)
    assert t.problems == []
    assert t.session_id == "sess-1" and t.version == "9.9.9"
    assert t.messages == session
    assert [t.line_of[m.uuid] for m in t.messages] == list(range(1, 9))
    (c,) = t.compactions
    assert c.boundary.trigger == "manual" and c.boundary.pre_tokens == 54_321
    assert (c.boundary_line, c.summary_line) == (6, 7)
    assert c.summary.uuid == "s1"
    assert [m.uuid for m in c.before] == ["u1", "a1", "r1", "at1", "m1"]
    assert [m.uuid for m in c.after] == ["b1", "s1", "u2"]
    assert validate_api(to_api(t.messages)) == []


def test_writer_records_have_claude_code_shape(tmp_path):
    path = tmp_path / "s.jsonl"
    with TranscriptWriter(path, session_id="s") as writer:
        for message in _session():
            writer.append(message)
    records = [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines()]
    assert [r["type"] for r in records] == ["user", "assistant", "user", "attachment", "user", "system", "user",
                                            "user"]
    assert records[0]["parentUuid"] is None
    assert [r["parentUuid"] for r in records[1:5]] == ["u1", "a1", "r1", "at1"]
    boundary = records[5]
    assert boundary["parentUuid"] is None and boundary["logicalParentUuid"] == "m1"
    assert boundary["subtype"] == "compact_boundary"
    assert boundary["compactMetadata"] == {"trigger": "manual", "preTokens": 54_321}
    assert records[6]["isCompactSummary"] is True and records[6]["parentUuid"] == "b1"
    assert records[4]["isMeta"] is True
    assert records[1]["message"]["usage"]["cache_read_input_tokens"] == 300
    assert records[0]["timestamp"] == "2025-03-04T05:06:07.891Z"
    assert "is_error" in records[2]["message"]["content"][0]


def test_writer_boundary_without_logical_parent_uses_previous_record():
    rec = record_for(CompactBoundary(uuid="b"), parent_uuid="prev", session_id="s", version="v")
    assert rec["parentUuid"] is None and rec["logicalParentUuid"] == "prev"


def test_writer_flushes_each_record(tmp_path):
    path = tmp_path / "live.jsonl"
    session = _session()
    writer = TranscriptWriter(path, session_id="s")
    try:
        writer.append(session[0])
        assert [m.uuid for m in read_transcript(path).messages] == ["u1"]
        writer.append(session[1])
        writer.append(session[2])
        t = read_transcript(path)
        assert [m.uuid for m in t.messages] == ["u1", "a1", "r1"]
        assert t.messages[1].usage.context_tokens == 1200 + 40 + 7 + 300
    finally:
        writer.close()
    writer.close()  # idempotent


def test_writer_appends_to_existing_file_and_explicit_parent(tmp_path):
    path = tmp_path / "s.jsonl"
    with TranscriptWriter(path, session_id="s") as w:
        w.append(UserMessage(uuid="u1", content="one"))
    with TranscriptWriter(path, session_id="s") as w:
        w.append(AssistantMessage(uuid="a1", content=[TextBlock(text="two")]), parent_uuid="u1")
    t = read_transcript(path)
    assert [m.uuid for m in t.messages] == ["u1", "a1"]


def test_writer_two_compactions(tmp_path):
    path = tmp_path / "two.jsonl"
    msgs = [
        UserMessage(uuid="u1", timestamp=TS, content="one"),
        AssistantMessage(uuid="a1", timestamp=TS, message_id="m1", model="c", content=[TextBlock(text="r1")]),
        CompactBoundary(uuid="b1", timestamp=TS, trigger="auto", pre_tokens=100, logical_parent_uuid="a1"),
        UserMessage(uuid="s1", timestamp=TS, content="summary one", is_compact_summary=True),
        UserMessage(uuid="u2", timestamp=TS, content="two"),
        AssistantMessage(uuid="a2", timestamp=TS, message_id="m2", model="c", content=[TextBlock(text="r2")]),
        CompactBoundary(uuid="b2", timestamp=TS, trigger="auto", pre_tokens=200, logical_parent_uuid="a2"),
        UserMessage(uuid="s2", timestamp=TS, content="summary two", is_compact_summary=True),
    ]
    with TranscriptWriter(path, session_id="s") as w:
        for m in msgs:
            w.append(m)
    t = read_transcript(path)
    assert t.messages == msgs
    first, second = t.compactions
    assert (first.index, second.index) == (1, 2)
    assert [m.uuid for m in first.before] == ["u1", "a1"]
    assert [m.uuid for m in second.before] == ["s1", "u2", "a2"]
    assert [m.uuid for m in second.history] == ["u1", "a1", "s1", "u2", "a2"]
    assert [m.uuid for m in first.after] == ["b1", "s1", "u2", "a2"]
    assert second.summary_text == "summary two" and second.boundary.pre_tokens == 200
    assert (second.boundary_line, second.summary_line) == (7, 8)


@pytest.mark.parametrize("msg", [
    UserMessage(uuid="u1", timestamp=datetime(2025, 1, 1, 0, 0, 0, 123456, tzinfo=UTC), content="x"),
    AssistantMessage(uuid="a1", timestamp=TS, message_id="m1", content=[TextBlock(text="x")]),
], ids=["timestamp", "model"])
def test_writer_round_trip_loses_nothing(tmp_path, msg):
    path = tmp_path / "ts.jsonl"
    with TranscriptWriter(path, session_id="s") as w:
        w.append(msg)
    assert read_transcript(path).messages == [msg]


def test_writer_round_trip_assistant_without_message_id(tmp_path):
    path = tmp_path / "ids.jsonl"
    msgs = [
        UserMessage(uuid="scenario-login-user-0001", timestamp=TS, content="go"),
        AssistantMessage(uuid="scenario-login-assistant-0001", timestamp=TS,
                         content=[ToolUseBlock(id="t1", name="Bash", input={"command": "ls"})]),
        UserMessage(uuid="scenario-login-result-0001", timestamp=TS,
                    content=[ToolResultBlock(tool_use_id="t1", content="ok")]),
        AssistantMessage(uuid="scenario-login-assistant-0002", timestamp=TS, content=[TextBlock(text="done")]),
    ]
    with TranscriptWriter(path, session_id="s") as w:
        for m in msgs:
            w.append(m)
    assert [m.uuid for m in read_transcript(path).messages] == [m.uuid for m in msgs]


def test_problem_str():
    assert str(RecordProblem(12, "oops")) == "line 12: oops"
