"""``codex`` against Codex CLI's documented behaviour (shared/PEERS.md lines 14-27)."""

from __future__ import annotations

import pytest

from pytest_ctxeval.compaction.codex import (
    ABORTED_OUTPUT, OPENING, Codex, drop_oldest_item, repair_pairing, select_user_messages,
)
from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.errors import PromptTooLongError
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.core.messages import AssistantMessage, ToolResultBlock, UserMessage, text_of, tool_results
from pytest_ctxeval.core.tokens import estimate_text

from compaction_kit import Kit, state

CONFIG = EngineConfig.for_window(200_000)  # unscaled: the user-message budget is 20,000 tokens


def _words(n_tokens: int, tag: str) -> str:
    return (tag + " ") + "w" * (n_tokens * 4 - len(tag) - 1)


def test_keeps_the_newest_user_messages_within_20000_tokens_and_truncates_the_first_that_does_not_fit():
    kit = Kit()
    msgs = [kit.user(_words(8_000, "oldest")), kit.say("ok"), kit.user(_words(9_000, "middle")), kit.say("ok"),
            kit.user(_words(6_000, "newer")), kit.say("ok"), kit.user(_words(3_000, "newest"))]
    kept = select_user_messages(msgs, 20_000, CONFIG)
    texts = [text_of(m.content) for m in kept]
    # newest first: 3,000 + 6,000 + 9,000 = 18,000 fit; the oldest (8,000) is the first that does not
    # fit in the 2,000 left: it is truncated to them, with a marker.
    assert [t.split()[0] for t in texts] == ["oldest", "middle", "newer", "newest"]  # chronological
    assert [m.uuid for m in kept] == [msgs[0].uuid, msgs[2].uuid, msgs[4].uuid, msgs[6].uuid]
    assert texts[1:] == [text_of(m.content) for m in (msgs[2], msgs[4], msgs[6])]  # verbatim
    assert "tokens of this message truncated at compaction" in texts[0]
    assert sum(estimate_text(t, CONFIG) for t in texts) <= 20_000 + 30  # the marker's few tokens


def test_messages_older_than_the_truncated_one_are_dropped():
    kit = Kit()
    msgs = [kit.user("the very first request"), kit.say("ok"), kit.user(_words(15_000, "big")), kit.say("ok"),
            kit.user(_words(12_000, "recent"))]
    kept = select_user_messages(msgs, 20_000, CONFIG)
    assert [text_of(m.content).split()[0] for m in kept] == ["big", "recent"]
    assert "truncated at compaction" in text_of(kept[0].content)


def test_earlier_summaries_and_meta_messages_are_not_real_user_messages():
    kit = Kit()
    msgs = [kit.user("earlier summary", is_compact_summary=True), kit.user("<system-reminder>x</system-reminder>"),
            kit.user("a meta note", is_meta=True), kit.user("the real request")]
    assert [text_of(m.content) for m in select_user_messages(msgs, 20_000, CONFIG)] == ["the real request"]


def test_drop_oldest_item_removes_exactly_one_item_and_its_paired_output():
    kit = Kit()
    msgs = [kit.user("go"), *kit.call("Read", "a"), *kit.call("Bash", "b"), kit.user("next")]
    once = drop_oldest_item(msgs)
    assert [m.uuid for m in once] == [m.uuid for m in msgs[1:]]          # the user message only
    twice = drop_oldest_item(once)
    assert [m.uuid for m in twice] == [m.uuid for m in msgs[3:]]          # the call and its output
    assert drop_oldest_item([kit.user("last")]) is None


def test_pairing_repair_gives_an_unanswered_call_an_aborted_output_and_drops_an_orphan_output():
    kit = Kit()
    call, _ = kit.call("Bash", "x")
    orphan = UserMessage(uuid="o", content=[ToolResultBlock(tool_use_id="toolu_gone", content="late")])
    repaired = repair_pairing([kit.user("go"), orphan, call, kit.user("next")])
    assert "o" not in [m.uuid for m in repaired]
    (aborted,) = [b for m in repaired for b in tool_results(m)]
    assert (aborted.tool_use_id, aborted.content, aborted.is_error) == (call.content[0].id, ABORTED_OUTPUT, True)


def test_compacts_at_90_percent_of_the_window():
    codex, kit = Codex(), Kit()
    msgs = [kit.user("go")]
    assert not codex.should_compact(state(msgs, window=20_000, tokens=17_999))
    assert codex.should_compact(state(msgs, window=20_000, tokens=18_000))


def test_new_history_is_the_user_messages_then_the_prefixed_summary_without_assistant_or_tool_items():
    kit = Kit()
    msgs = kit.turn("Port the parser to Rust", calls=3) + kit.turn("Keep the Python API unchanged", calls=2)
    done = Codex().compact(state(msgs))
    kinds = [(type(m).__name__, m.is_compact_summary if isinstance(m, UserMessage) else None) for m in done.messages]
    assert kinds == [("UserMessage", False), ("UserMessage", False), ("UserMessage", True)]
    assert [text_of(m.content) for m in done.messages[:2]] == ["Port the parser to Rust", "Keep the Python API unchanged"]
    summary = text_of(done.messages[-1].content)
    assert summary.startswith(OPENING) and done.summary in summary
    assert not [m for m in done.messages if isinstance(m, AssistantMessage) or tool_results(m)]
    # the reference model followed the handoff prompt's five sections
    assert [s.title for s in Codex.summary_format.parse(done.summary).sections] == Codex.summary_format.titles


class _TooLongTwice:
    """An LLM whose first two compaction requests are too long (and which records every request)."""

    def __init__(self) -> None:
        self.inner, self.sent = make_llm("offline"), []
        self.backend, self.model = "offline", "ctxeval-reference"

    def complete(self, **kw):
        self.sent.append(kw["messages"])
        if len(self.sent) <= 2:
            raise PromptTooLongError("prompt is too long: 30000 tokens > 20000 maximum", 30000, 20000)
        return self.inner.complete(**kw)


def _texts(api_messages: list[dict]) -> list[str]:
    out = []
    for m in api_messages[:-1] + [dict(api_messages[-1], content=api_messages[-1]["content"][:-1])]:
        content = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        out += [b.get("text", "") for b in content if b.get("type") == "text"]
    return out


def test_a_too_long_compaction_request_is_retried_with_exactly_one_item_fewer():
    kit = Kit()
    msgs = [kit.user("first"), kit.say("ack one"), kit.user("second"), kit.say("ack two"), kit.user("third")]
    llm = _TooLongTwice()
    done = Codex().compact(state(msgs, llm=llm))
    sent = [_texts(request) for request in llm.sent]
    assert sent[0] == ["first", "ack one", "second", "ack two", "third"]
    # one item fewer each time (a request left opening with the model's message gets a user marker)
    assert sent[1] == ["[older conversation dropped to fit the compaction request]", "ack one", "second", "ack two",
                       "third"]
    assert sent[2] == ["second", "ack two", "third"]
    # the new history still keeps every real user message (they fit in the budget)
    assert [text_of(m.content) for m in done.messages[:-1]] == ["first", "second", "third"]


@pytest.mark.parametrize("window", [20_000, 200_000])
def test_the_user_message_budget_scales_with_the_window(window):
    kit = Kit()
    msgs = [kit.user(_words(3_000, "a")), kit.say("ok"), kit.user(_words(1_000, "b"))]
    kept = select_user_messages(msgs, round(20_000 * window / 200_000), EngineConfig.for_window(window))
    assert len(kept) == 2 and ("truncated" in text_of(kept[0].content)) == (window == 20_000)
