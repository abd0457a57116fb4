"""The suite's ``xdist_group`` marks take effect: under ``pytest -n`` (the README's test command)
conftest.py distributes with ``loadgroup``, and a grouped test reports its group in its id, which is
how the controller keeps a group on one worker. With pytest 9.2 and pytest-xdist 3.8 the id lost
the group unnoticed and every group's costly fixture ran on each worker (pytest-xdist #1386)."""

from __future__ import annotations

import os

import pytest


@pytest.mark.xdist_group("xdist_group_check")
def test_a_grouped_test_carries_its_group_under_xdist(request: pytest.FixtureRequest) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("checks a pytest-xdist run (pytest -n auto); this run has no workers")
    if any(str(arg).startswith("--dist") for arg in request.config.invocation_params.args):
        pytest.skip("an explicit --dist chose the distribution")
    assert request.config.workerinput.get("ctxeval_dist") == "loadgroup"
    assert request.config.getoption("loadgroup") is True
    assert request.node.nodeid.endswith("::test_a_grouped_test_carries_its_group_under_xdist@xdist_group_check")


def test_an_ungrouped_test_keeps_its_id(request: pytest.FixtureRequest) -> None:
    assert "@" not in request.node.nodeid
