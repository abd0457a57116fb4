"""Every scenario under several compactors, graded by the same graders, in one table.

Used by ``ctxeval compare`` and by ``pytest --ctxeval --ctxeval-compare-compactors``. The table
(:func:`compactor_table`) is computed from one results document per compactor, so the CLI and the
plugin (whose results travel in pytest reports, also under xdist) build it the same way:

* per compactor: scenarios run (or skipped, and why), compactions, mean tokens before and after a
  compaction, the compactor's own model calls (summaries, verify passes) with their tokens and
  cost, and the graders' pass / fail / n/a counts;
* per grader: the pass rate under each compactor (over the scenarios where it passed or failed);
* probe scores by kind (recall, artifact, continuation, decision; mean of 0-5);
* per scenario: which compactor failed which grader, and the first reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
from typing import TYPE_CHECKING, Any
from collections.abc import Callable, Collection

from ..errors import CtxEvalError
from ..evaluation import Outcome, merge_usage
from ..results import results_document
from ..llm.pricing import cost_of
from .loader import load_compactor

if TYPE_CHECKING:  # pragma: no cover
    from ..grading.registry import GraderRegistry, GraderSpec
    from ..options import RunOptions
    from ..scenario.schema import Scenario

__all__ = ["CompactorResults", "run_compactors", "compactor_table", "format_compactor_table", "comparison_document",
           "note_for", "COMPARE_FORMAT"]

COMPARE_FORMAT = "pytest-ctxeval/compactors"

OFFLINE_NOTE = ("Offline, every compactor's summaries come from the reference model, which writes the sections each "
                "compactor's prompt asks for from facts it reads off the conversation: the comparison measures "
                "structure (what each compactor keeps, tool pairing, token budgets), not how well a model "
                "summarises. With the anthropic backend (or replay) the summaries are a real model's, and the "
                "comparison measures summary quality too.")


def note_for(backend: str, model: str | None = None) -> str:
    """What a comparison on ``backend`` measures (the header of every compactors table)."""
    if backend == "offline":
        return OFFLINE_NOTE
    return (f"Summaries come from {model or 'the configured model'} on the {backend} backend: the comparison measures "
            "summary quality as well as structure (what is kept, pairing, budgets).")


@dataclass
class CompactorResults:
    """One compactor's run over the scenarios."""

    name: str
    spec: str
    outcomes: list[Outcome] = field(default_factory=list)
    run_usage: dict[str, Any] = field(default_factory=dict)     # the compactor's own model calls
    judge_usage: dict[str, Any] = field(default_factory=dict)   # grading it (judge, probes, drift)
    doc: dict[str, Any] = field(default_factory=dict)


def run_compactors(scenarios: list[Scenario], specs: list[str], *, options: RunOptions, registry: GraderRegistry,
                   graders: list[GraderSpec],
                   session_root: Path | None = None, on_done: Callable[[str, str], None] | None = None) -> list[CompactorResults]:
    """Run every scenario under every compactor of ``specs`` and grade it with ``graders``."""
    from concurrent.futures import ThreadPoolExecutor

    from ..evaluate import Evaluator
    from ..runner import fresh_folder

    compactors = [load_compactor(spec) for spec in specs]  # options.make_compactor(spec), never None
    names = [s.name for s in compactors]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise CtxEvalError(f"--compactors names {dupes[0]!r} twice; each compactor in a comparison needs its own name")
    prompts = options.prompts()
    results = [CompactorResults(name=s.name, spec=spec) for s, spec in zip(compactors, specs)]
    # The one evaluation loop (pytest_ctxeval.evaluate): errors, judges and re-compaction as everywhere.
    evaluator = Evaluator(options, registry, graders, prompts=prompts, compactor=None)

    def one(k: int, scenario: Any) -> tuple[Outcome, dict[str, Any], dict[str, Any]]:
        folder = (lambda name: fresh_folder(session_root / names[k], name)) if session_root else None
        ev = evaluator.evaluate(scenario, compactor=compactors[k], session_dir=folder)
        return ev.outcome, ev.run_usage, ev.grading_usage

    jobs = [(k, sc) for k in range(len(compactors)) for sc in scenarios]
    done: dict[int, list[tuple[Outcome, dict[str, Any], dict[str, Any]]]] = {k: [] for k in range(len(compactors))}

    def finished(k: int, sc: Any, result: tuple[Outcome, dict[str, Any], dict[str, Any]]) -> None:
        done[k].append(result)
        if on_done is not None:
            on_done(names[k], sc.display_name)

    threads = options.side_by_side(len(jobs))
    if threads == 1:  # offline without a latency: nothing to wait on, one after another
        for k, sc in jobs:
            finished(k, sc, one(k, sc))
    else:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            futures = [pool.submit(one, k, sc) for k, sc in jobs]
            for (k, sc), fut in zip(jobs, futures):
                finished(k, sc, fut.result())
    model = options.model
    for k, res in enumerate(results):
        res.outcomes = [o for o, _, _ in done[k]]
        res.run_usage = merge_usage([u for _, u, _ in done[k] if u])
        res.judge_usage = merge_usage([g for _, _, g in done[k] if g])
        res.doc = results_document(res.outcomes, usage=merge_usage([res.run_usage, res.judge_usage]),
                                   backend=options.backend, model=model,
                                   prompt={"path": str(prompts.compact_path), "fingerprint": prompts.fingerprint}
                                   if res.name == "claude_code" else None, compactor=res.name)
        res.doc["run_usage"] = res.run_usage
    return results


# ---------------------------------------------------------------------------------------------
# The table


def _rate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    graded = [r for r in rows if r.get("status") in ("pass", "fail")]
    passed = sum(1 for r in graded if r["status"] == "pass")
    return {"passed": passed, "graded": len(graded),
            "na": sum(1 for r in rows if r.get("status") == "n/a"),
            "ungraded": sum(1 for r in rows if r.get("status") == "ungraded"),
            "pass_rate": round(passed / len(graded), 4) if graded else None,
            "mean_score": round(mean(r.get("score", 0.0) for r in graded), 4) if graded else None}


def _estimate_usd(usage: dict[str, Any], model: str) -> float:
    return round(sum(cost_of(model, row) for row in (usage.get("by_model") or {}).values()), 6)


def compactor_table(docs: dict[str, dict[str, Any]], *, backend: str = "offline", model: str | None = None,
                   price_model: str | None = None) -> dict[str, Any]:
    """The comparison of one results document per compactor (name -> document; see the module
    docstring). ``price_model`` prices the compactors' model calls as if made by that model (offline
    runs are free; this says what they would cost)."""
    compactors = list(docs)
    graders: list[str] = []
    for doc in docs.values():
        for entry in doc.get("scenarios", []):
            graders += [g for g in entry.get("graders", {}) if g not in graders]
    rows, failures = [], []
    for name, doc in docs.items():
        entries = doc.get("scenarios", [])
        ran = [e for e in entries if not e.get("skipped")]
        comps = [c for e in ran for c in e.get("compactions", [])]
        usage = doc.get("run_usage") or doc.get("usage") or {}
        states: dict[str, int] = {"pass": 0, "fail": 0, "n/a": 0, "ungraded": 0, "xfail": 0}
        probes: dict[str, list[float]] = {}
        for e in ran:
            for g, row in e.get("graders", {}).items():
                status = row.get("status", "fail")
                if row.get("known_failure") and status == "fail":
                    status = "xfail"
                states[status] = states.get(status, 0) + 1
                if status == "fail":
                    failures.append({"scenario": e["name"], "compactor": name, "grader": g,
                                     "reason": (row.get("reasons") or [""])[0]})
            if e.get("error"):
                failures.append({"scenario": e["name"], "compactor": name, "grader": "(run)", "reason": e["error"]})
            for c in e.get("compactions", []):
                for v in c.get("verdicts", []):
                    for kind, score in (v.get("by_kind") or {}).items():
                        probes.setdefault(kind, []).append(float(score))
        skipped = sorted({e["skipped"] for e in entries if e.get("skipped")})
        row = {
            "compactor": name, "scenarios": len(entries), "ran": len(ran), "skipped": skipped[0] if skipped else None,
            "errors": sum(1 for e in ran if e.get("error")), "compactions": len(comps),
            "tokens_before": round(mean(c.get("pre_tokens") or 0 for c in comps)) if comps else None,
            "tokens_after": round(mean(c.get("post_tokens") or 0 for c in comps)) if comps else None,
            "model_calls": int(usage.get("api_calls", 0)), "input_tokens": int(usage.get("input_tokens", 0)),
            "output_tokens": int(usage.get("output_tokens", 0)), "usd": float(usage.get("usd", 0.0)),
            "verdicts": states, "probes": {k: round(mean(v), 2) for k, v in sorted(probes.items())},
            "graders": {g: _rate([e["graders"][g] for e in ran if g in e.get("graders", {})
                                  and not (e["graders"][g].get("known_failure") and e["graders"][g].get("status") == "fail")])
                        for g in graders},
        }
        if price_model:
            row["usd_at"] = _estimate_usd(usage, price_model)
        rows.append(row)
    failures.sort(key=lambda f: (f["scenario"], compactors.index(f["compactor"]), f["grader"]))
    return {"compactors": compactors, "graders": graders, "rows": rows, "failures": failures,
            "backend": backend, "model": model, "price_model": price_model, "note": note_for(backend, model)}


def _pct(rate: dict[str, Any]) -> str:
    if rate["pass_rate"] is None:
        return "n/a" if rate["na"] else "-"
    return f"{rate['pass_rate']:.0%} ({rate['passed']}/{rate['graded']})"


def _columns(header: tuple[str, ...], body: list[tuple[str, ...]], right: Collection[int] = frozenset()) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(header)]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return [line(header), *[line(r) for r in body]]


def format_compactor_table(table: dict[str, Any], *, failures: int = 40) -> list[str]:
    """The terminal form: compactors, pass rate by grader, probes by kind, failures by scenario."""
    rows = table["rows"]
    cost = "cost" if not table.get("price_model") else f"cost (at {table['price_model']})"
    head = ("compactor", "scenarios", "compactions", "tokens before → after (mean)", "model calls", "input tokens",
            "output tokens", cost, "passed", "failed", "n/a")
    body, notes = [], []
    for r in rows:
        if r["skipped"]:
            notes.append(f"{r['compactor']}: skipped on {r['scenarios'] - r['ran']} scenario(s): {r['skipped']}")
        if r["skipped"] and not r["ran"]:
            body.append((r["compactor"], f"0/{r['scenarios']}", *["-"] * 9))
            continue
        usd = r.get("usd_at", r["usd"])
        tokens = f"{r['tokens_before']:,} → {r['tokens_after']:,}" if r["compactions"] else "-"
        v = r["verdicts"]
        body.append((r["compactor"], f"{r['ran']}/{r['scenarios']}", str(r["compactions"]), tokens, f"{r['model_calls']:,}",
                     f"{r['input_tokens']:,}", f"{r['output_tokens']:,}", f"${usd:.4f}", str(v.get("pass", 0)),
                     str(v.get("fail", 0)), str(v.get("n/a", 0) + v.get("ungraded", 0) + v.get("xfail", 0))))
    lines = [table["note"], ""] + _columns(head, body, right={1, 2, 4, 5, 6, 7, 8, 9, 10}) + notes
    names = [r["compactor"] for r in rows]
    grader_body = [(g, *[_pct(r["graders"].get(g, {"pass_rate": None, "na": 0})) for r in rows]) for g in table["graders"]]
    lines += ["", *_columns(("pass rate by grader", *names), grader_body)]
    kinds = sorted({k for r in rows for k in r["probes"]})
    if kinds:
        probe_body = [(k, *[f"{r['probes'][k]:.1f}" if k in r["probes"] else "-" for r in rows]) for k in kinds]
        lines += ["", *_columns(("probes, mean score /5", *names), probe_body)]
    fails = table["failures"]
    if fails:
        lines += ["", f"failures ({len(fails)}): scenario · compactor · grader: first reason"]
        for f in fails[:failures]:
            reason = " ".join(f["reason"].split())
            lines.append(f"  {f['scenario']} · {f['compactor']} · {f['grader']}: {reason[:150]}")
        if len(fails) > failures:
            lines.append(f"  … and {len(fails) - failures} more (see the JSON or HTML report)")
    return lines


def comparison_document(results: list[CompactorResults], *, backend: str, model: str | None,
                        price_model: str | None = None) -> dict[str, Any]:
    """``ctxeval compare --json``: the table, and each compactor's full results document."""
    table = compactor_table({r.name: r.doc for r in results}, backend=backend, model=model, price_model=price_model)
    return {"format": COMPARE_FORMAT, "version": 1, "backend": backend, "model": model, "table": table,
            "results": {r.name: r.doc for r in results},
            "usage": merge_usage([r.run_usage for r in results] + [r.judge_usage for r in results])}
