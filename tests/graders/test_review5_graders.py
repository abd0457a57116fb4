"""Review 5 (#4, #5, #6, #13, #18-#20): hand-built sessions in words written for the test. Each rule
is shown passing a good summary and failing a defective one with a reason that says what is wrong."""

from __future__ import annotations

from pytest_ctxeval.reading.workarounds import worked_around

# -- #4: a command line the environment refused, then worked around, is an error to keep ---------------

RUN = "python /srv/tally/gen_report.py"
NOT_FOUND = "Exit code 127\n/bin/bash: line 1: python: command not found"


def _workaround_case(kit, errors: str, *, asked: bool = False, worked: bool = True):
    messages = [kit.user("generate the weekly tally report"),
                *kit.tool("Bash", {"command": RUN}, NOT_FOUND, is_error=True)]
    if worked:
        messages += kit.tool("Bash", {"command": "python3 /srv/tally/gen_report.py"}, "report written: 42 rows")
    if asked:
        messages += [kit.user("can you run `cat missing_notes.txt`"),
                     *kit.tool("Bash", {"command": "cat missing_notes.txt"},
                               "Exit code 1\ncat: missing_notes.txt: No such file or directory", is_error=True)]
    messages.append(kit.say("Done."))
    return kit.case(messages, kit.summary_of(errors=errors))


def test_a_missing_program_worked_around_is_an_error_the_summary_keeps(grade, kit):
    good = grade("errors_preserved", _workaround_case(kit, "- `python: command not found`; used `python3` instead"))
    assert good.status == "pass", good.reasons
    told_by_fix = grade("errors_preserved", _workaround_case(kit, "- the report script runs with python3, not python"))
    assert told_by_fix.status == "pass", told_by_fix.reasons
    bad = grade("errors_preserved", _workaround_case(kit, "- None."))
    assert bad.status == "fail" and "python: command not found" in bad.reasons[0], bad.reasons
    # naming the program without saying it was refused, nor what worked instead, keeps no lesson
    vague = grade("errors_preserved", _workaround_case(kit, "- a python version issue, sorted by switching python"))
    assert vague.status == "fail", vague.reasons


def test_a_refusal_nothing_worked_around_and_an_asked_probe_stay_out_and_the_reason_says_so(grade, kit):
    verdict = grade("errors_preserved", _workaround_case(kit, "- None.", worked=False, asked=True))
    assert verdict.status == "n/a", verdict.reasons
    reason = verdict.reasons[0]
    assert "2 tool results failed, not counted" in reason, reason
    assert "1 command line the shell refused, not worked around (`python /srv/tally/gen_report.py`" in reason, reason
    assert "asked for by the person (`cat missing_notes.txt`" in reason, reason
    assert "no tool result failed in" not in reason


def test_a_wrong_flag_counts_by_the_flag_and_a_retry_that_only_looks_is_no_workaround(grade, kit):
    messages = [kit.user("list what PR 12 changed"),
                *kit.tool("Bash", {"command": "gh pr diff 12 --stat"},
                          "unknown flag: --stat\n\nUsage:  gh pr diff [<number>] [flags]\n  --name-only  Display only names",
                          is_error=True),
                *kit.tool("Bash", {"command": "gh pr diff 12 --name-only"}, "src/app.py"), kit.say("One file.")]
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies["errors"] = "- PR #12 review: a reviewer asked for smaller diffs"   # "pr" and "diff", not the lesson
    bad = grade("errors_preserved", kit.case(messages, kit.summary(bodies)))
    assert bad.status == "fail" and "unknown flag: --stat" in bad.reasons[0], bad.reasons
    bodies["errors"] = "- `gh pr diff` has no `--stat` flag; `--name-only` lists the files"
    assert grade("errors_preserved", kit.case(messages, kit.summary(bodies))).status == "pass"
    assert worked_around("docker ps", [("which docker || /usr/local/bin/docker ps", True)]) == ""
    assert worked_around("cd web && grep -n foo *.ts", [("grep -n foo web/*.ts", True)]) == ""


# -- #5: a one-letter change of a common word is another word, not a fixed typo ---------------------------


def _quote_case(kit, typed: str, quoted: str):
    messages = [kit.user("set up the nightly export job"), kit.say("Set up."), kit.user(typed), kit.say("On it.")]
    return kit.case(messages, kit.summary_of(user_messages=f'- "set up the nightly export job"\n- "{quoted}"'))


def test_a_real_word_turned_into_another_is_not_a_typo_fixed(grade, kit):
    for typed, quoted, changed in [("ship the release but skip the changelog", "skip the release but skip the changelog",
                                    "[-ship-]{+skip+}"),
                                   ("lock the ledger table before the import", "look the ledger table before the import",
                                    "[-lock-]{+look+}"),
                                   ("make the billing endpoint public", "make the billing endpoint pubic",
                                    "[-public-]{+pubic+}")]:
        for grader in ("verbatim_user_messages", "last_request_intact"):
            bad = grade(grader, _quote_case(kit, typed, quoted))
            assert bad.status == "fail" and changed in bad.reasons[0], (grader, bad.reasons)


def test_the_persons_own_typo_fixed_still_passes(grade, kit):
    for grader in ("verbatim_user_messages", "last_request_intact"):
        good = grade(grader, _quote_case(kit, "rerun the exporter with pythin 3.12", "rerun the exporter with python 3.12"))
        assert good.status == "pass" and "typo" in good.reasons[0], good.reasons


# -- #6: a changed file called deleted, pre-existing or unchanged -----------------------------------------


def _files_case(kit, files_body: str, *, removed: bool = False):
    messages = [kit.user("write the seed data and a loader for it"),
                *kit.tool("Write", {"file_path": "/srv/farm/seed_rows.csv", "content": "id,name\n1,oak\n"},
                          "File created successfully at: /srv/farm/seed_rows.csv"),
                *kit.tool("Write", {"file_path": "/srv/farm/load_seed.py", "content": "import csv\n"},
                          "File created successfully at: /srv/farm/load_seed.py")]
    if removed:
        messages += kit.tool("Bash", {"command": "rm /srv/farm/seed_rows.csv"}, "")
    messages.append(kit.say("Done."))
    return kit.case(messages, kit.summary_of(files=files_body))


def test_a_file_called_deleted_that_no_command_deleted_fails(grade, kit):
    good = grade("files_preserved", _files_case(kit, "- seed_rows.csv (created: two rows)\n- load_seed.py (created)"))
    assert good.status == "pass", good.reasons
    bad = grade("files_preserved", _files_case(
        kit, "- seed_rows.csv (created, then deleted again)\n- load_seed.py (created; removed the unused import)"))
    assert bad.status == "fail" and len(bad.reasons) == 1, bad.reasons   # "removed the unused import" is content
    assert "calls /srv/farm/seed_rows.csv deleted" in bad.reasons[0] and "no shell command names it" in bad.reasons[0]
    # when a command of the session did delete it, saying so is true
    told = grade("files_preserved", _files_case(kit, "- seed_rows.csv (created, then deleted)\n- load_seed.py (created)",
                                                removed=True))
    assert told.status == "pass", told.reasons


def test_a_written_file_called_pre_existing_or_only_read_fails(grade, kit):
    bad = grade("files_preserved", _files_case(
        kit, "- seed_rows.csv (pre-existing file, only read to check its rows)\n- load_seed.py (created)\n"
             "- notes: seed_rows.csv was written by the Write tool"))
    assert bad.status == "fail" and "calls /srv/farm/seed_rows.csv pre-existing" in bad.reasons[0], bad.reasons
    assert 'returned "File created"' in bad.reasons[0]
    unchanged = grade("files_preserved", _files_case(
        kit, "- seed_rows.csv — read-only reference\n- load_seed.py (created)\n- seed_rows.csv holds the two rows"))
    assert unchanged.status == "fail" and "calls /srv/farm/seed_rows.csv unchanged" in unchanged.reasons[-1], \
        unchanged.reasons


# -- #13: a whole request lost is never a full intent score ---------------------------------------------


def _intent_case(kit, kept: int):
    from pytest_ctxeval.grading.judging import Judge
    from pytest_ctxeval.llm import make_llm

    asks = ["rename the orchard module to grove everywhere", "keep the grove importer backwards compatible",
            "bump the grove schema version to seven", "write a migration note for the grove rename",
            "after that split the remaining plan across three teammates"]
    messages = [m for a in asks for m in (kit.user(a), kit.say("Done."))]
    told = "\n".join(f'- "{a}"' for a in asks[:kept])
    case = kit.case(messages, kit.summary({"request": told, "user_messages": told, "next": "x"}))
    case.judge = Judge(make_llm("offline"))
    return case


def test_a_lost_request_lowers_the_offline_intent_score_and_says_why(grade, kit):
    good = grade("intent_preservation", _intent_case(kit, kept=5))
    assert good.status == "pass" and good.score == 1.0 and not any(r.startswith("lost:") for r in good.reasons)
    one_lost = grade("intent_preservation", _intent_case(kit, kept=4))
    assert one_lost.score <= 0.8, one_lost.reasons
    assert any("1 of 5 messages holds under half of its terms there (lost), so at most 4/5" in r
               for r in one_lost.reasons), one_lost.reasons
    assert any(r.startswith("lost: after that split the remaining plan") for r in one_lost.reasons)


# -- #18: a conversation pasted after a typed lead is a paste --------------------------------------------

LEAD = ("I want to split the garden planner into packages that a user copies into their project, the way the "
        "component registries do it. Read the three example levels first and ask me before you pick a layout. "
        "Take into account this conversation for better context:")
CHAT = "\n".join(f"> {who}:\n{line}" for who, line in [
    ("Dana", "should the planner ship as one library or as copied source?"),
    ("Helper Bot", "copied source works better when agents edit it: " + "they read every file they own. " * 30),
    ("Dana", "and updates upstream?"),
    ("Helper Bot", "a small CLI re-applies the registry diff on request. " * 20)])


def _chat_case(kit, quoted: str):
    message = f"{LEAD}\n{CHAT}"
    messages = [kit.user(message), kit.say("I'll read the levels first.")]
    return kit.case(messages, kit.summary_of(user_messages=f'- "{quoted}"'))


def test_a_typed_lead_kept_whole_before_a_pasted_chat_passes_and_a_cut_lead_says_so(grade, kit):
    good = grade("verbatim_user_messages", _chat_case(kit, LEAD + " [pasted conversation with Helper Bot]"))
    assert good.status == "pass" and "conversation pasted after it summarised" in good.reasons[0], good.reasons
    bad = grade("verbatim_user_messages", _chat_case(kit, LEAD[:120] + "... (pasted chat)"))
    assert bad.status == "fail", bad.reasons
    reason = bad.reasons[0]
    assert "it is a typed lead (" in reason and "then a pasted conversation" in reason, reason
    assert "the typed lead is cut after" in reason and "none of its last 300" not in reason, reason


# -- #19: a file named only by a range of numbered names -----------------------------------------------


def test_a_file_inside_a_named_range_is_still_missing_and_the_reason_says_range(grade, kit):
    names = ["00_overview.md", "01_layout.md", "02_storage.md", "03_watering.md"]
    messages = [kit.user("write the design notes")]
    for n in names:
        messages += kit.tool("Write", {"file_path": f"/srv/garden/notes/{n}", "content": "# x\n"},
                             f"File created successfully at: /srv/garden/notes/{n}")
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies["files"] = "- notes/ (00_overview through 03_watering): four design notes"
    bad = grade("files_preserved", kit.case(messages, kit.summary(bodies)))
    assert bad.status == "fail", bad.reasons
    assert all("named only as part of a range: '00_overview through 03_watering'" in r for r in bad.reasons), bad.reasons
    bodies["files"] = "- notes/: " + ", ".join(names)
    assert grade("files_preserved", kit.case(messages, kit.summary(bodies))).status == "pass"


# -- #20: next_step_quote says whose words section 8 quoted, and when the code-span rule decided ----------


def _next_case(kit, current: str, next_step: str):
    run = "npm run e2e -- --grep 'shelf sync keeps order'"
    messages = [kit.user("the e2e suite is still red, go through the failing specs one by one"),
                *kit.tool("Bash", {"command": run}, "1) shelf.spec.ts:40 › shelf sync keeps order\n  Timeout 30000ms",
                          is_error=True),
                kit.say("The sync spec times out.")]
    return kit.case(messages, kit.summary_of(current=current, next=next_step))


def test_a_missing_next_step_quote_names_a_test_title_and_a_command_for_what_they_are(grade, kit):
    good = grade("next_step_quote", _next_case(
        kit, "Fixing the sync spec.",
        'Rerun the spec: "the e2e suite is still red, go through the failing specs one by one"'))
    assert good.status == "pass", good.reasons
    bad = grade("next_step_quote", _next_case(
        kit, 'The spec "shelf sync keeps order" times out.',
        "Rerun `npm run e2e -- --grep 'shelf sync keeps order'` after raising the timeout."))
    assert bad.status == "fail", bad.reasons
    reason = bad.reasons[0]
    assert "section 8 quotes a tool's output after the last request" in reason, reason
    assert "names a command run after it, `npm run e2e" in reason and "counts as code, not a quote" in reason, reason


# -- #10: the "what was lost" panel reads as the graders do ---------------------------------------------


def test_the_lost_panel_uses_the_graders_matching(kit):
    from pytest_ctxeval.grading.lost import lost_facts

    root = "/home/me/orchard"
    span = [kit.user("pull the agent branch, then fix the docs"),
            *kit.tool("Bash", {"command": "git pull origin agent7"},
                      "fatal: couldn't find remote ref agent7", is_error=True),
            *kit.tool("Read", {"file_path": f"{root}/.github/workflows/ci.yml"}, "1→name: ci"),
            *kit.tool("Read", {"file_path": "/home/me/.claude/plans/fuzzy-purring-wombat.md"}, "1→# plan"),
            kit.say("Reading history/2026-02-20_active-agent-pivot.md and the pruneStaleRows helper next.")]
    told = ("4. Errors and fixes:\n   - `git pull origin agent7` failed: the branch `agent7` is not on the remote\n"
            "3. Files: `.github/workflows/ci.yml` (read), history/2026-02-20_active-agent-pivot.md (read)")
    lost = lost_facts(span, [kit.summary_msg(told)], span)
    assert lost.facts["errors"] == [], lost.facts["errors"]          # told by its tokens, as errors_preserved reads it
    texts = [f.text for f in lost.facts["identifiers"]]
    assert not any("ci.yml" in t or ".claude/plans" in t for t in texts), texts   # suffix; Claude Code storage
    assert not any(t in ("pivot.md", "active-agent-pivot.md") for t in texts), texts   # no fragments of names
    assert "pruneStaleRows" in texts, texts                            # what the summary dropped is still listed
    dropped = lost_facts(span, [kit.summary_msg("3. Files: none")], span)
    assert [f.text for f in dropped.facts["errors"]] == ["fatal: couldn't find remote ref agent7"]
