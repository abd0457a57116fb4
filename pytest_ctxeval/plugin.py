"""The pytest plugin: ``pytest --ctxeval`` (options, hooks, fixtures; the session is :mod:`.session`).

* ``--ctxeval`` collects scenario files (ini ``ctxeval_scenarios``, default ``scenarios/``, else the
  built-in library) as one item per scenario × grader: ``scenarios/x.yaml::verbatim_user_messages``.
  Each scenario runs once per session; its graders are the items. It runs only ctxeval items:
  scenario items and tests marked ``@pytest.mark.ctxeval`` (other tests are deselected).
  Without ``--ctxeval`` scenario files are not collected and marked tests are skipped.
* The terminal summary lists per scenario: compactions, tokens before → after, graders
  passed/failed. Its data travels in each item's report, so it is also right under pytest-xdist.
* Loading the plugin is cheap: pytest loads it in every run of a project that has it installed,
  so this module imports only pytest and the option definitions. The engine, the graders and the
  anthropic SDK are imported under ``--ctxeval`` (:mod:`.session`) or by a fixture that needs them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Callable

import pytest

from .core.renamed import RENAMED_INI, add_renamed_option, renamed_keywords
from .errors import CtxEvalError
from .options import add_run_options, add_strict_prompt_option, tolerance

if TYPE_CHECKING:  # pragma: no cover
    from .engine.prompt import PromptSet
    from .grading.registry import Verdict
    from .llm import LLM
    from .options import RunOptions
    from .runner import RunResult
    from .session import CtxEvalSession, GraderItem, ScenarioFile  # served by __getattr__ below

__all__ = ["CtxEvalSession", "ScenarioFile", "GraderItem"]


def __getattr__(name: str) -> Any:
    """The session classes, still importable from here (``pytest_ctxeval.plugin.GraderItem``)."""
    if name in __all__ or name == "SESSION":
        from . import session

        return getattr(session, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ctxeval", "compaction quality (pytest-ctxeval)")
    group.addoption("--ctxeval", action="store_true", dest="ctxeval", default=False,
                    help="replay the ctxeval scenarios through the compaction engine and grade every "
                         "compaction (offline by default); also runs tests marked @pytest.mark.ctxeval")
    add_run_options(group.addoption, "--ctxeval-")
    add_strict_prompt_option(group.addoption, "--ctxeval-")
    group.addoption("--ctxeval-graders", dest="ctxeval_graders", action="append", default=None, metavar="DIR",
                    help="a folder of your own graders (repeatable); the built-in graders always load")
    group.addoption("--ctxeval-strict", dest="ctxeval_strict", action="store_true", default=False,
                    help="an ungraded verdict (a judge that could not decide) fails its item instead of skipping it")
    group.addoption("--ctxeval-save-baseline", dest="ctxeval_save_baseline", default=None, metavar="PATH",
                    help="write this run's verdicts (per scenario x compaction x grader: status, score, the facts "
                         "found missing, the summary) as stable, sorted JSON meant to be committed")
    group.addoption("--ctxeval-baseline", dest="ctxeval_baseline", default=None, metavar="PATH",
                    help="compare this run against a saved baseline: a grader that starts failing or a score "
                         "that drops by more than the tolerance is a regression and fails the session")
    group.addoption("--ctxeval-tolerance", dest="ctxeval_tolerance", type=tolerance, default=None, metavar="X",
                    help="how much a score may drop against the baseline before it is a regression "
                         "(default 0.05)")
    group.addoption("--ctxeval-compare-prompt", dest="ctxeval_compare_prompt", default=None, metavar="OLD.j2",
                    help="also run every scenario under this compaction prompt and report, per grader, the pass "
                         "rate and mean score under each prompt and the scenarios that flipped (A/B)")
    add_renamed_option(group.addoption, "--ctxeval-", "compare-compactors", dest="ctxeval_compare_compactors",
                       default=None, metavar="a,b,...",
                       help="also run every scenario under these compactors (comma-separated: codex, "
                            "gemini_cli, opencode, observation_masking, anthropic_server, package.module:Name) and "
                            "report per compactor the pass rate of each grader, probe scores, tokens after "
                            "compaction, compactions, model calls and cost, and which compactor failed which grader "
                            "where; the items stay those of --ctxeval-compactor")
    group.addoption("--ctxeval-report", dest="ctxeval_report", action="append", default=None, metavar="PATH",
                    help="write a report (repeatable): PATH.html (self-contained page: run table, compaction "
                         "timelines, summaries, verdicts, what each compaction lost), PATH.json (the results), "
                         "PATH.md (a short Markdown summary for a CI job summary or a pull-request comment)")
    parser.addini("ctxeval_scenarios", type="paths", default=[],
                  help="scenario files or folders collected under --ctxeval (default: scenarios/, else the "
                       "built-in library, which the summary then says); scenario files in a folder named on "
                       "the command line are collected too")
    parser.addini("ctxeval_graders", type="paths", default=[], help="folders of your own graders")
    parser.addini("ctxeval_backend", default="offline",
                  help="model backend: offline (default), anthropic, record or replay")
    parser.addini("ctxeval_model", default="", help="summariser model for the anthropic backend")
    parser.addini("ctxeval_prompt", type="paths", default=[], help="compaction prompt template to test")
    parser.addini("ctxeval_session_memory_prompt", type="paths", default=[],
                  help="session-memory notes template to test")
    parser.addini("ctxeval_judge_model", default="", help="model for the LLM graders' judge")
    parser.addini("ctxeval_cassettes", type="paths", default=[], help="cassette folder for the real API")
    parser.addini("ctxeval_base_url", default="", help="Messages-API endpoint for the real backends "
                                                       "(else ANTHROPIC_BASE_URL, else the SDK's default)")
    parser.addini("ctxeval_provider", default="", help="anthropic (default), bedrock or vertex")
    parser.addini("ctxeval_compactor", default="", help="compactor (default claude_code, the reference engine)")
    for new, old in RENAMED_INI.items():
        parser.addini(old, default="", help=f"deprecated: use {new}")


def _warn_renamed(config: pytest.Config) -> None:
    """One deprecation warning per old option spelling or ini key used (on the controller only:
    pytest-xdist workers parse the same command line), located where it was written: the command
    line or the ini file's line. Both spellings of one option, or ``-W error`` turning the warning
    into an error, are usage errors naming the new spelling (no INTERNALERROR traceback)."""
    from .core.renamed import conflict_message, ini_message, option_message, renamed_conflicts, renamed_used

    for old, new in renamed_conflicts(config.option):
        raise pytest.UsageError(conflict_message(old, new))
    if hasattr(config, "workerinput"):
        return
    for old, new in renamed_used(config.option):
        _issue_at(config, option_message(old, new), "<command line>", 1)
    for new, old in RENAMED_INI.items():
        if config.getini(old):
            message = ini_message(old, new, bool(config.getini(new)))
            _issue_at(config, message, *_ini_location(config, old))


def _issue_at(config: pytest.Config, message: str, where: str, line: int, category: type[Warning] | None = None) -> None:
    """``config.issue_config_time_warning`` with the warning located at ``where:line`` (pytest
    locates it at its caller's frame: here a copy of :func:`_call_issue` whose code names that place)."""
    import types

    from .core.renamed import CtxEvalDeprecationWarning

    code = _call_issue.__code__.replace(co_filename=where, co_firstlineno=max(line, 1) - 1)
    located = types.FunctionType(code, {})
    category = category or CtxEvalDeprecationWarning
    try:
        located(config.issue_config_time_warning, category(message))
    except category:  # -W error::DeprecationWarning (or a filterwarnings error)
        what = "deprecation" if issubclass(category, DeprecationWarning) else "warning"
        raise pytest.UsageError(f"{where}: {message} [a warning filter made this {what} an error]") from None


#: Options that only a ``--ctxeval`` run acts on (each writes or reads something for it).
_NEEDS_CTXEVAL = ("ctxeval_report", "ctxeval_save_baseline", "ctxeval_baseline", "ctxeval_compare_prompt",
                  "ctxeval_compare_compactors")


def _warn_unused_outputs(config: pytest.Config) -> None:
    """Without ``--ctxeval`` no scenario runs, so a report or baseline asked for is never written,
    and ``--ctxeval-tolerance`` means nothing without a baseline: say so (a warning, since
    ``addopts`` may carry them into the unit-test job) instead of nothing."""
    if hasattr(config, "workerinput"):
        return
    if config.getoption("ctxeval_tolerance", None) is not None and not config.getoption("ctxeval_baseline", None):
        _issue_at(config, "--ctxeval-tolerance has no effect without --ctxeval-baseline (it is how far a score may "
                          "drop against the baseline)", "<command line>", 1, pytest.PytestConfigWarning)
    given = [name for name in _NEEDS_CTXEVAL if config.getoption(name, None)]
    if given and not config.getoption("ctxeval"):
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        _issue_at(config, f"{flags} {'has' if len(given) == 1 else 'have'} no effect without --ctxeval "
                          "(no scenario runs, nothing is written or compared); add --ctxeval",
                  "<command line>", 1, pytest.PytestConfigWarning)


def _session_with_warnings(config: pytest.Config, make: Any) -> Any:
    """``make(config)``, with the deprecation warnings it raises (an old keyword in a grader file
    of the project) shown in pytest's warnings summary at the project's line, not printed raw."""
    import warnings

    from .core.renamed import CtxEvalDeprecationWarning

    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always", CtxEvalDeprecationWarning)
        session = make(config)
    for w in records:
        if issubclass(w.category, CtxEvalDeprecationWarning):
            _issue_at(config, str(w.message), w.filename, w.lineno)
        else:  # not ours: as it would have been shown
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return session


def _call_issue(issue: Any, warning: Warning) -> None:
    issue(warning, stacklevel=2)


def _ini_location(config: pytest.Config, key: str) -> tuple[str, int]:
    """The ini file and the line that sets ``key`` (line 1 when it cannot be found)."""
    import re

    path = config.inipath
    if path is None:
        return "<ini>", 1
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return str(path), 1
    pattern = re.compile(rf"\s*['\"]?{re.escape(key)}['\"]?\s*[=:]")
    return str(path), next((i for i, text in enumerate(lines, 1) if pattern.match(text)), 1)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Refuse a rootdir that pytest chose from a spaced ``--ctxeval-*`` value (core/rootdir_check.py),
    before any conftest of the wrong folder is imported."""
    if any(a.startswith("--ctxeval-") and "=" not in a for a in map(str, early_config.invocation_params.args)) \
            or "--ctxeval-" in os.environ.get("PYTEST_ADDOPTS", ""):
        from .core.rootdir_check import misread_rootdir

        message = misread_rootdir(early_config)
        if message:
            raise pytest.UsageError(message)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "ctxeval: a compaction-quality test; runs only under --ctxeval")
    config.addinivalue_line("markers", "ctxeval_rule: a scenario item graded by a rule grader (select with "
                                       "-m ctxeval_rule)")
    config.addinivalue_line("markers", "ctxeval_llm: a scenario item graded by an LLM grader (judge); "
                                       "-m 'not ctxeval_llm' leaves them out")
    _warn_renamed(config)
    _warn_unused_outputs(config)
    if not config.getoption("ctxeval"):
        return
    from .core.gcpause import freeze_heap, paused_gc, thaw

    # The engine, the graders and the anthropic SDK (some 3,900 modules) stay until the process
    # ends: no collection walks them while they load, nor in the run's (core/gcpause.py). Thawed by
    # a cleanup registered here, so after pytest's own end-of-session collections (cleanups run
    # last-registered first, and this plugin configures before pytest's built-in ones).
    with paused_gc() as collecting:
        from .session import SESSION, CtxEvalSession

        try:
            session = _session_with_warnings(config, CtxEvalSession)
        except CtxEvalError as exc:
            raise pytest.UsageError(str(exc)) from None
        if collecting and freeze_heap():
            config.add_cleanup(thaw)
    config.stash[SESSION] = session
    config.pluginmanager.register(session, "ctxeval-session")
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        # No explicit paths: collect the scenarios as well as the usual test paths.
        roots = [Path(a).resolve() for a in config.args]
        for path in session.scenario_paths:
            if path.exists() and not any(path == r or r in path.parents for r in roots):
                config.args.append(str(path))


# A module that never writes ``mark.ctxeval`` holds no ctxeval test (scenario items come from YAML files).
_MARKER_SPELLING = b"mark.ctxeval"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``--ctxeval``, a Python file whose text never spells the ``ctxeval`` marker is not
    imported: its tests would be deselected anyway, and importing a large unit suite only to drop it
    was most of the eval job's time. (A marker added by a conftest hook, not written in the module,
    is not seen: write ``pytestmark = pytest.mark.ctxeval`` in the module instead.)"""
    if not config.getoption("ctxeval") or collection_path.suffix != ".py" or collection_path.name == "conftest.py":
        return None
    try:
        text = collection_path.read_bytes()
    except OSError:
        return None  # let pytest report it as it would
    return None if _MARKER_SPELLING in text else True


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``pytest`` skips ctxeval tests; ``pytest --ctxeval`` runs only them (scenario items and tests
    marked ``@pytest.mark.ctxeval``), like ``--benchmark-only``: the eval job and the unit-test job
    stay separate even when they share a test folder."""
    if config.getoption("ctxeval"):
        keep = [item for item in items if item.get_closest_marker("ctxeval") is not None]
        if len(keep) != len(items):
            config.hook.pytest_deselected(items=[item for item in items if item.get_closest_marker("ctxeval") is None])
            items[:] = keep
        return
    skip = pytest.mark.skip(reason="ctxeval test: run with --ctxeval")
    for item in items:
        if item.get_closest_marker("ctxeval") is not None:
            item.add_marker(skip)


# ---------------------------------------------------------------------------------------------
# Fixtures for hand-written tests


@pytest.fixture(scope="session")
def ctxeval_options(pytestconfig: pytest.Config) -> RunOptions:
    """The resolved run options (backend, model, window override, prompt, grader folders).
    Override this fixture to change them for a test module."""
    from .session import _options

    try:
        return _options(pytestconfig)
    except CtxEvalError as exc:
        raise pytest.UsageError(str(exc)) from None


@pytest.fixture(scope="session")
def ctxeval_llm(ctxeval_options: RunOptions):
    """An :class:`~pytest_ctxeval.llm.LLM` for the configured backend."""
    return ctxeval_options.make_llm()


@pytest.fixture
def run_scenario(ctxeval_options: RunOptions, tmp_path: Path) -> Callable[..., RunResult]:
    """Factory: ``run_scenario("scenarios/x.yaml", context_window=8000)`` -> :class:`RunResult`.

    The same arguments as :func:`pytest_ctxeval.runner.run_scenario` (``tests/test_plugin.py``
    checks the two signatures agree); what a call leaves out comes from the run options
    (:func:`ctxeval_options`: ``--ctxeval-backend``, ``--ctxeval-model``, the window, the prompt,
    the compactor) instead of the runner's defaults. Each call gets a fresh model client (scenario
    fault plans never leak between runs) and its own session directory under ``tmp_path``.
    """
    import dataclasses

    from .runner import run_scenario as _run_scenario
    from .scenario.schema import Scenario, load_scenario

    counter = iter(range(1_000_000))

    @renamed_keywords  # the keyword's name before the compactor rename, deprecated
    def run(scenario: Scenario | str | Path, *, llm: LLM | None = None, backend: str | None = None,
            model: str | None = None, context_window: int | None = None, compact_at_end: bool | None = None,
            session_dir: str | Path | None = None, prompts: PromptSet | None = None, compactor: Any = None,
            on_prepare: Callable[[Any], None] | None = None) -> RunResult:
        scn = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
        options = ctxeval_options
        if backend is not None or model is not None:
            options = dataclasses.replace(options, backend=backend or options.backend, model=model or options.model)
        return _run_scenario(
            scn, llm=llm or options.make_llm(scn.faults or None),
            context_window=context_window if context_window is not None else options.context_window,
            compact_at_end=options.compact_at_end if compact_at_end is None else compact_at_end,
            session_dir=session_dir or tmp_path / f"session-{next(counter)}",
            prompts=prompts or options.prompts(), compactor=compactor or options.compactor, on_prepare=on_prepare)

    return run


@pytest.fixture
def grade(ctxeval_options: RunOptions) -> Callable[..., list[Verdict]]:
    """``grade(run_result, graders=["verbatim_user_messages"])`` -> one :class:`Verdict` per
    compaction × grader (``verdict.grader`` names it; ``verdict.evidence["compaction"]`` the index)."""
    from .grading.registry import cases_from_run, load_graders

    registry = load_graders(ctxeval_options.graders_dirs)

    def _grade(result: RunResult, graders: list[str] | None = None) -> list[Verdict]:
        specs = registry.select(graders)
        out = []
        for case in cases_from_run(result):
            for v in registry.run(case, specs):
                v.evidence["compaction"] = case.index
                out.append(v)
        return out

    return _grade
