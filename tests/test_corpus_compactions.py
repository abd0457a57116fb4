"""Every compaction of every corpus transcript is found and given the conversation it summarised.

The table below was counted from the files themselves, not from the reader:
``jq -c 'select(.subtype=="compact_boundary" or .isCompactSummary==true) | [input_line_number, ...]'``
(boundary line, summary line, trigger and preTokens from ``compactMetadata``, the record's ``version``).
"""

from __future__ import annotations

import json

import pytest

from pytest_ctxeval.grading.registry import cases_from_transcript
from pytest_ctxeval.core.messages import CompactBoundary, UserMessage, person_text, to_api, validate_api
from pytest_ctxeval.transcript import read_transcript

from shared_paths import CORPUS

# file -> [(boundary line, summary line, trigger, preTokens, version)]
EXPECTED: dict[str, list[tuple[int, int, str, int, str]]] = {
    "FSM1__cipher-box__2.1.49-manual-rejects-12f1f541.jsonl": [(297, 298, "manual", 132_627, "2.1.49")],
    "FSM1__cipher-box__2.1.49-two-auto-f585e6e9.jsonl": [(753, 754, "auto", 167_332, "2.1.49"),
                                                          (968, 969, "auto", 167_602, "2.1.49")],
    "M-Thisness__M-Claude__97b0ffde-ece9-4977-91cb-5c8cdeabdf3f.jsonl": [(138, 139, "manual", 31_469, "2.0.60")],
    "PackmindHub__context-evaluator__2.1.45-auto-8ecab05f.jsonl": [(407, 408, "auto", 178_144, "2.1.45")],
    "TensorTemplar__slopometry__2.0.65-auto-legacy-summaries-0f112eb4.jsonl": [(398, 399, "auto", 155_317, "2.0.65")],
    "d-kimuson__claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": [],
    "fenv-org__mementor__2.1.50-56-auto-resumed-81b5b775.jsonl": [(1190, 1191, "auto", 168_663, "2.1.56")],
    "fenv-org__mementor__2.1.50-auto-planmode-rejects-063071b3.jsonl": [(763, 764, "auto", 167_179, "2.1.50")],
    "marot__spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20__prefix-715.jsonl": [(714, 715, "auto", 167_731, "2.1.39")],
    "marot__spotter__agent-a2898e3.jsonl": [],
    "marot__spotter__agent-acompact-f46190.jsonl": [],
    "marot__spotter__subagent.jsonl": [],
    "melagiri__code-insights__2.1.149-auto-queue-ac8d5915.jsonl": [(1567, 1568, "auto", 169_346, "2.1.149")],
    "melagiri__code-insights__2.1.69-two-auto-toolsearch-3cbc097a.jsonl": [(532, 533, "auto", 171_817, "2.1.69"),
                                                                          (1267, 1268, "auto", 168_199, "2.1.69")],
    "melagiri__code-insights__2.1.87-manual-244k-cc9e8aa5.jsonl": [(682, 683, "manual", 244_099, "2.1.87")],
    "moredip__session-share__images-in-user-messages.jsonl": [],
    "oneryalcin__fasthooks__sample_main_transcript.jsonl": [(59, 60, "manual", 21_558, "2.0.76")],
    "port-experimental__port-cli__2.1.179-auto-subagents-14ddf933.jsonl": [(685, 686, "auto", 167_465, "2.1.179")],
    "roo-oliv__monodreams__2.1.150-manual-compact-args-469e58d2.jsonl": [(681, 682, "manual", 361_748, "2.1.150")],
    "roo-oliv__monodreams__2.1.177-183-manual-resumed-d9b49d30.jsonl": [(493, 494, "manual", 231_468, "2.1.183")],
}

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present (set CTXEVAL_SHARED)")

_CACHE: dict[str, object] = {}


def _read(name: str):
    if name not in _CACHE:
        _CACHE[name] = read_transcript(CORPUS / name)
    return _CACHE[name]


def _raw_count(name: str) -> int:
    """Boundaries in the file, counted without the reader."""
    with (CORPUS / name).open(encoding="utf-8") as fh:
        return sum(1 for line in fh if '"compact_boundary"' in line and json.loads(line).get("subtype") == "compact_boundary")


def _uuid_at(name: str, number: int) -> str:
    with (CORPUS / name).open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if n == number:
                return json.loads(line)["uuid"]
    raise AssertionError(number)


def test_the_table_covers_every_corpus_file():
    files = sorted(p.name for p in CORPUS.glob("*.jsonl"))
    missing = [f for f in files if f not in EXPECTED]
    assert not missing, f"count the compactions of these new corpus files into EXPECTED: {missing}"
    assert all(_raw_count(name) == len(rows) for name, rows in EXPECTED.items() if (CORPUS / name).is_file())


@pytest.mark.parametrize("name", sorted(EXPECTED), ids=lambda n: n[:40])
def test_every_compaction_is_found_with_its_history(name):
    if not (CORPUS / name).is_file():
        pytest.skip(f"{name} not in this corpus")
    t = _read(name)
    comps = t.compactions
    assert [(c.boundary_line, c.summary_line, c.trigger, c.pre_tokens, c.version) for c in comps] == EXPECTED[name]
    for n, c in enumerate(comps):
        assert c.summary is not None and c.summary.is_compact_summary
        assert c.summary_text.startswith("This session is being continued from a previous conversation")
        assert not c.inherited, c.inherited_reason
        # The conversation it summarised: non-empty, with the person's words in it, and for a second
        # compaction the first one's summary at its start.
        assert c.before and len(c.history) >= len(c.before)
        assert any(person_text(m) for m in c.history), "no person-typed message in the history"
        if n:
            assert c.before[0] is comps[n - 1].summary
        # The summarised context ends right before the boundary in the file.
        assert max(t.line_of[m.uuid] for m in c.before) < c.boundary_line
        # Kept messages: what the model saw after the summary, never past the next person-typed message.
        assert not any(person_text(m) for m in c.kept[len(c.preserved):])
        assert not any(isinstance(m, CompactBoundary) for m in c.kept)


@pytest.mark.parametrize("name", [n for n, rows in sorted(EXPECTED.items()) if rows], ids=lambda n: n[:40])
def test_every_compaction_becomes_a_graded_case_with_its_history(name):
    if not (CORPUS / name).is_file():
        pytest.skip(f"{name} not in this corpus")
    cases = cases_from_transcript(_read(name))
    assert len(cases) == len(EXPECTED[name])
    for case, row in zip(cases, EXPECTED[name]):
        assert case.summarized and case.history and case.line == row[1]


def test_missing_logical_parent_is_placed_after_the_newest_message_before_it():
    """2.1.45 - 2.1.69 auto compactions name a logicalParentUuid that was never written."""
    name = "FSM1__cipher-box__2.1.49-two-auto-f585e6e9.jsonl"
    t = _read(name)
    first, second = t.compactions
    assert first.boundary.logical_parent_uuid == "adf9c7ea-9e30-4ac4-a36d-50b0b0a0f923"
    assert "adf9c7ea-9e30-4ac4-a36d-50b0b0a0f923" not in t.line_of
    # The summarised context ends with the response on line 751 (records 750-751, one message), and
    # the second one with the tool result on line 966.
    assert first.before[-1] is t.messages[t.index_of[_uuid_at(name, 751)]]
    assert second.before[-1] is t.messages[t.index_of[_uuid_at(name, 966)]]
    assert t.problems == []


def test_preserved_segment_is_kept_then_the_messages_up_to_the_next_typed_one():
    t = _read("port-experimental__port-cli__2.1.179-auto-subagents-14ddf933.jsonl")
    (c,) = t.compactions
    uuids = c.metadata["preservedMessages"]["uuids"]
    assert [t.line_of[u] for u in uuids] == [671, 672, 673, 675]
    # Records 671-673 are one response (merged), 675 its tool result: two messages.
    assert [t.line_of[m.uuid] for m in c.preserved] == [671, 675]
    assert c.kept[:2] == c.preserved
    after = c.kept[2:]
    start = t.messages.index(c.summary) + 1
    assert t.messages[start:start + len(after)] == after
    rest = t.messages[start + len(after):]
    # The kept part stops right before the next typed message (or at the end of the file).
    assert not rest or person_text(rest[0]) is not None


def test_a_resumed_session_whose_boundary_names_a_later_record_reads_its_whole_history():
    """2.1.183 names the synthetic reply written after the summary as the boundary's logical parent."""
    t = _read("roo-oliv__monodreams__2.1.177-183-manual-resumed-d9b49d30.jsonl")
    (c,) = t.compactions
    assert t.line_of[c.boundary.logical_parent_uuid] == 495 > c.boundary_line
    assert len(c.before) > 200 and min(t.line_of[m.uuid] for m in c.before) < 20
    assert t.problems == []


def test_duplicate_history_block_does_not_hide_the_conversation():
    t = _read("melagiri__code-insights__2.1.149-auto-queue-ac8d5915.jsonl")
    assert [p.line for p in t.problems] == [725]
    (c,) = t.compactions
    assert len(c.before) > 400


def test_tool_reference_blocks_are_kept_and_answer_their_calls():
    t = _read("melagiri__code-insights__2.1.69-two-auto-toolsearch-3cbc097a.jsonl")
    refs = [item for m in t.messages if isinstance(m, UserMessage) and isinstance(m.content, list)
            for b in m.content if b.type == "tool_result" and isinstance(b.content, list)
            for item in b.content if item.type == "tool_reference"]
    assert refs and all(getattr(r, "tool_name", None) for r in refs)
    cuts = [i for i, m in enumerate(t.messages) if isinstance(m, CompactBoundary)] + [len(t.messages)]
    start = 0
    for cut in cuts:
        assert validate_api(to_api(t.messages[start:cut]), allow_pending_tool_use=True) == []
        start = cut + 1


def test_queued_messages_the_model_saw_are_person_typed():
    # 2.0.65: "you need to uv tool install . --reinstall" was queued and given to the model mid-turn
    # (enqueue line 201, remove line 205); no user record holds it.
    t = _read("TensorTemplar__slopometry__2.0.65-auto-legacy-summaries-0f112eb4.jsonl")
    queued = [m for m in t.messages if m.uuid.startswith("queued-")]
    assert [person_text(m) for m in queued][:2] == ["you need to uv tool install . --reinstall",
                                                    "lets add that to README.md and Claude.md for next time"]
    (c,) = t.compactions
    assert queued[0] in c.before
    # 2.1.150 writes such a prompt as a queued_command attachment.
    t = _read("roo-oliv__monodreams__2.1.150-manual-compact-args-469e58d2.jsonl")
    assert "Once you're finished, commit, push and open a pull request." in [person_text(m) for m in t.messages]
    # Dequeued prompts are submitted as user records of their own: never counted twice.
    t = _read("melagiri__code-insights__2.1.149-auto-queue-ac8d5915.jsonl")
    texts = [person_text(m) for m in t.messages if person_text(m)]
    assert len(texts) == len(set(texts)) or texts.count("merged") <= 1
