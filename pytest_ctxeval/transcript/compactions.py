"""The compactions of a read transcript, and the queued messages the model saw.

A compaction is a ``compact_boundary`` on the conversation followed by its ``isCompactSummary``
message. For each one this module gives:

* ``before``: the context it summarised (the messages since the previous boundary, that boundary's
  summary and kept messages included); ``history``: every message before it;
* ``version`` (the Claude Code version that wrote the boundary), ``trigger``, ``pre_tokens`` and the
  raw ``compactMetadata``;
* ``kept``: what the model saw right after the compaction besides the summary: the messages the
  compaction preserved verbatim (``compactMetadata.preservedMessages`` / ``preservedSegment``, 2.1.150+),
  then the messages that followed up to the next person-typed message (not the rest of the session);
* ``inherited``: the compaction was copied in from a parent session (a resumed session's file opens
  with the parent's boundary and summary: no message of this file precedes it, or the boundary names
  another session). It is listed, not graded as this session's;
* ``no_summary``: why no summary was found after the boundary (the file ends there: a session still
  being written or a copy cut short; the record after it could not be read; the next record is not an
  ``isCompactSummary`` message). Such a compaction is listed, not graded: an absent summary is not an
  empty one.

Every Claude Code version marks the summary with ``isCompactSummary`` (all the corpus's summaries
carry it). A record without the flag is never taken for a summary, even one opening with the
summary's words ("This session is being continued from a previous conversation"): a person can paste
those words, and grading them as a summary would be a false verdict either way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from collections.abc import Iterable

from ..core.messages import CompactBoundary, TextBlock, ToolResultBlock, UserMessage, person_text, text_of

if TYPE_CHECKING:  # pragma: no cover
    from .jsonl import Transcript

__all__ = ["Compaction", "compactions_of", "insert_queued", "nothing_to_grade", "queued_text", "compact_args_in", "micro_note"]

#: A ``/compact`` echo record: the command's name (with or without its slash), after the
#: ``<command-message>`` tag when the record opens with it (the order prompt commands are echoed in),
#: then its arguments.
_COMPACT_ARGS = re.compile(r"(?:<command-message>[^<]*</command-message>\s*)?<command-name>\s*/?compact\s*</command-name>"
                           r"[\s\S]*?<command-args>([\s\S]*?)</command-args>")


def compact_args_in(after: list[Any]) -> str | None:
    """The arguments of the ``/compact`` command echoed right after a boundary: the person's
    instructions to the summariser (None when none were given, or the compaction was automatic).
    Claude Code writes the boundary and summary before the command's own records (every manual
    compaction of the corpus, 2.0.60 to 2.1.183), so they follow the summary."""
    for m in after[:8]:
        # the command's own echo record (not the summary, which may quote an echo of another /compact)
        if isinstance(m, UserMessage) and not m.is_compact_summary:
            match = _COMPACT_ARGS.match(text_of(m.content).lstrip())
            if match:
                return match.group(1).strip() or None
    return None


@dataclass
class Compaction:
    """One real compaction found in a transcript."""

    index: int                      # 1-based, in chain order
    boundary: CompactBoundary
    summary: UserMessage | None     # the isCompactSummary message after the boundary
    before: list[Any]               # the context that was summarised (since the previous boundary)
    history: list[Any]              # every message before the boundary (earlier summaries included)
    after: list[Any]                # the messages from the boundary up to the next boundary
    boundary_line: int = 0
    summary_line: int = 0
    version: str | None = None      # the Claude Code version that wrote the boundary
    session_id: str | None = None   # the boundary record's sessionId
    metadata: dict[str, Any] = field(default_factory=dict)   # compactMetadata as written
    kept: list[Any] = field(default_factory=list)            # what the model saw after the summary
    preserved: list[Any] = field(default_factory=list)       # the part of ``kept`` preserved verbatim
    inherited: bool = False         # copied in from a parent session: not this session's to grade
    inherited_reason: str = ""
    no_summary: str = ""            # why no summary was found after the boundary ("": it was found)
    #: A partial compaction (``/rewind`` -> "Summarize from here" / "up to here"): its direction
    #: (``from`` / ``up_to``, the summary's ``summarizeMetadata``), None for a whole compaction.
    partial: str | None = None
    partial_meta: dict[str, Any] = field(default_factory=dict, repr=False)   # summarizeMetadata as written

    @property
    def gradable(self) -> bool:
        """This session's compaction, with its summary: something to grade."""
        return not self.inherited and not self.no_summary

    @property
    def not_graded(self) -> str:
        """Why this compaction is listed but not graded ("" when it is graded)."""
        if self.inherited:
            return self.inherited_reason
        return f"compaction at line {self.boundary_line}: {self.no_summary}; not graded" if self.no_summary else ""

    @property
    def trigger(self) -> str:
        return self.boundary.trigger

    @property
    def compact_args(self) -> str | None:
        """What the person gave a manual ``/compact`` to summarise by: the command's echo after the
        summary (:func:`compact_args_in`), else the boundary's ``compactMetadata.userContext``, where
        newer versions record the instructions (a boundary whose echo record is not in the file)."""
        if self.trigger != "manual":
            return None
        given = self.metadata.get("userContext") or self.partial_context
        return compact_args_in(self.after) or (given.strip() or None if isinstance(given, str) else None)

    @property
    def partial_context(self) -> str | None:
        """What the person typed for a partial compaction (``summarizeMetadata.userContext``)."""
        given = self.partial_meta.get("userContext")
        return given if isinstance(given, str) else None

    @property
    def pre_tokens(self) -> int:
        return self.boundary.pre_tokens

    @property
    def post_context(self) -> list[Any]:
        """The context right after the compaction: boundary, summary, kept messages."""
        return [self.boundary] + ([self.summary] if self.summary is not None else []) + list(self.kept)

    @property
    def summary_text(self) -> str:
        if self.summary is None:
            return ""
        content = self.summary.content
        return content if isinstance(content, str) else "\n".join(
            b.text for b in content if isinstance(b, TextBlock))

    def describe(self) -> dict[str, Any]:
        """The compaction's facts for reports and JSON (no message bodies)."""
        return {"index": self.index, "line": self.summary_line or self.boundary_line, "version": self.version,
                "trigger": self.trigger, "pre_tokens": self.pre_tokens, "summarised_messages": len(self.before),
                "kept_messages": len(self.kept), "preserved_messages": len(self.preserved),
                "inherited": self.inherited, **({"inherited_reason": self.inherited_reason} if self.inherited else {}),
                **({"partial": self.partial} if self.partial else {}),
                **({"no_summary": self.no_summary} if self.no_summary else {})}


def compactions_of(transcript: Transcript) -> list[Compaction]:
    """Every compaction on ``transcript``'s conversation, oldest first: each ``compact_boundary``
    with the summary after it, and a compaction summary written without a boundary (1.0.x opened a
    new session file with it; it is that file's inherited compaction)."""
    messages = transcript.messages
    points: list[tuple[int, CompactBoundary | None]] = []   # (index, boundary; None: a summary alone)
    waiting = False
    for i, m in enumerate(messages):
        if isinstance(m, CompactBoundary):
            points.append((i, m))
            waiting = True
        elif isinstance(m, UserMessage) and m.is_compact_summary:
            if not waiting:
                points.append((i, None))
            waiting = False
    own_session = transcript.session_id
    out: list[Compaction] = []
    start = 0
    for n, (b, boundary) in enumerate(points):
        stop = points[n + 1][0] if n + 1 < len(points) else len(messages)
        if boundary is None:
            summary_at: int | None = b
            summary = messages[b]
            boundary = CompactBoundary(uuid=f"{summary.uuid}-boundary", timestamp=summary.timestamp)
            transcript.line_of.setdefault(boundary.uuid, transcript.line_of.get(summary.uuid, 0))
            info = transcript.boundary_info.get(summary.uuid, {})
            after = [boundary] + messages[b:stop]
            has_history = b > 0
            next_start = b
        else:
            summary_at = next((i for i in range(b + 1, stop)
                               if isinstance(messages[i], UserMessage) and messages[i].is_compact_summary), None)
            summary = messages[summary_at] if summary_at is not None else None
            info = transcript.boundary_info.get(boundary.uuid, {})
            after = messages[b:stop]
            has_history = transcript.boundary_has_history.get(boundary.uuid, True)
            next_start = b + 1
        meta = info.get("metadata") or {}
        history = [m for m in messages[:b] if not isinstance(m, CompactBoundary)]
        summarised = transcript.partial_spans.get(boundary.uuid)
        if summarised:
            # "Summarize from here": the summary is of the messages after the kept ones, read from
            # the branch the conversation left (Transcript.partial_spans); the kept ones are history.
            history = history + summarised
        preserved = _preserved(transcript, meta, b)
        kept = preserved + _following(messages, (summary_at if summary_at is not None else b) + 1, stop)
        inherited, reason = False, ""
        if not history and not has_history:
            inherited, reason = True, ("the file opens with this compaction's summary: no message of this "
                                       "session precedes it (a resumed session starts from its parent's summary)")
        elif info.get("session_id") and own_session and info["session_id"] != own_session:
            inherited, reason = True, (f"the compaction belongs to session {info['session_id']}, "
                                       f"not to this file's session {own_session}")
        pmeta = transcript.partial_info.get(summary.uuid, {}) if summary is not None else {}
        out.append(Compaction(
            index=n + 1, boundary=boundary, summary=summary,
            before=list(summarised) if summarised else [m for m in messages[start:b] if not isinstance(m, CompactBoundary)],
            history=history, after=after,
            boundary_line=transcript.line_of.get(boundary.uuid, 0),
            summary_line=transcript.line_of.get(summary.uuid, 0) if summary else 0,
            version=info.get("version"),
            session_id=info.get("session_id"), metadata=dict(meta),
            kept=kept, preserved=preserved, inherited=inherited, inherited_reason=reason,
            no_summary="" if summary is not None else _why_no_summary(transcript, b, stop),
            partial=pmeta.get("direction") if isinstance(pmeta.get("direction"), str) else None,
            partial_meta=dict(pmeta)))
        start = next_start
    return out


_SUMMARY_OPENING = "This session is being continued from a previous conversation"


def _why_no_summary(transcript: Transcript, boundary_at: int, stop: int) -> str:
    """Why the boundary at ``boundary_at`` has no summary: what the file holds after it."""
    messages = transcript.messages
    line = transcript.line_of.get(messages[boundary_at].uuid, 0)
    nxt = messages[boundary_at + 1] if boundary_at + 1 < stop else None
    next_line = transcript.line_of.get(nxt.uuid, 0) if nxt is not None else 0
    unread = [p.line for p in transcript.problems if p.line > line and (not next_line or p.line < next_line)
              and "skipped" in p.message]
    typed = [p.line for p in transcript.problems if p.line in unread and "isCompactSummary but unknown type" in p.message]
    if typed:
        return (f"no summary after the boundary (line {typed[0]} holds one, flagged isCompactSummary, but its record "
                "type is unknown, so it was skipped: see the note on that line)")
    if unread:
        return (f"no summary after the boundary (line {unread[0]}, the record after it, could not be read: "
                "see the note on that line)")
    if nxt is None:
        return ("no summary after the boundary (the transcript ends after it: a session still being written, "
                "or a copy cut short)")
    opens_like = isinstance(nxt, UserMessage) and isinstance(nxt.content, str) \
        and nxt.content.lstrip().startswith(_SUMMARY_OPENING)
    what = ("opens like a summary but has no isCompactSummary flag, which every Claude Code version writes "
            "on its summary, so it is not taken for one" if opens_like else "is not a compaction summary")
    return f"no summary after the boundary (the next record, line {next_line}, {what})"


def nothing_to_grade(compactions: list[Compaction], left: Iterable[int] = (), micro: Iterable[int] = ()) -> str | None:
    """Why none of ``compactions`` can be graded (None when one can): none at all, only inherited
    ones, or only ones with no summary. ``left`` are the lines of compact_boundary records that are
    not on the conversation (:attr:`Transcript.left_boundaries`): then the file has compactions, just
    none on the conversation. ``micro`` are the lines of microcompact_boundary records
    (:attr:`Transcript.microcompactions`), named when they are all the file has. The words
    ``ctxeval grade`` uses for a file and a folder."""
    if any(c.gradable for c in compactions):
        return None
    if not compactions:
        lines = list(left)
        if lines:
            which = ("the compact_boundary on line " + str(lines[0]) if len(lines) == 1 else
                     "the compact_boundary records on lines " + ", ".join(map(str, lines)))
            return f"no compaction on the conversation ({which} {'is' if len(lines) == 1 else 'are'} off it: see the notes)"
        return "no compaction in this session" + micro_note(micro)
    own = [c for c in compactions if not c.inherited]
    if not own:
        return "only a compaction inherited from a parent session"
    return ("only a compaction with no summary after its boundary" if len(own) == 1
            else "only compactions with no summary after their boundary")


def micro_note(lines: Iterable[int]) -> str:
    """`` (only microcompaction: …)`` naming the microcompact_boundary ``lines``, or ""."""
    lines = list(lines)
    if not lines:
        return ""
    which = (f"a microcompact_boundary on line {lines[0]}" if len(lines) == 1 else
             f"{len(lines)} microcompact_boundary records, lines " + ", ".join(map(str, lines[:5]))
             + (", ..." if len(lines) > 5 else ""))
    return (f" (only {which}: Claude Code cleared old tool results there and wrote no summary, so there "
            "is no summary to grade)")


def _preserved(transcript: Transcript, meta: dict[str, Any], boundary_at: int) -> list[Any]:
    """The messages before the boundary that the compaction kept verbatim (2.1.150+)."""
    uuids: list[str] = []
    pm = meta.get("preservedMessages")
    if isinstance(pm, dict) and isinstance(pm.get("uuids"), list):
        uuids = [u for u in pm["uuids"] if isinstance(u, str)]
    seg = meta.get("preservedSegment")
    if not uuids and isinstance(seg, dict) and isinstance(seg.get("headUuid"), str):
        head, tail = transcript.index_of.get(seg["headUuid"]), transcript.index_of.get(str(seg.get("tailUuid")))
        if head is not None and tail is not None and head <= tail < boundary_at:
            return [m for m in transcript.messages[head:tail + 1] if not isinstance(m, CompactBoundary)]
    seen: set[int] = set()
    out: list[Any] = []
    for u in uuids:
        i = transcript.index_of.get(u)
        if i is not None and i < boundary_at and i not in seen:
            seen.add(i)
            out.append(transcript.messages[i])
    return out


def _following(messages: list[Any], start: int, stop: int) -> list[Any]:
    """The messages from ``start`` up to (not including) the next person-typed message."""
    out = []
    for m in messages[start:stop]:
        if person_text(m) is not None:
            break
        out.append(m)
    return out


# ---------------------------------------------------------------------------------------------
# Queued messages

_NOT_TYPED_PREFIXES = ("<task-notification", "<teammate-message", "{", "/")


def queued_text(text: Any) -> str | None:
    """The person-typed text of a queued prompt, or None for what the client queued itself
    (background task notifications, teammate messages, slash commands)."""
    if not isinstance(text, str) or not text.strip():
        return None
    if text.lstrip().startswith(_NOT_TYPED_PREFIXES):
        return None
    return text


def seen_queue_items(ops: Iterable[tuple[int, str, Any]]) -> list[tuple[int, str]]:
    """``(line, text)`` of the queued prompts the model saw mid-turn: an ``enqueue`` later taken by
    a ``remove`` (Claude Code gives the text to the model with the next tool result and writes no
    user record for it). ``dequeue`` submits the text as a user record of its own (not repeated
    here); ``popAll`` hands queued text back to the input box (not seen). The queue is first in,
    first out."""
    queue: list[tuple[int, Any]] = []
    out: list[tuple[int, str]] = []
    for line, op, content in ops:
        if op == "enqueue":
            queue.append((line, content))
        elif op in ("dequeue", "remove") and queue:
            _, content = queue.pop(0)
            text = queued_text(content) if op == "remove" else None
            if text is not None:
                out.append((line, text))
        elif op == "popAll":
            queue.clear()
    return out


def insert_queued(transcript: Transcript, items: list[tuple[int, str]]) -> None:
    """Put the queued prompts the model saw into the conversation, each after the newest message
    written before it and after the tool results that answer that message (a tool round is never
    split). A prompt already on the conversation (a ``queued_command`` attachment read as a user
    message) is not added twice."""
    if not items:
        return
    from bisect import bisect_left

    messages = transcript.messages
    have = {person_text(m) for m in messages if isinstance(m, UserMessage)}
    # The last message written before each line: messages by line, with the largest index so far.
    by_line = sorted((transcript.line_of.get(m.uuid, 0), i) for i, m in enumerate(messages))
    keys = [ln for ln, _ in by_line]
    latest: list[int] = []
    for _, i in by_line:
        latest.append(max(i, latest[-1]) if latest else i)
    inserts: list[tuple[int, int, str]] = []
    for line, text in items:
        if text in have:
            continue
        k = bisect_left(keys, line)
        if k == 0:
            continue
        at = latest[k - 1]
        while at + 1 < len(messages) and _answers(messages[at + 1]):
            at += 1
        inserts.append((at + 1, line, text))
    for pos, line, text in sorted(inserts, key=lambda x: (x[0], x[1]), reverse=True):
        uid = f"queued-{line}"
        ts = messages[pos - 1].timestamp if pos else messages[0].timestamp
        messages.insert(pos, UserMessage(uuid=uid, timestamp=ts, content=text))
        transcript.line_of[uid] = line
    if inserts:
        # Records keep pointing at their message: each insertion at or before it shifts it by one.
        from bisect import bisect_right

        spots = sorted(pos for pos, _, _ in inserts)
        transcript.index_of = {u: i + bisect_right(spots, i) for u, i in transcript.index_of.items()}
        transcript.index_of.update({m.uuid: i for i, m in enumerate(messages) if m.uuid.startswith("queued-")})


def _answers(message: Any) -> bool:
    """A user message holding tool results only (it belongs to the tool round before it)."""
    return (isinstance(message, UserMessage) and isinstance(message.content, list) and bool(message.content)
            and all(isinstance(b, ToolResultBlock) for b in message.content))


def queued_command(attachment: dict[str, Any]) -> str | None:
    """The person-typed text of a ``queued_command`` attachment (2.1.150+), else None."""
    if attachment.get("type") != "queued_command":
        return None
    return queued_text(attachment.get("prompt"))

