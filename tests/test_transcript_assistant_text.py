"""The transcript writes an assistant message directly (transcript.assistant_text.assistant_record):
the same text as ``json.dumps`` of the record ``record_for`` builds (the code it replaces, kept as
the oracle), for any values (escapes, non-ASCII, nested and non-string tool inputs, missing ids,
models and usage), and None (the general way) for every other message."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings, strategies as st

from pytest_ctxeval.core.messages import (
    AssistantMessage, ImageBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock, Usage, UserMessage,
)
from pytest_ctxeval.transcript.assistant_text import assistant_record
from pytest_ctxeval.transcript.jsonl import TranscriptWriter, read_transcript, record_for

_chars = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
_times = st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(9000, 1, 1),
                      timezones=st.sampled_from([UTC, timezone(timedelta(hours=2))]))
_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _chars,
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_chars, inner, max_size=3),
                     max_leaves=8)
_inputs = st.dictionaries(_chars, _chars, max_size=4) | st.dictionaries(_chars, _json, max_size=4)
_blocks = st.lists(st.builds(TextBlock, text=_chars)
                   | st.builds(ToolUseBlock, id=_chars, name=_chars, input=_inputs), max_size=4)
_usage = st.none() | st.builds(Usage, input_tokens=st.integers(0, 10**7), output_tokens=st.integers(0, 10**5),
                               cache_creation_input_tokens=st.integers(0, 10**6),
                               cache_read_input_tokens=st.integers(0, 10**6))


def _general(message, parent, session, version) -> str:
    return json.dumps(record_for(message, parent_uuid=parent, session_id=session, version=version),
                      ensure_ascii=False)


@settings(deadline=None)  # examples: the profile's (conftest.py: 50 in the suite, 1,000 in .ci/soak)
@given(_blocks, _chars, st.none() | _chars, st.none() | _chars, st.none() | _chars, _usage, _chars, _chars, _times)
def test_replies_are_written_as_json_dumps_writes_them(blocks, uuid, mid, model, parent, usage, session, version,
                                                       at) -> None:
    message = AssistantMessage(uuid=uuid, timestamp=at, content=blocks, message_id=mid, model=model, usage=usage)
    for _ in range(2):  # the second time from block_dict's remembered dumps
        assert assistant_record(message, parent, session, version) == _general(message, parent, session, version)


def test_a_typical_reply_takes_the_direct_way() -> None:
    at = datetime(2026, 1, 5, 9, tzinfo=UTC)
    reply = AssistantMessage(uuid="a", timestamp=at, model="claude-sonnet-4-5", message_id="msg_1",
                             usage=Usage(input_tokens=5, output_tokens=2),
                             content=[TextBlock(text="Reading \"é\"."),
                                      ToolUseBlock(id="t", name="Read", input={"file_path": "src/a.py"}),
                                      ToolUseBlock(id="u", name="TodoWrite",
                                                   input={"todos": [{"content": "x", "status": "done"}], "n": 1.5})])
    text = assistant_record(reply, None, "s", "v")
    assert text is not None and text == _general(reply, None, "s", "v")


def test_other_messages_take_the_general_way() -> None:
    at = datetime(2026, 1, 5, 9, tzinfo=UTC)
    others = [
        UserMessage(uuid="u", timestamp=at, content="typed"),
        UserMessage(uuid="u", timestamp=at, content=[ToolResultBlock(tool_use_id="t", content="x")]),
        AssistantMessage(uuid="a", timestamp=at, content=[ThinkingBlock(thinking="hm", signature="")]),
        AssistantMessage(uuid="a", timestamp=at, content=[TextBlock(text="x"), ImageBlock(source={"type": "url"})]),
        AssistantMessage(uuid="a", timestamp=at, content=[ToolUseBlock(id="t", name="X", input={"at": at})]),
    ]
    for message in others:
        assert assistant_record(message, "p", "s", "v") is None


def test_a_written_transcript_reads_back(tmp_path) -> None:
    at = datetime(2026, 1, 5, 9, tzinfo=UTC)
    reply = AssistantMessage(uuid="a1", timestamp=at, content=[TextBlock(text="Reading."),
                                                                ToolUseBlock(id="t1", name="Read", input={"p": "é"})])
    with TranscriptWriter(tmp_path / "s.jsonl", session_id="s") as w:
        w.append(UserMessage(uuid="u0", timestamp=at, content="go"))
        w.append(reply)
    lines = (tmp_path / "s.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[1])["parentUuid"] == "u0"
    back = read_transcript(tmp_path / "s.jsonl").messages[-1]
    assert back.content[1].input == {"p": "é"} and back.content[0].text == "Reading."
