"""The ``tiers`` column of ``ctxeval grade`` on a real session: what the transcript shows (its
compaction boundaries by trigger, tool results a tier replaced), never a guess; what a transcript
cannot show is said under the table (review 2, F28: the column was always ``-``)."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_ctxeval.cli import main
from pytest_ctxeval.engine.dedupe import FILE_UNCHANGED_STUB
from pytest_ctxeval.engine.microcompact import CLEARED
from pytest_ctxeval.reporting.report import report_context

from session_kit import Session
from shared_paths import CORPUS_DIR as CORPUS, needs_shared
from test_grade_folder import GOOD

PERSISTED = ("<persisted-output>\nOutput too large (80.2KB). Full output saved to: /home/me/.claude/x.txt\n\n"
             "Preview (first 2KB):\nline 1\n...\n</persisted-output>")


def _marked_session(path: Path, *, marks: bool = True) -> Path:
    s = Session(version="2.1.49")
    s.user("fix the parser in src/parse.py")
    tools = [("toolu_r1", "Read", {"file_path": "src/parse.py"}), ("toolu_b", "Bash", {"command": "pytest"}),
             ("toolu_r2", "Read", {"file_path": "src/parse.py"})]
    s.assistant(text="Looking.", tools=tools)
    s.result("toolu_r1", CLEARED if marks else "1\tdef parse(): ...")
    s.result("toolu_b", PERSISTED if marks else "3 passed")
    s.result("toolu_r2", FILE_UNCHANGED_STUB if marks else "1\tdef parse(): ...")
    s.user("now add tests")
    s.assistant(text="Working on it.")
    s.compact(GOOD.replace("{second}", "now add tests"), trigger="auto", pre_tokens=150_000)
    s.user("go on")
    s.assistant(text="ok")
    s.compact(GOOD.replace("{second}", "now add tests"), trigger="manual", pre_tokens=20_000)
    s.user("thanks")
    s.assistant(text="done")
    return s.write(path)


def _row(out: str, name: str) -> list[str]:
    return next(l for l in out.splitlines() if l.startswith(name)).split()


def test_the_tiers_column_counts_what_the_transcript_shows(tmp_path, capsys):
    path = _marked_session(tmp_path / "marked.jsonl")
    main(["grade", str(path), "--json", str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    row = " ".join(_row(out, "marked.jsonl"))
    assert row.endswith("autocompact 1, budget 1, compact 1, dedupe 1, microcompact 1"), row
    assert "microcompact clears (made in the request, not the file), PTL retries and cache edits leave no record" in out
    doc = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    entry = doc["scenarios"][0]
    assert entry["tiers"] == {"autocompact": 1, "budget": 1, "compact": 1, "dedupe": 1, "microcompact": 1}
    row = next(r for r in report_context(doc)["rows"] if r["name"] == "marked.jsonl")
    assert row["tiers"] == "autocompact 1, budget 1, compact 1, dedupe 1, microcompact 1"


def test_results_written_in_full_are_no_tier(tmp_path, capsys):
    path = _marked_session(tmp_path / "plain.jsonl", marks=False)
    main(["grade", str(path)])
    assert " ".join(_row(capsys.readouterr().out, "plain.jsonl")).endswith("autocompact 1, compact 1")


@needs_shared
def test_real_sessions_show_their_boundaries_and_persisted_outputs(capsys):
    for name, tiers in [("FSM1__cipher-box__2.1.49-manual-rejects-12f1f541.jsonl", "budget 1, compact 1"),
                        ("melagiri__code-insights__2.1.69-two-auto-toolsearch-3cbc097a.jsonl", "autocompact 2, budget 1"),
                        ("oneryalcin__fasthooks__sample_main_transcript.jsonl", None)]:
        main(["grade", str(CORPUS / name)])
        row = " ".join(_row(capsys.readouterr().out, name))
        if tiers is not None:
            assert row.endswith(tiers), row
        else:
            assert not row.endswith(" -"), row
