"""Classes an eighth round found by editing real corpus summaries (``benchmarks/edited_summaries.py``):
defects every grader passed, each shown on the good and the bad side.

* Section 4 tells an error against another file than the one its output places it in ("Ruff F841 in
  ``commands.py``" for ``formatters.py:336:5: F841 …``): ``errors_preserved`` fails, quoting the item,
  its line and the output's line (``reading/error_location.py``).
* A test the span's last run still fails is called passing ("Test 7.2 — fixed, now passing",
  "All e2e tests now pass"): ``errors_preserved`` fails (``reading/test_claims.py``).
* Sections 1-2 restate the person's words with another value in the place of theirs ("use Postgres"
  for "use SQLite"), or quote the person with a word changed, while section 6 quotes them verbatim:
  ``constraints_preserved`` fails, with no ``expect.constraints`` too (``reading/contradicted.py``).
"""

from __future__ import annotations

import pytest

from pytest_ctxeval.reading.contradicted import is_value
from pytest_ctxeval.reading.error_location import located_lines
from pytest_ctxeval.reading.test_claims import last_test_run, passing_claims


def _s(kit, **bodies: str) -> str:
    base = {k: "x" for k in kit.SECTION_KINDS}
    base.update(bodies)
    return kit.summary(base)


# -- an error told against the wrong file ----------------------------------------------------------

RUFF = ("src/app/display/formatters.py:336:5: F841 Local variable `total_events` is assigned to but never used\n"
        "Found 1 error.")


def _lint(kit) -> list:
    return [kit.user("make ruff pass"),
            *kit.tool("Read", {"file_path": "/repo/src/app/cli/commands.py"}, "def main(): ..."),
            *kit.tool("Bash", {"command": "uv run ruff check ."}, RUFF, is_error=True),
            *kit.tool("Edit", {"file_path": "/repo/src/app/display/formatters.py", "old_string": "a", "new_string": "b"})]


@pytest.mark.parametrize("item", [
    "- **Ruff F841**: unused `total_events` in formatters.py; removed it",
    "- **Ruff F841** in `src/app/display/formatters.py:336`: removed",
    "- **Ruff F841**: unused `total_events`. Fixed by editing `commands.py` too",   # the fix's file
    "- Ruff found F841; fixed",                                                     # no file named
    "- **Lint errors**: after nesting changes in commands.py, ruff reported F841",  # the cause's file
])
def test_an_error_told_in_its_own_file_or_with_no_file_passes(grade, kit, item):
    verdict = grade("errors_preserved", kit.case(_lint(kit), _s(kit, errors=item)))
    assert verdict.status == "pass", verdict.reasons


@pytest.mark.parametrize("item", [
    "- **Ruff F841** in `commands.py`: unused `total_events`, removed",
    "- **Ruff F841**: unused `total_events` in commands.py. Fixed by removing it",
    "- Ruff F841 at src/app/cli/commands.py:336 was removed",
])
def test_an_error_told_in_another_file_fails_with_the_item_and_the_output_line(grade, kit, item):
    text = _s(kit, errors=item)
    verdict = grade("errors_preserved", kit.case(_lint(kit), text))
    assert verdict.status == "fail"
    (reason,) = verdict.reasons
    assert "F841 in `commands.py`" in reason and f"line {kit.line_of(text, item[:20])}" in reason
    assert "formatters.py:336:5: F841" in reason and "wrong file" in reason


def test_a_one_file_output_places_its_error_there(grade, kit):
    out = "Diff in /repo/crates/lib/src/parser.rs:12:\n-    Assistant,\n+    #[default]\n+    Assistant,"
    msgs = [kit.user("format it"), *kit.tool("Read", {"file_path": "/repo/crates/lib/src/output.rs"}, "x"),
            *kit.tool("Bash", {"command": "cargo fmt --check"}, out, is_error=True)]
    good = "- **`cargo fmt --check` diff** in `parser.rs`: ran `cargo fmt`"
    bad = "- **`cargo fmt --check` diff** in `output.rs`: ran `cargo fmt`"
    assert grade("errors_preserved", kit.case(msgs, _s(kit, errors=good))).status == "pass"
    verdict = grade("errors_preserved", kit.case(msgs, _s(kit, errors=bad)))
    assert verdict.status == "fail" and "parser.rs" in verdict.reasons[0] and "output.rs" in verdict.reasons[0]


def test_an_output_placing_the_problem_in_several_files_is_not_judged(grade, kit):
    two = "src/app/cli/main.py:9:5: F841 Local variable `total` is assigned to but never used\n" + RUFF
    msgs = [kit.user("lint"), *kit.tool("Read", {"file_path": "/repo/src/app/cli/commands.py"}, "x"),
            *kit.tool("Bash", {"command": "ruff check ."}, two, is_error=True)]
    verdict = grade("errors_preserved", kit.case(msgs, _s(kit, errors="- **Ruff F841** in `commands.py`: removed")))
    assert verdict.status == "pass", verdict.reasons


def test_located_lines_read_each_tools_way_of_placing_a_problem():
    text = ("error[E0425]: cannot find type `RawEntry` in this scope\n   --> crates/lib/src/ingest.rs:187:20\n"
            " at frontend/src/ContextTab.tsx:3:10 lint/correctness/noUnusedImports  FIXABLE\n"
            "CONFLICT (content): Merge conflict in internal/commands/api.go")
    assert [(loc.path, loc.marks) for loc in located_lines(text)] == [
        ("crates/lib/src/ingest.rs", ("E0425", "RawEntry")), ("frontend/src/ContextTab.tsx", ("noUnusedImports",)),
        ("internal/commands/api.go", ())]


# -- a failing test called passing -----------------------------------------------------------------

PW = ("  1) [chromium] › tests/sharing.spec.ts:338:3 › Sharing › 7.2 Charlie sees the newly added file \n\n"
      "    Error: locator.click: Target page, context or browser has been closed\n\n"
      "  1 failed\n    [chromium] › tests/sharing.spec.ts:338:3 › Sharing › 7.2 Charlie sees the newly added file \n"
      "  9 passed (22.3s)\n")


def _e2e(kit, *, passed_after: bool = False) -> list:
    msgs = [kit.user("make the e2e tests pass"),
            *kit.tool("Bash", {"command": "cd tests/e2e && npx playwright test 2>&1 | tail -40"}, PW)]
    if passed_after:
        msgs += kit.tool("Bash", {"command": "cd tests/e2e && npx playwright test 2>&1 | tail -40"}, "  10 passed (20.1s)\n")
    return msgs


ITEM = '- **Test 7.2 "Charlie sees the newly added file"**: Target page, context or browser has been closed'


@pytest.mark.parametrize("claim", [" — fixed, now passing ✅", ". Test 7.2 now passes."])
def test_a_test_the_last_run_fails_called_passing_fails(grade, kit, claim):
    text = _s(kit, errors=ITEM + claim)
    verdict = grade("errors_preserved", kit.case(_e2e(kit), text))
    assert verdict.status == "fail"
    (reason,) = [r for r in verdict.reasons if "the last test run of the span" in r]
    assert "7.2 Charlie sees" in reason and f"line {kit.line_of(text, 'Charlie sees the newly')}" in reason
    # the same words after a run that passed it are true
    after = grade("errors_preserved", kit.case(_e2e(kit, passed_after=True), text))
    assert not [r for r in after.reasons if "the last test run" in r]


@pytest.mark.parametrize("current, fails", [
    ("All e2e tests now pass.", True),
    ("All tests pass.", True),
    ("All unit tests pass.", False),                       # another suite
    ("Next: make all e2e tests pass again.", False),        # looking ahead
    ("All tests should pass once the key rotation lands.", False),
    ("Test 7.2 still fails; tests 1-6 pass.", False),
    ("Before the change all e2e tests passed.", False),     # the past
    ("All tests pass except 7.2.", False),                  # an exception made
])
def test_all_tests_pass_is_judged_against_the_last_run(grade, kit, current, fails):
    verdict = grade("errors_preserved", kit.case(_e2e(kit), _s(kit, errors=ITEM + " (still failing)", current=current)))
    assert (verdict.status == "fail") is fails, verdict.reasons


@pytest.mark.parametrize("said", [" — still failing on the last run", ". Fix: added a wait; not re-run yet",
                                  ". The fix should make it pass"])
def test_a_failing_test_told_as_failing_or_hoped_passes(grade, kit, said):
    verdict = grade("errors_preserved", kit.case(_e2e(kit), _s(kit, errors=ITEM + said)))
    assert verdict.status == "pass", verdict.reasons


def test_last_test_run_and_claims_read_the_last_run_only(kit):
    run = last_test_run(_e2e(kit))
    assert run is not None and run.failing == (("tests/sharing.spec.ts", "7.2 Charlie sees the newly added file"),)
    assert last_test_run(_e2e(kit, passed_after=True)) is None
    assert [c.test for c in passing_claims("Test 6.1 fails, 7.2 now passes", run)] == []


# -- a value the person set, contradicted in sections 1-2 -----------------------------------------------

ASK = "Store the session cache in SQLite on port 5432, and keep the README.md short."


def _asked(kit, *, later: str = "") -> list:
    msgs = [kit.user(ASK), kit.say("Setting up the cache.")]
    if later:
        msgs += [kit.say(later), kit.user("yes, do that")]
    return msgs


@pytest.mark.parametrize("request_", [
    "The user wants to store the session cache in Postgres on port 5432.",
    "Store the session cache in SQLite on port 5433, as asked.",
    "The user asked: \"Store the session cache in SQLite on port 5432, and keep the CHANGELOG.md short.\"",
])
def test_a_contradicted_value_fails_with_the_line_and_the_persons_words(grade, kit, request_):
    text = _s(kit, request=request_, user_messages=f'- "{ASK}"')
    verdict = grade("constraints_preserved", kit.case(_asked(kit), text))
    assert verdict.status == "fail", verdict.reasons
    assert f"line {kit.line_of(text, request_[:25])}" in verdict.reasons[0] and "section 1" in verdict.reasons[0]
    assert "user message 1" in verdict.reasons[0] or "they said" in verdict.reasons[0]


@pytest.mark.parametrize("request_", [
    "The user wants to store the session cache in SQLite on port 5432.",          # the same values
    "Cache sessions in SQLite (port 5432); keep the README short.",                # reworded
    "The user wants to store the session cache in a database on port 5432.",      # a plain word
    "Store the session cache in Postgres instead of SQLite on port 5432.",        # says both: a change told
])
def test_a_restated_or_reworded_request_passes(grade, kit, request_):
    verdict = grade("constraints_preserved", kit.case(_asked(kit), _s(kit, request=request_, user_messages=f'- "{ASK}"')))
    assert verdict.status == "n/a", verdict.reasons


def test_a_value_the_session_agreed_to_later_is_no_contradiction(grade, kit):
    msgs = _asked(kit, later="SQLite cannot take concurrent writers here; shall I use Postgres instead?")
    text = _s(kit, request="The user wants to store the session cache in Postgres on port 5432.")
    assert grade("constraints_preserved", kit.case(msgs, text)).status == "n/a"


def test_is_value_tells_a_value_from_a_plain_word():
    assert is_value("5432") and is_value("README.md") and is_value("session_cache") and is_value("TDD")
    text = "keep it in SQLite please"
    assert is_value("SQLite", text, text.index("SQLite"))
    assert not is_value("router") and not is_value("Store", "Store it", 0)


# -- a file the session only read, called new ----------------------------------------------------------

LOADER = "     1→def load(claims):\n     2→    return claims['user_id']\n"


def _read_then_edit(kit, *, first: list | None = None) -> list:
    return [kit.user("fix the loader"), *(first or []),
            *kit.tool("Read", {"file_path": "/repo/src/auth/loader.py"}, LOADER),
            *kit.tool("Write", {"file_path": "/repo/src/auth/cache.py", "content": "x"}, "File created")]


@pytest.mark.parametrize("files", [
    "- `src/auth/loader.py` (NEW): the claims loader",
    "- **src/auth/loader.py** — new file with the loader",
    "- Created `src/auth/loader.py` for the claims",
])
def test_a_file_only_read_called_new_fails(grade, kit, files):
    text = _s(kit, files=files + "\n- `src/auth/cache.py` (NEW)")
    verdict = grade("files_preserved", kit.case(_read_then_edit(kit), text))
    assert verdict.status == "fail", verdict.reasons
    (reason,) = verdict.reasons
    assert "loader.py new" in reason and "def load(claims):" in reason and f"line {kit.line_of(text, files[:14])}" in reason


@pytest.mark.parametrize("files", [
    "- `src/auth/loader.py` (read for reference)\n- `src/auth/cache.py` (NEW)",     # the written one is new
    "- `src/auth/loader.py`: added new tests for the claims\n- `src/auth/cache.py`",  # "new" about something else
    "- Created a helper in `src/auth/loader.py`\n- `src/auth/cache.py`",
])
def test_new_said_of_what_is_new_passes(grade, kit, files):
    verdict = grade("files_preserved", kit.case(_read_then_edit(kit), _s(kit, files=files)))
    assert verdict.status == "pass", verdict.reasons


@pytest.mark.parametrize("first", [
    [("Bash", {"command": "touch src/auth/loader.py"}, "")],                        # a command that may have made it
    [("Task", {"description": "scaffold", "prompt": "write the loader"}, "done")],  # a subagent's writes are unseen
])
def test_a_read_after_a_possible_maker_proves_nothing(grade, kit, first):
    calls = [m for name, inp, out in first for m in kit.tool(name, inp, out)]
    text = _s(kit, files="- `src/auth/loader.py` (NEW)\n- `src/auth/cache.py` (NEW)")
    assert grade("files_preserved", kit.case(_read_then_edit(kit, first=calls), text)).status == "pass"


# -- work called done that no command did ----------------------------------------------------------------

def _work(kit, *commands: str, tool: str = "Bash") -> list:
    msgs = [kit.user("fix the loader"),
            *kit.tool("Edit", {"file_path": "/repo/src/loader.py", "old_string": "a", "new_string": "b"})]
    for c in commands:
        msgs += kit.tool(tool, {"command": c} if tool == "Bash" else {"description": c, "prompt": c}, "ok")
    return msgs


@pytest.mark.parametrize("current, what", [
    ("Fixed the loader. All changes are committed and pushed to origin.", "pushed"),
    ("Fixed the loader and committed it as `fix: loader`.", "committed"),
    ("Fixed the loader and opened a PR for review.", "opened a pull request"),
])
def test_work_called_done_that_no_command_did_fails(grade, kit, current, what):
    text = _s(kit, files="- `src/loader.py`", current=current)
    verdict = grade("pending_tasks", kit.case(_work(kit, "pytest -q"), text))
    assert verdict.status == "fail", verdict.reasons
    assert f"the work was {what}" in verdict.reasons[0] and f"line {kit.line_of(text, current[:20])}" in verdict.reasons[0]


@pytest.mark.parametrize("commands, tool, current", [
    (("git commit -am 'fix: loader' && git push origin HEAD",), "Bash", "All changes are committed and pushed."),
    (("gh pr create --fill",), "Bash", "Fixed the loader and opened a PR for review."),
    (("pytest -q",), "Bash", "Fixed the loader; not pushed yet."),                 # negated
    (("pytest -q",), "Bash", "Next: commit once the user approves."),              # ahead
    (("pytest -q",), "Bash", "The user pushed the branch themselves."),            # someone else
    (("ship the loader",), "Task", "A subagent committed and pushed the fix."),    # a subagent's commands are unseen
])
def test_work_backed_by_a_command_or_not_claimed_passes(grade, kit, commands, tool, current):
    verdict = grade("pending_tasks", kit.case(_work(kit, *commands, tool=tool), _s(kit, current=current)))
    assert verdict.status == "n/a", verdict.reasons


# -- harmless: an acknowledgement found in a paraphrase elsewhere ------------------------------------------

def test_an_acknowledgement_found_elsewhere_does_not_split_the_last_request(grade, kit):
    last = "this is good. commit push this plan and open a PR to merge with master, then plan the phases"
    msgs = [kit.user("write the plan"), kit.say("Plan written."), kit.user(last)]
    kept = '- "commit push this plan and open a PR to merge with master, then plan the phases"'
    para = "Roughly: this is good. basically commit push this plan and open a PR"
    for request in ("x", para):   # without, and with, a paraphrase that holds the acknowledgement
        verdict = grade("last_request_intact", kit.case(msgs, _s(kit, request=request, user_messages=kept)))
        assert verdict.status == "pass" and "but for the acknowledgement" in verdict.reasons[0], verdict.reasons
    # the request itself cut is still a failure
    cut = kept.replace(", then plan the phases", "")
    verdict = grade("last_request_intact", kit.case(msgs, _s(kit, request=para, user_messages=cut)))
    assert verdict.status == "fail"


# -- what the person ruled out, planned in sections 7-9 ----------------------------------------------------

RULE = "First thing: what is this MVP facet? No MVP terminology in our app. We are live."


@pytest.mark.parametrize("pending", [
    "- Write the MVP terminology section of the facet schema",
    "- Rename the facets\n- Use MVP terminology throughout the docs",
])
def test_planning_what_the_person_ruled_out_fails(grade, kit, pending):
    msgs = [kit.user("design the facets"), kit.say("Here is an MVP facet schema."), kit.user(RULE)]
    verdict = grade("no_superseded_work", kit.case(msgs, _s(kit, pending=pending)))
    assert verdict.status == "fail", verdict.reasons
    assert '"MVP terminology", which the person ruled out (user message 2 of 2' in verdict.reasons[0]


@pytest.mark.parametrize("pending, later", [
    ("- Keep to the rule: no MVP terminology", ""),                            # the rule, kept
    ("- Avoid MVP terminology in the facet docs", ""),                        # negated
    ("- Use MVP terminology in the internal notes", "ok, MVP terminology is fine in internal notes"),  # allowed again
    ("- Use MVP terminology in the notes", "No, MVP terminology stays out for now"),  # "for now": a rule for a while
])
def test_the_rule_kept_negated_or_allowed_again_passes(grade, kit, pending, later):
    msgs = [kit.user("design the facets"), kit.say("Here is an MVP facet schema."), kit.user(RULE if not later.startswith("No,") else later)]
    if later and not later.startswith("No,"):
        msgs += [kit.say("Understood."), kit.user(later)]
    verdict = grade("no_superseded_work", kit.case(msgs, _s(kit, pending=pending)))
    assert verdict.status == "n/a", verdict.reasons


@pytest.mark.parametrize("said", ["No, let's keep the schema", "no need for the cache", "No problem at all.",
                                  "don't use it yet", "no router"])
def test_answers_and_plain_words_rule_nothing_out(said):
    from pytest_ctxeval.reading.prohibitions import prohibitions
    assert prohibitions([said]) == []


def test_a_push_the_session_speaks_of_is_not_judged(grade, kit):
    # the person's own terminal (bash mode) leaves its command as text, not as a tool call
    msgs = [*_work(kit, "pytest -q"), kit.user("<bash-input>git push origin main</bash-input>"), kit.say("Pushed, thanks.")]
    assert grade("pending_tasks", kit.case(msgs, _s(kit, current="All changes are pushed."))).status == "n/a"
    verdict = grade("pending_tasks", kit.case(_work(kit, "pytest -q"), _s(kit, current="All changes are pushed.")))
    assert verdict.status == "fail"


@pytest.mark.parametrize("request_, fails", [
    ("The user said to use Postgres.", True),         # the whole short message, its value changed
    ("The user said to use SQLite.", False),
    ("Use Postgres or SQLite, whichever is simpler.", False),   # names both
])
def test_a_short_message_restated_whole(grade, kit, request_, fails):
    msgs = [kit.user("set up the cache"), kit.say("Which database?"), kit.user("use SQLite"), kit.say("OK.")]
    verdict = grade("constraints_preserved", kit.case(msgs, _s(kit, request=request_, user_messages='- "use SQLite"')))
    assert (verdict.status == "fail") is fails, verdict.reasons


def test_a_summary_repeating_the_sessions_own_word_that_the_tests_pass_is_not_judged():
    """The last recorded run failed, but the assistant said afterwards that the whole suite passes (a
    run the transcript does not show as a test run, or a command it cannot read): a summary that says
    so is faithful to the session; without the assistant's word, the same claim fails."""
    from pytest_ctxeval.core.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
    from pytest_ctxeval.reading.test_claims import last_test_run, passing_claims

    run = [UserMessage(uuid="u", content="Fix the login test."),
           AssistantMessage(uuid="a", content=[ToolUseBlock(id="t1", name="Bash",
                                                            input={"command": "pytest tests/test_login.py -q"})]),
           UserMessage(uuid="r", content=[ToolResultBlock(tool_use_id="t1", is_error=True, content=(
               "FAILED tests/test_login.py::test_login - KeyError: 'user_id'\n1 failed in 0.1s"))])]
    said = [UserMessage(uuid="u2", content="Now run the whole suite."),
            AssistantMessage(uuid="a2", content=[TextBlock(text="All 12 tests pass.")])]
    other = [AssistantMessage(uuid="a3", content=[ToolUseBlock(id="t2", name="Bash", input={"command": "make check"})])]
    claim = "Ran the whole suite: all 12 tests pass."
    assert passing_claims(claim, last_test_run(run))                  # nothing after the red run: judged
    assert last_test_run(run + said) is None                          # the session itself says they pass
    assert last_test_run(run + other) is None                         # `make check` may have run them
