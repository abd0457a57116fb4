"""The fidelity rule graders: verbatim_user_messages (graders/all_messages.py), next_step_quote
(graders/cited_next_step.py), files_preserved and errors_preserved (graders/files_and_errors.py),
pending_tasks and no_superseded_work (graders/future_work.py)."""

from __future__ import annotations

import random
import re

import pytest

from pytest_ctxeval.reading.extract import LONG_MESSAGE_CHARS, LONG_MESSAGE_KEEP, message_fragments
from pytest_ctxeval.core.messages import TextBlock, ToolResultBlock

FIDELITY = ("verbatim_user_messages", "next_step_quote", "files_preserved", "errors_preserved",
            "pending_tasks", "no_superseded_work")


@pytest.mark.parametrize("name", FIDELITY)
def test_passes_a_good_summary(grade, good_case, name):
    verdict = grade(name, good_case)
    assert verdict.status == "pass", verdict.reasons
    assert verdict.score == 1.0


@pytest.mark.parametrize("name, section", [
    ("verbatim_user_messages", "section 6 'All user messages' is missing"),
    ("next_step_quote", "section 9 'Optional Next Step' is missing"),
    ("files_preserved", "section 3 'Files and Code Sections' is missing"),
    ("errors_preserved", "section 4 'Errors and fixes' is missing"),
    ("pending_tasks", "section 7 'Pending Tasks' is missing"),
])
def test_a_missing_section_fails_naming_it(grade, kit, session, name, section):
    kind = {"verbatim_user_messages": "user_messages", "next_step_quote": "next", "files_preserved": "files",
            "errors_preserved": "errors", "pending_tasks": "pending"}[name]
    verdict = grade(name, kit.case(session.messages, kit.summary(session.bodies, omit=[kind])))
    assert verdict.status == "fail"
    assert verdict.score < 1
    (reason,) = verdict.reasons
    assert reason.startswith(section)
    assert "sections found: request, concepts" in reason


# ---------------------------------------------------------------------------------------------
# verbatim_user_messages


def _s6(kit, *items: str) -> str:
    return kit.section("user_messages", "\n".join(f'- "{i}"' for i in items))


def test_verbatim_matches_after_whitespace_normalisation(grade, kit):
    messy = "Refactor   src/auth/session.py\n\n   to use opaque\ttokens  "
    verdict = grade("verbatim_user_messages",
                    kit.case([kit.user(messy)], _s6(kit, "Refactor src/auth/session.py to use opaque tokens")))
    assert verdict.status == "pass", verdict.reasons


def test_verbatim_matches_a_message_wrapped_over_indented_lines_in_the_summary(grade, kit):
    message = "Rename the table to revoked_tokens\nand keep the old name as a view"
    section = kit.section("user_messages",
                          '- "Rename the table to   revoked_tokens\n     and keep the old name\n     as a view"')
    verdict = grade("verbatim_user_messages", kit.case([kit.user(message)], section))
    assert verdict.status == "pass", verdict.reasons


def test_verbatim_one_changed_word_fails_with_the_closest_item(grade, kit):
    first, second = "Refactor src/auth/session.py to use opaque tokens", "Then rerun the whole test suite please"
    text = "1. Primary Request and Intent:\n   refactor\n\n" + _s6(kit, first, "Then rerun the entire test suite please")
    verdict = grade("verbatim_user_messages", kit.case([kit.user(first), kit.say("ok"), kit.user(second)], text))
    assert verdict.status == "fail"
    assert verdict.score == 0.5
    (reason,) = verdict.reasons
    line = kit.line_of(text, "6. All user messages:")
    assert f"user message 2 of 2 is not verbatim in section 6 (line {line})" in reason
    assert f'"{second}"' in reason
    match = re.search(r"closest item \((\d+)% similar\): \"([^\"]+)\"", reason)
    assert match, reason
    assert 50 <= int(match.group(1)) < 100
    assert match.group(2) == "Then rerun the entire test suite please"
    assert verdict.evidence["missing"] == [second]


def test_verbatim_without_any_near_item_gives_no_closest(grade, kit):
    verdict = grade("verbatim_user_messages",
                    kit.case([kit.user("Deploy the billing service to staging")], _s6(kit, "zzz qqq")))
    assert verdict.status == "fail"
    assert "Deploy the billing service to staging" in verdict.reasons[0]
    assert "closest item" not in verdict.reasons[0]


def _long_message() -> str:
    r = random.Random(7)
    words = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma".split()
    text = " ".join(f"{r.choice(words)}{i}" for i in range(700))
    assert len(text) > LONG_MESSAGE_CHARS
    return "Here is the full log:\n" + text + "\nPlease find the root cause."


def test_verbatim_long_message_passes_with_head_and_tail_only(grade, kit):
    long = _long_message()
    head, tail = message_fragments(long)
    assert len(head) <= LONG_MESSAGE_KEEP and len(tail) <= LONG_MESSAGE_KEEP
    verdict = grade("verbatim_user_messages", kit.case([kit.user(long)], _s6(kit, f"{head} […] {tail}")))
    assert verdict.status == "pass", verdict.reasons
    assert head + " " + tail not in long  # the middle really is left out


def test_verbatim_long_message_without_its_tail_fails(grade, kit):
    long = _long_message()
    head, _tail = message_fragments(long)
    verdict = grade("verbatim_user_messages", kit.case([kit.user(long)], _s6(kit, f"{head} […]")))
    assert verdict.status == "fail"
    assert "user message 1 of 1" in verdict.reasons[0]
    assert "Here is the full log:" in verdict.reasons[0]


def test_verbatim_long_message_reason_says_the_tail_is_missing(grade, kit):
    long = _long_message()
    head, tail = message_fragments(long)
    verdict = grade("verbatim_user_messages", kit.case([kit.user(long)], _s6(kit, f"{head} […]")))
    reason = verdict.reasons[0]
    assert "100% similar" not in reason
    assert "none of its last 300 are" in reason


def test_verbatim_requires_messages_from_earlier_compactions(grade, kit):
    old = "Keep the public API of the auth package unchanged"
    new = "Now add the revocation table migration"
    before = [kit.user(old), kit.say("Noted.")]
    after = [kit.summary_msg(kit.continuation(_s6(kit, old))), kit.user(new), kit.say("Writing it.")]
    history = before + [kit.boundary()] + after
    # Only the span after the first compaction is summarised this time, and only it is quoted.
    verdict = grade("verbatim_user_messages", kit.case(after, _s6(kit, new), history=history))
    assert verdict.status == "fail"
    assert verdict.score == 0.5
    (reason,) = verdict.reasons
    assert reason.startswith("user message 1 of 2")
    assert old in reason
    # Carried forward, it passes; the earlier summary message itself is not a person message.
    verdict = grade("verbatim_user_messages", kit.case(after, _s6(kit, old, new), history=history))
    assert verdict.status == "pass", verdict.reasons
    assert "all 2 person-typed messages" in verdict.reasons[0]


def test_verbatim_ignores_meta_command_echo_and_tool_results(grade, kit):
    typed = "Please make the tests pass"
    use = kit.call("Bash", {"command": "pytest"})
    messages = [
        kit.meta("Caveat: the messages below were generated by the user while running local commands."),
        kit.user("<command-name>/model</command-name>\n<command-message>model</command-message>"),
        kit.user("<local-command-stdout>Set model to opus</local-command-stdout>"),
        kit.user("<system-reminder>The user opened src/a.py in the IDE.</system-reminder>"),
        kit.user(typed),
        use, kit.answer(use, "3 failed, 10 passed"),
        kit.user("[Request interrupted by user for tool use]"),
        kit.user([ToolResultBlock(tool_use_id="toolu_x", content="tool output"), TextBlock(text="  ")]),
    ]
    verdict = grade("verbatim_user_messages", kit.case(messages, _s6(kit, typed)))
    assert verdict.status == "pass", verdict.reasons
    [reason] = verdict.reasons
    assert reason.startswith("the 1 person-typed message verbatim in section 6 ")


def test_verbatim_is_na_without_person_messages(grade, kit):
    use = kit.call("Read", {"file_path": "a.py"})
    messages = [kit.meta("<system-reminder>context</system-reminder>"), use, kit.answer(use)]
    verdict = grade("verbatim_user_messages", kit.case(messages, "no sections at all"))
    assert verdict.status == "n/a"
    assert "no person-typed messages" in verdict.reasons[0]


# ---------------------------------------------------------------------------------------------
# next_step_quote


def _s9(kit, body: str) -> str:
    return kit.section("next", body)


def test_next_step_quote_of_the_most_recent_request_passes(grade, kit, session):
    verdict = grade("next_step_quote", kit.case(session.messages, _s9(kit, f'Do as asked: "{session.last}"')))
    assert verdict.status == "pass"
    assert session.last in verdict.reasons[0]


def test_next_step_quote_of_an_older_message_is_drift(grade, kit, session):
    text = "1. Primary Request and Intent:\n   x\n\n" + _s9(kit, f'Continue the refactor: "{session.first}"')
    verdict = grade("next_step_quote", kit.case(session.messages, text))
    assert verdict.status == "fail"
    assert verdict.score < 1
    (reason,) = verdict.reasons
    assert f"section 9 (line {kit.line_of(text, '9. Optional Next Step')})" in reason
    assert "quotes an older message" in reason and "drift" in reason
    assert session.last in reason  # names what it should have quoted


def test_next_step_quote_of_consecutive_messages_counts_as_the_most_recent(grade, kit, session):
    # Two messages in a row (e.g. typed after an interrupt): the API merges them into one request.
    first, second = "stop, rename the loader module to claims.py first", "and keep the old name as an alias"
    messages = [*session.messages, kit.user(first), kit.user(second)]
    for quote in (first, second, f"{first} {second}"):
        verdict = grade("next_step_quote", kit.case(messages, _s9(kit, f'Do as asked: "{quote}"')))
        assert verdict.status == "pass", (quote, verdict.reasons)
    # the request before them was answered by the assistant: not part of that run
    older = grade("next_step_quote", kit.case(messages, _s9(kit, f'Continue: "{session.last}"')))
    assert older.status == "fail" and "quotes an older message" in older.reasons[0], older.reasons


def test_next_step_proposing_a_step_without_a_quote_fails(grade, kit, session):
    verdict = grade("next_step_quote", kit.case(session.messages, _s9(kit, "Fix the loader and rerun the tests.")))
    assert verdict.status == "fail"
    (reason,) = verdict.reasons
    assert "proposes a step but quotes nothing" in reason
    assert session.last in reason
    assert verdict.evidence["expected"] == session.last


def test_next_step_quote_matching_nothing_fails(grade, kit, session):
    verdict = grade("next_step_quote",
                    kit.case(session.messages, _s9(kit, 'The user said: "migrate everything to Redis streams"')))
    assert verdict.status == "fail"
    (reason,) = verdict.reasons
    assert '"migrate everything to Redis streams", which is not verbatim in the most recent conversation' in reason
    assert session.last in reason


@pytest.mark.parametrize("body", ["None.", "No next step required.", "N/A", "Nothing further: the task is done.",
                                  "No further steps; the user's request is complete."])
def test_next_step_none_is_na(grade, kit, session, body):
    verdict = grade("next_step_quote", kit.case(session.messages, _s9(kit, body)))
    assert verdict.status == "n/a"
    assert "proposes no step" in verdict.reasons[0]


#: Section 9s that open by saying there is no step and then say nothing to do (the corpus's wordings:
#: M-Claude 2.0.60, fasthooks 2.0.76, monodreams 2.1.177 with its offer quoted and "I should wait").
_NOTHING_AFTER_NO_STEP = [
    "No explicit next step requested. The user's last request (\"check service status\") has been completed. "
    "The router SSH session details are:\n- **Router IP**: 10.0.0.1\n- **Router OS**: OpenWrt 23.05.",
    "No next step required unless explicitly requested by the user. The conversation has been demonstrating tool "
    "capabilities. No active development tasks are pending.",
    "No next step should be started without user confirmation — the requested task is complete and verified. "
    "From my final message: \"Say the word and I'll add it.\" I should wait for the user to respond before "
    "implementing the auto-flip feature or any other change.",
    "No explicit next step requested. The natural next step is the loader docs if the user wants to continue.",
]


@pytest.mark.parametrize("body", _NOTHING_AFTER_NO_STEP)
def test_next_step_saying_no_step_and_proposing_none_is_na(grade, kit, session, body):
    verdict = grade("next_step_quote", kit.case(session.messages, _s9(kit, body)))
    assert verdict.status == "n/a", verdict.reasons
    assert "proposes no step" in verdict.reasons[0]


@pytest.mark.parametrize("step", [
    "Next, I will reboot the router and reinstall dockerd to make sure the service comes up cleanly.",
    "I will now delete hello_world.py, number_generator.py and data.txt to clean up the workspace.",
    "Fix the 3 clippy errors in `crates/lib/src/ingest.rs`:\n   - Move the doc comment above `run_ingest`",
    "The next step is to migrate all sessions to Redis.",
])
def test_next_step_a_no_step_sentence_does_not_hide_the_step_after_it(grade, kit, session, step):
    # M3 of the review: "No explicit next step requested." first made the grader n/a whatever followed.
    body = f"No explicit next step was requested by the user. {step}"
    verdict = grade("next_step_quote", kit.case(session.messages, _s9(kit, body)))
    assert verdict.status == "fail", verdict.reasons
    assert "proposes a step but quotes nothing" in verdict.reasons[0]
    quoted = grade("next_step_quote", kit.case(session.messages, _s9(kit, f'{body} As asked: "{session.last}"')))
    assert quoted.status == "pass", quoted.reasons


def test_next_step_empty_section_is_na(grade, kit, session):
    verdict = grade("next_step_quote", kit.case(session.messages, "9. Optional Next Step:\n"))
    assert verdict.status == "n/a"


def test_next_step_is_na_without_a_person_message(grade, kit):
    use = kit.call("Read", {"file_path": "a.py"})
    verdict = grade("next_step_quote", kit.case([use, kit.answer(use)], _s9(kit, 'Keep going: "read the file a.py"')))
    assert verdict.status == "n/a"


def test_next_step_elided_long_quote_passes(grade, kit, session):
    long = _long_message()
    messages = session.messages + [kit.user(long)]
    head, tail = message_fragments(long)
    verdict = grade("next_step_quote", kit.case(messages, _s9(kit, f'Find the root cause: "{head} […] {tail}"')))
    assert verdict.status == "pass", verdict.reasons


def test_next_step_quote_keeping_a_media_marker_is_verbatim(grade, kit, session):
    """The summariser is shown [image] / [document] where the person pasted one
    (stripImagesFromMessages): a quote that keeps the marker still quotes the message."""
    from pytest_ctxeval.core.messages import ImageBlock, TextBlock

    pasted = kit.user([TextBlock(text="Staging now shows this, is that expected?"),
                       ImageBlock(source={"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="})])
    messages = session.messages + [pasted]
    verdict = grade("next_step_quote", kit.case(messages, _s9(kit, 'Answer: "Staging now shows this, is that '
                                                                  'expected? [image]"')))
    assert verdict.status == "pass", verdict.reasons
    wrong = grade("next_step_quote", kit.case(messages, _s9(kit, 'Answer: "Staging now shows this [image] and '
                                                                 'deploy it to production"')))
    assert wrong.status == "fail"


def test_next_step_elision_does_not_hide_a_wrong_part(grade, kit, session):
    long = _long_message()
    head, _ = message_fragments(long)
    messages = session.messages + [kit.user(long)]
    verdict = grade("next_step_quote",
                    kit.case(messages, _s9(kit, f'Find it: "{head} […] and then deploy to production right away"')))
    assert verdict.status == "fail"


def test_next_step_accepts_curly_quotes(grade, kit, session):
    verdict = grade("next_step_quote", kit.case(session.messages, _s9(kit, f"As asked: “{session.last}”")))
    assert verdict.status == "pass", verdict.reasons


def test_next_step_accepts_a_block_quote(grade, kit, session):
    verdict = grade("next_step_quote", kit.case(session.messages, _s9(kit, f"Fix the loader.\n> {session.last}")))
    assert verdict.status == "pass", verdict.reasons


def test_next_step_quote_of_the_assistants_latest_text_passes(grade, kit, session):
    quote = "to see where user_id is read from the old claims"
    assert quote in session.last_assistant and quote not in session.last
    verdict = grade("next_step_quote", kit.case(session.messages, _s9(kit, f'I was "{quote}".')))
    assert verdict.status == "pass", verdict.reasons


def test_next_step_quote_of_assistant_text_before_the_last_request_does_not_count(grade, kit, session):
    quote = "Reading the auth module first"   # said before the last person message
    verdict = grade("next_step_quote", kit.case(session.messages, _s9(kit, f'I was "{quote}".')))
    assert verdict.status == "fail"


def test_next_step_quote_of_a_short_latest_request_passes(grade, kit, session):
    messages = session.messages + [kit.user("go on")]
    verdict = grade("next_step_quote",
                    kit.case(messages, _s9(kit, 'Continue with the most recent request, quoted verbatim: "go on"')))
    assert verdict.status == "pass", verdict.reasons


@pytest.mark.parametrize("body", ["Navigate to src/auth/loader.py and fix load().",
                                  "Nonetheless, migrate all sessions to Redis.",
                                  "Name the new column revoked_at and add the migration."])
def test_next_step_starting_with_na_or_none_is_still_a_step(grade, kit, session, body):
    verdict = grade("next_step_quote", kit.case(session.messages, _s9(kit, body)))
    assert verdict.status == "fail", verdict.reasons


# ---------------------------------------------------------------------------------------------
# files_preserved


def _s3(kit, body: str) -> str:
    return kit.section("files", body)


@pytest.mark.parametrize("mention", ["/repo/src/auth/session.py", "auth/session.py", "session.py"],
                         ids=["full-path", "two-component-suffix", "unambiguous-basename"])
def test_files_named_by_path_suffix_or_unique_basename_pass(grade, kit, mention):
    messages = [kit.user("go"), *kit.tool("Edit", {"file_path": "/repo/src/auth/session.py"})]
    verdict = grade("files_preserved", kit.case(messages, _s3(kit, f"- {mention} — edited")))
    assert verdict.status == "pass", verdict.reasons


def test_files_ambiguous_basename_fails(grade, kit):
    messages = [kit.user("go"), *kit.tool("Edit", {"file_path": "/repo/src/auth/session.py"}),
                *kit.tool("Write", {"file_path": "/repo/tests/session.py"})]
    text = "1. Primary Request and Intent:\n   x\n\n" + _s3(kit, "- session.py — edited and its test written")
    verdict = grade("files_preserved", kit.case(messages, text))
    assert verdict.status == "fail"
    assert verdict.score == 0.0
    line = kit.line_of(text, "3. Files and Code Sections")
    assert verdict.reasons == [
        f"/repo/src/auth/session.py was changed but is not named in section 3 'Files and Code Sections' (line {line}) "
        "nor anywhere else in the summary (the summary says only 'session.py', the name of 2 changed files)",
        f"/repo/tests/session.py was changed but is not named in section 3 'Files and Code Sections' (line {line}) "
        "nor anywhere else in the summary (the summary says only 'session.py', the name of 2 changed files)",
    ]


def test_files_one_of_two_missing_scores_half(grade, kit, session):
    bodies = {**session.bodies, "files": "- src/auth/session.py — edited"}
    verdict = grade("files_preserved", kit.case(session.messages, kit.summary(bodies)))
    assert verdict.status == "fail"
    assert verdict.score == 0.5
    (reason,) = verdict.reasons
    assert reason.startswith("src/auth/tokens.py was changed")
    assert verdict.evidence["missing"] == ["src/auth/tokens.py"]


def test_files_read_only_files_are_not_required(grade, kit):
    messages = [kit.user("go"), *kit.tool("Read", {"file_path": "README.md"}),
                *kit.tool("Edit", {"file_path": "src/app.py"})]
    verdict = grade("files_preserved", kit.case(messages, _s3(kit, "- src/app.py — edited")))
    assert verdict.status == "pass"
    [reason] = verdict.reasons
    assert reason.startswith("the 1 changed file named in section 3 ")


def test_files_is_na_without_edits_or_expectations(grade, kit):
    messages = [kit.user("go"), *kit.tool("Read", {"file_path": "README.md"}),
                *kit.tool("Grep", {"pattern": "TODO", "path": "src"})]
    verdict = grade("files_preserved", kit.case(messages, "no sections"))
    assert verdict.status == "n/a"
    assert "no project file was changed" in verdict.reasons[0]


def test_files_expected_files_are_required(grade, kit):
    messages = [kit.user("Follow docs/design.md for the token format"), *kit.tool("Read", {"file_path": "docs/design.md"})]
    verdict = grade("files_preserved", kit.case(messages, _s3(kit, "- README.md — read"),
                                                expect={"files": ["docs/design.md"]}))
    assert verdict.status == "fail"
    (reason,) = verdict.reasons
    assert reason.startswith("docs/design.md was expected but is not named in section 3")
    verdict = grade("files_preserved", kit.case(messages, _s3(kit, "- docs/design.md — the token format"),
                                                expect={"files": ["docs/design.md"]}))
    assert verdict.status == "pass"


# ---------------------------------------------------------------------------------------------
# errors_preserved


def _failing(kit, result: str, tool: str = "Bash") -> list:
    return [kit.user("run the tests"), *kit.tool(tool, {"command": "pytest"}, result, is_error=True)]


def _s4(kit, body: str) -> str:
    return kit.section("errors", body)


def test_errors_key_line_verbatim_passes(grade, kit, session):
    messages = _failing(kit, "Exit code 1\nTraceback (most recent call last):\n  File \"a.py\", line 3\n"
                             + session.key_error)
    verdict = grade("errors_preserved",
                    kit.case(messages, _s4(kit, f"- The test run failed with {session.key_error}; fixed in load()")))
    assert verdict.status == "pass", verdict.reasons
    [reason] = verdict.reasons
    assert reason.startswith("the 1 error line in section 4 ")


OPERATIONAL = "sqlalchemy.exc.OperationalError: no such table: sessions revoked tokens"


def test_errors_eighty_percent_token_overlap_passes(grade, kit):
    # 5 of the 6 significant tokens of the key line, reordered and re-punctuated
    body = "- OperationalError from sqlalchemy.exc: no such table 'sessions' (revoked tokens)"
    verdict = grade("errors_preserved", kit.case(_failing(kit, OPERATIONAL), _s4(kit, body)))
    assert verdict.status == "pass", verdict.reasons


def test_errors_below_the_overlap_threshold_fails(grade, kit):
    body = "- sqlalchemy.exc.OperationalError: a table is missing"
    verdict = grade("errors_preserved", kit.case(_failing(kit, OPERATIONAL), _s4(kit, body)))
    assert verdict.status == "fail"


def test_errors_absent_fails_quoting_the_key_line(grade, kit):
    text = "1. Primary Request and Intent:\n   x\n\n" + _s4(kit, "- The database was broken; fixed it.")
    result = "Exit code 1\nalembic.util.exc.CommandError: Can't locate revision identified by 'ae1027a6acf'"
    verdict = grade("errors_preserved", kit.case(_failing(kit, result), text))
    assert verdict.status == "fail"
    assert verdict.score == 0.0
    (reason,) = verdict.reasons
    line = kit.line_of(text, "4. Errors and fixes")
    assert reason == (f"error line from a failing Bash result of `pytest` is not in section 4 'Errors and fixes' "
                      f"(line {line}): "
                      f"\"alembic.util.exc.CommandError: Can't locate revision identified by 'ae1027a6acf'\"")


def test_errors_absent_names_the_failing_call_to_find_it_by(grade, kit):
    # the reason says which call failed (its command, or the file a tool was given), so a reader can
    # find it in a long transcript; a multi-line command is shortened to one line, its leading `cd` left out
    messages = [kit.user("deploy it"),
                *kit.tool("Bash", {"command": "cd web &&\n  bun run test --filter checkout"},
                          "Exit code 1\nTypeError: cart.total is not a function", is_error=True),
                *kit.tool("Read", {"file_path": "src/app/config.ts"}, "EACCES: permission denied, open 'src/app/config.ts'",
                          is_error=True)]
    verdict = grade("errors_preserved", kit.case(messages, _s4(kit, "- None.")))
    assert verdict.status == "fail"
    assert [r.split(" is not in ")[0] for r in verdict.reasons] == [
        "error line from a failing Bash result of `bun run test --filter checkout`",
        "error line from a failing Read result of `src/app/config.ts`"]
    kept = _s4(kit, "- TypeError: cart.total is not a function: total is a getter; fixed the call.\n"
                    "- EACCES: permission denied, open 'src/app/config.ts': ran chmod, then read it.")
    assert grade("errors_preserved", kit.case(messages, kept)).status == "pass"


def test_errors_expected_lines_are_required(grade, kit):
    messages = [kit.user("why did the worker die?"),
                *kit.tool("Bash", {"command": "kubectl logs worker"},
                          "2026-01-05T09:00:01Z INFO start\n2026-01-05T09:00:02Z ERROR [worker] OOMKilled")]
    verdict = grade("errors_preserved", kit.case(messages, _s4(kit, "- None."), expect={"errors": ["OOMKilled"]}))
    assert verdict.status == "fail"
    (reason,) = verdict.reasons
    assert reason.startswith("error line from a failing expect.errors is not in section 4")
    assert '"OOMKilled"' in reason
    verdict = grade("errors_preserved", kit.case(messages, _s4(kit, "- The worker was OOMKilled."),
                                                 expect={"errors": ["OOMKilled"]}))
    assert verdict.status == "pass"


E0425 = "error[E0425]: cannot find type `RawEntry` in this scope"


@pytest.mark.parametrize("section5, status", [
    # a mention of the name the error holds, in an item about something else: the error is gone
    ("- RawEntry can derive Default, so the builder is simpler.", "fail"),
    # nor a mention of its code, or an item that says there was no error
    ("- Also ran ruff as usual (E0425 and friends); RawEntry is unchanged.", "fail"),
    ("- cargo clippy reported no error for RawEntry.", "fail"),
    ("- Error-free build of RawEntry after the cleanup.", "fail"),
    # an item about another error of the same command does not tell this one
    ("- cargo clippy failed: doc list item without indentation in crates/lib/src/parse.rs; fixed.", "fail"),
    # told as an error, in its own words, in the problem-solving section
    ("- The build failed because RawEntry was not imported after the helpers moved; added the import.", "pass"),
])
def test_an_error_told_only_outside_section_4_must_be_told_as_an_error(grade, kit, section5, status):
    messages = [kit.user("run clippy"),
                *kit.tool("Bash", {"command": "cargo clippy"}, f"Checking lib\n{E0425}\n --> crates/lib/src/parse.rs:12:9",
                          is_error=True)]
    text = _s4(kit, "- None so far.") + "\n\n" + kit.section("problem", section5)
    verdict = grade("errors_preserved", kit.case(messages, text))
    assert verdict.status == status, verdict.reasons
    if status == "pass":
        assert "the 1 error line kept: 0 in section 4" in verdict.reasons[0]
        assert "1 in the problem-solving or current-work section" in verdict.reasons[0]
    else:
        assert "RawEntry" in verdict.reasons[0]


def test_errors_is_na_without_failing_results(grade, kit):
    # an error-looking line in a *successful* result is not a failing tool result
    messages = [kit.user("grep"), *kit.tool("Grep", {"pattern": "Error"}, "src/a.py:3: raise ValueError('bad')")]
    verdict = grade("errors_preserved", kit.case(messages, "no sections"))
    assert verdict.status == "n/a"
    assert "no tool result failed" in verdict.reasons[0]


# ---------------------------------------------------------------------------------------------
# pending_tasks


def _s7(kit, *items: str) -> str:
    return kit.section("pending", "\n".join(f"- {i}" for i in items) or "- None.")


def _todos(kit):
    return [kit.user("plan it"),
            *kit.todo(("Write the revocation migration", "pending"), ("Dropped idea: cache tokens in Redis", "pending")),
            *kit.todo(("Write the revocation migration", "in_progress"), ("Update the session docs", "pending"),
                      ("Read the auth module", "completed"))]


def test_pending_only_the_latest_todowrite_counts(grade, kit):
    verdict = grade("pending_tasks",
                    kit.case(_todos(kit), _s7(kit, "Write the revocation migration", "Update the session docs")))
    assert verdict.status == "pass", verdict.reasons
    [reason] = verdict.reasons
    assert reason.startswith("all 2 open tasks in section 7 ")   # not the dropped one, not the completed one


def test_pending_missing_open_item_fails_naming_it(grade, kit):
    text = "1. Primary Request and Intent:\n   x\n\n" + _s7(kit, "Write the revocation migration")
    verdict = grade("pending_tasks", kit.case(_todos(kit), text))
    assert verdict.status == "fail"
    assert verdict.score == 0.5
    line = kit.line_of(text, "7. Pending Tasks")
    assert verdict.reasons == [f"open task not in section 7 'Pending Tasks' (line {line}): \"Update the session docs\""]


def test_pending_is_na_without_todos(grade, kit, session):
    messages = [m for m in session.messages
                if not any(getattr(b, "name", "") == "TodoWrite" for b in getattr(m, "content", []) or [])]
    verdict = grade("pending_tasks", kit.case(messages, "no sections"))
    assert verdict.status == "n/a"
    assert "no open todo item or task" in verdict.reasons[0]


def test_pending_is_na_when_every_todo_is_completed(grade, kit):
    messages = [kit.user("go"), *kit.todo(("Write the migration", "pending")), *kit.todo(("Write the migration", "completed"))]
    verdict = grade("pending_tasks", kit.case(messages, "no sections"))
    assert verdict.status == "n/a"


def test_pending_expected_tasks_are_required(grade, kit):
    messages = [kit.user("Later we must rotate the signing keys"), kit.say("Noted.")]
    verdict = grade("pending_tasks", kit.case(messages, _s7(kit), expect={"pending": ["rotate the signing keys"]}))
    assert verdict.status == "fail"
    assert '"rotate the signing keys"' in verdict.reasons[0]


def _open(kit, *subjects: str):
    return [kit.user("plan it"), *kit.todo(*((t, "pending") for t in subjects))]


_OPEN = ("Write the revocation migration", "Update the session docs")


@pytest.mark.parametrize("mark", ["{} — DONE ✅", "[DONE] {}", "{} (already implemented and committed)",
                                  "{} (cancelled by the user — skip)", "{} — COMPLETED", "{}: finished"])
def test_pending_a_done_or_cancelled_mark_anywhere_in_the_item_is_not_kept(grade, kit, mark):
    # M5 of the review: only a leading tick or a trailing "(done)" was read as done.
    verdict = grade("pending_tasks", kit.case(_open(kit, *_OPEN), _s7(kit, _OPEN[0], mark.format(_OPEN[1]))))
    assert verdict.status == "fail", verdict.reasons
    assert verdict.reasons == [verdict.reasons[0]] and "marked as done" in verdict.reasons[0]
    assert _OPEN[1] in verdict.reasons[0]


@pytest.mark.parametrize("mark", ["{} — NOT YET DONE", "{} (blocked until the migration is complete)",
                                  "{} — IN PROGRESS, the first half done", "{} (to be completed after the review)",
                                  "[ ] {}", "{}; make sure the build is done first", "{}: done-state styling first"])
def test_pending_a_mark_said_not_to_apply_keeps_the_task_open(grade, kit, mark):
    verdict = grade("pending_tasks", kit.case(_open(kit, *_OPEN), _s7(kit, _OPEN[0], mark.format(_OPEN[1]))))
    assert verdict.status == "pass", verdict.reasons


@pytest.mark.parametrize("layout, done", [
    ("7. Pending Tasks:\n   Finished tasks (no action needed):\n   - {1}\n   Still open:\n   - {0}\n", 1),
    ("7. Pending Tasks:\n   **Completed in this session:**\n   - {1}\n   **Open:**\n   - {0}\n", 1),
    ("7. Pending Tasks:\n   None — every task below was completed in this session:\n   - {0}\n   - {1}\n", 2),
    ("7. Pending Tasks:\n   All of the following are done:\n   - {0}\n   - {1}\n", 2),
])
def test_pending_tasks_filed_as_finished_by_a_heading_or_lead_are_not_kept(grade, kit, layout, done):
    verdict = grade("pending_tasks", kit.case(_open(kit, *_OPEN), layout.format(*_OPEN)))
    assert verdict.status == "fail", verdict.reasons
    assert len(verdict.reasons) == done and all("marked as done" in r for r in verdict.reasons)


@pytest.mark.parametrize("layout", [
    "7. Pending Tasks:\n   Remaining (to be completed after the release is done):\n   - {0}\n   - {1}\n",
    "7. Pending Tasks:\n   The auth refactor was completed earlier; still open:\n   - {0}\n   - {1}\n",
    "7. Pending Tasks:\n   Both tasks below are still open (nothing finished yet):\n   - {0}\n   - {1}\n",
    "7. Pending Tasks:\n   All tasks below are listed; none is finished yet:\n   - {0}\n   - {1}\n",
])
def test_pending_a_heading_that_does_not_call_the_list_finished_keeps_it_open(grade, kit, layout):
    verdict = grade("pending_tasks", kit.case(_open(kit, *_OPEN), layout.format(*_OPEN)))
    assert verdict.status == "pass", verdict.reasons


def test_pending_a_changed_number_does_not_keep_the_task(grade, kit):
    task = "Author all 15 block.json manifests under registry/"
    for told in (task, "Task #7: Author all 15 block.json manifests under `registry/<block>/`",
                 "Author all fifteen block.json manifests under registry/"):
        assert grade("pending_tasks", kit.case(_open(kit, task), _s7(kit, told))).status == "pass", told
    verdict = grade("pending_tasks", kit.case(_open(kit, task), _s7(kit, "Task #7: Author all 5 block.json manifests "
                                                                          "under `registry/<block>/` (blocked by 5, 6)")))
    assert verdict.status == "fail", verdict.reasons
    assert task in verdict.reasons[0]


def test_pending_the_opposite_action_does_not_keep_the_task(grade, kit):
    task = "Implement `monodreams add <block>` with dep resolution + file copy + post-actions"
    good = "Task #10: Implement `monodreams add <block>` — resolve transitive deps, copy files, run post-actions"
    assert grade("pending_tasks", kit.case(_open(kit, task), _s7(kit, good))).status == "pass"
    bad = good.replace(" add ", " remove ")
    verdict = grade("pending_tasks", kit.case(_open(kit, task), _s7(kit, bad)))
    assert verdict.status == "fail", verdict.reasons
    assert "monodreams add <block>" in verdict.reasons[0]


def test_pending_a_sibling_sharing_a_few_words_does_not_reopen_a_cancelled_task(grade, kit):
    tasks = ("Scaffold the CLI project", "Implement `cli init`")
    items = ("Scaffold the CLI project with subcommands `init`/`add`/`list`", "Implement `cli init` — write cli.json")
    assert grade("pending_tasks", kit.case(_open(kit, *tasks), _s7(kit, *items))).status == "pass"
    verdict = grade("pending_tasks", kit.case(_open(kit, *tasks),
                                              _s7(kit, items[0], items[1] + " (cancelled by the user — skip)")))
    assert verdict.status == "fail", verdict.reasons
    assert "marked as done" in verdict.reasons[0] and "cli init" in verdict.reasons[0]


# ---------------------------------------------------------------------------------------------
# no_superseded_work

SUPERSEDED = {"superseded": ["use JWT"]}


def test_superseded_work_proposed_in_section_9_fails(grade, kit, session):
    bodies = {**session.bodies, "next": 'Go back to the plan and use JWT for the session tokens.'}
    text = kit.summary(bodies)
    verdict = grade("no_superseded_work", kit.case(session.messages, text, expect=SUPERSEDED))
    assert verdict.status == "fail"
    assert verdict.score == 0.0
    (reason,) = verdict.reasons
    line = kit.line_of(text, "9. Optional Next Step")
    assert reason.startswith(f"section 9 'Optional Next Step' (line {line}) proposes superseded work \"use JWT\"")
    assert "use JWT for the session tokens" in reason


def test_superseded_work_in_pending_tasks_fails_naming_section_7(grade, kit, session):
    bodies = {**session.bodies, "pending": "- Use JWT refresh tokens for mobile"}
    verdict = grade("no_superseded_work", kit.case(session.messages, kit.summary(bodies), expect=SUPERSEDED))
    assert verdict.status == "fail"
    assert verdict.reasons[0].startswith("section 7 'Pending Tasks'")


def test_superseded_score_counts_distinct_intents(grade, kit, session):
    bodies = {**session.bodies, "next": "use JWT again"}
    verdict = grade("no_superseded_work", kit.case(session.messages, kit.summary(bodies),
                                                   expect={"superseded": ["use JWT", "store sessions in Redis"]}))
    assert verdict.status == "fail"
    assert verdict.score == 0.5
    assert verdict.evidence["superseded"] == ["use JWT"]


@pytest.mark.parametrize("intent, body", [
    ("use JWT", "Switch to opaque tokens; the user said don't use JWT."),
    ("use JWT", "Per the user, do not use JWT; issue opaque tokens."),
    ("JWT tokens", "Issue opaque session tokens instead of JWT tokens."),
    ("JWT tokens", "Keep opaque tokens rather than JWT tokens."),
    ("use JWT", "We no longer use JWT; finish the loader."),
    ("CSV export", "Change of plan: skip the CSV export entirely; add the region table."),
    ("CSV export", "Dropping the CSV export, adding the region breakdown."),
])
def test_superseded_phrase_after_a_negation_passes(grade, kit, session, intent, body):
    bodies = {**session.bodies, "next": body}
    verdict = grade("no_superseded_work", kit.case(session.messages, kit.summary(bodies),
                                                   expect={"superseded": [intent]}))
    assert verdict.status == "pass", verdict.reasons


def test_superseded_phrase_only_in_section_1_passes(grade, kit, session):
    bodies = {**session.bodies, "request": "At first the user wanted to use JWT, then switched to opaque tokens."}
    verdict = grade("no_superseded_work", kit.case(session.messages, kit.summary(bodies), expect=SUPERSEDED))
    assert verdict.status == "pass"
    assert verdict.reasons == ["none of the 1 superseded intents is proposed in sections 7-9"]


def test_superseded_is_na_without_expectations(grade, kit, session):
    bodies = {**session.bodies, "next": "use JWT"}
    verdict = grade("no_superseded_work", kit.case(session.messages, kit.summary(bodies)))
    assert verdict.status == "n/a"
    assert "expect.superseded is empty" in verdict.reasons[0]


def test_superseded_negation_in_an_earlier_sentence_does_not_excuse_a_proposal(grade, kit, session):
    bodies = {**session.bodies, "next": "The tests do not pass yet. Next: use JWT for the session tokens."}
    verdict = grade("no_superseded_work", kit.case(session.messages, kit.summary(bodies), expect=SUPERSEDED))
    assert verdict.status == "fail"
