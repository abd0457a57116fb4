"""The docs' worked example for ``pytest_ctxeval.strategies`` is a test: this module runs the
exact code of the first ``python`` block of docs/hypothesis.md (the README section
``## Hypothesis strategies`` before the docs site, issue 22)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, settings

README = Path(__file__).resolve().parents[2] / "docs" / "hypothesis.md"
HEADING = "# Hypothesis strategies"


def readme_example() -> str:
    text = README.read_text(encoding="utf-8")
    if HEADING not in text:
        pytest.fail(f"docs/hypothesis.md has no {HEADING!r} section")
    section = re.split(r"\n## ", text.split(HEADING, 1)[1], maxsplit=1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, f"the {HEADING!r} section of docs/hypothesis.md has no python example"
    return match.group(1)


def load_example() -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "readme_example"}
    exec(compile(readme_example(), f"{README}:{HEADING}", "exec"), namespace)
    return namespace


def test_the_readme_example_passes():
    namespace = load_example()
    tests = [f for name, f in namespace.items() if name.startswith("test_") and callable(f)]
    assert len(tests) == 1
    tests[0]()


def test_the_readme_example_catches_the_naive_truncation():
    """What docs/hypothesis.md says about ``messages[-keep:]``: the example's test fails on it."""
    namespace = load_example()
    namespace["truncate"] = lambda messages, keep: messages[-keep:]
    test = next(f for name, f in namespace.items() if name.startswith("test_"))
    # The profile's settings, less the explain phase: it traces every replay of the shrink
    # (sys.settrace) to explain the failure, and this failure is the expected outcome.
    test = settings(settings.default, phases=[p for p in Phase if p is not Phase.explain])(test)
    with pytest.raises(AssertionError):
        test()
