"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``): read and write.

Reading follows ``shared/corpus/README.md`` (observed over Claude Code 1.0.98 - 2.1.39):

* one JSON object per line; a line that is not valid JSON, not an object or has no ``type`` is
  reported as a :class:`Problem` with its line number and skipped;
* the conversation is rebuilt by following ``parentUuid`` back from the newest non-sidechain
  record, *through* records that are not part of the conversation (progress, hooks), and across a
  ``compact_boundary`` (whose ``parentUuid`` is null) through its ``logicalParentUuid``; a broken
  chain is reported and the longest consistent chain kept;
* ``progress``, ``file-history-snapshot``, ``queue-operation`` and ``summary`` (a /resume title,
  not a compaction) records are not messages; neither are other ``system`` records;
* assistant records sharing ``message.id`` are merged into one message (usage counted once);
* a ``compact_boundary`` followed by a user record with ``isCompactSummary`` is a compaction.

Writing (:class:`TranscriptWriter`) produces the same format, append-only and flushed per record,
so the engine's own transcripts read back with :func:`read_transcript` and lose nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from pydantic import TypeAdapter, ValidationError

from .errors import TranscriptError
from .messages import (
    AssistantMessage, AttachmentMessage, CompactBoundary, ContentBlock, TextBlock, UserMessage,
    Usage,
)

__all__ = ["Problem", "Compaction", "Transcript", "read_transcript", "TranscriptWriter", "record_for"]

_BLOCKS = TypeAdapter(list[ContentBlock])
_NOT_MESSAGES = {"progress", "file-history-snapshot", "queue-operation", "summary"}


@dataclass(frozen=True)
class Problem:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass
class Compaction:
    """One real compaction found in a transcript."""

    index: int                      # 1-based, in chain order
    boundary: CompactBoundary
    summary: UserMessage | None     # the isCompactSummary message after the boundary
    before: list[Any]               # the context that was summarised (since the previous boundary)
    history: list[Any]              # every message before the boundary (earlier summaries included)
    after: list[Any]                # the post-compact messages up to the next boundary
    boundary_line: int = 0
    summary_line: int = 0

    @property
    def summary_text(self) -> str:
        if self.summary is None:
            return ""
        content = self.summary.content
        return content if isinstance(content, str) else "\n".join(
            b.text for b in content if isinstance(b, TextBlock))


@dataclass
class Transcript:
    path: Path
    messages: list[Any]                         # the main conversation, boundaries included
    problems: list[Problem] = field(default_factory=list)
    session_id: str | None = None
    version: str | None = None
    title: str | None = None
    line_of: dict[str, int] = field(default_factory=dict)
    sidechain_records: int = 0

    @property
    def compactions(self) -> list[Compaction]:
        boundaries = [i for i, m in enumerate(self.messages) if isinstance(m, CompactBoundary)]
        out = []
        for n, b in enumerate(boundaries):
            start = boundaries[n - 1] + 1 if n else 0
            stop = boundaries[n + 1] if n + 1 < len(boundaries) else len(self.messages)
            summary = None
            for m in self.messages[b + 1: stop]:
                if isinstance(m, UserMessage) and m.is_compact_summary:
                    summary = m
                    break
            boundary = self.messages[b]
            out.append(Compaction(
                index=n + 1, boundary=boundary, summary=summary,
                before=[m for m in self.messages[start:b] if not isinstance(m, CompactBoundary)],
                history=[m for m in self.messages[:b] if not isinstance(m, CompactBoundary)],
                after=self.messages[b:stop],
                boundary_line=self.line_of.get(boundary.uuid, 0),
                summary_line=self.line_of.get(summary.uuid, 0) if summary else 0,
            ))
        return out


@dataclass
class _Node:
    line: int
    type: str
    parent: str | None
    logical_parent: str | None
    sidechain: bool
    record: dict[str, Any] | None  # kept only for records that can become messages


def _iter_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            yield number, raw


def read_transcript(path: str | os.PathLike[str]) -> Transcript:
    """Read a Claude Code session file. Bad lines become :attr:`Transcript.problems`; only a
    missing/unreadable file or one with no conversation at all raises :class:`TranscriptError`."""
    p = Path(path)
    if not p.is_file():
        raise TranscriptError(f"{p}: no such transcript file")
    problems: list[Problem] = []
    nodes: dict[str, _Node] = {}
    order: list[str] = []
    session_id = version = title = None
    sidechains = 0
    try:
        for number, raw in _iter_lines(p):
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.append(Problem(number, f"not UTF-8 ({exc.reason} at byte {exc.start}); line skipped"))
                continue
            try:
                data = json.loads(text)
            except ValueError as exc:
                problems.append(Problem(number, f"not valid JSON ({exc}); line skipped"))
                continue
            except RecursionError:
                problems.append(Problem(number, "JSON nested too deeply; line skipped"))
                continue
            if not isinstance(data, dict):
                problems.append(Problem(number, f"expected a JSON object, got {type(data).__name__}; line skipped"))
                continue
            rtype = data.get("type")
            if not isinstance(rtype, str):
                problems.append(Problem(number, "record has no 'type'; line skipped"))
                continue
            if rtype == "summary":
                title = data.get("summary") if isinstance(data.get("summary"), str) else title
                continue
            uid = data.get("uuid")
            if not isinstance(uid, str):
                if rtype not in _NOT_MESSAGES:
                    problems.append(Problem(number, f"{rtype} record has no 'uuid'; line skipped"))
                continue
            if uid in nodes:
                problems.append(Problem(number, f"duplicate uuid {uid} (first on line {nodes[uid].line}); "
                                                "later record kept"))
            sidechain = bool(data.get("isSidechain"))
            sidechains += sidechain
            keep = rtype in ("user", "assistant", "attachment") or (
                rtype == "system" and data.get("subtype") == "compact_boundary")
            parent = data.get("parentUuid") if isinstance(data.get("parentUuid"), str) else None
            logical = data.get("logicalParentUuid") if isinstance(data.get("logicalParentUuid"), str) else None
            nodes[uid] = _Node(number, rtype, parent, logical, sidechain, data if keep else None)
            if keep and not sidechain:
                order.append(uid)
            session_id = session_id or (data.get("sessionId") if isinstance(data.get("sessionId"), str) else None)
            if isinstance(data.get("version"), str):
                version = data["version"]
    except OSError as exc:
        raise TranscriptError(f"{p}: cannot read ({exc.strerror or exc})") from None
    if not order:
        # A subagent's own file (agent-*.jsonl) holds only sidechain records: its line is the
        # sidechain.
        order = [uid for uid, n in nodes.items() if n.record is not None]
    if not order:
        raise TranscriptError(f"{p}: no user or assistant records "
                              f"({len(problems)} bad lines); is this a Claude Code session file?")
    chain = _walk(nodes, order[-1], problems)
    chain = _add_parallel_results(nodes, chain)
    transcript = Transcript(path=p, messages=[], problems=problems, session_id=session_id,
                            version=version, title=title, sidechain_records=sidechains)
    _build_messages(transcript, [(uid, nodes[uid]) for uid in chain])
    return transcript


def _walk(nodes: dict[str, _Node], leaf: str, problems: list[Problem]) -> list[str]:
    chain: list[str] = []
    seen: set[str] = set()
    cur: str | None = leaf
    while cur is not None:
        if cur in seen:
            problems.append(Problem(nodes[cur].line, "parent chain loops here; earlier records ignored"))
            break
        seen.add(cur)
        node = nodes.get(cur)
        if node is None:
            child = chain[-1] if chain else leaf
            problems.append(Problem(nodes[child].line, f"parent {cur} is not in the file; the conversation "
                                                       "is read from this record on"))
            break
        chain.append(cur)
        cur = node.parent if node.parent is not None else (
            node.logical_parent if node.type == "system" else None)
    chain.reverse()
    return [uid for uid in chain if nodes[uid].record is not None]


def _result_ids(record: dict[str, Any] | None) -> list[str] | None:
    """The tool_use ids a user record answers, when it holds tool results only."""
    if not record or record.get("type") != "user":
        return None
    msg = record.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if not isinstance(content, list) or not content:
        return None
    ids = [b.get("tool_use_id") for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    return ids if len(ids) == len(content) and all(isinstance(i, str) for i in ids) else None


def _add_parallel_results(nodes: dict[str, _Node], chain: list[str]) -> list[str]:
    """Put back the results of parallel tool calls that sit on sibling branches.

    Claude Code 2.1 parents each tool_result record on the record holding its tool_use, so with
    parallel calls only one result lies on the path from the leaf; the others hang off earlier
    tool_use records. A user record off the chain is taken back when it holds only tool results,
    its parent is on the chain, and it answers tool_use ids of the chain that nothing on the chain
    answers. It goes right after its parent (in file order among siblings).
    """
    on_chain = set(chain)
    called: set[str] = set()
    answered: set[str] = set()
    for uid in chain:
        rec = nodes[uid].record or {}
        msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
        content = msg.get("content")
        if rec.get("type") == "assistant" and isinstance(content, list):
            called.update(b.get("id") for b in content if isinstance(b, dict) and b.get("type") == "tool_use")
        answered.update(_result_ids(rec) or [])
    extra: dict[str, list[tuple[int, str]]] = {}
    for uid, node in nodes.items():
        if uid in on_chain or node.parent not in on_chain or node.sidechain != nodes[node.parent].sidechain:
            continue
        ids = _result_ids(node.record)
        if ids and all(i in called and i not in answered for i in ids):
            extra.setdefault(node.parent, []).append((node.line, uid))
            answered.update(ids)
    if not extra:
        return chain
    out: list[str] = []
    for uid in chain:
        out.append(uid)
        out.extend(u for _, u in sorted(extra.get(uid, [])))
    return out


def _parse_time(value: Any) -> datetime:
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            pass
    return datetime(1970, 1, 1, tzinfo=timezone.utc)


def _blocks(content: Any, line: int, problems: list[Problem]) -> list[Any]:
    if isinstance(content, str):
        return [TextBlock(text=content)]
    if not isinstance(content, list):
        problems.append(Problem(line, f"message.content is {type(content).__name__}, expected a string or a "
                                      "list of blocks; read as empty"))
        return []
    out = []
    for i, block in enumerate(content):
        try:
            out.extend(_BLOCKS.validate_python([block]))
        except ValidationError as exc:
            kind = block.get("type") if isinstance(block, dict) else type(block).__name__
            err = exc.errors()[0]
            where = ".".join(str(x) for x in err["loc"][1:])
            problems.append(Problem(line, f"message.content[{i}] ({kind}) is not a valid block"
                                          f"{' at ' + where if where else ''}: {err['msg']}; block skipped"))
    return out


def _build_messages(transcript: Transcript, chain: list[tuple[str, _Node]]) -> None:
    problems = transcript.problems
    out: list[Any] = []
    by_id: dict[str, int] = {}  # message.id -> index in out, for the current assistant turn
    for uid, node in chain:
        data = node.record or {}
        line = node.line
        ts = _parse_time(data.get("timestamp"))
        msg = data.get("message") if isinstance(data.get("message"), dict) else {}
        if node.type == "system":
            meta = data.get("compactMetadata") if isinstance(data.get("compactMetadata"), dict) else {}
            trigger = meta.get("trigger") if meta.get("trigger") in ("auto", "manual") else "auto"
            pre = meta.get("preTokens") if isinstance(meta.get("preTokens"), int) else 0
            out.append(CompactBoundary(uuid=uid, timestamp=ts, trigger=trigger, pre_tokens=pre,
                                       logical_parent_uuid=node.logical_parent))
            by_id.clear()
        elif node.type == "attachment":
            att = data.get("attachment") if isinstance(data.get("attachment"), dict) else {}
            content = att.get("content")
            if not isinstance(content, str):
                content = json.dumps(att, ensure_ascii=False)
            out.append(AttachmentMessage(uuid=uid, timestamp=ts, attachment_type=str(att.get("type", "unknown")),
                                         content=content, path=att.get("path") if isinstance(att.get("path"), str) else None))
        elif node.type == "user":
            content = msg.get("content", "")
            blocks: str | list[Any] = content if isinstance(content, str) else _blocks(content, line, problems)
            user = UserMessage(uuid=uid, timestamp=ts, content=blocks, is_meta=bool(data.get("isMeta")),
                               is_compact_summary=bool(data.get("isCompactSummary")))
            out.append(user)
            if not (isinstance(blocks, list) and blocks and all(b.type == "tool_result" for b in blocks)):
                by_id.clear()  # a new turn: later records cannot continue an earlier response
        else:  # assistant
            blocks = _blocks(msg.get("content", []), line, problems)
            mid = msg.get("id") if isinstance(msg.get("id"), str) else None
            usage = _usage(msg.get("usage"))
            if mid is not None and mid in by_id:
                prev = out[by_id[mid]]
                out[by_id[mid]] = prev.model_copy(update={"content": prev.content + blocks,
                                                          "usage": usage or prev.usage})
                transcript.line_of.setdefault(uid, line)
                continue
            out.append(AssistantMessage(uuid=uid, timestamp=ts, content=blocks, message_id=mid, usage=usage,
                                        model=msg.get("model") if isinstance(msg.get("model"), str) else None))
            if mid is not None:
                by_id[mid] = len(out) - 1
        transcript.line_of[uid] = line
    # An assistant record merged into an earlier one may leave tool results before it: the
    # merge above keeps the first record's position, so results stay after their calls.
    transcript.messages = out


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    vals = {k: raw.get(k) for k in ("input_tokens", "output_tokens", "cache_creation_input_tokens",
                                     "cache_read_input_tokens")}
    return Usage(**{k: v for k, v in vals.items() if isinstance(v, int) and v >= 0})


# ---------------------------------------------------------------------------------------------
# Writing


def _iso(ts: datetime) -> str:
    # Claude Code writes milliseconds; keep microseconds when there are any, so nothing is lost.
    spec = "milliseconds" if ts.microsecond % 1000 == 0 else "microseconds"
    return ts.astimezone(timezone.utc).isoformat(timespec=spec).replace("+00:00", "Z")


def record_for(message: Any, *, parent_uuid: str | None, session_id: str, version: str) -> dict[str, Any]:
    """The Claude Code JSONL record for one engine message."""
    base = {"parentUuid": parent_uuid, "isSidechain": False, "userType": "external",
            "sessionId": session_id, "version": version, "uuid": message.uuid,
            "timestamp": _iso(message.timestamp)}
    if isinstance(message, CompactBoundary):
        return {**base, "parentUuid": None, "logicalParentUuid": message.logical_parent_uuid or parent_uuid,
                "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                "isMeta": False, "level": "info",
                "compactMetadata": {"trigger": message.trigger, "preTokens": message.pre_tokens}}
    if isinstance(message, AttachmentMessage):
        att = {"type": message.attachment_type, "content": message.content}
        if message.path:
            att["path"] = message.path
        return {**base, "type": "attachment", "attachment": att}
    if isinstance(message, UserMessage):
        content = message.content if isinstance(message.content, str) else [
            b.model_dump(exclude_none=True) for b in message.content]
        rec = {**base, "type": "user", "message": {"role": "user", "content": content}}
        if message.is_meta:
            rec["isMeta"] = True
        if message.is_compact_summary:
            rec["isCompactSummary"] = True
            rec["isVisibleInTranscriptOnly"] = True
        return rec
    if isinstance(message, AssistantMessage):
        # Without a message id, derive a unique one from the whole uuid (records sharing an id are
        # merged on read).
        mid = message.message_id or "msg_" + hashlib.sha256(message.uuid.encode()).hexdigest()[:24]
        body: dict[str, Any] = {"id": mid, "type": "message", "role": "assistant",
                                "content": [b.model_dump(exclude_none=True) for b in message.content]}
        if message.model is not None:
            body["model"] = message.model
        if message.usage is not None:
            body["usage"] = message.usage.model_dump()
        return {**base, "type": "assistant", "message": body}
    raise TypeError(f"not a message: {message!r}")


class TranscriptWriter:
    """Append-only JSONL writer; every record is flushed (and fsync'd on close) so a crash leaves a
    file that reads back to the last complete record.

    >>> import tempfile, pathlib
    >>> from pytest_ctxeval.messages import UserMessage
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with TranscriptWriter(d / "s.jsonl", session_id="s") as w:
    ...     w.append(UserMessage(uuid="u1", content="hello"))
    >>> [m.content for m in read_transcript(d / "s.jsonl").messages]
    ['hello']
    """

    def __init__(self, path: str | os.PathLike[str], *, session_id: str, version: str = "ctxeval"):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.session_id = session_id
        self.version = version
        self.last_uuid: str | None = None
        self.records = 0
        self._fh = self.path.open("a", encoding="utf-8")

    def append(self, message: Any, *, parent_uuid: str | None = None) -> None:
        parent = parent_uuid if parent_uuid is not None else self.last_uuid
        record = record_for(message, parent_uuid=parent, session_id=self.session_id, version=self.version)
        self._fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._fh.flush()
        self.last_uuid = message.uuid
        self.records += 1

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()

    def __enter__(self) -> "TranscriptWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
