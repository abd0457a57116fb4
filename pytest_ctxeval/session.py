"""The ``pytest --ctxeval`` session: scenario collection, runs, items, results, reports.

Imported by :mod:`.plugin` only under ``--ctxeval`` (or when a fixture needs it), so a plain
``pytest`` run in a project with the plugin installed does not import the engine, the graders or
the anthropic SDK.

* Results, reports, baselines and A/B: each item's report carries its grader's verdicts
  (``ctxeval_item``), and the first item of a scenario a process runs carries the scenario's data
  once (``ctxeval_scenario``: compactions, summaries, events, what was lost, usage). The controller
  (or the single process) assembles the results document from reports only, so a serial run and
  ``-n auto`` write the same results; both payloads are taken off the report before junitxml and
  other reporters see it.
* Compactors (:mod:`pytest_ctxeval.compaction`): ``--ctxeval-compactor`` picks the one the
  items grade (default ``claude_code``, the reference engine; a scenario's ``known_failures`` apply
  to it only); ``--ctxeval-compare-compactors`` runs every scenario under more compactors as extra
  variants, like the A/B prompt, and the controller builds the compactors table from the reports.
* Each scenario run writes its transcript and persisted results in a fresh folder under pytest's
  basetemp; the paths the engine names to the model are fixed (Claude Code's layout under
  ``~/.claude/projects/ctxeval/``), so tokens, summaries and requests (hence cassettes) do not
  depend on where or how pytest runs.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Iterator

import pytest

from .core.words import plural
from .reporting.baseline import (
    DEFAULT_TOLERANCE, RunDiff, ab_table, diff_runs, format_ab, format_run_diff, load_document, write_baseline,
)
from .errors import CtxEvalError, GraderError, ProviderError, UsageError
from .evaluation import Outcome, merge_usage, usage_lines
from .results import outcome_entry, results_document
from .grading.registry import GraderRegistry, GraderSpec, Verdict, load_graders
from .options import RunOptions, builtin_scenarios_dir
from .reporting.report import write_report
from .core.renamed import RENAMED_INI
from .core.terminal import safe_text
from .runner import RunResult
from .scenario.schema import load_scenario
from .reporting.table import ScenarioRow, format_table

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

__all__ = ["CtxEvalSession", "ScenarioFile", "GraderItem", "SESSION"]

SESSION = pytest.StashKey["CtxEvalSession"]()
_PROPERTY = "ctxeval_row"
_ITEM = "ctxeval_item"           # one grader's verdicts (per item)
_SCENARIO = "ctxeval_scenario"   # a scenario's data (once per scenario and process)
_PAYLOADS = (_ITEM, _SCENARIO)
MAIN, COMPARE = "main", "compare"
COMPACTOR = "compactor:"  # + a compactor's name: the variant running it (--ctxeval-compare-compactors)
REPORT_SUFFIXES = (".html", ".htm", ".json", ".md")



_INI = ("backend", "model", "judge_model", "prompt", "session_memory_prompt", "cassettes", "compactor", "base_url",
        "provider")


def _options(config: pytest.Config) -> RunOptions:
    # Precedence: command line > ini > defaults.
    used: list[tuple[str, str, str]] = []  # (ini key, the value read from it, the option overriding it)

    def ini(name: str) -> Any:
        if name not in _INI:
            return None
        key = f"ctxeval_{name}"
        if not config.getini(key) and key in RENAMED_INI and config.getini(RENAMED_INI[key]):
            key = RENAMED_INI[key]  # the old key
        value = config.getini(key)
        if isinstance(value, list):  # "paths" ini values
            value = str(value[0]) if value else None
        if value:
            used.append((key, str(value), "--ctxeval-" + name.replace("_", "-")))
        return value or None

    dirs = [Path(d) for d in (config.getoption("ctxeval_graders") or [])]
    if not dirs:
        dirs = list(config.getini("ctxeval_graders"))
        used += [("ctxeval_graders", str(d), "--ctxeval-graders") for d in dirs]
    try:
        return RunOptions.from_namespace(config.option, ini=ini, graders_dirs=tuple(Path(d) for d in dirs))
    except UsageError as exc:
        where = config.inipath.name if config.inipath else "the ini file"
        for key, value, option in used:
            if value in str(exc):
                raise UsageError(f"{exc} (set by the ini key {key} in {where}: fix it there, or override it "
                                 f"with {option})") from None
        raise


def _scenario_paths(config: pytest.Config) -> list[Path]:
    configured = [Path(p) for p in config.getini("ctxeval_scenarios")]
    if configured:
        return [p.resolve() for p in configured]
    default = config.rootpath / "scenarios"
    return [default.resolve() if default.is_dir() else builtin_scenarios_dir()]


_TURNS_KEY = re.compile(rb"^turns[ \t]*:", re.M)


def _looks_like_scenario(path: Path) -> bool:
    """A YAML file with a top-level ``turns:`` key (the one field every scenario has)."""
    try:
        return _TURNS_KEY.search(path.read_bytes()) is not None
    except OSError:
        return False


class CtxEvalSession:
    """Per-run state, registered as a plugin only under ``--ctxeval``."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.options = _options(config)
        self.options.check_key()
        self.registry: GraderRegistry = load_graders(self.options.graders_dirs)
        self.prompts = self.options.prompts()
        compare = config.getoption("ctxeval_compare_prompt")
        if compare and not Path(compare).is_file():
            raise UsageError(f"compare prompt {compare}: no such file")
        self.compare_path = Path(compare) if compare else None
        self.compare_prompts = self.options.prompts(self.compare_path) if self.compare_path else None
        # The compactor the items grade (--ctxeval-compactor, default the reference engine) and the ones
        # compared with it (--ctxeval-compare-compactors): every spec is checked now.
        self.compactor = self.options.make_compactor()
        self.compactor_name = self.compactor.name if self.compactor is not None else "claude_code"
        self.compared: dict[str, Any] = {}
        from .compaction import split_specs

        for spec in split_specs(config.getoption("ctxeval_compare_compactors") or ""):
            other = self.options.make_compactor(spec)
            if other is not None and other.name != self.compactor_name:
                self.compared.setdefault(other.name, other)
        for prompts in (self.prompts, self.compare_prompts):
            if prompts is not None:  # render once now: a template error is a usage error, not 90 failures
                prompts.fingerprint  # noqa: B018 - the property renders the templates
                prompts.session_memory_template()
        self.scenario_paths = _scenario_paths(config)
        self.tolerance = config.getoption("ctxeval_tolerance")
        self.tolerance = DEFAULT_TOLERANCE if self.tolerance is None else self.tolerance
        self.baseline_path = config.getoption("ctxeval_baseline")
        self.baseline = load_document(self.baseline_path) if self.baseline_path else None
        self.save_baseline = _out_path(config.getoption("ctxeval_save_baseline"))
        self.reports = [_out_path(p) or Path(p) for p in (config.getoption("ctxeval_report") or [])]
        # What each compaction lost is for the reports and baselines only (not the terminal summary).
        self.keeps_lost = bool(self.reports or self.save_baseline or self.baseline_path)
        for p in self.reports:
            if p.suffix.lower() not in REPORT_SUFFIXES:
                raise UsageError(f"--ctxeval-report {p}: the suffix says which report: .html, .json or .md")
        self.is_worker = hasattr(config, "workerinput")
        if self.options.batch and (self.is_worker or getattr(config.option, "numprocesses", None)):
            # xdist hands each worker its items a few at a time: no process sees a stage of the
            # whole run, so each judge call would go as its own batch (issue 16, item 10).
            raise UsageError("--ctxeval-batch sends each stage's judge requests of the whole run as one Message "
                             "Batch, which pytest-xdist workers cannot share: drop -n (pytest --ctxeval already "
                             "runs scenarios side by side, bounded by --ctxeval-concurrency)")
        # Worker side (or the single process): runs, graded outcomes, their results entries.
        self.outcomes: dict[tuple[str, Path], Outcome] = {}
        self.entries: dict[tuple[str, Path], dict[str, Any]] = {}
        self.sent: set[tuple[str, str]] = set()
        # Controller side (or the single process): what the reports carried.
        self.rows: dict[str, ScenarioRow] = {}
        self.scenarios: dict[tuple[str, str], dict[str, Any]] = {}
        self.items: dict[tuple[str, str], dict[str, Any]] = {}
        self.document: dict[str, Any] | None = None
        self.comparison: RunDiff | None = None
        self.written: list[Path] = []
        self.written_error: str | None = None
        self.strict_prompt: list[str] = []  # --ctxeval-strict-prompt: the lines it fails the run with
        self.tmp_root: Path | None = None
        self.names: dict[str, Path] = {}  # scenario name -> its file: names key results and baselines
        # The one evaluation loop (pytest_ctxeval.evaluate): its error, judge and batch policy.
        from .evaluate import Evaluator

        self.evaluator = Evaluator(self.options, self.registry, prompts=self.prompts, compactor=self.compactor,
                                   staged=not self.is_worker)
        self._evaluations: dict[tuple[str, Path], Any] = {}
        self._wanted: list[Path] = []       # the scenario files of the selected items, in order
        #: The first selected item of each scenario file: it carries the error of a scenario that
        #: could not run (the same in every xdist worker: each collects and selects alike).
        self._first: dict[Path, str] = {}
        # scenarios loaded ahead of their run (at collection, or before a concurrent run), each used once
        self._loaded: dict[Path, Any] = {}
        self._failed: dict[tuple[str, Path], BaseException] = {}
        self._prefetched = False

    def judge(self) -> Any:
        """The session's judge (made on first use; each scenario grades on a view of it)."""
        return self.evaluator.shared()[0]

    # -- collection --------------------------------------------------------------------------
    def is_scenario(self, path: Path) -> bool:
        if path.suffix not in (".yaml", ".yml"):
            return False
        path = path.resolve()
        if any(path == p or p in path.parents for p in self.scenario_paths) or any(
                Path(a).resolve() == path for a in self.config.args):
            return True
        # A folder named on the command line is searched as `ctxeval run FOLDER` searches it, for
        # the YAML files that are scenarios (a top-level `turns:`), so a mkdocs.yml or a CI workflow
        # under it is passed over. The folder pytest runs in (`pytest --ctxeval .`) is not: there
        # the configured scenarios folder decides, as it does with no argument.
        return any(d in path.parents for d in self._argument_folders) and _looks_like_scenario(path)

    @functools.cached_property
    def _argument_folders(self) -> tuple[Path, ...]:
        if self.config.args_source != pytest.Config.ArgsSource.ARGS:
            return ()
        here = self.config.invocation_params.dir.resolve()
        folders = (Path(a.split("::")[0]).resolve() for a in self.config.args)
        return tuple(d for d in folders if d.is_dir() and d != here and d not in here.parents)

    @pytest.hookimpl
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        if self.is_scenario(file_path):
            return ScenarioFile.from_parent(parent, path=file_path)
        return None

    # -- running -----------------------------------------------------------------------------
    @property
    def variants(self) -> tuple[str, ...]:
        prompts = (MAIN, COMPARE) if self.compare_prompts is not None else (MAIN,)
        return prompts + tuple(COMPACTOR + name for name in self.compared)

    def compactor_of(self, variant: str) -> Any:
        """The compactor a variant runs under (None: the reference engine)."""
        return self.compared[variant[len(COMPACTOR):]] if variant.startswith(COMPACTOR) else self.compactor

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        """Remember which scenarios the selected items grade (after -k, -m and deselection)."""
        self._wanted = list(dict.fromkeys(item.path for item in items if isinstance(item, GraderItem)))
        for item in items:
            if isinstance(item, GraderItem):
                self._first.setdefault(item.path, item.name)

    def outcome(self, path: Path, variant: str = MAIN) -> Outcome:
        """The graded run of one scenario under one prompt, computed once per process."""
        key = (variant, path)
        if not self._prefetched:
            self._prefetched = True
            self.prefetch()
        if key in self._failed:
            raise self._failed[key]
        if key not in self.outcomes:
            self._store(key, *self._evaluate(path, variant))
        return self.outcomes[key]

    def _store(self, key: tuple[str, Path], outcome: Outcome, usage: dict[str, Any]) -> None:
        self.outcomes[key] = o = outcome
        entry = outcome_entry(o, lost=self.keeps_lost)
        entry["usage"] = usage
        entry["run_usage"] = merge_usage([o.run.usage]) if o.run is not None else merge_usage([])
        entry["model"] = o.run.requests[0].get("model") if o.run is not None and o.run.requests else None
        self.entries[key] = entry

    def prefetch(self) -> None:
        """Run every selected scenario (under every variant) concurrently, before the first item.

        The engine is cheap and a run waits on the model, so scenarios run side by side on
        threads; ``--ctxeval-concurrency`` stays the one bound on requests in flight (the gate every
        model client of the run shares). Each scenario's usage is counted on its own views of the
        judge and the re-compacting model, and names are claimed in file order first, so results,
        reports and cassettes are those of a serial run. Serial (as before) with a concurrency of
        1, in an xdist worker (xdist spreads the scenarios), for a single scenario, and offline
        without a simulated latency (nothing to wait on: threads would only take turns)."""
        jobs = [(variant, path) for path in self._wanted for variant in self.variants]
        serial = self.is_worker or self.options.side_by_side(len(jobs)) == 1
        staged = self.evaluator.staged  # --ctxeval-batch: every scenario graded before the batches go
        if serial and not staged:
            return
        for path in self._wanted:  # names claimed in file order, as a serial run claims them
            shown = _display_path(self.config, path)
            try:
                scenario = self._loaded.get(shown) or load_scenario(shown)
                self._loaded[shown] = scenario
            except CtxEvalError:
                continue
            self.names.setdefault(scenario.display_name, shown)
        self._root()  # the run's folder exists before the threads start
        from concurrent.futures import ThreadPoolExecutor

        def one(key: tuple[str, Path]) -> None:
            try:
                self._store(key, *self._evaluate(key[1], key[0]))
            except BaseException as exc:  # noqa: BLE001 - raised again by the item that asks for it
                self._failed[key] = exc

        if serial:
            for job in jobs:
                one(job)
        else:
            workers = min(len(jobs), 4 * self.options.concurrency)
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ctxeval-scenario") as pool:
                list(pool.map(one, jobs))
        if staged:
            self._settle([job for job in jobs if job in self._evaluations])

    def _settle(self, jobs: list[tuple[str, Path]]) -> None:
        """``--ctxeval-batch``: send each stage's judge requests of the whole run as ONE Message
        Batch (:meth:`Evaluator.settle`), then store the final verdicts. The batches' cost belongs to
        no one scenario: the first scenario's entry carries it, so the run's totals hold it."""
        try:
            self.evaluator.settle([self._evaluations[job] for job in jobs])
        except BaseException as exc:  # noqa: BLE001 - a ProviderError: raised by every item that asks
            for job in jobs:
                self._failed[job] = exc
            return
        for n, job in enumerate(jobs):
            evaluation = self._evaluations[job]
            usage = evaluation.usage if n else merge_usage([evaluation.usage, self.evaluator.shared_usage()])
            self._store(job, evaluation.outcome, usage)

    def _session_dir(self, variant: str, name: str) -> Path:
        """A fresh folder for one run's transcript and persisted results, under pytest's basetemp.
        Its path never reaches the results: the engine names Claude Code's layout under a fixed
        project to the model (``~/.claude/projects/ctxeval/<session>.jsonl``), whatever the folder."""
        parent = self._root() / variant
        parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=parent))

    def _root(self) -> Path:
        if self.tmp_root is None:
            factory = getattr(self.config, "_tmp_path_factory", None)
            self.tmp_root = factory.mktemp("ctxeval", numbered=True) if factory else Path(tempfile.mkdtemp(prefix="ctxeval-"))
        return self.tmp_root

    def _evaluate(self, path: Path, variant: str) -> tuple[Outcome, dict[str, Any]]:
        key = (variant, path)
        path = _display_path(self.config, path)
        prompts = self.compare_prompts if variant == COMPARE and self.compare_prompts is not None else self.prompts
        compactor = self.compactor_of(variant)
        try:
            scenario = self._loaded.pop(path, None) or load_scenario(path)
        except CtxEvalError as exc:
            return Outcome(name=path.stem, source=str(path), kind="scenario", error=str(exc),
                           graders=self.registry.names), merge_usage([])
        other = self.names.setdefault(scenario.display_name, path)
        if other != path:
            return Outcome(name=f"{scenario.display_name} ({path})", source=str(path), kind="scenario",
                           error=f"{path}: the name {scenario.display_name!r} is also the name of {other}; "
                                 "scenario names must be unique within a run (change 'name:')",
                           graders=self.registry.names), merge_usage([])
        evaluation = self.evaluator.evaluate(
            scenario, compactor=compactor, prompts=prompts,
            session_dir=lambda name: self._session_dir(variant, name))
        self._evaluations[key] = evaluation
        return evaluation.outcome, evaluation.usage

    def payloads(self, item: GraderItem) -> list[tuple[str, str]]:
        """The user properties an item's report carries to the controller (see the module doc)."""
        props = []
        data: dict[str, Any] = {"grader": item.spec.name}
        for variant in self.variants:
            self.outcome(item.path, variant)
            entry = self.entries[(variant, item.path)]
            key = entry["source"]
            data.setdefault("source", key)
            data.setdefault("name", entry["name"])
            data[variant] = {
                "aggregate": entry["graders"].get(item.spec.name),
                "compactions": {str(c["index"]): v for c in entry["compactions"]
                                for v in c["verdicts"] if v["grader"] == item.spec.name}}
            if (variant, key) not in self.sent:
                self.sent.add((variant, key))
                scenario = copy.deepcopy(entry)
                scenario["graders"] = {}
                for c in scenario["compactions"]:
                    c["verdicts"] = []
                scenario["judge"] = self.evaluator.judge_label
                props.append((_SCENARIO, json.dumps({"variant": variant, "entry": scenario}, ensure_ascii=False)))
        props.append((_ITEM, json.dumps(data, ensure_ascii=False)))
        return props

    # -- reporting ---------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = getattr(report, "user_properties", None) or []
        # A crashed grader's item errors at setup: its payloads travel with that report.
        if report.when == "call" or (report.when == "setup" and report.failed):
            for key, value in props:
                if key == _PROPERTY:
                    row = ScenarioRow.from_dict(json.loads(value))
                    old = self.rows.get(row.name)
                    if old is not None:
                        for status in ("pass", "fail", "n/a", "ungraded", "xfail", "xpass", "error"):
                            row.counts[status] = row.counts.get(status, 0) + old.counts.get(status, 0)
                    self.rows[row.name] = row
                elif key == _SCENARIO and not self.is_worker:
                    data = json.loads(value)
                    self.scenarios.setdefault((data["variant"], data["entry"]["source"]), data["entry"])
                elif key == _ITEM and not self.is_worker:
                    data = json.loads(value)
                    self.items[(data["source"], data["grader"])] = data
        if not self.is_worker and any(k in _PAYLOADS for k, _ in props):
            # The controller has what it needs: keep junitxml and other reporters lean.
            report.user_properties = [(k, v) for k, v in props if k not in _PAYLOADS]

    def results(self, variant: str = MAIN) -> dict[str, Any]:
        """The results document of this session under one prompt, from the reports alone."""
        order = {name: i for i, name in enumerate(self.registry.names)}
        sources = sorted({src for src, _ in self.items})
        entries, usages, run_usages = [], [], []
        for source in sources:
            items = sorted((d for (src, _), d in self.items.items() if src == source),
                           key=lambda d: (order.get(d["grader"], len(order)), d["grader"]))
            base = self.scenarios.get((variant, source))
            entry = copy.deepcopy(base) if base is not None else {
                "name": items[0]["name"], "source": source, "kind": "scenario", "context_window": None,
                "error": "no scenario data reached the controller (a worker crashed?)", "graders": {},
                "compactions": [], "messages": {}}
            usages.append(entry.pop("usage", None) or {})
            run_usages.append(entry.pop("run_usage", None) or {})
            entry.pop("judge", None)
            entry.pop("model", None)
            for d in items:
                part = d.get(variant) or {}
                if part.get("aggregate") is not None:
                    entry["graders"][d["grader"]] = part["aggregate"]
                for c in entry["compactions"]:
                    v = part.get("compactions", {}).get(str(c["index"]))
                    if v is not None:
                        c["verdicts"].append(v)
            entries.append(entry)
        entries.sort(key=lambda e: (e["name"], e["source"]))
        prompts = self.compare_prompts if variant == COMPARE and self.compare_prompts is not None else self.prompts
        meta = [s for (v, _), s in sorted(self.scenarios.items()) if v == variant]
        model = next((s.get("model") for s in meta if s.get("model")), None) or self.options.model
        judge = next((s.get("judge") for s in meta if s.get("judge")), None)
        doc = results_document([], usage=merge_usage(usages), backend=self.options.backend, model=model,
                               prompt=prompts.record(_prompt_label(self.config, prompts.compact_path)),
                               judge=judge,
                               compactor=getattr(self.compactor_of(variant), "name", None))
        if self.compared:  # the compactors' own model calls, for the compactors table
            doc["run_usage"] = merge_usage(run_usages)
        doc["scenarios"] = entries
        return doc

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.is_worker or not self.items:
            return
        doc = self.results(MAIN)
        if self.compare_prompts is not None:
            other = self.results(COMPARE)
            a_label = f"{Path(other['prompt']['path']).name} ({other['prompt']['fingerprint']})"
            b_label = f"{Path(doc['prompt']['path']).name} ({doc['prompt']['fingerprint']})"
            doc["ab"] = {"prompt": other["prompt"], "table": ab_table(other, doc, a_label=a_label, b_label=b_label),
                         "scenarios": other["scenarios"], "usage": other["usage"]}
        if self.compared:
            from .compaction.compare import compactor_table
            from .llm import DEFAULT_MODEL

            docs = {self.compactor_name: doc, **{name: self.results(COMPACTOR + name) for name in self.compared}}
            table = compactor_table(docs, backend=self.options.backend, model=self.options.model,
                                   price_model=DEFAULT_MODEL if self.options.backend == "offline" else None)
            table["results"] = {name: d["scenarios"] for name, d in docs.items() if name != self.compactor_name}
            doc["compactors"] = table
        from .reporting.prompt_coverage import coverage_note

        # Only the reference engine sends this prompt; other compactors write their own.
        engine = getattr(self.compactor_of(MAIN), "name", "claude_code") == "claude_code"
        note = coverage_note(doc["prompt"]["text"], self.baseline, prompt=doc["prompt"]) if engine else None
        if note is not None:
            doc["prompt_coverage"] = note
        if self.config.getoption("ctxeval_strict_prompt"):
            from .reporting.prompt_coverage import strict_failure

            self.strict_prompt = strict_failure(note, self.options.backend)
            if self.strict_prompt and session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.baseline is not None:
            self.comparison = diff_runs(self.baseline, doc, tolerance=self.tolerance,
                                      name=_shown(self.config, self.baseline_path))
            doc["comparison"] = self.comparison.as_dict()
            if self.comparison.failed and session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
        self.document = doc
        try:
            if self.save_baseline is not None:
                self.written.append(write_baseline(self.save_baseline, doc))
            for path in self.reports:
                self.written.append(write_report(path, doc, baseline=self.baseline))
        except Exception as exc:  # noqa: BLE001 - reported in the summary, and the run fails
            self.written_error = str(exc) if isinstance(exc, CtxEvalError) else f"{type(exc).__name__}: {exc}"
            if session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        if not self.rows and not hasattr(config, "workerinput") and not any(
                p.is_file() or any(q.suffix in (".yaml", ".yml") for q in p.rglob("*")) for p in self.scenario_paths):
            shown = ", ".join(str(p) for p in self.scenario_paths)
            terminalreporter.write_line(f"ctxeval: no scenario files (*.yaml, *.yml) under {shown}: write one "
                                        "(docs/scenarios.md) or point the ini key ctxeval_scenarios at yours",
                                        yellow=True)
        if not self.rows:
            return
        if (not config.getini("ctxeval_scenarios") and self.scenario_paths == [builtin_scenarios_dir()]
                and config.args_source != pytest.Config.ArgsSource.ARGS
                and not (config.rootpath / "scenarios").is_dir()):
            terminalreporter.write_line(
                f"ctxeval: no scenarios/ folder in {config.rootpath} and no ctxeval_scenarios set: ran the built-in "
                f"library ({self.scenario_paths[0]}); add scenarios/ or set ctxeval_scenarios to run your own",
                yellow=True)
        rows = [self.rows[k] for k in sorted(self.rows)]
        tr = terminalreporter
        doc = self.document
        ungraded = sum(r.counts.get("ungraded", 0) for r in rows)
        errors = sum(r.counts.get("error", 0) for r in rows)
        if config.getoption("verbose") < 0:
            fails = sum(r.counts.get("fail", 0) for r in rows)
            tr.write_line(f"ctxeval: {plural(len(rows), 'scenario')}, "
                          f"{plural(sum(r.compactions for r in rows), 'compaction')}, "
                          f"{plural(fails, 'grader failure')}, {plural(errors, 'grader error')}, {ungraded} ungraded")
        else:
            tr.write_sep("=", "ctxeval summary")
            for line in format_table(rows):
                tr.write_line(safe_text(line))
            if errors:
                tr.write_line(f"ctxeval: {errors} grader error{'s' if errors > 1 else ''}: a grader raised (see the "
                              "ERROR items); the run fails", red=True)
            if ungraded:
                strict = config.getoption("ctxeval_strict")
                tr.write_line(f"ctxeval: {ungraded} ungraded verdict{'s' if ungraded > 1 else ''} (a judge could not "
                              "decide)" + ("; failures under --ctxeval-strict" if strict else
                                           "; --ctxeval-strict makes them failures"), red=strict)
            if doc is not None:
                usage = merge_usage([doc["usage"]] + ([doc["ab"]["usage"]] if "ab" in doc else []))
                for line in usage_lines(usage, self.options.backend):
                    tr.write_line(safe_text(line))
        for entry in (doc or {}).get("scenarios", []):  # e.g. an instruction the offline model cannot read
            for note in entry.get("notes") or []:
                tr.write_line(safe_text(f"ctxeval: note: {entry.get('name')}: {note}"), yellow=True)
        if doc is not None:  # planted facts (issue 19): survival per type and round, per compactor
            from .reporting.facts_table import survival_lines

            runs = [(self.compactor_name, doc["scenarios"])] + list((doc.get("compactors") or {}).get("results", {}).items())
            tables = [survival_lines(entries, label=name if len(runs) > 1 else None) for name, entries in runs]
            if any(tables):
                tr.write_sep("-", "ctxeval planted facts: share held per round")
                for line in (l for t in tables for l in t):
                    tr.write_line(safe_text(line))
        if doc is not None and "compactors" in doc:
            from .compaction.compare import format_compactor_table

            tr.write_sep("-", f"ctxeval compactors: {', '.join(doc['compactors']['compactors'])}")
            for line in format_compactor_table(doc["compactors"]):
                tr.write_line(safe_text(line))
        if doc is not None and "ab" in doc:
            tr.write_sep("-", "ctxeval A/B: prompt A vs prompt B")
            for line in format_ab(doc["ab"]["table"]):
                tr.write_line(safe_text(line))
        if self.comparison is not None:
            cmp = self.comparison
            tr.write_sep("-", "ctxeval baseline", red=cmp.failed, green=not cmp.failed)
            for line in format_run_diff(cmp, coverage=False):
                tr.write_line(safe_text(line), red=line.lstrip().startswith("REGRESSED"))
        if doc is not None and doc.get("prompt_coverage"):
            from .reporting.prompt_coverage import HEADING, format_coverage

            note = doc["prompt_coverage"]
            tr.write_sep("-", f"ctxeval {HEADING}", yellow=bool(note.get("unseen")))
            for line in format_coverage(note):
                tr.write_line(safe_text(line), yellow=" NOT SEEN OFFLINE " in line)
        for line in self.strict_prompt:
            tr.write_line(safe_text(f"ctxeval: {line}" if not line.startswith(" ") else line), red=True)
        for path in self.written:
            tr.write_line(f"ctxeval: wrote {_shown(config, path)}")
        if self.written_error:
            tr.write_line(safe_text(f"ctxeval: error: {self.written_error}"), red=True)


class _GraderFailed(Exception):
    def __init__(self, verdict: Verdict, strict: bool = False):
        super().__init__("; ".join(verdict.reasons))
        self.verdict = verdict
        self.strict = strict


def _out_path(value: str | None) -> Path | None:
    """The absolute output path, checked now (a folder or a socket fails before the run)."""
    if not value:
        return None
    from .core.outputs import check_output_path

    return check_output_path(Path(value).absolute())


def _shown(config: pytest.Config, path: str | Path) -> str:
    """A path as the user would type it: relative to where pytest was invoked, when below it."""
    p = Path(path).absolute()
    try:
        return str(p.relative_to(config.invocation_params.dir))
    except ValueError:
        return str(p)


def _prompt_label(config: pytest.Config, path: Path) -> str:
    """The prompt's path for the results: relative to the invocation folder, ``<builtin>/NAME``
    for a built-in prompt (never a machine-dependent site-packages path)."""
    from .engine.prompt import BUILTIN_PROMPTS

    p = Path(path).absolute()
    if p.parent == BUILTIN_PROMPTS:
        return f"<builtin>/{p.name}"
    return _shown(config, p)


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
        shown = _display_path(self.config, self.path)
        try:
            scenario = load_scenario(shown)
        except CtxEvalError as exc:
            # One error for this file; the other scenarios (and the user's tests) still run.
            yield BrokenScenarioItem.from_parent(self, name="load", message=str(exc))
            return
        session._loaded[shown] = scenario  # its run takes it from here instead of reading the file again
        unknown = sorted(set(scenario.known_failures) - set(session.registry.names))
        if unknown:
            raise self.CollectError(f"{scenario.where(('known_failures',))}: known_failures names unknown grader "
                                    f"{unknown[0]!r}; known graders: {', '.join(session.registry.names)}")
        for spec in session.registry:
            # known_failures describe the reference engine: under another compactor items are graded as they are.
            known = scenario.known_failures.get(spec.name) if session.compactor_name == "claude_code" else None
            yield GraderItem.from_parent(self, name=spec.name, spec=spec, known_failure=known)


class _Unloadable(Exception):
    pass


class BrokenScenarioItem(pytest.Item):
    """A scenario file that cannot be loaded: one failed item naming the file, line and field (a
    collection error would interrupt the whole session, losing every other scenario's results)."""

    def __init__(self, *, message: str, **kwargs: Any):
        super().__init__(**kwargs)
        self.message = message
        self.add_marker(pytest.mark.ctxeval)

    def runtest(self) -> None:
        raise _Unloadable(self.message)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | TerminalRepr:
        if isinstance(excinfo.value, _Unloadable):
            return safe_text(str(excinfo.value))
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, "cannot be loaded"


class GraderItem(pytest.Item):
    """One grader over every compaction of one scenario."""

    def __init__(self, *, spec: GraderSpec, known_failure: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.spec = spec
        self._verdict: Verdict | None = None
        self.add_marker(pytest.mark.ctxeval)
        # -m selects by grader kind: -m ctxeval_rule, -m "not ctxeval_llm" (-k selects by name).
        self.add_marker(pytest.mark.ctxeval_llm if spec.kind == "llm" else pytest.mark.ctxeval_rule)
        if known_failure is not None:
            self.add_marker(pytest.mark.xfail(reason=f"known failure: {known_failure}", strict=True,
                                              raises=_GraderFailed))

    def _graded(self) -> Verdict:
        """The grader's verdict over the scenario, with the item's report payloads attached (once)."""
        if (done := getattr(self, "_verdict", None)) is not None:
            return done
        session: CtxEvalSession = self.config.stash[SESSION]
        try:
            outcome = session.outcome(self.path)
        except ProviderError as exc:
            # The endpoint cannot serve the run (bad key, unknown model, outage, refusal): stop the
            # session with that one error instead of failing every grader of every scenario.
            pytest.exit(f"ctxeval: {exc}", returncode=pytest.ExitCode.USAGE_ERROR)
        verdict = outcome.grader_verdict(self.spec.name)
        row = ScenarioRow(
            name=outcome.name, compactions=len(outcome.cases),
            tokens=[(c.pre_tokens, c.post_tokens) for c in outcome.cases],
            tiers=_tier_counts(outcome.run), error=outcome.error)
        state = outcome.expectation(self.spec.name)
        row.counts = {s: int(state == s or (s == "pass" and state == "ok"))
                      for s in ("pass", "fail", "n/a", "ungraded", "xfail", "xpass", "error")}
        if self._not_run_by(session, outcome) is not None:  # counted once, by the item that carries the error
            row.counts = dict.fromkeys(row.counts, 0)
        self.user_properties.append((_PROPERTY, json.dumps(row.as_dict())))
        self.user_properties.append(("ctxeval_verdict", json.dumps(verdict.as_dict())))
        self.user_properties.extend(session.payloads(self))
        self._verdict = verdict
        return verdict

    def setup(self) -> None:
        # A grader that raised is an ERROR of this item (not a failure, never a skip), reported with
        # the grader's own exception: the traceback ends in the grader's file.
        verdict = self._graded()
        if verdict.status == "error":
            if verdict.exc is not None:
                raise verdict.exc
            raise GraderError("; ".join(verdict.reasons))

    def _not_run_by(self, session: CtxEvalSession, outcome: Outcome) -> str | None:
        """For a scenario that could not run (its error is in every grader's verdict), the item
        that reports that error when it is not this one: the scenario's first selected item."""
        first = session._first.get(self.path, self.name)
        return first if outcome.error is not None and outcome.skipped is None and first != self.name else None

    def runtest(self) -> None:
        verdict = self._graded()
        session: CtxEvalSession = self.config.stash[SESSION]
        first = self._not_run_by(session, session.outcome(self.path))
        if first is not None:  # one failure for a scenario that never ran, not one per grader
            raise pytest.skip.Exception(safe_text(f"{self.spec.name}: not run: the scenario could not run; "
                                                  f"its error is reported by {self.path.name}::{first}"),
                                        _use_item_location=True)
        if verdict.status == "fail":
            raise _GraderFailed(verdict)
        if verdict.status == "ungraded" and self.config.getoption("ctxeval_strict"):
            raise _GraderFailed(verdict, strict=True)
        if verdict.status in ("n/a", "ungraded"):
            label = "n/a" if verdict.status == "n/a" else "UNGRADED"
            # Report the skip at the scenario file, not at this line of the plugin; -rs shows the
            # file and the reason only, so the reason names the grader.
            raise pytest.skip.Exception(safe_text(f"{self.spec.name}: {label}: {'; '.join(verdict.reasons)}"),
                                        _use_item_location=True)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | TerminalRepr:
        if isinstance(excinfo.value, _GraderFailed):
            v = excinfo.value.verdict
            session: CtxEvalSession = self.config.stash[SESSION]
            error = session.outcomes.get((MAIN, self.path))
            if error is not None and error.error is not None and error.skipped is None:
                return safe_text(f"{self.path.name} could not run, so no grader could grade it (the results count "
                                 f"it once, as an error of the scenario; the other items are skipped):\n  - {error.error}")
            lines = [f"{self.spec.name} failed on {self.path.name} (score {v.score:.2f}):" if not excinfo.value.strict
                     else f"{self.spec.name} is UNGRADED on {self.path.name} (a judge could not decide), a failure "
                          "under --ctxeval-strict:"]
            lines += [f"  - {r}" for r in v.reasons]
            return safe_text("\n".join(lines))  # reasons quote transcript text: no terminal escapes
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
