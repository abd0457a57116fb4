"""A ``--ctxeval-*`` value after a space must never move pytest's rootdir away from the project
(pytest-dev/pytest#8846): pytest would read no ini file and run other scenarios, green. These runs
are inline and never pass ``--ctxeval`` (the check happens before any scenario would run)."""

from __future__ import annotations

from pathlib import Path

import pytest

INI = "[tool.pytest.ini_options]\nctxeval_scenarios = ['evals']\n"


@pytest.fixture
def own(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A project (``proj/`` with its pyproject.toml) and a prompt and a baseline outside it."""
    proj = pytester.mkdir("proj")
    (proj / "pyproject.toml").write_text(INI)
    (proj / "test_one.py").write_text("def test_one():\n    pass\n")
    outside = pytester.mkdir("shared_prompts")
    (outside / "compact.j2").write_text("Summarise.\n")
    (outside / "base.json").write_text("{}\n")
    monkeypatch.chdir(proj)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    return proj, outside


@pytest.mark.parametrize("option, name", [("--ctxeval-prompt", "compact.j2"), ("--ctxeval-baseline", "base.json"),
                                          ("--ctxeval-session-memory-prompt", "compact.j2"),
                                          ("--ctxeval-report", "base.json")])
def test_a_spaced_path_value_outside_the_project_is_a_usage_error(pytester: pytest.Pytester, own: tuple[Path, Path],
                                                                  option: str, name: str) -> None:
    proj, outside = own
    value = str(outside / name)
    result = pytester.runpytest(option, value, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stderr.str()
    assert f"{option} {value}: pytest reads the paths on its command line before it loads plugins" in text
    assert f"instead of rootdir {proj} with config file {proj / 'pyproject.toml'}" in text
    assert f"Write the value after '=': {option}={value}" in text


def test_the_equals_form_and_a_value_inside_the_project_run(pytester: pytest.Pytester, own: tuple[Path, Path]) -> None:
    proj, outside = own
    (proj / "my_prompt.j2").write_text("Summarise.\n")
    for args in ([f"--ctxeval-prompt={outside / 'compact.j2'}"], ["--ctxeval-prompt", "my_prompt.j2"],
                 ["--ctxeval-prompt", str(proj / "my_prompt.j2")]):
        result = pytester.runpytest(*args, "-p", "no:cacheprovider")
        assert result.ret == pytest.ExitCode.OK, (args, result.stderr.str())
        result.stdout.fnmatch_lines([f"rootdir: {proj}*", "*1 passed*"])


def test_a_spaced_value_in_pytest_addopts_is_caught_too(pytester: pytest.Pytester, own: tuple[Path, Path],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    _, outside = own
    monkeypatch.setenv("PYTEST_ADDOPTS", f"--ctxeval-baseline {outside / 'base.json'}")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ctxeval-baseline *base.json: pytest reads the paths*"])


def test_an_explicit_config_file_keeps_the_project(pytester: pytest.Pytester, own: tuple[Path, Path]) -> None:
    """``-c pyproject.toml`` fixes the ini file and the rootdir, so the spaced value moves nothing."""
    proj, outside = own
    result = pytester.runpytest("-c", str(proj / "pyproject.toml"), "--ctxeval-prompt", str(outside / "compact.j2"),
                                "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK, result.stderr.str()


def test_only_value_taking_ctxeval_options_are_listed(pytester: pytest.Pytester) -> None:
    from pytest_ctxeval.core.rootdir_check import value_options

    config = pytester.parseconfig()
    names = value_options(config._parser)
    assert {"--ctxeval-prompt", "--ctxeval-baseline", "--ctxeval-save-baseline", "--ctxeval-report",
            "--ctxeval-graders", "--ctxeval-compare-prompt", "--ctxeval-cassettes"} <= names
    assert not {"--ctxeval", "--ctxeval-strict", "--ctxeval-compact-at-end", "--ctxeval-batch"} & names


def _baseline(path: Path, names: list[str]) -> Path:
    import json

    path.write_text(json.dumps({"format": "pytest-ctxeval/baseline", "version": 1, "scenarios": {
        n: {"graders": {}, "compactions": []} for n in names}}), encoding="utf-8")
    return path


def test_a_baseline_sharing_no_scenario_with_the_run_is_refused_before_it_runs(pytester: pytest.Pytester) -> None:
    """``ctxeval diff``'s rule (nothing to compare) in ``pytest --ctxeval-baseline``: refused after
    collection, so no scenario runs (this test stays cheap) and no "0 regressions" is printed."""
    from scenario_texts import TINY

    pytester.makefile(".yaml", **{"scenarios/tiny": TINY})
    base = _baseline(pytester.path / "base.json", ["cache_ttl"])
    result = pytester.runpytest("--ctxeval", f"--ctxeval-baseline={base}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--ctxeval-baseline {base} and this run have no scenario in common "
                                 "(cache_ttl against tiny): nothing to compare; compare against a baseline saved "
                                 "from these scenarios*"])
    assert "regressions" not in result.stdout.str()


def test_without_any_config_file_a_moved_rootdir_is_caught_too(pytester: pytest.Pytester,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """No ini anywhere: the rootdir still decides where scenarios/ is looked for."""
    proj = pytester.mkdir("bare")
    (proj / "test_one.py").write_text("def test_one():\n    pass\n")
    prompt = pytester.path / "compact.j2"
    prompt.write_text("Summarise.\n")
    monkeypatch.chdir(proj)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    result = pytester.runpytest("--ctxeval-prompt", str(prompt), "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*instead of rootdir {proj} with no config file: the scenarios/ folder of {proj} "
                                 "would not be found and other scenarios would run.*"])
