"""The reason of a verdict over several compactions (review 5, #12): "1 of 2 compactions pass"
next to a pass read as one failure when the other compaction was n/a."""

from __future__ import annotations

from pytest_ctxeval.evaluation import aggregate
from pytest_ctxeval.grading.registry import CompactionCase, Verdict


def _case(index: int) -> CompactionCase:
    return CompactionCase(source="s", index=index, kind="full", trigger="auto", summary="", summary_message="",
                          summarized=[], history=[], post_messages=[], turn=10 * index)


def test_a_pass_with_an_n_a_compaction_says_n_a_with_its_reason() -> None:
    v = aggregate("errors_preserved", [(_case(1), Verdict.not_applicable("no tool failed before compaction 1")),
                                       (_case(2), Verdict.passed_("all 1 error lines in section 4"))])
    assert v.status == "pass"
    assert v.reasons == ["1 pass, 1 n/a (compaction 1 (auto, turn 10): no tool failed before compaction 1)"]


def test_all_passing_compactions_are_counted_and_a_fail_still_fails() -> None:
    ok = aggregate("g", [(_case(1), Verdict.passed_("a")), (_case(2), Verdict.passed_("b"))])
    assert (ok.status, ok.reasons) == ("pass", ["2 of 2 compactions pass"])
    bad = aggregate("g", [(_case(1), Verdict.not_applicable("none")), (_case(2), Verdict.failed("lost x"))])
    assert (bad.status, bad.reasons) == ("fail", ["compaction 2 (auto, turn 20): lost x"])
