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


GO = "cd ~/code/orchard-report\nnpm start"
RERUN = "cd ~/code/orchard-report\n  npm run build"


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
    lost = ("- `cd ~/code/orchard-report` + `npm start` - first run\n"
            "- `npm run build` - build command\n"
            '- "the chart legend overlaps the footer, move it to the right"')
    verdict = grade("verbatim_user_messages", _shell_case(kit, lost))
    assert verdict.status == "fail", verdict.reasons
    assert "message 4 of 4" in verdict.reasons[0] and "apart, inside other items" in verdict.reasons[0], verdict.reasons
    assert len(verdict.reasons) == 1, verdict.reasons   # messages 1-3 are kept


def test_a_message_s_lines_listed_together_are_kept(grade, kit):
    """The other side: the message's lines as consecutive items, on one line joined by ``+`` or
    ``/``, or as a sub-list under a label, keep it."""
    for rerun in ("- `cd ~/code/orchard-report`\n- `npm run build`",
                  "- `cd ~/code/orchard-report` + `npm run build` - rebuild",
                  "- cd ~/code/orchard-report / npm run build",
                  "- rebuild, two lines:\n  - cd ~/code/orchard-report\n  - npm run build"):
        listed = ("- `cd ~/code/orchard-report` + `npm start` - first run\n- `npm run build`\n"
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


# --- a Chinese 1.0.x session copied from the terminal: leads in a script without spaces ------------

LEAD = "点击导出按钮以后，控制台显示 正在导出..."
LOG = "exporter.js:41 收到 12 行数据\nexporter.js:58 导出结束，可是下载的文件是空的"


def _console_case(kit, listed: str, message: str = f"{LEAD}\n{LOG}"):
    msgs = [kit.user("给表格加一个导出按钮"), kit.say("已添加。"), kit.user(message), kit.say("正在检查。")]
    return kit.case(msgs, _s(kit, user_messages=f'- "给表格加一个导出按钮"\n{listed}'))


def test_a_chinese_lead_before_a_console_paste_is_a_lead(grade, kit):
    """A real 1.0.x summary listed "右键，点击翻译当前网页之后，console 日志显示...页面并没有显示为翻译后的页面"
    for a message whose middle was two pasted console lines (``content.js:80 …``). The typed lead
    was never a lead: its words were counted by spaces (a Chinese sentence is one "word", and a lead
    needs four), and the paste was too short in characters (80, counted as Latin ones)."""
    good = '- "点击导出按钮以后，控制台显示...可是下载的文件是空的" [console output elided]'
    verdict = grade("verbatim_user_messages", _console_case(kit, good))
    assert verdict.status == "pass", verdict.reasons
    # the lead itself cut is still a loss
    bad = '- "点击导出按钮以后...可是下载的文件是空的"'
    verdict = grade("verbatim_user_messages", _console_case(kit, bad))
    assert verdict.status == "fail" and "message 2 of 2" in verdict.reasons[0], verdict.reasons


def test_the_start_of_a_pasted_error_line_is_not_a_typed_lead(grade, kit):
    """The same summary cut a pasted console error inside its error line ("添加单词到词库失败: TypeError:
    Cannot read properties of undefined..." for "... (reading 'create')" and two stack frames): the
    first seven words were taken for a typed lead and the rest of the line for the paste, so the
    cut error passed. The error line is the paste; its start is not a lead."""
    error = ("保存失败: TypeError: Cannot read properties of null (reading 'rows')\n"
             "    at saveTable (table.js:88:17)\n    at async table.js:40:5")
    cut = '- "保存失败: TypeError: Cannot read properties of null..." [save error]'
    verdict = grade("verbatim_user_messages", _console_case(kit, cut, error))
    assert verdict.status == "fail" and "message 2 of 2" in verdict.reasons[0], verdict.reasons
    # its error line kept whole (the stack frames summarised) keeps it
    whole = "- \"保存失败: TypeError: Cannot read properties of null (reading 'rows')\" (+ stack frames)"
    assert grade("verbatim_user_messages", _console_case(kit, whole, error)).status == "pass"


def test_word_count_reads_scripts_without_spaces():
    from pytest_ctxeval.reading.verbatim import word_count

    assert word_count("fix the parser now".split()) == 4
    assert word_count(["点击导出按钮以后"]) == 4
    assert word_count(["ok", "好"]) == 2


# --- files_preserved: several files in one shorthand word ------------------------------------------

def _files_case(kit, files_body: str):
    msgs = [kit.user("build the settings popup"),
            *kit.tool("Write", {"file_path": "/home/dev/ext/popup.html", "content": "x"}),
            *kit.tool("Write", {"file_path": "/home/dev/ext/popup.css", "content": "x"}),
            *kit.tool("Write", {"file_path": "/home/dev/ext/popup.js", "content": "x"}),
            *kit.tool("Edit", {"file_path": "/home/dev/ext/src/api/main.go", "old_string": "a", "new_string": "b"}),
            *kit.tool("Edit", {"file_path": "/home/dev/ext/src/cli/main.go", "old_string": "a", "new_string": "b"}),
            kit.say("The popup is built.")]
    return kit.case(msgs, _s(kit, files=files_body))


def test_files_named_in_shorthand_are_named(grade, kit):
    """A real section 3 named "popup.html/css/js: Settings page": popup.css and popup.js were
    reported as not named. A stem with several extensions, and a shell's braces, name each file."""
    for body in ("- popup.html/css/js: the settings page\n- src/{api,cli}/main.go: flags",
                 "- popup.{html,css,js}\n- src/api/main.go, src/cli/main.go"):
        verdict = grade("files_preserved", _files_case(kit, body))
        assert verdict.status == "pass", (body, verdict.reasons)
    bad = grade("files_preserved", _files_case(kit, "- popup.html/css: the settings page\n- src/{api,web}/main.go"))
    assert bad.status == "fail"
    assert any("popup.js" in r for r in bad.reasons) and any("src/cli/main.go" in r for r in bad.reasons), bad.reasons


def test_a_chinese_line_typed_after_a_log_is_the_person_s():
    """The other half of the same class: a Chinese sentence typed after a pasted log is prose (it is
    one "word" when words are counted by spaces, and its commas made it not a word of letters), so
    a summary must keep it, as it must an English one."""
    from pytest_ctxeval.reading.verbatim import find, typed_tail

    message = "导出以后控制台是这样的\nexporter.js:41 收到 12 行数据\nexporter.js:58 导出结束\n可是下载的文件是空的，请帮我看看为什么会这样"
    assert typed_tail(message) == "可是下载的文件是空的，请帮我看看为什么会这样"
    assert find(message, '- "导出以后控制台是这样的 [log] 可是下载的文件是空的，请帮我看看为什么会这样"')
    assert not find(message, '- "导出以后控制台是这样的 [log]"')


def test_a_lost_draft_s_reason_names_its_resend(grade, kit):
    """The Chinese session's first request was interrupted and sent again revised; the summary cut
    the resend, and the draft was reported as a second loss with no word of why it mattered. Its
    reason says it is the draft of the (also lost) resend."""
    draft, resend = "write the release notes for the export fix", "write the release notes for the export fix and the import fix"
    msgs = [kit.user(draft), kit.say("Writing"), kit.user("[Request interrupted by user]"), kit.user(resend),
            kit.say("Done.")]
    verdict = grade("verbatim_user_messages", kit.case(msgs, _s(kit, user_messages='- "write the release notes..."')))
    assert verdict.status == "fail"
    assert "interrupted draft of message 2" in verdict.reasons[0], verdict.reasons
    kept = grade("verbatim_user_messages", kit.case(msgs, _s(kit, user_messages=f'- "{resend}"')))
    assert kept.status == "pass", kept.reasons
