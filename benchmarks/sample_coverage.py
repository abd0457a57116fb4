"""Do the unit suite's samples cover what the library-wide checks cover? (issue 22; not a test)

    python benchmarks/sample_coverage.py          # needs pytest-cov: pip install pytest-cov

The unit suite (``pytest -n auto``) runs the library-wide checks (the grader validation, the
hand-written mutants, the comparison of compactors, the import of each corpus file) on a sample of the built-in library and the corpus; ``.ci/run`` runs them
on the whole of both in its own step (``CTXEVAL_LIBRARY_TESTS=1``, tests/library_wide.py). This
script measures, with coverage.py (lines and branches of ``pytest_ctxeval/`` and ``graders/``):

1. the unit suite as the README runs it, with the samples;
2. the library-wide checks' test files alone, on the whole library and corpus;
3. importing every module of the package (the lines that run at import: the suite imports the
   package before its workers start measuring, so those lines look unrun in 1).

and prints every line and branch that 2 runs and 1 does not, leaving out those of 3. "none" means
the samples lose no coverage: the suite with the samples runs every line and branch of the package
that the library-wide checks run. It takes about 7 minutes on 2 cores (the suite under coverage).
Needs the shared corpus (``CTXEVAL_SHARED`` or ``../shared``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COV = ["--cov=pytest_ctxeval", "--cov=graders", "--cov-branch"]
#: The test files of the library-wide checks (tests/library_wide.py).
WIDE = ["tests/test_validate.py", "tests/test_handwritten_mutants.py", "tests/compaction/test_compare.py",
        "tests/test_importer.py"]
IMPORT_ALL = """
import importlib, pkgutil, pytest_ctxeval
for info in pkgutil.walk_packages(pytest_ctxeval.__path__, "pytest_ctxeval."):
    if not info.name.endswith("__main__"):
        importlib.import_module(info.name)
from pytest_ctxeval.grading import load_graders
load_graders()
"""


def _measured(report: Path, args: list[str], env: dict[str, str]) -> dict[str, dict]:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *COV,
                           f"--cov-report=json:{report}", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode not in (0, 5):
        raise SystemExit(f"pytest {' '.join(args)} exited {proc.returncode}:\n{proc.stdout[-2000:]}")
    return json.loads(report.read_text())["files"]


def _ran(files: dict[str, dict]) -> tuple[set[tuple[str, int]], set[tuple[str, int, int]]]:
    lines = {(f, n) for f, d in files.items() for n in d["executed_lines"]}
    branches = {(f, a, b) for f, d in files.items() for a, b in d.get("executed_branches", [])}
    return lines, branches


def main() -> None:
    try:
        import pytest_cov  # noqa: F401 - only to say how to get it
    except ImportError:
        raise SystemExit("needs pytest-cov: pip install pytest-cov") from None
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "CI": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        print("measuring the unit suite with the sample (pytest -n auto) ...", flush=True)
        suite = _ran(_measured(out / "suite.json", ["-n", "auto"], env))
        print("measuring the library-wide checks (CTXEVAL_LIBRARY_TESTS=1) ...", flush=True)
        whole = _ran(_measured(out / "whole.json", ["-n", "auto", *WIDE], {**env, "CTXEVAL_LIBRARY_TESTS": "1"}))
        print("measuring the package's import ...", flush=True)
        (out / "import_all.py").write_text(IMPORT_ALL)
        subprocess.run([sys.executable, "-m", "coverage", "run", "--branch", f"--data-file={out / 'imp'}",
                        "--source=pytest_ctxeval,graders", str(out / "import_all.py")], cwd=ROOT, env=env, check=True)
        subprocess.run([sys.executable, "-m", "coverage", "json", f"--data-file={out / 'imp'}", "-o",
                        str(out / "imp.json")], cwd=ROOT, env=env, check=True, capture_output=True)
        imported = _ran(json.loads((out / "imp.json").read_text())["files"])
    lines = sorted(whole[0] - suite[0] - imported[0])
    branches = sorted(whole[1] - suite[1] - imported[1])
    print(f"lines the library-wide checks run and the suite does not: {len(lines) or 'none'}")
    for f, n in lines:
        print(f"  {f}:{n}")
    print(f"branches the library-wide checks take and the suite does not: {len(branches) or 'none'}")
    for f, a, b in branches:
        print(f"  {f}:{a}->{b}")


if __name__ == "__main__":
    main()
