"""Compactor specs: built-in names, options, your own by dotted path, and every bad spec's message."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from pytest_ctxeval.compaction import BUILTIN_NAMES, Compactor, load_compactor, split_specs
from pytest_ctxeval.errors import UsageError


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_every_builtin_loads_and_is_a_compactor(name):
    compactor = load_compactor(name)
    assert compactor.name == name and isinstance(compactor, Compactor)


def test_options_are_typed():
    s = load_compactor("gemini_cli(threshold=0.6, verify=false, tiers=budget+microcompact)")
    assert (s.threshold, s.verify, s.tiers) == (0.6, False, frozenset({"budget", "microcompact"}))


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "user_strats.py").write_text(textwrap.dedent('''
        from pytest_ctxeval.compaction import BaseCompactor, Compacted

        class Mine(BaseCompactor):
            name = "mine"
            def __init__(self, *, level=1, **kw):
                super().__init__(**kw)
                self.level = level
            def should_compact(self, state):
                return False
            def compact(self, state):
                return Compacted(messages=list(state.messages))

        INSTANCE = Mine(level=7)

        def factory(level=3):
            return Mine(level=level)

        class NotACompactor:
            pass

        class BadName(Mine):
            name = "has spaces"

        class Unfinished(BaseCompactor):
            name = "unfinished"
            def should_compact(self, state):
                return True
    '''))
    (tmp_path / "broken_strats.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for mod in ("user_strats", "broken_strats"):
        sys.modules.pop(mod, None)


def test_your_own_compactor_class_instance_or_factory(user_module):
    assert load_compactor("user_strats:Mine(level=2)").level == 2
    assert load_compactor("user_strats:INSTANCE").level == 7
    assert load_compactor("user_strats:factory(level=5)").level == 5


BAD = [
    pytest.param("codx", "unknown compactor 'codx' (did you mean 'codex'?)", id="typo"),
    pytest.param("1codex", "not a compactor spec", id="not-a-name"),
    pytest.param("codex(user_tokens)", "option 'user_tokens' is not name=value", id="option-without-value"),
    pytest.param("codex(nope=1)", "compactor codex: unknown option nope; it takes tiers, fraction, user_tokens",
                 id="unknown-option"),
    pytest.param("codex(tiers=cache)", "unknown tier 'cache'; use all, none, or some of budget, dedupe, microcompact",
                 id="unknown-tier"),
    pytest.param("no_such_pkg.mod:Thing", "cannot import module 'no_such_pkg.mod'", id="missing-module"),
    pytest.param("broken_strats:Thing", "importing 'broken_strats' failed: RuntimeError: boom at import",
                 id="module-raises"),
    pytest.param("user_strats:Missing", "module 'user_strats' has no attribute 'Missing' (it defines:",
                 id="missing-attribute"),
    pytest.param("user_strats:NotACompactor", "NotACompactor is not a compactor: it lacks name, should_compact, compact",
                 id="not-a-compactor"),
    pytest.param("user_strats:BadName", "its name must be letters, digits", id="bad-name"),
    pytest.param("user_strats:Unfinished", "Can't instantiate abstract class Unfinished", id="no-compact-method"),
    pytest.param("user_strats:INSTANCE(level=2)", "is an instance, it takes no options", id="options-on-instance"),
    pytest.param("observation_masking(keep=-2)", "keep must be a whole number of at least 0. Current input: -2",
                 id="bad-option-value"),
    pytest.param("observation_masking(keep=abc)", "keep must be a whole number", id="text-for-a-number"),
    pytest.param("observation_masking(keep=2.5)", "keep must be a whole number. Current input: 2.5", id="not-whole"),
    pytest.param("codex(user_tokens=abc)", "user_tokens must be a whole number", id="text-for-tokens"),
    pytest.param("codex(fraction=1.5)", "fraction must be a number from 0.01 to 1. Current input: 1.5",
                 id="fraction-out-of-range"),
    pytest.param("gemini_cli(verify=maybe)", "verify must be true or false. Current input: 'maybe'", id="not-a-flag"),
    pytest.param("opencode(prune=2)", "prune must be true or false. Current input: 2", id="number-for-a-flag"),
    pytest.param("codex(tiers=none)(x)", "unbalanced parentheses or quotes", id="unbalanced"),
    pytest.param("codex(fraction=nan)", "fraction must be a number from 0.01 to 1. Current input: nan", id="nan"),
    pytest.param('anthropic_server(instructions="open)', "unbalanced parentheses or quotes", id="open-quote"),
    pytest.param("claude_code(prompt=x.j2)", "the engine compacts with the run's prompt: --ctxeval-prompt",
                 id="prompt-for-the-engine"),
]


@pytest.mark.parametrize("spec, message", BAD)
def test_a_bad_spec_is_a_usage_error_that_names_it_and_the_fix(user_module, spec, message):
    with pytest.raises(UsageError) as info:
        load_compactor(spec)
    assert message in str(info.value)
    assert spec.split("(")[0].split(":")[0].strip() in str(info.value)


def test_quoted_option_text_keeps_its_commas_and_stays_text():
    compactor = load_compactor('anthropic_server(instructions="keep the file list, then the errors", trigger=90000)')
    assert compactor.instructions == "keep the file list, then the errors" and compactor.trigger == 90_000
    with pytest.raises(UsageError, match=r"instructions must be text\. Current input: 5"):
        load_compactor("anthropic_server(instructions=5)")
    assert load_compactor("anthropic_server(instructions='5')").instructions == "5"
    # an apostrophe in plain text is a character, not a quote (it used to swallow the rest)
    assert load_compactor("anthropic_server(instructions=keep the user's words)").instructions == \
        "keep the user's words"


def test_specs_split_at_commas_outside_parentheses():
    assert split_specs("claude_code,observation_masking(keep=5, every_round=true), codex") == [
        "claude_code", "observation_masking(keep=5, every_round=true)", "codex"]


def test_a_compactor_in_the_current_folder_is_found_without_pythonpath(tmp_path):
    """The ``ctxeval`` and ``pytest`` scripts do not put the current folder on sys.path; a
    compactor module next to the scenarios is still found from there (found in review: the hint
    said to run from that folder, which is what the user had done)."""
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "compaction.py").write_text(
        "class Keep:\n    name = 'keep'\n    def should_compact(self, s): return False\n"
        "    def compact(self, s): return None\n")
    code = ("import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
            "from pytest_ctxeval.compaction import load_compactor; print(load_compactor('mypkg.compaction:Keep').name)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert out.stdout.strip() == "keep", out.stderr
    missing = subprocess.run([sys.executable, "-c", code.replace("mypkg.compaction", "nopkg.compaction")],
                             cwd=tmp_path, capture_output=True, text=True)
    assert "run from the folder that holds 'nopkg'" in missing.stderr
