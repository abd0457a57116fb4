"""The transcript reader on small sessions built here: placement of records whose parent is missing,
compactions (version, kept messages, inherited ones), opaque blocks, queued messages, person-typed
text, and files that cannot be read as they are (FIFO, symlink loop, a file changed while read)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from pytest_ctxeval.errors import TranscriptError
from pytest_ctxeval.core.messages import (
    AssistantMessage, OpaqueBlock, UserMessage, person_text, to_api, validate_api,
)
from pytest_ctxeval.transcript import TranscriptWriter, read_transcript

from session_kit import SESSION, Session, stream_json_session

SUMMARY = ("This session is being continued from a previous conversation that ran out of context. "
           "Summary:\n1. Primary Request and Intent:\n   fix the parser\n")


def _work(s: Session, n: int, tag: str = "") -> None:
    for i in range(n):
        s.user(f"question {tag}{i}")
        s.assistant(text=f"answer {tag}{i}", tools=[(f"toolu_{tag}{i}", "Bash", {"command": f"ls {i}"})])
        s.result(f"toolu_{tag}{i}", f"out {i}")
        s.assistant(text=f"done {tag}{i}")


def _compact_without_logical_parent(s: Session, version: str = "2.1.49", missing: str | None = "never-written") -> None:
    """A 2.1.45 - 2.1.69 auto boundary: its logicalParentUuid names a record that is not in the file."""
    s.parent = None
    rec = {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "version": version,
           "compactMetadata": {"trigger": "auto", "preTokens": 167_000}}
    if missing is not None:
        rec["logicalParentUuid"] = missing
    s.add(rec)
    s.user(SUMMARY, isCompactSummary=True)


def test_boundary_with_a_missing_logical_parent_gets_the_conversation_before_it(tmp_path):
    s = Session(version="2.1.49")
    _work(s, 3, "a")
    _compact_without_logical_parent(s)
    _work(s, 2, "b")
    _compact_without_logical_parent(s, missing=None)     # no logicalParentUuid at all
    s.user("last words")
    t = read_transcript(s.write(tmp_path / "s.jsonl"))
    first, second = t.compactions
    assert [person_text(m) for m in first.before if person_text(m)] == ["question a0", "question a1", "question a2"]
    assert first.before[-1].content[0].text == "done a2"
    assert second.before[0] is first.summary and person_text(second.before[1]) == "question b0"
    assert len(second.history) == len(first.before) + len(second.before)
    assert t.problems == []   # a known trait of the format, not a defect of the file


def test_the_newest_chain_is_read_even_when_an_older_one_is_longer(tmp_path):
    s = Session()
    _work(s, 6, "old")
    fork = s.records[1]["uuid"]          # rewind to the first answer, then a short new branch
    s.parent = fork
    s.user("new direction")
    s.assistant(text="ok, new direction")
    t = read_transcript(s.write(tmp_path / "s.jsonl"))
    assert person_text(t.messages[-2]) == "new direction"
    assert len(t.messages) == 4


def test_a_record_whose_parent_is_missing_is_placed_and_reported_with_its_line(tmp_path):
    s = Session()
    _work(s, 2)
    s.parent = "ghost"
    s.user("orphan")
    s.assistant(text="still here")
    t = read_transcript(s.write(tmp_path / "s.jsonl"))
    assert [person_text(m) for m in t.messages if person_text(m)] == ["question 0", "question 1", "orphan"]
    (p,) = t.problems
    assert p.line == 11 and "ghost is not in the file; the record is placed after line 10" in p.message


@pytest.mark.parametrize("parent", ["null", "absent"])
def test_a_mid_file_record_with_no_parent_is_reported_with_what_it_leaves_out(tmp_path, parent):
    """A message record whose parentUuid is null or absent, not the file's first: the conversation is
    read from it (as Claude Code reads it), and the earlier records it leaves out are said, with lines."""
    s = Session()
    _work(s, 2)                                  # lines 1-10
    s.parent = None
    s.user("question 2")                         # line 11: no parent
    s.assistant(text="answer 2")
    if parent == "absent":
        del s.records[10]["parentUuid"]
    t = read_transcript(s.write(tmp_path / "s.jsonl"), strict=True)   # a note, not a malformed line
    assert [person_text(m) for m in t.messages if person_text(m)] == ["question 2"]
    (p,) = t.problems
    assert p.line == 11
    assert "a message record with no parent" in p.message
    assert "the 10 earlier message records (lines 1-10) are left out" in p.message
    assert "restore this record's parentUuid" in p.message


def test_a_history_written_again_from_a_record_with_no_parent_is_said_to_be_a_copy(tmp_path):
    """A resumed session can write its history again from a new root (new uuids, the same times):
    read once, from the copy, and the note says the earlier records are that copy's original."""
    s = Session()
    _work(s, 1)
    original = [dict(r) for r in s.records]
    s.parent = None
    for i, rec in enumerate(original):           # the copy: same records and times, new uuids
        s.add({**rec, "uuid": f"copy-{i}", "parentUuid": s.parent})
    s.user("question 1")
    t = read_transcript(s.write(tmp_path / "s.jsonl"))
    assert [person_text(m) for m in t.messages if person_text(m)] == ["question 0", "question 1"]
    (p,) = t.problems
    assert p.line == len(original) + 1 and "each has the time of a message read" in p.message


def test_a_single_record_left_out_is_named_by_its_line(tmp_path):
    s = Session()
    s.user("lost question")
    s.parent = None
    s.user("question 1")
    s.assistant(text="answer 1")
    (p,) = read_transcript(s.write(tmp_path / "s.jsonl")).problems
    assert p.line == 2 and "the 1 earlier message record (line 1) is left out" in p.message


def test_a_compaction_before_a_record_with_no_parent_is_named_without_contradiction(tmp_path, capsys):
    """The boundary left out by the restart is reported as such (not as a rewind), and the error
    does not then say the file has no compact_boundary record."""
    from pytest_ctxeval.cli import main

    s = Session()
    _work(s, 2)
    s.compact(SUMMARY)
    boundary_line = 11
    s.parent = None
    s.user("start again")
    path = s.write(tmp_path / "s.jsonl")
    t = read_transcript(path)
    assert t.compactions == [] and t.left_boundaries == [boundary_line]
    restart, boundary = t.problems
    assert boundary.line == boundary_line
    assert f"before line {restart.line}, where the conversation restarts with no parent" in boundary.message
    assert main(["grade", str(path)]) == 2
    err = capsys.readouterr().err
    assert "no compact_boundary record" not in err and "branch the conversation left" not in err
    assert f"no compaction on the conversation (the compact_boundary on line {boundary_line} is off it" in err


@pytest.mark.parametrize("names_transcript", [True, False], ids=["summary-names-it", "session-id"])
def test_sdk_stream_json_output_is_named_as_such_with_the_transcript_to_grade(tmp_path, capsys, names_transcript):
    """``claude -p --output-format stream-json`` output is not a transcript (no parentUuid, no typed
    prompts): refused in one message naming the session's own file, never read as a conversation
    whose every message is a root (a compaction "on a branch the conversation left", then "no
    compact_boundary record", and the replies dropped without a word)."""
    from pytest_ctxeval.cli import main

    path = stream_json_session(tmp_path / "run.jsonl", names_transcript=names_transcript)
    with pytest.raises(TranscriptError) as info:
        read_transcript(path)
    message = str(info.value)
    assert "SDK stream output (claude -p --output-format stream-json; line 1: a system/init record)" in message
    assert "not a session transcript" in message
    transcript = (f"/home/dev/.claude/projects/-home-dev-app/{SESSION}.jsonl (the summary on line 14 names it)"
                  if names_transcript else f"~/.claude/projects/<project>/{SESSION}.jsonl")
    assert message.endswith(f"Grade the session's own transcript: {transcript}")
    assert info.value.not_a_session is not None and transcript in info.value.not_a_session
    assert main(["grade", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "SDK stream output" in err
    assert "branch the conversation left" not in err and "no compact_boundary record" not in err


def test_a_transcript_is_not_taken_for_sdk_output_for_a_snake_case_field(tmp_path):
    """Only a file whose messages carry no parentUuid is SDK output: a transcript record with an
    extra snake_case session_id (a tool's export) is still read as the transcript it is."""
    s = Session()
    _work(s, 1)
    s.records[0]["session_id"] = SESSION
    s.records.append({"type": "result", "uuid": "r1", "session_id": SESSION})
    t = read_transcript(s.write(tmp_path / "s.jsonl"))
    assert [person_text(m) for m in t.messages if person_text(m)] == ["question 0"] and t.problems == []


@pytest.mark.parametrize("where", ["first", "last", "middle"])
def test_a_record_repeated_at_the_end_does_not_hide_the_conversation(tmp_path, where):
    s = Session()
    _work(s, 3)
    s.compact(SUMMARY)
    s.user("after")
    s.assistant(text="fine")
    index = {"first": 0, "last": len(s.records) - 1, "middle": 5}[where]
    s.records.append(dict(s.records[index]))
    t = read_transcript(s.write(tmp_path / "s.jsonl"))
    assert len(t.compactions) == 1 and len(t.compactions[0].before) == 12
    assert person_text(t.messages[-2]) == "after"
    (p,) = t.problems
    assert p.line == len(s.records) and "1 record repeats a uuid" in p.message


def test_version_trigger_pre_tokens_on_every_compaction(tmp_path):
    s = Session(version="2.1.40")
    _work(s, 2, "a")
    s.compact(SUMMARY, trigger="manual", pre_tokens=1234)
    s.version = "2.1.56"               # resumed on a newer version
    _work(s, 2, "b")
    s.compact(SUMMARY, trigger="auto", pre_tokens=99_000)
    t = read_transcript(s.write(tmp_path / "s.jsonl"))
    assert [(c.version, c.trigger, c.pre_tokens) for c in t.compactions] == [
        ("2.1.40", "manual", 1234), ("2.1.56", "auto", 99_000)]
    assert t.compactions[1].describe()["version"] == "2.1.56"


def test_kept_messages_are_the_preserved_ones_then_up_to_the_next_typed_message(tmp_path):
    s = Session(version="2.1.179")
    _work(s, 3)
    keep = [s.records[-2]["uuid"], s.records[-1]["uuid"]]     # the last result and the reply after it
    last = s.parent
    s.parent = None
    s.add({"type": "system", "subtype": "compact_boundary", "logicalParentUuid": last,
           "compactMetadata": {"trigger": "auto", "preTokens": 170_000,
                               "preservedMessages": {"anchorUuid": "x", "uuids": keep}}})
    s.user(SUMMARY, isCompactSummary=True)
    s.assistant(text="continuing", tools=[("toolu_k", "Read", {"file_path": "/a.py"})])
    s.result("toolu_k", "code")
    s.assistant(text="read it")
    s.user("now the tests please")
    s.assistant(text="running tests")
    t = read_transcript(s.write(tmp_path / "s.jsonl"))
    (c,) = t.compactions
    assert [m.uuid for m in c.preserved] == keep
    assert [m.uuid for m in c.kept][:2] == keep
    assert len(c.kept) == 5 and not any(person_text(m) for m in c.kept)
    assert c.post_context[:2] == [c.boundary, c.summary]


def test_a_resumed_file_opening_with_its_parents_compaction_marks_it_inherited(tmp_path):
    s = Session()
    s.add({"type": "system", "subtype": "compact_boundary", "logicalParentUuid": "in-the-parent-file",
           "sessionId": "parent-session", "compactMetadata": {"trigger": "auto", "preTokens": 160_000}})
    s.user(SUMMARY, isCompactSummary=True)
    _work(s, 2)
    s.compact(SUMMARY)
    t = read_transcript(s.write(tmp_path / "s.jsonl"))
    inherited, own = t.compactions
    assert inherited.inherited and "no message of this session precedes it" in inherited.inherited_reason
    assert not own.inherited and own.before[0] is inherited.summary


def test_a_compaction_on_an_abandoned_branch_is_reported_with_its_line(tmp_path):
    s = Session()
    _work(s, 2)
    fork = s.parent
    s.compact(SUMMARY, trigger="auto")
    boundary_line = len(s.records) - 1
    s.parent = fork
    s.user("rewound and went on")
    t = read_transcript(s.write(tmp_path / "s.jsonl"))
    assert t.compactions == []
    assert [p.line for p in t.problems] == [boundary_line] and "branch the conversation left" in t.problems[0].message


def test_unknown_block_types_survive_a_round_trip_and_count_for_pairing(tmp_path):
    s = Session()
    s.user("find the tool")
    s.assistant(tools=[("toolu_ts", "ToolSearch", {"query": "select:Foo"})])
    s.result("toolu_ts", [{"type": "tool_reference", "tool_name": "Foo"}])
    s.add({"type": "assistant", "message": {"id": "msg_srv", "role": "assistant", "content": [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [{"type": "web_search_result",
                                                                                  "url": "https://e.x", "title": "t"}]},
        {"type": "redacted_thinking", "data": "abc"},
        {"type": "text", "text": "found it"}]}})
    t = read_transcript(s.write(tmp_path / "s.jsonl"))
    assert t.problems == []
    result = t.messages[2].content[0]
    assert isinstance(result.content[0], OpaqueBlock) and result.content[0].tool_name == "Foo"
    assert validate_api(to_api(t.messages)) == []
    srv = t.messages[3]
    assert isinstance(srv, AssistantMessage) and [b.type for b in srv.content] == [
        "server_tool_use", "web_search_tool_result", "redacted_thinking", "text"]
    # Written back and read again: every field of every block is still there.
    with TranscriptWriter(tmp_path / "again.jsonl", session_id=SESSION) as w:
        for m in t.messages:
            w.append(m)
    again = read_transcript(tmp_path / "again.jsonl")
    assert [m.model_dump(exclude={"timestamp"}) for m in again.messages] == [
        m.model_dump(exclude={"timestamp"}) for m in t.messages]


def test_queued_prompts_the_model_saw_are_person_typed_at_their_place(tmp_path):
    s = Session()
    s.user("start the build")
    s.records.append({"type": "queue-operation", "operation": "enqueue", "content": "also update the docs",
                      "sessionId": SESSION, "timestamp": "2026-01-05T09:00:30Z"})
    s.assistant(text="building", tools=[("toolu_b", "Bash", {"command": "make"})])
    s.records.append({"type": "queue-operation", "operation": "remove", "sessionId": SESSION,
                      "timestamp": "2026-01-05T09:00:40Z"})
    s.result("toolu_b", "ok")
    # A background task's notification and a dequeued prompt: not added (the first is not typed,
    # the second has a user record of its own).
    s.records.append({"type": "queue-operation", "operation": "enqueue", "sessionId": SESSION,
                      "content": "<task-notification>done</task-notification>"})
    s.records.append({"type": "queue-operation", "operation": "remove", "sessionId": SESSION})
    s.records.append({"type": "queue-operation", "operation": "enqueue", "sessionId": SESSION, "content": "and test"})
    s.records.append({"type": "queue-operation", "operation": "dequeue", "sessionId": SESSION})
    s.assistant(text="built")
    s.user("and test")
    s.add({"type": "attachment", "attachment": {"type": "queued_command", "prompt": "then push", "commandMode": "prompt"}})
    s.assistant(text="testing")
    t = read_transcript(s.write(tmp_path / "s.jsonl"))
    typed = [person_text(m) for m in t.messages if person_text(m)]
    assert typed == ["start the build", "also update the docs", "and test", "then push"]
    # Placed after the tool round it arrived in, so pairing holds.
    kinds = [type(m).__name__ for m in t.messages[:4]]
    assert kinds == ["UserMessage", "AssistantMessage", "UserMessage", "UserMessage"]
    assert t.messages[3].uuid.startswith("queued-") and t.line_of[t.messages[3].uuid] == 5
    assert validate_api(to_api(t.messages)) == []


@pytest.mark.parametrize("content,typed", [
    ("<command-name>/fix-issue</command-name>\n<command-message>fix-issue</command-message>\n"
     "<command-args>the login bug</command-args>", "the login bug"),
    ("<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>", None),
    ("[Request interrupted by user]", None),
    ("[Request interrupted by user for tool use]", None),
    ("Caveat: The messages below were generated by the user while running local commands. DO NOT respond.", None),
    ("<system_instruction>You are in VS Code. Be concise.</system_instruction>\nplease rename foo to bar",
     "please rename foo to bar"),
    ("<system-reminder>a file changed</system-reminder>", None),
    ("fix it <ide_selection>line 3</ide_selection>", "fix it"),
    ("compare <div>a</div> and <b>b</b>", "compare <div>a</div> and <b>b</b>"),
])
def test_person_typed_text(content, typed):
    assert person_text(UserMessage(uuid="u", content=content)) == typed
    assert person_text(UserMessage(uuid="u", content=[{"type": "text", "text": content}])) == typed


def test_metadata_records_without_uuid_are_not_problems(tmp_path):
    s = Session()
    s.user("hi")
    for kind in ("last-prompt", "pr-link", "mode", "ai-title", "custom-title", "permission-mode", "worktree-state"):
        s.records.append({"type": kind, "sessionId": SESSION})
    s.assistant(text="hello")
    t = read_transcript(s.write(tmp_path / "s.jsonl"))
    assert t.problems == [] and t.metadata_records == 7 and len(t.messages) == 2


# --- files that cannot be read as they are ---------------------------------------------------------

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(TranscriptError, match=r"is a FIFO \(named pipe\), not a regular file"):
        read_transcript(fifo)


def test_a_symlink_loop_is_named(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.symlink_to(b)
    b.symlink_to(a)
    with pytest.raises(TranscriptError, match="symbolic link loop"):
        read_transcript(a)


@pytest.mark.skipif(not Path("/dev/stdin").exists(), reason="no /dev/stdin")
def test_dev_stdin_is_refused_with_an_accurate_message():
    r, w = os.pipe()
    saved = os.dup(0)
    try:
        os.dup2(r, 0)
        with pytest.raises(TranscriptError, match="not a regular file"):
            read_transcript("/dev/stdin")
    finally:
        os.dup2(saved, 0)
        for fd in (r, w, saved):
            os.close(fd)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(TranscriptError, match="no such transcript file"):
        read_transcript(tmp_path / "nope.jsonl")
    with pytest.raises(TranscriptError, match="is a folder"):
        read_transcript(tmp_path)


def _between_passes(monkeypatch, action):
    import pytest_ctxeval.transcript.jsonl as tr

    real = tr._choose_chain

    def choose(*args):
        out = real(*args)
        action()
        return out
    monkeypatch.setattr(tr, "_choose_chain", choose)


def test_a_file_truncated_while_read_gives_one_error(tmp_path, monkeypatch):
    s = Session()
    _work(s, 200)
    path = s.write(tmp_path / "s.jsonl")
    data = path.read_bytes()
    _between_passes(monkeypatch, lambda: path.write_bytes(data[: len(data) // 3]))
    with pytest.raises(TranscriptError) as info:
        read_transcript(path)
    msg = str(info.value)
    assert "while it was read" in msg and msg.count("\n") == 0


def test_a_file_rewritten_while_read_gives_one_error(tmp_path, monkeypatch):
    s = Session()
    _work(s, 200)
    path = s.write(tmp_path / "s.jsonl")
    shifted = b"\n" * 7 + path.read_bytes()
    _between_passes(monkeypatch, lambda: path.write_bytes(shifted))
    with pytest.raises(TranscriptError, match=r"changed \(\d+ records were not where"):
        read_transcript(path)


def test_a_file_that_grows_while_read_gives_one_warning(tmp_path, monkeypatch):
    s = Session()
    _work(s, 20)
    path = s.write(tmp_path / "s.jsonl")
    extra = json.dumps({"type": "user", "uuid": "late", "parentUuid": s.parent, "message": {"content": "late"}})

    def append():
        with path.open("a") as fh:
            fh.write(extra + "\n")
    _between_passes(monkeypatch, append)
    t = read_transcript(path)
    assert len(t.problems) == 1 and "grew while it was read" in t.problems[0].message
    assert len(t.messages) == 80


def test_reading_never_waits_on_a_pipe_from_the_cli(tmp_path, capsys):
    from pytest_ctxeval.cli import main

    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs")
    fifo = tmp_path / "p.jsonl"
    os.mkfifo(fifo)
    done: list[int] = []
    th = threading.Thread(target=lambda: done.append(main(["grade", str(fifo)])), daemon=True)
    th.start()
    th.join(20)
    assert done == [2]
    assert "FIFO" in capsys.readouterr().err




def _resumed_with_own_compaction(path: Path) -> Path:
    s = Session()
    s.add({"type": "system", "subtype": "compact_boundary", "logicalParentUuid": "in-the-parent-file",
           "compactMetadata": {"trigger": "auto", "preTokens": 160_000}})
    s.user(SUMMARY, isCompactSummary=True)
    _work(s, 3)
    s.compact(SUMMARY, trigger="auto", pre_tokens=50_000)
    s.user("and now?")
    s.assistant(text="done")
    return s.write(path)


def test_compare_real_and_grading_skip_the_inherited_compaction(tmp_path):
    from pytest_ctxeval.compare_real import compare_real
    from pytest_ctxeval.grading.registry import cases_from_transcript
    from pytest_ctxeval.grading import load_graders
    from pytest_ctxeval.llm import make_llm

    path = _resumed_with_own_compaction(tmp_path / "resumed.jsonl")
    t = read_transcript(path)
    inherited, own = t.compactions
    (case,) = cases_from_transcript(t)
    assert case.index == own.index == 2 and case.line == own.summary_line
    registry = load_graders()
    cmp = compare_real(path, llm=make_llm(), registry=registry, specs=registry.select(["tool_pairing"]))
    assert [c.line for c in cmp.compactions] == [own.summary_line]


def test_compare_real_on_a_file_with_only_an_inherited_compaction_says_so(tmp_path):
    from pytest_ctxeval.compare_real import compare_real
    from pytest_ctxeval.errors import UsageError
    from pytest_ctxeval.grading import load_graders
    from pytest_ctxeval.llm import make_llm

    s = Session()
    s.add({"type": "system", "subtype": "compact_boundary", "logicalParentUuid": "elsewhere",
           "compactMetadata": {"trigger": "auto", "preTokens": 160_000}})
    s.user(SUMMARY, isCompactSummary=True)
    s.user("go on")
    s.assistant(text="ok")
    registry = load_graders()
    with pytest.raises(UsageError, match="inherited from a parent session"):
        compare_real(s.write(tmp_path / "r.jsonl"), llm=make_llm(), registry=registry, specs=registry.select(["tool_pairing"]))


def test_a_summary_without_a_boundary_is_a_compaction(tmp_path):
    """1.0.x wrote no compact_boundary: a new session file opened with the isCompactSummary message
    (inherited: the conversation it summarised is in the parent's file); one met mid-file is graded."""
    s = Session(version="1.0.98")
    s.parent = None
    s.user(SUMMARY, isCompactSummary=True)
    _work(s, 2)
    s.user(SUMMARY.replace("fix the parser", "fix the lexer"), isCompactSummary=True)
    s.user("next")
    s.assistant(text="ok")
    t = read_transcript(s.write(tmp_path / "legacy.jsonl"))
    first, second = t.compactions
    assert first.inherited and first.summary_line == 1 and first.version == "1.0.98"
    assert not second.inherited and second.summary_line == 12 and second.boundary_line == 12
    assert second.before[0] is first.summary and len(second.before) == 9
    assert [person_text(m) for m in second.kept] == [None] * len(second.kept)


def test_import_of_a_legacy_file_opening_with_a_summary(tmp_path):
    from pytest_ctxeval.scenario.importer import import_transcript

    s = Session(version="1.0.98")
    s.parent = None
    s.user(SUMMARY, isCompactSummary=True)
    _work(s, 2)
    result = import_transcript(s.write(tmp_path / "legacy.jsonl"), name="legacy")
    users = [t["user"] for t in result.document["turns"] if "user" in t]
    assert users[:2] == ["question 0", "question 1"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_grade_summary_from_a_fifo_is_refused_without_blocking(tmp_path, capsys, monkeypatch):
    # A FIFO nobody writes to is given up on after limits.PIPE_WAIT_SECONDS (a pipe with a writer is
    # read: `--summary <(cat s.md)` works), never waited on forever (here after half a second).
    from pytest_ctxeval.cli import main
    from pytest_ctxeval.core import limits

    monkeypatch.setattr(limits, "PIPE_WAIT_SECONDS", 0.5)

    s = Session()
    _work(s, 1)
    path = s.write(tmp_path / "s.jsonl")
    fifo = tmp_path / "summary.md"
    os.mkfifo(fifo)
    done: list[int] = []
    th = threading.Thread(target=lambda: done.append(main(["grade", str(path), "--summary", str(fifo)])), daemon=True)
    th.start()
    th.join(20)
    err = capsys.readouterr().err
    assert done == [2] and "cannot read the summary" in err and "a pipe with no" in err
