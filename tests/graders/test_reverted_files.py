"""files_preserved counts the files a session leaves changed (review finding F10): an edit reverted
with git or undone by the next edit is no change; a file moved is changed at its new place; a revert
that does not really restore the file (it was staged or committed since, or edited again after) keeps
it changed."""

from __future__ import annotations

import pytest

from pytest_ctxeval.reading.extract import edited_files
from pytest_ctxeval.reading.file_changes import shell_file_ops

UTILS = "/home/me/app/src/app/utils.py"
DATES = "/home/me/app/src/app/dates.py"


def _edit(kit, path=UTILS, old="X = 1", new="X = 2"):
    return kit.tool("Edit", {"file_path": path, "old_string": old, "new_string": new},
                    f"The file {path} has been updated successfully.")


def _bash(kit, command, result="", *, is_error=False):
    return kit.tool("Bash", {"command": command}, result, is_error=is_error)


def _case(kit, steps, files_body="- src/app/dates.py: parse() uses fromisoformat"):
    messages = [kit.user("Fix the date parser in src/app/dates.py")] + _edit(kit, DATES, "strptime", "fromisoformat")
    messages += _bash(kit, 'git commit -am "dates: parse with fromisoformat"')   # a blanket revert keeps it
    for step in steps:
        messages += step
    return kit.case(messages, kit.summary_of(files=files_body))


@pytest.mark.parametrize("revert", [
    "git checkout -- src/app/utils.py",
    "git checkout src/app/utils.py",
    "git checkout HEAD -- src/app/utils.py",
    "git restore src/app/utils.py",
    "git restore --staged --worktree src/app/utils.py",
    "git reset --hard",
    "git stash",
    "git stash push -m 'try later' -- src/app/utils.py",
    "cd src/app && git checkout -- utils.py",
    "git checkout . 2>&1",
])
def test_an_edit_reverted_with_git_is_no_change(grade, kit, revert):
    verdict = grade("files_preserved", _case(kit, [_edit(kit), _bash(kit, revert)]))
    assert verdict.status == "pass", verdict.reasons
    assert "the 1 changed file" in verdict.reasons[0]


@pytest.mark.parametrize("steps, why", [
    # edited again after the revert: changed at the end
    (lambda k: [_edit(k), _bash(k, "git checkout -- src/app/utils.py"), _edit(k, old="Y = 1", new="Y = 2")], "edited again"),
    # staged, then checked out: the file comes back as staged, with the edit
    (lambda k: [_edit(k), _bash(k, "git add src/app/utils.py"), _bash(k, "git checkout -- src/app/utils.py")], "staged"),
    # committed, then reset: HEAD holds the edit
    (lambda k: [_edit(k), _bash(k, 'git commit -am "wip; try X=2 && more"'), _bash(k, "git reset --hard")], "committed"),
    # stashed and popped: the edit is back
    (lambda k: [_edit(k), _bash(k, "git stash && pytest -q; git stash pop")], "stash popped"),
    # the checkout failed: nothing was reverted
    (lambda k: [_edit(k), _bash(k, "git checkout -- src/app/utils.py", "error: pathspec did not match", is_error=True)],
     "failed checkout"),
    # a checkout from another commit is not the file as it was
    (lambda k: [_edit(k), _bash(k, "git checkout origin/main -- src/app/utils.py")], "other commit"),
    # an Edit that does not undo the one before it
    (lambda k: [_edit(k), _edit(k, old="X = 2", new="X = 3")], "not an undo"),
])
def test_a_revert_that_does_not_restore_the_file_keeps_it_changed(grade, kit, steps, why):
    verdict = grade("files_preserved", _case(kit, steps(kit)))
    assert verdict.status == "fail", why
    assert verdict.reasons == [f"{UTILS} was changed but is not named in section 3 'Files and Code Sections' "
                               "(line 7) nor anywhere else in the summary"], why


def test_an_edit_undone_by_the_next_edit_is_no_change(grade, kit):
    verdict = grade("files_preserved", _case(kit, [_edit(kit), _edit(kit, old="X = 2", new="X = 1")]))
    assert verdict.status == "pass", verdict.reasons
    assert edited_files(_case(kit, [_edit(kit), _edit(kit, old="X = 2", new="X = 1")]).history) == [DATES]


def test_a_renamed_file_must_be_named_at_its_new_place(grade, kit):
    steps = [_bash(kit, "git mv src/app/old_helpers.py src/app/helpers.py")]
    verdict = grade("files_preserved", _case(kit, steps))
    assert verdict.status == "fail"
    assert verdict.reasons[0].startswith("src/app/helpers.py was moved here from src/app/old_helpers.py but is not named")
    good = "- src/app/dates.py: parse() uses fromisoformat\n- src/app/helpers.py: renamed from old_helpers.py"
    verdict = grade("files_preserved", _case(kit, [_bash(kit, "git mv src/app/old_helpers.py src/app/helpers.py")], good))
    assert verdict.status == "pass", verdict.reasons


def test_an_edited_file_moved_keeps_its_change_under_the_new_name(kit):
    case = _case(kit, [_edit(kit), _bash(kit, "mv src/app/utils.py src/app/lib/")])
    assert edited_files(case.history) == [DATES, "/home/me/app/src/app/lib/utils.py"]
    # moved back out of sight: into scratch space is not a project file
    case = _case(kit, [_bash(kit, "mv build/out.json /tmp/out.json")])
    assert edited_files(case.history) == [DATES]


def test_a_created_file_survives_a_hard_reset_but_not_git_clean(kit):
    new = "/home/me/app/src/app/new_mod.py"
    write = kit.tool("Write", {"file_path": new, "content": "x = 1"}, f"File created successfully at: {new}")
    assert edited_files(_case(kit, [write, _bash(kit, "git reset --hard")]).history) == [DATES, new]
    write = kit.tool("Write", {"file_path": new, "content": "x = 1"}, f"File created successfully at: {new}")
    assert edited_files(_case(kit, [write, _bash(kit, "git clean -fd")]).history) == [DATES]


@pytest.mark.parametrize("command, ops", [
    ('git commit -m "fix: a; b && c | d" && git checkout -- a.py',
     [("commit", []), ("revert", ["index", "a.py"])]),
    ("git -C web restore --staged src/x.ts", [("unstage", ["", "web/src/x.ts"])]),
    ("git checkout -b feature/x", []),
    ("git checkout -- '*.py'", []),               # a glob: not followed
    ("git reset --hard origin/main", []),         # another commit: not the start
    ("git stash list", []),
    ("mv a.py b.py c.py lib", [("move", ["a.py", "lib/a.py"]), ("move", ["b.py", "lib/b.py"]),
                               ("move", ["c.py", "lib/c.py"])]),
])
def test_shell_file_ops(command, ops):
    assert shell_file_ops(command) == ops


def test_an_unclosed_quote_keeps_every_change(kit):
    case = _case(kit, [_edit(kit), _bash(kit, "git commit -am \"half"), _bash(kit, "git checkout -- src/app/utils.py")])
    assert edited_files(case.history) == [DATES, UTILS]


def test_a_backup_copy_is_not_a_project_change(kit):
    # set aside as a backup: the .bak is no file the summary must name
    assert edited_files(_case(kit, [_bash(kit, "mv src/app/config.json src/app/config.json.bak")]).history) == [DATES]
    # an edited file set aside is gone from the project like one removed
    assert edited_files(_case(kit, [_edit(kit), _bash(kit, "mv src/app/utils.py src/app/utils.py.orig")]).history) == [DATES]
    # put back from a backup: the file's content is not known, an edit of it stays a change
    case = _case(kit, [_edit(kit), _bash(kit, "mv src/app/utils.py.bak src/app/utils.py")])
    assert edited_files(case.history) == [DATES, UTILS]
