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


def test_verbs_that_call_no_model_do_not_load_the_sdk() -> None:
    """``ctxeval --version``, ``--help`` and ``lint`` call no model: importing the anthropic SDK
    (about a second and a half of CPU) is left to the verbs that do. ``run`` still loads it."""
    code = ("import sys, contextlib, io\n"
            "from pytest_ctxeval.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    for argv in (['--help'], ['lint', sys.argv[1]]):\n"
            "        try:\n"
            "            main(argv)\n"
            "        except SystemExit:\n"
            "            pass\n"
            "print('anthropic' in sys.modules)\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    main(['run', sys.argv[1]])\n"
            "print('anthropic' in sys.modules)\n")
    from pytest_ctxeval.options import builtin_scenarios_dir

    scenario = str(builtin_scenarios_dir() / "idle_gap.yaml")
    out = subprocess.run([sys.executable, "-c", code, scenario], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"], out
