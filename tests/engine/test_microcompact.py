"""Tier 3: microcompact (000:104-124, 003:108-146, 003:473-532, 004:187-226).

Time-based clearing after a 60-minute gap (keep the 5 most recent compactable results), the
compactable set and its ``read_only`` profile, frozen clearing, tokens freed subtracted before the
threshold check, the cached ``cache_edits`` path, and the API ``context_management`` config.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import TypeAdapter

from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine.microcompact import (
    CLEARED, MicrocompactState, apply_cleared, cached_edits, compactable_results, context_management,
    time_based_clear, time_based_due,
)
from pytest_ctxeval.core.messages import Usage, UserMessage
from pytest_ctxeval.core.tokens import estimate_messages, estimate_text
from pytest_ctxeval.transcript import read_transcript

from engine_kit import T0, Session, asst, body_results, res, results, use, user

HOUR = timedelta(minutes=60)


def build(s: Session, tools: list[str], content=lambda i: f"output of call {i} " + "x" * 400,
          anchor: Usage | None = None) -> list[str]:
    """Append ``user, (assistant tool_use, user tool_result) * n`` at T0; the tool ids."""
    s.cm.append(user("u0", "start"))
    ids = []
    for i, name in enumerate(tools):
        tid = f"toolu_{i:02d}"
        ids.append(tid)
        usage = anchor if i == len(tools) - 1 else None
        s.cm.append(asst(f"a{i}", use(tid, name, file_path=f"/f{i}.py"), mid=f"m{i}", usage=usage))
        s.cm.append(results(f"r{i}", res(tid, content(i))))
    return ids


def cleared_in(body) -> set[str]:
    return {tid for tid, c in body_results(body).items() if c == CLEARED}


def test_cleared_marker_and_constants():
    cfg = EngineConfig()
    assert CLEARED == "[Old tool result content cleared]"
    assert (cfg.microcompact_gap_minutes, cfg.microcompact_keep_recent) == (60, 5)
    assert cfg.compactable_tools == ("Read", "Bash", "PowerShell", "Grep", "Glob", "WebSearch", "WebFetch",
                                     "Edit", "Write")


# --- the 60-minute gap ---------------------------------------------------------------------------

@pytest.mark.parametrize("gap,due", [
    (timedelta(minutes=59, seconds=59), False),
    (timedelta(minutes=60), True),
    (timedelta(minutes=60, seconds=1), True),
])
def test_time_based_fires_at_exactly_60_minutes(session, gap, due):
    s = session()
    ids = build(s, ["Bash"] * 8)
    prepared = s.cm.prepare(T0 + gap)
    events = [e for e in prepared.events if e.tier == "microcompact"]
    if due:
        [event] = events
        assert event.action == "time_based_clear" and event.ids == ids[:3]
        assert cleared_in(prepared.body) == set(ids[:3])
    else:
        assert events == [] and cleared_in(prepared.body) == set()


def test_time_based_due_measures_from_the_last_assistant_message():
    cfg = EngineConfig()
    msgs = [user("u0", "hi"), asst("a0", ts=T0), user("u1", "later", ts=T0 + 2 * HOUR)]
    assert time_based_due(msgs, T0 + HOUR - timedelta(seconds=1), cfg) is None
    assert time_based_due(msgs, T0 + HOUR, cfg) == 60.0
    assert time_based_due([user("u0", "no reply yet")], T0 + 5 * HOUR, cfg) is None


@pytest.mark.parametrize("n,cleared", [(4, 0), (5, 0), (6, 1), (8, 3)])
def test_keeps_the_5_most_recent_compactable_results(session, n, cleared):
    s = session()
    ids = build(s, ["Grep"] * n)
    prepared = s.cm.prepare(T0 + HOUR)
    assert cleared_in(prepared.body) == set(ids[:cleared])
    for tid in ids[cleared:]:
        assert body_results(prepared.body)[tid].startswith("output of call")


def test_never_clears_non_compactable_tools(session):
    s = session()
    tools = ["Task", "TodoWrite", "Bash", "Agent", "Read", "Bash", "Task", "Bash", "Bash", "Bash", "Bash"]
    ids = build(s, tools)
    prepared = s.cm.prepare(T0 + HOUR)
    compactable = [t for t, name in zip(ids, tools) if name in ("Bash", "Read")]
    assert cleared_in(prepared.body) == set(compactable[:-5])  # Bash#2 and Read#4
    for tid, name in zip(ids, tools):
        if name in ("Task", "TodoWrite", "Agent"):
            assert body_results(prepared.body)[tid].startswith("output of call")


@pytest.mark.parametrize("profile,edit_cleared", [("default", True), ("read_only", False)])
def test_read_only_profile_never_clears_edit_or_write(session, profile, edit_cleared):
    s = session(EngineConfig(microcompact_profile=profile))
    tools = ["Edit", "Write", "Read", "Edit", "Bash", "Bash", "Bash", "Bash", "Bash", "Write"]
    ids = build(s, tools)
    prepared = s.cm.prepare(T0 + HOUR)
    cleared = cleared_in(prepared.body)
    writes = {t for t, n in zip(ids, tools) if n in ("Edit", "Write")}
    if edit_cleared:
        assert cleared == set(ids[:5])  # 10 compactable, the 5 oldest go, Edit/Write among them
    else:
        assert not cleared & writes
        assert cleared == {ids[2]}  # only the Read: 6 read-side results, keep 5
    assert EngineConfig(microcompact_profile="read_only").compactable_tools == (
        "Read", "Bash", "PowerShell", "Grep", "Glob", "WebSearch", "WebFetch")


def test_clearing_is_idempotent():
    cfg = EngineConfig()
    msgs = [user("u0", "go")]
    for i in range(8):
        msgs += [asst(f"a{i}", use(f"t{i}", "Bash"), mid=f"m{i}"), results(f"r{i}", res(f"t{i}", f"out {i}"))]
    state = MicrocompactState()
    def name(tid: str) -> str:
        return "Bash"
    first = time_based_clear(msgs, cfg, state, name)
    assert first == ["t0", "t1", "t2"]
    assert time_based_clear(msgs, cfg, state, name) == []
    once = apply_cleared(msgs, state.cleared_ids)
    twice = apply_cleared(once, state.cleared_ids)
    assert [m.model_dump() for m in twice] == [m.model_dump() for m in once]
    assert time_based_clear(once, cfg, state, name) == []
    assert msgs[2].content[0].content == "out 0"  # the input is not modified


def test_a_second_gap_without_new_results_clears_nothing_more(session):
    s = session()
    build(s, ["Bash"] * 7)
    s.cm.prepare(T0 + HOUR)
    prepared = s.cm.prepare(T0 + 3 * HOUR)
    assert [e for e in prepared.events if e.tier == "microcompact"] == []
    assert len(s.events("microcompact", "time_based_clear")) == 1


def test_cleared_results_stay_cleared_in_later_requests(session):
    s = session()
    ids = build(s, ["Bash"] * 7)
    s.clock = T0 + HOUR
    first = s.prepare()
    assert cleared_in(first.body) == set(ids[:2])
    for k in range(3):  # no gap any more
        s.step(f"round {k}", [s.tool("Bash", f"new {k}", command="ls")])
    later = s.prepare()
    assert not [e for e in later.events if e.tier == "microcompact"]
    # 10 compactable results now, the 5 most recent intact; ids[:2] stay cleared, ids[2:5] not newly cleared
    assert cleared_in(later.body) == set(ids[:2])
    for p in s.prepared[1:]:
        assert cleared_in(p.body) >= set(ids[:2])


def test_context_and_transcript_keep_the_originals(session):
    s = session()
    ids = build(s, ["Read"] * 7)
    s.cm.prepare(T0 + HOUR)
    s.close()
    originals = {b.tool_use_id: b.content for m in s.cm.messages if isinstance(m, UserMessage)
                 and isinstance(m.content, list) for b in m.content}
    assert originals[ids[0]].startswith("output of call 0 ")
    saved = read_transcript(s.transcript.path)
    on_disk = {b.tool_use_id: b.content for m in saved.messages if isinstance(m, UserMessage)
               and isinstance(m.content, list) for b in m.content}
    assert on_disk == {tid: f"output of call {i} " + "x" * 400 for i, tid in enumerate(ids)}


def test_time_based_event_reports_tokens_freed(session):
    s = session(EngineConfig.for_window(20_000))
    build(s, ["Glob"] * 8, content=lambda i: "x" * 4_000)  # 1,000 tokens each
    prepared = s.cm.prepare(T0 + HOUR)
    [event] = prepared.events
    freed_each = 1_000 - estimate_text(CLEARED)  # 1,000 - 8
    assert (event.tier, event.action) == ("microcompact", "time_based_clear")
    assert event.tokens_before - event.tokens_after == 3 * freed_each == 2_976


# --- tokens freed are subtracted before the threshold check (003:514-517) ---------------------

def anchored(session, gap):
    """Eight 1,000-token Glob results; the last response's usage anchor counts 16,800 tokens, so the
    count is 16,800 + ceil(4/3 * 1) = 16,802, above the 16,700 threshold of a 20,000 window."""
    s = session(EngineConfig.for_window(20_000))
    build(s, ["Glob"] * 8, content=lambda i: "x" * 4_000 if i < 7 else "ok",
          anchor=Usage(input_tokens=16_800))
    return s, s.cm.prepare(T0 + gap)


def test_freed_tokens_keep_the_count_below_the_threshold(session):
    s, prepared = anchored(session, HOUR)
    assert s.config.autocompact_threshold == 16_700
    assert prepared.tokens == 16_802 - 3 * 992 == 13_826
    assert prepared.compaction is None
    assert not s.events("autocompact")


def test_without_the_gap_the_same_context_compacts(session):
    s, prepared = anchored(session, HOUR - timedelta(seconds=1))
    assert prepared.compaction is not None
    [event] = s.events("autocompact", "full_compaction")
    assert event.tokens_before == 16_802


def test_freed_tokens_are_not_subtracted_twice_without_an_anchor(session):
    s = session(EngineConfig.for_window(20_000))
    build(s, ["Glob"] * 8, content=lambda i: "x" * 4_000)
    prepared = s.cm.prepare(T0 + HOUR)
    # the view sent is already cleared: its conservative estimate is what the context holds
    assert prepared.tokens == estimate_messages(s.cm._view(), s.config)


# --- the cached path: cache_edits -----------------------------------------------------------------

def cached_session(session, n, tool="Bash"):
    s = session(EngineConfig(cached_microcompact=True))
    s.say("go")
    calls = []
    for i in range(n):
        call = s.tool(tool, f"cached output {i}", command=f"echo {i}")
        calls.append(call[0].id)
        s.step(f"r{i}", [call])
    return s, calls


@pytest.mark.parametrize("n,deleted", [(20, 0), (21, 16), (22, 17)])
def test_cache_edits_only_above_the_trigger(session, n, deleted):
    cfg = EngineConfig()
    assert (cfg.cache_edits_trigger_results, cfg.cache_edits_keep_recent) == (20, 5)
    msgs = [user("u0", "go")]
    for i in range(n):
        msgs += [asst(f"a{i}", use(f"t{i:02d}", "Bash"), mid=f"m{i}"), results(f"r{i}", res(f"t{i:02d}", "o"))]
    edits = cached_edits(msgs, cfg, MicrocompactState(), lambda t: "Bash")
    assert edits == [{"type": "delete", "tool_use_id": f"t{i:02d}"} for i in range(deleted)]


def test_cache_edits_in_the_request_body_and_not_resent(session):
    s, ids = cached_session(session, 21)
    # 20 results were live before the 21st arrived: no directives so far
    assert all("cache_edits" not in p.body for p in s.prepared)
    p = s.prepare()
    assert p.body["cache_edits"] == [{"type": "delete", "tool_use_id": t} for t in ids[:16]]
    [event] = [e for e in p.events if e.tier == "microcompact"]
    assert event.action == "cache_edits" and event.ids == ids[:16]
    # local messages unchanged: the deleted results still hold their content
    assert body_results(p.body)[ids[0]] == "cached output 0"
    again = s.prepare()
    assert "cache_edits" not in again.body


def test_cache_edits_count_only_live_results(session):
    s, ids = cached_session(session, 21)
    s.prepare()  # deletes ids[:16], 5 live
    more = []
    for i in range(15):  # 20 live
        call = s.tool("Bash", f"more {i}", command="ls")
        more.append(call[0].id)
        s.step("more", [call])
    assert "cache_edits" not in s.prepared[-1].body
    call = s.tool("Bash", "one more", command="ls")
    s.step("one more", [call])
    p = s.prepare()  # 21 live: the 16 oldest live go, never the already-deleted ones
    assert [e["tool_use_id"] for e in p.body["cache_edits"]] == (ids[16:] + more)[:16]


def test_non_compactable_results_do_not_count_toward_cache_edits(session):
    s, _ = cached_session(session, 25, tool="Task")
    assert all("cache_edits" not in p.body for p in s.prepared)
    assert "cache_edits" not in s.prepare().body


def test_time_based_path_wins_over_cache_edits(session):
    s = session()
    ids = build(s, ["Bash"] * 25)
    prepared = s.cm.prepare(T0 + HOUR)
    assert "cache_edits" not in prepared.body
    assert cleared_in(prepared.body) == set(ids[:20])
    assert [e.action for e in prepared.events] == ["time_based_clear"]


def test_compactable_results_oldest_first():
    msgs = [user("u0", "go"), asst("a0", use("t1", "Bash"), use("t2", "Task"), use("t3", "Read")),
            results("r0", res("t1", "a"), res("t2", "b"), res("t3", "c"))]
    names = {"t1": "Bash", "t2": "Task", "t3": "Read"}
    assert [t for t, _ in compactable_results(msgs, EngineConfig(), names.get)] == ["t1", "t3"]


# --- API context management ----------------------------------------------------------------------

def test_context_management_validates_against_the_sdk_type():
    from anthropic.types.beta import BetaContextManagementConfigParam

    cfg = context_management(EngineConfig())
    TypeAdapter(BetaContextManagementConfigParam).validate_python(cfg)
    thinking, tools = cfg["edits"]
    assert thinking == {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}}
    assert tools["type"] == "clear_tool_uses_20250919"
    assert tools["trigger"] == {"type": "input_tokens", "value": 180_000}
    assert tools["clear_at_least"] == {"type": "input_tokens", "value": 140_000}
    assert tools["exclude_tools"] == ["Task", "Agent", "TodoWrite", "Skill", "MultiEdit", "NotebookEdit"]


def test_context_management_scales_with_the_window():
    tools = context_management(EngineConfig.for_window(20_000))["edits"][1]
    assert (tools["trigger"]["value"], tools["clear_at_least"]["value"]) == (18_000, 14_000)


def test_context_management_in_the_request_body(session):
    on, off = session(EngineConfig()), session(EngineConfig(api_context_management=False))
    for s in (on, off):
        s.say("hi")
    assert on.prepare().body["context_management"] == context_management(EngineConfig())
    assert "context_management" not in off.prepare().body


def test_cached_path_is_off_by_default(session):
    """Behind feature('CACHED_MICROCOMPACT') (003:137): no directives unless configured."""
    s = session(EngineConfig())
    s.say("go")
    for i in range(30):
        s.step(f"r{i}", [s.tool("Bash", f"out {i}", command=f"echo {i}")])
    assert not any("cache_edits" in p.body for p in s.prepared)
    assert not s.events("microcompact", "cache_edits")


def test_cache_edit_savings_last_beyond_the_request_that_sent_them(session):
    """Deleted results stop counting for good: the next anchor (the usage the API reports)
    excludes them, so the count does not jump back on the following request."""
    s, ids = cached_session(session, 21, tool="Bash")
    first = s.prepare()
    assert first.body.get("cache_edits")
    s.reply("ok", prepared=first)
    after = s.prepare()
    assert "cache_edits" not in after.body
    assert after.tokens <= first.tokens + 60  # only the new reply was added
