"""What a new user of ``ctxeval`` and ``pytest --ctxeval`` meets: no option ignored without a word,
no input line dropped without a word, one clear usage error instead of a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main

from test_grade_folder import _session

ROOT = Path(__file__).resolve().parents[1]
TINY = (ROOT / "scenarios" / "debug_failing_test.yaml").read_text()


def _broken_line(path: Path, line: int) -> Path:
    lines = path.read_text().splitlines()
    lines[line - 1] = "{broken"
    path.write_text("\n".join(lines) + "\n")
    return path


# -- B1: an output option is written or refused, in every mode of grade ----------------------------


def test_one_file_with_html_and_md_writes_the_report_of_that_session(tmp_path, capsys):
    one = _session(tmp_path / "p" / "one.jsonl", second="now add tests")
    code = main(["grade", str(one), "--graders", "tool_pairing", "--html", str(tmp_path / "r.html"),
                 "--md", str(tmp_path / "r.md")])
    printed = capsys.readouterr().out
    assert code == 0
    # the per-session report `ctxeval report` renders (review 5, #9), not the folder tables
    assert "tool_pairing" in (tmp_path / "r.html").read_text()
    md = (tmp_path / "r.md").read_text()
    assert md.startswith("### ctxeval: passed") and "## By grader" not in md
    assert f"report written to {tmp_path / 'r.html'}" in printed and f"report written to {tmp_path / 'r.md'}" in printed


def test_html_with_summary_is_the_report_of_that_graded_text(tmp_path, capsys):
    one = _session(tmp_path / "one.jsonl", second="now add tests")
    summary = tmp_path / "s.md"
    summary.write_text("1. Primary Request and Intent:\n   fix the parser in src/parse.py\n", encoding="utf-8")
    main(["grade", str(one), "--graders", "tool_pairing", "--html", str(tmp_path / "r.html"), "--summary",
          str(summary)])
    assert "tool_pairing" in (tmp_path / "r.html").read_text()


def test_folder_only_errors_say_what_was_given(tmp_path, capsys):
    _session(tmp_path / "p" / "a.jsonl", second="x")
    assert main(["grade", str(tmp_path / "p"), "--summary", "s.md"]) == 2
    assert "give a single .jsonl file (a folder was given)" in capsys.readouterr().err
    assert main(["grade", str(tmp_path / "p"), str(tmp_path / "p"), "--expect", "e.yaml"]) == 2
    assert "(2 paths were given)" in capsys.readouterr().err


# -- B2: a line the reader skipped is reported in folder mode as in one-file mode -----------------


def test_folder_mode_reports_a_broken_line_with_its_file_and_line(tmp_path, capsys):
    bad = _broken_line(_session(tmp_path / "tr" / "g.jsonl", second="now add tests"), 3)
    assert main(["grade", str(bad), "--graders", "tool_pairing"]) in (0, 1)
    one_file = capsys.readouterr().out
    assert "line 3: not valid JSON" in one_file
    out = tmp_path / "out"
    main(["grade", str(tmp_path / "tr"), "--graders", "tool_pairing", "--json", str(out / "r.json"),
          "--md", str(out / "r.md"), "--html", str(out / "r.html")])
    printed = capsys.readouterr().out
    assert "lines skipped or moved (listed below)" in printed.splitlines()[0]
    assert "Lines skipped or moved by the reader" in printed
    assert f"{bad}:3: not valid JSON" in printed
    doc = json.loads((out / "r.json").read_text())
    assert doc["summary"]["problems"] >= 1
    assert {"path": str(bad), "line": 3} == {k: doc["problems"][0][k] for k in ("path", "line")}
    assert "g.jsonl:3`" in (out / "r.md").read_text() and f"{bad}:3</code>" in (out / "r.html").read_text()


def test_a_clean_folder_says_nothing_about_lines_and_counts_in_good_english(tmp_path, capsys):
    _session(tmp_path / "p" / "a.jsonl", second="x")
    main(["grade", str(tmp_path / "p"), "--graders", "tool_pairing", "--workers", "1"])
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("1 session file: 1 graded (1 compaction), 0 skipped, 0 unreadable; "
                            "0 inherited compactions not graded; ")
    assert "skipped or moved" not in first and "on 1 worker" in first


# -- C1 / B8: old and new spellings; deprecations under -W error ------------------------------------


def test_ctxeval_refuses_the_old_and_the_new_spelling_together(capsys):
    code = main(["run", str(ROOT / "scenarios" / "debug_failing_test.yaml"), "--strategy", "codex",
                 "--compactor", "gemini_cli"])
    assert code == 2
    assert ("--strategy and --compactor are the same option (the old and the new spelling): give only --compactor"
            in capsys.readouterr().err)


def test_pytest_refuses_the_old_and_the_new_spelling_together(pytester: pytest.Pytester):
    pytester.makefile(".yaml", **{"scenarios/debug": TINY})
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "--ctxeval-strategy", "codex",
                                "--ctxeval-compactor", "gemini_cli")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --ctxeval-strategy and --ctxeval-compactor are the same option*"])


def test_a_deprecation_made_an_error_is_a_usage_error_not_an_internal_error(pytester: pytest.Pytester):
    pytester.makefile(".yaml", **{"scenarios/debug": TINY})
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "-W", "error::DeprecationWarning",
                                "--ctxeval-strategy", "codex")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "INTERNALERROR" not in text and "Traceback" not in text
    result.stderr.fnmatch_lines(["ERROR: <command line>: --ctxeval-strategy is deprecated: use --ctxeval-compactor*"
                                 "a warning filter made this deprecation an error*"])


def test_deprecations_are_located_at_the_command_line_and_the_ini_line(pytester: pytest.Pytester):
    pytester.makefile(".yaml", **{"scenarios/debug": TINY})
    pytester.makeini("[pytest]\n# a comment\nctxeval_strategy = codex\n")
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "-k", "tool_pairing",
                                "--ctxeval-compare-strategies", "observation_masking")
    text = result.stdout.str()
    assert "<command line>:1: CtxEvalDeprecationWarning: --ctxeval-compare-strategies is deprecated" in text
    assert "tox.ini:3: CtxEvalDeprecationWarning: the ini key ctxeval_strategy is deprecated" in text
    assert "plugin.py" not in text


def test_an_old_keyword_in_a_grader_file_is_in_the_warnings_summary(pytester: pytest.Pytester):
    pytester.makefile(".yaml", **{"scenarios/debug": TINY})
    pytester.mkdir("g")
    (pytester.path / "g" / "mine.py").write_text(
        "from pytest_ctxeval import Verdict, grader\n\n\n"
        "@grader('claude_only', strategies=('claude_code',))\n"
        "def claude_only(case):\n"
        "    return Verdict.passed_('ok')\n", encoding="utf-8")
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "-k", "tool_pairing", "--ctxeval-graders", "g")
    out = result.stdout.str()
    summary = out[out.index("warnings summary"):]
    assert "g/mine.py:4: CtxEvalDeprecationWarning: grader(strategies=...) is deprecated" in summary
    assert "deprecated" not in out[:out.index("warnings summary")] and "deprecated" not in result.stderr.str()


def test_a_report_asked_for_without_ctxeval_is_a_warning_not_silence(pytester: pytest.Pytester):
    pytester.makepyfile(test_unit="def test_one():\n    assert True\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--ctxeval-report", "r.html",
                                "--ctxeval-save-baseline", "b.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*PytestConfigWarning: --ctxeval-report, --ctxeval-save-baseline have no effect "
                                 "without --ctxeval*add --ctxeval"])
    assert not (pytester.path / "r.html").exists()


# -- B3: ctxeval runs the project's graders and scenarios, as pytest --ctxeval does -------------------


@pytest.fixture
def own_project(tmp_path, monkeypatch):
    import shutil

    project = tmp_path / "own-project"
    shutil.copytree(ROOT / "examples" / "own-project", project)
    monkeypatch.chdir(project)
    return project


def test_run_finds_the_graders_and_scenarios_the_project_configures(own_project, capsys):
    assert main(["run", "--graders", "cdn_rule_kept", "--json", "r.json"]) == 0
    captured = capsys.readouterr()
    assert "ctxeval: graders from pyproject.toml (ctxeval_graders): graders" in captured.err
    assert "ctxeval: scenarios from pyproject.toml (ctxeval_scenarios): scenarios" in captured.err
    doc = json.loads((own_project / "r.json").read_text())
    assert [s["name"] for s in doc["scenarios"]] == ["cache_ttl"]
    assert "cdn_rule_kept" in json.dumps(doc["scenarios"][0])
    assert main(["graders"]) == 0 and "cdn_rule_kept (rule)" in capsys.readouterr().out


def test_the_command_line_wins_over_the_project_file(own_project, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["run", "--graders", "cdn_rule_kept", "--graders-dir", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert "unknown grader 'cdn_rule_kept'" in err and "ctxeval --graders-dir DIR" in err
    assert "graders from" not in err


@pytest.mark.parametrize("name, text", [
    ("pytest.ini", "[pytest]\nctxeval_graders = mine\n"),
    ("tox.ini", "[tox]\n[pytest]\nctxeval_graders = mine\n"),
    ("setup.cfg", "[metadata]\nname = x\n[tool:pytest]\nctxeval_graders = mine\n"),
    ("pyproject.toml", "[tool.pytest.ini_options]\nctxeval_graders = ['mine']\n"),
    # read as pytest reads them (its own loader is the oracle): comments, quotes, %, native TOML
    ("pytest.ini", "[pytest]\nctxeval_graders = mine  # a comment\n    more\n"),
    ("tox.ini", "[tox]\nenvlist = py311\n[pytest]\nctxeval_graders = 'with space' plain\n"),
    ("setup.cfg", "[metadata]\nname = x\n[tool:pytest]\naddopts = -p 100%\nctxeval_graders = mine\n"),
    ("pyproject.toml", "[tool.pytest]\nctxeval_graders = ['a', 'b c']\n"),
    ("pyproject.toml", "[tool.pytest.ini_options]\nctxeval_graders = 'mine'\n"),
    ("pytest.toml", "[pytest]\nctxeval_graders = ['mine']\n"),
])
def test_the_project_file_is_found_and_read_as_pytest_does(tmp_path, name, text):
    from pytest_ctxeval.cli.project import find_project_config

    (tmp_path / name).write_text(text)
    (tmp_path / "sub").mkdir()
    config = find_project_config(tmp_path / "sub")
    assert config.path == tmp_path / name and config.values == _pytest_loads(tmp_path / name)
    if "ctxeval_graders = mine\n" in text or "['mine']" in text or "'mine'\n" in text:
        assert config.paths("ctxeval_graders") == [tmp_path / "mine"]


def test_a_pyproject_without_pytest_settings_is_passed_over(tmp_path):
    from pytest_ctxeval.cli.project import find_project_config

    (tmp_path / "tox.ini").write_text("[pytest]\nctxeval_scenarios = s1 s2\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    config = find_project_config(tmp_path / "sub")
    assert config.path == tmp_path / "tox.ini"
    assert config.paths("ctxeval_scenarios") == [tmp_path / "s1", tmp_path / "s2"]



# A configuration file pytest refuses is refused by ctxeval too (naming the file and the line), not
# passed over for another file further up: pytest --ctxeval would stop, ctxeval would have run other
# graders. pytest's own loader is the oracle of what is refused and of what a good file holds.
_REFUSED = [
    ("pyproject.toml", "[tool.pytest.ini_options]\nctxeval_graders = ['mine'\n", "pyproject.toml: not valid TOML"),
    ("pyproject.toml", "[tool.pytest]\nctxeval_graders = ['a']\n[tool.pytest.ini_options]\nx = '1'\n",
     "keep one of them"),
    ("tox.ini", "[pytest]\nctxeval_graders = a\nctxeval_graders = b\n", "tox.ini:3: duplicate name 'ctxeval_graders'"),
    ("pytest.ini", "[pytest]\nctxeval_graders\n", "pytest.ini:2: unexpected line"),
    ("setup.cfg", "[pytest]\nctxeval_graders = mine\n", "rename the section to [tool:pytest]"),
]


def _pytest_loads(path: Path):
    from _pytest.config.findpaths import load_config_dict_from_file

    values = load_config_dict_from_file(path)
    return None if values is None else {k: v.value for k, v in values.items()}


@pytest.mark.parametrize("name, text, said", _REFUSED, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(_REFUSED)])
def test_a_configuration_pytest_refuses_is_an_error_naming_the_file(tmp_path, monkeypatch, capsys, name, text, said):
    (tmp_path / "tox.ini").write_text("[pytest]\nctxeval_graders = elsewhere\n")  # must not be used instead
    project = tmp_path / "project"
    project.mkdir()
    (project / name).write_text(text)
    with pytest.raises((pytest.UsageError, pytest.fail.Exception)):  # Failed: [pytest] in setup.cfg
        _pytest_loads(project / name)
    monkeypatch.chdir(project)
    assert main(["graders"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ctxeval: error: ") and said in err and "Traceback" not in err
    assert "elsewhere" not in err


def test_a_path_list_with_an_open_quote_is_an_error_naming_the_key(tmp_path, monkeypatch, capsys):
    (tmp_path / "pytest.ini").write_text("[pytest]\nctxeval_graders = 'mine\n")
    monkeypatch.chdir(tmp_path)
    assert main(["graders"]) == 2
    err = capsys.readouterr().err
    assert "pytest.ini: ctxeval_graders = \"'mine\": No closing quotation" in err and "Traceback" not in err


# -- C3: what the one-file table counts -------------------------------------------------------------


def test_the_one_file_table_says_transcript_and_what_its_counts_are(tmp_path, capsys):
    from session_kit import Session
    from test_grade_folder import GOOD

    s = Session()
    for second in ("add tests please", "now the docs please"):
        s.user("fix the parser in src/parse.py")
        s.user(second)
        s.assistant(text="ok")
        s.compact(GOOD.replace("{second}", "something else"))
    path = s.write(tmp_path / "two.jsonl")
    assert main(["grade", str(path), "--graders", "verbatim_user_messages,tool_pairing"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["transcript", "compactions"]
    # graders: 1 ok, 1 failed; the tiers its file shows: two manual compactions (tests/test_transcript_tiers.py)
    assert lines[1].split()[1] == "2" and lines[1].split()[-5:] == ["1", "1", "0", "compact", "2"]
    assert lines[2] == ("(passed/failed/other count graders: one that fails on any compaction counts once; "
                        "2 failed verdicts over all compactions are listed below)")
    assert lines[3].startswith("(tiers of a transcript: what the file shows")
    assert sum(line.strip().startswith("FAIL") for line in lines) == 2


# -- C7: error messages name the line, the key, the way out ------------------------------------------


@pytest.mark.parametrize("text, line, typo, near", [
    ("intent: fix it\nfiles: [a.py]\nintnet: typo\n", 3, "intnet", "intent"),
    ("expect:\n  files: [a.py]\n  pendng: [x]\n", 3, "pendng", "pending"),
])
def test_grade_expect_typo_has_a_line_and_a_did_you_mean(tmp_path, capsys, text, line, typo, near):
    one = _session(tmp_path / "one.jsonl", second="now add tests")
    (tmp_path / "ex.yaml").write_text(text)
    assert main(["grade", str(one), "--expect", str(tmp_path / "ex.yaml")]) == 2
    err = capsys.readouterr().err
    assert f"ex.yaml:{line}: {typo}: unknown field (did you mean '{near}'?" in err
    assert "allowed: intent, files, errors, pending" in err


def test_grade_names_a_missing_path_and_an_empty_folder_differently(tmp_path, capsys):
    assert main(["grade", str(tmp_path / "projects")]) == 2
    assert "projects: no such file or folder" in capsys.readouterr().err
    (tmp_path / "projects").mkdir()
    assert main(["grade", str(tmp_path / "projects")]) == 2
    assert "projects: no .jsonl session file in this folder or below" in capsys.readouterr().err


def test_ctxeval_errors_spell_its_own_option_first(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--backend", "anthropic"]) == 2
    assert "use --backend offline (pytest: --ctxeval-backend offline)" in capsys.readouterr().err
    from pytest_ctxeval.errors import flag

    assert flag("backend offline").startswith("--ctxeval-backend")  # restored for pytest afterwards


@pytest.mark.parametrize("ini, option", [("ctxeval_backend = bogus", "--ctxeval-backend"),
                                         ("ctxeval_graders = nope", "--ctxeval-graders")])
def test_an_ini_error_names_the_ini_key(pytester: pytest.Pytester, ini, option):
    pytester.makefile(".yaml", **{"scenarios/debug": TINY})
    pytester.makeini(f"[pytest]\n{ini}\n")
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    key = ini.split(" =")[0]
    result.stderr.fnmatch_lines([f"ERROR: *(set by the ini key {key} in tox.ini: fix it there, or override it with "
                                 f"{option})"])


def test_the_ini_help_lists_every_backend(pytester: pytest.Pytester):
    from pytest_ctxeval.llm import BACKENDS

    text = " ".join(pytester.runpytest("--help").stdout.str().split())
    help_text = text[text.index("ctxeval_backend (string):"):][:200]
    assert all(b in help_text for b in BACKENDS), help_text


# -- C5 / C6: pytest's load error points to lint; an empty scenarios folder says so -------------------


def test_pytest_load_error_with_several_problems_points_to_ctxeval_lint(pytester: pytest.Pytester):
    pytester.makefile(".yaml", **{"scenarios/two": "name: two\nturns:\n  - user: hi\n    colour: red\nsmell: x\n"})
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider")
    out = result.stdout.str()
    assert "(+1 more: `ctxeval lint " in out and "two.yaml` lists them all)" in out


def test_an_empty_scenarios_folder_is_said_under_pytest_and_in_run(pytester: pytest.Pytester, capsys, monkeypatch):
    pytester.mkdir("scenarios")
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(["ctxeval: no scenario files (*.yaml, *.yml) under *scenarios: write one*"])
    monkeypatch.chdir(pytester.path)
    assert main(["run", "scenarios"]) == 2
    assert "no scenario files (*.yaml, *.yml) under scenarios" in capsys.readouterr().err


def test_scenarios_say_nothing_about_an_empty_folder(pytester: pytest.Pytester):
    pytester.makefile(".yml", **{"scenarios/debug": TINY})
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "-k", "tool_pairing")
    result.assert_outcomes(passed=1, deselected=20)
    assert "no scenario files" not in result.stdout.str()


def test_lint_reports_an_error_inside_a_misspelt_key(tmp_path, capsys):
    path = tmp_path / "n.yaml"
    path.write_text("name: n\nturns:\n  - user: hi\n  - assistant: ok\n    tols:\n"
                    "      - {name: Read, input: {file_path: a.py}, reslt: \"x\"}\n")
    assert main(["lint", str(path)]) == 1
    out = capsys.readouterr().out
    assert "n.yaml:5: turns[1].tols: unknown field (did you mean 'tools'?" in out
    assert ("n.yaml:6: turns[1].tols[0].reslt: unknown field (did you mean 'result'?" in out
            and "(inside 'tols', read as 'tools')" in out)
    assert "2 problems in 1 of 1 scenario file" in out


def test_grade_help_does_not_offer_a_summariser(capsys):
    with pytest.raises(SystemExit):
        main(["grade", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "summariser model" not in text
    assert "--model NAME this verb writes no summary: the judge's model when --judge-model is not given" in text


def test_plan_explains_a_count_that_drops_with_no_tier(capsys):
    assert main(["plan", str(ROOT / "examples" / "own-project" / "scenarios" / "cache_ttl.yaml")]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in lines if line[:7].strip().isdigit()]
    tokens = [int(r[1].replace(",", "")) for r in rows]
    drops = [i for i in range(1, len(rows)) if tokens[i] < tokens[i - 1] and rows[i][4] == "ok"]
    assert drops, "the example should show the re-anchoring drop"
    for i in drops:
        assert "re-anchored on the reply's real usage" in " ".join(rows[i])
    assert any("4/3 margin (seed 003:353)" in line for line in lines)


# -- C2: names and folders of graders are told apart -------------------------------------------------


def test_a_folder_given_to_graders_and_names_given_to_graders_dir_are_explained(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine").mkdir()
    with pytest.raises(SystemExit):
        main(["run", "--graders", "mine/"])
    assert "mine/ is a folder: --graders takes grader names (a,b); load a folder of your own graders with " \
           "--graders-dir" in capsys.readouterr().err
    assert main(["run", "--graders-dir", "tool_pairing"]) == 2
    assert "to run only some graders by name: ctxeval --graders a,b, pytest -k NAME" in capsys.readouterr().err


# -- C8: the offline judge names missing terms as terms ------------------------------------------------


def test_the_offline_judge_names_missing_terms_as_terms():
    """A drift reason read "lost: 32; byte; every; ids": bare words that read as lost facts."""
    import json as _json

    from pytest_ctxeval.llm.reference import judge_reply

    prompt = ("[BEGIN DATA] original intent\nCap every upload at 32 byte ids\n[END DATA]\n"
              "[BEGIN DATA] generation 2\nWe refactored the parser.\n[END DATA]\n")
    lost = _json.loads(judge_reply(prompt))["lost"]
    assert len(lost) == 1 and lost[0].startswith("terms of the original intent not in this generation: ")
    assert "'32'" in lost[0] and "'byte'" in lost[0]
    covered = ("[BEGIN DATA] original intent\nCap uploads\n[END DATA]\n"
               "[BEGIN DATA] generation 2\nCap uploads\n[END DATA]\n")
    assert _json.loads(judge_reply(covered))["lost"] == []


def test_a_tolerance_without_a_baseline_is_said(pytester: pytest.Pytester, tmp_path, capsys):
    pytester.makefile(".yaml", **{"scenarios/debug": TINY})
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "-k", "tool_pairing", "--ctxeval-tolerance", "0.1")
    result.assert_outcomes(passed=1, deselected=20)
    result.stdout.fnmatch_lines(["*--ctxeval-tolerance has no effect without --ctxeval-baseline*"])
    assert "no effect without --ctxeval " not in result.stdout.str()  # --ctxeval was given
    assert main(["report", str(tmp_path / "r.json"), "-o", str(tmp_path / "r.html"), "--tolerance", "0.1"]) == 2
    assert "--tolerance applies to the comparison with --baseline" in capsys.readouterr().err


def test_a_mistyped_option_is_refused_with_the_option_it_is_a_slip_of(capsys) -> None:
    # --workres (swapped letters), --jsn (a letter dropped), --summry=FILE (the = form): the verb's own
    # option is named; an option nothing is near gets the plain refusal
    with pytest.raises(SystemExit) as stop:
        main(["grade", "x.jsonl", "--workres", "2", "--jsn", "r.json", "--summry=s.txt"])
    assert stop.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last == ("ctxeval grade: error: unrecognized arguments: --workres 2 --jsn r.json --summry=s.txt; did "
                    "you mean --workers for --workres, --json for --jsn, --summary for --summry? (ctxeval grade --help lists "
                    "them)")
    with pytest.raises(SystemExit):
        main(["lint", "scenarios", "--frobnicate"])
    assert capsys.readouterr().err.strip().splitlines()[-1] == "ctxeval lint: error: unrecognized arguments: --frobnicate"
