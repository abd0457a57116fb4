"""Tests for pytest_ctxeval.core.tokens: byte-based estimation, the 4/3 margin, anchored counting."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.core.messages import (
    AssistantMessage, AttachmentMessage, CompactBoundary, DocumentBlock, ImageBlock, RedactedThinkingBlock,
    TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock, Usage, UserMessage,
)
from pytest_ctxeval.core.tokens import (
    count_tokens, estimate_api_request, estimate_block, estimate_message, estimate_messages, estimate_text,
)

IMG = {"type": "base64", "media_type": "image/png", "data": "AAAA"}


def user(uid: str, content) -> UserMessage:
    return UserMessage(uuid=uid, content=content)


def asst(uid: str, text: str = "ok", usage: Usage | None = None) -> AssistantMessage:
    return AssistantMessage(uuid=uid, content=[TextBlock(text=text)], usage=usage)


# --- estimate_text -----------------------------------------------------------------------------

@pytest.mark.parametrize("text,expected", [
    ("", 0),
    ("a", 0),          # 0.25
    ("ab", 1),         # 0.5 rounds half up (Python's round() would give 0)
    ("abc", 1),        # 0.75
    ("abcd", 1),
    ("abcdef", 2),     # 1.5 -> 2
    ("a" * 10, 3),     # 2.5 -> 3 (round-half-even would give 2)
    ("a" * 14, 4),     # 3.5 -> 4
    ("hello world!", 3),
    ("a" * 400, 100),
])
def test_estimate_text_prose_four_bytes_per_token(text, expected):
    assert estimate_text(text) == expected


@pytest.mark.parametrize("text,expected", [
    ("{}", 1),
    ('{"a":1}', 4),             # 7 bytes / 2 = 3.5 -> 4
    ('{"a": 1, "b": 2}', 8),
    ("  {}", 2),                # leading whitespace, then '{': 4 bytes / 2
    ("\n\t{ }", 3),             # 5 bytes / 2 = 2.5 -> 3
    ("x{}", 1),                 # does not start with '{': 3 / 4
    ("[1, 2]", 2),              # arrays are prose: 6 / 4 = 1.5 -> 2
])
def test_estimate_text_json_two_bytes_per_token(text, expected):
    assert estimate_text(text) == expected


@pytest.mark.parametrize("text,expected", [
    ("é", 1),                # 2 bytes -> 0.5 -> 1
    ("日本語", 2),            # 9 bytes -> 2.25
    ("日本語日本語", 5),       # 18 bytes -> 4.5 -> 5 (6 characters would give 2)
    ("😀", 1),                # 4 bytes
    ("😀" * 3, 3),
    ('{"k": "日本"}', 8),     # 9 ASCII + 6 bytes = 15 / 2 = 7.5 -> 8
])
def test_estimate_text_counts_utf8_bytes(text, expected):
    assert estimate_text(text) == expected


def test_estimate_text_uses_config():
    cfg = EngineConfig.for_window(200_000, bytes_per_token=1, json_bytes_per_token=1)
    assert estimate_text("abcdef", cfg) == 6
    assert estimate_text("{abc}", cfg) == 5


@given(st.text(max_size=300))
def test_estimate_text_matches_integer_round_half_up(text):
    n = len(text.encode("utf-8", "surrogatepass"))
    bpt = 2 if text.strip().startswith("{") else 4
    assert estimate_text(text) == (2 * n + bpt) // (2 * bpt)


# --- estimate_block ----------------------------------------------------------------------------

def test_estimate_block_text_and_thinking():
    assert estimate_block(TextBlock(text="abcdefgh")) == 2
    assert estimate_block({"type": "text", "text": "abcdefgh"}) == 2
    assert estimate_block(ThinkingBlock(thinking="a" * 40, signature="sig" * 100)) == 10
    assert estimate_block({"type": "thinking", "thinking": "a" * 40}) == 10
    assert estimate_block(RedactedThinkingBlock(data="a" * 20)) == 5
    assert estimate_block({"type": "redacted_thinking", "data": "a" * 20}) == 5


@pytest.mark.parametrize("block", [
    ImageBlock(source=IMG), DocumentBlock(source={"type": "text", "data": "x" * 100_000}),
    {"type": "image", "source": IMG}, {"type": "document", "source": {}},
])
def test_estimate_block_media_costs_image_tokens(block):
    assert estimate_block(block) == 2_000
    assert estimate_block(block, EngineConfig.for_window(200_000, image_tokens=7)) == 7
    # per-block sizes do not scale with the window
    assert estimate_block(block, EngineConfig.for_window(20_000)) == 2_000


def test_estimate_block_tool_use_counts_name_and_json_input():
    inp = {"command": "ls"}
    expected_json = json.dumps(inp)  # '{"command": "ls"}' = 17 bytes / 2 -> 9
    assert expected_json == '{"command": "ls"}'
    block = ToolUseBlock(id="t1", name="Bash", input=inp)
    assert estimate_block(block) == 1 + 9
    assert estimate_block(block.model_dump()) == 10


def test_estimate_block_tool_use_non_ascii_input_in_bytes():
    block = ToolUseBlock(id="t1", name="Edit", input={"s": "日本"})
    # '{"s": "日本"}': 9 ASCII bytes + 6 bytes for the two characters = 15 / 2 = 7.5 -> 8
    assert len('{"s": "日本"}'.encode()) == 15
    assert estimate_block(block) == 1 + 8


def test_estimate_block_tool_result_string_and_list():
    assert estimate_block(ToolResultBlock(tool_use_id="t", content="a" * 40)) == 10
    assert estimate_block({"type": "tool_result", "tool_use_id": "t", "content": "a" * 40}) == 10
    listed = ToolResultBlock(tool_use_id="t", content=[TextBlock(text="a" * 40), ImageBlock(source=IMG)])
    assert estimate_block(listed) == 10 + 2_000
    assert estimate_block(listed.model_dump()) == 10 + 2_000
    assert estimate_block(ToolResultBlock(tool_use_id="t", content=[])) == 0


def test_estimate_block_unknown_dict_counts_its_json():
    block = {"type": "server_tool_use", "x": 1}
    assert estimate_block(block) == estimate_text(json.dumps(block))
    assert estimate_block(block) == 18  # 36 bytes / 2


def test_estimate_block_rejects_non_blocks():
    with pytest.raises(TypeError):
        estimate_block(42)


# --- estimate_message / estimate_messages -----------------------------------------------------

def test_estimate_message_kinds():
    assert estimate_message(CompactBoundary(uuid="b", pre_tokens=150_000)) == 0
    assert estimate_message(AttachmentMessage(uuid="a", attachment_type="file", content="a" * 80)) == 20
    assert estimate_message(user("u", "a" * 40)) == 10
    assert estimate_message(user("u", [TextBlock(text="a" * 40), ImageBlock(source=IMG)])) == 2_010
    assert estimate_message(asst("x", "a" * 8)) == 2
    assert estimate_message({"role": "user", "content": "a" * 40}) == 10
    assert estimate_message({"role": "assistant", "content": [{"type": "text", "text": "a" * 8}]}) == 2
    with pytest.raises(TypeError):
        estimate_message("not a message")


@pytest.mark.parametrize("raw,expected", [(0, 0), (1, 2), (2, 3), (3, 4), (4, 6), (30, 40), (31, 42)])
def test_estimate_messages_applies_4_3_margin_with_ceil(raw, expected):
    # raw tokens from prose: 4 bytes each
    msgs = [user("u", "a" * (4 * raw))] if raw else []
    assert estimate_messages(msgs) == expected


def test_estimate_messages_margin_applies_to_sum_not_per_message():
    msgs = [user("u1", "abcd"), asst("a1", "abcd")]  # 1 + 1 raw
    assert estimate_messages(msgs) == 3  # ceil(2 * 4/3), not 2 + 2


def test_estimate_messages_boundary_is_free():
    msgs = [CompactBoundary(uuid="b"), user("u", "a" * 12)]
    assert estimate_messages(msgs) == 4


def test_estimate_api_request_is_margin_free():
    tool = {"name": "Bash", "input_schema": {"type": "object"}}
    request = {
        "system": "a" * 40,
        "tools": [tool],
        "messages": [{"role": "user", "content": "a" * 40}],
    }
    assert estimate_api_request(request) == 10 + estimate_text(json.dumps(tool)) + 10
    request["system"] = [{"type": "text", "text": "a" * 80}]
    assert estimate_api_request(request) == 20 + estimate_text(json.dumps(tool)) + 10
    assert estimate_api_request({}) == 0


# --- count_tokens -------------------------------------------------------------------------------

def test_usage_context_tokens_adds_all_four():
    u = Usage(input_tokens=100, cache_creation_input_tokens=20, cache_read_input_tokens=30, output_tokens=7)
    assert u.context_tokens == 157


def test_count_tokens_anchors_on_last_usage_plus_margin_estimate_of_tail():
    usage = Usage(input_tokens=100, cache_creation_input_tokens=20, cache_read_input_tokens=30, output_tokens=7)
    msgs = [user("u1", "a" * 4000), asst("a1", "a" * 4000, usage), user("u2", "a" * 12)]
    assert count_tokens(msgs) == 157 + 4  # ceil(3 * 4/3)


def test_count_tokens_with_nothing_after_anchor_is_the_anchor():
    msgs = [user("u1", "a" * 4000), asst("a1", "x", Usage(input_tokens=5_000, output_tokens=10))]
    assert count_tokens(msgs) == 5_010


def test_count_tokens_uses_the_most_recent_usage():
    msgs = [
        user("u1", "hi"),
        asst("a1", "x", Usage(input_tokens=1_000)),
        user("u2", "a" * 40),
        asst("a2", "y", Usage(input_tokens=2_000, output_tokens=50)),
        user("u3", "a" * 40),
    ]
    assert count_tokens(msgs) == 2_050 + 14  # ceil(10 * 4/3)


def test_count_tokens_skips_assistants_without_usage():
    msgs = [
        user("u1", "hi"),
        asst("a1", "x", Usage(input_tokens=1_000)),
        user("u2", "a" * 40),
        asst("a2", "a" * 40, None),
        asst("a3", "y", Usage()),  # all-zero usage is no anchor (tokens?.input && ...)
    ]
    # tail after a1: 10 + 10 + 0 (a3 "y" -> 0) raw tokens -> ceil(20 * 4/3) = 27
    assert count_tokens(msgs) == 1_000 + 27


def test_count_tokens_without_usage_is_pure_estimate():
    msgs = [user("u1", "a" * 40), asst("a1", "a" * 40), user("u2", [ImageBlock(source=IMG)])]
    assert count_tokens(msgs) == estimate_messages(msgs) == -(-(10 + 10 + 2_000) * 4 // 3)


def test_count_tokens_empty():
    assert count_tokens([]) == 0


def test_count_tokens_boundary_and_attachments_after_anchor():
    msgs = [
        user("u1", "hi"),
        asst("a1", "x", Usage(input_tokens=900)),
        CompactBoundary(uuid="b"),
        AttachmentMessage(uuid="at", attachment_type="file", content="a" * 12),
    ]
    assert count_tokens(msgs) == 900 + 4


# --- properties -----------------------------------------------------------------------------------

_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=80)
_msg = st.one_of(
    st.builds(lambda t: user("u", t), _text),
    st.builds(lambda t: asst("a", t), _text),
    st.builds(lambda t: AttachmentMessage(uuid="at", attachment_type="file", content=t), _text),
    st.just(CompactBoundary(uuid="b")),
    st.just(user("img", [ImageBlock(source=IMG)])),
)


@given(st.lists(_msg, max_size=12), st.lists(_msg, min_size=1, max_size=6))
def test_estimate_is_monotone_under_appending(prefix, extra):
    assert estimate_messages(prefix + extra) >= estimate_messages(prefix)


@given(st.lists(_msg, max_size=12))
def test_estimate_messages_is_exact_ceil_of_four_thirds(msgs):
    raw = sum(estimate_message(m) for m in msgs)
    assert estimate_messages(msgs) == (4 * raw + 2) // 3


@given(st.lists(_msg, max_size=6), st.integers(min_value=1, max_value=10**6),
       st.integers(min_value=0, max_value=10**5), st.lists(_msg, max_size=8))
def test_anchored_count_equals_anchor_plus_tail_estimate(head, inp, out, tail):
    anchor = asst("anchor", "resp", Usage(input_tokens=inp, output_tokens=out))
    tail = [m for m in tail if not isinstance(m, AssistantMessage)]  # no later anchor
    assert count_tokens(head + [anchor] + tail) == inp + out + estimate_messages(tail)
