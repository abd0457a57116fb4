"""``opencode`` against opencode's documented behaviour (shared/PEERS.md lines 40-49)."""

from __future__ import annotations

import pytest

from pytest_ctxeval.compaction.base import CompactionFailed
from pytest_ctxeval.compaction.opencode import (
    FORMAT, OPENING, Opencode, prune_candidates, select_tail, serialise, tail_budget, usable_tokens,
)
from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine.microcompact import CLEARED
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.core.messages import UserMessage, person_text, text_of, tool_results
from pytest_ctxeval.core.tokens import estimate_message

from compaction_kit import Kit, state

FULL = EngineConfig.for_window(200_000)  # unscaled: protect 40,000, minimum 20,000


def _session(kit: Kit, turns: int, calls: int, output_tokens: int, tool: str = "Bash") -> list:
    msgs = []
    for t in range(turns):
        msgs.append(kit.user(f"turn {t}"))
        for _ in range(calls):
            msgs += kit.call(tool, "o" * (output_tokens * 4))
        msgs.append(kit.say(f"turn {t} done"))
    return msgs


def test_prune_frees_only_outputs_older_than_the_newest_40000_tokens_and_only_past_20000():
    kit = Kit()
    # 6 turns x 2 outputs x 5,000 tokens = 60,000; the last 2 turns (20,000) are protected, so the
    # walk sees 40,000 tokens: all of it is within the protected 40,000 -> nothing to prune.
    msgs = _session(kit, 6, 2, 5_000)
    assert prune_candidates(msgs, msgs, FULL) == []
    # 10 turns: the walk sees 80,000 tokens; past the newest 40,000 the other 40,000 (8 outputs) are
    # candidates, more than 20,000: pruned. The newest of them are the closest to the protected part.
    msgs = _session(kit, 10, 2, 5_000)
    ids = prune_candidates(msgs, msgs, FULL)
    outputs = [b.tool_use_id for m in msgs for b in tool_results(m)]
    assert ids and set(ids) == set(outputs[:8])


def test_prune_needs_more_than_20000_tokens_to_free():
    kit = Kit()
    # the last 2 turns are protected; 40,000 + exactly 20,000 tokens before them: not more than 20,000
    msgs = _session(kit, 8, 2, 5_000)[:]  # 8 turns x 10,000: walk sees 60,000 -> candidates 20,000
    assert prune_candidates(msgs, msgs, FULL) == []
    # 5,001-token outputs: the 8th output walked crosses the newest 40,000 and is a candidate too (as
    # in opencode: an output counts once the running total passes the protection); 5 outputs,
    # 25,005 tokens, more than 20,000: pruned.
    msgs = _session(Kit(), 8, 2, 5_001)
    assert len(prune_candidates(msgs, msgs, FULL)) == 5


def test_prune_protects_the_last_two_user_turns_whatever_their_size():
    kit = Kit()
    msgs = _session(kit, 2, 20, 5_000)  # 200,000 tokens, all in the last two turns
    assert prune_candidates(msgs, msgs, FULL) == []
    more = _session(kit, 1, 20, 5_000) + msgs
    pruned = set(prune_candidates(more, more, FULL))
    protected = {b.tool_use_id for m in msgs for b in tool_results(m)}
    assert pruned and not pruned & protected


def test_prune_skips_skill_outputs_and_failed_ones_and_stops_at_cleared_ones():
    kit = Kit()
    msgs = _session(kit, 8, 2, 5_001, tool="Skill") + _session(kit, 3, 2, 5_001)
    skill = {b.tool_use_id for m in msgs[: len(msgs) // 2] for b in tool_results(m)}
    assert not set(prune_candidates(msgs, msgs, FULL)) & skill
    errors = [m.model_copy(update={"content": [b.model_copy(update={"is_error": True}) for b in m.content]})
              if tool_results(m) else m for m in _session(Kit(), 10, 2, 5_001)]
    assert prune_candidates(errors, errors, FULL) == []
    msgs = _session(Kit(), 10, 2, 5_001)
    view = [m.model_copy(update={"content": [b.model_copy(update={"content": CLEARED}) for b in m.content]})
            if tool_results(m) and i < 20 else m for i, m in enumerate(msgs)]
    assert prune_candidates(msgs, view, FULL) == []  # the walk stops at outputs pruned before


def test_prune_runs_in_a_real_session_and_the_next_request_shows_the_cleared_marker(tmp_path):
    """The engine's frozen clearing carries opencode's prune into every later request (a guard on
    the engine's incremental view: the compactor swaps the state object, the view rebuilds)."""
    from pytest_ctxeval.runner import run_scenario

    run = run_scenario("scenarios/tool_result_budget.yaml", compactor="opencode", session_dir=tmp_path)
    prunes = [e for e in run.events if e.tier == "prune"]
    assert prunes, [(e.tier, e.action) for e in run.events]
    ids = set(prunes[0].ids)
    turn = prunes[0].turn
    body = run.requests[turn - 1]
    shown = {b["tool_use_id"]: b["content"] for m in body["messages"] if isinstance(m["content"], list)
             for b in m["content"] if b.get("type") == "tool_result"}
    still = ids & set(shown)
    assert still, "the pruned results are gone from the very next request (compacted at the same turn?)"
    assert {shown[i] for i in still} == {CLEARED}


def test_usable_window_and_the_tail_budget_scale_and_clamp():
    assert usable_tokens(FULL) == 200_000 - 32_000 - 20_000
    small = EngineConfig.for_window(20_000)
    assert usable_tokens(small) == 20_000 - 3_200 - 2_000
    # PEERS 45: 25 % of usable, clamped to 2,000-15,000 tokens (scaled with the window)
    assert tail_budget(FULL) == 15_000                                   # 25 % of 148,000: over the maximum
    assert tail_budget(EngineConfig.for_window(200_000, max_output_tokens=150_000)) == 7_500  # 25 % of 30,000
    assert tail_budget(EngineConfig.for_window(200_000, max_output_tokens=180_000)) == 2_000  # usable 0: the minimum
    assert tail_budget(small) == 1_500                                   # 25 % of 14,800: over the scaled maximum
    assert tail_budget(EngineConfig.for_window(20_000, max_output_tokens=16_000)) == 500  # 25 % of 2,000


def test_the_tail_is_whole_turns_newest_first_and_never_starts_at_a_tool_result():
    kit = Kit()
    msgs = _session(kit, 4, 2, 100)
    size = [estimate_message(m, FULL) for m in msgs]
    turn2 = next(i for i, m in enumerate(msgs) if person_text(m) == "turn 2")
    start = select_tail(msgs, sum(size[turn2:]), FULL)
    assert start == turn2  # exactly the last two whole turns
    # a budget inside a turn splits it at a message: an assistant message or the user's, not a result
    for budget in range(50, sum(size[turn2:]), 37):
        start = select_tail(msgs, budget, FULL)
        assert start == len(msgs) or not (isinstance(msgs[start], UserMessage) and tool_results(msgs[start]))
        assert sum(size[start:]) <= budget


def test_the_head_reaches_the_summariser_as_text_lines_in_one_user_message():
    kit = Kit()
    msgs = _session(kit, 6, 2, 300) + [kit.user("the latest request")]
    llm = make_llm("offline")
    done = Opencode().compact(state(msgs, llm=llm))
    (request,) = llm.reference.requests
    (only,) = request["messages"]
    assert only["role"] == "user" and isinstance(only["content"], str)
    assert "[User]: turn 0" in only["content"] and "[Assistant tool call]: Bash" in only["content"]
    assert "[Tool result]: " in only["content"]
    assert not [b for m in request["messages"] if isinstance(m["content"], list) for b in m["content"]
                if b.get("type") in ("tool_use", "tool_result")]
    summary, *tail = done.messages
    assert text_of(summary.content).startswith(OPENING)
    assert [s.title for s in FORMAT.parse(done.summary).sections] == FORMAT.titles
    assert tail and tail[-1].uuid == msgs[-1].uuid


def test_tool_results_are_cut_at_2000_characters_scaled():
    kit = Kit()
    text = serialise([kit.user("go"), *kit.call("Bash", "r" * 5_000)], 2_000)
    (line,) = [l for l in text.split("\n") if l.startswith("[Tool result]")]
    assert len(line) < 2_100 and "3,000 more characters cut" in line


class _BadHeadings:
    def __init__(self, replies):
        self.replies, self.calls = list(replies), 0
        self.backend, self.model = "offline", "x"

    def complete(self, **kw):
        from pytest_ctxeval.llm.base import ModelReply
        from pytest_ctxeval.core.messages import Usage

        self.calls += 1
        return ModelReply(text=self.replies.pop(0), usage=Usage(), model="x")


GOOD = "## Objective\nx\n## Important Details\nx\n## Work State\nx\n## Next Move\nx\n## Relevant Files\nx"
SWAPPED = "## Objective\nx\n## Work State\nx\n## Important Details\nx\n## Next Move\nx\n## Relevant Files\nx"


def test_heading_order_is_checked_once_more_then_the_compaction_fails():
    kit = Kit()
    msgs = _session(kit, 6, 2, 300) + [kit.user("latest")]
    llm = _BadHeadings([SWAPPED, GOOD])
    assert Opencode().compact(state(msgs, llm=llm)).summary == GOOD and llm.calls == 2
    with pytest.raises(CompactionFailed, match="not the five sections in order"):
        Opencode().compact(state(msgs, llm=_BadHeadings([SWAPPED, SWAPPED])))


def test_a_later_compaction_anchors_on_the_earlier_summary():
    kit = Kit()
    earlier = UserMessage(uuid="s1", content=f"{OPENING}\n\n{GOOD.replace('x', 'the earlier goal', 1)}",
                          is_compact_summary=True)
    msgs = [earlier] + _session(kit, 6, 2, 300) + [kit.user("latest")]
    llm = make_llm("offline")
    Opencode().compact(state(msgs, llm=llm))
    prompt = llm.reference.requests[0]["messages"][0]["content"]
    assert "<previous-summary>\n## Objective\nthe earlier goal" in prompt
    assert OPENING not in prompt.split("<conversation>")[1]  # the summary is the anchor, not a line
