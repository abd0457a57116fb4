"""How the offline model reads a prompt that was edited in ways a model reads the same (re-wrapped,
a no-break space, an example before the list, a translated list, the tags left out), and edits it
reads differently (a limit on one part, a partial or far-negated ask, a contradiction). A fresh
reader's review found each of these read wrong (classes A-H of its report)."""

from __future__ import annotations

import re
import textwrap

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.llm.instructions import LengthLimit, read_prompt, sentences
from pytest_ctxeval.llm.reference import prompt_sections, reads_instructions
from pytest_ctxeval.reading.summary import SECTION_KINDS, section_entries
from pytest_ctxeval.reporting.prompt_coverage import coverage_note, format_coverage, prompt_coverage

BUILTIN = PromptSet().render_compact()
S6 = "List ALL user messages that are not tool results, verbatim, one per item."


def _key(text: str) -> tuple[object, ...]:
    r = read_prompt(text)
    return (sorted(r.asked), sorted(r.opposed), sorted(r.overridden), sorted(r.partial), r.limit, r.language,
            [k for k, _ in prompt_sections(text)], reads_instructions(text))


def _change(old: str, new: str, text: str = BUILTIN) -> str:
    assert old in text
    return text.replace(old, new)


def rewrap(text: str, width: int, indent: str) -> str:
    """Every long line hard-wrapped at ``width`` (an editor's ``gq``), continuation lines indented."""
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        lead = re.match(r"^\s*(?:[-*] |\d\. )?", line).group(0)  # type: ignore[union-attr]
        out += textwrap.wrap(line, width, subsequent_indent=indent or " " * (len(lead) if lead.strip() else 0),
                             break_long_words=False, break_on_hyphens=False)
    return "\n".join(out)


# -- B: whitespace --------------------------------------------------------------------------------

@pytest.mark.parametrize("width", [50, 60, 66, 72, 80])
@pytest.mark.parametrize("indent", ["", "   "])
def test_a_rewrapped_prompt_reads_as_the_builtin_one(width: int, indent: str) -> None:
    wrapped = rewrap(BUILTIN, width, indent)
    assert wrapped != BUILTIN
    assert _key(wrapped) == _key(BUILTIN)
    assert [s.text for s in sentences(wrapped)] == [s.text for s in sentences(BUILTIN)]
    assert coverage_note(wrapped) is None  # no change, and none in the reading


def test_a_sentence_split_by_a_line_break_is_one_sentence() -> None:
    text = "7. Pending Tasks: Outline the pending tasks you have explicitly been\n   asked to work on."
    assert [s.text for s in sentences(text) if not s.title] == ["outline the pending tasks you have explicitly been "
                                                               "asked to work on."]
    assert "pending_explicit" in read_prompt(text)
    # a bullet, an entry or a tag on the next line is not the rest of the sentence, nor is a heading
    assert len(sentences("Keep these in mind\n- first\n- second")) == 3
    assert [s.text for s in sentences("## Notes\nKeep the summary short.")] == ["## notes", "keep the summary short."]


@pytest.mark.parametrize("space", ["\u00a0", "\u202f", "\u2009", "\u3000"])
def test_a_unicode_space_after_the_number_is_a_space(space: str) -> None:
    text = _change("6. All user messages:", f"6.{space}All user messages:")
    assert [e.kind for e in section_entries(text)] == list(SECTION_KINDS)
    assert _key(text) == _key(BUILTIN)


# -- C: a length limit applies to what its sentence limits ---------------------------------------

@pytest.mark.parametrize("old, new", [
    ("say why each read or edit matters", "say in under 15 words why each read or edit matters"),
    ("Quote the key error line exactly.", "Quote the key error line exactly (up to 200 characters of it)."),
    ("Quote the key error line exactly.", "Quote the key error line exactly (at most 2 lines of the output)."),
    (S6, "List ALL user messages that are not tool results, verbatim when under 40 words, one per item."),
    ("Pay special attention to specific user feedback", "In at most 40 words per file, pay special attention "
                                                        "to specific user feedback"),
], ids=["clause", "part-of-it", "part-of-output", "conditional", "per-file"])
def test_a_limit_on_part_of_the_summary_is_not_its_length(old: str, new: str) -> None:
    reading = read_prompt(_change(old, new))
    assert reading.limit is None and "length_limit" not in reading
    assert reading.part_limits
    cov = prompt_coverage(_change(old, new), BUILTIN)
    assert any("on part of the summary" in m and "not seen offline" in m for c in cov.lines for m in c.mapped)


@pytest.mark.parametrize("text, limit", [
    ("Keep the whole summary under 2000 words.", LengthLimit(2000, "words")),
    ("Keep the summary under 400 words.", LengthLimit(400, "words")),
    ("The reply must not exceed 2,000 tokens.", LengthLimit(2000, "tokens")),
    ("Limit it to 30 lines.", LengthLimit(30, "lines")),
    ("Keep each section under 50 words.", LengthLimit(50, "words", "section")),
])
def test_a_limit_on_the_summary_or_each_section_is_read(text: str, limit: LengthLimit) -> None:
    assert read_prompt(BUILTIN + "\n" + text).limit == limit


def test_a_limit_on_each_user_message_cuts_each_quote() -> None:
    from test_instruction_behaviour import REQUEST, session
    from pytest_ctxeval.core.messages import to_api
    from pytest_ctxeval.llm.reference import write_summary
    from pytest_ctxeval.reading.summary import format_compact_summary, parse_summary

    text = _change(S6, S6 + " Keep each item under 8 words.")
    reading = read_prompt(text)
    assert reading.limit is None and reading.item_limits["user_messages"] == LengthLimit(8, "words", "user_messages")
    body = parse_summary(format_compact_summary(write_summary(to_api(session()) + [
        {"role": "user", "content": text}]))).get("user_messages").body
    assert REQUEST not in body and " ".join(REQUEST.split()[:8]) + "…" in body


def test_a_condition_is_not_a_limit() -> None:
    r = read_prompt("6. All user messages: verbatim only if shorter than 10 words; otherwise paraphrase them.")
    assert r.limit is None and "user_messages_verbatim" not in r


# -- A: a prompt without the tags ----------------------------------------------------------------

def test_a_claude_code_prompt_is_read_with_or_without_tags_and_another_compactors_is_not() -> None:
    untagged = "\n".join(l for l in BUILTIN.split("\n") if not re.search(r"</?(?:analysis|summary)>", l))
    assert reads_instructions(BUILTIN) and reads_instructions(untagged)
    titles = "\n".join(f"{n}. {t}" for n, t in enumerate(
        ["Primary Request and Intent", "Key Technical Concepts", "Files and Code Sections", "Errors and fixes",
         "Problem Solving", "All user messages", "Pending Tasks", "Current Work", "Optional Next Step"], 1))
    assert reads_instructions(titles)
    from pytest_ctxeval.engine.prompt import BUILTIN_PROMPTS

    peers = BUILTIN_PROMPTS.parent / "compaction" / "prompts"
    for name in ("codex_handoff.j2", "opencode_summary.j2", "gemini_snapshot.j2"):
        assert not reads_instructions((peers / name).read_text()), name


def test_prompt_show_says_when_instructions_are_not_read(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    codex = tmp_path / "handoff.j2"
    codex.write_text("1. Goal: what the user wants.\n2. Constraints: the rules.\n3. Remaining work: the rest.\n")
    assert main(["prompt", "show", "--prompt", str(codex)]) == 0
    assert "# instructions: not read: the prompt asks for another compactor's sections" in capsys.readouterr().out


# -- D: which numbered list is the section list --------------------------------------------------

CHECKLIST = ("Before you write, check that you have:\n1. User requests: every one of them.\n2. Errors: each with its "
             "fix.\n3. Next step: a quote.\n\n")


@pytest.mark.parametrize("extra", [
    CHECKLIST,
    "Here is an example (shortened):\n<example>\n<summary>\n1. Primary Request and Intent:\n   Fix the test.\n"
    "6. All user messages:\n   - \"fix it\"\n9. Optional Next Step:\n   Run it.\n</summary>\n</example>\n\n",
    "An example summary:\n\n    1. Primary Request and Intent: fix the test.\n    6. All user messages: \"fix it\"\n\n",
], ids=["checklist", "example-in-tags", "plain-example"])
def test_an_example_or_checklist_before_the_list_does_not_replace_it(extra: str, capsys) -> None:  # type: ignore[no-untyped-def]
    text = _change("Your summary should include the following sections:",
                   extra + "Your summary should include the following sections:")
    assert [k for k, _ in prompt_sections(text)] == list(SECTION_KINDS)
    assert [e.kind for e in section_entries(text)] == list(SECTION_KINDS)


def test_a_list_numbered_one_to_nine_with_unknown_titles_is_read_by_place(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    german = ["Hauptanliegen und Absicht", "Wichtige technische Konzepte", "Dateien und Codeabschnitte",
              "Fehler und Korrekturen", "Problemlösung", "Alle Nachrichten des Benutzers", "Offene Aufgaben",
              "Aktuelle Arbeit", "Optionaler nächster Schritt"]
    text = BUILTIN
    for entry, title in zip(section_entries(BUILTIN), german):
        text = _change(f"{entry.number}. {entry.title}:", f"{entry.number}. {title}:", text)
    assert [k for k, _ in prompt_sections(text)] == list(SECTION_KINDS)
    assert sorted(read_prompt(text).asked) == sorted(read_prompt(BUILTIN).asked)
    path = tmp_path / "de.j2"
    path.write_text(text)
    main(["prompt", "show", "--prompt", str(path)])
    assert "read as the section of its number (a translated list)" in capsys.readouterr().out
    # a numbered procedure of another length is not a section list
    assert section_entries("1. Read the code\n2. Run it\n3. Fix it\n") == []


def test_prompt_show_says_when_no_list_is_read(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "odd.j2"
    path.write_text("Summarise the conversation under these headings:\n1. Was wir wollen: x\n2. Was geschah: y\n"
                    "3. Was bleibt: z\n")
    main(["prompt", "show", "--prompt", str(path)])
    out = capsys.readouterr().out
    assert "# sections: none" in out and "is not read as the section list" in out and "odd.j2:2" in out


def test_prompt_show_names_the_list_passed_over(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "checklist.j2"
    path.write_text(_change("Your summary should include the following sections:",
                            CHECKLIST + "Your summary should include the following sections:"))
    main(["prompt", "show", "--prompt", str(path)])
    assert "# note: another numbered list (checklist.j2:" in capsys.readouterr().out


# -- E: same meaning, other words ----------------------------------------------------------------

@pytest.mark.parametrize("name, old, new", [
    ("user_messages_verbatim", S6, "Every message the user typed, in the user's own words, one per item."),
    ("user_messages_verbatim", S6, "Every user message (not tool results), one per item, exactly."),
    ("user_messages_verbatim", S6, "Each user message (not tool results) as a quotation, one per item."),
    ("user_messages_verbatim", S6, "List ALL user messages that are not tool results, one per item, keeping the "
                                   "original text."),
    ("user_messages_verbatim", S6, "Each message the user wrote, copied without any edits, one per bullet."),
    ("failed_approaches", "Record the approaches that did not work, so they are not tried again.",
     "List anything you tried that didn't help, so it isn't retried."),
    ("failed_approaches", "Record the approaches that did not work, so they are not tried again.",
     "Mention what did not pan out."),
    ("pending_explicit", "Outline the pending tasks you have explicitly been asked to work on.",
     "What is left to do of what the user asked."),
    ("pending_explicit", "Outline the pending tasks you have explicitly been asked to work on.",
     "Outstanding work requested by the user; leave out tasks the user cancelled."),
    ("identifiers", "Write identifiers (names, paths, numbers) exactly as they appear.",
     "Use the real names of functions, files and values."),
    ("keep_facts", "Keep the facts you found along the way (from tool results and your own findings).",
     "Record important values and observations from command output."),
    ("memory_rules", "Keep the rules of memory files (CLAUDE.md) that still apply.",
     "Also keep the repository guidelines the user configured."),
])
def test_a_rewording_keeps_its_instruction(name: str, old: str, new: str) -> None:
    reading = read_prompt(_change(old, new))
    assert name in reading and name not in reading.opposed, new


def test_your_own_words_is_still_the_opposite() -> None:
    r = read_prompt(_change(S6, "Each user message, restated in your own words."))
    assert "user_messages_verbatim" not in r and "user_messages_verbatim" in r.opposed


# -- G: far negations, "not only", asks for a part -----------------------------------------------

@pytest.mark.parametrize("old, new, name", [
    (S6, "List the user messages that are not tool results, one per item. Verbatim quoting of them is not required.",
     "user_messages_verbatim"),
    (S6, "List ALL user messages. It is not necessary, given the token budget, to keep them verbatim.",
     "user_messages_verbatim"),
    (S6, "Quote the first user message verbatim; summarize each later one briefly.", "user_messages_verbatim"),
    (S6, "Summarise each user message in one line; code the user pasted can be kept verbatim.",
     "user_messages_verbatim"),
    (S6, "List ALL user messages verbatim, one per item, but cut any message longer than 15 words after its "
         "first 15 words.", "user_messages_verbatim"),
    (S6, S6 + " Only include the last 5 user messages.", "user_messages_verbatim"),
    ("Outline the pending tasks you have explicitly been asked to work on.",
     "List all tasks, not only the ones you have explicitly been asked to work on, including ideas the user later "
     "dropped.", "pending_explicit"),
    ("Outline the pending tasks you have explicitly been asked to work on.",
     "List every task you were ever explicitly asked to do, including ones the user later cancelled.",
     "pending_explicit"),
    ("include direct quotes from the most recent conversation showing exactly what task you were working on and "
     "where you left off. This should be verbatim to ensure there's no drift in task interpretation.",
     "include a direct quote of the user's FIRST message (not the latest one).", "next_step_quotes"),
    ("Quote the key error line exactly.", "Quote the key line of errors that are still open, exactly. Leave out "
                                          "errors that were already fixed.", "errors_quoted_and_fixed"),
    ("List every error you ran into and how you fixed it (or that it is still open). Quote the key error line exactly.",
     "Only give the number of errors and how many were fixed.", "errors_quoted_and_fixed"),
], ids=["not-required-far", "not-necessary-far", "first-verbatim-rest-summarised", "summarise-but-code",
        "cut-long", "last-5", "not-only", "ever-including-cancelled", "first-message", "only-open", "count-only"])
def test_a_far_negated_or_partial_ask_is_not_asking(old: str, new: str, name: str) -> None:
    assert name not in read_prompt(_change(old, new)), new


def test_a_partial_ask_is_named_in_the_note() -> None:
    new = _change(S6, "Quote the first user message verbatim; summarize each later one briefly.")
    assert read_prompt(new).partial["user_messages_verbatim"]
    text = "\n".join(format_coverage(prompt_coverage(new, BUILTIN)))
    assert "asked for in part only" in text


def test_leaving_out_something_else_is_not_a_partial_ask() -> None:
    r = read_prompt(_change(S6, S6 + " Do not include tool results."))
    assert "user_messages_verbatim" in r and not r.partial


# -- H: a general sentence against a section's own -----------------------------------------------

def test_a_general_ban_against_a_sections_ask_is_named_and_not_seen(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    ban = "IMPORTANT: never include any code in the summary; describe changes in prose."
    new = _change("Your summary should include the following sections:",
                  ban + "\n\nYour summary should include the following sections:")
    reading = read_prompt(new)
    assert "code_snippets" in reading and reading.opposed["code_snippets"]  # section 3's ask is followed
    cov = prompt_coverage(new, BUILTIN)
    line = next(c for c in cov.lines if "never include any code" in c.text)
    assert not line.seen and "real model may follow it" in "; ".join(line.mapped)
    path = tmp_path / "ban.j2"
    path.write_text(new)
    main(["prompt", "show", "--prompt", str(path)])
    assert "# contradiction: full code snippets: asked for" in capsys.readouterr().out


def test_a_sections_ban_wins_over_a_general_ask_for_code() -> None:
    new = _change("Pay special attention to the most recent messages, include full code snippets where applicable, "
                  "and say why each read or edit matters.", "Give file names only, no code.")
    # section 8 still asks for snippets in its own entry: both sections, the ask is followed
    assert "code_snippets" in read_prompt(new)
    general = _change(" Include file names and code snippets where applicable.", "", new) + \
        "\nAlways include the code you changed."
    reading = read_prompt(general)
    assert "code_snippets" not in reading and reading.overridden["code_snippets"]


@pytest.mark.parametrize("section_line", [
    # a second sentence about another thing: not against the section's own ask (a fifth reader's review)
    "9. Optional Next Step: If there is a next step, include direct quotes from the most recent conversation. "
    "Summarise the surrounding context briefly.",
    "4. Errors and fixes: List every error and how you fixed it. Quote the key error line exactly. You may "
    "paraphrase the user's feedback on it.",
    "4. Errors and fixes: List every error and how you fixed it. Quote the key error line exactly. Quote the "
    "failing command; summarise its long output.",
    "6. All user messages: List every user message verbatim, one per item. Paraphrasing loses the user's intent.",
    "6. All user messages: List every user message verbatim, one per item; summarise any pasted logs in a note.",
])
def test_an_opposite_said_of_something_else_is_not_a_partial_ask(section_line):
    reading = read_prompt("<analysis>\n" + section_line + "\n")
    assert not reading.partial and not reading.opposed, (reading.partial, reading.opposed)


@pytest.mark.parametrize("section_line, name", [
    ("6. All user messages: Quote the first user message verbatim; summarise each later one briefly.",
     "user_messages_verbatim"),
    ("6. All user messages: List each verbatim, but cut any message longer than 15 words.", "user_messages_verbatim"),
    ("9. Optional Next Step: include direct quotes from the most recent conversation. A rough paraphrase of the "
     "request is fine here.", "next_step_quotes"),
])
def test_an_opposite_said_of_the_subject_still_counts(section_line, name):
    reading = read_prompt("<analysis>\n" + section_line + "\n")
    assert name in reading.partial or name in reading.opposed or name in reading.overridden
