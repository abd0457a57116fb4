"""The repository's own pytest setup: pytester for plugin tests, and Hypothesis profiles.

Only for this repository's own runs: with an editable install the built-in scenario library is
this checkout's scenarios/, so a user's ``pytest --ctxeval`` elsewhere collects it and pytest loads
this file as a non-root conftest. Hence no ``pytest_plugins`` here (pytester comes from ``-p
pytester`` in pyproject.toml, which a user's run does not read) and the Hypothesis profile is
loaded in ``pytest_configure`` only when this repository is the run's root.

``ci`` (selected when the ``CI`` environment variable is set, as ``.ci/run`` does): derandomised,
so a CI failure reproduces, more examples, no deadline (shared machines are noisy), no example
database written. ``dev`` otherwise: random, fewer examples, the local database in .hypothesis/
(ignored by git). ``soak`` for a long fuzzing session by hand:
``pytest tests/test_fuzz.py --hypothesis-profile soak --hypothesis-show-statistics``.
"""

import os
from pathlib import Path

import yaml  # noqa: F401 - see below
from _pytest.doctest import DoctestModule
from hypothesis import HealthCheck, settings

# PyYAML is imported here, before any pytester inline run: pytester drops the modules a run
# imported first, and PyYAML's C loader does not survive a second import in one process (the
# plugin itself no longer imports yaml at load time, so a plugin test run alone would hit it).

PACKAGE = Path(__file__).parent / "pytest_ctxeval"

settings.register_profile(
    "ci", derandomize=True, max_examples=200, deadline=None, database=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile("soak", max_examples=5_000, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow])


def pytest_configure(config):
    if config.rootpath == Path(__file__).parent and not config.getoption("hypothesis_profile", None):
        settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_collect_file(file_path: Path, parent):
    """The package's docstring examples run as tests (``>>>`` lines in pytest_ctxeval/*.py).
    ``--doctest-modules`` would also import every test file as a module, and two ``conftest.py``
    under tests/ clash by name; collecting the package only avoids both."""
    if file_path.suffix == ".py" and PACKAGE in file_path.parents and file_path.name != "__main__.py":
        return DoctestModule.from_parent(parent, path=file_path)
    return None
