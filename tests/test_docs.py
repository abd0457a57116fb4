"""The documentation: generated pages match the code, the README stays short and its links resolve
in a clone, mkdocs.yml lists every page (issue 22). ``mkdocs build --strict`` itself runs in .ci/run."""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _gen():
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["cli.md", "graders.md"])
def test_generated_docs_match_the_code(name):
    """docs/cli.md is every verb's --help; docs/graders.md's registry table is load_graders()."""
    expected = {path.name: text for path, text in _gen().expected().items()}
    assert (DOCS / name).read_text(encoding="utf-8") == expected[name], (
        f"docs/{name} is out of date: run python scripts/gen_docs.py and commit it")


def test_the_cli_page_has_every_verb_and_option():
    from pytest_ctxeval.cli import build_parser

    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, verb in sub.choices.items():
        assert f"## `ctxeval {name}`" in page
        for action in verb._actions:
            if action.help == argparse.SUPPRESS:  # hidden on purpose: deprecated spellings (core/renamed.py)
                continue
            for flag in action.option_strings:
                assert flag in page, f"ctxeval {name} {flag} is not in docs/cli.md"


def test_the_grader_tables_list_exactly_the_registry():
    """The hand-written "passes when" table and the generated one name the same graders."""
    from pytest_ctxeval.grading import load_graders

    names = set(load_graders().names)
    page = (DOCS / "graders.md").read_text(encoding="utf-8")
    generated = page.split("<!-- generated: grader-table", 1)[1].split("<!-- end generated", 1)[0]
    assert set(re.findall(r"^\| `(\w+)` \|", generated, re.M)) == names
    hand = page.split("| grader | passes when |", 1)[1].split("\n\n", 1)[0]
    llm = page.split("| grader | what the judge scores", 1)[1].split("\n\n", 1)[0]
    described = set(re.findall(r"^\| `(\w+)` \|", hand + "\n" + llm, re.M))
    assert described == names, f"described but not registered: {described - names}; " \
                               f"registered but not described: {names - described}"


def test_the_readme_is_short_and_starts_with_the_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    first = re.search(r"```bash\n(.*?)```", text, re.DOTALL)
    assert first
    commands = [line.split("#")[0].strip() for line in first.group(1).splitlines()]
    assert commands == ["pip install -e . && pytest --ctxeval", "pip install -e '.[test]' && pytest -n auto"]


def _links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    return re.findall(r"\]\(([^)\s]+)\)", text)


@pytest.mark.parametrize("page", [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md",
                                  *sorted(DOCS.glob("*.md"))], ids=lambda p: p.name)
def test_links_resolve_in_a_clone(page):
    """Relative links point at files of this repository (never ../shared or a machine path)."""
    text = page.read_text(encoding="utf-8")
    assert "../shared" not in text and str(ROOT.parent) + "/" not in text  # no path of this machine
    for link in _links(page):
        if re.match(r"[a-z]+:", link) or link.startswith("#"):
            continue
        target = (page.parent / link.split("#", 1)[0]).resolve()
        assert target.exists(), f"{page.name}: link {link} points at nothing"
        assert target.is_relative_to(ROOT), f"{page.name}: link {link} leaves the repository"


def test_mkdocs_nav_lists_every_page():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))

    def pages(nav):
        for item in nav:
            for value in item.values():
                yield from (pages(value) if isinstance(value, list) else [value])

    listed = set(pages(config["nav"]))
    assert listed == {p.name for p in DOCS.glob("*.md")}
