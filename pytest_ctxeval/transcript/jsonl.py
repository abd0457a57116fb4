"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``): read and write.

Reading follows ``shared/corpus/README.md`` (observed over Claude Code 1.0.98 - 2.1.39):

* one JSON object per line; a line that is not valid JSON, not an object or has no ``type`` is
  reported as a :class:`RecordProblem` with its line number and skipped;
* the conversation is rebuilt by following ``parentUuid`` back from the newest non-sidechain
  record, *through* records that are not part of the conversation (progress, hooks), and across a
  ``compact_boundary`` (whose ``parentUuid`` is null) through its ``logicalParentUuid``. A record
  whose parent is not in the file (2.1.45 - 2.1.69 boundaries name a ``logicalParentUuid`` that was
  never written) is placed after the newest main-line message record before it in the file; a
  non-boundary record placed that way is reported. A message record with no ``parentUuid`` (null or
  absent) that is not the file's first starts the conversation, as in Claude Code's own loader; the
  earlier message records it leaves out are reported with their lines (and whether they are a
  history the session wrote again). The newest chain is always the one read, never an older one
  because it is longer;
* a record repeating a uuid read earlier (a resumed session can write its history again) is not read
  again: the first copy stands, and the repeats are reported once;
* metadata records without a uuid (``last-prompt``, ``pr-link``, ``mode``, ``ai-title`` ...) are not
  messages and not problems;
* ``progress``, ``file-history-snapshot``, ``queue-operation`` and ``summary`` (a /resume title,
  not a compaction) records are not messages; neither are other ``system`` records;
* assistant records sharing ``message.id`` are merged into one message (usage counted once);
* a ``compact_boundary`` followed by a user record with ``isCompactSummary`` is a compaction
  (:mod:`pytest_ctxeval.transcript.compactions`: version, kept messages, inherited ones);
* queued messages the model saw (``queue-operation`` records whose text was consumed mid-turn, and
  ``queued_command`` attachments) become person-typed user messages at their place.

Writing (:class:`TranscriptWriter`) produces the same format, append-only and flushed per record,
so the engine's own transcripts read back with :func:`read_transcript` and lose nothing.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from ..core.block_dumps import block_dict
from ..core.gcpause import paused_gc
from .stamps import iso_timestamp
from .record_text import tool_results_record
from .assistant_text import assistant_record
from dataclasses import dataclass, field
from datetime import datetime, UTC
from pathlib import Path
from typing import Any, Literal
from collections.abc import Iterator

from pydantic import TypeAdapter, ValidationError

from ..core.documents import BadDocument, parse_record
from ..errors import TranscriptError
from ..core.words import plural
from ..core.messages import (
    AssistantMessage, AttachmentMessage, Block, CompactBoundary, TextBlock, ToolUseBlock, UserMessage, Usage,
)
from .compactions import Compaction, insert_queued, queued_command, seen_queue_items

__all__ = ["RecordProblem", "Compaction", "Transcript", "read_transcript", "TranscriptWriter", "record_for"]

_BLOCKS = TypeAdapter(list[Block])
_NOT_MESSAGES = {"progress", "file-history-snapshot", "queue-operation", "summary"}
#: Every record type the reader knows (shared/corpus/README.md; tests/fixtures/transcript_variants.md):
#: messages, boundaries (system) and the records it reads past on purpose. A record of another type
#: that has a uuid (a node of the conversation tree), a ``message`` or ``isCompactSummary`` is
#: reported with its line (:func:`_unknown_notes`); one with none of these is metadata (``ai-title``,
#: ``worktree-state`` ... and the metadata kinds newer versions add).
KNOWN_TYPES = frozenset({"user", "assistant", "attachment", "system", *_NOT_MESSAGES,
                         "result"})   # SDK stream-json's closing record (:class:`_StreamShape`), kept by some exports
#: Record types that must carry a uuid (they can be messages); others without one are metadata.
_NEEDS_UUID = {"user", "assistant", "attachment"}


@dataclass(frozen=True)
class RecordProblem:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass
class Transcript:
    path: Path
    messages: list[Any]                         # the main conversation, boundaries included
    problems: list[RecordProblem] = field(default_factory=list)
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
    #: Per compact_boundary uuid: the record's ``version``, ``sessionId`` and raw ``compactMetadata``.
    boundary_info: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Record uuid -> index in :attr:`messages` (records merged into one assistant message share it).
    index_of: dict[str, int] = field(default_factory=dict)
    #: Whether a main-line message record precedes each boundary in the file (uuid -> bool).
    boundary_has_history: dict[str, bool] = field(default_factory=dict)
    #: Records without a uuid that are not messages (``last-prompt``, ``pr-link``, ``mode`` ...).
    metadata_records: int = 0
    #: Lines of compact_boundary records not on the conversation (each reported in :attr:`problems`).
    left_boundaries: list[int] = field(default_factory=list)
    #: Lines of ``microcompact_boundary`` records: Claude Code cleared old tool results there
    #: (``microcompactMetadata``: trigger, preTokens, tokensSaved) and wrote no summary, so there is
    #: nothing to grade; they are listed so a file holding only them is not called uncompacted.
    microcompactions: list[int] = field(default_factory=list)
    #: Per summary uuid: the ``summarizeMetadata`` of a partial compaction (``/rewind`` ->
    #: "Summarize from here" / "Summarize up to here": ``direction``, ``messagesSummarized``,
    #: ``userContext``).
    partial_info: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Per boundary uuid of a "Summarize from here" compaction: the messages it summarised. Claude
    #: Code continues the conversation from the last message it kept (before them), so they are on a
    #: branch the conversation no longer follows; they are read from there (:func:`_from_here_spans`).
    partial_spans: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def compactions(self) -> list[Compaction]:
        """Every compaction on the conversation, oldest first (see :mod:`.transcript_compactions`)."""
        from .compactions import compactions_of

        return compactions_of(self)


class _Node:
    """What the first pass keeps of one record: its place in the tree and where to re-read it.

    The record itself is not held (a 100 MB session is mostly progress records and tool output):
    the records on the chosen chain are read again from their byte ``offset`` in a second pass.
    """

    __slots__ = (
        "agent",
        "keep",
        "line",
        "logical_parent",
        "offset",
        "parent",
        "prev",
        "results",
        "sidechain",
        "type",
        "uses",
    )

    def __init__(self, line: int, type: str, parent: str | None, logical_parent: str | None, sidechain: bool,
                 keep: bool, offset: int, uses: tuple[str, ...] = (), results: tuple[str, ...] | None = None,
                 agent: str | None = None, prev: str | None = None):
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
        self.prev = prev              # the newest main-line message record before it in the file


def _blank(p: Path) -> bool:
    """Whether the file holds nothing but whitespace (read when no record was found: a small file)."""
    try:
        with p.open("rb") as fh:
            return not fh.read(1 << 16).strip() and not fh.read(1)
    except OSError:
        return False


#: The UTF-8 byte-order mark (U+FEFF) some Windows tools write at the start of a file.
_BOM = b"\xef\xbb\xbf"


def _iter_lines(path: Path, max_bytes: int | None = None) -> Iterator[tuple[int, int, bytes | None]]:
    """``(line number, byte offset, raw line)``, streamed; ``raw`` is None for a line longer than
    ``max_bytes`` (default :data:`~pytest_ctxeval.core.limits.MAX_LINE_BYTES`), which is skipped in
    bounded chunks, never held whole."""
    from ..core import limits

    cap = limits.MAX_LINE_BYTES if max_bytes is None else max_bytes
    with path.open("rb") as fh:
        offset = number = 0
        while raw := fh.readline(cap + 1):
            number += 1
            if len(raw) > cap:
                size = len(raw)
                while not raw.endswith(b"\n") and (raw := fh.readline(1 << 20)):
                    size += len(raw)
                yield number, offset, None
                offset += size
                continue
            yield number, offset, raw
            offset += len(raw)


def _malformed(problems: list[RecordProblem], strict: bool, path: Path, line: int, message: str) -> None:
    if strict:
        raise TranscriptError(f"{path}:{line}: {message.replace('; line skipped', '')} (strict mode: a malformed "
                              "line is an error; leave out --strict to skip it)")
    problems.append(RecordProblem(line, message))


@paused_gc()  # the records form a tree built all at once (see gcpause)
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
    check_transcript_path(p)
    problems: list[RecordProblem] = []
    nodes: dict[str, _Node] = {}
    order: list[str] = []
    progress: list[tuple[int, int, str]] = []  # agent_progress records: (line, offset, agent id)
    session_id = version = title = last_session = None
    agent_ids: set[str] = set()
    sidechain_count = 0
    digest = hashlib.sha256()
    queue_ops: list[tuple[int, str, Any]] = []
    boundary_has_history: dict[str, bool] = {}
    last_main: str | None = None       # the newest main-line message record so far
    repeats: list[int] = []            # lines of records repeating a uuid read earlier
    micro: list[int] = []              # lines of microcompact_boundary records
    partial: dict[str, dict[str, Any]] = {}   # summary uuid -> summarizeMetadata (partial compactions)
    metadata = 0
    unknown: list[tuple[int, str, str | None, bool]] = []   # (line, type, uuid, isCompactSummary)
    stream = _StreamShape()            # the marks of SDK stream-json output, not a transcript
    try:
        before = os.stat(p)
        for number, offset, raw in _iter_lines(p):
            if raw is None:
                from ..core.limits import MAX_LINE_BYTES

                _malformed(problems, strict, p, number, f"longer than {MAX_LINE_BYTES:,} bytes "
                           "(limits.MAX_LINE_BYTES); line skipped")
                continue
            digest.update(raw)
            if raw.startswith(_BOM):
                # a byte-order mark (a file saved by PowerShell's Out-File or a Windows editor; or files
                # joined): not part of the record. Read past it here and in the second pass.
                raw, offset = raw[len(_BOM):], offset + len(_BOM)
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
            if not stream.parented:      # a transcript shows it on its first message: no cost after that
                stream.see(number, rtype, data)
            if rtype == "summary":
                title = data.get("summary") if isinstance(data.get("summary"), str) else title
                continue
            if rtype not in KNOWN_TYPES and (isinstance(data.get("uuid"), str) or "message" in data
                                             or data.get("isCompactSummary")):
                if strict:
                    raise TranscriptError(f"{p}:{number}: unknown record type {rtype!r} (strict mode: a record the "
                                          f"reader does not know is an error, as it would be skipped; the reader "
                                          f"knows {', '.join(sorted(KNOWN_TYPES))} records; leave out --strict to "
                                          "skip it with a note)")
                unknown.append((number, rtype, data.get("uuid") if isinstance(data.get("uuid"), str) else None,
                                bool(data.get("isCompactSummary"))))
                if not isinstance(data.get("uuid"), str):
                    continue  # nothing links to it: not a node of the tree
            if rtype == "system" and data.get("subtype") == "microcompact_boundary":
                micro.append(number)
            uid = data.get("uuid")
            if not isinstance(uid, str):
                if rtype == "queue-operation":
                    queue_ops.append((number, str(data.get("operation")), data.get("content")))
                elif rtype in _NEEDS_UUID or (rtype == "system" and data.get("subtype") == "compact_boundary"):
                    _malformed(problems, strict, p, number, f"{rtype} record has no 'uuid'; line skipped")
                elif rtype not in _NOT_MESSAGES:
                    metadata += 1
                continue
            if uid in nodes:
                # A resumed session can write its history again (a real file repeats 588 records);
                # one record repeated at the end must not become the newest leaf. The first copy stands.
                repeats.append(number)
                continue
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
            nodes[uid] = _Node(number, rtype, parent, logical, sidechain, keep, offset, uses, results, agent,
                               None if sidechain else last_main)
            if rtype == "system" and keep and not sidechain:
                boundary_has_history[uid] = last_main is not None
            if rtype == "user" and data.get("isCompactSummary") and isinstance(data.get("summarizeMetadata"), dict):
                partial[uid] = data["summarizeMetadata"]
            if keep and not sidechain:
                order.append(uid)
                last_main = uid
            if sidechains and rtype == "progress":
                pdata = data.get("data")
                if isinstance(pdata, dict) and pdata.get("type") == "agent_progress" \
                        and isinstance(pdata.get("message"), dict):
                    key = pdata.get("agentId") or data.get("parentToolUseID") or "agent"
                    progress.append((number, offset, str(key)))
            session_id = session_id or (data.get("sessionId") if isinstance(data.get("sessionId"), str) else None)
            if isinstance(data.get("version"), str):
                version = data["version"]
            if isinstance(data.get("sessionId"), str):
                last_session = data["sessionId"]
            del data
    except OSError as exc:
        raise TranscriptError(f"{p}: cannot read ({exc.strerror or exc})") from None
    stream.check(p)
    if repeats:
        problems.append(RecordProblem(repeats[0], f"{plural(len(repeats), 'record')} repeat{'s' if len(repeats) == 1 else ''} a uuid read earlier in the file "
                                            f"(lines {repeats[0]}-{repeats[-1]}; a resumed session can write its "
                                            "history again); the first copy of each is used"))
    main_is_sidechain = False
    if not order:
        # A subagent's own file (agent-*.jsonl) holds only sidechain records: its line is the
        # sidechain.
        order = [uid for uid, n in nodes.items() if n.keep]
        main_is_sidechain = bool(order)
    if not order and not problems and _blank(p):
        raise TranscriptError(f"{p}: the file is empty (no records at all); is this the session file you meant?",
                              not_a_session="an empty file")
    if not order:
        strange = sorted({rtype for _, rtype, _, _ in unknown})
        raise TranscriptError(f"{p}: no user or assistant records "
                              f"({plural(len(problems), 'bad line')}"
                              + (f"; {plural(len(unknown), 'record')} of unknown type "
                                 f"{', '.join(map(repr, strange))}" if unknown else "")
                              + "); is this a Claude Code session file?",
                              not_a_session="not a Claude Code session file (no user or assistant records)")
    walked: set[str] = set()
    chain, restart = _choose_chain(nodes, order, problems, walked)
    problems.extend(_unknown_notes(unknown, walked))
    restart_at = len(problems)           # its note goes here, once the records left out were looked at
    chain = _add_parallel_results(nodes, chain)
    left_boundaries = _report_off_chain(nodes, chain, problems, nodes[restart[0]].line if restart else 0)
    transcript = Transcript(path=p, messages=[], problems=problems, session_id=last_session or session_id,
                            version=version, title=title, sidechain_records=sidechain_count,
                            sha256=digest.hexdigest(),
                            agent_id=next(iter(agent_ids)) if main_is_sidechain and len(agent_ids) == 1 else None,
                            boundary_has_history=boundary_has_history, metadata_records=metadata,
                            left_boundaries=left_boundaries, microcompactions=micro, partial_info=partial)
    try:
        with p.open("rb") as fh:
            loader = _Loader(fh, p, problems)
            transcript.messages = _build_messages(transcript, loader.items(nodes, chain))
            for boundary, span in _from_here_spans(nodes, chain, partial).items():
                transcript.partial_spans[boundary] = _build_messages(transcript, loader.items(nodes, span),
                                                                     record_lines=False)
                transcript.line_of.update((uid, nodes[uid].line) for uid in span)
            if restart is not None:
                problems.insert(restart_at, _restart_note(nodes, *restart, loader, chain))
            if sidechains:
                transcript.sidechains = _read_sidechains(transcript, nodes, loader, progress,
                                                         inline=not main_is_sidechain)
            loader.finish(before)
    except OSError as exc:
        raise TranscriptError(f"{p}: cannot read ({exc.strerror or exc})") from None
    insert_queued(transcript, seen_queue_items(queue_ops))
    return transcript


class _StreamShape:
    """Tells SDK stream output (``claude -p --output-format stream-json``) from a session transcript.

    The stream has ``system``/``init`` and ``result`` records, snake_case ``session_id``, no
    ``parentUuid`` on any message, and flags its summary ``isSynthetic``; it need not hold the prompts
    the person typed (``-p`` takes them on the command line). Read as a transcript, every message
    would be a root of its own and all but the last would drop out of the conversation, so such a
    file is refused, naming the session's own transcript (the summary names its path)."""

    __slots__ = ("line", "mark", "named", "named_line", "parented", "session")

    def __init__(self) -> None:
        self.line = 0                   # the first record with a mark of the stream
        self.mark = ""
        self.session: str | None = None
        self.parented = False           # a user/assistant record carries parentUuid: a transcript
        self.named: str | None = None   # the transcript path a summary names
        self.named_line = 0

    def see(self, line: int, rtype: str, data: dict[str, Any]) -> None:
        if rtype in ("user", "assistant") and "parentUuid" in data:
            self.parented = True
        if self.parented:
            return
        if not self.line:
            mark = ("a system/init record" if rtype == "system" and data.get("subtype") == "init" else
                    "a result record" if rtype == "result" else
                    "snake_case session_id" if "session_id" in data and "sessionId" not in data else "")
            if mark:
                self.line, self.mark = line, mark
                self.session = data["session_id"] if isinstance(data.get("session_id"), str) else None
        if self.named is None and rtype == "user" and isinstance(data.get("message"), dict):
            content = data["message"].get("content")
            if isinstance(content, str) and _TRANSCRIPT_AT in content:
                path = content.split(_TRANSCRIPT_AT, 1)[1].split(None, 1)
                if path and path[0].endswith(".jsonl"):
                    self.named, self.named_line = path[0], line

    def check(self, p: Path) -> None:
        if not self.line or self.parented:
            return
        where = (f"{self.named} (the summary on line {self.named_line} names it)" if self.named else
                 f"~/.claude/projects/<project>/{self.session or '<session>'}.jsonl")
        raise TranscriptError(
            f"{p}: Claude Code SDK stream output (claude -p --output-format stream-json; line {self.line}: "
            f"{self.mark}), not a session transcript: it has no parentUuid links and need not hold the "
            f"prompts the person typed, so it is not graded. Grade the session's own transcript: {where}",
            not_a_session=f"Claude Code SDK stream output (claude -p --output-format stream-json), not a session "
                          f"transcript: grade {where}")


#: The words before the transcript's path in a 2.1 summary.
_TRANSCRIPT_AT = "read the full transcript at: "


def check_transcript_path(p: Path) -> None:
    """Refuse, with an accurate message, what cannot be read as a transcript file: a missing path,
    a folder, a symlink loop, a FIFO, a terminal or /dev/stdin (the reader seeks back into the file,
    so it needs a regular file, and a pipe would block it)."""
    try:
        st = os.stat(p)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise TranscriptError(f"{p}: symbolic link loop (the link points back to itself); "
                                  "give the session's .jsonl file") from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise TranscriptError(f"{p}: no such transcript file") from None
        raise TranscriptError(f"{p}: cannot read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise TranscriptError(f"{p}: is a folder; give one session's .jsonl file (Claude Code keeps them in "
                              "~/.claude/projects/<project>/<session>.jsonl), or grade the folder with "
                              "`ctxeval grade FOLDER`")
    if not stat.S_ISREG(st.st_mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else
                "a terminal or character device" if stat.S_ISCHR(st.st_mode) else
                "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        raise TranscriptError(f"{p}: is {kind}, not a regular file; the transcript is read twice, so save it "
                              "to a file first (e.g. `cat > session.jsonl`) and give that file")


def _report_off_chain(nodes: dict[str, _Node], chain: list[str], problems: list[RecordProblem],
                      restart: int = 0) -> list[int]:
    """Compactions not on the conversation are reported, not lost: one before the line where the
    conversation restarts with no parent (``restart``), or one on a branch the conversation left (a
    rewind). Returns their lines."""
    on = set(chain)
    lines: list[int] = []
    for uid, node in nodes.items():
        if node.type == "system" and node.keep and not node.sidechain and uid not in on:
            lines.append(node.line)
            where = (f"before line {restart}, where the conversation restarts with no parent (see the note on "
                     "that line)" if node.line < restart else
                     "on a branch the conversation left (a rewind or an earlier resume)")
            problems.append(RecordProblem(node.line, f"a compaction (compact_boundary) {where}; it is not graded"))
    return lines


class _Loader:
    """Reads records back by byte offset (second pass)."""

    def __init__(self, fh: Any, path: Path, problems: list[RecordProblem]):
        self.fh = fh
        self.path = path
        self.problems = problems
        self.changed: list[int] = []    # lines whose record was not there any more on the second read

    def load(self, node: _Node, uid: str | None = None) -> dict[str, Any] | None:
        self.fh.seek(node.offset)
        raw = self.fh.readline()
        try:
            data = parse_record(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            data = None
        if not isinstance(data, dict) or (uid is not None and data.get("uuid") != uid):
            self.changed.append(node.line)
            if len(self.changed) == 1 and os.fstat(self.fh.fileno()).st_size <= node.offset:
                self._raise(node.line, "was cut short")
            return None
        return data

    def _raise(self, line: int, what: str) -> None:
        raise TranscriptError(f"{self.path}:{line}: the file {what} while it was read (a session still being "
                              "written, or a file being replaced); read it again once it is complete, or copy "
                              "it first")

    def finish(self, before: os.stat_result) -> None:
        """One error when records changed under the reader; one warning when the file only grew
        (a running session appends; what was appended after the first pass is not included)."""
        if self.changed:
            self._raise(self.changed[0], f"changed ({plural(len(self.changed), 'record')} {'was' if len(self.changed) == 1 else 'were'} not where the first pass "
                                         "found them)")
        after = os.fstat(self.fh.fileno())
        if after.st_size > before.st_size:
            self.problems.append(RecordProblem(0, f"the file grew while it was read ({before.st_size:,} -> "
                                            f"{after.st_size:,} bytes; the session is still running?): records "
                                            "appended meanwhile are not included"))
        elif after.st_size < before.st_size:
            self._raise(0, f"shrank ({before.st_size:,} -> {after.st_size:,} bytes)")

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


def _from_here_spans(nodes: dict[str, _Node], chain: list[str],
                     partial: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """For each "Summarize from here" compaction on ``chain`` (its summary's ``summarizeMetadata``
    says ``direction: "from"``): the records it summarised, oldest first, by boundary uuid.

    Claude Code summarises the messages from the selected one to the end and keeps the ones before
    it; the boundary continues from the last kept message (its ``logicalParentUuid``), so the
    summarised ones are left on a branch. They are the records from the newest main-line message
    record before the boundary in the file back to that kept message."""
    on_chain = set(chain)
    out: dict[str, list[str]] = {}
    for uid in chain:
        meta = partial.get(uid)
        node = nodes[uid]
        if not meta or meta.get("direction") != "from" or node.parent not in nodes:
            continue
        boundary = nodes[node.parent]
        if boundary.type != "system" or boundary.prev is None:
            continue
        kept_last = boundary.logical_parent
        span: list[str] = []
        cur: str | None = boundary.prev
        for _ in range(len(nodes)):
            if cur is None or cur == kept_last or cur in on_chain or cur not in nodes:
                break
            if nodes[cur].keep and not nodes[cur].sidechain:
                span.append(cur)
            cur = nodes[cur].parent
        if span and (cur == kept_last or cur in on_chain):
            out[node.parent] = span[::-1]
    return out


def _step(nodes: dict[str, _Node], node: _Node) -> str | None:
    """The record before ``node`` in its conversation: its parent, or across a compaction
    boundary (parentUuid null) its logical parent. A main-line record whose parent is not in the
    file (a boundary's logicalParentUuid that was never written, 2.1.45 - 2.1.69; a boundary with
    none at all, or one written after the boundary) follows the newest main-line message record
    before it in the file."""
    boundary = node.type == "system"
    parent = node.parent if node.parent is not None else (node.logical_parent if boundary else None)
    if node.prev is None:
        return parent
    if (parent is not None and parent not in nodes) or (boundary and parent is None):
        return node.prev
    if boundary and parent is not None and nodes[parent].line > node.line:
        # 2.1.183 names a message written after the summary (a preserved one) as the boundary's
        # logical parent: following it would loop; the summarised conversation ends before it.
        return node.prev
    return parent


def _walk(nodes: dict[str, _Node], leaf: str, problems: list[RecordProblem] | None,
          walked: set[str] | None = None) -> tuple[list[str], bool, str]:
    """The chain ending at ``leaf`` (message records only, oldest first), whether it is broken
    (a parent missing from the file or a loop; breaks are reported to ``problems``) and the uuid of
    the record it starts at (its root, a message or not). ``walked`` receives every record the chain
    passes through, messages or not."""
    chain: list[str] = []
    seen: set[str] = set()
    cur: str | None = leaf
    broken = False
    while cur is not None:
        if cur in seen:
            broken = True
            if problems is not None:
                problems.append(RecordProblem(nodes[cur].line, "parent chain loops here; earlier records ignored"))
            break
        seen.add(cur)
        node = nodes.get(cur)
        if node is None:
            broken = True
            if problems is not None:
                child = chain[-1] if chain else leaf
                problems.append(RecordProblem(nodes[child].line, f"parent {cur} is not in the file; the conversation "
                                                           "is read from this record on"))
            break
        chain.append(cur)
        cur = _step(nodes, node)
        if (problems is not None and cur is not None and cur == node.prev and node.type != "system"
                and node.parent is not None and node.parent not in nodes):
            problems.append(RecordProblem(node.line, f"parent {node.parent} is not in the file; the record is placed "
                                               f"after line {nodes[cur].line}, the newest message before it"))
    root = chain[-1] if chain else leaf
    if walked is not None:
        walked.update(chain)
    chain.reverse()
    return [uid for uid in chain if nodes[uid].keep], broken, root


def _choose_chain(nodes: dict[str, _Node], order: list[str], problems: list[RecordProblem],
                  walked: set[str] | None = None) -> tuple[list[str], tuple[str, list[str]] | None]:
    """The conversation: the chain ending at the newest main-line message record. A break in it
    (a loop) is reported; an older chain is never preferred because it is longer. Also, when the
    chain starts at a record with no ``parentUuid`` (null or absent) after earlier main-line message
    records, that record's uuid and the earlier records it leaves out (for :func:`_restart_note`)."""
    chain, broken, root = _walk(nodes, order[-1], problems, walked)
    node = nodes.get(root)
    if broken or node is None or node.prev is None or _step(nodes, node) is not None:
        return chain, None
    on = set(chain)
    left = [u for u in order if nodes[u].line < node.line and u not in on and nodes[u].type != "system"]
    return chain, ((root, left) if left else None)


def _unknown_notes(unknown: list[tuple[int, str, str | None, bool]], walked: set[str]) -> list[RecordProblem]:
    """The records of a type the reader does not know, never skipped in silence: one note per type
    (its count, its first line, how many were on the conversation), and one per record flagged
    ``isCompactSummary`` (a compaction's summary under an unknown type: its compaction has none)."""
    out: list[RecordProblem] = []
    by_type: dict[str, list[tuple[int, str | None]]] = {}
    for line, rtype, uid, summary in unknown:
        if summary:
            out.append(RecordProblem(line, f"a record with isCompactSummary but unknown type {rtype!r} (a compaction "
                                           "summary is a 'user' record); line skipped, so its compaction has no "
                                           "summary"))
        else:
            by_type.setdefault(rtype, []).append((line, uid))
    known = ", ".join(sorted(KNOWN_TYPES))
    for rtype, rows in by_type.items():
        on = sum(1 for _, uid in rows if uid is not None and uid in walked)
        if len(rows) == 1:
            what = f"unknown record type {rtype!r}{' on the conversation chain' if on else ''}"
        else:
            what = (f"{len(rows)} records of unknown type {rtype!r} (the first on this line"
                    f"{f'; {on} on the conversation chain' if on else ''})")
        out.append(RecordProblem(rows[0][0], f"{what}; skipped, its content not read; the reader knows {known} "
                                             "records (a newer Claude Code, or a file edited by hand? --strict "
                                             "makes this an error)"))
    return sorted(out, key=lambda pr: pr.line)


#: At most this many left-out records are read again to tell a repeated history from a cut.
_RESTART_CHECK = 2_000


def _restart_note(nodes: dict[str, _Node], root: str, left: list[str], loader: _Loader,
                  chain: list[str]) -> RecordProblem:
    """The note for a conversation that starts at a record with no parent, after earlier message
    records: never silent. Claude Code rebuilds a conversation the same way (following ``parentUuid``
    back from the newest record until there is none), and a session resumed by an older client writes its
    history again from such a record (moredip in the corpus: the same messages, the same times, new
    uuids), so the record is not placed after the earlier ones, which would read that history twice.
    Whether the earlier records are such a copy (each has the time of a message read) is said."""
    node = nodes[root]
    lines = [nodes[u].line for u in left]
    what = "message" if node.keep else repr(node.type)
    span = f"line {lines[0]}" if len(lines) == 1 else f"lines {lines[0]}-{lines[-1]}"
    head = (f"a {what} record with no parent (parentUuid null or absent): the conversation is read from "
            f"this record on, as Claude Code reads it; the {plural(len(left), 'earlier message record')} ({span}) "
            f"{'is' if len(left) == 1 else 'are'} left out")
    copy = len(left) <= _RESTART_CHECK

    def stamp(uid: str) -> str | None:
        data = loader.load(nodes[uid], uid)
        value = data.get("timestamp") if data is not None else None
        return value if isinstance(value, str) else None
    # The copy is written right after the record, so the chain's first records are enough to look at.
    times = {stamp(u) for u in chain[:2 * _RESTART_CHECK]} if copy else set()
    copy = copy and all((t := stamp(u)) is not None and t in times for u in left)
    if copy:
        return RecordProblem(node.line, f"{head}: each has the time of a message read (a resumed session wrote "
                                        "its history again from here)")
    return RecordProblem(node.line, f"{head}, so grading sees less than the session held; if the file was "
                                    "edited or cut, restore this record's parentUuid")


def _result_ids(record: dict[str, Any] | None) -> list[str] | None:
    """The tool_use ids a user record answers, when it holds tool results only."""
    if not record or record.get("type") != "user":
        return None
    msg = record.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if not isinstance(content, list) or not content:
        return None
    ids: list[Any] = [b.get("tool_use_id") for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
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
            chain, _, _ = _walk(nodes, leaf, None)
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
                if isinstance(b, ToolUseBlock) and b.name in ("Task", "Agent") \
                        and isinstance(b.input.get("prompt"), str):
                    out.setdefault(b.input["prompt"], b.id)
    return out


def _parse_time(value: Any) -> datetime:
    if isinstance(value, str):
        try:
            from ..core.limits import check_time  # a date outside the calendar is no date

            return check_time(datetime.fromisoformat(value.replace("Z", "+00:00")))
        except (ValueError, OverflowError):
            pass
    return datetime(1970, 1, 1, tzinfo=UTC)


def _blocks(content: Any, line: int, problems: list[RecordProblem]) -> list[Any]:
    if isinstance(content, str):
        return [TextBlock(text=content)]
    if not isinstance(content, list):
        problems.append(RecordProblem(line, f"message.content is {type(content).__name__}, expected a string or a "
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
            problems.append(RecordProblem(line, f"message.content[{i}] ({kind}) is not a valid block"
                                          f"{' at ' + where if where else ''}: {err['msg']}; block skipped"))
    return out


def _build_messages(transcript: Transcript, items: Iterator[tuple[str, str, int, str | None, dict[str, Any]]],
                    *, record_lines: bool = True) -> list[Any]:
    """Messages for ``(uuid, type, line, logical parent, record)`` items in conversation order."""
    problems = transcript.problems
    out: list[Any] = []
    by_id: dict[str, int] = {}  # message.id -> index in out, for the current assistant turn
    boundary_open = False  # a compact_boundary not yet followed by its summary
    for uid, rtype, line, logical_parent, data in items:
        ts = _parse_time(data.get("timestamp"))
        msg = data["message"] if isinstance(data.get("message"), dict) else {}
        if rtype in ("user", "assistant"):
            _note_missing_content(data, line, rtype, problems)
        if rtype == "system":
            meta = data["compactMetadata"] if isinstance(data.get("compactMetadata"), dict) else {}
            trigger: Literal["auto", "manual"] = meta["trigger"] if meta.get("trigger") in ("auto", "manual") else "auto"
            pre: int = meta["preTokens"] if _whole(meta.get("preTokens")) else 0
            problems.extend(RecordProblem(line, note) for note in _boundary_notes(data))
            boundary_open = True
            out.append(CompactBoundary(uuid=uid, timestamp=ts, trigger=trigger, pre_tokens=pre,
                                       logical_parent_uuid=logical_parent))
            if record_lines:
                transcript.boundary_info[uid] = {
                    "version": data.get("version") if isinstance(data.get("version"), str) else None,
                    "session_id": data.get("sessionId") if isinstance(data.get("sessionId"), str) else None,
                    "metadata": meta}
            by_id.clear()
        elif rtype == "attachment" and isinstance(data.get("attachment"), dict) \
                and (typed := queued_command(data["attachment"])) is not None:
            # A prompt typed while the agent worked, given to the model mid-turn (2.1.150+).
            out.append(UserMessage(uuid=uid, timestamp=ts, content=typed))
        elif rtype == "attachment":
            att = data["attachment"] if isinstance(data.get("attachment"), dict) else {}
            content = att.get("content")
            if not isinstance(content, str):
                content = json.dumps(att, ensure_ascii=False)
            out.append(AttachmentMessage(uuid=uid, timestamp=ts, attachment_type=str(att.get("type", "unknown")),
                                         content=content, path=att.get("path") if isinstance(att.get("path"), str) else None,
                                         name=att.get("name") if isinstance(att.get("name"), str) else None))
        elif rtype == "user":
            content = msg.get("content", "")
            blocks: str | list[Any] = content if isinstance(content, str) else _blocks(content, line, problems)
            user = UserMessage(uuid=uid, timestamp=ts, content=blocks, is_meta=bool(data.get("isMeta")),
                               is_compact_summary=bool(data.get("isCompactSummary")))
            if user.is_compact_summary:
                if not boundary_open and record_lines and any(not isinstance(m, CompactBoundary) for m in out):
                    problems.append(RecordProblem(line, "a compaction summary (isCompactSummary) with no "
                                                  "compact_boundary before it: read as a compaction whose trigger "
                                                  "(auto) and tokens before (0) are unknown"))
                boundary_open = False
            if user.is_compact_summary and record_lines:   # (1.0.x wrote the summary without a boundary)
                transcript.boundary_info.setdefault(uid, {
                    "version": data.get("version") if isinstance(data.get("version"), str) else None,
                    "session_id": data.get("sessionId") if isinstance(data.get("sessionId"), str) else None,
                    "metadata": {}})
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
                    transcript.index_of[uid] = by_id[mid]
                continue
            out.append(AssistantMessage(uuid=uid, timestamp=ts, content=blocks, message_id=mid, usage=usage,
                                        model=msg.get("model") if isinstance(msg.get("model"), str) else None))
            if mid is not None:
                by_id[mid] = len(out) - 1
        if record_lines:
            transcript.line_of[uid] = line
            transcript.index_of[uid] = len(out) - 1
    # An assistant record merged into an earlier one may leave tool results before it: the
    # merge above keeps the first record's position, so results stay after their calls.
    return out


def _whole(value: Any) -> bool:
    """A whole, non-negative number (not a bool, not a string of digits)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _note_missing_content(data: dict[str, Any], line: int, rtype: str, problems: list[RecordProblem]) -> None:
    """A note for a user or assistant record with no ``message`` or no ``message.content``: read as
    empty, so the verdicts never rest on a turn dropped in silence (a wrong type gets its own note)."""
    msg = data.get("message")
    if not isinstance(msg, dict):
        what = "no message" if msg is None else f"a message that is {type(msg).__name__}, not an object"
        problems.append(RecordProblem(line, f"the {rtype} record has {what}; read as an empty {rtype} message"))
    elif "content" not in msg:
        problems.append(RecordProblem(line, f"the {rtype} record's message has no content; read as an empty "
                                      f"{rtype} message"))


_TYPE_WORDS = {"str": "string", "float": "number", "bool": "boolean", "list": "list", "dict": "object"}


def _boundary_notes(data: dict[str, Any]) -> list[str]:
    """What a compact_boundary record lacks: its compactMetadata, a known trigger, a whole preTokens."""
    meta = data.get("compactMetadata")
    if not isinstance(meta, dict):
        what = "no compactMetadata" if meta is None else f"a compactMetadata that is {type(meta).__name__}"
        return [f"the compact_boundary has {what}: its trigger is read as auto and the tokens before it as "
                "unknown (0)"]
    notes = []
    trigger = meta.get("trigger")
    if trigger not in ("auto", "manual"):
        notes.append(f"compactMetadata.trigger is {'missing' if trigger is None else repr(trigger)}, expected "
                     "'auto' or 'manual'; read as auto")
    pre = meta.get("preTokens")
    if not _whole(pre):
        shown = "missing" if pre is None else f"the {_TYPE_WORDS.get(type(pre).__name__, type(pre).__name__)} {pre!r}"
        notes.append(f"compactMetadata.preTokens is {shown}, expected a whole number of tokens; the tokens "
                     "before this compaction are unknown (read as 0)")
    return notes


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    vals = {k: raw.get(k) for k in ("input_tokens", "output_tokens", "cache_creation_input_tokens",
                                     "cache_read_input_tokens")}
    return Usage(**{k: v for k, v in vals.items() if isinstance(v, int) and v >= 0})


# ---------------------------------------------------------------------------------------------
# Writing


#: ``json.dumps(record, ensure_ascii=False)`` with one encoder for every record.
_dumps = json.JSONEncoder(ensure_ascii=False).encode


#: Claude Code writes milliseconds; microseconds are kept when there are any, so nothing is lost.
_iso = iso_timestamp


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
        if message.name:
            att["name"] = message.name
        return {**base, "type": "attachment", "attachment": att}
    if isinstance(message, UserMessage):
        content = message.content if isinstance(message.content, str) else [
            block_dict(b) for b in message.content]
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
                                "content": [block_dict(b) for b in message.content]}
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
    >>> from pytest_ctxeval.core.messages import UserMessage
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
        text = tool_results_record(message, parent, self.session_id, self.version)  # the commonest, directly
        if text is None:
            text = assistant_record(message, parent, self.session_id, self.version)  # a reply, directly
        if text is None:
            text = _dumps(record_for(message, parent_uuid=parent, session_id=self.session_id, version=self.version))
        self._fh.write(text + "\n")
        self._fh.flush()
        self.last_uuid = message.uuid
        self.records += 1

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
