"""A section 6 that lists Claude Code's summarisation request as a user message is tolerated, visibly
(review finding A5; corpus README: fasthooks 2.0.76 summary line 126 lists "Your task is to create a
detailed summary of the conversation so far..." [current summary request])."""

from __future__ import annotations

import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: shared_paths
from shared_paths import needs_shared

REQUEST_ITEM = '- "Your task is to create a detailed summary of the conversation so far..." [current summary request]'


def _case(kit, listed: str):
    msgs = [kit.user("can you run a command ls -la"), kit.say("Ran it."),
            kit.user("do something requiring multiple tools in one turn"), kit.say("Done.")]
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies["user_messages"] = listed
    text = kit.summary(bodies)
    return kit.case(msgs, text), text


def test_the_listed_request_is_noted_not_failed(grade, kit):
    both = '- "can you run a command ls -la"\n- "do something requiring multiple tools in one turn"'
    clean, _ = _case(kit, both)
    verdict = grade("verbatim_user_messages", clean)
    assert verdict.status == "pass" and "summarisation request" not in verdict.reasons[0]
    listed, text = _case(kit, both + "\n" + REQUEST_ITEM)
    verdict = grade("verbatim_user_messages", listed)
    assert verdict.status == "pass"
    assert (f"section 6 also lists Claude Code's own summarisation request as a user message (line "
            f"{kit.line_of(text, 'Your task is')})") in verdict.reasons[0]
    # a real loss still fails, and the note goes with it
    lossy, _ = _case(kit, '- "can you run a command ls -la"\n' + REQUEST_ITEM)
    verdict = grade("verbatim_user_messages", lossy)
    assert verdict.status == "fail" and len(verdict.reasons) == 1
    assert "user message 2 of 2" in verdict.reasons[0] and "summarisation request" in verdict.reasons[0]


@needs_shared
def test_fasthooks_line_126_is_noted(corpus_verdict):
    verdict = corpus_verdict("oneryalcin__fasthooks__sample_main_transcript.jsonl", "verbatim_user_messages")
    assert verdict.status == "pass"
    assert "summarisation request as a user message (line 126)" in verdict.reasons[0]
