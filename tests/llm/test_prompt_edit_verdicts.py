"""Prompt edits a model reads the same get the built-in prompt's verdicts offline; edits that ask for
less regress the grader that sees it (a fresh reader's review, classes A-G: re-wrapping, a no-break
space, a limit on one part, a checklist before the list, a translated list, a rewording, no tags;
an untagged paraphrase, a far negation, "not only")."""

from __future__ import annotations

import re
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest

from prompt_variants import S6, S7, builtin_source
from test_prompt_regression import run_offline
from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.reporting.baseline import diff_runs, format_run_diff

SCENARIOS = ["auth_refactor", "debug_failing_test", "evolving_todos"]
GRADERS = ["nine_sections", "verbatim_user_messages", "next_step_quote", "errors_preserved", "no_superseded_work",
           "failed_approaches_preserved", "files_preserved", "pending_tasks", "probes"]

pytestmark = pytest.mark.xdist_group("prompt_edit_verdicts_builtin_run")


@pytest.fixture(scope="module")
def builtin_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_offline(tmp_path_factory.mktemp("builtin"), "builtin", SCENARIOS, GRADERS)


def _wrapped(width: int) -> str:
    out = []
    for line in builtin_source().split("\n"):
        out += textwrap.wrap(line, width, subsequent_indent="   ", break_long_words=False,
                             break_on_hyphens=False) if len(line) > width and not line.startswith("{") else [line]
    return "\n".join(out)


def _untagged(text: str) -> str:
    """The rendered prompt (its included preamble too) without a line that names the tags."""
    path = Path(tempfile.mkdtemp()) / "compact.j2"
    path.write_text(text, encoding="utf-8")
    rendered = PromptSet(str(path)).render_compact()
    assert "<summary>" in rendered
    return "\n".join(l for l in rendered.split("\n") if not re.search(r"</?(?:analysis|summary)>", l))


def _replace(old: str, new: str, text: str | None = None) -> str:
    text = builtin_source() if text is None else text
    assert old in text, old
    return text.replace(old, new)


_GERMAN = ["Hauptanliegen und Absicht", "Wichtige technische Konzepte", "Dateien und Codeabschnitte",
           "Fehler und Korrekturen", "Problemlösung", "Alle Nachrichten des Benutzers", "Offene Aufgaben",
           "Aktuelle Arbeit", "Optionaler nächster Schritt"]
_TITLES = ["Primary Request and Intent", "Key Technical Concepts", "Files and Code Sections", "Errors and fixes",
           "Problem Solving", "All user messages", "Pending Tasks", "Current Work", "Optional Next Step"]


def _german() -> str:
    text = builtin_source()
    for n, (en, de) in enumerate(zip(_TITLES, _GERMAN), start=1):
        text = _replace(f"\n{n}. {en}:", f"\n{n}. {de}:", text)
    return text


HARMLESS = {
    "rewrapped_at_60": lambda: _wrapped(60),
    "rewrapped_at_72": lambda: _wrapped(72),
    "no_break_space_after_6": lambda: _replace("6. All user messages:", "6.\u00a0All user messages:"),
    "a_limit_on_a_clause": lambda: _replace("say why each read or edit matters",
                                            "say in under 15 words why each read or edit matters"),
    "a_limit_on_the_error_line": lambda: _replace("Quote the key error line exactly.",
                                                  "Quote the key error line exactly (up to 200 characters of it)."),
    "a_checklist_before_the_list": lambda: _replace(
        "Your summary should include the following sections:",
        "Check that you have:\n1. User requests: every one.\n2. Errors: each with its fix.\n3. Next step: quoted.\n\n"
        "Your summary should include the following sections:"),
    "titles_in_german": _german,
    "in_the_users_own_words": lambda: _replace(S6, "Every message the user typed, in the user's own words, one per item."),
    "what_is_left_of_what_the_user_asked": lambda: _replace(S7, "What is left to do of what the user asked."),
    "no_tags": lambda: _untagged(builtin_source()),
}

HARMFUL = {
    "no_tags_paraphrased": (lambda: _untagged(_replace(S6, "Each user message, briefly paraphrased.")),
                            "verbatim_user_messages", "auth_refactor"),
    "verbatim_not_required": (lambda: _replace(S6, "List the user messages that are not tool results, one per item. "
                                                   "Verbatim quoting of them is not required."),
                              "verbatim_user_messages", "auth_refactor"),
    "first_verbatim_rest_summarised": (lambda: _replace(S6, "Quote the first user message verbatim; summarize each "
                                                            "later one briefly."),
                                       "verbatim_user_messages", "auth_refactor"),
    "not_only_explicit_tasks": (lambda: _replace(S7, "List all tasks, not only the ones you have explicitly been asked "
                                                     "to work on, including ideas the user later dropped."),
                                "no_superseded_work", "evolving_todos"),
}


@pytest.mark.parametrize("name", sorted(HARMLESS))
def test_an_edit_a_model_reads_the_same_gets_the_builtin_verdicts(name: str, builtin_run: dict[str, Any],
                                                                   tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompt = tmp_path / f"{name}.j2"
    prompt.write_text(HARMLESS[name](), encoding="utf-8")
    doc = run_offline(tmp_path, name, SCENARIOS, GRADERS, prompt, capsys)
    cmp = diff_runs(builtin_run, doc)
    assert not cmp.regressions, format_run_diff(cmp)


@pytest.mark.parametrize("name", sorted(HARMFUL))
def test_an_edit_that_asks_for_less_regresses_its_grader(name: str, builtin_run: dict[str, Any],
                                                         tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make, grader, scenario = HARMFUL[name]
    prompt = tmp_path / f"{name}.j2"
    prompt.write_text(make(), encoding="utf-8")
    doc = run_offline(tmp_path, name, SCENARIOS, GRADERS, prompt, capsys)
    cmp = diff_runs(builtin_run, doc)
    assert any(c.grader == grader and c.scenario == scenario for c in cmp.regressions), format_run_diff(cmp)
