"""``observation_masking`` against the JetBrains baseline (shared/PEERS.md lines 66-68, 52-55)."""

from __future__ import annotations

import pytest

from pytest_ctxeval.compaction.masking import ObservationMasking, mask_observations
from pytest_ctxeval.errors import UsageError
from pytest_ctxeval.grading.registry import cases_from_run
from pytest_ctxeval.core.messages import AssistantMessage, result_text, tool_results
from pytest_ctxeval.runner import run_scenario

from compaction_kit import Kit, state


def _observations(messages):
    return [result_text(b) for m in messages for b in tool_results(m)]


@pytest.mark.parametrize("keep", [0, 1, 3, 10])
def test_keeps_exactly_the_last_n_observations(keep):
    kit = Kit()
    msgs = [m for i in range(15) for m in kit.call("Bash", f"output {i}\nsecond line")]
    masked, ids = mask_observations(msgs, msgs, keep)
    shown = _observations(masked)
    assert shown[len(shown) - keep:] == [f"output {i}\nsecond line" for i in range(15 - keep, 15)]
    assert all(s.startswith("[Old observation masked: 2 line(s) of Bash output omitted]") for s in shown[:15 - keep])
    assert len(ids) == 15 - keep
    # what is not an observation is left alone, and the ids (uuids) stay
    assert [m.uuid for m in masked] == [m.uuid for m in msgs]
    assert [m for m in masked if isinstance(m, AssistantMessage)] == [m for m in msgs if isinstance(m, AssistantMessage)]


def test_masks_at_the_reference_engines_threshold_and_writes_no_summary():
    kit = Kit()
    msgs = [kit.user("go")] + [m for i in range(12) for m in kit.call("Bash", "o" * 100)]
    s = state(msgs, window=20_000)
    masking = ObservationMasking()
    assert not masking.should_compact(state(msgs, window=20_000, tokens=s.config.autocompact_threshold - 1))
    assert masking.should_compact(state(msgs, window=20_000, tokens=s.config.autocompact_threshold))
    done = masking.compact(s)
    assert done.summary == "" and len([o for o in _observations(done.messages) if not o.startswith("[Old")]) == 10
    assert masking.compact(state(done.messages)) is None  # nothing new to mask
    assert not masking.should_compact(state(done.messages, tokens=10**6))  # 10 observations, all kept


def test_every_round_masks_before_every_request_with_more_than_n_observations():
    kit = Kit()
    msgs = [m for i in range(4) for m in kit.call("Bash", "x")]
    assert ObservationMasking(keep=3, every_round=True).should_compact(state(msgs, tokens=1))
    assert not ObservationMasking(keep=3).should_compact(state(msgs, tokens=1))


def test_in_a_run_every_compaction_leaves_exactly_ten_observations_and_makes_no_model_call(tmp_path):
    run = run_scenario("scenarios/repeated_reads.yaml", compactor="observation_masking", session_dir=tmp_path)
    assert run.compactions and run.usage["api_calls"] == 0
    for record in run.compactions:
        live = [o for o in _observations(record.result.post_messages) if not o.startswith("[Old observation masked")]
        assert len(live) == 10
    case = cases_from_run(run)[0]
    assert case.summary == "" and case.summary_message == "" and case.compactor == "observation_masking"


def test_keep_must_not_be_negative():
    with pytest.raises(UsageError, match="keep must be a whole number of at least 0"):
        ObservationMasking(keep=-1)
