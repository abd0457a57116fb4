"""Full and partial compaction and the post-compact attachments (003:177-277, 003:585-612,
004:456-612)."""

from __future__ import annotations

import pytest

from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine.compact import CompactionFailed, build_attachments, compact_conversation, truncate_to_tokens
from pytest_ctxeval.engine.dedupe import ReadRecord
from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.core.ids import IdFactory
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.core.messages import (
    AssistantMessage, AttachmentMessage, CompactBoundary, UserMessage, to_api, tool_results, tool_uses,
    validate_api,
)
from pytest_ctxeval.core.tokens import estimate_text
from pytest_ctxeval.transcript import read_transcript

from engine_kit import T0, asst, user

CFG = EngineConfig()
CONTINUE = "Continue the conversation from where it left off without asking the user any further questions."


def worked(session, rounds=6, config=None, **kw):
    s = session(config or EngineConfig(), **kw)
    s.say("refactor the parser module")
    for i in range(rounds):
        s.step(f"step {i}", [s.tool("Bash", f"output {i}", command=f"make {i}")])
    s.tick(20)
    return s


# --- full compaction ---------------------------------------------------------------------------

def test_full_compaction_layout_and_event(session):
    s = worked(session)
    last = s.cm.messages[-1].uuid
    tokens = s.prepare().tokens
    s.tick(20)
    result = s.cm.compact(s.clock)
    boundary, summary = s.cm.messages[:2]
    assert isinstance(boundary, CompactBoundary) and boundary.trigger == "manual"
    assert boundary.pre_tokens == tokens and boundary.logical_parent_uuid == last
    assert isinstance(summary, UserMessage) and summary.is_compact_summary
    assert summary.content.startswith("This session is being continued from a previous conversation")
    assert "<analysis>" not in summary.content and result.summary in summary.content
    # the path the model is told is Claude Code's layout, the same on every machine
    assert f"~/.claude/projects/ctxeval/{s.transcript.session_id}.jsonl" in summary.content
    assert str(s.transcript.path) not in summary.content
    assert CONTINUE not in summary.content  # manual: no continuation instruction
    assert result.kind == "full" and result.kept == []
    [event] = s.events("compact", "full_compaction")
    assert (event.tokens_before, event.tokens_after, event.ids) == (tokens, result.post_tokens, [boundary.uuid])
    assert validate_api(s.prepare().body["messages"]) == []


def test_compaction_request_shape(session):
    s = worked(session)
    s.cm.compact(s.clock)
    request = s.cm.compactions[0].result.request
    assert request["system"] == PromptSet().system_compact
    assert request["max_tokens"] == 20_000 + 16_000  # the summary reserve plus room to think
    assert request["messages"][-1]["content"][-1]["text"] == PromptSet().render_compact()
    assert s.llm.reference.requests[-1]["messages"] == request["messages"]


def test_auto_compaction_summary_carries_the_continuation_instruction(session):
    s = session(EngineConfig.for_window(20_000))
    s.say("go")
    while not s.cm.compactions:
        s.step("work", [s.tool("Bash", "z" * 2_800, command="make")])
    summary = s.cm.messages[1]
    assert s.cm.messages[0].trigger == "auto" and CONTINUE in summary.content
    [event] = s.events("autocompact", "full_compaction")
    assert event.tokens_before >= 16_700 and event.tokens_after == s.cm.compactions[0].result.post_tokens


def test_compaction_is_written_to_the_transcript(session):
    s = worked(session)
    s.cm.compact(s.clock)
    s.close()
    saved = read_transcript(s.transcript.path)
    [c] = saved.compactions
    assert c.summary.is_compact_summary and c.boundary.uuid == s.cm.messages[0].uuid
    assert len(c.before) == 13  # every original message is still on disk


@pytest.mark.parametrize("fault,reason", [("empty", "the summariser returned no text")])
def test_empty_summary_fails(fault, reason):
    llm = make_llm("offline", faults={"compact": [fault]}, max_retries=0)
    with pytest.raises(CompactionFailed, match=reason):
        compact_conversation([user("u", "hi"), asst("a", "yo")], llm=llm, config=CFG, prompts=PromptSet(),
                             ids=IdFactory("c"), now=T0, transcript_path="/t", pre_tokens=1)


def test_manual_compact_failure_is_an_event_not_a_breaker_count(session):
    s = worked(session, faults={"compact": ["empty"] * 4})
    for _ in range(4):
        s.tick(20)
        assert s.cm.compact(s.clock) is None
    assert [e.action for e in s.events("compact")] == ["failed"] * 4
    assert s.cm.tracking.consecutive_failures == 0
    assert not s.events("autocompact")


# --- partial compaction (004:561-612) -----------------------------------------------------------

@pytest.mark.parametrize("n", [2, 4, 6])
def test_partial_up_to_keeps_the_last_n_after_boundary_and_summary(session, n):
    s = worked(session)
    before = list(s.cm.messages)
    result = s.cm.compact(s.clock, partial="up_to", messages=n)
    boundary, summary, *kept = s.cm.messages
    assert isinstance(boundary, CompactBoundary) and summary.is_compact_summary
    assert [m.uuid for m in kept] == [m.uuid for m in before[-n:]]
    assert [m.uuid for m in result.summarized] == [m.uuid for m in before[:-n]]
    assert "covers the earlier portion" in summary.content
    assert validate_api(to_api(s.cm.messages)) == []
    [event] = s.events("compact", "partial_compaction")
    assert event.tokens_after == result.post_tokens and f"{len(before) - n} messages summarised; {n} kept" in event.detail


@pytest.mark.parametrize("n", [2, 4, 6])
def test_partial_from_keeps_the_older_before_boundary_and_summary(session, n):
    s = worked(session)
    before = list(s.cm.messages)
    result = s.cm.compact(s.clock, partial="from", messages=n)
    *kept, boundary, summary = s.cm.messages
    assert isinstance(boundary, CompactBoundary) and summary.is_compact_summary
    assert [m.uuid for m in kept] == [m.uuid for m in before[:-n]]
    assert [m.uuid for m in result.summarized] == [m.uuid for m in before[-n:]]
    assert "covers the recent portion" in summary.content
    assert validate_api(to_api(s.cm.messages)) == []
    assert validate_api(s.prepare().body["messages"]) == []
    # the request is the whole conversation (the cached prefix) and opens with the user, wherever
    # the pivot falls; the prompt asks for the recent portion only
    sent = result.request["messages"]
    assert validate_api(sent) == [] and sent[0]["role"] == "user"
    whole = to_api(before)
    assert sent[:len(whole) - 1] == whole[:-1] and len(sent) >= len(whole)  # the prompt may merge into the last
    assert "RECENT portion" in str(sent[-1]["content"])


@pytest.mark.parametrize("direction", ["up_to", "from"])
@pytest.mark.parametrize("n", [1, 3, 5])
def test_partial_pivot_never_splits_a_tool_pair(session, direction, n):
    # messages alternate assistant(tool_use) / user(tool_result): an odd n lands on a result
    s = worked(session)
    before = list(s.cm.messages)
    s.cm.compact(s.clock, partial=direction, messages=n)
    pivot = len(before) - (n + 1)  # moved back onto the call
    after = s.cm.messages
    kept = after[2:] if direction == "up_to" else after[:-2]
    expected = before[pivot:] if direction == "up_to" else before[:pivot]
    assert [m.uuid for m in kept] == [m.uuid for m in expected]
    calls = {u.id for m in kept for u in tool_uses(m)}
    answers = {b.tool_use_id for m in kept for b in tool_results(m)}
    assert calls == answers
    assert validate_api(to_api(after)) == []


def test_partial_from_with_nothing_to_summarise_fails_cleanly(session):
    s = worked(session)
    before = list(s.cm.messages)
    assert s.cm.compact(s.clock, partial="from", messages=0) is None
    [event] = s.events("compact", "failed")
    assert "leaves nothing to summarise" in event.detail
    assert s.cm.messages == before


def test_partial_after_a_compaction_stays_after_the_boundary(session):
    s = worked(session)
    s.cm.compact(s.clock)
    for i in range(3):
        s.step(f"more {i}", [s.tool("Bash", f"more {i}", command="ls")])
    s.tick(20)
    s.cm.compact(s.clock, partial="up_to", messages=100)  # asks for more than there is since the boundary
    assert isinstance(s.cm.messages[0], CompactBoundary)
    assert validate_api(to_api(s.cm.messages)) == []


def test_partial_compaction_drops_usage_anchors_of_kept_messages(session):
    s = worked(session)
    assert any(isinstance(m, AssistantMessage) and m.usage for m in s.cm.messages[-4:])
    s.cm.compact(s.clock, partial="up_to", messages=4)
    assert all(m.usage is None for m in s.cm.messages if isinstance(m, AssistantMessage))


def test_partial_compaction_reinjects_files_read_in_the_summarised_part(session):
    s = session(EngineConfig())
    s.say("look at the parser")
    s.step("read", [s.tool("Read", "def parse(): ...\n", file_path="/src/parser.py")])
    for i in range(4):
        s.step(f"step {i}", [s.tool("Bash", f"output {i}", command=f"make {i}")])
    s.tick(20)
    result = s.cm.compact(s.clock, partial="up_to", messages=4)
    assert [a.path for a in result.attachments if a.attachment_type == "file"] == ["/src/parser.py"]


# --- attachments (003:585-612, 000:154-160) ------------------------------------------------------

def record(path, content, i=0):
    from datetime import timedelta
    return ReadRecord(path, None, None, 0, content, f"t{i}", T0 + timedelta(seconds=i))


def attach(files=(), skills=(), plan=None, config=CFG, **kw):
    return build_attachments(files=list(files), skills=list(skills), plan=plan, config=config,
                             ids=IdFactory("att"), now=T0, **kw)


@pytest.mark.parametrize("n,expected", [(4, 4), (5, 5), (6, 5)])
def test_at_most_5_files(n, expected):
    out = attach([record(f"/f{i}.py", f"content {i}", i) for i in range(n)])
    assert [a.path for a in out] == [f"/f{i}.py" for i in range(expected)]
    assert all(a.attachment_type == "file" for a in out)


FILE_HEADER = "Contents of /big.py as last read before the compaction:\n"
#: The longest body that fits 5,000 tokens with the header: (header + body) bytes / 4, rounded half up.
FITS = 20_001 - len(FILE_HEADER)


@pytest.mark.parametrize("chars,truncated", [(FITS - 1, False), (FITS, False), (FITS + 1, True)])
def test_000_156_each_file_within_5000_tokens_header_included(chars, truncated):
    """000:156 "5K per file": the attachment, header and all, is at most 5,000 tokens."""
    [a] = attach([record("/big.py", "b" * chars)])
    body = a.content[len(FILE_HEADER):]
    assert a.content.startswith(FILE_HEADER)
    assert (body != "b" * chars) is truncated
    assert estimate_text(a.content) <= 5_000
    if truncated:
        assert body.endswith("\n[... truncated to 5000 tokens for the post-compaction context]")


@pytest.mark.parametrize("text", ["x" * 50_000, "{" + "j" * 50_000, "字" * 20_000, "line\n" * 9_000])
def test_truncate_to_tokens_respects_the_limit(text):
    out = truncate_to_tokens(text, 1_000, CFG)
    assert estimate_text(out) <= 1_000
    assert out.endswith("[... truncated to 1000 tokens for the post-compaction context]")
    assert text.startswith(out[: out.index("\n[... truncated")])
    assert truncate_to_tokens("short", 1_000, CFG) == "short"


def test_files_total_within_the_budget():
    cfg = EngineConfig(post_compact_files_budget=12_000)
    out = attach([record(f"/f{i}.py", "b" * 40_000, i) for i in range(5)], config=cfg)
    assert len(out) == 2
    assert sum(estimate_text(a.content) for a in out) <= 12_000


def test_files_already_kept_are_not_attached():
    out = attach([record(f"/f{i}.py", "c", i) for i in range(7)], exclude_paths={"/f0.py", "/f3.py"})
    assert [a.path for a in out] == ["/f1.py", "/f2.py", "/f4.py", "/f5.py", "/f6.py"]


def test_000_158_five_full_size_skills_fit_the_25k_budget_header_included():
    """000:158 / 003:603-604: 25K budget, 5K per skill: the header counts inside the 5K, so five
    full-size skills fit the budget and a sixth does not."""
    skills = [(f"skill{i}", "s" * 30_000) for i in range(6)]  # each cut to 5,000 tokens, header included
    out = attach(skills=skills, plan="1. parse\n2. test")
    got = [a for a in out if a.attachment_type == "skill"]
    assert len(got) == 5
    assert all(estimate_text(a.content) <= 5_000 for a in got)
    assert sum(estimate_text(a.content) for a in got) <= 25_000
    assert [a.name for a in got] == [f"skill{i}" for i in range(5)]
    assert got[0].content.startswith("Skill skill0 (invoked before the compaction):\n")
    assert out[-1].attachment_type == "plan" and out[-1].content == "The current plan:\n1. parse\n2. test"


def test_000_158_a_skill_just_under_the_cap_is_whole_and_just_over_is_cut():
    header = "Skill s (invoked before the compaction):\n"
    fits = 20_001 - len(header)
    [whole] = attach(skills=[("s", "k" * fits)])
    [cut] = attach(skills=[("s", "k" * (fits + 1))])
    assert whole.content == header + "k" * fits and estimate_text(whole.content) == 5_000
    assert "truncated to 5000 tokens" in cut.content and estimate_text(cut.content) <= 5_000


def test_full_compaction_reinjects_recent_files_skills_and_plan(session):
    s = session(EngineConfig())
    s.say("work through the files")
    for i in range(7):
        content = "b" * 30_000 if i == 6 else f"print({i})\n"
        s.step(f"read {i}", [s.tool("Read", content, file_path=f"/src/f{i}.py")])
    s.step("load a skill", [s.tool("Skill", "Use pdfplumber to extract tables.", skill="pdf")])
    s.step("plan", [s.tool("ExitPlanMode", "User approved the plan", plan="1. Parse\n2. Test")])
    s.tick(20)
    result = s.cm.compact(s.clock)
    atts = s.cm.messages[2:]
    assert atts == result.attachments and all(isinstance(a, AttachmentMessage) for a in atts)
    files = [a for a in atts if a.attachment_type == "file"]
    assert [a.path for a in files] == [f"/src/f{i}.py" for i in (6, 5, 4, 3, 2)]
    assert "truncated to 5000 tokens" in files[0].content and estimate_text(files[0].content) <= 5_020
    assert files[1].content.endswith("print(5)\n")
    [skill] = [a for a in atts if a.attachment_type == "skill"]
    assert skill.content == "Skill pdf (invoked before the compaction):\nUse pdfplumber to extract tables."
    [plan] = [a for a in atts if a.attachment_type == "plan"]
    assert plan.content == "The current plan:\n1. Parse\n2. Test"
    assert f"{len(atts)} attachments" in s.events("compact", "full_compaction")[0].detail
    body = s.prepare().body["messages"]
    assert validate_api(body) == []
    texts = [b["text"] for b in body[0]["content"]]
    assert texts[-1] == "<system-reminder>\nThe current plan:\n1. Parse\n2. Test\n</system-reminder>"
