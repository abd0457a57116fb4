"""A synthetic agent session for the benchmarks (not a test): rounds of a realistic mix, fed to a
:class:`ContextManager` exactly as ``pytest_ctxeval.runner`` feeds a scenario.

A round is one model response (prepare the request, append the reply with the usage anchor the
runner gives it, run the post-sampling hook) and, when it called tools, the user message carrying
their results. The mix, drawn from a seeded ``random.Random`` so every run is the same session:

* a person-typed request every ~6 rounds, one in ten with a pasted screenshot (an image block);
* 1-3 parallel calls per response (Read, Bash, Grep, Glob, Edit, Write, TodoWrite, WebFetch, Task),
  some opening with a thinking block;
* results of 200-4,000 characters mostly; one in 25 is large (35-90K characters: persisted by tier
  1 with a preview), one Read in 12 returns a screenshot (text and an image block);
* repeated Reads of unchanged files (tier 2 stubs) and edits that move a file on;
* with ``gaps``, a 61-80 minute idle gap every ~150 rounds (time-based microcompact, tier 3).
"""

from __future__ import annotations

import random
import time
from datetime import datetime, timedelta, UTC
from pathlib import Path
from typing import Any

from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine.pipeline import ContextManager, PreparedRequest, ToolOutcome
from pytest_ctxeval.core.ids import IdFactory
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.core.messages import (
    AssistantMessage, ImageBlock, TextBlock, ThinkingBlock, ToolUseBlock, Usage, UserMessage,
)
from pytest_ctxeval.core.tokens import estimate_message
from pytest_ctxeval.transcript import TranscriptWriter

START = datetime(2026, 3, 1, 9, 0, 0, tzinfo=UTC)
_PNG = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="}
_FILES = [f"src/pkg{i % 7}/module_{i}.py" for i in range(40)]
_LINE = "    result = compute(value, options)  # a line of a source file or a log, about sixty chars\n"


def _text(rnd: random.Random, size: int, salt: str) -> str:
    head = f"{salt}\n"
    return head + (_LINE * (size // len(_LINE) + 1))[: max(0, size - len(head))]


class Workload:
    """One session on a :class:`ContextManager`; :meth:`round` plays the next round."""

    def __init__(self, root: Path, config: EngineConfig, *, seed: int = 7, gaps: bool = False,
                 naive: bool = False, llm: Any = None, session_id: str = "bench"):
        self.rnd = random.Random(seed)
        self.config = config
        self.gaps = gaps
        self.transcript = TranscriptWriter(root / f"{session_id}.jsonl", session_id=session_id)
        self.cm = ContextManager(config=config, llm=llm or make_llm("offline", max_retries=0),
                                 transcript=self.transcript, ids=IdFactory(session_id), naive=naive,
                                 session_dir=root / session_id)
        self.clock = START
        self.n = 0
        self.rounds = 0
        self.last_prepared: PreparedRequest | None = None
        self.last_prepare_seconds = 0.0
        #: The clock that times ``prepare``: wall time by default; the benchmarks use the thread's
        #: CPU time, which a shared machine's other processes do not inflate.
        self.timer = time.perf_counter
        self._pending: list[tuple[ToolUseBlock, Any, bool]] = []

    def _id(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n:07d}"

    def say(self) -> None:
        self.clock += timedelta(seconds=20)
        text = f"Next: look at {self.rnd.choice(_FILES)} and fix the failing case {self.n}, keep the API stable."
        content: Any = text
        if self.rnd.random() < 0.1:
            content = [TextBlock(text=text + " Screenshot attached."), ImageBlock(source=_PNG)]
        self.cm.append(UserMessage(uuid=self._id("u"), timestamp=self.clock, content=content))

    def _call(self) -> tuple[ToolUseBlock, Any, bool]:
        rnd = self.rnd
        name = rnd.choices(["Read", "Bash", "Grep", "Glob", "Edit", "Write", "TodoWrite", "WebFetch", "Task"],
                           weights=[30, 22, 12, 5, 10, 4, 5, 6, 6])[0]
        path = rnd.choice(_FILES)
        size = rnd.randint(200, 4_000)
        if rnd.random() < 0.04:
            size = rnd.randint(35_000, 90_000)
        inputs = {"Read": {"file_path": path}, "Bash": {"command": f"pytest -q tests/test_{self.n % 50}.py"},
                  "Grep": {"pattern": "compute\\(", "path": "src"}, "Glob": {"pattern": "src/**/*.py"},
                  "Edit": {"file_path": path, "old_string": "compute(value)", "new_string": "compute(value, options)"},
                  "Write": {"file_path": path, "content": _text(rnd, 600, path)},
                  "TodoWrite": {"todos": [{"content": f"fix case {self.n}", "status": "in_progress"}]},
                  "WebFetch": {"url": f"https://docs.example.com/page/{self.n % 30}"},
                  "Task": {"description": "find the callers", "prompt": "find every caller of compute"}}[name]
        use = ToolUseBlock(id=self._id("toolu_"), name=name, input=inputs)
        error = rnd.random() < 0.06
        if error:
            return use, f"Error: exit code 1\nFAILED tests/test_{self.n % 50}.py::test_case - AssertionError", True
        if name == "Read":
            content: Any = _text(rnd, min(size, 20_000), f"# {path} (version {self.n // 200})")
            if rnd.random() < 0.08:
                content = [TextBlock(text=f"screenshot of {path}"), ImageBlock(source=_PNG)]
            return use, content, False
        if name in ("Edit", "Write"):
            return use, f"The file {path} has been updated.", False
        return use, _text(rnd, size, f"{name} output {self.n}"), False

    def reply(self) -> AssistantMessage:
        """Prepare the request, append the scripted response; the tool results follow in :meth:`results`."""
        rnd = self.rnd
        self.clock += timedelta(seconds=30)
        started = self.timer()
        prepared = self.cm.prepare(self.clock)
        self.last_prepare_seconds = self.timer() - started
        self.last_prepared = prepared
        blocks: list[Any] = []
        if rnd.random() < 0.2:
            blocks.append(ThinkingBlock(thinking="Let me think about which file to look at next. " * 4, signature="s"))
        blocks.append(TextBlock(text=f"Working on step {self.rounds}: checking the code and the tests."))
        self._pending = [self._call() for _ in range(rnd.choices([0, 1, 2, 3], weights=[10, 55, 25, 10])[0])]
        blocks += [u for u, _, _ in self._pending]
        reply = AssistantMessage(uuid=self._id("a"), timestamp=self.clock, content=blocks,
                                 message_id=self._id("msg_"), model=self.cm.model)
        reply.usage = Usage(input_tokens=self.cm.input_tokens(prepared),
                            output_tokens=estimate_message(reply, self.config))
        self.cm.append(reply)
        self.cm.after_response(self.clock)
        return reply

    def results(self) -> None:
        if self._pending:
            self.clock += timedelta(seconds=5)
            blocks = self.cm.tool_results([ToolOutcome(u, c, e) for u, c, e in self._pending])
            self.cm.append(UserMessage(uuid=self._id("r"), timestamp=self.clock, content=blocks))
        self._pending = []

    def round(self) -> None:
        """One round: maybe a person-typed request or an idle gap, then a response and its results."""
        if self.rounds % 6 == 0 or self.rnd.random() < 0.05:
            self.say()
        if self.gaps and self.rounds and self.rounds % 150 == 0:
            self.clock += timedelta(minutes=self.rnd.randint(61, 80))
        self.reply()
        self.results()
        self.rounds += 1

    def close(self) -> None:
        self.transcript.close()
