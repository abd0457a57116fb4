"""Tier 4: session-memory extraction and compaction (000:126-140, 004:318-453)."""

from __future__ import annotations

import pytest

from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine.pipeline import ToolOutcome
from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.engine.session_memory import (
    SessionMemoryState, calculate_keep_index, has_text_block, session_memory_compact, should_extract,
)
from pytest_ctxeval.engine.boundaries import adjust_index_to_preserve_invariants, last_boundary_floor
from pytest_ctxeval.core.ids import IdFactory
from pytest_ctxeval.core.messages import AssistantMessage, CompactBoundary, UserMessage, to_api, validate_api
from pytest_ctxeval.core.tokens import estimate_message, estimate_messages

from engine_kit import T0, asst, res, results, use, user

CFG = EngineConfig()


# --- should_extract (004:331-350) ------------------------------------------------------------

@pytest.mark.parametrize("tokens,expected", [(9_999, False), (10_000, True), (10_001, True)])
def test_first_extraction_at_10k_tokens(tokens, expected):
    assert should_extract(SessionMemoryState(), tokens, 0, CFG) is expected
    assert should_extract(SessionMemoryState(), tokens, 5, CFG) is expected  # tool calls do not matter yet


def after_init(tool_calls_since: int) -> SessionMemoryState:
    return SessionMemoryState(content="notes", extractions=1, tokens_at_last_extraction=10_000,
                              tool_calls_since=tool_calls_since)


@pytest.mark.parametrize("growth,expected", [(4_999, False), (5_000, True), (5_001, True)])
def test_update_needs_5k_growth(growth, expected):
    assert should_extract(after_init(3), 10_000 + growth, 1, CFG) is expected


@pytest.mark.parametrize("calls,expected", [(2, False), (3, True), (4, True)])
def test_update_needs_3_tool_calls_when_the_last_turn_called_tools(calls, expected):
    assert should_extract(after_init(calls), 15_000, 1, CFG) is expected


def test_update_without_tool_calls_in_the_last_turn():
    assert should_extract(after_init(0), 15_000, 0, CFG) is True
    assert should_extract(after_init(2), 15_000, 0, CFG) is True


@pytest.mark.parametrize("calls,last_turn", [(0, 0), (3, 1), (50, 0), (50, 7)])
def test_token_growth_is_always_required(calls, last_turn):
    assert should_extract(after_init(calls), 14_999, last_turn, CFG) is False


def test_state_counts_tool_calls_and_resets_on_record(tmp_path):
    state = SessionMemoryState(path=tmp_path / "session-memory" / "summary.md")
    assert state.note_response(asst("a1", "x", use("t1", "Bash"), use("t2", "Read"))) == 2
    assert state.note_response(asst("a2", "y")) == 0
    assert state.tool_calls_since == 2
    state.record("# Notes", "a2", 12_345)
    assert (state.tool_calls_since, state.extractions, state.tokens_at_last_extraction,
            state.last_summarized_message_id) == (0, 1, 12_345, "a2")
    assert state.path.read_text() == "# Notes"


# --- calculate_keep_index (004:406-436) -----------------------------------------------------------

TEN = "t" * 40  # 10 tokens


def convo(n: int) -> list:
    """``n`` alternating user/assistant text messages of 10 tokens each."""
    return [user(f"u{i}", TEN) if i % 2 == 0 else asst(f"a{i}", TEN, mid=f"m{i}") for i in range(n)]


def keep_cfg(min_tokens=30, min_texts=1, max_tokens=1_000) -> EngineConfig:
    return EngineConfig(sm_keep_min_tokens=min_tokens, sm_keep_min_text_messages=min_texts,
                        sm_keep_max_tokens=max_tokens)


def kept_tokens(msgs, start) -> int:
    """The kept part as the seed measures it: estimateMessageTokens, with the 4/3 margin."""
    return estimate_messages(msgs[start:])


# Kept from the end: 1 message = ceil(10 * 4/3) = 14, 2 = 27, 3 = 40, 4 = 54, 5 = 67 tokens.
@pytest.mark.parametrize("min_tokens,start", [(27, 8), (28, 7), (40, 7), (41, 6)])
def test_keep_index_expands_to_min_tokens(min_tokens, start):
    msgs = convo(10)
    assert calculate_keep_index(msgs, 9, keep_cfg(min_tokens=min_tokens)) == start


@pytest.mark.parametrize("min_texts,start", [(1, 6), (2, 3), (3, 2), (4, 1)])
def test_keep_index_expands_to_min_text_messages(min_texts, start):
    # The newest messages are a tool round without text: tokens are met early, text messages are not.
    msgs = convo(4) + [asst("a4", use("t1", "Bash"), mid="m4"), results("r5", res("t1", "o" * 400)),
                       asst("a6", "done" * 10, mid="m6"), asst("a7", use("t2", "Bash"), mid="m7"),
                       results("r8", res("t2", "p" * 400))]
    assert [has_text_block(m) for m in msgs] == [True] * 4 + [False, False, True, False, False]
    assert calculate_keep_index(msgs, 8, keep_cfg(min_tokens=10, min_texts=min_texts)) == start


@pytest.mark.parametrize("max_tokens,start", [(53, 6), (54, 6), (55, 5)])
def test_keep_index_stops_at_max_tokens(max_tokens, start):
    msgs = convo(10)
    got = calculate_keep_index(msgs, 9, keep_cfg(min_tokens=10_000, max_tokens=max_tokens))
    assert got == start
    assert kept_tokens(msgs, got) >= max_tokens


def test_keep_index_starts_after_the_last_summarised_message():
    msgs = convo(10)
    # messages after index 4 already hold 50 tokens: no expansion needed
    assert calculate_keep_index(msgs, 4, keep_cfg(min_tokens=30)) == 5


def test_keep_index_never_crosses_the_last_boundary():
    msgs = convo(3) + [CompactBoundary(uuid="b1", timestamp=T0), user("s1", "summary", is_compact_summary=True)] + convo(4)
    floor = last_boundary_floor(msgs)
    assert floor == 4
    assert calculate_keep_index(msgs, len(msgs) - 1, keep_cfg(min_tokens=10_000), floor) == 4
    assert last_boundary_floor(convo(3)) == 0


def test_keep_index_never_splits_a_tool_pair():
    msgs = [user("u0", TEN), asst("a1", use("t1", "Bash", command="x" * 40), mid="m1"),
            results("r2", res("t1", TEN)), asst("a3", TEN, mid="m3"), user("u4", TEN)]
    # expansion alone would stop at the tool_result (index 2: 30 tokens)
    got = calculate_keep_index(msgs, 4, keep_cfg(min_tokens=30))
    assert got == 1
    problems = validate_api(to_api([user("s", "summary")] + msgs[got:]))
    assert problems == []


def test_keep_index_may_pass_the_maximum_only_to_keep_a_pair_whole():
    msgs = [user("u0", TEN), asst("a1", use("t1", "Bash", command="x" * 40), mid="m1"),
            results("r2", res("t1", TEN)), asst("a3", TEN, mid="m3"), user("u4", TEN)]
    cfg = keep_cfg(min_tokens=10_000, max_tokens=30)
    got = calculate_keep_index(msgs, 4, cfg)
    assert got == 1 and kept_tokens(msgs, got) > 30
    # without the pair the same expansion stops at the maximum
    plain = convo(5)
    got = calculate_keep_index(plain, 4, cfg)
    assert got == 2 and kept_tokens(plain, got) == 40 >= 30 > kept_tokens(plain, got + 1)


@pytest.mark.parametrize("same_id,start", [(True, 1), (False, 2)])
def test_keep_index_never_splits_records_sharing_a_message_id(same_id, start):
    msgs = [user("u0", TEN), asst("a1", TEN, mid="msg_A"), asst("a2", TEN, mid="msg_A" if same_id else "msg_B"),
            user("u3", TEN), asst("a4", TEN, mid="msg_C")]
    assert calculate_keep_index(msgs, 4, keep_cfg(min_tokens=30)) == start


def test_keep_index_chain_of_shared_ids_and_a_pair():
    # a1..a3 are one response split in three records, its tool call answered in r4
    msgs = [user("u0", TEN), asst("a1", TEN, mid="M"), asst("a2", TEN, mid="M"),
            asst("a3", use("t1", "Read", file_path="/f"), mid="M"), results("r4", res("t1", TEN)),
            asst("a5", TEN, mid="N"), user("u6", TEN)]
    # u6 + a5 = 27 tokens; 30 needs r4, whose call is in a3, which shares its id with a1 and a2
    assert calculate_keep_index(msgs, 6, keep_cfg(min_tokens=27)) == 5
    assert calculate_keep_index(msgs, 6, keep_cfg(min_tokens=30)) == 1


def test_adjust_checks_every_kept_result_not_only_the_first():
    msgs = [user("u0", TEN), asst("a1", use("t1", "Bash"), mid="m1"), asst("a2", TEN, mid="m2"),
            results("r3", res("t1", TEN))]
    assert adjust_index_to_preserve_invariants(msgs, 2, 0) == 1
    assert adjust_index_to_preserve_invariants(msgs, 2, 2) == 2  # never below the floor


# --- session_memory_compact ---------------------------------------------------------------------

def sm_compact(msgs, last_id, cfg=None):
    state = SessionMemoryState(content="# Session Title\n- the notes", last_summarized_message_id=last_id)
    return session_memory_compact(msgs, msgs, state, config=cfg or keep_cfg(min_tokens=30),
                                  prompts=PromptSet(), ids=IdFactory("sm"), now=T0,
                                  transcript_path="/t/s.jsonl", pre_tokens=999)


def test_missing_last_summarized_id_is_treated_as_the_last_message():
    msgs = convo(10)
    missing = sm_compact(msgs, "not-in-this-context")
    last = sm_compact(msgs, msgs[-1].uuid)
    earlier = sm_compact(msgs, msgs[3].uuid)
    assert [m.uuid for m in missing.kept] == [m.uuid for m in last.kept] == ["u6", "a7", "u8", "a9"][1:]
    assert [m.uuid for m in earlier.kept] == [m.uuid for m in msgs[4:]]


def test_sm_compaction_layout():
    msgs = convo(10)
    result = sm_compact(msgs, msgs[-1].uuid)
    post = result.post_messages
    assert isinstance(post[0], CompactBoundary) and post[0].pre_tokens == 999 and post[0].trigger == "auto"
    assert post[0].logical_parent_uuid == "a9"
    assert isinstance(post[1], UserMessage) and post[1].is_compact_summary
    assert "# Session Title\n- the notes" in post[1].content and "/t/s.jsonl" in post[1].content
    assert post[2:] == msgs[7:]
    assert [m.uuid for m in result.summarized] == [m.uuid for m in msgs[:7]]
    assert result.kind == "session_memory" and result.request is None


def test_sm_compaction_without_notes_or_with_nothing_older_is_none():
    msgs = convo(4)
    state = SessionMemoryState()
    assert session_memory_compact(msgs, msgs, state, config=CFG, prompts=PromptSet(), ids=IdFactory("x"),
                                  now=T0, transcript_path="/t", pre_tokens=1) is None
    assert sm_compact(msgs, msgs[-1].uuid, keep_cfg(min_tokens=10_000)) is None


# --- through the ContextManager ------------------------------------------------------------------

def sm_session(session, steps=60, **overrides):
    s = session(EngineConfig.for_window(20_000, session_memory_enabled=True, **overrides))
    s.say("build the parser for the config language")
    for i in range(steps):
        s.step(f"working on step {i}", [s.tool("Bash", f"result {i} " + "z" * 2_800, command=f"make {i}")])
        if s.cm.compactions:
            break
    return s


def test_notes_are_extracted_by_the_offline_model(session):
    s = sm_session(session, steps=3)
    assert s.config.sm_init_tokens == 1_000
    events = s.events("session_memory", "extracted")
    assert events and events[0].tokens_before >= 1_000
    notes = s.cm.memory.content
    assert notes.startswith("# Session Title\n")
    for heading in ("# Current State", "# Task specification", "# Worklog"):
        assert heading in notes
    assert (s.cm.session_dir / "session-memory" / "summary.md").read_text() == notes
    assert s.cm.memory.last_summarized_message_id == events[-1].ids[0]
    assert isinstance(next(m for m in s.cm.messages if m.uuid == events[-1].ids[0]), AssistantMessage)


def test_first_extraction_waits_for_the_init_threshold(session):
    s = session(EngineConfig.for_window(20_000, session_memory_enabled=True))
    s.say("hi")
    s.step("short answer")
    assert not s.events("session_memory")
    assert s.cm.memory.extractions == 0


def test_extraction_failure_is_an_event(session):
    s = session(EngineConfig.for_window(20_000, session_memory_enabled=True), faults={"session_memory": ["empty"]})
    s.say("build it")
    for i in range(4):
        s.step("step", [s.tool("Bash", f"{i}" * 2_800, command="make")])
    [failed] = s.events("session_memory", "extraction_failed")
    assert failed.detail == "empty notes" and failed.tokens_before >= 1_000
    assert s.events("session_memory", "extracted")  # the next one succeeded


def test_session_memory_compaction_at_the_threshold(session):
    s = sm_session(session)
    [record] = s.cm.compactions
    result = record.result
    [event] = s.events("autocompact", "session_memory_compaction")
    assert result.kind == "session_memory" and result.trigger == "auto"
    assert event.tokens_before >= s.config.autocompact_threshold == 16_700
    assert event.tokens_after == result.post_tokens < 16_700
    assert not s.events("autocompact", "full_compaction")
    # the notes are the summary; kept messages are verbatim and satisfy the keep window
    assert s.cm.messages[1].is_compact_summary and result.summary in s.cm.messages[1].content
    by_uuid = {m.uuid: m for m in record.history}
    assert all(by_uuid[m.uuid].content == m.content for m in result.kept)
    raw = sum(estimate_message(m, s.config) for m in result.kept)
    texts = sum(has_text_block(m) for m in result.kept)
    assert raw >= s.config.sm_keep_max_tokens or (raw >= s.config.sm_keep_min_tokens and texts >= 5)
    assert validate_api(to_api(s.cm.messages)) == []
    assert validate_api(s.prepare().body["messages"]) == []


def test_session_memory_compaction_makes_no_model_call(session):
    s = session(EngineConfig.for_window(20_000, session_memory_enabled=True))
    s.say("build the parser")
    for _ in range(60):
        before = len(s.llm.reference.requests)
        p = s.prepare()
        if p.compaction is not None:
            break
        call = s.tool("Bash", "z" * 2_800, command="make")[0]
        s.reply("working", [call], prepared=p)  # the extraction hook may call the model here
        s.cm.append(results(s.next_id("r"), *s.cm.tool_results([ToolOutcome(call, "z" * 2_800)]), ts=s.clock))
    assert p.compaction.kind == "session_memory"
    assert len(s.llm.reference.requests) == before


def test_falls_back_to_full_when_the_sm_result_is_still_above_the_threshold(session):
    s = sm_session(session, sm_keep_min_tokens=18_000, sm_keep_max_tokens=40_000)
    actions = [(e.tier, e.action) for e in s.cm.events if e.tier in ("session_memory", "autocompact")
               and e.action != "extracted"]
    assert actions == [("session_memory", "fallback_to_full"), ("autocompact", "full_compaction")]
    fallback = s.events("session_memory", "fallback_to_full")[0]
    assert fallback.tokens_after >= s.config.autocompact_threshold
    assert s.cm.compactions[0].result.kind == "full"
    assert s.cm.memory.last_summarized_message_id is None  # reset after a full compaction (004:301-303)


def test_manual_compact_without_instructions_tries_session_memory(session):
    s = sm_session(session, steps=8)
    s.tick(20)
    result = s.cm.compact(s.clock)
    assert result.kind == "session_memory" and result.trigger == "manual"
    assert [e.action for e in s.events("compact")] == ["session_memory_compaction"]
    assert s.cm.messages[0].trigger == "manual"


def test_manual_compact_with_instructions_goes_full(session):
    s = sm_session(session, steps=8)
    s.tick(20)
    result = s.cm.compact(s.clock, instructions="keep the test output")
    assert result.kind == "full" and result.custom_instructions == "keep the test output"
    assert [e.action for e in s.events("compact")] == ["full_compaction"]
    prompt = s.llm.reference.requests[-1]["messages"][-1]["content"]
    assert "keep the test output" in (prompt if isinstance(prompt, str) else str(prompt))


def test_manual_compact_without_notes_goes_full(session):
    s = session(EngineConfig.for_window(20_000, session_memory_enabled=True))
    s.say("hi")
    s.step("hello")
    s.tick(20)
    assert s.cm.compact(s.clock).kind == "full"
