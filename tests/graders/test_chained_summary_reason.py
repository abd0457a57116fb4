"""A chained summary (written from a session resumed from an earlier summary) that does not carry the
earlier period's messages forward fails ``verbatim_user_messages`` (the documented policy: every
message of the session so far), and its reason says the message was typed before the earlier
compaction, so a reader sees why a message the summariser never saw verbatim is asked for. Real
chained summaries (round-3 review: Japanese and Korean sessions) drop the earlier period this way."""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_ctxeval.grading.registry import cases_from_transcript
from pytest_ctxeval.transcript.jsonl import read_transcript

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: transcript_builder
from transcript_builder import Builder, summary_text

FIRST = "Add a retry with backoff to the invoice fetcher, at most three attempts"
SECOND = "Now log every retry at warning level with the attempt number"


def _chained(tmp_path: Path, carries: bool):
    b = Builder("2.1.69")
    b.typed(FIRST)
    b.reply(text="Added the retry.")
    b.boundary("auto", 150_000)
    b.summary(summary_text("2.1.69", FIRST))
    b.typed(SECOND)
    b.reply(text="Logging each retry now.")
    b.boundary("auto", 150_000)
    second = summary_text("2.1.69", SECOND)
    if carries:
        second = second.replace(f"6. All user messages:\n   - {SECOND}\n",
                                f"6. All user messages:\n   - {FIRST}\n   - {SECOND}\n")
    b.summary(second)
    path = tmp_path / "chained.jsonl"
    b.write(path)
    return cases_from_transcript(read_transcript(path))[-1]


def test_a_chained_summary_that_drops_the_earlier_periods_message_says_it_was_typed_before(registry, tmp_path):
    (good,) = registry.run(_chained(tmp_path, carries=True), [registry.get("verbatim_user_messages")])
    assert good.status == "pass", good.reasons
    (bad,) = registry.run(_chained(tmp_path, carries=False), [registry.get("verbatim_user_messages")])
    assert bad.status == "fail"
    assert "user message 1 of 2" in bad.reasons[0]
    assert "typed before compaction 1" in bad.reasons[0] and "did not carry it forward" in bad.reasons[0]
    assert not any("typed before" in r for r in bad.reasons[1:])
