"""The :class:`Compactor` protocol and what a compactor is given and returns.

A compactor decides *when* to compact and *what the model sees afterwards*::

    class KeepLastTwenty:
        name = "keep_last_20"

        def should_compact(self, state: CompactionState) -> bool:
            return state.tokens >= 0.8 * state.config.context_window

        def compact(self, state: CompactionState) -> Compacted:
            tail = state.messages[-20:]
            ...                                     # start the tail at a user turn, summarise the rest
            return Compacted(messages=[state.summary_message(text), *tail], summary=text)

Before every model request the harness runs the engine's tiers 1-3 (tool-result budget, dedupe,
microcompact; see :class:`BaseCompactor` ``tiers`` to turn them off), then asks the compactor
:meth:`Compactor.should_compact`, and when it says yes, installs what :meth:`Compactor.compact`
returns as the context the model sees from then on. A manual ``/compact`` step calls ``compact``
directly. Graders then judge what the model sees, wherever a fact sits: in the summary or in a
message the compactor kept.

Token constants of the peers (PEERS.md) are stated for a 200,000-token window and scale with
``context_window / 200_000`` exactly as the engine's own budgets do
(:meth:`pytest_ctxeval.core.config.EngineConfig.for_window`): :func:`scaled`. Fractions (Codex's 90 %,
Gemini's 0.5 and 30 %), counts (keep the last 10 observations, 2 protected turns) and character
cuts stated per item are ratios or counts and do not scale, except where a cut bounds what the
model reads, as the engine's own 2,000-character preview does and scales: opencode's tool-result
cut in the serialised head and Gemini CLI's preview of an old output scale too (each compactor's
module says so).
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from collections.abc import Callable

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from ..llm.whole import whole_reply
from ..core.config import REFERENCE_WINDOW, EngineConfig
from ..engine.compact import CompactionFailed
from ..engine.dedupe import media_stripped
from ..errors import CtxEvalError, ModelError, UsageError
from ..core.ids import IdFactory
from ..core.messages import CompactBoundary, UserMessage, Usage, to_api
from .formats import SummaryFormat

if TYPE_CHECKING:  # pragma: no cover
    from ..llm import LLM

__all__ = ["Compactor", "BaseCompactor", "CompactionState", "Compacted", "CompactorUnavailable", "scaled",
           "compactor_config", "tier_changes",
           "PROMPTS", "render", "TIERS", "CompactionFailed"]

#: Where the compactors' prompt templates live (our own wording of each peer's structure).
PROMPTS = Path(__file__).resolve().parent / "prompts"
#: The engine tiers every compactor may keep (``tiers="all"``, the default) or drop.
TIERS = ("budget", "dedupe", "microcompact")


class CompactorUnavailable(CtxEvalError):
    """The compactor cannot run on this backend; the scenario is skipped with this reason."""


def scaled(tokens: int, config: EngineConfig) -> int:
    """A token constant stated for a 200,000-token window, scaled to ``config``'s window.

    >>> scaled(20_000, EngineConfig.for_window(20_000))
    2000
    >>> scaled(20_000, EngineConfig.for_window(200_000))
    20000
    """
    return max(1, round(tokens * config.context_window / REFERENCE_WINDOW))


@dataclass
class CompactionState:
    """What a compactor sees when it is asked to decide or compact.

    ``messages`` is the context as the engine holds it (original content); ``view`` the same
    messages as the model sees them (tiers 1-3 applied: persisted results, cleared results), index
    by index; ``tokens`` the context's size as the engine counts it (the last API usage plus an
    estimate of what came after, as Claude Code counts); ``history`` everything the session ever
    held; ``store`` is the compactor's own per-run state (a compactor object may serve several runs at
    once, so it keeps none of its own). A call still running (a trailing assistant message with unanswered tool calls) is not in
    ``messages``: the harness keeps it after the post-compact context, so its results answer it.
    """

    messages: list[Any]
    view: list[Any]
    tokens: int
    config: EngineConfig
    llm: LLM
    trigger: str = "auto"                       # auto | manual
    now: datetime | None = None
    ids: IdFactory | None = None
    history: list[Any] = field(default_factory=list)
    instructions: str | None = None             # /compact instructions (manual)
    session_dir: Path | None = None
    shown_session_dir: str = ""                 # the session folder as the model is told it
    turn: int = 0
    store: dict[str, Any] = field(default_factory=dict)   # a compactor's notes, kept across one run's calls
    emit: Callable[..., Any] = field(default=lambda *a, **k: None, repr=False)

    @property
    def backend(self) -> str:
        return getattr(self.llm, "backend", "offline")

    def uuid(self) -> str:
        return self.ids.uuid() if self.ids is not None else f"compactor-{id(self)}"

    def summary_message(self, text: str) -> UserMessage:
        """A user message carrying a summary (``is_compact_summary``: never taken for a person's)."""
        return UserMessage(uuid=self.uuid(), timestamp=self.now or datetime.now(), is_compact_summary=True,
                           content=text)

    def ask(self, messages: list[Any], prompt: str, *, system: str, task: str = "compact",
            max_tokens: int | None = None) -> tuple[str, Usage, dict[str, Any]]:
        """Send ``messages`` (engine messages; media become ``[image]``/``[document]``) and then
        ``prompt`` as the last user message to the summariser, through the anthropic SDK. Returns the
        reply text, its usage and the request. Raises :class:`~pytest_ctxeval.errors.PromptTooLongError`
        (the caller decides how to shrink the request) and :class:`CompactionFailed` for any other
        model error."""
        context = [m for m in messages if not isinstance(m, CompactBoundary)]
        api = to_api(media_stripped(context) + [UserMessage(uuid="compact-request", content=prompt)])
        request = {"system": system, "messages": api,
                   "max_tokens": max_tokens or self.config.summary_request_max_tokens}
        from ..errors import PromptTooLongError

        try:
            reply = whole_reply(self.llm)(task=task, system=system, messages=api, max_tokens=request["max_tokens"],
                                      context_window=self.config.context_window)
        except PromptTooLongError:
            raise
        except ModelError as exc:
            raise CompactionFailed(str(exc), request) from None
        return reply.text, reply.usage, request


@dataclass
class Compacted:
    """What :meth:`Compactor.compact` returns.

    ``messages``: the post-compact context, in order — what the model sees from now on (a summary
    message made with :meth:`CompactionState.summary_message`, messages kept as they were, an
    acknowledgement...). A message kept from the context keeps its ``uuid``; a kept message whose
    content the compactor changed (truncated, masked) keeps it too, so the transcript and the graders
    still know the original. ``summary``: the summary text the model sees ("" when there is none).
    ``summarized``: what was compacted (default: the whole context).
    """

    messages: list[Any]
    summary: str = ""
    summarized: list[Any] | None = None
    raw_reply: str = ""
    request: dict[str, Any] | None = None
    usage: Usage = field(default_factory=Usage)
    notes: list[str] = field(default_factory=list)
    kind: str | None = None                     # default: the compactor's name


@runtime_checkable
class Compactor(Protocol):
    """A compactor: when to compact, and the context the model sees afterwards.

    Only ``name``, :meth:`should_compact` and :meth:`compact` are required. Optional attributes a
    compactor may define (:class:`BaseCompactor` has them all): ``summary_format`` (a
    :class:`~pytest_ctxeval.compaction.formats.SummaryFormat`: its summary's sections, for the graders;
    None means Claude Code's nine sections), ``backends`` (the model backends it can run on; None:
    all), ``configure(config) -> config`` (the engine config of a run), ``prune(state)`` (results to
    clear before a request, like microcompact) and ``native`` (True: the engine's own tiers 4-5 run,
    as for ``claude_code``).
    """

    name: str

    def should_compact(self, state: CompactionState) -> bool: ...

    def compact(self, state: CompactionState) -> Compacted: ...


class BaseCompactor(abc.ABC):
    """Defaults for a compactor; the built-ins subclass it. A subclass must define
    :meth:`should_compact` and :meth:`compact` (instantiating one that does not is a TypeError,
    which the loader reports as a usage error naming the spec).

    ``tiers`` keeps the engine's tiers 1-3 for this compactor: ``"all"`` (default: every compactor
    runs in the same environment as Claude Code, so the comparison is about compaction), ``"none"``,
    or some of ``budget``, ``dedupe``, ``microcompact`` joined by ``+``. Off, a tier's thresholds are
    lifted: no result is persisted for its size (a call's own declared limit still applies, as a
    property of its tool), no unchanged-file stub, no result cleared.
    """

    name = "base"
    description = ""
    summary_format: SummaryFormat | None = None
    backends: tuple[str, ...] | None = None
    native = False

    def __init__(self, *, tiers: str = "all", **options: Any):
        if options:
            raise UsageError(f"compactor {self.name}: unknown option{'s' if len(options) > 1 else ''} "
                             f"{', '.join(sorted(options))}; it takes {', '.join(self.option_names()) or 'none'}")
        self.tiers = parse_tiers(tiers, self.name)

    @classmethod
    def option_names(cls) -> list[str]:
        import inspect

        names = []
        for klass in cls.__mro__:
            init = klass.__dict__.get("__init__")
            if init is None:
                continue
            names += [p.name for p in inspect.signature(init).parameters.values()
                      if p.kind is p.KEYWORD_ONLY and p.name not in names]
        return names

    def configure(self, config: EngineConfig) -> EngineConfig:
        """The run's engine config (:func:`compactor_config` with this compactor's ``tiers``)."""
        return compactor_config(config, self.tiers)

    @abc.abstractmethod
    def should_compact(self, state: CompactionState) -> bool:
        """Whether to compact before the next request."""

    @abc.abstractmethod
    def compact(self, state: CompactionState) -> Compacted | None:
        """The context the model sees from now on (None: leave it as it is)."""

    def label(self) -> str:
        return self.name


def option(compactor: str, name: str, value: Any, kind: type, *, low: float | None = None,
           high: float | None = None) -> Any:
    """A compactor option checked: ``kind`` is ``int`` (a whole number, not a flag), ``float`` (any
    number), ``bool`` (true or false only) or ``str``; ``low``/``high`` bound a number, inclusive.
    Anything else is a :class:`UsageError` naming the option, what it takes, and the value given.

    >>> option("codex", "fraction", 0.9, float, low=0, high=1)
    0.9
    >>> option("gemini_cli", "verify", "maybe", bool)
    Traceback (most recent call last):
    ...
    pytest_ctxeval.errors.UsageError: compactor gemini_cli: verify must be true or false. Current input: 'maybe'
    """
    ok = {int: lambda v: isinstance(v, int) and not isinstance(v, bool),
          float: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
          bool: lambda v: isinstance(v, bool), str: lambda v: isinstance(v, str)}[kind](value)
    what = {int: "a whole number", float: "a number", bool: "true or false", str: "text"}[kind]
    if ok and kind in (int, float):
        if not math.isfinite(value) or (low is not None and value < low) or (high is not None and value > high):
            ok = False
        if low is not None and high is not None:
            what += f" from {low:g} to {high:g}"
        elif low is not None:
            what += f" of at least {low:g}"
    if not ok:
        raise UsageError(f"compactor {compactor}: {name} must be {what}. Current input: {value!r}")
    return float(value) if kind is float else value


def tier_changes(tiers: frozenset[str]) -> dict[str, Any]:
    """The config changes that turn off the tiers ``tiers`` leaves out (dedupe is the driver's)."""
    changes: dict[str, Any] = {}
    huge = 10 ** 12
    if "budget" not in tiers:
        changes.update(default_max_result_chars=huge, tool_result_chars={}, per_message_result_chars=huge)
    if "microcompact" not in tiers:
        changes.update(microcompact_gap_minutes=float(huge), cached_microcompact=False, api_context_management=False)
    return changes


def compactor_config(config: EngineConfig, tiers: frozenset[str] = frozenset(TIERS)) -> EngineConfig:
    """The engine config of a run under a compactor that decides compaction itself: auto-compaction
    and session memory (Claude Code's tier 4, with its blocking limit) off; tiers 1-3 as ``tiers`` says."""
    return config.replace(autocompact_enabled=False, session_memory_enabled=False, blocking_limit_enforced=False,
                          **tier_changes(tiers))


def parse_tiers(value: str, compactor: str) -> frozenset[str]:
    """``"all"``, ``"none"`` or ``budget+dedupe+microcompact`` (any of them) as a set."""
    text = str(value).strip().lower()
    if text == "all":
        return frozenset(TIERS)
    if text in ("none", ""):
        return frozenset()
    parts = [p.strip() for p in text.split("+")]
    bad = [p for p in parts if p not in TIERS]
    if bad:
        raise UsageError(f"compactor {compactor}: tiers={value!r}: unknown tier {bad[0]!r}; use all, none, or some "
                         f"of {', '.join(TIERS)} joined by '+' (tiers=budget+microcompact)")
    return frozenset(parts)


_ENV: SandboxedEnvironment | None = None


def render(template: str, **variables: Any) -> str:
    """Render one of the compactors' prompt templates (``compaction/prompts/NAME``). Conversation
    text only ever enters as a variable value, never as template source."""
    global _ENV
    if _ENV is None:
        _ENV = SandboxedEnvironment(loader=jinja2.FileSystemLoader(str(PROMPTS)), undefined=jinja2.StrictUndefined,
                                    keep_trailing_newline=False, autoescape=False)
    return _ENV.get_template(template).render(**variables).strip()
