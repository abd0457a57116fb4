"""The instruction vocabulary: several phrasings per instruction ask for it; negations, opposites
and mere mentions do not."""

from __future__ import annotations

import pytest

from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.llm.instructions import VOCABULARY, LengthLimit, instruction, read_prompt

# (instruction, prompt text) pairs that ask for it. Section-scoped phrasings sit under their title.
ASKS = [
    ("user_messages_verbatim", "6. All user messages: List ALL user messages that are not tool results, verbatim."),
    ("user_messages_verbatim", "6. All user messages: quote each one exactly as the user wrote it."),
    ("user_messages_verbatim", "Keep every message from the user word-for-word."),
    ("user_messages_verbatim", "## User messages\nEvery user message in full, **character for character**."),
    ("user_messages_verbatim", "Copy the user's requests as-is, in quotation marks."),
    ("next_step_quotes", "9. Next Step: include direct quotes from the most recent conversation."),
    ("next_step_quotes", "9. Next step: quote the latest request verbatim so the task does not drift."),
    ("next_step_quotes", "When you give the next step, quote the user's last message word for word."),
    ("next_step_quotes", "9. Optional Next Step: what comes next.\n   Quote where you left off, exactly."),
    ("code_snippets", "3. Files and Code Sections: include full code snippets where applicable."),
    ("code_snippets", "For each file, show the code you changed."),
    ("code_snippets", "3. Files: list them with the relevant snippets."),
    ("code_snippets", "Paste the diffs of every edit."),
    ("errors_quoted_and_fixed", "4. Errors and fixes: List every error and how you fixed it."),
    ("errors_quoted_and_fixed", "4. Errors: quote the key error line exactly."),
    ("errors_quoted_and_fixed", "Copy each traceback's last line verbatim, and say how it was resolved."),
    ("errors_quoted_and_fixed", "## Problems\nFor every failure: the exact text, then the fix."),
    ("pending_explicit", "7. Pending Tasks: Outline the pending tasks you have explicitly been asked to work on."),
    ("pending_explicit", "7. Pending: only the tasks the user asked for."),
    ("pending_explicit", "List the open todo items that are not yet done."),
    ("memory_rules", "Keep the rules of memory files (CLAUDE.md) that still apply."),
    ("memory_rules", "Restate the project rules from CLAUDE.md."),
    ("memory_rules", "Preserve any standing instructions from AGENTS.md."),
    ("failed_approaches", "Record the approaches that did not work, so they are not tried again."),
    ("failed_approaches", "List what you tried that failed."),
    ("failed_approaches", "Note dead ends and fixes that were reverted."),
    ("identifiers", "Write identifiers (names, paths, numbers) exactly as they appear."),
    ("identifiers", "Keep function names and file paths verbatim."),
    ("identifiers", "Use the precise commit hashes and IDs."),
    ("keep_facts", "Keep the facts you found along the way (from tool results and your own findings)."),
    ("keep_facts", "Record the measurements and conclusions you reached."),
    ("keep_facts", "Carry forward what you found in tool results."),
    ("length_limit", "Keep the summary under 400 words."),
    ("length_limit", "The reply must not exceed 2,000 tokens."),
    ("length_limit", "Limit it to 30 lines."),
    ("language", "Write the summary in French."),
    ("language", "Respond in German."),
    ("language", "Output language: Spanish"),
    # other ways of saying the same (a fresh reader's prompt edits, generalised)
    ("user_messages_verbatim", "6. All user messages: quote each of them, one per item."),
    ("user_messages_verbatim", "6. All user messages: reproduce them in the user's original wording."),
    ("user_messages_verbatim", "6. All user messages: transcribe them exactly as the person typed them."),
    ("user_messages_verbatim", "6. All user messages: one per item, without altering any word."),
    ("next_step_quotes", "9. Next Step: back it with quotations from the latest exchange."),
    ("next_step_quotes", "9. Next Step: cite the last request."),
    ("errors_quoted_and_fixed", "4. Errors: paste the failing line and the workaround."),
    ("errors_quoted_and_fixed", "4. Errors: copy the message and say how you got around it."),
    ("keep_facts", "Jot down what you found out from tool outputs."),
    ("keep_facts", "Note the conclusions you reached."),
    ("identifiers", "Paths and version numbers: do not abbreviate them."),
    ("failed_approaches", "Say which attempts were unsuccessful."),
    ("pending_explicit", "7. Pending Tasks: what the user still needs done."),
]

# (instruction, prompt text) pairs that do NOT ask for it.
DOES_NOT = [
    ("user_messages_verbatim", "6. All user messages: Each user message, briefly paraphrased."),
    ("user_messages_verbatim", "6. All user messages: summarise them; no need to quote them verbatim."),
    ("user_messages_verbatim", "Do not copy user messages word for word."),
    ("user_messages_verbatim", "6. All user messages:"),
    ("user_messages_verbatim", "9. Next step: quote the latest request verbatim."),  # about the next step
    ("next_step_quotes", "9. Next step: say in your own words where you left off."),
    ("next_step_quotes", "9. Next step: describe it briefly; do not quote the conversation."),
    ("next_step_quotes", "9. Optional Next Step:"),
    ("code_snippets", "3. Files: give file names only, no code."),
    ("code_snippets", "3. Files: there is no need to include code."),
    ("code_snippets", "3. Files and Code Sections:"),
    ("code_snippets", "Capture code patterns and architectural decisions with care."),
    ("errors_quoted_and_fixed", "4. Errors and fixes:"),
    ("errors_quoted_and_fixed", "4. Errors: describe them in general terms, without quoting them."),
    ("errors_quoted_and_fixed", "4. Errors: mention briefly what went wrong."),
    ("pending_explicit", "7. Pending Tasks: any tasks that might still be worth doing."),
    ("pending_explicit", "7. Pending Tasks: list every task mentioned so far."),
    ("memory_rules", "Do not repeat the rules of CLAUDE.md."),
    ("memory_rules", "Memory files (CLAUDE.md) are loaded again after the summary anyway."),
    ("failed_approaches", "Record the approaches that worked."),
    ("failed_approaches", "Focus on what worked; skip the dead ends."),
    ("identifiers", "Identifiers need not be exact."),
    ("identifiers", "Refer to code in general terms."),
    ("keep_facts", "Leave out what you found along the way."),
    ("keep_facts", "List ALL user messages that are not tool results."),
    ("length_limit", "Be thorough."),
    ("length_limit", "The conversation had 400 words."),
    ("language", "Write the summary."),
    ("language", "The user writes in Japanese sometimes."),
    ("errors_quoted_and_fixed", "4. Errors and fixes: omit them entirely."),
    ("errors_quoted_and_fixed", "In the analysis, go through the errors and how you fixed them.\n4. Errors: leave them out."),
    ("code_snippets", "3. Files: do not include snippets."),
    ("user_messages_verbatim", "6. All user messages: leave them out of the summary."),
    ("keep_facts", "Omit the facts you found along the way."),
]


@pytest.mark.parametrize("name, text", ASKS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ASKS)])
def test_a_phrasing_asks_for_its_instruction(name: str, text: str) -> None:
    assert name in read_prompt(text), f"{name} not read in {text!r}"


@pytest.mark.parametrize("name, text", DOES_NOT, ids=[f"{n}-{i}" for i, (n, _) in enumerate(DOES_NOT)])
def test_a_negation_opposite_or_mention_does_not(name: str, text: str) -> None:
    assert name not in read_prompt(text), f"{name} wrongly read in {text!r}"


def test_every_instruction_has_three_phrasings_and_two_counter_examples() -> None:
    for inst in VOCABULARY:
        assert sum(n == inst.name for n, _ in ASKS) >= 3, inst.name
        assert sum(n == inst.name for n, _ in DOES_NOT) >= 2, inst.name


def test_the_builtin_prompt_asks_for_every_instruction_but_the_length_and_the_language() -> None:
    reading = read_prompt(PromptSet().render_compact())
    assert set(reading.asked) == {i.name for i in VOCABULARY} - {"length_limit", "language"}
    assert reading.limit is None and reading.language is None


def test_the_length_limit_and_the_language_carry_their_value() -> None:
    r = read_prompt("Keep the summary under 1,200 words. Write the summary in Français.")
    assert r.limit == LengthLimit(1200, "words") and r.language == "french"
    assert read_prompt("Limit it to 40 lines.").limit == LengthLimit(40, "lines")


def test_opposites_are_recorded_for_the_coverage_note() -> None:
    r = read_prompt("6. All user messages: each user message, briefly paraphrased.")
    assert "user_messages_verbatim" in r.opposed and "user_messages_verbatim" not in r.asked


def test_the_table_names_a_grader_and_both_behaviours() -> None:
    from pytest_ctxeval.grading import GraderRegistry
    from pytest_ctxeval.grading.registry import builtin_graders_dir

    registry = GraderRegistry()
    registry.load_dir(builtin_graders_dir())
    known = set(registry.names) | {"facts_survive"}  # issue 19's grader, on its own branch
    for inst in VOCABULARY:
        assert inst.when_asked and inst.otherwise and inst.title
        assert inst.grader in known, inst.grader
    with pytest.raises(KeyError, match="unknown instruction 'nope'"):
        instruction("nope")


@pytest.mark.parametrize("name, text, asked", [
    ("user_messages_verbatim", "6. All user messages: one per item, and do not reword them.", True),
    ("errors_quoted_and_fixed", "4. Errors and fixes: list them; never leave one out.", True),
    ("user_messages_verbatim", "6. All user messages: no need to keep them or copy them word for word.", False),
    ("errors_quoted_and_fixed", "4. Errors: the exact text is not needed; a word on each is enough.", False),
    ("user_messages_verbatim", "6. All user messages: verbatim is optional here.", False),
])
def test_negated_opposites_ask_and_later_negations_do_not(name: str, text: str, asked: bool) -> None:
    assert (name in read_prompt(text)) is asked, text


def test_omit_nothing_is_not_read_as_leaving_out() -> None:
    r = read_prompt("6. All user messages: list them verbatim and omit nothing.")
    assert "user_messages_verbatim" in r and "user_messages_verbatim" not in r.opposed
