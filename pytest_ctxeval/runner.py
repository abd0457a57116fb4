"""Replay a scenario through the engine as an agent loop.

For each step of the expanded scenario:

* a user turn is appended to the context;
* an assistant turn stands for a model response: the pipeline first *prepares the request* the
  agent would send (tiers, auto-compaction), then the scripted response is appended with a usage
  anchor equal to that request's size (and the session-memory hook runs), then its tool results as
  the tools would return them (Read limits, unchanged-file stubs) in one user message answering
  every parallel call, as the API requires;
* a gap moves the clock (idle time matters to time-based microcompact);
* a compact step is a manual ``/compact``;
* a recorded compaction (imported sessions) installs Claude Code's own summary, no model call.

The clock starts at the scenario's ``start`` and advances by fixed steps, or to a step's ``at``
(imported sessions carry the real times, so idle gaps are real; the clock never goes back); ids
come from a seeded factory: replaying a scenario twice gives byte-identical results.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from .config import EngineConfig
from .engine.pipeline import CompactionRecord, ContextManager, DEFAULT_SYSTEM_PROMPT, Event, ToolOutcome
from .engine.prompt import PromptSet
from .ids import IdFactory
from .llm import LLM, make_llm
from .messages import (
    AssistantMessage, TextBlock, ThinkingBlock, ToolUseBlock, UserMessage, Usage,
)
from .scenarios import (
    AssistantStep, CompactStep, GapStep, RecordedCompactionStep, Scenario, UserStep, expand, load_scenario,
)
from .tokens import estimate_message
from .transcript import TranscriptWriter

__all__ = ["RunResult", "run_scenario", "USER_STEP", "ASSISTANT_STEP", "TOOL_STEP"]

#: Clock advance per step (a person types, a model answers, a tool runs).
USER_STEP = timedelta(seconds=20)
ASSISTANT_STEP = timedelta(seconds=30)
TOOL_STEP = timedelta(seconds=5)


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

    @property
    def tokens_before_after(self) -> list[tuple[int, int]]:
        return [(c.result.pre_tokens, c.result.post_tokens) for c in self.compactions]


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
) -> RunResult:
    """Run ``scenario`` (a :class:`Scenario` or a path) and return the :class:`RunResult`.

    ``context_window`` overrides the scenario's window; ``compact_at_end`` adds a manual
    compaction after the last step so the end state can always be graded; ``session_dir`` is where
    the transcript (and persisted tool results) go, a temporary directory by default.
    """
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    expanded = expand(scenario)
    config = scenario.engine_config(context_window)
    if llm is None:
        llm = make_llm(backend, model or scenario.model, faults=scenario.faults or None)
    elif scenario.faults and hasattr(llm, "reference"):
        for task, plan in scenario.faults.items():
            llm.reference.add_faults(task, plan)  # type: ignore[attr-defined]
    name = scenario.display_name
    base = Path(session_dir) if session_dir else Path(tempfile.mkdtemp(prefix="ctxeval-"))
    ids = IdFactory(name)
    session_id = ids.uuid()
    transcript = TranscriptWriter(base / f"{session_id}.jsonl", session_id=session_id)
    cm = ContextManager(config=config, llm=llm, transcript=transcript, prompts=prompts, ids=ids,
                        system_prompt=scenario.system or DEFAULT_SYSTEM_PROMPT, model=model or scenario.model)
    clock: datetime = scenario.start

    def tick(at: datetime | None, step: timedelta) -> datetime:
        return max(at, clock) if at is not None else clock + step

    try:
        for step in expanded.steps:
            if isinstance(step, UserStep):
                clock = tick(step.at, USER_STEP)
                cm.append(UserMessage(uuid=ids.uuid(), timestamp=clock, content=step.content, is_meta=step.meta))
            elif isinstance(step, AssistantStep):
                clock = tick(step.at, ASSISTANT_STEP)
                prepared = cm.prepare(clock)
                blocks: list[Any] = []
                if step.thinking:
                    blocks.append(ThinkingBlock(thinking=step.thinking, signature="scripted"))
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
                if step.tools:
                    clock += TOOL_STEP
                    results = cm.tool_results([ToolOutcome(u, t.result, t.is_error, t.max_result_chars)
                                               for u, t in zip(uses, step.tools)])
                    cm.append(UserMessage(uuid=ids.uuid(), timestamp=clock, content=results))
            elif isinstance(step, GapStep):
                clock += timedelta(seconds=step.seconds)
            elif isinstance(step, CompactStep):
                clock = tick(step.at, USER_STEP)
                cm.compact(clock, instructions=step.instructions, partial=step.partial, messages=step.messages)
            elif isinstance(step, RecordedCompactionStep):
                clock = tick(step.at, USER_STEP)
                cm.install_recorded(clock, trigger=step.trigger, pre_tokens=step.pre_tokens, summary=step.summary)
        if compact_at_end:
            clock += USER_STEP
            cm.compact(clock)
    finally:
        transcript.close()
    return RunResult(
        name=name, source=str(scenario.path) if scenario.path else name, config=config, events=cm.events,
        compactions=cm.compactions, requests=cm.requests, usage=llm.usage.as_dict(),
        transcript_path=transcript.path, history=cm.history, final_messages=list(cm.messages),
        steps=len(expanded.steps), scenario=scenario)
