"""docs/running.md lists every ``pytest --ctxeval`` option and ini key: its table is generated
from the plugin's ``pytest_addoption`` (scripts/gen_docs.py), so a new option cannot be missing."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs_running", ROOT / "scripts" / "gen_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_option_pytest_knows_is_in_the_running_page(pytester: pytest.Pytester):
    page = (ROOT / "docs" / "running.md").read_text(encoding="utf-8").replace("\\_", "_")
    help_text = pytester.runpytest("--help").stdout.str()
    options = {word.split("=")[0].rstrip(",") for word in help_text.split() if word.startswith("--ctxeval")}
    options -= {"--ctxeval-strategy", "--ctxeval-compare-strategies"}  # hidden old spellings
    assert options >= {"--ctxeval-strict", "--ctxeval-prompt-caching", "--ctxeval-offline-latency"}
    missing = sorted(o for o in options if f"`{o}" not in page)
    assert not missing, f"docs/running.md lacks {missing}: run python scripts/gen_docs.py"
    for key in ("ctxeval_scenarios", "ctxeval_backend", "ctxeval_graders", "ctxeval_compactor"):
        assert f"`{key}`" in page


def test_the_running_page_table_is_generated_and_current():
    gen = _gen_docs()
    current = gen.RUNNING_PAGE.read_text(encoding="utf-8")
    assert gen.OPTIONS_BEGIN in current and gen.running_page(current) == current
    table = gen.options_table()
    assert "--ctxeval-strategy" not in table and "deprecated" not in table  # old spellings stay hidden
