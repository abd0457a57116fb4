"""The versioned results JSON: writing it (:func:`results_document`, :func:`write_results`) and
reading it back (:func:`read_results`).

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
fail). A scenario that never ran (a template or schema error, a compaction of nothing) has its
``error`` set, counts as one error, and holds no grader verdict: ``graders`` is empty and
``not_run`` lists the graders it would have run (before, every grader was written as failed with
the error as its reason, which counted one failure per grader). The version changes only when a
field changes meaning or disappears.

Added in version 1 without changing a meaning: a verdict's ``missing`` (the facts a rule grader
found missing) and ``superseded``; per compaction ``lost`` (what the compaction lost, by kind:
``user_messages``, ``files``, ``errors``, ``todos``, ``identifiers`` with ``identifiers_total``;
each fact ``{"text", "message"}`` where ``message`` is its 1-based position in the session
history, see :mod:`pytest_ctxeval.grading.lost`); per scenario ``description`` and ``messages`` (role and
excerpt of each message a lost fact points at); per transcript ``tiers`` (per tier, how often the file shows it acting:
:mod:`pytest_ctxeval.transcript.tier_marks`); per compaction ``attachments`` and
``hook_results``, the post-compact context after the summary as it was built, in order:
``{"kind": "file", "path": ...}``, ``{"kind": "skill", "name": ...}``, ``{"kind": "plan"}``,
``{"kind": "mcp_instructions_delta", "name": ...}``... and ``{"event": "SessionStart", "text": ...}``
(see :mod:`pytest_ctxeval.engine.hooks`). ``pytest --ctxeval-report OUT.json`` adds
``comparison`` (against ``--ctxeval-baseline``) and ``ab`` (``--ctxeval-compare-prompt``). The
``prompt`` object holds the rendered compaction prompt as ``text``, and ``prompt_coverage`` (when the
prompt differs from the built-in one or the baseline's) lists its changed sentences, each ``seen`` by
the offline model or not (:mod:`pytest_ctxeval.reporting.prompt_coverage`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterable

from .evaluation import Outcome
from .grading.registry import Verdict
from .grading.lost import lost_facts, message_ref
from .core.redact import scrub_output
from .runner import RunResult

__all__ = ["RESULTS_FORMAT", "RESULTS_VERSION", "outcome_entry", "reinjected", "results_document", "write_results",
           "read_results"]

RESULTS_FORMAT = "pytest-ctxeval/results"
RESULTS_VERSION = 1


def outcome_entry(o: Outcome, *, lost: bool = True) -> dict[str, Any]:
    """One scenario's entry of the results document. ``lost=False`` leaves out what each compaction
    lost (``lost`` and the ``messages`` it points at), the costliest part to compute, for a
    ``pytest --ctxeval`` session that writes no report or baseline (the terminal summary does
    not show it); the document format allows a compaction without ``lost``."""
    entry: dict[str, Any] = {"name": o.name, "source": o.source, "kind": o.kind,
                             "context_window": o.context_window, "error": o.error}
    if o.compactor != "claude_code":
        entry["compactor"] = o.compactor
    if o.skipped is not None:
        entry["skipped"] = o.skipped
    if o.run is not None and o.run.scenario is not None and o.run.scenario.description:
        entry["description"] = o.run.scenario.description
    if o.run is not None:
        entry["steps"] = o.run.steps
        entry["requests"] = len(o.run.requests)
        shown = _shown_paths(o.run)
        entry["events"] = [{**e.as_dict(), "detail": shown(e.detail)} for e in o.run.events]
    if o.run is None and o.observed_tiers:
        entry["tiers"] = dict(o.observed_tiers)  # a transcript's, as the file shows them
    if o.notes:
        entry["notes"] = list(o.notes)
    entry["graders"] = {}
    if o.error is not None and o.skipped is None:
        # A scenario that never ran is one error (``error``), as the terminal summary counts it: no
        # grader graded anything, so none is listed as failed; ``not_run`` names the graders it had.
        entry["not_run"] = list(o.graders)
    for name in ([] if "not_run" in entry else o.graders):
        row = {k: v for k, v in o.grader_verdict(name).as_dict().items() if k != "grader"}
        if name in o.known_failures:
            row["known_failure"] = o.known_failures[name]
            row["expectation"] = o.expectation(name)
        entry["graders"][name] = row
    entry["compactions"] = []
    refs: dict[int, dict[str, Any]] = {}
    for c, vs in zip(o.cases, o.verdicts):
        row = {"index": c.index, "kind": c.kind, "trigger": c.trigger, "turn": c.turn, "line": c.line,
               "pre_tokens": c.pre_tokens, "post_tokens": c.post_tokens, "summary": c.summary,
               "verdicts": [_verdict_entry(v) for v in vs]}
        if lost:
            facts = lost_facts(c.summarized, c.post_messages, c.history)
            for pos in facts.messages:
                refs.setdefault(pos, message_ref(c.history[pos - 1]))
            row["lost"] = facts.as_dict()
        entry["compactions"].append({**row, **reinjected(c.post_messages)})
    # The history messages the lost facts point at ("message": N), for the report's links.
    entry["messages"] = {str(k): refs[k] for k in sorted(refs)}
    _facts_entries(o, entry)
    return entry


def reinjected(post_messages: list[Any]) -> dict[str, list[dict[str, str]]]:
    """What a compaction put back after the summary (003:221-229): ``attachments`` (kind, and path
    or name when it has one) and ``hook_results`` (event and text), in order.

    >>> from pytest_ctxeval.core.messages import AttachmentMessage
    >>> reinjected([AttachmentMessage(uuid="a", attachment_type="file", content="...", path="src/a.py")])
    {'attachments': [{'kind': 'file', 'path': 'src/a.py'}], 'hook_results': []}
    """
    from .core.messages import AttachmentMessage

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
    survival tables and the report's charts (pytest_ctxeval.scenario.planted, pytest_ctxeval.reporting.facts_table)."""
    from .reporting.facts_table import request_tokens
    from .scenario.planted import survival_entry

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
                     compactor: str | None = None) -> dict[str, Any]:
    """The results JSON of ``outcomes``; ``compactor`` names the compactor when it is not
    the reference engine's (``claude_code``)."""
    doc = {"format": RESULTS_FORMAT, "version": RESULTS_VERSION, "backend": backend, "model": model,
           "judge": judge, "prompt": prompt, "scenarios": [outcome_entry(o) for o in outcomes], "usage": usage}
    if compactor is not None and compactor != "claude_code":
        doc["compactor"] = compactor
    return doc


def write_results(path: str | os.PathLike[str], document: dict[str, Any]) -> Path:
    """Write the results JSON (atomically: a reader never sees half a file), with the API key and
    key-shaped strings scrubbed (:func:`~pytest_ctxeval.core.redact.scrub_output`)."""
    from .core.documents import dumps_finite
    from .core.outputs import write_text_safely

    from .core.redact import scrub_tree

    # Each string scrubbed on its own (a token cut at a string's end is recognised), then the text.
    text = scrub_output(dumps_finite(scrub_tree(document), indent=2, ensure_ascii=False))
    return write_text_safely(path, text + "\n", what="results")


def read_results(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A results JSON written by :func:`write_results`, checked (format, version, fields); a
    baseline or any other file is a :class:`~pytest_ctxeval.errors.UsageError` naming the file and
    the fix."""
    from .reporting.baseline import load_document
    from .errors import UsageError

    doc = load_document(path)
    if doc.get("format") != RESULTS_FORMAT:
        raise UsageError(f"{path}: a baseline holds no events or verdict reasons; render a results file "
                         "(pytest --ctxeval-report OUT.json, or ctxeval run --json OUT.json)")
    return doc
