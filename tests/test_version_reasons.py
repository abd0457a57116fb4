"""The n/a reason a version table row gives reads as sentences (C4 of the fresh-eyes review: the
behaviour's description, which holds its own clauses, was glued into "... by design is seen in ...")."""

from __future__ import annotations

import pytest

from pytest_ctxeval.grading.versions import PROMISES, promise


def test_a_promise_not_made_names_the_version_the_behaviour_and_where_it_is_seen():
    reason = promise("analysis_stripped", "2.1.49").reason()
    assert reason == (
        "Claude Code 2.1.49 does not promise this. The behaviour: the stored summary holds only the 'Summary:' "
        "part (the 'Analysis:' scratchpad is removed); older versions keep 'Analysis:' then 'Summary:' by design. "
        "Seen in 2.1.69 and later; not in 2.0.60 - 2.1.56 (pytest_ctxeval/grading/versions.py; e.g. "
        "M-Thisness__M-Claude__97b0ffde-ece9-4977-91cb-5c8cdeabdf3f.jsonl)")
    assert "by design is seen" not in reason


@pytest.mark.parametrize("key", sorted(PROMISES))
def test_no_reason_glues_the_description_to_the_span(key):
    b = PROMISES[key]
    for version in filter(None, (b.absent_from, b.absent_until, "2.1.60")):
        reason = promise(key, version).reason()
        assert f"{b.description} is seen" not in reason and f"{b.description}: seen" not in reason
        assert f"The behaviour: {b.description}." in reason or promise(key, version).made
