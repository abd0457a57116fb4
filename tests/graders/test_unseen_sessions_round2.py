"""Grader classes found on more real Claude Code summaries the project had not seen (public
session exports and summary logs outside the shared corpus: a French 2.1.x session, an English 2.0.x
session, a Chinese session compacted three times), graded with ``ctxeval grade -v`` and read by hand.
Each test is a hand-built case of the class, paraphrased: the good summary passes, the defective one
fails with a reason that names what is wrong."""

from __future__ import annotations

from pytest_ctxeval.reading.quoting import quotes


def _s(kit, **bodies: str) -> str:
    base = {k: "x" for k in kit.SECTION_KINDS}
    base.update(bodies)
    return kit.summary(base)


ASK = "wait, why did you remove half of the options from the settings page?"


def _settings_case(kit, next_step: str):
    msgs = [kit.user("move the app settings from the json file into the yaml file"), kit.say("Moved."),
            kit.user(ASK), *kit.tool("Bash", {"command": "git diff --stat src/settings_page.py"},
                                     " src/settings_page.py | 625 +------\n 1 file changed, 14 insertions(+), 611 deletions(-)"),
            kit.say("The diff removes the option tables.")]
    return kit.case(msgs, _s(kit, next=next_step))


def test_a_block_quote_that_attributes_its_quote_quotes_the_quoted_words(grade, kit):
    """A real summary's section 9 ended with the exchange set as block quotes, each line a speaker
    label and a quoted string (``> User: "…"``, ``> My last action: ran … with "…"``). The whole
    block-quote line was read as one quote, label and all, so it was not verbatim, and the verbatim
    quote of the request inside it was dropped as "part of" that line: a good next step failed,
    reported as quoting an unrelated phrase."""
    good = ("Show what the diff removed and offer to restore it, keeping the \"moved to the yaml presets\" idea.\n"
            f"   > User: \"{ASK}\"\n"
            "   > My last action: ran `git diff --stat` showing \"1 file changed, 14 insertions(+), 611 deletions(-)\"")
    verdict = grade("next_step_quote", _settings_case(kit, good))
    assert verdict.status == "pass", verdict.reasons
    assert ASK in verdict.reasons[0]
    # the label is attribution, the quote marks delimit the quote
    assert ASK in quotes(f'> User\'s exact words: "{ASK}"')
    assert f'User: "{ASK}"' not in quotes(f'> User: "{ASK}"')


def test_an_attributed_block_quote_that_misquotes_the_request_fails(grade, kit):
    altered = ASK.replace("half of the options", "all of the options")
    bad = ("Show what the diff removed and offer to restore it.\n"
           f"   > User: \"{altered}\"")
    verdict = grade("next_step_quote", _settings_case(kit, bad))
    assert verdict.status == "fail"
    assert "not verbatim" in verdict.reasons[0] and "all of the options" in verdict.reasons[0], verdict.reasons


def test_a_block_quote_of_a_message_with_a_colon_is_still_one_quote(grade, kit):
    """The other side: a block quote of the whole request, which itself holds a colon and quote
    marks, is a quote of the request (no label is taken off a line that is not label + one quoted string)."""
    ask = 'rename it: call the flag "strict" and drop the old alias from the parser'
    msgs = [kit.user("add a strict mode to the parser"), kit.say("Added."), kit.user(ask), kit.say("Renaming.")]
    verdict = grade("next_step_quote", kit.case(msgs, _s(kit, next=f"Rename the flag as asked:\n   > {ask}")))
    assert verdict.status == "pass", verdict.reasons


def _writers_case(kit, files_body: str, *, also: str = "src/ww/server_sh.py"):
    msgs = [kit.user("read the settings from the yaml file everywhere"),
            *kit.tool("Edit", {"file_path": "src/ww/step4_service.py", "old_string": "a", "new_string": "b"}),
            *kit.tool("Edit", {"file_path": also, "old_string": "a", "new_string": "b"}),
            kit.say("Both writers read the yaml file now.")]
    return kit.case(msgs, _s(kit, files=files_body))


def test_a_file_named_by_its_module_name_is_named(grade, kit):
    """A real section 3 grouped the files it changed as "**6 namelist files** (step4_service, server_sh,
    ...)": module names, the file names without ``.py``. Only a path or a file name counted, so every
    one of them was reported as dropped."""
    good = "- **2 namelist writers** (step4_service, server_sh): load_full_config in place of load_config"
    verdict = grade("files_preserved", _writers_case(kit, good))
    assert verdict.status == "pass", verdict.reasons
    bad = "- **namelist writers** (step4_service): load_full_config in place of load_config"
    verdict = grade("files_preserved", _writers_case(kit, bad))
    assert verdict.status == "fail"
    assert "server_sh.py was changed but is not named" in verdict.reasons[0], verdict.reasons


def test_a_stem_that_is_a_word_a_call_or_shared_does_not_name_the_file(grade, kit):
    """The other side: a plain word (``render`` for render.py), a call of a function with the stem's
    name (``server_sh()``), or a stem two changed files share do not tell which file was changed."""
    for body, also in (("- the writers now render the yaml values", "src/ww/render.py"),
                       ("- step4_service.py; server_sh() reads the yaml file", "src/ww/server_sh.py"),
                       ("- step4_service.py and server_sh were changed", "src/ww/old/server_sh.py")):
        case = _writers_case(kit, body, also=also)
        if also.endswith("old/server_sh.py"):
            case = _writers_case(kit, body, also=also)
            msgs = case.history + [*kit.tool("Edit", {"file_path": "src/ww/new/server_sh.py", "old_string": "a",
                                                      "new_string": "b"})]
            case = kit.case(msgs, _s(kit, files=body))
        verdict = grade("files_preserved", case)
        assert verdict.status == "fail", (body, verdict.reasons)
        assert "server_sh.py" in " ".join(verdict.reasons) or "render.py" in " ".join(verdict.reasons)


# --- the offline judge on text without spaces, and drift's own labels ----------------------------

def _offline_judge():
    from pytest_ctxeval.grading.judging import Judge
    from pytest_ctxeval.llm import make_llm

    return Judge(make_llm("offline"))


def test_offline_drift_reads_chinese_requests_and_not_the_intents_labels():
    """A real Chinese session compacted three times: the offline drift judgement found no terms in
    the Chinese requests (the word tokens hold no CJK text), so the intent's own labels ("First
    request:", "Latest request:") were its terms, and the first generation, which kept the latest
    request word for word, fell below the bar with "lost: first; latest"."""
    judge = _offline_judge()
    intent = "First request: 把配置合并到一个文件\nLatest request: 命令行必须读取工作目录里的配置文件"
    kept = ("1. 把配置合并到一个文件；最新的要求：命令行必须读取工作目录里的配置文件\n"
            "9. 修改命令行入口，只接受工作目录里的配置文件")
    good = judge.judge("drift", generation=1, generations=3, intent=intent, summary=kept)
    assert good.passed and good.score >= 4, good
    assert not any(w in " ".join(good.lost) for w in ("first", "latest", "request"))
    drifted = "1. 修复登录页面的样式问题\n9. 调整按钮颜色"
    bad = judge.judge("drift", generation=1, generations=3, intent=intent, summary=drifted)
    assert not bad.passed and bad.score <= 1, bad
    # the labels are not terms in English either: a generation that keeps every word of both requests
    english = judge.judge("drift", generation=1, generations=3,
                          intent="First request: make the parser accept trailing commas\n"
                                 "Latest request: add tests for nested lists",
                          summary="Make the parser accept trailing commas; next, add tests for nested lists.")
    assert english.score == 5, english


def test_offline_intent_judgement_of_chinese_messages_is_not_a_free_pass():
    """The other side of the same gap: with no terms, every Chinese message counted as fully kept,
    so a context that lost them all preserved the intent 5/5 offline."""
    judge = _offline_judge()
    messages = "1. 近岸配置去掉\n2. 不要在代码中有任何实际意义的默认值"
    kept = judge.judge("intent_preservation", messages=messages, intent="",
                       context="用户要求：近岸配置去掉；不要在代码中有任何实际意义的默认值。")
    lost = judge.judge("intent_preservation", messages=messages, intent="",
                       context="The user asked to update the parser tests.")
    assert kept.passed and kept.score == 5, kept
    assert not lost.passed and lost.score == 0, lost


# --- a message that is pasted output, with nothing or only a closing question typed ----------------

TRACE = ('File "lib/tslib.pyx", line 259, in lib.tslib.to_datetime\n'
         '  File "lib/tslib.pyx", line 473, in lib.tslib.to_datetime\n'
         '  File "lib/strptime.pyx", line 283, in lib.strptime.process\n'
         "ValueError: Aware datetime objects need utc=True to be converted")


def _paste_case(kit, listed: str, last: str = TRACE):
    msgs = [kit.user("load the events table into the warehouse one day at a time"), kit.say("Done."),
            kit.user(last), kit.say("Converting with utc=True.")]
    return kit.case(msgs, _s(kit, user_messages=listed))


def test_a_message_that_is_only_a_pasted_traceback_is_kept_by_its_error_line(grade, kit):
    """A real session's last message was a pasted traceback and nothing else; section 6 listed it as
    "(ValueError: <the error line>)". Only a typed lead let a paste be summarised, so the message
    counted as lost in section 6 and as a cut-down last request, both for frames nobody typed."""
    first = '- "load the events table into the warehouse one day at a time"\n'
    good = first + "- (ValueError: Aware datetime objects need utc=True to be converted)"
    for name in ("verbatim_user_messages", "last_request_intact"):
        verdict = grade(name, _paste_case(kit, good))
        assert verdict.status == "pass", (name, verdict.reasons)
    assert "error line" in grade("last_request_intact", _paste_case(kit, good)).reasons[0]
    # the paste dropped, or its error told in other words: lost
    for bad in (first + "- (a timezone error)", first + "- ValueError: datetimes need a UTC flag"):
        for name in ("verbatim_user_messages", "last_request_intact"):
            verdict = grade(name, _paste_case(kit, bad))
            assert verdict.status == "fail", (name, bad)
        assert "message 2 of 2" in grade("verbatim_user_messages", _paste_case(kit, bad)).reasons[0]


def test_a_question_typed_after_a_paste_must_be_kept_and_the_paste_may_be_summarised(grade, kit):
    ask = "I think we should pass the timestamps as strings, no?"
    last = TRACE + "\n\n" + ask
    first = '- "load the events table into the warehouse one day at a time"\n'
    # the paste summarised by its error line (a summarised paste tells what went wrong)
    good = first + f'- "(ValueError on mixed timezones: Aware datetime objects need utc=True)"\n- "{ask}"'
    assert grade("verbatim_user_messages", _paste_case(kit, good, last)).status == "pass"
    # the question lost: the error line alone does not stand for what the person typed
    bad = first + "- (ValueError: Aware datetime objects need utc=True to be converted)"
    verdict = grade("verbatim_user_messages", _paste_case(kit, bad, last))
    assert verdict.status == "fail" and "message 2 of 2" in verdict.reasons[0], verdict.reasons


def test_a_typed_request_with_a_few_error_words_is_not_a_paste(grade, kit):
    """The other side: a typed message is not machine output because it names an error; it must be
    in section 6 as typed."""
    typed = "why does the loader still fail with ValueError: Aware datetime objects need utc=True, on day two?"
    first = '- "load the events table into the warehouse one day at a time"\n'
    only_error = first + "- (ValueError: Aware datetime objects need utc=True to be converted)"
    verdict = grade("verbatim_user_messages", _paste_case(kit, only_error, typed))
    assert verdict.status == "fail"


def test_a_message_quoted_with_its_inner_quote_marks_escaped_is_verbatim(grade, kit):
    """A real 1.0.x summary listed messages that held quote marks as ``- "... your \\"i dont know\\" is
    answered ..."``: the quote marks inside the item escaped with a backslash. Markdown escapes and
    quote marks were read as no difference, a backslash before a quote mark was not, so three
    messages counted as changed."""
    said = 'so is your "no idea where to look" question answered now, or is any left?'
    msgs = [kit.user("explain what your context tells you"), kit.say("It lists three files."), kit.user(said),
            kit.say("It is answered.")]
    first = '- "explain what your context tells you"\n'
    good = first + '- "so is your \\"no idea where to look\\" question answered now, or is any left?"'
    verdict = grade("verbatim_user_messages", kit.case(msgs, _s(kit, user_messages=good)))
    assert verdict.status == "pass", verdict.reasons
    changed = first + '- "so is your \\"no clue where to look\\" question answered now, or is any left?"'
    verdict = grade("verbatim_user_messages", kit.case(msgs, _s(kit, user_messages=changed)))
    assert verdict.status == "fail"
    assert "message 2 of 2" in verdict.reasons[0] and "no clue" in verdict.reasons[0], verdict.reasons
