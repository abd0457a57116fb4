"""Builders for the compactor tests (imported as ``compaction_kit``, like ``engine_kit``):
messages, conversations of sized turns, and a :class:`CompactionState` on the offline model."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta, UTC
from typing import Any

from pytest_ctxeval.compaction.base import CompactionState
from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.core.ids import IdFactory
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.core.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


class Kit:
    def __init__(self) -> None:
        self.n = itertools.count(1)
        self.clock = T0

    def _ts(self) -> datetime:
        self.clock += timedelta(seconds=10)
        return self.clock

    def user(self, text: str, **kw: Any) -> UserMessage:
        return UserMessage(uuid=f"u{next(self.n)}", timestamp=self._ts(), content=text, **kw)

    def say(self, text: str) -> AssistantMessage:
        return AssistantMessage(uuid=f"a{next(self.n)}", timestamp=self._ts(), content=[TextBlock(text=text)])

    def call(self, name: str = "Bash", output: str = "ok", *, is_error: bool = False, text: str | None = None,
             **inp: Any) -> list[Any]:
        """``[assistant tool_use, user tool_result]``."""
        tid = f"toolu_{next(self.n):04d}"
        blocks: list[Any] = [TextBlock(text=text)] if text else []
        blocks.append(ToolUseBlock(id=tid, name=name, input=inp or {"command": f"step {tid}"}))
        return [AssistantMessage(uuid=f"a{next(self.n)}", timestamp=self._ts(), content=blocks),
                UserMessage(uuid=f"r{next(self.n)}", timestamp=self._ts(),
                            content=[ToolResultBlock(tool_use_id=tid, content=output, is_error=is_error)])]

    def turn(self, request: str, calls: int = 2, output_chars: int = 400, reply: str = "Done with that step.") -> list[Any]:
        """A user turn: the request, ``calls`` tool calls with outputs of ``output_chars``, a reply."""
        out: list[Any] = [self.user(request)]
        for i in range(calls):
            out += self.call("Bash", f"line {i}\n" + "x" * output_chars, command=f"run {request[:20]} {i}")
        out.append(self.say(reply))
        return out


def state(messages: list[Any], *, window: int = 20_000, tokens: int | None = None, llm: Any = None,
          trigger: str = "auto", session_dir: Any = None, **kw: Any) -> CompactionState:
    """A state over ``messages`` (view = messages) on the offline model."""
    from pytest_ctxeval.core.tokens import estimate_messages

    config = kw.pop("config", None) or EngineConfig.for_window(window)
    return CompactionState(messages=list(messages), view=list(messages),
                           tokens=estimate_messages(messages, config) if tokens is None else tokens,
                           config=config, llm=llm or make_llm("offline"), trigger=trigger,
                           now=messages[-1].timestamp if messages else T0, ids=IdFactory("kit"),
                           history=list(messages), session_dir=session_dir, **kw)
