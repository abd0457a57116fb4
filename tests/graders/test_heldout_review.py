"""A held-out set of defective and good summaries, written by hand by a reviewer (not derived from
the mutation operators), and the rates the rule graders reach on it.

Each case edits the summary the reference engine wrote for a built-in scenario the way a real model
plausibly would: a defective variant breaks exactly one invariant (a user message paraphrased or
abridged, an old request quoted as the next step, a file renamed, an error reduced to a vague phrase,
an open todo marked done, a constraint softened, a failed approach proposed again, a dropped intent
revived in varied wording, sections merged or renamed, the analysis kept, the continuation text
missing...). A good variant is what a careful model might write instead and must pass every rule
grader that passes the original summary.

Asserted: every defective case is caught by its grader (>= 95 % per grader, each grader with >= 5
cases) and no good case raises a false alarm. Each case also checks its own premise: the target grader
passes the unedited summary, and the edit applies.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections import defaultdict
from pathlib import Path

import pytest

from pytest_ctxeval.grading.registry import cases_from_run
from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.runner import run_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
# One worker grades each defect once for its own test and for the rates test (conftest.py: loadgroup).
pytestmark = pytest.mark.xdist_group("heldout_review")

REGISTRY = load_graders()
RULES = [s for s in REGISTRY if s.kind == "rule"]

# ---------------------------------------------------------------------------------------------
# The cases: (id, scenario, compaction index, target grader, 'bad'|'good', edits, summary-message edit)

A, D, E, M = "auth_refactor", "debug_failing_test", "evolving_todos", "migrations_constraint"
L = -1
AM = '"Delete that leftover _SESSIONS dict too, then write a short section on the Redis session settings in docs/auth.md."'
MR = '"Thanks, I\'ll forward that. Now run the whole orders test suite."'
# (id, scenario, compaction index, target grader, 'bad'|'good', edits, msg-edit)
C = []
def bad(i, s, g, edits, idx=L, msg=None): C.append((i, s, idx, g, "bad", edits, msg))
def good(i, s, edits, idx=L, msg=None): C.append((i, s, idx, None, "good", edits, msg))

V = "verbatim_user_messages"
bad("v-one-word", A, V, [(6, "14-day sliding expiry", "14-day rolling expiry")])
bad("v-sentence-dropped", A, V, [(6, "We can't revoke JWTs before they expire. ", "")])
# Merged with only the case and a full stop changed, both messages are still verbatim under the policy
# (case, quotes and whitespace do not count, a fixed typo is kept); a merge that rewords the join loses words.
bad("v-merged", A, V, [(6, 'Redis keys."\n   - "Now move', 'Redis keys, and then they wanted to move')])
bad("v-paraphrase", A, V, [(6, AM, '"Delete the leftover _SESSIONS dict, then document the Redis session settings in docs/auth.md."')])
bad("v-dropped-short", A, V, [(6, '   - "Good. Also set a 14-day sliding expiry on the Redis keys."\n', "")])
bad("v-spelling", A, V, [(6, "32 bytes, urlsafe", "32 bytes, URL-safe")])
bad("v-ok-dropped", M, V, [(6, '   - "Fine."\n', "")])
bad("v-abridged-ellipsis", E, V, [(6, "finance is moving to the BI dashboard and we are removing CSV exports everywhere next quarter. ", "[…] ")])
bad("v-summarised-list", D, V, [(6, '"Stop guessing. Get the full stack trace and read the code where the KeyError is raised."', 'The user asked for the full stack trace.')])
# Lower-casing alone is accepted by the policy (verbatim matching ignores case); lower-cased and abridged is not.
bad("v-lowercased", M, V, [(6, '"Reject codes with spaces with a 400, not a 500."', '"reject codes with spaces with a 400"')])

N = "next_step_quote"
bad("n-older-user", A, N, [(9, AM, '"Now move every other reader of the old in-process _SESSIONS dict to the Redis store: the middleware, the logout view, the admin impersonation endpoint and the websocket handshake."')])
bad("n-first-request", D, N, [(9, '"Also add a regression test for the legacy fallback in tests/cache/test_keys.py."', '"tests/test_checkout.py::test_apply_coupon started failing after the cache refactor. Find out why and fix it without changing the test."')])
bad("n-no-quote", M, N, [(9, 'Continue with the most recent request, quoted verbatim: ' + MR, 'Run the whole orders test suite and report the result.')])
bad("n-paraphrased-quote", A, N, [(9, AM, '"Delete the leftover dict, then document the Redis settings in docs/auth.md."')])
bad("n-older-assistant", A, N, [(9, 'Continue with the most recent request, quoted verbatim: ' + AM, 'Continue from where I was: "All 36 auth tests pass with Redis-backed sessions and a 14-day sliding expiry."')])
bad("n-older-in-french", E, N, [(9, '"Stop here for today; the email goes in tomorrow."', '"Round totals to whole euros in the PDF only."')])

F = "files_preserved"
bad("f-dropped", A, F, [(3, "   - src/auth/session_ids.py — written\n", ""), (None, "from src/auth/session_ids.py", "from the ids module")])
bad("f-renamed", A, F, [(None, "src/auth/session_ids.py", "src/auth/session_id.py")])
bad("f-vague", A, F, [(3, "   - src/auth/sessions.py — edited", "   - the sessions module — edited")])
# A file named anywhere in the summary is kept (sections 5 and 6 name src/cache/keys.py too): renamed everywhere.
bad("f-dropped-2", D, F, [(None, "src/cache/keys.py", "the cache key helpers")])
bad("f-only-in-8", M, F, [(3, "   - src/shop/orders/codes.py — written\n", "")])
bad("f-ext-changed", E, F, [(3, "src/reports/revenue/breakdown.py", "src/reports/revenue/breakdown.ts")])

R = "errors_preserved"
# An error told in section 5 is kept ("The last failure was Bash: ..."): dropped from sections 4 and 5.
bad("e-dropped", A, R, [(4, "   - Bash (pytest -q) failed: redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. Connection refused. — fixed: a later call succeeded\n", ""),
                        (5, " The last failure was Bash: redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. Connection refused. — work continued after it.", "")])
# Section 5 repeats the key line: made vague everywhere.
bad("e-vague", A, R, [(None, "redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. Connection refused.", "could not connect to Redis")])
bad("e-assert-vague", D, R, [(4, "AssertionError: assert 100.0 == 80.0", "the discount was not applied")])
bad("e-keyerror-vague", E, R, [(4, "KeyError: 'XK'", "a KeyError for Kosovo")])
bad("e-none", D, R, [(4, None, None)])  # section 4 replaced by '- None.'

P = "pending_tasks"
bad("p-dropped", E, P, [(7, "   - Email the report to finance on the 1st\n", "")], idx=0)
bad("p-marked-done", E, P, [(7, "   - Email the report to finance on the 1st", "   - [x] Email the report to finance on the 1st")], idx=0)
bad("p-struck", E, P, [(7, "   - Email the report to finance on the 1st", "   - ~~Email the report to finance on the 1st~~")], idx=0)
bad("p-done-suffix", E, P, [(7, "   - Email the report to finance on the 1st", "   - Email the report to finance on the 1st (done)")], idx=0)
# Section 8 tells the task in progress ("the email to finance@ with the CFO in cc is next"), which the policy
# accepts: made vague there too (p-none likewise).
bad("p-vague", E, P, [(7, "   - Email the report to finance@ on the 1st, cc the CFO", "   - Finish the remaining delivery work"),
                      (8, "Everything but the email is done; the email to finance@ with the CFO in cc is next.", "Everything but one task is done.")])
bad("p-none", E, P, [(7, "   - Email the report to finance@ on the 1st, cc the CFO", "   - None."),
                     (8, "Everything but the email is done; the email to finance@ with the CFO in cc is next.", "Everything but one task is done.")])
bad("p-completed-word", E, P, [(7, "   - Render the PDF with the chart before the totals", "   - Render the PDF with the chart before the totals — completed")], idx=0)

S = "no_superseded_work"
bad("s-pending-item", E, S, [(7, "   - Email the report", "   - Add the CSV export for the monthly report\n   - Email the report")])
bad("s-hedged-9", E, S, [(9, '"Stop here for today; the email goes in tomorrow."', '"Stop here for today; the email goes in tomorrow." If time permits, we might also add a CSV export alongside the PDF.')])
bad("s-current-work", E, S, [(8, "Last tool calls:", "The CSV export still needs to be written.\n   Last tool calls:")])
bad("s-conditional", E, S, [(9, '"Stop here for today; the email goes in tomorrow."', '"Stop here for today; the email goes in tomorrow." Once the email is in, consider bringing the CSV export back for finance.')])
bad("s-list-status", E, S, [(7, "   - Email the report", "   - CSV export (not started)\n   - Email the report")])
bad("s-jwt-issuing", A, S, [(9, 'Continue with the most recent request, quoted verbatim: ' + AM, 'Next, finish making logins issue JWT access tokens from the login view, as the user first asked.')])
bad("s-jwt-plan", A, S, [(7, "   - None.", "   - Make logins issue JWT access tokens as originally planned")])
bad("s-french", E, S, [(9, '"Stop here for today; the email goes in tomorrow."', '"Stop here for today; the email goes in tomorrow." Ensuite : ajouter le CSV export du rapport.')])
bad("s-embedded", E, S, [(8, "Last tool calls:", "Wiring the email next, then the CSV export for finance.\n   Last tool calls:")])

I = "last_request_intact"
bad("l-pleasantry-dropped", M, I, [(None, MR, '"Now run the whole orders test suite."')])
bad("l-part-dropped", A, I, [(None, AM, '"Delete that leftover _SESSIONS dict too."')])
bad("l-half", E, I, [(None, '"Stop here for today; the email goes in tomorrow."', '"Stop here for today."')])
bad("l-path-dropped", D, I, [(None, '"Also add a regression test for the legacy fallback in tests/cache/test_keys.py."', '"Also add a regression test for the legacy fallback."')])
bad("l-one-word", A, I, [(None, "write a short section", "write a brief section")])

K = "constraints_preserved"
bad("k-softened", M, K, [(None, "never touch the migrations folder (src/shop/migrations/)", "try to avoid the migrations folder (src/shop/migrations/) where possible"), (5, "I will not create or edit anything under src/shop/migrations/, and ", "")])
bad("k-inverted", M, K, [(None, "never touch the migrations folder (src/shop/migrations/)", "you may touch the migrations folder (src/shop/migrations/) when needed"), (5, "I will not create or edit anything under src/shop/migrations/, and ", "")])
bad("k-dropped", M, K, [(None, "One rule for this whole session: never touch the migrations folder (src/shop/migrations/). ", ""), (5, "I will not create or edit anything under src/shop/migrations/, and ", "")])
bad("k-api-dropped", A, K, [(None, " Keep the public API of src/auth/service.py unchanged.", "")])
bad("k-api-inverted", A, K, [(None, "Keep the public API of src/auth/service.py unchanged.", "Feel free to change the public API of src/auth/service.py.")])
bad("k-fixture-softened", D, K, [(None, "don't touch the fixture", "avoid the fixture if you can")])

X = "failed_approaches_preserved"
bad("x-dropped", D, X, [(5, "   - cache.clear() did not help: the same KeyError, so nothing stale is involved. Reverting it.\n", "")])
bad("x-neutral", D, X, [(5, "   - cache.clear() did not help: the same KeyError, so nothing stale is involved. Reverting it.\n", ""), (5, "Findings along the way (the assistant's own words):\n", "Findings along the way (the assistant's own words):\n   - Tried cache.clear() before the lookup.\n")])
bad("x-retry-9", D, X, [(9, '"Also add a regression test for the legacy fallback in tests/cache/test_keys.py."', '"Also add a regression test for the legacy fallback in tests/cache/test_keys.py." If the fallback misbehaves, retry cache.clear() before the lookup.')])
bad("x-retry-7", D, X, [(7, "   - None.", "   - Try code.upper() in the lookup once more")])
bad("x-success", D, X, [(5, "   - code.upper() did not change anything either: SUMMER24 was already upper-case. Reverting it too.\n", "   - code.upper() fixed the case mismatch.\n")])
bad("x-retry-8", D, X, [(8, "Last tool calls:", "Next I would put coupons.get(key) back with a default.\n   Last tool calls:")])

NS = "nine_sections"
bad("ns-dropped-5", A, NS, [(None, "5. Problem Solving:", "")])
bad("ns-merged-78", A, NS, [(None, "7. Pending Tasks:\n   - None.\n\n8. Current Work:", "7. Pending Tasks and Current Work:\n   - None.")])
bad("ns-renamed-4", D, NS, [(None, "4. Errors and fixes:", "4. Notes:")])
bad("ns-empty-2", M, NS, [(None, "   - Tools used: Bash x4, Edit x3, Read x3, Write x1\n   - File types: .py\n", "")])
bad("ns-reordered", E, NS, [(None, "2. Key Technical Concepts:", "@@2"), (None, "3. Files and Code Sections:", "2. Key Technical Concepts:"), (None, "@@2", "3. Files and Code Sections:")])

AS = "analysis_stripped"
bad("a-kept", A, AS, [(None, "1. Primary Request and Intent:", "<analysis>\nLet me walk through the conversation chronologically. The user first asked for JWT.\n</analysis>\n\n1. Primary Request and Intent:")])
bad("a-plain", D, AS, [(None, "1. Primary Request and Intent:", "Analysis:\nGoing through the conversation: the user reported a failing test, I tried three fixes.\n\n1. Primary Request and Intent:")])
bad("a-summary-tags", E, AS, [], msg=lambda s: s.replace("Summary:\n", "Summary:\n<summary>\n") + "\n</summary>")
bad("a-analysis-heading", M, AS, [(None, "1. Primary Request and Intent:", "## Analysis\nChronologically: discount codes, then the migrations rule, then the email.\n\n1. Primary Request and Intent:")])
bad("a-analysis-after", A, AS, [], msg=lambda s: s.replace("\n\nIf you need specific", "\n\n<analysis>I covered everything.</analysis>\n\nIf you need specific"))

CT = "continuation"
CONT = "Please continue the conversation from where we left off"
bad("c-no-path", A, CT, [], idx=0, msg=lambda s: s[:s.index("If you need specific")])
bad("c-no-continue", A, CT, [], idx=0, msg=lambda s: re.sub(r"Continue the conversation from where it left off[^\n]*", "", s))
bad("c-path-nosuffix", E, CT, [], idx=0, msg=lambda s: s.replace("read the full transcript at:", "see the transcript"))
bad("c-other-path", D, CT, [], idx=0, msg=lambda s: re.sub(r"[0-9a-f-]{36}\.jsonl", "00000000-0000-0000-0000-000000000000.jsonl", s))
bad("c-recap-instead", M, CT, [], idx=0, msg=lambda s: re.sub(r"Continue the conversation from where it left off[^\n]*", "Start by recapping the summary to the user and ask how to proceed.", s))

# ---------------- good variants (no grader may fail) --------------------------------
good("g-md-headings", A, [(None, f"\n{n}. ", f"\n## {n}. ") for n in range(2, 10)] + [(None, "1. Primary Request and Intent:", "## 1. Primary Request and Intent:")])
good("g-bold-titles", D, [(None, "4. Errors and fixes:", "**4. Errors and Fixes:**"), (None, "7. Pending Tasks:", "**7. Pending Tasks:**")])
good("g-reworded-title", E, [(None, "4. Errors and fixes:", "4. Errors and Fixes:"), (None, "3. Files and Code Sections:", "3. Files and code sections:")])
good("g-dropped-csv", E, [(7, "   - Email the report", "   - CSV export: dropped by the user (finance moves to the BI dashboard)\n   - Email the report")])
good("g-no-longer-wants", E, [(8, "Last tool calls:", "The user no longer wants the CSV export.\n   Last tool calls:")])
good("g-replaced", E, [(9, '"Stop here for today; the email goes in tomorrow."', '"Stop here for today; the email goes in tomorrow." (The CSV export was replaced by the per-region breakdown; nothing to do for it.)')])
good("g-jwt-dropped", A, [(8, "Last tool calls:", "JWT access tokens were abandoned in favour of Redis sessions.\n   Last tool calls:")])
good("g-dont-jwt", A, [(9, 'Continue with the most recent request, quoted verbatim: ', 'Nothing new is pending (do not go back to issuing JWT access tokens). The most recent request, quoted verbatim: ')])
good("g-next-blockquote", M, [(9, 'Continue with the most recent request, quoted verbatim: ' + MR, 'The most recent request was:\n   > ' + MR[1:-1] + '\n   The suite has passed (151 passed); nothing else is pending.')])
good("g-pending-checkbox", E, [(7, "   - Email the report to finance on the 1st", "   - [ ] Email the report to finance on the 1st (next)")], idx=0)
good("g-failed-struck", D, [(5, "   - code.upper() did not change anything either: SUMMER24 was already upper-case. Reverting it too.", "   - ~~code.upper()~~ — wrong: SUMMER24 was already upper-case; reverted.")])
good("g-failed-no-effect", D, [(5, "   - cache.clear() did not help: the same KeyError, so nothing stale is involved. Reverting it.", "   - cache.clear(): no effect (same KeyError), reverted.")])
good("g-files-backticks", A, [(3, "   - src/auth/middleware.py — edited", "   - `src/auth/middleware.py` (edited)"), (3, "   - docs/auth.md — edited", "   - **docs/auth.md** — edited")])
good("g-constraint-rephrased", M, [(1, "The user's first request:", "Constraint: never touch the migrations folder (src/shop/migrations/).\n   The user's first request:")])
good("g-compress-concepts", A, [(2, "   - File types: .py, .md\n", "")])
good("g-compress-findings", D, [(5, "   - Reading the cache store, page 1.\n   - Reading the cache store, page 2.\n   - Reading the cache store, page 3.\n", "   - Read the cache store (3 pages).\n")])
good("g-error-fixed-note", A, [(4, "Connection refused.", "Connection refused.\n     Fix: started the Redis from docker-compose; the integration tests pass.")])
good("g-not-done-pending", E, [(7, "   - Email the report to finance@ on the 1st, cc the CFO", "   - Email the report to finance@ on the 1st, cc the CFO (not done yet; tomorrow)")])
good("g-next-latest-embedded", D, [(9, 'Continue with the most recent request, quoted verbatim: ', 'The user\'s latest request was ')])
good("g-analysis-word", D, [(5, "   Findings along the way", "   Root-cause analysis: the key format changed.\n   Findings along the way")])

# ---------------- second batch ------------------------------------------------------
bad("v-clause-dropped", D, V, [(6, ", don't touch the fixture.", ".")])
bad("v-number-changed", A, V, [(6, "(32 bytes, urlsafe)", "(16 bytes, urlsafe)")])
bad("n-vague-no-quote", A, N, [(9, 'Continue with the most recent request, quoted verbatim: ' + AM, 'Carry on with the cleanup and the docs described above.')])
bad("s-plan-item", E, S, [(7, "   - Email the report", "   - Then: CSV export of the monthly report for finance\n   - Email the report")])
bad("s-german", E, S, [(9, '"Stop here for today; the email goes in tomorrow."', '"Stop here for today; the email goes in tomorrow." Danach den CSV export ergänzen.')])
bad("s-issue-jwt-call", A, S, [(9, 'Continue with the most recent request, quoted verbatim: ' + AM, 'Next: call issue_jwt(user) from the login view again.')])
bad("x-retry-hedged", D, X, [(9, '"Also add a regression test for the legacy fallback in tests/cache/test_keys.py."', '"Also add a regression test for the legacy fallback in tests/cache/test_keys.py." Maybe cache.clear() is worth another try if the fallback is slow.')])
bad("x-resolved", D, X, [(5, "   - cache.clear() did not help: the same KeyError, so nothing stale is involved. Reverting it.\n", "   - cache.clear() resolved the stale entries.\n")])
bad("k-negation-lost", M, K, [(None, "never touch the migrations folder (src/shop/migrations/)", "touch the migrations folder (src/shop/migrations/) as needed"), (5, "I will not create or edit anything under src/shop/migrations/, and ", "")])
bad("l-merged-paraphrase", E, I, [(None, '"Stop here for today; the email goes in tomorrow."', '"Looks right; stop here, the email comes tomorrow."')])
bad("ns-9-missing", A, NS, [(None, "\n9. Optional Next Step:\n   Continue with the most recent request, quoted verbatim: " + AM, "")])
bad("e-coupon-vague", D, R, [(4, "KeyError: 'coupon:SUMMER24'", "KeyError on the coupon key")])
# The type with the failing command ("Bash (pytest -q) failed: redis...ConnectionError"), or with the
# localhost:6379 section 5 names, keeps the error under the policy (its identifying tokens, or the command
# with its output); the type alone, everywhere, does not.
bad("e-type-only", A, R, [(None, "(pytest -q) failed: redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. Connection refused.", "failed: redis.exceptions.ConnectionError"),
                          (None, "redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. Connection refused.", "redis.exceptions.ConnectionError"),
                          (5, "expects a Redis on localhost:6379 and", "expects a Redis and")])
bad("p-emoji", E, P, [(7, "   - Email the report to finance on the 1st", "   - ✅ Email the report to finance on the 1st")], idx=0)
bad("p-colon-done", E, P, [(7, "   - Add a per-region breakdown table", "   - Add a per-region breakdown table: done")], idx=0)
bad("f-only-dir", A, F, [(None, "src/auth/session_ids.py", "src/auth/")])

good("g-partial-latest", A, [(9, AM, '"Delete that leftover _SESSIONS dict too" (done) and "write a short section on the Redis session settings in docs/auth.md" (done)')])
good("g-error-double-quotes", E, [(4, "KeyError: 'XK'", 'KeyError: "XK"')])
good("g-error-reworded-value", E, [(4, "failed: KeyError: 'XK'", "failed with KeyError 'XK' (Kosovo had no region; mapped to Europe)")])
good("g-pending-in-progress", E, [(7, "   - Email the report to finance on the 1st", "   - Email the report to finance on the 1st (in progress)")], idx=0)
good("g-pending-after-done", E, [(7, "   - Email the report to finance on the 1st", "   - Email the report to finance on the 1st, once the PDF layout is done")], idx=0)
good("g-superseded-history", E, [(8, "Last tool calls:", "Originally the user asked for a CSV export; that was dropped for the BI dashboard.\n   Last tool calls:")])
good("g-done-items-listed", E, [(7, "   - Add a per-region breakdown table", "   - [x] Decide the EUR conversion rate (ECB, last business day)\n   - Add a per-region breakdown table")], idx=0)


# ---------------- third batch: probes after the first fixes --------------------------------------
Q9 = '"Stop here for today; the email goes in tomorrow."'
bad("s-table", E, S, [(7, "   - Email the report to finance@ on the 1st, cc the CFO", "   | task | status |\n   |---|---|\n   | CSV export | todo |\n   | Email the report to finance@ on the 1st, cc the CFO | todo |")])
bad("s-reenable", E, S, [(9, Q9, Q9 + " Remaining after that: re-enable the CSV export.")])
bad("s-plural", E, S, [(7, "   - Email the report", "   - Add CSV exports for finance\n   - Email the report")])
bad("s-word-order", E, S, [(9, Q9, Q9 + " Next, export the report to CSV as well.")])
bad("s-word-order-7", E, S, [(7, "   - Email the report", "   - Export the monthly figures as CSV\n   - Email the report")])
bad("s-jwt-switch", A, S, [(9, 'Continue with the most recent request, quoted verbatim: ' + AM, 'Next: switch logins over to JWT access tokens.')])
bad("s-jwt-plural-brackets", A, S, [(7, "   - None.", "   - Have the login view issue JWTs (access tokens)")])
bad("x-dropped-all-reasons", D, X, [(5, "   - coupons.get(key) did not fix it: the KeyError is gone but the discount is not applied (assert 100.0 == 80.0), so the coupon is really missing, not just unguarded. Reverting that edit.\n", "   - Tried coupons.get(key).\n")])
bad("a-unclosed", A, AS, [(None, "1. Primary Request and Intent:", "<analysis>\nLet me walk through the conversation chronologically.\n\n1. Primary Request and Intent:")])
bad("n-latest-one-word", A, N, [(9, AM, '"Delete that leftover _SESSIONS dict too, then write a long section on the Redis session settings in docs/auth.md."')])
bad("v-reordered-words", M, V, [(6, '"In the admin, show the code in the list view but make it read-only."', '"Show the code in the list view of the admin but make it read-only."')])
bad("k-hedged-ideally", D, K, [(None, "without changing the test", "ideally without changing the test")])
bad("k-hedged-if-possible", A, K, [(None, "Keep the public API of src/auth/service.py unchanged.", "Keep the public API of src/auth/service.py unchanged if possible.")])
bad("k-hedged-try", M, K, [(None, "never touch the migrations folder (src/shop/migrations/)", "try to never touch the migrations folder (src/shop/migrations/)"), (5, "I will not create or edit anything under src/shop/migrations/, and ", "")])
bad("ns-renamed-6", A, NS, [(None, "6. All user messages:", "6. Conversation log:")])
bad("e-section-emptied", D, R, [(4, None, None)])

good("g-title-case-6", A, [(None, "6. All user messages:", "6. All User Messages:")])
good("g-latest-truncated", A, [(9, AM, '"Delete that leftover _SESSIONS dict too, then write a short section on the Redis session settings …"')])
good("g-table-dropped", E, [(7, "   - Email the report to finance@ on the 1st, cc the CFO", "   | task | status |\n   |---|---|\n   | CSV export | dropped by the user |\n   | Email the report to finance@ on the 1st, cc the CFO | open |")])
good("g-numbered-pending", E, [(7, "   - Email the report to finance@ on the 1st, cc the CFO", "   1. Email the report to finance@ on the 1st, cc the CFO")])
good("g-no-longer-export", E, [(8, "Last tool calls:", "The user no longer wants to export to CSV.\n   Last tool calls:")])
good("g-pdf-only-no-csv", E, [(8, "Last tool calls:", "Export the report as a PDF only, no CSV.\n   Last tool calls:")])
good("g-export-pdf-csv-gone", E, [(9, Q9, Q9 + " (Export goes to the BI dashboard instead of CSV.)")])
good("g-never-jwts", A, [(7, "   - None.", "   - None (never issue JWTs (access tokens) again: they cannot be revoked).")])
good("g-constraint-user-hedge-kept", M, [(1, "The user's first request:", "Rule: never touch the migrations folder (src/shop/migrations/); if a change needs one, give the DBA the field definitions.\n   The user's first request:")])
bad("p-under-done-heading", E, P, [(7, "   - Email the report to finance on the 1st", "   Done:\n   - Email the report to finance on the 1st")], idx=0)
bad("p-under-completed-bold", E, P, [(7, "   - Email the report to finance on the 1st", "   **Completed:**\n   - Email the report to finance on the 1st")], idx=0)
good("g-pending-after-done-heading", E, [(7, "   - Add a per-region breakdown table", "   Done:\n   - Decide the EUR rate (ECB)\n   Still open:\n   - Add a per-region breakdown table")], idx=0)
good("g-pending-md-subheadings", E, [(7, "   - Add a per-region breakdown table", "   ### Completed\n   - Decide the EUR rate (ECB)\n   ### Active\n   - Add a per-region breakdown table")], idx=0)
bad("p-under-md-completed", E, P, [(7, "   - Email the report to finance on the 1st", "   ### Completed\n   - Email the report to finance on the 1st")], idx=0)
good("g-constraint-restated", D, [(1, "The user's first request:", "Constraints: fix it without changing the test, and don't touch the fixture.\n   The user's first request:")])


# ---------------------------------------------------------------------------------------------
# Harness


@functools.cache
def _base(scenario: str, index: int):
    return cases_from_run(run_scenario(SCENARIOS / f"{scenario}.yaml"))[index]


def _span(text: str, number: int) -> tuple[int, int]:
    start = re.search(rf"(?m)^{number}\. ", text)
    assert start, f"section {number} not found"
    nxt = re.search(r"(?m)^\d\. ", text[start.end():])
    return start.start(), (start.end() + nxt.start()) if nxt else len(text)


def _apply(text: str, edits) -> str:
    """Each edit is (section number or None for the whole summary, old, new); old None empties the section."""
    for section, old, new in edits:
        if section is None:
            assert old in text, f"edit does not apply: {old!r}"
            text = text.replace(old, new)
            continue
        a, b = _span(text, section)
        part = text[a:b]
        if old is None:
            text = text[:a] + part.split("\n", 1)[0] + "\n   - None.\n\n" + text[b:]
            continue
        assert old in part, f"edit does not apply to section {section}: {old!r}"
        text = text[:a] + part.replace(old, new) + text[b:]
    return text


def _variant(case, edits, msg):
    summary = _apply(case.summary, edits)
    message = case.summary_message.replace(case.summary, summary)
    if msg is not None:
        message = msg(message)
        assert message != case.summary_message.replace(case.summary, summary), "message edit does not apply"
    return dataclasses.replace(case, summary=summary, summary_message=message)


def _grade(case):
    return {v.grader: v for v in REGISTRY.run(case, RULES)}


#: id of a C entry (module constants, alive to the end) -> its outcome: each entry is graded once
#: per process, for its own test and for test_rates_per_grader (the module is one xdist group).
_OUTCOMES: dict[int, tuple[dict, dict]] = {}


def _outcome(entry):
    held = _OUTCOMES.get(id(entry))
    if held is None:
        cid, scenario, index, target, kind, edits, msg = entry
        base = _base(scenario, index)
        held = _OUTCOMES[id(entry)] = (_base_grades(scenario, index), _grade(_variant(base, edits, msg)))
    return held


@functools.cache
def _base_grades(scenario: str, index: int):
    return _grade(_base(scenario, index))


BAD = [c for c in C if c[4] == "bad"]
GOOD = [c for c in C if c[4] == "good"]


@pytest.mark.parametrize("entry", BAD, ids=[f"{c[3]}-{c[0]}" for c in BAD])
def test_defective_variant_is_caught(entry):
    cid, target = entry[0], entry[3]
    original, verdicts = _outcome(entry)
    assert original[target].status == "pass", f"premise: {target} passes the unedited summary"
    v = verdicts[target]
    assert v.status == "fail", f"{cid}: {target} missed the defect ({v.status}: {v.reasons[:1]})"
    assert v.reasons and v.reasons[0].strip(), "a failure says why"


@pytest.mark.parametrize("entry", GOOD, ids=[c[0] for c in GOOD])
def test_good_variant_raises_no_false_alarm(entry):
    original, verdicts = _outcome(entry)
    alarms = {n: v.reasons[:1] for n, v in verdicts.items() if v.status == "fail" and original[n].status == "pass"}
    assert not alarms, f"{entry[0]}: false alarms {alarms}"


def test_rates_per_grader():
    """>= 95 % caught per grader, every grader with >= 5 cases, 0 false alarms over the good set."""
    caught, total = defaultdict(int), defaultdict(int)
    for entry in BAD:
        _, verdicts = _outcome(entry)
        total[entry[3]] += 1
        caught[entry[3]] += verdicts[entry[3]].status == "fail"
    assert set(total) >= {"verbatim_user_messages", "next_step_quote", "files_preserved", "errors_preserved",
                          "pending_tasks", "no_superseded_work", "last_request_intact", "constraints_preserved",
                          "failed_approaches_preserved", "nine_sections", "analysis_stripped", "continuation"}
    rates = {g: (caught[g], total[g]) for g in total}
    assert all(n >= 5 for _, n in rates.values()), rates
    assert all(k / n >= 0.95 for k, n in rates.values()), rates
    alarms = sum(any(v.status == "fail" and o[n].status == "pass" for n, v in r.items())
                 for o, r in map(_outcome, GOOD))
    assert len(GOOD) >= 20 and alarms == 0


# -- the two classes this review fixed, shown on their own ----------------------------------------


def test_open_todo_marked_done_is_not_kept():
    base = _base(E, 0)
    for mark in ("[x] {}", "~~{}~~", "{} (done)", "{} — completed", "✅ {}", "{}: done"):
        text = mark.format("Email the report to finance on the 1st")
        v = _grade(_variant(base, [(7, "Email the report to finance on the 1st", text)], None))["pending_tasks"]
        assert v.status == "fail" and "marked as done" in v.reasons[0], (mark, v.reasons)
    for mark in ("[ ] {}", "{} (not done yet)", "{}, once the PDF layout is done", "{} (in progress)"):
        text = mark.format("Email the report to finance on the 1st")
        v = _grade(_variant(base, [(7, "Email the report to finance on the 1st", text)], None))["pending_tasks"]
        assert v.status == "pass", (mark, v.reasons)


def test_short_quoted_value_of_an_error_line_is_required():
    base = _base(E, L)
    v = _grade(_variant(base, [(4, "KeyError: 'XK'", "a KeyError for Kosovo")], None))["errors_preserved"]
    assert v.status == "fail" and "KeyError: 'XK'" in v.reasons[0]
    for kept in ('KeyError: "XK"', "KeyError 'XK' (Kosovo had no region)", "KeyError `XK`"):
        v = _grade(_variant(base, [(4, "KeyError: 'XK'", kept)], None))["errors_preserved"]
        assert v.status == "pass", (kept, v.reasons)


def test_softened_constraint_is_not_kept():
    base = _base(D, L)
    for soft in ("ideally without changing the test", "without changing the test if possible",
                 "try to fix it without changing the test"):
        v = _grade(_variant(base, [(None, "without changing the test", soft)], None))["constraints_preserved"]
        assert v.status == "fail" and "without changing the test" in v.reasons[0], (soft, v.reasons)
    # A hedge the person said themselves ("if a change needs one") is part of their rule, not a softening.
    base = _base(M, L)
    v = _grade(_variant(base, [(1, "The user's first request:", "Rule: never touch the migrations folder "
                                "(src/shop/migrations/) if needed.\n   The user's first request:")], None))
    assert v["constraints_preserved"].status == "pass"


def test_superseded_intent_in_other_word_order_or_plural():
    from pytest_ctxeval.reading.proposals import mention_pattern

    csv, jwt = mention_pattern("CSV export"), mention_pattern("issue JWT access tokens")
    for text in ("export the report to CSV", "Export the monthly figures as CSV", "add CSV exports"):
        assert csv.search(text), text
    for text in ("export the PDF, no CSV", "export the PDF and not CSV",
                 "export the figures to the BI dashboard for finance and CSV"):
        assert not csv.search(text), text
    assert jwt.search("issue JWTs (access tokens)") and jwt.search("JWT access tokens")
    assert not jwt.search("JWT refresh tokens")
