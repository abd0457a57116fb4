"""The pytest plugin: ``pytest --ctxeval`` (hooks, options, collection, fixtures, summary only).

* ``--ctxeval`` collects scenario files (ini ``ctxeval_scenarios``, default ``scenarios/``, else the
  built-in library) as one item per scenario × grader: ``scenarios/x.yaml::verbatim_user_messages``.
  Each scenario runs once per session; its graders are the items. It runs only ctxeval items:
  scenario items and tests marked ``@pytest.mark.ctxeval`` (other tests are deselected).
  Without ``--ctxeval`` scenario files are not collected and marked tests are skipped.
* The terminal summary lists per scenario: compactions, tokens before → after, graders
  passed/failed. Its data travels in each item's report, so it is also right under pytest-xdist.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from .errors import CtxEvalError, UsageError
from .evaluation import Outcome, evaluate_run, make_recompact, merge_usage, usage_lines
from .grading import GraderRegistry, GraderSpec, Verdict, cases_from_run, load_graders
from .options import RunOptions, add_run_options, builtin_scenarios_dir
from .runner import RunResult, run_scenario as _run_scenario
from .scenarios import Scenario, load_scenario
from .table import ScenarioRow, format_table

__all__ = ["CtxEvalSession", "ScenarioFile", "GraderItem"]

SESSION = pytest.StashKey["CtxEvalSession"]()
_PROPERTY = "ctxeval_row"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ctxeval", "compaction quality (pytest-ctxeval)")
    group.addoption("--ctxeval", action="store_true", dest="ctxeval", default=False,
                    help="replay the ctxeval scenarios through the compaction engine and grade every "
                         "compaction (offline by default); also runs tests marked @pytest.mark.ctxeval")
    add_run_options(group.addoption, "--ctxeval-")
    group.addoption("--ctxeval-graders", dest="ctxeval_graders", action="append", default=None, metavar="DIR",
                    help="a folder of your own graders (repeatable); the built-in graders always load")
    parser.addini("ctxeval_scenarios", type="paths", default=[],
                  help="scenario files or folders collected under --ctxeval (default: scenarios/, else the "
                       "built-in library)")
    parser.addini("ctxeval_graders", type="paths", default=[], help="folders of your own graders")
    parser.addini("ctxeval_backend", default="offline", help="model backend: offline or anthropic")
    parser.addini("ctxeval_model", default="", help="summariser model for the anthropic backend")
    parser.addini("ctxeval_prompt", type="paths", default=[], help="compaction prompt template to test")
    parser.addini("ctxeval_judge_model", default="", help="model for the LLM graders' judge")
    parser.addini("ctxeval_cassettes", type="paths", default=[], help="cassette folder for the real API")


_INI = ("backend", "model", "judge_model", "prompt", "cassettes")


def _options(config: pytest.Config) -> RunOptions:
    # Precedence: command line > ini > defaults.
    def ini(name: str) -> Any:
        if name not in _INI:
            return None
        value = config.getini(f"ctxeval_{name}")
        if isinstance(value, list):  # "paths" ini values
            return str(value[0]) if value else None
        return value or None

    dirs = [Path(d) for d in (config.getoption("ctxeval_graders") or [])] or list(config.getini("ctxeval_graders"))
    return RunOptions.from_namespace(config.option, ini=ini, graders_dirs=tuple(Path(d) for d in dirs))


def _scenario_paths(config: pytest.Config) -> list[Path]:
    configured = [Path(p) for p in config.getini("ctxeval_scenarios")]
    if configured:
        return [p.resolve() for p in configured]
    default = config.rootpath / "scenarios"
    return [default.resolve() if default.is_dir() else builtin_scenarios_dir()]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "ctxeval: a compaction-quality test; runs only under --ctxeval")
    if not config.getoption("ctxeval"):
        return
    try:
        session = CtxEvalSession(config)
    except CtxEvalError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[SESSION] = session
    config.pluginmanager.register(session, "ctxeval-session")
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        # No explicit paths: collect the scenarios as well as the usual test paths.
        roots = [Path(a).resolve() for a in config.args]
        for path in session.scenario_paths:
            if path.exists() and not any(path == r or r in path.parents for r in roots):
                config.args.append(str(path))


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


class CtxEvalSession:
    """Per-run state, registered as a plugin only under ``--ctxeval``."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.options = _options(config)
        self.options.check_key()
        self.registry: GraderRegistry = load_graders(self.options.graders_dirs)
        self.prompts = self.options.prompts()
        self.scenario_paths = _scenario_paths(config)
        self.outcomes: dict[Path, Outcome] = {}
        self.rows: dict[str, ScenarioRow] = {}
        self.usage: list[dict[str, Any]] = []
        self.tmp_root: Path | None = None
        self._judge: Any = None
        self._regen: Any = None

    def judge(self) -> Any:
        """The session's judge (and the model that re-compacts for drift), made on first use."""
        if self._judge is None:
            self._judge = self.options.make_judge()
            self._regen = self.options.make_llm()
        return self._judge

    # -- collection --------------------------------------------------------------------------
    def is_scenario(self, path: Path) -> bool:
        if path.suffix not in (".yaml", ".yml"):
            return False
        path = path.resolve()
        return any(path == p or p in path.parents for p in self.scenario_paths) or any(
            Path(a).resolve() == path for a in self.config.args)

    @pytest.hookimpl
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        if self.is_scenario(file_path):
            return ScenarioFile.from_parent(parent, path=file_path)
        return None

    # -- running -----------------------------------------------------------------------------
    def outcome(self, path: Path) -> Outcome:
        """The graded run of one scenario, computed once per session."""
        if path not in self.outcomes:
            self.outcomes[path] = self._evaluate(path)
        return self.outcomes[path]

    def _session_dir(self, name: str) -> Path:
        if self.tmp_root is None:
            factory = getattr(self.config, "_tmp_path_factory", None)
            import tempfile
            self.tmp_root = factory.mktemp("ctxeval", numbered=True) if factory else Path(tempfile.mkdtemp(prefix="ctxeval-"))
        d = self.tmp_root / name
        d.mkdir(parents=True, exist_ok=True)
        return d

    def _evaluate(self, path: Path) -> Outcome:
        path = _display_path(self.config, path)
        try:
            scenario = load_scenario(path)
        except CtxEvalError as exc:
            return Outcome(name=path.stem, source=str(path), kind="scenario", error=str(exc),
                           graders=self.registry.names)
        try:
            llm = self.options.make_llm(scenario.faults or None)
            run = _run_scenario(scenario, llm=llm, context_window=self.options.context_window,
                                compact_at_end=self.options.compact_at_end,
                                session_dir=self._session_dir(scenario.display_name), prompts=self.prompts)
        except CtxEvalError as exc:
            return Outcome(name=scenario.display_name, source=str(path), kind="scenario", error=str(exc),
                           graders=self.registry.names)
        self.usage.append(run.usage)
        judge = self.judge() if any(spec.kind == "llm" for spec in self.registry) else None
        return evaluate_run(run, self.registry, judge=judge,
                            recompact=make_recompact(self._regen, self.prompts) if judge else None)

    # -- reporting ---------------------------------------------------------------------------
    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        for key, value in getattr(report, "user_properties", []):
            if key == _PROPERTY:
                row = ScenarioRow.from_dict(json.loads(value))
                old = self.rows.get(row.name)
                if old is not None:
                    for status in ("pass", "fail", "n/a", "ungraded", "xfail", "xpass"):
                        row.counts[status] = row.counts.get(status, 0) + old.counts.get(status, 0)
                self.rows[row.name] = row

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        if not self.rows:
            return
        rows = [self.rows[k] for k in sorted(self.rows)]
        tr = terminalreporter
        if config.getoption("verbose") < 0:
            fails = sum(r.counts.get("fail", 0) for r in rows)
            tr.write_line(f"ctxeval: {len(rows)} scenarios, {sum(r.compactions for r in rows)} compactions, "
                          f"{fails} grader failures")
            return
        tr.write_sep("=", "ctxeval summary")
        for line in format_table(rows):
            tr.write_line(line)
        for line in usage_lines(self.total_usage(), self.options.backend):
            tr.write_line(line)

    def total_usage(self) -> dict[str, Any]:
        extra = [llm.usage.as_dict() for llm in (getattr(self._judge, "llm", None), self._regen) if llm is not None]
        return merge_usage(self.usage + extra)


class _GraderFailed(Exception):
    def __init__(self, verdict: Verdict):
        super().__init__("; ".join(verdict.reasons))
        self.verdict = verdict


def _display_path(config: pytest.Config, path: Path) -> Path:
    """``path`` relative to where pytest was invoked, when it lies below it (for messages)."""
    try:
        return path.relative_to(config.invocation_params.dir)
    except ValueError:
        return path


class ScenarioFile(pytest.File):
    """A scenario YAML file: one item per grader."""

    def collect(self) -> Iterator[pytest.Item]:
        session: CtxEvalSession = self.config.stash[SESSION]
        try:
            scenario = load_scenario(_display_path(self.config, self.path))
        except CtxEvalError as exc:
            raise self.CollectError(str(exc)) from None
        unknown = sorted(set(scenario.known_failures) - set(session.registry.names))
        if unknown:
            raise self.CollectError(f"{scenario.where(('known_failures',))}: known_failures names unknown grader "
                                    f"{unknown[0]!r}; known graders: {', '.join(session.registry.names)}")
        for spec in session.registry:
            yield GraderItem.from_parent(self, name=spec.name, spec=spec,
                                         known_failure=scenario.known_failures.get(spec.name))


class GraderItem(pytest.Item):
    """One grader over every compaction of one scenario."""

    def __init__(self, *, spec: GraderSpec, known_failure: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.spec = spec
        self.add_marker(pytest.mark.ctxeval)
        if known_failure is not None:
            self.add_marker(pytest.mark.xfail(reason=f"known failure: {known_failure}", strict=True,
                                              raises=_GraderFailed))

    def runtest(self) -> None:
        session: CtxEvalSession = self.config.stash[SESSION]
        outcome = session.outcome(self.path)
        verdict = outcome.grader_verdict(self.spec.name)
        row = ScenarioRow(
            name=outcome.name, compactions=len(outcome.cases),
            tokens=[(c.pre_tokens, c.post_tokens) for c in outcome.cases],
            tiers=_tier_counts(outcome.run), error=outcome.error)
        state = outcome.expectation(self.spec.name)
        row.counts = {s: int(state == s or (s == "pass" and state == "ok"))
                      for s in ("pass", "fail", "n/a", "ungraded", "xfail", "xpass")}
        self.user_properties.append((_PROPERTY, json.dumps(row.as_dict())))
        self.user_properties.append(("ctxeval_verdict", json.dumps(verdict.as_dict())))
        if verdict.status == "fail":
            raise _GraderFailed(verdict)
        if verdict.status in ("n/a", "ungraded"):
            label = "n/a" if verdict.status == "n/a" else "UNGRADED"
            # Report the skip at the scenario file, not at this line of the plugin.
            raise pytest.skip.Exception(f"{label}: {'; '.join(verdict.reasons)}", _use_item_location=True)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, _GraderFailed):
            v = excinfo.value.verdict
            lines = [f"{self.spec.name} failed on {self.path.name} (score {v.score:.2f}):"]
            lines += [f"  - {r}" for r in v.reasons]
            return "\n".join(lines)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        # The domain is only the grader name: pytest turns '.' into '::' in a domain that ends the
        # node id, which would show 'tiny::yaml::grader' for 'tiny.yaml::grader'.
        return self.path, 0, self.spec.name


def _tier_counts(run: RunResult | None) -> dict[str, int]:
    counts: dict[str, int] = {}
    if run is not None:
        for e in run.events:
            counts[e.tier] = counts.get(e.tier, 0) + 1
    return counts


# ---------------------------------------------------------------------------------------------
# Fixtures for hand-written tests


@pytest.fixture(scope="session")
def ctxeval_config(pytestconfig: pytest.Config) -> RunOptions:
    """The resolved run options (backend, model, window override, prompt, grader folders).
    Override this fixture to change them for a test module."""
    try:
        return _options(pytestconfig)
    except CtxEvalError as exc:
        raise pytest.UsageError(str(exc)) from None


@pytest.fixture(scope="session")
def ctxeval_llm(ctxeval_config: RunOptions):  # noqa: ANN201 - an LLM
    """An :class:`~pytest_ctxeval.llm.LLM` for the configured backend."""
    return ctxeval_config.make_llm()


@pytest.fixture
def run_scenario(ctxeval_config: RunOptions, tmp_path: Path) -> Callable[..., RunResult]:
    """Factory: ``run_scenario("scenarios/x.yaml", context_window=8000)`` -> :class:`RunResult`.

    Each call gets a fresh model client (scenario fault plans never leak between runs) and its own
    session directory under ``tmp_path``.
    """
    counter = iter(range(1_000_000))

    def run(scenario: Scenario | str | Path, **overrides: Any) -> RunResult:
        scn = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
        kwargs: dict[str, Any] = {
            "llm": overrides.pop("llm", None) or ctxeval_config.make_llm(scn.faults or None),
            "context_window": overrides.pop("context_window", ctxeval_config.context_window),
            "compact_at_end": overrides.pop("compact_at_end", ctxeval_config.compact_at_end),
            "prompts": overrides.pop("prompts", None) or ctxeval_config.prompts(),
            "session_dir": overrides.pop("session_dir", None) or tmp_path / f"session-{next(counter)}",
        }
        if overrides:
            raise UsageError(f"run_scenario() got unknown options: {', '.join(sorted(overrides))}")
        return _run_scenario(scn, **kwargs)

    return run


@pytest.fixture
def grade(ctxeval_config: RunOptions) -> Callable[..., list[Verdict]]:
    """``grade(run_result, graders=["verbatim_user_messages"])`` -> one :class:`Verdict` per
    compaction × grader (``verdict.grader`` names it; ``verdict.evidence["compaction"]`` the index)."""
    registry = load_graders(ctxeval_config.graders_dirs)

    def _grade(result: RunResult, graders: list[str] | None = None) -> list[Verdict]:
        specs = registry.select(graders)
        out = []
        for case in cases_from_run(result):
            for v in registry.run(case, specs):
                v.evidence["compaction"] = case.index
                out.append(v)
        return out

    return _grade
