"""The unit suite's Hypothesis profile still finds bugs (issue 22: the suite runs fewer examples
than before, the soak job many).

Each test plants a bug that shows only on some inputs (a session with two usage anchors, five or
more compactable results, a prompt-too-long gap larger than half a round) into the function a
property of test_engine_properties.py checks, and runs that property, unchanged, under the
active profile (``ci`` derandomised, ``dev`` random; conftest.py). The property must fail. If a
profile's example count were cut below what these bugs need, these tests fail, not the bugs'
users. The correct implementations pass the same properties in test_engine_properties.py.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

import pytest
from hypothesis import Phase, settings

import test_engine_properties as props
from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine.microcompact import time_based_clear
from pytest_ctxeval.engine.ptl import truncate_head_for_ptl_retry
from pytest_ctxeval.core.tokens import anchor_tokens, estimate_messages


def _fails(property_test: Callable[..., None]) -> BaseException:
    """Run ``property_test`` under the active profile's example count, writing no example database
    (a planted bug's counterexample must not be replayed against the real code later) and not
    shrinking (finding is what is tested; shrinking costs more than the search); the error."""
    with pytest.raises((AssertionError, ExceptionGroup)) as raised:
        settings(database=None, phases=[Phase.explicit, Phase.generate], report_multiple_bugs=False)(property_test)()
    return raised.value


def test_anchoring_on_the_first_usage_instead_of_the_last_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a prefix with two responses carrying usage tells the first anchor from the last."""
    def first_anchor(messages: list[Any], config: EngineConfig = props.CFG) -> int:
        for index, message in enumerate(messages):
            if anchor_tokens(message):
                return anchor_tokens(message) + estimate_messages(messages[index + 1:], config)
        return estimate_messages(messages, config)

    monkeypatch.setattr(props, "count_tokens", first_anchor)
    _fails(props.test_anchored_count_is_last_usage_plus_estimates_after)


def test_keeping_one_recent_result_too_few_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a conversation with more compactable results than the kept window shows it."""
    def keeps_one_fewer(messages: list[Any], config: EngineConfig, state: Any, tool_name: Any) -> list[str]:
        fewer = config.replace(microcompact_keep_recent=config.microcompact_keep_recent - 1)
        return time_based_clear(messages, fewer, state, tool_name)

    monkeypatch.setattr(props, "time_based_clear", keeps_one_fewer)
    _fails(props.test_microcompact_clears_only_old_compactable_results)


def test_covering_only_half_the_prompt_too_long_gap_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a parsed gap larger than the rounds half of it needs drops too little."""
    def half_the_gap(messages: list[Any], gap: int | None, config: EngineConfig, **kw: Any) -> Any:
        return truncate_head_for_ptl_retry(messages, gap // 2 if gap else gap, config, **kw)

    monkeypatch.setattr(props, "truncate_head_for_ptl_retry", half_the_gap)
    _fails(props.test_ptl_truncation_drops_whole_oldest_rounds)
