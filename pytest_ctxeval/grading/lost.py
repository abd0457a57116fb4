"""What a compaction lost: facts the context held before a compaction that the post-compact
context no longer holds anywhere (summary, kept messages, re-injected attachments).

Pure functions over message lists, no grading: the "what was lost" panel of the report and the
``lost`` field of the results JSON. Five kinds of fact:

``user_messages``
    person-typed messages (the graders' policy, :func:`~pytest_ctxeval.reading.extract.person_messages`);
    a very long one counts as kept when its head and tail are (the long-message policy).
``files``
    files changed by Edit/MultiEdit/Write/NotebookEdit (named by full path, a 2+-component suffix
    or an unambiguous file name, as ``files_preserved`` accepts).
``errors``
    the key line of every failing tool result.
``todos``
    the open items of the latest TodoWrite.
``identifiers``
    paths, function names (``name(``), snake_case/camelCase/dotted names, backticked code and
    numbers of two or more digits, read off what the person and the assistant *said and did*
    (person messages, assistant text, tool inputs up to 600 characters each, todo items, earlier
    summaries) — never off the bodies of tool results or a Write's whole file, which would drown the
    panel in every name of every file read. At most
    :data:`MAX_IDENTIFIERS` are listed; ``identifiers_total`` counts them all.

A fact is *held before* the compaction when it comes from a message of the summarised context, or
when its text is in that context (a message from before an earlier compaction that the earlier
summary quoted is still held). It is *lost* when it is held before and nowhere in the
post-compact context. Each lost fact names the message it came from: ``message`` is its 1-based
position in the session history (every message the session ever held, earlier summaries included),
so the same number means the same message in every compaction of a run.
"""

from __future__ import annotations

import re
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterable

from ..reading.extract import (
    edited_files, failing_results, file_mentioned, latest_todos, message_fragments, person_messages, touched_files,
)
from ..reading.session_facts import claude_storage, error_kept
from ..core.messages import (
    AssistantMessage, AttachmentMessage, CompactBoundary, TextBlock, UserMessage, plain_text,
    text_of, tool_results, tool_uses,
)
from ..core.redact import excerpt, redact
from ..reading.feedback import typed_text
from ..reading.summary import normalize_ws
from ..reading.verbatim import find, haystack

__all__ = ["LostFact", "Lost", "lost_facts", "identifiers", "message_ref", "CATEGORIES", "MAX_IDENTIFIERS"]

#: Fact kinds in the order the report shows them.
CATEGORIES: tuple[str, ...] = ("user_messages", "files", "errors", "todos", "identifiers")
CATEGORY_TITLES = {"user_messages": "user messages", "files": "edited files", "errors": "error lines",
                   "todos": "todo items", "identifiers": "identifiers"}
MAX_IDENTIFIERS = 60
_MAX_VALUE = 600          # longer tool-input values (a Write's whole file) are not scanned for identifiers


@dataclass(frozen=True)
class LostFact:
    category: str
    text: str
    message: int | None                    # 1-based position in the session history
    context: str | None = None             # for identifiers: the words around it in its message

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text, "message": self.message}
        if self.context:
            out["context"] = self.context
        return out


@dataclass
class Lost:
    """The lost facts of one compaction, by category."""

    facts: dict[str, list[LostFact]] = field(default_factory=lambda: {c: [] for c in CATEGORIES})
    identifiers_total: int = 0

    @property
    def count(self) -> int:
        return sum(len(v) for k, v in self.facts.items() if k != "identifiers") + self.identifiers_total

    @property
    def messages(self) -> list[int]:
        """The history positions the facts point at (sorted, no repeats)."""
        return sorted({f.message for v in self.facts.values() for f in v if f.message is not None})

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {c: [f.as_dict() for f in self.facts[c]] for c in CATEGORIES}
        out["identifiers_total"] = self.identifiers_total
        return out


# ---------------------------------------------------------------------------------------------
# Identifiers

_IDENT_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"`([^`\n]{2,60})`"),                                          # `backticked code`
    re.compile(r"(?<![\w./~-])((?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]*\w)"),      # paths with a slash
    # a file name may start with a digit and hold hyphens (2026-02-20_active-agent-pivot.md): never a
    # piece of one cut at "_" or "-" (review 5, #10), so no pattern below starts or ends inside a name
    re.compile(r"(?<![\w./-])([A-Za-z0-9_][\w-]*\.[A-Za-z][A-Za-z0-9]{0,5})(?![\w(-])"),  # file.ext, module.attr
    re.compile(r"(?<![\w.-])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?=\()"),          # function(, obj.method(
    re.compile(r"(?<![\w.-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![\w(-])"),          # snake_case (columns)
    re.compile(r"(?<![\w.-])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?![\w(-])"),          # UPPER_CASE constants
    re.compile(r"(?<![\w.-])([a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*)(?![\w(-])"),  # camelCase, PascalCase
    re.compile(r"(?<![\w.-])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*){1,4})(?![\w(-])"),      # dotted.names
    re.compile(r"(?<![\w.,])(\d+(?:\.\d+)+|\d{2,})(?![\w])"),                   # numbers (2+ digits), versions
)
_HEXISH = re.compile(r"^(?:[0-9a-f-]{16,}|toolu_\w+|msg_\w+)$", re.IGNORECASE)
_BORING = {"e.g", "i.e", "etc", "ok"}


def identifiers(text: str) -> list[str]:
    """Identifier-like strings in ``text``, first-seen order, no repeats.

    >>> identifiers("Rename parse_date() in src/util.py; keep MAX_RETRIES at 30 and `user_id`.")
    ['parse_date', 'src/util.py', 'MAX_RETRIES', '30', 'user_id']
    """
    # The same messages are read at every compaction of a run: remembered by value.
    return list(_identifiers(text) if len(text) <= 50_000 else _identifiers.__wrapped__(text))


@lru_cache(maxsize=16_384)
def _identifiers(text: str) -> tuple[str, ...]:
    spans: list[tuple[int, int, str]] = []
    for pattern in _IDENT_PATTERNS:
        for m in pattern.finditer(text):
            value = m.group(1).strip().rstrip(".,:;")
            if (len(value) < 2 or len(value) > 80 or value.lower() in _BORING or _HEXISH.match(value)
                    or "REDACTED" in value or re.fullmatch(r"[\d.]+\.[A-Za-z]\w*", value)):
                continue
            spans.append((m.start(1), m.start(1) + len(value), value))
    # The longest match wins where matches overlap (src/util.py, not also util.py).
    kept: list[tuple[int, int, str]] = []
    for start, end, value in sorted(spans, key=lambda s: (s[0] - s[1], s[0])):
        if all(end <= a or start >= b for a, b, _ in kept):
            kept.append((start, end, value))
    return tuple(dict.fromkeys(value for _, _, value in sorted(kept)))


_WORDS = re.compile(r"\w+")


class _Held:
    """Whole-token search in one text, for many values: a value made of word characters only is
    looked up in the set of the text's words (one pass over the text, then O(1) per value); any
    other value is found with ``str.find`` and its ends checked. (A regex per value over the whole
    text made the "what was lost" search quadratic: 2.2 of 3.5 s on a 3.6 MB session.)"""

    def __init__(self, text: str):
        self.text = text
        self.words: set[str] | None = None

    def __call__(self, value: str) -> bool:
        if _WORDS.fullmatch(value):
            if self.words is None:
                self.words = set(_WORDS.findall(self.text))
            return value in self.words
        text, n, at = self.text, len(value), self.text.find(value)
        while at >= 0:
            before = text[at - 1] if at else ""
            after = text[at + n] if at + n < len(text) else ""
            if not _is_word(before) and not _is_word(after):
                return True
            at = text.find(value, at + 1)
        return False


def _is_word(ch: str) -> bool:
    return bool(ch) and (ch.isalnum() or ch == "_")


def _held_in(text: str, value: str) -> bool:
    """Whether ``value`` occurs in ``text`` as a whole token (not inside a longer name)."""
    return _Held(text)(value)


def _said_and_done(message: Any) -> list[str]:
    """The text of a message an identifier may come from: what was typed, said or passed to a
    tool, and earlier summaries; not tool-result bodies."""
    if isinstance(message, UserMessage):
        if message.is_compact_summary:
            return [text_of(message.content)]
        text = typed_text(message)   # typed, or typed as a rejected tool use's feedback
        return [text] if text else []
    if isinstance(message, AssistantMessage):
        out = [b.text for b in message.content if isinstance(b, TextBlock)]
        for use in tool_uses(message):
            if use.name == "TodoWrite":  # the items, not their status words
                todos = use.input.get("todos")
                out += [str(t.get("content", "")) for t in todos if isinstance(t, dict)] if isinstance(todos, list) else []
                continue
            # Paths, commands, patterns and short edits; a whole file's content is skipped.
            out += [v for v in _strings(use.input) if len(v) <= _MAX_VALUE]
        return out
    return []


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _context(text: str, value: str, width: int = 50) -> str:
    at = text.find(value)
    if at < 0:
        return ""
    start, end = max(0, at - width), min(len(text), at + len(value) + width)
    return ("…" if start else "") + normalize_ws(text[start:end]) + ("…" if end < len(text) else "")


# ---------------------------------------------------------------------------------------------
# The computation


#: How a message's own words are found kept (:class:`pytest_ctxeval.reading.verbatim.Match` ``how``);
#: ``lead``, ``chat``, ``tail``, ``paste`` and ``command`` keep what was typed and summarise a paste.
_WORDS_KEPT = frozenset({"exact", "lines", "typo", "emoji"})


def lost_facts(summarized: list[Any], post_messages: list[Any], history: list[Any]) -> Lost:
    """What ``summarized`` (the context the compaction replaced) held that ``post_messages`` (the
    context after it) no longer holds; ``history`` is every message of the session before the
    compaction, for the facts' positions and for facts an earlier summary carried."""
    position = {m.uuid: i + 1 for i, m in enumerate(history)}
    pre_ids = {m.uuid for m in summarized}
    pre_text = plain_text(summarized)
    pre_norm = normalize_ws(pre_text)
    post_text = plain_text(m for m in post_messages if not isinstance(m, CompactBoundary))
    post_norm = normalize_ws(post_text)
    out = Lost()

    def pos(index: int) -> int | None:
        return position.get(history[index].uuid) if 0 <= index < len(history) else None

    # Person-typed messages of the whole session: held when in the context or quoted in it; kept
    # after when their words are, as verbatim_user_messages reads them (a space before "?", line breaks
    # flattened, quotes or a typo fixed: reading.verbatim.find), so the panel never calls lost a
    # message the grader calls verbatim. A paste the summary summarised is still lost here: its text is gone.
    post_hay = None
    for p in person_messages(history):
        frags = message_fragments(p.text)
        held = p.uuid in pre_ids or all(f in pre_norm for f in frags)
        if held and not all(f in post_norm for f in frags):
            post_hay = post_hay or haystack(post_text)
            if find(p.text, post_hay).how not in _WORDS_KEPT:
                out.facts["user_messages"].append(LostFact("user_messages", p.text, pos(p.index)))

    # Edited files: where each was first changed.
    first_edit: dict[str, int] = {}
    for i, m in enumerate(history):
        for path in edited_files([m]):
            first_edit.setdefault(path, i)
    paths = list(first_edit)
    lost_paths = set()
    pre_slashed, post_slashed = pre_text.replace("\\", "/"), post_text.replace("\\", "/")
    for path, i in first_edit.items():
        held = history[i].uuid in pre_ids or file_mentioned(path, pre_slashed, paths)
        if held and not file_mentioned(path, post_slashed, paths):
            out.facts["files"].append(LostFact("files", path, pos(i)))
            lost_paths.add(path)

    # Error lines of failing tool results.
    seen_errors: set[str] = set()
    for f in failing_results(history):
        if not f.key_line or f.key_line in seen_errors:
            continue
        seen_errors.add(f.key_line)
        key = normalize_ws(f.key_line)   # (contains_text, with both texts normalised once)
        held = history[f.index].uuid in pre_ids or key in pre_norm
        # kept as errors_preserved counts it: the line, or its identifying tokens (session_facts.error_kept)
        if held and key not in post_norm and not error_kept(
                f.key_line, f.text, str(f.input.get("command", "")), post_text, workaround=f.workaround)[0]:
            out.facts["errors"].append(LostFact("errors", f.key_line, pos(f.index)))

    # Open todos of the latest TodoWrite.
    todo_at = None
    for i, m in enumerate(history):
        if any(u.name == "TodoWrite" for u in tool_uses(m)):
            todo_at = i
    todos = latest_todos(history) or []
    for t in todos:
        content = str(t.get("content", "")).strip()
        if not content or t.get("status") == "completed":
            continue
        key = normalize_ws(content)
        held = (todo_at is not None and history[todo_at].uuid in pre_ids) or key in pre_norm
        if held and key not in post_norm:
            out.facts["todos"].append(LostFact("todos", content, pos(todo_at) if todo_at is not None else None))

    # Identifiers said or done in the replaced context.
    already = lost_paths | {normalize_ws(f.text) for f in out.facts["errors"]}
    ident_lost: dict[str, LostFact] = {}
    held_after = _Held(post_text)
    touched = [p for p, _ in touched_files(history)]
    for m in summarized:
        for text in _said_and_done(m):
            # Secrets are masked first: an identifier is never a token pulled out of its label
            # ("Bearer <token>"), and a context is never cut inside one.
            text = redact(text)[0]
            for value in identifiers(text):
                if value in ident_lost or value in already or held_after(value):
                    continue
                # a path as files_preserved reads one: named by a suffix of two components or more, or
                # by its file name; Claude Code's own storage (plans, memory) is no project file
                if "/" in value and (claude_storage(value) or file_mentioned(value, post_slashed, touched)):
                    continue
                ident_lost[value] = LostFact("identifiers", value, position.get(m.uuid), _context(text, value))
    out.identifiers_total = len(ident_lost)
    out.facts["identifiers"] = list(ident_lost.values())[:MAX_IDENTIFIERS]
    return out


def message_ref(message: Any, limit: int = 280) -> dict[str, Any]:
    """A short description of a history message for the report's links: role and an excerpt."""
    if isinstance(message, UserMessage):
        if message.is_compact_summary:
            role, text = "summary", text_of(message.content)
        elif (typed := typed_text(message)) is not None:
            role, text = "user", typed
        elif tool_results(message):
            role, text = "tool result", plain_text([message])
        else:
            role, text = "user (meta)", text_of(message.content)
    elif isinstance(message, AssistantMessage):
        role = "assistant"
        names = [u.name for u in tool_uses(message)]
        text = text_of(message.content) + (f" [tools: {', '.join(names)}]" if names else "")
        if not text_of(message.content):
            text = plain_text([message]) + (f" [tools: {', '.join(names)}]" if names else "")
    elif isinstance(message, AttachmentMessage):
        role, text = f"attachment ({message.attachment_type})", message.content
    else:
        role, text = "boundary", ""
    ref: dict[str, Any] = {"role": role, "excerpt": excerpt(normalize_ws(text), limit)}
    ts = getattr(message, "timestamp", None)
    if ts is not None:
        ref["at"] = ts.isoformat().replace("+00:00", "Z")
    return ref
