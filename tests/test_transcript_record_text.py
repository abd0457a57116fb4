"""The transcript writes a user message of text tool results directly
(transcript.record_text.tool_results_record): the same text as ``json.dumps`` of the record
``record_for`` builds, for any values (escapes, non-ASCII, long and repeated results), and None
(the general way) for every other message."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given, settings, strategies as st

from pytest_ctxeval.core.messages import (
    AssistantMessage, CompactBoundary, ImageBlock, TextBlock, ToolResultBlock, UserMessage,
)
from pytest_ctxeval.transcript import record_text
from pytest_ctxeval.transcript.jsonl import TranscriptWriter, read_transcript, record_for

_chars = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
_long = st.builds(lambda t, n: (t or "x") * n, _chars, st.integers(1, 60))  # past MIN_CHARS at times
_times = st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(9000, 1, 1),
                      timezones=st.sampled_from([UTC, timezone(timedelta(hours=2))]))


def _general(message, parent, session, version) -> str:
    return json.dumps(record_for(message, parent_uuid=parent, session_id=session, version=version),
                      ensure_ascii=False)


@settings(deadline=None)  # examples: the profile's (conftest.py: 50 in the suite, 1,000 in .ci/soak)
@given(st.lists(st.tuples(_chars, _chars | _long, st.booleans()), max_size=4), _chars, st.none() | _chars,
       _chars, _chars, _times)
def test_tool_results_are_written_as_json_dumps_writes_them(results, uuid, parent, session, version, at) -> None:
    blocks = [ToolResultBlock(tool_use_id=u, content=c, is_error=e) for u, c, e in results]
    message = UserMessage(uuid=uuid, timestamp=at, content=blocks)
    for _ in range(2):  # the second time from the kept encodings
        assert record_text.tool_results_record(message, parent, session, version) == \
            _general(message, parent, session, version)


def test_other_messages_take_the_general_way() -> None:
    at = datetime(2026, 1, 5, 9, tzinfo=UTC)
    others = [
        UserMessage(uuid="u", timestamp=at, content="typed"),
        UserMessage(uuid="u", timestamp=at, content=[ToolResultBlock(tool_use_id="t", content="x")], is_meta=True),
        UserMessage(uuid="u", timestamp=at, content=[ToolResultBlock(tool_use_id="t", content="x")],
                    is_compact_summary=True),
        UserMessage(uuid="u", timestamp=at, content=[ToolResultBlock(tool_use_id="t", content=[TextBlock(text="x")])]),
        UserMessage(uuid="u", timestamp=at, content=[ToolResultBlock(tool_use_id="t", content="x"),
                                                     TextBlock(text="and")]),
        UserMessage(uuid="u", timestamp=at, content=[ImageBlock(source={"type": "base64", "data": "AA=="})]),
        AssistantMessage(uuid="a", timestamp=at, content=[TextBlock(text="hi")]),
        CompactBoundary(uuid="b", timestamp=at),
    ]
    for message in others:
        assert record_text.tool_results_record(message, "p", "s", "v") is None


def test_kept_encodings_are_bounded_and_follow_the_text(monkeypatch) -> None:
    monkeypatch.setattr(record_text, "_kept", {})
    monkeypatch.setattr(record_text, "_kept_chars", [0])
    monkeypatch.setattr(record_text, "KEPT_CHARS", 3_000)
    texts = ["a" * 600 + str(n) for n in range(10)]
    for text in texts + texts:
        assert record_text._text(text) == json.dumps(text, ensure_ascii=False)
    assert 0 < record_text._kept_chars[0] <= 3_000 and len(record_text._kept) <= 4


def test_a_written_transcript_reads_back(tmp_path) -> None:
    at = datetime(2026, 1, 5, 9, tzinfo=UTC)
    with TranscriptWriter(tmp_path / "s.jsonl", session_id="s") as w:
        w.append(AssistantMessage(uuid="a1", timestamp=at, content=[TextBlock(text="Reading.")]))
        w.append(UserMessage(uuid="u1", timestamp=at, content=[ToolResultBlock(tool_use_id="t1", content="é\n\"x\"")]))
    lines = (tmp_path / "s.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[1])["parentUuid"] == "a1"
    assert read_transcript(tmp_path / "s.jsonl").messages[-1].content[0].content == "é\n\"x\""
