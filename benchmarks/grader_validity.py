"""Grader validity on real sessions (issue 15; not a test): false alarms and misses per grader.

    CTXEVAL_SHARED=../shared python benchmarks/grader_validity.py [--labels tests/validity/labels.yaml]
                                                                  [--corpus DIR] [-v]

Grades every compaction labelled in ``tests/validity/labels.yaml`` (the shared corpus's real Claude
Code compactions, labelled by reading the transcripts) with the built-in graders, the LLM graders
through the offline heuristic judge, and prints per grader:

* false alarms among failing verdicts: of the compactions a grader failed, the share labelled pass
  or n/a (target: 5 % or less);
* misses among labelled defects: of the compactions labelled fail, the share the grader did not
  fail (target: 0).

``-v`` lists every disagreement with the label's reason and the grader's. A labelled compaction the
reader does not find is listed, as is a compaction found but not labelled.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _corpus() -> Path:
    shared = os.environ.get("CTXEVAL_SHARED")
    candidates = ([Path(shared)] if shared else []) + [ROOT.parent / "shared"]
    for c in candidates:
        if (c / "corpus").is_dir():
            return c / "corpus"
    sys.exit("grader_validity: no corpus found; set CTXEVAL_SHARED to the folder holding corpus/")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", type=Path, default=ROOT / "tests" / "validity" / "labels.yaml")
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)

    from pytest_ctxeval.grading import load_graders
    from pytest_ctxeval.grading.judging import Judge
    from pytest_ctxeval.llm import make_llm
    from pytest_ctxeval.grading.validity import check, format_rates, load_labels, rates

    labelled = load_labels(args.labels)
    registry = load_graders()
    judge = Judge(make_llm("offline", None))
    report = check(args.corpus or _corpus(), labelled, registry, judge=judge)
    print(f"{len(labelled)} labelled compactions, {len(report.rows)} verdicts compared "
          f"(judge: {judge.label})\n")
    for line in format_rates(rates(report.rows)):
        print(line)
    for title, items in (("labelled but not found by the reader", report.not_found),
                         ("found but not labelled", report.unlabelled),
                         ("labelled file missing from the corpus", report.missing_files)):
        if items:
            print(f"\n{title}:")
            for item in items:
                print(f"  {item}")
    wrong = [r for r in report.rows if not r.agrees]
    if args.verbose and wrong:
        print("\ndisagreements:")
        for r in wrong:
            print(f"  {r.compaction} {r.grader}: labelled {r.expected} ({r.label_reason}); got {r.got}: "
                  f"{' | '.join(r.verdict_reasons)[:300]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
