"""A fifth reader's review of the done marks and error denials (false alarms the first version made).

* A done or cancelled mark about something else in the item does not tick the task off: "(Task #5 is
  already done)", "(phase 1 is done)", "the old approach was dropped", "the deploy that was cancelled";
  nor does a count of progress ("0 of 15 done"), nor a status word that is part of the task ("print
  DONE", a "COMPLETED enum value", a "✅ icon", "[x] checkboxes"); a heading or lead that names other
  finished work ("(Phase 1 done)", "(Tasks 1-5 are done)") does not file the list below it as done.
* An item that tells a fixed error by its name and ends "no exceptions since" / "no ruff errors
  remain" / "error-free now" tells it; one that says it never happened does not.
"""

from __future__ import annotations

import pytest

from pytest_ctxeval.reading.session_facts import _denies_error
from pytest_ctxeval.reading.tasks import done_item, marked_items


@pytest.mark.parametrize("item", [
    "- Task 6: wire the API (Task #5 is already done)", "- Task 6: wire the API (phase 1 is done)",
    "- Migrate the exporter (the old approach was dropped)", "- Retry the deploy that was cancelled",
    "- Author all 15 manifests (0 of 15 done)", "- Author all 15 manifests — 3/15 done",
    "- Make the CLI print DONE when finished", "- Add a COMPLETED enum value to Status",
    "- Show a ✅ icon next to synced files", "- Render [x] checkboxes in the list",
])
def test_a_mark_about_something_else_leaves_the_task_open(item):
    assert not done_item(item)


@pytest.mark.parametrize("item", [
    "- Task #8: Scaffold the CLI — DONE ✅", "- [DONE] Task #8 scaffold", "- Task 9 (cancelled by the user — skip)",
    "- Task 3: add init (already implemented and committed)", "- ✅ Task 4: write docs", "- Task 4: write docs ✅",
    "- Task 5: tests — this was cancelled", "- Task 5: tests — it is done",
])
def test_a_mark_about_the_task_closes_it(item):
    assert done_item(item)


@pytest.mark.parametrize("heading", ["### Phase 2 — CLI (Phase 1 done)", "Tasks 6-11 below (Tasks 1-5 are done):"])
def test_a_heading_naming_other_finished_work_files_nothing_as_done(heading):
    assert [done for _, done in marked_items(f"{heading}\n- Task 6: wire the API\n- Task 7: docs")] == [False] * 3


@pytest.mark.parametrize("lead", ["None — every task below was completed in this session:", "All of the following are done:"])
def test_a_lead_about_the_whole_list_still_files_it_as_done(lead):
    assert [done for _, done in marked_items(f"{lead}\n- Task 6: wire the API\n- Task 7: docs")][1:] == [True, True]


@pytest.mark.parametrize("item, denies", [
    ("- KeyError in loader: replaced dict[] with .get(); no exceptions since", False),
    ("- Ruff UP038 in analyzer.py: switched to X | Y; no ruff errors remain", False),
    ("- ModuleNotFoundError for yaml: added pyyaml; error-free now", False),
    ("- No ruff errors: `ruff check` passed cleanly (UP038 rule not triggered)", True),
    ("- Lint: `bun run lint` never failed in this session (exit code 0)", True),
])
def test_an_item_that_names_the_error_and_its_fix_does_not_deny_it(item, denies):
    assert _denies_error(item) is denies


@pytest.mark.parametrize("text, step", [
    ("No explicit next step requested. Build and tests are green.", None),
    ("No next step. Test results: 12 passed, 0 failed.", None),
    ("No next step. Merge is pending review.", None),
    ("No next step.\n- **Start time**: 10:02", None),
    ("No next step. Check with the user whether to deploy.", None),
    ("No next step. Make sure to ask the user before pushing.", None),
    ("No next step. Other work (e.g. write more hooks) should be confirmed with the user.", None),
    ("No next step. Fix the 3 clippy errors.", "Fix the 3 clippy errors."),
    ("No next step. Build the image and push it.", "Build the image and push it."),
])
def test_a_state_or_a_question_for_the_person_is_no_proposed_step(text, step):
    from pytest_ctxeval.reading.proposals import proposed_step
    assert proposed_step(text) == step


@pytest.mark.parametrize("item", [
    "- Task 7: Port the exporter — no longer needed", "- Task 7: Port the exporter (not needed)",
    "- Task 7: Port the exporter — won't do", "- Task 8: Open the PR (shipped)", "- Task 8: Fix the flaky test — resolved",
    "- Task 8: Add caching → done", "- Task 9: Old parser (superseded by Task 12)",
])
def test_more_ways_to_close_a_task(item):
    assert done_item(item)


@pytest.mark.parametrize("item", ["- Task 9: wire it (not yet done)", "- Resolve the merge conflict in app.py",
                                  "- Ship the release notes"])
def test_words_of_an_open_task_do_not_close_it(item):
    assert not done_item(item)


@pytest.mark.parametrize("item", ["- UP038 did not occur in this run", "- No UP038 issue here", "- Ruff UP038 never showed up"])
def test_an_error_named_only_as_not_happening_is_denied(item):
    assert _denies_error(item)
    assert not _denies_error("- UP038 no longer fails after switching to X | Y")


def test_a_version_prefix_keeps_a_tasks_number():
    from pytest_ctxeval.reading.tasks import task_in_item
    assert task_in_item("Support Node 18 and 20", "- Support Node v18 and v20 in CI", 0.6)
    assert not task_in_item("Support Node 18 and 20", "- Support Node v16 and v20 in CI", 0.6)
