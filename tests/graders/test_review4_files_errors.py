"""Review 4, G7/G12/G13/G17/G19: what a summary must tell of a pasted error, of a changed file and of
a dead service. Synthetic sessions; each rule is shown passing a good summary and failing a bad one
with a reason that says what is missing."""

from __future__ import annotations

import pytest

from pytest_ctxeval.reading.extract import file_ledger
from pytest_ctxeval.reading.paste_error import content_free_tail, error_told, last_error_line
from pytest_ctxeval.reading.verbatim import normalize

ROOT = "/home/me/shop"
VIEWS = f"{ROOT}/src/shop/views.py"
FRAMES = "\n".join(f'  File "{ROOT}/.venv/lib/python3.12/site-packages/flask/app.py", line {900 + i}, in wsgi_app\n'
                   "    response = self.full_dispatch_request()" for i in range(10))
ERROR = "KeyError: 'SHOP_SECRET'"
LEAD = "the server will not start after the rebase:"


def _paste(tail: str = "") -> str:
    return (f"{LEAD}\n\nTraceback (most recent call last):\n{FRAMES}\n  File \"{ROOT}/src/shop/settings.py\", "
            f"line 4, in <module>\n    SECRET = os.environ['SHOP_SECRET']\n{ERROR}" + (f"\n\n{tail}" if tail else ""))


def _paste_case(kit, item: str, tail: str = "any idea?"):
    messages = [kit.user("add a coupon field to the checkout form"), kit.say("Added."),
                kit.user(_paste(tail)), kit.say("SHOP_SECRET is unset; add it to .env.")]
    return kit.case(messages, kit.summary_of(user_messages=f'- "add a coupon field to the checkout form"\n   - {item}'))


# G17: the paste's error line outranks a short question typed after it


def test_a_content_free_question_after_a_paste_may_go_but_the_error_line_may_not(grade, kit):
    kept_error = f'"{LEAD} [traceback ending in {ERROR}]"'
    for grader in ("verbatim_user_messages", "last_request_intact"):
        good = grade(grader, _paste_case(kit, kept_error))
        assert good.status == "pass", good.reasons
    lost_error = f'"{LEAD} [long traceback pasted] any idea?"'
    for grader in ("verbatim_user_messages", "last_request_intact"):
        bad = grade(grader, _paste_case(kit, lost_error))
        assert bad.status == "fail" and "error line is not told" in bad.reasons[0] and "SHOP_SECRET" in \
            bad.reasons[0], bad.reasons


def test_a_tail_that_says_something_is_still_required_beside_the_error_line(grade, kit):
    tail = "it worked before I rebased onto main, so do not touch the settings module"
    bad = grade("verbatim_user_messages", _paste_case(kit, f'"{LEAD} [traceback ending in {ERROR}]"', tail))
    assert bad.status == "fail" and "typed after the paste is not there" in bad.reasons[0], bad.reasons
    good = grade("verbatim_user_messages", _paste_case(kit, f'"{LEAD} [traceback ending in {ERROR}] {tail}"', tail))
    assert good.status == "pass", good.reasons


def test_a_paste_without_a_lead_keeps_its_error_line_beside_the_typed_words(grade, kit):
    tail = "I think the secret should come from the vault, not the environment"
    text = f"Traceback (most recent call last):\n{FRAMES}\n{ERROR}\n\n{tail}"
    messages = [kit.user("add a coupon field to the checkout form"), kit.say("Added."), kit.user(text), kit.say("OK.")]
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    for item, status in ((f'"[traceback: {ERROR}] {tail}"', "pass"), (f'"[traceback] {tail}"', "fail")):
        bodies["user_messages"] = f'- "add a coupon field to the checkout form"\n   - {item}'
        verdict = grade("verbatim_user_messages", kit.case(messages, kit.summary(bodies)))
        assert verdict.status == status, (item, verdict.reasons)


@pytest.mark.parametrize("tail, free", [
    ("any idea?", True), ("thoughts?", True), ("help", True), ("what's going on here?", True),
    ("why is this happening?", True), ("fix it", False), ("any idea? it worked yesterday", False),
    ("don't touch prod", False), ("please use the vault for the secret", False),
])
def test_content_free_tails(tail, free):
    assert content_free_tail(tail) is free


def test_the_error_line_is_the_one_that_says_what_went_wrong():
    assert last_error_line(_paste()) == ERROR
    assert last_error_line("error[E0308]: mismatched types\n --> src/a.rs:3:5\nerror: aborting due to 1 "
                           "previous error") == "error[E0308]: mismatched types"
    assert last_error_line("logCapturedError @ chunk-9.js:15346\nprintWarning @ chunk-9.js:2338") == ""
    assert error_told(ERROR, "traceback ending in keyerror on shop_secret", normalize)
    assert not error_told(ERROR, "traceback ending in a keyerror", normalize)


# G7: everyday words that say a changed file was left alone


@pytest.mark.parametrize("said", [
    "examined to understand the parser; no edits needed", "reviewed, looks fine as is", "no changes required",
    "left as is", "read it, nothing to change",
])
def test_a_changed_file_named_only_as_not_needing_edits_is_not_told(grade, kit, said):
    messages = [kit.user("fix the coupon rounding")]
    messages += kit.tool("Edit", {"file_path": VIEWS, "old_string": "a = 1", "new_string": "a = 2"}, "updated")
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies["files"] = f"- src/shop/views.py: {said}"
    bad = grade("files_preserved", kit.case(messages, kit.summary(bodies)))
    assert bad.status == "fail" and "named only as not changed" in bad.reasons[0], bad.reasons
    for told in ("rounded the coupon total; no further changes needed", "rounded the coupon total, the rest left as is"):
        bodies["files"] = f"- src/shop/views.py: {told}"
        good = grade("files_preserved", kit.case(messages, kit.summary(bodies)))
        assert good.status == "pass", (told, good.reasons)


# G19: a file named only in the person's quoted words


def test_a_changed_file_named_only_in_a_quote_of_the_person_is_not_told(grade, kit):
    ask = "write the regression test in tests/test_coupons.py and then open a PR"
    messages = [kit.user(ask)]
    messages += kit.tool("Write", {"file_path": f"{ROOT}/tests/test_coupons.py", "content": "def test(): ..."},
                         "File created successfully")
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies["files"] = "- none yet"
    bodies["user_messages"] = f'- "{ask}"'
    bodies["next"] = f'Open the PR, as the user asked: "{ask}".'
    bad = grade("files_preserved", kit.case(messages, kit.summary(bodies)))
    assert bad.status == "fail" and "person's own words" in bad.reasons[0], bad.reasons
    bodies["current"] = "Wrote tests/test_coupons.py with the regression test."
    good = grade("files_preserved", kit.case(messages, kit.summary(bodies)))
    assert good.status == "pass", good.reasons


# G12: a service that did not answer


def test_a_refused_connection_from_curl_is_an_error(grade, kit):
    refused = "curl: (7) Failed to connect to localhost port 8000 after 0 ms: Connection refused"
    messages = [kit.user("check the dev server is up")]
    messages += kit.tool("Bash", {"command": "curl -s localhost:8000/health"}, f"Exit code 7\n{refused}", is_error=True)
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bad = grade("errors_preserved", kit.case(messages, kit.summary(bodies)))
    assert bad.status == "fail" and "Connection refused" in bad.reasons[0], bad.reasons
    bodies["errors"] = f"- `curl localhost:8000/health` failed: {refused}; the dev server is down"
    good = grade("errors_preserved", kit.case(messages, kit.summary(bodies)))
    assert good.status == "pass", good.reasons


def test_curl_answered_not_found_is_still_a_lookup(grade, kit):
    messages = [kit.user("is the export endpoint there?")]
    messages += kit.tool("Bash", {"command": "curl -sf localhost:8000/export"},
                         "Exit code 22\ncurl: (22) The requested URL returned error: 404", is_error=True)
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    assert grade("errors_preserved", kit.case(messages, kit.summary(bodies))).status != "fail"


# G13: MCP filesystem tools


@pytest.mark.parametrize("tool, args, changed", [
    ("mcp__filesystem__write_file", {"path": f"{ROOT}/src/shop/flags.json", "content": "{}"}, f"{ROOT}/src/shop/flags.json"),
    ("mcp__filesystem__edit_file", {"path": f"{ROOT}/src/shop/urls.py", "edits": []}, f"{ROOT}/src/shop/urls.py"),
    ("mcp__filesystem__move_file", {"source": f"{ROOT}/src/shop/a.py", "destination": f"{ROOT}/src/shop/b.py"},
     f"{ROOT}/src/shop/b.py"),
    ("mcp__desktop-commander__write_file", {"path": f"{ROOT}/README.md", "content": "x"}, f"{ROOT}/README.md"),
])
def test_files_written_through_mcp_tools_are_changed(grade, kit, tool, args, changed):
    messages = [kit.user("set up the feature flags")] + kit.tool(tool, args, "Successfully wrote")
    assert changed in file_ledger(messages).changed()
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bad = grade("files_preserved", kit.case(messages, kit.summary(bodies)))
    assert bad.status == "fail" and changed in bad.reasons[0], bad.reasons
    bodies["files"] = f"- {changed}: written"
    assert grade("files_preserved", kit.case(messages, kit.summary(bodies))).status == "pass"


@pytest.mark.parametrize("tool, args", [
    ("mcp__filesystem__read_file", {"path": f"{ROOT}/src/shop/urls.py"}),
    ("mcp__filesystem__create_directory", {"path": f"{ROOT}/src/shop/new"}),
    ("mcp__github__create_or_update_file", {"owner": "me", "repo": "shop", "path": "README.md", "content": "x"}),
    ("mcp__memory__create_entities", {"entities": []}),
])
def test_other_mcp_calls_change_no_file(kit, tool, args):
    messages = [kit.user("look around")] + kit.tool(tool, args, "ok")
    assert file_ledger(messages).changed() == []
