"""The one evaluation loop: a scenario (or a transcript) in, a graded :class:`Outcome` out.

Every front end runs scenarios through :class:`Evaluator`: ``pytest --ctxeval`` (one per
session), ``ctxeval run`` and ``ctxeval grade``, ``ctxeval compare`` and
``pytest --ctxeval-compare-compactors`` (:func:`pytest_ctxeval.compaction.compare.run_compactors`).
:func:`evaluate` is the same for a single scenario.

    >>> from pytest_ctxeval.evaluate import evaluate
    >>> evaluate("scenarios/auth_refactor.yaml", graders=["nine_sections"]).failed  # doctest: +SKIP
    False

One policy for all of them:

* **Errors.** A scenario that cannot be loaded or run (a :class:`~pytest_ctxeval.errors.CtxEvalError`)
  or whose session files cannot be written (an :class:`OSError`: a full disk, a folder that went
  away) becomes an outcome with ``error`` set: every grader fails with that reason and the other
  scenarios still run. A compactor (or a scripted fault plan) the backend cannot play
  (:class:`~pytest_ctxeval.compaction.CompactorUnavailable`) is a *skipped* outcome: every grader
  n/a with the reason. A :class:`~pytest_ctxeval.errors.ProviderError` (bad key, unknown model,
  outage) is raised: one error for the whole run, never a wall of failed graders. A grader that
  raises is an ``error`` verdict (:meth:`GraderRegistry.run`); a ``known_failures`` entry naming an
  unknown grader raises :class:`~pytest_ctxeval.errors.GraderError` (bad input).
* **Judges.** One judge and one re-compacting model per evaluator (a run), made when an LLM grader
  first needs them; each scenario grades on its own *view* of them (same client, gate and
  cassettes, usage totals of its own), so per-scenario usage is exact when scenarios run side by
  side. A scenario whose ``faults:`` script ``judge`` or ``probe`` failures gets a judge of its own,
  so its fault plan never reaches another scenario.
* **Compactors and re-compaction.** The evaluator's compactor (``None``: the reference engine), or
  one given per call; the drift grader's next generation is made by :func:`recompactor`: the
  compactor's own compaction for a non-native compactor, the reference engine's otherwise.
* **Message Batches.** With ``staged=True`` and ``--batch`` (and a cassette store to keep the
  replies), judge requests are set aside while grading; :meth:`Evaluator.settle` sends each stage
  of the whole run as ONE batch and grades again (see :meth:`pytest_ctxeval.grading.judging.Judge.flush`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterable, Sequence

from .compaction.base import CompactorUnavailable
from .errors import CtxEvalError, ProviderError
from .evaluation import Outcome, evaluate_run, evaluate_transcript, make_recompact, merge_usage
from .grading.registry import CompactionCase, GraderRegistry, GraderSpec, load_graders
from .options import RunOptions
from .runner import RunResult, run_scenario
from .scenario.schema import Expectations, Scenario, load_scenario
from .transcript.jsonl import Transcript, read_transcript

__all__ = ["Evaluation", "Evaluator", "evaluate", "recompactor", "SessionDir"]

#: Where a run's transcript goes: a folder, a function of the scenario's name that makes one
#: (called inside the error policy: a folder that cannot be made fails that scenario only), or
#: None for a temporary folder.
SessionDir = Path | str | Callable[[str], Path] | None

_UNSET: Any = object()


def recompactor(compactor: Any, llm: Any, prompts: Any) -> Callable[[CompactionCase], CompactionCase | None]:
    """The drift grader's next generation: ``compactor``'s own compaction when it is not the
    reference engine (``native``), else a manual ``/compact`` of the reference engine."""
    if compactor is not None and not getattr(compactor, "native", False):
        from .compaction.driver import compactor_recompact

        return compactor_recompact(compactor, llm)
    return make_recompact(llm, prompts)


@dataclass
class Evaluation:
    """One scenario or transcript evaluated: the outcome and what it spent."""

    outcome: Outcome
    #: The summariser's model calls (the run itself).
    run_usage: dict[str, Any] = field(default_factory=dict)
    #: Grading it: the judge, probes and re-compactions for drift.
    grading_usage: dict[str, Any] = field(default_factory=dict)
    run: RunResult | None = None
    _grade: Callable[[], tuple[Outcome, dict[str, Any]]] | None = field(default=None, repr=False)

    @property
    def usage(self) -> dict[str, Any]:
        """Everything this evaluation spent (run and grading), priced."""
        return merge_usage([self.run_usage, self.grading_usage])


class Evaluator:
    """Runs and grades scenarios (and grades transcripts) under one policy (see the module doc).

    ``options`` are the run's (:class:`~pytest_ctxeval.options.RunOptions`, defaults: offline);
    ``graders`` the specs to run (default: every grader of ``registry``); ``compactor`` the
    compactor (default: the options'); ``staged`` gathers judge requests for
    :meth:`settle` when the options ask for Message Batches."""

    def __init__(self, options: RunOptions | None = None, registry: GraderRegistry | None = None,
                 graders: Iterable[GraderSpec] | None = None, *, prompts: Any = None, compactor: Any = _UNSET,
                 staged: bool = False):
        self.options = options if options is not None else RunOptions()
        self.registry = registry if registry is not None else load_graders(list(self.options.graders_dirs))
        self.specs = list(graders) if graders is not None else list(self.registry)
        self.prompts = prompts if prompts is not None else self.options.prompts()
        self.compactor = self.options.make_compactor() if compactor is _UNSET else compactor
        self.wants_judge = any(s.kind == "llm" for s in self.specs)
        self.staged = bool(staged and self.options.batch and self.wants_judge)
        self._judge: Any = None
        self._regen: Any = None
        self._lock = threading.Lock()

    # -- the shared judge ------------------------------------------------------------------------
    def shared(self) -> tuple[Any, Any]:
        """The run's judge and re-compacting model, made on first use (None, None without an LLM grader)."""
        if not self.wants_judge:
            return None, None
        with self._lock:  # scenarios running side by side ask at once
            if self._judge is None:
                self._regen = self.options.make_llm()
                self._judge = self.options.make_judge()
                if self.staged and self._judge.llm.store is not None:
                    self._judge.collecting = True
        return self._judge, self._regen

    @property
    def judge_label(self) -> str | None:
        """How reports name the judge (None before one was needed)."""
        return getattr(self._judge, "label", None)

    def shared_usage(self) -> dict[str, Any]:
        """What the run spent outside any one scenario: the Message Batches :meth:`settle` sent."""
        return merge_usage([llm.usage.as_dict() for llm in (getattr(self._judge, "llm", None), self._regen)
                            if llm is not None])

    def _graders_for(self, scenario: Scenario, compactor: Any, prompts: Any) -> tuple[Any, Any, Any]:
        """(judge, re-compacting model, recompact) for grading one scenario, on views of their own."""
        judge, regen = self.shared()
        if judge is None:
            return None, None, None
        if {"judge", "probe"} & set(scenario.faults or {}):
            judge = self.options.make_judge(scenario.faults)  # its fault plan stays its own
        else:
            judge = judge.view()
        regen = regen.view()
        return judge, regen, recompactor(compactor, regen, prompts)

    # -- evaluating --------------------------------------------------------------------------------
    def evaluate(self, source: Scenario | Transcript | str | Path, *, compactor: Any = _UNSET, prompts: Any = None,
                 session_dir: SessionDir = None, expect: Expectations | None = None,
                 summary_text: str | None = None, strict: bool = False) -> Evaluation:
        """Run ``source`` (a scenario, a scenario file, a transcript or a ``.jsonl`` file) and grade it.

        ``compactor``/``prompts`` override the evaluator's for this call; ``session_dir`` is where
        the transcript goes (see :data:`SessionDir`); ``expect``, ``summary_text`` and ``strict``
        apply to transcripts (:func:`pytest_ctxeval.evaluation.evaluate_transcript`)."""
        if isinstance(source, Transcript) or (not isinstance(source, Scenario) and Path(source).suffix == ".jsonl"):
            transcript = source if isinstance(source, Transcript) else read_transcript(source, strict=strict)
            return self._grade_transcript(transcript, expect, summary_text)
        return self._run_scenario(source, self.compactor if compactor is _UNSET else compactor,
                                  prompts if prompts is not None else self.prompts, session_dir)

    def _grade_transcript(self, transcript: Transcript, expect: Expectations | None,
                          summary_text: str | None) -> Evaluation:
        judge, _ = self.shared()
        judge = judge.view() if judge is not None else None
        outcome = evaluate_transcript(transcript, self.registry, self.specs, expect=expect,
                                      summary_text=summary_text, judge=judge)
        return Evaluation(outcome, {}, merge_usage([judge.llm.usage.as_dict()] if judge is not None else []))

    def _run_scenario(self, source: Scenario | str | Path, compactor: Any, prompts: Any,
                      session_dir: SessionDir) -> Evaluation:
        names = [s.name for s in self.specs]
        compactor_name = getattr(compactor, "name", "claude_code")
        if isinstance(source, Scenario):
            label, where = source.display_name, str(source.path) if source.path else source.display_name
        else:
            label, where = Path(source).stem, str(source)

        def failed(*, error: str | None = None, skipped: str | None = None) -> Evaluation:
            return Evaluation(Outcome(name=label, source=where, kind="scenario", graders=names,
                                      compactor=compactor_name, error=error, skipped=skipped))

        try:
            scenario = source if isinstance(source, Scenario) else load_scenario(source)
            label = scenario.display_name
            folder = session_dir(label) if callable(session_dir) else session_dir
            run = run_scenario(scenario, llm=self.options.make_llm(scenario.faults or None),
                               context_window=self.options.context_window,
                               compact_at_end=self.options.compact_at_end, session_dir=folder, prompts=prompts,
                               compactor=compactor)
        except CompactorUnavailable as exc:
            return failed(skipped=str(exc))
        except ProviderError:
            raise  # the endpoint cannot serve the run: one error for it, not a failed scenario
        except CtxEvalError as exc:
            return failed(error=str(exc))
        except OSError as exc:  # a full disk, a folder that went away: this scenario fails, the rest run
            return failed(error=f"{where}: cannot write the session files: "
                                f"{exc.filename or ''} {exc.strerror or exc}".replace("  ", " ").strip())

        def grade() -> tuple[Outcome, dict[str, Any]]:
            judge, regen, recompact = self._graders_for(scenario, compactor, prompts)
            outcome = evaluate_run(run, self.registry, self.specs, judge=judge, recompact=recompact)
            if self.options.backend == "offline":  # an instruction the reference model cannot read
                from .llm.unseen import unseen_instruction_notes

                outcome.notes += unseen_instruction_notes(run.compactions)
            spent = [m.usage.as_dict() for m in (getattr(judge, "llm", None), regen) if m is not None]
            return outcome, merge_usage(spent)

        outcome, graded = grade()
        return Evaluation(outcome, run.usage, graded, run=run, _grade=grade)

    def settle(self, evaluations: Sequence[Evaluation], max_stages: int = 4) -> list[Evaluation]:
        """Send the judge requests each stage set aside as ONE Message Batch and grade again, until
        none is left (stage 1: every first judgement of the run; stage 2: what depended on those,
        e.g. a retry after an unusable reply). The verdicts of the last pass are the run's. A no-op
        unless the evaluator is ``staged`` and a judge was needed."""
        judge = self._judge
        evaluations = list(evaluations)
        if judge is None or not judge.collecting:
            return evaluations

        def regrade() -> None:
            for ev in evaluations:
                if ev._grade is not None:
                    ev.outcome, ev.grading_usage = ev._grade()

        for _ in range(max_stages):
            if not judge.flush():
                break
            regrade()
        judge.collecting = False
        if judge.flush():  # still set aside after the last stage: sent, and graded once more
            regrade()
        return evaluations


def evaluate(source: Scenario | Transcript | str | Path, *, options: RunOptions | None = None,
             graders: Sequence[str] | None = None, registry: GraderRegistry | None = None,
             **kwargs: Any) -> Outcome:
    """Run and grade one scenario (or grade one transcript) and return its :class:`Outcome`.

    ``graders`` names the graders to run (default: all); other keyword arguments go to
    :meth:`Evaluator.evaluate` (``compactor``, ``prompts``, ``session_dir``, ``expect``...)."""
    registry = registry if registry is not None else load_graders(list((options or RunOptions()).graders_dirs))
    specs = registry.select(list(graders)) if graders is not None else None
    evaluator = Evaluator(options, registry, specs)
    return evaluator.evaluate(source, **kwargs).outcome
