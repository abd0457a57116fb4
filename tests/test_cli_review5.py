"""What a fifth reviewer found using ``ctxeval grade`` as a new user, each shown on the good and
the bad side: an empty --summary file is refused (#15); a compaction call (agent-acompact) is
recognised in single-file and folder mode as ``ctxeval import`` recognises it (#17); folder mode
says how many files not ending in .jsonl it did not read (#23); one file with --html/--md writes
the per-session report and the same --json as without them (#9); Markdown code spans keep their
characters (#11); counts meet nouns in the singular (#22)."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_ctxeval.cli import main
from pytest_ctxeval.core.words import all_of, plural
from pytest_ctxeval.reporting.report import md_code

from session_kit import Session
from test_grade_folder import GOOD, _session


# -- #15: an empty --summary file is bad input ------------------------------------------------------


def test_an_empty_or_blank_summary_file_is_refused_and_a_real_one_graded(tmp_path, capsys):
    session = _session(tmp_path / "s.jsonl", second="now add tests")
    for content, word in (("", "empty"), ("\n  \n", "blank (4 whitespace characters)")):
        summary = tmp_path / "sum.md"
        summary.write_text(content, encoding="utf-8")
        assert main(["grade", str(session), "--summary", str(summary)]) == 2
        assert f"{summary}: the summary file is {word}; give the file holding the summary text" \
            in capsys.readouterr().err
    summary.write_text(GOOD.replace("{second}", "now add tests"), encoding="utf-8")
    assert main(["grade", str(session), "--summary", str(summary), "--graders", "tool_pairing"]) == 0


# -- #17: a compaction call given to grade -------------------------------------------------------------


def _compaction_call(path: Path) -> Path:
    """Claude Code's own compaction call (subagents/agent-acompact-*.jsonl): the summarisation prompt
    and the model's reply, every record a sidechain of agent ``acompact-…``."""
    s = Session(version="2.1.39")
    s.add({"type": "user", "isSidechain": True, "agentId": "acompact-9f1",
           "message": {"role": "user", "content": "Your task is to create a detailed summary of the conversation "
                                                  "so far, paying close attention to the user's explicit requests"}})
    s.add({"type": "assistant", "isSidechain": True, "agentId": "acompact-9f1",
           "message": {"id": "m1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                       "content": [{"type": "text", "text": "<summary>1. Primary Request...</summary>"}]}})
    path.parent.mkdir(parents=True, exist_ok=True)
    return s.write(path)


def test_grade_recognises_a_compaction_call_alone_and_in_a_folder(tmp_path, capsys):
    call = _compaction_call(tmp_path / "p" / "agent-acompact-9f1.jsonl")
    assert main(["grade", str(call)]) == 2
    err = capsys.readouterr().err
    assert "is Claude Code's compaction call (agent acompact-9f1)" in err and "nothing to grade" in err
    assert f"ctxeval compare-real SESSION.jsonl --acompact {call}" in err
    assert "no compaction in this transcript" not in err
    # beside a session in a folder: listed as what it is; the session is graded
    _session(tmp_path / "p" / "s.jsonl", second="now add tests")
    assert main(["grade", str(tmp_path / "p"), "--graders", "verbatim_user_messages"]) == 0
    out = capsys.readouterr().out
    assert f"{call}: Claude Code's compaction call (agent-acompact), not a session: grade the session it belongs " \
           "to; compare this call with ours: ctxeval compare-real SESSION.jsonl --acompact FILE" in out
    # a session file with no compaction is still "no compaction", not a compaction call
    plain = Session()
    plain.user("fix the parser")
    plain.assistant(text="ok")
    assert main(["grade", str(plain.write(tmp_path / "plain.jsonl"))]) == 2
    assert "no compaction in this transcript" in capsys.readouterr().err


# -- #23: files passed over in folder mode are counted -------------------------------------------------


def test_folder_mode_says_how_many_files_it_did_not_read(tmp_path, capsys):
    folder = tmp_path / "p"
    _session(folder / "a.jsonl", second="now add tests")
    assert main(["grade", str(folder), "--graders", "tool_pairing"]) == 0
    assert "not ending in .jsonl" not in capsys.readouterr().out
    (folder / "renamed.json").write_text("{}")
    (folder / "notes.txt").write_text("x")
    md = tmp_path / "r.md"
    assert main(["grade", str(folder), "--graders", "tool_pairing", "--md", str(md)]) == 0
    note = "2 files not ending in .jsonl were not read (notes.txt, renamed.json)"
    assert note in capsys.readouterr().out and "2 files not ending in .jsonl were not read" in md.read_text()
    # nothing but them: the error says so too
    (folder / "a.jsonl").unlink()
    assert main(["grade", str(folder)]) == 2
    assert "no .jsonl session file in this folder or below" in (err := capsys.readouterr().err) and note in err


# -- #9: one file with --html/--md: the same --json, the per-session report ---------------------------


def test_one_file_writes_the_same_results_json_with_or_without_reports(tmp_path, capsys):
    one = _session(tmp_path / "one.jsonl", second="now add tests")
    plain, with_reports = tmp_path / "a.json", tmp_path / "b.json"
    assert main(["grade", str(one), "--graders", "tool_pairing", "--json", str(plain)]) == 0
    assert main(["grade", str(one), "--graders", "tool_pairing", "--json", str(with_reports),
                 "--html", str(tmp_path / "r.html"), "--md", str(tmp_path / "r.md")]) == 0
    a, b = json.loads(plain.read_text()), json.loads(with_reports.read_text())
    assert a["format"] == b["format"] == "pytest-ctxeval/results"
    assert main(["report", str(with_reports), "-o", str(tmp_path / "again.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    assert "tool_pairing" in page and "Could not be read" not in page
    capsys.readouterr()


def test_folder_reports_leave_out_empty_sections(tmp_path, capsys):
    folder = tmp_path / "p"
    _session(folder / "a.jsonl", second="now add tests")
    _session(folder / "b.jsonl", second="and docs")
    md, page = tmp_path / "r.md", tmp_path / "r.html"
    assert main(["grade", str(folder), "--graders", "tool_pairing", "--md", str(md), "--html", str(page)]) == 0
    for text in (md.read_text(), page.read_text()):
        for title in ("Could not be read", "Skipped", "Inherited compactions", "Lines skipped"):
            assert title not in text
    (folder / "c.jsonl").write_text("[1]\n")          # a skipped file: its section appears
    assert main(["grade", str(folder), "--graders", "tool_pairing", "--md", str(md)]) == 0
    assert "## Skipped (1)" in md.read_text()
    capsys.readouterr()


# -- #11: code spans in Markdown ---------------------------------------------------------------------


def test_markdown_code_spans_keep_paths_as_written(tmp_path, capsys):
    assert md_code("/x/FSM1__cipher-box__2.1.49.jsonl:754") == "`/x/FSM1__cipher-box__2.1.49.jsonl:754`"
    assert md_code("a `b` c") == "``a `b` c``" and md_code("`x") == "`` `x ``"
    assert md_code("two\nlines") == "`two lines`"
    folder = tmp_path / "my_sessions"
    _session(folder / "fsm__cipher_box.jsonl", second="now add tests")
    (folder / "bad__one.jsonl").write_text("[1]\n")
    md = tmp_path / "r.md"
    assert main(["grade", str(folder), "--graders", "tool_pairing", "--md", str(md)]) == 0
    text = md.read_text()
    assert f"`{folder}/bad__one.jsonl`" in text and "\\_" not in text.split("## Skipped")[1]
    capsys.readouterr()


# -- #22: counts and nouns ---------------------------------------------------------------------------


def test_counts_meet_nouns_in_the_right_number():
    assert [plural(n, "scenario") for n in (0, 1, 2)] == ["0 scenarios", "1 scenario", "2 scenarios"]
    assert plural(1200, "line", sep=True) == "1,200 lines" and plural(2, "summary", "summaries") == "2 summaries"
    assert plural(3, "person-typed message") == "3 person-typed messages" and plural(2, "fix") == "2 fixes"
    assert plural(2, "compaction generation") == "2 compaction generations" and plural(2, "day") == "2 days"
    assert all_of(1, "error line") == "the 1 error line" and all_of(3, "error line") == "all 3 error lines"


def test_a_leave_out_rewrites_the_count_of_a_single_item_too():
    """The pass text of one item ("the 1 error line in …") still says how many the /compact
    leave-out excused, as "all 3 …" does."""
    from pytest_ctxeval.reading.leave_out import LeaveOut, with_leave_out

    item = LeaveOut(said="leave out the flaky test", kinds=frozenset({"errors"}), words=())
    ok, _ = with_leave_out(f"{all_of(1, 'error line')} in section 4", [], [item], 1, "error lines", None, [item])
    assert ok.startswith("0 of 1 error line in section 4; 1 error line left out as /compact asked")
    ok, _ = with_leave_out(f"{all_of(3, 'error line')} in section 4", [], [item], 3, "error lines", None, [item])
    assert ok.startswith("2 of 3 error lines in section 4")
