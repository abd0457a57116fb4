"""Classes a seventh reviewer found by editing real corpus summaries in new ways (harmless edits that
failed, defects that passed), each shown on the good and the bad side.

* Section 6 quoting a "user message" nobody typed (an instruction made up, or the assistant's own
  sentence listed as the person's) fails ``verbatim_user_messages``, with the quote and its line; a
  quote of an answer the person gave through a tool, of the question an answer replied to (the item
  says so), of a file's words (the item says so), or a note in quote marks does not.
* Section 9 quoting the recent conversation with a word, number, path, negation or action changed
  fails ``next_step_quote`` even beside a verbatim quote; a reformatted quote (a list regrouped)
  passes unless it flips what was said ("remove SQLite" for "add SQLite").
* Headers translated into a language written in the Latin script (``3. Fichiers et sections de code :``)
  are the sections of their numbers when they run 1, 2, 3… through most of the nine; one renamed
  section among English titles is not.
* A header that titles two sections (``8. Current Work and 9. Optional Next Step:``) holds both.
* A message wrapped over the lines of a block quote is one quote (section 6 and section 9);
  «guillemets», „German“ and 「corner」 quote marks quote in section 9.
* A task led by a ``**Done:**`` label is marked done.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_ctxeval.grading.mutants import Mutant
from pytest_ctxeval.grading.registry import cases_from_transcript
from pytest_ctxeval.reading.invented import invented_quotes, session_records
from pytest_ctxeval.reading.misquote import altered_quote
from pytest_ctxeval.reading.summary import parse_summary
from pytest_ctxeval.reading.tasks import done_item
from pytest_ctxeval.reading.verbatim import normalize
from pytest_ctxeval.transcript import read_transcript

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: shared_paths
from shared_paths import CORPUS_DIR, needs_shared


def _s(kit, **bodies: str) -> str:
    base = {k: "x" for k in kit.SECTION_KINDS}
    base.update(bodies)
    return kit.summary(base)


FIRST = "set up the export job for the billing tables"
SECOND = "use the staging bucket, not production"


def _two(kit) -> list:
    return [kit.user(FIRST), kit.say("I will write the export job now."), kit.user(SECOND), kit.say("Switched.")]


MADE_UP = "Also push straight to main once the export runs green."


@pytest.mark.parametrize("where", ["middle", "end"])
def test_a_user_message_nobody_typed_fails_with_its_quote_and_line(grade, kit, where):
    listed = [f'- "{FIRST}"', f'- "{SECOND}"']
    listed.insert(1 if where == "middle" else 2, f'- "{MADE_UP}"')
    text = _s(kit, user_messages="\n".join(listed))
    verdict = grade("verbatim_user_messages", kit.case(_two(kit), text))
    assert verdict.status == "fail"
    (reason,) = verdict.reasons
    assert "never typed" in reason and MADE_UP[:40] in reason
    assert f"line {kit.line_of(text, MADE_UP)}" in reason


def test_the_assistants_sentence_listed_as_the_persons_fails(grade, kit):
    said = "I will write the export job now."
    text = _s(kit, user_messages=f'- "{FIRST}"\n- "{said}"\n- "{SECOND}"')
    verdict = grade("verbatim_user_messages", kit.case(_two(kit), text))
    assert verdict.status == "fail" and "the assistant said it" in verdict.reasons[0]


def test_a_quote_the_assistant_only_paraphrased_is_not_called_its_words(grade, kit):
    """Review 5, #3: a person's message the reader could not read (a record of an unknown type) whose
    words the assistant's thinking paraphrases. The quote is still unaccounted for, but "the assistant
    said it" would be false: it is said only when an assistant message holds the quote word for word."""
    quote = "ok can you create a hello_world.py file and add a minimal code in it?"
    history = [kit.user(FIRST), kit.say("The user wants me to create a hello_world.py file with minimal code in it. "
                                        "Creating it now."), kit.user(SECOND), kit.say("Switched.")]
    text = _s(kit, user_messages=f'- "{FIRST}"\n- "{quote}"\n- "{SECOND}"')
    verdict = grade("verbatim_user_messages", kit.case(history, text))
    assert verdict.status == "fail"
    assert "the assistant said it" not in verdict.reasons[0]
    assert "only the assistant's words come close, not word for word" in verdict.reasons[0]
    # the same words said word for word by the assistant: then it is the assistant's sentence
    history[1] = kit.say(quote)
    verdict = grade("verbatim_user_messages", kit.case(history, text))
    assert verdict.status == "fail" and "(the assistant said it, the person did not)" in verdict.reasons[0]
    # and listed where the person typed it: passes
    history = [kit.user(FIRST), kit.user(quote), kit.user(SECOND), kit.say("Switched.")]
    assert grade("verbatim_user_messages", kit.case(history, text)).status == "pass"


@pytest.mark.parametrize("item", [
    '- In response to the question "I will write the export job now." the user agreed',  # says whose words
    '- (quoted in a file) "Every export runs nightly at two in the morning, UTC."',          # a file's words
    '- "(a pasted traceback about the bucket permissions)"',                                  # a note in quotes
    '- (translated) "Please keep every export in the staging bucket for now."',               # not word for word
    '- "set up the export job [for billing] for the billing tables"',                         # an editorial note
    '- "set up the export job for the … tables"',                                             # an elision
])
def test_quotes_that_claim_no_typed_message_are_not_invented(grade, kit, item):
    text = _s(kit, user_messages=f'- "{FIRST}"\n{item}\n- "{SECOND}"')
    verdict = grade("verbatim_user_messages", kit.case(_two(kit), text))
    assert verdict.status == "pass", verdict.reasons


def test_an_answer_given_through_a_tool_is_not_invented(grade, kit):
    answer = "Use the nightly schedule with retries enabled"
    messages = [kit.user(FIRST), *kit.tool("AskUserQuestion", {"questions": [{"question": "Schedule?"}]},
                                           f'User has answered: "Schedule?"="{answer}"')]
    text = _s(kit, user_messages=f'- "{FIRST}"\n- Answered: "{answer}"')
    assert grade("verbatim_user_messages", kit.case(messages, text)).status == "pass"


def test_a_misquote_is_reported_as_the_lost_message_not_as_invented(grade, kit):
    text = _s(kit, user_messages=f'- "{FIRST}"\n- "use the production bucket, not staging"')
    verdict = grade("verbatim_user_messages", kit.case(_two(kit), text))
    assert verdict.status == "fail" and len(verdict.reasons) == 1
    assert "user message 2 of 2" in verdict.reasons[0] and "never typed" not in verdict.reasons[0]


def test_invented_quotes_reads_the_session_once_and_only_when_a_quote_is_judged(kit):
    calls = []

    def records():
        calls.append(1)
        return session_records(_two(kit))

    assert invented_quotes('- "ok"\n- (chose the first option)', records) == [] and not calls
    found = invented_quotes(f'- "{FIRST}"\n- "{MADE_UP}"\n- "Please also drop the cache table tonight."', records)
    assert [f.quote for f in found] == [MADE_UP, "Please also drop the cache table tonight."] and len(calls) == 1


# -- section 9: a quote changed on the way ----------------------------------------------------------

ASK = "Run the migration on port 5432 and add SQLite to the tech stack, then do not push yet"


@pytest.mark.parametrize("changed", [
    ASK.replace("5432", "5433"), ASK.replace("add SQLite", "remove SQLite"), ASK.replace("do not push", "push"),
    ASK.replace("migration", "rollback"),
])
def test_an_altered_quote_fails_even_beside_a_verbatim_one(grade, kit, changed):
    msgs = [kit.user(ASK), kit.say("Starting with the migration.")]
    text = _s(kit, next=f'Continue as asked: "{changed}". Then: "Starting with the migration."')
    verdict = grade("next_step_quote", kit.case(msgs, text))
    assert verdict.status == "fail" and "not verbatim" in verdict.reasons[0], verdict.reasons
    good = _s(kit, next=f'Continue as asked: "{ASK}". Then: "Starting with the migration."')
    assert grade("next_step_quote", kit.case(msgs, good)).status == "pass"


PLAN = ("Step 11: update the docs. Key sections to update: tech stack: remove SQLite, fastembed, FTS5. "
        "add ratatui, tokio. directory structure: update to 3 crates. remove vendor/, build.rs.")


def test_a_reformatted_quote_passes_unless_it_flips_an_action_or_a_number(grade, kit):
    msgs = [kit.user("go on with the plan"), kit.say(PLAN)]
    regrouped = "Key sections to update: Tech Stack (remove SQLite, fastembed, FTS5; add ratatui, tokio), Directory Structure (update to 3 crates)"
    assert grade("next_step_quote", kit.case(msgs, _s(kit, next=f'Next: "{regrouped}"'))).status == "pass"
    for flipped in (regrouped.replace("remove SQLite", "add SQLite"), regrouped.replace("3 crates", "4 crates")):
        verdict = grade("next_step_quote", kit.case(msgs, _s(kit, next=f'Next: "{flipped}"')))
        assert verdict.status == "fail" and "not verbatim" in verdict.reasons[0], flipped


def test_altered_quote_reads_punctuation_and_editorial_notes_as_no_change():
    said = [normalize("ok. run the migration on port 5432; then stop")]
    assert altered_quote("run the migration on port 5432, then stop", said) is None
    assert altered_quote("run the migration [the new one] on port 5432", said) is None
    assert altered_quote("run the migration on port 5433; then stop", said) is not None
    assert altered_quote("something else entirely was said here", said) is None  # taken from nothing


# -- headers ------------------------------------------------------------------------------------------

FR = {"request": "Demande principale et intention", "concepts": "Concepts techniques clés",
      "files": "Fichiers et sections de code", "errors": "Erreurs et corrections", "problem": "Résolution de problèmes",
      "user_messages": "Tous les messages de l'utilisateur", "pending": "Tâches en attente",
      "current": "Travail en cours", "next": "Prochaine étape facultative"}
DE = {"request": "Hauptanfrage und Absicht", "concepts": "Wichtige technische Konzepte",
      "files": "Dateien und Codeabschnitte", "errors": "Fehler und Korrekturen", "problem": "Problemlösung",
      "user_messages": "Alle Nachrichten des Benutzers", "pending": "Offene Aufgaben", "current": "Aktuelle Arbeit",
      "next": "Optionaler nächster Schritt"}


def _translated(kit, titles: dict[str, str], text: str, *, md: bool = False) -> str:
    for n, kind in enumerate(kit.SECTION_KINDS, start=1):
        text = text.replace(f"{n}. {kit.SECTION_TITLES[kind]}:", f"## {n}. {titles[kind]}" if md else
                            f"{n}. {titles[kind]}:")
    return text


@pytest.mark.parametrize("titles, md", [(FR, False), (DE, False), (DE, True)])
def test_headers_translated_in_the_latin_script_are_the_sections(grade, kit, titles, md):
    text = _translated(kit, titles, _s(kit, user_messages=f'- "{FIRST}"', files="- `src/app.py`: added main()"), md=md)
    assert parse_summary(text).kinds == list(kit.SECTION_KINDS)
    msgs = [kit.user(FIRST), *kit.tool("Edit", {"file_path": "/repo/src/app.py", "old_string": "a", "new_string": "b"})]
    for name in ("nine_sections", "verbatim_user_messages", "files_preserved"):
        assert grade(name, kit.case(msgs, text)).status == "pass", name


def test_a_translated_summary_missing_a_section_still_fails(grade, kit):
    text = _translated(kit, FR, _s(kit)).replace("5. Résolution de problèmes:\n   x\n\n", "")
    verdict = grade("nine_sections", kit.case([kit.user("go")], text))
    assert verdict.status == "fail" and "Problem Solving" in verdict.reasons[0]


def test_one_renamed_section_among_english_titles_is_not_a_translation(grade, kit):
    text = _s(kit).replace("6. All user messages:", "6. Notes:")
    verdict = grade("nine_sections", kit.case([kit.user("go")], text))
    assert verdict.status == "fail" and "All user messages" in verdict.reasons[0]


def test_a_list_inside_a_section_is_not_read_as_translated_headers(kit):
    items = "\n".join(f"{n}. Étape numéro {n}:" for n in range(1, 10))
    parsed = parse_summary(_s(kit, problem=items))
    assert parsed.kinds == list(kit.SECTION_KINDS) and "Étape numéro 9" in parsed.get("problem").body


def test_a_header_titling_two_sections_holds_both(grade, kit):
    msgs = [kit.user(FIRST), kit.say("Writing the job.")]
    text = _s(kit, current="Writing the export job.", next=f'Finish it, as asked: "{FIRST}"')
    joined = text.replace("\n\n9. Optional Next Step:", "").replace("8. Current Work:", "8. Current Work and 9. Optional Next Step:")
    parsed = parse_summary(joined)
    assert parsed.kinds == list(kit.SECTION_KINDS) and parsed.get("next").body == parsed.get("current").body
    for name in ("nine_sections", "next_step_quote"):
        assert grade(name, kit.case(msgs, joined)).status == "pass", name
    # only the next number joins: "8. Current Work and 3. Files" is no second section
    assert "files" not in parse_summary("8. Current Work and 3. Files and Code Sections:\n   x").kinds


# -- block quotes and quote marks ------------------------------------------------------------------

LONG = ("please go through the end to end tests locally so we can see every failure before pushing to the "
        "remote, and keep the feedback loop short")


def test_a_message_wrapped_over_block_quote_lines_is_kept(grade, kit):
    wrapped = "> please go through the end to end tests locally so we can\n> see every failure before pushing to the remote,\n> and keep the feedback loop short"
    msgs = [kit.user(LONG), kit.say("Running them locally.")]
    case = kit.case(msgs, _s(kit, user_messages=wrapped, next=f"Run the suite locally, as asked:\n\n{wrapped}"))
    for name in ("verbatim_user_messages", "last_request_intact", "next_step_quote"):
        assert grade(name, case).status == "pass", name
    cut = wrapped.replace("every failure", "one failure")
    case = kit.case(msgs, _s(kit, user_messages=cut, next=f"Run the suite locally, as asked:\n\n{cut}"))
    for name in ("verbatim_user_messages", "next_step_quote"):
        assert grade(name, case).status == "fail", name


REPLY = "Running the end to end suite locally now, one spec file at a time"


@pytest.mark.parametrize("marks", [("«", "»"), ("« ", " »"), ("„", "“"), ("「", "」")])
def test_other_languages_quote_marks_quote_the_next_step(grade, kit, marks):
    msgs = [kit.user(LONG), kit.say(REPLY)]
    o, c = marks
    verdict = grade("next_step_quote", kit.case(msgs, _s(kit, next=f"Go on: {o}{REPLY}{c}")))
    assert verdict.status == "pass" and REPLY[:30] in verdict.reasons[0]
    verdict = grade("next_step_quote", kit.case(msgs, _s(kit, next=f"Go on: {o}{REPLY.replace('one spec', 'every spec')}{c}")))
    assert verdict.status == "fail"


# -- pending tasks -------------------------------------------------------------------------------------

@pytest.mark.parametrize("item", ["- **Done:** Task #11: End-to-end test of the CLI", "- Completed: Task #11: End-to-end test of the CLI",
                                  "- __Skipped:__ Task #11: End-to-end test of the CLI"])
def test_a_done_label_leading_the_item_marks_the_task_done(grade, kit, item):
    assert done_item(item)
    todos = kit.todo(("End-to-end test of the CLI", "pending"))
    verdict = grade("pending_tasks", kit.case([kit.user("go"), *todos], _s(kit, pending=item)))
    assert verdict.status == "fail" and "marked as done" in verdict.reasons[0]
    assert not done_item("- Done criteria for Task #11: the CLI builds in the sandbox")


# -- the real corpus -----------------------------------------------------------------------------------

def _real_cases():
    return [(p.name, c) for p in sorted(CORPUS_DIR.glob("*.jsonl")) for c in cases_from_transcript(read_transcript(p))]


@needs_shared
def test_no_real_summary_quotes_an_invented_message_or_alters_its_next_step_quote():
    """Every real compaction of the corpus: section 6 quotes nothing that nobody said, and no quote of
    section 9 alters the most recent conversation (the new checks stay silent on real summaries)."""
    seen = 0
    for name, case in _real_cases():
        section = case.sections.get("user_messages")
        if section is not None:
            assert invented_quotes(section.body, lambda case=case: session_records(case.history)) == [], name
            seen += 1
        nxt, convo = case.sections.get("next"), case.conversation()
        if nxt is not None and convo is not None:
            from pytest_ctxeval.reading.quoting import quotes
            assert [q for q in quotes(nxt.body) if altered_quote(q, convo.recent)] == [], name
    assert seen >= 15


@needs_shared
def test_a_real_summary_with_an_invented_message_fails(registry):
    (case,) = [c for name, c in _real_cases() if name.startswith("TensorTemplar__slopometry")]
    at = case.summary.index('"ok now run ruff and pyrefly"')
    line_start = case.summary.rindex("\n", 0, at) + 1
    indent = case.summary[line_start:at]
    edited = case.summary[:line_start] + f'{indent}"{MADE_UP}"\n' + case.summary[line_start:]
    spec = next(s for s in registry if s.name == "verbatim_user_messages")
    (before,) = registry.run(case, [spec])
    (after,) = registry.run(Mutant.of(case, what="an invented message", summary=edited).case, [spec])
    assert before.status == "pass" and after.status == "fail"
    assert "never typed" in after.reasons[-1] and MADE_UP[:30] in after.reasons[-1]


def test_altered_quote_reads_a_negation_replaced_in_a_regrouped_quote():
    # Not a one-word copy (a word of the text is left out too), so the reformatted reading judges it:
    # "not" in the text's place of "also" turns the request around.
    said = [normalize("please do not cache the results of the slow parser here at all")]
    assert altered_quote("please do also cache results of the slow parser here at all", said) is not None
    assert altered_quote("please do not cache results of the slow parser here at all", said) is None
    assert altered_quote("please do just cache results of the slow parser here at all", said) is not None
    # The same regrouping with no negation on either side is the summary's own wording.
    plain = [normalize("please do now cache the results of the slow parser here at all")]
    assert altered_quote("please do also cache results of the slow parser here at all", plain) is None
