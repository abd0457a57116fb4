"""``ctxeval import``: a real Claude Code session as a scenario that replays it faithfully.

What becomes what:

* person-typed messages -> ``user:`` turns, with pasted images as block lists; other user text the
  model saw (an expanded slash command, a ``<task-notification>`` and the lines Claude Code appends
  to it, ``[Request interrupted by user]``) -> ``user:`` turns marked ``meta: true`` (not typed);
* assistant messages (records merged by ``message.id``, so parallel calls stay one turn) ->
  ``assistant:`` turns with their text, ``thinking`` (kept, or dropped with ``--thinking drop``)
  and ``tools:``; each call gets its tool_result (string or block list, ``error:`` when
  ``is_error``) wherever the result record sits in the file (2.1 puts parallel results on sibling
  branches; :mod:`pytest_ctxeval.transcript` collects them);
* every turn carries ``at:``, the record's timestamp, so the replay's idle gaps are the real ones;
* not turns: ``isMeta`` records (caveats, reminders, skill bodies), slash-command echoes and local
  command output, attachments, progress, file-history snapshots, queue operations, /resume titles;
* compactions in the file: by default (``until_first_compaction``) the conversation stops at the
  first ``compact_boundary`` and a ``compact:`` step (with the ``/compact`` arguments, if any) is
  put where Claude Code compacted, so the engine compacts the same conversation; with ``all`` the
  whole line is kept and each compaction becomes a ``recorded_compaction:`` turn that installs
  Claude Code's own summary (no model call);
* subagents: legacy inline sidechains, 2.1 ``agent_progress`` records and 2.1 subagent files
  (``<session>/subagents/agent-*.jsonl`` next to the session file) go under ``sidechains:``, not
  replayed: the main line already holds each Task call's result;
* provenance (source, sha256, Claude Code version, session id, model) is stored, and
  ``templates: false`` is set: the content is never rendered as a template;
* ``expect:`` is pre-filled with what can be derived (files edited, key lines of failing tool
  results, open todos at the cut, the last person-typed request) and a comment leaves the rest
  (``superseded``, ``probes``) to the user;
* key- and token-shaped strings are redacted (:mod:`pytest_ctxeval.core.redact`) unless ``redact=False``.
"""

from __future__ import annotations

import json
import re
from ..core.gcpause import paused_gc
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..core.words import plural
from ..core.config import resolve_context_window
from ..errors import ScenarioError, TranscriptError, UsageError
from ..reading.extract import edited_files, failing_results, open_todos, person_messages
from ..core.messages import (
    AssistantMessage, AttachmentMessage, Block, CompactBoundary, DocumentBlock, ImageBlock, RedactedThinkingBlock,
    OpaqueBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock, UserMessage, person_text, result_text, text_of,
)
from ..core.redact import merge_counts, redact_tree
from .schema import MAX_FILE_BYTES, TOOL_ID, Scenario, format_path
from ..transcript.compactions import compact_args_in
from ..transcript.jsonl import RecordProblem, Transcript, read_transcript

__all__ = ["ImportResult", "import_transcript", "write_scenario", "scenario_yaml", "compact_instructions",
           "is_compaction_call", "NO_RESULT"]

#: The result given to a tool call the transcript never answers (the session ended or was cut).
NO_RESULT = "[no tool result in the transcript: the session ended or was interrupted before the tool returned]"
_CLIENT_MARKERS = ("<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>",
                   "<local-command-stderr>", "<local-command-caveat>", "<bash-input>", "<bash-stdout>",
                   "<bash-stderr>", "<user-memory-input>")
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")
_SUMMARY_REQUEST = "Your task is to create a detailed summary of the conversation"


@dataclass
class ImportResult:
    """A scenario document built from a transcript, with what import did to get it."""

    source: Path
    document: dict[str, Any]
    transcript: Transcript
    cut: str                                   # human-readable: where the conversation stops
    mode: str                                  # until_first_compaction | all | whole
    counts: Counter = field(default_factory=Counter)
    redactions: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    sidechain_files: list[Path] = field(default_factory=list)

    @property
    def problems(self) -> list[RecordProblem]:
        return self.transcript.problems

    @property
    def scenario(self) -> Scenario:
        return Scenario.model_validate(self.document)

    def summary_lines(self) -> list[str]:
        """What import did, for the terminal."""
        t = self.transcript
        c = self.counts
        doc = self.document
        prov = doc.get("provenance", {})
        lines = [f"  Claude Code {prov.get('version') or '?'}, session {prov.get('session_id') or '?'}, "
                 f"sha256 {prov.get('sha256', '')[:12]}"]
        lines.append(f"  cut: {self.cut}")
        turns = (f"  turns: {c['user']} user, {c['assistant']} assistant, {c['tool_calls']} tool calls "
                 f"({c['tool_errors']} failed)")
        extra = []
        if c["compact_steps"]:
            extra.append(f"{c['compact_steps']} compact step at the cut")
        if c["recorded_compactions"]:
            extra.append(f"{c['recorded_compactions']} recorded compaction{'s' if c['recorded_compactions'] > 1 else ''}")
        lines.append(turns + ("; " + ", ".join(extra) if extra else ""))
        skipped = [f"{c[k]} {label}" for k, label in (
            ("meta", "meta"), ("command_echoes", "command echoes"), ("attachments", "attachments"),
            ("orphan_results", "orphan tool results"), ("empty_assistant", "empty assistant messages"),
            ("empty_user", "empty user messages")) if c[k]]
        lines.append(f"  not turns: {', '.join(skipped) if skipped else 'none'}"
                     + ("; the slash command opening the session is kept as one meta user turn (the "
                        "conversation must start with a user message)" if c["opening_meta"] else ""))
        think = f"  thinking: {c['thinking_kept']} blocks kept" if c["thinking_kept"] or not c["thinking_dropped"] \
            else f"  thinking: {c['thinking_dropped']} blocks dropped"
        if c["thinking_kept"] and c["thinking_dropped"]:
            think += f", {c['thinking_dropped']} dropped"
        if c["redacted_thinking"]:
            think += f" ({c['redacted_thinking']} redacted_thinking blocks dropped: they cannot be scripted)"
        lines.append(think)
        if c["unanswered"]:
            lines.append(f"  {plural(c['unanswered'], 'tool call')} without a result in the transcript: given "
                         f"a placeholder result")
        side = doc.get("sidechains") or {}
        lines.append(f"  sidechains: {len(side)}" + (" (" + ", ".join(f"{k}: {len(v)} turns" for k, v in
                                                                   list(side.items())[:6])
                                                     + (", ..." if len(side) > 6 else "") + ")" if side else ""))
        exp = doc.get("expect", {})
        lines.append(f"  expect: {plural(len(exp.get('files', [])), 'file')}, "
                     f"{plural(len(exp.get('errors', [])), 'error')}, "
                     f"{plural(len(exp.get('pending', [])), 'open todo')}" + (", intent" if exp.get("intent") else ""))
        total = sum(self.redactions.values())
        lines.append(f"  redactions: {total}" + (" (" + ", ".join(f"{k} {v}" for k, v in sorted(self.redactions.items()))
                                                 + ")" if total else ""))
        for note in self.notes:
            lines.append(f"  note: {note}")
        for p in t.problems:
            lines.append(f"  problem: {p}")
        return lines


def is_compaction_call(transcript: Transcript) -> bool:
    """Whether the file is Claude Code's own compaction call (``agent-acompact-*.jsonl``): the
    summarisation prompt and the model's reply, not a session."""
    if transcript.agent_id and transcript.agent_id.startswith("acompact"):
        return True
    users = [m for m in transcript.messages if isinstance(m, UserMessage) and not m.is_meta]
    return len(users) == 1 and text_of(users[0].content).lstrip().startswith(_SUMMARY_REQUEST)


#: How a folder report lists a compaction call given as a session (import and grade say the same).
COMPACTION_CALL = ("Claude Code's compaction call (agent-acompact), not a session: grade the session it belongs "
                   "to; compare this call with ours: ctxeval compare-real SESSION.jsonl --acompact FILE")


def compaction_call_message(src: Path, transcript: Transcript, nothing_to: str, verb: str) -> str:
    """What ``ctxeval import`` and ``ctxeval grade`` say of a compaction call given as a session
    (``nothing_to``: what there is nothing to do; ``verb``: what to do with the session instead)."""
    session = src.parent.parent.with_suffix(".jsonl") if src.parent.name == "subagents" else None
    where = (f" ({session.name}, next to its subagents/ folder)" if session is not None and session.exists()
             else "")
    return (f"{src} is Claude Code's compaction call (agent {transcript.agent_id or '?'}) for session "
            f"{transcript.session_id}: the summarisation prompt and the model's reply, not a session, so there is "
            f"nothing to {nothing_to}. {verb} the session it belongs to{where}, or compare this call with ours: "
            f"ctxeval compare-real SESSION.jsonl --acompact {src}")


def compact_instructions(after: list[Any]) -> str | None:
    """The arguments of the ``/compact`` command echoed after a boundary (None when none were
    given, or the compaction was automatic): :func:`pytest_ctxeval.transcript.compactions.compact_args_in`."""
    return compact_args_in(after)


def _iso(ts: datetime) -> str:
    spec = "milliseconds" if ts.microsecond % 1000 == 0 else "microseconds"
    return ts.astimezone(UTC).isoformat(timespec=spec).replace("+00:00", "Z")


def _is_echo(text: str) -> bool:
    return any(marker in text for marker in _CLIENT_MARKERS)


def _block(b: Any) -> dict[str, Any] | None:
    if isinstance(b, TextBlock):
        return {"type": "text", "text": b.text}
    if isinstance(b, ImageBlock):
        return {"type": "image", "source": dict(b.source)}
    if isinstance(b, DocumentBlock):
        out = {"type": "document", "source": dict(b.source)}
        if b.title is not None:
            out["title"] = b.title
        return out
    if isinstance(b, OpaqueBlock):
        # A block type scenarios do not model (tool_reference in ToolSearch results, server tool
        # blocks): kept as text naming it with its fields, so the replay still shows what it held.
        return {"type": "text", "text": f"[{b.type}: {json.dumps(b.model_dump(exclude={'type'}), ensure_ascii=False)}]"}
    return None


class _Converter:
    """Engine messages -> scenario turns (plain dicts, in YAML order)."""

    def __init__(self, *, thinking: bool, counts: Counter):
        self.thinking = thinking
        self.counts = counts
        self.turns: list[dict[str, Any]] = []
        self.calls: dict[str, dict[str, Any]] = {}
        self.answered: set[str] = set()
        self.ids: set[str] = set()
        self.lead: list[tuple[str, datetime]] = []   # meta/echo text before the first turn

    def add(self, m: Any) -> None:
        if isinstance(m, UserMessage):
            self._user(m)
        elif isinstance(m, AssistantMessage):
            self._assistant(m)
        elif isinstance(m, AttachmentMessage):
            self.counts["attachments"] += 1

    def _user(self, m: UserMessage) -> None:
        if m.is_compact_summary:
            return
        if m.is_meta:
            self.counts["meta"] += 1
            last = self.turns[-1] if self.turns else None
            if last is not None and isinstance(last.get("user"), str) and "<command-name>" in last["user"] \
                    and not last.get("meta") and text_of(m.content).strip():
                # The expansion of a /command the person typed with arguments: the model saw it.
                self.turns.append({"user": text_of(m.content), "meta": True, "at": _iso(m.timestamp)})
                return
            self._stash(m)
            return
        # A /command echo with arguments is a turn: the arguments are what the person typed.
        typed_command = person_text(m) is not None
        if isinstance(m.content, str):
            if _is_echo(m.content) and not typed_command:
                self.counts["command_echoes"] += 1
                self._stash(m)
            elif not m.content.strip():
                self.counts["empty_user"] += 1
            elif not typed_command:
                self._client_text(m.content, m)
            else:
                self.turns.append({"user": m.content, "at": _iso(m.timestamp)})
                self.counts["user"] += 1
            return
        others: list[Block] = []
        for b in m.content:
            if isinstance(b, ToolResultBlock):
                self._result(b)
            else:
                others.append(b)
        if not others:
            return
        if any(isinstance(b, TextBlock) and _is_echo(b.text) for b in others) and not typed_command:
            self.counts["command_echoes"] += 1
            self._stash(m)
            return
        blocks = [d for b in others if (d := _block(b)) is not None and not (d["type"] == "text" and not d["text"].strip())]
        if not blocks:
            self.counts["empty_user"] += 1
            return
        if not typed_command and all(isinstance(b, TextBlock) for b in others):
            self._client_text(blocks, m)
            return
        self.turns.append({"user": blocks, "at": _iso(m.timestamp)})
        self.counts["user"] += 1

    def _client_text(self, content: Any, m: UserMessage) -> None:
        """Text Claude Code wrote into a user record (a ``<task-notification>`` and the lines it
        appends, ``[Request interrupted by user]``, a caveat): the model saw it, the person did not
        type it, so it is a ``meta`` turn."""
        self.turns.append({"user": content, "meta": True, "at": _iso(m.timestamp)})
        self.counts["client_text"] += 1

    def _stash(self, m: UserMessage) -> None:
        if not self.turns:
            text = text_of(m.content).strip()
            if text:
                self.lead.append((text, m.timestamp))

    def _result(self, b: ToolResultBlock) -> None:
        call = self.calls.get(b.tool_use_id)
        if call is None or b.tool_use_id in self.answered:
            self.counts["orphan_results"] += 1
            return
        self.answered.add(b.tool_use_id)
        if b.is_error:
            call["error"] = result_text(b)
            self.counts["tool_errors"] += 1
        elif isinstance(b.content, str):
            call["result"] = b.content
        else:
            call["result"] = [d for item in b.content if (d := _block(item)) is not None]

    def _assistant(self, m: AssistantMessage) -> None:
        thinking = [b.thinking for b in m.content if isinstance(b, ThinkingBlock) and b.thinking.strip()]
        self.counts["redacted_thinking"] += sum(isinstance(b, RedactedThinkingBlock) for b in m.content)
        if not self.thinking:
            self.counts["thinking_dropped"] += len(thinking)
            thinking = []
        text = "\n\n".join(b.text for b in m.content if isinstance(b, TextBlock) and b.text.strip())
        tools = []
        for b in m.content:
            if not isinstance(b, ToolUseBlock):
                continue
            call: dict[str, Any] = {"name": b.name or "unknown", "input": dict(b.input)}
            if TOOL_ID.match(b.id) and b.id not in self.ids:
                call["id"] = b.id
                self.ids.add(b.id)
            self.calls[b.id] = call
            tools.append(call)
        if not text and not tools and not thinking:
            self.counts["empty_assistant"] += 1
            return
        if not self.turns and self.lead:
            # The API needs a user message first. A session opened by a slash command has only its
            # echo and its (meta) expansion before the first response: keep them as one meta turn.
            self.turns.append({"user": "\n\n".join(t for t, _ in self.lead), "meta": True,
                               "at": _iso(self.lead[0][1])})
            self.counts["opening_meta"] += 1
        turn: dict[str, Any] = {"assistant": text, "at": _iso(m.timestamp)}
        if thinking:
            turn["thinking"] = "\n\n".join(thinking)
            self.counts["thinking_kept"] += len(thinking)
        if tools:
            turn["tools"] = tools
            self.counts["tool_calls"] += len(tools)
        self.turns.append(turn)
        self.counts["assistant"] += 1

    def finish(self) -> list[dict[str, Any]]:
        for tid, call in self.calls.items():
            if tid not in self.answered:
                call["result"] = NO_RESULT
                self.answered.add(tid)
                self.counts["unanswered"] += 1
        return self.turns


def _safe_name(raw: str) -> str:
    name = _SAFE_NAME.sub("_", raw).strip("._-")[:120] or "imported"
    return name if name[0].isalnum() else "s" + name


def _model_of(messages: list[Any]) -> str | None:
    models = Counter(m.model for m in messages if isinstance(m, AssistantMessage) and m.model
                     and not m.model.startswith("<"))
    return models.most_common(1)[0][0] if models else None


def _expectations(span: list[Any], *, whole_line: bool = False) -> dict[str, Any]:
    """What the session before the cut says a summary must keep. For a whole line kept with its
    compactions (``whole_line``) nothing is pre-filled but what is left to the user: an expectation
    applies to every compaction once reached, so an error, file, todo or request of the whole line
    would be asked of compactions it does not belong to (an early error resolved at once, of every
    later summary; the last request, of a summary written before it). The graders read those facts
    off each compaction's own span, as ``ctxeval grade`` does on the transcript."""
    out: dict[str, Any] = {}
    if not whole_line:
        people = person_messages(span)
        if people and (intent := _request_part(people[-1].text)):
            out["intent"] = intent
        out["files"] = edited_files(span)
        out["errors"] = list(dict.fromkeys(f.key_line for f in failing_results(span) if f.key_line))
        out["pending"] = open_todos(span)
    out["superseded"] = []
    out["probes"] = []
    return out


#: An acknowledgement that opens a request ("this is good.", "thanks!", "ok, ", "looks great -"):
#: how the person answered the last turn, not what they ask for.
_ACK = re.compile(
    r"^\s*(?:(?:(?:this|that|it|all)(?:'s|\s+is|\s+looks|\s+seems)?|looks|sounds|seems)\s+)?(?:(?:very|really|so|all)\s+)?"
    r"(?:good|great|nice|perfect|fine|awesome|excellent|cool|lgtm|thanks?(?:\s+you)?|ok(?:ay)?|yes|yeah|sure|alright)"
    r"\s*(?:[.!,;:]+|\s-+|\s*\n)\s*", re.IGNORECASE)


def _request_part(text: str) -> str:
    """A typed message without the acknowledgements it opens with: the request it makes
    (``this is good. commit this`` → ``commit this``); the message whole when it is nothing else."""
    rest = text
    while (m := _ACK.match(rest)) and rest[m.end():].strip():
        rest = rest[m.end():]
    return rest   # as typed from the request on


def _subagent_files(path: Path) -> list[Path]:
    """2.1 layout: ``<project>/<session>.jsonl`` and ``<project>/<session>/subagents/agent-*.jsonl``."""
    folder = path.with_suffix("") / "subagents"
    if not folder.is_dir():
        return []
    return sorted(folder.glob("agent-*.jsonl"))


@paused_gc()  # a tree of records and values built all at once (see gcpause)
def import_transcript(
    path: str | Path,
    *,
    mode: str = "auto",
    thinking: bool = True,
    redact: bool = True,
    strict: bool = False,
    name: str | None = None,
    subagents: bool = True,
) -> ImportResult:
    """Build the scenario document for the Claude Code session file ``path``.

    ``mode``: ``auto`` (stop before the first compaction when the file has one, else keep
    everything), ``until_first_compaction`` or ``all`` (keep the whole line; compactions become
    ``recorded_compaction`` turns). Raises :class:`TranscriptError` for an unusable file.
    """
    if mode not in ("auto", "until_first_compaction", "all"):
        raise UsageError(f"unknown import mode {mode!r}; choose auto, until_first_compaction or all")
    src = Path(path)
    transcript = read_transcript(src, strict=strict, sidechains=subagents)
    if is_compaction_call(transcript):
        # Its one "request" is Claude Code's summarisation prompt and its one reply the summary:
        # replayed as a session, every grader would judge that prompt as the person's intent.
        raise TranscriptError(compaction_call_message(src, transcript, "replay", "Import"),
                              not_a_session=COMPACTION_CALL)
    counts: Counter = Counter()
    notes: list[str] = []
    messages = transcript.messages
    # Compactions with a boundary record (1.0.x wrote a summary without one: not a cut point here).
    written = {id(m) for m in messages if isinstance(m, CompactBoundary)}
    compactions = [c for c in transcript.compactions if id(c.boundary) in written]
    conv = _Converter(thinking=thinking, counts=counts)
    if compactions and mode != "all" and not any(
            isinstance(m, (UserMessage, AssistantMessage)) for m in messages[:messages.index(compactions[0].boundary)]):
        # The file opens with a compaction (a session continued from a summary): nothing precedes
        # it to replay, so keep the whole line.
        notes.append("the file opens with a compaction: the whole line is imported, its compactions recorded")
        mode = "all"
    if compactions and mode != "all":
        first = compactions[0]
        cut_at = messages.index(first.boundary)
        span = messages[:cut_at]
        for m in span:
            conv.add(m)
        turns = conv.finish()
        step: dict[str, Any] = {}
        instructions = compact_instructions(first.after)
        if instructions:
            step["instructions"] = instructions
        step["at"] = _iso(first.boundary.timestamp)
        turns.append({"compact": step})
        counts["compact_steps"] += 1
        how = "a manual /compact" if first.boundary.trigger == "manual" else "an automatic compaction"
        cut = (f"before the first compaction ({first.boundary.trigger}, preTokens {first.boundary.pre_tokens:,}, "
               f"line {first.boundary_line}); a compact step stands where Claude Code did {how}")
        if len(compactions) > 1 or first.after[2:]:
            cut += f"; {len(compactions)} compaction(s) in the file: --all keeps the whole line"
        used_mode = "until_first_compaction"
    else:
        span = [m for m in messages]
        for m in messages:
            if isinstance(m, CompactBoundary):
                comp = next(c for c in compactions if c.boundary is m)
                if comp.summary is None:
                    notes.append(f"the compaction on line {comp.boundary_line} has no summary record; a compact "
                                 "step stands in its place")
                    conv.turns.append({"compact": {"at": _iso(m.timestamp)}})
                    counts["compact_steps"] += 1
                    continue
                conv.turns.append({"recorded_compaction": {
                    "trigger": m.trigger, "pre_tokens": m.pre_tokens, "summary": comp.summary_text,
                    "at": _iso(m.timestamp)}})
                counts["recorded_compactions"] += 1
            else:
                conv.add(m)
        turns = conv.finish()
        if compactions:
            cut = f"the whole line, {len(compactions)} compaction(s) recorded as Claude Code wrote them"
            used_mode = "all"
        else:
            cut = ("the whole conversation (no compaction in the file); a compact step after the last turn "
                   "compacts where the session stopped, so the scenario has a compaction to grade")
            used_mode = "whole"
            if turns and any("user" in t or "assistant" in t for t in turns):
                turns.append({"compact": {}})
                counts["compact_steps"] += 1
            if mode == "until_first_compaction":
                notes.append("no compaction in the file: the whole conversation is imported")
    if transcript.agent_id:
        notes.append(f"this file is a subagent's own transcript (agent {transcript.agent_id}); its parent session "
                     f"is {transcript.session_id}")
    if transcript.version and transcript.version.startswith("1.") and transcript.sidechain_records:
        notes.append(f"legacy format (Claude Code {transcript.version}): {transcript.sidechain_records} sidechain "
                     "records inline, kept under sidechains")
    if not turns or not any("user" in t or "assistant" in t for t in turns):
        raise TranscriptError(f"{src}: nothing to replay: the conversation holds no user or assistant turn "
                              "before the cut")
    if turns and "assistant" in turns[0] and "user" not in turns[0]:
        # The API needs a user message first (a file cut mid-session, or a subagent file whose
        # prompt was meta): say where the replay starts.
        turns.insert(0, {"user": "[ctxeval import: the transcript's conversation starts with an assistant "
                                 "message; this placeholder stands for what came before]",
                         "at": turns[0].get("at")})
        notes.append("the conversation starts with an assistant message: a placeholder user turn was added")

    sidechains: dict[str, list[dict[str, Any]]] = {}
    sidechain_files: list[Path] = []
    if subagents:
        for key, side_messages in transcript.sidechains.items():
            sc = _Converter(thinking=thinking, counts=Counter())
            for m in side_messages:
                sc.add(m)
            side_turns = sc.finish()
            if side_turns:
                sidechains[str(key)] = side_turns
        for f in _subagent_files(src):
            try:
                sub = read_transcript(f, strict=strict)
            except TranscriptError as exc:
                notes.append(f"subagent file skipped: {exc}")
                continue
            if is_compaction_call(sub):
                notes.append(f"{f.name} is a compaction call, not a subagent: use it with compare-real --acompact")
                continue
            sc = _Converter(thinking=thinking, counts=Counter())
            for m in sub.messages:
                sc.add(m)
            side_turns = sc.finish()
            if side_turns:
                key = sub.agent_id or f.stem.removeprefix("agent-")
                sidechains[key if key not in sidechains else f"{key}-file"] = side_turns
                sidechain_files.append(f)

    model = _model_of(messages)
    provenance = {"source": str(path), "sha256": transcript.sha256, "version": transcript.version,
                  "session_id": transcript.session_id, "model": model}
    first_at = next((t.get("at") for t in turns if t.get("at")), None)
    stem = name or src.stem
    doc: dict[str, Any] = {
        "name": _safe_name(stem),
        "description": (f"Imported from {src.name} (Claude Code {transcript.version or '?'}): "
                        f"{counts['user']} user turns, {counts['assistant']} assistant turns, "
                        f"{counts['tool_calls']} tool calls; {cut}."),
        "templates": False,
        "provenance": provenance,
        "context_window": resolve_context_window(model, env={}),
    }
    if first_at:
        doc["start"] = first_at
    doc["expect"] = _expectations(span, whole_line=used_mode == "all")
    if used_mode == "all" and compactions:
        notes.append("expect: files, errors, todos and intent are not pre-filled for a whole line: the graders "
                     "read them off each compaction's own span, as ctxeval grade does (a line added to expect "
                     "applies to every compaction once reached)")
    doc["turns"] = turns
    if sidechains:
        doc["sidechains"] = sidechains
    redactions: dict[str, int] = {}
    if redact:
        for key in ("description", "expect", "turns", "sidechains"):
            if key in doc:
                doc[key] = redact_tree(doc[key], redactions)
    result = ImportResult(source=src, document=doc, transcript=transcript, cut=cut, mode=used_mode,
                          counts=counts, redactions=merge_counts({}, redactions), notes=notes,
                          sidechain_files=sidechain_files)
    try:
        Scenario.model_validate(doc)
    except ValidationError as exc:  # a bug of ours: say where
        err = exc.errors()[0]
        raise ScenarioError(f"{src}: the imported scenario does not validate at {format_path(tuple(err['loc']))}: "
                            f"{err['msg']} (please report this with the transcript's shape)") from None
    return result


# ---------------------------------------------------------------------------------------------
# Writing


_Base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_Base):  # type: ignore[misc, valid-type]
    """Safe YAML with multi-line strings as literal blocks (PyYAML falls back to a quoted
    scalar by itself when a string cannot be a block: trailing spaces, control characters)."""


def _str(dumper: Any, value: str) -> Any:
    style = "|" if "\n" in value and len(value) < 1_000_000 else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _dump(value: Any) -> str:
    return yaml.dump(value, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100,
                     default_flow_style=False)


def _clean(value: Any) -> Any:
    """Lone surrogates (from \\ud83d escapes cut in half) cannot be written as UTF-8: U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value


def _comment(value: Any) -> str:
    r"""A transcript value made safe inside a ``#`` comment line: a newline or other control
    character in it would end the comment and let the transcript write YAML keys.

    >>> _comment("2.0.1\nknown_failures: {drift: x}")
    "'2.0.1\\nknown_failures: {drift: x}'"
    """
    text = str(value)
    if any(c < " " or c in "\x7f\x85\u2028\u2029" for c in text):
        return repr(text)[:200]
    return text[:200]


def scenario_yaml(result: ImportResult) -> str:
    """The scenario file's text: the document with comments saying where it came from and what is
    left to fill in."""
    doc = _clean(result.document)
    prov = doc["provenance"]
    head = [
        f"# Imported by `ctxeval import` from {_comment(prov['source'])}",
        f"# (Claude Code {_comment(prov.get('version') or '?')}, session {_comment(prov.get('session_id') or '?')}).",
        f"# Conversation: {_comment(result.cut)}.",
        "# templates: false - the content below is replayed exactly as written, never rendered.",
        "# Replay and grade it:  ctxeval run THIS_FILE",
    ]
    if sum(result.redactions.values()):
        head.append(f"# {sum(result.redactions.values())} key- or token-shaped strings were replaced by "
                    "[REDACTED:<kind>].")
    parts = ["\n".join(head) + "\n"]
    top = {k: doc[k] for k in ("name", "description", "templates", "provenance", "context_window", "start") if k in doc}
    parts.append(_dump(top))
    if result.mode == "all":
        parts.append(
            "# expect: not pre-filled for a whole line. The graders read the files, errors, open todos and\n"
            "# requests off each compaction's own span, as ctxeval grade does; a line added here applies to\n"
            "# every compaction once the session has reached it. Left for you: 'superseded' and 'probes'.\n")
    else:
        parts.append(
            "# expect: pre-filled from the session where it can be derived: files edited, the key line of\n"
            "# each failing tool result, the todos still open at the cut, and the last person-typed request\n"
            "# (intent, without the acknowledgement it opens with). Left for you: 'superseded' (intents the\n"
            "# user dropped, which the summary must not revive) and 'probes' (questions a good summary\n"
            "# answers: kind recall|artifact|continuation|decision, question, answer). Remove what should\n"
            "# not be required.\n")
    parts.append(_dump({"expect": doc["expect"]}))
    parts.append(_dump({"turns": doc["turns"]}))
    if doc.get("sidechains"):
        parts.append("# Subagent conversations (Task calls), by agent id: kept for reading, never replayed.\n")
        parts.append(_dump({"sidechains": doc["sidechains"]}))
    return "".join(parts)


@paused_gc()  # a tree of records and values built all at once (see gcpause)
def write_scenario(result: ImportResult, out: str | Path, *, force: bool = False) -> tuple[Path, int]:
    """Write the scenario file (atomically); returns the path and its size in bytes."""
    p = Path(out)
    if p.exists() and not force:
        raise UsageError(f"{p}: already exists (it may hold your edits to expect:); pass --force to overwrite")
    text = scenario_yaml(result)
    data = text.encode("utf-8")
    from ..core.outputs import write_text_safely

    write_text_safely(p, text, what="the scenario")
    if len(data) > MAX_FILE_BYTES:
        result.notes.append(f"the scenario is {len(data) / 1e6:.1f} MB, over the {MAX_FILE_BYTES / 1e6:.0f} MB a "
                            "scenario file may have: import up to the first compaction, or drop thinking "
                            "(--thinking drop) and sidechains (--no-subagents)")
    return p, len(data)
