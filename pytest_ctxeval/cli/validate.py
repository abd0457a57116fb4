"""``ctxeval validate`` (mutation analysis of the graders) and ``ctxeval graders`` (what each checks).

    ctxeval validate [PATHS...] [--graders a,b] [--json OUT] [--html OUT] [--min-kill 0.95] [--seed N]
    ctxeval graders [--graders-dir DIR] [--json]

PATHS are scenario files or folders (their compactions, run through the engine on the chosen
backend) and Claude Code transcripts (``*.jsonl``: the compactions Claude Code wrote); a folder
contributes both. Exit 0 when every grader with mutants reaches ``--min-kill`` with no false alarm
and nothing crashed, 1 otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse
import html
import json
from pathlib import Path
from typing import Any
from collections.abc import Callable

from ..errors import UsageError
from ..grading.registry import CompactionCase, GraderRegistry, cases_from_run, cases_from_transcript, load_graders
from ..grading.mutants import MutationSpec
from ..grading.mutation_library import builtin_mutations
from ..options import RunOptions, add_run_options, builtin_scenarios_dir
from ..grading.validation import ValidationReport, validate_cases

__all__ = ["add_validate_commands", "cmd_validate", "cmd_graders", "format_report", "collect_cases", "operators_for",
           "render_html"]


def _fraction(value: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {value!r}") from None
    if not 0.0 <= x <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {value!r} (0.95 means 95 %)")
    return x


def add_validate_commands(sub: Any, grader_args: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add ``validate`` and ``graders`` to the ``ctxeval`` subparsers."""
    val = sub.add_parser(
        "validate", help="measure how well each grader catches the defect it exists for (mutation analysis)",
        description="Derive defective summaries (mutants) from every compaction of the given scenarios and "
                    "transcripts with the mutation operators, and report per grader: mutants, killed, kill rate, "
                    "false alarms on the unmutated summaries, collateral (mutants that tripped graders they do not "
                    "target) and every surviving mutant. Exit 0 when every grader with mutants reaches --min-kill "
                    "with no false alarm and no crash, 1 otherwise, 2 on bad input.")
    val.add_argument("paths", nargs="*", metavar="PATH",
                     help="scenario files or folders, and Claude Code transcripts (*.jsonl) (default: ./scenarios, "
                          "else the built-in library)")
    val.add_argument("--json", dest="json_out", metavar="OUT", help="write the validate JSON here")
    val.add_argument("--html", dest="html_out", metavar="OUT", help="write a self-contained HTML report here")
    val.add_argument("--min-kill", type=_fraction, default=0.95, metavar="X",
                     help="the kill rate every grader with mutants must reach (default 0.95)")
    val.add_argument("--seed", type=int, default=0, help="seed of the mutation operators (default 0)")
    val.add_argument("--operators", type=lambda v: [n.strip() for n in v.split(",") if n.strip()], metavar="a,b",
                     help="apply only these mutation operators (default: all, built-in and your own)")
    add_run_options(val.add_argument, "--")
    grader_args(val)
    val.add_argument("-v", "--verbose", action="store_true", help="list every collateral mutant, not only counts")

    gr = sub.add_parser("graders", help="list every grader: kind, what it checks, expect: keys, operators",
                        description="List every grader (built-in and from --graders-dir): name, kind (rule/llm), "
                                    "what it checks, the scenario expect: keys it reads and the mutation operators "
                                    "that target it.")
    gr.add_argument("--graders-dir", action="append", default=None, metavar="DIR",
                    help="a folder of your own graders (repeatable)")
    gr.add_argument("--json", dest="as_json", action="store_true", help="print JSON instead of a table")


def operators_for(registry: GraderRegistry, names: list[str] | None = None) -> list[MutationSpec]:
    """The built-in operators and those defined in the loaded grader files (``names`` selects)."""
    ops: dict[str, MutationSpec] = {m.name: m for m in builtin_mutations()}
    for name, spec in registry.mutations.items():
        if name in ops and ops[name].func is not spec.func:
            raise UsageError(f"mutation operator {name!r} ({spec.origin}) has the name of a built-in operator; "
                             "rename it")
        ops[name] = spec
    if names:
        unknown = [n for n in names if n not in ops]
        if unknown:
            raise UsageError(f"--operators: unknown mutation operator {unknown[0]!r}; known: {', '.join(ops)}")
        return [ops[n] for n in names]
    return list(ops.values())


def collect_cases(paths: list[Path], options: RunOptions, *, judge: Any = None
                  ) -> tuple[list[tuple[CompactionCase, frozenset[str]]], list[str]]:
    """The compaction cases of scenario files and transcripts under ``paths``, with each scenario's
    known failures; and notes (a scenario with no compaction, a transcript problem)."""
    from ..runner import check_unique_names, run_scenario
    from ..scenario.schema import find_scenarios, load_scenario
    from ..transcript.jsonl import read_transcript

    yamls, jsonls = [], []
    for p in paths:
        if not p.exists():
            raise UsageError(f"{p}: no such file or folder")
        if p.is_dir():
            yamls += find_scenarios([p]) if any(p.rglob("*.yaml")) or any(p.rglob("*.yml")) else []
            jsonls += sorted(p.rglob("*.jsonl"))
        elif p.suffix == ".jsonl":
            jsonls.append(p)
        elif p.suffix in (".yaml", ".yml"):
            yamls.append(p)
        else:
            raise UsageError(f"{p}: expected a scenario (*.yaml) or a Claude Code transcript (*.jsonl)")
    scenarios = [load_scenario(f) for f in yamls]
    check_unique_names(scenarios)
    prompts, compactor = options.prompts(), options.make_compactor()
    out, notes = [], []
    for scenario in scenarios:
        run = run_scenario(scenario, llm=options.make_llm(scenario.faults or None),
                           context_window=options.context_window, compact_at_end=options.compact_at_end,
                           prompts=prompts, compactor=compactor)
        cases = cases_from_run(run)
        if not cases:
            notes.append(f"{scenario.path}: no compaction happened; nothing to mutate")
        known = frozenset(scenario.known_failures) if getattr(run, "compactor", "claude_code") == "claude_code" else frozenset()
        for c in cases:
            c.judge = judge
            out.append((c, known))
    for path in jsonls:
        transcript = read_transcript(path)
        cases = cases_from_transcript(transcript)
        if not cases:
            notes.append(f"{path}: no compaction in this transcript; nothing to mutate")
        notes += [f"{path}: {p}" for p in transcript.problems]
        for c in cases:
            c.judge = judge
            out.append((c, frozenset()))
    return out, notes


def cmd_validate(args: argparse.Namespace) -> int:
    """Run ``ctxeval validate``; return the exit code."""
    from .common import check_writable

    options = RunOptions.from_namespace(args, graders_dirs=tuple(Path(d) for d in (args.graders_dir or [])))
    options.check_key()
    registry = load_graders([Path(d) for d in (args.graders_dir or [])])
    specs = registry.select(args.graders)
    operators = operators_for(registry, args.operators)
    for out in (args.json_out, args.html_out):
        if out:
            check_writable(Path(out))
    judge = options.make_judge() if any(s.kind == "llm" for s in specs) else None
    paths = [Path(p) for p in args.paths] or [Path("scenarios") if Path("scenarios").is_dir() else builtin_scenarios_dir()]
    cases, notes = collect_cases(paths, options, judge=judge)
    if not cases:
        raise UsageError(f"no compaction to mutate under {', '.join(map(str, paths))}")
    report = validate_cases(cases, registry, specs, operators, seed=args.seed, min_kill=args.min_kill,
                            heuristic_judge=options.backend == "offline",
                            judge_label=getattr(judge, "label", None))
    for note in notes:
        print(f"note: {note}")
    for line in format_report(report, verbose=args.verbose):
        print(line)
    if args.json_out:
        from ..results import write_results

        print(f"validate JSON written to {write_results(args.json_out, report.as_dict())}")
    if args.html_out:
        Path(args.html_out).write_text(render_html(report), encoding="utf-8")
        print(f"validate report written to {args.html_out}")
    return 0 if report.passed else 1


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def table_rows(report: ValidationReport) -> list[tuple[str, ...]]:
    """The per-grader table: grader, kind, mutants, killed, kill rate, false alarms, collateral."""
    rows: list[tuple[str, ...]] = []
    for s in report.graders.values():
        kind = s.kind + ("*" if s.heuristic else "")
        rows.append((s.grader, kind, str(s.mutants), str(s.killed), _rate(s.kill_rate), str(len(s.false_alarms)),
                     str(len(s.collateral)), "ok" if s.ok(report.min_kill) else "FAIL"))
    return rows


def format_report(report: ValidationReport, verbose: bool = False) -> list[str]:
    """The printed validation report: the table, then survivors, false alarms, collateral, errors."""
    header = ("grader", "kind", "mutants", "killed", "kill rate", "false alarms", "collateral", "")
    rows = table_rows(report)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines = [f"ctxeval validate: {report.cases} summaries ({report.real_cases} from real transcripts), "
             f"{report.mutants} mutants, seed {report.seed}, --min-kill {report.min_kill:.0%}", ""]
    lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    if any(s.heuristic for s in report.graders.values()):
        lines.append(f"* llm graders judged by {report.judge or 'the offline heuristic'}: a HEURISTIC's rates, "
                     "not a model's; not held to --min-kill (use --backend anthropic or replay)")
    for s in report.graders.values():
        for e in s.errors[:5]:
            lines.append(f"ERROR {e}")
    for e in report.errors:
        if e.startswith("mutation operator"):
            lines.append(f"ERROR {e}")
    for s in report.graders.values():
        shown = s.survivors if verbose or not s.heuristic else s.survivors[:3]
        if len(shown) < len(s.survivors):
            lines.append(f"{s.grader} (heuristic): {len(s.survivors)} survivors, the first {len(shown)} below "
                         "(-v lists all)")
        for sv in shown:
            lines.append(f"SURVIVED {s.grader} <- {sv['operator']} on {Path(sv['source']).name} compaction "
                         f"{sv['compaction']}: {sv['what']}; slipped through: \"{_clip(sv['text'])}\" ({sv['status']}: "
                         f"{_clip(sv['reason'], 120)})")
    for s in report.graders.values():
        for fa in s.false_alarms:
            lines.append(f"FALSE ALARM {s.grader} on unmutated {Path(fa['source']).name} compaction "
                         f"{fa['compaction']}: {_clip(fa['reason'], 200)}")
    for s in report.graders.values():
        for rf in s.real_failures:
            lines.append(f"REAL FAIL {s.grader} on {Path(rf['source']).name} compaction {rf['compaction']} "
                         f"(a genuine defect or a false alarm; read it): {_clip(rf['reason'], 200)}")
    for s in report.graders.values():
        if not s.collateral:
            continue
        by_op: dict[str, int] = {}
        for c in s.collateral:
            by_op[c["operator"]] = by_op.get(c["operator"], 0) + 1
        lines.append(f"collateral {s.grader}: " + ", ".join(f"{op} x{n}" for op, n in sorted(by_op.items())))
        if verbose:
            lines += [f"    {c['operator']} on {Path(c['source']).name} compaction {c['compaction']}: {c['what']}: "
                      f"{_clip(c['reason'], 160)}" for c in s.collateral]
    lines.append("validate: " + ("PASS" if report.passed else "FAIL"))
    return lines


def _clip(text: str, n: int = 100) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def render_html(report: ValidationReport) -> str:
    """A self-contained HTML page of the report; every value escaped."""
    e = html.escape
    head = ("grader", "kind", "mutants", "killed", "kill rate", "false alarms", "collateral", "")
    rows = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in table_rows(report))
    items = []
    for s in report.graders.values():
        for sv in s.survivors:
            items.append(f"<li><b>{e(s.grader)}</b> &larr; {e(sv['operator'])} on {e(sv['source'])} "
                         f"compaction {e(str(sv['compaction']))}: {e(sv['what'])}<br><code>{e(sv['text'])}</code>"
                         f"<br><small>{e(sv['status'])}: {e(sv['reason'])}</small></li>")
        for fa in s.false_alarms:
            items.append(f"<li><b>FALSE ALARM {e(s.grader)}</b> on {e(fa['source'])}: {e(fa['reason'])}</li>")
    errors = "".join(f"<li>{e(x)}</li>" for x in report.errors)
    return (f"<!doctype html><meta charset=utf-8><title>ctxeval validate</title>"
            f"<style>body{{font-family:sans-serif}}td,th{{padding:2px 8px;text-align:left}}</style>"
            f"<h1>ctxeval validate: {'PASS' if report.passed else 'FAIL'}</h1>"
            f"<p>{report.cases} summaries, {report.mutants} mutants, seed {report.seed}, min kill "
            f"{report.min_kill:.0%}; judge: {e(report.judge or '-')}</p>"
            f"<table><tr>{''.join(f'<th>{e(h)}</th>' for h in head)}</tr>{rows}</table>"
            f"<h2>Errors</h2><ul>{errors or '<li>none</li>'}</ul>"
            f"<h2>Survivors and false alarms</h2><ul>{''.join(items) or '<li>none</li>'}</ul>")


def cmd_graders(args: argparse.Namespace) -> int:
    """Run ``ctxeval graders``: every grader, its kind, what it checks, expect keys, operators."""
    registry = load_graders([Path(d) for d in (args.graders_dir or [])])
    operators = operators_for(registry)
    rows = [{"name": s.name, "kind": s.kind, "checks": s.description, "expect": list(s.expect_keys),
             "operators": [o.name for o in operators if s.name in o.targets or o.name in s.targets],
             "origin": s.origin} for s in registry]
    if args.as_json:
        print(json.dumps({"graders": rows}, indent=2, ensure_ascii=False))
        return 0
    for r in rows:
        print(f"{r['name']} ({r['kind']})")
        print(f"    checks:    {r['checks'] or '-'}")
        print(f"    expect:    {', '.join(r['expect']) or '-'}")
        print(f"    operators: {', '.join(r['operators']) or '- (no operator targets it: ctxeval validate cannot measure it)'}")
    return 0
