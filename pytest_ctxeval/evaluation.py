"""Run-and-grade primitives shared by every front end (:mod:`pytest_ctxeval.evaluate` drives them):
:class:`Outcome` (one scenario or transcript graded), :func:`aggregate` (one verdict over several
compactions), :func:`evaluate_run` and :func:`evaluate_transcript` (grade a run or a transcript),
:func:`make_recompact` (the drift grader's next generation) and the usage totals
(:func:`merge_usage`, :func:`usage_lines`). The results JSON is :mod:`pytest_ctxeval.results`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Callable, Iterable

from .errors import GraderError
from .grading.registry import (
    CompactionCase, GraderRegistry, GraderSpec, Status, Verdict, cases_from_run, cases_from_transcript,
)
from .core.messages import text_of
from .runner import RunResult
from .transcript.compactions import nothing_to_grade

if TYPE_CHECKING:  # pragma: no cover
    from .engine.prompt import PromptSet
    from .grading.judging import Judge
    from .llm import LLM
    from .transcript.jsonl import Transcript

__all__ = ["Outcome", "aggregate", "evaluate_run", "evaluate_transcript", "merge_usage", "make_recompact",
           "usage_lines"]


@dataclass
class Outcome:
    """One scenario (or transcript) run and graded."""

    name: str
    source: str
    kind: str                                   # scenario | transcript
    cases: list[CompactionCase] = field(default_factory=list)
    verdicts: list[list[Verdict]] = field(default_factory=list)   # per case, per grader
    graders: list[str] = field(default_factory=list)
    run: RunResult | None = None
    error: str | None = None
    context_window: int | None = None
    notes: list[str] = field(default_factory=list)
    known_failures: dict[str, str] = field(default_factory=dict)
    #: Why the scenario was not run (a compactor that needs another backend): every grader
    #: is n/a with this reason, and the outcome neither passes nor fails.
    skipped: str | None = None
    compactor: str = "claude_code"
    #: A transcript's tiers as the file shows them (pytest_ctxeval.transcript.tier_marks); a scenario's
    #: come from its run's events.
    observed_tiers: dict[str, int] = field(default_factory=dict)

    def for_grader(self, name: str) -> list[tuple[CompactionCase, Verdict]]:
        return [(case, v) for case, vs in zip(self.cases, self.verdicts) for v in vs if v.grader == name]

    def grader_verdict(self, name: str) -> Verdict:
        """The grader's verdict over all compactions (see :func:`aggregate`)."""
        if self.skipped is not None:
            return Verdict("n/a", 1.0, [f"skipped: {self.skipped}"], grader=name)
        if self.error is not None:
            return Verdict("fail", 0.0, [self.error], grader=name)
        if not self.cases:
            return Verdict("fail", 0.0, [_no_compaction(self)], grader=name)
        return aggregate(name, self.for_grader(name))

    def expectation(self, name: str) -> str:
        """``ok``, ``xfail`` (a known failure that failed), ``xpass`` (a known failure that passed:
        an error, the entry should go) or ``fail``/``ungraded``/``n/a``/``error`` as the verdict says."""
        status = self.grader_verdict(name).status
        if status == "error":
            return "error"
        if name in self.known_failures:
            return "xfail" if status == "fail" else ("xpass" if status == "pass" else status)
        return "ok" if status == "pass" else status

    @property
    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in ("pass", "fail", "n/a", "ungraded", "xfail", "xpass", "error")}
        if self.error is not None and self.skipped is None:
            out["error"] = 1  # a scenario that never ran is one error, not a failure of every grader
            return out
        for name in self.graders:
            state = self.expectation(name)
            out["pass" if state == "ok" else state] += 1
        return out

    @property
    def failed(self) -> bool:
        """Whether this outcome should fail a run: an error, a grader that crashed, an unexpected
        fail or an xpass."""
        return self.error is not None or any(self.expectation(g) in ("fail", "xpass", "error") for g in self.graders)

    def failed_strict(self) -> bool:
        """:attr:`failed`, or any ``ungraded`` verdict (``--strict``: a judge that could not decide fails)."""
        return self.failed or any(self.expectation(g) == "ungraded" for g in self.graders)


def _no_compaction(outcome: Outcome) -> str:
    """Why there is nothing to grade: the compactions that were tried and failed, if any (with the
    engine's reason), else how to make one happen."""
    window = f" (context window {outcome.context_window})" if outcome.context_window else ""
    events = outcome.run.events if outcome.run is not None else []
    tried = [e for e in events if e.action in ("failed", "circuit_breaker_tripped", "skipped")
             and e.tier in ("autocompact", "compact", "ptl")]
    if tried:
        details = "; ".join(f"{e.tier} {e.action}" + (f" at turn {e.turn}" if getattr(e, "turn", None) else "")
                            + (f": {e.detail}" if e.detail else "") for e in tried[:3])
        more = f" (+{len(tried) - 3} more)" if len(tried) > 3 else ""
        return f"no compaction succeeded in {outcome.name}{window}: {details}{more}"
    return (f"no compaction happened in {outcome.name}{window}: lower context_window, add a "
            "'- compact: true' step, or run with --compact-at-end")


def aggregate(name: str, pairs: list[tuple[CompactionCase, Verdict]]) -> Verdict:
    """One verdict over several compactions: any error (a crashed grader) is an error, else any fail
    fails (reasons labelled by compaction), else any ungraded is ungraded, else any pass passes, else
    n/a. The score is the mean over the compactions that were graded pass/fail."""
    if not pairs:
        return Verdict("n/a", 1.0, ["no compaction to grade"], grader=name)
    statuses = [v.status for _, v in pairs]
    scored = [v.score for _, v in pairs if v.status in ("pass", "fail")]
    score = round(sum(scored) / len(scored), 4) if scored else (0.0 if "ungraded" in statuses else 1.0)
    kind = pairs[0][1].kind
    if "error" in statuses:
        crashed = [v for _, v in pairs if v.status == "error"]
        verdict = Verdict("error", 0.0, [r for v in crashed for r in v.reasons], grader=name, kind=kind)
        verdict.exc = crashed[0].exc
        return verdict
    if "fail" in statuses or "ungraded" in statuses:
        want: Status = "fail" if "fail" in statuses else "ungraded"
        reasons = [f"{case.label}: {r}" for case, v in pairs if v.status == want for r in v.reasons]
        return Verdict(want, score, reasons, grader=name, kind=kind)
    if "pass" in statuses:
        first = next(v for _, v in pairs if v.status == "pass")
        reasons = list(first.reasons) if len(pairs) == 1 else [_passed_with_na(pairs)]
        return Verdict("pass", score, reasons, grader=name, kind=kind)
    return Verdict("n/a", 1.0, [pairs[0][1].reasons[0] if pairs[0][1].reasons else "not applicable"],
                   grader=name, kind=kind)


def _passed_with_na(pairs: list[tuple[CompactionCase, Verdict]]) -> str:
    """The reason of a passing aggregate: ``2 of 2 compactions pass``, or with compactions the
    grader does not apply to, ``1 pass, 1 n/a (compaction 1: no tool failed ...)``: "1 of 2 pass"
    would read as one failure."""
    passed = sum(v.status == "pass" for _, v in pairs)
    na = [(case, v) for case, v in pairs if v.status != "pass"]
    if not na:
        return f"{passed} of {len(pairs)} compactions pass"
    why = "; ".join(f"{case.label}: {v.reasons[0]}" if v.reasons else case.label for case, v in na[:2])
    more = f"; +{len(na) - 2} more" if len(na) > 2 else ""
    return f"{passed} pass, {len(na)} n/a ({why}{more})"


def make_recompact(llm: LLM, prompts: PromptSet) -> Callable[[CompactionCase], CompactionCase | None]:
    """A ``case -> case`` that compacts a compaction's post-compact context once more (a manual
    ``/compact`` on it): the next generation for the drift grader."""
    from .engine.compact import CompactionFailed, compact_conversation
    from .core.ids import IdFactory
    from .core.tokens import estimate_messages

    def recompact(case: CompactionCase) -> CompactionCase | None:
        config = case.config
        if config is None or not case.post_messages:
            return None
        ids = IdFactory(f"{case.source}:regen:{case.index}")
        context = list(case.post_messages)
        pre = estimate_messages(context, config)
        when = context[-1].timestamp
        try:
            result = compact_conversation(context, llm=llm, config=config, prompts=prompts, ids=ids, now=when,
                                          transcript_path=case.transcript_path or "", pre_tokens=pre,
                                          trigger="manual")
        except CompactionFailed:
            return None
        return CompactionCase(
            source=case.source, index=case.index + 1, kind="full", trigger="manual", summary=result.summary,
            summary_message=text_of(result.summary_message.content), summarized=context,
            history=case.history + [m for m in context if m not in case.history], post_messages=result.post_messages,
            expect=case.expect, raw_reply=result.raw_reply, transcript_path=case.transcript_path,
            pre_tokens=pre, post_tokens=result.post_tokens, turn=case.turn, origin="regenerated", config=config,
            compaction_request=result.request)  # its sections are read by the titles of the prompt it answered

    return recompact


def evaluate_run(run: RunResult, registry: GraderRegistry, specs: Iterable[GraderSpec] | None = None, *,
                 judge: Judge | None = None, recompact: Callable[[CompactionCase], CompactionCase | None] | None = None) -> Outcome:
    specs = list(specs) if specs is not None else list(registry)
    cases = cases_from_run(run)
    for case in cases:
        case.judge, case.recompact = judge, recompact
    # known_failures describe the reference engine (claude_code); another compactor is graded as it is.
    compactor = getattr(run, "compactor", "claude_code")
    known = dict(run.scenario.known_failures) if run.scenario is not None and compactor == "claude_code" else {}
    unknown = sorted(set(known) - set(registry.names))
    if unknown:
        raise GraderError(f"{run.source}: known_failures names unknown grader {unknown[0]!r}; "
                          f"known graders: {', '.join(registry.names)}")
    return Outcome(name=run.name, source=run.source, kind="scenario", cases=cases,
                   verdicts=[registry.run(c, specs) for c in cases], graders=[s.name for s in specs],
                   run=run, context_window=run.config.context_window, known_failures=known, compactor=compactor)


def evaluate_transcript(transcript: Transcript, registry: GraderRegistry, specs: Iterable[GraderSpec] | None = None,
                        *, expect: Any = None, summary_text: str | None = None, judge: Any = None) -> Outcome:
    specs = list(specs) if specs is not None else list(registry)
    cases = cases_from_transcript(transcript, expect=expect, summary_text=summary_text)
    for case in cases:
        case.judge = judge
    name = Path(transcript.path).name
    outcome = Outcome(name=name, source=str(transcript.path), kind="transcript", cases=cases,
                      verdicts=[registry.run(c, specs) for c in cases], graders=[s.name for s in specs])
    outcome.notes = [str(p) for p in transcript.problems]
    from .transcript.tier_marks import observed_tiers

    outcome.observed_tiers = observed_tiers(transcript)
    if summary_text is None:
        # A compaction that cannot be graded (inherited, or no summary after its boundary) is said,
        # never graded against an empty summary nor dropped without a word.
        outcome.notes += [c.not_graded for c in transcript.compactions if not c.inherited and c.no_summary]
        if not cases:
            # Nothing of this session to grade: every grader n/a with the reason, not a failed verdict.
            outcome.skipped = (nothing_to_grade(transcript.compactions, transcript.left_boundaries, transcript.microcompactions)
                               or "no compaction to grade")
    return outcome


def merge_usage(usages: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Add usage dicts up, per model too, and cost them (USD) with the price table
    (see :mod:`pytest_ctxeval.llm.usage`: cassette replies apart and free, batch at half price,
    unpriced models listed)."""
    from .llm.usage import USAGE_KEYS, priced

    total: dict[str, Any] = {k: 0 for k in USAGE_KEYS}
    by_model: dict[str, dict[str, int]] = {}
    for u in usages:
        for k in USAGE_KEYS:
            total[k] += int(u.get(k, 0))
        for model, row in (u.get("by_model") or {}).items():
            agg = by_model.setdefault(model, {k: 0 for k in USAGE_KEYS})
            for k in USAGE_KEYS:
                agg[k] += int(row.get(k, 0))
    return priced(total, by_model)


def usage_lines(usage: dict[str, Any], backend: str) -> list[str]:
    """``model usage (anthropic): 12 calls, 91,204 input tokens, 3,100 output tokens, $0.32`` and a
    line per model when there are several; replies from cassettes (free), the batch share (half
    price) and models without a price are said, never folded into the dollars silently."""
    usd = f"${usage.get('usd', 0):.4f}"
    unpriced = usage.get("unpriced") or []
    if unpriced:
        usd += f" + unpriced tokens of {', '.join(unpriced)} (add a price with --prices FILE)"
    lines = [f"model usage ({backend}): {usage['api_calls']} calls, {usage['input_tokens']:,} input tokens, "
             f"{usage['output_tokens']:,} output tokens"
             + (f", {usage['cache_read_input_tokens']:,} cache-read tokens" if usage.get("cache_read_input_tokens") else "")
             + f", {usd}"]
    if usage.get("batch_input_tokens") or usage.get("batch_output_tokens"):
        lines.append(f"  of which through the Message Batches API (half price): {usage['batch_input_tokens']:,} input, "
                     f"{usage['batch_output_tokens']:,} output tokens")
    if usage.get("cached_calls"):
        lines.append(f"  plus {usage['cached_calls']} replies from cassettes (no request, $0)")
    if len(usage.get("by_model", {})) > 1:
        for model, row in usage["by_model"].items():
            lines.append(f"  {model}: {row['api_calls']} calls, {row['input_tokens']:,} in, "
                         f"{row['output_tokens']:,} out, ${row.get('usd', 0):.4f}")
    return lines
