"""The incremental request view against the naive one (issue 7).

``ContextManager(naive=True)`` re-derives tiers 1 and 3, the token count and the request body from
the whole context on every request (``engine/naive.py``); the default keeps them as the context
grows (``engine/incremental.py``). The property: for random sessions (tool rounds with results
of every size, errors, images, declared limits, repeated and edited reads, skills and plans, idle
gaps, manual and partial compactions, recorded summaries, calls in flight, summariser faults, and
random configs: windows that compact, both microcompact profiles, the cached path, session
memory), both engines prepare the same requests with the same token counts and warnings, emit
the same events, give the same tool results, compact identically and write the same transcript.

The other tests check that a request really costs what is new: the per-message tier work and the
API messages built, counted per request over a long session, do not grow with the history.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, currently_in_test_context, event, given, note, settings, strategies as st

from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine import budget, incremental
from pytest_ctxeval.engine.hooks import HookSet
from pytest_ctxeval.engine.pipeline import ContextManager, ToolOutcome
from pytest_ctxeval.core.ids import IdFactory
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.core.messages import (
    AssistantMessage, ImageBlock, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock, Usage, UserMessage,
)
from pytest_ctxeval.strategies import conversations
from pytest_ctxeval.core.tokens import estimate_message
from pytest_ctxeval.transcript import TranscriptWriter

from engine_kit import T0

PNG = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}
FILES = ("src/auth.py", "src/billing.py", "README.md")

# --- the script: what a scenario would say, drawn --------------------------------------------------

_sizes = st.sampled_from([0, 40, 400, 1_500, 2_600, 4_000, 7_000, 12_000, 26_000])


@st.composite
def _call(draw: Any) -> dict[str, Any]:
    name = draw(st.sampled_from(["Read", "Read", "Read", "Bash", "Grep", "Edit", "Write", "TodoWrite", "Task",
                                 "WebFetch", "Skill", "ExitPlanMode", "mcp__x__search"]))
    path = draw(st.sampled_from(FILES))
    inputs = {"Read": {"file_path": path}, "Edit": {"file_path": path, "old_string": "a", "new_string": "b"},
              "Write": {"file_path": path, "content": "x = 1\n"}, "Skill": {"skill": "pdf"},
              "ExitPlanMode": {"plan": "1. fix 2. test"}}.get(name, {"q": name.lower()})
    size = draw(_sizes)
    content: Any = (f"{name}:{draw(st.integers(0, 2))}\n" * (size // 8 + 1))[:size]
    if name == "Read" and draw(st.booleans()):
        # A file's content by path and version, so a Read can repeat an unchanged earlier one (the stub).
        content = f"# {path} v{draw(st.sampled_from([0, 0, 0, 1]))}\n" * 40
    if draw(st.integers(0, 9)) == 0:
        content = [TextBlock(text=content or "shot"), ImageBlock(source=PNG)]
    return {"name": name, "input": inputs, "content": content, "is_error": draw(st.integers(0, 9)) == 0,
            "declared": draw(st.sampled_from([None, None, None, 1_000, 30_000])),
            "reuse_id": draw(st.integers(0, 29)) == 0}  # an id used before: API-invalid, still equal


_user = st.tuples(st.just("user"), st.sampled_from(["fix the bug", "why?", "continue", "déjà vu ✓", "{\"json\": 1}"]),
                  st.booleans(), st.integers(0, 9))
_assistant = st.tuples(st.just("assistant"), st.sampled_from(["on it", "{\"k\": 2}", "done"]), st.booleans(),
                       st.lists(_call(), min_size=1, max_size=4) | st.just([]), st.integers(0, 11))
_compact = st.tuples(st.just("compact"), st.sampled_from([None, None, "keep the file list"]),
                     st.sampled_from([None, None, "up_to", "from"]), st.integers(1, 6))
_recorded = st.tuples(st.just("recorded"), st.sampled_from(["auto", "manual"]))
_gap = st.tuples(st.just("gap"), st.sampled_from([30, 600, 3_700, 7_300]))
# Mostly model responses (each prepares a request), some typed messages and gaps, now and then
# a /compact or a recorded summary (auto-compaction happens on its own in the small windows).
_step = st.integers(0, 39).flatmap(lambda k: _assistant if k < 22 else _user if k < 30 else _gap if k < 35
                                   else _compact if k < 39 else _recorded)

_configs = st.builds(
    lambda window, profile, cached, trigger, keep, recent, memory, api, auto: EngineConfig.for_window(
        window, microcompact_profile=profile, cached_microcompact=cached, cache_edits_trigger_results=trigger,
        cache_edits_keep_recent=keep, microcompact_keep_recent=recent, session_memory_enabled=memory,
        api_context_management=api, autocompact_enabled=auto),
    st.sampled_from([6_000, 12_000, 30_000, 200_000]), st.sampled_from(["default", "read_only"]), st.booleans(),
    st.integers(0, 6), st.integers(0, 3), st.integers(0, 5), st.booleans(), st.booleans(),
    st.sampled_from([True, True, True, False]),
)
# Scripted hooks (issue 20): none, or a PreCompact output, a blocking PreCompact for /compact, and
# SessionStart results at the start and after every compaction.
_hooks = st.sampled_from([None, None, None, {
    "PreCompact": [{"output": "keep the test output"}], "SessionStart": [{"output": "hook result"}]}, {
    "PreCompact": [{"matcher": "manual", "block": "frozen"}], "SessionStart": [{"matcher": "compact", "output": "r"}]}])
_faults = st.fixed_dictionaries({"compact": st.lists(st.sampled_from(
    ["ok", "ok", "ptl", "ptl_no_gap", "empty", "no_summary_tags"]), max_size=4)})


# --- both engines, in lockstep ------------------------------------------------------------------

class Twin:
    """One engine of the pair: a ContextManager with its own transcript and session folder."""

    def __init__(self, root: Path, config: EngineConfig, faults: dict[str, list[str]], naive: bool,
                 hooks: dict[str, list[dict[str, str]]] | None = None):
        self.root = root
        self.transcript = TranscriptWriter(root / "sess.jsonl", session_id="sess")
        self.cm = ContextManager(config=config, llm=make_llm("offline", faults=faults, max_retries=0),
                                 transcript=self.transcript, ids=IdFactory("twin"), naive=naive,
                                 session_dir=root / "sess")
        self.cm.hooks = HookSet.from_mapping(hooks)
        self.cm.declared_tools = ["NotebookEdit"] if hooks else []

    def norm(self, value: Any) -> str:
        """``value`` as JSON with this engine's real folder replaced (persisted-result events name it)."""
        return json.dumps(value, default=repr, sort_keys=True).replace(str(self.root), "<root>")


def _events(twin: Twin) -> list[str]:
    return [twin.norm(e.as_dict()) for e in twin.cm.events]


def _check(a: Twin, b: Twin, what: str) -> None:
    assert _events(a) == _events(b), f"events differ after {what}"
    assert a.cm.messages == b.cm.messages, f"contexts differ after {what}"


def replay(tmp: Path, config: EngineConfig, faults: dict[str, list[str]], script: list[tuple],
           hooks: dict[str, list[dict[str, str]]] | None = None) -> tuple[Twin, Twin]:
    """Run ``script`` through a naive and an incremental engine the way the runner does, comparing
    after every step; returns both, transcripts closed."""
    inc, naive = Twin(tmp / "inc", config, faults, False, hooks), Twin(tmp / "naive", config, faults, True, hooks)
    twins = (inc, naive)
    clock = T0
    for t in twins:
        t.cm.announce(clock)
    n = 0
    ids: list[str] = []
    in_flight: list[tuple[ToolUseBlock, dict[str, Any]]] = []

    def deliver(pending: list[tuple[ToolUseBlock, dict[str, Any]]]) -> None:
        nonlocal clock, n
        clock += timedelta(seconds=5)
        n += 1
        outs = []
        for t in twins:
            blocks = t.cm.tool_results([ToolOutcome(u, c["content"], c["is_error"], c["declared"]) for u, c in pending])
            t.cm.append(UserMessage(uuid=f"r{n}", timestamp=clock, content=blocks))
            outs.append(blocks)
        assert outs[0] == outs[1], "tool results differ (Read limits, unchanged-file stubs)"

    try:
        for step in script:
            kind = step[0]
            if currently_in_test_context():
                note(repr(step))
            if kind == "user":
                _, text, meta, image = step
                clock += timedelta(seconds=20)
                n += 1
                content: Any = [TextBlock(text=text), ImageBlock(source=PNG)] if image == 0 else text
                for t in twins:
                    t.cm.append(UserMessage(uuid=f"u{n}", timestamp=clock, content=content, is_meta=meta and n > 1))
            elif kind == "assistant":
                _, text, thinking, calls, flight = step
                clock += timedelta(seconds=30)
                n += 1
                prepared = [t.cm.prepare(clock) for t in twins]
                p, q = prepared
                assert p.body == q.body, "request bodies differ"
                assert (p.tokens, p.warning, p.turn) == (q.tokens, q.warning, q.turn)
                assert p.compaction == q.compaction
                assert p.refused == q.refused
                if p.refused:  # at the blocking limit: not sent, no response (as the runner does)
                    _check(inc, naive, repr(step))
                    continue
                uses = []
                for c in calls:
                    tid = ids[len(ids) // 2] if c["reuse_id"] and ids else f"toolu_{n}_{len(uses)}"
                    ids.append(tid)
                    uses.append((ToolUseBlock(id=tid, name=c["name"], input=c["input"]), c))
                blocks: list[Any] = [ThinkingBlock(thinking="hmm", signature="s")] if thinking else []
                blocks += [TextBlock(text=text)] + [u for u, _ in uses]
                anchors = [t.cm.input_tokens(pr) for t, pr in zip(twins, prepared)]
                assert anchors[0] == anchors[1], "input_tokens differ"
                for t in twins:
                    reply = AssistantMessage(uuid=f"a{n}", timestamp=clock, content=blocks, message_id=f"msg_{n}")
                    reply.usage = Usage(input_tokens=anchors[0], output_tokens=estimate_message(reply, config))
                    t.cm.append(reply)
                    t.cm.after_response(clock)
                if uses and flight == 0:
                    in_flight = uses  # answered after the compaction that follows
                    step = ("compact", None, None, 1)
                elif uses:
                    deliver(uses)
            elif kind == "gap":
                clock += timedelta(seconds=step[1])
            elif kind == "recorded":
                clock += timedelta(seconds=20)
                for t in twins:
                    t.cm.install_recorded(clock, trigger=step[1], pre_tokens=0, summary="Claude Code's own summary.")
            if step[0] == "compact":
                _, instructions, partial, count = step
                clock += timedelta(seconds=20)
                results = [t.cm.compact(clock, instructions=instructions, partial=partial, messages=count)
                           for t in twins]
                assert results[0] == results[1], "compaction results differ"
                if in_flight:
                    deliver(in_flight)
                    in_flight = []
            _check(inc, naive, repr(step))
    finally:
        for t in twins:
            t.transcript.close()
    return inc, naive


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(config=_configs, faults=_faults, script=st.lists(_step, min_size=16, max_size=80), hooks=_hooks)
def test_incremental_and_naive_pipelines_agree(tmp_path_factory, config, faults, script, hooks):
    """Identical requests, counts, events, tool results, compactions and transcripts, step by step."""
    inc, naive = replay(tmp_path_factory.mktemp("twins"), config, faults, script, hooks)
    for e in {(e.tier, e.action) for e in inc.cm.events}:
        event(f"{e[0]}/{e[1]}")
    event(f"requests: {len(inc.cm.requests) // 10 * 10}+")
    assert inc.cm.requests == naive.cm.requests
    assert inc.cm.history == naive.cm.history
    assert [(c.index, c.turn, c.result, c.history, c.requests_after) for c in inc.cm.compactions] == \
        [(c.index, c.turn, c.result, c.history, c.requests_after) for c in naive.cm.compactions]
    assert (inc.root / "sess.jsonl").read_bytes() == (naive.root / "sess.jsonl").read_bytes()
    files = sorted(p.relative_to(inc.root) for p in (inc.root / "sess").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(naive.root) for p in (naive.root / "sess").rglob("*") if p.is_file())
    for f in files:
        assert (inc.root / f).read_bytes() == (naive.root / f).read_bytes(), f"{f} differs"


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(config=_configs, messages=conversations(min_turns=2, max_turns=8, images=True, thinking=True,
                                               huge_result_chars=30_000, long_message_chars=3_000))
def test_agree_on_generated_conversations(tmp_path_factory, config, messages):
    """The same over ``pytest_ctxeval.strategies.conversations()``: responses split into records
    sharing a message id, results answered out of order, meta and slash-command messages. Fed as
    the runner feeds a scenario: a request before each new response (whose first record gets the
    usage anchor), tool results through the tools' own limits."""
    root = tmp_path_factory.mktemp("conv")
    twins = (Twin(root / "inc", config, {}, False), Twin(root / "naive", config, {}, True))
    calls: dict[str, ToolUseBlock] = {}
    last_mid = None
    for m in messages:
        if isinstance(m, AssistantMessage):
            if (m.message_id or m.uuid) != last_mid:
                p, q = (t.cm.prepare(m.timestamp) for t in twins)
                assert (p.body, p.tokens, p.warning, p.compaction) == (q.body, q.tokens, q.warning, q.compaction)
                anchor = twins[0].cm.input_tokens(p)
                assert anchor == twins[1].cm.input_tokens(q)
                m = m.model_copy(update={"usage": Usage(input_tokens=anchor, output_tokens=estimate_message(m, config))})
            last_mid = m.message_id or m.uuid
            calls.update({u.id: u for u in m.content if isinstance(u, ToolUseBlock)})
            for t in twins:
                t.cm.append(m)
                t.cm.after_response(m.timestamp)
            continue
        last_mid = None
        results = [b for b in m.content if isinstance(b, ToolResultBlock)] if isinstance(m.content, list) else []
        if results:
            out = [t.cm.tool_results([ToolOutcome(calls[r.tool_use_id], r.content, r.is_error) for r in results])
                   for t in twins]
            assert out[0] == out[1]
            others = [b for b in m.content if not isinstance(b, ToolResultBlock)]
            m = UserMessage(uuid=m.uuid, timestamp=m.timestamp, content=out[0] + others)
        for t in twins:
            t.cm.append(m)
    end = messages[-1].timestamp + timedelta(seconds=20)
    for t in twins:
        t.cm.prepare(end)
        t.cm.compact(end)
        t.cm.prepare(end)
        t.transcript.close()
    _check(*twins, "the conversation and a /compact")
    assert twins[0].cm.requests == twins[1].cm.requests
    assert (root / "inc" / "sess.jsonl").read_bytes() == (root / "naive" / "sess.jsonl").read_bytes()


def test_the_property_sees_the_tiers_act(tmp_path):
    """Control for the property: one fixed script makes every tier act in both engines alike
    (budget, stub, time-based clear, a compaction), so agreement is not agreement on nothing."""
    config = EngineConfig.for_window(12_000, session_memory_enabled=False)
    big = {"name": "Bash", "input": {"q": "make"}, "content": "log line\n" * 1_000, "is_error": False,
           "declared": None, "reuse_id": False}
    read = {"name": "Read", "input": {"file_path": "src/auth.py"}, "content": "def f(): pass\n", "is_error": False,
            "declared": None, "reuse_id": False}
    script = [("user", "fix the bug", False, 1), ("assistant", "on it", False, [big, read], 1),
              ("assistant", "again", False, [read], 1)]
    script += [("assistant", "more", False, [big], 1)] * 6
    script += [("gap", 3_700), ("assistant", "back", False, [read], 1), ("compact", None, None, 1)]
    inc, naive = replay(tmp_path, config, {}, script)
    actions = {(e.tier, e.action) for e in inc.cm.events}
    assert {("budget", "persisted"), ("dedupe", "file_unchanged_stub"), ("microcompact", "time_based_clear")} <= actions
    assert inc.cm.compactions and len(inc.cm.compactions) == len(naive.cm.compactions)


# --- a request costs what is new --------------------------------------------------------------------

def _session(tmp_path: Path, config: EngineConfig, naive: bool = False) -> tuple[ContextManager, TranscriptWriter]:
    transcript = TranscriptWriter(tmp_path / f"s{int(naive)}.jsonl", session_id="s")
    return ContextManager(config=config, llm=make_llm("offline", max_retries=0), transcript=transcript,
                          ids=IdFactory("cost"), naive=naive, session_dir=tmp_path / "s"), transcript


def _round(cm: ContextManager, k: int, clock: Any) -> None:
    prepared = cm.prepare(clock)
    use = ToolUseBlock(id=f"t{k}", name=("Read", "Bash", "Grep")[k % 3], input={"file_path": f"f{k % 40}.py"})
    reply = AssistantMessage(uuid=f"a{k}", timestamp=clock, content=[TextBlock(text=f"step {k}"), use],
                             message_id=f"m{k}")
    reply.usage = Usage(input_tokens=cm.input_tokens(prepared), output_tokens=estimate_message(reply))
    cm.append(reply)
    cm.after_response(clock)
    content = f"output {k}\n" * (30 if k % 25 else 8_000)   # every 25th result is persisted (tier 1)
    blocks = cm.tool_results([ToolOutcome(use, content)])
    cm.append(UserMessage(uuid=f"r{k}", timestamp=clock, content=blocks))


@pytest.mark.parametrize("naive", [False, True], ids=["incremental", "naive"])
def test_a_request_touches_only_the_new_round(tmp_path, monkeypatch, naive):
    """Over 400 rounds (800 messages, no compaction), the incremental pipeline takes each message
    through tier 1 once and builds only the API messages of the new round: per request, the work
    counted is the same at the end of the session as at its start. The naive one (control) redoes
    it all, so its count grows with the history: the counter can tell them apart (the control
    runs 200 rounds: its work is quadratic, and 200 already make its last requests over 10 times
    its early ones)."""
    budget_calls, api_messages = [0], [0]
    real_budget, real_to_api = budget.budget_message, incremental.to_api

    def counted_budget(message: Any, **kw: Any) -> Any:
        budget_calls[0] += 1
        return real_budget(message, **kw)

    def counted_to_api(messages: Any) -> Any:
        api_messages[0] += len(messages)
        return real_to_api(messages)

    monkeypatch.setattr(incremental, "budget_message", counted_budget)
    monkeypatch.setattr(budget, "budget_message", counted_budget)  # what apply_budget (naive) calls
    monkeypatch.setattr(incremental, "to_api", counted_to_api)
    import pytest_ctxeval.engine.naive as naive_module
    monkeypatch.setattr(naive_module, "to_api", counted_to_api)
    cm, transcript = _session(tmp_path, EngineConfig(context_window=10**9), naive)
    cm.append(UserMessage(uuid="u0", timestamp=T0, content="go"))
    per_request = []
    for k in range(200 if naive else 400):
        before = (budget_calls[0], api_messages[0])
        _round(cm, k, T0 + timedelta(seconds=30 * k))
        per_request.append((budget_calls[0] - before[0], api_messages[0] - before[1]))
    transcript.close()
    assert any(e.action == "persisted" for e in cm.events) and not cm.compactions
    early, late = per_request[10:20], per_request[-10:]
    if naive:
        assert sum(x for x, _ in late) > 10 * sum(x for x, _ in early), "control: the naive count grows"
    else:
        assert max(x for x, _ in late) <= 2 and max(y for _, y in late) <= 2, late
        assert max(per_request[1:]) == max(early), "the work per request does not grow with the history"


def test_a_time_based_clear_touches_what_it_clears(tmp_path, monkeypatch):
    """An idle gap clears all but the 5 most recent compactable results; the incremental view
    rebuilds the API messages of the cleared results only, then goes back to the new round."""
    cm, transcript = _session(tmp_path, EngineConfig(context_window=10**9))
    cm.append(UserMessage(uuid="u0", timestamp=T0, content="go"))
    for k in range(60):
        _round(cm, k, T0 + timedelta(seconds=30 * k))
    built = [0]
    real_to_api = incremental.to_api
    monkeypatch.setattr(incremental, "to_api", lambda ms: (built.__setitem__(0, built[0] + len(ms)), real_to_api(ms))[1])
    later = T0 + timedelta(hours=3)
    cm.prepare(later)
    [clear] = [e for e in cm.events if e.action == "time_based_clear"]
    assert len(clear.ids) == 55
    assert built[0] == 55 + 2, "one API message per message holding a cleared result, and the new round's two"
    built[0] = 0
    _round(cm, 60, later)
    cm.prepare(later + timedelta(seconds=30))
    assert built[0] <= 2
    transcript.close()


def test_a_context_changed_behind_the_view_is_followed(tmp_path):
    """What the incremental view cannot see coming — the context replaced or edited in place, the
    tier state swapped, a result's tool changed — makes it start over, so it still agrees with a
    naive engine fed the same way."""
    twins = [_session(tmp_path / name, EngineConfig.for_window(20_000), naive) for name, naive
             in (("inc", False), ("naive", True))]
    bodies: list[list[Any]] = [[], []]
    for (cm, _), out in zip(twins, bodies):
        cm.append(UserMessage(uuid="u0", timestamp=T0, content="go"))
        for k in range(6):
            _round(cm, k, T0 + timedelta(seconds=30 * k))
        out.append(cm.prepare(T0 + timedelta(minutes=5)).body)
        cm.messages[2] = cm.messages[2].model_copy(
            update={"content": [ToolResultBlock(tool_use_id="t0", content="rewritten in place")]})
        cm.messages.pop()  # the last message is no longer where it was
        out.append(cm.prepare(T0 + timedelta(minutes=6)).body)
        cm.messages = cm.messages[:5]  # a new list
        out.append(cm.prepare(T0 + timedelta(minutes=7)).body)
        cm.micro = type(cm.micro)()
        cm.micro.cleared_ids.add("t1")
        out.append(cm.prepare(T0 + timedelta(minutes=8)).body)
        cm.micro.cleared_ids.add("t0")  # the same state object, changed in place
        out.append(cm.prepare(T0 + timedelta(minutes=9)).body)
        cm.tool_results([ToolOutcome(ToolUseBlock(id="t0", name="TodoWrite", input={}), "ok")])  # t0 was a Read
        out.append(cm.prepare(T0 + timedelta(hours=2)).body)
    for _cm, transcript in twins:
        transcript.close()
    assert bodies[0] == bodies[1]
    assert "rewritten in place" in json.dumps(bodies[0][1]["messages"])
    assert "[Old tool result content cleared]" in json.dumps(bodies[0][3]["messages"])
    assert json.dumps(bodies[0][4]["messages"]).count("[Old tool result content cleared]") == 2
