"""The sample ``pytest --ctxeval`` output in docs/getting-started.md and README.md is the output of
the built-in library (B5 of the fresh-eyes review: it showed 19 scenarios and counts from an older
library). The scenario list is checked always; the whole table and the counts line against a real
run with ``CTXEVAL_DOCS_TESTS=1`` (as the docs commands are)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _sample(page: Path) -> list[str]:
    m = re.search(r"```\n(\$ pytest --ctxeval\n.*?)\n```", page.read_text(encoding="utf-8"), re.S)
    assert m, f"{page}: no sample output of pytest --ctxeval"
    return m.group(1).splitlines()


def _rows(lines: list[str]) -> dict[str, str]:
    start = next(i for i, line in enumerate(lines) if line.startswith("scenario "))
    out = {}
    for line in lines[start + 1:]:
        if line.startswith(("model usage", "...")):
            break
        out[line.split()[0]] = line
    return out


def _final(lines: list[str]) -> str:
    return re.sub(r" in [\d.]+s", "", lines[-1].strip("= "))


def test_the_sample_table_lists_every_scenario_of_the_library():
    rows = _rows(_sample(ROOT / "docs" / "getting-started.md"))
    assert sorted(rows) == sorted(p.stem for p in (ROOT / "scenarios").glob("*.yaml"))


def test_the_readme_sample_is_an_excerpt_of_the_getting_started_one():
    full, short = _sample(ROOT / "docs" / "getting-started.md"), _sample(ROOT / "README.md")
    assert [line for line in short if line != "..."] == [line for line in short if line in full and line != "..."]
    assert _final(short) == _final(full)


@pytest.mark.skipif(not os.environ.get("CTXEVAL_DOCS_TESTS"), reason="runs pytest --ctxeval (set CTXEVAL_DOCS_TESTS=1)")
def test_the_sample_is_what_pytest_ctxeval_prints():
    run = subprocess.run([sys.executable, "-m", "pytest", "--ctxeval", "-p", "no:cacheprovider"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "80"})
    real = run.stdout.splitlines()
    sample = _sample(ROOT / "docs" / "getting-started.md")
    assert _rows(sample) == _rows(real), "docs/getting-started.md: refresh the sample from a real run"
    assert _final(sample) == _final(real)
