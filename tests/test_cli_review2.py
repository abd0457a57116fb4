"""Findings of the second fresh-user review: files a user names that ctxeval cannot read, scenario
folders on the pytest command line, scenarios that never ran, and what the reports leave unsaid.
Each test failed before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ctxeval.cli import main

from test_grade_folder import _session

ROOT = Path(__file__).resolve().parents[1]
BUILTIN_COMPACT = (ROOT / "pytest_ctxeval" / "prompts" / "compact.j2").read_text(encoding="utf-8")
IDLE_GAP = ROOT / "scenarios" / "idle_gap.yaml"


def _latin1_prompt(folder: Path) -> Path:
    """The built-in prompt plus one accented line, saved as Latin-1 (as some Windows editors do)."""
    p = folder / "latin1.j2"
    p.write_bytes((BUILTIN_COMPACT + "\nRésumé carefully.\n").encode("latin-1"))
    return p


def _bad_line(p: Path) -> int:
    return p.read_bytes().split(b"\xe9")[0].count(b"\n") + 1


# -- F24: a file the user names that is not UTF-8, or a folder, is one error, never a traceback -----


@pytest.mark.parametrize("argv", [
    ["prompt", "show", "--prompt", "{p}"],
    ["run", str(IDLE_GAP), "--prompt", "{p}"],
    ["run", str(IDLE_GAP), "--session-memory-prompt", "{p}"],
    ["compare-real", "{session}", "--prompt", "{p}"],
], ids=["prompt-show", "run-prompt", "run-session-memory-prompt", "compare-real"])
def test_a_latin1_prompt_is_an_error_naming_file_line_and_fix(tmp_path, capsys, argv):
    p = _latin1_prompt(tmp_path)
    session = _session(tmp_path / "s.jsonl", second="now add tests")
    code = main([a.replace("{p}", str(p)).replace("{session}", str(session)) for a in argv])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{p}:{_bad_line(p)}: not UTF-8 (invalid continuation byte at byte " in err
    assert "save the file as UTF-8" in err and "Traceback" not in err


def test_an_include_that_is_not_utf8_is_named_with_the_prompt_that_includes_it(tmp_path, capsys):
    (tmp_path / "mine.j2").write_bytes("Résumé\n".encode("latin-1"))
    prompt = tmp_path / "compact.j2"
    prompt.write_text('{% include "mine.j2" %}\n{{ custom_instructions }}\n', encoding="utf-8")
    assert main(["prompt", "show", "--prompt", str(prompt)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'mine.j2'}:1: not UTF-8" in err and f"(included by {prompt})" in err


def test_a_folder_given_as_the_prompt_says_to_pass_the_file_in_it(tmp_path, capsys):
    assert main(["prompt", "show", "--prompt", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"compaction prompt {tmp_path}: is a folder; pass the template file in it, e.g. " in err
    assert "no such file" not in err


def test_pytest_with_a_latin1_prompt_is_a_usage_error_not_an_internal_error(pytester: pytest.Pytester, tmp_path):
    p = _latin1_prompt(tmp_path)
    (pytester.path / "scenarios").mkdir()
    (pytester.path / "scenarios" / "idle_gap.yaml").write_text(IDLE_GAP.read_text())
    for option in ("--ctxeval-prompt", "--ctxeval-compare-prompt"):
        result = pytester.runpytest("--ctxeval", option, str(p), "-p", "no:cacheprovider")
        assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
        out = result.stdout.str() + result.stderr.str()
        assert "INTERNALERROR" not in out and f"{p}:{_bad_line(p)}: not UTF-8" in out


def test_expectations_and_baselines_that_are_not_utf8_name_the_line(tmp_path, capsys):
    session = _session(tmp_path / "s.jsonl", second="now add tests")
    expect = tmp_path / "e.yaml"
    expect.write_bytes("files: []\nintent: \"R\xe9sum\xe9\"\n".encode("latin-1"))
    assert main(["grade", str(session), "--expect", str(expect)]) == 2
    assert f"{expect}:2: not UTF-8 (invalid continuation byte at byte " in capsys.readouterr().err
    assert main(["grade", str(session), "--expect", str(tmp_path)]) == 2
    assert f"expectations file {tmp_path}: is a folder" in capsys.readouterr().err
    base = tmp_path / "b.json"
    base.write_bytes(b'{\n"format": "x\xff"}\n')
    assert main(["diff", str(base), str(base)]) == 2
    assert f"{base}:2: not UTF-8" in capsys.readouterr().err


def test_grade_output_of_a_file_that_is_not_utf8_names_it(tmp_path, capsys):
    out = tmp_path / "summary.md"
    out.write_bytes(b"1. Primary Request\n\xff\xfe\n")
    assert main(["grade-output", str(out), "--scenario", str(IDLE_GAP)]) == 2
    assert f"output {out}:2: not UTF-8" in capsys.readouterr().err


def test_a_rubric_that_is_not_utf8_is_a_grader_error_naming_it(tmp_path):
    from pytest_ctxeval.errors import GraderError
    from pytest_ctxeval.grading.judging import Judge

    (tmp_path / "intent.j2").write_bytes("R\xe9sum\xe9 {{ fence }}".encode("latin-1"))

    class _Offline:
        backend, model = "offline", "m"

    judge = Judge(_Offline(), rubrics=tmp_path)  # type: ignore[arg-type]
    with pytest.raises(GraderError, match=r"rubric .*intent\.j2:1: not UTF-8"):
        judge.render("intent")


# -- F7: a folder on the pytest command line is searched for scenarios, as `ctxeval run` does ------


def test_pytest_collects_the_scenarios_of_a_folder_given_on_the_command_line(pytester: pytest.Pytester):
    (pytester.path / "scenarios").mkdir()
    (pytester.path / "scenarios" / "configured.yaml").write_text(IDLE_GAP.read_text())
    mine = pytester.path / "mine" / "deeper"
    mine.mkdir(parents=True)
    (mine / "idle_gap.yaml").write_text(IDLE_GAP.read_text())
    (mine / "mkdocs.yml").write_text("site_name: not a scenario\nnav: []\n")
    given = pytester.runpytest("--ctxeval", "mine", "--co", "-q", "-p", "no:cacheprovider")
    listed = given.stdout.str()
    assert "mine/deeper/idle_gap.yaml::verbatim_user_messages" in listed
    assert "mkdocs.yml" not in listed and "configured.yaml" not in listed
    # With no argument (and with the project folder itself) the configured folder decides, as before.
    for args in ((), (".",)):
        listed = pytester.runpytest("--ctxeval", *args, "--co", "-q", "-p", "no:cacheprovider").stdout.str()
        assert "scenarios/configured.yaml::verbatim_user_messages" in listed and "mine/" not in listed


def test_a_folder_outside_the_working_folder_is_searched_too(pytester: pytest.Pytester, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "idle_gap.yaml").write_text(IDLE_GAP.read_text())
    listed = pytester.runpytest("--ctxeval", str(elsewhere), "--co", "-q", "-p", "no:cacheprovider").stdout.str()
    assert "idle_gap.yaml::verbatim_user_messages" in listed


# -- F26 and F8: a compaction of nothing is found by lint; a scenario that never ran is one error --

COMPACT_FIRST = 'name: compact_first\nturns:\n  - compact: true\n  - user: "hi"\n'
TEMPLATE_ERROR = 'name: undefined\nturns:\n  - user: "hello"\n  - assistant: "hi {{ undefined_var }}"\n'


def test_lint_reports_a_compact_step_with_nothing_before_it(tmp_path, capsys):
    p = tmp_path / "e2.yaml"
    p.write_text(COMPACT_FIRST)
    assert main(["lint", str(p)]) == 1
    out = capsys.readouterr().out
    assert f"{p}:3: turns[0].compact: nothing to compact yet (the conversation is empty)" in out
    fine = tmp_path / "fine.yaml"
    fine.write_text('name: fine\nturns:\n  - user: "hi"\n  - assistant: "hello"\n  - compact: true\n')
    assert main(["lint", str(fine)]) == 0


def test_run_counts_a_scenario_that_never_ran_as_one_failure_not_one_per_grader(tmp_path, capsys):
    for name, text in (("first.yaml", COMPACT_FIRST), ("undefined.yaml", TEMPLATE_ERROR)):
        (tmp_path / name).write_text(text)
    assert main(["run", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith(("compact_first ", "undefined "))]
    assert len(rows) == 2 and all(r[-4:-1] == ["0", "1", "0"] for r in rows), out
    assert "first.yaml:3: compact: nothing to compact yet" in out and "undefined.yaml:4:" in out


# -- F34: a prompt that drops the /compact instructions is told apart and reported ---------------


def _without_instructions(folder: Path) -> Path:
    import re

    text = re.sub(r"\{% if custom_instructions %\}.*?\{% endif %\}\n?", "", BUILTIN_COMPACT, flags=re.S)
    assert text != BUILTIN_COMPACT
    p = folder / "compact.j2"
    p.write_text(text, encoding="utf-8")
    return p


def test_a_prompt_that_drops_the_compact_instructions_has_its_own_fingerprint(tmp_path):
    from pytest_ctxeval.engine.prompt import PromptSet

    builtin, dropped = PromptSet(), PromptSet(_without_instructions(tmp_path))
    # The same text (but for a blank line) without instructions...
    assert builtin.render_compact().split() == dropped.render_compact().split()
    assert builtin.passes_instructions and not dropped.passes_instructions
    assert builtin.fingerprint != dropped.fingerprint  # ...but not the same prompt
    assert dropped.record("p")["instructions"] == "not passed" and "instructions" not in builtin.record("p")


def test_run_says_the_prompt_no_longer_passes_compact_instructions(tmp_path, capsys):
    p = _without_instructions(tmp_path)
    assert main(["run", str(IDLE_GAP), "--graders", "nine_sections", "--prompt", str(p)]) == 0
    out = capsys.readouterr().out
    assert "prompt-change coverage: 1 changed sentence against the built-in prompt" in out
    assert "NOT SEEN OFFLINE custom_instructions is not used: /compact instructions no longer reach the model" in out
    assert "advice: " in out
    assert main(["run", str(IDLE_GAP), "--graders", "nine_sections"]) == 0
    assert "prompt-change coverage" not in capsys.readouterr().out


def test_the_note_against_a_baseline_that_also_dropped_them_is_silent():
    from pytest_ctxeval.engine.prompt import PromptSet
    from pytest_ctxeval.reporting.prompt_coverage import coverage_note

    text = PromptSet().render_compact()
    dropped = {"instructions": "not passed"}
    assert coverage_note(text, {"prompt": {"text": text, **dropped}}, prompt=dropped) is None
    note = coverage_note(text, {"prompt": {"text": text}}, prompt=dropped)
    assert note is not None and [c["line"] for c in note["lines"]] == [0] and not note["lines"][0]["seen"]


# -- F4, F17, F19, F20: what folder mode shows, writes and counts --------------------------------


def _many_edits(path: Path, files: int) -> Path:
    """A session that edits ``files`` files and a summary that names only src/parse.py."""
    from session_kit import Session
    from test_grade_folder import GOOD

    s = Session()
    s.user("fix the parser in src/parse.py")
    for i in range(files):
        name = f"src/mod{i}.py" if i else "src/parse.py"
        s.assistant(text="Editing.", tools=[(f"toolu_{i}", "Edit", {"file_path": name, "old_string": "a",
                                                                     "new_string": "b"})])
        s.result(f"toolu_{i}", f"The file {name} has been updated.")
    s.user("now add tests")
    s.assistant(text="Working on it.")
    s.compact(GOOD.replace("{second}", "now add tests"))
    s.user("thanks")
    s.assistant(text="ok")
    path.parent.mkdir(parents=True, exist_ok=True)
    return s.write(path)


def test_folder_mode_says_how_many_reasons_it_did_not_show(tmp_path, capsys):
    _many_edits(tmp_path / "p" / "a.jsonl", files=6)
    _session(tmp_path / "p" / "b.jsonl", second="now add tests")
    assert main(["grade", str(tmp_path / "p"), "--graders", "files_preserved"]) == 1
    out = capsys.readouterr().out
    assert "src/mod3.py was changed" in out and "src/mod4.py was changed" not in out
    assert "      … and 2 more (-v lists them all; --json/--md/--html hold them)" in out
    assert main(["grade", str(tmp_path / "p"), "--graders", "files_preserved", "-v"]) == 1
    out = capsys.readouterr().out
    assert "src/mod5.py was changed" in out and "more (-v" not in out


def test_folder_reports_name_the_offline_judge_a_heuristic(tmp_path, capsys):
    _session(tmp_path / "p" / "a.jsonl", second="now add tests")
    _session(tmp_path / "p" / "b.jsonl", second="and docs")
    md, page = tmp_path / "g.md", tmp_path / "g.html"
    assert main(["grade", str(tmp_path / "p"), "--md", str(md), "--html", str(page)]) == 0
    said = "offline heuristic judge"
    assert f"judge: {said}" in capsys.readouterr().out
    assert said in md.read_text() and said in page.read_text()
    # No llm grader selected: no judge line.
    assert main(["grade", str(tmp_path / "p"), "--graders", "tool_pairing"]) == 0
    assert "judge:" not in capsys.readouterr().out


def test_folder_mode_leaves_subagent_transcripts_out_and_counts_them(tmp_path, capsys):
    project = tmp_path / "projects" / "-Users-me-app"
    _session(project / "abc.jsonl", second="now add tests")
    sub = project / "abc" / "subagents"
    _session(sub / "agent-acompact-f4.jsonl", second="x").write_text(
        "\n".join(line for line in (project / "abc.jsonl").read_text().splitlines()
                  if "compact_boundary" not in line and "isCompactSummary" not in line) + "\n")
    # A subagent that compacted on its own is a session to grade.
    _session(sub / "agent-a28.jsonl", second="and docs")
    assert main(["grade", str(tmp_path / "projects")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2 session files: 2 graded")
    assert "1 subagent transcript (subagents/agent-*.jsonl) not graded as sessions" in out
    assert "agent-acompact-f4" not in out
    # Named on its own, a subagent transcript is graded (it is skipped for having no compaction).
    assert main(["grade", str(sub / "agent-acompact-f4.jsonl"), str(project / "abc.jsonl")]) == 0
    assert "agent-acompact-f4.jsonl: no compaction" in capsys.readouterr().out


def test_folder_reports_get_the_permissions_of_every_other_report(tmp_path, capsys):
    import os
    import stat

    _session(tmp_path / "p" / "a.jsonl", second="now add tests")
    _session(tmp_path / "p" / "b.jsonl", second="and docs")
    old = os.umask(0o022)
    try:
        outs = [tmp_path / "o" / name for name in ("g.json", "g.md", "g.html")]
        assert main(["grade", str(tmp_path / "p"), "--json", str(outs[0]), "--md", str(outs[1]),
                     "--html", str(outs[2])]) == 0
    finally:
        os.umask(old)
    assert [oct(stat.S_IMODE(p.stat().st_mode)) for p in outs] == ["0o644"] * 3


# -- F18: report and diff say what a folder report is; F25: the built-in library is never silent --


def test_report_and_diff_name_a_folder_report_and_what_they_take(tmp_path, capsys):
    from pytest_ctxeval.grading.folders import DOC_FORMAT

    _session(tmp_path / "p" / "a.jsonl", second="now add tests")
    _session(tmp_path / "p" / "b.jsonl", second="and docs")
    g = tmp_path / "g.json"
    assert main(["grade", str(tmp_path / "p"), "--json", str(g)]) == 0
    capsys.readouterr()
    for argv in (["diff", str(g), str(g)], ["report", str(g), "-o", str(tmp_path / "r.html")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"{g}: a report of ctxeval grade on folders (format {DOC_FORMAT!r}), not the results of a run" in err
        assert "ctxeval grade FOLDER --md OUT.md --html OUT.html" in err


def test_cli_says_when_it_falls_back_to_the_built_in_library(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["lint"]) == 0
    err = capsys.readouterr().err
    assert "ctxeval: no ./scenarios folder here: using the built-in library (" in err
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "idle_gap.yaml").write_text(IDLE_GAP.read_text())
    assert main(["lint"]) == 0
    assert "built-in library" not in capsys.readouterr().err


def test_pytest_says_when_it_ran_the_built_in_library(pytester: pytest.Pytester):
    result = pytester.runpytest("--ctxeval", "-k", "idle_gap and nine_sections", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["ctxeval: no scenarios/ folder in * and no ctxeval_scenarios set: ran the built-in "
                                 "library (*); add scenarios/ or set ctxeval_scenarios to run your own"])
    (pytester.path / "scenarios").mkdir()
    (pytester.path / "scenarios" / "idle_gap.yaml").write_text(IDLE_GAP.read_text())
    result = pytester.runpytest("--ctxeval", "-k", "idle_gap and nine_sections", "-p", "no:cacheprovider")
    assert "built-in library" not in result.stdout.str() and result.ret == 0


# -- F32: -rs names the grader of each n/a and ungraded verdict --------------------------------


def test_skip_lines_name_the_grader(pytester: pytest.Pytester):
    (pytester.path / "scenarios").mkdir()
    (pytester.path / "scenarios" / "idle_gap.yaml").write_text(IDLE_GAP.read_text())
    result = pytester.runpytest("--ctxeval", "-rs", "-k", "failed_approaches_preserved", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["SKIPPED [[]1[]] scenarios/idle_gap.yaml:1: failed_approaches_preserved: n/a: "
                                 "expect.failed_approaches is empty"])


# -- F21: the docs' example grader is n/a where the session never set its rule -----------------

EXAMPLE = ROOT / "examples" / "own-project"


def test_the_example_grader_passes_fails_and_is_na_where_the_rule_was_never_set(tmp_path, capsys):
    import json

    def verdict(scenario: Path, *prompt: str) -> dict:
        out = tmp_path / "r.json"
        main(["run", str(scenario), "--graders-dir", str(EXAMPLE / "graders"), "--graders", "cdn_rule_kept",
              "--json", str(out), *prompt])
        return json.loads(out.read_text())["scenarios"][0]["graders"]["cdn_rule_kept"]

    kept = verdict(EXAMPLE / "scenarios" / "cache_ttl.yaml")
    assert kept["status"] == "pass" and "the cdn/ rule survived" in kept["reasons"][0]
    lost = verdict(EXAMPLE / "scenarios" / "cache_ttl.yaml", "--prompt", str(ROOT / "tests" / "fixtures" / "weak_prompt.j2"))
    assert lost["status"] == "fail" and "no longer says to keep out of cdn/" in lost["reasons"][0]
    never = verdict(IDLE_GAP)  # a scenario that never mentions cdn/
    assert never["status"] == "n/a" and "never set the cdn/ rule" in never["reasons"][0]


# -- F28: the small points --------------------------------------------------------------------


def test_grade_expect_lists_every_schema_error_with_its_line(tmp_path, capsys):
    session = _session(tmp_path / "s.jsonl", second="now add tests")
    expect = tmp_path / "e.yaml"
    expect.write_text("probes:\n  - {question: q}\nfiles: 3\nintnt: x\n")
    assert main(["grade", str(session), "--expect", str(expect)]) == 2
    err = capsys.readouterr().err
    assert "more)" not in err
    for said in (f"{expect}:2: probes[0].kind: required field is missing", f"{expect}:3: files:",
                 f"{expect}:4: intnt: unknown field (did you mean 'intent'?"):
        assert said in err


def test_an_unknown_option_gets_the_usage_of_its_verb(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["grade", "--bogus", "x.jsonl"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: ctxeval grade ") and "ctxeval grade: error: unrecognized arguments: --bogus" in err
    with pytest.raises(SystemExit):
        main(["prompt", "show", "--bogus"])
    assert "ctxeval prompt show: error: unrecognized arguments: --bogus" in capsys.readouterr().err


def test_an_empty_session_file_is_called_empty(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    assert main(["grade", str(empty)]) == 2
    assert f"{empty}: the file is empty (no records at all)" in capsys.readouterr().err


# -- F8: pytest reports a scenario that never ran once, not once per grader ---------------------


def test_pytest_fails_a_scenario_that_never_ran_once(pytester: pytest.Pytester):
    import json

    (pytester.path / "scenarios").mkdir()
    (pytester.path / "scenarios" / "undefined.yaml").write_text(TEMPLATE_ERROR)
    (pytester.path / "scenarios" / "idle_gap.yaml").write_text(IDLE_GAP.read_text())
    for extra in ((), ("-n", "1")):  # serial, and through an xdist worker (the controller reports it)
        result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "-rs", "--ctxeval-report", "r.json", *extra)
        outcomes = result.parseoutcomes()
        assert outcomes["failed"] == 1, result.stdout.str()
        out = result.stdout.str()
        assert "undefined.yaml could not run, so no grader could grade it" in out
        assert "undefined.yaml:4: turns[1].assistant: template error: 'undefined_var' is undefined" in out
        assert "probes: not run: the scenario could not run; its error is reported by undefined.yaml::" in out
        # The results count it once, as the scenario's error (tests/test_not_run_results.py).
        doc = json.loads((pytester.path / "r.json").read_text())
        broken = next(s for s in doc["scenarios"] if s["name"] == "undefined")
        assert broken["graders"] == {} and "undefined_var" in broken["error"] and "probes" in broken["not_run"]


def test_a_graders_dir_without_a_grader_module_is_said(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["run", str(IDLE_GAP), "--graders", "nine_sections", "--graders-dir", str(tmp_path / "empty")]) == 0
    assert f"--graders-dir {tmp_path / 'empty'} holds no grader module" in capsys.readouterr().err
    assert main(["run", str(IDLE_GAP), "--graders", "cdn_rule_kept", "--graders-dir", str(EXAMPLE / "graders")]) == 0
    assert "holds no grader module" not in capsys.readouterr().err


def test_a_price_table_that_is_not_utf8_or_a_folder_is_named(tmp_path, capsys):
    prices = tmp_path / "prices.yaml"
    prices.write_bytes("claude-x:\n  input: 3  # \xe9\n  output: 15\n".encode("latin-1"))
    assert main(["run", str(IDLE_GAP), "--graders", "nine_sections", "--prices", str(prices)]) == 2
    assert f"price table {prices}:2: not UTF-8 (invalid continuation byte at byte " in capsys.readouterr().err
    assert main(["run", str(IDLE_GAP), "--graders", "nine_sections", "--prices", str(tmp_path)]) == 2
    assert f"price table {tmp_path}: is a folder" in capsys.readouterr().err


def test_folder_mode_names_the_graders_that_never_applied(tmp_path, capsys):
    _session(tmp_path / "p" / "a.jsonl", second="now add tests")
    _session(tmp_path / "p" / "b.jsonl", second="and docs")
    assert main(["grade", str(tmp_path / "p"), "--graders", "probes,nine_sections"]) == 0
    out = capsys.readouterr().out
    assert "  n/a on every compaction: probes (most need an expect: file" in out
    assert main(["grade", str(tmp_path / "p"), "--graders", "nine_sections"]) == 0
    assert "n/a on every compaction" not in capsys.readouterr().out
