"""Grader semantics on what real Claude Code sessions hold (issue 15): each class a real summary hit,
passing the real good case and still failing the real defect.

The cases are hand-built copies of what the corpus files show (the file is named in each test); the
corpus-wide check is tests/validity/.
"""

from __future__ import annotations

import pytest

from pytest_ctxeval.grading import CompactionCase
from pytest_ctxeval.reading.session_facts import claude_storage, error_kind, open_tasks
from pytest_ctxeval.reading.verbatim import find, normalize, show_difference
from pytest_ctxeval.grading.versions import PROMISES, promise


def _s(kit, **bodies: str) -> str:
    base = {k: "x" for k in kit.SECTION_KINDS}
    base.update(bodies)
    return kit.summary(base)


def _real(case: CompactionCase, version: str, trigger: str | None = None) -> CompactionCase:
    case.origin, case.version, case.kind = "transcript", version, "transcript"
    if trigger:
        case.trigger = trigger
    return case


# --- verbatim matching --------------------------------------------------------------------------------


@pytest.mark.parametrize("typed, listed", [
    # inner quotes dropped (melagiri 2.1.87: @"technical-architect (agent)")
    ('seek approval from @"technical-architect (agent)" and then start', "seek approval from @technical-architect (agent) and then start"),
    # " turned into ' (PackmindHub 2.1.45) and a space before ? dropped
    ('Make these two button "List / Tree" more visible ?', "Make these two button 'List / Tree' more visible?"),
    ("it’s “done”", "it's \"done\""),                                    # curly quotes
    (r"rename my_var and *args", r"rename my\_var and \*args"),          # Markdown escapes
    ("café au lait", "cafe\u0301 au lait"),                                 # NFC vs NFD
    ("run the tests", "run\u200b the tests"),                              # zero-width space
    ("deploy to prod", "deploy to \u202eprod"),                             # bidi override
    ("first line\nsecond line", "first line / second line"),              # line breaks flattened
    ("why is the agent executing weird pythin?", "why is the agent executing weird python?"),  # typo fixed
    ("[Image #2] the balloon overlaps the bird", "the balloon overlaps the bird (screenshot)"),  # media marker
])
def test_meaningless_differences_are_verbatim(typed, listed):
    assert find(typed, f"- {listed}"), (typed, listed)


@pytest.mark.parametrize("typed, listed", [
    ("fix the login bug", "fix the logout bug"),                # a different word, not a typo of it
    ("deploy to staging, not prod", "deploy to staging"),      # truncated
    ("use postgres 15 for the test database", "use postgres for the test database"),  # a word dropped
    ("make the client sync again", "make the client async again"),    # one letter, but a prefix: the meaning flips
    ("include the fixtures folder", "exclude the fixtures folder"),   # two edits
    ("pin the SDK to 1.0.5 for now", "pin the SDK to 1.0.6 for now"),   # numbers are never typos
])
def test_real_changes_are_not_verbatim(typed, listed):
    assert not find(typed, f"- {listed}")


def test_a_difference_is_shown_visibly_even_when_invisible():
    shown = show_difference("run the tests", "run the\u200b tests")
    assert "<U+200B>" in shown
    assert show_difference("weird pythin?", "weird python?") == "weird [-pythin?-]{+python?+}"
    assert normalize("A\u00a0B") == "a b"


def test_a_typed_lead_then_a_pasted_log_is_kept_by_the_lead(grade, kit):
    # PackmindHub 2.1.45 L400: a typed sentence, then 87,000 characters of React warnings
    log = "\n".join(f"    at TreeNodeRenderer (http://localhost:3000/chunk-36jrqfj4.js:{33190 + i}:27)" for i in range(40))
    typed = "Seems to work but I've plenty of warning in the console: Warning: Encountered two children\n" + log
    good = _s(kit, user_messages='- "Seems to work but I\'ve plenty of warning in the console:" with duplicate key '
                                 "warnings pasted")
    assert grade("verbatim_user_messages", kit.case([kit.user(typed)], good)).status == "pass"
    assert grade("last_request_intact", kit.case([kit.user(typed)], good)).status == "pass"
    # the defect: the typed request itself cut short
    prose = ("Please rename the loader, then move the token store into its own module, and after that update "
             "every caller in src/api and rerun the whole suite before you open the pull request.")
    cut = _s(kit, user_messages='- "Please rename the loader, then move the token store into its own module"')
    for name in ("verbatim_user_messages", "last_request_intact"):
        assert grade(name, kit.case([kit.user(prose)], cut)).status == "fail", name


def test_an_interrupted_draft_is_kept_by_its_resend(grade, kit):
    # FSM1 2.1.49-manual L35 / L36 / L38: typed, interrupted, re-sent revised and longer
    draft = "So the most private option is obviously just using the user's public key. The UX here is weird."
    resend = ("So the most privacy preserving option is obviously just using the user's public key. The UX here "
              "is weird. Obviously being able to look up a users pubkey via some API would help.")
    msgs = [kit.user(draft), kit.user("[Request interrupted by user]"), kit.user(resend)]
    good = _s(kit, user_messages=f'- "{resend}"')
    assert grade("verbatim_user_messages", kit.case(msgs, good)).status == "pass"
    # a different message in between is not a draft: both must be there
    other = [kit.user("Add a settings page"), kit.say("ok"), kit.user("Write the release notes for 2.0")]
    verdict = grade("verbatim_user_messages", kit.case(other, _s(kit, user_messages='- "Write the release notes for 2.0"')))
    assert verdict.status == "fail" and "Add a settings page" in verdict.reasons[0]


def test_alike_messages_the_assistant_answered_are_not_drafts(grade, kit):
    # Templated instructions a session sends round after round differ by a word or number; each was
    # answered, so none is a draft of the next and each must be listed.
    msgs = [kit.user("Next, module 2: tighten its error handling and add tests."), kit.say("Module 2 done."),
            kit.user("Next, module 3: tighten its error handling and add tests."), kit.say("Module 3 done.")]
    both = _s(kit, user_messages="- Next, module 2: tighten its error handling and add tests.\n"
                                 "- Next, module 3: tighten its error handling and add tests.")
    assert grade("verbatim_user_messages", kit.case(msgs, both)).status == "pass"
    verdict = grade("verbatim_user_messages", kit.case(msgs, _s(
        kit, user_messages="- Next, module 3: tighten its error handling and add tests.")))
    assert verdict.status == "fail" and "module 2" in verdict.reasons[0]
    # sent again with no reply in between (the API merges the two): the resend stands for both
    resent = [kit.user("Next, module 2: tighten its error handling."),
              kit.user("Next, module 2: tighten its error handling and add tests."), kit.say("ok")]
    assert grade("verbatim_user_messages", kit.case(resent, both)).status == "pass"


def test_a_short_message_inside_a_longer_one_is_not_kept_by_it(grade, kit):
    msgs = [kit.user("Looks good, continue."), kit.say("Next module."), kit.user("Continue."), kit.say("ok")]
    good = _s(kit, user_messages='- "Looks good, continue."\n- "Continue."')
    assert grade("verbatim_user_messages", kit.case(msgs, good)).status == "pass"
    verdict = grade("verbatim_user_messages", kit.case(msgs, _s(kit, user_messages='- "Looks good, continue."')))
    assert verdict.status == "fail"
    assert "Continue." in verdict.reasons[0] and "only inside message 1" in verdict.reasons[0]
    # the same message sent twice is listed once: nothing lost
    twice = [kit.user("Continue."), kit.say("a"), kit.user("Continue."), kit.say("b")]
    assert grade("verbatim_user_messages", kit.case(twice, _s(kit, user_messages='- "Continue."'))).status == "pass"


def test_host_wrappers_and_client_texts_are_not_typed_and_command_args_are(grade, kit):
    msgs = [kit.user('<teammate-message teammate_id="pm-agent">{"type":"idle_notification"}</teammate-message>'),
            kit.user("<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>"),
            kit.user("Implement the following plan:\n\n# Plan: tree view\n\n1. Build it"),
            kit.user("<system_instruction>Answer briefly.</system_instruction>\nfix the flaky upload test"),
            kit.user("[Request interrupted by user]"),
            kit.user("<command-name>/compact</command-name>\n<command-message>compact</command-message>\n"
                     "<command-args>keep the API decisions</command-args>")]
    good = _s(kit, user_messages='- "fix the flaky upload test"\n- /compact "keep the API decisions"')
    verdict = grade("verbatim_user_messages", kit.case(msgs, good))
    assert verdict.status == "pass", verdict.reasons
    assert "all 2 person-typed messages" in verdict.reasons[0]
    lost = _s(kit, user_messages='- "fix the flaky upload test"')
    verdict = grade("verbatim_user_messages", kit.case(msgs, lost))
    assert verdict.status == "fail" and "keep the API decisions" in verdict.reasons[0]


def test_dropping_every_message_from_before_an_earlier_compaction_fails(grade, kit):
    # melagiri 2.1.69, second compaction: "No explicit user messages in this session"
    earlier = [kit.user("Can you access the branch claude/analyze-insights"), kit.say("yes"),
               kit.user("commit push this plan and create PR to merge with master")]
    history = earlier + [kit.boundary(), kit.summary_msg("earlier summary"), kit.say("working on phase 2")]
    text = _s(kit, user_messages="(No explicit user messages in this session)")
    verdict = grade("verbatim_user_messages", kit.case(history[-1:], text, history=history))
    assert verdict.status == "fail" and len(verdict.reasons) == 2


# --- errors ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tool, text, kind", [
    ("ExitPlanMode", "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was "
                     "a file edit, the new_string was NOT written to the file).", "rejected"),
    ("AskUserQuestion", "The user doesn't want to proceed with this tool use. To tell you how to proceed, the user "
                        "said:\nclarify first", "rejected"),
    ("Read", "<tool_use_error>Sibling tool call errored</tool_use_error>", "cancelled"),
    ("Read", "File content (118163 tokens) exceeds maximum allowed tokens (25000).", "tool_usage"),
    ("Edit", "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>",
     "tool_usage"),
    ("Bash", "Exit code 3", "probe"),
    ("Bash", "Exit code 127\n(eval):1: command not found: redis-cli", "probe"),
    ("Bash", "Exit code 1\nunknown flag: --stat\n\nUsage:  gh pr diff [<number>] [flags]", "probe"),
    ("Bash", "Exit code 1\nFAILED tests/test_auth.py::test_refresh - KeyError: 'user_id'", "error"),
    ("Bash", "Exit code 255\nssh: connect to host 10.0.0.1 port 22: Connection timed out", "error"),
])
def test_error_kinds(tool, text, kind):
    assert error_kind(tool, text, {"command": "pytest -x" if "FAILED" in text else "x"}) == kind


def test_rejected_and_cancelled_calls_are_neither_errors_nor_changes(grade, kit):
    # fenv-org 2.1.50: four rejected ExitPlanModes; FSM1: a rejected edit; cipher-box: cancelled siblings
    edit = kit.call("Edit", {"file_path": "/repo/src/app.py", "old_string": "a", "new_string": "b"})
    msgs = [kit.user("tidy app.py"), edit,
            kit.answer(edit, "The user doesn't want to proceed with this tool use. The tool use was rejected.",
                       is_error=True),
            *kit.tool("ExitPlanMode", {"plan": "p"}, "The user doesn't want to proceed with this tool use.",
                      is_error=True),
            *kit.tool("Read", {"file_path": "/repo/b.py"}, "<tool_use_error>Sibling tool call errored</tool_use_error>",
                      is_error=True)]
    text = _s(kit, errors="- None.", files="- None changed.")
    assert grade("errors_preserved", kit.case(msgs, text)).status == "n/a"
    assert grade("files_preserved", kit.case(msgs, text)).status == "n/a"
    # an edit that went through is a change, and its omission is caught
    done = kit.call("Edit", {"file_path": "/repo/src/app.py", "old_string": "a", "new_string": "b"})
    verdict = grade("files_preserved", kit.case(msgs + [done, kit.answer(done, "ok")], text))
    assert verdict.status == "fail" and "/repo/src/app.py" in verdict.reasons[0]


def test_claude_codes_own_files_are_not_project_files(grade, kit):
    assert claude_storage("/Users/me/.claude/plans/zany-strolling-eich.md")
    assert claude_storage("/Users/me/.claude-personal/projects/-Users-me-repo/memory/notes.md")
    assert not claude_storage("/repo/.claude/skills/simplify/SKILL.md")
    msgs = [kit.user("plan it"), *kit.tool("Write", {"file_path": "/Users/me/.claude/plans/p.md", "content": "x"})]
    assert grade("files_preserved", kit.case(msgs, _s(kit, files="- none"))).status == "n/a"


def test_an_error_kept_by_its_identifying_tokens_in_other_words(grade, kit):
    # slopometry 2.0.65: ruff's UP038 at python_feature_analyzer.py:135, told as "Ruff UP038: isinstance ..."
    result = ("Exit code 1\nsrc/slopometry/core/python_feature_analyzer.py:135:16: UP038 Use `X | Y` in `isinstance` "
              "call instead of `(X, Y)`")
    msgs = [kit.user("run ruff"), *kit.tool("Bash", {"command": "uv run ruff check ."}, result, is_error=True)]
    good = _s(kit, errors="- **Ruff UP038** in python_feature_analyzer.py line 135: `isinstance(node, (A, B))` "
                          "-> `isinstance(node, A | B)`")
    assert grade("errors_preserved", kit.case(msgs, good)).status == "pass"
    # mfenv-org 2.1.50: E0425 told by the missing name
    rust = "Exit code 101\nerror[E0425]: cannot find type `RawEntry` in this scope\n   --> src/pipeline/ingest.rs:12:5"
    msgs2 = [kit.user("fix it"), *kit.tool("Bash", {"command": "cargo clippy -- -D warnings"}, rust, is_error=True)]
    good2 = _s(kit, errors="- Missing imports after extracting helpers: `RawEntry`, `Turn` were not imported in "
                           "ingest.rs. Fixed by adding them.")
    assert grade("errors_preserved", kit.case(msgs2, good2)).status == "pass"
    # the defect: section 4 tells another error of the same tool
    bad = _s(kit, errors="- clippy: too many arguments in process_turns (8/7); allowed it.")
    verdict = grade("errors_preserved", kit.case(msgs2, bad))
    assert verdict.status == "fail" and "RawEntry" in verdict.reasons[0]
    only_type = _s(kit, errors="- A KeyError somewhere in the loader; fixed.")
    exc = "Exit code 1\nsqlalchemy.exc.OperationalError: no such table: sessions"
    msgs3 = [kit.user("migrate"), *kit.tool("Bash", {"command": "pytest"}, exc, is_error=True)]
    assert grade("errors_preserved", kit.case(msgs3, only_type)).status == "fail"


_RUFF = ("Exit code 1\nsrc/slopometry/core/python_feature_analyzer.py:135:16: UP038 Use `X | Y` in `isinstance` "
         "call instead of `(X, Y)`")
_LINT = "error: script \"lint:fix\" exited with code 1\nsrc/ContextTab.tsx:12:3 format ━━━━ Formatter would have printed"


@pytest.mark.parametrize("told", [
    "- **Ruff UP038**: `isinstance(node, (ast.Import, ast.ImportFrom))` → `isinstance(node, ast.Import | ast.ImportFrom)`",
    "- Ruff UP038 in python_feature_analyzer.py line 135: no errors remain after the fix",
    "- **Ruff UP038**: `isinstance(node, (A, B))` → `isinstance(node, A | B)`; `ruff check` passes cleanly now",
])
def test_an_error_told_in_section_4_is_kept_whatever_else_the_item_says(grade, kit, told):
    msgs = [kit.user("run ruff"), *kit.tool("Bash", {"command": "uv run ruff check --fix ."}, _RUFF, is_error=True)]
    assert grade("errors_preserved", kit.case(msgs, _s(kit, errors=told))).status == "pass"


@pytest.mark.parametrize("denied, why", [
    # M6 of the review (slopometry 2.0.65): the item names the command, the code and `isinstance`, and denies it
    ("- No ruff errors: `uv run ruff check --fix .` passed cleanly (UP038 rule not triggered)", "says it did not happen"),
    # another code of ruff's kind, with the same words: another error
    ("- **Ruff UP037**: `isinstance(node, (ast.Import, ast.ImportFrom))` → `isinstance(node, ast.Import | ast.ImportFrom)`",
     "names UP037, not UP038"),
])
def test_an_item_denying_the_error_or_naming_another_code_does_not_keep_it(grade, kit, denied, why):
    msgs = [kit.user("run ruff"), *kit.tool("Bash", {"command": "uv run ruff check --fix ."}, _RUFF, is_error=True)]
    verdict = grade("errors_preserved", kit.case(msgs, _s(kit, errors=denied)))
    assert verdict.status == "fail", verdict.reasons
    assert "UP038" in verdict.reasons[0] and why in verdict.reasons[0]


def test_a_lint_failure_said_never_to_have_happened_is_not_kept(grade, kit):
    # PackmindHub 2.1.45: Biome's lint:fix failed; section 4 says the script never failed
    msgs = [kit.user("lint it"), *kit.tool("Bash", {"command": "bun run lint:fix 2>&1"}, _LINT, is_error=True)]
    good = _s(kit, errors="- **Lint formatting errors**: Biome reported indentation issues in ContextTab.tsx. "
                          "Fixed with `bun run lint:fix`.")
    assert grade("errors_preserved", kit.case(msgs, good)).status == "pass"
    bad = _s(kit, errors="- **Lint**: `bun run lint` and `bun run lint:fix` never failed in this session (exit code 0).")
    verdict = grade("errors_preserved", kit.case(msgs, bad))
    assert verdict.status == "fail" and "says it did not happen" in verdict.reasons[0], verdict.reasons


# --- tasks ------------------------------------------------------------------------------------------------


def test_taskcreate_tasks_are_pending_until_completed(grade, kit):
    # Claude Code 2.1.45+ (PackmindHub, monodreams): TaskCreate / TaskUpdate instead of TodoWrite
    msgs = [kit.user("build the registry"),
            *kit.tool("TaskCreate", {"subject": "Design block.json manifest schema"}, "Task #1 created successfully"),
            *kit.tool("TaskCreate", {"subject": "Scaffold MonoDreams.Cli dotnet global tool project"},
                      "Task #2 created successfully"),
            *kit.tool("TaskUpdate", {"taskId": "1", "status": "completed"}, "Updated task #1 status")]
    assert open_tasks(msgs) == ["Scaffold MonoDreams.Cli dotnet global tool project"]
    good = _s(kit, pending="- Task #2: Scaffold `MonoDreams.Cli/MonoDreams.Cli.csproj` as a dotnet global tool")
    assert grade("pending_tasks", kit.case(msgs, good)).status == "pass"
    verdict = grade("pending_tasks", kit.case(msgs, _s(kit, pending="- None.")))
    assert verdict.status == "fail" and "Scaffold MonoDreams.Cli" in verdict.reasons[0]


# --- section titles ---------------------------------------------------------------------------------------


def test_section_titles_match_on_their_leading_words(grade, kit):
    titles = {"pending": "Pending Tasks (from tasks.md)", "user_messages": "All user messages (verbatim, in order)",
              "errors": "Errors and Fixes Made So Far", "current": "Current Work — where we stopped"}
    text = "\n\n".join(f"{n}. {titles.get(k, kit.SECTION_TITLES[k])}:\n   body of {k}"
                       for n, k in enumerate(kit.SECTION_KINDS, start=1))
    case = kit.case([kit.user("go")], text)
    assert grade("nine_sections", case).status == "pass"
    msgs = [kit.user("go"), *kit.todo(("Ship it", "pending"))]
    text = text.replace("body of pending", "- Ship it")
    assert grade("pending_tasks", kit.case(msgs, text)).status == "pass"
    missing = text.replace("7. Pending Tasks (from tasks.md):", "7. Lunch (from tasks.md):")
    assert grade("nine_sections", kit.case(msgs, missing)).status == "fail"


# --- versions -----------------------------------------------------------------------------------------------


ANALYSIS = "This session is being continued from a previous conversation.\nAnalysis:\nthinking\n\nSummary:\n"


def test_analysis_kept_by_a_version_that_keeps_it_is_na_naming_it(grade, kit):
    text = ANALYSIS + _s(kit)
    for version in ("2.0.76", "2.1.49", "2.1.56"):
        verdict = grade("analysis_stripped", _real(kit.case([kit.user("go")], text), version))
        assert verdict.status == "n/a" and version in verdict.reasons[0]
    verdict = grade("analysis_stripped", _real(kit.case([kit.user("go")], text), "2.1.69"))
    assert verdict.status == "fail" and "2.1.69" in verdict.reasons[0]
    # an engine run's summary (no version) is held to the seed as before
    assert grade("analysis_stripped", kit.case([kit.user("go")], text)).status == "fail"


@pytest.mark.parametrize("version, trigger, tail, status", [
    ("2.0.65", "auto", "Please continue the conversation from where we left it off without asking the user any "
                       "further questions.", "pass"),
    ("2.1.45", "auto", "read the full transcript at: /u/.claude/projects/p/s.jsonl\nPlease continue the conversation "
                       "from where we left off without asking the user any further questions.", "pass"),
    ("2.1.69", "auto", "read the full transcript at: /u/s.jsonl\nContinue the conversation from where it left off "
                       "without asking the user any further questions. Resume directly — do not recap.", "pass"),
    ("2.0.76", "manual", "", "n/a"),          # 2.0.x wrote no path, and /compact no continuation
    ("2.1.87", "manual", "read the full transcript at: /u/s.jsonl", "pass"),
    ("2.1.49", "auto", "Please continue the conversation from where we left off.", "fail"),  # 2.1.x path missing
    ("2.1.150", "manual", "read the full transcript at: /u/s.jsonl", "fail"),  # 2.1.150 writes it for /compact
])
def test_continuation_by_version(grade, kit, version, trigger, tail, status):
    text = _s(kit) + ("\n\nIf you need specific details from before compaction, " + tail if tail else "")
    verdict = grade("continuation", _real(kit.case([kit.user("go")], text, trigger=trigger), version, trigger))
    assert verdict.status == status, verdict.reasons
    if status != "pass":
        assert version in verdict.reasons[0]


def test_every_promise_row_cites_corpus_files_and_unknown_versions_are_not_failures():
    for row in PROMISES.values():
        assert row.evidence and all(f.endswith(".jsonl") for f, _ in row.evidence)
    assert promise("analysis_stripped", "2.1.60").state == "unknown"
    assert promise("transcript_path", "2.0.99").state == "unknown"
    assert promise("transcript_path", None).state == "unknown"


# --- next step ----------------------------------------------------------------------------------------------


def test_next_step_after_a_bare_go_ahead_may_quote_the_request_it_started(grade, kit):
    # monodreams 2.1.150: "Setup tasks so you promote ..." then "Kick it off"
    request = "Setup tasks so you promote and then create the registry and the monodreams CLI dotnet tool."
    msgs = [kit.user(request), kit.say("Tasks are set up."), kit.user("Kick it off"), kit.say("Starting task 1.")]
    good = _s(kit, next=f'Start task #6, per the user\'s directive: "{request}"')
    assert grade("next_step_quote", kit.case(msgs, good)).status == "pass"
    # the defect: a next step that quotes nothing
    assert grade("next_step_quote", kit.case(msgs, _s(kit, next="Start task #6 (block.json schema)."))).status == "fail"
    # and quoting an old request after a real new one is drift
    msgs2 = [kit.user(request), kit.say("done"), kit.user("Now write the release notes for the 2.0 launch"),
             kit.say("Writing them.")]
    assert grade("next_step_quote", kit.case(msgs2, good)).status == "fail"


def test_next_step_may_quote_the_turn_a_last_question_came_after(grade, kit):
    # FSM1 2.1.49-manual: the workflow printed "Next Up", a queued question arrived, then /compact
    msgs = [kit.user("/gsd:discuss-phase 14"), kit.say("## Next Up\n\n**Phase 14: User-to-User Sharing** — Share "
                                                        "encrypted folders\n\n`/gsd:plan-phase 14`"),
            kit.user("is the pencil mcp down?")]
    good = _s(kit, next='The next step is:\n   > "**Phase 14: User-to-User Sharing** — Share encrypted folders"')
    assert grade("next_step_quote", kit.case(msgs, good)).status == "pass"


# --- drift ------------------------------------------------------------------------------------------------


class _RecordingJudge:
    label = "recording"

    def __init__(self):
        self.items = []

    def judge_many(self, items):
        from types import SimpleNamespace
        self.items += items
        return [SimpleNamespace(ungraded=False, passed=True, score=5, votes=[5], lost=[], error=None, reasons=[])
                for _ in items]


def test_drift_holds_each_generation_to_the_requests_made_before_it(registry, kit):
    first, later = "Refactor the session module", "Now add rate limiting to the login endpoint"
    g1_history = [kit.user(first), kit.say("ok")]
    g2_history = g1_history + [kit.boundary(), kit.summary_msg("s1"), kit.user(later), kit.say("ok")]
    g3_history = g2_history + [kit.boundary(), kit.summary_msg("s2"), kit.say("more")]
    cases = [kit.case(h[-1:], _s(kit), history=h) for h in (g1_history, g2_history, g3_history)]
    judge = _RecordingJudge()
    for n, c in enumerate(cases, start=1):
        c.index, c.generations, c.is_last, c.judge = n, cases, c is cases[-1], judge
    (verdict,) = registry.run(cases[-1], [registry.get("drift")])
    assert verdict.status == "pass", verdict.reasons
    intents = [data["intent"] for _, data in judge.items]
    assert later not in intents[0]           # generation 1 came before the later request
    assert later in intents[1] and later in intents[2]


@pytest.mark.parametrize("body", [
    "The task is complete; awaiting the user's next instruction.",
    "No further action is required until the user reviews the PR.",
    "Wait for the user to confirm the balloon auto-flip before changing anything.",
])
def test_a_next_step_that_only_waits_for_the_person_proposes_nothing(grade, kit, body):
    verdict = grade("next_step_quote", kit.case([kit.user("ship it"), kit.say("shipped")], _s(kit, next=body)))
    assert verdict.status == "n/a", verdict.reasons


def test_a_quote_in_single_quotes_counts_and_an_apostrophe_is_no_quote(grade, kit):
    msgs = [kit.user("fix the flaky upload test before the release"), kit.say("on it")]
    good = _s(kit, next="Fix it, per the user's request: 'fix the flaky upload test before the release'.")
    assert grade("next_step_quote", kit.case(msgs, good)).status == "pass"
    bad = _s(kit, next="Fix the user's flaky test and don't forget the release notes.")
    assert grade("next_step_quote", kit.case(msgs, bad)).status == "fail"


def test_a_short_last_message_quoted_whole_with_its_period_counts(grade, kit):
    msgs = [kit.user("Migrate the billing tables to the new schema"), kit.say("Migrated two of five."),
            kit.user("Keep going."), kit.say("Migrating the invoices table.")]
    assert grade("next_step_quote", kit.case(msgs, _s(kit, next='The user said "Keep going."'))).status == "pass"
    # a short fragment of a longer message is not a quote of it
    msgs2 = [kit.user("Migrate the billing tables to the new schema, then drop the old ones"), kit.say("ok")]
    assert grade("next_step_quote", kit.case(msgs2, _s(kit, next='Next: "the old ones".'))).status == "fail"


def test_a_file_created_and_removed_again_is_not_a_change(grade, kit):
    msgs = [kit.user("find the bug"),
            *kit.tool("Write", {"file_path": "/repo/debug_repro.py", "content": "print(1)"}),
            *kit.tool("Bash", {"command": "cd /repo && python debug_repro.py && rm -f debug_repro.py"}, "1"),
            *kit.tool("Edit", {"file_path": "/repo/src/loader.py", "old_string": "a", "new_string": "b"})]
    good = _s(kit, files="- src/loader.py: fixed the key lookup")
    assert grade("files_preserved", kit.case(msgs, good)).status == "pass"
    verdict = grade("files_preserved", kit.case(msgs, _s(kit, files="- none")))
    assert verdict.status == "fail" and verdict.reasons[0].startswith("/repo/src/loader.py")


@pytest.mark.parametrize("tool, text", [
    ("Bash", "PreToolUse:Bash hook error: [python3 guard.py]: BLOCKED: writes outside the repo"),
    ("WebFetch", "Request failed with status code 404"),
    ("Grep", "Path does not exist: /repo/vendor"),
])
def test_hook_refusals_and_empty_lookups_are_not_errors(tool, text):
    assert error_kind(tool, text, {}) != "error"


def test_a_last_request_that_differs_shows_where(grade, kit):
    last = "Deploy the worker to staging and leave production alone"
    text = _s(kit, user_messages="- Deploy the worker to production and leave staging alone")
    verdict = grade("last_request_intact", kit.case([kit.user(last)], text))
    assert verdict.status == "fail"
    assert "differences:" in verdict.reasons[0] and "[-staging-]{+production+}" in verdict.reasons[0]


def test_a_file_named_without_its_line_does_not_identify_an_error(grade, kit):
    # two errors in one file: section 4 telling one of them does not keep the other
    denied = "<tool_use_error>EACCES: permission denied, open 'src/render.py'</tool_use_error>"
    msgs = [kit.user("escape the output"),
            *kit.tool("Edit", {"file_path": "src/render.py", "old_string": "a", "new_string": "b"}, denied,
                      is_error=True)]
    told = _s(kit, errors="- ValueError in src/render.py: unescaped markup; escaped it.")
    verdict = grade("errors_preserved", kit.case(msgs, told))
    assert verdict.status == "fail" and "EACCES" in verdict.reasons[0]


def test_a_misquoted_next_step_shows_the_difference(grade, kit):
    msgs = [kit.user("Rename the loader module to token_loader and update the imports"), kit.say("on it")]
    text = _s(kit, next='As asked: "Rename the loader module to session_loader and update the imports"')
    verdict = grade("next_step_quote", kit.case(msgs, text))
    assert verdict.status == "fail"
    assert "[-session_loader-]{+token_loader+}" in verdict.reasons[0]
