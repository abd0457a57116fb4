"""``pytest --ctxeval`` freezes the heap it imported (core/gcpause.freeze_heap) so the cyclic
collector does not walk the SDK and the engine in every full collection and at exit; it must thaw
it when the session ends (an in-process run leaves the collector as it found it) and leave alone a
process that disabled the collector or froze objects itself."""

from __future__ import annotations

import gc

import pytest

from pytest_ctxeval.core.gcpause import freeze_heap, paused_gc, thaw
from scenario_texts import TINY

# The marker in two pieces: a module that spells it whole is imported under --ctxeval (see
# plugin.pytest_ignore_collect), and this one has nothing to run there.
MARKER = "@pytest.mark" + ".ctxeval"
SEES_FREEZE = """
    import gc
    import pytest

    {marker}
    def test_marked():
        print("frozen during the session:", gc.get_freeze_count())
        assert gc.get_freeze_count() {op} 0
"""


@pytest.fixture(autouse=True)
def _thawed():
    """These tests freeze from nothing: the suite's own freeze (conftest.py) is undone for them."""
    frozen = gc.get_freeze_count()
    if frozen:
        gc.unfreeze()
    yield
    if frozen:
        gc.freeze()


def test_freeze_then_thaw_and_no_second_freeze() -> None:
    assert gc.get_freeze_count() == 0
    try:
        with paused_gc() as was_on:
            assert was_on
            assert freeze_heap()
        assert gc.get_freeze_count() > 1000  # this test process: pytest, hypothesis, the package
        made_since = []
        assert not freeze_heap()  # already frozen: left as it is
        # Not frozen by the second call: still in a collected generation. (The frozen count
        # itself is no witness: a frozen object that dies leaves the permanent generation.)
        assert any(obj is made_since for obj in gc.get_objects())
    finally:
        thaw()
    assert gc.get_freeze_count() == 0 and gc.isenabled()


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", **{"scenarios/tiny": TINY})
    return pytester


def test_an_in_process_session_freezes_and_thaws(project: pytest.Pytester) -> None:
    project.makepyfile(test_marked=SEES_FREEZE.format(op=">", marker=MARKER))
    assert gc.get_freeze_count() == 0
    project.runpytest("--ctxeval", "-p", "no:cacheprovider", "-k", "marked").assert_outcomes(passed=1)
    assert gc.get_freeze_count() == 0, "the session must thaw what it froze"
    assert gc.isenabled()


def test_a_process_that_disabled_the_collector_is_left_alone(project: pytest.Pytester) -> None:
    project.makeconftest("import gc\ngc.disable()\n")
    project.makepyfile(test_marked=SEES_FREEZE.format(op="==", marker=MARKER))
    project.runpytest_subprocess("--ctxeval", "-p", "no:cacheprovider", "-k", "marked").assert_outcomes(passed=1)


def test_without_ctxeval_nothing_is_frozen(project: pytest.Pytester) -> None:
    project.makepyfile(test_plain="""
        import gc

        def test_plain():
            assert gc.get_freeze_count() == 0
    """)
    project.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


COUNTS_LOST = """
    import pytest_ctxeval.results as results_module

    CALLS = []
    _real = results_module.lost_facts

    def _counting(*args, **kwargs):
        CALLS.append(1)
        return _real(*args, **kwargs)

    results_module.lost_facts = _counting

    def pytest_sessionfinish(session):
        print("lost_facts calls:", len(CALLS))

    def pytest_unconfigure(config):  # the run is in-process: leave the module as it was
        results_module.lost_facts = _real
"""


@pytest.mark.parametrize("extra, computed", [((), False), (("--ctxeval-report", "r.json"), True),
                                              (("--ctxeval-save-baseline", "b.json"), True)])
def test_what_compactions_lost_is_computed_only_for_a_report_or_baseline(
        project: pytest.Pytester, extra: tuple[str, ...], computed: bool) -> None:
    """The per-compaction ``lost`` analysis is the costliest part of a scenario's results entry and
    only reports and baselines show it: a plain ``pytest --ctxeval`` skips it, and a report still
    has it for every compaction."""
    import json

    project.makeconftest(COUNTS_LOST)
    result = project.runpytest("--ctxeval", "-p", "no:cacheprovider", "-s", *extra)
    assert result.ret == 0, result.stdout.str()
    calls = int(result.stdout.str().split("lost_facts calls:")[1].split()[0])
    assert (calls > 0) is computed, calls
    if extra and extra[1].startswith("r"):
        doc = json.loads((project.path / "r.json").read_text())
        compactions = [c for s in doc["scenarios"] for c in s["compactions"]]
        assert compactions and all("lost" in c for c in compactions)
        assert len(compactions) == calls
