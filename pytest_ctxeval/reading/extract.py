"""Facts a summary must carry, read off a conversation: one definition each, shared by the
offline reference model (which writes them) and the rule graders (which look for them).

Sharing is deliberate: the offline model is a *reference* that shows what a faithful summary
contains; graders stay meaningful because a prompt that drops a section, or a real model that
paraphrases, fails them.
"""

from __future__ import annotations

import math
import re
import shlex
from urllib.parse import unquote
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from collections.abc import Iterable

from ..core.messages import (
    AssistantMessage, TextBlock, ToolUseBlock, UserMessage, result_text,
    text_of, tool_results, tool_uses,
)
from .session_facts import (
    build_error_line, claude_storage, error_kind, failed_build, failed_call_ids, failed_test_run, failed_tests, open_tasks, runs_tests,
)
from .context_instructions import without_instruction_sections
from .error_message import message_in_testify_block
from .file_shorthand import expand_file_shorthand, named_by_pattern
from .feedback import typed_text
from .file_changes import FileLedger
from .mcp_writes import mcp_file_ops
from .shell_writes import project_root, record, shell_writes
from .workarounds import refused_as_typed, refused_line, refused_part, worked_around
from .pasted import mostly_prose
from .summary import normalize_ws

__all__ = [
    "EDIT_TOOLS", "PersonMessage", "FailingResult", "person_messages", "edited_files", "file_ledger",
    "touched_files", "failing_results", "key_error_line", "open_todos", "latest_todos",
    "LONG_MESSAGE_CHARS", "LONG_MESSAGE_KEEP", "message_fragments", "contains_text", "file_mentioned", "same_name",
    "significant_tokens", "memory_rules", "failed_attempts", "latest_requests", "said_unchanged_removed",
]

#: Tools whose calls change files (their ``file_path`` / ``notebook_path`` is an artifact).
EDIT_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit")
_SEARCH_TOOLS = ("Grep", "Glob", "LS")
_PATH_KEYS = ("file_path", "notebook_path", "path")

#: Verbatim policy for very long person-typed messages that are mostly pasted (logs, code, a pasted
#: document): a message longer than ``LONG_MESSAGE_CHARS`` counts as kept when its first and last
#: ``LONG_MESSAGE_KEEP`` characters both appear verbatim (the summariser may elide the middle with a
#: marker such as ``[…]``). A long message of the person's own prose (:func:`.pasted.mostly_prose`:
#: a detailed request, a spec) must be kept in full.
LONG_MESSAGE_CHARS = 2_000
LONG_MESSAGE_KEEP = 300


@dataclass(frozen=True)
class PersonMessage:
    index: int  # position in the message list it was read from
    uuid: str
    text: str


@dataclass(frozen=True)
class FailingResult:
    index: int
    tool: str
    tool_use_id: str
    input: dict[str, Any]
    text: str
    key_line: str
    kind: str = "error"  # error | rejected | cancelled | tool_usage | probe (session_facts.error_kind)
    #: A test run's failing tests as its runner names them, ``(file, name)`` (session_facts.failed_tests).
    tests: tuple[tuple[str, str], ...] = ()
    #: The run exited 0 (piped through ``tail``) but its output reports failing tests.
    exit_ok: bool = False
    #: A refused command line's later command that did the job (reading/workarounds.py).
    workaround: str = ""
    #: A build that exited 0 (piped through ``tail``) but printed compile errors (session_facts.failed_build).
    build: bool = False


def person_messages(messages: Iterable[Any]) -> list[PersonMessage]:
    """Every person-typed message, in order (policy in :func:`pytest_ctxeval.core.messages.person_text`),
    with the words the person typed when rejecting a tool use (:mod:`pytest_ctxeval.reading.feedback`)."""
    out = []
    for i, message in enumerate(messages):
        text = typed_text(message)
        if text is not None:
            out.append(PersonMessage(i, message.uuid, text))
    return out


def _tool_path(block: ToolUseBlock) -> str | None:
    for key in _PATH_KEYS:
        value = block.input.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def edited_files(messages: Iterable[Any]) -> list[str]:
    """Project files changed by Edit/MultiEdit/Write/NotebookEdit calls and still changed at the end,
    first-seen order, no repeats (:mod:`pytest_ctxeval.reading.file_changes`: an edit undone or
    reverted with git is no change, a moved file is changed at its new place). A call whose result
    failed (rejected by the person, refused by the tool) changed nothing, and Claude Code's own
    storage (plan files, memory under ``~/.claude``) is not the project's."""
    return file_ledger(messages).changed()


def file_ledger(messages: Iterable[Any]) -> FileLedger:
    """The :class:`~pytest_ctxeval.reading.file_changes.FileLedger` of a session's edits and shell
    commands (:func:`edited_files` is its list; ``moved_from`` says where a moved file came from)."""
    messages = list(messages)
    failed = failed_call_ids(messages)
    results = {r.tool_use_id: r for m in messages for r in tool_results(m)}
    ledger = FileLedger()
    # Shell writes and deletes (shell_writes): an absolute path counts inside the folder the tools
    # worked in; a file counts as seen once a tool read or changed it.
    tool_paths = [p for m in messages for b in tool_uses(m) if (b.name in (*EDIT_TOOLS, "Read")
                  or mcp_file_ops(b.name, b.input)) and (p := _tool_path(b)) and not claude_storage(p)]
    root, seen, gone = project_root(tool_paths), set(), set()
    for message in messages:
        for block in tool_uses(message):
            if block.name == "Read" and (path := _tool_path(block)):
                seen.add(path)
            if block.id in failed:
                continue
            if block.name in EDIT_TOOLS and (path := _tool_path(block)) and not claude_storage(path):
                res = results.get(block.id)
                ledger.edit(path, block.name, block.input, result_text(res) if res is not None else "")
                seen.add(path)
            elif block.name.startswith("mcp__") and (ops := mcp_file_ops(block.name, block.input)):
                _mcp_changes(ledger, block.name, ops, seen)
            elif block.name == "Bash":
                command = str(block.input.get("command", ""))
                for path in removed_paths(command, ledger.changed()):
                    st = ledger.state[path]
                    if st.created or all(e is None for e in st.edits):
                        ledger.remove(path)   # a file the session wrote and removed; written again, it is back
                        gone.add(path)
                res = results.get(block.id)
                for write in shell_writes(command, result_text(res) if res is not None else ""):
                    record(ledger, write, seen=seen, gone=gone, root=root)
                ledger.shell(command)
    for path in [p for p in ledger.changed() if claude_storage(p)]:
        ledger.remove(path)   # moved out to scratch space
    return ledger


def _mcp_changes(ledger: FileLedger, tool: str, ops: list[tuple[str, list[str]]], seen: set[str]) -> None:
    """Enter the files an MCP tool wrote or moved (:mod:`pytest_ctxeval.reading.mcp_writes`) in
    ``ledger``: a write as a Write's change, a move as ``mv``'s (a file not changed before is changed
    at its new place)."""
    for op, args in ops:
        if any(claude_storage(a) for a in args):
            continue
        if op == "write":
            ledger.edit(args[0], tool, {}, "")
            ledger.how.setdefault(args[0], f"written with `{tool}`")
            seen.add(args[0])
        else:
            src, dst = args
            ledger.shell(f"mv {shlex.quote(src)} {shlex.quote(dst)}")
            if dst not in ledger.order:
                ledger.edit(dst, tool, {}, "")
                ledger.moved_from.setdefault(dst, src)
            seen.add(dst)


_REMOVE = re.compile(r"(?:^|[;&|]\s*|\s)(?:git\s+rm|rm|unlink|del|Remove-Item)\s+((?:-\S+\s+)*)([^;&|\n]+)")


def removed_paths(command: str, paths: list[str]) -> list[str]:
    """Which of ``paths`` a shell command removes (``rm -f scratch.py``, ``git rm old.py``): a file the
    agent created and removed again is not a change the summary must name."""
    out = []
    for m in _REMOVE.finditer(command):
        args = [a.strip("'\"") for a in m.group(2).split()]
        for path in paths:
            name = path.replace("\\", "/").rsplit("/", 1)[-1]
            if any(a == path or a.endswith("/" + name) or a == name for a in args):
                out.append(path)
    return out


def touched_files(messages: Iterable[Any]) -> list[tuple[str, str]]:
    """``(path, how)`` for every file a tool read or changed, first-seen order. ``how`` is the last
    edit tool used on it if it was ever changed (a later Read does not hide an edit), else the first
    tool that touched it."""
    seen: dict[str, str] = {}
    for message in messages:
        for block in tool_uses(message):
            if block.name in _SEARCH_TOOLS:  # their 'path' is a folder to search, not a file
                continue
            if path := _tool_path(block):
                seen[path] = block.name if block.name in EDIT_TOOLS or path not in seen else seen[path]
    return list(seen.items())


_PYTEST_E = re.compile(r"^E\s+(?=\S)")  # pytest's "E   " prefix on assertion/exception lines
_SHELL_PREFIX = re.compile(r"^(?:(?:/\S*/)?(?:ba|z)?sh|\(eval\)):\s*(?:line \d+:\s*|\d+:\s*)?")  # bash, zsh:1:, (eval):3:
_EXCEPTION = re.compile(r"^\s*(?:E\s+)?[A-Za-z_][\w.]*(?:Error|Exception|Exit|Failure|Fault|Interrupt)\b\s*(?::|$)")
_FAILED = re.compile(r"^\s*(?:FAILED|FAIL|ERROR)\b|\b(?:error|fatal|panic)(?:\[\w+\])?:|\berror [A-Z]{2,}\d+:",
                     re.IGNORECASE)
_PROBLEM = re.compile(r"not found|no matches found|no such file|denied|cannot|can't|unable|failed|refused|timed out|"
                      r"invalid|undefined|unknown|missing", re.IGNORECASE)
#: A failing Go test's own message (``render_test.go:31: got X, want Y``): more telling than the
#: ``--- FAIL: TestX`` and bare ``FAIL`` lines around it.
_GO_TEST_MESSAGE = re.compile(r"^[\w./-]+_test\.go:\d+: \S")
_NOISE = re.compile(r"^\s*(?:exit code \d+|<\/?tool_use_error>|traceback \(most recent call last\):?)\s*$",
                    re.IGNORECASE)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_TAGS = re.compile(r"</?tool_use_error>")


def key_error_line(text: str, limit: int = 200) -> str:
    """The line of a failing tool result that says what went wrong.

    Preference: the ``Error:`` field of a Go testify block; the last exception line (``ValueError: ...``); else a failing Go test's message
    (``x_test.go:31: got 1, want 2``); else the first ``FAILED``/``error:``
    line; else the first line naming a problem (not found, denied, ...); else the first line that is
    not noise (``Exit code 1``). Shell prefixes (``/bin/bash: line 1:``), pytest's ``E`` margin and
    ANSI codes are removed; the line is cut at ``limit`` characters.

    >>> key_error_line("Exit code 127\\n/bin/bash: line 1: python: command not found")
    'python: command not found'
    >>> key_error_line("Traceback (most recent call last):\\n  File 'a.py'\\nKeyError: 'user_id'")
    "KeyError: 'user_id'"
    >>> key_error_line("--- FAIL: TestRender (0.00s)\\n    render_test.go:31: got 1, want 2\\nFAIL")
    'render_test.go:31: got 1, want 2'
    """
    raw = text.splitlines()
    lines = [_PYTEST_E.sub("", _SHELL_PREFIX.sub("", _TAGS.sub("", _ANSI.sub("", l))).strip()) for l in raw]
    lines = [l for l in lines if l and not _NOISE.match(l)]
    if not lines:
        return normalize_ws(_TAGS.sub("", text))[:limit]
    # a Go testify block: its Error field, not the "Error Trace:" location (reading/error_message.py)
    chosen = message_in_testify_block([_ANSI.sub("", l) for l in raw]) if "Error Trace:" in text else None
    for line in reversed(lines if chosen is None else []):
        if _EXCEPTION.match(line):
            chosen = line
            break
    if chosen is None:
        chosen = next((l for l in lines if _GO_TEST_MESSAGE.match(l)), None)
    if chosen is None:
        chosen = next((l for l in lines if _FAILED.search(l)), None)
    if chosen is None:
        chosen = next((l for l in lines if _PROBLEM.search(l)), lines[0])
    return normalize_ws(chosen)[:limit]


def failing_results(messages: list[Any], *, kinds: Iterable[str] = ("error",)) -> list[FailingResult]:
    """Every tool result with ``is_error`` set whose kind is in ``kinds`` (by default the errors of
    the work: not a rejected, cancelled or mis-made call, not a probe; see
    :func:`pytest_ctxeval.reading.session_facts.error_kind`), and every test run that reported
    failing tests though its command exited 0 (``pytest | tail``; kind ``error``, see
    :func:`pytest_ctxeval.reading.session_facts.failed_test_run`), with the call it answers and its
    key line."""
    wanted = set(kinds)
    calls: dict[str, ToolUseBlock] = {}
    out = []
    later: list[tuple[str, str, bool]] | None = None   # the Bash calls in order, read once when needed
    for i, message in enumerate(messages):
        for use in tool_uses(message):
            calls[use.id] = use
        for res in tool_results(message):
            found = calls.get(res.tool_use_id)
            if not res.is_error and not (found and found.name == "Bash" and "command" in found.input):
                continue
            text = result_text(res)
            tool = found.name if found else "?"
            workaround, build = "", False
            if not res.is_error:
                # A test run or a build piped through tail/grep exits 0: its failing tests or compile
                # errors are an error all the same.
                ran = str(found.input["command"]) if found else ""
                build = not failed_test_run(ran, text)
                if build and not failed_build(ran, text):
                    continue
                kind = "error"
            else:
                kind = error_kind(tool, text, dict(found.input) if found else {})
                # refused or not there, then done another way: a lesson, not a probe (reading/workarounds.py);
                # the refusal may close the output of a command line whose first part printed something
                # (`gh pr view 3 && gh pr diff 3 --stat`: the PR, then "unknown flag: --stat")
                key = key_error_line(text)
                if kind == "probe" and tool == "Bash" and found and (refused_line(text) or refused_line(key)):
                    later = _bash_runs(messages) if later is None else later
                    mine = next((k for k, (use_id, _, _) in enumerate(later) if use_id == found.id), len(later))
                    ran = str(found.input.get("command", ""))
                    workaround = worked_around(ran if refused_line(text) else refused_part(ran, key),
                                               [(c, ok) for _, c, ok in later[mine + 1:]],
                                               as_typed=refused_as_typed(key))
                    kind = "error" if workaround else kind
            if kind not in wanted:
                continue
            command = str(found.input.get("command", "")) if found and tool == "Bash" else ""
            tests = tuple(failed_tests(text)) if command and runs_tests(command) else ()
            built = build and not res.is_error
            out.append(FailingResult(i, tool, res.tool_use_id, dict(found.input) if found else {}, text,
                                     build_error_line(text) if built else key_error_line(text), kind, tests,
                                     not res.is_error, workaround, built))
    return out


def _bash_runs(messages: list[Any]) -> list[tuple[str, str, bool]]:
    """``(tool_use_id, command, succeeded)`` for every Bash call, in call order."""
    ok = {res.tool_use_id: not res.is_error for message in messages for res in tool_results(message)}
    return [(use.id, str(use.input.get("command", "")), ok.get(use.id, False))
            for message in messages for use in tool_uses(message) if use.name == "Bash"]


def latest_todos(messages: Iterable[Any]) -> list[dict[str, Any]] | None:
    """The todo list of the most recent TodoWrite call, or None when there was none."""
    todos = None
    for message in messages:
        for use in tool_uses(message):
            if use.name == "TodoWrite" and isinstance(use.input.get("todos"), list):
                todos = [t for t in use.input["todos"] if isinstance(t, dict)]
    return todos


def open_todos(messages: Iterable[Any]) -> list[str]:
    """Contents of the todos not marked completed in the latest TodoWrite, then the subjects of the
    TaskCreate tasks not completed or deleted (Claude Code 2.1.45+)."""
    messages = list(messages)
    todos = latest_todos(messages) or []
    items = [str(t.get("content", "")).strip() for t in todos
             if t.get("status") != "completed" and str(t.get("content", "")).strip()]
    return list(dict.fromkeys(items + open_tasks(messages)))


def message_fragments(text: str) -> list[str]:
    """What must appear verbatim for ``text`` to count as kept: the whole message, or for a long
    one that is mostly pasted its head and tail (see :data:`LONG_MESSAGE_CHARS`). Whitespace-normalised."""
    norm = normalize_ws(text)
    if len(norm) <= LONG_MESSAGE_CHARS or mostly_prose(text):
        return [norm]
    return [norm[:LONG_MESSAGE_KEEP].strip(), norm[-LONG_MESSAGE_KEEP:].strip()]


def contains_text(haystack: str, needle: str) -> bool:
    """Whitespace-insensitive substring test."""
    return normalize_ws(needle) in _normalized(haystack)


@lru_cache(maxsize=16)
def _normalized(text: str) -> str:
    # Graders test many needles (every error line, every task) against one section: normalise it
    # once, not once per needle (that made grading quadratic in the session's length).
    return normalize_ws(text)


class ItemIndex:
    """One text searched for many needles: lower-cased and whitespace-normalised once, split into
    items once, each item's significant tokens indexed once (see :func:`text_index`)."""

    def __init__(self, text: str, split: re.Pattern[str]):
        self.lower = normalize_ws(text.lower())
        parts = split.split(text)
        self.items = [set(significant_tokens(item)) for item in parts]
        self.item_lower = [normalize_ws(item.lower()) for item in parts]
        self.postings: dict[str, list[int]] = {}
        for i, have in enumerate(self.items):
            for t in have:
                self.postings.setdefault(t, []).append(i)

    def contains(self, needle: str, tokens: list[str]) -> bool:
        """Whether ``needle`` (lower-cased, whitespace-normalised) is in the text. The items holding
        its rarest token are tried first (an item's text is part of the whole text), the whole text
        only when none holds it: a section that lists every error is not scanned once per error."""
        known = [t for t in tokens if t in self.postings]
        if known:
            rarest = min(known, key=lambda t: len(self.postings[t]))
            if any(needle in self.item_lower[i] for i in self.postings[rarest]):
                return True
        return needle in self.lower

    def overlap(self, tokens: list[str], share: float) -> bool:
        """Whether one item holds at least ``share`` of ``tokens`` (counted with repeats), as
        ``sum(t in item for t in tokens) / len(tokens) >= share`` over every item, but looking only
        at the items that hold one of the rarest tokens (an item lacking all of them cannot reach
        the share)."""
        if not tokens:
            return False
        weight: dict[str, int] = {}
        for t in tokens:
            weight[t] = weight.get(t, 0) + 1
        k = len(tokens)
        candidates: set[int] = set()
        lacking = 0
        for t in sorted(weight, key=lambda t: len(self.postings.get(t, ()))):
            candidates.update(self.postings.get(t, ()))
            lacking += weight[t]
            if k - lacking < share * k - 1e-9 or math.isclose(k - lacking, 0):
                break
        return any(sum(t in self.items[i] for t in tokens) / k >= share for i in candidates)


@lru_cache(maxsize=16)
def text_index(text: str, split: re.Pattern[str]) -> ItemIndex:
    """The :class:`ItemIndex` of ``text`` split by ``split`` (cached: a grader asks again for every needle)."""
    return ItemIndex(text, split)


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-/]*[A-Za-z0-9_]|\d+(?:\.\d+)?")
_STOP = {"the", "and", "for", "with", "that", "this", "from", "not", "are", "was", "you", "your",
         "but", "all", "any", "can", "has", "have", "had", "into", "its", "out", "use", "via"}


def significant_tokens(text: str) -> list[str]:
    """Lower-cased identifiers, paths, numbers and words of 3+ letters, minus stop words."""
    return list(_significant(text) if len(text) <= 20_000 else _significant.__wrapped__(text))


@lru_cache(maxsize=8192)  # the graders ask again for the same lines, for every mutant of a compaction
def _significant(text: str) -> tuple[str, ...]:
    return tuple(t.lower() for t in _WORD.findall(text)
                 if (len(t) >= 3 or t.isdigit()) and t.lower() not in _STOP)


#: A Markdown escape a summariser puts in a file name (``hello\\_world.py``, ``\\*.md``).
_MD_ESCAPED = re.compile(r"\\([_*`\[\]#~])")


def file_mentioned(path: str, text: str, all_paths: Iterable[str] = ()) -> bool:
    """:func:`_file_mentioned`; a file name written with Markdown escapes (``hello\\_world.py``)
    names the file too (a backslash is otherwise read as a Windows path separator), and so does a
    shorthand word for several files (``popup.html/css/js``, ``src/{api,cli}/main.go``), a glob that
    matches only this changed file (``spec/RFC-0001-*.md``) or its folder and number range
    (``docs/adr/0006-0009``): :mod:`pytest_ctxeval.reading.file_shorthand`."""
    return _file_mentioned(path, text, all_paths) or (
        "\\" in text and _MD_ESCAPED.search(text) is not None
        and _file_mentioned(path, _MD_ESCAPED.sub(r"\1", text), all_paths)) or (
        (spelled := expand_file_shorthand(text)) is not text and _file_mentioned(path, spelled, all_paths)) or (
        named_by_pattern(path, text, all_paths))


#: Words that say a file named just before them was not changed ("(read-only reference)",
#: "READ, not modified", "left untouched", "no changes to"), and words that say it was.
_UNCHANGED = re.compile(r"\bread[- ]only\b|\b(?:not|never|wasn't|was not) (?:been )?(?:modified|changed|edited|touched)\b|"
                        r"\bunchanged\b|\buntouched\b|\bno (?:changes?|edits?) (?:to|in|made)\b|\breference only\b|"
                        r"\bonly read\b|"
                        # everyday words: "no edits needed", "no changes were required", "nothing to change",
                        # "needed no changes", "(looks) fine as is", "left as-is", "left alone"
                        r"\bno (?:changes?|edits?|modifications?|updates?) (?:(?:were|was|are|is) )?"
                        r"(?:needed|necessary|required)\b|\bnothing (?:needed )?to (?:change|edit|modify|fix)\b|"
                        r"\b(?:needs?|needed|required|requires) no (?:changes?|edits?|modifications?)\b|"
                        r"\b(?:did not|didn't|does not|doesn't) (?:need|require) (?:any )?(?:changes?|edits?|modifications?)\b|"
                        r"\b(?:left|kept|keep|leave|fine|good|ok|okay|correct) (?:as[- ]is|alone)\b", re.IGNORECASE)
#: Words that say the unchanged words are about the rest of a changed file ("rounded the total; the
#: rest left as is", "otherwise untouched"): the file was changed.
_REST = re.compile(r"\b(?:the rest|otherwise|everything else|else|remaining|other (?:parts|functions|code))\b",
                   re.IGNORECASE)
_CHANGED = re.compile(r"\b(?:modif|chang|edit|add|creat|updat|fix|writ|wrote|rewr|renam|refactor|replac|remov|delet|"
                      r"implement|extract|revert|restor|moved?\b)\w*", re.IGNORECASE)
#: Where a file is named in a line: a code span or a path-like word (``api.go``, ``src/x/``).
_NAMED = re.compile(r"`[^`\n]+`|(?<![\w/.-])[\w.-]*[\w-]\.[A-Za-z]\w{0,9}\b|(?<![\w/.-])[\w.-]+/[\w./-]*")


@lru_cache(maxsize=1024)  # a region's text: the same for every mutant that leaves its section be
def said_unchanged_removed(text: str) -> str:
    """``text`` without what it says of a file that was not changed: in each line, from a file's name
    to the next name, the words said of it when they call it unchanged ("(read-only reference)",
    "READ, not modified", "left untouched") and say no change. A changed file named only so is not
    told as changed; its name beside other words ("`api.go` (modified; `x.go` read-only)") still is.

    >>> said_unchanged_removed("- `api.go` (read-only reference); `cli.go`: added --raw")
    '- `cli.go`: added --raw'
    >>> said_unchanged_removed("- `api.go`: examined the parser; no edits needed")
    '- '
    """
    if not _UNCHANGED.search(text):
        return text
    out = []
    for line in text.split("\n"):
        if not _UNCHANGED.search(line):
            out.append(line)
            continue
        names = [m.start() for m in _NAMED.finditer(line)]
        cuts = sorted(set([0] + names + [len(line)]))
        parts = [line[a:b] for a, b in zip(cuts, cuts[1:])]
        kept = [p for p in parts if not (_UNCHANGED.search(p) and not _CHANGED.search(_UNCHANGED.sub(" ", p))
                                         and not _REST.search(p))]
        out.append("".join(kept) if len(kept) < len(parts) else line)
    return "\n".join(out)


def _file_mentioned(path: str, text: str, all_paths: Iterable[str] = ()) -> bool:
    """Whether ``text`` names ``path``: the full path, a suffix of two or more components, or the
    bare file name. The bare name counts when no other path in ``all_paths`` shares it, or when it
    stands alone in ``text`` (not the end of a longer path) and every other path sharing it is named
    by a longer suffix: then the bare name can mean only this one (``Cargo.toml (workspace root)``
    beside ``crates/lib/Cargo.toml``). A path whose file name a redaction collapsed
    (``/Users/me/docs.REDACTED.md``: the folders and name replaced by a marker) is named by what is left
    of it from the marker on (``REDACTED.md``): the summary went through the same redaction."""
    norm = path.replace("\\", "/").rstrip("/")
    text = text.replace("\\", "/")
    if _path_in(norm, text):
        return True
    parts = [p for p in norm.split("/") if p]
    if not parts:
        return False
    for k in range(len(parts) - 1, 1, -1):
        if _path_in("/".join(parts[-k:]), text):
            return True
    base = parts[-1]
    marker = _last_marker(base)
    if marker is not None:
        tail = base[marker:]
        return re.search(rf"(?<![\w-]){re.escape(tail)}(?![\w-])", text) is not None
    if base not in text:  # a plain substring scan first: most files are not named in most texts
        return _stem_in_folder(parts, text, all_paths) or _module_named(parts, text, all_paths)
    namesakes = same_name(path, all_paths)
    if not namesakes:
        return any(_folders_agree(parts, text[:m.start()]) for m in
                   re.finditer(rf"(?<![\w.-]){re.escape(base)}(?![\w-]|\.\w)", text))
    # another path shares the file name: the name alone tells which only when it stands alone and
    # every namesake is named by a longer path
    if re.search(rf"(?<![\w./-]){re.escape(base)}(?![\w-]|\.\w)", text) is None:
        return False
    return all(_named_by_path(other, text) for other in namesakes)


def _folders_agree(parts: list[str], before: str) -> bool:
    """Whether the bare file name that follows ``before`` names the file ``parts``: it stands alone,
    or the folder written right before it is one of its path's folders (``web/App.tsx`` for
    ``packages/web/src/App.tsx``; case, ``%20`` and an escaped space aside), not another one
    (``internal/api/api.go`` is not ``internal/commands/api.go``: the next model would open the
    wrong file)."""
    if not before.endswith("/"):
        return True
    m = re.search(r"([^/\s`'\"(\[]*)/$", before)
    parent = unquote(m.group(1) if m else "").strip().lower()
    if parent in ("", ".", "..", "~") or parent.startswith("@"):
        return True
    folders = [f.lower() for f in parts[:-1]]
    # "~/Mobile\ Documents/notes.md": the escaped space's backslash was read as a separator
    return any(f == parent or f.endswith(" " + parent) for f in folders)


def _stem_in_folder(parts: list[str], text: str, all_paths: Iterable[str]) -> bool:
    """The file named by its name without the extension on a line that names its folder
    (``under history/2026-02-23_pivot/ (00_overview through 08_cleanup)``), when no other path of
    ``all_paths`` in that folder has that stem."""
    stem, dot, _ = parts[-1].rpartition(".")
    if not dot or len(stem) < 4 or len(parts) < 2 or stem not in text:
        return False
    folder = parts[-3:-1] if len(parts) >= 3 else parts[-2:-1]
    where = "/".join(folder)
    if len(folder) == 1 and len(where) < 8:
        return False
    others = [p for p in all_paths if p.replace("\\", "/").rsplit("/", 1)[0].endswith("/" + where)
              and p.replace("\\", "/").rsplit("/", 1)[-1].rpartition(".")[0] == stem
              and p.replace("\\", "/").rsplit("/", 1)[-1] != parts[-1]]
    if others:
        return False
    stem_re = re.compile(rf"(?<![\w.-]){re.escape(stem)}(?![\w-])")
    folder_re = re.compile(rf"(?<![\w.-]){re.escape(where)}/?(?![\w./-])")
    return any(stem_re.search(line) and folder_re.search(line) for line in text.splitlines() if stem in line)


#: A file stem that reads as a module name, not a word: letters with an underscore or a digit in it
#: (``step4_service``, ``modify_ww3_nml``), at least six characters.
_MODULE_STEM = re.compile(r"^(?=\w{6,}$)(?=.*[_\d])[A-Za-z]\w*$")


def _module_named(parts: list[str], text: str, all_paths: Iterable[str]) -> bool:
    """The file named by its module name, its file name without the extension
    (``six namelist writers (step4_service, server_sh, modify_ww3_nml)``), when that stem reads as
    a module name (:data:`_MODULE_STEM`), stands alone (not part of a longer name, a path, a file
    name with another extension, or a call ``step4_service()``), and no other path of ``all_paths``
    has that stem."""
    stem, dot, _ = parts[-1].rpartition(".")
    if not dot or not _MODULE_STEM.match(stem) or stem not in text:
        return False
    if any(p.replace("\\", "/").rsplit("/", 1)[-1].rpartition(".")[0] == stem
           and p.replace("\\", "/").rstrip("/").split("/")[-len(parts):] != parts for p in all_paths):
        return False
    return re.search(rf"(?<![\w./-]){re.escape(stem)}(?![\w/-]|\.\w|\()", text) is not None


#: A redaction marker in a path: ``REDACTED`` (the Entire CLI), ``[REDACTED_PATH]`` and the like.
_MARKER = re.compile(r"\[REDACTED[\w-]*\]|REDACTED")


def _last_marker(name: str) -> int | None:
    """Where the last redaction marker in a file name starts, or None."""
    found = list(_MARKER.finditer(name))
    return found[-1].start() if found else None


def _named_by_path(path: str, text: str) -> bool:
    norm = path.replace("\\", "/").rstrip("/")
    if _path_in(norm, text):
        return True
    parts = [p for p in norm.split("/") if p]
    return any(_path_in("/".join(parts[-k:]), text) for k in range(len(parts) - 1, 1, -1))


def _path_in(path: str, text: str) -> bool:
    """``path`` (or a suffix of it) written whole in ``text``: not the start of a longer name
    (``hello_world.pyi``, ``app.tsx`` for ``app.ts``) nor the end of another folder's name
    (``mylib/x.py`` for ``lib/x.py``); a longer path ending in it names it."""
    if path not in text:   # a plain substring scan first
        return False
    lead = "" if path.startswith("/") else r"(?<![\w.-])"
    return re.search(rf"{lead}{re.escape(path)}(?![\w-]|\.\w)", text) is not None


def same_name(path: str, all_paths: Iterable[str]) -> list[str]:
    """The other paths of ``all_paths`` with ``path``'s file name."""
    base = path.replace("\\", "/").rstrip("/").split("/")[-1]
    if _base_count(all_paths).get(base, 0) - (path in _base_set(all_paths)) <= 0:
        return []
    return sorted(p for p in _base_set(all_paths) if p != path and p.replace("\\", "/").rstrip("/").split("/")[-1] == base)


# file_mentioned is asked about every file of one list in turn: the list's file names are counted
# once (keyed by the list object, as the callers pass the same list), not once per question.
_BASES: list[Any] = [None, None, None, None]


def _basename_index(all_paths: Iterable[str]) -> tuple[dict[str, int], set[str]]:
    if not isinstance(all_paths, (list, tuple)):
        all_paths = list(all_paths)
    if _BASES[0] is all_paths and _BASES[1] == len(all_paths):
        return _BASES[2], _BASES[3]
    counts: dict[str, int] = {}
    distinct = set(all_paths)
    for p in distinct:
        b = p.replace("\\", "/").rstrip("/").split("/")[-1]
        counts[b] = counts.get(b, 0) + 1
    _BASES[:] = [all_paths, len(all_paths), counts, distinct]
    return counts, distinct


def _base_count(all_paths: Iterable[str]) -> dict[str, int]:
    return _basename_index(all_paths)[0]


def _base_set(all_paths: Iterable[str]) -> set[str]:
    return _basename_index(all_paths)[1]


# ---------------------------------------------------------------------------------------------
# Memory files and failed attempts

#: A memory file as Claude Code shows it to the model: ``Contents of <path> (...):`` inside a
#: ``<system-reminder>`` (the claudeMd user context, or a nested CLAUDE.md met mid-session).
_MEMORY_HEADER = re.compile(r"^Contents of (?P<path>\S*(?:CLAUDE(?:\.local)?\.md|/\.claude/\S+\.md|MEMORY\.md))"
                            r"\b[^\n]*:\s*$", re.MULTILINE)
_MEMORY_END = re.compile(r"^\s*(?:</system-reminder>|IMPORTANT: this context may or may not be relevant)", re.MULTILINE)
_RULE_ITEM = re.compile(r"^\s*(?:[-*]|\d{1,2}[.)])\s+(?P<rule>\S.*)$")


def memory_rules(messages: Iterable[Any]) -> list[str]:
    """The rules of every memory file (CLAUDE.md) shown to the model in ``messages``: the bullet or
    numbered lines of each ``Contents of .../CLAUDE.md ...:`` block of a ``<system-reminder>`` (its
    other non-heading lines when it has no list), first-seen order, no repeats.

    >>> memory_rules([UserMessage(uuid="m", is_meta=True, content="<system-reminder>\\nContents of "
    ...     "/srv/CLAUDE.md (project instructions):\\n\\n# Rules\\n- Back up before editing\\n</system-reminder>")])
    ['Back up before editing']
    """
    seen: dict[str, None] = {}
    for message in messages:
        if not isinstance(message, UserMessage):
            continue
        texts = [message.content] if isinstance(message.content, str) else \
            [b.text for b in message.content if isinstance(b, TextBlock)]
        for text in texts:
            if "<system-reminder>" not in text:
                continue
            for header in _MEMORY_HEADER.finditer(text):
                end = _MEMORY_END.search(text, header.end())
                body = text[header.end(): end.start() if end else len(text)]
                nxt = _MEMORY_HEADER.search(body)
                if nxt:
                    body = body[: nxt.start()]
                # a "## Compact Instructions" section speaks to the summariser, not of the project
                body = without_instruction_sections(body)
                lines = [l for l in body.splitlines() if l.strip()]
                items = [m.group("rule").strip() for l in lines if (m := _RULE_ITEM.match(l))]
                if not items:
                    items = [l.strip() for l in lines if not l.lstrip().startswith("#")]
                for item in items:
                    seen.setdefault(normalize_ws(item))
    return list(seen)


#: How an assistant says an attempt did not work ("coupons.get(key) did not fix it", "reverting").
FAILED_ATTEMPT = re.compile(
    r"\b(?:did not|didn't|does not|doesn't|will not|won't) (?:work|help|fix|solve|change)\b|"
    r"\bnot the (?:fix|cause|culprit|problem|issue|answer)\b|\bwrong (?:fix|approach|guess|lead|track|idea)\b|"
    r"\bdead end\b|\bruled out\b|\bno effect\b|\bstill fail(?:s|ing|ed)?\b|\bmade (?:it|things) worse\b|"
    r"\brevert(?:s|ed|ing)?\b|\brolled back\b|\bundo(?:ing)? (?:that|the|this)\b", re.IGNORECASE)


@lru_cache(maxsize=8192)  # a pure function of the text: every summary re-reads replies that repeat
def _says_failed(text: str) -> bool:
    """Whether ``text`` says an attempt did not work (:data:`FAILED_ATTEMPT` found in it)."""
    return FAILED_ATTEMPT.search(text) is not None


def failed_attempts(messages: Iterable[Any], limit: int = 400) -> list[str]:
    """What the assistant said about attempts that did not work: its text messages matching
    :data:`FAILED_ATTEMPT`, whitespace-normalised and cut at ``limit`` characters, in order."""
    out: dict[str, None] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            text = normalize_ws(text_of(message.content))
            if text and _says_failed(text):
                out.setdefault(text if len(text) <= limit else text[: limit - 1] + "…")
    return list(out)


def latest_requests(history: list[Any]) -> list[PersonMessage]:
    """The most recent request: the last person-typed message and those sent right before it with
    no assistant message between (the API merges consecutive user turns into one request)."""
    people = person_messages(history)
    if not people:
        return []
    run = [people[-1]]
    for earlier in reversed(people[:-1]):
        if any(isinstance(m, AssistantMessage) for m in history[earlier.index + 1:run[0].index]):
            break
        run.insert(0, earlier)
    return run
