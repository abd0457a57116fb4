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

from .documents import BadDocument, parse_record
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
    sha256: str = ""                            # of the file's bytes, as read
    #: Subagent conversations found in the file, by agent id (read with ``sidechains=True``).
    sidechains: dict[str, list[Any]] = field(default_factory=dict)
    #: The agentId when the file is a subagent's own transcript (its line is the sidechain).
    agent_id: str | None = None

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


class _Node:
    """What the first pass keeps of one record: its place in the tree and where to re-read it.

    The record itself is not held (a 100 MB session is mostly progress records and tool output):
    the records on the chosen chain are read again from their byte ``offset`` in a second pass.
    """

    __slots__ = ("line", "type", "parent", "logical_parent", "sidechain", "keep", "offset", "uses",
                 "results", "agent")

    def __init__(self, line: int, type: str, parent: str | None, logical_parent: str | None, sidechain: bool,
                 keep: bool, offset: int, uses: tuple[str, ...] = (), results: tuple[str, ...] | None = None,
                 agent: str | None = None):
        self.line = line
        self.type = type
        self.parent = parent
        self.logical_parent = logical_parent
        self.sidechain = sidechain
        self.keep = keep              # a record that can become a message
        self.offset = offset
        self.uses = uses              # tool_use ids of an assistant record
        self.results = results        # tool_use ids answered, when the record holds tool results only
        self.agent = agent            # agentId of a subagent record


def _iter_lines(path: Path) -> Iterator[tuple[int, int, bytes]]:
    """``(line number, byte offset, raw line)``, streamed."""
    with path.open("rb") as fh:
        offset = 0
        for number, raw in enumerate(fh, start=1):
            yield number, offset, raw
            offset += len(raw)


def _malformed(problems: list[Problem], strict: bool, path: Path, line: int, message: str) -> None:
    if strict:
        raise TranscriptError(f"{path}:{line}: {message.replace('; line skipped', '')} (strict mode: a malformed "
                              "line is an error; leave out --strict to skip it)")
    problems.append(Problem(line, message))


def read_transcript(path: str | os.PathLike[str], *, strict: bool = False, sidechains: bool = False) -> Transcript:
    """Read a Claude Code session file. Bad lines become :attr:`Transcript.problems` (with
    ``strict``, a malformed line raises :class:`TranscriptError` instead); only a missing/unreadable
    file or one with no conversation at all raises otherwise.

    The file is streamed twice: once to learn the record tree (keeping a few fields per record,
    never the record), once to read the records of the chosen chain by their byte offsets, so memory
    is bounded by the conversation kept, not by the file. With ``sidechains``, subagent
    conversations recorded in the file (legacy inline ``isSidechain`` records, 2.1 ``agent_progress``
    records) are read too, into :attr:`Transcript.sidechains`.
    """
    p = Path(path)
    if p.is_dir():
        raise TranscriptError(f"{p}: is a folder; give one session's .jsonl file (Claude Code keeps them in "
                              "~/.claude/projects/<project>/<session>.jsonl)")
    if not p.is_file():
        raise TranscriptError(f"{p}: no such transcript file")
    problems: list[Problem] = []
    nodes: dict[str, _Node] = {}
    order: list[str] = []
    progress: list[tuple[int, int, str]] = []  # agent_progress records: (line, offset, agent id)
    session_id = version = title = None
    agent_ids: set[str] = set()
    sidechain_count = 0
    digest = hashlib.sha256()
    try:
        for number, offset, raw in _iter_lines(p):
            digest.update(raw)
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                _malformed(problems, strict, p, number, f"not UTF-8 ({exc.reason} at byte {exc.start}); line skipped")
                continue
            try:
                data = parse_record(text)
            except BadDocument as exc:  # NaN/Infinity/1e999 or nesting over limits.MAX_NESTING
                _malformed(problems, strict, p, number, f"{exc.message}; line skipped")
                continue
            except ValueError as exc:
                _malformed(problems, strict, p, number, f"not valid JSON ({exc}); line skipped")
                continue
            except RecursionError:
                _malformed(problems, strict, p, number, "JSON nested too deeply; line skipped")
                continue
            if not isinstance(data, dict):
                _malformed(problems, strict, p, number,
                           f"expected a JSON object, got {type(data).__name__}; line skipped")
                continue
            rtype = data.get("type")
            if not isinstance(rtype, str):
                _malformed(problems, strict, p, number, "record has no 'type'; line skipped")
                continue
            if rtype == "summary":
                title = data.get("summary") if isinstance(data.get("summary"), str) else title
                continue
            uid = data.get("uuid")
            if not isinstance(uid, str):
                if rtype not in _NOT_MESSAGES:
                    _malformed(problems, strict, p, number, f"{rtype} record has no 'uuid'; line skipped")
                continue
            if uid in nodes:
                problems.append(Problem(number, f"duplicate uuid {uid} (first on line {nodes[uid].line}); "
                                                "later record kept"))
            sidechain = bool(data.get("isSidechain"))
            sidechain_count += sidechain
            keep = rtype in ("user", "assistant", "attachment") or (
                rtype == "system" and data.get("subtype") == "compact_boundary")
            parent = data.get("parentUuid") if isinstance(data.get("parentUuid"), str) else None
            logical = data.get("logicalParentUuid") if isinstance(data.get("logicalParentUuid"), str) else None
            agent = data.get("agentId") if isinstance(data.get("agentId"), str) else None
            if agent:
                agent_ids.add(agent)
            uses: tuple[str, ...] = ()
            results = None
            if keep and rtype == "assistant":
                uses = tuple(_use_ids(data))
            elif keep and rtype == "user":
                ids = _result_ids(data)
                results = tuple(ids) if ids is not None else None
            nodes[uid] = _Node(number, rtype, parent, logical, sidechain, keep, offset, uses, results, agent)
            if keep and not sidechain:
                order.append(uid)
            if sidechains and rtype == "progress":
                pdata = data.get("data")
                if isinstance(pdata, dict) and pdata.get("type") == "agent_progress" \
                        and isinstance(pdata.get("message"), dict):
                    key = pdata.get("agentId") or data.get("parentToolUseID") or "agent"
                    progress.append((number, offset, str(key)))
            session_id = session_id or (data.get("sessionId") if isinstance(data.get("sessionId"), str) else None)
            if isinstance(data.get("version"), str):
                version = data["version"]
            del data
    except OSError as exc:
        raise TranscriptError(f"{p}: cannot read ({exc.strerror or exc})") from None
    main_is_sidechain = False
    if not order:
        # A subagent's own file (agent-*.jsonl) holds only sidechain records: its line is the
        # sidechain.
        order = [uid for uid, n in nodes.items() if n.keep]
        main_is_sidechain = bool(order)
    if not order:
        raise TranscriptError(f"{p}: no user or assistant records "
                              f"({len(problems)} bad lines); is this a Claude Code session file?")
    chain = _choose_chain(nodes, order, problems)
    chain = _add_parallel_results(nodes, chain)
    transcript = Transcript(path=p, messages=[], problems=problems, session_id=session_id,
                            version=version, title=title, sidechain_records=sidechain_count,
                            sha256=digest.hexdigest(),
                            agent_id=next(iter(agent_ids)) if main_is_sidechain and len(agent_ids) == 1 else None)
    try:
        with p.open("rb") as fh:
            loader = _Loader(fh, p, problems)
            transcript.messages = _build_messages(transcript, loader.items(nodes, chain))
            if sidechains:
                transcript.sidechains = _read_sidechains(transcript, nodes, loader, progress,
                                                         inline=not main_is_sidechain)
    except OSError as exc:
        raise TranscriptError(f"{p}: cannot read ({exc.strerror or exc})") from None
    return transcript


class _Loader:
    """Reads records back by byte offset (second pass)."""

    def __init__(self, fh: Any, path: Path, problems: list[Problem]):
        self.fh = fh
        self.path = path
        self.problems = problems

    def load(self, node: _Node, uid: str | None = None) -> dict[str, Any] | None:
        self.fh.seek(node.offset)
        raw = self.fh.readline()
        try:
            data = parse_record(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            data = None
        if not isinstance(data, dict) or (uid is not None and data.get("uuid") != uid):
            self.problems.append(Problem(node.line, "the record changed while the file was read (is the "
                                                    "session still running?); record skipped"))
            return None
        return data

    def items(self, nodes: dict[str, _Node], chain: list[str]) -> Iterator[tuple[str, str, int, str | None, dict]]:
        for uid in chain:
            node = nodes[uid]
            data = self.load(node, uid)
            if data is not None:
                yield uid, node.type, node.line, node.logical_parent, data


def _use_ids(record: dict[str, Any]) -> list[str]:
    msg = record.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if not isinstance(content, list):
        return []
    return [b["id"] for b in content
            if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)]


def _step(node: _Node) -> str | None:
    """The record before ``node`` in its conversation: its parent, or across a compaction
    boundary (parentUuid null) its logical parent."""
    return node.parent if node.parent is not None else (node.logical_parent if node.type == "system" else None)


def _walk(nodes: dict[str, _Node], leaf: str, problems: list[Problem] | None) -> tuple[list[str], bool]:
    """The chain ending at ``leaf`` (message records only, oldest first) and whether it is broken
    (a parent missing from the file or a loop); breaks are reported to ``problems``."""
    chain: list[str] = []
    seen: set[str] = set()
    cur: str | None = leaf
    broken = False
    while cur is not None:
        if cur in seen:
            broken = True
            if problems is not None:
                problems.append(Problem(nodes[cur].line, "parent chain loops here; earlier records ignored"))
            break
        seen.add(cur)
        node = nodes.get(cur)
        if node is None:
            broken = True
            if problems is not None:
                child = chain[-1] if chain else leaf
                problems.append(Problem(nodes[child].line, f"parent {cur} is not in the file; the conversation "
                                                           "is read from this record on"))
            break
        chain.append(cur)
        cur = _step(node)
    chain.reverse()
    return [uid for uid in chain if nodes[uid].keep], broken


def _depths(nodes: dict[str, _Node], candidates: list[str]) -> dict[str, int]:
    """Message records on the chain ending at each candidate (memoised; loops and missing parents
    end a chain)."""
    depth: dict[str, int] = {}
    for start in candidates:
        path: list[str] = []
        on_path: set[str] = set()
        cur: str | None = start
        base = 0
        while cur is not None and cur not in depth:
            node = nodes.get(cur)
            if node is None or cur in on_path:
                break
            path.append(cur)
            on_path.add(cur)
            cur = _step(node)
        if cur is not None and cur in depth:
            base = depth[cur]
        for uid in reversed(path):
            base += nodes[uid].keep
            depth[uid] = base
    return depth


def _choose_chain(nodes: dict[str, _Node], order: list[str], problems: list[Problem]) -> list[str]:
    """The conversation: the chain ending at the newest record; when that chain is broken, the
    longest consistent chain of the file (reported)."""
    leaf = order[-1]
    chain, broken = _walk(nodes, leaf, problems)
    if not broken:
        return chain
    depth = _depths(nodes, order)
    best = max(order, key=lambda u: (depth.get(u, 0), nodes[u].line))
    if best == leaf or depth.get(best, 0) <= len(chain):
        return chain
    longer, _ = _walk(nodes, best, None)
    problems.append(Problem(nodes[best].line,
                            f"the newest conversation (ending on line {nodes[leaf].line}) is broken and holds "
                            f"{len(chain)} messages; the longest consistent chain ({len(longer)} messages, "
                            f"ending here) is used instead"))
    return longer


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
        node = nodes[uid]
        called.update(node.uses)
        answered.update(node.results or ())
    extra: dict[str, list[tuple[int, str]]] = {}
    for uid, node in nodes.items():
        if uid in on_chain or node.parent not in on_chain or node.sidechain != nodes[node.parent].sidechain:
            continue
        ids = node.results
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


def _read_sidechains(transcript: Transcript, nodes: dict[str, _Node], loader: _Loader,
                     progress: list[tuple[int, int, str]], inline: bool) -> dict[str, list[Any]]:
    """Subagent conversations recorded in the session file, by agent id.

    * legacy (1.0.x) inline ``isSidechain`` records: one conversation per root, the longest branch;
      keyed by ``agentId`` when recorded, else by the id of the Task call whose prompt opens it,
      else ``sidechain-<root uuid>``;
    * 2.1 ``agent_progress`` records, whose ``data.message`` is a subagent record: keyed by
      ``data.agentId``.
    """
    out: dict[str, list[Any]] = {}
    side = {uid: n for uid, n in nodes.items() if n.sidechain and n.keep} if inline else {}
    if side:
        parents = {n.parent for n in side.values()}
        leaves = [uid for uid in side if uid not in parents]
        best: dict[str, list[str]] = {}
        for leaf in leaves:
            chain, _ = _walk(nodes, leaf, None)
            chain = [u for u in chain if u in side]
            if chain and len(chain) > len(best.get(chain[0], [])):
                best[chain[0]] = chain
        prompts = _task_prompts(transcript.messages)
        for root, chain in sorted(best.items(), key=lambda kv: nodes[kv[0]].line):
            chain = _add_parallel_results(nodes, chain)
            messages = _build_messages(transcript, loader.items(nodes, chain), record_lines=False)
            first = messages[0] if messages else None
            text = first.content if isinstance(first, UserMessage) and isinstance(first.content, str) else None
            key = nodes[root].agent or prompts.get(text or "") or f"sidechain-{root[:8]}"
            out[_unique(out, key)] = messages
    if progress:
        groups: dict[str, list[tuple[str, str, int, str | None, dict]]] = {}
        for line, offset, agent in progress:
            loader.fh.seek(offset)
            try:
                rec = parse_record(loader.fh.readline().decode("utf-8"))["data"]["message"]
            except (ValueError, KeyError, TypeError, UnicodeDecodeError, RecursionError):
                continue
            rtype = rec.get("type") if isinstance(rec, dict) else None
            if rtype not in ("user", "assistant"):
                continue
            uid = rec.get("uuid") if isinstance(rec.get("uuid"), str) else f"{agent}-{line}"
            groups.setdefault(agent, []).append((uid, rtype, line, None, rec))
        for agent, items in groups.items():
            out[_unique(out, agent)] = _build_messages(transcript, iter(items), record_lines=False)
    return out


def _unique(existing: dict[str, Any], key: str) -> str:
    n, out = 1, key
    while out in existing:
        n += 1
        out = f"{key}-{n}"
    return out


def _task_prompts(messages: list[Any]) -> dict[str, str]:
    """Task (subagent) calls of the main line by prompt text -> tool_use id."""
    out: dict[str, str] = {}
    for m in messages:
        if isinstance(m, AssistantMessage):
            for b in m.content:
                if getattr(b, "type", None) == "tool_use" and b.name in ("Task", "Agent") \
                        and isinstance(b.input.get("prompt"), str):
                    out.setdefault(b.input["prompt"], b.id)
    return out


def _parse_time(value: Any) -> datetime:
    if isinstance(value, str):
        try:
            from .limits import check_time  # a date outside the calendar is no date

            return check_time(datetime.fromisoformat(value.replace("Z", "+00:00")))
        except (ValueError, OverflowError):
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


def _build_messages(transcript: Transcript, items: Iterator[tuple[str, str, int, str | None, dict[str, Any]]],
                    *, record_lines: bool = True) -> list[Any]:
    """Messages for ``(uuid, type, line, logical parent, record)`` items in conversation order."""
    problems = transcript.problems
    out: list[Any] = []
    by_id: dict[str, int] = {}  # message.id -> index in out, for the current assistant turn
    for uid, rtype, line, logical_parent, data in items:
        ts = _parse_time(data.get("timestamp"))
        msg = data.get("message") if isinstance(data.get("message"), dict) else {}
        if rtype == "system":
            meta = data.get("compactMetadata") if isinstance(data.get("compactMetadata"), dict) else {}
            trigger = meta.get("trigger") if meta.get("trigger") in ("auto", "manual") else "auto"
            pre = meta.get("preTokens") if isinstance(meta.get("preTokens"), int) else 0
            out.append(CompactBoundary(uuid=uid, timestamp=ts, trigger=trigger, pre_tokens=pre,
                                       logical_parent_uuid=logical_parent))
            by_id.clear()
        elif rtype == "attachment":
            att = data.get("attachment") if isinstance(data.get("attachment"), dict) else {}
            content = att.get("content")
            if not isinstance(content, str):
                content = json.dumps(att, ensure_ascii=False)
            out.append(AttachmentMessage(uuid=uid, timestamp=ts, attachment_type=str(att.get("type", "unknown")),
                                         content=content, path=att.get("path") if isinstance(att.get("path"), str) else None))
        elif rtype == "user":
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
                if record_lines:
                    transcript.line_of.setdefault(uid, line)
                continue
            out.append(AssistantMessage(uuid=uid, timestamp=ts, content=blocks, message_id=mid, usage=usage,
                                        model=msg.get("model") if isinstance(msg.get("model"), str) else None))
            if mid is not None:
                by_id[mid] = len(out) - 1
        if record_lines:
            transcript.line_of[uid] = line
    # An assistant record merged into an earlier one may leave tool results before it: the
    # merge above keeps the first record's position, so results stay after their calls.
    return out


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
