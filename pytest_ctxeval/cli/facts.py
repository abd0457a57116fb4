"""``ctxeval facts generate`` and ``ctxeval facts survival``: planted-fact scenarios and their tables.

* ``ctxeval facts generate --seed N [--rounds 5] [--types a,b] [--per-type 4] [--planted-in user,tool]
  [--updates K] -o scenario.yaml`` writes a deterministic planted-fact scenario
  (:mod:`pytest_ctxeval.scenario.factgen`): a held-out set of your own is a list of seeds.
* ``ctxeval facts survival [PATH...] [--compactors claude_code,codex,...]`` runs every scenario with
  ``facts:`` under each compactor (offline by default) and prints the share of planted facts held per
  type (and per place planted) in each round, with each type's bar and cliff round
  (:mod:`pytest_ctxeval.reporting.facts_table`). ``benchmarks/facts_survival.py`` prints the same for generated
  seeds; docs/facts.md holds its figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..core.renamed import add_renamed_option

__all__ = ["add_facts_command", "run_facts", "survival_by_compactor"]


def _csv(value: str) -> tuple[str, ...]:
    items = tuple(v.strip() for v in value.split(",") if v.strip())
    if not items:
        raise argparse.ArgumentTypeError("expected names separated by commas")
    return items


def add_facts_command(sub: Any) -> None:
    """Register ``ctxeval facts`` with its two verbs."""
    from ..scenario.factgen import DEFAULT_TYPES
    from ..scenario.planted import PLACES

    facts = sub.add_parser("facts", help="planted-fact scenarios: generate one, or print survival per type and round",
                           description="Planted facts that must survive compaction, round after round "
                                       "(see docs/facts.md).")
    verbs = facts.add_subparsers(dest="facts_command", metavar="VERB", parser_class=type(facts))
    gen = verbs.add_parser("generate", help="write a deterministic planted-fact scenario",
                           description="Write a planted-fact scenario: a coding session with tool calls, typed facts "
                                       "planted early (user messages, a memory file, tool results, the assistant's "
                                       "words), then ROUNDS blocks of work each ending in /compact. The same seed and "
                                       "options always give the same file. Exit 0, or 2 on bad input.")
    gen.add_argument("--seed", type=int, required=True, metavar="N", help="the seed (any integer)")
    gen.add_argument("--rounds", type=int, default=5, metavar="N", help="compactions in the session (default 5)")
    gen.add_argument("--types", type=_csv, default=DEFAULT_TYPES, metavar="T,...",
                     help=f"fact types, comma-separated (default {','.join(DEFAULT_TYPES)}; also identifier, or "
                          "your own lower-case names)")
    gen.add_argument("--per-type", type=int, default=4, metavar="N", help="facts of each type (default 4)")
    gen.add_argument("--planted-in", type=_csv, default=PLACES, metavar="P,...",
                     help=f"where facts are planted, comma-separated, in turn (default {','.join(PLACES)})")
    gen.add_argument("--updates", type=int, default=0, metavar="K",
                     help="facts whose value a later turn changes (default 0; checked by stale_values)")
    gen.add_argument("--name", default=None, help="the scenario's name (default facts_seedN)")
    gen.add_argument("-o", "--output", required=True, metavar="FILE.yaml", help="where to write it ('-': stdout)")
    surv = verbs.add_parser("survival", help="print the share of planted facts held per type and round, per compactor",
                            description="Run scenarios with facts: under each compactor (offline by default) and print "
                                        "the share of planted facts held per type and per place planted, in each "
                                        "round, with each type's bar and cliff round. Exit 0, or 2 on bad input.")
    surv.add_argument("paths", nargs="+", metavar="PATH", help="scenario files or folders (those without facts: "
                                                              "are skipped)")
    add_renamed_option(surv.add_argument, "--", "compactors", dest="compactors", type=_csv, default=("claude_code",),
                       metavar="S,...", help="compactors, comma-separated (default claude_code; e.g. "
                       "claude_code,codex,gemini_cli,opencode,observation_masking, or package.module:compact)")
    surv.add_argument("--json", dest="json_out", metavar="OUT", help="also write the tables as JSON")


def run_facts(args: argparse.Namespace) -> int:
    """Run ``ctxeval facts VERB``."""
    from ..errors import UsageError

    if args.facts_command == "generate":
        from ..scenario.factgen import generate_yaml

        text = generate_yaml(args.seed, rounds=args.rounds, types=tuple(args.types), per_type=args.per_type,
                             planted_in=tuple(args.planted_in), updates=args.updates, name=args.name)
        if args.output == "-":
            sys.stdout.write(text)
            return 0
        out = Path(args.output)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{out}: cannot write ({exc.strerror or exc})") from None
        print(f"wrote {out}")
        return 0
    if args.facts_command == "survival":
        from ..scenario.schema import find_scenarios

        files = find_scenarios([Path(p) for p in args.paths])
        tables = survival_by_compactor(files, list(args.compactors))
        if not any(entries for entries in tables.values()):
            raise UsageError(f"no scenario with facts: under {', '.join(args.paths)} (ctxeval facts generate makes one)")
        _print_tables(tables)
        if args.json_out:
            from ..reporting.facts_table import combine

            doc = {name: {"by_type": combine(e, "by_type"), "by_place": combine(e, "by_place"),
                          "scenarios": [x["name"] for x in e]} for name, e in tables.items()}
            Path(args.json_out).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
            print(f"tables written to {args.json_out}")
        return 0
    raise UsageError("ctxeval facts: give a verb: generate or survival (ctxeval facts --help)")


def survival_by_compactor(files: list[Path], compactors: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Per compactor, the results entries (with ``survival``) of the scenarios that plant facts."""
    from ..compaction.loader import load_compactor
    from ..errors import CtxEvalError
    from ..evaluate import Evaluator
    from ..grading.registry import load_graders
    from ..results import outcome_entry
    from ..scenario.schema import load_scenario

    registry = load_graders()
    evaluator = Evaluator(None, registry, registry.select(["facts_survive"]), compactor=None)
    scenarios = [s for s in (load_scenario(f) for f in files) if s.facts]
    out: dict[str, list[dict[str, Any]]] = {}
    for spec in compactors:
        compactor = None if spec == "claude_code" else load_compactor(spec)
        name = getattr(compactor, "name", "claude_code")
        entries = out.setdefault(name, [])
        for scenario in scenarios:
            outcome = evaluator.evaluate(scenario, compactor=compactor,
                                         session_dir=tempfile.mkdtemp(prefix="ctxeval-facts-")).outcome
            if outcome.skipped is not None:
                print(f"{name}: {scenario.display_name}: skipped: {outcome.skipped}", file=sys.stderr)
                continue
            if outcome.error is not None:
                raise CtxEvalError(outcome.error)  # a table of survival needs every scenario's run
            entries.append(outcome_entry(outcome))
    return out


def _print_tables(tables: dict[str, list[dict[str, Any]]]) -> None:
    from ..reporting.facts_table import survival_lines

    first = True
    for name, entries in tables.items():
        lines = survival_lines(entries, label=name)
        if not lines:
            continue
        if not first:
            print()
        first = False
        for line in lines:
            print(line)
