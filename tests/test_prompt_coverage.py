"""The prompt-change coverage note: each changed sentence read offline (and as what) or not seen."""

from __future__ import annotations

from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.reporting.prompt_coverage import coverage_note, format_coverage, prompt_coverage

BUILTIN = PromptSet().render_compact()


def _change(old: str, new: str) -> str:
    assert old in BUILTIN
    return BUILTIN.replace(old, new)


def test_a_dropped_section_is_read_whole() -> None:
    line = next(l for l in BUILTIN.split("\n") if l.startswith("6. All user messages"))
    cov = prompt_coverage(_change(line + "\n", ""), BUILTIN)
    assert [c.mapped[0].split(":")[0] for c in cov.lines] == ["section", "instruction", "part of section"]
    assert not cov.unseen


def test_a_sentence_left_behind_by_a_removed_instruction_is_read_through_it() -> None:
    cov = prompt_coverage(_change(" verbatim,", ""), BUILTIN)
    added = [c for c in cov.lines if c.sign == "+"]
    assert added[0].mapped == ["no longer asks for: user messages verbatim"]
    assert not cov.unseen


def test_a_tone_change_is_not_seen_and_says_what_to_run() -> None:
    cov = prompt_coverage(_change("Double-check for technical accuracy and completeness.", "Stay upbeat."), BUILTIN)
    assert [c.sign for c in cov.unseen] == ["-", "+"]
    text = "\n".join(format_coverage(cov))
    assert "NOT SEEN OFFLINE - Stay upbeat." in text and "--ctxeval-backend anthropic" in text


def test_an_added_limit_and_language_are_read_with_their_value() -> None:
    cov = prompt_coverage(BUILTIN + "\nKeep the summary under 500 words. Write it in Spanish.", BUILTIN)
    labels = [m for c in cov.lines for m in c.mapped]
    assert "instruction: a length limit (500 words)" in labels
    # the language is named, but marked not seen offline (only a few fixed phrases change language)
    assert any(l.startswith("instruction: a language (spanish) — ") and "not seen offline" in l for l in labels)


def test_no_note_without_a_change_and_whitespace_is_not_a_change() -> None:
    assert coverage_note(BUILTIN) is None
    assert coverage_note(BUILTIN.replace("\n\n", "\n \n")) is None
    assert prompt_coverage(BUILTIN.replace(". ", ".  "), BUILTIN).lines == []


def test_the_baseline_prompt_wins_over_the_builtin_one() -> None:
    mine = _change("Double-check for technical accuracy and completeness.", "Stay upbeat.")
    note = coverage_note(mine, {"prompt": {"name": "mine.j2", "text": mine}})
    assert note is not None and note["against"] == "the built-in prompt"  # same as the baseline: vs built-in
    other = coverage_note(mine + "\nBe brief.", {"prompt": {"name": "mine.j2", "text": mine}})
    assert other["against"] == "the baseline's prompt (mine.j2)" and len(other["lines"]) == 1


def test_a_section_that_asks_the_opposite_wins_and_the_note_says_so() -> None:
    # "omit errors" in section 4 outweighs the analysis bullet about "the errors you ran into"
    line = next(l for l in BUILTIN.split("\n") if l.startswith("4. Errors and fixes"))
    new = _change(line, "4. Errors and fixes: Do not include error messages or stack traces; omit errors entirely.")
    from pytest_ctxeval.llm.instructions import read_prompt

    reading = read_prompt(new)
    assert "errors_quoted_and_fixed" not in reading and reading.overridden["errors_quoted_and_fixed"]
    labels = [m for c in prompt_coverage(new, BUILTIN).lines if c.sign == "+" for m in c.mapped]
    assert any("asks the opposite (wins over line" in m for m in labels), labels


def test_a_general_opposite_loses_to_the_section_and_the_note_warns() -> None:
    new = BUILTIN + "\nWhen you list the user's messages, restate them in your own words rather than quoting them."
    from pytest_ctxeval.llm.instructions import read_prompt

    assert "user_messages_verbatim" in read_prompt(new)
    labels = [m for c in prompt_coverage(new, BUILTIN).lines for m in c.mapped]
    assert any("asks the opposite" in m for m in labels), labels
