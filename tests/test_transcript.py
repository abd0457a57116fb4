"""Tests for pytest_ctxeval.transcript: the real corpus, bad input, and the writer round trip."""

from __future__ import annotations

import json
from datetime import datetime, UTC
from pathlib import Path

import pytest

from pytest_ctxeval.errors import TranscriptError
from pytest_ctxeval.core.messages import (
    AssistantMessage, AttachmentMessage, CompactBoundary, TextBlock, ToolResultBlock, ToolUseBlock, Usage,
    UserMessage, is_person_typed, person_text, to_api, tool_results, tool_uses, validate_api,
)
from pytest_ctxeval.transcript.jsonl import RecordProblem
from pytest_ctxeval.transcript import TranscriptWriter, read_transcript, record_for

from shared_paths import CORPUS
FILES = sorted(CORPUS.glob("*.jsonl"))
FASTHOOKS = CORPUS / "oneryalcin__fasthooks__sample_main_transcript.jsonl"
THISNESS = CORPUS / "M-Thisness__M-Claude__97b0ffde-ece9-4977-91cb-5c8cdeabdf3f.jsonl"
SPOTTER = CORPUS / "marot__spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20__prefix-715.jsonl"
ACOMPACT = CORPUS / "marot__spotter__agent-acompact-f46190.jsonl"

_CACHE: dict[Path, object] = {}


def read(path: Path):
    """read_transcript, once per corpus file (the spotter file is 1.5 MB)."""
    if path not in _CACHE:
        _CACHE[path] = read_transcript(path)
    return _CACHE[path]


def test_corpus_is_complete():
    assert len(FILES) >= 8
    assert {FASTHOOKS, THISNESS, SPOTTER, ACOMPACT} <= set(FILES)


# --- every corpus file --------------------------------------------------------------------------

@pytest.mark.parametrize("path", FILES, ids=[p.name[:40] for p in FILES])
def test_corpus_file_reads_and_normalises_to_valid_api(path):
    t = read(path)
    assert t.messages, path.name
    # Each stretch between compactions is a valid request; a stretch may end on a call whose result
    # record was never written (a 2.1.49 boundary names that missing result as its logical parent).
    cuts = [i for i, m in enumerate(t.messages) if isinstance(m, CompactBoundary)] + [len(t.messages)]
    start = 0
    for cut in cuts:
        assert validate_api(to_api(t.messages[start:cut]), allow_pending_tool_use=True) == [], (path.name, start)
        start = cut + 1
    if path == ACOMPACT:
        # The compaction call's first record hangs off the main session, which is not in this file.
        assert [p.line for p in t.problems] == [6]
        assert "is not in the file" in t.problems[0].message
    elif "2.1.149" in path.name:
        # A resumed session wrote 588 records of its history again: reported once, first copies used.
        assert [p.line for p in t.problems] == [725] and "588 record(s) repeat a uuid" in t.problems[0].message
    else:
        assert t.problems == []
    # every message knows its line in the file
    total = path.read_bytes().count(b"\n") + 1
    assert all(1 <= t.line_of[m.uuid] <= total for m in t.messages)


PERSON_COUNTS = {
    "oneryalcin__fasthooks__sample_main_transcript.jsonl": 5,
    "M-Thisness__M-Claude__97b0ffde-ece9-4977-91cb-5c8cdeabdf3f.jsonl": 4,
    "marot__spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20__prefix-715.jsonl": 1,
    "moredip__session-share__images-in-user-messages.jsonl": 2,
    # /orchestrator's arguments are typed by the person, as is the reply after it.
    "d-kimuson__claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": 2,
    "marot__spotter__subagent.jsonl": 2,
}


@pytest.mark.parametrize("name,count", sorted(PERSON_COUNTS.items()), ids=lambda v: str(v)[:30])
def test_person_typed_counts(name, count):
    t = read(CORPUS / name)
    assert sum(is_person_typed(m) for m in t.messages) == count


def test_person_typed_texts_in_other_files():
    assert [person_text(m) for m in read(THISNESS).messages if is_person_typed(m)] == [
        "ssh into my router", "I want you to figureout the router address and ssh into it",
        "docker status", "check service status"]
    images = read(CORPUS / "moredip__session-share__images-in-user-messages.jsonl")
    assert [person_text(m) for m in images.messages if is_person_typed(m)] == [
        "what's this an image of?", "what's the session iD?"]
    kimuson = read(CORPUS / "d-kimuson__claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
    assert [person_text(m) for m in kimuson.messages if is_person_typed(m)] == [
        "create TODO app by Next.js", "Thanks! Please update CLAUDE.md for current changes"]
    assert kimuson.sidechain_records > 0
    subagent = read(CORPUS / "marot__spotter__subagent.jsonl")
    typed = [person_text(m) for m in subagent.messages if is_person_typed(m)]
    assert typed[0].startswith("websearch to learn how to fastest setup credo")   # /handgemacht:create-beads's arguments
    assert typed[1:] == ["create the beads"]


def test_fasthooks_golden_person_messages():
    t = read(FASTHOOKS)
    typed = [(t.line_of[m.uuid], person_text(m)) for m in t.messages if is_person_typed(m)]
    assert typed == [
        (2, "can you run a command ls -la "),
        (10, "ok can you create a hello_world.py file and add a minimal code in it? "),
        (19, "can you read it back with Read tool? "),
        (27, "can you run `cat nonexistent.txt`"),
        (35, "do something requiring multiple tools in one turn, "),
    ]


def test_fasthooks_metadata_and_merging():
    t = read(FASTHOOKS)
    assert t.version == "2.0.76"
    assert t.session_id is not None
    assert len(t.messages) == 32
    # Assistant records sharing message.id are merged: a thinking block and three parallel calls.
    parallel = [m for m in t.messages if isinstance(m, AssistantMessage) and len(tool_uses(m)) == 3]
    assert len(parallel) == 1
    assert [b.type for b in parallel[0].content] == ["thinking", "tool_use", "tool_use", "tool_use"]
    # The error results are read with is_error.
    errors = [r.content for m in t.messages for r in tool_results(m) if r.is_error]
    assert errors == ["Exit code 1\ncat: nonexistent.txt: No such file or directory",
                      "Exit code 127\n/bin/bash: line 1: python: command not found"]


# --- compactions ----------------------------------------------------------------------------------

COMPACTIONS = [
    (FASTHOOKS, 59, 60, "manual", 21_558),
    (THISNESS, 138, 139, "manual", 31_469),
    (SPOTTER, 714, 715, "auto", 167_731),
]


def _raw_line(path: Path, number: int) -> dict:
    with path.open(encoding="utf-8") as fh:
        for n, raw in enumerate(fh, start=1):
            if n == number:
                return json.loads(raw)
    raise AssertionError(f"{path} has no line {number}")


@pytest.mark.parametrize("path,boundary_line,summary_line,trigger,pre", COMPACTIONS,
                         ids=["fasthooks", "M-Thisness", "spotter"])
def test_corpus_compactions(path, boundary_line, summary_line, trigger, pre):
    raw = _raw_line(path, boundary_line)
    assert raw["subtype"] == "compact_boundary"
    assert (raw["compactMetadata"]["trigger"], raw["compactMetadata"]["preTokens"]) == (trigger, pre)
    t = read(path)
    (c,) = t.compactions
    assert c.index == 1
    assert (c.boundary_line, c.summary_line) == (boundary_line, summary_line)
    assert c.boundary.trigger == trigger and c.boundary.pre_tokens == pre
    assert c.boundary.uuid == raw["uuid"]
    assert c.boundary.logical_parent_uuid == raw["logicalParentUuid"]
    assert c.summary is not None and c.summary.is_compact_summary
    assert c.summary_text.startswith("This session is being continued from a previous conversation")
    assert c.before and not any(isinstance(m, CompactBoundary) for m in c.before)
    assert c.history == c.before  # the first compaction: nothing summarised before it
    assert c.after[0] is c.boundary and c.after[1] is c.summary
    # the summarised context ends with the boundary's logical parent (or a merged response holding it)
    assert t.line_of[c.before[-1].uuid] <= boundary_line


@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith(("d-kimuson", "marot__spotter__agent",
                                                                       "marot__spotter__subagent", "moredip"))],
                         ids=lambda p: p.name[:30])
def test_corpus_files_without_compaction(path):
    assert read(path).compactions == []


def test_summary_records_are_titles_not_compactions():
    t = read(THISNESS)
    assert t.title is not None and isinstance(t.title, str)
    assert len(t.compactions) == 1


# --- parallel tool calls on sibling branches (spotter) ---------------------------------------------

def _raw_chain_ids(path: Path) -> tuple[set[str], set[str], set[str]]:
    """tool_use ids on the raw parent chain, tool_result ids on it, and all tool_result ids in the file."""
    records = {}
    last = None
    all_results: set[str] = set()
    with path.open(encoding="utf-8") as fh:
        for raw in fh:
            rec = json.loads(raw)
            if "uuid" in rec:
                records[rec["uuid"]] = rec
            if rec.get("type") in ("user", "assistant", "system") and not rec.get("isSidechain"):
                last = rec["uuid"]
            content = rec.get("message", {}).get("content") if isinstance(rec.get("message"), dict) else None
            if rec.get("type") == "user" and isinstance(content, list):
                all_results |= {b["tool_use_id"] for b in content if b.get("type") == "tool_result"}
    uses, answered = set(), set()
    cur = last
    while cur in records:
        rec = records[cur]
        content = rec.get("message", {}).get("content") if isinstance(rec.get("message"), dict) else None
        if isinstance(content, list):
            uses |= {b["id"] for b in content if b.get("type") == "tool_use"}
            answered |= {b["tool_use_id"] for b in content if b.get("type") == "tool_result"}
        cur = rec.get("parentUuid") or rec.get("logicalParentUuid")
    return uses, answered, all_results


def test_spotter_parallel_results_on_sibling_branches_are_recovered():
    uses, answered_on_path, all_results = _raw_chain_ids(SPOTTER)
    off_path = (uses - answered_on_path) & all_results
    assert len(off_path) >= 1, "the fixture should have results off the leaf's parent path"
    t = read(SPOTTER)
    called = {b.id for m in t.messages for b in tool_uses(m)}
    answered = {b.tool_use_id for m in t.messages for b in tool_results(m)}
    assert called == uses
    assert called - answered == set()
    assert off_path <= answered
    # each result comes after its call
    position = {}
    for i, m in enumerate(t.messages):
        for b in tool_uses(m):
            position[b.id] = i
    for i, m in enumerate(t.messages):
        for r in tool_results(m):
            assert position[r.tool_use_id] < i


def test_spotter_max_parallel_calls():
    t = read(SPOTTER)
    assert t.version == "2.1.39"
    assert max(len(tool_uses(m)) for m in t.messages) >= 2


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
    assert any("1 record(s) repeat a uuid" in p.message and p.line == 3 for p in t.problems)
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
