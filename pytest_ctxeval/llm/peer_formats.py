"""What the offline reference model knows of other compactors' formats (:mod:`pytest_ctxeval.compaction`).

The reference (:mod:`.reference`) writes the sections a prompt asks for. Other compactors ask for
titles outside Claude Code's nine, in other layouts; this module lets it read and write them:

* :data:`EXTRA_VOCABULARY` / :func:`reference_kind`: Codex's "Constraints", "Progress and
  decisions", "Critical data", opencode's "Important Details" and "Work State", Gemini CLI's "key
  knowledge" and file-system state, checked before the graders' vocabulary;
* :func:`snapshot_tags`: a prompt holding an XML ``<state_snapshot>`` skeleton (Gemini CLI) is
  answered in that XML;
* :func:`deserialise`: a conversation sent as text lines inside ``<conversation>`` (opencode's
  head) is read back into messages, the ``<previous-summary>`` anchor as an earlier summary;
* :func:`split_merged`: consecutive user messages reach the API merged into one (``to_api``: Codex
  keeps the user's messages one after another); each text block is read as the message it was;
* :func:`read_other`: another compactor's earlier summary is carried forward section by section;
* :func:`other_section`: the bodies of the new kinds, from the same facts as the nine sections.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..reading.extract import latest_todos
from ..core.messages import tool_uses
from ..reading.summary import parse_summary, section_kind
from .summary_text import (
    FAILED_HEADER, FINDINGS_HEADER, RULES_HEADER, clip as _clip, list_items as _items, merge_texts as _merge_texts,
    quote_message as _quote, sublist as _sublist, unquote as _unquote,
)

__all__ = ["EXTRA_VOCABULARY", "OTHER_KINDS", "reference_kind", "snapshot_tags", "deserialise", "split_merged",
           "sections_of", "read_other", "other_section", "MEDIA"]

#: Section titles beyond :mod:`pytest_ctxeval.reading.summary`'s vocabulary, checked first.
EXTRA_VOCABULARY: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("work_state", re.compile(r"\bwork state\b|\btask state\b")),
    ("filesystem", re.compile(r"\bfile ?system\b")),
    ("constraints", re.compile(r"\bconstraints?\b")),
    ("progress", re.compile(r"\bprogress\b|\bdecisions\b")),
    ("critical", re.compile(r"\bcritical\b|\bimportant details\b")),
    ("knowledge", re.compile(r"\bkey knowledge\b")),
)
OTHER_KINDS = tuple(kind for kind, _ in EXTRA_VOCABULARY)
#: The markers media become in a compaction request (stripImagesFromMessages, 003:96-106).
MEDIA = ("[image]", "[document]")
#: A user message that sets a rule (quoted in a constraints section).
_CONSTRAINT = re.compile(r"\b(?:don't|do not|never|always|must|only|avoid|stop|instead|keep (?:out|away))\b|n't\b",
                         re.IGNORECASE)


def reference_kind(title: str) -> str | None:
    """The kind of section a title asks for: :data:`EXTRA_VOCABULARY` first, then the graders'.

    >>> [reference_kind(t) for t in ("Constraints", "Work State", "Next Move", "overall_goal")]
    ['constraints', 'work_state', 'next', 'request']
    """
    norm = re.sub(r"\s+", " ", re.sub(r"[*_`#]+", " ", title)).strip().lower()
    for kind, pattern in EXTRA_VOCABULARY:
        if pattern.search(norm):
            return kind
    return section_kind(norm)


def snapshot_tags(instruction: str) -> list[tuple[str, str]]:
    """``(tag, kind)`` of the XML ``<state_snapshot>`` skeleton a prompt asks for (the first one in
    it), or []."""
    match = re.search(r"<state_snapshot>([\s\S]*?)</state_snapshot>", instruction)
    if not match:
        return []
    tags = list(dict.fromkeys(re.findall(r"<([a-z][a-z_]*)>", match.group(1))))
    return [(t, k) for t in tags if (k := reference_kind(t))]


_SERIAL_LINE = re.compile(r"^\[(User|Assistant|Assistant tool call|Tool result|Tool error)\]: ?(.*)$")


def deserialise(instruction: str) -> tuple[str, list[dict[str, Any]], list[str]]:
    """A conversation sent as text lines (``<conversation>``) read back into API messages, an
    earlier summary sent as ``<previous-summary>``, and the instruction without both (so a title
    inside the conversation is never taken for a requested section)."""
    conv = re.search(r"<conversation>\n?([\s\S]*?)\n?</conversation>", instruction)
    prev = re.search(r"<previous-summary>\n?([\s\S]*?)\n?</previous-summary>", instruction)
    if conv is None:
        return instruction, [], []
    entries: list[list[str]] = []
    for line in conv.group(1).split("\n"):
        m = _SERIAL_LINE.match(line)
        if m:
            entries.append([m.group(1), m.group(2)])
        elif entries and line.startswith("  "):
            entries[-1][1] += "\n" + line[2:]
    messages: list[dict[str, Any]] = []
    pending: list[str] = []

    def add(role: str, block: dict[str, Any]) -> None:
        if messages and messages[-1]["role"] == role and isinstance(messages[-1]["content"], list):
            messages[-1]["content"].append(block)
        else:
            messages.append({"role": role, "content": [block]})

    for n, (tag, text) in enumerate(entries):
        if tag == "User":
            messages.append({"role": "user", "content": text})
        elif tag == "Assistant":
            add("assistant", {"type": "text", "text": text})
        elif tag == "Assistant tool call":
            name, _, raw = text.partition(" ")
            try:
                data = json.loads(raw) if raw.strip() else {}
            except ValueError:
                data = {}
            pending.append(f"toolu_serial_{n}")
            add("assistant", {"type": "tool_use", "id": pending[-1], "name": name,
                              "input": data if isinstance(data, dict) else {}})
        elif pending:
            add("user", {"type": "tool_result", "tool_use_id": pending.pop(0), "content": text,
                         "is_error": tag == "Tool error"})
    rest = instruction.replace(conv.group(0), "")
    if prev is not None:
        rest = rest.replace(prev.group(0), "")
    return rest, messages, [prev.group(1)] if prev is not None else []


def split_merged(blocks: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """A user message's blocks as the messages they were before the API merged consecutive user
    messages: each text block a message of its own (a person's, a reminder's, ...), a media marker
    kept with the text it was pasted with, other blocks (tool results) with what precedes them.

    >>> [[b["text"] for b in p] for p in split_merged([{"type": "text", "text": t} for t in ("a", "[image]", "b")])]
    [['a', '[image]'], ['b']]
    """
    parts: list[list[dict[str, Any]]] = []
    for b in blocks:
        text = b.get("text") if b.get("type") == "text" else None
        opens = text is not None and text not in MEDIA and any(
            x.get("type") == "text" and x.get("text") not in MEDIA for x in (parts[-1] if parts else []))
        if not parts or opens:
            parts.append([b])
        else:
            parts[-1].append(b)
    return parts


_XML_SECTION = re.compile(r"<([a-z][a-z_]*)>\n?([\s\S]*?)</\1>")
_FIRST_REQUEST = "The user's first request: "
_LATER_REQUESTS = "Later requests and corrections, oldest first:"


def sections_of(text: str) -> list[tuple[str, str]]:
    """``(kind, body)`` of every section of an earlier summary, in any compactor's format."""
    match = re.search(r"<state_snapshot>([\s\S]*?)</state_snapshot>", text)
    if match:
        out = []
        for tag, body in _XML_SECTION.findall(match.group(1)):
            kind = reference_kind(tag)
            if kind:
                lines = body.strip("\n").split("\n")
                cut = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
                out.append((kind, "\n".join(l[cut:] for l in lines).strip()))
        return out
    return [(sec.kind, sec.body) for sec in parse_summary(text, kind_of=reference_kind).sections if sec.kind]


def _quoted_requests(body: str) -> list[str]:
    """The user messages a request section quotes (first request, later ones)."""

    out = []
    at = body.find(_FIRST_REQUEST)
    if at != -1:
        rest = body[at + len(_FIRST_REQUEST):]
        stop = re.search(r"\n(?=\S)", rest)
        out.append(_unquote(re.sub(r"\n +", "\n", rest[: stop.start()] if stop else rest).strip()))
    out += [_unquote(i) for i in _sublist(body, _LATER_REQUESTS)]
    return [o for o in out if o]


def read_other(text: str, carry: Any) -> None:
    """Carry what another compactor's earlier summary holds into ``carry`` (the reference's
    ``_Carry``), section by section (see :func:`sections_of`)."""

    carry.dedupe = True
    sections = sections_of(text)
    quotes_people = not any(kind == "user_messages" for kind, _ in sections)

    def items(body: str) -> list[str]:
        return [i.strip() for i in _items(body) if i.strip() not in ("None.", "None recorded.")]

    for kind, body in sections:
        if kind == "request":
            carry.rules = _merge_texts(carry.rules, _sublist(body, RULES_HEADER))
            if quotes_people:
                carry.user_messages = _merge_texts(carry.user_messages, _quoted_requests(body))
        elif kind == "user_messages":
            carry.user_messages = _merge_texts(carry.user_messages, [_unquote(i) for i in _items(body)])
        elif kind in ("files", "filesystem"):
            carry.files = _merge_texts(carry.files, items(body))
        elif kind == "errors":
            carry.errors = _merge_texts(carry.errors, items(body))
        elif kind == "pending":
            carry.pending = items(body)
        elif kind == "work_state":
            carry.pending = [i for i in _sublist(body, "Active:") if i != "None."]
        elif kind == "constraints":
            carry.rules = _merge_texts(carry.rules, _sublist(body, RULES_HEADER))
        if kind == "critical":
            carry.files = _merge_texts(carry.files, _sublist(body, "Files:"))
        if kind in ("critical", "knowledge"):
            carry.errors = _merge_texts(carry.errors, _sublist(body, "Errors:"))
        if kind in ("problem", "progress", "critical", "knowledge"):
            carry.failed = _merge_texts(carry.failed, _sublist(body, FAILED_HEADER))
        if kind in ("problem", "progress", "knowledge"):
            carry.findings = _merge_texts(carry.findings, _sublist(body, FINDINGS_HEADER))


def other_section(facts: Any, kind: str) -> str:
    """The body of a section of kind ``kind`` (one of :data:`OTHER_KINDS`) from the reference's
    facts about the conversation."""

    def listed(body: str) -> list[str]:
        return [l for l in body.split("\n") if l.strip() not in ("- None.", "")]

    if kind == "constraints":  # rules in force: memory files', and the user's messages that set one
        said = [_quote(_clip(t, 300)) for t in facts.all_people if _CONSTRAINT.search(t)]
        lines = ([RULES_HEADER, *[f"- {r}" for r in facts.rules]] if facts.rules else []) + (
            ["Set by the user:", *[f"- {q}" for q in said]] if said else [])
        return "\n".join(lines) or "- None recorded."
    if kind == "progress":
        return facts.section("problem")
    if kind == "filesystem":
        return facts.section("files")
    if kind == "work_state":  # Completed / Active / Blocked
        todos = latest_todos(facts.history) or []
        done = [str(t.get("content", "")) for t in todos if t.get("status") == "completed" and t.get("content")]
        blocked = []
        if facts.failures:
            last = facts.failures[-1]
            if not any(tool_uses(m) for m in facts.history[last.index + 1:]):
                blocked.append(f"- {last.tool} failed: {last.key_line}")
        return "\n".join(["Completed:", *([f"- {d}" for d in done] or ["- None."]), "Active:",
                          *(listed(facts.section("pending")) or ["- None."]), "Blocked:", *(blocked or ["- None."])])
    errors = listed(facts.section("errors"))
    failed = [FAILED_HEADER, *[f"- {f}" for f in facts.failed]] if facts.failed else []
    if kind == "critical":  # exact data: files, error lines, the approaches that failed
        files = listed(facts.section("files"))
        lines = (["Files:", *files] if files else []) + (["Errors:", *errors] if errors else []) + failed
        return "\n".join(lines) or "- None recorded."
    if kind == "knowledge":  # what the work depends on: tools, errors met, dead ends, findings
        findings = [FINDINGS_HEADER, *[f"- {f}" for f in facts.findings]] if facts.findings else []
        return "\n".join([facts.section("concepts"), *(["Errors:", *errors] if errors else []), *failed, *findings])
    raise KeyError(kind)
