"""Shared builders for the engine tests (imported as ``engine_kit``, like ``shared_paths``): messages, and a :class:`Session` that drives a
:class:`ContextManager` the way ``pytest_ctxeval.runner`` does (prepare, scripted reply with a usage
anchor, post-sampling hook, tool results) on a fixed clock, against the offline model."""

from __future__ import annotations

from datetime import datetime, timedelta, UTC
from pathlib import Path
from typing import Any
from collections.abc import Iterable, Sequence


from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine.pipeline import ContextManager, PreparedRequest, ToolOutcome
from pytest_ctxeval.core.ids import IdFactory
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.core.messages import (
    AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, Usage, UserMessage,
)
from pytest_ctxeval.core.tokens import estimate_message
from pytest_ctxeval.transcript import TranscriptWriter

T0 = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)


# --- plain message builders -------------------------------------------------------------------

def user(uid: str, content: Any = "please continue", ts: datetime = T0, **kw: Any) -> UserMessage:
    return UserMessage(uuid=uid, content=content, timestamp=ts, **kw)


def asst(uid: str, *blocks: Any, mid: str | None = None, ts: datetime = T0,
         usage: Usage | None = None) -> AssistantMessage:
    content = [TextBlock(text=b) if isinstance(b, str) else b for b in blocks] or [TextBlock(text="ok")]
    return AssistantMessage(uuid=uid, content=content, message_id=mid, timestamp=ts, usage=usage)


def use(tid: str, name: str, **inp: Any) -> ToolUseBlock:
    return ToolUseBlock(id=tid, name=name, input=inp)


def res(tid: str, content: Any, is_error: bool = False) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id=tid, content=content, is_error=is_error)


def results(uid: str, *blocks: ToolResultBlock, ts: datetime = T0) -> UserMessage:
    return UserMessage(uuid=uid, content=list(blocks), timestamp=ts)


def text_of_body_message(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    out = []
    for b in content:
        if b.get("type") == "text":
            out.append(b["text"])
        elif b.get("type") == "tool_result":
            c = b.get("content", "")
            out.append(c if isinstance(c, str) else " ".join(x.get("text", "") for x in c))
    return "\n".join(out)


def body_results(body: dict[str, Any]) -> dict[str, Any]:
    """tool_use_id -> content of every tool_result in a request body."""
    out = {}
    for m in body["messages"]:
        if isinstance(m["content"], list):
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    out[b["tool_use_id"]] = b.get("content", "")
    return out


# --- a driven session -----------------------------------------------------------------------

class Session:
    """One ContextManager on a fixed clock. ``step`` is one model response: prepare the request,
    append the scripted reply (with the usage anchor the runner gives it, unless ``anchor=False``),
    run the post-sampling hook, then append the tool results as one user message."""

    def __init__(self, tmp_path: Path, config: EngineConfig | None = None, *,
                 faults: dict[str, Sequence[str]] | None = None, anchor: bool = True):
        self.config = config or EngineConfig()
        self.llm = make_llm("offline", faults=faults, max_retries=0)
        self.transcript = TranscriptWriter(tmp_path / "sess.jsonl", session_id="sess")
        self.cm = ContextManager(config=self.config, llm=self.llm, transcript=self.transcript,
                                 ids=IdFactory("engine-tests"))
        self.clock = T0
        self.anchor = anchor
        self.n = 0
        self.prepared: list[PreparedRequest] = []

    # clock
    def tick(self, seconds: float) -> datetime:
        self.clock += timedelta(seconds=seconds)
        return self.clock

    def next_id(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n:04d}"

    # messages
    def say(self, text: str) -> UserMessage:
        self.tick(20)
        msg = UserMessage(uuid=self.next_id("u"), timestamp=self.clock, content=text)
        self.cm.append(msg)
        return msg

    def prepare(self) -> PreparedRequest:
        p = self.cm.prepare(self.clock)
        self.prepared.append(p)
        return p

    def reply(self, text: str | None = "ok", tools: Iterable[ToolUseBlock] = (), *, mid: str | None = None,
              prepared: PreparedRequest | None = None, anchor: bool | None = None) -> AssistantMessage:
        self.tick(30)
        blocks: list[Any] = [TextBlock(text=text)] if text else []
        blocks += list(tools)
        msg = AssistantMessage(uuid=self.next_id("a"), timestamp=self.clock, content=blocks,
                               message_id=mid or self.next_id("msg_"))
        if (self.anchor if anchor is None else anchor) and prepared is not None:
            # The anchor the runner gives it: what the API would report (cache-deleted results excluded).
            msg.usage = Usage(input_tokens=self.cm.input_tokens(prepared),
                              output_tokens=estimate_message(msg, self.config))
        self.cm.append(msg)
        self.cm.after_response(self.clock)
        return msg

    def tool(self, name: str, output: Any = "done", /, *, is_error: bool = False, declared: int | None = None,
             tid: str | None = None, **inp: Any) -> tuple[ToolUseBlock, Any, bool, int | None]:
        """``(tool_use, output, is_error, declared_limit)`` for :meth:`step`; ``inp`` is the tool input."""
        return (ToolUseBlock(id=tid or self.next_id("toolu_"), name=name, input=inp), output, is_error, declared)

    def step(self, text: str | None = "ok", tools: Sequence[tuple[ToolUseBlock, Any, bool, int | None]] = (),
             *, anchor: bool | None = None) -> PreparedRequest:
        prepared = self.prepare()
        if prepared.refused:  # at the blocking limit: not sent, no reply (as the runner does)
            return prepared
        self.reply(text, [t[0] for t in tools], prepared=prepared, anchor=anchor)
        if tools:
            self.tick(5)
            blocks = self.cm.tool_results([ToolOutcome(u, c, e, d) for u, c, e, d in tools])
            self.cm.append(UserMessage(uuid=self.next_id("r"), timestamp=self.clock, content=blocks))
        return prepared

    def events(self, tier: str | None = None, action: str | None = None) -> list[Any]:
        return [e for e in self.cm.events if (tier is None or e.tier == tier)
                and (action is None or e.action == action)]

    def close(self) -> None:
        self.transcript.close()


