"""Grader classes found on real Claude Code sessions the project had not seen (public transcripts
outside the shared corpus, graded with ``ctxeval grade -v`` and read by hand). Each test is a
hand-built case of the class, paraphrased: the good summary passes, the defective one fails with a
reason that names what is lost."""

from __future__ import annotations

from pytest_ctxeval.reading.quoting import covered, drafts


def _s(kit, **bodies: str) -> str:
    base = {k: "x" for k in kit.SECTION_KINDS}
    base.update(bodies)
    return kit.summary(base)


def test_an_interrupted_short_answer_is_not_the_draft_of_a_different_question(grade, kit):
    """2.1.7 (entireio/cli checkpoint): "yes", the reply interrupted, then a question about the
    options, later "yes, please do". Section 6 listed the question and "yes, please do" but not the
    first "yes": its letters y-e-s are found in order in the question, so it was taken for a draft the
    question re-sent, and the lost message passed."""
    question = "can you explain the difference between second and third option?"
    msgs = [kit.user("could we compute the token usage when the stop hook fires?"), kit.say("Two options; shall I?"),
            kit.user("yes"), kit.say("Starting with option 3."), kit.user("[Request interrupted by user]"),
            kit.user(question), kit.say("Option 2 uses mtimes, option 3 agent ids."),
            kit.user("yes, please do"), kit.say("Implementing option 3.")]
    listed = ('- "could we compute the token usage when the stop hook fires?"\n'
              f'- "yes"\n- "{question}"\n- "yes, please do"')
    assert grade("verbatim_user_messages", kit.case(msgs, _s(kit, user_messages=listed))).status == "pass"
    lost = listed.replace('- "yes"\n', "")
    verdict = grade("verbatim_user_messages", kit.case(msgs, _s(kit, user_messages=lost)))
    assert verdict.status == "fail"
    assert any('"yes"' in r and "message 2 of 4" in r for r in verdict.reasons), verdict.reasons


def test_a_draft_is_found_in_its_resend_in_runs_of_characters_not_scattered_letters():
    assert covered("yes", "can you explain the difference between second and third option?") == 0
    assert covered("ok", "can you look at the logs") == 0
    # a revised resend keeps the draft's text in runs: typos fixed, words added
    assert covered("pleas fix teh bugg in teh parser", "please fix the bug in the parser") >= 0.75
    assert covered("run the tests", "please run the whole test suite again") >= 0.75


def test_a_short_draft_re_sent_longer_is_still_a_draft(grade, kit):
    """The other side: an interrupted "yes" re-sent as "yes, and add tests for it" is a draft (its
    text opens the resend): the resend stands for it."""
    msgs = [kit.user("yes"), kit.user("[Request interrupted by user]"), kit.user("yes, and add tests for it"),
            kit.say("Adding tests.")]
    case = kit.case(msgs, _s(kit, user_messages='- "yes, and add tests for it"'))
    assert drafts(case.person_messages(), case.history) == {0: 1}
    assert grade("verbatim_user_messages", case).status == "pass"


COMPILE = ("** (CompileError) lib/web/components/row_view.ex:171: cannot invoke remote function Access.get/2 "
           "inside a guard")


def _compile_case(kit, errors_item: str):
    msgs = [kit.user("Implement the expand controls"), *kit.tool("Bash", {"command": "mix compile"}, COMPILE, is_error=True),
            kit.say("Fixing the guard.")]
    return kit.case(msgs, _s(kit, errors=errors_item))


def test_an_error_told_by_line_n_of_its_file_is_kept(grade, kit):
    """2.1.39 (spotter): section 4 told a compile error as "Cannot invoke Access.get/2 inside guard
    (line 171 of transcript_components.ex)"; the file:line token was looked for only as the file
    followed by its line, so with no verbatim copy elsewhere the error counted as dropped."""
    for told in ("- **Cannot invoke Access.get/2 inside guard** (line 171 of row_view.ex): restructure the clause",
                 "- Access.get/2 in a guard at line 171 in row_view.ex: moved out of the guard",
                 "- row_view.ex:171 calls Access.get/2 in a guard: moved out of the guard"):
        verdict = grade("errors_preserved", _compile_case(kit, told))
        assert verdict.status == "pass", (told, verdict.reasons)
    # the file with another line, or the line of another file, is not this error
    for other in ("- Access.get/2 crashed at line 12 of row_view.ex: fixed",
                  "- line 171 of table_view.ex failed to compile: fixed"):
        verdict = grade("errors_preserved", _compile_case(kit, other))
        assert verdict.status == "fail", other
        assert "row_view.ex:171" in verdict.reasons[0]


def test_an_error_section_4_tells_by_its_tokens_is_counted_there_not_elsewhere(grade, kit):
    """The same session: section 8 also quoted the compile error word for word, and the reason said
    "0 in section 4, 1 in the problem-solving or current-work section", though section 4 told it."""
    msgs = [kit.user("Implement the expand controls"), *kit.tool("Bash", {"command": "mix compile"}, COMPILE, is_error=True),
            kit.say("Fixing the guard.")]
    text = _s(kit, errors="- Cannot invoke Access.get/2 inside guard (line 171 of row_view.ex): restructure the clause",
              current=f"Hit the compile error `{COMPILE}` and am fixing it.")
    verdict = grade("errors_preserved", kit.case(msgs, text))
    assert verdict.status == "pass"
    assert "in the problem-solving or current-work section" not in verdict.reasons[0], verdict.reasons
    assert "by their identifying tokens" in verdict.reasons[0]
    # told only in section 8: counted there
    only8 = _s(kit, errors="- a guard problem: fixed", current=f"Hit the compile error `{COMPILE}` and am fixing it.")
    verdict = grade("errors_preserved", kit.case(msgs, only8))
    assert verdict.status == "pass" and "1 in the problem-solving or current-work section" in verdict.reasons[0]
