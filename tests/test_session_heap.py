"""``pytest --ctxeval`` freezes the heap it imported (core/gcpause.freeze_heap) so the cyclic
collector does not walk the SDK and the engine in every full collection and at exit; it must thaw
it when the session ends (an in-process run leaves the collector as it found it) and leave alone a
process that disabled the collector or froze objects itself."""

from __future__ import annotations

import gc

import pytest

from pytest_ctxeval.core.gcpause import freeze_heap, paused_gc, thaw
from scenario_texts import TINY

SEES_FREEZE = """
    import gc
    import pytest

    @pytest.mark.ctxeval
    def test_marked():
        print("frozen during the session:", gc.get_freeze_count())
        assert gc.get_freeze_count() {op} 0
"""


def test_freeze_then_thaw_and_no_second_freeze() -> None:
    assert gc.get_freeze_count() == 0
    try:
        with paused_gc() as was_on:
            assert was_on
            assert freeze_heap()
        frozen = gc.get_freeze_count()
        assert frozen > 1000  # this test process: pytest, hypothesis, the package
        assert not freeze_heap()  # already frozen: left as it is
        assert gc.get_freeze_count() == frozen
    finally:
        thaw()
    assert gc.get_freeze_count() == 0 and gc.isenabled()


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", **{"scenarios/tiny": TINY})
    return pytester


def test_an_in_process_session_freezes_and_thaws(project: pytest.Pytester) -> None:
    project.makepyfile(test_marked=SEES_FREEZE.format(op=">"))
    assert gc.get_freeze_count() == 0
    project.runpytest("--ctxeval", "-p", "no:cacheprovider", "-k", "marked").assert_outcomes(passed=1)
    assert gc.get_freeze_count() == 0, "the session must thaw what it froze"
    assert gc.isenabled()


def test_a_process_that_disabled_the_collector_is_left_alone(project: pytest.Pytester) -> None:
    project.makeconftest("import gc\ngc.disable()\n")
    project.makepyfile(test_marked=SEES_FREEZE.format(op="=="))
    project.runpytest_subprocess("--ctxeval", "-p", "no:cacheprovider", "-k", "marked").assert_outcomes(passed=1)


def test_without_ctxeval_nothing_is_frozen(project: pytest.Pytester) -> None:
    project.makepyfile(test_plain="""
        import gc

        def test_plain():
            assert gc.get_freeze_count() == 0
    """)
    project.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
