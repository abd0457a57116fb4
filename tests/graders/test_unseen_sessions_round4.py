"""Grader classes found on more real Claude Code summaries the project had not seen (round 4: a
Portuguese data-app session exported as a markdown log, 2.1.69+ wording, whose section 6 lists a
two-line shell message as code spans joined by ``+`` and leaves out a later message made of the same
two commands), rebuilt as a transcript, graded with ``ctxeval grade -v`` and read by hand. Each test
is a hand-built case of the class, in words written for the test: the good summary passes, the
defective one fails with a reason that names what is wrong."""

from __future__ import annotations

from pytest_ctxeval.reading.verbatim import find, lines_apart


def _s(kit, **bodies: str) -> str:
    base = {k: "x" for k in kit.SECTION_KINDS}
    base.update(bodies)
    return kit.summary(base)


GO = "cd ~/work/orchard-report\nnpm start"
RERUN = "cd ~/work/orchard-report\n  npm run build"


def _shell_case(kit, listed: str):
    msgs = [kit.user(GO), kit.say("Started."), kit.user("npm run build"), kit.say("Built."),
            kit.user("the chart legend overlaps the footer, move it to the right"), kit.say("Moved."),
            kit.user(RERUN), kit.say("Built again.")]
    return kit.case(msgs, _s(kit, user_messages=listed))


def test_a_message_whose_lines_are_only_in_other_messages_items_is_lost(grade, kit):
    """The real section 6 listed "`cd …/solution` + `claude`" (message 1) and "`streamlit run app.py`"
    (message 2), and left out message 3, "cd …/solution" then "streamlit run app.py" on two lines.
    "Lines kept in order as separate items" found its first line in item 1 and its second in item 3
    (other messages' copies, with other messages between), and passed it: a lost message."""
    lost = ("- `cd ~/work/orchard-report` + `npm start` - first run\n"
            "- `npm run build` - build command\n"
            '- "the chart legend overlaps the footer, move it to the right"')
    verdict = grade("verbatim_user_messages", _shell_case(kit, lost))
    assert verdict.status == "fail", verdict.reasons
    assert "message 4 of 4" in verdict.reasons[0] and "apart, inside other items" in verdict.reasons[0], verdict.reasons
    assert len(verdict.reasons) == 1, verdict.reasons   # messages 1-3 are kept


def test_a_message_s_lines_listed_together_are_kept(grade, kit):
    """The other side: the message's lines as consecutive items, on one line joined by ``+`` or
    ``/``, or as a sub-list under a label, keep it."""
    for rerun in ("- `cd ~/work/orchard-report`\n- `npm run build`",
                  "- `cd ~/work/orchard-report` + `npm run build` - rebuild",
                  "- cd ~/work/orchard-report / npm run build",
                  "- rebuild, two lines:\n  - cd ~/work/orchard-report\n  - npm run build"):
        listed = ("- `cd ~/work/orchard-report` + `npm start` - first run\n- `npm run build`\n"
                  '- "the chart legend overlaps the footer, move it to the right"\n' + rerun)
        verdict = grade("verbatim_user_messages", _shell_case(kit, listed))
        assert verdict.status == "pass", (rerun, verdict.reasons)


def test_lines_apart_reads_lines_not_words():
    hay = "- cd ~/a + npm start\n- something else entirely\n- npm run build"
    assert lines_apart("cd ~/a\nnpm run build", hay)
    assert not find("cd ~/a\nnpm run build", hay)
    assert find("cd ~/a\nnpm start", hay)
    # a line broken across a blank line of the section still counts as the next line
    assert find("first line here\nsecond line there", "- first line here\n\n- second line there")
    # one-line messages are never "apart"
    assert not lines_apart("npm run build", hay)


def test_a_message_s_lines_in_the_copy_of_another_message_are_not_it():
    """Two lines found on one line of the section with another message's words between them are
    those words' message, not this one."""
    hay = "- cd ~/a then please also update the readme and npm run build\n- npm run build"
    assert not find("cd ~/a\nnpm run build", hay)
    assert find("cd ~/a\nnpm run build", "- cd ~/a / npm run build")
