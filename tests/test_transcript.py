"""Tests for pytest_ctxeval.transcript on the real corpus (needs ``CTXEVAL_SHARED``). Bad input and the
writer's round trip are in ``test_transcript_input.py``, every format variant on sessions the project
writes in ``test_transcript_variants.py``: both run in a bare clone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ctxeval.core.messages import (
    AssistantMessage, CompactBoundary, is_person_typed, person_text, to_api, tool_results, tool_uses,
    validate_api,
)
from pytest_ctxeval.transcript import read_transcript

from shared_paths import CORPUS
FILES = sorted(CORPUS.glob("*.jsonl"))
FASTHOOKS = CORPUS / "oneryalcin__fasthooks__sample_main_transcript.jsonl"
THISNESS = CORPUS / "M-Thisness__M-Claude__97b0ffde-ece9-4977-91cb-5c8cdeabdf3f.jsonl"
SPOTTER = CORPUS / "marot__spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20__prefix-715.jsonl"
ACOMPACT = CORPUS / "marot__spotter__agent-acompact-f46190.jsonl"

_CACHE: dict[Path, object] = {}


def read(path: Path):
    """read_transcript, once per corpus file (the spotter file is 1.5 MB)."""
    if path not in _CACHE:
        _CACHE[path] = read_transcript(path)
    return _CACHE[path]


def test_corpus_is_complete():
    assert len(FILES) >= 8
    assert {FASTHOOKS, THISNESS, SPOTTER, ACOMPACT} <= set(FILES)


# --- every corpus file --------------------------------------------------------------------------

@pytest.mark.parametrize("path", FILES, ids=[p.name[:40] for p in FILES])
def test_corpus_file_reads_and_normalises_to_valid_api(path):
    t = read(path)
    assert t.messages, path.name
    # Each stretch between compactions is a valid request; a stretch may end on a call whose result
    # record was never written (a 2.1.49 boundary names that missing result as its logical parent).
    cuts = [i for i, m in enumerate(t.messages) if isinstance(m, CompactBoundary)] + [len(t.messages)]
    start = 0
    for cut in cuts:
        assert validate_api(to_api(t.messages[start:cut]), allow_pending_tool_use=True) == [], (path.name, start)
        start = cut + 1
    if path == ACOMPACT:
        # The compaction call's first record hangs off the main session, which is not in this file.
        assert [p.line for p in t.problems] == [6]
        assert "is not in the file" in t.problems[0].message
    elif "2.1.149" in path.name:
        # A resumed session wrote 588 records of its history again: reported once, first copies used.
        assert [p.line for p in t.problems] == [725] and "588 records repeat a uuid" in t.problems[0].message
    elif path.name.startswith("moredip"):
        # Line 9 starts the conversation again with no parent, a copy of lines 3-5 under new uuids
        # (the same times): said, and read from there on as Claude Code reads it, not twice.
        assert [p.line for p in t.problems] == [9]
        assert "the 3 earlier message records (lines 3-5) are left out: each has the time of a message read" \
            in t.problems[0].message
    else:
        assert t.problems == []
    # every message knows its line in the file
    total = path.read_bytes().count(b"\n") + 1
    assert all(1 <= t.line_of[m.uuid] <= total for m in t.messages)


PERSON_COUNTS = {
    "oneryalcin__fasthooks__sample_main_transcript.jsonl": 5,
    "M-Thisness__M-Claude__97b0ffde-ece9-4977-91cb-5c8cdeabdf3f.jsonl": 4,
    "marot__spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20__prefix-715.jsonl": 1,
    "moredip__session-share__images-in-user-messages.jsonl": 2,
    # /orchestrator's arguments are typed by the person, as is the reply after it.
    "d-kimuson__claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": 2,
    "marot__spotter__subagent.jsonl": 2,
}


@pytest.mark.parametrize("name,count", sorted(PERSON_COUNTS.items()), ids=lambda v: str(v)[:30])
def test_person_typed_counts(name, count):
    t = read(CORPUS / name)
    assert sum(is_person_typed(m) for m in t.messages) == count


def test_person_typed_texts_in_other_files():
    assert [person_text(m) for m in read(THISNESS).messages if is_person_typed(m)] == [
        "ssh into my router", "I want you to figureout the router address and ssh into it",
        "docker status", "check service status"]
    images = read(CORPUS / "moredip__session-share__images-in-user-messages.jsonl")
    assert [person_text(m) for m in images.messages if is_person_typed(m)] == [
        "what's this an image of?", "what's the session iD?"]
    kimuson = read(CORPUS / "d-kimuson__claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
    assert [person_text(m) for m in kimuson.messages if is_person_typed(m)] == [
        "create TODO app by Next.js", "Thanks! Please update CLAUDE.md for current changes"]
    assert kimuson.sidechain_records > 0
    subagent = read(CORPUS / "marot__spotter__subagent.jsonl")
    typed = [person_text(m) for m in subagent.messages if is_person_typed(m)]
    assert typed[0].startswith("websearch to learn how to fastest setup credo")   # /handgemacht:create-beads's arguments
    assert typed[1:] == ["create the beads"]


def test_fasthooks_golden_person_messages():
    t = read(FASTHOOKS)
    typed = [(t.line_of[m.uuid], person_text(m)) for m in t.messages if is_person_typed(m)]
    assert typed == [
        (2, "can you run a command ls -la "),
        (10, "ok can you create a hello_world.py file and add a minimal code in it? "),
        (19, "can you read it back with Read tool? "),
        (27, "can you run `cat nonexistent.txt`"),
        (35, "do something requiring multiple tools in one turn, "),
    ]


def test_fasthooks_metadata_and_merging():
    t = read(FASTHOOKS)
    assert t.version == "2.0.76"
    assert t.session_id is not None
    assert len(t.messages) == 32
    # Assistant records sharing message.id are merged: a thinking block and three parallel calls.
    parallel = [m for m in t.messages if isinstance(m, AssistantMessage) and len(tool_uses(m)) == 3]
    assert len(parallel) == 1
    assert [b.type for b in parallel[0].content] == ["thinking", "tool_use", "tool_use", "tool_use"]
    # The error results are read with is_error.
    errors = [r.content for m in t.messages for r in tool_results(m) if r.is_error]
    assert errors == ["Exit code 1\ncat: nonexistent.txt: No such file or directory",
                      "Exit code 127\n/bin/bash: line 1: python: command not found"]


# --- compactions ----------------------------------------------------------------------------------

COMPACTIONS = [
    (FASTHOOKS, 59, 60, "manual", 21_558),
    (THISNESS, 138, 139, "manual", 31_469),
    (SPOTTER, 714, 715, "auto", 167_731),
]


def _raw_line(path: Path, number: int) -> dict:
    with path.open(encoding="utf-8") as fh:
        for n, raw in enumerate(fh, start=1):
            if n == number:
                return json.loads(raw)
    raise AssertionError(f"{path} has no line {number}")


@pytest.mark.parametrize("path,boundary_line,summary_line,trigger,pre", COMPACTIONS,
                         ids=["fasthooks", "M-Thisness", "spotter"])
def test_corpus_compactions(path, boundary_line, summary_line, trigger, pre):
    raw = _raw_line(path, boundary_line)
    assert raw["subtype"] == "compact_boundary"
    assert (raw["compactMetadata"]["trigger"], raw["compactMetadata"]["preTokens"]) == (trigger, pre)
    t = read(path)
    (c,) = t.compactions
    assert c.index == 1
    assert (c.boundary_line, c.summary_line) == (boundary_line, summary_line)
    assert c.boundary.trigger == trigger and c.boundary.pre_tokens == pre
    assert c.boundary.uuid == raw["uuid"]
    assert c.boundary.logical_parent_uuid == raw["logicalParentUuid"]
    assert c.summary is not None and c.summary.is_compact_summary
    assert c.summary_text.startswith("This session is being continued from a previous conversation")
    assert c.before and not any(isinstance(m, CompactBoundary) for m in c.before)
    assert c.history == c.before  # the first compaction: nothing summarised before it
    assert c.after[0] is c.boundary and c.after[1] is c.summary
    # the summarised context ends with the boundary's logical parent (or a merged response holding it)
    assert t.line_of[c.before[-1].uuid] <= boundary_line


@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith(("d-kimuson", "marot__spotter__agent",
                                                                       "marot__spotter__subagent", "moredip"))],
                         ids=lambda p: p.name[:30])
def test_corpus_files_without_compaction(path):
    assert read(path).compactions == []


def test_summary_records_are_titles_not_compactions():
    t = read(THISNESS)
    assert t.title is not None and isinstance(t.title, str)
    assert len(t.compactions) == 1


# --- parallel tool calls on sibling branches (spotter) ---------------------------------------------

def _raw_chain_ids(path: Path) -> tuple[set[str], set[str], set[str]]:
    """tool_use ids on the raw parent chain, tool_result ids on it, and all tool_result ids in the file."""
    records = {}
    last = None
    all_results: set[str] = set()
    with path.open(encoding="utf-8") as fh:
        for raw in fh:
            rec = json.loads(raw)
            if "uuid" in rec:
                records[rec["uuid"]] = rec
            if rec.get("type") in ("user", "assistant", "system") and not rec.get("isSidechain"):
                last = rec["uuid"]
            content = rec.get("message", {}).get("content") if isinstance(rec.get("message"), dict) else None
            if rec.get("type") == "user" and isinstance(content, list):
                all_results |= {b["tool_use_id"] for b in content if b.get("type") == "tool_result"}
    uses, answered = set(), set()
    cur = last
    while cur in records:
        rec = records[cur]
        content = rec.get("message", {}).get("content") if isinstance(rec.get("message"), dict) else None
        if isinstance(content, list):
            uses |= {b["id"] for b in content if b.get("type") == "tool_use"}
            answered |= {b["tool_use_id"] for b in content if b.get("type") == "tool_result"}
        cur = rec.get("parentUuid") or rec.get("logicalParentUuid")
    return uses, answered, all_results


def test_spotter_parallel_results_on_sibling_branches_are_recovered():
    uses, answered_on_path, all_results = _raw_chain_ids(SPOTTER)
    off_path = (uses - answered_on_path) & all_results
    assert len(off_path) >= 1, "the fixture should have results off the leaf's parent path"
    t = read(SPOTTER)
    called = {b.id for m in t.messages for b in tool_uses(m)}
    answered = {b.tool_use_id for m in t.messages for b in tool_results(m)}
    assert called == uses
    assert called - answered == set()
    assert off_path <= answered
    # each result comes after its call
    position = {}
    for i, m in enumerate(t.messages):
        for b in tool_uses(m):
            position[b.id] = i
    for i, m in enumerate(t.messages):
        for r in tool_results(m):
            assert position[r.tool_use_id] < i


def test_spotter_max_parallel_calls():
    t = read(SPOTTER)
    assert t.version == "2.1.39"
    assert max(len(tool_uses(m)) for m in t.messages) >= 2
