"""Shared pieces of the property tests (imported as ``prop_kit``, like ``engine_kit``): a driver that
replays a generated conversation through a :class:`ContextManager` the way the runner does, a
scripted summariser, and transcript checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine.pipeline import ContextManager, PreparedRequest, ToolOutcome
from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.core.ids import IdFactory
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.llm.base import ModelReply, UsageTotals
from pytest_ctxeval.core.messages import (
    AssistantMessage, ToolResultBlock, Usage, UserMessage, tool_results, tool_uses,
)
from pytest_ctxeval.core.tokens import estimate_message, estimate_text
from pytest_ctxeval.transcript import TranscriptWriter, record_for


class ScriptedSummariser:
    """An LLM stand-in whose compaction reply is whatever the test says (empty, no tags, huge...)."""

    backend = "scripted"
    model = "scripted-summariser"

    def __init__(self, reply: str):
        self.reply = reply
        self.usage = UsageTotals()
        self.requests: list[list[dict[str, Any]]] = []

    def complete(self, *, task: str, messages: list[dict[str, Any]], system: str | None = None,
                 max_tokens: int = 4_096, context_window: int | None = None, model: str | None = None) -> ModelReply:
        self.requests.append(messages)
        usage = Usage(input_tokens=sum(estimate_message(m) for m in messages), output_tokens=estimate_text(self.reply))
        self.usage.add(self.model, usage)
        return ModelReply(text=self.reply, usage=usage, model=self.model, stop_reason="end_turn")


_PROMPTS: PromptSet | None = None


def prompts() -> PromptSet:
    """The built-in prompts, loaded once (templates are read-only; loading costs ~10 ms)."""
    global _PROMPTS
    if _PROMPTS is None:
        _PROMPTS = PromptSet()
    return _PROMPTS


class Driver:
    """One ContextManager fed generated messages as the runner feeds scripted steps: a request is
    prepared before each new model response (whose first record gets the usage anchor the runner
    gives), tool results go through the tools' own limits (``ContextManager.tool_results``)."""

    def __init__(self, root: Path, config: EngineConfig, *, llm: Any = None,
                 faults: dict[str, list[str]] | None = None, session_id: str = "sess"):
        self.config = config
        self.llm = llm if llm is not None else make_llm("offline", faults=faults, max_retries=0)
        self.transcript = TranscriptWriter(root / f"{session_id}.jsonl", session_id=session_id)
        self.cm = ContextManager(config=config, llm=self.llm, transcript=self.transcript, prompts=prompts(),
                                 ids=IdFactory("props"), session_dir=root / session_id)
        self.prepared: list[PreparedRequest] = []
        self.appended: list[Any] = []   # every message handed to the engine, as handed
        self._calls: dict[str, Any] = {}
        self._last_mid: str | None = None

    def append(self, message: Any) -> None:
        self.cm.append(message)
        self.appended.append(message)

    def feed(self, messages: list[Any]) -> None:
        for m in messages:
            self.feed_one(m)

    def feed_one(self, m: Any) -> None:
        if isinstance(m, AssistantMessage):
            mid = m.message_id or m.uuid
            if mid != self._last_mid:
                prepared = self.cm.prepare(m.timestamp)
                self.prepared.append(prepared)
                m = m.model_copy(update={"usage": Usage(input_tokens=self.cm.input_tokens(prepared),
                                                        output_tokens=estimate_message(m, self.config))})
            self._last_mid = mid
            for use in tool_uses(m):
                self._calls[use.id] = use
            self.append(m)
            self.cm.after_response(m.timestamp)
            return
        self._last_mid = None
        results = tool_results(m)
        if results:
            blocks = self.cm.tool_results([ToolOutcome(self._calls[r.tool_use_id], r.content, r.is_error)
                                           for r in results])
            others = [b for b in m.content if not isinstance(b, ToolResultBlock)]
            m = UserMessage(uuid=m.uuid, timestamp=m.timestamp, content=blocks + others)
        self.append(m)

    def close(self) -> None:
        self.transcript.close()


def transcript_records(path: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        out[record["uuid"]] = record
    return out


def lost_from_transcript(path: Path, messages: list[Any], *, ignore_usage: bool = False) -> list[str]:
    """Messages of ``messages`` the transcript at ``path`` does not hold byte for byte (with
    ``ignore_usage``, an assistant message's usage may differ: after a compaction the context keeps
    kept responses without their usage anchor, 003:221-229)."""
    records = transcript_records(path)
    lost = []
    for m in messages:
        rec = records.get(m.uuid)
        if rec is None:
            lost.append(f"{m.uuid}: not in the transcript")
            continue
        want = record_for(m, parent_uuid=rec.get("parentUuid"), session_id=rec["sessionId"], version=rec["version"])
        got = dict(rec)
        for record in (want, got):
            record.pop("logicalParentUuid", None)
            if ignore_usage and isinstance(record.get("message"), dict):
                record["message"] = {k: v for k, v in record["message"].items() if k != "usage"}
        if got != want:
            lost.append(f"{m.uuid}: the transcript holds a different record")
    return lost
