"""``--ctxeval-strict-prompt`` (``ctxeval run --strict-prompt``): offline, a changed compaction-prompt
line the offline model does not see fails the run, naming each line and how to proceed (review 2,
F3: "Never include code snippets, file paths or error messages" left CI green)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.reporting.prompt_coverage import coverage_note, strict_failure

ROOT = Path(__file__).resolve().parents[1]
IDLE_GAP = ROOT / "scenarios" / "idle_gap.yaml"
BUILTIN = (ROOT / "pytest_ctxeval" / "prompts" / "compact.j2").read_text(encoding="utf-8")
ANCHOR = "Your summary should include the following sections:"
NO_CODE = "Never include code snippets, file paths or error messages in the summary; describe them in general terms."
LIMIT = "Keep the entire summary under 2000 words."


def _prompt(folder: Path, line: str) -> Path:
    """The built-in compact.j2 (with its includes) plus ``line`` before the section list."""
    for inc in (ROOT / "pytest_ctxeval" / "prompts").glob("_*.j2"):
        (folder / inc.name).write_text(inc.read_text(encoding="utf-8"), encoding="utf-8")
    p = folder / "compact.j2"
    assert ANCHOR in BUILTIN
    p.write_text(BUILTIN.replace(ANCHOR, f"{line}\n{ANCHOR}"), encoding="utf-8")
    return p


def _rendered_line(prompt: Path, text: str) -> int:
    rendered = PromptSet(prompt).render_compact()
    return next(n for n, l in enumerate(rendered.splitlines(), 1) if text in l)


def test_an_unseen_line_fails_the_cli_run_naming_its_line_and_text(tmp_path, capsys):
    prompt = _prompt(tmp_path, NO_CODE)
    line = _rendered_line(prompt, "Never include code snippets")
    assert main(["run", str(IDLE_GAP), "--prompt", str(prompt)]) == 0  # the default: a note, still green
    assert "NOT SEEN OFFLINE" in capsys.readouterr().out
    assert main(["run", str(IDLE_GAP), "--prompt", str(prompt), "--strict-prompt"]) == 1
    err = capsys.readouterr().err
    assert "ctxeval: --strict-prompt (pytest: --ctxeval-strict-prompt): 2 changed prompt lines are NOT SEEN by the " \
           "offline model (against the built-in prompt)" in err
    assert f"+ line {line}: Never include code snippets, file paths or error messages in the summary;" in err
    assert f"+ line {line}: describe them in general terms." in err
    assert "to proceed: run this prompt against the real API (--backend anthropic" in err
    assert "reword the line so the offline model reads it" in err


def test_a_change_the_offline_model_reads_passes_under_strict(tmp_path, capsys):
    prompt = _prompt(tmp_path, LIMIT)
    assert main(["run", str(IDLE_GAP), "--prompt", str(prompt), "--strict-prompt"]) == 0
    out = capsys.readouterr()
    assert "read             Keep the entire summary under 2000 words." in out.out
    assert "strict-prompt" not in out.err


def test_pytest_strict_prompt_fails_the_session_and_names_the_line(pytester: pytest.Pytester):
    (pytester.path / "scenarios").mkdir()
    (pytester.path / "scenarios" / "idle_gap.yaml").write_text(IDLE_GAP.read_text(encoding="utf-8"))
    folder = pytester.path / "p"
    folder.mkdir()
    prompt = _prompt(folder, NO_CODE)
    line = _rendered_line(prompt, "Never include code snippets")
    green = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "--ctxeval-prompt", str(prompt))
    assert green.ret == 0, green.stdout.str()[-2000:]
    red = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "--ctxeval-prompt", str(prompt),
                             "--ctxeval-strict-prompt")
    out = red.stdout.str()
    assert red.ret == 1, out[-2000:]
    assert red.parseoutcomes().get("failed") is None  # every grader passed: the prompt check fails the run
    assert "ctxeval: --ctxeval-strict-prompt (ctxeval: --strict-prompt): 2 changed prompt lines are NOT SEEN" in out
    assert f"+ line {line}: Never include code snippets" in out


def test_strict_applies_offline_only_and_names_removed_lines(tmp_path):
    builtin = PromptSet().render_compact()
    removed = "Double-check for technical accuracy and completeness."
    assert removed in builtin
    note = coverage_note(builtin.replace(removed, ""))
    lines = strict_failure(note, "offline")
    assert any(l.startswith("  - removed line ") and "of the built-in prompt: " in l and l.endswith(removed)
               for l in lines), lines
    for backend in ("anthropic", "replay", "record"):  # a real model reads every line
        assert strict_failure(note, backend) == []
    assert strict_failure(None, "offline") == []
    assert strict_failure(coverage_note(builtin), "offline") == []  # nothing changed
