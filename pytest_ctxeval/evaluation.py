"""Run-and-grade, shared by the pytest plugin and the CLI, and the versioned JSON results format.

Results JSON (``format: pytest-ctxeval/results``, ``version: 1``)::

    {
      "format": "pytest-ctxeval/results", "version": 1,
      "backend": "offline", "model": "ctxeval-reference",
      "prompt": {"path": ".../compact.j2", "fingerprint": "3f2a9c0d1e2b"},
      "scenarios": [
        {"name": "auth_refactor", "source": "scenarios/auth_refactor.yaml", "kind": "scenario",
         "context_window": 20000, "steps": 64, "requests": 31, "error": null,
         "graders": {"verbatim_user_messages": {"status": "pass", "score": 1.0, "reasons": [...]}, ...},
         "events": [{"tier": "autocompact", "action": "full_compaction", "turn": 18, ...}],
         "compactions": [
           {"index": 1, "kind": "full", "trigger": "auto", "turn": 18, "line": null,
            "pre_tokens": 17555, "post_tokens": 607, "summary": "1. Primary Request ...",
            "verdicts": [{"grader": "verbatim_user_messages", "kind": "rule", "status": "pass",
                          "score": 1.0, "reasons": ["..."]}]}]}
      ],
      "usage": {"api_calls": 3, "input_tokens": 51234, "output_tokens": 1830, ...}
    }

``kind`` is ``scenario`` or ``transcript``; ``status`` is one of ``pass``, ``fail``, ``n/a``,
``ungraded``, ``error`` (the grader raised: "grader X crashed on scenario Y: ..."; it fails the run). ``graders`` holds each grader's status aggregated over the compactions (any fail is a
fail). The version changes only when a field changes meaning or disappears.

Added in version 1 without changing a meaning: a verdict's ``missing`` (the facts a rule grader
found missing) and ``superseded``; per compaction ``lost`` (what the compaction lost, by kind:
``user_messages``, ``files``, ``errors``, ``todos``, ``identifiers`` with ``identifiers_total``;
each fact ``{"text", "message"}`` where ``message`` is its 1-based position in the session
history, see :mod:`pytest_ctxeval.lost`); per scenario ``description`` and ``messages`` (role and
excerpt of each message a lost fact points at); per compaction ``attachments`` and
``hook_results``, the post-compact context after the summary as it was built, in order:
``{"kind": "file", "path": ...}``, ``{"kind": "skill", "name": ...}``, ``{"kind": "plan"}``,
``{"kind": "mcp_instructions_delta", "name": ...}``... and ``{"event": "SessionStart", "text": ...}``
(see :mod:`pytest_ctxeval.engine.hooks`). ``pytest --ctxeval-report OUT.json`` adds
``comparison`` (against ``--ctxeval-baseline``) and ``ab`` (``--ctxeval-compare-prompt``). The
``prompt`` object holds the rendered compaction prompt as ``text``, and ``prompt_coverage`` (when the
prompt differs from the built-in one or the baseline's) lists its changed sentences, each ``seen`` by
the offline model or not (:mod:`pytest_ctxeval.prompt_coverage`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Callable, Iterable

from .errors import GraderError
from .grading import (
    CompactionCase, GraderRegistry, GraderSpec, Status, Verdict, cases_from_run, cases_from_transcript,
)
from .lost import lost_facts, message_ref
from .messages import text_of
from .redact import scrub_output
from .runner import RunResult

if TYPE_CHECKING:  # pragma: no cover
    from .engine.prompt import PromptSet
    from .judging import Judge
    from .llm import LLM
    from .transcript import Transcript

__all__ = ["Outcome", "aggregate", "evaluate_run", "evaluate_transcript", "results_document",
           "write_results", "RESULTS_FORMAT", "RESULTS_VERSION", "merge_usage", "make_recompact", "usage_lines",
           "outcome_entry"]

RESULTS_FORMAT = "pytest-ctxeval/results"
RESULTS_VERSION = 1


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
    #: Why the scenario was not run (a compaction strategy that needs another backend): every grader
    #: is n/a with this reason, and the outcome neither passes nor fails.
    skipped: str | None = None
    strategy: str = "claude_code"

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
        reasons = list(first.reasons) if len(pairs) == 1 else [f"{statuses.count('pass')} of {len(pairs)} compactions pass"]
        return Verdict("pass", score, reasons, grader=name, kind=kind)
    return Verdict("n/a", 1.0, [pairs[0][1].reasons[0] if pairs[0][1].reasons else "not applicable"],
                   grader=name, kind=kind)


def make_recompact(llm: LLM, prompts: PromptSet) -> Callable[[CompactionCase], CompactionCase | None]:
    """A ``case -> case`` that compacts a compaction's post-compact context once more (a manual
    ``/compact`` on it): the next generation for the drift grader."""
    from .engine.compact import CompactionFailed, compact_conversation
    from .ids import IdFactory
    from .tokens import estimate_messages

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
            pre_tokens=pre, post_tokens=result.post_tokens, turn=case.turn, origin="regenerated", config=config)

    return recompact


def evaluate_run(run: RunResult, registry: GraderRegistry, specs: Iterable[GraderSpec] | None = None, *,
                 judge: Judge | None = None, recompact: Callable[[CompactionCase], CompactionCase | None] | None = None) -> Outcome:
    specs = list(specs) if specs is not None else list(registry)
    cases = cases_from_run(run)
    for case in cases:
        case.judge, case.recompact = judge, recompact
    # known_failures describe the reference engine (claude_code); another strategy is graded as it is.
    strategy = getattr(run, "strategy", "claude_code")
    known = dict(run.scenario.known_failures) if run.scenario is not None and strategy == "claude_code" else {}
    unknown = sorted(set(known) - set(registry.names))
    if unknown:
        raise GraderError(f"{run.source}: known_failures names unknown grader {unknown[0]!r}; "
                          f"known graders: {', '.join(registry.names)}")
    return Outcome(name=run.name, source=run.source, kind="scenario", cases=cases,
                   verdicts=[registry.run(c, specs) for c in cases], graders=[s.name for s in specs],
                   run=run, context_window=run.config.context_window, known_failures=known, strategy=strategy)


def evaluate_transcript(transcript: Transcript, registry: GraderRegistry, specs: Iterable[GraderSpec] | None = None,
                        *, expect: Any = None, summary_text: str | None = None, judge: Any = None) -> Outcome:
    specs = list(specs) if specs is not None else list(registry)
    cases = cases_from_transcript(transcript, expect=expect, summary_text=summary_text)
    for case in cases:
        case.judge = judge
    name = Path(transcript.path).name
    outcome = Outcome(name=name, source=str(transcript.path), kind="transcript", cases=cases,
                      verdicts=[registry.run(c, specs) for c in cases], graders=[s.name for s in specs])
    if not cases:
        outcome.error = (f"{transcript.path}: no compaction in this transcript (no compact_boundary record); "
                         "pass --summary FILE to grade a summary of it")
    outcome.notes = [str(p) for p in transcript.problems]
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


def outcome_entry(o: Outcome) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": o.name, "source": o.source, "kind": o.kind,
                             "context_window": o.context_window, "error": o.error}
    if o.strategy != "claude_code":
        entry["strategy"] = o.strategy
    if o.skipped is not None:
        entry["skipped"] = o.skipped
    if o.run is not None and o.run.scenario is not None and o.run.scenario.description:
        entry["description"] = o.run.scenario.description
    if o.run is not None:
        entry["steps"] = o.run.steps
        entry["requests"] = len(o.run.requests)
        shown = _shown_paths(o.run)
        entry["events"] = [{**e.as_dict(), "detail": shown(e.detail)} for e in o.run.events]
    if o.notes:
        entry["notes"] = list(o.notes)
    entry["graders"] = {}
    for name in o.graders:
        row = {k: v for k, v in o.grader_verdict(name).as_dict().items() if k != "grader"}
        if name in o.known_failures:
            row["known_failure"] = o.known_failures[name]
            row["expectation"] = o.expectation(name)
        entry["graders"][name] = row
    entry["compactions"] = []
    refs: dict[int, dict[str, Any]] = {}
    for c, vs in zip(o.cases, o.verdicts):
        lost = lost_facts(c.summarized, c.post_messages, c.history)
        for pos in lost.messages:
            refs.setdefault(pos, message_ref(c.history[pos - 1]))
        entry["compactions"].append(
            {"index": c.index, "kind": c.kind, "trigger": c.trigger, "turn": c.turn, "line": c.line,
             "pre_tokens": c.pre_tokens, "post_tokens": c.post_tokens, "summary": c.summary,
             "verdicts": [_verdict_entry(v) for v in vs], "lost": lost.as_dict(),
             **reinjected(c.post_messages)})
    # The history messages the lost facts point at ("message": N), for the report's links.
    entry["messages"] = {str(k): refs[k] for k in sorted(refs)}
    _facts_entries(o, entry)
    return entry


def reinjected(post_messages: list[Any]) -> dict[str, list[dict[str, str]]]:
    """What a compaction put back after the summary (003:221-229): ``attachments`` (kind, and path
    or name when it has one) and ``hook_results`` (event and text), in order.

    >>> from pytest_ctxeval.messages import AttachmentMessage
    >>> reinjected([AttachmentMessage(uuid="a", attachment_type="file", content="...", path="src/a.py")])
    {'attachments': [{'kind': 'file', 'path': 'src/a.py'}], 'hook_results': []}
    """
    from .messages import AttachmentMessage

    attachments: list[dict[str, str]] = []
    hooks: list[dict[str, str]] = []
    for m in post_messages:
        if not isinstance(m, AttachmentMessage):
            continue
        if m.attachment_type == "hook_result":
            hooks.append({"event": m.name or "unknown", "text": m.content})
            continue
        row = {"kind": m.attachment_type}
        if m.path:
            row["path"] = m.path
        if m.name:
            row["name"] = m.name
        attachments.append(row)
    return {"attachments": attachments, "hook_results": hooks}


def _facts_entries(o: Outcome, entry: dict[str, Any]) -> None:
    """Planted-fact survival (scenarios with ``facts:``) and the tokens of every request, for the
    survival tables and the report's charts (pytest_ctxeval.planted, pytest_ctxeval.facts_table)."""
    from .facts_table import request_tokens
    from .planted import survival_entry

    scenario = o.run.scenario if o.run is not None else None
    if scenario is not None and scenario.facts and o.cases:
        entry["survival"] = survival_entry(list(scenario.facts), o.cases, scenario.expect)
    if o.run is not None:
        entry["tokens"] = request_tokens(o.run)


def _shown_paths(run: RunResult) -> Callable[[str], str]:
    """Event details name files by their real paths (a temporary folder of this run): write them as
    the engine shows them to the model (Claude Code's layout under a fixed project), so the results
    hold nothing run-dependent."""
    try:
        from .engine.pipeline import SHOWN_PROJECT_DIR as shown
    except ImportError:  # pragma: no cover - an engine without shown paths
        shown = "<session>"
    base = str(Path(run.transcript_path).parent)
    return lambda text: text.replace(base, shown) if base and base != "." else text


#: Evidence keys a rule verdict carries into the results when they hold a list of strings: the
#: facts it found missing (user messages, files, error lines, tasks) or superseded intents revived.
FACT_KEYS = ("missing", "superseded")


def _verdict_entry(v: Verdict) -> dict[str, Any]:
    entry = v.as_dict()
    for key in FACT_KEYS:
        value = v.evidence.get(key)
        if isinstance(value, list) and value and all(isinstance(x, str) for x in value):
            entry[key] = list(value)
    if v.kind == "llm":  # what a judge-based verdict rests on
        for key in ("votes", "spread", "unstable", "by_kind"):
            if key in v.evidence:
                entry[key] = v.evidence[key]
        if "probes" in v.evidence:
            entry["probes"] = [{k: p[k] for k in ("kind", "question", "score", "passed")} for p in v.evidence["probes"]]
        if "generations" in v.evidence:
            entry["generations"] = [{"generation": g["generation"], "score": g["score"]} for g in v.evidence["generations"]]
    return entry


def results_document(outcomes: Iterable[Outcome], *, usage: dict[str, Any], backend: str, model: str | None,
                     prompt: dict[str, Any] | None = None, judge: str | None = None,
                     strategy: str | None = None) -> dict[str, Any]:
    """The results JSON of ``outcomes``; ``strategy`` names the compaction strategy when it is not
    the reference engine's (``claude_code``)."""
    doc = {"format": RESULTS_FORMAT, "version": RESULTS_VERSION, "backend": backend, "model": model,
           "judge": judge, "prompt": prompt, "scenarios": [outcome_entry(o) for o in outcomes], "usage": usage}
    if strategy is not None and strategy != "claude_code":
        doc["strategy"] = strategy
    return doc


def write_results(path: str | os.PathLike[str], document: dict[str, Any]) -> Path:
    """Write the results JSON (atomically: a reader never sees half a file), with the API key and
    key-shaped strings scrubbed (:func:`~pytest_ctxeval.redact.scrub_output`)."""
    from .documents import dumps_finite
    from .outputs import write_text_safely

    from .redact import scrub_tree

    # Each string scrubbed on its own (a token cut at a string's end is recognised), then the text.
    text = scrub_output(dumps_finite(scrub_tree(document), indent=2, ensure_ascii=False))
    return write_text_safely(path, text + "\n", what="results")
