"""One Claude Code session per era of the transcript format (1.0.98 to 2.1.183), written with
:class:`transcript_builder.Builder`: each function writes a session the way that version wrote it,
and together they show every variant the shared corpus shows (``tests/fixtures/transcript_variants.md``).
:func:`write_all` writes them all; ``tests/test_transcript_variants.py`` reads them."""

from __future__ import annotations

from pathlib import Path
from collections.abc import Callable

from session_kit import SESSION
from transcript_builder import (
    CWD, ERROR, IMAGE, PRIMARY, REJECTED, Builder, bash_result, edit_result, read_result, write_result,
)


def legacy_1_0_98(path: Path) -> Path:
    """1.0.98: no compact_boundary, subagent (Task) records inline with ``isSidechain``, a /resume
    title (``summary`` record), the tools of the time (MultiEdit, KillBash, BashOutput, TodoWrite)."""
    s = Builder("1.0.98")
    s.raw({"type": "summary", "summary": "Trailing commas in the parser", "leafUuid": "assistant-9999"})
    s.user("<command-name>/init</command-name>\n<command-message>init</command-message>\n<command-args></command-args>")
    s.user("<system-reminder>CLAUDE.md says: run the tests</system-reminder>", isMeta=True)
    s.typed(PRIMARY)
    s.tool("Read", {"file_path": f"{CWD}/src/parser.py"}, read_result(), [{"type": "text", "text": "def parse_list(): ..."}])
    s.tool("Read", {"file_path": f"{CWD}/missing.py"}, "File does not exist.", "File does not exist.", is_error=True)
    s.tool("Edit", {"file_path": f"{CWD}/src/parser.py"}, edit_result(), "edited")
    s.tool("Edit", {"file_path": f"{CWD}/src/parser.py"}, "String to replace not found", "not found", is_error=True)
    s.tool("MultiEdit", {"file_path": f"{CWD}/src/lexer.py", "edits": []},
           {"filePath": f"{CWD}/src/lexer.py", "edits": [], "originalFileContents": "", "structuredPatch": [],
            "userModified": False}, "edited")
    s.tool("MultiEdit", {"file_path": f"{CWD}/src/lexer.py", "edits": []}, ERROR, ERROR, is_error=True)
    s.tool("Write", {"file_path": f"{CWD}/notes.md"}, write_result("create"), "written")
    s.tool("Write", {"file_path": f"{CWD}/notes.md"}, write_result("update"), "written")
    s.tool("Write", {"file_path": "/etc/x"}, ERROR, ERROR, is_error=True)
    s.tool("Glob", {"pattern": "**/*.py"}, {"filenames": ["src/parser.py"], "durationMs": 3, "numFiles": 1,
                                            "truncated": False}, "src/parser.py")
    s.tool("Bash", {"command": "make", "run_in_background": True}, bash_result("started"), "started")
    s.tool("Bash", {"command": "false"}, ERROR, ERROR, is_error=True)
    s.tool("BashOutput", {"bash_id": "1"}, {"shellId": "1", "command": "make", "status": "completed", "exitCode": 0,
                                             "stdout": "ok", "stderr": "", "stdoutLines": 1, "stderrLines": 0}, "ok")
    s.tool("KillBash", {"shell_id": "1"}, {"message": "killed", "shell_id": "1"}, "killed")
    s.tool("TodoWrite", {"todos": []}, {"oldTodos": [], "newTodos": [{"content": "run the tests", "status": "pending"}]},
           "Todos have been modified successfully.")
    # A Task call; the subagent's records are written inline, on their own sidechain.
    prompt = "Find every caller of parse_list"
    s.tool_n += 1
    tid = f"toolu_{s.tool_n:03d}"
    s.reply(tools=[(tid, "Task", {"description": "find callers", "prompt": prompt})])
    main = s.parent
    s.parent = None
    s.user(prompt, isSidechain=True)
    s.reply(text="parse_list is called from src/cli.py", isSidechain=True)
    s.parent = main
    s.user([{"type": "tool_result", "tool_use_id": tid, "content": [{"type": "text", "text": "src/cli.py"}]}],
           toolUseResult={"content": [{"type": "text", "text": "src/cli.py"}], "totalDurationMs": 900,
                          "totalTokens": 300, "totalToolUseCount": 1})
    s.reply(text="Done: trailing commas are accepted.")
    return s.write(path)


def manual_2_0_60(path: Path) -> Path:
    """2.0.60: a manual /compact (logicalParentUuid names the last record), the command's echo
    records after the summary, a local command, queued prompts, snapshots."""
    s = Builder("2.0.60")
    s.snapshot(update=False)
    s.typed(PRIMARY)
    s.queue("enqueue", "also keep the old syntax working")
    s.queue("dequeue")
    s.typed("also keep the old syntax working")
    s.tool("BashOutput", {"bash_id": "1"}, "No shell found with ID: 1", "No shell found", is_error=True)
    s.tool("KillShell", {"shell_id": "1"}, {"message": "killed", "shell_id": "1"}, "killed")
    s.work(2, "a")
    s.system("local_command", content="<command-name>/context</command-name>", level="info", isMeta=False)
    s.boundary("manual", 120_000)
    s.summary(auto=False)
    s.slash_compact()
    s.typed("now run the tests")
    s.reply(text="Running them.")
    return s.write(path)


def auto_2_0_65(path: Path) -> Path:
    """2.0.65: thinking blocks, an API error and stop-hook records, /resume titles, an auto compaction."""
    s = Builder("2.0.65")
    s.raw({"type": "summary", "summary": "Parser work", "leafUuid": "user-0003"})
    s.typed(PRIMARY)
    s.reply(text="Looking.", thinking="The user wants trailing commas.")
    s.system("api_error", level="error", error={"cause": {"code": "ConnectionRefused"}},
             cause={"code": "ConnectionRefused"}, retryInMs=500, retryAttempt=1, maxRetries=10)
    s.tool("Grep", {"pattern": "parse_list"}, {"mode": "content", "numFiles": 1, "filenames": [], "content": "x",
                                               "numLines": 1}, "x")
    s.tool("ExitPlanMode", {"plan": "1. edit"}, {"plan": "1. edit", "isAgent": False, "filePath": None}, "ok")
    s.tool("Task", {"prompt": "look"}, "Agent failed", "Agent failed", is_error=True)
    s.tool("TodoWrite", {"todos": []}, {"oldTodos": [], "newTodos": []}, "ok")
    s.stop_hook()
    s.snapshot(update=False)
    s.snapshot(update=True)
    s.queue("enqueue", "and the docs")
    s.queue("remove")
    s.work(2, "a")
    s.boundary("auto", 155_000)
    s.summary()
    s.typed("go on")
    s.reply(text="Going on.")
    return s.write(path)


def images_2_1_22(path: Path) -> Path:
    """2.1.22 - 2.1.29: pasted images, an IDE note, a /resume title, and a rewind (a fork)."""
    s = Builder("2.1.22")
    s.raw({"type": "summary", "summary": "Screenshots of the parser error", "leafUuid": "user-0001"})
    s.typed([{"type": "text", "text": "This is the error I get"}, IMAGE])
    s.reply(text="I see a SyntaxError.")
    s.version = "2.1.29"
    s.typed("<ide_opened_file>The user opened src/parser.py in the IDE.</ide_opened_file>")
    fork = s.parent
    s.reply(text="A first answer, abandoned by a rewind.")
    s.parent = fork
    s.reply(text="The parser rejects the trailing comma.")
    return s.write(path)


def subagent_session_2_1_38(path: Path) -> Path:
    """2.1.38 - 2.1.39: progress records (hooks, Bash output, a subagent's agent_progress), the
    tools of the time, interruptions and a rejected tool use, then an auto compaction."""
    s = Builder("2.1.38")
    s.typed(PRIMARY)
    s.tool("AskUserQuestion", {"questions": []}, {"questions": [], "answers": {"q": "yes"}}, "yes")
    s.tool("WebFetch", {"url": "https://example.org"}, {"bytes": 10, "code": 200, "codeText": "OK", "result": "x",
                                                        "durationMs": 5, "url": "https://example.org"}, "x")
    s.tool("WebSearch", {"query": "trailing comma"}, {"query": "trailing comma", "results": [], "durationSeconds": 1},
           "none")
    s.tool_n += 1
    tid = f"toolu_{s.tool_n:03d}"
    s.reply(tools=[(tid, "Task", {"description": "callers", "prompt": "Find callers"})])
    s.progress("hook_progress", tid, hookEvent="PreToolUse", hookName="PreToolUse:Task", command="./hook.sh")
    s.progress("agent_progress", tid, agentId="a1b2c3d", prompt="Find callers", message={
        "type": "assistant", "uuid": "sub-1", "timestamp": "2026-01-05T09:10:00Z",
        "message": {"id": "msg_sub", "role": "assistant", "content": [{"type": "text", "text": "callers: cli.py"}]}})
    s.user([{"type": "tool_result", "tool_use_id": tid, "content": [{"type": "text", "text": "cli.py"}]}],
           toolUseResult={"status": "completed", "prompt": "Find callers", "agentId": "a1b2c3d",
                          "content": [{"type": "text", "text": "cli.py"}], "totalDurationMs": 1, "totalTokens": 1,
                          "totalToolUseCount": 1, "usage": {}})
    s.version = "2.1.39"
    s.tool("EnterPlanMode", {}, {"message": "Entered plan mode"}, "ok")
    s.tool("Skill", {"skill": "commit"}, "Unknown skill: commit", "Unknown skill", is_error=True)
    s.tool_n += 1
    tid = f"toolu_{s.tool_n:03d}"
    s.reply(tools=[(tid, "Bash", {"command": "make test"})])
    s.progress("bash_progress", tid, output="running", fullOutput="running", elapsedTimeSeconds=3, totalLines=1)
    s.progress("waiting_for_task", tid, taskDescription="make test", taskType="local_bash")
    s.user([{"type": "tool_result", "tool_use_id": tid, "content": "ok", "is_error": False}],
           toolUseResult=bash_result("ok", backgroundTaskId="b1"))
    s.tool("TaskOutput", {"task_id": "b1"}, {"retrieval_status": "success", "task": {"id": "b1"}}, "ok")
    s.tool("Edit", {"file_path": "src/x.py"}, REJECTED, REJECTED, is_error=True)
    s.user([{"type": "text", "text": "[Request interrupted by user for tool use]"}])
    s.typed("no, edit src/parser.py instead")
    s.reply(text="Editing src/parser.py.")
    s.user([{"type": "text", "text": "[Request interrupted by user]"}])
    s.work(2, "a")
    s.boundary("auto", 167_731)
    s.summary()
    s.typed("continue")
    s.reply(text="Continuing.")
    return s.write(path)


def subagent_file_2_1_39(path: Path) -> Path:
    """2.1.39: a subagent's own file (``agent-*.jsonl``): every record a sidechain with ``agentId``,
    parallel calls whose results hang off their own call records, a hook progress record."""
    s = Builder("2.1.39")
    side = {"isSidechain": True, "agentId": "a2898e3"}
    s.user("Find every caller of parse_list", **side)
    calls = s.reply(tools=[("toolu_p1", "Grep", {"pattern": "parse_list"}), ("toolu_p2", "Glob", {"pattern": "*.py"})],
                    **side)
    s.progress("hook_progress", "toolu_p1", hookEvent="PostToolUse")
    s.records[-1].update(side)
    s.parent = calls[0]
    s.user([{"type": "tool_result", "tool_use_id": "toolu_p1", "content": "src/cli.py"}], **side)
    s.parent = calls[1]
    s.user([{"type": "tool_result", "tool_use_id": "toolu_p2", "content": "src/cli.py"}], **side)
    s.reply(text="parse_list is called from src/cli.py", **side)
    return s.write(path)


def compaction_call_2_1_39(path: Path) -> Path:
    """2.1.39: the compaction call's own file (``agent-acompact-*``): its first record's parent is
    in the main session's file, not this one."""
    s = Builder("2.1.39")
    s.parent = "in-the-main-session"
    s.user("Your task is to create a detailed summary of the conversation so far.", isSidechain=True, agentId="acompact")
    s.reply(text="<analysis>one request</analysis>\n<summary>1. Primary Request and Intent: ...</summary>",
            isSidechain=True, agentId="acompact")
    return s.write(path)


def auto_2_1_45(path: Path) -> Path:
    """2.1.45: an auto compaction whose logicalParentUuid is not in the file; task tools, a plan,
    a pasted image id, turn durations."""
    s = Builder("2.1.45")
    s.typed(PRIMARY)
    s.typed("Implement the following plan:\n\n# Plan\n1. edit", planContent="# Plan\n1. edit")
    s.typed([{"type": "text", "text": "see the screenshot"}, IMAGE], imagePasteIds=[1])
    s.tool("TaskCreate", {"subject": "edit"}, {"task": {"id": "1", "subject": "edit"}}, "created")
    s.tool("TaskUpdate", {"taskId": "1"}, {"success": True, "taskId": "1", "updatedFields": ["status"],
                                            "statusChange": {"from": "pending", "to": "done"}}, "updated")
    s.turn_duration()
    s.work(2, "a")
    s.boundary("auto", 178_144, logical="never-written-0001")
    s.summary()
    s.typed("go on")
    s.reply(text="Going on.")
    return s.write(path)


def two_auto_2_1_49(path: Path) -> Path:
    """2.1.49: two auto compactions naming logical parents that are not in the file; ! commands,
    background task notifications, MCP tools, images in tool results."""
    s = Builder("2.1.49")
    s.typed(PRIMARY)
    s.typed("<bash-input>git status</bash-input>")
    s.user("<bash-stdout>clean</bash-stdout><bash-stderr></bash-stderr>")
    s.tool("mcp__db__query", {"sql": "select 1"}, [{"type": "text", "text": "1"}], [{"type": "text", "text": "1"}])
    s.tool("Read", {"file_path": f"{CWD}/shot.png"}, {"type": "image", "file": {"base64": "iVBORw0KGgo=",
                                                                               "type": "image/png"}}, [IMAGE])
    s.tool("AskUserQuestion", {"questions": []}, "User declined to answer", "declined", is_error=True)
    s.tool_n += 1
    tid = f"toolu_{s.tool_n:03d}"
    s.reply(tools=[(tid, "mcp__db__query", {"sql": "select 2"})])
    s.progress("mcp_progress", tid, status="started", serverName="db", toolName="query")
    s.user([{"type": "tool_result", "tool_use_id": tid, "content": "2"}], toolUseResult=[{"type": "text", "text": "2"}])
    s.tool("TaskStop", {"task_id": "b1"}, {"message": "stopped", "task_id": "b1", "task_type": "local_bash",
                                            "command": "make"}, "stopped")
    s.work(1, "a")
    s.boundary("auto", 167_332, logical="never-written-0002")
    s.summary()
    s.user("<task-notification>\n<task-id>b1</task-id>\n<output-file>/tmp/claude-501/p/tasks/b1.output</output-file>\n"
           "<status>completed</status>\n<summary>Background command \"make\" completed (exit code 0)</summary>\n"
           "</task-notification>\nRead the output file to retrieve the result: /tmp/claude-501/p/tasks/b1.output")
    s.user([{"type": "text", "text": "[Request interrupted by user]"}])
    s.work(2, "b")
    s.boundary("auto", 167_602, logical="never-written-0003")
    s.summary()
    s.typed("go on")
    s.reply(text="Going on.")
    return s.write(path)


def resumed_2_1_50(path: Path) -> Path:
    """2.1.50 - 2.1.56: a session resumed on a newer version; a PR link, a skill, a team of agents,
    a synthetic (client-written) assistant message, then an auto compaction."""
    s = Builder("2.1.50", team="parser-team")
    s.typed(PRIMARY)
    s.raw({"type": "pr-link", "prNumber": 7, "prUrl": "https://github.com/o/r/pull/7", "prRepository": "o/r",
           "timestamp": s._ts(1), "sessionId": SESSION})
    s.tool("ExitPlanMode", {"plan": "1. edit"}, "User rejected the plan", "rejected", is_error=True)
    s.tool("Skill", {"skill": "commit"}, {"success": True, "commandName": "commit"}, "Launching skill: commit")
    s.user([{"type": "text", "text": "Base directory for this skill: .claude/skills/commit"}], isMeta=True,
           sourceToolUseID=f"toolu_{s.tool_n:03d}")
    s.tool("Task", {"prompt": "look"}, {"status": "completed", "prompt": "look", "agentId": "x",
                                        "content": [], "totalDurationMs": 1, "totalTokens": 1, "totalToolUseCount": 1},
           "done")
    s.version = "2.1.56"
    s.tool("Read", {"file_path": f"{CWD}/nope"}, "File does not exist.", "File does not exist.", is_error=True)
    s.tool("TeamCreate", {"team_name": "parser-team"}, {"team_name": "parser-team", "team_file_path": "t.json",
                                                        "lead_agent_id": "lead"}, "created")
    s.tool("SendMessage", {"to": "a"}, {"success": True, "message": "sent", "routing": {}}, "sent")
    s.tool("TaskList", {}, {"tasks": []}, "none")
    s.tool("TeamDelete", {}, {"success": True, "message": "deleted", "team_name": "parser-team"}, "deleted")
    s.progress("hook_progress", hookEvent="Stop")
    s.reply(text="API Error: overloaded", isApiErrorMessage=False)
    s.records[-1]["message"].update({"model": "<synthetic>", "container": None})
    s.work(2, "a")
    s.boundary("auto", 168_663)
    s.summary()
    s.typed("go on")
    s.reply(text="Going on.")
    return s.write(path)


def toolsearch_2_1_69(path: Path) -> Path:
    """2.1.69: the summary without its analysis, ToolSearch results holding ``tool_reference``
    blocks, an Agent call, queued prompts taken all at once (popAll), two auto compactions whose
    logical parents are not in the file."""
    s = Builder("2.1.69")
    s.raw({"type": "last-prompt", "lastPrompt": PRIMARY, "sessionId": SESSION})
    s.typed(PRIMARY)
    s.tool("ToolSearch", {"query": "select:WebFetch"}, {"matches": ["WebFetch"], "query": "select:WebFetch",
                                                        "total_deferred_tools": 9},
           [{"type": "tool_reference", "tool_name": "WebFetch"}])
    s.tool("Agent", {"prompt": "look"}, {"status": "completed", "prompt": "look", "agentId": "y", "agentType": "x",
                                         "content": [], "totalDurationMs": 1, "totalTokens": 1, "toolStats": {}}, "done")
    s.progress("agent_progress", agentId="y", prompt="look", message={"type": "user", "uuid": "sub-2",
                                                                      "message": {"role": "user", "content": "look"}})
    s.queue("popAll", "and the docs")
    s.user("<task-notification>\n<task-id>a7f</task-id>\n<tool-use-id>toolu_a7f</tool-use-id>\n<status>completed</status>\n"
           "<summary>Agent \"look\" completed</summary>\n<result>Found it.</result>\n<usage><total_tokens>9</total_tokens>"
           "</usage>\n</task-notification>\nFull transcript available at: /private/tmp/claude-501/p/tasks/a7f.output")
    s.work(1, "a")
    s.boundary("auto", 171_817, logical="never-written-0004")
    s.summary()
    s.work(1, "b")
    s.boundary("auto", 168_199, logical="never-written-0005")
    s.summary()
    s.typed("go on")
    s.reply(text="Going on.")
    return s.write(path)


def manual_2_1_87(path: Path) -> Path:
    """2.1.87: a manual compaction recording the tools discovered before it; entrypoint and
    promptId on records; a rate-limit error written as an assistant message; a bridge status."""
    s = Builder("2.1.87", team="parser-team")
    s.raw({"type": "last-prompt", "lastPrompt": PRIMARY, "sessionId": SESSION})
    s.typed(PRIMARY)
    s.system("bridge_status", content="Remote control is on", isMeta=False, url="https://claude.ai/code/x",
             upgradeNudge=None)
    s.tool("TaskGet", {"taskId": "1"}, {"task": {"id": "1"}}, "task 1")
    s.tool("SendMessage", {"to": "a"}, "No such agent: a", "No such agent", is_error=True)
    s.tool("mcp__db__query", {"sql": "select 1"}, [{"type": "text", "text": "1"}], "1")
    s.tool("Glob", {"pattern": "*.py"}, {"filenames": [], "durationMs": 1, "numFiles": 0, "truncated": False}, "none")
    s.tool("Grep", {"pattern": "x"}, {"mode": "files_with_matches", "numFiles": 0, "filenames": []}, "none")
    s.reply(text="You've hit your limit", isApiErrorMessage=True, error="rate_limit")
    s.records[-1]["message"].update({"model": "<synthetic>", "container": None})
    s.turn_duration()
    s.work(2, "a")
    s.boundary("manual", 244_099, metadata={"preCompactDiscoveredTools": ["WebFetch"]})
    s.summary(auto=False)
    s.slash_compact()
    s.typed("go on")
    s.reply(text="Going on.")
    return s.write(path)


def attachments_2_1_149(path: Path) -> Path:
    """2.1.149: attachment records (hooks, files, reminders, a queued prompt), an auto compaction
    with durationMs and postTokens, and a resume that wrote part of the history again."""
    s = Builder("2.1.149")
    s.raw({"type": "worktree-state", "worktreeSession": None, "sessionId": SESSION})
    s.typed(PRIMARY)
    for kind, fields in [("hook_success", {"hookName": "SessionStart", "content": "ok"}),
                         ("hook_non_blocking_error", {"hookName": "PostToolUse", "stderr": "warn"}),
                         ("hook_system_message", {"content": "lint passed"}),
                         ("hook_additional_context", {"content": ["use tabs"]}),
                         ("output_style", {"style": "default"}), ("skill_listing", {"content": "commit"}),
                         ("mcp_instructions_delta", {"added": ["db"]}), ("deferred_tools_delta", {"added": ["WebFetch"]}),
                         ("command_permissions", {"allowedTools": ["Bash"]}), ("date_change", {"newDate": "2026-01-06"}),
                         ("task_reminder", {"content": [], "itemCount": 0}),
                         ("file", {"filename": f"{CWD}/src/parser.py", "content": {"type": "text"}}),
                         ("edited_text_file", {"filename": f"{CWD}/src/parser.py", "snippet": "x"})]:
        s.attachment(kind, **fields)
    s.tool("TaskUpdate", {"taskId": "1"}, {"success": True, "taskId": "1", "updatedFields": []}, "ok",
           text="Updating the task.")
    s.records[-2]["attributionSkill"] = "start-feature"
    s.system("api_error", level="error", error={"status": 529}, retryInMs=500, retryAttempt=1, maxRetries=10)
    s.tool("SendMessage", {"to": "a"}, {"success": True, "message": "sent", "request_id": "r", "target": "a"}, "sent")
    s.reply(text="Building.")
    s.attachment("queued_command", prompt="also update the changelog", commandMode="prompt")
    s.work(2, "a")
    history = [dict(r) for r in s.records[2:8]]
    s.boundary("auto", 169_346, metadata={"durationMs": 61_000, "postTokens": 9_000,
                                          "preCompactDiscoveredTools": []})
    s.summary()
    s.records.extend(history)                # resumed: part of the history written again
    s.raw({"type": "last-prompt", "lastPrompt": "go on", "leafUuid": "x", "sessionId": SESSION})
    s.typed("go on")
    s.reply(text="Going on.")
    return s.write(path)


def manual_args_2_1_150(path: Path) -> Path:
    """2.1.150: /compact with instructions; the messages kept verbatim after the summary
    (preservedMessages, preservedSegment); plan-mode attachments; titles and modes as records."""
    s = Builder("2.1.150")
    s.raw({"type": "custom-title", "customTitle": "parser", "sessionId": SESSION})
    s.raw({"type": "permission-mode", "permissionMode": "plan", "sessionId": SESSION})
    s.typed(PRIMARY)
    s.attachment("plan_mode", reminderType="full", isSubAgent=False, planFilePath="plan.md", planExists=False)
    s.attachment("auto_mode", enabled=False)
    s.attachment("plan_mode_exit", planFilePath="plan.md", planExists=True)
    s.attachment("plan_file_reference", planFilePath="plan.md", planContent="1. edit")
    s.tool("Edit", {"file_path": "x"}, "File has not been read yet", "not read", is_error=True)
    s.tool("Write", {"file_path": "x"}, "File has not been read yet", "not read", is_error=True)
    s.tool("Write", {"file_path": "notes.md"}, write_result("update"), "written")
    s.tool("AskUserQuestion", {"questions": []}, {"questions": [], "answers": {}, "annotations": {}}, "ok")
    mid = s.reply(text="Working on it")
    s.user([{"type": "text", "text": "[Request interrupted by user]"}], interruptedMessageId=f"msg-{mid[0]}")
    s.system("away_summary", content="While you were away: the parser was edited.", isMeta=False)
    s.work(2, "a")
    keep = [r["uuid"] for r in s.records[-3:]]
    s.queue("enqueue", "and the changelog")
    s.queue("dequeue")
    s.attachment("queued_command", prompt="and the changelog", commandMode="prompt")
    s.boundary("manual", 361_748, metadata={
        "durationMs": 90_000, "postTokens": 20_000, "preCompactDiscoveredTools": [],
        "preservedSegment": {"headUuid": keep[0], "tailUuid": keep[-1]},
        "preservedMessages": {"anchorUuid": keep[0], "uuids": keep}})
    s.summary(auto=False)
    s.attachment("compact_file_reference", filename=f"{CWD}/src/parser.py")
    s.slash_compact("keep the parser details")
    s.typed("go on")
    s.reply(text="Going on.")
    return s.write(path)


def subagents_2_1_179(path: Path) -> Path:
    """2.1.179: an auto compaction in a session of subagents; plugin attribution, async hooks, an
    invoked skill, stop hooks that add context."""
    s = Builder("2.1.179")
    s.typed(PRIMARY)
    s.attachment("async_hook_response", hookName="PostToolUse", response={})
    s.attachment("invoked_skills", skills=["brainstorm"])
    s.tool("Agent", {"prompt": "look"}, "Agent type 'x' not found", "not found", is_error=True)
    s.tool("Agent", {"prompt": "look", "run_in_background": True},
           {"isAsync": True, "status": "async_launched", "agentId": "z", "description": "look", "prompt": "look",
            "outputFile": "out.txt", "canReadOutputFile": True}, "launched")
    s.tool("Write", {"file_path": "notes.md"}, write_result("create"), "written")
    s.reply(text="Brainstorming.", thinking="", attributionPlugin="superpowers")
    s.stop_hook()
    s.system("local_command", content="<local-command-stdout>ok</local-command-stdout>", level="info", isMeta=False)
    s.work(2, "a")
    s.boundary("auto", 167_465, metadata={"durationMs": 1, "postTokens": 1, "preCompactDiscoveredTools": [],
                                          "preservedSegment": None, "preservedMessages": None})
    s.summary()
    s.typed("go on")
    s.reply(text="Going on.")
    return s.write(path)


def resumed_2_1_177(path: Path) -> Path:
    """2.1.177 - 2.1.183: resumed on a newer version; a manual compaction whose logicalParentUuid
    names a preserved message written after the summary; agent names, titles, modes; a spend-limit
    error with its HTTP status; an ``origin`` on typed messages."""
    s = Builder("2.1.177")
    s.raw({"type": "ai-title", "aiTitle": "Trailing commas", "sessionId": SESSION})
    s.raw({"type": "mode", "mode": "normal", "sessionId": SESSION})
    s.raw({"type": "agent-name", "agentName": "parser", "sessionId": SESSION})
    s.typed(PRIMARY)
    s.attachment("agent_listing_delta", added=["explorer"])
    s.tool("Bash", {"command": "make"}, "Exit code 2", "Exit code 2", is_error=True)
    s.stop_hook()
    s.version = "2.1.183"
    s.typed("and the lexer", origin={"kind": "human"})
    s.reply(text="You've hit your monthly spend limit", isApiErrorMessage=True, error="billing_error",
            apiErrorStatus=429)
    s.records[-1]["message"].update({"model": "<synthetic>", "container": None})
    s.work(2, "a")
    last = s.parent
    s.boundary("manual", 231_468, logical="preserved-0001", metadata={
        "durationMs": 1, "postTokens": 1, "preCompactDiscoveredTools": [],
        "preservedSegment": {"headUuid": "preserved-0001", "tailUuid": "preserved-0001"},
        "preservedMessages": {"anchorUuid": "preserved-0001", "uuids": ["preserved-0001"]}})
    s.summary(auto=False)
    s.add({"type": "assistant", "uuid": "preserved-0001", "requestId": "req_p", "message": {
        "id": "msg_p", "type": "message", "role": "assistant", "model": "claude-opus-4", "content": [
            {"type": "text", "text": "a done 1"}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}})
    assert last != "preserved-0001"
    s.slash_compact()
    s.turn_duration()
    s.typed("go on")
    s.reply(text="Going on.")
    return s.write(path)


#: Every era, by the file name it is written under.
ERAS: dict[str, Callable[[Path], Path]] = {
    "legacy-1.0.98.jsonl": legacy_1_0_98,
    "manual-2.0.60.jsonl": manual_2_0_60,
    "auto-2.0.65.jsonl": auto_2_0_65,
    "images-2.1.22-29.jsonl": images_2_1_22,
    "progress-2.1.38-39.jsonl": subagent_session_2_1_38,
    "agent-subagent-2.1.39.jsonl": subagent_file_2_1_39,
    "agent-acompact-2.1.39.jsonl": compaction_call_2_1_39,
    "auto-dangling-2.1.45.jsonl": auto_2_1_45,
    "two-auto-dangling-2.1.49.jsonl": two_auto_2_1_49,
    "resumed-2.1.50-56.jsonl": resumed_2_1_50,
    "toolsearch-2.1.69.jsonl": toolsearch_2_1_69,
    "manual-2.1.87.jsonl": manual_2_1_87,
    "attachments-2.1.149.jsonl": attachments_2_1_149,
    "manual-args-2.1.150.jsonl": manual_args_2_1_150,
    "subagents-2.1.179.jsonl": subagents_2_1_179,
    "resumed-2.1.177-183.jsonl": resumed_2_1_177,
}


def write_all(folder: Path) -> dict[str, Path]:
    """Write every era's session into ``folder``; file name -> path."""
    folder.mkdir(parents=True, exist_ok=True)
    return {name: build(folder / name) for name, build in ERAS.items()}
