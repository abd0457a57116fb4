"""The per-request pipeline: thresholds, the circuit breaker (000:206-210, 003:280-289,
004:270-314) and the events every tier emits."""

from __future__ import annotations

import pytest

from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine.autocompact import AutoCompactTracking, should_autocompact, token_warning_state
from pytest_ctxeval.engine.pipeline import MAIN_MAX_TOKENS, DEFAULT_SYSTEM_PROMPT
from pytest_ctxeval.core.messages import Usage, validate_api
from pytest_ctxeval.core.tokens import count_tokens

from engine_kit import T0, asst, user

W20 = EngineConfig.for_window(20_000)


# --- thresholds --------------------------------------------------------------------------------

@pytest.mark.parametrize("tokens,expected", [(166_999, False), (167_000, True), (167_001, True)])
def test_should_autocompact_at_the_threshold(tokens, expected):
    assert should_autocompact(tokens, EngineConfig(), AutoCompactTracking()) is expected


def test_should_autocompact_off_when_disabled_or_tripped():
    assert not should_autocompact(190_000, EngineConfig(autocompact_enabled=False), AutoCompactTracking())
    assert not should_autocompact(190_000, EngineConfig(), AutoCompactTracking(consecutive_failures=3))
    assert should_autocompact(190_000, EngineConfig(), AutoCompactTracking(consecutive_failures=2))


@pytest.mark.parametrize("tokens,warning,blocking", [
    (159_999, False, False), (160_000, True, False), (176_999, True, False), (177_000, True, True),
])
def test_warning_and_blocking_boundaries(tokens, warning, blocking):
    state = token_warning_state(tokens, EngineConfig())
    assert (state.above_warning, state.at_blocking_limit) == (warning, blocking)


@pytest.mark.parametrize("anchor,compacts", [(16_699, False), (16_700, True)])
def test_prepare_compacts_at_the_threshold(session, anchor, compacts):
    s = session(W20)
    s.cm.append(user("u0", "hello"))
    s.cm.append(asst("a0", "hi", mid="m0", usage=Usage(input_tokens=anchor - 3)))
    s.cm.append(user("u1", "continue"))  # 8 bytes: 2 tokens, ceil(4/3 * 2) = 3 with the margin
    assert count_tokens(s.cm.messages, W20) == anchor
    prepared = s.cm.prepare(T0)
    assert (prepared.compaction is not None) is compacts
    if compacts:
        [event] = s.events("autocompact", "full_compaction")
        assert event.tokens_before == 16_700
        assert prepared.tokens == count_tokens(s.cm._view(), W20) < 16_700


def test_blocking_limit_event_when_autocompact_is_off(session):
    s = session(EngineConfig.for_window(20_000, autocompact_enabled=False))
    s.cm.append(user("u0", "hello"))
    s.cm.append(asst("a0", "hi", mid="m0", usage=Usage(input_tokens=17_700)))
    prepared = s.cm.prepare(T0)
    assert prepared.warning.at_blocking_limit and prepared.compaction is None
    [event] = s.events("autocompact", "blocking_limit")
    assert event.tokens_before == 17_700 and "blocking limit 17700" in event.detail


def test_request_body_shape(session):
    s = session(W20)
    s.say("hello")
    body = s.prepare().body
    assert body["model"] == "ctxeval-reference" and body["max_tokens"] == MAIN_MAX_TOKENS
    assert body["system"] == DEFAULT_SYSTEM_PROMPT
    assert body["messages"] == [{"role": "user", "content": "hello"}]


# --- the circuit breaker ---------------------------------------------------------------------------

def attempts(s) -> list[str]:
    return [e.action for e in s.cm.events if e.tier == "autocompact" and e.action in
            ("failed", "full_compaction", "circuit_breaker_tripped")]


def drive(s, *, until_attempts: int, extra_steps: int = 0, limit: int = 120):
    s.say("keep going")
    done = 0
    for _ in range(limit):
        s.step("work", [s.tool("Bash", "z" * 2_800, command="make")])
        n = len([a for a in attempts(s) if a != "circuit_breaker_tripped"])
        if n >= until_attempts:
            done += 1
            if done > extra_steps:
                return
    raise AssertionError(f"only {attempts(s)}")


def test_breaker_trips_at_exactly_three_consecutive_failures(session):
    s = session(W20, faults={"compact": ["empty"] * 6})
    drive(s, until_attempts=2)
    assert attempts(s) == ["failed", "failed"] and not s.cm.tracking.tripped
    drive(s, until_attempts=3)
    assert attempts(s) == ["failed", "failed", "failed", "circuit_breaker_tripped"]
    assert s.cm.tracking.tripped and s.cm.tracking.consecutive_failures == 3
    details = [e.detail for e in s.events("autocompact", "failed")]
    assert [d[-len("(consecutive failures: 1)"):] for d in details] == [
        f"(consecutive failures: {i})" for i in (1, 2, 3)]
    [tripped] = s.events("autocompact", "circuit_breaker_tripped")
    assert tripped.tokens_before >= 16_700


def test_no_auto_attempts_after_the_breaker_trips(session):
    s = session(W20, faults={"compact": ["empty"] * 6})
    drive(s, until_attempts=3)
    requests = len(s.llm.reference.requests)
    for _ in range(10):
        p = s.step("still working", [s.tool("Bash", "z" * 2_800, command="make")])
        assert p.tokens >= 16_700 and p.compaction is None
    assert attempts(s) == ["failed", "failed", "failed", "circuit_breaker_tripped"]
    assert len(s.llm.reference.requests) == requests
    assert s.events("autocompact", "blocking_limit")  # the context keeps growing


def test_a_success_in_between_resets_the_count(session):
    s = session(W20, faults={"compact": ["empty", "empty", "ok", "empty", "empty"]})
    drive(s, until_attempts=5)
    assert attempts(s) == ["failed", "failed", "full_compaction", "failed", "failed"]
    assert s.cm.tracking.consecutive_failures == 2 and not s.cm.tracking.tripped
    drive(s, until_attempts=6)
    assert attempts(s)[-1] == "full_compaction" and s.cm.tracking.consecutive_failures == 0
    assert not s.events("autocompact", "circuit_breaker_tripped")


def test_model_errors_count_as_failures_too(session):
    s = session(W20, faults={"compact": ["server_error"] * 3})
    drive(s, until_attempts=3)
    assert attempts(s) == ["failed", "failed", "failed", "circuit_breaker_tripped"]
    assert "HTTP 500" in s.events("autocompact", "failed")[0].detail


# --- events --------------------------------------------------------------------------------------

KNOWN = {
    ("budget", "persisted"), ("budget", "read_limit"), ("dedupe", "file_unchanged_stub"),
    ("microcompact", "time_based_clear"), ("microcompact", "cache_edits"),
    ("session_memory", "extracted"), ("session_memory", "extraction_failed"), ("session_memory", "fallback_to_full"),
    ("autocompact", "full_compaction"), ("autocompact", "session_memory_compaction"), ("autocompact", "failed"),
    ("autocompact", "circuit_breaker_tripped"), ("autocompact", "blocking_limit"),
    ("compact", "full_compaction"), ("compact", "session_memory_compaction"), ("compact", "partial_compaction"),
    ("compact", "failed"), ("ptl", "truncated"),
}


def busy_session(session):
    s = session(EngineConfig.for_window(20_000, session_memory_enabled=True), faults={"compact": ["ptl"]})
    s.say("fix the failing tests in the parser")
    s.step("reading", [s.tool("Read", "def parse(): ...\n", file_path="/src/parser.py")])
    s.step("reading again", [s.tool("Read", "def parse(): ...\n", file_path="/src/parser.py")])
    s.step("too big", [s.tool("Read", "r" * 100_000, file_path="/src/huge.json")])
    s.step("huge output", [s.tool("Bash", "b" * 3_500, command="pytest -v")])
    for i in range(80):
        s.step(f"work {i}", [s.tool("Grep", f"{i}:" + "g" * 1_900, pattern=f"p{i}")])
        if i == 10:
            s.tick(3_600)
        if s.cm.compactions:
            break
    s.tick(20)
    s.cm.compact(s.clock, instructions="keep the test names")
    for i in range(3):
        s.step(f"after {i}", [s.tool("Grep", f"after {i}", pattern="x")])
    s.tick(20)
    s.cm.compact(s.clock, partial="up_to", messages=2)
    return s


def test_every_event_has_its_tier_action_and_tokens(session):
    s = busy_session(session)
    seen = {(e.tier, e.action) for e in s.cm.events}
    assert seen <= KNOWN
    assert {("budget", "persisted"), ("budget", "read_limit"), ("dedupe", "file_unchanged_stub"),
            ("microcompact", "time_based_clear"), ("session_memory", "extracted"), ("ptl", "truncated"),
            ("compact", "full_compaction"), ("compact", "partial_compaction")} <= seen
    assert seen & {("autocompact", "full_compaction"), ("autocompact", "session_memory_compaction")}
    turns = [e.turn for e in s.cm.events]
    assert turns == sorted(turns)
    for e in s.cm.events:
        kind = (e.tier, e.action)
        assert set(e.as_dict()) == {"tier", "action", "turn", "tokens_before", "tokens_after", "ids", "detail"}
        if kind in {("budget", "persisted"), ("budget", "read_limit"), ("dedupe", "file_unchanged_stub")}:
            assert len(e.ids) == 1 and e.tokens_before is None and e.tokens_after is None
        if kind == ("budget", "persisted"):
            assert e.detail.startswith("tool_threshold: 3,500 chars -> ") and e.detail.endswith(f"{e.ids[0]}.txt")
        if kind == ("microcompact", "time_based_clear"):
            assert e.ids and e.tokens_before > e.tokens_after > 0
        if kind == ("session_memory", "extracted"):
            assert e.tokens_before >= 1_000 and len(e.ids) == 1
        if kind == ("ptl", "truncated"):
            assert e.tokens_before > 0 and e.tokens_after > 0
        if e.action.endswith("_compaction"):
            assert e.tokens_before > 0 and e.tokens_after > 0 and len(e.ids) == 1
            if e.action != "partial_compaction":  # summarising two tiny messages may not shrink them
                assert e.tokens_before > e.tokens_after
            record = next(c for c in s.cm.compactions if c.result.boundary.uuid == e.ids[0])
            assert e.tokens_after == record.result.post_tokens
            assert e.tier == ("compact" if record.result.trigger == "manual" else "autocompact")
            assert e.action == f"{record.result.kind}_compaction"
        if e.tier == "autocompact" and e.action.endswith("_compaction"):
            assert e.tokens_before >= 16_700


def test_prepared_request_events_are_this_requests_events(session):
    s = session(EngineConfig())
    s.say("go")
    s.step("run", [s.tool("Bash", "b" * 30_001, command="make")])
    p1 = s.prepare()
    p2 = s.prepare()
    assert [(e.tier, e.action) for e in p1.events] == [("budget", "persisted")]
    assert p2.events == [] and p2.turn == p1.turn + 1


def test_post_compaction_requests_are_valid_api(session):
    s = busy_session(session)
    for body in s.cm.requests:
        assert validate_api(body["messages"]) == []
    assert validate_api(s.prepare().body["messages"]) == []
    assert s.cm.compactions[-1].requests_after[-1] is s.cm.requests[-1]
