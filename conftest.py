"""The repository's own pytest setup: pytester for plugin tests, and Hypothesis profiles.

``ci`` (selected when the ``CI`` environment variable is set, as ``.ci/run`` does): derandomised,
so a CI failure reproduces, more examples, no deadline (shared machines are noisy), no example
database written. ``dev`` otherwise: random, fewer examples, the local database in .hypothesis/
(ignored by git).
"""

import os

from hypothesis import HealthCheck, settings

pytest_plugins = ["pytester"]

settings.register_profile(
    "ci", derandomize=True, max_examples=200, deadline=None, database=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
