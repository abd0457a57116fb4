"""Grader classes found on more real Claude Code summaries the project had not seen (round 5: a
2.1.x documentation-site session whose section 6 quotes the last message followed by a bracketed
note of the summariser's; a Portuguese 2.1.x plan-mode session whose messages were typed as feedback
when rejecting ExitPlanMode; a Russian 1.0.x session whose message held a copied console page between
a typed lead and a typed last line; a 2.1.x session through a third-party model whose section 6 also
quoted the session's standing rules), rebuilt as transcripts from the exports and summaries, graded
with ``ctxeval grade -v`` and read by hand. Each test is a hand-built case of the class, in words
written for the test: the good summary passes, the defective one fails with a reason that names what
is wrong."""

from __future__ import annotations

from pytest_ctxeval.reading.quoting import copy_runs_on
from pytest_ctxeval.reading.verbatim import Haystack


def _s(kit, **bodies: str) -> str:
    base = {k: "x" for k in kit.SECTION_KINDS}
    base.update(bodies)
    return kit.summary(base)


LAST = "please refresh the changelog page, the new importer options are listed in docs/importer.md"


def _case(kit, listed_last: str):
    msgs = [kit.user("rewrite the landing page so it explains both command line tools"), kit.say("Rewritten."),
            kit.user(LAST)]
    listed = f'- "rewrite the landing page so it explains both command line tools"\n{listed_last}'
    return kit.case(msgs, _s(kit, user_messages=listed))


def test_a_bracketed_note_inside_a_quote_is_the_summariser_s(grade, kit):
    """A real 2.1.x section 6 quoted the last message as ``"… tests/e2e [followed by summary request
    instructions]"``: the compaction prompt reaches the model in the same turn as the person's last
    message, and the summariser said so in brackets inside the quote marks. The quote was read as a
    copy with words added ("a quote that holds the message and words the person did not type"), and
    the message reported lost although it was there in full."""
    for note in ("[followed by summary request instructions]", "[screenshot attached]", "[sent twice]"):
        verdict = grade("verbatim_user_messages", _case(kit, f'- "{LAST} {note}"'))
        assert verdict.status == "pass", (note, verdict.reasons)


def test_words_added_outside_brackets_are_still_a_copy_with_words_added(grade, kit):
    """The other side: words added inside the quote without brackets are words the person is said to
    have typed, and a bracketed note does not hide a message that is cut."""
    added = grade("verbatim_user_messages", _case(kit, f'- "{LAST} and also drop the old release tables"'))
    assert added.status == "fail" and "message 2 of 2" in added.reasons[0], added.reasons
    cut = grade("verbatim_user_messages", _case(kit, '- "please refresh the changelog page [importer options]"'))
    assert cut.status == "fail" and "message 2 of 2" in cut.reasons[0], cut.reasons


def test_copy_runs_on_reads_a_bracketed_note_as_no_words_added():
    assert copy_runs_on("fix the login bug", Haystack('- "fix the login bug [then the summary request]"')) == ""
    assert copy_runs_on("fix the login bug", Haystack('- "fix the login bug, then drop the tables"')) != ""
    # a note and added words: the added words still count
    assert copy_runs_on("fix the login bug", Haystack('- "fix the login bug [typed twice] and drop the tables"')) != ""


REJECT = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
          "edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\n")


def test_feedback_typed_when_rejecting_a_plan_is_kept_with_a_trailing_note(grade, kit):
    """The Portuguese session's section 6 listed each message typed as feedback on a rejected
    ExitPlanMode with a note after the quote ("(rejected ExitPlanMode #1)"), one with "(sent while
    working)", and kept the ``@/plans/…`` file mentions as typed: all kept (no fix needed; this pins
    the reading). Leaving the feedback out is still a loss, named as feedback."""
    first = "continue with wave two, spec in @plans/specs/wave-2.md"
    feedback = "antes de eu rever o seu plano, leia @/plans/VISAO.md e reavalie as decisões da onda 2"
    msgs = [kit.user(first), *kit.tool("ExitPlanMode", {"plan": "p"}, REJECT + feedback, is_error=True),
            kit.say("Reading the vision first.")]
    kept = f'- "{first}"\n- "{feedback}" (rejected ExitPlanMode #1)'
    verdict = grade("verbatim_user_messages", kit.case(msgs, _s(kit, user_messages=kept)))
    assert verdict.status == "pass", verdict.reasons
    lost = grade("verbatim_user_messages", kit.case(msgs, _s(kit, user_messages=f'- "{first}"')))
    assert lost.status == "fail" and "rejecting a tool use" in lost.reasons[0], lost.reasons


# --- a 1.0.x Russian session: a copied console page between a typed lead and a typed tail ----------

PAGE = ("photos-public\nCreated:\nMarch 3, 2025\nBucket ID:\n7c2e90aa41b3f5d6e8\nType:\nPublic\n"
        "Lifecycle:\nKeep all versions\nCurrent Files:\n0\nEndpoint:\ns3.eu-central-003.example.com\n"
        "Encryption:\nDisabled")
LEAD = "I made a new bucket `PHOTOS_BUCKET=photos-public` and put it in the config, the console shows"
TAIL = "~/code/crm-bot/.env там ключи, доделай загрузку"


def _page_case(kit, listed: str):
    msgs = [kit.user("upload the profile photos to the bucket"), kit.say("Uploaded; the bucket is private."),
            kit.user(f"{LEAD} \\\n\\\n{PAGE}\n\\\n{TAIL}"), kit.say("Trying the new bucket.")]
    return kit.case(msgs, _s(kit, user_messages=f'- "upload the profile photos to the bucket"\n{listed}'))


def test_a_copied_console_page_is_pasted_output(grade, kit):
    """A real 1.0.x section 6 kept a message's typed lead and its typed last line (Russian, after a
    path) and left out the bucket settings page the person had copied between them (label lines,
    "Bucket ID:", each value on the next line). The page was not read as pasted output (no log
    prefix, no code), so the whole message was reported lost, and the last request "not in full"."""
    verdict = grade("verbatim_user_messages", _page_case(kit, f'- "{LEAD} \\ {TAIL}"'))
    assert verdict.status == "pass", verdict.reasons
    assert grade("last_request_intact", _page_case(kit, f'- "{LEAD} \\ {TAIL}"')).status == "pass"


def test_the_typed_line_after_a_copied_page_must_be_kept(grade, kit):
    """The other side: the short Russian line typed after the page is the person's request, not the
    page's last line (tools print English); a summary that keeps the lead and drops it lost it."""
    verdict = grade("verbatim_user_messages", _page_case(kit, f'- "{LEAD}" [console page]'))
    assert verdict.status == "fail" and "message 2 of 2" in verdict.reasons[0], verdict.reasons
    assert "доделай загрузку" in verdict.reasons[0], verdict.reasons


def test_a_short_structured_message_the_person_typed_is_not_a_page():
    """Two or three labelled parts the person typed ("Context:" … "Goal:" …) stay prose: a page is
    read from four labelled fields on."""
    from pytest_ctxeval.reading.verbatim import machine_output, typed_tail

    typed = "Context:\nthe export button does nothing on the orders page\nGoal:\nmake it download a csv of the orders"
    assert not machine_output(typed)
    assert machine_output(PAGE)
    assert typed_tail(f"{PAGE}\n{TAIL}") == TAIL
    assert typed_tail(f"{PAGE}\nDisabled") == ""   # a page's own value is not a typed line


# --- a 2.1.x section 6 that also lists the session's standing rules -----------------------------------

RULE = "Only open a pull request when the user asks for one."


def test_a_quoted_session_rule_in_section_6_is_not_an_invented_message(grade, kit):
    """A real 2.1.x section 6 (a third-party model through Claude Code) listed the person's messages,
    then "constraints in effect (preserve verbatim)", the first quoted and labelled "(session rule)".
    Its words were in no record of the transcript (a rule of the setup: CLAUDE.md, the system
    prompt), so it was failed as "a user message the person never typed". The item says whose rule
    it is; the same quote listed as the person's message is still invented."""
    msgs = [kit.user("add the health endpoint and a test for it"), kit.say("Added.")]
    base = '- "add the health endpoint and a test for it"\n\n   Constraints in effect (preserve verbatim):\n'
    for label in ("(session rule)", "(from CLAUDE.md)", "— project rule"):
        verdict = grade("verbatim_user_messages", kit.case(msgs, _s(kit, user_messages=f'{base}   - "{RULE}" {label}')))
        assert verdict.status == "pass", (label, verdict.reasons)
    invented = grade("verbatim_user_messages", kit.case(msgs, _s(kit, user_messages=f'{base}   - "{RULE}"')))
    assert invented.status == "fail" and "never typed" in invented.reasons[0], invented.reasons
