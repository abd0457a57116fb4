"""A record the reader cannot place whole is reported with its line, never dropped or zeroed in
silence (review 3, F10): a user or assistant record with no ``message`` or no ``message.content``, a
compact_boundary with no ``compactMetadata`` or a ``preTokens`` that is no whole number, and a
compaction summary with no boundary before it. A well-formed file gets none of these notes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.transcript import read_transcript

from test_grade_folder import _session


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _line(records: list[dict], pred) -> int:
    return next(i for i, r in enumerate(records, start=1) if pred(r))


def _is_boundary(r: dict) -> bool:
    return r.get("subtype") == "compact_boundary"


def _is_summary(r: dict) -> bool:
    return bool(r.get("isCompactSummary"))


def _is_edit_call(r: dict) -> bool:
    return r.get("type") == "assistant" and "toolu_e" in json.dumps(r)


def _break(records: list[dict], case: str) -> tuple[list[dict], int, str]:
    """``records`` with one field broken, the line of the broken record and the note's words."""
    out = json.loads(json.dumps(records))
    if case == "no-content":
        at = _line(out, _is_edit_call)
        del out[at - 1]["message"]["content"]
        return out, at, "the assistant record's message has no content; read as an empty assistant message"
    if case == "summary-message-null":
        at = _line(out, _is_summary)
        out[at - 1]["message"] = None
        return out, at, "the user record has no message; read as an empty user message"
    at = _line(out, _is_boundary)
    rec = out[at - 1]
    if case == "pretokens-string":
        rec["compactMetadata"]["preTokens"] = "170k"
        return out, at, "compactMetadata.preTokens is the string '170k', expected a whole number of tokens"
    if case == "pretokens-missing":
        del rec["compactMetadata"]["preTokens"]
        return out, at, "compactMetadata.preTokens is missing"
    if case == "no-metadata":
        del rec["compactMetadata"]
        return out, at, "the compact_boundary has no compactMetadata"
    if case == "metadata-null":
        rec["compactMetadata"] = None
        return out, at, "the compact_boundary has no compactMetadata"
    if case == "trigger-unknown":
        rec["compactMetadata"]["trigger"] = "scheduled"
        return out, at, "compactMetadata.trigger is 'scheduled', expected 'auto' or 'manual'; read as auto"
    if case == "no-boundary":
        summary = _line(out, _is_summary)
        out[summary - 1]["parentUuid"] = rec.get("logicalParentUuid")
        del out[at - 1]
        return out, summary - 1, "a compaction summary (isCompactSummary) with no compact_boundary before it"
    raise ValueError(case)


CASES = ["no-content", "summary-message-null", "pretokens-string", "pretokens-missing", "no-metadata",
         "metadata-null", "trigger-unknown", "no-boundary"]


@pytest.mark.parametrize("case", CASES)
def test_a_record_read_in_part_gets_a_note_with_its_line(tmp_path, case):
    good = _session(tmp_path / "good.jsonl", second="now add tests")
    assert read_transcript(good).problems == []
    records, line, words = _break(_records(good), case)
    bad = _write(tmp_path / "bad.jsonl", records)
    notes = [str(p) for p in read_transcript(bad).problems]
    assert any(n.startswith(f"line {line}: ") and words in n for n in notes), notes


@pytest.mark.parametrize("case", ["no-content", "pretokens-string", "no-boundary"])
def test_grade_prints_the_note_with_the_file(tmp_path, capsys, case):
    good = _session(tmp_path / "good.jsonl", second="now add tests")
    records, line, words = _break(_records(good), case)
    bad = _write(tmp_path / "bad.jsonl", records)
    main(["grade", str(bad)])
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert f"{bad}: line {line}: " in out and words in out, out


def test_a_summary_opening_the_file_needs_no_boundary(tmp_path):
    """Claude Code 1.0.x opened a new session file with the summary alone: that is no broken record."""
    good = _records(_session(tmp_path / "good.jsonl", second="now add tests"))
    at = _line(good, _is_summary)
    summary = dict(good[at - 1], parentUuid=None)
    path = _write(tmp_path / "resumed.jsonl", [summary, *good[at:]])
    assert not [p for p in read_transcript(path).problems if "compact_boundary" in p.message]
