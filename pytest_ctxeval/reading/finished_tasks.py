"""Open todos whose work the transcript shows finished after the todo list was last updated (review 4,
G16).

Agents often finish a todo (edit, test, commit) and never call TodoWrite or TaskUpdate again: the
latest list still calls the task pending or in progress. A summary that tells the truth ("Done: Add
the admin endpoint (committed 1a2b3c4)") then contradicts the stale list. This module reads, for
each open task, where the list last spoke of it (:class:`ListUpdate`) and what the session did after
that (:func:`finish_evidence`), conservatively:

* ``finished``: after the update the session changed a file (a successful Edit, Write, MultiEdit or
  NotebookEdit), then the assistant said, in its own words, that the task is done (one sentence
  that tells the task as ``pending_tasks`` reads an item: most of its words, every number, the same
  action, reading.tasks.task_in_item; with a word of completion, "done", "implemented", "added",
  "committed", "in place", and no word of intent or doubt, "will", "next", "let me", "not yet",
  "still", "should"), and a successful ``git commit`` or a passing test run follows the change. The
  task is no longer open: ``pending_tasks`` does not require it, and a summary that calls it done
  passes. So is a task that was *in progress* at the update when, after the change, the person asked
  to commit or ship the work ("commit it", "ship it: commit with message ...", not a step of it: "so
  far", "progress", "WIP", "for now", "then ...", a question) and the commit succeeded: the person
  took the work as finished.
* ``committed``: the task was *in progress* at the update (the one the agent was on), the session
  changed a file after it and a successful ``git commit`` followed, but nobody says in words that
  the task is done (the agent committed on its own). A summary that marks it done agrees with the transcript and passes; one that
  drops it still fails (nothing shows the commit finished it: work is often committed in steps), and
  the reason says what the session did after the list.
* ``changed``: files changed after the update, no more: the list decides, as before, and a reason
  names where the list was last updated and what changed after it (the list may be stale).
* None: nothing changed after the update; the list decides.

A commit is a Bash ``git commit`` whose result is not an error and shows git's ``[branch hash]`` line;
a passing test run a Bash call of a test runner (pytest, npm/yarn/pnpm test, go test, cargo test,
jest, vitest, ...) whose result is not an error, reports passes and no failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..core.messages import AssistantMessage, CompactBoundary, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage, result_text
from .tasks import task_in_item

__all__ = ["ListUpdate", "FinishEvidence", "list_updates", "finish_evidence"]

_EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit"}
_COMMIT = re.compile(r"\bgit\b[^|;&\n]*\bcommit\b")
_COMMIT_LINE = re.compile(r"^\[(?P<branch>[^\]\n]+?) (?:\(root-commit\) )?(?P<hash>[0-9a-f]{7,40})\] (?P<message>[^\n]*)",
                          re.MULTILINE)
_TEST_RUN = re.compile(r"\b(?:pytest|py\.test|(?:npm|yarn|pnpm|bun)\s+(?:run\s+)?test|go\s+test|cargo\s+test|jest|"
                       r"vitest|mix\s+test|rspec|phpunit|(?:gradle|gradlew|mvn|make)\s+test|tox|dotnet\s+test|"
                       r"python\s+-m\s+unittest)\b")
_PASSED = re.compile(r"\b\d+\s+pass(?:ed|ing)\b|\bTests?:\s+\d+\s+passed\b|^ok\b|\bPASS\b|\ball tests pass", re.MULTILINE)
_FAILED = re.compile(r"\b[1-9]\d*\s+(?:failed|failing|errors?)\b|\bFAILED\b|\bFAIL\b|\bTraceback\b|\bpanicked\b",
                     re.IGNORECASE)
#: A word that says the work is finished, in the assistant's own sentence.
_DONE = re.compile(r"\b(?:done|complete[d]?|finished|implemented|added|created|built|written|wrote|fixed|"
                   r"in place|committed|landed|works|working)\b", re.IGNORECASE)
#: A word of intent, doubt or what remains: the sentence is not a report of finished work.
_NOT_DONE = re.compile(r"\b(?:will|let me|let's|i'll|i will|going to|need to|needs to|next|not yet|still|should|"
                       r"remaining|once|after|before|if|when|todo|almost|partially|start(?:ing)?|now (?:i|let))\b|"
                       r"n't\b|\bnot\b|\?", re.IGNORECASE)
_SENTENCES = re.compile(r"[^.!?\n]+[.!?]?")
#: The person asks to commit (or ship) the work: they take it as finished ...
_COMMIT_ASK = re.compile(r"\b(?:commit|ship it|ship this|ship that)\b", re.IGNORECASE)
#: ... unless they commit a step of it: "commit what you have so far", "commit this progress, then ...".
_STEP = re.compile(r"\b(?:so far|progress|wip|for now|partial\w*|checkpoint|then|before|and continue|keep going|"
                   r"first part|step|half)\b|\?", re.IGNORECASE)


def _typed(message: Any) -> str:
    """The text a person typed in ``message`` ("" for tool results, reminders, command echoes)."""
    if not isinstance(message, UserMessage) or message.is_meta or message.is_compact_summary:
        return ""
    if isinstance(message.content, str):
        text = message.content
    elif any(isinstance(b, ToolResultBlock) for b in message.content):
        return ""
    else:
        text = "\n".join(b.text for b in message.content if isinstance(b, TextBlock))
    text = text.strip()
    return "" if text.startswith(("<", "[Request interrupted", "Caveat:")) else text


@dataclass(frozen=True)
class ListUpdate:
    """Where the todo list last spoke of a task: its message index in the history, the tool, the
    task's status there, and how many compactions came after it in the history."""

    index: int
    tool: str
    status: str
    compactions_after: int

    def where(self, compaction: int) -> str:
        """"the latest TodoWrite (before compaction 1)", "its latest TaskUpdate (in the span this
        summary covers)"."""
        when = (f"before compaction {compaction - self.compactions_after}" if self.compactions_after
                else "in the span this summary covers")
        which = {"TodoWrite": "the latest TodoWrite", "TaskCreate": "its TaskCreate"}.get(self.tool, f"its latest {self.tool}")
        return f"{which} ({when})"


@dataclass(frozen=True)
class FinishEvidence:
    """What the session did after a task's latest list update: ``kind`` is "finished", "committed"
    or "changed" (see the module docstring)."""

    kind: str
    update: ListUpdate
    files: tuple[str, ...]
    commit: str = ""        # "1a2b3c4 'admin: list active discount codes'"
    tests: str = ""         # the passing test command
    said: str = ""          # the assistant's sentence
    asked: str = ""         # the person's request to commit

    def told(self, compaction: int) -> str:
        """The evidence in words, for a reason."""
        files = ", ".join(f.replace("\\", "/").rsplit("/", 1)[-1] for f in self.files[:3])
        files += f" (+{len(self.files) - 3} more)" if len(self.files) > 3 else ""
        done = [f"the session changed {files}"]
        if self.said:
            done.append(f"the assistant said \"{self.said}\"")
        if self.asked:
            done.append(f"the person asked to commit (\"{self.asked}\")")
        if self.commit:
            done.append(f"the commit {self.commit} succeeded")
        if self.tests:
            done.append(f"the tests passed ({self.tests})")
        told = done[0] if len(done) == 1 else ", ".join(done[:-1]) + " and " + done[-1]
        return f"{self.update.where(compaction)} still calls it {self.update.status.replace('_', ' ')}; after it {told}"


def _results(messages: list[Any]) -> dict[str, ToolResultBlock]:
    out: dict[str, ToolResultBlock] = {}
    for m in messages:
        if isinstance(m, UserMessage) and not isinstance(m.content, str):
            for b in m.content:
                if isinstance(b, ToolResultBlock):
                    out[b.tool_use_id] = b
    return out


def list_updates(messages: list[Any]) -> dict[str, ListUpdate]:
    """The latest list update of every open task, by its text (a TodoWrite item's content, a
    TaskCreate task's subject)."""
    results = _results(messages)
    # a history holds the earlier compactions' summaries (a real transcript's, without their boundaries)
    # or their boundaries (an engine run's): either marks a compaction
    marks = [i for i, m in enumerate(messages)
             if isinstance(m, CompactBoundary) or (isinstance(m, UserMessage) and m.is_compact_summary)]
    boundaries = [i for k, i in enumerate(marks) if k == 0 or marks[k - 1] != i - 1]  # a boundary and its summary: one
    todos: dict[str, tuple[int, str]] = {}
    tasks: dict[str, dict[str, Any]] = {}
    counter = 0
    for i, m in enumerate(messages):
        if not isinstance(m, AssistantMessage):
            continue
        for use in m.content:
            if not isinstance(use, ToolUseBlock):
                continue
            res = results.get(use.id)
            if res is not None and res.is_error:
                continue
            if use.name == "TodoWrite" and isinstance(use.input.get("todos"), list):
                todos = {str(t.get("content", "")).strip(): (i, str(t.get("status", "pending")))
                         for t in use.input["todos"] if isinstance(t, dict) and str(t.get("content", "")).strip()}
            elif use.name == "TaskCreate":
                counter += 1
                found = re.search(r"Task #?(\w+) created", result_text(res) if res else "", re.IGNORECASE)
                tid = found.group(1) if found else str(counter)
                subject = str(use.input.get("subject") or use.input.get("description") or "").strip()
                if subject:
                    tasks[tid] = {"subject": subject, "status": "pending", "index": i, "tool": "TaskCreate"}
            elif use.name == "TaskUpdate":
                task = tasks.get(str(use.input.get("taskId", "")).lstrip("#"))
                if task is not None:
                    if isinstance(use.input.get("status"), str):
                        task["status"] = use.input["status"]
                    if isinstance(use.input.get("subject"), str) and use.input["subject"].strip():
                        task["subject"] = use.input["subject"].strip()
                    task["index"], task["tool"] = i, "TaskUpdate"

    def update(index: int, tool: str, status: str) -> ListUpdate:
        return ListUpdate(index, tool, status, sum(b > index for b in boundaries))

    out = {text: update(i, "TodoWrite", status) for text, (i, status) in todos.items() if status != "completed"}
    for t in tasks.values():
        if t["status"] not in ("completed", "deleted", "cancelled"):
            out.setdefault(t["subject"], update(t["index"], t["tool"], t["status"]))
    return out


def _said_done(task: str, text: str) -> str:
    """The sentence of ``text`` that reports ``task`` as done, or ""."""
    for sentence in _SENTENCES.findall(text):
        s = sentence.strip()
        if s and _DONE.search(s) and not _NOT_DONE.search(s) and task_in_item(task, s, 0.6):
            return s
    return ""


def finish_evidence(task: str, update: ListUpdate, messages: list[Any]) -> FinishEvidence | None:
    """What the session did after ``update`` that shows ``task`` finished, or None (see the module
    docstring)."""
    results = _results(messages)
    files: list[str] = []
    commit = tests = said = asked_commit = ""
    asked = ""
    for m in messages[update.index + 1:]:
        if files and (typed := _typed(m)):
            asked = typed if _COMMIT_ASK.search(typed) and not _STEP.search(typed) else ""
        if not isinstance(m, AssistantMessage):
            continue
        for block in m.content:
            if isinstance(block, TextBlock) and files and not said:
                said = _said_done(task, block.text)
            if not isinstance(block, ToolUseBlock):
                continue
            res = results.get(block.id)
            if res is None or res.is_error:
                continue
            if block.name in _EDIT_TOOLS:
                path = str(block.input.get("file_path") or block.input.get("notebook_path") or "")
                if path and path not in files:
                    files.append(path)
                continue
            command = str(block.input.get("command", "")) if block.name == "Bash" else ""
            if not files or not command:
                continue
            out = result_text(res)
            if _COMMIT.search(command) and (c := _COMMIT_LINE.search(out)):
                commit = f"{c.group('hash')} '{c.group('message').strip()[:60]}'"
                asked_commit = asked or asked_commit
            elif _TEST_RUN.search(command) and _PASSED.search(out) and not _FAILED.search(out):
                tests = command.strip()[:60]
    if not files:
        return None
    if said and (commit or tests):
        return FinishEvidence("finished", update, tuple(files), commit, tests, said[:120])
    if update.status == "in_progress" and asked_commit and commit:
        return FinishEvidence("finished", update, tuple(files), commit, tests, asked=asked_commit[:120])
    if update.status == "in_progress" and commit:
        return FinishEvidence("committed", update, tuple(files), commit, tests)
    return FinishEvidence("changed", update, tuple(files), commit, tests)
