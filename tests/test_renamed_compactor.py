"""Compaction strategies are compactors now (issue 22); the old spellings still work and warn.

Each old option, ini key and public name still does what it did AND says, once, what to write
instead; a results file written before the rename (``strategy``/``strategies`` keys) is still read
by ``read_results``, ``ctxeval diff`` and ``ctxeval report``; new files carry the new keys.
(The rename codemod leaves this file alone: it spells the old names on purpose.)
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest

import pytest_ctxeval.compaction as compaction
from pytest_ctxeval.cli import main
from pytest_ctxeval.core.renamed import RENAMED_NAMES, CtxEvalDeprecationWarning, upgrade_results
from pytest_ctxeval.results import read_results

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "scenarios"
OLD_RESULTS = Path(__file__).parent / "fixtures" / "results_v1_strategy.json"
TINY = (LIBRARY / "debug_failing_test.yaml").read_text()


# -- ctxeval: --strategy, --strategies ------------------------------------------------------------


def _deprecations(err: str) -> list[str]:
    return [line for line in err.splitlines() if "is deprecated" in line]


def test_run_strategy_still_runs_the_compactor_and_warns_once(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["run", str(LIBRARY / "auth_refactor.yaml"), "--strategy", "codex", "--graders", "tool_pairing",
                 "--json", str(out)]) == 0
    warned = _deprecations(capsys.readouterr().err)
    assert warned == ["ctxeval: warning: --strategy is deprecated: use --compactor (compaction strategies are "
                      "called compactors now; the old spelling will be removed in a later release)"]
    doc = json.loads(out.read_text())
    assert doc["compactor"] == "codex" and doc["scenarios"][0]["compactor"] == "codex"
    assert "strategy" not in doc and "strategy" not in doc["scenarios"][0]  # new files: the new key only


def test_run_compactor_does_not_warn(tmp_path, capsys):
    assert main(["run", str(LIBRARY / "auth_refactor.yaml"), "--compactor", "codex", "--graders", "tool_pairing"]) == 0
    assert _deprecations(capsys.readouterr().err) == []


def test_compare_strategies_still_compares_and_warns(capsys):
    assert main(["compare", "--strategies", "claude_code,observation_masking", "--graders", "tool_pairing",
                 str(LIBRARY / "auth_refactor.yaml")]) == 0
    captured = capsys.readouterr()
    assert "2 compactors x 1 scenario" in captured.out and "observation_masking" in captured.out
    assert _deprecations(captured.err) == [
        "ctxeval: warning: --strategies is deprecated: use --compactors (compaction strategies are called "
        "compactors now; the old spelling will be removed in a later release)"]


def test_compare_still_refuses_a_single_strategy(capsys):
    """``compare --strategy`` was an error and stays one, naming the new spellings."""
    assert main(["compare", "--strategy", "codex", str(LIBRARY / "auth_refactor.yaml")]) == 2
    err = capsys.readouterr().err
    assert "compare takes --compactors a,b,..." in err and "--strategy is deprecated: use --compactor" in err


def test_facts_survival_strategies_still_works_and_warns(capsys):
    assert main(["facts", "survival", str(LIBRARY / "facts_in_tool_results.yaml"),
                 "--strategies", "claude_code,observation_masking"]) == 0
    captured = capsys.readouterr()
    assert "planted facts held (observation_masking)" in captured.out
    assert [w.split(":", 2)[2].strip() for w in _deprecations(captured.err)] == [
        "--strategies is deprecated: use --compactors (compaction strategies are called compactors now; the old "
        "spelling will be removed in a later release)"]


@pytest.mark.parametrize("verb, new, old", [
    (["run"], "--compactor", "--strategy"),
    (["compare"], "--compactors", "--strategies"),
    (["facts", "survival"], "--compactors", "--strategies"),
])
def test_help_shows_only_the_new_spelling(verb, new, old, capsys):
    with pytest.raises(SystemExit):
        main([*verb, "--help"])
    out = capsys.readouterr().out
    assert new in out and old not in out.replace(new, "")


# -- pytest: --ctxeval-strategy, --ctxeval-compare-strategies, ini ctxeval_strategy ----------------


def test_pytest_old_options_still_work_and_warn(pytester: pytest.Pytester):
    pytester.makefile(".yaml", **{"scenarios/debug": TINY})
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "-rs", "--ctxeval-strategy", "codex",
                                "--ctxeval-compare-strategies", "observation_masking", "-k", "nine_sections")
    result.assert_outcomes(skipped=1, deselected=20)
    result.stdout.fnmatch_lines([
        "*ctxeval compactors: codex, observation_masking*",
        "*n/a: nine_sections checks the format of the claude_code compactor; the codex compactor writes*"])
    text = result.stdout.str()
    for old, new in (("--ctxeval-strategy", "--ctxeval-compactor"),
                     ("--ctxeval-compare-strategies", "--ctxeval-compare-compactors")):
        assert text.count(f"CtxEvalDeprecationWarning: {old} is deprecated: use {new} ") == 1, text


def test_pytest_new_options_do_not_warn(pytester: pytest.Pytester):
    pytester.makefile(".yaml", **{"scenarios/debug": TINY})
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "--ctxeval-compactor", "codex",
                                "-k", "tool_pairing")
    result.assert_outcomes(passed=1, deselected=20)
    assert "deprecated" not in result.stdout.str()


def test_pytest_old_ini_key_still_works_and_warns(pytester: pytest.Pytester):
    pytester.makefile(".yaml", **{"scenarios/debug": TINY})
    pytester.makeini("[pytest]\nctxeval_strategy = codex\n")
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "-rs", "-k", "nine_sections")
    result.assert_outcomes(skipped=1, deselected=20)
    result.stdout.fnmatch_lines(["*CtxEvalDeprecationWarning: the ini key ctxeval_strategy is deprecated: use "
                                 "ctxeval_compactor*",
                                 "*the claude_code compactor; the codex compactor writes*"])
    assert "ignored" not in result.stdout.str()


def test_pytest_the_new_ini_key_wins_and_the_warning_says_so(pytester: pytest.Pytester):
    pytester.makefile(".yaml", **{"scenarios/debug": TINY})
    pytester.makeini("[pytest]\nctxeval_strategy = codex\nctxeval_compactor = opencode\n")
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "-rs", "-k", "nine_sections")
    result.stdout.fnmatch_lines(["*ctxeval_strategy is deprecated: use ctxeval_compactor*it is ignored because "
                                 "ctxeval_compactor is set too*",
                                 "*the opencode compactor writes*"])


def test_pytest_deprecations_are_errors_under_W_error(pytester: pytest.Pytester):
    """A project that turns deprecations into errors finds out at once, with the new spelling."""
    pytester.makefile(".yaml", **{"scenarios/debug": TINY})
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "-W", "error::DeprecationWarning",
                                "--ctxeval-strategy", "codex")
    assert result.ret != pytest.ExitCode.OK
    assert "use --ctxeval-compactor" in result.stdout.str() + result.stderr.str()


# -- results written before the rename ------------------------------------------------------------


def test_the_fixture_is_an_old_results_file():
    doc = json.loads(OLD_RESULTS.read_text())
    assert doc["strategy"] == "codex" and doc["strategies"]["strategies"] == ["codex", "observation_masking"]
    assert "compactor" not in doc and "compactors" not in doc


def test_read_results_reads_the_old_keys_as_the_new():
    doc = read_results(OLD_RESULTS)
    assert doc["compactor"] == "codex" and doc["scenarios"][0]["compactor"] == "codex"
    assert doc["compactors"]["compactors"] == ["codex", "observation_masking"]
    assert [r["compactor"] for r in doc["compactors"]["rows"]] == ["codex", "observation_masking"]
    assert not [k for k in _keys(doc) if "strateg" in k]  # no old key is left, at any depth
    assert doc["compactors"]["results"]["observation_masking"][0]["compactor"] == "observation_masking"
    assert doc["version"] == 1  # the format is the same: only key names changed


def _keys(obj: object) -> list[str]:
    if isinstance(obj, dict):
        return [k for k in obj] + [k for v in obj.values() for k in _keys(v)]
    return [k for v in obj for k in _keys(v)] if isinstance(obj, list) else []


def test_upgrade_renames_failures_and_keeps_a_new_key_over_an_old_one():
    doc = {"strategy": "old", "compactor": "new", "strategies": {
        "strategies": ["a"], "rows": [{"strategy": "a"}], "failures": [{"scenario": "s", "strategy": "a"}]}}
    assert upgrade_results(doc) == {"compactor": "new", "compactors": {
        "compactors": ["a"], "rows": [{"compactor": "a"}], "failures": [{"scenario": "s", "compactor": "a"}]}}
    new = {"compactor": "codex", "scenarios": [{"name": "x", "compactor": "codex"}]}
    assert upgrade_results(json.loads(json.dumps(new))) == new


def test_diff_and_report_read_an_old_results_file(tmp_path, capsys):
    old = tmp_path / "old.json"
    shutil.copy(OLD_RESULTS, old)
    assert main(["diff", str(old), str(old)]) == 0
    assert main(["report", str(old), "-o", str(tmp_path / "r.html"), "-o", str(tmp_path / "r.md")]) == 0
    html = (tmp_path / "r.html").read_text()
    assert 'id="compactors"' in html and "<th>compactor</th><td>codex</td>" in html
    assert "observation_masking" in html
    assert "#### Compactors: codex, observation\\_masking" in (tmp_path / "r.md").read_text()


# -- Python names ----------------------------------------------------------------------------------


@pytest.mark.parametrize("old, new", sorted(RENAMED_NAMES.items()))
def test_old_public_names_import_with_a_warning(old, new):
    with pytest.warns(CtxEvalDeprecationWarning, match=rf"pytest_ctxeval\.compaction\.{old} is deprecated: "
                                                       rf"use pytest_ctxeval\.compaction\.{new} "):
        value = getattr(compaction, old)
    assert value is getattr(compaction, new)
    assert old not in compaction.__all__ and new in compaction.__all__


def test_from_import_of_an_old_name_works_and_warns():
    with pytest.warns(CtxEvalDeprecationWarning, match="use pytest_ctxeval.compaction.load_compactor"):
        namespace: dict[str, object] = {}
        exec("from pytest_ctxeval.compaction import load_strategy", namespace)
    assert namespace["load_strategy"]("codex").name == "codex"  # type: ignore[operator]


def test_the_new_names_do_not_warn_and_unknown_names_still_fail():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compaction.load_compactor("codex").name == "codex"
        from pytest_ctxeval.compaction import BaseCompactor, Compactor, CompactorUnavailable  # noqa: F401
    with pytest.raises(AttributeError, match="has no attribute 'Strategies'"):
        compaction.Strategies  # noqa: B018


# -- keywords and attributes of the top-level public API -------------------------------------------


def test_run_scenario_strategy_keyword_and_result_attribute_still_work_and_warn():
    import pytest_ctxeval

    with pytest.warns(CtxEvalDeprecationWarning, match=r"run_scenario\(strategy=\.\.\.\) is deprecated: use compactor="):
        run = pytest_ctxeval.run_scenario(LIBRARY / "auth_refactor.yaml", strategy="codex")
    assert run.compactor == "codex"
    with pytest.warns(CtxEvalDeprecationWarning, match=r"RunResult\.strategy is deprecated: use RunResult\.compactor"):
        assert run.strategy == "codex"
    with pytest.raises(TypeError, match="both strategy= and compactor="):
        pytest_ctxeval.run_scenario(LIBRARY / "auth_refactor.yaml", strategy="codex", compactor="opencode")


def test_compaction_case_strategy_reads_and_writes_the_compactor():
    from pytest_ctxeval.grading.registry import cases_from_run
    from pytest_ctxeval.runner import run_scenario

    case = cases_from_run(run_scenario(LIBRARY / "auth_refactor.yaml", compactor="codex"))[0]
    with pytest.warns(CtxEvalDeprecationWarning, match=r"CompactionCase\.strategy is deprecated: use "
                                                       r"CompactionCase\.compactor"):
        assert case.strategy == "codex"
    with pytest.warns(CtxEvalDeprecationWarning):
        case.strategy = "opencode"
    assert case.compactor == "opencode"


def test_a_grader_folder_with_the_old_keyword_still_loads_and_warns(tmp_path):
    from pytest_ctxeval import load_graders

    (tmp_path / "mine.py").write_text(
        "from pytest_ctxeval import Verdict, grader\n\n\n"
        "@grader('claude_only', strategies=('claude_code',))\n"
        "def claude_only(case):\n"
        "    return Verdict.passed_('ok')\n", encoding="utf-8")
    with pytest.warns(CtxEvalDeprecationWarning, match=r"grader\(strategies=\.\.\.\) is deprecated: use compactors="):
        registry = load_graders([tmp_path])
    assert registry.get("claude_only").compactors == ("claude_code",)


def test_the_run_scenario_fixture_takes_the_old_keyword(pytester: pytest.Pytester):
    pytester.makepyfile(test_mine=f"""
        import pytest

        @pytest.mark.ctxeval
        def test_codex(run_scenario):
            with pytest.warns(DeprecationWarning, match="use compactor="):
                run = run_scenario({str(LIBRARY / "auth_refactor.yaml")!r}, strategy="codex")
            assert run.compactor == "codex"
    """)
    pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "test_mine.py").assert_outcomes(passed=1)
