"""``gemini_cli`` against Gemini CLI's documented behaviour (shared/PEERS.md lines 29-38)."""

from __future__ import annotations

import json

import pytest

from pytest_ctxeval.compaction.base import CompactionFailed
from pytest_ctxeval.compaction.gemini_cli import (
    ACKNOWLEDGEMENT, FORMAT, GeminiCli, find_split_point, truncate_old_responses,
)
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.core.messages import (
    AssistantMessage, UserMessage, result_text, text_of, to_api, tool_results, tool_uses,
)

from compaction_kit import Kit, state


def _chars(messages):
    return [len(json.dumps(to_api([m]), ensure_ascii=False)) for m in messages]


def _kept_fraction(messages, split):
    chars = _chars(messages)
    return sum(chars[split:]) / sum(chars)


def test_keeps_about_the_newest_30_percent_and_splits_only_at_a_user_turn():
    kit = Kit()
    msgs = [m for i in range(10) for m in kit.turn(f"request {i}", calls=2, output_chars=300)]
    split = find_split_point(msgs)
    assert isinstance(msgs[split], UserMessage) and not tool_results(msgs[split])
    # the first user turn once 70 % of the characters lie before it: between 20 % and 30 % is kept
    assert 0.2 <= _kept_fraction(msgs, split) <= 0.3
    before = find_split_point(msgs[:split + 1])  # one message less than the 70 % point is not a later split
    assert before <= split


@pytest.mark.parametrize("seed", range(8))
def test_never_splits_a_function_call_from_its_response(seed):
    import random

    rnd, kit = random.Random(seed), Kit()
    msgs = [kit.user("start")]
    for _ in range(30):
        if rnd.random() < 0.25:
            msgs.append(kit.user(f"more {rnd.random()}" * rnd.randint(1, 20)))
        else:
            msgs += kit.call("Bash", "y" * rnd.randint(10, 2_000))
    split = find_split_point(msgs)
    if 0 < split < len(msgs):
        head_calls = {u.id for m in msgs[:split] for u in tool_uses(m)}
        head_results = {r.tool_use_id for m in msgs[:split] for r in tool_results(m)}
        assert head_calls == head_results, "a call in the head lost its response to the kept part"


def test_a_trailing_function_call_at_99_percent_falls_back_to_the_last_safe_split():
    kit = Kit()
    msgs = [kit.user("a" * 100), kit.say("b" * 100), kit.user("c" * 100), *kit.call("Bash", "z" * 20_000)]
    # 70 % of the characters lie only inside the call's output: no user turn after it, and the
    # conversation ends with a function response: split at the last user turn before it.
    assert find_split_point(msgs) == 2


def test_everything_is_compressed_only_when_the_last_message_is_a_model_reply_without_a_call():
    kit = Kit()
    msgs = [kit.user("a" * 100), kit.say("b" * 5_000)]
    assert find_split_point(msgs) == len(msgs)
    msgs_call = [kit.user("a" * 100), *kit.call("Bash", "b" * 5_000)]
    assert find_split_point(msgs_call) == 0  # nothing safe to compress


def test_compresses_at_half_the_window():
    kit, gemini = Kit(), GeminiCli()
    assert not gemini.should_compact(state([kit.user("x")], window=20_000, tokens=9_999))
    assert gemini.should_compact(state([kit.user("x")], window=20_000, tokens=10_000))


def test_old_tool_outputs_beyond_the_budget_are_saved_to_a_file_and_previewed(tmp_path):
    kit = Kit()
    msgs = [kit.user("go")]
    for i in range(4):
        msgs += kit.call("Bash", f"output {i}\n" + "o" * 8_000)  # ~2,000 tokens each
    s = state(msgs, window=20_000, session_dir=tmp_path)  # budget 50,000 scaled: 5,000 tokens
    new, view, ids = truncate_old_responses(s.messages, s.view, 5_000, s)
    newest = [b for m in new for b in tool_results(m)]
    assert [b.tool_use_id in ids for b in newest] == [True, True, False, False]  # the two newest fit
    old = result_text(newest[0])
    assert old.startswith("[Output of Bash") and "gemini-tool-outputs/" in old and len(old) < 500
    saved = (tmp_path / "gemini-tool-outputs" / f"{newest[0].tool_use_id}.txt").read_text()
    assert saved.startswith("output 0\n") and len(saved) > 8_000
    assert [m.uuid for m in new] == [m.uuid for m in msgs]  # the same messages, content replaced


def test_snapshot_then_acknowledgement_then_the_kept_tail_after_a_verify_pass(tmp_path):
    kit = Kit()
    msgs = [m for i in range(6) for m in kit.turn(f"request number {i}", calls=2, output_chars=200)]
    llm = make_llm("offline")
    done = GeminiCli().compact(state(msgs, llm=llm, session_dir=tmp_path))
    summary, ack, *tail = done.messages
    assert summary.is_compact_summary and text_of(summary.content).startswith("<state_snapshot>")
    assert isinstance(ack, AssistantMessage) and text_of(ack.content) == ACKNOWLEDGEMENT
    assert tail[0].uuid == msgs[find_split_point(msgs)].uuid and [m.uuid for m in tail] == [m.uuid for m in msgs[-len(tail):]]
    assert [s.title for s in FORMAT.parse(done.summary).sections] == FORMAT.titles
    # two calls: the snapshot, then the check of it, which carries the first snapshot
    assert llm.usage.api_calls == 2
    verify = llm.reference.requests[-1]["messages"][-1]["content"]
    assert "<snapshot_to_check>" in (verify if isinstance(verify, str) else verify[-1]["text"])


def test_a_compression_that_inflates_the_history_fails_and_is_not_tried_again():
    kit = Kit()
    msgs = [kit.user("go"), kit.say("ok"), kit.user("x")]  # tiny: a snapshot is larger than what it replaces
    gemini, s = GeminiCli(), state([kit.user("a"), kit.say("b"), kit.user("c")], tokens=10_000)
    with pytest.raises(CompactionFailed, match="inflated"):
        gemini.compact(s)
    assert not gemini.should_compact(s)          # automatic compression is off for the run...
    assert GeminiCli().should_compact(state(msgs, tokens=10_000))  # ...of that run only (the state's store)
    # a forced /compact that inflates fails the same way but leaves automatic compression on
    manual = state([kit.user("a"), kit.say("b"), kit.user("c")], tokens=10_000, trigger="manual")
    with pytest.raises(CompactionFailed, match=r"kept as it was$"):
        gemini.compact(manual)
    assert gemini.should_compact(manual)


def test_the_split_keeps_calls_and_responses_together_in_a_real_scenario():
    from pytest_ctxeval.grading.registry import cases_from_run
    from pytest_ctxeval.grading import load_graders
    from pytest_ctxeval.runner import run_scenario

    run = run_scenario("scenarios/parallel_search_huge_output.yaml", compactor="gemini_cli")
    assert run.compactions and run.compactor == "gemini_cli"
    registry = load_graders()
    for case in cases_from_run(run):
        (pairing,) = registry.run(case, [registry.get("tool_pairing")])
        assert pairing.status == "pass", pairing.reasons
