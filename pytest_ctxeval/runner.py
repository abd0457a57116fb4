"""Replay a scenario through the engine as an agent loop.

For each step of the expanded scenario:

* a user turn is appended to the context;
* an assistant turn stands for a model response: the pipeline first *prepares the request* the
  agent would send (tiers, auto-compaction), then the scripted response is appended with a usage
  anchor equal to that request's size (and the session-memory hook runs), then its tool results as
  the tools would return them (Read limits, unchanged-file stubs) in one user message answering
  every parallel call, as the API requires;
* a gap moves the clock (idle time matters to time-based microcompact);
* a compact step is a manual ``/compact``; after an ``in_flight`` assistant turn it runs while that
  turn's calls are still executing, and their results arrive right after it;
* a recorded compaction (imported sessions) installs Claude Code's own summary, no model call.

A turn the engine refuses (the context is at the blocking limit and no compaction brought it
under: auto-compaction off, the circuit breaker tripped, or this turn's auto-compaction failed;
000:181, 003:173) is not sent: its scripted response and tool calls do not happen (a
``blocking_limit`` event says why), and the script goes on; a later ``/compact`` unblocks it.
The scenario's ``git_status:`` and ``memory_files:`` join the system prompt, capped
(:mod:`~pytest_ctxeval.engine.context_prefix`); ``tools:``, ``mcp_servers:`` and ``hooks:`` are
given to the engine, which announces them at the start (:meth:`ContextManager.announce`).

The clock starts at the scenario's ``start`` and advances by fixed steps, or to a step's ``at``
(imported sessions carry the real times, so idle gaps are real; the clock never goes back); ids
come from a seeded factory: replaying a scenario twice gives byte-identical results.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Callable

from .core.config import EngineConfig
from .core.gcpause import paused_gc
from .engine.context_prefix import compaction_system, system_context
from .engine.hooks import HookSet
from .engine.pipeline import CompactionRecord, ContextManager, DEFAULT_SYSTEM_PROMPT, Event, ToolOutcome
from .engine.prompt import PromptSet
from .core.ids import IdFactory
from .core.renamed import add_renamed_attributes, renamed_keywords
from .errors import ScenarioError, UsageError
from .llm import make_llm
from .core.messages import AssistantMessage, TextBlock, ThinkingBlock, ToolUseBlock, UserMessage, Usage
from .scenario.expansion import AssistantStep, CompactStep, GapStep, RecordedCompactionStep, UserStep, expand
from .scenario.schema import Scenario, load_scenario
from .core.tokens import estimate_message
from .transcript.jsonl import TranscriptWriter

if TYPE_CHECKING:  # the SDK-backed client: its module loads the anthropic SDK
    from .llm import LLM

__all__ = ["RunResult", "run_scenario", "fresh_folder", "check_unique_names", "USER_STEP", "ASSISTANT_STEP", "TOOL_STEP"]

#: Clock advance per step (a person types, a model answers, a tool runs).
USER_STEP = timedelta(seconds=20)
ASSISTANT_STEP = timedelta(seconds=30)
TOOL_STEP = timedelta(seconds=5)


@add_renamed_attributes  # the attribute's name before the compactor rename, deprecated
@dataclass
class RunResult:
    """What happened when a scenario ran."""

    name: str
    source: str
    config: EngineConfig
    events: list[Event]
    compactions: list[CompactionRecord]
    requests: list[dict[str, Any]]
    usage: dict[str, Any]
    transcript_path: Path
    history: list[Any]
    final_messages: list[Any]
    steps: int
    scenario: Scenario | None = None
    notes: list[str] = field(default_factory=list)
    #: The compactor the run used (pytest_ctxeval.compaction) and its summary format
    #: (None: Claude Code's nine sections).
    compactor: str = "claude_code"
    summary_format: Any = None

    @property
    def tokens_before_after(self) -> list[tuple[int, int]]:
        return [(c.result.pre_tokens, c.result.post_tokens) for c in self.compactions]


def fresh_folder(parent: Path, name: str) -> Path:
    """A new, empty folder ``parent/name``, or ``name-2``, ``name-3``... when that one is taken
    (created exclusively, so concurrent runs never share one).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> [fresh_folder(d, "s").name for _ in range(3)]
    ['s', 's-2', 's-3']
    """
    parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, 10_000):
        folder = parent / (name if n == 1 else f"{name}-{n}")
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            continue
    raise UsageError(f"{parent}: more than 10,000 runs of {name}; use another session folder")


def check_unique_names(scenarios: list[Scenario]) -> None:
    """Two scenarios of one run may not share a name: their sessions, results and baseline rows are
    keyed by it."""
    seen: dict[str, Scenario] = {}
    for s in scenarios:
        other = seen.setdefault(s.display_name, s)
        if other is not s:
            raise ScenarioError(f"{s.path}: the name {s.display_name!r} is also the name of {other.path}; "
                                "scenario names must be unique within a run (change 'name:')")


@renamed_keywords  # the keyword's name before the compactor rename, deprecated
@paused_gc()  # a run builds the session (messages, requests, transcript) and keeps it: see gcpause
def run_scenario(
    scenario: Scenario | str | Path,
    *,
    llm: LLM | None = None,
    backend: str = "offline",
    model: str | None = None,
    context_window: int | None = None,
    compact_at_end: bool = False,
    session_dir: str | Path | None = None,
    prompts: PromptSet | None = None,
    compactor: Any = None,
    on_prepare: Callable[[Any], None] | None = None,
) -> RunResult:
    """Run ``scenario`` (a :class:`Scenario` or a path) and return the :class:`RunResult`.

    ``context_window`` overrides the scenario's window; ``compact_at_end`` adds a manual
    compaction after the last step so the end state can always be graded; ``session_dir`` is where
    the transcript (and persisted tool results) go, a temporary directory by default. The
    scenario's ``faults:`` apply to the LLM the runner makes; an ``llm`` passed in is used as it is
    (make it with ``make_llm(..., faults=scenario.faults)`` to play them). ``compactor`` (a
    :mod:`pytest_ctxeval.compaction` compactor or its spec, e.g. ``"codex"``) decides when to compact
    and what the model sees afterwards; None runs the reference engine (``claude_code``). A compactor
    that cannot run on the backend raises :class:`~pytest_ctxeval.compaction.CompactorUnavailable`.
    ``on_prepare`` sees each :class:`~pytest_ctxeval.engine.pipeline.PreparedRequest` as it is made
    (``ctxeval plan`` reads the token count and the tiers' events from it).
    """
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    expanded = expand(scenario)
    config = scenario.engine_config(context_window)
    if llm is None:
        llm = make_llm(backend, model or scenario.model, faults=scenario.faults or None)
    driver = None
    if compactor is not None:
        from .compaction.driver import CompactorDriver, configure, summary_format_of
        from .compaction.loader import load_compactor

        compactor = load_compactor(compactor)
        driver = CompactorDriver(compactor, llm)
        config = configure(compactor, config)
    # An ``llm`` given by the caller carries its own fault plan: the CLI and the plugin make it with
    # the scenario's ``faults:`` (adding them again here played every fault twice).
    name = scenario.display_name
    base = Path(session_dir) if session_dir else Path(tempfile.mkdtemp(prefix="ctxeval-"))
    ids = IdFactory(name)
    session_id = ids.uuid()
    if (base / f"{session_id}.jsonl").exists():
        raise UsageError(f"{base}: already holds a run of {name} ({session_id}.jsonl); give each run an empty "
                         "session folder (a second run would mix its records and tool results with the first)")
    transcript = TranscriptWriter(base / f"{session_id}.jsonl", session_id=session_id)
    system = system_context(scenario.system or DEFAULT_SYSTEM_PROMPT, scenario.git_status, scenario.memory_files,
                            config)
    if scenario.memory_files:  # the summariser sees them too (engine/context_prefix.py)
        shared = prompts or PromptSet()
        prompts = shared.with_system_compact(compaction_system(shared.system_compact, scenario.memory_files, config))
    cm = ContextManager(config=config, llm=llm, transcript=transcript, prompts=prompts, ids=ids,
                        system_prompt=system, model=model or scenario.model)
    cm.hooks = HookSet.from_mapping(scenario.hooks.as_mapping())
    cm.declared_tools, cm.mcp_servers = list(scenario.tools), dict(scenario.mcp_servers)
    if driver is not None:
        driver.attach(cm)
    clock: datetime = scenario.start

    def tick(at: datetime | None, step: timedelta) -> datetime:
        return max(at, clock) if at is not None else clock + step

    in_flight: tuple[list[Any], list[Any]] | None = None  # (tool_use blocks, their scripted steps)

    def deliver(uses: list[Any], tools: list[Any]) -> None:
        nonlocal clock
        clock += TOOL_STEP
        results = cm.tool_results([ToolOutcome(u, t.result, t.is_error, t.max_result_chars)
                                   for u, t in zip(uses, tools)])
        cm.append(UserMessage(uuid=ids.uuid(), timestamp=clock, content=[*results]))

    try:
        cm.announce(clock)
        for step in expanded.steps:
            if isinstance(step, UserStep):
                clock = tick(step.at, USER_STEP)
                cm.append(UserMessage(uuid=ids.uuid(), timestamp=clock, content=step.content, is_meta=step.meta))
            elif isinstance(step, AssistantStep):
                clock = tick(step.at, ASSISTANT_STEP)
                if driver is not None:
                    driver.before_request(clock)
                prepared = cm.prepare(clock)
                if on_prepare is not None:
                    on_prepare(prepared)
                if prepared.refused:
                    continue  # not sent: no response, no tool calls (the event says why)
                blocks: list[Any] = []
                if step.thinking:
                    blocks.append(ThinkingBlock(thinking=step.thinking, signature=""))  # scripted: no made-up signature
                if step.text:
                    blocks.append(TextBlock(text=step.text))
                uses = [ToolUseBlock(id=t.id or ids.tool_use_id(), name=t.name, input=t.input) for t in step.tools]
                blocks += uses
                reply = AssistantMessage(uuid=ids.uuid(), timestamp=clock, content=blocks,
                                         message_id=ids.message_id(), model=cm.model)
                # The anchor a real API response would carry: the request's size plus this output.
                reply.usage = Usage(input_tokens=cm.input_tokens(prepared), output_tokens=estimate_message(reply, config))
                cm.append(reply)
                cm.after_response(clock)
                if step.tools and step.in_flight:
                    in_flight = (uses, step.tools)  # the results arrive after the next compaction
                elif step.tools:
                    deliver(uses, step.tools)
            elif isinstance(step, GapStep):
                clock += timedelta(seconds=step.seconds)
            elif isinstance(step, CompactStep):
                clock = tick(step.at, USER_STEP)
                if driver is not None:
                    driver.manual(clock, instructions=step.instructions, partial=step.partial, messages=step.messages)
                else:
                    cm.compact(clock, instructions=step.instructions, partial=step.partial, messages=step.messages)
                if in_flight is not None:
                    deliver(*in_flight)
                    in_flight = None
            elif isinstance(step, RecordedCompactionStep):
                clock = tick(step.at, USER_STEP)
                cm.install_recorded(clock, trigger=step.trigger, pre_tokens=step.pre_tokens, summary=step.summary)
        if compact_at_end:
            clock += USER_STEP
            if driver is not None:
                driver.manual(clock)
            else:
                cm.compact(clock)
    finally:
        transcript.close()
    return RunResult(
        name=name, source=str(scenario.path) if scenario.path else name, config=config, events=cm.events,
        compactions=cm.compactions, requests=cm.requests, usage=llm.usage.as_dict(),
        transcript_path=transcript.path, history=cm.history, final_messages=list(cm.messages),
        steps=len(expanded.steps), scenario=scenario,
        compactor=driver.name if driver is not None else "claude_code",
        summary_format=summary_format_of(driver.compactor) if driver is not None else None)
