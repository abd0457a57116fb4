"""Tier 5: prompt-too-long retry truncation (000:162-175, 003:291-320, 004:511)."""

from __future__ import annotations

import math

import pytest

from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine.compact import CompactionFailed, compact_conversation
from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.engine.ptl import PTL_MARKER, group_by_api_round, truncate_head_for_ptl_retry
from pytest_ctxeval.core.ids import IdFactory
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.core.messages import AssistantMessage, CompactBoundary, UserMessage, to_api, validate_api
from pytest_ctxeval.core.tokens import estimate_api_request

from engine_kit import T0, asst, res, results, use, user

CFG = EngineConfig()
TEN = "t" * 40  # 10 tokens


def rounds(n: int) -> list:
    """``[u0]`` (10 tokens) then ``n`` rounds ``[a_i, u_i]`` of 20 tokens: ``n + 1`` groups."""
    msgs = [user("u0", TEN)]
    for i in range(1, n + 1):
        msgs += [asst(f"a{i}", TEN, mid=f"m{i}"), user(f"u{i}", TEN)]
    return msgs


def tool_rounds(n: int) -> list:
    msgs = [user("u0", "fix the build")]
    for i in range(1, n + 1):
        msgs += [asst(f"a{i}", f"step {i}", use(f"t{i}", "Bash", command=f"make {i}"), mid=f"m{i}"),
                 results(f"r{i}", res(f"t{i}", f"output {i} " + "o" * 400))]
    return msgs


def uuids(groups):
    return [[m.uuid for m in g] for g in groups]


# --- group_by_api_round ---------------------------------------------------------------------------

def test_groups_split_at_each_new_message_id():
    msgs = [user("u1", "q"), asst("a1", mid="m1"), user("u2", "q"), asst("a2", mid="m2"), asst("a3", mid="m2"),
            user("u3", "q")]
    assert uuids(group_by_api_round(msgs)) == [["u1"], ["a1", "u2"], ["a2", "a3", "u3"]]


def test_groups_skip_boundaries_and_use_uuid_without_message_id():
    msgs = [CompactBoundary(uuid="b"), user("s", "summary", is_compact_summary=True), user("u1", "q"),
            asst("a1"), asst("a2"), results("r1", res("t", "x"))]
    assert uuids(group_by_api_round(msgs)) == [["s", "u1"], ["a1"], ["a2", "r1"]]


def test_tool_results_stay_with_their_call():
    groups = group_by_api_round(tool_rounds(3))
    assert uuids(groups) == [["u0"], ["a1", "r1"], ["a2", "r2"], ["a3", "r3"]]
    assert group_by_api_round([]) == []


# --- truncate_head_for_ptl_retry ------------------------------------------------------------

@pytest.mark.parametrize("gap,dropped", [
    (1, 1), (10, 1),        # the first group (10 tokens) covers it
    (11, 2), (30, 2),       # 10 + 20
    (31, 3), (50, 3),
    (51, 4),
])
def test_parsed_gap_drops_groups_until_covered(gap, dropped):
    out, n = truncate_head_for_ptl_retry(rounds(9), gap, CFG)
    assert n == dropped
    assert [m.uuid for m in out[1:]] == [m.uuid for m in rounds(9)[1 + 2 * (dropped - 1):]]


@pytest.mark.parametrize("groups,dropped", [(2, 1), (4, 1), (5, 1), (9, 1), (10, 2), (14, 2), (15, 3), (20, 4)])
def test_without_a_gap_drop_20_percent_at_least_one(groups, dropped):
    assert dropped == max(1, math.floor(groups * 0.2))
    for gap in (None, 0):
        _, n = truncate_head_for_ptl_retry(rounds(groups - 1), gap, CFG)
        assert n == dropped


def test_always_keeps_one_group():
    msgs = rounds(5)
    out, n = truncate_head_for_ptl_retry(msgs, 10**9, CFG)
    assert n == 5 and [m.uuid for m in out[1:]] == ["a5", "u5"]
    assert truncate_head_for_ptl_retry(rounds(0), 10**9, CFG) is None
    assert truncate_head_for_ptl_retry([asst("a", mid="m"), user("u", "x")], None, CFG) is None


def test_drop_fraction_is_configurable():
    _, n = truncate_head_for_ptl_retry(rounds(9), None, EngineConfig(ptl_drop_fraction=0.5))
    assert n == 5


def test_prepends_the_marker_once():
    out, _ = truncate_head_for_ptl_retry(rounds(9), None, CFG, marker_uuid="mk")
    assert isinstance(out[0], UserMessage) and out[0].content == PTL_MARKER and out[0].uuid == "mk"
    assert out[0].timestamp == out[1].timestamp
    assert PTL_MARKER == "[earlier conversation truncated for compaction retry]"
    again, n = truncate_head_for_ptl_retry(out, None, CFG)
    assert [m.content for m in again].count(PTL_MARKER) == 1
    assert n == 1  # 8 groups left: the old marker is not a group


@pytest.mark.parametrize("gap", [None, 1, 250, 700, 10**6])
def test_kept_part_never_starts_with_a_tool_result(gap):
    out, _ = truncate_head_for_ptl_retry(tool_rounds(8), gap, CFG)
    assert isinstance(out[1], AssistantMessage)
    assert validate_api(to_api(out)) == []


# --- the retry loop in compaction ---------------------------------------------------------------

def compact(msgs, faults=None, config=CFG, llm=None):
    llm = llm or make_llm("offline", faults=faults, max_retries=0)
    result = compact_conversation(msgs, llm=llm, config=config, prompts=PromptSet(), ids=IdFactory("ptl"), now=T0,
                                  transcript_path="/t/s.jsonl", pre_tokens=123)
    return result, llm


def test_one_ptl_fault_takes_the_ptl_path_and_succeeds():
    result, llm = compact(tool_rounds(6), {"compact": ["ptl"]})
    assert len(llm.reference.requests) == 2
    [step] = result.ptl_steps
    assert step.gap == 1 and step.dropped_groups == 1  # "N tokens > M": N = M + 1 for the fault
    retry = llm.reference.requests[1]["messages"]
    assert retry[0]["content"].startswith(PTL_MARKER) or retry[0]["content"][0]["text"] == PTL_MARKER
    assert "fix the build" not in str(retry)  # the first group was dropped
    assert result.summary


def test_three_ptl_faults_need_exactly_three_retries():
    result, llm = compact(tool_rounds(6), {"compact": ["ptl"] * 3})
    assert result.ptl_retries == 3 and len(llm.reference.requests) == 4


def test_gives_up_after_three_retries_four_attempts():
    llm = make_llm("offline", faults={"compact": ["ptl"] * 4}, max_retries=0)
    with pytest.raises(CompactionFailed, match="still too long after 3 PTL retries") as info:
        compact(tool_rounds(6), llm=llm)
    assert len(llm.reference.requests) == 4
    assert len(info.value.ptl_steps) == 3
    assert CFG.max_ptl_retries == 3


def test_zero_retries_allowed_fails_on_the_first_ptl():
    llm = make_llm("offline", faults={"compact": ["ptl"]}, max_retries=0)
    with pytest.raises(CompactionFailed):
        compact(tool_rounds(6), config=EngineConfig(max_ptl_retries=0), llm=llm)
    assert len(llm.reference.requests) == 1


def test_ptl_without_numbers_drops_20_percent():
    result, _ = compact(tool_rounds(14), {"compact": ["ptl_no_gap"]})
    assert [(s.gap, s.dropped_groups) for s in result.ptl_steps] == [(None, 3)]  # 15 groups


def big_rounds(n: int, chars: int = 2_000) -> list:
    msgs = [user("u0", "fix the build")]
    for i in range(1, n + 1):
        msgs += [asst(f"a{i}", f"step {i}", use(f"t{i}", "Bash", command="make"), mid=f"m{i}"),
                 results(f"r{i}", res(f"t{i}", f"{i} " + "o" * chars))]
    return msgs


def test_a_really_oversized_request_is_cut_by_the_parsed_gap():
    config = EngineConfig.for_window(10_000)
    result, llm = compact(big_rounds(40), config=config)  # ~20,000 tokens against a 10,000 window
    first, *rest = llm.reference.requests
    assert estimate_api_request(first) > 10_000
    step = result.ptl_steps[0]
    assert step.gap == estimate_api_request(first) - 10_000
    assert step.dropped_groups >= step.gap // 520  # each round is ~515 tokens
    assert estimate_api_request(rest[-1]) <= 10_000
    assert estimate_api_request(rest[0]) <= estimate_api_request(first) - step.gap + 13  # + the marker


def request_size(msgs) -> int:
    prompts = PromptSet()
    return estimate_api_request({"system": prompts.system_compact, "messages": to_api(
        msgs + [UserMessage(uuid="c", content=prompts.render_compact())])})


def test_a_gap_covered_exactly_spends_a_second_retry_as_in_the_seed():
    """003:301-309 covers the gap with the dropped rounds alone; the marker put back in front is
    not counted, so rounds covering the gap exactly leave the retry over by the marker."""
    msgs = big_rounds(5, 800)
    msgs[0] = user("u0", "x" * 400)  # the first group: exactly 100 tokens
    window = request_size(msgs) - 100  # so the API reports a gap of exactly 100
    result, llm = compact(msgs, config=EngineConfig(context_window=window))
    assert result.ptl_steps[0].gap == 100 and result.ptl_steps[0].dropped_groups == 1
    assert len(result.ptl_steps) == 2 and result.ptl_steps[1].gap == 13  # the marker's 13 tokens


def test_a_single_round_left_fails():
    msgs = [user("u0", "x" * 100)]
    llm = make_llm("offline", faults={"compact": ["ptl"]}, max_retries=0)
    with pytest.raises(CompactionFailed, match="single API round"):
        compact(msgs, llm=llm)


# --- through the ContextManager: events -------------------------------------------------------

def fill_until_compaction_attempt(s, limit=80):
    s.say("keep going until the context is full")
    for i in range(limit):
        s.step(f"step {i}", [s.tool("Bash", f"{i} " + "z" * 2_800, command=f"make {i}")])
        if s.events("autocompact"):
            return
    raise AssertionError("no auto-compaction attempt")


def test_ptl_events_in_an_auto_compaction(session):
    s = session(EngineConfig.for_window(20_000), faults={"compact": ["ptl", "ptl"]})
    fill_until_compaction_attempt(s)
    actions = [(e.tier, e.action) for e in s.cm.events if e.tier in ("ptl", "autocompact")]
    assert actions == [("ptl", "truncated"), ("ptl", "truncated"), ("autocompact", "full_compaction")]
    first, second = s.events("ptl")
    # the first drop is the one-message opening round, replaced by the marker; the second a tool round
    assert first.tokens_after == second.tokens_before
    assert second.tokens_before - second.tokens_after > 700
    for e in (first, second):
        assert "gap 1" in e.detail and "dropped the oldest 1 API rounds" in e.detail
    assert s.cm.compactions[0].result.ptl_retries == 2


def test_ptl_exhausted_is_a_failed_auto_compaction(session):
    s = session(EngineConfig.for_window(20_000), faults={"compact": ["ptl"] * 4})
    fill_until_compaction_attempt(s)
    actions = [(e.tier, e.action) for e in s.cm.events if e.tier in ("ptl", "autocompact")]
    assert actions == [("ptl", "truncated")] * 3 + [("autocompact", "failed")]
    assert s.cm.tracking.consecutive_failures == 1
    assert not s.cm.compactions
