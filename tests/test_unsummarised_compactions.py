"""A compaction with no summary after its boundary, and a file with nothing of its own to grade.

A session still being written, or a copy cut at a size limit, can end right after a
``compact_boundary`` (or in the middle of the summary's line); a summary record without
``isCompactSummary`` is not a summary. Such a compaction is listed with its line and the reason, and
never graded against an empty summary (which would fail every grader). A file whose only compaction is
inherited from a parent session, or has no summary, has nothing to grade: ``ctxeval grade FILE`` says
so as folder mode does, with the usage-error exit status of a file with no compaction at all.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_ctxeval.evaluate import evaluate
from pytest_ctxeval.cli import main
from pytest_ctxeval.grading.registry import cases_from_transcript
from pytest_ctxeval.transcript import read_transcript
from pytest_ctxeval.transcript.compactions import nothing_to_grade

from session_kit import Session
from shared_paths import CORPUS_DIR, needs_shared
from test_grade_folder import GOOD, _inherited_only

GRADERS = "verbatim_user_messages,files_preserved,tool_pairing,nine_sections"


def _start(s: Session) -> None:
    s.user("fix the parser in src/parse.py")
    s.assistant(text="Editing.", tools=[("toolu_e", "Edit", {"file_path": "src/parse.py", "old_string": "a",
                                                             "new_string": "b"})])
    s.result("toolu_e", "The file src/parse.py has been updated.")
    s.user("now add tests")
    s.assistant(text="Working on it.")


def _boundary(s: Session) -> None:
    """A compact_boundary as Claude Code writes it, with nothing after it yet."""
    last = s.parent
    s.parent = None
    s.add({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
           "logicalParentUuid": last, "compactMetadata": {"trigger": "auto", "preTokens": 150_000}})


def _cut(path: Path, *, after: str = "end", good_first: bool = False) -> Path:
    """A session whose last compaction has no summary: the file ends at the boundary (``end``), in
    the middle of the summary's line (``midline``), the next record is a person's message (``user``)
    or the summary without its flag (``noflag``). With ``good_first``, a complete compaction first."""
    s = Session(version="2.1.49")
    _start(s)
    if good_first:
        s.compact(GOOD.replace("{second}", "now add tests"))
        s.user("and document it")
        s.assistant(text="Documenting.")
    _boundary(s)
    extra: list[bytes] = []
    if after == "user":
        s.user("what were we doing?")
        s.assistant(text="Let me look.")
    elif after == "noflag":
        s.user(GOOD.replace("{second}", "now add tests"), isVisibleInTranscriptOnly=True)
    elif after == "midline":
        extra = [b'{"parentUuid": "system-0099", "type": "user", "isCompactSummary": true, "message": {"role": "us']
    path.parent.mkdir(parents=True, exist_ok=True)
    return s.write(path, extra)


CUTS = {"end": "the transcript ends after it", "midline": "could not be read",
        "user": "is not a compaction summary", "noflag": "opens like a summary but has no isCompactSummary flag"}


@pytest.mark.parametrize("after", list(CUTS))
def test_a_compaction_with_no_summary_is_listed_with_its_reason_and_not_graded(tmp_path, after):
    t = read_transcript(_cut(tmp_path / "t.jsonl", after=after))
    (comp,) = t.compactions
    assert comp.summary is None and not comp.gradable and not comp.inherited
    assert comp.no_summary.startswith("no summary after the boundary") and CUTS[after] in comp.no_summary
    assert comp.not_graded.startswith(f"compaction at line {comp.boundary_line}: no summary after the boundary")
    assert comp.describe()["no_summary"] == comp.no_summary
    assert cases_from_transcript(t) == []
    assert nothing_to_grade(t.compactions) == "only a compaction with no summary after its boundary"


def test_a_person_message_opening_like_a_summary_is_not_taken_for_one(tmp_path):
    """Recognising a summary by its opening words would grade a person's pasted text as a summary."""
    t = read_transcript(_cut(tmp_path / "t.jsonl", after="noflag"))
    assert t.compactions[0].summary is None


@pytest.mark.parametrize("after", list(CUTS))
def test_one_file_with_only_an_unsummarised_compaction_says_so_and_exits_2(tmp_path, capsys, after):
    path = _cut(tmp_path / "t.jsonl", after=after)
    assert main(["grade", str(path), "--graders", GRADERS]) == 2
    out, err = capsys.readouterr()
    assert "FAIL" not in out and "failed" not in out
    assert ("t.jsonl: skipped: only a compaction with no summary after its boundary (compaction at line 7: "
            "no summary after the boundary") in err
    assert CUTS[after] in err and "nothing to grade" in err
    if after == "midline":
        assert "line 8: not valid JSON" in err   # the cut line is named, not dropped without a word


def test_the_other_compactions_of_the_file_are_still_graded(tmp_path, capsys):
    path = _cut(tmp_path / "t.jsonl", after="end", good_first=True)
    t = read_transcript(path)
    assert [c.gradable for c in t.compactions] == [True, False]
    assert [c.index for c in cases_from_transcript(t)] == [1]
    assert main(["grade", str(path), "--graders", GRADERS, "--json", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    line = t.compactions[1].boundary_line
    assert (f"note: {path}: compaction at line {line}: no summary after the boundary (the transcript ends after "
            "it: a session still being written, or a copy cut short); not graded") in out
    assert re.search(r"t\.jsonl +1 ", out) and "FAIL" not in out
    (entry,) = json.loads((tmp_path / "r.json").read_text())["scenarios"]
    assert any(f"compaction at line {line}: no summary" in n for n in entry["notes"])


def test_the_evaluate_api_reports_nothing_to_grade_as_skipped_not_failed(tmp_path):
    outcome = evaluate(_cut(tmp_path / "t.jsonl"), graders=GRADERS.split(","))
    assert outcome.skipped == "only a compaction with no summary after its boundary"
    assert not outcome.failed and outcome.counts["fail"] == 0 and outcome.counts["n/a"] == 4
    assert any("no summary after the boundary" in n for n in outcome.notes)
    inherited = evaluate(_inherited_only(tmp_path / "r.jsonl"), graders=GRADERS.split(","))
    assert inherited.skipped == "only a compaction inherited from a parent session" and not inherited.failed


def test_one_file_with_only_an_inherited_compaction_says_what_folder_mode_says(tmp_path, capsys):
    path = _inherited_only(tmp_path / "resumed.jsonl")
    assert main(["grade", str(path), "--graders", GRADERS]) == 2
    out, err = capsys.readouterr()
    assert "failed" not in out and "no compact_boundary record" not in err
    assert "resumed.jsonl: skipped: only a compaction inherited from a parent session (line 1: " in err
    assert "nothing of this session to grade" in err


def test_folder_mode_lists_unsummarised_compactions_apart_from_failures(tmp_path, capsys):
    root = tmp_path / "p"
    _cut(root / "cut.jsonl", after="end")
    _cut(root / "mixed.jsonl", after="user", good_first=True)
    out = tmp_path / "out"
    code = main(["grade", str(root), "--graders", GRADERS, "--workers", "1", "--json", str(out / "r.json"),
                 "--md", str(out / "r.md"), "--html", str(out / "r.html")])
    printed = capsys.readouterr().out
    assert code == 0
    doc = json.loads((out / "r.json").read_text())
    assert doc["failures"] == [] and doc["summary"]["compactions"] == 1 and doc["summary"]["incomplete"] == 2
    assert {Path(i["path"]).name: i["line"] for i in doc["incomplete"]} == {"cut.jsonl": 7, "mixed.jsonl": 13}
    assert [(Path(s["path"]).name, s["reason"]) for s in doc["skipped"]] == [
        ("cut.jsonl", "only a compaction with no summary after its boundary")]
    assert sum(c["fail"] for c in doc["graders"].values()) == 0
    assert "2 compactions with no summary not graded" in printed
    assert "Compactions with no summary after the boundary (not graded) (2):" in printed
    assert "mixed.jsonl:13: no summary after the boundary (the next record, line 14, is not a compaction" in printed
    for report in ("r.md", "r.html"):
        text = (out / report).read_text()
        assert "Compactions with no summary after the boundary (not graded) (2)" in text and "cut" in text


@needs_shared
def test_every_corpus_file_cut_after_a_boundary_is_listed_not_failed(tmp_path):
    """The corpus's real boundaries, each with the file cut right after it."""
    cut = 0
    for src in sorted(CORPUS_DIR.glob("*.jsonl")):
        lines = src.read_bytes().splitlines(keepends=True)
        for comp in read_transcript(src).compactions:
            if comp.inherited or not comp.boundary_line or comp.boundary_line != comp.summary_line - 1:
                continue
            path = tmp_path / f"{src.stem}-{comp.boundary_line}.jsonl"
            path.write_bytes(b"".join(lines[:comp.boundary_line]))
            t = read_transcript(path)
            last = t.compactions[-1]
            assert last.boundary_line == comp.boundary_line and last.summary is None, path.name
            assert "the transcript ends after it" in last.no_summary, path.name
            assert all(case.index != last.index for case in cases_from_transcript(t)), path.name
            cut += 1
    assert cut >= 15


def test_compare_real_compares_the_compaction_that_has_a_summary_with_its_own(tmp_path):
    """compare-real pairs each compaction with its real case: one with no summary first must not
    shift the pairing (it compared the next compaction with the wrong summary), and is noted."""
    from pytest_ctxeval.compare_real import compare_real
    from pytest_ctxeval.errors import UsageError
    from pytest_ctxeval.grading import load_graders
    from pytest_ctxeval.llm import make_llm

    s = Session(version="2.1.49")
    _start(s)
    _boundary(s)  # no summary: the next record is the person's
    s.user("what were we doing?")
    s.assistant(text="Let me look.")
    s.compact(GOOD.replace("{second}", "what were we doing?"))
    path = s.write(tmp_path / "t.jsonl", [])
    t = read_transcript(path)
    missing, good = t.compactions
    assert missing.no_summary and good.gradable
    registry = load_graders()
    cmp = compare_real(path, llm=make_llm(), registry=registry, specs=registry.select(kinds=["rule"]))
    (only,) = cmp.compactions
    assert only.line == cases_from_transcript(t)[0].line and only.index == good.index
    assert any(f"compaction at line {missing.boundary_line}: no summary after the boundary" in n for n in cmp.notes)
    with pytest.raises(UsageError, match="only a compaction with no summary after its boundary"):
        compare_real(_cut(tmp_path / "cut.jsonl"), llm=make_llm(), registry=registry)
