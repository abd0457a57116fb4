"""The graders against the hand-labelled real compactions of the shared corpus (issue 15).

``labels.yaml`` gives, for every compaction in ``shared/corpus/``, the status a careful reader expects
from each grader, with the reason found in the transcript. These tests hold the graders to it: no
false alarm (a fail where the label says pass or n/a) and no miss (a labelled defect not failed).
``benchmarks/grader_validity.py`` prints the same comparison as rates.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_ctxeval.errors import CtxEvalError
from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.grading.judging import Judge
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.grading.validity import check, format_rates, load_labels, rates

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: shared_paths, as the other tests import it
from shared_paths import CORPUS_DIR as CORPUS

LABELS = Path(__file__).with_name("labels.yaml")

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS} "
                                                               "(set CTXEVAL_SHARED to the folder holding corpus/)")


@pytest.fixture(scope="module")
def report():
    return check(CORPUS, load_labels(LABELS), load_graders(), judge=Judge(make_llm("offline", None)))


def test_every_corpus_compaction_is_labelled_for_every_grader():
    labelled = load_labels(LABELS)
    graders = set(load_graders().names)
    for item in labelled:
        assert set(item.labels) == graders, (item.name, graders ^ set(item.labels))
    if CORPUS.is_dir():
        files = {p.name for p in CORPUS.glob("*.jsonl")}
        assert {i.file for i in labelled} <= files


@needs_corpus
def test_every_labelled_compaction_is_found(report):
    assert not report.missing_files, f"labelled files missing from the corpus: {report.missing_files}"
    assert not report.not_found, "labelled compactions the reader did not find:\n  " + "\n  ".join(report.not_found)
    assert not report.unlabelled, "compactions found but not labelled (label them):\n  " + "\n  ".join(report.unlabelled)


@needs_corpus
def test_no_false_alarm_and_no_miss(report):
    table = rates(report.rows)
    wrong = [r for r in report.rows if not r.agrees]
    detail = "\n".join(f"{r.compaction} {r.grader}: labelled {r.expected} ({r.label_reason}); got {r.got}: "
                       f"{' | '.join(r.verdict_reasons)[:240]}" for r in wrong)
    summary = "\n".join(format_rates(table))
    assert sum(r["misses"] for r in table.values()) == 0, f"missed labelled defects:\n{detail}\n\n{summary}"
    failing = sum(r["failing"] for r in table.values())
    false_alarms = sum(r["false_alarms"] for r in table.values())
    assert false_alarms <= 0.05 * failing, f"false alarms {false_alarms} of {failing} failing verdicts:\n{detail}"
    assert not wrong, f"verdicts that differ from the labels:\n{detail}\n\n{summary}"


@needs_corpus
def test_the_labelled_defects_are_the_true_defect_classes(report):
    # The classes the issue says must stay caught are in the labelled set and are caught.
    fails = {(r.compaction.split(":")[0][:40], r.grader) for r in report.rows if r.expected == "fail"}
    graders = {g for _, g in fails}
    assert {"verbatim_user_messages", "next_step_quote", "files_preserved"} <= graders
    assert all(r.got == "fail" for r in report.rows if r.expected == "fail")


def test_a_bad_labels_file_names_the_place(tmp_path):
    bad = tmp_path / "labels.yaml"
    bad.write_text("format: pytest-ctxeval/validity-labels\ncompactions:\n  - file: a.jsonl\n    boundary_line: 3\n"
                   "    labels:\n      nine_sections: [passed, because]\n", encoding="utf-8")
    with pytest.raises(CtxEvalError, match=r"compactions\[0\]\.labels\.nine_sections: status must be one of"):
        load_labels(bad)
    bad.write_text("format: something-else\n", encoding="utf-8")
    with pytest.raises(CtxEvalError, match="not a labels file"):
        load_labels(bad)


def test_rates_count_false_alarms_among_failing_verdicts_and_misses_among_defects():
    from pytest_ctxeval.grading.validity import Row

    rows = [Row("a:1", "g", "pass", "fail", "", ()), Row("b:1", "g", "fail", "fail", "", ()),
            Row("c:1", "g", "fail", "pass", "", ()), Row("d:1", "g", "n/a", "n/a", "", ())]
    r = rates(rows)["g"]
    assert (r["failing"], r["false_alarms"], r["defects"], r["misses"]) == (2, 1, 2, 1)
    assert r["false_alarm_rate"] == 0.5 and r["miss_rate"] == 0.5
