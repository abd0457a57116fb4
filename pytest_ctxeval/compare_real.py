"""``ctxeval compare-real``: our compaction next to Claude Code's own, on the same conversation.

For each compaction in a real session file:

1. the conversation Claude Code summarised is taken from the file (everything since the previous
   boundary: the earlier summary, messages, meta records, as recorded) and given to our engine's
   :func:`~pytest_ctxeval.engine.compact.compact_conversation` with the prompt under test, on the
   offline or anthropic backend, with the ``/compact`` arguments the user typed;
2. both summaries become :class:`~pytest_ctxeval.grading.registry.CompactionCase` objects with the same
   history and expectations and are graded by the same graders;
3. the result is a :class:`RealComparison`: rows for a terminal table, a JSON document and a small
   self-contained HTML page.

When Claude Code's compaction call itself is available (2.1 writes it as
``<session>/subagents/agent-acompact-*.jsonl``; pass it with ``--acompact``), it is used twice:
the hook reminders recorded only in that file are put back into the conversation (so ours
summarises what Claude Code summarised), its ``Additional Instructions`` are given to ours too,
and :func:`compare_requests` lists where our compaction request differs from the one Claude Code
sent, and whether deliberately.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from collections.abc import Sequence

from .core.words import plural
from .core.config import EngineConfig, resolve_context_window
from .engine.compact import CompactionFailed, compact_conversation
from .engine.prompt import PromptSet
from .errors import TranscriptError, UsageError
from .reading.extract import edited_files, failing_results, open_todos, person_messages
from .grading.registry import CompactionCase, GraderRegistry, GraderSpec, Verdict, cases_from_transcript
from .core.ids import IdFactory
from .scenario.importer import compact_instructions
from .core.messages import AssistantMessage, UserMessage, Usage, plain_text, text_of
from .core.redact import redact, redact_tree
from .scenario.schema import Expectations
from .reading.summary import SECTION_KINDS, normalize_ws, section_kind
from .core.tokens import count_tokens, estimate_text
from .transcript.jsonl import Transcript, _parse_time, read_transcript
from .transcript.compactions import nothing_to_grade

__all__ = ["CompactionCall", "read_compaction_call", "Side", "Finding", "ComparedCompaction", "RealComparison",
           "compare_real", "compare_requests", "format_real_comparison", "comparison_html", "COMPARE_FORMAT"]

COMPARE_FORMAT = "pytest-ctxeval/compare-real"
COMPARE_VERSION = 1
_ADDITIONAL = re.compile(r"\n\s*Additional Instructions:\s*\n([\s\S]*?)(?=\n\s*IMPORTANT: Do NOT use any tools|\Z)")


# ---------------------------------------------------------------------------------------------
# Claude Code's compaction call (agent-acompact-*.jsonl)


@dataclass
class CompactionCall:
    """What one ``agent-acompact-*.jsonl`` file shows of the request Claude Code sent."""

    path: Path
    agent_id: str | None
    session_id: str | None
    prompt: str                                  # the summarisation request (last user message)
    prompt_at: datetime
    reply: str                                   # the model's raw reply (<analysis> + <summary>)
    model: str | None
    usage: Usage | None
    meta: list[tuple[str | None, UserMessage]]   # (parent uuid in the session, meta message)

    @property
    def additional_instructions(self) -> str | None:
        match = _ADDITIONAL.search(self.prompt)
        return match.group(1).strip() or None if match else None

    @property
    def input_tokens(self) -> int:
        u = self.usage
        return (u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens) if u else 0


def read_compaction_call(path: str | Path) -> CompactionCall:
    """Read Claude Code's compaction call file. Raises :class:`TranscriptError` when the file is
    not one (no summarisation request in it)."""
    p = Path(path)
    if not p.is_file():
        raise TranscriptError(f"{p}: no such file")
    prompt = reply = None
    prompt_at = None
    model = agent = session = None
    usage = None
    reply_id = None
    meta: list[tuple[str | None, UserMessage]] = []
    try:
        with p.open("rb") as fh:
            for number, raw in enumerate(fh, start=1):
                try:
                    rec = json.loads(raw)
                except ValueError:
                    continue
                if not isinstance(rec, dict) or rec.get("type") not in ("user", "assistant"):
                    continue
                agent = agent or rec.get("agentId")
                session = session or rec.get("sessionId")
                msg = rec["message"] if isinstance(rec.get("message"), dict) else {}
                content = msg.get("content")
                text = content if isinstance(content, str) else "\n".join(
                    b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")
                if rec["type"] == "user" and rec.get("isMeta"):
                    meta.append((rec.get("parentUuid"), UserMessage(
                        uuid=str(rec.get("uuid") or f"acompact-meta-{number}"), timestamp=_parse_time(rec.get("timestamp")),
                        content=text, is_meta=True)))
                elif rec["type"] == "user":
                    prompt, prompt_at = text, _parse_time(rec.get("timestamp"))
                else:
                    # A reply spread over records sharing message.id is one reply.
                    reply = (reply + text) if reply and reply_id is not None and msg.get("id") == reply_id else text
                    reply_id = msg.get("id")
                    model = msg.get("model") or model
                    raw_usage = msg["usage"] if isinstance(msg.get("usage"), dict) else {}
                    usage = Usage(**{k: v for k, v in raw_usage.items() if k in Usage.model_fields
                                     and isinstance(v, int)})
    except OSError as exc:
        raise TranscriptError(f"{p}: cannot read ({exc.strerror or exc})") from None
    if not prompt or prompt_at is None or "summary" not in prompt.lower() or "<summary>" not in prompt:
        raise TranscriptError(f"{p}: not a Claude Code compaction call (agent-acompact-*.jsonl): no summarisation "
                              "request in it")
    return CompactionCall(path=p, agent_id=agent, session_id=session, prompt=prompt, prompt_at=prompt_at,
                          reply=reply or "", model=model, usage=usage, meta=meta)


def _sections_asked(prompt: str) -> list[tuple[str, str, str]]:
    """``(number, title, kind)`` of the numbered section list a compaction prompt asks for (the
    first list that reaches the next-step section)."""
    out: list[tuple[str, str, str]] = []
    for line in prompt.splitlines():
        m = re.match(r"^\s*(?:#+\s*)?(\d+)\.\s+([^:\n]{3,60}?)\s*:", line)
        if not m:
            continue
        kind = section_kind(m.group(2))
        if kind is None:
            continue
        out.append((m.group(1), m.group(2).strip(), kind))
        if kind == "next":
            break
    return out


@dataclass
class Finding:
    aspect: str
    claude_code: str
    ours: str
    same: bool
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"aspect": self.aspect, "claude_code": self.claude_code, "ours": self.ours, "same": self.same,
                "note": self.note}


def compare_requests(call: CompactionCall, request: dict[str, Any] | None, *, prompts: PromptSet,
                     config: EngineConfig, meta_spliced: int, instructions_from_call: bool) -> list[Finding]:
    """Where our compaction request carries the same kind of content as Claude Code's, and where
    it differs (deliberately or not)."""
    out: list[Finding] = []
    ours_prompt = ""
    ours_messages: list[dict[str, Any]] = []
    if request:
        ours_messages = request.get("messages", [])
        last = ours_messages[-1] if ours_messages else {}
        content = last.get("content")
        ours_prompt = content if isinstance(content, str) else "\n".join(
            b.get("text", "") for b in content or [] if b.get("type") == "text")
    ours_tokens = sum(estimate_text(json.dumps(m.get("content"), ensure_ascii=False), config) for m in ours_messages)
    out.append(Finding(
        "conversation carried",
        f"the whole conversation before the request: {call.input_tokens:,} input tokens"
        + (f" ({call.usage.cache_read_input_tokens:,} read from the main agent's prompt cache)" if call.usage else ""),
        f"the whole conversation: {max(0, len(ours_messages) - 1)} API messages before the request, ~{ours_tokens:,} "
        "tokens by our estimate (images and documents as [image]/[document])",
        True, "same content; Claude Code's count also holds its system prompt and tool definitions"))
    out.append(Finding(
        "hook reminders in the conversation",
        f"{len(call.meta)} meta user messages (PostToolUse hook context) recorded only in the compaction call's "
        "file, not in the session file",
        f"{meta_spliced} put back after their parent records" if meta_spliced else "missing (not in the session file)",
        meta_spliced == len(call.meta),
        "the session file does not record hook additional context; compare-real takes it from this file"))
    out.append(Finding(
        "request position", "a user message after the conversation",
        "a user message after the conversation" if ours_messages and ours_messages[-1].get("role") == "user" else "?",
        True))
    out.append(Finding(
        "system prompt", "the main agent's system prompt and tools (a forked agent, so the prompt cache is shared)",
        f"a summariser system prompt ({len(prompts.system_compact)} characters), no tools",
        False, "deliberate: the main system prompt and tool definitions are not in the transcript, and a "
               "dedicated summariser prompt keeps the offline model and graders independent of them"))
    theirs = _sections_asked(call.prompt)
    ours_sections = _sections_asked(ours_prompt)
    kinds_t, kinds_o = [k for _, _, k in theirs], [k for _, _, k in ours_sections]
    numbers = [n for n, _, _ in theirs]
    dupes = sorted({n for n in numbers if numbers.count(n) > 1})
    out.append(Finding(
        "sections asked for",
        ", ".join(f"{n}. {t}" for n, t, _ in theirs) + (f" (number {', '.join(dupes)} used twice)" if dupes else ""),
        ", ".join(f"{n}. {t}" for n, t, _ in ours_sections),
        kinds_t == kinds_o,
        "same nine sections in the same order" + ("; Claude Code's list misnumbers them, its example "
                                                  "numbers 1-9" if dupes else "") if kinds_t == kinds_o else
        f"differs: Claude Code {kinds_t}, ours {kinds_o}"))
    lower_t, lower_o = call.prompt.lower(), ours_prompt.lower()
    out.append(Finding(
        "analysis scratchpad", "asks for <analysis> then <summary>"
        + ("; its last line asks for ONLY the <summary> block" if "only the <summary>" in lower_t else ""),
        "asks for <analysis> then <summary>" if "<analysis>" in lower_o else "no analysis asked",
        "<analysis>" in lower_o, "ours is consistent; the engine strips the analysis either way"))
    out.append(Finding(
        "no-tools instruction",
        "a closing line" if "do not use any tools" in lower_t[-600:] and "do not use any tools" not in lower_t[:600]
        else "present",
        "an opening (CRITICAL) and a closing reminder" if "tool" in lower_o[:400] and "tool" in lower_o[-400:] else "present",
        False, "deliberate: the no-tools preamble of later Claude Code versions, since a tool call wastes the "
               "only turn"))
    verbatim_o = "verbatim" in (next((t for n, t, k in ours_sections if k == "user_messages"), "") + lower_o)
    out.append(Finding(
        "user messages", "'List ALL user messages that are not tool results'"
        + (" (verbatim)" if re.search(r"all user messages[^\n]*verbatim", lower_t) else " (verbatim not asked)"),
        "all user messages, verbatim, one per item" if verbatim_o else "all user messages",
        False, "deliberate: verbatim_user_messages grades them verbatim"))
    out.append(Finding(
        "next step quotes", "asks for direct quotes of the most recent conversation" if "direct quotes" in lower_t else "-",
        "asks for a verbatim quote of the most recent request" if "quote" in lower_o else "-",
        ("direct quotes" in lower_t) == ("quote" in lower_o)))
    out.append(Finding(
        "compact instructions in the context",
        "tells the model to follow summarisation instructions found in the context (CLAUDE.md '## Compact "
        "Instructions')" if "additional summarization instructions" in lower_t else "-",
        "-", "additional summarization instructions" not in lower_t,
        "not modelled: the engine has no CLAUDE.md; give them as /compact instructions"))
    add = call.additional_instructions
    out.append(Finding(
        "additional instructions",
        f"{len(add):,} characters (from a PreCompact hook or /compact arguments)" if add else "none",
        ("the same text, taken from the compaction call" if instructions_from_call else "none")
        if add else "none", bool(add) == instructions_from_call or not add,
        "the session file does not record a PreCompact hook's output; compare-real gives ours the text "
        "Claude Code sent" if add else ""))
    out.append(Finding(
        "reply", f"{len(call.reply):,} characters from {call.model or '?'}"
        + (" with an <analysis> block" if "<analysis>" in call.reply else ""),
        "see the 'ctxeval' column", True))
    return out


# ---------------------------------------------------------------------------------------------
# The comparison


@dataclass
class Side:
    """One summary (Claude Code's or ours), graded."""

    label: str
    case: CompactionCase | None
    verdicts: list[Verdict] = field(default_factory=list)
    tokens_before: int | None = None
    tokens_after: int | None = None
    error: str | None = None
    metrics: dict[str, Any] = field(default_factory=dict)

    def verdict(self, name: str) -> Verdict | None:
        return next((v for v in self.verdicts if v.grader == name), None)

    def as_dict(self) -> dict[str, Any]:
        return {"label": self.label, "error": self.error, "tokens_before": self.tokens_before,
                "tokens_after": self.tokens_after, "metrics": self.metrics,
                "summary": self.case.summary if self.case else None,
                "verdicts": [v.as_dict() for v in self.verdicts]}


@dataclass
class ComparedCompaction:
    index: int
    trigger: str
    line: int
    messages: int
    instructions: str | None
    real: Side
    ours: Side
    findings: list[Finding] = field(default_factory=list)
    call: Path | None = None
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "trigger": self.trigger, "line": self.line, "messages": self.messages,
                "instructions": self.instructions, "claude_code": self.real.as_dict(), "ours": self.ours.as_dict(),
                "compaction_call": str(self.call) if self.call else None,
                "request_findings": [f.as_dict() for f in self.findings], "notes": list(self.notes)}


@dataclass
class RealComparison:
    source: str
    sha256: str
    version: str | None
    session_id: str | None
    backend: str
    model: str | None
    prompt: dict[str, Any]
    graders: list[str]
    compactions: list[ComparedCompaction]
    usage: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: Replace key- and token-shaped strings in what is printed or written (the summaries and
    #: reasons quote the session), as ``ctxeval import`` does.
    redact: bool = True

    def text(self, value: str) -> str:
        return redact(value)[0] if self.redact and value else value

    @property
    def failed(self) -> bool:
        """Whether a grader failed on our summary (or ours could not be produced)."""
        return any(c.ours.error is not None or any(v.status == "fail" for v in c.ours.verdicts)
                   for c in self.compactions)

    def as_dict(self) -> dict[str, Any]:
        compactions: Any = [c.as_dict() for c in self.compactions]
        if self.redact:
            compactions = redact_tree(compactions, {})
        return {"format": COMPARE_FORMAT, "version": COMPARE_VERSION, "source": self.source, "sha256": self.sha256,
                "claude_code_version": self.version, "session_id": self.session_id, "backend": self.backend,
                "model": self.model, "prompt": self.prompt, "graders": list(self.graders),
                "compactions": compactions, "usage": self.usage, "notes": list(self.notes)}


def _reached(history_text: str, items: list[str]) -> list[str]:
    return [i for i in items if normalize_ws(i).lower() in history_text]


def _metrics(case: CompactionCase, verdicts: list[Verdict]) -> dict[str, Any]:
    """Counts for the table: sections present, and found/total for what the fidelity graders
    (verbatim_user_messages, files_preserved, errors_preserved, pending_tasks) look for (totals computed
    as the graders do; found = total - the grader's missing list)."""
    by = {v.grader: v for v in verdicts}
    present = [k for k in SECTION_KINDS if case.sections.get(k) is not None]
    history_text = normalize_ws(plain_text(case.history)).lower()
    totals = {
        "user_messages": len(person_messages(case.history)),
        "files": len(dict.fromkeys(edited_files(case.history) + _reached(history_text, list(case.expect.files)))),
        "errors": len(dict.fromkeys([f.key_line for f in failing_results(case.summarized) if f.key_line]
                                    + _reached(history_text, list(case.expect.errors)))),
        "pending": len(dict.fromkeys(open_todos(case.history) + _reached(history_text, list(case.expect.pending)))),
    }
    graders = {"user_messages": "verbatim_user_messages", "files": "files_preserved", "errors": "errors_preserved",
               "pending": "pending_tasks"}
    out: dict[str, Any] = {"sections": {"found": len(present), "total": len(SECTION_KINDS)}}
    for key, name in graders.items():
        v = by.get(name)
        total = totals[key]
        if v is not None and isinstance(v.evidence.get("superseded"), list):  # cancelled todos are not required
            total -= len(v.evidence["superseded"])
        if v is None or v.status not in ("pass", "fail") or total == 0:
            out[key] = {"found": None, "total": total, "status": v.status if v else "not run"}
            continue
        missing = v.evidence.get("missing")
        found = total - len(missing) if isinstance(missing, list) else (total if v.status == "pass" else None)
        out[key] = {"found": max(0, found) if found is not None else None, "total": total, "status": v.status}
    probes = by.get("probes")
    if probes is not None and case.expect.probes:
        out["probes"] = {"status": probes.status, "score": round(float(probes.score), 4)}
    return out


def _splice(before: list[Any], meta: list[tuple[str | None, UserMessage]]) -> tuple[list[Any], int]:
    """``before`` with each meta message put right after its parent record (when present)."""
    if not meta:
        return before, 0
    after: dict[str, list[UserMessage]] = {}
    for parent, m in meta:
        if parent:
            after.setdefault(parent, []).append(m)
    out, n = [], 0
    for m in before:
        out.append(m)
        for extra in after.get(m.uuid, []):
            out.append(extra)
            n += 1
    return out, n


def _call_for(calls: list[CompactionCall], transcript: Transcript, boundary_at: datetime,
              previous_at: datetime | None) -> CompactionCall | None:
    for call in calls:
        if call.session_id and transcript.session_id and call.session_id != transcript.session_id:
            continue
        if call.prompt_at <= boundary_at and (previous_at is None or call.prompt_at > previous_at):
            return call
    return None


def _attach(case: CompactionCase, **values: Any) -> None:
    """Set judge-related fields when this version of CompactionCase has them."""
    for key, value in values.items():
        if hasattr(case, key):
            setattr(case, key, value)


def compare_real(
    path: str | Path,
    *,
    llm: Any,
    registry: GraderRegistry,
    specs: list[GraderSpec] | None = None,
    prompts: PromptSet | None = None,
    context_window: int | None = None,
    expect: Expectations | None = None,
    calls: Sequence[str | Path] = (),
    strict: bool = False,
    judge: Any = None,
    use_call_instructions: bool = True,
    redact_output: bool = True,
) -> RealComparison:
    """Compare every compaction in the session file ``path`` with ours (see the module docstring).

    ``calls`` are compaction call files (``agent-acompact-*.jsonl``); in the 2.1 layout those next
    to the session (``<session>/subagents/``) are found without being named.
    """
    src = Path(path)
    transcript = read_transcript(src, strict=strict)
    # A compaction copied in from a parent session (a resumed file opens with it) is the parent's:
    # compared there, as cases_from_transcript grades it there; one with no summary after its
    # boundary has nothing of Claude Code's to compare with (listed in the notes). The compactions
    # compared are exactly those cases_from_transcript makes cases of, in the same order.
    comps = [c for c in transcript.compactions if c.gradable]
    if not comps:
        why = nothing_to_grade(transcript.compactions, transcript.left_boundaries, transcript.microcompactions) or "no compaction"
        hint = ("compare the parent session's file" if "inherited" in why else
                "compare the complete file once the session has written its summary" if "no summary" in why else
                "" if transcript.left_boundaries else "no compact_boundary record")
        raise UsageError(f"{src}: {why}{f' ({hint})' if hint else ''}: nothing to compare")
    prompts = prompts or PromptSet()
    specs = list(specs) if specs is not None else list(registry)
    expect = expect or Expectations()
    model = next((m.model for m in reversed(transcript.messages) if isinstance(m, AssistantMessage) and m.model), None)
    config = EngineConfig.for_window(context_window or resolve_context_window(model))
    call_paths = [Path(c) for c in calls]
    folder = src.with_suffix("") / "subagents"
    if folder.is_dir():
        call_paths += [p for p in sorted(folder.glob("agent-acompact*.jsonl")) if p not in call_paths]
    loaded = [read_compaction_call(c) for c in call_paths]
    notes: list[str] = [str(p) for p in transcript.problems]
    notes += [c.not_graded for c in transcript.compactions if c.no_summary and not c.inherited]
    real_cases = cases_from_transcript(transcript, expect=expect)
    out: list[ComparedCompaction] = []
    recompact = None
    try:
        from .evaluation import make_recompact  # the drift grader's re-compaction, when available
        recompact = make_recompact(llm, prompts)
    except ImportError:  # pragma: no cover - older evaluation module
        pass
    previous_at = None
    for comp, real_case in zip(comps, real_cases):
        cnotes: list[str] = []
        call = _call_for(loaded, transcript, comp.boundary.timestamp, previous_at)
        previous_at = comp.boundary.timestamp
        before = list(comp.before)
        spliced = 0
        if call is not None:
            before, spliced = _splice(before, call.meta)
            if spliced:
                cnotes.append(f"{spliced} hook reminder(s) from {call.path.name} put back into the conversation")
        instructions = compact_instructions(comp.after)
        from_call = False
        if use_call_instructions and call is not None and call.additional_instructions and not instructions:
            instructions, from_call = call.additional_instructions, True
            cnotes.append(f"ours gets the Additional Instructions Claude Code sent ({len(instructions):,} characters, "
                          f"from {call.path.name})")
        if "PreCompact" in plain_text(comp.after[:8]) and call is None:
            cnotes.append("a PreCompact hook ran; its output (extra summarisation instructions) is not in the session "
                          "file, so ours did without it")
        ours_tokens = count_tokens(before, config)
        # Claude Code's column is graded as ``ctxeval grade`` grades the transcript: the judge only. No
        # re-compaction (its drift would be our engine re-compacting its summary) and no engine config
        # (its fits_window would measure our estimate, not the requests Claude Code sent).
        _attach(real_case, judge=judge)
        real = Side("Claude Code", real_case, registry.run(real_case, specs), comp.boundary.pre_tokens,
                    real_case.post_tokens)
        real.metrics = _metrics(real_case, real.verdicts)
        ids = IdFactory(f"compare-real:{transcript.session_id or src.name}:{comp.index}")
        try:
            result = compact_conversation(
                before, llm=llm, config=config, prompts=prompts, ids=ids, now=comp.boundary.timestamp,
                transcript_path=str(src), pre_tokens=ours_tokens, trigger=comp.boundary.trigger,
                custom_instructions=instructions)
        except CompactionFailed as exc:
            ours = Side("ctxeval", None, [], ours_tokens, None, error=exc.reason)
            result = None
        else:
            assert result is not None  # compact_conversation returns a result or raises
            case = CompactionCase(
                source=str(src), index=comp.index, kind="full", trigger=comp.boundary.trigger,
                summary=result.summary, summary_message=text_of(result.summary_message.content),
                summarized=comp.before, history=comp.history, post_messages=result.post_messages, expect=expect,
                raw_reply=result.raw_reply, compaction_request=result.request, transcript_path=str(src),
                pre_tokens=ours_tokens, post_tokens=result.post_tokens, origin="engine", line=real_case.line)
            _attach(case, judge=judge, recompact=recompact, config=config,
                    is_last=getattr(real_case, "is_last", True))
            if hasattr(case, "generations"):
                case.generations = [case]
            ours = Side("ctxeval", case, registry.run(case, specs), ours_tokens, result.post_tokens)
            ours.metrics = _metrics(case, ours.verdicts)
            if result.ptl_steps:
                cnotes.append(f"ours hit 'prompt is too long' and dropped the oldest rounds {len(result.ptl_steps)} "
                              "time(s)")
        findings = compare_requests(call, result.request if result else None, prompts=prompts, config=config,
                                    meta_spliced=spliced, instructions_from_call=from_call) if call else []
        out.append(ComparedCompaction(index=comp.index, trigger=comp.boundary.trigger,
                                      line=comp.summary_line or comp.boundary_line, messages=len(comp.before),
                                      instructions=instructions, real=real, ours=ours, findings=findings,
                                      call=call.path if call else None, notes=cnotes))
    unused = [c for c in loaded if all(x.call != c.path for x in out)]
    for c in unused:
        notes.append(f"{c.path.name}: matches no compaction of this session (session {c.session_id}, "
                     f"sent {c.prompt_at.isoformat()})")
    usage = llm.usage.as_dict() if hasattr(llm, "usage") else {}
    return RealComparison(source=str(src), sha256=transcript.sha256, version=transcript.version,
                      session_id=transcript.session_id, backend=getattr(llm, "backend", "?"),
                      model=getattr(llm, "model", None),
                      prompt={"path": str(prompts.compact_path), "fingerprint": prompts.fingerprint},
                      graders=[s.name for s in specs], compactions=out, usage=usage, notes=notes,
                      redact=redact_output)


# ---------------------------------------------------------------------------------------------
# Output


def _count(m: dict[str, Any] | None) -> str:
    if not m:
        return "-"
    if m.get("found") is None:
        return m.get("status", "n/a") if m.get("total") else "n/a (none)"
    return f"{m['found']}/{m['total']}"


def _tokens(before: int | None, after: int | None) -> str:
    b = f"{before:,}" if before is not None else "?"
    a = f"{after:,}" if after is not None else "?"
    return f"{b} → {a}"


def _verdict_cell(v: Verdict | None) -> str:
    if v is None:
        return "-"
    return v.status if v.status in ("n/a", "ungraded") else f"{v.status} {v.score:.2f}"


def rows_for(c: ComparedCompaction) -> list[tuple[str, str, str]]:
    """``(what, Claude Code, ours)`` rows of one compaction."""
    r, o = c.real, c.ours
    rows = [("tokens before → after", _tokens(r.tokens_before, r.tokens_after),
             _tokens(o.tokens_before, o.tokens_after) if not o.error else f"error: {o.error[:50]}")]
    for key, label in (("sections", "sections present"), ("user_messages", "user messages verbatim"),
                       ("files", "files named"), ("errors", "error lines kept"), ("pending", "open todos kept")):
        rows.append((label, _count(r.metrics.get(key)), _count(o.metrics.get(key))))
    if "probes" in r.metrics or "probes" in o.metrics:  # only when expect.probes are given
        rows.append(("probes", _verdict_cell(r.verdict("probes")), _verdict_cell(o.verdict("probes"))))
    names = [v.grader for v in r.verdicts] or [v.grader for v in o.verdicts]
    for name in names:
        rows.append((f"  {name}", _verdict_cell(r.verdict(name)), _verdict_cell(o.verdict(name))))
    return rows


def format_real_comparison(cmp: RealComparison, *, verbose: bool = False) -> list[str]:
    """The terminal report."""
    lines = [f"compare-real: {Path(cmp.source).name} (Claude Code {cmp.version or '?'}, session {cmp.session_id or '?'})",
             f"ours: {cmp.backend} backend, model {cmp.model or '?'}, prompt {Path(cmp.prompt['path']).name} "
             f"({cmp.prompt['fingerprint']})"]
    for c in cmp.compactions:
        lines.append("")
        lines.append(f"compaction {c.index} ({c.trigger}, summary on line {c.line}): {plural(c.messages, 'message')} summarised"
                     + (f"; instructions given to ours: {cmp.text(normalize_ws(c.instructions))[:60]!r}"
                        if c.instructions else ""))
        rows = [("", "Claude Code", "ctxeval")] + rows_for(c)
        w0 = max(len(a) for a, _, _ in rows)
        w1 = max(len(b) for _, b, _ in rows)
        for a, b, d in rows:
            lines.append(f"  {a.ljust(w0)}  {b.ljust(w1)}  {d}".rstrip())
        lines.append("  (tokens before: Claude Code's own count, with its system prompt and tools; ours: the engine's "
                     "count of the same messages, anchored on the session's last API usage. After: each "
                     "post-compact context by the same estimate.)")
        for side in (c.real, c.ours):
            shown = [v for v in side.verdicts if v.status in ("fail", "ungraded") or verbose]
            for v in shown:
                lines.append(f"  {side.label}: {v.status.upper()} {v.grader}: {cmp.text('; '.join(v.reasons))[:300]}")
        if c.findings:
            lines.append(f"  compaction request vs Claude Code's ({c.call.name if c.call else '?'}):")
            for f in c.findings:
                mark = "same" if f.same else "DIFF"
                lines.append(f"    [{mark}] {f.aspect}: Claude Code: {f.claude_code}; ours: {f.ours}"
                             + (f" — {f.note}" if f.note else ""))
        for note in c.notes:
            lines.append(f"  note: {note}")
    for note in cmp.notes:
        lines.append(f"note: {note}")
    return lines


_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="referrer" content="no-referrer"><title>compare-real: {{ name }}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
.pass{color:#176317}.fail{color:#a11}.diff{color:#a11}.same{color:#176317}
pre{white-space:pre-wrap;background:#f6f6f6;padding:.6em;max-height:40em;overflow:auto;font-size:12px}
.cols{display:flex;gap:1em}.cols>div{flex:1;min-width:0}
</style></head><body>
<section class="ctxeval-compare-real">
<h1>Claude Code's compaction and ours</h1>
<p>{{ name }} &middot; Claude Code {{ cmp.version or "?" }} &middot; session {{ cmp.session_id or "?" }}<br>
ours: {{ cmp.backend }} backend, model {{ cmp.model or "?" }}, prompt {{ prompt_name }} ({{ cmp.prompt.fingerprint }})</p>
{% for c in cmp.compactions %}
<h2>Compaction {{ c.index }} ({{ c.trigger }}, summary on line {{ c.line }})</h2>
<p>{{ c.messages }} messages summarised{% if c.instructions %}; instructions given to ours: <code>{{ red(c.instructions)[:200] }}</code>{% endif %}</p>
<table><tr><th></th><th>Claude Code</th><th>ctxeval</th></tr>
{% for a, b, d in rows(c) %}<tr><td>{{ a }}</td><td class="{{ b.split(' ')[0] }}">{{ b }}</td><td class="{{ d.split(' ')[0] }}">{{ d }}</td></tr>
{% endfor %}</table>
{% if c.findings %}<h3>Compaction request vs Claude Code's</h3>
<table><tr><th>aspect</th><th>Claude Code</th><th>ours</th><th></th><th>note</th></tr>
{% for f in c.findings %}<tr><td>{{ f.aspect }}</td><td>{{ f.claude_code }}</td><td>{{ f.ours }}</td>
<td class="{{ 'same' if f.same else 'diff' }}">{{ 'same' if f.same else 'differs' }}</td><td>{{ f.note }}</td></tr>
{% endfor %}</table>{% endif %}
<div class="cols">
<div><h3>Claude Code's summary</h3><pre>{{ red(c.real.case.summary) if c.real.case else "" }}</pre></div>
<div><h3>Ours</h3><pre>{{ red(c.ours.case.summary) if c.ours.case else ("error: " ~ c.ours.error) }}</pre></div>
</div>
{% for side in (c.real, c.ours) %}{% for v in side.verdicts if v.status in ("fail", "ungraded") %}
<p class="fail">{{ side.label }}: {{ v.status }} {{ v.grader }}: {{ red(v.reasons | join("; ")) }}</p>
{% endfor %}{% endfor %}
{% for n in c.notes %}<p>note: {{ n }}</p>{% endfor %}
{% endfor %}
</section></body></html>
"""


def comparison_html(cmp: RealComparison) -> str:
    """A self-contained HTML page (a ``<section>`` the report of issue 9 can embed). Every value is
    escaped: transcript text such as ``</script>`` stays text."""
    import jinja2

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    return env.from_string(_HTML).render(cmp=cmp, name=Path(cmp.source).name, rows=rows_for, red=cmp.text,
                                         prompt_name=Path(cmp.prompt["path"]).name)
