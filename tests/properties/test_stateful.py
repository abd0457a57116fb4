"""A stateful test: random agent sessions driven through the :class:`ContextManager`.

The machine plays an agent loop against the offline model on a small window (so compaction, PTL
and the circuit breaker are reached in a few steps): the person types (sometimes a pasted log),
the model answers with parallel tool calls whose outputs are small, huge or errors, the clock
jumps over idle gaps, the summariser is told to fail or to answer ``prompt is too long``, and
the person runs ``/compact`` (sometimes while tool calls are still running). After every step
it checks the invariants below.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine.pipeline import ToolOutcome
from pytest_ctxeval.core.messages import (
    AssistantMessage, TextBlock, ToolUseBlock, Usage, UserMessage, validate_api,
)
from pytest_ctxeval.strategies import DEFAULT_TOOLS, START
from pytest_ctxeval.core.tokens import estimate_api_request, estimate_message
from pytest_ctxeval.transcript import record_for

from prop_kit import Driver

_WORDS = st.lists(st.sampled_from(["fix", "the", "login", "bug", "add", "tests", "why", "retry", "ship"]),
                  min_size=1, max_size=5).map(" ".join)
_ATTEMPTS = {("autocompact", "full_compaction"), ("autocompact", "session_memory_compaction"),
             ("autocompact", "failed"), ("session_memory", "fallback_to_full")}


def _fill(phrase: str, size: int) -> str:
    unit = phrase + "\n"
    return (unit * (size // len(unit) + 1))[:size]


class AgentSession(RuleBasedStateMachine):
    """Invariants after every step:

    * **API-valid**: every request the engine prepared passes ``validate_api`` (and so does the
      context after a ``/compact`` run while tool calls were in flight, once their results are in);
    * **fits or compacts**: a request larger than the window, or counted at or above the
      auto-compact threshold, was prepared after a compaction attempt (or a PTL path) in the same
      step, unless the circuit breaker had tripped;
    * **circuit breaker**: it trips after exactly 3 consecutive failed auto-compactions (an auto
      success resets the count; manual compactions do not count), once, and then no automatic
      compaction is attempted again;
    * **nothing lost**: the transcript only grows, and holds every message handed to the engine
      and every boundary and summary, byte for byte.
    """

    @initialize(window=st.sampled_from([8_000, 6_000, 12_000]), session_memory=st.booleans(),
                profile=st.sampled_from(["default", "read_only"]))
    def start(self, window: int, session_memory: bool, profile: str) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="ctxeval-stateful-"))
        self.config = EngineConfig.for_window(window, session_memory_enabled=session_memory,
                                              microcompact_profile=profile)
        self.drv = Driver(self.tmp, self.config)
        self.cm = self.drv.cm
        self.clock = START
        self.n = 0
        self.failures = 0          # the model of consecutive automatic failures
        self.tripped = False
        self.seen_events = 0
        self.seen_requests = 0
        self.transcript_bytes = b""
        self.records: dict[str, dict[str, Any]] = {}
        self.verified = 0
        self.say("refactor the auth module")

    def teardown(self) -> None:
        if hasattr(self, "drv"):
            event(f"messages appended: {len(self.drv.appended) // 10 * 10}+")
            actions = {(e.tier, e.action) for e in self.cm.events}
            for tier, action in sorted(actions):
                if tier in ("autocompact", "compact", "ptl", "session_memory", "microcompact"):
                    event(f"{tier}: {action}")
            self.drv.close()
            shutil.rmtree(self.tmp, ignore_errors=True)

    # -- helpers ------------------------------------------------------------------------------
    def uid(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def tick(self, seconds: float) -> None:
        self.clock += timedelta(seconds=seconds)

    def say(self, text: str) -> None:
        self.tick(20)
        self.drv.append(UserMessage(uuid=self.uid("u"), timestamp=self.clock, content=text))

    def respond(self, text: str, outputs: list[tuple[str, str, bool]], *,
                compact_first: tuple[str | None] | None = None) -> None:
        """One model response: prepare the request (and check it), append the reply with its usage
        anchor, run the post-sampling hook, then the tool results (with ``compact_first``, a
        ``/compact`` with those instructions runs while the tools are still running)."""
        self.tick(30)
        prepared = self.cm.prepare(self.clock)
        self.check_fit(prepared)
        uses = [ToolUseBlock(id=f"toolu_{self.uid('')}", name=name, input={"command": f"step {self.n}"})
                for name, _, _ in outputs]
        reply = AssistantMessage(uuid=self.uid("a"), timestamp=self.clock, content=[TextBlock(text=text), *uses],
                                 message_id=f"msg_{self.n}")
        reply.usage = Usage(input_tokens=self.cm.input_tokens(prepared),
                            output_tokens=estimate_message(reply, self.config))
        self.drv.append(reply)
        self.cm.after_response(self.clock)
        if uses and compact_first is not None:
            self.tick(2)
            self.cm.compact(self.clock, instructions=compact_first[0])
        if uses:
            self.tick(5)
            blocks = self.cm.tool_results([ToolOutcome(u, out, err) for u, (_, out, err) in zip(uses, outputs)])
            self.drv.append(UserMessage(uuid=self.uid("r"), timestamp=self.clock, content=blocks))

    def check_fit(self, prepared: Any) -> None:
        attempted = any((e.tier, e.action) in _ATTEMPTS or e.tier == "ptl" for e in prepared.events)
        size = estimate_api_request(prepared.body, self.config)
        if not attempted and not self.cm.tracking.tripped:
            assert prepared.tokens < self.config.autocompact_threshold, (
                f"counted {prepared.tokens} tokens, threshold {self.config.autocompact_threshold}, no compaction")
            assert size <= self.config.context_window, f"request of {size} tokens, window {self.config.context_window}"

    # -- rules --------------------------------------------------------------------------------
    @rule(text=_WORDS, pasted=st.one_of(st.just(0), st.integers(1, 60_000)))
    def user_message(self, text: str, pasted: int) -> None:
        """The person types (sometimes pasting a log) and the model answers."""
        self.say(text + ("\n" + _fill("log line: ERROR connection refused", pasted) if pasted else ""))
        self.respond("on it", [])

    @rule(text=_WORDS, outputs=st.lists(st.tuples(st.sampled_from(DEFAULT_TOOLS), st.integers(0, 3_000), st.booleans()),
                                        max_size=4))
    def agent_turn(self, text: str, outputs: list[tuple[str, int, bool]]) -> None:
        self.respond(text, [(name, _fill(f"{name} output", size), err) for name, size, err in outputs])

    @rule(tool=st.sampled_from(["Bash", "Read", "Grep", "TodoWrite", "mcp__github__search_issues"]),
          size=st.integers(20_000, 150_000))
    def huge_output(self, tool: str, size: int) -> None:
        self.respond("running it", [(tool, _fill(f"{tool} huge output", size), False)])

    @rule(minutes=st.integers(1, 180))
    def idle_gap(self, minutes: int) -> None:
        self.tick(minutes * 60)

    @rule(faults=st.lists(st.sampled_from(["empty", "overloaded", "server_error"]), min_size=1, max_size=3))
    def summariser_fails(self, faults: list[str]) -> None:
        """The next compaction requests fail (each fault is consumed by one request)."""
        self.drv.llm.reference.add_faults("compact", faults)

    @rule(faults=st.lists(st.sampled_from(["ptl", "ptl_no_gap"]), min_size=1, max_size=4))
    def prompt_too_long(self, faults: list[str]) -> None:
        """The next compaction requests get ``prompt is too long`` (4 in a row exhaust the retries)."""
        self.drv.llm.reference.add_faults("compact", faults)

    @rule(instructions=st.none() | _WORDS)
    def manual_compact(self, instructions: str | None) -> None:
        self.tick(20)
        self.cm.compact(self.clock, instructions=instructions)

    @rule(instructions=st.none() | _WORDS, calls=st.integers(1, 3))
    def compact_while_tools_run(self, instructions: str | None, calls: int) -> None:
        """``/compact`` between a response's tool calls and their results (calls in flight)."""
        self.respond("running the checks", [("Bash", "3 passed", False)] * calls, compact_first=(instructions,))

    # -- invariants ---------------------------------------------------------------------------
    @invariant()
    def requests_are_api_valid(self) -> None:
        for body in self.cm.requests[self.seen_requests:]:
            assert validate_api(body["messages"]) == []
        self.seen_requests = len(self.cm.requests)

    @invariant()
    def circuit_breaker_trips_after_exactly_three(self) -> None:
        limit = self.config.max_consecutive_failures
        for e in self.cm.events[self.seen_events:]:
            if e.tier == "autocompact" and e.action in ("full_compaction", "session_memory_compaction"):
                assert not self.tripped, "an automatic compaction after the breaker tripped"
                self.failures = 0
            elif e.tier == "autocompact" and e.action == "failed":
                assert not self.tripped, "an automatic compaction attempt after the breaker tripped"
                self.failures += 1
            elif e.action == "circuit_breaker_tripped":
                assert self.failures == limit and not self.tripped, f"tripped after {self.failures} failures"
                self.tripped = True
        self.seen_events = len(self.cm.events)
        assert self.cm.tracking.consecutive_failures == self.failures
        assert self.cm.tracking.tripped == self.tripped == (self.failures >= limit)

    @invariant()
    def nothing_is_lost_from_the_transcript(self) -> None:
        data = self.drv.transcript.path.read_bytes()
        assert data.startswith(self.transcript_bytes), "the transcript was rewritten"
        for line in data[len(self.transcript_bytes):].decode("utf-8").splitlines():
            record = json.loads(line)
            assert record["uuid"] not in self.records, "a record was written twice"
            self.records[record["uuid"]] = record
        self.transcript_bytes = data
        # Earlier records sit in bytes that never change (checked above): compare the new ones.
        for m in self.drv.appended[self.verified:]:
            rec = self.records.get(m.uuid)
            assert rec is not None, f"{m.uuid} is not in the transcript"
            assert rec == record_for(m, parent_uuid=rec["parentUuid"], session_id=rec["sessionId"],
                                     version=rec["version"]), f"{m.uuid} differs in the transcript"
        self.verified = len(self.drv.appended)
        assert {m.uuid for m in self.cm.history} == set(self.records)
        assert len(self.records) == len(self.cm.history)


AgentSession.TestCase.settings = settings(
    # Each step may run a compaction through the SDK and the offline model: half the profile's
    # example count (25 sessions in the unit suite, 500 in the soak job; conftest.py), each of up
    # to 40 steps, reaches the breaker, PTL and session memory.
    max_examples=max(10, settings.default.max_examples // 2), stateful_step_count=40, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestAgentSession = AgentSession.TestCase
