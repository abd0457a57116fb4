"""A test run whose tests failed is an error for ``errors_preserved`` even when the command exited 0
(``npx playwright test … | tail -60``, ``pytest -q | tail``: Claude Code marks the result as an error
only by the exit code of the pipe's last command), and a summary may tell such an error by the failing
test it belongs to (``Test 7.2 "Charlie sees the newly added file"``) as well as by its error line.

The real case is FSM1/cipher-box 2.1.49 (two auto compactions): every Playwright run there is piped
through ``tail``, so before this the grader found no error in it at all (n/a).
"""

from __future__ import annotations

import json

import pytest

from pytest_ctxeval.grading.mutants import Mutant
from pytest_ctxeval.grading.registry import cases_from_transcript
from pytest_ctxeval.reading.extract import failing_results
from pytest_ctxeval.reading.session_facts import failed_test_run, failed_tests, runs_tests, failing_test_told
from pytest_ctxeval.transcript import read_transcript

from shared_paths import CORPUS

PYTEST_OUT = ("........F...\n=================================== FAILURES ===================================\n"
              "__________________________________ test_upload _________________________________\n"
              "    def test_upload(client):\n>       assert client.post('/upload').status_code == 200\n"
              "E       assert 413 == 200\n\ntests/test_api.py:31: AssertionError\n"
              "=========================== short test summary info ============================\n"
              "FAILED tests/test_api.py::test_upload - assert 413 == 200\n1 failed, 11 passed in 0.41s\n")
PLAYWRIGHT_OUT = ("  1) [chromium] › tests/sharing.spec.ts:338:3 › Sharing › 6.1 Alice revokes Bob's access \n\n"
                  "    TimeoutError: locator.waitFor: Timeout 10000ms exceeded.\n\n"
                  "  1 failed\n    [chromium] › tests/sharing.spec.ts:338:3 › Sharing › 6.1 Alice revokes Bob's access \n"
                  "  10 did not run\n  9 passed (22.3s)\n")


@pytest.mark.parametrize("command", [
    "uv run pytest -q 2>&1 | tail -20",
    "cd tests/e2e && npx playwright test sharing.spec.ts 2>&1 | tail -60",
    "pnpm --filter @app/e2e test -- --grep Sharing",
    "CI=1 npm test | tail",
    "python -m pytest tests/ -x",
    "cargo test --workspace 2>&1 | tail -30",
    "go test ./... | grep -v '^ok'",
    "python manage.py test", "bin/rails test 2>&1 | tail", "php artisan test | tail", "yarn workspace web test",
    "uv run --directory backend pytest -q | tail", "docker compose exec api pytest -q", "pnpm vitest run",
    "cargo nextest run | tail",
])
def test_test_runners_are_recognised(command):
    assert runs_tests(command)


@pytest.mark.parametrize("command", [
    "grep -rn FAILED test-results/ | tail -5", "cat pytest.log", "ls tests/", "git commit -m 'fix test'",
    "echo 'npm test failed'",
    # a listing, not a run; a run whose output is followed by a log read back
    "pytest --collect-only -q | grep FAILED", "uv run pytest -q | tail -1; cat ci-last-run.log | grep FAILED",
])
def test_other_commands_are_not_test_runs(command):
    assert not runs_tests(command)


@pytest.mark.parametrize("text, tests", [
    (PYTEST_OUT, [("tests/test_api.py", "test_upload")]),
    ("FAILED tests/a.py::TestX::test_y[2-3] - x\n1 failed in 0.1s", [("tests/a.py", "test_y")]),
    (PLAYWRIGHT_OUT, [("tests/sharing.spec.ts", "6.1 Alice revokes Bob's access")]),
    ("  ✘  2 [chromium] › a.spec.ts:3:1 › login works (1.2s)\n  1 failed", [("a.spec.ts", "login works")]),
    ("FAIL src/app.test.ts\n  ● App › renders the title\n\nTests: 1 failed, 4 passed, 5 total",
     [("", "renders the title")]),
    (" FAIL  src/x.test.ts > parser > keeps comments\n Test Files  1 failed (1)", [("src/x.test.ts", "keeps comments")]),
    ("--- FAIL: TestRender (0.00s)\n    render_test.go:31: got 1, want 2\nFAIL\tpkg/render\t0.01s",
     [("", "TestRender")]),
    ("test tests::parses_empty ... FAILED\n\ntest result: FAILED. 3 passed; 1 failed", [("", "parses_empty")]),
    ("rspec ./spec/user_spec.rb:12 # User validates the email\n", [("./spec/user_spec.rb", "User validates the email")]),
    ("FAIL: test_merge (tests.test_core.MergeTest)\n----\nFAILED (failures=1)", [("tests.test_core.MergeTest", "test_merge")]),
])
def test_failing_tests_are_read_as_their_runner_names_them(text, tests):
    assert failed_tests(text) == tests


@pytest.mark.parametrize("command, text, failed", [
    ("pytest -q | tail -3", "FAILED tests/a.py::test_x - assert 1 == 2\n1 failed in 0.1s", True),
    ("npx playwright test | tail", PLAYWRIGHT_OUT, True),
    # a count of 0, a retried test that passed, a log read back, a grep for the word: not failed runs
    ("pytest -q | tail -3", "12 passed, 0 failed in 0.1s", False),
    ("npx playwright test | tail", "  ✘  1 [chromium] › a.spec.ts:3:1 › x (1s)\n  ✓  2 [chromium] › a.spec.ts:3:1 › x (retry #1)\n"
                                   "  1 flaky\n  9 passed (3s)", False),
    ("cat pytest.log", "FAILED tests/a.py::test_x", False),
    ("grep -c failed run.log", "3 failed", False),
    ("cargo nextest run | tail", "        FAIL [   0.004s] lib tests::parses\n     Summary [   0.1s] 3 tests run: 2 passed, "
                                 "1 failed", True),
    ("uv run pytest -q | tail -3", "ERROR tests/test_api.py\nInterrupted: 1 error during collection", True),
    ("bun test | tail", "(fail) parser > keeps comments\n 3 pass\n 1 fail", True),
    ("deno test | tail", "FAILED | 2 passed | 1 failed (20ms)", True),
    ("go test -json ./... | tail -2", '{"Action":"fail","Package":"a/b","Test":"TestX"}', True),
    ("bin/rails test | tail", "3 runs, 3 assertions, 1 failures, 0 errors, 0 skips", True),
])
def test_a_failed_run_is_what_its_runner_reports(command, text, failed):
    assert failed_test_run(command, text) is failed


def _run(kit, command: str, output: str, *, is_error: bool = False):
    return [kit.user("make the upload tests pass"), *kit.tool("Bash", {"command": command}, output, is_error=is_error)]


def _s4(kit, errors: str, **more: str) -> str:
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies.update(errors=errors, **more)
    return kit.summary(bodies)


def test_a_failing_run_that_exited_0_is_an_error_section_4_must_keep(grade, kit):
    messages = _run(kit, "uv run pytest -q 2>&1 | tail -20", PYTEST_OUT)
    (found,) = failing_results(messages)
    assert found.exit_ok and found.tests == (("tests/test_api.py", "test_upload"),)
    assert found.key_line == "FAILED tests/test_api.py::test_upload - assert 413 == 200"
    bad = grade("errors_preserved", kit.case(messages, _s4(kit, "- None.")))
    assert bad.status == "fail"
    (reason,) = bad.reasons
    assert ("test run of `uv run pytest -q 2>&1 | tail -20` (it exited 0, its output reports failing tests: "
            "test_upload)") in reason
    assert "nor is its failing test 'test_upload'" in reason
    # told by its error line's tokens, or by the failing test's name
    by_line = grade("errors_preserved", kit.case(messages, _s4(kit, "- `test_upload` got 413: the body limit was "
                                                                    "1 MB; raised it to 10 MB.")))
    assert by_line.status == "pass", by_line.reasons
    # a passing run of the same command is no error
    assert grade("errors_preserved", kit.case(_run(kit, "pytest -q | tail -3", "12 passed in 0.4s"),
                                              _s4(kit, "- None."))).status == "n/a"


def test_a_failing_test_is_told_by_its_title_or_id(grade, kit):
    messages = _run(kit, "cd tests/e2e && npx playwright test 2>&1 | tail -60", PLAYWRIGHT_OUT)
    for told in ("- **Test 6.1 \"revoke failed\"**: DELETE returned 204 and the client parsed an empty body.",
                 "- 6.1 Alice revokes Bob's access: the recipient row never disappeared; waited on the wrong row."):
        verdict = grade("errors_preserved", kit.case(messages, _s4(kit, told)))
        assert verdict.status == "pass", (told, verdict.reasons)
        assert "by a failing test they belong to" in verdict.reasons[0] or "identifying tokens" in verdict.reasons[0]
    # another test, or the runner alone, does not tell it
    for not_told in ("- Test 7.2 \"Charlie sees the file\" fails: Charlie sees 0 shared items.",
                     "- Ran the Playwright suite again after the fix."):
        verdict = grade("errors_preserved", kit.case(messages, _s4(kit, not_told)))
        assert verdict.status == "fail", not_told
        assert "6.1 Alice revokes Bob's access" in verdict.reasons[0]


def test_a_failing_test_is_told_only_by_an_item_about_a_failure():
    tests = [("tests/sharing.spec.ts", "6.1 Alice revokes Bob's access")]
    for told in ("- In progress: test 6.1 still fails after the 204 fix", "- Revoke test (#6.1) is red: 0 recipients",
                 "- E2E step 6.1 (revoke) fails", "- Spec 6.1 — Alice revoking Bob's access — fails",
                 "- (sharing.spec.ts, 6.1) breaks on CI"):
        assert failing_test_told(tests, told), told
    # named without a failure, in any section: a pass, a rename, a plan
    for not_told in ("- Next: run test 6.1 on CI", "- Test 6.1 passes now", "- Test 6.1 was renamed",
                     # its number tells it from its neighbours: 6.1 is not 6.10, nor 16.1
                     "- Test 6.10 fails", "- Test 16.1 fails",
                     # its file, in an item about another fix; its number in passing in an item about another test
                     "- Also fixed a comment typo in sharing.spec.ts",
                     "- In progress: Test 7.2 failure (0 shared items), needs a run after 6.1 is resolved"):
        assert not failing_test_told(tests, not_told), not_told
    # a one-word name is a common word, not the test's name
    assert not failing_test_told([("", "works")], "- The parser works, fixed the off-by-one")
    assert failing_test_told([("", "test_upload")], "- test_upload failed: 413; raised the limit")


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present (set CTXEVAL_SHARED)")
def test_cipher_box_playwright_runs_piped_through_tail(grade):
    name = "FSM1__cipher-box__2.1.49-two-auto-f585e6e9.jsonl"
    first, second = cases_from_transcript(read_transcript(CORPUS / name))
    # The first summary tells every failing run: "Upload 500 error", Test 7.2 "Charlie sees ...",
    # Test 6.1 "revoke failed" (labelled by reading the file: lines 92-225 of the summarised span).
    found = failing_results(first.summarized)
    assert sum(f.exit_ok for f in found) >= 9 and all(f.tests for f in found if f.exit_ok)
    for case in (first, second):
        verdict = grade("errors_preserved", case)
        assert verdict.status == "pass", verdict.reasons
        assert "by a failing test they belong to" in verdict.reasons[0]
    # The defect: section 4 keeps only the breadcrumb fix; the test failures are gone from 4, 5 and 8.
    summary = first.summary
    cut = summary[summary.index("   - **Upload 500 error"):summary.index("   - **User feedback**")]
    edited = summary.replace(cut, "")
    edited = edited.replace("   - **In Progress**: Test 7.2 failure", "   - **In Progress**: Charlie's view")
    current = edited.index("8. Current Work:")
    edited = edited[:current] + "8. Current Work:\n   Reading folder.service.ts.\n\n" + edited[edited.index("9. ", current):]
    verdict = grade("errors_preserved", Mutant.of(first, what="test failures dropped", summary=edited).case)
    assert verdict.status == "fail"
    assert any("Upload failed with alert" in r and "it exited 0" in r for r in verdict.reasons), verdict.reasons


def test_the_record_is_exactly_the_tool_result(kit):
    # the exit-0 reading does not look at results of other tools, or at a Bash result without a command
    messages = [kit.user("go"), *kit.tool("Read", {"file_path": "/r/log.txt"}, PYTEST_OUT)]
    assert failing_results(messages) == []
    assert json.dumps([f.key_line for f in failing_results(_run(kit, "pytest | tail", PYTEST_OUT))])


def test_an_http_status_alone_does_not_keep_another_error_of_that_status():
    from pytest_ctxeval.reading.session_facts import error_kept
    key = "Error: Upload failed with alert: Request failed with status code 500"
    assert error_kept(key, key, "npx playwright test", "- Upload 500 error: IPFS was unreachable; set the URL")[0]
    assert not error_kept(key, key, "npx playwright test", "- Login returned 500: the session secret was unset")[0]


def test_an_identifier_is_told_whole_not_inside_another_word():
    from pytest_ctxeval.reading.session_facts import error_kept
    key = "TypeError: Cannot read properties of undefined (reading 'page')"
    assert error_kept(key, key, "npx playwright test", "- `page` was undefined in navigateToFiles; fixed it")[0]
    assert not error_kept(key, key, "npx playwright test", "- the pages list was empty after the reload; fixed")[0]
