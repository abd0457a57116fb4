"""Tests for pytest_ctxeval.reading.extract: facts read off a conversation."""

from __future__ import annotations

import pytest

from pytest_ctxeval.reading.session_facts import ERROR_KINDS
from pytest_ctxeval.reading.extract import (
    EDIT_TOOLS, LONG_MESSAGE_CHARS, LONG_MESSAGE_KEEP, contains_text, edited_files, failing_results,
    file_mentioned, key_error_line, latest_todos, message_fragments, open_todos, person_messages,
    significant_tokens, touched_files,
)
from pytest_ctxeval.core.messages import (
    AssistantMessage, ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage,
)


def asst(uid, *blocks):
    return AssistantMessage(uuid=uid, content=list(blocks))


def use(tid, name, **inp):
    return ToolUseBlock(id=tid, name=name, input=inp)


def results(uid, *blocks):
    return UserMessage(uuid=uid, content=list(blocks))


# --- key_error_line ----------------------------------------------------------------------------

def test_key_error_line_prefers_last_exception():
    text = ("Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n"
            "ValueError: first problem\n\nDuring handling of the above exception, another exception occurred:\n\n"
            "Traceback (most recent call last):\n  File \"a.py\", line 5\nKeyError: 'user_id'\n")
    assert key_error_line(text) == "KeyError: 'user_id'"


@pytest.mark.parametrize("text,expected", [
    ("Traceback (most recent call last):\n  File 'a.py'\nKeyError: 'user_id'", "KeyError: 'user_id'"),
    ("  File \"x\"\nmodule.sub.CustomException: boom", "module.sub.CustomException: boom"),
    ("error: something\nzipfile.BadZipFile\nRuntimeError", "RuntimeError"),
    ("Exit code 1\nSystemExit: 2", "SystemExit: 2"),
    ("^C\nKeyboardInterrupt", "KeyboardInterrupt"),
])
def test_key_error_line_exception_lines(text, expected):
    assert key_error_line(text) == expected


def test_key_error_line_pytest_failed_line():
    text = ("============================= test session starts ==============================\n"
            "collected 3 items\n\ntests/test_a.py .F.                                    [100%]\n\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_a.py::test_login - assert 401 == 200\n"
            "========================= 1 failed, 2 passed in 0.12s ==========================")
    assert key_error_line(text) == "FAILED tests/test_a.py::test_login - assert 401 == 200"


def test_key_error_line_pytest_assertion_error_line():
    text = "    def test_x():\n>       assert f() == 2\nE       AssertionError: assert 1 == 2\nFAILED t.py::test_x"
    assert key_error_line(text) == "AssertionError: assert 1 == 2"  # pytest's "E" margin removed


@pytest.mark.parametrize("text,expected", [
    ("Exit code 127\n/bin/bash: line 1: python: command not found", "python: command not found"),
    ("bash: foo: command not found", "foo: command not found"),
    ("/usr/bin/zsh: permission denied: ./run.sh", "permission denied: ./run.sh"),
    ("sh: 1: node: not found", "node: not found"),               # dash's line number, as bash's "line 1:"
    ("zsh:1: no matches found: *.log", "no matches found: *.log"),
    ("Exit code 1\n=== found ===\n(eval):3: no matches found: --include=*.cs",
     "no matches found: --include=*.cs"),                           # a script's line, after its echo output
])
def test_key_error_line_strips_shell_prefix(text, expected):
    assert key_error_line(text) == expected


def test_key_error_line_skips_exit_code_noise():
    assert key_error_line("Exit code 2\nsomething odd happened") == "something odd happened"
    assert key_error_line("exit code 1\n\ncompilation stopped") == "compilation stopped"


def test_key_error_line_first_problem_line():
    text = "Connecting to db\nconnection refused by host\nretrying\nconnection refused again"
    assert key_error_line(text) == "connection refused by host"


def test_key_error_line_first_failed_or_error_line():
    text = "building\nerror: cannot find symbol Foo\nerror[E0425]: second"
    assert key_error_line(text) == "error: cannot find symbol Foo"


def test_key_error_line_falls_back_to_first_non_noise_line():
    assert key_error_line("Exit code 3\nweird output\nmore") == "weird output"


def test_key_error_line_strips_ansi():
    text = "\x1b[31mError: bad thing happened\x1b[0m\n\x1b[2mExit code 1\x1b[22m"
    assert key_error_line(text) == "Error: bad thing happened"


def test_key_error_line_strips_tool_use_error_tags():
    assert key_error_line("<tool_use_error>File does not exist.</tool_use_error>") == "File does not exist."
    assert key_error_line("<tool_use_error>\nString to replace not found in file.\n</tool_use_error>") == \
        "String to replace not found in file."


def test_key_error_line_only_noise_or_empty():
    assert key_error_line("") == ""
    assert key_error_line("Exit code 1") == "Exit code 1"


def test_key_error_line_limit_and_whitespace():
    long = "ValueError: " + "x" * 500
    assert key_error_line(long) == long[:200]
    assert len(key_error_line(long, limit=50)) == 50
    assert key_error_line("ValueError:   too    many\tspaces") == "ValueError: too many spaces"


# --- edited_files / touched_files -----------------------------------------------------------

def _session_with_tools():
    return [
        UserMessage(uuid="u", content="go"),
        asst("a1", use("t1", "Read", file_path="/src/a.py"), use("t2", "Edit", file_path="/src/b.py")),
        asst("a2", use("t3", "Write", file_path="/src/c.py"), use("t4", "MultiEdit", file_path="/src/b.py")),
        asst("a3", use("t5", "NotebookEdit", notebook_path="/nb/x.ipynb"), use("t6", "Bash", command="ls")),
        asst("a4", use("t7", "Edit", file_path="/src/a.py"), use("t8", "Grep", path="/src")),
        asst("a5", use("t9", "Edit", file_path="   "), use("t10", "Write")),
    ]


def test_edit_tools_constant():
    assert EDIT_TOOLS == ("Edit", "MultiEdit", "Write", "NotebookEdit")


def test_edited_files_first_seen_order_deduped():
    assert edited_files(_session_with_tools()) == ["/src/b.py", "/src/c.py", "/nb/x.ipynb", "/src/a.py"]


def test_edited_files_none():
    assert edited_files([UserMessage(uuid="u", content="hi"), asst("a", use("t", "Read", file_path="/a"))]) == []


def test_touched_files_edit_wins_and_order_is_first_seen():
    touched = touched_files(_session_with_tools())
    # Grep/Glob/LS 'path' is a folder to search, not a touched file.
    assert touched == [("/src/a.py", "Edit"), ("/src/b.py", "MultiEdit"), ("/src/c.py", "Write"),
                       ("/nb/x.ipynb", "NotebookEdit")]


def test_touched_files_read_only():
    msgs = [asst("a1", use("t1", "Read", file_path="/a.py"), use("t2", "Glob", path="/src", pattern="*.py"))]
    assert touched_files(msgs) == [("/a.py", "Read")]


def test_touched_files_a_later_read_does_not_hide_an_edit():
    msgs = [asst("a1", use("t1", "Edit", file_path="/a.py")), asst("a2", use("t2", "Read", file_path="/a.py"))]
    assert touched_files(msgs) == [("/a.py", "Edit")]


# --- failing_results ---------------------------------------------------------------------------

def test_failing_results():
    msgs = [
        UserMessage(uuid="u", content="go"),
        asst("a1", use("t1", "Bash", command="pytest"), use("t2", "Read", file_path="/a")),
        results("r1",
                ToolResultBlock(tool_use_id="t1", content="Exit code 1\nFAILED t.py::x - assert 0", is_error=True),
                ToolResultBlock(tool_use_id="t2", content="fine")),
        asst("a2", use("t3", "Read", file_path="/missing")),
        results("r2", ToolResultBlock(tool_use_id="t3", is_error=True,
                                      content=[TextBlock(text="<tool_use_error>File does not exist.</tool_use_error>"),
                                               ImageBlock(source={"type": "base64", "data": ""})])),
        results("r3", ToolResultBlock(tool_use_id="ghost", content="boom: not found", is_error=True)),
    ]
    out = failing_results(msgs, kinds=ERROR_KINDS)
    assert [(f.index, f.tool, f.tool_use_id) for f in out] == [(2, "Bash", "t1"), (4, "Read", "t3"), (5, "?", "ghost")]
    # by default only the errors of the work: not a Read of a path that is not there (a mis-made
    # call) nor a lookup that found nothing
    assert [(f.tool_use_id, f.kind) for f in out] == [("t1", "error"), ("t3", "tool_usage"), ("ghost", "probe")]
    assert [f.tool_use_id for f in failing_results(msgs)] == ["t1"]
    assert out[0].input == {"command": "pytest"}
    assert out[0].text == "Exit code 1\nFAILED t.py::x - assert 0"
    assert out[0].key_line == "FAILED t.py::x - assert 0"
    assert out[1].text == "<tool_use_error>File does not exist.</tool_use_error>\n[image]"
    assert out[1].key_line == "File does not exist."
    assert out[2].input == {} and out[2].key_line == "boom: not found"


def test_failing_results_none():
    msgs = [asst("a", use("t", "Bash")), results("r", ToolResultBlock(tool_use_id="t", content="ok"))]
    assert failing_results(msgs) == []


# --- todos ---------------------------------------------------------------------------------------

def _todo_session():
    return [
        asst("a1", use("t1", "TodoWrite", todos=[
            {"content": "write parser", "status": "in_progress", "activeForm": "Writing parser"},
            {"content": "old task", "status": "pending"},
        ])),
        asst("a2", use("t2", "Bash", command="ls")),
        asst("a3", use("t3", "TodoWrite", todos=[
            {"content": "write parser", "status": "completed"},
            {"content": "  add tests  ", "status": "in_progress"},
            {"content": "update docs", "status": "pending"},
            {"content": "", "status": "pending"},
            "not a dict",
        ])),
    ]


def test_latest_todos_latest_wins():
    todos = latest_todos(_todo_session())
    assert [t["content"] for t in todos] == ["write parser", "  add tests  ", "update docs", ""]
    assert latest_todos([UserMessage(uuid="u", content="hi")]) is None


def test_latest_todos_ignores_malformed_calls():
    msgs = _todo_session() + [asst("a4", use("t4", "TodoWrite", todos="not a list"))]
    assert len(latest_todos(msgs)) == 4


def test_open_todos_excludes_completed_and_empty():
    assert open_todos(_todo_session()) == ["add tests", "update docs"]
    assert open_todos([]) == []


def test_open_todos_latest_empty_list_clears():
    msgs = _todo_session() + [asst("a4", use("t4", "TodoWrite", todos=[]))]
    assert latest_todos(msgs) == []
    assert open_todos(msgs) == []


# --- person_messages / message_fragments / contains_text -----------------------------------------

def test_person_messages():
    msgs = [UserMessage(uuid="u1", content="first"), asst("a", TextBlock(text="x")),
            UserMessage(uuid="m", content="meta", is_meta=True),
            UserMessage(uuid="u2", content="<command-name>/clear</command-name>"),
            UserMessage(uuid="u3", content="second")]
    out = person_messages(msgs)
    assert [(p.index, p.uuid, p.text) for p in out] == [(0, "u1", "first"), (4, "u3", "second")]


def test_long_message_constants():
    assert (LONG_MESSAGE_CHARS, LONG_MESSAGE_KEEP) == (2_000, 300)


def test_message_fragments_short_message_whole_and_normalised():
    assert message_fragments("  fix   the\n\tbug  ") == ["fix the bug"]
    exact = "a" * LONG_MESSAGE_CHARS
    assert message_fragments(exact) == [exact]


def test_message_fragments_long_message_head_and_tail():
    text = "H" * 300 + "m" * 1_500 + "T" * 201
    assert len(text) == LONG_MESSAGE_CHARS + 1
    head, tail = message_fragments(text)
    assert head == "H" * 300
    assert tail == "m" * 99 + "T" * 201
    assert len(head) == len(tail) == LONG_MESSAGE_KEEP


def test_message_fragments_length_measured_after_normalising():
    text = "e.py:1 " * 300  # 2100 chars raw, 2099 normalised (pasted: the person's prose is kept whole)
    assert len(message_fragments(text)) == 2
    assert len(message_fragments("word " * 420)) == 1
    spaced = "a  " * 700  # 2100 raw, 1399 after collapsing whitespace
    assert message_fragments(spaced) == [("a " * 700).strip()]


def test_contains_text():
    assert contains_text("The user said:\n  fix   the bug\nthen", "fix the\nbug")
    assert not contains_text("fix the bugs", "fix a bug")


# --- file_mentioned ----------------------------------------------------------------------------------

PATHS = ["/home/u/proj/src/app/models.py", "/home/u/proj/src/db/models.py", "/home/u/proj/README.md"]


@pytest.mark.parametrize("path,text,expected", [
    ("/home/u/proj/src/app/models.py", "edited /home/u/proj/src/app/models.py today", True),
    ("/home/u/proj/src/app/models.py", "see app/models.py", True),
    ("/home/u/proj/src/app/models.py", "see src/app/models.py", True),
    ("/home/u/proj/src/app/models.py", "see models.py", False),          # ambiguous bare name
    ("/home/u/proj/src/app/models.py", "see db/models.py", False),       # the other file
    ("/home/u/proj/README.md", "updated README.md", True),               # unambiguous bare name
    ("/home/u/proj/README.md", "updated `README.md`.", True),
    ("/home/u/proj/README.md", "updated README.mdx", False),
    ("/home/u/proj/README.md", "updated OLD_README.md", False),
    ("/home/u/proj/README.md", "nothing here", False),
])
def test_file_mentioned(path, text, expected):
    assert file_mentioned(path, text, PATHS) is expected


def test_file_mentioned_bare_name_without_other_paths():
    assert file_mentioned("/a/b/models.py", "changed models.py") is True
    assert file_mentioned("/a/b/models.py", "changed models.py", ["/a/b/models.py"]) is True


def test_file_mentioned_windows_paths():
    path = "C:\\Users\\me\\proj\\main.py"
    assert file_mentioned(path, "edited C:/Users/me/proj/main.py") is True
    assert file_mentioned(path, "edited C:\\Users\\me\\proj\\main.py") is True
    assert file_mentioned(path, "edited proj/main.py") is True


def test_file_mentioned_windows_suffix_in_text_with_ambiguous_basename():
    path = "C:\\Users\\me\\proj\\main.py"
    others = [path, "C:\\Users\\me\\other\\main.py"]
    assert file_mentioned(path, "edited proj\\main.py", others) is True


# --- significant_tokens ----------------------------------------------------------------------------

def test_significant_tokens():
    text = "The quick fix for src/app.py at line 42 and v1.2, with 3.14 via a CamelCase_id!"
    assert significant_tokens(text) == ["quick", "fix", "src/app.py", "line", "42", "v1.2", "3.14", "camelcase_id"]


def test_significant_tokens_drops_short_words_and_stop_words():
    assert significant_tokens("a an to of is it the and you your") == []
    assert significant_tokens("7 go") == ["7"]
