"""errors_preserved keeps an error told by its failing command and its cause, in plain words, without
the exception text (review finding F11): "`npm test -- orders` failed: the retry helper was not
imported" tells "TypeError: retry is not a function". The command alone, or with words any error
says, does not."""

from __future__ import annotations

import pytest

from pytest_ctxeval.reading.session_facts import _subject_words

OUTPUT = ("> app@1.0.0 test\n> jest orders\n\nFAIL src/sync/orders.test.ts\n  ● fetch_orders › retries on 503\n\n"
          "    TypeError: retry is not a function\n\n      at fetchOrders (src/sync/orders.ts:12:10)\n\n"
          "Tests: 1 failed, 3 passed, 4 total")


def _case(kit, errors_body):
    messages = [kit.user("The order sync drops orders on a 503. Make it retry.")]
    messages += kit.tool("Bash", {"command": "npm test -- orders"}, OUTPUT, is_error=True)
    messages += kit.tool("Edit", {"file_path": "/app/src/sync/orders.ts", "old_string": "export", "new_string":
                                  "import { retry } from './retry';\nexport"})
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies["files"] = "- src/sync/orders.ts: imports retry"
    bodies["errors"] = errors_body
    return kit.case(messages, kit.summary(bodies))


def test_the_failing_command_and_its_cause_keep_the_error(grade, kit):
    good = "- `npm test -- orders` failed: the retry helper was not imported. Fixed by adding the import."
    verdict = grade("errors_preserved", _case(kit, good))
    assert verdict.status == "pass", verdict.reasons


@pytest.mark.parametrize("bad", [
    "- The tests failed; fixed.",                                             # neither command nor cause
    "- `npm test -- orders` failed; fixed it.",                               # the command alone
    "- `npm test -- orders` failed: a function was not defined; fixed.",      # words any error says
    "- Added the missing retry import.",                                      # the cause, no failing command
])
def test_the_command_or_the_cause_alone_does_not(grade, kit, bad):
    verdict = grade("errors_preserved", _case(kit, bad))
    assert verdict.status == "fail", bad
    assert "\"TypeError: retry is not a function\"" in verdict.reasons[0]


def test_subject_words():
    assert _subject_words("TypeError: retry is not a function", "npm test -- orders") == {"retry"}
    # the command's own words, and words every error says, are not the subject
    assert _subject_words("orders: expected value to be defined", "npm test -- orders") == set()
    assert _subject_words("sqlite3.OperationalError: no such table: sessions", "pytest -q") == {"sessions"}
