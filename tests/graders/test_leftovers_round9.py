"""Leftovers of round 9 (verdict trust and code shape): one reader of the person's prohibitions; a
summary that tells work breaking a rule the person set; a changed commit id; a task section 8 calls
done while section 7 lists it open; a free-form /compact summary and section 6; a semicolon list of
the person's messages; a short "now …" message that starts a new task; the tools that cannot run
tests. Each: a good summary passes, a bad one fails with a reason a reader can act on."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_ctxeval.reading.prohibitions import Forbidden, forbidden, prohibitions

# -- 1. one reader of what the person forbade ----------------------------------------------------------


@pytest.mark.parametrize("said, expected", [
    ("No MVP terminology in our app.", [("MVP terminology", "use")]),
    ("No Chakra anywhere.", [("Chakra", "use")]),                        # the name, not "Chakra anywhere"
    ("never use lodash.merge for this", [("lodash.merge", "use")]),       # a dotted name is one word
    ("wait, don't touch the sitemap, only the feed", [("sitemap", "change")]),
    ("leave the public API alone", [("public API", "change")]),
    ("don't touch the sitemap yet, do the feed first", []),               # a matter of order
    ("No, let's keep the schema", []),                                    # an answer
    ("if it breaks, don't touch the sitemap", []),                         # a condition
])
def test_one_reader_reads_both_kinds_of_prohibition(said, expected):
    assert [(f.what, f.forbids) for f in forbidden(said)] == expected


def test_a_later_message_lifts_a_prohibition_by_what_it_forbids():
    change = "don't touch the sitemap"
    assert prohibitions([change, "check that the sitemap validates"]) == [
        *[p for p in prohibitions([change])]]                                # reading it asks for no change
    assert prohibitions([change, "ok, now update the sitemap too"]) == []   # asks to change it
    assert prohibitions(["No Chakra anywhere.", "use Chakra for the dialog after all"]) == []
    assert Forbidden("sitemap", "change").broken_by("Check the sitemap.", 10, 17) is False


def test_a_dotted_name_ruled_out_is_held_by_no_superseded_work(grade, kit):
    rule = "never use lodash.merge for this"
    msgs = [kit.user("merge the two config objects"), kit.say("I'll use lodash.merge."), kit.user(rule)]
    bodies = {**dict.fromkeys(kit.SECTION_KINDS, "x"), "user_messages": f'- "merge the two config objects"\n- "{rule}"'}
    bad = grade("no_superseded_work", kit.case(msgs, kit.summary({**bodies, "next": "Merge the configs with lodash.merge."})))
    assert bad.status == "fail" and '"lodash.merge", which the person ruled out' in bad.reasons[0], bad.reasons
    good = grade("no_superseded_work", kit.case(msgs, kit.summary({**bodies, "next": "Merge the configs with a spread."})))
    assert good.status != "fail", good.reasons


# -- 2a. work told that breaks a rule the person set ---------------------------------------------------

RULE_ASK = "Fix the crash in parse() on empty input, but don't change the public API."


def _api_case(kit, current, nxt="Run the parser tests again."):
    msgs = [kit.user(RULE_ASK), *kit.tool("Edit", {"file_path": "src/parser.py", "old_string": "a", "new_string": "b"}),
            kit.say("Fixed.")]
    return kit.case(msgs, kit.summary({**dict.fromkeys(kit.SECTION_KINDS, "x"), "request": RULE_ASK,
                                       "user_messages": f'- "{RULE_ASK}"', "current": current, "next": nxt}))


@pytest.mark.parametrize("current", [
    "Fixed the crash by changing the public API: parse() now takes a required config argument.",
    "Fixed the crash; the public function signature of parse() was changed to parse(text, config).",
    "Changed the signature of the public function parse() so empty input is rejected early.",
])
def test_work_that_breaks_a_rule_of_the_person_fails_constraints_quoting_it(grade, kit, current):
    verdict = grade("constraints_preserved", _api_case(kit, current))
    assert verdict.status == "fail", verdict.reasons
    assert "section 8" in verdict.reasons[0] and "don't change the public API" in verdict.reasons[0], verdict.reasons


@pytest.mark.parametrize("current", [
    "Fixed the crash inside parse() without changing the public API.",
    "Fixed the crash with an internal guard in _tokenize(); the public API is unchanged, as the user asked.",
    "Changed the private helper _tokenize() to return [] on empty input.",
])
def test_work_that_keeps_the_rule_passes_constraints(grade, kit, current):
    verdict = grade("constraints_preserved", _api_case(kit, current))
    assert verdict.status != "fail", verdict.reasons


def test_a_step_that_would_break_the_rule_fails_constraints_too(grade, kit):
    verdict = grade("constraints_preserved", _api_case(kit, "Fixed the crash in _tokenize().",
                                                       nxt="Change the public API so parse() takes a config."))
    assert verdict.status == "fail" and "section 9" in verdict.reasons[0], verdict.reasons


@pytest.mark.parametrize("current, fails", [
    ("Built the settings dialog; added Chakra for its modal.", True),
    ("Built the settings dialog with plain CSS, no Chakra.", False),
    ("Built the settings dialog; Chakra was added, which the user forbade: it must be reverted.", False),
])
def test_work_that_uses_what_the_person_ruled_out_fails_constraints(grade, kit, current, fails):
    ask, rule = "Build the settings dialog", "No Chakra anywhere."
    msgs = [kit.user(ask), kit.say("I could use Chakra."), kit.user(rule), kit.say("Understood.")]
    case = kit.case(msgs, kit.summary({**dict.fromkeys(kit.SECTION_KINDS, "x"), "current": current,
                                       "user_messages": f'- "{ask}"\n- "{rule}"'}))
    verdict = grade("constraints_preserved", case)
    assert (verdict.status == "fail") is fails, verdict.reasons
    if fails:
        assert '"Chakra", which the person forbade (user message 2 of 2: "No Chakra anywhere")' in verdict.reasons[0]


# -- 2b. a changed commit id ---------------------------------------------------------------------------


def _commit_case(kit, current):
    msgs = [kit.user("commit the parser fix"),
            *kit.tool("Bash", {"command": "git commit -am 'Fix empty input crash'"},
                      "[main abc1234] Fix empty input crash\n 1 file changed, 3 insertions(+)"),
            kit.say("Committed."), kit.user("thanks, now write the changelog entry")]
    return kit.case(msgs, kit.summary({**dict.fromkeys(kit.SECTION_KINDS, "x"), "current": current}))


def test_a_changed_commit_id_fails_stale_values_naming_both(grade, kit):
    verdict = grade("stale_values", _commit_case(kit, "Committed the fix as abc1243; writing the changelog entry."))
    assert verdict.status == "fail", verdict.reasons
    assert "names abc1243" in verdict.reasons[0] and "it shows abc1234" in verdict.reasons[0], verdict.reasons
    assert "section 8" in verdict.reasons[0] and "[main abc1234] Fix empty input crash" in verdict.reasons[0]


@pytest.mark.parametrize("current", [
    "Committed the fix as abc1234; writing the changelog entry.",
    "Committed the fix as abc1234 (Fix empty input crash); next, the changelog entry.",
])
def test_the_commit_id_as_the_session_shows_it_passes(grade, kit, current):
    verdict = grade("stale_values", _commit_case(kit, current))
    assert verdict.status == "pass", verdict.reasons


def test_a_commit_id_the_session_never_showed_near_no_other_is_not_judged(grade, kit):
    # "9f8e7d6" is close to no id of the session: it may come from before it; nothing says it changed
    verdict = grade("stale_values", _commit_case(kit, "Rebased on 9f8e7d6 earlier; committed the fix as abc1234."))
    assert verdict.status == "pass", verdict.reasons


# -- 2c. section 8 calls a task done that section 7 lists open ------------------------------------------


def _todo_case(kit, pending, current):
    msgs = [kit.user("Add CSV export to the reports page, then write the docs"),
            *kit.todo(("Add CSV export to the reports page", "in_progress"), ("Write the export docs", "pending")),
            kit.say("Working on the CSV export.")]
    return kit.case(msgs, kit.summary({**dict.fromkeys(kit.SECTION_KINDS, "x"), "pending": pending,
                                       "current": current}))


@pytest.mark.parametrize("current", [
    "The CSV export on the reports page is done.",
    "Finished adding the CSV export to the reports page; its tests pass.",
])
def test_a_task_section_8_calls_done_and_section_7_lists_open_fails_pending_tasks(grade, kit, current):
    case = _todo_case(kit, "- Add CSV export to the reports page\n- Write the export docs", current)
    verdict = grade("pending_tasks", case)
    assert verdict.status == "fail", verdict.reasons
    assert "section 8" in verdict.reasons[0] and "section 7" in verdict.reasons[0], verdict.reasons
    assert "Add CSV export to the reports page" in verdict.reasons[0]


@pytest.mark.parametrize("pending, current", [
    ("- Add CSV export to the reports page\n- Write the export docs",
     "Adding the CSV export to the reports page; the button is in place, the download is not done yet."),
    ("- Write the export docs", "The CSV export on the reports page is done."),      # consistent: done, not listed
    ("- Add CSV export to the reports page\n- Write the export docs",
     "The CSV export's button component is done; wiring the download next."),        # a part of it, not the task
])
def test_sections_7_and_8_that_agree_pass(grade, kit, pending, current):
    verdict = grade("pending_tasks", _todo_case(kit, pending, current))
    assert verdict.status != "fail" or "section 8" not in verdict.reasons[0], verdict.reasons


# -- 2d. a free-form /compact summary and section 6 ----------------------------------------------------

ASKED = "just 5 short bullets, no sections"


def _free_case(kit, summary):
    msgs = [kit.user("Fix the flaky upload test in tests/test_upload.py"), kit.say("Looking."),
            kit.user("also bump the timeout to 30 seconds")]
    return dataclasses.replace(kit.case(msgs, summary), compact_args=ASKED)


def test_a_free_form_summary_is_read_whole_for_the_messages(grade, kit):
    good = ("- User: \"Fix the flaky upload test in tests/test_upload.py\"\n- User: \"also bump the timeout to 30 "
            "seconds\"\n- Timeout raised\n- Test passes locally\n- Next: run CI")
    verdict = grade("verbatim_user_messages", _free_case(kit, good))
    assert verdict.status == "pass", verdict.reasons


def test_a_free_form_summary_that_drops_a_message_says_what_was_asked_not_cannot_survive(grade, kit):
    bad = "- Fixing the flaky upload test\n- Timeout raised\n- Test passes locally\n- Next: run CI\n- Nothing else"
    verdict = grade("verbatim_user_messages", _free_case(kit, bad))
    assert verdict.status == "fail", verdict.reasons
    text = " ".join(verdict.reasons)
    assert "cannot survive" not in text and "is missing" not in text, text
    assert ASKED in text and "also bump the timeout" in text, text
    assert "leave-out" not in text, text          # "no sections" asks for a form: it leaves nothing out


def test_a_prompt_that_lost_section_6_on_its_own_still_misses_it(grade, kit):
    case = _free_case(kit, "- Fixing the flaky upload test\n- Timeout raised")
    verdict = grade("verbatim_user_messages", dataclasses.replace(case, compact_args=None))
    assert verdict.status == "fail" and verdict.reasons[0].startswith("section 6 'All user messages' is missing")


# -- 2e. a semicolon-separated list of the person's messages in section 6 --------------------------------

MSGS = ["fix the login redirect after the session expires", "add a regression test for the redirect loop",
        "run the whole auth suite before you commit"]


def _listed(kit, section6):
    msgs = []
    for m in MSGS:
        msgs += [kit.user(m), kit.say("Done.")]
    return kit.case(msgs, kit.summary({**dict.fromkeys(kit.SECTION_KINDS, "x"), "user_messages": section6}))


@pytest.mark.parametrize("section6", [
    '"' + "; ".join(MSGS) + '"',                 # one quote, the messages apart with semicolons
    '- The user asked, in order: "' + "; ".join(MSGS) + '."',
    "; ".join(f'"{m}"' for m in MSGS),
])
@pytest.mark.parametrize("name", ["verbatim_user_messages", "last_request_intact"])
def test_a_semicolon_list_of_messages_is_read_as_messages(grade, kit, section6, name):
    verdict = grade(name, _listed(kit, section6))
    assert verdict.status == "pass", verdict.reasons


def test_a_semicolon_list_with_words_nobody_typed_fails_naming_them(grade, kit):
    listed = '"' + "; ".join(MSGS[:2]) + '; and drop the old session table too"'
    verdict = grade("verbatim_user_messages", _listed(kit, listed))
    assert verdict.status == "fail", verdict.reasons
    assert any("run the whole auth suite" in r for r in verdict.reasons), verdict.reasons
    last = grade("last_request_intact", _listed(kit, listed))
    assert last.status == "fail", last.reasons


# -- 2f. a short "now …" message starts a new task --------------------------------------------------------

FIRST_TASK = "Add pagination to the orders table, 20 rows per page"


def _now_case(kit, nxt, latest="now add CSV export"):
    msgs = [kit.user(FIRST_TASK), *kit.tool("Edit", {"file_path": "src/orders.py", "old_string": "a", "new_string": "b"}),
            kit.say("Pagination is in."), kit.user(latest)]
    return kit.case(msgs, kit.summary({**dict.fromkeys(kit.SECTION_KINDS, "x"),
                                       "user_messages": f'- "{FIRST_TASK}"\n- "{latest}"', "next": nxt}))


def test_a_short_now_message_is_a_new_task_quoting_the_old_one_is_drift(grade, kit):
    verdict = grade("next_step_quote", _now_case(kit, f'Continue with: "{FIRST_TASK}"'))
    assert verdict.status == "fail", verdict.reasons


@pytest.mark.parametrize("nxt, latest", [
    ('Add the CSV export, as asked: "now add CSV export"', "now add CSV export"),
    (f'Finish it: "{FIRST_TASK}"', "now do it"),                   # a go-ahead: the request before it
    (f'Finish it: "{FIRST_TASK}"', "then commit it"),              # speaks of the running work
])
def test_the_new_task_quoted_or_a_go_ahead_passes(grade, kit, nxt, latest):
    verdict = grade("next_step_quote", _now_case(kit, nxt, latest))
    assert verdict.status == "pass", verdict.reasons


# -- 2g. the tools that cannot run tests -------------------------------------------------------------------


def test_tools_that_cannot_run_tests_leave_the_last_run_judged():
    from pytest_ctxeval.core.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage
    from pytest_ctxeval.reading.test_claims import TOOLS_THAT_CANNOT_RUN_TESTS, last_test_run

    ids = iter(range(1000))

    def run(name, command=""):
        n = next(ids)
        use = ToolUseBlock(id=f"t{n}", name=name, input={"command": command} if command else {})
        return [AssistantMessage(uuid=f"a{n}", content=[use]),
                UserMessage(uuid=f"r{n}", content=[ToolResultBlock(tool_use_id=use.id, content=(
                    "FAILED tests/test_a.py::test_x - assert 1 == 2\n1 failed in 0.1s" if "pytest" in command else "ok"))])]

    failing = run("Bash", "pytest tests/test_a.py")
    assert "Bash" not in TOOLS_THAT_CANNOT_RUN_TESTS   # a shell can: its command decides
    for name in sorted(TOOLS_THAT_CANNOT_RUN_TESTS):
        assert last_test_run(failing + run(name)) is not None, name
    assert last_test_run(failing + run("Bash", "cat tests/test_a.py")) is not None
    assert last_test_run(failing + run("Bash", "make check")) is None        # may run them another way
    assert last_test_run(failing + run("Task")) is None                      # a subagent may run them
