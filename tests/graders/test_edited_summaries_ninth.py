"""Classes a ninth round found by editing real corpus summaries (``benchmarks/edited_summaries.py``):
defects every grader passed, each shown on the good and the bad side.

* An option of the agent's question the person did not pick, told as their choice ("User chose:
  Worktree" when they picked "Current directory"): ``verbatim_user_messages`` fails, naming the
  option, the question and the one picked (``reading/answers.py``); 2.1.150's "Your questions have
  been answered: …" is read like the older "User has answered your questions: …".
* A value the session never showed, told by the summary: a pull-request number, a dated path, a version one part away from the session's, a count of tests or errors, an exit code, a branch
  (``reading/unseen_values.py``): the grader of its section fails (1-2 ``constraints_preserved``, 3
  ``files_preserved``, 4 ``errors_preserved``, 5 and 7-9 ``pending_tasks``).
* A file the session wrote and kept, called deleted in section 3: ``files_preserved`` fails
  (``reading/file_claims.py``).
* An error called re-run or passing when nothing ran its tool again: ``errors_preserved`` fails
  (``reading/rerun_claims.py``).
* A typed answer told in other words keeps its numbers ("back to finding 8" does not tell "back to
  finding 7").
* A code block of section 3 shown under a file whose text holds none of it, while another file of the
  session holds it (two files' snippets swapped): ``files_preserved`` fails (``reading/code_attribution.py``).
"""

from __future__ import annotations

import pytest

from pytest_ctxeval.reading.answers import answer_told, choices, misreported_choices
from pytest_ctxeval.reading.unseen_values import derived_counts, unseen_values


def _s(kit, **bodies: str) -> str:
    base = {k: "x" for k in kit.SECTION_KINDS}
    base.update(bodies)
    return kit.summary(base)


# -- an option the person did not pick, told as their choice ----------------------------------------

QUESTION = "Where should we create the feature branch?"
HEADS = {"old": "User has answered your questions: ", "new": "Your questions have been answered: "}
TAILS = {"old": " You can now continue with the user's answers in mind.", "new": " You can now continue with these answers in mind."}


def _asked(kit, picked: str = "Current directory", version: str = "old") -> list:
    options = [{"label": "Current directory", "description": "work here"}, {"label": "Worktree", "description": "a new tree"}]
    return [kit.user("set up the feature branch"),
            *kit.tool("AskUserQuestion", {"questions": [{"question": QUESTION, "header": "Branch", "multiSelect": False,
                                                         "options": options}]},
                      f'{HEADS[version]}"{QUESTION}"="{picked}".{TAILS[version]}')]


@pytest.mark.parametrize("told", [
    '- "set up the feature branch"\n- (chose "Current directory" for the branch question)',
    '- "set up the feature branch"\n- User chose "Current directory" over "Worktree"',
    '- "set up the feature branch"\n- User did not pick "Worktree"; stays in this directory',
])
def test_the_option_picked_told_passes(grade, kit, told):
    verdict = grade("verbatim_user_messages", kit.case(_asked(kit), _s(kit, user_messages=told)))
    assert verdict.status == "pass", verdict.reasons


@pytest.mark.parametrize("version", ["old", "new"])
@pytest.mark.parametrize("where, told", [
    ("user_messages", '- "set up the feature branch"\n- (chose "Worktree" for the branch question)'),
    ("request", "Set up the feature branch. The user selected Worktree for it."),
])
def test_an_option_not_picked_told_as_the_choice_fails(grade, kit, version, where, told):
    bodies = {"user_messages": '- "set up the feature branch"', where: told}
    text = _s(kit, **bodies)
    verdict = grade("verbatim_user_messages", kit.case(_asked(kit, version=version), text))
    assert verdict.status == "fail"
    (reason,) = verdict.reasons
    number = 6 if where == "user_messages" else 1
    assert f"section {number} (line {kit.line_of(text, 'Worktree')})" in reason
    assert '"Worktree"' in reason and QUESTION in reason and '"current directory"' in reason


def test_an_option_picked_elsewhere_or_a_short_label_is_not_judged(kit):
    msgs = _asked(kit) + _asked(kit, picked="Worktree")[1:]   # asked twice: picked both ways
    assert misreported_choices("User chose Worktree", choices(msgs)) == []
    short = [kit.user("go"), *kit.tool("AskUserQuestion", {"questions": [{"question": "Address this finding?", "options": [
        {"label": "Address"}, {"label": "Skip"}]}]}, 'User has answered your questions: "Address this finding?"="Address".')]
    assert misreported_choices("User chose: Skip", choices(short)) == []   # "Skip" may be any question's


# -- values the session never showed ------------------------------------------------------------------

def _shipped(kit) -> list:
    return [kit.user("ship the registry PR"),
            *kit.tool("Bash", {"command": "gh pr create --fill"}, "https://github.com/acme/blocks/pull/40"),
            *kit.tool("Bash", {"command": "pytest -q"}, "26 passed in 3.1s"),
            *kit.tool("Write", {"file_path": "/repo/history/2026-02-23_registry.md", "content": "# Registry"}),
            *kit.tool("Write", {"file_path": "/repo/Cargo.toml", "content": '[dependencies]\nratatui = "0.29"'})]


@pytest.mark.parametrize("current", [
    "PR #40 is open and holds the manifests; 26 tests pass.",
    "Task #12 is next (the summary numbers its own tasks); all 26 tests passed.",
    "Ran 28 tool calls; 5 failed along the way.",              # a tally of tool calls, not of tests
])
def test_values_the_session_showed_pass(grade, kit, current):
    verdict = grade("pending_tasks", kit.case(_shipped(kit), _s(kit, current=current)))
    assert verdict.status == "n/a", verdict.reasons


@pytest.mark.parametrize("current, value", [
    ("PR #47 is open and waiting for review.", "'#47'"),
    ("All 28 tests pass after the change.", "'28 tests pass'"),
])
def test_a_value_the_session_never_showed_fails_with_its_line(grade, kit, current, value):
    text = _s(kit, current=current)
    verdict = grade("pending_tasks", kit.case(_shipped(kit), text))
    assert verdict.status == "fail"
    (reason,) = verdict.reasons
    assert value in reason and f"section 8 (line {kit.line_of(text, current[:20])})" in reason
    assert "nothing in the session shows" in reason


@pytest.mark.parametrize("files, fails", [
    ("- `history/2026-02-23_registry.md`: written\n- `Cargo.toml`: ratatui = \"0.29\"", False),
    ("- `history/2026-02-24_registry.md`: written\n- `Cargo.toml`: ratatui = \"0.29\"", True),     # the date
    ("- `history/2026-02-23_registry.md`: written\n- `Cargo.toml`: ratatui = \"0.30\"", True),     # the version
    ("- `history/2026-02-23_registry.md`: written\n- `Cargo.toml`: ratatui, crossterm 0.28.1", False),  # never near
    ("- `history/2026-02-23_registry.md`, `Cargo.toml`: written\n- `docs/plans/2026-02-25_cli.md`: to be written next", False),
    ("- `history/2026-02-23_registry.md`, `Cargo.toml`: written\n- `docs/plans/2026-02-25_cli.md` (created)", True),
])
def test_section_3_values_are_the_sessions(grade, kit, files, fails):
    verdict = grade("files_preserved", kit.case(_shipped(kit), _s(kit, files=files)))
    assert (verdict.status == "fail") is fails, verdict.reasons
    if fails:
        assert "nothing in the session shows" in verdict.reasons[-1]


def test_sections_1_and_2_values_fail_constraints_preserved(grade, kit):
    ok = grade("constraints_preserved", kit.case(_shipped(kit), _s(kit, request="Ship the registry (PR #40).")))
    assert ok.status == "n/a", ok.reasons
    bad = grade("constraints_preserved", kit.case(_shipped(kit), _s(kit, request="Ship the registry (PR #41).")))
    assert bad.status == "fail" and "'#41'" in bad.reasons[0] and "section 1" in bad.reasons[0]


def test_counts_worked_out_gh_lists_and_localised_builds_are_seen(kit):
    seen = ("dotnet build … 52 aviso(s) 0 erro(s) … passed: 26 … 1 passed … gh pr list").lower()
    raw = "gh pr list\n86\tRegistry manifests\tfeat/registry\tOPEN\n"
    assert unseen_values(["Built clean (0 errors, 52 warnings)", "PR #86 is open", "27 tests pass"], seen,
                         derived=derived_counts("26 pre-existing + 1 new = 27"), raw=raw) == []
    assert [u.value for u in unseen_values(["53 warnings remain", "PR #87 is open"], seen, raw=raw)] == [
        "53 warnings", "#87"]


@pytest.mark.parametrize("line, flagged", [
    ("Committed on branch `feat/registry-blocks`.", False),
    ("Committed on branch `feat/registry-block`.", True),
    ("Next, create a new branch `feat/cli-tool` for the CLI.", False),    # one still to come
    ("Working on branch `release/q3-hotfix`.", False),   # near no name of the session: the system prompt's
    ("Bash exited with exit code 127 (python not found).", False),
    ("Bash exited with exit code 129 (python not found).", True),
    ("The upload returned 500 Internal Server Error.", False),
    ("The upload returned 502 Bad Gateway.", True),
])
def test_branches_exit_codes_and_statuses(kit, line, flagged):
    msgs = [kit.user("go"), *kit.tool("Bash", {"command": "git checkout -b feat/registry-blocks"}, "Switched to a new branch"),
            *kit.tool("Bash", {"command": "python x.py"}, "Exit code 127\npython: command not found", is_error=True),
            *kit.tool("Bash", {"command": "curl -F f=@a api/upload"}, "HTTP/1.1 500 Internal Server Error")]
    case = kit.case(msgs, "x")
    assert bool(unseen_values([line], case.history_text, "current")) is flagged


# -- a file the session wrote and kept, called deleted -------------------------------------------------

def _wrote(kit, *after) -> list:
    return [kit.user("add the token store"),
            *kit.tool("Write", {"file_path": "/repo/src/auth/tokens.py", "content": "class TokenStore: ..."}), *after]


@pytest.mark.parametrize("item", [
    "- `src/auth/tokens.py` — deleted",
    "- `src/auth/tokens.py` (removed from the repository)",
    "- Deleted `src/auth/tokens.py`",
])
def test_a_written_file_called_deleted_fails(grade, kit, item):
    text = _s(kit, files=item)
    verdict = grade("files_preserved", kit.case(_wrote(kit), text))
    assert verdict.status == "fail"
    (reason,) = verdict.reasons
    assert f"section 3 (line {kit.line_of(text, 'tokens.py')}) calls /repo/src/auth/tokens.py deleted" in reason


@pytest.mark.parametrize("item, after", [
    ("- `src/auth/tokens.py` — Removed the orphan comments, added TokenStore", ()),    # a change inside it
    ("- `src/auth/tokens.py` — created: TokenStore", ()),
    ("- `src/auth/tokens.py` — deleted", ("Bash", {"command": "rm -rf src/auth"}, "")),   # its folder removed
    ("- `src/auth/tokens.py` — deleted", ("Task", {"prompt": "Remove the auth folder. Then report.",
                                                   "description": "cleanup"}, "done")),
])
def test_a_file_told_changed_or_removed_by_a_command_passes(grade, kit, item, after):
    msgs = _wrote(kit, *(kit.tool(*after) if after else []))
    verdict = grade("files_preserved", kit.case(msgs, _s(kit, files=item)))
    assert verdict.status in ("pass", "n/a"), verdict.reasons


# -- an error called re-run and passing that nothing ran again -----------------------------------------

CLIPPY = "error: unused variable: `total_events`\n --> src/lib.rs:336:5\nerror: could not compile `app` due to 1 previous error"


def _clippy(kit, *, rerun: str | None = None) -> list:
    msgs = [kit.user("make clippy pass"),
            *kit.tool("Bash", {"command": "cargo clippy -- -D warnings"}, CLIPPY, is_error=True),
            *kit.tool("Edit", {"file_path": "/repo/src/lib.rs", "old_string": "let total_events", "new_string": "let _t"})]
    if rerun:
        msgs += kit.tool("Bash", {"command": rerun}, "Finished dev [unoptimized] target(s)")
    return msgs


ERR = "- **clippy** `error: unused variable: `total_events`` in src/lib.rs:336: renamed it"


@pytest.mark.parametrize("said", [" — re-ran it and it now passes", ". Re-ran clippy; the build is verified."])
def test_an_error_called_rerun_that_nothing_ran_again_fails(grade, kit, said):
    text = _s(kit, errors=ERR + said)
    verdict = grade("errors_preserved", kit.case(_clippy(kit), text))
    assert verdict.status == "fail"
    (reason,) = [r for r in verdict.reasons if "never run" in r]
    assert f"section 4 (line {kit.line_of(text, 'total_events')})" in reason and "cargo clippy" in reason
    after = grade("errors_preserved", kit.case(_clippy(kit, rerun="cargo clippy -- -D warnings"), text))
    assert after.status == "pass", after.reasons


@pytest.mark.parametrize("said", ["", " — fix applied; not re-run yet", ". The rename should make it pass once re-run"])
def test_an_error_fixed_without_a_verification_claim_passes(grade, kit, said):
    verdict = grade("errors_preserved", kit.case(_clippy(kit), _s(kit, errors=ERR + said)))
    assert verdict.status == "pass", verdict.reasons


# -- a typed answer keeps its numbers ---------------------------------------------------------------------

def test_a_typed_answer_told_in_other_words_keeps_its_numbers():
    assert answer_told("back to finding 7 please", "- Finding 8: the user asked to go back to finding 7")
    assert not answer_told("back to finding 7 please", "- the user asked to go back to finding 8")


# -- code shown under the wrong file -----------------------------------------------------------------

WORKSPACE = '[workspace]\nmembers = ["crates/lib", "crates/tui", "crates/main"]\ndefault-members = ["crates/main"]\nresolver = "3"'
LIB = '[dependencies]\nanyhow = "1"\nserde = { version = "1", features = ["derive"] }\ntokio = { version = "1", features = ["macros"] }'
PATTERN = '[workspace.dependencies]\nratatui = { version = "0.29", default-features = false }\ncrossterm = { version = "0.28" }'


def _cargo(kit, *between) -> list:
    return [kit.user("slim the workspace"), *between,
            *kit.tool("Write", {"file_path": "/repo/Cargo.toml", "content": WORKSPACE}),
            *kit.tool("Write", {"file_path": "/repo/crates/lib/Cargo.toml", "content": LIB}),
            *kit.tool("Write", {"file_path": "/repo/docs/plan.md", "content": "Pattern:\n" + PATTERN})]


def _files(first: str, second: str) -> str:
    fence = "```"
    block = lambda text: "\n".join("  " + line for line in [fence + "toml", *text.split("\n"), fence])  # noqa: E731
    return (f"- `Cargo.toml` (workspace root): members cut to two\n{block(first)}\n"
            f"- `crates/lib/Cargo.toml`: old deps stripped\n  - kept the async runtime\n{block(second)}\n"
            "- `docs/plan.md`: the plan, with the dependency pattern")


def test_code_under_its_own_file_passes(grade, kit):
    verdict = grade("files_preserved", kit.case(_cargo(kit), _s(kit, files=_files(WORKSPACE, LIB))))
    assert verdict.status == "pass", verdict.reasons


def test_code_swapped_between_two_files_fails_naming_both(grade, kit):
    text = _s(kit, files=_files(LIB, WORKSPACE))
    verdict = grade("files_preserved", kit.case(_cargo(kit), text))
    assert verdict.status == "fail"
    reasons = [r for r in verdict.reasons if "attributed to the wrong file" in r]
    assert len(reasons) == 2
    assert f"section 3 (line {kit.line_of(text, 'workspace root')}) shows under /repo/Cargo.toml" in reasons[0]
    assert "in /repo/crates/lib/Cargo.toml" in reasons[0]


@pytest.mark.parametrize("first, second, later", [
    (PATTERN, LIB, False),      # the plan's pattern shown under the file that follows it
    (LIB, WORKSPACE, True),     # a subagent started after the files were first touched may have changed them
])
def test_a_plans_pattern_or_a_subagents_file_is_not_judged(grade, kit, first, second, later):
    after = kit.tool("Task", {"prompt": "tidy the manifests", "description": "tidy"}, "done") if later else []
    verdict = grade("files_preserved", kit.case(_cargo(kit) + after, _s(kit, files=_files(first, second))))
    assert verdict.status == "pass", verdict.reasons
