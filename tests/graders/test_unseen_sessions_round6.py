"""Grader classes found on more real Claude Code summaries the project had not seen (round 6: a
2.1.205 Go session, resumed and compacted by hand with a preserved segment, whose section 3 named four
ADRs as ``docs/adr/0006-0009`` and whose section 6 listed two messages in a row in one quote, ``"… 3.
New / try again"``; a 2.1.251 Python session compacted by a ``/compact`` queued mid-turn, whose
section 3 named an amended RFC as ``spec/RFC-0001-*.md`` and whose section 4 kept the errors' own
messages without the test runner's frame), rebuilt as transcripts from the sessions' records and
summaries, graded with ``ctxeval grade -v`` and read by hand. Each test is a hand-built case of the
class, in words written for the test: the good summary passes, the defective one fails with a reason
that names what is wrong."""

from __future__ import annotations

from pytest_ctxeval.reading.error_message import message_of, message_in_testify_block
from pytest_ctxeval.reading.extract import file_mentioned, key_error_line
from pytest_ctxeval.reading.file_shorthand import named_by_pattern


def _s(kit, **bodies: str) -> str:
    base = {k: "x" for k in kit.SECTION_KINDS}
    base.update(bodies)
    return kit.summary(base)


def _files_case(kit, paths: list[str], files_body: str):
    messages = [kit.user("write down the decisions and wire them in")]
    for p in paths:
        messages += kit.tool("Write", {"file_path": p, "content": "x"})
    return kit.case(messages, _s(kit, files=files_body))


# --- files named by a numbered range or a glob -------------------------------------------------------

NOTES = [f"/srv/ledger/docs/decisions/{n}.md" for n in
         ("0011-keep-one-ledger", "0012-rounding-at-the-edge", "0013-no-soft-deletes")]
CODE = "/srv/ledger/src/post.py"


def test_numbered_files_named_by_their_folder_and_a_range(grade, kit):
    """A real 2.1.205 section 3 ended with ``**docs/adr/0006-0009** — the 4 fork ADRs``: four
    decision records written in the session, named by their folder and the range of their numbers.
    Each was reported as changed but not named (four false failures of one verdict)."""
    for told in ("- **docs/decisions/0011-0013** — the three ledger decisions",
                 "- docs/decisions/0011–0013: written and merged",
                 "- `docs/decisions/0011`, `docs/decisions/0012` and `docs/decisions/0013`"):
        verdict = grade("files_preserved", _files_case(kit, [*NOTES, CODE], f"{told}\n- src/post.py — posting"))
        assert verdict.status == "pass", (told, verdict.reasons)
    # a range that stops short leaves the last record unnamed, and the reason names it
    short = grade("files_preserved", _files_case(kit, [*NOTES, CODE], "- docs/decisions/0011-0012\n- src/post.py"))
    assert short.status == "fail" and len(short.reasons) == 1, short.reasons
    assert short.reasons[0].startswith(NOTES[2] + " was changed")


def test_a_number_names_a_file_only_in_its_own_folder_and_written_alike():
    assert named_by_pattern(NOTES[1], "- docs/decisions/0011-0013", NOTES)
    assert not named_by_pattern(NOTES[1], "- docs/other/0011-0013", NOTES)     # another folder
    assert not named_by_pattern(NOTES[1], "- docs/decisions/11-13", NOTES)     # not written as the name writes it
    assert not named_by_pattern(CODE, "- src/0001-0099", [CODE])               # not a numbered file


RFC = "/srv/spec/spec/RFC-0001-capability-names.md"


def test_a_glob_names_the_one_changed_file_it_matches(grade, kit):
    """A real 2.1.251 section 3 named an RFC the session amended as ``spec/RFC-0001-*.md`` (and the
    new one in full): the amended file was reported as not named."""
    paths = [RFC, "/srv/spec/spec/RFC-0002-reliability.md"]
    good = "- **`spec/RFC-0002-reliability.md`** (new)\n- **`spec/RFC-0001-*.md`** — gained two sections"
    verdict = grade("files_preserved", _files_case(kit, paths, good))
    assert verdict.status == "pass", verdict.reasons
    # a glob that matches both files names neither: the amended one is reported
    loose = "- **`spec/RFC-0002-reliability.md`** (new)\n- `spec/RFC-*.md` — both touched"
    verdict = grade("files_preserved", _files_case(kit, paths, loose))
    assert verdict.status == "fail" and verdict.reasons[0].startswith(RFC + " was changed"), verdict.reasons


def test_a_glob_without_a_literal_lead_names_nothing():
    assert file_mentioned(RFC, "- spec/RFC-0001-*.md", [RFC])
    assert not file_mentioned(RFC, "- spec/*.md", [RFC])
    assert not file_mentioned(RFC, "- spec/RFC-0002-*.md", [RFC])


# --- two messages in a row listed in one quote -------------------------------------------------------

FIRST = "1. keep it close to upstream, 2. migrations run on boot. 3. New database"
RETRY = "try again"


def _listed_case(kit, listed: str):
    msgs = [kit.user(FIRST), *kit.tool("Bash", {"command": "gh issue comment 30"}, "HTTP 502", is_error=True),
            kit.user(RETRY), kit.say("Posted.")]
    return kit.case(msgs, _s(kit, user_messages=listed))


def test_two_messages_in_a_row_listed_in_one_quote_are_both_kept(grade, kit):
    """A real 2.1.205 section 6 listed a message and the short one typed right after it in one quote,
    apart by " / " (``"1. yeah close to headscale … 3. New / try again"``): the first was reported
    as not verbatim, its copy read as "words the person did not type" added."""
    verdict = grade("verbatim_user_messages", _listed_case(kit, f'- "{FIRST} / {RETRY}"'))
    assert verdict.status == "pass", verdict.reasons
    last = grade("last_request_intact", _listed_case(kit, f'- "{FIRST} / {RETRY}"'))
    assert last.status == "pass", last.reasons


def test_words_no_message_holds_still_count_as_added(grade, kit):
    added = grade("verbatim_user_messages", _listed_case(kit, f'- "{FIRST} / and rename it"\n- "{RETRY}"'))
    assert added.status == "fail" and "message 1 of 2" in added.reasons[0], added.reasons
    # the second message's words only inside the first's quote: not a message of its own
    alone = grade("verbatim_user_messages", _listed_case(kit, f'- "{FIRST} / {RETRY} later"'))
    assert alone.status == "fail", alone.reasons


# --- an error's message kept without the test runner's frame ----------------------------------------

TESTIFY = ("--- FAIL: TestImportLegacyRows (0.21s)\n"
           "        import_test.go:88: \n"
           "            \tError Trace:\t/srv/ledger/store/import_test.go:88\n"
           "            \tError:      \tReceived unexpected error:\n"
           "            \t            \t20240611: copying rows: no such column: ledger_id\n"
           "            \tTest:       \tTestImportLegacyRows\n"
           "FAIL\nFAIL\tledger/store\t0.412s")


def test_the_key_line_of_a_testify_block_is_its_error_field():
    assert key_error_line(TESTIFY) == "Received unexpected error: 20240611: copying rows: no such column: ledger_id"
    assert message_in_testify_block(["--- FAIL: TestX", "    x_test.go:3: got 1, want 2"]) is None
    equal = "\tError Trace:\tx_test.go:9\n\tError:      \tNot equal: \n\t            \texpected: 1\n\tTest:       \tTestX"
    assert key_error_line(equal) == "Not equal: expected: 1"


def _error_case(kit, output: str, command: str, errors_body: str):
    msgs = [kit.user("add the ledger_id column"), *kit.tool("Bash", {"command": command}, output, is_error=True),
            kit.say("The replay needs the old schema.")]
    return kit.case(msgs, _s(kit, errors=errors_body))


def test_a_testify_failure_is_kept_by_its_message(grade, kit):
    """The real 2.1.205 section 4 kept ``202505141324: saving user: no such column: tenant_id``
    verbatim; testify printed it under ``Error:``, and the key line taken was the ``Error Trace:``
    location, which no summary repeats."""
    kept = "- **Replay failure: `20240611: copying rows: no such column: ledger_id`** — skipped the replay tests"
    verdict = grade("errors_preserved", _error_case(kit, TESTIFY, "go test ./store/", kept))
    assert verdict.status == "pass", verdict.reasons
    lost = grade("errors_preserved", _error_case(kit, TESTIFY, "go test ./store/", "- the build broke once; fixed"))
    assert lost.status == "fail" and "no such column: ledger_id" in lost.reasons[0], lost.reasons
    assert "Error Trace" not in lost.reasons[0]


PYTEST = ("=========================== short test summary info ============================\n"
          "FAILED tests/test_catalog.py::test_parallel_load - KeyError: 'ledger_id' missing from the loaded catalog\n"
          "1 failed, 40 passed in 2.31s")


def test_a_pytest_short_summary_failure_is_kept_by_its_message(grade, kit):
    """The real 2.1.251 section 4 kept ``ValueError: Unknown capabilities not in ontology:
    ['retrieve']`` verbatim without the test's name: printed with its traceback, that line is the
    key line and passes; printed by ``pytest -q | tail`` as the short summary only, the same error
    failed. Its message verbatim keeps it either way; a generic message does not."""
    kept = "- **Race**: `KeyError: 'ledger_id' missing from the loaded catalog` on 3.10; fixed with a lock"
    verdict = grade("errors_preserved", _error_case(kit, PYTEST, "pytest -q | tail -3", kept))
    assert verdict.status == "pass", verdict.reasons
    lost = grade("errors_preserved", _error_case(kit, PYTEST, "pytest -q | tail -3", "- a race; fixed with a lock"))
    assert lost.status == "fail" and "test_parallel_load" in lost.reasons[0], lost.reasons
    assert message_of("FAILED tests/t.py::test_x - AssertionError: assert 1 == 2") == ""
