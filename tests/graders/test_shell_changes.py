"""files_preserved counts project files changed or deleted through the shell (review 3, F5): ``sed -i``,
``perl -i``, ``echo/printf/cat`` into a file (``>``, ``>>``, ``| tee``), ``patch``, ``git rm`` and
``rm`` of a file the session saw. Read conservatively: scratch files, output captured into a file,
paths outside the project, globs and folders are not required."""

from __future__ import annotations

import pytest

from pytest_ctxeval.reading.extract import edited_files, file_ledger
from pytest_ctxeval.reading.shell_writes import shell_writes

ROOT = "/home/me/shop"
VIEWS = f"{ROOT}/src/shop/views.py"


def _bash(kit, command, result="", *, is_error=False):
    return kit.tool("Bash", {"command": command}, result, is_error=is_error)


def _messages(kit, steps):
    messages = [kit.user("Tidy the shop settings and remove the old export module")]
    messages += kit.tool("Read", {"file_path": f"{ROOT}/src/shop/old_export.py"}, "1→def export(): ...")
    messages += kit.tool("Edit", {"file_path": VIEWS, "old_string": "a = 1", "new_string": "a = 2"},
                         f"The file {VIEWS} has been updated successfully.")
    for step in steps:
        messages += step
    return messages


def _case(kit, steps, files_body):
    return kit.case(_messages(kit, steps), kit.summary_of(files=files_body))


CHANGES = [
    ("sed -i 's/DEBUG = True/DEBUG = False/' src/shop/settings.py", "", "settings.py", "`sed -i`"),
    ("cd src/shop && sed -i.bak -e 's/10/20/' limits.py", "", "src/shop/limits.py", "`sed -i`"),
    ("sed -i '' 's/old/new/' src/shop/urls.py", "", "urls.py", "`sed -i`"),
    ("perl -pi -e 's/http:/https:/g' config/site.toml", "", "config/site.toml", "`perl -i`"),
    ("echo 'exports/' >> .gitignore", "", ".gitignore", "appended to through Bash"),
    ("printf 'LIMIT=10\\n' > .env.example", "", ".env.example", "written through Bash"),
    ("cat > src/shop/feature_flags.py <<'EOF'\nFLAGS = {}\nrm src/shop/views.py\nEOF", "", "feature_flags.py",
     "written through Bash"),
    ("echo 'requests>=2' | tee -a requirements.txt", "requests>=2", "requirements.txt", "written through Bash"),
    ("patch -p1 < /tmp/fix.diff", "patching file src/shop/cart.py\n", "src/shop/cart.py", "`patch`"),
    ("git rm src/shop/legacy.py", "rm 'src/shop/legacy.py'", "src/shop/legacy.py", "deleted with `git rm`"),
    ("rm src/shop/old_export.py", "", "old_export.py", "deleted with `rm`"),
    (f"rm -f {ROOT}/src/shop/old_export.py", "", "old_export.py", "deleted with `rm`"),
]


@pytest.mark.parametrize("command, result, name, how", CHANGES)
def test_a_file_changed_through_the_shell_must_be_named(grade, kit, command, result, name, how):
    steps = [_bash(kit, command, result)]
    good = grade("files_preserved", _case(kit, steps, f"- src/shop/views.py: a = 2\n- {name}: changed"))
    assert good.status == "pass", good.reasons
    assert "all 2 changed files" in good.reasons[0]
    bad = grade("files_preserved", _case(kit, steps, "- src/shop/views.py: a = 2"))
    assert bad.status == "fail"
    assert name.rsplit("/", 1)[-1] in bad.reasons[0] and how in bad.reasons[0], bad.reasons


@pytest.mark.parametrize("command", [
    "pytest -q > test_output.txt 2>&1",              # output captured, not written by the agent
    "echo done > /dev/null",
    "echo 'x = 1' > /tmp/try_it.py && python /tmp/try_it.py",
    "rm -rf build/ dist .sandbox node_modules/",      # folders and build output
    "rm -f src/shop/__pycache__/views.cpython-311.pyc",
    "rm src/shop/*.orig",                             # a glob
    "rm src/shop/never_seen.py",                      # not known to be the project's (never read, not in git)
    "git rm --cached src/shop/secrets.py",            # untracked only
    "sed -n 's/a/b/p' src/shop/settings.py",          # no -i: prints
    "sed -i 's/a/b/' ../other_repo/settings.py",      # outside the project
    "sed -i 's/^#//' /etc/hosts",
    "echo 'alias ll=ls' >> ~/.bashrc",
    "echo \"$VALUE\" > \"$OUT\"",                     # variables
    "cat > scratch_check.py <<'EOF'\nprint(1)\nEOF\npython scratch_check.py && rm scratch_check.py",
    "cat README.md | tee /tmp/readme-copy.md",
    "git apply /tmp/fix.diff",                        # its files are in the patch
])
def test_not_a_project_change(grade, kit, command):
    case = _case(kit, [_bash(kit, command, "")], "- src/shop/views.py: a = 2")
    verdict = grade("files_preserved", case)
    assert verdict.status == "pass", verdict.reasons
    assert "the 1 changed file" in verdict.reasons[0]


def test_a_failing_call_changed_nothing_here(kit):
    messages = _messages(kit, [_bash(kit, "sed -i 's/a/b/' src/shop/settings.py && pytest", "FAILED", is_error=True)])
    assert edited_files(messages) == [VIEWS]


def test_the_ledger_names_one_file_once(kit):
    """A relative path the shell names is the file an edit tool changed by its absolute path."""
    messages = _messages(kit, [_bash(kit, "sed -i 's/a = 2/a = 3/' src/shop/views.py")])
    assert edited_files(messages) == [VIEWS]
    assert VIEWS not in file_ledger(messages).how   # an edit tool changed it first: "changed"


def test_a_created_file_deleted_is_no_change_but_an_edited_one_is(kit):
    new = f"{ROOT}/src/shop/tmp_probe.py"
    created = kit.tool("Write", {"file_path": new, "content": "x"}, f"File created successfully at: {new}")
    assert edited_files(_messages(kit, [created, _bash(kit, "rm src/shop/tmp_probe.py")])) == [VIEWS]
    ledger = file_ledger(_messages(kit, [_bash(kit, "git rm src/shop/views.py")]))
    assert ledger.changed() == [VIEWS] and ledger.how[VIEWS].startswith("deleted with `git rm`")


def test_heredoc_bodies_are_not_commands():
    assert [w.path for w in shell_writes("cat > notes.md <<'EOF'\nrm src/app.py\nsed -i 's/a/b/' x.py\nEOF")] == \
        ["notes.md"]
