"""Planted facts through five rounds, per compactor: the table in docs/facts.md (issue 19; not a test).

    python benchmarks/facts_survival.py [--seeds 101-104] [--rounds 5] [--compactors a,b,...]

Generates held-out planted-fact scenarios (``ctxeval facts generate``: 20 facts, four each of the five
types compaction-conformance-kit plants, in user messages, a memory file, tool results and the
assistant's words, then ``--rounds`` rounds of work each ending in ``/compact``), runs each through
every compactor offline and prints the share of planted facts held per type and per place, in each
round (``ctxeval facts survival``'s table). The protocol is the kit's: every fact is planted before
round 1, round k compacts the context round k-1 left, a fact counts as held when all its tokens are
in what the model sees. Offline, every compactor's summary comes from the reference model under that
compactor's own prompt: the table measures what each prompt asks the reference to keep and what each
compactor keeps verbatim, not a real model.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_ctxeval.cli.facts import survival_by_compactor  # noqa: E402
from pytest_ctxeval.scenario.factgen import generate_yaml  # noqa: E402
from pytest_ctxeval.reporting.facts_table import survival_lines  # noqa: E402

COMPACTORS = "claude_code,codex,gemini_cli,opencode,observation_masking"


def seeds(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="101-104", help="seeds, 'A-B' (default 101-104: not the library's)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--compactors", default=COMPACTORS)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="ctxeval-facts-bench-"))
    files = []
    for seed in seeds(args.seeds):
        path = folder / f"facts_seed{seed}.yaml"
        path.write_text(generate_yaml(seed, rounds=args.rounds), encoding="utf-8")
        files.append(path)
    started = time.perf_counter()
    tables = survival_by_compactor(files, args.compactors.split(","))
    print(f"{len(files)} generated scenarios (seeds {args.seeds}, {args.rounds} rounds), "
          f"{len(tables)} compactors, offline, {time.perf_counter() - started:.0f} s\n")
    for name, entries in tables.items():
        for line in survival_lines(entries, label=name):
            print(line)
        print()


if __name__ == "__main__":
    main()
