"""Synthetic Claude Code 2.1 session files for the grading benchmarks (not from the corpus).

:func:`build_session` writes one session the way Claude Code writes them: a conversation of person
requests, assistant turns split into one record per block (thinking, text, tool_use) sharing
``message.id``, tool results (Read of source files, Bash output, Grep hits, Edit/Write, an error now
and then, TodoWrite), and what fills most of a real file besides: progress records carrying command
output, file-history snapshots, queue operations and metadata records. ``compactions`` boundaries
are placed through the session, each followed by a nine-section summary written from what happened
before it (user messages quoted, files named, errors stated, todos listed, the last request quoted),
so the graders do real work; some logicalParentUuids are left dangling as 2.1.45 - 2.1.69 does.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path
from typing import Any

VERSIONS = ("2.0.76", "2.1.39", "2.1.49", "2.1.69", "2.1.87", "2.1.150")
_WORDS = ("parser config cache token session request handler module import export schema index query "
          "retry timeout buffer stream render layout widget router model field value record column").split()


class _Writer:
    def __init__(self, fh: Any, rnd: random.Random, version: str, session: str):
        self.fh, self.rnd, self.version, self.session = fh, rnd, version, session
        self.parent: str | None = None
        self.n = 0
        self.minute = 0

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rnd.getrandbits(128), version=4))

    def ts(self) -> str:
        self.n += 1
        return f"2026-03-{1 + self.n // 50000:02d}T{(self.n // 3600) % 24:02d}:{(self.n // 60) % 60:02d}:{self.n % 60:02d}.000Z"

    def emit(self, rec: dict[str, Any], *, chain: bool = True) -> str:
        uid = rec.get("uuid") or self.uid()
        base = {"parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": "/home/dev/app",
                "sessionId": self.session, "version": self.version, "gitBranch": "main", "uuid": uid,
                "timestamp": self.ts()}
        self.fh.write(json.dumps({**base, **rec}, ensure_ascii=False) + "\n")
        if chain:
            self.parent = uid
        return uid

    def raw(self, rec: dict[str, Any]) -> None:
        self.fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def _code(rnd: random.Random, lines: int) -> str:
    out = []
    for i in range(lines):
        a, b = rnd.choice(_WORDS), rnd.choice(_WORDS)
        out.append(f"{i + 1:>6}\u2192    def {a}_{b}_{i}(self, {b}_id: int) -> dict:  # {a} {b}")
    return "\n".join(out)


def build_session(path: Path, *, rounds: int, seed: int, compactions: int = 1, version: str | None = None,
                  dangling: bool = False, tools: tuple[str, ...] | None = None, error_rate: float = 0.3) -> int:
    """Write a session of ``rounds`` person requests to ``path``; return its size in bytes. ``tools``
    picks the calls from these names only; ``error_rate`` is the share of Bash calls that fail."""
    rnd = random.Random(seed)
    version = version or VERSIONS[seed % len(VERSIONS)]
    session = str(uuid.UUID(int=rnd.getrandbits(128), version=4))
    cut_at = {int(rounds * (k + 1) / (compactions + 1)) for k in range(compactions)} if compactions else set()
    with path.open("w", encoding="utf-8") as fh:
        w = _Writer(fh, rnd, version, session)
        typed: list[str] = []
        files: list[str] = []
        errors: list[str] = []
        todos: list[str] = []
        for r in range(rounds):
            if r in cut_at:
                _compact(w, typed, files, errors, todos, dangling=dangling and r % 2 == 0)
            a, b = rnd.choice(_WORDS), rnd.choice(_WORDS)
            text = (f"Please fix the {a} {b} in src/{a}/{b}_{r}.py: `{a}_{b}()` returns None when the "
                    f"{b}_id is missing, and keep MAX_{a.upper()}_RETRIES at {r + 3}.")
            typed.append(text)
            w.raw({"type": "file-history-snapshot", "messageId": w.uid(), "isSnapshotUpdate": False,
                   "snapshot": {"trackedFileBackups": {f"src/{a}/{b}_{r}.py": {"version": 1}}}})
            w.emit({"type": "user", "message": {"role": "user", "content": text}})
            if r % 7 == 3:
                w.raw({"type": "queue-operation", "operation": "enqueue", "sessionId": session,
                       "timestamp": w.ts(), "content": f"also check {b}_{r}"})
                w.raw({"type": "queue-operation", "operation": "dequeue", "sessionId": session, "timestamp": w.ts()})
            for step in range(rnd.randint(2, 5)):
                mid = f"msg_{w.uid()[:24]}"
                tid = f"toolu_{w.uid().replace('-', '')[:24]}"
                kind = rnd.choice(tools or ("Read", "Read", "Bash", "Grep", "Edit", "Write", "TodoWrite"))
                path_ = f"src/{a}/{b}_{r}.py" if kind != "Write" else f"src/{a}/new_{b}_{r}_{step}.py"
                inp: dict[str, Any] = {"Read": {"file_path": f"/home/dev/app/{path_}"},
                                       "Bash": {"command": f"pytest tests/test_{a}.py -k {b} -q"},
                                       "Grep": {"pattern": f"{a}_{b}", "path": "src"},
                                       "Edit": {"file_path": f"/home/dev/app/{path_}", "old_string": f"return None  # {b}",
                                                "new_string": f"return {{'{b}_id': {b}_id}}"},
                                       "Write": {"file_path": f"/home/dev/app/{path_}", "content": _code(rnd, 30)},
                                       "TodoWrite": {"todos": [{"content": f"fix {a} {b} {r}", "status": "in_progress",
                                                                "activeForm": "Fixing"}]}}[kind]
                if rnd.random() < 0.5:
                    w.emit({"type": "assistant", "message": {"id": mid, "role": "assistant", "model": "claude-opus-4-5",
                            "content": [{"type": "thinking", "thinking": f"I should look at {path_} for {a}_{b}.",
                                         "signature": "sig"}]}})
                w.emit({"type": "assistant", "message": {"id": mid, "role": "assistant", "model": "claude-opus-4-5",
                        "content": [{"type": "text", "text": f"Checking `{a}_{b}` in {path_}."}]}})
                w.emit({"type": "assistant", "message": {"id": mid, "role": "assistant", "model": "claude-opus-4-5",
                        "content": [{"type": "tool_use", "id": tid, "name": kind, "input": inp}],
                        "usage": {"input_tokens": 1200 + r, "output_tokens": 90, "cache_read_input_tokens": 40_000}}})
                is_error = kind == "Bash" and rnd.random() < error_rate
                if kind == "Read":
                    body = _code(rnd, rnd.randint(40, 160))
                elif kind == "Bash":
                    body = (f"FAILED tests/test_{a}.py::test_{b}_{r}_{step} - KeyError: '{b}_{r}_id'\n" if is_error else
                            "\n".join(f"tests/test_{a}.py::test_{b}_{i} PASSED" for i in range(rnd.randint(5, 40))))
                    if is_error:
                        errors.append(f"FAILED tests/test_{a}.py::test_{b}_{r}_{step} - KeyError: '{b}_{r}_id'")
                elif kind == "Grep":
                    body = "\n".join(f"src/{a}/{rnd.choice(_WORDS)}.py:{i}: {a}_{b}()" for i in range(20))
                elif kind == "TodoWrite":
                    body = "Todos have been modified successfully."
                    todos[:] = [f"fix {a} {b} {r}"]
                else:
                    body = f"The file /home/dev/app/{path_} has been updated."
                    files.append(f"/home/dev/app/{path_}")
                w.emit({"type": "progress", "data": {"type": "bash_progress", "output": body[:2000],
                                                     "fullOutput": body[:4000]},
                        "toolUseID": tid, "parentToolUseID": tid}, chain=False)
                # toolUseResult: the tool's structured result for the UI, as 2.1 writes it (it repeats
                # the output: about a quarter of a real file's bytes).
                structured: Any = {
                    "Read": {"type": "text", "file": {"filePath": inp.get("file_path"), "content": body,
                                                      "numLines": body.count("\n") + 1, "startLine": 1,
                                                      "totalLines": body.count("\n") + 1}},
                    "Bash": {"stdout": body, "stderr": "", "interrupted": False, "isImage": False},
                    "Grep": {"mode": "content", "numFiles": 3, "filenames": [], "content": body},
                    "Edit": {"filePath": inp.get("file_path"), "oldString": inp.get("old_string"),
                             "newString": inp.get("new_string"), "structuredPatch": [{"oldStart": 3, "lines": [
                                 "-" + str(inp.get("old_string")), "+" + str(inp.get("new_string"))]}]},
                    "Write": {"type": "create", "filePath": inp.get("file_path"), "content": inp.get("content")},
                    "TodoWrite": {"oldTodos": [], "newTodos": inp.get("todos")},
                }[kind]
                w.emit({"type": "user", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": tid, "content": body, "is_error": is_error}]},
                    "toolUseResult": f"Error: {body}" if is_error else structured})
            w.emit({"type": "assistant", "message": {"id": f"msg_{w.uid()[:24]}", "role": "assistant",
                    "model": "claude-opus-4-5", "content": [{"type": "text", "text": f"Fixed `{a}_{b}` in {path_}."}]}})
            w.raw({"type": "last-prompt", "sessionId": session, "lastPrompt": text[:80]})
    return path.stat().st_size


def _compact(w: _Writer, typed: list[str], files: list[str], errors: list[str], todos: list[str], *,
             dangling: bool) -> None:
    last = w.parent
    w.parent = None
    w.emit({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
            "logicalParentUuid": w.uid() if dangling else last, "level": "info", "isMeta": False,
            "compactMetadata": {"trigger": "auto", "preTokens": 167_000}})
    quoted = "\n".join(f"   - \"{t}\"" for t in typed)
    summary = ("This session is being continued from a previous conversation that ran out of context. "
               "The summary below covers the earlier portion of the conversation.\n\nSummary:\n"
               f"1. Primary Request and Intent:\n   {typed[-1] if typed else 'none'}\n"
               "2. Key Technical Concepts:\n   - pytest, type hints\n"
               "3. Files and Code Sections:\n" + "\n".join(f"   - {f}" for f in dict.fromkeys(files)) + "\n"
               "4. Errors and fixes:\n" + "\n".join(f"   - {e}: fixed by defaulting the id" for e in dict.fromkeys(errors)) + "\n"
               "5. Problem Solving:\n   Fixed the missing ids one by one.\n"
               f"6. All user messages:\n{quoted}\n"
               "7. Pending Tasks:\n" + "\n".join(f"   - {t}" for t in todos) + "\n"
               "8. Current Work:\n   Fixing the last request.\n"
               f"9. Optional Next Step:\n   Continue with: \"{typed[-1] if typed else ''}\"\n\n"
               "Please continue the conversation from where we left it off without asking the user any further "
               "questions. Continue with the last task that you were asked to work on.")
    w.emit({"type": "user", "isCompactSummary": True, "isVisibleInTranscriptOnly": True,
            "message": {"role": "user", "content": summary}})
