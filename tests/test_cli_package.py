"""``pytest_ctxeval.cli`` is a package with one module per verb (issue 22); every way in still runs."""

from __future__ import annotations

import argparse
import subprocess
import sys

from pytest_ctxeval import __version__
from pytest_ctxeval.cli import _command, build_parser


def test_every_verb_runs_from_its_own_module() -> None:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    modules = {verb: _command(verb).__module__ for verb in sub.choices}
    assert set(modules) >= {"run", "grade", "import", "compare-real", "lint", "diff", "report", "compare",
                            "validate", "graders", "prompt", "plan", "facts", "grade-output"}
    assert all(m.startswith("pytest_ctxeval.cli.") for m in modules.values()), modules
    assert modules["run"] == "pytest_ctxeval.cli.run" and modules["import"] == "pytest_ctxeval.cli.import_"


def test_python_dash_m_runs_the_command() -> None:
    for target in ("pytest_ctxeval", "pytest_ctxeval.cli"):
        out = subprocess.run([sys.executable, "-m", target, "--version"], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == f"ctxeval {__version__}"
    bad = subprocess.run([sys.executable, "-m", "pytest_ctxeval", "nonsense"], capture_output=True, text=True)
    assert bad.returncode == 2 and "invalid choice: 'nonsense'" in bad.stderr
