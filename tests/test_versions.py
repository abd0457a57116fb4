"""The version table (pytest_ctxeval.grading.versions) against the corpus files each row cites: every row's
claim is read back from the file itself, so the table cannot drift from what the versions wrote."""

from __future__ import annotations

import json

import pytest

from pytest_ctxeval.grading.versions import (
    CONTINUATION_WORDINGS, OPENING_SENTENCES, PROMISES, parse_version, promise,
)
from shared_paths import CORPUS

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")


def _compactions(name: str) -> list[dict]:
    """``{version, trigger, summary, metadata, tools}`` for each compaction of a corpus file, read raw."""
    records = [json.loads(line) for line in (CORPUS / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    for i, rec in enumerate(records):
        if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
            summary = next(r for r in records[i + 1:] if r.get("isCompactSummary"))
            content = summary["message"]["content"]
            text = content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)
            out.append({"version": rec.get("version"), "trigger": rec["compactMetadata"]["trigger"], "summary": text,
                        "metadata": rec["compactMetadata"]})
    tools = {b.get("name") for r in records if r.get("type") == "assistant"
             for b in (r.get("message", {}).get("content") or []) if isinstance(b, dict) and b.get("type") == "tool_use"}
    for c in out:
        c["tools"] = tools
    return out


def _shows(key: str, comp: dict) -> bool:
    """Whether a compaction shows behaviour ``key``."""
    text = comp["summary"]
    if key == "analysis_stripped":
        return "\nAnalysis:" not in text[:600]
    if key == "transcript_path":
        return "read the full transcript at:" in text
    if key in ("continuation_auto", "continuation_manual"):
        return bool(CONTINUATION_WORDINGS.search(text[-600:]))
    if key == "opening_2_1":
        return OPENING_SENTENCES["2.1"] in text[:300]
    if key == "task_tools":
        return "TaskCreate" in comp["tools"]
    if key == "preserved_segment":
        return "preservedSegment" in comp["metadata"]
    raise AssertionError(f"no check for {key}")


@needs_corpus
@pytest.mark.parametrize("key", sorted(PROMISES))
def test_each_row_is_what_its_corpus_files_show(key):
    row = PROMISES[key]
    for name, note in row.evidence:
        comps = _compactions(name)
        assert comps, f"{name}: cited for {key} but has no compaction"
        for comp in comps:
            if row.trigger and comp["trigger"] != row.trigger:
                continue
            state = row.state(comp["version"])
            assert state != "unknown", f"{name} ({comp['version']}) is cited for {key} but lies in no range"
            assert _shows(key, comp) == (state == "yes"), f"{name} ({comp['version']}): {note}"


@needs_corpus
def test_every_corpus_compaction_agrees_with_the_table():
    for path in sorted(CORPUS.glob("*.jsonl")):
        for comp in _compactions(path.name):
            for key, row in PROMISES.items():
                if row.trigger and comp["trigger"] != row.trigger:
                    continue
                state = row.state(comp["version"])
                if key == "task_tools" and state == "yes":
                    continue  # a version that has the task tools need not use them in every session
                if state != "unknown":
                    assert _shows(key, comp) == (state == "yes"), (path.name, comp["version"], key)


def test_versions_parse_and_unknown_is_no_promise():
    assert parse_version("2.1.9") < parse_version("2.1.39") < parse_version("2.1.150")
    assert promise("analysis_stripped", "2.1.60").state == "unknown"
    assert not promise("analysis_stripped", "2.1.60").made
    reason = promise("transcript_path", "2.0.76").reason()
    assert "2.0.76" in reason and "2.1.39 and later" in reason


def test_a_transcript_without_a_version_is_named_so_in_the_reason():
    reason = promise("transcript_path", None).reason()
    assert reason.startswith("not known whether this session's Claude Code (its version is not recorded) promises this")
    assert reason.endswith("no version to look it up by") and "an unknown version" not in reason
    assert promise("analysis_stripped", "2.1.60").reason().endswith("no session of 2.1.60 read yet")
