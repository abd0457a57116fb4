"""``ctxeval validate`` and ``ctxeval graders``: the table, the JSON, survivors, false alarms,
crashes, users' graders and operators, and the CI check over the library and the corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.cli.validate import format_report, operators_for
from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.grading.validation import validate_cases
from scenario_texts import TINY
from session_kit import Session
from shared_paths import needs_shared
from library_wide import library_wide
from validation_kit import (corpus_report, corpus_sample_report, library_cases, library_report,
                            library_sample, library_sample_report, merged, mutant_pairs, registry, rule_specs)

USER_GRADERS = '''
from pytest_ctxeval import Mutant, Verdict, grader, mutation


@grader("util_named", kind="rule")
def util_named(case):
    """The summary names src/util.py."""
    if "src/util.py" in case.summary:
        return Verdict.passed_("src/util.py is named")
    return Verdict.failed("src/util.py is not named in the summary")


@grader("weak_util", kind="rule", targets=["drop_util"])
def weak_util(case):
    """Passes any summary with a numbered section (too weak to catch drop_util)."""
    return Verdict.passed_("looks fine") if "1." in case.summary else Verdict.failed("no sections")


@mutation("drop_util", targets=["util_named"])
def drop_util(case, rng):
    """Say 'the helper module' instead of src/util.py."""
    if "src/util.py" not in case.summary:
        return []
    return [Mutant.of(case, summary=case.summary.replace("src/util.py", "the <b>helper</b> module"),
                      what="renamed src/util.py", text="the <b>helper</b> module")]


@grader("always_fails", kind="rule")
def always_fails(case):
    """Cries wolf."""
    return Verdict.failed("wolf!")


@grader("crashes", kind="rule", targets=["drop_util"])
def crashes(case):
    """Raises."""
    raise RuntimeError("boom")
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "tiny.yaml").write_text(TINY)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "util.py").write_text(USER_GRADERS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _validate(*args: str) -> int:
    return main(["validate", "scenarios", "--graders-dir", "mine", *args])


def test_a_users_grader_and_operator_are_validated(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = _validate("--graders", "util_named,verbatim_user_messages", "--json", "v.json", "--html", "v.html")
    out = capsys.readouterr().out
    assert code == 0, out
    assert "util_named" in out and "100.0%" in out and "validate: PASS" in out
    doc = json.loads((project / "v.json").read_text())
    assert doc["format"] == "pytest-ctxeval/validate" and doc["version"] == 1
    row = next(g for g in doc["graders"] if g["grader"] == "util_named")
    assert {"grader", "mutants", "killed", "kill_rate", "false_alarms", "collateral", "survivors"} <= set(row)
    assert row["mutants"] == 1 and row["killed"] == 1 and row["kill_rate"] == 1.0 and row["survivors"] == []
    assert "drop_util" in row["operators"]
    assert "<h1>ctxeval validate: PASS</h1>" in (project / "v.html").read_text()


def test_a_weak_grader_fails_validation_with_its_survivors(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = _validate("--graders", "weak_util", "--html", "v.html", "--json", "v.json")
    out = capsys.readouterr().out
    assert code == 1
    assert "SURVIVED weak_util <- drop_util on tiny.yaml compaction 1: renamed src/util.py; slipped through: " \
           "\"the <b>helper</b> module\"" in out
    html = (project / "v.html").read_text()
    assert "the &lt;b&gt;helper&lt;/b&gt; module" in html and "<b>helper</b>" not in html
    row = json.loads((project / "v.json").read_text())["graders"][0]
    assert row["kill_rate"] == 0.0 and row["survivors"][0]["text"] == "the <b>helper</b> module"


def test_a_false_alarm_on_an_unmutated_summary_fails_validation(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _validate("--graders", "always_fails,util_named") == 1
    out = capsys.readouterr().out
    assert "FALSE ALARM always_fails on unmutated tiny.yaml compaction 1: wolf!" in out


def test_a_crashing_grader_fails_validation_loudly(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _validate("--graders", "crashes") == 1
    out = capsys.readouterr().out
    assert "ERROR grader crashes crashed on scenario tiny.yaml" in out and "RuntimeError: boom" in out


def test_an_operator_that_does_not_apply_makes_no_mutant(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _validate("--graders", "no_superseded_work,pending_tasks") == 0   # tiny has neither
    out = capsys.readouterr().out
    for line in out.splitlines():
        if line.startswith(("no_superseded_work", "pending_tasks")):
            assert line.split()[2] == "0", line


@pytest.mark.parametrize(("args", "message"), [
    (["--min-kill", "95"], "expected a number between 0 and 1, got '95' (0.95 means 95 %)"),
    (["--operators", "nope"], "unknown mutation operator 'nope'"),
    (["--graders", "nope"], "unknown grader 'nope'"),
], ids=["min-kill", "operator", "grader"])
def test_bad_options_are_usage_errors(project: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                      message: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        code = _validate(*args)
        raise SystemExit(code)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_a_transcript_without_a_compaction_is_noted(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = Session()
    s.user("List the files.")
    s.assistant(text="Here they are.")
    s.write(project / "plain.jsonl")
    assert main(["validate", "scenarios", "plain.jsonl", "--graders", "verbatim_user_messages"]) == 0
    captured = capsys.readouterr()
    assert "plain.jsonl: no compaction in this transcript; nothing to mutate" in captured.out + captured.err
    assert "1 summaries (0 from real transcripts)" in captured.out


def test_a_path_with_nothing_to_mutate_is_a_usage_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "notes.txt").write_text("x")
    assert main(["validate", "notes.txt"]) == 2
    assert "expected a scenario (*.yaml) or a Claude Code transcript (*.jsonl)" in capsys.readouterr().err


def test_graders_lists_kind_checks_expect_keys_and_operators(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graders", "--graders-dir", "mine"]) == 0
    out = capsys.readouterr().out
    assert ("no_superseded_work (rule)\n    checks:    Intents listed in expect.superseded, and tasks the person cancelled "
            "in words (\"forget the PDF export\"), are not proposed in sections 7-9, nor is a change the person "
            "forbade (\"don't touch the sitemap\").") in out
    assert "failed_approaches_preserved (rule)\n    checks:    Approaches the session proved wrong " \
           "(expect.failed_approaches) are recorded as failed and not proposed again in sections 7-9." in out
    assert "    expect:    superseded\n    operators: quote_old_message, propose_failed_approach, revive_superseded" in out
    assert "util_named (rule)" in out and "operators: drop_util" in out
    assert main(["graders", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["graders"]}
    assert rows["files_preserved"]["expect"] == ["files"] and "drop_edited_file" in rows["files_preserved"]["operators"]
    assert rows["intent_preservation"]["kind"] == "llm"
    assert set(rows["no_superseded_work"]["operators"]) >= {"revive_superseded"}


@pytest.mark.xdist_group("library_cases")  # one worker replays and validates the library once (conftest.py)
def test_llm_graders_on_a_heuristic_judge_are_labelled_and_not_held_to_the_bar() -> None:
    cases = [c for c in library_cases() if c[0].source.endswith("auth_refactor.yaml")]
    reg = load_graders()
    specs = [reg.get("intent_preservation")]
    from pytest_ctxeval.options import RunOptions

    judge = RunOptions().make_judge()
    for case, _ in cases:
        case.judge = judge
    ops = operators_for(reg, ["drop_latest_request"])
    heuristic = validate_cases(cases, reg, specs, ops, heuristic_judge=True, judge_label=judge.label)
    stats = heuristic.graders["intent_preservation"]
    assert stats.mutants >= 1 and stats.heuristic
    assert heuristic.passed, "a heuristic's rate is printed, not held to --min-kill"
    assert any("HEURISTIC" in line for line in format_report(heuristic))
    model = validate_cases(cases, reg, specs, ops, heuristic_judge=False, judge_label="a model")
    assert not model.graders["intent_preservation"].heuristic
    assert model.passed is ((model.graders["intent_preservation"].kill_rate or 0) >= 0.95)


# --- the CI check ---------------------------------------------------------------------------------


def _check(report, *, library_only: bool) -> None:
    for line in format_report(report):
        print(line)
    assert not report.errors, report.errors
    for s in report.graders.values():
        if s.kind == "rule" and s.mutants >= 5:
            assert s.kill_rate is not None and s.kill_rate >= 0.95, (s.grader, s.kill_rate, s.survivors[:5])
        # false alarms are counted on the library's (engine-made) summaries only; a real summary's
        # failure is listed as a real failure (a genuine defect or a false alarm to read)
        assert not s.false_alarms, (s.grader, s.false_alarms)
        if library_only:
            assert not s.real_failures


# The suite validates the sample of tests/validation_kit.py (every (grader, operator) pair of the
# library, about a third of its mutants); .ci/run validates the whole library and corpus in its
# library-wide step (tests/library_wide.py, about 30 s), and checks there that the sample still gives every pair.


@pytest.mark.xdist_group("library_cases")  # one worker replays and validates the library once (conftest.py)
def test_rule_graders_on_a_sample_of_the_builtin_library() -> None:
    report = library_sample_report()
    _check(report, library_only=True)
    # every rule grader some operator aims at gets mutants, most of them enough for the kill-rate bar
    aimed = {t for op in operators_for(registry()) for t in op.targets} | \
            {s.name for s in rule_specs() if s.targets}
    missing = sorted(g for g in aimed if g in report.graders and report.graders[g].mutants == 0)
    assert not missing, f"no mutant of the sample targets {missing}: add a scenario to SAMPLE_SCENARIOS"
    assert report.mutants >= 250 and sum(1 for s in report.graders.values() if s.mutants >= 5) >= 10


@pytest.mark.xdist_group("library_cases")  # one worker replays and validates the library once (conftest.py)
@needs_shared
def test_rule_graders_on_a_sample_of_corpus_compactions() -> None:
    report = corpus_sample_report()
    _check(report, library_only=False)
    assert report.real_cases >= 4 and report.mutants >= 30


@library_wide
@pytest.mark.xdist_group("library_cases")  # one worker replays and validates the library once (conftest.py)
def test_ci_rule_graders_on_the_builtin_library() -> None:
    report = library_report()
    _check(report, library_only=True)
    assert report.mutants >= 500 and sum(1 for s in report.graders.values() if s.mutants >= 5) >= 10


@library_wide
@pytest.mark.xdist_group("library_cases")  # one worker replays and validates the library once (conftest.py)
@needs_shared
def test_ci_rule_graders_on_the_library_and_every_corpus_compaction() -> None:
    # the library's part is the report of the test above (validation judges each case on its own)
    report = merged(library_report(), corpus_report())
    _check(report, library_only=False)
    assert report.real_cases >= 10


@library_wide
@pytest.mark.xdist_group("library_cases")  # one worker replays and validates the library once (conftest.py)
def test_the_sample_gives_every_grader_operator_pair_of_the_library() -> None:
    whole, sample = mutant_pairs(library_cases()), mutant_pairs(library_sample())
    assert whole - sample == set(), f"the sample misses {sorted(whole - sample)}: add a scenario to SAMPLE_SCENARIOS"


@pytest.mark.xdist_group("library_cases")  # one worker replays and validates the library once (conftest.py)
def test_a_merged_report_is_the_report_of_both_case_lists() -> None:
    """What the corpus check above relies on, on a few cases: merging two reports gives the report
    of validating both lists in one call."""
    cases = list(library_cases())
    a, b = cases[:2], cases[2:4]
    ops = operators_for(registry())
    one = validate_cases(a + b, registry(), rule_specs(), ops)
    two = merged(validate_cases(a, registry(), rule_specs(), ops), validate_cases(b, registry(), rule_specs(), ops))
    assert two.as_dict() == one.as_dict() and one.mutants > 0


@pytest.mark.parametrize("verb", ["validate", "graders"])
def test_help_lists_the_options_the_docs_name(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([verb, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    flags = {"validate": ("--graders", "--graders-dir", "--json", "--html", "--min-kill", "--seed", "--operators",
                          "--backend", "--verbose"),
             "graders": ("--graders-dir", "--json")}[verb]
    docs = (Path(__file__).resolve().parents[1] / "docs" / "validate.md").read_text()
    for flag in flags:
        assert flag in out
        if flag not in ("--verbose", "--backend", "--graders-dir"):
            assert flag in docs, flag
