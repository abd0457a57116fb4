"""Prompt caching as the API accounts it (issue 21): breakpoints, minimum length, lookback, lifetime,
errors; the offline model and the socket server report the same split; where pytest-ctxeval puts
breakpoints (probes of one context, judge votes) and what that saves."""

from __future__ import annotations

import pytest

from pytest_ctxeval.errors import ModelError
from pytest_ctxeval.grading.judging import Judge
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.llm.cassettes import request_key
from pytest_ctxeval.llm.prompt_cache import LOOKBACK_BLOCKS, PromptCache, breakpoint_problem, mark_last_block
from pytest_ctxeval.llm.server import ApiServer
from pytest_ctxeval.llm.pricing import cost_of
from pytest_ctxeval.core.tokens import estimate_api_request

BIG = "The build log says the migration 0042 failed on the users table. " * 120  # ~2,000 tokens
MARK = {"type": "ephemeral"}


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def body(*texts: str, marks: tuple[int, ...] = (0,), model: str = "claude-sonnet-5-5") -> dict:
    blocks = [{"type": "text", "text": t, **({"cache_control": MARK} if i in marks else {})}
              for i, t in enumerate(texts)]
    return {"model": model, "max_tokens": 100, "messages": [{"role": "user", "content": blocks}]}


def split(cache: PromptCache, b: dict) -> tuple[int, int, int]:
    total = estimate_api_request(b)
    u = cache.account(b, total)
    assert u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens == total
    return u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens


def test_the_first_request_writes_the_prefix_and_the_next_reads_it() -> None:
    cache = PromptCache(Clock())
    prefix = estimate_api_request(body(BIG, marks=()))
    assert split(cache, body(BIG, "question one")) == (3, prefix, 0)
    assert split(cache, body(BIG, "question two, longer")) == (5, 0, prefix)  # only what follows the breakpoint is new


def test_no_breakpoint_no_cache_and_a_changed_prefix_misses() -> None:
    cache = PromptCache(Clock())
    assert split(cache, body(BIG, "q", marks=()))[1:] == (0, 0)
    split(cache, body(BIG, "q"))
    assert split(cache, body(BIG + "!", "q"))[2] == 0  # one byte changed before the breakpoint
    assert split(cache, body(BIG, "q", model="claude-opus-4-1"))[2] == 0  # the cache is per model


def test_a_prefix_under_the_models_minimum_is_not_cached() -> None:
    cache = PromptCache(Clock())
    short = "x " * 1_500  # ~750 tokens: under Sonnet's 1,024
    assert split(cache, body(short, "q")) == (estimate_api_request(body(short, "q", marks=())), 0, 0)
    # The same ~2,000-token prefix is cacheable for Sonnet (1,024) but not for Haiku 5.5 (4,096).
    assert split(cache, body(BIG, "q", model="claude-haiku-5-5"))[1:] == (0, 0)
    assert split(cache, body(BIG, "q", model="claude-sonnet-5-5"))[1] > 0


def test_entries_live_five_minutes_on_the_runs_clock_and_a_hit_refreshes_them() -> None:
    clock = Clock()
    cache = PromptCache(clock)
    split(cache, body(BIG, "q"))
    clock.now += 299
    assert split(cache, body(BIG, "q"))[2] > 0  # read at 299 s: the entry lives on from here
    clock.now += 299
    assert split(cache, body(BIG, "q"))[2] > 0
    clock.now += 301
    assert split(cache, body(BIG, "q"))[2] == 0  # 301 s since the last use: expired, written again


def test_an_hour_ttl_outlives_five_minutes() -> None:
    clock = Clock()
    cache = PromptCache(clock)
    b = body(BIG, "q")
    b["messages"][0]["content"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    split(cache, b)
    clock.now += 1_800
    assert split(cache, b)[2] > 0


def test_a_later_breakpoint_reads_an_entry_up_to_20_blocks_back() -> None:
    cache = PromptCache(Clock())
    split(cache, body(BIG, "q"))  # an entry after block 0
    near = body(BIG, *[f"turn {i}" for i in range(LOOKBACK_BLOCKS)], marks=(LOOKBACK_BLOCKS,))
    assert split(cache, near)[2] == estimate_api_request(body(BIG, marks=()))
    far = body(BIG, *[f"turn {i}" for i in range(LOOKBACK_BLOCKS + 1)], marks=(LOOKBACK_BLOCKS + 1,))
    fresh = PromptCache(Clock())
    split(fresh, body(BIG, "q"))
    assert split(fresh, far)[2] == 0  # 21 blocks back: out of the lookback window


def test_marks_the_api_refuses() -> None:
    five = body(*["a block of text"] * 5, marks=(0, 1, 2, 3, 4))
    assert breakpoint_problem(five) == "A maximum of 4 blocks with cache_control may be provided. Found 5."
    empty = body("", "q")
    assert "empty text blocks" in (breakpoint_problem(empty) or "")
    assert "'5m' or '1h'" in (breakpoint_problem({"messages": [{"role": "user", "content": [
        {"type": "text", "text": "x", "cache_control": {"type": "ephemeral", "ttl": "2h"}}]}]}) or "")
    llm = make_llm("offline")
    with pytest.raises(ModelError, match="A maximum of 4 blocks"):
        llm.complete(task="chat", messages=five["messages"])


def test_offline_and_socket_server_report_the_same_split(api_server: ApiServer, tmp_path) -> None:
    offline = make_llm("offline", "claude-sonnet-5-5")
    real = make_llm("anthropic", "claude-sonnet-5-5", cassettes=tmp_path)
    for llm in (offline, real):
        first = llm.complete(task="chat", messages=body(BIG, "question one")["messages"], max_tokens=2_000)
        second = llm.complete(task="chat", messages=body(BIG, "question two")["messages"], max_tokens=2_000)
        assert first.usage.cache_creation_input_tokens > 1_024 and first.usage.cache_read_input_tokens == 0
        assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
        assert second.usage.cache_creation_input_tokens == 0 and second.usage.input_tokens < 10
    assert offline.usage.as_dict()["cache_read_input_tokens"] == real.usage.as_dict()["cache_read_input_tokens"]


def test_cache_reads_and_writes_are_priced_as_the_api_bills_them() -> None:
    row = {"input_tokens": 1_000_000, "cache_creation_input_tokens": 1_000_000, "cache_read_input_tokens": 1_000_000}
    assert cost_of("claude-sonnet-5-5", row) == pytest.approx(2.0 + 2.5 + 0.1)  # 1x, 1.25x, 0.05x here


def test_breakpoints_never_change_the_cassette_key() -> None:
    plain = body(BIG, "q", marks=())
    assert request_key(plain, "probe") == request_key(body(BIG, "q"), "probe")
    assert request_key({"messages": mark_last_block(plain["messages"])}) == request_key({"messages": plain["messages"]})


def test_a_tool_input_named_cache_control_is_data_and_stays_in_the_key() -> None:
    def use(value: dict) -> dict:
        return {"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n",
                                                                "input": value}]}]}

    assert request_key(use({"cache_control": 1})) != request_key(use({}))


def test_probes_of_one_context_read_it_from_the_cache() -> None:
    llm = make_llm("offline", "claude-sonnet-5-5")
    context = [{"role": "user", "content": [{"type": "text", "text": BIG}]},
               {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]}]
    replies = Judge(llm).ask_many([(context, q) for q in ("Which migration failed?", "Which table?", "Why?")])
    writes = [r.usage.cache_creation_input_tokens for r in replies]
    reads = [r.usage.cache_read_input_tokens for r in replies]
    assert writes[0] > 1_024 and writes[1:] == [0, 0] and reads == [0, writes[0], writes[0]]
    sent = llm.reference.requests[-1]["messages"]
    assert sent[1]["content"][-1]["cache_control"] == MARK  # the breakpoint ends the context, before the question
    # Without caching the same requests are sent, unmarked, and every probe pays the whole context.
    plain = make_llm("offline", "claude-sonnet-5-5", caching=False)
    unmarked = Judge(plain).ask_many([(context, q) for q in ("Which migration failed?", "Which table?", "Why?")])
    assert all(r.usage.cache_read_input_tokens == r.usage.cache_creation_input_tokens == 0 for r in unmarked)
    assert [r.text for r in unmarked] == [r.text for r in replies]
    def input_cost(usage: dict) -> float:
        return cost_of("claude-sonnet-5-5", {**usage, "output_tokens": 0})

    assert input_cost(llm.usage.as_dict()) < 0.6 * input_cost(plain.usage.as_dict())  # 1.25 + 2 x 0.05 of 3


def test_judge_votes_share_the_prompt() -> None:
    llm = make_llm("offline", "claude-sonnet-5-5")
    judgement = Judge(llm, votes=3).judge("intent_preservation", messages="rename the helper", intent="",
                                          context=BIG)
    assert judgement.votes and len(judgement.votes) == 3
    rows = llm.reference.requests
    notes = [r["messages"][0]["content"][1]["text"] for r in rows]
    # The first vote goes alone (it writes the cache); the other two go side by side, in any order.
    assert notes[0] == "(Independent judgement 1 of 3.)"
    assert sorted(notes[1:]) == [f"(Independent judgement {v} of 3.)" for v in (2, 3)]
    assert llm.usage.cache_read_input_tokens == 2 * llm.usage.cache_creation_input_tokens > 0
    # One vote: the request is the one sent before prompt caching (recorded cassettes still answer it).
    one = make_llm("offline", "claude-sonnet-5-5")
    Judge(one).judge("intent_preservation", messages="m", intent="", context="c")
    sent = one.reference.requests[0]
    assert sent["system"].endswith("(Independent judgement 1 of 1.)") and isinstance(sent["messages"][0]["content"], str)
