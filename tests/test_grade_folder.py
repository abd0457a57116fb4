"""``ctxeval grade FOLDER`` / several paths: tables, skipped and inherited sessions, exit codes, outputs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.grading.folders import find_sessions, folder_document, grade_paths

from session_kit import Session, stream_json_session
from shared_paths import CORPUS_DIR as CORPUS, needs_shared

GOOD = ("This session is being continued from a previous conversation that ran out of context. The "
        "conversation is summarized below:\nAnalysis:\nfine\n\nSummary:\n"
        "1. Primary Request and Intent:\n   fix the parser in src/parse.py\n"
        "2. Key Technical Concepts:\n   - parsing\n"
        "3. Files and Code Sections:\n   - src/parse.py\n"
        "4. Errors and fixes:\n   - none\n"
        "5. Problem Solving:\n   done\n"
        "6. All user messages:\n   - \"fix the parser in src/parse.py\"\n   - \"{second}\"\n"
        "7. Pending Tasks:\n   - none\n"
        "8. Current Work:\n   parser\n"
        "9. Optional Next Step:\n   \"{second}\"\n")


def _session(path: Path, *, second: str, quoted: str | None = None, version: str = "2.0.76") -> Path:
    s = Session(version=version)
    s.user("fix the parser in src/parse.py")
    s.assistant(text="Editing.", tools=[("toolu_e", "Edit", {"file_path": "src/parse.py", "old_string": "a",
                                                             "new_string": "b"})])
    s.result("toolu_e", "The file src/parse.py has been updated.")
    s.user(second)
    s.assistant(text="Working on it.")
    s.compact(GOOD.replace("{second}", second if quoted is None else quoted))
    s.user("thanks")
    s.assistant(text="ok")
    path.parent.mkdir(parents=True, exist_ok=True)
    return s.write(path)


def _plain(path: Path) -> Path:
    s = Session()
    s.user("hello")
    s.assistant(text="hi")
    path.parent.mkdir(parents=True, exist_ok=True)
    return s.write(path)


def _inherited_only(path: Path) -> Path:
    s = Session()
    s.add({"type": "system", "subtype": "compact_boundary", "logicalParentUuid": "in-the-parent",
           "compactMetadata": {"trigger": "auto", "preTokens": 150_000}})
    s.user(GOOD.replace("{second}", "x"), isCompactSummary=True)
    s.user("go on")
    s.assistant(text="going on")
    return s.write(path)


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    root = tmp_path / "projects"
    _session(root / "app" / "good.jsonl", second="now add tests", version="2.0.76")
    # A defective summary: the second request is not quoted; the text would open HTML if unescaped.
    _session(root / "app" / "bad.jsonl", second="add <script>alert(1)</script> | [x](http://e) tests",
             quoted="something else", version="2.1.49")
    _plain(root / "other" / "plain.jsonl")
    _inherited_only(root / "other" / "resumed.jsonl")
    (root / "other" / "notes.jsonl").write_text('{"type": "last-prompt", "sessionId": "x"}\n')
    (root / "other" / "readme.txt").write_text("not a session")
    return root


def test_find_sessions_is_recursive_sorted_and_names_a_missing_path(projects):
    files = [p.relative_to(projects).as_posix() for p in find_sessions([str(projects)])]
    assert files == ["app/bad.jsonl", "app/good.jsonl", "other/notes.jsonl", "other/plain.jsonl", "other/resumed.jsonl"]
    with pytest.raises(Exception, match="nope: no such file or folder"):
        find_sessions([str(projects / "nope")])


def test_folder_report_tables_skipped_inherited_and_failures(projects, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["grade", str(projects), "--graders", "verbatim_user_messages,files_preserved,tool_pairing",
                 "--json", str(out / "r.json"), "--md", str(out / "r.md"), "--html", str(out / "r.html"),
                 "--workers", "2"])
    printed = capsys.readouterr().out
    assert code == 1                                    # a verdict failed; nothing was bad input
    assert "5 session files: 2 graded (2 compactions), 3 skipped, 0 unreadable; 1 inherited" in printed
    assert "By grader" in printed and "By Claude Code version" in printed
    doc = json.loads((out / "r.json").read_text())
    assert doc["graders"]["verbatim_user_messages"] == {"pass": 1, "fail": 1, "n/a": 0, "ungraded": 0}
    assert doc["graders"]["tool_pairing"]["pass"] == 2
    assert set(doc["versions"]) == {"2.0.76", "2.1.49"} and doc["versions"]["2.1.49"]["fail"] == 1
    (failure,) = doc["failures"]
    assert failure["grader"] == "verbatim_user_messages" and failure["path"].endswith("bad.jsonl")
    assert failure["line"] == 8 and failure["version"] == "2.1.49"
    skipped = {Path(s["path"]).name: s["reason"] for s in doc["skipped"]}
    assert skipped == {"plain.jsonl": "no compaction in this session",
                       "resumed.jsonl": "only a compaction inherited from a parent session",
                       "notes.jsonl": "not a Claude Code session file (no user or assistant records)"}
    assert [Path(i["path"]).name for i in doc["inherited"]] == ["resumed.jsonl"]
    # The same report in Markdown and HTML, with the transcript's text made inert.
    md = (out / "r.md").read_text()
    assert "## By grader" in md and "verbatim\\_user\\_messages" in md and "<script>" not in md
    html = (out / "r.html").read_text()
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "Content-Security-Policy" in html and "resumed.jsonl" in html


def test_all_passing_folder_exits_0_and_one_file_works_as_before(projects, tmp_path, capsys):
    good = projects / "app" / "good.jsonl"
    assert main(["grade", str(projects / "app" / "good.jsonl"), str(projects / "other"),
                 "--graders", "verbatim_user_messages,tool_pairing"]) == 0
    assert "3 skipped" in capsys.readouterr().out
    assert main(["grade", str(good), "--graders", "verbatim_user_messages"]) == 0
    printed = capsys.readouterr().out
    assert "By grader" not in printed and "good.jsonl" in printed


def test_bad_input_exits_2_and_still_reports_the_others(projects, tmp_path, capsys):
    assert main(["grade", str(projects), str(tmp_path / "missing")]) == 2
    assert "missing: no such file or folder" in capsys.readouterr().err
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs")
    os.mkfifo(projects / "app" / "pipe.jsonl")
    code = main(["grade", str(projects), "--graders", "tool_pairing", "--json", str(tmp_path / "r.json")])
    printed = capsys.readouterr().out
    assert code == 2
    doc = json.loads((tmp_path / "r.json").read_text())
    assert [Path(e["path"]).name for e in doc["errors"]] == ["pipe.jsonl"] and "FIFO" in doc["errors"][0]["reason"]
    assert doc["summary"]["graded"] == 2 and "Could not be read (1)" in printed


def test_a_run_that_graded_nothing_exits_2_with_the_reports_written(tmp_path, capsys):
    """Every file skipped (SDK stream output, a session with no compaction): no verdict passed, so
    the run is not green. The reports are written all the same, and stderr says why in one line."""
    folder = tmp_path / "logs"
    folder.mkdir()
    stream_json_session(folder / "run.jsonl")
    _plain(folder / "plain.jsonl")
    out = tmp_path / "r.json"
    assert main(["grade", str(folder), "--graders", "tool_pairing", "--json", str(out)]) == 2
    captured = capsys.readouterr()
    assert "ctxeval: error: nothing graded: none of the 2 session files given holds a compaction of its own" \
        in captured.err and "(2 skipped;" in captured.err
    doc = json.loads(out.read_text())
    skipped = {Path(s["path"]).name: s["reason"] for s in doc["skipped"]}
    assert skipped["plain.jsonl"] == "no compaction in this session"
    assert skipped["run.jsonl"].startswith("Claude Code SDK stream output (claude -p --output-format stream-json), "
                                           "not a session transcript: grade /home/dev/.claude/projects/")
    assert doc["problems"] == []                          # refused whole: no line reported as dropped
    # One file with --md is the single-file report: the same rule (nothing to grade is exit 2).
    assert main(["grade", str(folder / "plain.jsonl"), "--md", str(tmp_path / "r.md")]) == 2
    assert "no compaction in this transcript" in capsys.readouterr().err


def test_a_skipped_file_beside_a_graded_one_keeps_exit_0(tmp_path, capsys):
    folder = tmp_path / "mixed"
    _session(folder / "good.jsonl", second="now add tests")
    stream_json_session(folder / "run.jsonl")
    assert main(["grade", str(folder), "--graders", "verbatim_user_messages"]) == 0
    captured = capsys.readouterr()
    assert "1 graded (1 compaction), 1 skipped" in captured.out and "nothing graded" not in captured.err


def test_output_paths_are_checked_before_grading(projects, tmp_path, capsys):
    assert main(["grade", str(projects), "--html", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert main(["grade", str(projects), "--summary", str(tmp_path / "s.md")]) == 2
    assert "single .jsonl file" in capsys.readouterr().err


def test_terminal_output_shows_control_characters_not_escape_sequences(tmp_path, capsys):
    _session(tmp_path / "p" / "esc.jsonl", second="clear \x1b[2J\x1b]0;title\x07 now", quoted="nothing")
    _plain(tmp_path / "p" / "plain.jsonl")
    main(["grade", str(tmp_path / "p"), "--graders", "verbatim_user_messages", "--workers", "1"])
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\\x1b[2J" in printed


def test_grade_paths_in_one_process_and_in_two_agree(projects):
    files = find_sessions([str(projects)])
    one = folder_document(list(grade_paths(files, grader_names=["verbatim_user_messages"], workers=1)),
                          paths=[], graders=["verbatim_user_messages"], workers=1, seconds=1)
    two = folder_document(list(grade_paths(files, grader_names=["verbatim_user_messages"], workers=2)),
                          paths=[], graders=["verbatim_user_messages"], workers=2, seconds=1)
    assert one["graders"] == two["graders"] and one["failures"] == two["failures"]


@needs_shared
def test_the_corpus_folder_grades_every_compaction(tmp_path, capsys):
    code = main(["grade", str(CORPUS), "--graders", "tool_pairing,nine_sections", "--json", str(tmp_path / "c.json")])
    assert code in (0, 1)
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["summary"]["compactions"] == 17 and doc["summary"]["errors"] == 0
    assert doc["graders"]["tool_pairing"] == {"pass": 17, "fail": 0, "n/a": 0, "ungraded": 0}
    assert {Path(s["path"]).name.split("__")[0] for s in doc["skipped"]} == {
        "d-kimuson", "marot", "moredip"}




def test_progress_line_counts_sessions_and_megabytes(projects, capsys):
    files = find_sessions([str(projects)])
    results = list(grade_paths(files, grader_names=["tool_pairing"], workers=1, progress=True))
    err = capsys.readouterr().err
    assert len(results) == 5
    assert f"[5/5] {'#' * 24}" in err and "MB/s" in err and err.endswith("\r")


def test_judge_usage_is_summed_over_the_sessions(projects, tmp_path, capsys):
    code = main(["grade", str(projects / "app"), "--graders", "intent_preservation", "--workers", "2",
                 "--json", str(tmp_path / "u.json")])
    printed = capsys.readouterr().out
    assert code in (0, 1)
    assert "model usage (offline): 2 calls" in printed          # one judge call per compaction, both workers
    assert json.loads((tmp_path / "u.json").read_text())["usage"]["api_calls"] == 2
