"""Claude Code session files written by the project itself, one per era of the format, so the
transcript reader is tested in a bare clone (no shared corpus) on every record type and version
variant the real corpus shows.

:class:`Builder` extends :class:`session_kit.Session` with the fields each Claude Code version writes
(``slug`` from 2.0.60, ``entrypoint`` and ``promptId`` from 2.1.87, ``thinkingMetadata`` up to 2.1.45,
``sourceToolAssistantUUID`` from 2.1.38 ...) and with the records around the conversation (system
subtypes, attachments, progress, queue operations, snapshots, metadata records).
``tests/transcript_eras.py`` uses it to write one session per era of the format.
``tests/transcript_variants.py`` surveys what they show; ``tests/test_transcript_variants.py``
checks that it is every variant the corpus shows, and what the reader makes of each session.

Versions and fields follow the survey of the shared corpus (``docs/real-sessions.md``, "Format
variants by version"); the contents are invented.
"""

from __future__ import annotations

from typing import Any

from session_kit import SESSION, Session
from transcript_variants import version_key

CWD = "/home/dev/app"
PRIMARY = "Please make the parser accept trailing commas"


def _at_least(version: str, first: str) -> bool:
    return version_key(version) >= version_key(first)


def _between(version: str, first: str, last: str) -> bool:
    return version_key(first) <= version_key(version) <= version_key(last)


def summary_text(version: str, request: str = PRIMARY, *, auto: bool = True) -> str:
    """A compaction summary worded as ``version`` wrote it: 2.0.x opens "The conversation is
    summarized below", later "The summary below covers ..."; up to 2.1.56 ``Analysis:`` precedes
    ``Summary:``; from 2.1.39 an auto compaction names the transcript path."""
    opening = ("The conversation is summarized below:" if version.startswith(("1.", "2.0."))
               else "The summary below covers the earlier portion of the conversation.")
    analysis = ("Analysis:\nThe user asked for one parser change; I read and edited src/parser.py.\n\n"
                if not _at_least(version, "2.1.69") else "")
    body = (f"{analysis}Summary:\n1. Primary Request and Intent:\n   {request}\n"
            "2. Key Technical Concepts:\n   - recursive descent parsing\n"
            "3. Files and Code Sections:\n   - src/parser.py: parse_list()\n"
            "4. Errors and fixes:\n   - SyntaxError on a trailing comma: skipped the comma token\n"
            "5. Problem Solving:\n   Trailing commas are accepted in lists.\n"
            f"6. All user messages:\n   - {request}\n"
            "7. Pending Tasks:\n   - run the tests\n"
            "8. Current Work:\n   Editing src/parser.py.\n"
            f"9. Optional Next Step:\n   Run the tests, as asked: \"{request}\"\n")
    text = f"This session is being continued from a previous conversation that ran out of context. {opening}\n\n{body}"
    if auto and _at_least(version, "2.1.39"):
        text += ("\nIf you need specific details from before compaction (like exact code snippets, error messages, "
                 f"or content you generated), read the full transcript at: /home/dev/.claude/projects/app/{SESSION}.jsonl")
    if auto:
        text += ("\nPlease continue the conversation from where we left it off without asking the user any further "
                 "questions. Continue with the last task that you were asked to work on.")
    return text


class Builder(Session):
    """A :class:`Session` that writes the fields of its ``version`` (change it mid-file to resume on
    a newer version) and the records around the conversation."""

    def __init__(self, version: str, team: str | None = None):
        super().__init__(version=version)
        self.team = team
        self.tool_n = 0

    # --- records ---------------------------------------------------------------------------------
    def add(self, rec: dict[str, Any], advance: float = 5) -> str:
        v = self.version
        extra: dict[str, Any] = {"cwd": CWD, "gitBranch": "main"}
        if _at_least(v, "2.0.60"):
            extra["slug"] = "quiet-parsing-otter"
        if _at_least(v, "2.1.87"):
            extra["entrypoint"] = "cli"
        if self.team and _between(v, "2.1.56", "2.1.87"):
            extra["teamName"] = self.team
        return super().add({**extra, **rec}, advance)

    def raw(self, rec: dict[str, Any]) -> None:
        """A record outside the tree (no uuid): queue operations, snapshots, metadata."""
        self.records.append(rec)

    def typed(self, text: str | list[dict[str, Any]], **extra: Any) -> str:
        """A message typed by the person, with the fields its version writes."""
        v = self.version
        fields: dict[str, Any] = {}
        if _at_least(v, "2.1.22"):
            fields["permissionMode"] = "default"
        if _at_least(v, "2.1.87"):
            fields["promptId"] = f"prompt-{self.n:04d}"
        if _between(v, "2.0.60", "2.1.45"):
            fields["thinkingMetadata"] = {"level": "high", "disabled": False, "triggers": []}
        if _between(v, "2.0.60", "2.1.50"):
            fields["todos"] = []
        if _at_least(v, "2.1.177"):
            fields["promptSource"] = "typed"
        return self.user(text, **{**fields, **extra})

    def reply(self, text: str = "", tools: list[tuple[str, str, dict]] = (), thinking: str | None = None,
              **extra: Any) -> list[str]:
        """One assistant response, one record per block sharing message.id, with its version's fields."""
        ids = self.assistant(text=text, tools=tools, thinking=thinking)
        v = self.version
        for rec in self.records[-len(ids):]:
            msg = rec["message"]
            msg.update({"stop_reason": "tool_use" if tools else "end_turn", "stop_sequence": None})
            if _at_least(v, "2.0.65"):
                msg["context_management"] = {"applied_edits": []}
            if _at_least(v, "2.1.149"):
                msg["stop_details"] = None
                msg["diagnostics"] = None
            rec.update(extra)
        return ids

    def tool(self, name: str, inp: dict[str, Any], result: Any, content: Any = "ok", *,
             is_error: bool = False, text: str = "") -> str:
        """A call and its result record (``toolUseResult`` = ``result``); returns the result's uuid."""
        self.tool_n += 1
        tid = f"toolu_{self.tool_n:03d}"
        (*_, call) = self.reply(text=text, tools=[(tid, name, inp)])
        extra: dict[str, Any] = {"toolUseResult": result}
        if _at_least(self.version, "2.1.38"):
            extra["sourceToolAssistantUUID"] = call
        return self.user([{"type": "tool_result", "tool_use_id": tid, "content": content, "is_error": is_error}],
                         advance=2, **extra)

    def system(self, subtype: str, **fields: Any) -> str:
        """A system record that is not a compaction (api_error, stop_hook_summary, turn_duration ...)."""
        return self.add({"type": "system", "subtype": subtype, **fields}, 0.5)

    def stop_hook(self) -> str:
        fields = {"hookCount": 1, "hookInfos": [{"command": "./lint.sh"}], "hookErrors": [], "preventedContinuation": False,
                  "stopReason": "", "hasOutput": False, "level": "suggestion", "toolUseID": "hook-stop"}
        if _between(self.version, "2.1.177", "2.1.179"):
            fields["hookAdditionalContext"] = []
        return self.system("stop_hook_summary", **fields)

    def turn_duration(self) -> str:
        fields: dict[str, Any] = {"durationMs": 42_000, "isMeta": False}
        if _at_least(self.version, "2.1.87"):
            fields["messageCount"] = 12
        return self.system("turn_duration", **fields)

    def attachment(self, kind: str, **fields: Any) -> str:
        return self.add({"type": "attachment", "attachment": {"type": kind, **fields}}, 0.2)

    def progress(self, kind: str, tool_use_id: str = "toolu_001", **data: Any) -> None:
        """A progress record: off the conversation (parented on it, nothing parented on it)."""
        rec = {"type": "progress", "data": {"type": kind, **data}, "toolUseID": f"progress-{tool_use_id}",
               "parentToolUseID": tool_use_id}
        parent = self.parent
        self.add(rec, 0.1)
        self.parent = parent

    def queue(self, operation: str, content: str | None = None) -> None:
        rec: dict[str, Any] = {"type": "queue-operation", "operation": operation, "timestamp": self._ts(0.5),
                               "sessionId": SESSION}
        if content is not None:
            rec["content"] = content
        self.raw(rec)

    def snapshot(self, update: bool) -> None:
        self.raw({"type": "file-history-snapshot", "messageId": self.parent or "none", "isSnapshotUpdate": update,
                  "snapshot": {"messageId": self.parent, "trackedFileBackups": {}, "timestamp": self._ts(0)}})

    def boundary(self, trigger: str, pre_tokens: int, *, logical: str | bool | None = True,
                 metadata: dict[str, Any] | None = None) -> str:
        """A compact_boundary: ``logical`` True names the last record (as most versions do), a string
        names that uuid (one not in the file, as 2.1.45 - 2.1.69 auto compactions do)."""
        last = self.parent
        self.parent = None
        meta = {"trigger": trigger, "preTokens": pre_tokens, **(metadata or {})}
        return self.add({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                         "logicalParentUuid": last if logical is True else logical, "level": "info", "isMeta": False,
                         "compactMetadata": meta})

    def summary(self, text: str | None = None, *, auto: bool = True) -> str:
        return self.user(text or summary_text(self.version, auto=auto), advance=0.01, isCompactSummary=True,
                         isVisibleInTranscriptOnly=True)

    def slash_compact(self, args: str = "") -> None:
        """What a manual /compact writes after its summary: the caveat, the command, its output."""
        self.user("Caveat: The messages below were generated by the user while running local commands. DO NOT "
                  "respond to these messages or otherwise consider them in your response unless the user "
                  "explicitly asks you to.", advance=0.01, isMeta=True)
        self.user(f"<command-name>/compact</command-name>\n<command-message>compact</command-message>\n"
                  f"<command-args>{args}</command-args>", advance=0.01)
        self.user("<local-command-stdout>Compacted (ctrl+o to see full summary)</local-command-stdout>", advance=0.01)

    def work(self, n: int, tag: str) -> None:
        """``n`` rounds: a typed request, a Bash call and its result, a closing reply."""
        for i in range(n):
            self.typed(f"{tag} request {i}")
            self.tool("Bash", {"command": f"pytest -k {tag}{i}"}, bash_result(f"{i} passed"), f"{i} passed")
            self.reply(text=f"{tag} done {i}")


# --- tool results as each tool writes them (toolUseResult) -------------------------------------------

def bash_result(out: str, **more: Any) -> dict[str, Any]:
    return {"stdout": out, "stderr": "", "interrupted": False, "isImage": False, **more}


def read_result(path: str = "src/parser.py") -> dict[str, Any]:
    return {"type": "text", "file": {"filePath": f"{CWD}/{path}", "content": "def parse_list(): ...",
                                     "numLines": 1, "startLine": 1, "totalLines": 1}}


def edit_result(path: str = "src/parser.py") -> dict[str, Any]:
    return {"filePath": f"{CWD}/{path}", "oldString": "a", "newString": "b", "originalFile": "a", "replaceAll": False,
            "structuredPatch": [], "userModified": False}


def write_result(kind: str) -> dict[str, Any]:
    return {"type": kind, "filePath": f"{CWD}/notes.md", "content": "notes", "structuredPatch": [],
            "originalFile": None}


IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
ERROR = "Error: the command failed"
REJECTED = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
             "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to "
             "tell you how to proceed.")
