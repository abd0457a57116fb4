"""The example project's CI workflow installs pytest-ctxeval from a place that exists (it is not on
PyPI: a bare ``pip install pytest-ctxeval`` finds nothing), and docs/getting-started.md shows that
same workflow and the ways to install (B4 of the fresh-eyes review)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / "examples" / "own-project" / ".github" / "workflows" / "ctxeval.yml"


def test_the_workflow_installs_from_a_configurable_place():
    steps = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["ctxeval"]["steps"]
    runs = [s for s in steps if "run" in s]
    install = next(s for s in runs if "pip install" in s["run"])
    assert install["run"] != "pip install pytest-ctxeval"
    assert "vars.CTXEVAL_PACKAGE" in install["env"]["CTXEVAL_PACKAGE"]


def test_the_docs_show_the_same_workflow_and_how_to_install():
    page = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    shown = re.search(r"```yaml\n(# Compaction quality in CI.*?)```", page, re.S)
    assert shown and shown.group(1) == WORKFLOW.read_text(encoding="utf-8")
    text = " ".join(page.split())
    assert "not published on PyPI yet" in text and "pip wheel --no-deps" in text and "git+https://" in text
