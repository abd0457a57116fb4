"""The ``ctxeval`` command line: run, grade, exit codes, JSON results, help."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.results import RESULTS_FORMAT, RESULTS_VERSION

from scenario_texts import rename_reads
from session_kit import Session
from shared_paths import CORPUS_DIR as CORPUS, needs_shared
FASTHOOKS = CORPUS / "oneryalcin__fasthooks__sample_main_transcript.jsonl"
REPO = Path(__file__).resolve().parents[1]

TINY = rename_reads("tiny") + '  - assistant: "Renamed; the callers already use the new name."\n'


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "scenarios" / "tiny.yaml"
    path.parent.mkdir()
    path.write_text(TINY)
    return path


def test_run_writes_versioned_json(tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.json"
    code = main(["run", str(tiny.parent), "--json", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "tiny" in printed and "results written to" in printed
    doc = json.loads(out.read_text())
    assert (doc["format"], doc["version"]) == (RESULTS_FORMAT, RESULTS_VERSION)
    assert doc["backend"] == "offline"
    [scenario] = doc["scenarios"]
    assert scenario["name"] == "tiny" and scenario["kind"] == "scenario" and scenario["error"] is None
    [compaction] = scenario["compactions"]
    assert compaction["trigger"] == "auto" and compaction["pre_tokens"] > compaction["post_tokens"] > 0
    assert "6. All user messages:" in compaction["summary"]
    statuses = {v["grader"]: v["status"] for v in compaction["verdicts"]}
    assert statuses["verbatim_user_messages"] == "pass" and statuses["errors_preserved"] == "n/a"
    assert set(doc["usage"]) >= {"api_calls", "input_tokens", "output_tokens", "usd", "by_model"}
    # one summariser call, then the judge: intent (1), probes (none declared), drift (2 re-compactions + 3)
    assert doc["usage"]["api_calls"] > 1 and doc["usage"]["usd"] == 0.0
    assert doc["judge"].startswith("offline heuristic judge")
    llm = {v["grader"]: v for v in compaction["verdicts"] if v["kind"] == "llm"}
    assert set(llm) == {"intent_preservation", "probes", "drift"}
    assert llm["probes"]["status"] == "n/a" and llm["drift"]["generations"]


def test_run_is_deterministic(tiny: Path, tmp_path: Path) -> None:
    docs = []
    for n in range(2):
        out = tmp_path / f"r{n}.json"
        main(["run", str(tiny), "--json", str(out), "--session-dir", str(tmp_path / "s")])
        docs.append(json.loads(out.read_text()))
    assert docs[0] == docs[1]


def test_context_window_override_changes_when_compaction_happens(tiny: Path, tmp_path: Path) -> None:
    small, large = tmp_path / "small.json", tmp_path / "large.json"
    main(["run", str(tiny), "--json", str(small)])
    main(["run", str(tiny), "--context-window", "200000", "--json", str(large)])
    assert len(json.loads(small.read_text())["scenarios"][0]["compactions"]) == 1
    large_doc = json.loads(large.read_text())["scenarios"][0]
    assert large_doc["compactions"] == [] and large_doc["context_window"] == 200000
    # --compact-at-end makes the end state gradable even when nothing triggered
    end = tmp_path / "end.json"
    main(["run", str(tiny), "--context-window", "200000", "--compact-at-end", "--json", str(end)])
    [comp] = json.loads(end.read_text())["scenarios"][0]["compactions"]
    assert comp["trigger"] == "manual"


def test_run_exit_1_when_a_grader_fails(tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompt = tmp_path / "weak.j2"
    prompt.write_text("Summarise in <summary> tags: 1. Primary Request and Intent:\n2. Optional Next Step:\n")
    code = main(["run", str(tiny), "--prompt", str(prompt)])
    assert code == 1
    out = capsys.readouterr().out
    assert "FAIL      verbatim_user_messages" in out
    assert "section 6 'All user messages' is missing" in out


def test_run_exit_2_on_bad_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("turns:\n  - user: hi\n  - after: soon\n")
    assert main(["run", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.yaml:3: turns[1].after" in err and "'75m'" in err


def test_run_selects_graders(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    main(["run", str(tiny), "--graders", "nine_sections,tool_pairing", "--json", str(out)])
    verdicts = json.loads(out.read_text())["scenarios"][0]["compactions"][0]["verdicts"]
    assert [v["grader"] for v in verdicts] == ["nine_sections", "tool_pairing"]


def test_unknown_grader_is_a_usage_error(tiny: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tiny), "--graders", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown grader 'nope'" in err and "verbatim_user_messages" in err


@needs_shared
def test_grade_real_transcript(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "g.json"
    code = main(["grade", str(FASTHOOKS), "--json", str(out), "-v"])
    printed = capsys.readouterr().out
    # Claude Code 2.0.76 keeps the analysis part and writes no transcript path by design: both graders
    # say n/a and name the version (pytest_ctxeval.grading.versions); nothing in this summary fails.
    assert code == 0, printed
    assert "N/A       analysis_stripped" in printed and "2.0.76" in printed
    assert "PASS      verbatim_user_messages" in printed
    doc = json.loads(out.read_text())
    [entry] = doc["scenarios"]
    assert entry["kind"] == "transcript"
    [comp] = entry["compactions"]
    assert comp["line"] == 60 and comp["trigger"] == "manual" and comp["pre_tokens"] == 21558


@needs_shared
def test_grade_with_summary_and_expect(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("1. Primary Request and Intent:\n   tests\n6. All user messages:\n   - \"can you run a command ls -la\"\n")
    expect = tmp_path / "expect.yaml"
    expect.write_text("files: [/workspace/hello_world.py]\n")
    code = main(["grade", str(FASTHOOKS), "--summary", str(summary), "--expect", str(expect),
                 "--graders", "verbatim_user_messages,files_preserved"])
    out = capsys.readouterr().out
    assert code == 1
    assert "user message 2 of 5 is not verbatim" in out
    # a summary with 2 of the nine sections is read whole (reading/summary_form.py): the file is not in it
    assert "is not named anywhere in the summary (read whole: it has no section 3 'Files and Code Sections'" in out
    # the sizes are the conversation's and the summary's, not 0 → 0 (found in review)
    assert re.search(r"compaction 1 \(manual\): [1-9][\d,]* → [1-9]\d* tokens", out), out


def test_grade_with_summary_on_a_session_with_blocks_we_do_not_model(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A ToolSearch result holds ``tool_reference`` blocks (2.1.69+): ``--summary`` sizes the whole
    conversation, and the sizing raised TypeError on them (found in review, on four corpus files)."""
    s = Session(version="2.1.179")
    s.user("find the tool for tickets")
    s.assistant(tools=[("toolu_1", "ToolSearch", {"query": "tickets"})])
    s.result("toolu_1", [{"type": "tool_reference", "tool_name": "mcp__jira__create_issue"}])
    s.assistant(text="Found mcp__jira__create_issue.")
    summary = tmp_path / "summary.md"
    summary.write_text('6. All user messages:\n   - "find the tool for tickets"\n')
    code = main(["grade", str(s.write(tmp_path / "s.jsonl")), "--summary", str(summary),
                 "--graders", "verbatim_user_messages", "-v"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "PASS      verbatim_user_messages" in out


@needs_shared
def test_grade_bad_expect_names_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expect = tmp_path / "expect.yaml"
    expect.write_text("filez: [a.py]\n")
    assert main(["grade", str(FASTHOOKS), "--expect", str(expect)]) == 2
    assert "expect.yaml:1: filez: unknown field (did you mean 'files'?" in capsys.readouterr().err


def test_grade_missing_file_and_no_compaction(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grade", str(tmp_path / "nope.jsonl")]) == 2
    assert "nope.jsonl: no such file or folder" in capsys.readouterr().err
    t = tmp_path / "t.jsonl"
    t.write_text(json.dumps({"type": "user", "uuid": "u1", "parentUuid": None,
                             "message": {"role": "user", "content": "hi"}}) + "\n")
    assert main(["grade", str(t)]) == 2
    assert "no compaction in this transcript" in capsys.readouterr().err


@needs_shared
def test_grade_reports_bad_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = tmp_path / "t.jsonl"
    shutil.copy(FASTHOOKS, t)
    with t.open("a") as fh:
        fh.write('{"type": "user", "uuid": \n')
    main(["grade", str(t), "--graders", "nine_sections"])
    out = capsys.readouterr().out
    assert "line 64: not valid JSON" in out


@pytest.mark.parametrize("verb", [[], ["run"], ["grade"]], ids=["top", "run", "grade"])
def test_every_verb_has_help(verb: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([*verb, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "usage: ctxeval" in out
    if verb == ["run"]:
        for flag in ("--json", "--context-window", "--compact-at-end", "--backend", "--model", "--graders", "--prompt"):
            assert flag in out
    if verb == ["grade"]:
        for flag in ("--summary", "--expect", "--graders", "--json"):
            assert flag in out


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "run" in capsys.readouterr().out


def test_console_script_is_installed() -> None:
    exe = shutil.which("ctxeval") or str(Path(sys.executable).parent / "ctxeval")
    proc = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("ctxeval ")


# --- session folders and outputs ------------------------------------------------------------------

def test_a_second_run_into_the_same_session_folder_gets_its_own(tiny: Path, tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    for _ in range(2):
        assert main(["run", str(tiny), "--session-dir", str(sessions)]) in (0, 1)
    first, second = sorted(p for p in sessions.iterdir())
    assert (first.name, second.name) == ("tiny", "tiny-2")
    for folder in (first, second):
        [transcript] = folder.glob("*.jsonl")
        uuids = [json.loads(line)["uuid"] for line in transcript.read_text().splitlines()]
        assert len(uuids) == len(set(uuids))  # one run per transcript: no duplicated records


def test_the_runner_refuses_a_folder_that_holds_a_run(tiny: Path, tmp_path: Path) -> None:
    from pytest_ctxeval.errors import UsageError
    from pytest_ctxeval.runner import run_scenario

    run_scenario(tiny, session_dir=tmp_path / "s")
    with pytest.raises(UsageError, match="already holds a run of tiny"):
        run_scenario(tiny, session_dir=tmp_path / "s")


def test_two_scenarios_with_one_name_are_an_input_error(tiny: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tiny.parent / "copy.yaml").write_text(TINY)
    assert main(["run", str(tiny.parent)]) == 2
    err = capsys.readouterr().err
    assert "the name 'tiny' is also the name of" in err and "copy.yaml" in err and "tiny.yaml" in err


def test_an_unwritable_json_path_fails_before_the_run(tiny: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    sessions = tmp_path / "sessions"
    assert main(["run", str(tiny), "--json", str(blocker / "r.json"), "--session-dir", str(sessions)]) == 2
    assert "cannot create the output folder" in capsys.readouterr().err
    assert not sessions.exists() or not any(sessions.iterdir())  # nothing ran


def test_a_run_with_no_compaction_says_why_once(tiny: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tiny.write_text(TINY.replace("context_window: 12000", "context_window: 200000")
                    + "  - compact: true\nfaults: {compact: [empty]}\n")
    assert main(["run", str(tiny)]) == 1
    out = capsys.readouterr().out
    assert out.count("FAIL: no compaction succeeded in tiny") == 1
    assert "compact failed" in out and "the summariser returned no text" in out
    tiny.write_text(TINY.replace("context_window: 12000", "context_window: 200000"))
    assert main(["run", str(tiny)]) == 1
    assert "FAIL: no compaction happened in tiny (context window 200000): lower context_window" in capsys.readouterr().out


def _a_summary_that_drops_the_last_request(path: Path) -> Path:
    """A two-request session whose one compaction's summary keeps only the first request: grading it
    fails (exit 1)."""
    s = Session()
    s.user("rename load_config to read_config in src/app.py")
    s.assistant(text="Renaming.")
    s.user("also add a test for read_config")
    s.assistant(text="Adding the test.")
    sections = ["Primary Request and Intent:\n   Rename load_config to read_config.", "Key Technical Concepts:\n   - Python",
                "Files and Code Sections:\n   - src/app.py", "Errors and fixes:\n   - none", "Problem Solving:\n   Renamed.",
                "All user messages:\n   - rename load_config to read_config in src/app.py", "Pending Tasks:\n   - none",
                "Current Work:\n   Renaming.", "Optional Next Step:\n   Done."]
    s.compact("This session is being continued from a previous conversation that ran out of context. The conversation "
              "is summarized below:\nSummary:\n" + "\n".join(f"{i}. {t}" for i, t in enumerate(sections, 1)))
    return s.write(path)


def test_output_piped_into_head_still_writes_the_files_and_the_exit_code(tmp_path: Path) -> None:
    """``ctxeval grade S --json out.json | head -1``: the reader goes away after one line; the
    command still writes out.json and exits with its verdict (1: the last request is lost), not 0
    (found in review: the closed pipe ended it before the JSON was written)."""
    out = tmp_path / "g.json"
    transcript = _a_summary_that_drops_the_last_request(tmp_path / "s.jsonl")
    proc = subprocess.Popen([sys.executable, "-m", "pytest_ctxeval.cli", "grade", str(transcript), "--json", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.readline()
    proc.stdout.close()  # like head -1
    code = proc.wait(timeout=120)
    assert code == 1, proc.stderr.read() if proc.stderr else ""
    assert json.loads(out.read_text())["format"]


def test_a_reader_gone_before_the_first_line_keeps_the_exit_code(tmp_path: Path) -> None:
    """``ctxeval run … | true``: nothing is read at all; what is still buffered when the command
    returns is dropped quietly and the exit code is the command's (was 120 and "Exception ignored
    … BrokenPipeError" at exit, with unbuffered output off)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    out = tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "pytest_ctxeval.cli", "run", "scenarios/idle_gap.yaml", "-v",
                             "--json", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    code = proc.wait(timeout=120)
    err = proc.stderr.read().decode()
    assert code == 0, err
    assert "BrokenPipeError" not in err and json.loads(out.read_text())["scenarios"]


def test_a_broken_prompt_is_one_usage_error_before_any_run(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """As under pytest: the template is rendered once up front, so an undefined name is exit 2 with
    the file and line, not the same failure in every scenario and exit 1 (found in review)."""
    bad = tmp_path / "my_compact.j2"
    bad.write_text("Summarise the conversation.\n{% if custom_instructions %}{{ custom_instructions }}{% endif %}\n"
                   "{{ nope }}\n")
    assert main(["run", "scenarios/idle_gap.yaml", "--prompt", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"ctxeval: error: {bad}:3: template error: 'nope' is undefined"
    only_with = tmp_path / "only_with.j2"  # the undefined name sits in the branch with instructions
    only_with.write_text("Summarise.\n{% if custom_instructions %}{{ custom_instructions }} {{ typo }}{% endif %}\n")
    assert main(["run", "scenarios/idle_gap.yaml", "--prompt", str(only_with)]) == 2
    assert "'typo' is undefined" in capsys.readouterr().err
    divides = tmp_path / "divides.j2"  # an expression that fails, not a jinja error: still a usage error
    divides.write_text("Summarise.\n{{ 1 // 0 }}\n")
    assert main(["run", "scenarios/idle_gap.yaml", "--prompt", str(divides)]) == 2
    assert f"{divides}:2: template error: ZeroDivisionError" in capsys.readouterr().err


def test_messages_name_the_option_as_the_cli_spells_it_too(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """Messages shared with the plugin give both spellings, the CLI's first (found in review: the CLI
    said --ctxeval-backend, which it does not take)."""
    assert main(["run", "scenarios/idle_gap.yaml", "--backend", "replay", "--cassettes", str(tmp_path / "none")]) == 2
    assert "--backend record (pytest: --ctxeval-backend record)" in capsys.readouterr().err
