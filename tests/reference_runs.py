"""Every built-in scenario replayed once per test process (the offline reference engine, default
options), shared by the library tests (tests/test_library.py, tests/test_builtin_scenarios.py).

Read the runs, do not change them. Under pytest-xdist the tests that use them form one
``xdist_group`` (conftest.py runs ``-n`` with ``--dist loadgroup``), so one worker replays the
library once.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

from pytest_ctxeval.runner import RunResult, run_scenario

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
FILES = sorted(SCENARIOS.glob("*.yaml"))
GROUP = "reference_runs"


@lru_cache(maxsize=1)
def reference_runs() -> dict[str, RunResult]:
    """Scenario stem -> its run (transcripts in a scratch folder removed at exit)."""
    base = Path(tempfile.mkdtemp(prefix="ctxeval-reference-runs-"))
    atexit.register(shutil.rmtree, base, ignore_errors=True)
    return {p.stem: run_scenario(p, session_dir=base / p.stem) for p in FILES}
