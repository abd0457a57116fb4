"""The sample ``pytest --ctxeval`` output in docs/getting-started.md and README.md is the output of
the built-in library (B5 of the fresh-eyes review: it showed 19 scenarios and counts from an older
library). The scenario list is checked always; every line of both samples against a real run with
``CTXEVAL_DOCS_TESTS=1``, in CI's docs step (.ci/run). Review 5, #21: that check compared only the
table rows and the counts line, and no CI step ran it, so the samples drifted (counts, progress
lines, the notes the run prints); now each sample must be the real output, ``...`` standing for
the lines it leaves out."""

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


def _plain(line: str) -> str:
    """A line with the run's duration taken out (the counts line: ``=== 337 passed ... in 13.58s ===``)."""
    return _final([line]) if line.startswith("=") and re.search(r" in [\d.]+s =+$", line) else line.rstrip()


def mismatch(sample: list[str], real: list[str]) -> str | None:
    """Where ``sample`` (after its ``$ pytest --ctxeval`` line) is not the ``real`` output: its
    lines must be real lines in order, each run of them between two ``...`` consecutive in the real
    output, the last one ending the output (the header pytest prints first may be left out). None
    when it is."""
    chunks: list[list[str]] = [[]]
    for line in sample[1:]:
        if line == "...":
            chunks.append([])
        else:
            chunks[-1].append(_plain(line))
    lines = [_plain(line) for line in real]
    at = 0
    for n, chunk in enumerate(chunks):
        if not chunk:
            continue
        last = n == len(chunks) - 1
        starts = [i for i in range(at, len(lines) - len(chunk) + 1) if lines[i:i + len(chunk)] == chunk
                  and (not last or i + len(chunk) == len(lines))]
        if not starts:
            near = next((line for line in chunk if line not in lines[at:]), chunk[0])
            return f"not in the real output (in this order): {near!r}"
        at = starts[0] + len(chunk)
    return None


def test_mismatch_finds_a_drifted_line_and_accepts_an_excerpt():
    real = ["== test session starts ==", "a .s.", "b ..", "c x.", "", "== summary ==", "row 1", "row 2", "note",
            "===== 3 passed, 1 skipped in 9.1s ====="]
    assert mismatch(["$ pytest --ctxeval", "a .s.", "...", "c x.", "", "== summary ==", "row 1", "...",
                     "======= 3 passed, 1 skipped in 2.50s ======="], real) is None
    assert mismatch(["$ pytest --ctxeval", *real[1:]], real) is None
    assert "'row 1 changed'" in mismatch(["$", "== summary ==", "row 1 changed", "...", real[-1]], real)
    # a line the real output prints in between is missing from the sample (no "..." there)
    assert mismatch(["$", "row 2", "=== 3 passed, 1 skipped in 1s ==="], real) is not None
    assert mismatch(["$", "row 1", "...", "===== 2 passed, 1 skipped in 9.1s ====="], real) is not None


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
    for page in (ROOT / "docs" / "getting-started.md", ROOT / "README.md"):
        problem = mismatch(_sample(page), real)
        assert problem is None, (f"{page.relative_to(ROOT)}: {problem}; refresh the sample from a real run "
                                 "(COLUMNS=80 pytest --ctxeval -p no:cacheprovider):\n" + run.stdout)
    assert _rows(_sample(ROOT / "docs" / "getting-started.md")) == _rows(real)  # the whole table
