"""The built-in compaction prompt with one instruction removed, or reworded to ask for less.

For each instruction of :data:`pytest_ctxeval.llm.instructions.VOCABULARY` that the built-in prompt
gives: three edits of ``compact.j2`` (the instruction deleted, and two rewordings a prompt
maintainer might write), the grader that must regress offline, and the built-in scenarios where it
does. Each edit is a list of ``(old, new)`` replacements of the template's text; a test checks that
every ``old`` is still in the template, so an edit of the prompt cannot make these tests vacuous.
"""

from __future__ import annotations

from pathlib import Path

from pytest_ctxeval.engine.prompt import BUILTIN_PROMPTS

ANALYSIS_ERRORS = ", and the errors you ran into and how you fixed them."
S3 = "Pay special attention to the most recent messages, include full code snippets where applicable, and say why each read or edit matters."
S4 = ("List every error you ran into and how you fixed it (or that it is still open). Quote the key error line "
      "exactly.")
S6 = "List ALL user messages that are not tool results, verbatim, one per item."
S7 = "Outline the pending tasks you have explicitly been asked to work on."
S8_CODE = " Include file names and code snippets where applicable."
S9_INLINE = ("IMPORTANT: ensure that this step is DIRECTLY in line with the user's most recent explicit requests and the "
             "task you were working on immediately before this summary request. ")
S9_QUOTES = ("   If there is a next step, include direct quotes from the most recent conversation showing exactly what task "
             "you were working on and where you left off. This should be verbatim to ensure there's no drift in task "
             "interpretation.")
RULES = " Keep the rules of memory files (CLAUDE.md) that still apply."
FAILED = " Record the approaches that did not work, so they are not tried again."
FACTS = " Keep the facts you found along the way (from tool results and your own findings)."
IDENTS = " Write identifiers (names, paths, numbers) exactly as they appear."

#: instruction -> (grader that regresses, scenarios where it does, {variant: [(old, new), ...]})
VARIANTS: dict[str, tuple[str, tuple[str, ...], dict[str, list[tuple[str, str]]]]] = {
    "user_messages_verbatim": ("verbatim_user_messages", ("auth_refactor", "idle_gap"), {
        "removed": [(S6, "List ALL user messages that are not tool results, one per item.")],
        "paraphrased": [(S6, "Each user message, briefly paraphrased.")],
        "summarised": [(S6, "Summarise what the user said; there is no need to quote the messages verbatim.")],
    }),
    "next_step_quotes": ("next_step_quote", ("auth_refactor", "debug_failing_test"), {
        "removed": [(S9_INLINE, ""), ("\n" + S9_QUOTES, "")],
        "own_words": [("\n" + S9_QUOTES, "\n   If there is a next step, say in your own words where you left off.")],
        "no_quote": [("\n" + S9_QUOTES, "\n   Describe the next step briefly; do not quote the conversation.")],
    }),
    "code_snippets": ("probes", ("idle_gap", "subagent_finding"), {
        "removed": [(" include full code snippets where applicable,", ""), (S8_CODE, "")],
        "names_only": [(S3, "Give file names only, no code."), (S8_CODE, " Name the files.")],
        "no_need": [(" include full code snippets where applicable,", " there is no need to include code,"),
                    (S8_CODE, "")],
    }),
    "errors_quoted_and_fixed": ("errors_preserved", ("debug_failing_test", "multi_file_refactor"), {
        "removed": [(S4, "List every error you ran into."), (ANALYSIS_ERRORS, ".")],
        "briefly": [(S4, "Mention briefly what went wrong."), (ANALYSIS_ERRORS, ".")],
        "general_terms": [(S4, "Describe the errors in general terms, without quoting them."), (ANALYSIS_ERRORS, ".")],
    }),
    "pending_explicit": ("no_superseded_work", ("evolving_todos",), {
        "removed": [(S7, "Outline the pending tasks.")],
        "any_task": [(S7, "Any tasks that might still be worth doing.")],
        "everything": [(S7, "List every task mentioned so far.")],
    }),
    "memory_rules": ("constraints_preserved", ("memory_file_rule",), {
        "removed": [(RULES, "")],
        "loaded_again": [(RULES, " Memory files (CLAUDE.md) are loaded again after the summary anyway.")],
        "do_not_repeat": [(RULES, " Do not repeat the rules of CLAUDE.md.")],
    }),
    "failed_approaches": ("failed_approaches_preserved", ("debug_failing_test",), {
        "removed": [(FAILED, "")],
        "what_worked": [(FAILED, " Record the approaches that worked.")],
        "skip_dead_ends": [(FAILED, " Focus on what worked; skip the dead ends.")],
    }),
    "identifiers": ("probes", ("idle_gap", "parallel_search_huge_output"), {
        "removed": [(IDENTS, "")],
        "general_terms": [(IDENTS, " Refer to code in general terms.")],
        "need_not": [(IDENTS, " Identifiers need not be exact.")],
    }),
    "keep_facts": ("probes", ("idle_gap", "repeated_reads"), {
        "removed": [(FACTS, "")],
        "leave_out": [(FACTS, " Leave out what you found along the way.")],
        "need_not": [(FACTS, " Findings need not be kept.")],
    }),
}


def builtin_source() -> str:
    """The built-in ``compact.j2`` as written."""
    return (BUILTIN_PROMPTS / "compact.j2").read_text(encoding="utf-8")


def edited(edits: list[tuple[str, str]], source: str | None = None) -> str:
    """``compact.j2`` with the replacements applied (each ``old`` must be there)."""
    text = builtin_source() if source is None else source
    for old, new in edits:
        if old not in text:
            raise AssertionError(f"the built-in compact.j2 no longer holds {old!r}: update tests/llm/prompt_variants.py")
        text = text.replace(old, new)
    return text


def write_variant(folder: Path, name: str, edits: list[tuple[str, str]]) -> Path:
    """The edited prompt written as ``folder/name.j2`` (it includes the built-in parts)."""
    path = folder / f"{name}.j2"
    path.write_text(edited(edits), encoding="utf-8")
    return path
