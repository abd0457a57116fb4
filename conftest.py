"""The repository's own pytest setup: pytester for plugin tests, and Hypothesis profiles.

Only for this repository's own runs: with an editable install the built-in scenario library is
this checkout's scenarios/, so a user's ``pytest --ctxeval`` elsewhere collects it and pytest loads
this file as a non-root conftest. Hence no ``pytest_plugins`` here (pytester comes from ``-p
pytester`` in pyproject.toml, which a user's run does not read) and the Hypothesis profile is
loaded in ``pytest_configure`` only when this repository is the run's root.

``ci`` (selected when the ``CI`` environment variable is set, as ``.ci/run`` does): derandomised,
so a CI failure reproduces, no deadline (shared machines are noisy), no example database written.
``dev`` otherwise: random (each run explores new examples), the local database in .hypothesis/
(ignored by git). Both run :data:`QUICK_EXAMPLES` examples per property, enough for the planted
bugs of tests/properties/test_profiles_find_bugs.py (that test fails if a profile gets too small
to find them). ``soak`` is the separate long job (``.ci/soak``, or by hand:
``pytest -m hypothesis -n auto --hypothesis-profile soak --hypothesis-show-statistics``): random,
:data:`SOAK_EXAMPLES` examples per property.
"""

import gc
import os
from pathlib import Path

import pytest
import yaml  # noqa: F401 - see below
from _pytest.doctest import DoctestModule
from hypothesis import HealthCheck, settings

# PyYAML is imported here, before any pytester inline run: pytester drops the modules a run
# imported first, and PyYAML's C loader does not survive a second import in one process (the
# plugin itself no longer imports yaml at load time, so a plugin test run alone would hit it).

PACKAGE = Path(__file__).parent / "pytest_ctxeval"

#: Examples per property in the unit suite (``ci`` and ``dev``); the stateful test runs half as
#: many sessions (tests/properties/test_stateful.py).
QUICK_EXAMPLES = 50
#: Examples per property in the soak job.
SOAK_EXAMPLES = 1_000
#: The cyclic collector's youngest threshold in this repository's own test runs (CPython: 700).
SUITE_GC_THRESHOLD = 20_000

settings.register_profile(
    "ci", derandomize=True, max_examples=QUICK_EXAMPLES, deadline=None, database=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=QUICK_EXAMPLES, deadline=None)
settings.register_profile("soak", max_examples=SOAK_EXAMPLES, deadline=None, database=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own (also tryfirst) sets ``load``
def pytest_cmdline_main(config):
    """``pytest -n auto`` in this repository distributes with ``loadgroup``: tests marked
    ``xdist_group`` (those sharing one costly computation) run on one worker, the rest spread as
    with ``load``. An explicit ``--dist`` wins."""
    if config.rootpath == Path(__file__).parent and getattr(config.option, "numprocesses", None) \
            and getattr(config.option, "dist", None) == "no":
        config.option.dist = "loadgroup"


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook, absent without it
def pytest_configure_node(node):
    """Tells each worker the controller's ``--dist``. A worker parses the command line itself,
    so it never sees the ``loadgroup`` set above; without ``loadgroup`` it does not add the group
    to the test ids it reports, and the controller then schedules every test on its own."""
    node.workerinput["ctxeval_dist"] = node.config.option.dist


def pytest_configure(config):
    if config.rootpath != Path(__file__).parent:
        return
    if getattr(config, "workerinput", {}).get("ctxeval_dist") == "loadgroup":
        config.option.loadgroup = True  # what pytest-xdist sets on a worker run with --dist loadgroup
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile("ci" if os.environ.get("CI") else "dev")
    if config.getoption("ctxeval", False):
        return  # the main job (pytest --ctxeval) runs as a user's does: lazy imports, its own heap policy
    if _is_xdist_controller(config):
        return  # it runs no test, its workers import what they need
    _import_the_package()
    # The suite keeps what it computed once per worker (the library's runs and validation, the
    # corpus's cases: millions of containers), so the cyclic collector's full collections walked
    # them again and again: 12-16 s of each worker's time, most of it in the oldest generation.
    # Young collections every 20,000 net new containers instead of 700 make every generation's
    # collections rarer; cycles are still collected, and reference counting frees the rest.
    gc.set_threshold(SUITE_GC_THRESHOLD, *gc.get_threshold()[1:])


def pytest_collection_finish(session):
    """The suite's heap as collected (the package, pytest, Hypothesis, pydantic and the SDK,
    hundreds of thousands of objects alive to the end) is frozen out of the cyclic collector's
    full collections, which otherwise walk it again each time (tests/test_session_heap.py thaws
    it for the tests that freeze from nothing)."""
    config = session.config
    if config.rootpath != Path(__file__).parent or config.getoption("ctxeval", False):
        return
    if _is_xdist_controller(config):
        return
    gc.collect()
    gc.freeze()


@pytest.hookimpl(trylast=True)  # after pytest-xdist's own, which may have done it
def pytest_collection_modifyitems(config, items):
    """On a ``loadgroup`` worker, each ``xdist_group`` test's id ends in ``@<group>``: that suffix
    is how the controller learns the groups. pytest-xdist 3.8 writes it to ``Item._nodeid``,
    which pytest 9.2 no longer reads (its ids are structured ``NodeId`` values), so the suffix was
    lost and every grouped test was scheduled on its own (pytest-xdist issue #1386). Where the
    suffix is missing, it is added to the id pytest reads; a later pytest-xdist that adds it
    itself leaves nothing to do here."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        groups = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                         for mark in item.iter_markers("xdist_group")})
        if groups and "@" not in item.nodeid.rpartition("]")[2]:
            grouped = f"{item.nodeid}@{'_'.join(groups)}"
            if hasattr(item, "_id"):  # pytest >= 9.2
                from _pytest.nodeid import NodeId

                item._id = NodeId.parse(grouped)
            else:
                item._nodeid = grouped
    # Longest first: the groups (one shared fixture each: the library replayed and validated, the
    # compactors compared) are the suite's longest units. Scheduled first, each starts on a worker
    # while the other takes single tests, instead of one group running alone at the end.
    items[:] = sorted(items, key=lambda item: 0 if any(item.iter_markers("xdist_group")) else 1)


def _is_xdist_controller(config) -> bool:
    """The pytest-xdist process that hands tests to workers and runs none itself."""
    return getattr(config.option, "dist", "no") != "no" and not hasattr(config, "workerinput")


def _import_the_package() -> None:
    """Every module of the package, imported before any test runs. A pytester inline run
    (``pytester.runpytest``) removes from ``sys.modules`` what it imported first, so a later test
    would import a second copy of that module and patch one copy while the code uses the other.
    The suite imports every module anyway; this only does it first."""
    import importlib
    import pkgutil

    import pytest_ctxeval

    for info in pkgutil.walk_packages(pytest_ctxeval.__path__, "pytest_ctxeval."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)


def pytest_collect_file(file_path: Path, parent):
    """The package's docstring examples run as tests (``>>>`` lines in pytest_ctxeval/*.py).
    ``--doctest-modules`` would also import every test file as a module, and two ``conftest.py``
    under tests/ clash by name; collecting the package only avoids both."""
    if file_path.suffix == ".py" and PACKAGE in file_path.parents and file_path.name != "__main__.py":
        return DoctestModule.from_parent(parent, path=file_path)
    return None
