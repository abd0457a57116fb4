"""The shapes real compaction instructions take (``/compact`` arguments, "Compact Instructions"
sections of CLAUDE.md files, forks of Claude Code's prompt), read offline as a model following them
would. Every wording here is ours; each test names the real shape it mirrors.

Classes: a lead-in with a colon and bullets under it; a list after "Discard:" in one line; a verb
that drops ("drop", "discard", "ignore", "exclude") the debugging or the dead ends; the /compact
instructions winning over the template; noise around a subject ("repeated tool output"); a keep of
something else only ("keep pass/fail only"); "exit code" is not code; a manner word after
"summarised" ("each summarised faithfully").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prompt_variants import S6, builtin_source, edited
from test_prompt_regression import run_offline
from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.llm.instructions import read_prompt, sentence_reading, sentences
from pytest_ctxeval.reporting.baseline import diff_runs, format_run_diff
from pytest_ctxeval.reporting.prompt_coverage import coverage_note

BUILTIN = PromptSet().render_compact()


def custom(text: str) -> str:
    """The built-in prompt as a ``/compact <text>`` (or a PreCompact hook) renders it."""
    return PromptSet().render_compact(text)


def reading_of(prompt: str, fragment: str) -> list[str]:
    """What the offline model reads in the sentence holding ``fragment`` (as written)."""
    hits = [s for s in sentences(prompt) if fragment.lower() in s.raw.lower()]
    assert hits, fragment
    return sorted({r for s in hits for r in sentence_reading(s)})


# --- a lead-in ending in a colon, the objects as bullets below it ------------------------------

def test_bullets_are_read_with_their_lead_in() -> None:
    """Shape: "When compacting, drop:" / "Discard:" followed by "- <object>" bullets (CLAUDE.md
    "Compact Instructions"). Alone, a bullet naming the dead ends read as an ask to keep them."""
    prompt = custom("Before you summarise, keep:\n- the edited files\n- what we tried that failed\n\n"
                    "Throw away:\n- the dead ends we hit while searching\n- repeated command output")
    assert reading_of(prompt, "what we tried that failed") == ["failed_approaches"]
    assert reading_of(prompt, "the dead ends we hit") == ["failed_approaches (opposite)"]
    assert reading_of(prompt, "repeated command output") == []  # the noise, not the facts


def test_a_lead_in_reaches_the_bullets_across_one_blank_line_only() -> None:
    """Shape: "When compacting, preserve:" then a blank line, then the bullets."""
    prompt = custom("Leave out:\n\n- the debugging of the flaky test\n\nThe next paragraph.\n- the dead ends")
    assert "errors_quoted_and_fixed (opposite)" in reading_of(prompt, "debugging of the flaky test")
    assert reading_of(prompt, "- the dead ends") == ["failed_approaches"]  # no lead-in above this list


def test_only_the_lead_in_line_leads_the_list() -> None:
    """Shape: a /compact text without full stops, a lead-in on the next line
    ("focus on X, drop the debugging\nWhen compacting, discard:\n- repeated tool output"): the
    line above runs into the lead-in's sentence, but its words do not lead the bullets."""
    prompt = custom("focus on the parser, drop the debugging\nWhen compacting, discard:\n- repeated tool output")
    assert reading_of(prompt, "repeated tool output") == []
    assert read_prompt(prompt).custom_won["errors_quoted_and_fixed"] == [
        s.line for s in sentences(prompt) if s.raw.startswith("focus on the parser")]


def test_the_builtin_prompt_reads_the_same() -> None:
    """The built-in prompt's analysis bullets sit under "In the analysis:": read with it, they ask
    for what they asked before (the built-in verdicts are pinned in tests/llm/data)."""
    r = read_prompt(BUILTIN)
    assert not r.overridden and not r.partial and not r.custom_won
    assert set(r.asked) >= {"user_messages_verbatim", "errors_quoted_and_fixed", "failed_approaches", "keep_facts"}


# --- verbs that drop, and what they drop -------------------------------------------------------

@pytest.mark.parametrize("text, errors, failed", [
    # "/compact focus on X, drop the test debugging"
    ("concentrate on the parser work, drop the debugging of the CI job", True, True),
    # "... and ignore the earlier debugging"
    ("Keep the schema decisions and ignore all that debugging", True, True),
    # "Discard: diagnostic dead ends, superseded approaches, resolved bugs."
    ("Discard: dead ends, approaches we replaced, fixed bugs.", True, True),
    # "Exclude debugging history, rejected approaches, and full conversation dumps."
    ("Exclude rejected approaches and the raw logs.", False, True),
    # "When compacting, drop:\n- Intermediate error messages"
    ("When compacting, drop:\n- error messages from the middle of the session", True, False),
])
def test_a_drop_of_the_debugging_is_read_against_errors_and_dead_ends(text: str, errors: bool, failed: bool) -> None:
    r = read_prompt(custom(text))
    assert ("errors_quoted_and_fixed" not in r) is errors, r
    assert ("failed_approaches" not in r) is failed, r


@pytest.mark.parametrize("text, reads", [
    # "When compacting, discard: debugging dead ends, ...": the dead ends of the debugging, not its errors
    ("Before compacting, discard: the debugging dead ends, old file text.", ["failed_approaches (opposite)"]),
    ("Before compacting, discard: debugging attempts that went nowhere.", ["failed_approaches (opposite)"]),
    # "When compacting, discard:\n- Exploratory searches that led to dead ends" (the term far from the verb)
    ("When compacting, discard:\n- the long searches we ran that only led to dead ends", ["failed_approaches (opposite)"]),
    # "- Resolved debug output and stack traces" (the subject second in an "and" list)
    ("When compacting, drop:\n- fixed debug output and stack traces", ["errors_quoted_and_fixed (opposite)"]),
    # noise on one conjunct only: "Discard verbose listings and ..."
    ("Discard verbose listings and the error messages.", ["errors_quoted_and_fixed (opposite)"]),
    # "keep the current API implementation discussion but remove all the debugging and error troubleshooting"
    ("keep the parser discussion but remove the debugging from this morning",
     ["errors_quoted_and_fixed (opposite)", "failed_approaches (opposite)"]),
    # "When compacting, remove:\n- Failed attempts (unless relevant)"
    ("When compacting, delete:\n- attempts that failed", ["failed_approaches (opposite)"]),
    # a permission is not an instruction: "Tool outputs (can delete, keep pass/fail only)"
    ("Error output (can remove once fixed)", []),
    # "- Hook debug logs and usage tracking details": logs, not errors
    ("When compacting, discard:\n- our hook's debug logs", []),
    # "... focus on tasks complete, decisions made, code changes ...": "complete" is not about code
    ("When you compact, focus on tasks complete, code changes and next steps.", []),
])
def test_what_a_real_instruction_drops(text: str, reads: list[str]) -> None:
    prompt = custom(text)
    last = text.rsplit("\n", 1)[-1].lstrip("- ")
    assert reading_of(prompt, last[:25]) == reads


def test_a_section_6_asked_succinctly_is_a_paraphrase() -> None:
    """Shape: a fork's "6. All user messages: List succinctly, in order"."""
    r = read_prompt(_render(edited([(S6, "List them tersely, in order.")])))
    assert "user_messages_verbatim" not in r and r.opposed["user_messages_verbatim"]


@pytest.mark.parametrize("text", [
    "Drop repeated tool output and anything that can be read again.",        # "Drop repeated tool output, ..."
    "When compacting, discard:\n- verbose command output\n- long git log output",  # "Long git log/diff output"
    "Keep the exit code of every test run.",                                   # "test-runner exit code"
    "Tool results (may be removed, keep the verdict only)",                    # "Tool outputs (can delete, keep pass/fail only)"
    "When compacting, drop exploratory chatter.",                              # "drop exploratory reasoning"
    "Focus on the API changes and the test output.",                           # "focus on test output and code changes"
])
def test_harmless_real_wordings_change_nothing(text: str) -> None:
    """Shapes that keep or drop noise, or only focus: nothing the graders see changes, and the
    offline model reads the built-in prompt's instructions unchanged."""
    r, base = read_prompt(custom(text)), read_prompt(BUILTIN)
    assert (sorted(r.asked), r.overridden, r.partial) == (sorted(base.asked), {}, {})


def test_a_keep_of_something_else_only_is_not_a_keep_of_the_subject() -> None:
    """Shape: "5. Tool outputs (can delete, keep pass/fail only)": the keep is of the pass/fail."""
    assert reading_of(custom("Command outputs (fine to remove; keep pass/fail only)"), "pass/fail") == []
    assert reading_of(custom("Keep only the command outputs."), "command outputs") == ["keep_facts"]


# --- the /compact instructions win over the template ------------------------------------------

def test_the_compact_instructions_win_over_a_section_entry() -> None:
    """The user's ``/compact`` text is followed over section 4's "List every error ... Quote the key
    error line exactly"; the same sentence written in the template's general text is not (the
    section's own entry wins there, as before)."""
    mine = read_prompt(custom("leave out the debugging"))
    assert "errors_quoted_and_fixed" not in mine and "failed_approaches" not in mine
    assert mine.custom_won["errors_quoted_and_fixed"] and mine.overridden["errors_quoted_and_fixed"]
    general = read_prompt(_render(builtin_source().replace(
        "Double-check for technical accuracy and completeness.",
        "Double-check for technical accuracy and completeness. Leave out the debugging.")))
    assert "errors_quoted_and_fixed" in general and "failed_approaches" in general
    assert not general.custom_won


def test_the_compact_instructions_asking_win_over_the_template_against(tmp_path: Path) -> None:
    """A prompt whose section 6 paraphrases, with ``/compact quote every user message verbatim``."""
    path = tmp_path / "compact.j2"
    path.write_text(edited([(S6, "Each user message, briefly paraphrased.")]), encoding="utf-8")
    assert "user_messages_verbatim" not in read_prompt(PromptSet(str(path)).render_compact())
    assert "user_messages_verbatim" in read_prompt(PromptSet(str(path)).render_compact(
        "Quote every user message verbatim."))


def test_the_coverage_note_says_the_compact_instructions_are_followed(tmp_path: Path) -> None:
    path = tmp_path / "compact.j2"
    path.write_text(_with_block("When compacting, drop:\n- the dead ends\n- resolved stack traces"), encoding="utf-8")
    note = coverage_note(PromptSet(str(path)).render_compact())
    assert note is not None
    lines = {c["text"]: c for c in note["lines"] if c["sign"] == "+"}
    assert lines["- the dead ends"]["seen"]
    assert "the /compact instructions win over line" in "; ".join(lines["- the dead ends"]["mapped"])
    assert "errors quoted" in "; ".join(lines["- resolved stack traces"]["mapped"])


def test_prompt_show_names_the_compact_instructions_as_the_side_followed(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_ctxeval.cli import main

    path = tmp_path / "compact.j2"
    path.write_text(_with_block("focus on the parser, drop the debugging"), encoding="utf-8")
    main(["prompt", "show", "--prompt", str(path)])
    out = capsys.readouterr().out
    assert "but the /compact instructions ask otherwise (rendered line" in out
    assert "followed offline: the /compact instructions" in out and "its own section asks" not in out


# --- section rewordings of forks ---------------------------------------------------------------

def test_summarised_faithfully_is_not_verbatim() -> None:
    """Shape: a fork's section 6, "each summarized faithfully ... Preserve any security-relevant
    instructions or constraints VERBATIM": the messages are summarised; the verbatim ask covers
    the constraints only (asked in part)."""
    prompt = edited([(S6, "List every user message, each paraphrased accurately. Keep any safety rule they "
                          "state verbatim.")])
    r = read_prompt(_render(prompt))
    assert "user_messages_verbatim" not in r and "user_messages_verbatim" in r.partial


# --- verdicts ----------------------------------------------------------------------------------

def _with_block(text: str) -> str:
    """``compact.j2`` with ``text`` as its fixed /compact instructions (as a user pins them)."""
    block = "{% if custom_instructions %}\n\nAdditional Instructions:\n{{ custom_instructions }}\n{% endif %}"
    return builtin_source().replace(block, "\nAdditional Instructions:\n{% raw %}" + text + "{% endraw %}\n")


def _render(template: str) -> str:
    import tempfile

    path = Path(tempfile.mkdtemp()) / "compact.j2"
    path.write_text(template, encoding="utf-8")
    return PromptSet(str(path)).render_compact()


SCENARIOS = ["debug_failing_test", "auth_refactor"]
GRADERS = ["errors_preserved", "failed_approaches_preserved", "verbatim_user_messages", "files_preserved",
           "next_step_quote", "probes"]


@pytest.fixture(scope="module")
def builtin_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_offline(tmp_path_factory.mktemp("builtin"), "builtin", SCENARIOS, GRADERS)


@pytest.mark.parametrize("text, regressed", [
    # "/compact focus on the auth refactor, drop the test debugging"
    ("focus on the session work, drop the debugging", {"errors_preserved", "failed_approaches_preserved"}),
    # "Discard:\n- Exploratory search dead ends"
    ("Keep:\n- the edited files\n\nDiscard:\n- the dead ends", {"failed_approaches_preserved"}),
    # "When compacting, keep: the list of modified files, failing test names, and the exact verification commands."
    ("When compacting, keep: the edited files, the failing test names, and the exact commands to verify.", set()),
    # "Drop repeated tool output, superseded reasoning, and repository text that can be read again."
    ("Drop duplicated tool output and file text that can be read again.", set()),
])
def test_real_instruction_shapes_regress_what_a_model_following_them_would(
        text: str, regressed: set[str], builtin_run: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "compact.j2"
    path.write_text(_with_block(text), encoding="utf-8")
    doc = run_offline(tmp_path, "mine", SCENARIOS, GRADERS, path)
    cmp = diff_runs(builtin_run, doc)
    got = {c.grader for c in cmp.regressions} - {"probes"}  # a probe about the dropped part may lose a point
    assert got == regressed, format_run_diff(cmp)
    assert all(c.reason for c in cmp.regressions)
