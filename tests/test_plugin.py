"""The pytest plugin, driven through pytester (the real plugin, loaded by its entry point)."""

from __future__ import annotations

import json
import textwrap

import pytest

from scenario_texts import TINY


# A prompt that asks for three short sections and no list of user messages.
WEAK_PROMPT = textwrap.dedent("""\
    Summarise the conversation in <summary> tags with these sections:
    1. Primary Request and Intent:
    2. Current Work:
    3. Optional Next Step:
    """)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", **{"scenarios/tiny": TINY})
    return pytester


def test_scenarios_are_not_collected_without_the_flag(project: pytest.Pytester) -> None:
    project.makepyfile(test_marked="""
        import pytest

        @pytest.mark.ctxeval
        def test_needs_flag():
            raise AssertionError("must not run without --ctxeval")

        def test_plain():
            pass
    """)
    result = project.runpytest("-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*ctxeval test: run with --ctxeval*"])
    result.stdout.no_fnmatch_line("*tiny.yaml*")


def test_ctxeval_runs_only_ctxeval_items(project: pytest.Pytester) -> None:
    project.makepyfile(test_marked="""
        import pytest

        @pytest.mark.ctxeval
        def test_marked():
            pass

        def test_plain():
            raise AssertionError("deselected under --ctxeval")
    """)
    result = project.runpytest("--ctxeval", "-p", "no:cacheprovider", "-k", "marked or continuation")
    result.assert_outcomes(passed=2, deselected=21)


def test_ctxeval_collects_scenario_times_grader_items(project: pytest.Pytester) -> None:
    result = project.runpytest("--ctxeval", "-v", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines([
        "*scenarios/tiny.yaml::verbatim_user_messages PASSED*",
        "*scenarios/tiny.yaml::tool_pairing PASSED*",
        "*ctxeval summary*",
        "scenario*compactions*tokens before → after*passed*failed*",
        "tiny*1*→*",
    ])
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0
    assert outcomes["passed"] + outcomes.get("skipped", 0) == 21  # 18 rule + 3 llm graders


def test_a_weak_prompt_fails_graders_with_reasons(project: pytest.Pytester) -> None:
    project.makefile(".j2", weak=WEAK_PROMPT)
    result = project.runpytest("--ctxeval", "--ctxeval-prompt", "weak.j2", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines([
        "*verbatim_user_messages failed on tiny.yaml*",
        "*section 6 'All user messages' is missing*",
        "*nine_sections failed on tiny.yaml*",
        "*missing sections: 2. Key Technical Concepts*",
    ])
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_bad_scenario_is_a_one_line_collection_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", **{"scenarios/broken": "turns:\n  - user: hi\n  - assistant: x\n    tools:\n      - name: Read\n        resutl: 1\n"})
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["scenarios/broken.yaml:6: turns[[]1].tools[[]0].resutl: unknown field*"])
    result.stdout.no_fnmatch_line("*Traceback*")
    # One failure for the file; the session is not interrupted (issue 23).
    result.assert_outcomes(failed=1)


def test_scenario_without_compaction_fails_with_advice(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", **{"scenarios/short": "context_window: 200000\nturns:\n  - user: hi\n  - assistant: hello\n"})
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "-k", "nine_sections")
    result.stdout.fnmatch_lines(["*no compaction happened in short*--compact-at-end*"])
    result.assert_outcomes(failed=1, deselected=20)
    # ... and --ctxeval-compact-at-end makes the end state gradable.
    result = pytester.runpytest("--ctxeval", "--ctxeval-compact-at-end", "-p", "no:cacheprovider", "-k", "nine_sections")
    result.assert_outcomes(passed=1, deselected=20)


def test_two_scenarios_with_one_name_fail_the_second_with_the_reason(project: pytest.Pytester) -> None:
    project.makefile(".yaml", **{"scenarios/copy": TINY})
    result = project.runpytest("--ctxeval", "-p", "no:cacheprovider", "-k", "nine_sections")
    result.stdout.fnmatch_lines(["*the name 'tiny' is also the name of scenarios/*.yaml*names must be unique*"])
    result.assert_outcomes(passed=1, failed=1, deselected=40)


def test_user_graders_folder_adds_items(project: pytest.Pytester) -> None:
    project.makepyfile(**{"mygraders/extra": """
        from pytest_ctxeval import grader, Verdict

        @grader("mentions_util", kind="rule")
        def mentions_util(case):
            if "src/util.py" in case.summary:
                return Verdict.passed_("src/util.py is named")
            return Verdict.failed("src/util.py is not named in the summary")
    """})
    result = project.runpytest("--ctxeval", "--ctxeval-graders", "mygraders", "-v", "-p", "no:cacheprovider",
                               "-k", "mentions_util")
    result.stdout.fnmatch_lines(["*scenarios/tiny.yaml::mentions_util PASSED*"])


@pytest.mark.parametrize(("args", "message"), [
    (["--ctxeval-backend", "nope"], "*invalid choice: 'nope'*"),
    (["--ctxeval-graders", "missing_dir"], "*graders folder missing_dir: no such directory*"),
    (["--ctxeval-prompt", "missing.j2"], "*compaction prompt missing.j2: no such file*"),
    (["--ctxeval-context-window", "0"], "*expected a positive integer, got '0'*"),
    (["--ctxeval-context-window", "500"], "*a context window of at least 1,000 tokens, got '500'*"),
    (["--ctxeval-backend", "replay", "--ctxeval-cassettes", "no_cassettes"],
     "*replay needs recorded cassettes in no_cassettes; record them with --ctxeval-backend record*"),
], ids=["backend", "graders-dir", "prompt", "window", "small-window", "replay-without-cassettes"])
def test_bad_options_are_usage_errors(project: pytest.Pytester, args: list[str], message: str) -> None:
    result = project.runpytest("--ctxeval", *args)
    result.stderr.fnmatch_lines([message])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_anthropic_backend_without_key_is_a_clear_error(project: pytest.Pytester,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    result = project.runpytest("--ctxeval", "--ctxeval-backend", "anthropic", "-p", "no:cacheprovider",
                               "-k", "nine_sections")
    result.stderr.fnmatch_lines(["*the anthropic backend needs ANTHROPIC_API_KEY*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_fixtures_run_and_grade_in_a_hand_written_test(project: pytest.Pytester) -> None:
    project.makepyfile(test_handwritten="""
        import pytest

        @pytest.mark.ctxeval
        def test_tiny_keeps_user_messages(run_scenario, grade):
            result = run_scenario("scenarios/tiny.yaml")
            assert len(result.compactions) == 1
            verdicts = grade(result, graders=["verbatim_user_messages", "files_preserved"])
            assert [(v.grader, v.status) for v in verdicts] == [
                ("verbatim_user_messages", "pass"), ("files_preserved", "pass")]

        @pytest.mark.ctxeval
        def test_window_override(run_scenario):
            assert run_scenario("scenarios/tiny.yaml", context_window=100000).config.context_window == 100000

        @pytest.mark.ctxeval
        def test_same_arguments_as_the_runner(run_scenario):
            import inspect
            from pytest_ctxeval.runner import run_scenario as runner
            assert list(inspect.signature(run_scenario).parameters) == list(inspect.signature(runner).parameters)

        @pytest.mark.ctxeval
        def test_runner_only_arguments_reach_it(run_scenario):
            seen = []
            run_scenario("scenarios/tiny.yaml", backend="offline", on_prepare=seen.append)
            assert seen, "on_prepare saw no request"
            with pytest.raises(TypeError, match="unexpected keyword argument 'window'"):
                run_scenario("scenarios/tiny.yaml", window=1)
    """)
    result = project.runpytest("--ctxeval", "test_handwritten.py", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)


def test_ini_options(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", **{"evals/tiny": TINY})
    pytester.makeini("[pytest]\nctxeval_scenarios = evals\nctxeval_backend = offline\n")
    result = pytester.runpytest("--ctxeval", "-v", "-p", "no:cacheprovider", "-k", "continuation")
    result.stdout.fnmatch_lines(["*evals/tiny.yaml::continuation PASSED*"])


def test_items_carry_verdicts_for_junit(project: pytest.Pytester) -> None:
    project.makefile(".j2", weak=WEAK_PROMPT)
    project.runpytest("--ctxeval", "--ctxeval-prompt", "weak.j2", "--junitxml=out.xml", "-p", "no:cacheprovider")
    xml = (project.path / "out.xml").read_text()
    assert 'name="verbatim_user_messages"' in xml
    assert "section 6 &apos;All user messages&apos; is missing" in xml or "section 6 'All user messages' is missing" in xml


def test_help_lists_the_options(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines([
        "*compaction quality (pytest-ctxeval)*",
        "*--ctxeval *",
        "*--ctxeval-backend*",
        "*--ctxeval-model*",
        "*--ctxeval-context-window*",
        "*--ctxeval-compact-at-end*",
        "*--ctxeval-prompt*",
        "*--ctxeval-graders*",
        "*ctxeval_scenarios*",
    ])


def test_user_properties_hold_the_verdict(project: pytest.Pytester) -> None:
    project.makeconftest("""
        import json
        SEEN = []
        def pytest_runtest_logreport(report):
            if report.when == "call":
                for key, value in report.user_properties:
                    if key == "ctxeval_verdict":
                        SEEN.append(json.loads(value))
        def pytest_sessionfinish(session):
            with open("verdicts.json", "w") as fh:
                json.dump(SEEN, fh)
    """)
    project.runpytest("--ctxeval", "-p", "no:cacheprovider")
    verdicts = json.loads((project.path / "verdicts.json").read_text())
    assert {v["grader"] for v in verdicts} >= {"verbatim_user_messages", "nine_sections"}
    assert all(v["status"] in ("pass", "fail", "n/a", "ungraded") for v in verdicts)


_HEAVY = ("anthropic", "httpx2", "jinja2", "pydantic", "yaml", "deepdiff", "pytest_ctxeval.engine",
          "pytest_ctxeval.session", "pytest_ctxeval.runner")


def test_loading_the_plugin_imports_only_pytest_and_the_options() -> None:
    """pytest loads the plugin in every run of a project that has it installed: without --ctxeval
    that must not cost the engine, the graders or the anthropic SDK (about a second to import)."""
    import subprocess
    import sys

    # ... and, in the same process afterwards, the public names and the submodules still resolve on
    # first use (make_llm itself is run by every run of the suite; calling it here would load the SDK)
    code = ("import sys, pytest_ctxeval.plugin, pytest_ctxeval.options, pytest_ctxeval; "
            f"print(sorted(m for m in sys.modules if m.startswith({_HEAVY!r})))\n"
            "import pytest_ctxeval as p, pytest_ctxeval.plugin as pl, pytest_ctxeval.llm as llm\n"
            "print(p.make_llm.__module__, p.EngineConfig.__name__, pl.GraderItem.__name__, "
            "'make_llm' in dir(p), p.runner.__name__, llm.offline.__name__, llm.CassetteStore.__name__, "
            "pl.SESSION is not None, hasattr(p, 'nope'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    first, names = out.splitlines()
    assert first == "[]", out
    assert names.split() == ["pytest_ctxeval.llm", "EngineConfig", "GraderItem", "True", "pytest_ctxeval.runner",
                             "pytest_ctxeval.llm.offline", "CassetteStore", "True", "False"]


def test_a_plain_run_of_a_project_with_the_plugin_does_not_load_the_engine(pytester: pytest.Pytester) -> None:
    """The same, through pytest itself: a plain run's test sees none of the heavy modules."""
    pytester.makepyfile(test_plain=f"""
        import sys

        def test_light():
            assert not [m for m in sys.modules if m.startswith({_HEAVY!r})]
    """)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_built_in_library_runs_from_a_folder_without_scenarios(pytester: pytest.Pytester) -> None:
    """No scenarios/ here: the built-in library is collected. Installed editable (as the README
    says), that library is this checkout's scenarios/, and pytest loads the checkout's root
    conftest.py as a non-root conftest, which must not break the run or change the user's
    Hypothesis profile (found in review: it defined pytest_plugins, an error there)."""
    result = pytester.runpytest_subprocess("--ctxeval", "-q", "-p", "no:cacheprovider", "-k", "idle_gap")
    result.assert_outcomes(passed=15, skipped=6)   # stale_values checks the commit id the summary names
    assert "non-top-level conftest" not in result.stdout.str() + result.stderr.str()


def test_ctxeval_does_not_import_modules_without_the_marker(project: pytest.Pytester) -> None:
    # Deselected tests cost nothing under --ctxeval: a module that never names the marker is not
    # imported at all (this one would fail to import), while a marked module still runs.
    project.makepyfile(test_unit="raise ImportError('imported under --ctxeval')\n")
    project.makepyfile(test_marked="""
        import pytest
        pytestmark = pytest.mark.ctxeval
        def test_marked():
            pass
    """)
    result = project.runpytest("--ctxeval", "-p", "no:cacheprovider", "-k", "marked or continuation")
    result.assert_outcomes(passed=2)
    result.stdout.no_fnmatch_line("*imported under --ctxeval*")
    # Without --ctxeval the module is collected as usual (and its import error shows).
    plain = project.runpytest("-p", "no:cacheprovider", "test_unit.py")
    plain.stdout.fnmatch_lines(["*imported under --ctxeval*"])
