"""Tier 2: unchanged-file dedupe (003:82-94, 004:133) and media stripping (003:95-106)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine.dedupe import FILE_UNCHANGED_STUB, FileReadState, media_stripped, strip_media
from pytest_ctxeval.core.messages import DocumentBlock, ImageBlock, TextBlock, ToolResultBlock, UserMessage

from engine_kit import T0, asst, res, use, user

FILE = "line 1\nline 2\nline 3\n"


def last_result(s) -> ToolResultBlock:
    return s.cm.messages[-1].content[-1]


def read(s, path="/src/app.py", content=FILE, **inp):
    s.step("reading", [s.tool("Read", content, file_path=path, **inp)])
    return last_result(s)


def test_stub_text_is_the_seed_constant():
    assert FILE_UNCHANGED_STUB == ("File unchanged since last read. The content from the earlier Read tool_result "
                                   "in this conversation is still current — refer to that instead of re-reading.")


def test_same_read_unchanged_returns_the_stub(session):
    s = session()
    s.say("look at app.py")
    first = read(s)
    second = read(s)
    third = read(s)
    assert first.content == FILE
    assert second.content == FILE_UNCHANGED_STUB and not second.is_error
    assert third.content == FILE_UNCHANGED_STUB
    events = s.events("dedupe", "file_unchanged_stub")
    assert [e.ids for e in events] == [[second.tool_use_id], [third.tool_use_id]]
    assert all(e.detail == "/src/app.py" for e in events)


def test_same_offset_and_limit_returns_the_stub(session):
    s = session()
    s.say("go")
    read(s, offset=10, limit=20)
    assert read(s, offset=10, limit=20).content == FILE_UNCHANGED_STUB


@pytest.mark.parametrize("first,second", [
    ({"offset": 10}, {"offset": 11}),
    ({"limit": 20}, {"limit": 21}),
    ({}, {"offset": 1}),
    ({"offset": 10, "limit": 20}, {"offset": 10}),
])
def test_different_offset_or_limit_reads_in_full(session, first, second):
    s = session()
    s.say("go")
    read(s, **first)
    assert read(s, **second).content == FILE
    assert not s.events("dedupe")


def test_different_path_reads_in_full(session):
    s = session()
    s.say("go")
    read(s, path="/a.py")
    assert read(s, path="/b.py").content == FILE


@pytest.mark.parametrize("tool,inp", [
    ("Edit", {"file_path": "/src/app.py", "old_string": "1", "new_string": "one"}),
    ("Write", {"file_path": "/src/app.py", "content": "new"}),
    ("MultiEdit", {"file_path": "/src/app.py", "edits": []}),
])
def test_an_edit_in_between_reads_in_full(session, tool, inp):
    s = session()
    s.say("go")
    read(s)
    s.step("editing", [s.tool(tool, "ok", **inp)])
    assert read(s).content == FILE
    # and the read after that one, unchanged again, is a stub
    assert read(s).content == FILE_UNCHANGED_STUB


def test_a_failed_edit_does_not_change_the_file(session):
    s = session()
    s.say("go")
    read(s)
    s.step("editing", [s.tool("Edit", "old_string not found", is_error=True, file_path="/src/app.py",
                              old_string="x", new_string="y")])
    assert read(s).content == FILE_UNCHANGED_STUB


def test_an_edit_of_another_file_keeps_the_stub(session):
    s = session()
    s.say("go")
    read(s)
    s.step("editing", [s.tool("Edit", "ok", file_path="/src/other.py", old_string="a", new_string="b")])
    assert read(s).content == FILE_UNCHANGED_STUB


def test_different_scripted_content_reads_in_full(session):
    s = session()
    s.say("go")
    read(s)
    changed = FILE + "line 4\n"
    assert read(s, content=changed).content == changed
    assert read(s, content=changed).content == FILE_UNCHANGED_STUB


def test_after_a_compaction_the_earlier_result_is_gone_so_read_in_full(session):
    s = session()
    s.say("go")
    read(s)
    s.tick(20)
    assert s.cm.compact(s.clock) is not None
    assert read(s).content == FILE
    assert not s.events("dedupe")


def test_after_a_microcompact_clearing_the_earlier_result_read_in_full(session):
    s = session()
    s.say("go")
    read(s)
    for i in range(5):
        s.step("more", [s.tool("Bash", f"out {i}", command=f"ls {i}")])
    s.tick(3_600)
    s.prepare()  # 60 minutes later: the read (6th most recent) is cleared
    [clear] = s.events("microcompact", "time_based_clear")
    assert len(clear.ids) == 1
    assert read(s).content == FILE


def test_after_cache_edits_deleted_the_earlier_result_read_in_full(session):
    s = session(EngineConfig(cached_microcompact=True))
    s.say("go")
    first = read(s)
    for i in range(21):  # 22 compactable results live: cache_edits deletes the 17 oldest, the read first
        s.step("more", [s.tool("Bash", f"out {i}", command="ls")])
    [edits] = s.events("microcompact", "cache_edits")
    assert first.tool_use_id in edits.ids
    assert read(s).content == FILE


def test_parallel_reads_in_one_message_are_both_full(session):
    # The second read's earlier result is not in the context yet (same message): it is served in full.
    s = session()
    s.say("go")
    s.step("two reads", [s.tool("Read", FILE, file_path="/p.py"), s.tool("Read", FILE, file_path="/p.py")])
    assert [b.content for b in s.cm.messages[-1].content] == [FILE, FILE]


def test_read_state_unit():
    state = FileReadState()
    u1, u2 = use("t1", "Read", file_path="/f"), use("t2", "Read", file_path="/f")
    assert state.check_read(u2, "c", in_context={"t1"}) is None
    state.record_read(u1, "c", T0)
    assert state.check_read(u2, "c", in_context={"t1"}).tool_use_id == "t1"
    assert state.check_read(u2, "c", in_context=set()) is None
    assert state.check_read(use("t3", "Read"), "c", in_context={"t1"}) is None  # no path
    state.forget({"t1"})
    assert state.check_read(u2, "c", in_context={"t1"}) is None


def test_recent_files_latest_read_per_path_most_recent_first():
    state = FileReadState()
    state.record_read(use("t1", "Read", file_path="/a"), "a1", T0)
    state.record_read(use("t2", "Read", file_path="/b"), "b1", T0 + timedelta(seconds=1))
    state.record_read(use("t3", "Read", file_path="/a", offset=5), "a2", T0 + timedelta(seconds=2))
    assert [(r.path, r.content) for r in state.recent_files()] == [("/a", "a2"), ("/b", "b1")]


# --- media stripping ----------------------------------------------------------------------------

IMG = ImageBlock(source={"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="})
DOC = DocumentBlock(source={"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="})


def test_strip_media_replaces_blocks_and_inside_tool_results():
    content = [TextBlock(text="see"), IMG, DOC, res("t1", [TextBlock(text="shot"), IMG]), res("t2", "plain")]
    out = strip_media(content)
    assert out == [TextBlock(text="see"), TextBlock(text="[image]"), TextBlock(text="[document]"),
                   res("t1", [TextBlock(text="shot"), TextBlock(text="[image]")]), res("t2", "plain")]
    assert content[1] is IMG  # the input is not modified
    assert strip_media("just text") == "just text"


def test_media_stripped_copies_only_what_changes():
    plain = user("u1", "hello")
    pic = user("u2", [TextBlock(text="look"), IMG])
    a = asst("a1", "fine")
    out = media_stripped([plain, pic, a])
    assert out[0] is plain and out[2] is a
    assert out[1] is not pic and out[1].content == [TextBlock(text="look"), TextBlock(text="[image]")]
    assert pic.content[1] == IMG


def test_compaction_request_carries_no_media(session):
    s = session()
    s.cm.append(UserMessage(uuid="u-pic", timestamp=T0, content=[TextBlock(text="what is in this screenshot?"), IMG]))
    s.step("a screenshot tool", [s.tool("Screenshot", [TextBlock(text="captured"), DOC])])
    s.tick(20)
    result = s.cm.compact(s.clock)
    assert result is not None
    sent = s.llm.reference.requests[-1]["messages"]
    blocks = [b for m in sent if isinstance(m["content"], list) for b in m["content"]]
    nested = [x for b in blocks if b.get("type") == "tool_result" and isinstance(b.get("content"), list)
              for x in b["content"]]
    assert not [b for b in blocks + nested if b.get("type") in ("image", "document")]
    assert {"type": "text", "text": "[image]"} in blocks
    assert {"type": "text", "text": "[document]"} in nested
    # the engine's history keeps the image
    assert s.cm.history[0].content[1] == IMG
