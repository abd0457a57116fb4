"""The per-request pipeline: what Claude Code does before every model call.

:class:`ContextManager` holds one session's context (the messages the model will see), its full
history (everything ever appended, which the transcript also keeps), and the auto-compaction state.
:meth:`ContextManager.prepare` runs the tiers in order (000:98-175, 003:22-26)::

    L1 tool-result budget -> L2 dedupe -> L3 microcompact -> L4 auto-compact (session memory,
    else full) -> L5 PTL retry inside compaction

and returns the request to send plus the events of every tier that acted. Tiers 1-3 and session
memory arrive with issue 3; :meth:`_apply_tiers` is their seam.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..config import EngineConfig
from ..ids import IdFactory
from ..llm import LLM
from ..messages import AssistantMessage, CompactBoundary, to_api
from ..tokens import count_tokens
from ..transcript import TranscriptWriter
from .autocompact import AutoCompactTracking, TokenWarningState, should_autocompact, token_warning_state
from .compact import CompactionFailed, CompactionResult, compact_conversation
from .prompt import PromptSet

__all__ = ["Event", "PreparedRequest", "CompactionRecord", "ContextManager", "DEFAULT_SYSTEM_PROMPT"]

DEFAULT_SYSTEM_PROMPT = ("You are an interactive coding agent. Use the tools available to help the user "
                         "with software engineering tasks.")
#: Output budget of the main agent requests the pipeline prepares (not sent offline).
MAIN_MAX_TOKENS = 8_192


@dataclass
class Event:
    """Something a tier did: ``Event("autocompact", "compacted", turn=12, tokens_before=16_900,
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


@dataclass
class CompactionRecord:
    """A compaction as it happened in a run, with what graders need around it."""

    index: int
    turn: int
    result: CompactionResult
    history: list[Any]                      # every message of the session before it
    requests_after: list[dict[str, Any]] = field(default_factory=list)


class ContextManager:
    """One agent session's context, prepared request by request.

    >>> from pytest_ctxeval.llm import make_llm
    >>> from pytest_ctxeval.messages import UserMessage
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
    ):
        self.config = config
        self.llm = llm
        self.transcript = transcript
        self.prompts = prompts or PromptSet()
        self.ids = ids or IdFactory(transcript.session_id)
        self.system_prompt = system_prompt
        self.model = model or llm.model
        self.messages: list[Any] = []
        self.history: list[Any] = []
        self.events: list[Event] = []
        self.compactions: list[CompactionRecord] = []
        self.requests: list[dict[str, Any]] = []
        self.tracking = AutoCompactTracking(max_failures=config.max_consecutive_failures)
        self.turn = 0

    # -- building the history ------------------------------------------------------------------
    def append(self, message: Any) -> None:
        """Add a message to the context; the transcript gets it first, so nothing is ever lost."""
        self.transcript.append(message)
        self.messages.append(message)
        self.history.append(message)

    def emit(self, tier: str, action: str, **kw: Any) -> Event:
        event = Event(tier, action, self.turn, **kw)
        self.events.append(event)
        return event

    # -- the pipeline ----------------------------------------------------------------------------
    def _apply_tiers(self, now: datetime, events: list[Event]) -> list[Any]:
        """Tiers 1-3 (budget, dedupe, microcompact): the messages as the request will carry them.
        The identity until issue 3; the context itself (and the transcript) stay unchanged."""
        return self.messages

    def prepare(self, now: datetime) -> PreparedRequest:
        """Prepare the next model request: run the tiers, auto-compact when due, build the body."""
        self.turn += 1
        first_event = len(self.events)
        view = self._apply_tiers(now, [])
        tokens = count_tokens(view, self.config)
        compaction = None
        if should_autocompact(tokens, self.config, self.tracking):
            compaction = self._compact(now, trigger="auto", tokens=tokens)
            if compaction is not None:
                view = self._apply_tiers(now, [])
                tokens = count_tokens(view, self.config)
        warning = token_warning_state(tokens, self.config)
        if warning.at_blocking_limit:
            self.emit("autocompact", "blocking_limit", tokens_before=tokens,
                      detail=f"context at {tokens} tokens, blocking limit {self.config.blocking_limit}")
        body = {"model": self.model, "max_tokens": MAIN_MAX_TOKENS, "system": self.system_prompt,
                "messages": to_api(view)}
        self.requests.append(body)
        if self.compactions:
            self.compactions[-1].requests_after.append(body)
        return PreparedRequest(body=body, tokens=tokens, warning=warning, turn=self.turn,
                               events=self.events[first_event:], compaction=compaction)

    def compact(self, now: datetime, *, instructions: str | None = None) -> CompactionResult | None:
        """A manual ``/compact`` (optionally with instructions). Manual failures are reported as
        events but do not count toward the auto-compaction circuit breaker."""
        self.turn += 1
        return self._compact(now, trigger="manual", tokens=count_tokens(self.messages, self.config),
                             instructions=instructions)

    def _compact(self, now: datetime, *, trigger: str, tokens: int,
                 instructions: str | None = None) -> CompactionResult | None:
        history_before = list(self.history)
        try:
            result = compact_conversation(
                self.messages, llm=self.llm, config=self.config, prompts=self.prompts, ids=self.ids,
                now=now, transcript_path=str(self.transcript.path), pre_tokens=tokens, trigger=trigger,
                custom_instructions=instructions)
        except CompactionFailed as exc:
            if trigger == "auto":
                self.tracking.record_failure()
            self.emit("autocompact" if trigger == "auto" else "compact", "failed", tokens_before=tokens,
                      detail=f"{exc.reason} (consecutive failures: {self.tracking.consecutive_failures})")
            if trigger == "auto" and self.tracking.tripped:
                self.emit("autocompact", "circuit_breaker_tripped", tokens_before=tokens,
                          detail=f"{self.tracking.consecutive_failures} consecutive failures; "
                                 "auto-compaction is off for the rest of the session")
            return None
        if trigger == "auto":
            self.tracking.record_success()
        for message in result.post_messages:
            self.transcript.append(message)
            self.history.append(message)
        self.messages = list(result.post_messages)
        self.compactions.append(CompactionRecord(index=len(self.compactions) + 1, turn=self.turn,
                                                 result=result, history=history_before))
        self.emit("autocompact" if trigger == "auto" else "compact", f"{result.kind}_compaction",
                  tokens_before=tokens, tokens_after=result.post_tokens,
                  ids=[result.boundary.uuid], detail=f"{len(result.summarized)} messages summarised")
        return result

    @property
    def last_assistant(self) -> AssistantMessage | None:
        for m in reversed(self.messages):
            if isinstance(m, AssistantMessage):
                return m
        return None

    @property
    def boundaries(self) -> list[CompactBoundary]:
        return [m for m in self.history if isinstance(m, CompactBoundary)]
