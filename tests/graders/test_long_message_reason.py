"""The reason for a long message a summary cut says what is there and what is not (review finding
A4: monodreams 2.1.150 kept the first 153 characters of a 12,313-character request, then "...";
the reason said its first 300 characters were missing)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: shared_paths
from shared_paths import needs_shared

LONG = ("I think the engine is mature enough to split into packages. Help me do that by defining which packages "
        "we will provide and how they depend on each other, then " + " ".join(f"note{i}" for i in range(500))
        + " and finally publish them to the registry.")


def _bodies(kit, messages: str) -> str:
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies.update(user_messages=messages, next="None.")
    return kit.summary(bodies)


@pytest.mark.parametrize("grader", ["verbatim_user_messages", "last_request_intact"])
def test_a_cut_long_message_names_how_much_of_its_head_is_there(grade, kit, grader):
    msgs = [kit.user(LONG), kit.say("On it.")]
    head, tail = LONG[:300], LONG[-300:]
    assert grade(grader, kit.case(msgs, _bodies(kit, f'- "{head} [...] {tail}"'))).status == "pass"
    cut = LONG[:140].rsplit(" ", 1)[0]
    verdict = grade(grader, kit.case(msgs, _bodies(kit, f'- "{cut}..." (long request)')))
    assert verdict.status == "fail"
    assert f"only {len(cut)} of its first 300 are there (the start, then it is cut); none of its last 300 are" \
        in verdict.reasons[0], verdict.reasons
    assert "first and last 300 characters are missing" not in verdict.reasons[0]
    verdict = grade(grader, kit.case(msgs, _bodies(kit, f'- "{head}" … "{tail[150:]}"')))
    assert verdict.status == "fail"
    assert "its first 300 are there; only 1" in verdict.reasons[0] and "(the very end)" in verdict.reasons[0]


@needs_shared
def test_monodreams_first_request_cut_after_its_first_characters(corpus_verdict):
    verdict = corpus_verdict("roo-oliv__monodreams__2.1.150-manual-compact-args-469e58d2.jsonl", "verbatim_user_messages")
    assert verdict.status == "fail" and len(verdict.reasons) == 1
    # review 5, #18: the message is a typed lead, then a conversation pasted in '>' speaker lines: the
    # lead is what is cut (after 154 characters), not "none of its last 300" of the paste
    assert "it is a typed lead (1,700 characters" in verdict.reasons[0] and "then a pasted conversation" in verdict.reasons[0]
    assert "the typed lead is cut after 154 characters" in verdict.reasons[0]
