"""Running a compactor inside the engine's agent loop.

The runner (:func:`pytest_ctxeval.runner.run_scenario`) hands every decision point to a
:class:`CompactorDriver`:

* the run's engine config comes from the compactor (``configure``: auto-compaction and session
  memory off, tiers 1-3 as chosen);
* **before every model request** the driver calls :meth:`ContextManager.compact_with`, which runs
  tiers 1-3 and gives the driver the context, its view and its token count: the compactor may prune
  (results cleared with the engine's frozen clearing), then says whether to compact, and what it
  returns becomes the context — boundary, record, event and transcript exactly as for the engine's
  own compactions;
* a manual ``/compact`` step asks the compactor to compact at once (a partial compaction, a Claude
  Code feature, becomes a compaction of the whole context, with a note);
* after three automatic compactions in a row fail, automatic compaction stops for the session:
  the engine's circuit breaker (3, seed 000:210) applies to every compactor, since a harness must
  not call the model on every round for ever. PEERS.md gives no breaker for the peers.

A ``native`` compactor (``claude_code``) is the engine itself: the driver changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.config import EngineConfig
from ..engine.compact import CompactionFailed, CompactionResult
from ..engine.dedupe import FileReadState
from ..engine.microcompact import apply_cleared, freed_tokens
from ..errors import PromptTooLongError
from ..core.messages import AssistantMessage, CompactBoundary, UserMessage, tool_uses
from ..core.tokens import estimate_messages
from .base import CompactionState, Compacted, Compactor, CompactorUnavailable, compactor_config
from .formats import FREE_FORM, SummaryFormat

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    from ..grading.registry import CompactionCase
    from ..llm import LLM

__all__ = ["CompactorDriver", "CompactorCompaction", "configure", "compactor_recompact", "summary_format_of"]


@dataclass
class CompactorCompaction(CompactionResult):
    """A compaction a compactor made: ``context`` is the post-compact context, in order."""

    compactor: str = ""
    context: list[Any] = field(default_factory=list)

    @property
    def post_messages(self) -> list[Any]:
        return list(self.context)


class _NoDedupe(FileReadState):
    """Tier 2 off: a repeated read of an unchanged file returns the file again."""

    def check_read(self, use: Any, content: str, *, in_context: set[str], **_: Any) -> None:
        return None


def configure(compactor: Any, config: EngineConfig) -> EngineConfig:
    """The engine config of a run under ``compactor`` (its ``configure``, else the defaults of
    :class:`~pytest_ctxeval.compaction.base.BaseCompactor` with every tier on)."""
    hook = getattr(compactor, "configure", None)
    if getattr(compactor, "native", False) and hook is None:
        return config
    if hook is not None:
        return hook(config)
    return compactor_config(config)


def summary_format_of(compactor: Any) -> SummaryFormat | None:
    """The format graders read a compactor's summaries in: None for Claude Code's nine sections (the
    engine, or a ``ClaudeCode`` subclass), the compactor's ``summary_format``, else a free-form summary
    (facts searched in the whole post-compact context)."""
    from .claude_code import ClaudeCode

    if getattr(compactor, "native", False):
        return None
    if isinstance(compactor, ClaudeCode):  # a subclass may declare its own format
        return getattr(compactor, "summary_format", None)
    return getattr(compactor, "summary_format", None) or FREE_FORM


def _in_flight(messages: list[Any]) -> int:
    """How many trailing messages are a call still running (0 or 1)."""
    return 1 if messages and isinstance(messages[-1], AssistantMessage) and tool_uses(messages[-1]) else 0


class CompactorDriver:
    """One run's link between the agent loop, the engine and a compactor."""

    def __init__(self, compactor: Any, llm: Any):
        self.compactor = compactor
        self.llm = llm
        self.name = getattr(compactor, "name", type(compactor).__name__)
        self.native = bool(getattr(compactor, "native", False))
        backends = getattr(compactor, "backends", None)
        backend = getattr(llm, "backend", "offline")
        if backends is not None and backend not in backends:
            reason = getattr(compactor, "unavailable_reason", None)
            raise CompactorUnavailable(reason(backend) if callable(reason) else
                                      f"the {self.name} compactor runs only on the {', '.join(backends)} backend"
                                      f"{'s' if len(backends) > 1 else ''}, not {backend}")
        self.cm: Any = None
        self.store: dict[str, Any] = {}

    def attach(self, cm: Any) -> None:
        self.cm = cm
        tiers = getattr(self.compactor, "tiers", None)
        if tiers is not None and "dedupe" not in tiers:
            cm.reads = _NoDedupe()

    # -- the loop's decision points ------------------------------------------------------------
    def before_request(self, now: datetime) -> None:
        """Before a model request: prune, decide, compact (a native compactor: nothing to do)."""
        if self.native or self.cm.tracking.tripped:
            return
        self.cm.compact_with(now, lambda m, v, t: self._compact(m, v, t, now, "auto", None), trigger="auto")

    def manual(self, now: datetime, *, instructions: str | None = None, partial: str | None = None,
               messages: int | None = None) -> None:
        """A ``/compact`` step."""
        cm = self.cm
        if self.native:
            cm.compact(now, instructions=instructions, partial=partial, messages=messages)
            return
        if partial is not None:
            cm.emit("compact", "partial_as_full",
                    detail=f"partial compaction ('{partial}') is Claude Code's; the {self.name} compactor compacts "
                           "the whole context")
        cm.compact_with(now, lambda m, v, t: self._compact(m, v, t, now, "manual", instructions), trigger="manual")

    # -- one decision ---------------------------------------------------------------------------
    def _state(self, messages: list[Any], view: list[Any], tokens: int, now: datetime, trigger: str,
               instructions: str | None) -> CompactionState:
        cm = self.cm
        return CompactionState(messages=messages, view=view, tokens=tokens, config=cm.config, llm=self.llm,
                               trigger=trigger, now=now, ids=cm.ids, history=list(cm.history),
                               instructions=instructions, session_dir=cm.session_dir, turn=cm.turn,
                               shown_session_dir=cm.shown_transcript_path.removesuffix(".jsonl"), store=self.store,
                               emit=lambda tier, action, **kw: cm.emit(tier, action, **kw))

    def _compact(self, messages: list[Any], view: list[Any], tokens: int, now: datetime, trigger: str,
                 instructions: str | None) -> CompactionResult | None:
        cm = self.cm
        if len(view) != len(messages) or any(a.uuid != b.uuid for a, b in zip(messages, view)):
            view = list(messages)  # an engine whose view is not index-aligned: fall back to the originals
        cut = len(messages) - _in_flight(messages)
        in_flight = messages[cut:]
        state = self._state(messages[:cut], view[:cut], tokens, now, trigger, instructions)
        prune = getattr(self.compactor, "prune", None)
        if trigger == "auto" and prune is not None:
            ids = [i for i in (prune(state) or []) if i not in cm.micro.cleared_ids]
            if ids:
                freed = freed_tokens(state.view, set(ids), cm.config)
                # The engine's frozen clearing (microcompact's): the model sees the cleared marker in
                # this and every later request, the context and transcript keep the originals. The
                # state object is replaced, not changed in place: the engine's incremental view
                # rebuilds when its tier state is swapped (engine/incremental.py).
                cm.micro = replace(cm.micro, cleared_ids=set(cm.micro.cleared_ids) | set(ids),
                                   cache_deleted_ids=set(cm.micro.cache_deleted_ids))
                cm.reads.forget(set(ids))
                state.view = apply_cleared(state.view, set(ids))
                cm.emit("prune", "cleared", tokens_before=tokens, ids=ids,
                        detail=f"{self.name}: {len(ids)} old tool results cleared (~{freed:,} tokens)")
        if trigger == "auto" and not self.compactor.should_compact(state):
            return None
        if not state.messages:
            raise CompactionFailed("nothing to compact: the context is empty")
        try:
            done = self.compactor.compact(state)
        except PromptTooLongError as exc:
            raise CompactionFailed(f"the {self.name} compaction request is too long ({exc})") from None
        if done is None:
            return None
        return self._result(done, state, trigger, in_flight)

    def _result(self, done: Compacted, state: CompactionState, trigger: str, in_flight: list[Any]) -> CompactorCompaction:
        if not isinstance(done, Compacted):
            raise CompactionFailed(f"the {self.name} compactor's compact() returned {type(done).__name__}, not Compacted")
        config = state.config
        context = [m for m in done.messages if not isinstance(m, CompactBoundary)]
        summary_message = next((m for m in context if isinstance(m, UserMessage) and m.is_compact_summary), None)
        boundary = CompactBoundary(uuid=state.uuid(), timestamp=state.now or datetime.now(),
                                   trigger="manual" if trigger == "manual" else "auto", pre_tokens=state.tokens,
                                   logical_parent_uuid=state.messages[-1].uuid if state.messages else None)
        post = [boundary, *context, *in_flight]
        result = CompactorCompaction(
            kind=done.kind or self.name, trigger=boundary.trigger, boundary=boundary,
            summary_message=summary_message,  # type: ignore[arg-type]  # None when there is no summary
            summary=done.summary, raw_reply=done.raw_reply or done.summary,
            summarized=list(done.summarized if done.summarized is not None else state.messages),
            kept=[m for m in context if m is not summary_message], attachments=[], pre_tokens=state.tokens,
            post_tokens=estimate_messages(post, config), request=done.request, usage=done.usage,
            custom_instructions=state.instructions, notes=list(done.notes), in_flight=list(in_flight),
            compactor=self.name, context=post)
        return result


def compactor_recompact(compactor: Compactor, llm: LLM) -> Callable[[CompactionCase], CompactionCase | None]:
    """A ``case -> case`` that compacts a compaction's post-compact context once more with
    ``compactor`` (a manual compaction): the next generation for the drift grader."""
    from ..grading.registry import CompactionCase
    from ..core.ids import IdFactory
    from ..core.messages import text_of

    def recompact(case: CompactionCase) -> CompactionCase | None:
        config = case.config
        context = [m for m in case.post_messages if not isinstance(m, CompactBoundary)]
        if config is None or not context:
            return None
        cut = len(context) - _in_flight(context)
        context = context[:cut]
        state = CompactionState(messages=context, view=context, tokens=estimate_messages(context, config),
                                config=config, llm=llm, trigger="manual", now=context[-1].timestamp,
                                ids=IdFactory(f"{case.source}:regen:{case.index}"), history=list(case.history))
        try:
            done = compactor.compact(state)
        except (CompactionFailed, PromptTooLongError):
            return None
        if done is None:
            return None
        post = [m for m in done.messages if not isinstance(m, CompactBoundary)]
        summary = next((m for m in post if isinstance(m, UserMessage) and m.is_compact_summary), None)
        return CompactionCase(
            source=case.source, index=case.index + 1, kind=done.kind or str(getattr(compactor, "name", "compactor")),
            trigger="manual", summary=done.summary, summary_message=text_of(summary.content) if summary else "",
            summarized=context, history=case.history + [m for m in context if m not in case.history],
            post_messages=post, expect=case.expect, raw_reply=done.raw_reply, transcript_path=case.transcript_path,
            pre_tokens=state.tokens, post_tokens=estimate_messages(post, config), turn=case.turn,
            origin="regenerated", config=config, compactor=case.compactor, summary_format=case.summary_format)

    return recompact
