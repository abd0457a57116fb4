"""Every slow check a test opts into by a variable (``CTXEVAL_*_TESTS=1``) has a step in ``.ci/run``
that sets it, and CONTRIBUTING.md lists it under "Slow checks": a check the suite skips is run
somewhere, and a contributor can find it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPT_IN = re.compile(r"\bCTXEVAL_[A-Z]+_TESTS\b")


def test_every_opted_in_check_runs_in_ci_and_is_documented() -> None:
    named = {m.group(0) for path in (ROOT / "tests").rglob("*.py") for m in OPT_IN.finditer(path.read_text())}
    assert {"CTXEVAL_LIBRARY_TESTS", "CTXEVAL_DOCS_TESTS", "CTXEVAL_PACKAGING_TESTS", "CTXEVAL_BROWSER_TESTS"} <= named
    ci = (ROOT / ".ci" / "run").read_text()
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    for name in sorted(named):
        assert re.search(rf"^\s*{name}=1 run pytest ", ci, re.MULTILINE), f"{name}: no .ci/run step sets it"
        assert f"`{name}=1`" in contributing, f"{name}: not listed under Slow checks in CONTRIBUTING.md"
