"""The per-request pipeline: what Claude Code does before every model call.

:class:`ContextManager` holds one session: its context (the messages the model will see, kept with
their original content), its full history (everything ever appended, which the transcript also
keeps), and the state of every tier. :meth:`ContextManager.prepare` runs the tiers in order
(000:98-175, 003:22-26)::

    L1 tool-result budget -> L2 dedupe -> L3 microcompact -> L4 auto-compact (session memory,
    else full) -> L5 PTL retry inside compaction

and returns the request to send plus the events of every tier that acted. Tier 1 and tier 3
decisions are frozen state applied to a *view* of the context, so the engine's context and
transcript keep every original byte while the model sees exactly what Claude Code would send.

Tool-time tiers run when a tool result arrives (:meth:`ContextManager.tool_results`): the Read
tool's own limits and the unchanged-file stub (tier 2). The session-memory extraction is a
post-sampling hook (:meth:`ContextManager.after_response`).

The view is kept incrementally (:mod:`.incremental`): preparing a request costs the messages that
arrived since the last one, not the whole history; compaction rebuilds it. ``naive=True`` re-derives
it from the whole context on every request instead (:mod:`.naive`, the reference the incremental
form is tested against): same requests, events and counts, O(history) per request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Sequence

from ..llm.whole import whole_reply
from ..core.config import EngineConfig
from ..core.ids import IdFactory
from ..errors import ModelError
from ..core.messages import (
    AssistantMessage, CompactBoundary, ToolResultBlock, ToolUseBlock, UserMessage, Usage, tool_results, tool_uses,
)
from ..core.tokens import estimate_messages
from ..transcript.jsonl import TranscriptWriter
from .autocompact import AutoCompactTracking, TokenWarningState, should_autocompact, token_warning_state
from .budget import ContentReplacementState, ToolResultStore, read_limit_error, read_line_cap
from .compact import (
    CompactionFailed, CompactionResult, build_attachments, compact_conversation, partial_compact, tool_deltas,
)
from .dedupe import FILE_UNCHANGED_STUB, FileReadState
from .hooks import HookSet
from .incremental import IncrementalView
from .microcompact import MicrocompactState, context_management
from .naive import NaiveView
from .prompt import PromptSet
from .session_memory import SessionMemoryState, extraction_request, session_memory_compact, should_extract

if TYPE_CHECKING:  # the SDK-backed client: its module loads the anthropic SDK
    from ..llm import LLM

__all__ = ["empty_result_marker", "shown_transcript_path", "SHOWN_PROJECT_DIR", "Event", "PreparedRequest", "CompactionRecord", "ContextManager", "DEFAULT_SYSTEM_PROMPT",
           "ToolOutcome"]


DEFAULT_SYSTEM_PROMPT = ("You are an interactive coding agent. Use the tools available to help the user "
                         "with software engineering tasks.")
#: Output budget of the main agent requests the pipeline prepares (not sent offline).
MAIN_MAX_TOKENS = 8_192
#: Where the model is told the session's files are: Claude Code's layout
#: ``~/.claude/projects/<project>/<session>.jsonl`` and ``<session>/tool-results/<id>.txt``
#: (004:95-99, 004:119) under a fixed project name.
SHOWN_PROJECT_DIR = "~/.claude/projects/ctxeval"


def shown_transcript_path(session_id: str) -> str:
    """The transcript path a session's continuation messages name (see ``SHOWN_PROJECT_DIR``).

    >>> shown_transcript_path("abc")
    '~/.claude/projects/ctxeval/abc.jsonl'
    """
    return f"{SHOWN_PROJECT_DIR}/{session_id}.jsonl"


def empty_result_marker(tool_name: str) -> str:
    """What a tool that returned nothing answers (003:380, 004:169; the wording is Claude Code's
    source, not in the seeds).

    >>> empty_result_marker("Bash")
    '(Bash completed with no output)'
    """
    return f"({tool_name} completed with no output)"


def _empty(content: Any) -> bool:
    if isinstance(content, str):
        return not content.strip()
    return not content


@dataclass
class Event:
    """Something a tier did: ``Event("autocompact", "full_compaction", turn=12, tokens_before=16_900,
    tokens_after=2_100)``."""

    tier: str
    action: str
    turn: int
    tokens_before: int | None = None
    tokens_after: int | None = None
    ids: list[str] = field(default_factory=list)
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"tier": self.tier, "action": self.action, "turn": self.turn,
                "tokens_before": self.tokens_before, "tokens_after": self.tokens_after,
                "ids": list(self.ids), "detail": self.detail}


@dataclass
class PreparedRequest:
    body: dict[str, Any]
    tokens: int
    warning: TokenWarningState
    turn: int
    events: list[Event] = field(default_factory=list)
    compaction: CompactionResult | None = None
    #: The turn is not sent: the context is at the blocking limit and no compaction brought it
    #: under (000:181, 003:173). The body is what would have been sent; it is not in ``requests``.
    refused: bool = False


@dataclass
class CompactionRecord:
    """A compaction as it happened in a run, with what graders need around it."""

    index: int
    turn: int
    result: CompactionResult
    history: list[Any]                      # every message of the session before it
    requests_after: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ToolOutcome:
    """A tool call as the runner scripts it: what the tool produced."""

    use: ToolUseBlock
    content: str | list[Any]
    is_error: bool = False
    declared_limit: int | None = None


class ContextManager:
    """One agent session's context, prepared request by request.

    >>> from pytest_ctxeval.llm import make_llm
    >>> from pytest_ctxeval.core.messages import UserMessage
    >>> import tempfile, pathlib
    >>> from pytest_ctxeval.transcript import TranscriptWriter
    >>> t = TranscriptWriter(pathlib.Path(tempfile.mkdtemp()) / "s.jsonl", session_id="s")
    >>> cm = ContextManager(config=EngineConfig.for_window(20_000), llm=make_llm(), transcript=t)
    >>> cm.append(UserMessage(uuid="u1", content="fix the login bug"))
    >>> cm.prepare(cm.messages[-1].timestamp).body["messages"]
    [{'role': 'user', 'content': 'fix the login bug'}]
    """

    def __init__(
        self,
        *,
        config: EngineConfig,
        llm: LLM,
        transcript: TranscriptWriter,
        prompts: PromptSet | None = None,
        ids: IdFactory | None = None,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        model: str | None = None,
        session_dir: str | Path | None = None,
        naive: bool = False,
    ):
        self.config = config
        self.llm = llm
        self.transcript = transcript
        self.prompts = prompts or PromptSet()
        self.ids = ids or IdFactory(transcript.session_id)
        self.system_prompt = system_prompt
        self.model = model or llm.model
        # <project>/<session>.jsonl and <project>/<session>/{tool-results,session-memory} (004:95-99)
        self.session_dir = Path(session_dir) if session_dir else transcript.path.parent / transcript.session_id
        # The paths the model is told (continuation messages, persisted results) are Claude Code's
        # layout under a fixed project, not the real folders: a run's requests, token counts and
        # summaries are then the same on every machine and in every temp folder, and recorded
        # cassettes replay anywhere. The real files are at transcript.path and session_dir.
        self.shown_transcript_path = shown_transcript_path(transcript.session_id)
        shown = self.shown_transcript_path.removesuffix(".jsonl")
        self.messages: list[Any] = []
        self.history: list[Any] = []
        self._uuids: tuple[list[Any], int, Any, set[str]] | None = None  # see _history_uuids
        self.events: list[Event] = []
        self.compactions: list[CompactionRecord] = []
        self.requests: list[dict[str, Any]] = []
        self.tracking = AutoCompactTracking(max_failures=config.max_consecutive_failures)
        #: The last compaction attempt failed: the next goes over the same conversation (prompt caching).
        self._compaction_failed = False
        self.turn = 0
        # tier state
        self.replacements = ContentReplacementState()
        self.store = ToolResultStore(self.session_dir, config, shown_root=f"{shown}/tool-results")
        self.reads = FileReadState()
        self.micro = MicrocompactState()
        self.memory = SessionMemoryState(path=self.session_dir / "session-memory" / "summary.md")
        self._tools: dict[str, tuple[str, int | None]] = {}
        self.skills: list[tuple[str, str]] = []
        self.plan: str | None = None
        #: What the scenario declares: hooks (:mod:`.hooks`), tools and MCP servers (their
        #: instruction deltas are re-announced after every compaction, 003:610).
        self.hooks = HookSet()
        self.declared_tools: list[str] = []
        self.mcp_servers: dict[str, str] = {}
        #: The request view (tiers 1 and 3, the count, the body): kept as the context grows, or
        #: re-derived from the whole context on every request with ``naive=True``.
        self.naive = naive
        self._tiers: NaiveView | IncrementalView = NaiveView(self) if naive else IncrementalView(self)
        self._context_management: tuple[EngineConfig | None, dict[str, Any]] = (None, {})

    # -- building the history ------------------------------------------------------------------
    def append(self, message: Any) -> None:
        """Add a message to the context; the transcript gets it first, so nothing is ever lost."""
        self.transcript.append(message)
        self.messages.append(message)
        self.history.append(message)
        for use in tool_uses(message):
            if use.id not in self._tools:
                self._set_tool(use.id, use.name, None)

    def announce(self, now: datetime) -> None:
        """The session's start: the tool and MCP instruction deltas of what it declares, and the
        outputs of the SessionStart hooks for ``startup``, as attachments (nothing when the
        session declares none)."""
        for message in [*tool_deltas(self.declared_tools, self.mcp_servers, ids=self.ids, now=now),
                        *self.hooks.session_start("startup", ids=self.ids, now=now)]:
            self.append(message)

    def _set_tool(self, tool_use_id: str, name: str, declared_limit: int | None) -> None:
        if self._tools.get(tool_use_id, ("", None))[0] != name:
            self._tiers.tool_renamed(tool_use_id)
        self._tools[tool_use_id] = (name, declared_limit)

    def emit(self, tier: str, action: str, **kw: Any) -> Event:
        event = Event(tier, action, self.turn, **kw)
        self.events.append(event)
        return event

    def tool_name(self, tool_use_id: str) -> tuple[str, int | None]:
        return self._tools.get(tool_use_id, ("", None))

    def _name(self, tool_use_id: str) -> str:
        return self._tools.get(tool_use_id, ("", None))[0]

    # -- tool time: Read limits and dedupe (tiers 1-2) -----------------------------------------
    def tool_results(self, outcomes: list[ToolOutcome]) -> list[ToolResultBlock]:
        """The tool_result blocks the tools return for ``outcomes`` (one assistant message's calls).

        Read applies its own limits (never persisted, 003:416); a Read that repeats an unchanged
        earlier read returns the unchanged-file stub (tier 2); edit tools move the file version on.
        """
        in_context = self._tiers.results_in_context()
        blocks = []
        for o in outcomes:
            self._set_tool(o.use.id, o.use.name, o.declared_limit)
            content, is_error = o.content, o.is_error
            if o.use.name == "Read" and not is_error and isinstance(content, str):
                error = read_limit_error(content, self.config)
                if error is not None:
                    self.emit("budget", "read_limit", ids=[o.use.id], detail=error)
                    content, is_error = error, True
                else:
                    content = read_line_cap(content, self.config)
                    hidden = (self.micro.cleared_ids, self.micro.cache_deleted_ids)
                    if self.reads.check_read(o.use, content, in_context=in_context, hidden=hidden) is not None:
                        self.emit("dedupe", "file_unchanged_stub", ids=[o.use.id],
                                  detail=str(o.use.input.get("file_path")))
                        content = FILE_UNCHANGED_STUB
                    else:
                        self.reads.record_read(o.use, content, self.messages[-1].timestamp if self.messages else datetime.now())
            if not is_error and _empty(content):
                # Empty-result injection (003:380 "空结果注入", 004:169 "空输出提醒"): an empty
                # result could read as the end of the turn; the model gets a marker instead.
                content = empty_result_marker(o.use.name)
            self.reads.note_edit(o.use, failed=is_error)
            if o.use.name == "Skill" and not is_error:
                self.skills.insert(0, (str(o.use.input.get("skill") or o.use.input.get("command") or "skill"),
                                       content if isinstance(content, str) else ""))
            if o.use.name == "ExitPlanMode" and isinstance(o.use.input.get("plan"), str):
                self.plan = o.use.input["plan"]
            blocks.append(ToolResultBlock(tool_use_id=o.use.id, content=content, is_error=is_error))
        return blocks

    # -- after each response: session-memory extraction (tier 4) -------------------------------
    def after_response(self, now: datetime) -> None:
        """Post-sampling hook: update the session notes when the triggers say so (004:318-350)."""
        if not self.config.session_memory_enabled or not self.messages:
            return
        last = self.messages[-1]
        if not isinstance(last, AssistantMessage):
            return
        calls = self.memory.note_response(last)
        tokens = self._tiers.context_tokens()
        if not should_extract(self.memory, tokens, calls, self.config):
            return
        view = self._tiers.current()
        prompt = self.prompts.render_session_memory_update(self.memory.content)
        try:
            reply = whole_reply(self.llm)(task="session_memory",
                                            messages=extraction_request(view, self.memory.content, prompt,
                                                                        cache=getattr(self.llm, "caching", False)),
                                            max_tokens=self.config.summary_request_max_tokens,
                                            context_window=self.config.context_window)
        except ModelError as exc:
            self.emit("session_memory", "extraction_failed", tokens_before=tokens, detail=str(exc))
            return
        notes = reply.text.strip()
        if not notes:
            self.emit("session_memory", "extraction_failed", tokens_before=tokens, detail="empty notes")
            return
        self.memory.record(notes, last.uuid, tokens)
        self.emit("session_memory", "extracted", tokens_before=tokens, ids=[last.uuid],
                  detail=f"extraction {self.memory.extractions}: notes cover up to {last.uuid}")

    # -- the request view (tiers 1 and 3) -------------------------------------------------------
    def _budget_view(self) -> list[Any]:
        return self._tiers.budget_view()

    def _view(self) -> list[Any]:
        return self._tiers.view()

    def _apply_tiers(self, now: datetime) -> tuple[list[Any], int, list[dict[str, str]]]:
        """The request view, the context's token count, and this request's cache edits.

        Tokens freed by microcompact are subtracted before the threshold check (003:526-532):
        only for results behind the usage anchor, which counted them; results after the anchor are
        estimated from the cleared view already.
        """
        tokens, edits = self._tiers.apply(now)
        return self._tiers.current(), tokens, edits

    def input_tokens(self, prepared: PreparedRequest) -> int:
        """What the API would report as ``input_tokens`` for ``prepared``: its size, less the results
        that ``cache_edits`` deleted server-side (the local messages still hold them)."""
        return self._tiers.input_tokens(prepared.body)

    # -- the pipeline ----------------------------------------------------------------------------
    def prepare(self, now: datetime) -> PreparedRequest:
        """Prepare the next model request: run the tiers, auto-compact when due, build the body.

        The view is materialised as a list only when a compaction needs it; the body's ``messages``
        come from the request view (:mod:`.incremental`: the groups kept, shared with earlier bodies).
        """
        self.turn += 1
        first_event = len(self.events)
        tokens, edits = self._tiers.apply(now)
        compaction = None
        if should_autocompact(tokens, self.config, self.tracking):
            compaction = self._autocompact(now, self._tiers.current(), tokens)
            if compaction is not None:
                tokens, edits = self._tiers.apply(now)
        warning = token_warning_state(tokens, self.config)
        refused = False
        if warning.at_blocking_limit:
            refused = self.config.blocking_limit_enforced and compaction is None
            self.emit("autocompact", "blocking_limit", tokens_before=tokens,
                      detail=f"context at {tokens} tokens, blocking limit {self.config.blocking_limit}"
                             + (f": turn refused, not sent ({self._why_blocked()}); a /compact or the next "
                                "automatic compaction unblocks it" if refused else ""))
        body: dict[str, Any] = {"model": self.model, "max_tokens": MAIN_MAX_TOKENS, "system": self.system_prompt,
                                "messages": self._tiers.api_messages()}
        if self.config.api_context_management:
            if self._context_management[0] is not self.config:  # built and checked once per config
                self._context_management = (self.config, context_management(self.config))
            body["context_management"] = self._context_management[1]  # shared, like the messages
        if edits:
            body["cache_edits"] = edits  # Claude Code's cached-microcompact directives
        if not refused:
            self.requests.append(body)
            if self.compactions:
                self.compactions[-1].requests_after.append(body)
        return PreparedRequest(body=body, tokens=tokens, warning=warning, turn=self.turn,
                               events=self.events[first_event:], compaction=compaction, refused=refused)

    def _why_blocked(self) -> str:
        if not self.config.autocompact_enabled:
            return "auto-compaction is off"
        if self.tracking.tripped:
            return "the circuit breaker has tripped: auto-compaction is off for the session"
        return "this turn's auto-compaction failed"

    def _attachments(self, now: datetime, kept: Sequence[Any] = ()) -> list[Any]:
        kept_paths = {u.input.get("file_path") for m in kept for u in tool_uses(m) if u.name == "Read"}
        return build_attachments(files=self.reads.recent_files(), skills=self.skills, plan=self.plan,
                                 config=self.config, ids=self.ids, now=now,
                                 exclude_paths={p for p in kept_paths if isinstance(p, str)},
                                 tools=self.declared_tools, mcp_servers=self.mcp_servers)

    def _reinject(self, result: CompactionResult, now: datetime, attachments: bool = True) -> None:
        """The post-compact context after the summary: attachments (unless the caller built them),
        then the SessionStart hooks' results (003:221-229, 004:571-575); its size again."""
        if attachments:
            result.attachments = self._attachments(now, result.kept)
        result.hook_results = self.hooks.session_start("compact", ids=self.ids, now=now)
        if result.hook_results:
            self.emit("hooks", "session_start", ids=[m.uuid for m in result.hook_results],
                      detail=f"{len(result.hook_results)} SessionStart hook result(s) after the compaction")
        result.post_tokens = estimate_messages(result.post_messages, self.config)

    def _pre_compact(self, trigger: str, instructions: str | None, tokens: int) -> tuple[bool, str | None]:
        """Run the PreCompact hooks (003:179-181, 004:460-471): ``(go on, instructions)``. A
        blocking hook fails the compaction (an automatic one counts toward the breaker)."""
        if not self.hooks:
            return True, instructions
        outcome = self.hooks.pre_compact(trigger, instructions)
        if outcome.blocked is not None:
            self.emit("hooks", "pre_compact_blocked", tokens_before=tokens, detail=outcome.blocked)
            self._failed(CompactionFailed(f"a PreCompact hook blocked the compaction: {outcome.blocked}"),
                         trigger, tokens)
            return False, instructions
        if outcome.hook_output:
            self.emit("hooks", "pre_compact", tokens_before=tokens,
                      detail=f"{outcome.ran} PreCompact hook(s): their output joins the compaction's custom instructions")
        return True, outcome.instructions

    def _autocompact(self, now: datetime, view: list[Any], tokens: int) -> CompactionResult | None:
        """``autoCompactIfNeeded`` (004:268-316): session memory first, else full compaction."""
        history_before = list(self.history)
        if self.config.session_memory_enabled:
            result = session_memory_compact(
                self.messages, view, self.memory, config=self.config, prompts=self.prompts, ids=self.ids, now=now,
                transcript_path=self.shown_transcript_path, pre_tokens=tokens)
            if result is not None:
                self._reinject(result, now)
                if result.post_tokens < self.config.autocompact_threshold:
                    self._install(result, history_before, tokens)
                    self.tracking.record_success()
                    return result
                self.emit("session_memory", "fallback_to_full", tokens_before=tokens, tokens_after=result.post_tokens,
                          detail=f"session-memory compaction would leave {result.post_tokens} tokens, still at or "
                                 f"above the threshold {self.config.autocompact_threshold}")
        return self._full(now, view, tokens, "auto", None, history_before)

    def _in_flight(self, view: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
        """``(messages, view, in_flight)``: the context split from a trailing assistant message whose
        tool calls have no results yet (results always come in the next message).

        Assumed, as no seed describes it: Claude Code's loop compacts between API rounds, so every
        call is normally answered when it compacts. When a compaction runs while calls are in flight
        (a scripted ``in_flight`` turn: ``/compact`` while a long tool runs), the engine treats the
        unanswered message as session-memory compaction treats a tool pair (never split, 004:400-450):
        it is not summarised — a request ending in an unanswered ``tool_use`` is API-invalid — but kept
        verbatim at the end of the post-compact context, so the results that arrive next answer it.
        """
        # One response may be several records (Claude Code writes a record per content block, all
        # with the response's message id): the whole trailing run of assistant records is in flight.
        start = len(self.messages)
        while start > 0 and isinstance(self.messages[start - 1], AssistantMessage):
            start -= 1
        if any(tool_uses(m) for m in self.messages[start:]):
            return self.messages[:start], view[:start], self.messages[start:]
        return self.messages, view, []

    def compact(self, now: datetime, *, instructions: str | None = None, partial: str | None = None,
                messages: int | None = None) -> CompactionResult | None:
        """A manual ``/compact`` (optionally with instructions), or a partial compaction
        (``partial`` = ``up_to``: summarise all but the last ``messages`` messages; ``from``:
        summarise the last ``messages`` messages). Manual failures are reported as events but do not
        count toward the auto-compaction circuit breaker. An assistant message whose calls are still
        in flight is kept, unsummarised, at the end (:meth:`_in_flight`)."""
        self.turn += 1
        view, tokens, _ = self._apply_tiers(now)
        history_before = list(self.history)
        context, view, in_flight = self._in_flight(view)
        if in_flight:
            running = [u.id for m in in_flight for u in tool_uses(m)]
            self.emit("compact", "in_flight_kept", ids=running,
                      detail=f"{len(running)} tool calls still running: their message is kept "
                             "after the summary, unsummarised")
        if partial is None and instructions is None and self.config.session_memory_enabled:
            # /compact without instructions tries session memory first; with instructions it goes
            # straight to full compaction (004:453).
            result = session_memory_compact(
                context, view, self.memory, config=self.config, prompts=self.prompts, ids=self.ids, now=now,
                transcript_path=self.shown_transcript_path, pre_tokens=tokens, trigger="manual")
            if result is not None:
                result.in_flight = in_flight
                self._reinject(result, now)
                self._install(result, history_before, tokens)
                return result
        if partial is None:
            return self._full(now, view, tokens, "manual", instructions, history_before, in_flight)
        pivot = len(context) - (messages or 0)
        go, instructions = self._pre_compact("manual", instructions, tokens)
        if not go:
            return None
        try:
            result = partial_compact(context, view, pivot, partial, llm=self.llm, config=self.config,
                                     prompts=self.prompts, ids=self.ids, now=now,
                                     transcript_path=self.shown_transcript_path, pre_tokens=tokens,
                                     custom_instructions=instructions)
        except CompactionFailed as exc:
            self._failed(exc, "manual", tokens)
            return None
        # Partial compaction re-injects attachments and runs SessionStart hooks too (004:567, 004:574).
        result.in_flight = in_flight
        self._reinject(result, now)
        self._install(result, history_before, tokens)
        return result

    def install_recorded(self, now: datetime, *, trigger: str, pre_tokens: int, summary: str) -> CompactionResult:
        """Install a compaction recorded in a real transcript (an imported session's
        ``recorded_compaction``): Claude Code's own summary message replaces the context, as it did
        in the session, without a model call. Graded as kind ``transcript``."""
        self.turn += 1
        _, tokens, _ = self._apply_tiers(now)
        history_before = list(self.history)
        context = [m for m in self.messages if not isinstance(m, CompactBoundary)]
        boundary = CompactBoundary(uuid=self.ids.uuid(), timestamp=now,
                                   trigger="manual" if trigger == "manual" else "auto", pre_tokens=pre_tokens,
                                   logical_parent_uuid=context[-1].uuid if context else None)
        message = UserMessage(uuid=self.ids.uuid(), timestamp=now, is_compact_summary=True, content=summary)
        result = CompactionResult(
            kind="transcript", trigger=boundary.trigger, boundary=boundary, summary_message=message,
            summary=summary, raw_reply=summary, summarized=context, kept=[], attachments=[],
            pre_tokens=pre_tokens or tokens, post_tokens=0, request=None, usage=Usage(),
            notes=[f"recorded: Claude Code's own summary, installed as in the session (the engine counted "
                   f"{tokens:,} tokens at this point)"])
        result.post_tokens = estimate_messages(result.post_messages, self.config)
        self._install(result, history_before, tokens)
        return result

    def _full(self, now: datetime, view: list[Any], tokens: int, trigger: str, instructions: str | None,
              history_before: list[Any], in_flight: Sequence[Any] = ()) -> CompactionResult | None:
        go, instructions = self._pre_compact(trigger, instructions, tokens)
        if not go:
            return None
        # After a failed compaction the next attempt goes over the same conversation, a turn or so
        # longer (auto-compaction tries up to the circuit breaker's 3, then a manual /compact):
        # each attempt after a failure marks it as a cached prefix and the next reads it. A first
        # attempt marks nothing (a write costs 25 % more than plain input; most are sent once).
        cache = getattr(self.llm, "caching", False) and self._compaction_failed
        try:
            result = compact_conversation(
                view, llm=self.llm, config=self.config, prompts=self.prompts, ids=self.ids, now=now,
                transcript_path=self.shown_transcript_path, pre_tokens=tokens, trigger=trigger,
                custom_instructions=instructions, attachments=self._attachments(now), cache=cache)
        except CompactionFailed as exc:
            self._failed(exc, trigger, tokens)
            return None
        if trigger == "auto":
            self.tracking.record_success()
        result.in_flight = list(in_flight)
        self._reinject(result, now, attachments=False)
        self._install(result, history_before, tokens)
        return result

    def _failed(self, exc: CompactionFailed, trigger: str, tokens: int) -> None:
        self._compaction_failed = True
        self._ptl_events(exc.ptl_steps)
        if trigger == "auto":
            self.tracking.record_failure()
        self.emit("autocompact" if trigger == "auto" else "compact", "failed", tokens_before=tokens,
                  detail=f"{exc.reason} (consecutive failures: {self.tracking.consecutive_failures})")
        if trigger == "auto" and self.tracking.tripped:
            self.emit("autocompact", "circuit_breaker_tripped", tokens_before=tokens,
                      detail=f"{self.tracking.consecutive_failures} consecutive failures; "
                             "auto-compaction is off for the rest of the session")

    def _ptl_events(self, steps: list[Any]) -> None:
        for step in steps:
            self.emit("ptl", "truncated", tokens_before=step.tokens_before, tokens_after=step.tokens_after,
                      detail=f"compaction request too long (gap {step.gap if step.gap is not None else 'unknown'}): "
                             f"dropped the oldest {step.dropped_groups} API rounds")

    def _history_uuids(self) -> set[str]:
        """``{m.uuid for m in self.history}``, extended by what was appended since the last call
        (built anew when the list was replaced or changed other than by appending)."""
        history, cached = self.history, self._uuids
        if cached is None or cached[0] is not history or len(history) < cached[1] or (
                cached[1] and history[cached[1] - 1] is not cached[2]):
            cached = self._uuids = (history, 0, None, set())
        known = cached[3]
        known.update(m.uuid for m in history[cached[1]:])
        self._uuids = (history, len(history), history[-1] if history else None, known)
        return known

    def _install(self, result: CompactionResult, history_before: list[Any], tokens: int) -> None:
        self._compaction_failed = False
        # Graders judge the summary against what the session really held, not against the view
        # (a result cleared by microcompact before the summary is a loss they should see).
        by_uuid = {m.uuid: m for m in self.messages}
        result.sent = list(result.summarized)
        result.summarized = [by_uuid.get(m.uuid, m) for m in result.summarized]
        self._ptl_events(result.ptl_steps)
        known = self._history_uuids()
        for message in result.post_messages:
            if message.uuid not in known:  # kept messages are in the transcript already
                self.transcript.append(message)
                self.history.append(message)
        # Usage anchors of kept responses counted the context before the compaction: drop them, the
        # next response sets a new anchor (otherwise the count would jump back above the threshold).
        self.messages = [m.model_copy(update={"usage": None}) if isinstance(m, AssistantMessage) and m.usage
                         else m for m in result.post_messages]
        # Reads whose results left the context can no longer be referred to by the stub.
        live = {b.tool_use_id for m in self.messages for b in tool_results(m)}
        self.reads.forget({r.tool_use_id for r in self.reads.reads.values()} - live)
        if result.kind in ("full", "transcript"):
            self.memory.last_summarized_message_id = None  # setLastSummarizedMessageId(undefined), 004:301
        self.compactions.append(CompactionRecord(index=len(self.compactions) + 1, turn=self.turn,
                                                 result=result, history=history_before))
        tier = ("recorded" if result.kind == "transcript"
                else "compact" if result.trigger == "manual" else "autocompact")
        extras = f"; {len(result.kept)} kept" if result.kept else ""
        extras += f"; {len(result.attachments)} attachments" if result.attachments else ""
        self.emit(tier, f"{result.kind}_compaction", tokens_before=tokens, tokens_after=result.post_tokens,
                  ids=[result.boundary.uuid], detail=f"{len(result.summarized)} messages summarised{extras}")

    @property
    def last_assistant(self) -> AssistantMessage | None:
        for m in reversed(self.messages):
            if isinstance(m, AssistantMessage):
                return m
        return None

    @property
    def boundaries(self) -> list[CompactBoundary]:
        return [m for m in self.history if isinstance(m, CompactBoundary)]

    def compact_with(self, now: datetime, compactor: Any, *, trigger: str = "auto") -> CompactionResult | None:
        """Let an outside compactor decide and compact before the next request, instead of tier 4.

        ``compactor(messages, view, tokens)`` gets the context (original content), its request view
        (tiers 1-3 applied, as :meth:`prepare` computes it) and its token count, and returns a
        :class:`CompactionResult` to install (transcript, history, record and event, like any
        compaction) or None to leave the context as it is. A :class:`CompactionFailed` it raises is
        reported as a failed compaction (an ``auto`` one counts toward the circuit breaker in
        ``self.tracking``). Used by the compactors of :mod:`pytest_ctxeval.compaction`,
        with auto-compaction off in the config. Call it right before :meth:`prepare`: what it does
        is numbered with the turn of the request prepared next.
        """
        self.turn += 1
        try:
            view, tokens, _ = self._apply_tiers(now)
            history_before = list(self.history)
            try:
                result = compactor(list(self.messages), view, tokens)
            except CompactionFailed as exc:
                self._failed(exc, trigger, tokens)
                return None
            if result is None:
                return None
            if trigger == "auto":
                self.tracking.record_success()
            self._install(result, history_before, tokens)
            return result
        finally:
            self.turn -= 1
