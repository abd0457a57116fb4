"""Properties of the reference engine, over conversations from ``pytest_ctxeval.strategies``.

Each test is one named property; its docstring states the invariant and the seed rule it comes
from. Example counts come from the Hypothesis profile (conftest.py: ``ci`` and ``dev`` 50, ``soak`` 1,000) except
where a ``@settings`` says why.
"""

from __future__ import annotations

import json
import math
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, example, given, note, settings, strategies as st

from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine.compact import CompactionFailed, compact_conversation
from pytest_ctxeval.engine.microcompact import CLEARED, MicrocompactState, apply_cleared, time_based_clear
from pytest_ctxeval.engine.ptl import PTL_MARKER, truncate_head_for_ptl_retry
from pytest_ctxeval.engine.session_memory import calculate_keep_index, has_text_block
from pytest_ctxeval.engine.boundaries import last_boundary_floor
from pytest_ctxeval.core.ids import IdFactory
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.core.messages import (
    AssistantMessage, CompactBoundary, ToolResultBlock, ToolUseBlock, UserMessage, to_api, tool_results,
    tool_uses, validate_api,
)
from pytest_ctxeval.strategies import START, conversations, histories_with_boundary, sessions, tool_rounds
from pytest_ctxeval.core.tokens import count_tokens, estimate_message, estimate_messages, estimate_text

from prop_kit import Driver, ScriptedSummariser, lost_from_transcript, prompts

CFG = EngineConfig()
#: For properties that drive a ContextManager (a transcript on disk, the SDK and the offline model):
#: slower per example than Hypothesis's default health check expects; the example count is unchanged.
SLOW = settings(suppress_health_check=[HealthCheck.too_slow])


def _mid(m: Any) -> str:
    return m.message_id or m.uuid


def _is_marker(m: Any) -> bool:
    return isinstance(m, UserMessage) and m.content == PTL_MARKER


def _round_starts(body: list[Any]) -> list[int]:
    """Indexes (after the first API round) where a new model response starts."""
    return [i for i in range(1, len(body)) if isinstance(body[i], AssistantMessage)
            and not any(isinstance(p, AssistantMessage) and _mid(p) == _mid(body[i]) for p in body[:i])]


def _tokens(messages: list[Any]) -> int:
    return sum(estimate_message(m, CFG) for m in messages)


# --- tier 5: PTL truncation -------------------------------------------------------------------------

@given(messages=st.one_of(conversations(max_turns=5), histories_with_boundary()),
       gap=st.none() | st.integers(0, 2_000), earlier_marker=st.booleans())
def test_ptl_truncation_drops_whole_oldest_rounds(messages, gap, earlier_marker):
    """PTL truncation (000:164-175, 003:293-320). With two or more API rounds, the result is the
    marker then a suffix of the input made of whole API rounds (it starts where a model response
    starts), strictly shorter than the input, keeping at least one round, never starting with a
    tool_result, and API-valid. A parsed gap is covered by the estimate of the rounds dropped,
    with no round more than needed (unless only the last round is left); without a gap 20 % of
    the rounds go, at least one. An earlier retry's marker is not a round. With one round, None."""
    if earlier_marker:
        messages = [UserMessage(uuid="old-marker", timestamp=START, content=PTL_MARKER), *messages]
    body = [m for m in messages if not isinstance(m, CompactBoundary) and not _is_marker(m)]
    starts = _round_starts(body)
    out = truncate_head_for_ptl_retry(messages, gap, CFG, marker_uuid="marker")
    event("one round: nothing to drop" if not starts else "parsed gap" if gap else "no gap: 20 %")
    if not starts:
        assert out is None
        return
    assert out is not None
    result, dropped = out
    assert _is_marker(result[0]) and sum(map(_is_marker, result)) == 1
    kept = result[1:]
    cut = len(body) - len(kept)
    assert 0 < len(kept) < len(body), "strictly shorter, at least one round kept"
    assert body[cut:] == kept, "the kept part is a suffix of the input"
    assert cut in starts, "the cut is at the start of an API round (whole rounds only)"
    assert not tool_results(kept[0])
    assert validate_api(to_api(result)) == []
    rounds = len(starts) + 1
    assert dropped == starts.index(cut) + 1
    if gap:
        covered = _tokens(body[:cut])
        assert covered >= gap or cut == starts[-1], f"dropped {covered} tokens for a gap of {gap}"
        if cut != starts[0]:
            one_fewer = starts[starts.index(cut) - 1]
            assert _tokens(body[:one_fewer]) < gap, "dropped more rounds than the gap needed"
    else:
        assert dropped == min(max(1, math.floor(rounds * CFG.ptl_drop_fraction)), rounds - 1)


@SLOW
@given(messages=conversations(min_turns=2, max_turns=6),
       plan=st.lists(st.sampled_from(["ptl", "ptl_no_gap", "ok"]), max_size=6),
       window=st.sampled_from([200_000, 4_000, 2_000]))
def test_ptl_retries_terminate_within_three(messages, plan, window):
    """The PTL retry loop (003:320 ``MAX_PTL_RETRIES = 3``): whatever the model answers (faults,
    or real overflow of a small window), compaction ends after at most 1 + 3 requests, each retry
    API-valid and shorter than the one before, and either succeeds with at most 3 PTL steps or
    fails with :class:`CompactionFailed` (which the caller counts toward the circuit breaker)."""
    config = EngineConfig.for_window(window)
    llm = make_llm("offline", faults={"compact": plan}, max_retries=0)
    try:
        result = compact_conversation(messages, llm=llm, config=config, prompts=prompts(), ids=IdFactory("p"),
                                      now=START, transcript_path="/t/s.jsonl", pre_tokens=0)
        steps = result.ptl_steps
    except CompactionFailed as exc:
        steps = exc.ptl_steps
    requests = [r["messages"] for r in llm.reference.requests]
    note(f"{len(requests)} requests, {len(steps)} PTL steps")
    event(f"PTL steps: {len(steps)}")
    assert len(steps) <= config.max_ptl_retries
    assert len(requests) == len(steps) + 1 <= 1 + config.max_ptl_retries
    marker = {"role": "user", "content": PTL_MARKER}
    for earlier, later in zip(requests, requests[1:]):
        assert validate_api(later) == []
        body = earlier[1:] if earlier[0] == marker else earlier
        assert later[0] == marker and 1 <= len(later) - 1 < len(body), "a retry must drop API rounds"
        assert body[len(body) - (len(later) - 1):] == later[1:], "a retry keeps a suffix of the previous request"


# --- tier 4: the session-memory keep window -----------------------------------------------------

def _valid_cut(messages: list[Any], k: int, floor: int) -> bool:
    """``messages[k:]`` splits no tool_use from its result and no records sharing a message id."""
    kept, rest = messages[k:], messages[floor:k]
    calls = {u.id for m in kept for u in tool_uses(m)}
    if any(r.tool_use_id not in calls for m in kept for r in tool_results(m)):
        return False
    ids_before = {m.message_id for m in rest if isinstance(m, AssistantMessage) and m.message_id}
    return not any(isinstance(m, AssistantMessage) and m.message_id in ids_before for m in kept)


@given(messages=histories_with_boundary(max_turns=5), data=st.data())
def test_keep_window_respects_pairs_ids_boundary_and_budgets(messages, data):
    """Session-memory keep window (004:406-436, ``calculateMessagesToKeepIndex`` and
    ``adjustIndexToPreserveAPIInvariants``): the kept part ``messages[start:]`` never splits a
    tool_use from its tool_result, never splits records sharing a message id, never crosses the
    last compact boundary; unless it reaches that boundary it meets the minimums (tokens and text
    messages) or the maximum; and it never grows past the maximum except to keep a pair whole: no
    valid cut between ``start`` and the first message after the last summarised one keeps the
    maximum or more."""
    min_tokens = data.draw(st.integers(0, 300), label="min_tokens")
    max_tokens = data.draw(st.integers(1, 600), label="max_tokens")
    min_texts = data.draw(st.integers(0, 6), label="min_texts")
    config = EngineConfig(sm_keep_min_tokens=min_tokens, sm_keep_max_tokens=max_tokens,
                          sm_keep_min_text_messages=min_texts)
    last_summarised = data.draw(st.integers(-1, len(messages) - 1), label="last_summarised")
    floor = last_boundary_floor(messages)
    start = calculate_keep_index(messages, last_summarised, config, floor)
    kept = messages[start:]
    note(f"floor={floor} start={start} kept tokens={estimate_messages(kept, CFG)}")
    first_unsummarised = min(max(last_summarised + 1, floor), len(messages))
    event("kept part reaches the boundary" if start == floor else "window expanded" if start < first_unsummarised
          else "window not expanded")
    assert floor <= start <= len(messages), "never crosses the last boundary"
    assert not any(isinstance(m, CompactBoundary) for m in kept)
    assert _valid_cut(messages, start, floor), "the keep window splits a tool pair or a message id"
    # measured as the seed's estimateMessageTokens, with the 4/3 margin (003:351-354)
    tokens, texts = estimate_messages(kept, CFG), sum(map(has_text_block, kept))
    if start > floor:
        assert tokens >= max_tokens or (tokens >= min_tokens and texts >= min_texts), "minimums not met"
    for k in range(start + 1, first_unsummarised + 1):
        if _valid_cut(messages, k, floor):
            assert estimate_messages(messages[k:], CFG) < max_tokens, f"grew past the maximum beyond the valid cut {k}"


# --- tier 3: microcompact -------------------------------------------------------------------------

def _snapshot(messages: list[Any]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json") for m in messages]


@given(messages=conversations(max_turns=6, max_parallel=4, images=True),
       profile=st.sampled_from(["default", "read_only"]))
def test_microcompact_clears_only_old_compactable_results(messages, profile):
    """Time-based microcompact (000:104-112, 004:197-226): only results of compactable tools
    change (to the cleared marker), the 5 most recent of them stay, every older one is cleared;
    other blocks and messages are untouched; the output is API-valid; applying it twice equals
    applying it once; the input (the transcript's copy) is never modified."""
    config = EngineConfig(microcompact_profile=profile)
    names = {u.id: u.name for m in messages for u in tool_uses(m)}
    before = _snapshot(messages)
    state = MicrocompactState()
    time_based_clear(messages, config, state, lambda i: names.get(i, ""))
    view = apply_cleared(messages, state.cleared_ids)
    assert _snapshot(messages) == before, "the original messages were modified"
    assert len(view) == len(messages)
    compactable = [r.tool_use_id for m in messages for r in tool_results(m) if names[r.tool_use_id]
                   in config.compactable_tools]
    recent = set(compactable[-config.microcompact_keep_recent:]) if config.microcompact_keep_recent else set()
    for original, seen in zip(messages, view):
        if original == seen:
            continue
        assert isinstance(original, UserMessage)
        assert original.model_dump(exclude={"content"}) == seen.model_dump(exclude={"content"})
        for a, b in zip(original.content, seen.content, strict=True):
            if a != b:
                assert isinstance(a, ToolResultBlock) and names[a.tool_use_id] in config.compactable_tools
                assert b.content == CLEARED and b.tool_use_id == a.tool_use_id and b.is_error == a.is_error
    cleared = {r.tool_use_id for m in view for r in tool_results(m) if r.content == CLEARED}
    event(f"results cleared: {min(len(cleared), 3)}{'+' if len(cleared) >= 3 else ''}")
    assert not cleared & recent, "one of the most recent results was cleared"
    assert set(compactable) - recent <= cleared, "an old compactable result was kept"
    assert validate_api(to_api(view)) == []
    again = MicrocompactState()
    time_based_clear(view, config, again, lambda i: names.get(i, ""))
    assert apply_cleared(view, again.cleared_ids) == view, "applying it twice differs from once"
    assert time_based_clear(messages, config, state, lambda i: names.get(i, "")) == []


@SLOW
@given(messages=conversations(min_turns=2, max_turns=5, max_parallel=4), gap=st.integers(0, 180))
def test_microcompact_in_the_pipeline_leaves_the_transcript_whole(messages, gap):
    """Microcompact through :class:`ContextManager` (003:108-146): after an idle gap the request
    is API-valid, old results are cleared exactly when the gap is 60 minutes or more and more
    than 5 compactable results are live, and the engine's context and transcript still hold every
    original byte."""
    with tempfile.TemporaryDirectory() as tmp:
        drv = Driver(Path(tmp), EngineConfig(autocompact_enabled=False))
        drv.feed(messages)
        if isinstance(drv.cm.messages[-1], AssistantMessage):
            drv.append(UserMessage(uuid="u-last", timestamp=messages[-1].timestamp, content="and now?"))
        prepared = drv.cm.prepare(messages[-1].timestamp + timedelta(minutes=gap))
        drv.close()
        assert validate_api(prepared.body["messages"]) == []
        cleared = [e for e in prepared.events if e.action == "time_based_clear"]
        names = {u.id: u.name for m in drv.cm.messages for u in tool_uses(m)}
        compactable = [r for m in drv.cm.messages for r in tool_results(m) if names[r.tool_use_id]
                       in CFG.compactable_tools]
        if gap < CFG.microcompact_gap_minutes:
            assert not cleared, "cleared with a warm cache"
        elif len(compactable) > CFG.microcompact_keep_recent:
            assert cleared, "a cold cache and old results, but nothing cleared"
        assert drv.cm.messages == drv.appended, "the context lost an original"
        assert lost_from_transcript(drv.transcript.path, drv.appended) == []


# --- tier 1: the tool-result budget -----------------------------------------------------------------

def _block_stream(body: dict[str, Any]) -> list[tuple[str, str]]:
    """A request as the sequence the prompt cache sees: the system prompt, then each message's
    blocks in order (a string content is one text block)."""
    out = [("system", json.dumps(body.get("system"), ensure_ascii=False))]
    for m in body["messages"]:
        blocks = [{"type": "text", "text": m["content"]}] if isinstance(m["content"], str) else m["content"]
        out += [(m["role"], json.dumps(b, sort_keys=True, ensure_ascii=False)) for b in blocks]
    return out


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.txt"))}


BUDGET_TOOLS = ("Bash", "Grep", "Read", "WebFetch", "Task", "mcp__github__search_issues")
#: The seed's budgets shrunk (not the window scaled): thresholds of a few hundred characters, so both
#: levels act on results that shrink to a few readable lines. Bash 300, Grep 200, others 500 chars;
#: 1,200 chars of results per message; Read's own limits out of the way but its line cap at 100.
BUDGET = EngineConfig(autocompact_enabled=False, tool_result_chars={"Bash": 300, "Grep": 200, "McpAuth": 100},
                      default_max_result_chars=500, per_message_result_chars=1_200, preview_chars=40,
                      read_max_lines=100)


@SLOW
@given(messages=conversations(min_turns=1, max_turns=5, max_parallel=5, tools=BUDGET_TOOLS,
                              huge_result_chars=1_500))
def test_budget_decisions_are_frozen(messages):
    """Tool-result budget (003:437-470, ``ContentReplacementState``): for any sequence of appended
    rounds, every request's block stream (system, then each message's blocks) is a prefix of the
    next request's, so the prompt cache survives every persistence decision; a file in
    ``tool-results/`` never changes or disappears, and a second run over the same session folder
    with different outputs for the same ids does not overwrite it (exclusive create)."""
    config = BUDGET
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        drv = Driver(root, config)
        files: dict[str, bytes] = {}
        for m in messages:
            drv.feed_one(m)
            now = _files(root)
            assert {k: now.get(k) for k in files} == files, "a persisted file changed or disappeared"
            files = now
        drv.prepared.append(drv.cm.prepare(messages[-1].timestamp))
        drv.close()
        streams = [_block_stream(p.body) for p in drv.prepared]
        for i, (earlier, later) in enumerate(zip(streams, streams[1:])):
            assert later[:len(earlier)] == earlier, f"request {i + 2} rewrote part of request {i + 1}"
        note(f"{len(files)} results persisted")
        event(f"results persisted: {min(len(files), 3)}{'+' if len(files) >= 3 else ''}")
        event("message budget used" if any(e.detail.startswith("message_budget") for e in drv.cm.events)
              else "message budget not used")
        changed = [m.model_copy(update={"content": [r.model_copy(update={"content": "CHANGED " + str(r.content)})
                                                    for r in tool_results(m)]}) if tool_results(m) else m
                   for m in messages]
        rerun = Driver(root, config)
        rerun.feed(changed)
        rerun.cm.prepare(messages[-1].timestamp)
        rerun.close()
        assert {k: v for k, v in _files(root).items() if k in files} == files, "a persisted file was overwritten"


# --- compaction output --------------------------------------------------------------------------

_SECTIONS = "\n".join(f"{i}. {t}:\n   - fix the login bug" for i, t in enumerate(
    ["Primary Request and Intent", "Key Technical Concepts", "Files and Code Sections", "Errors and fixes",
     "Problem Solving", "All user messages", "Pending Tasks", "Current Work", "Optional Next Step"], 1))
_PIECES = ["<analysis>", "</analysis>", "<summary>", "</summary>", "fix the login bug", _SECTIONS, " ", "\n"]


@st.composite
def summariser_replies(draw: Any) -> str:
    """Anything a summariser might return: empty, blank, no tags, tags in any order or unclosed,
    the nine sections, and huge replies (size drawn apart from content)."""
    parts = draw(st.lists(st.sampled_from(_PIECES), max_size=7))
    if draw(st.booleans()):
        size = draw(st.integers(0, 400_000))
        parts.insert(draw(st.integers(0, len(parts))), ("all work and no play " * (size // 21 + 1))[:size])
    return "".join(parts)


_OFFLINE = ["ok", "empty", "no_summary_tags", "sections_out_of_order", "ptl", "ptl_no_gap", "overloaded"]


_COMPACTIONS = dict(reply=st.none() | summariser_replies(), fault=st.sampled_from(_OFFLINE),
                    how=st.sampled_from(["manual", "instructions", "up_to", "from"]), keep=st.integers(0, 12),
                    memory=st.booleans())


def _compact_and_check(messages: list[Any], reply: str | None, fault: str, how: str, keep: int, memory: bool,
                       in_flight: bool) -> None:
    """Feed ``messages`` (with ``in_flight``, all but the last results, so the calls are still
    running), compact as ``how`` says, then check the context, the next request and the transcript."""
    with tempfile.TemporaryDirectory() as tmp:
        llm = ScriptedSummariser(reply) if reply is not None else make_llm(
            "offline", faults={"compact": [fault]}, max_retries=0)
        # Session memory with tiny budgets, so notes are written (by the same summariser) early and
        # the keep window holds a few messages.
        config = EngineConfig(autocompact_enabled=False, session_memory_enabled=memory, sm_init_tokens=40,
                              sm_update_growth_tokens=40, sm_keep_min_tokens=20, sm_keep_max_tokens=200,
                              sm_keep_min_text_messages=1)
        drv = Driver(Path(tmp), config, llm=llm)
        pending: list[Any] = []
        if in_flight:
            messages, pending = messages[:-1], messages[-1:]  # /compact while the tools still run
        drv.feed(messages)
        before = list(drv.cm.messages)
        now = messages[-1].timestamp + timedelta(seconds=20)
        if how == "manual":
            result = drv.cm.compact(now)
        elif how == "instructions":
            result = drv.cm.compact(now, instructions="keep the test output")
        else:
            result = drv.cm.compact(now, partial=how, messages=min(keep, len(before)))
        note(f"result: {result and result.kind}; events: {[(e.tier, e.action) for e in drv.cm.events]}")
        event(f"{how}: {result.kind if result else 'failed'}")
        assert validate_api(to_api(drv.cm.messages), allow_pending_tool_use=in_flight) == []
        if result is None:
            assert drv.cm.messages == before, "a failed compaction changed the context"
        else:
            assert any(isinstance(m, CompactBoundary) for m in drv.cm.messages)
            assert result.summary_message in drv.cm.messages
        for m in pending:  # the results arrive and answer the calls that were in flight
            drv.feed_one(m.model_copy(update={"timestamp": now}))
        drv.append(UserMessage(uuid="u-next", timestamp=now, content="go on"))
        assert validate_api(drv.cm.prepare(now).body["messages"]) == []
        drv.close()
        assert {m.uuid for m in drv.appended} <= {m.uuid for m in drv.cm.history}
        assert lost_from_transcript(drv.transcript.path, drv.cm.history) == []
        assert lost_from_transcript(drv.transcript.path, drv.cm.messages, ignore_usage=True) == []


@SLOW
@given(messages=conversations(min_turns=1, max_turns=5, images=True, thinking=True), **_COMPACTIONS)
def test_compaction_output_is_api_valid_and_nothing_is_lost(messages, reply, fault, how, keep, memory):
    """Compaction output (003:217-229, 004:456-612): whatever the summariser returns (empty,
    blank, no tags, tags in the wrong order or unclosed, huge, an API fault) and however the
    compaction was asked for (``/compact``, which tries session memory first when it is on and
    notes exist, with instructions, partial ``up_to`` / ``from``), the context afterwards is
    API-valid (so is the next request), a failure leaves it as it was, and the transcript still
    holds every original message, byte for byte, plus the boundary and summary."""
    _compact_and_check(messages, reply, fault, how, keep, memory, in_flight=False)


def _then_in_flight(messages: list[Any], round_: list[Any]) -> list[Any]:
    """``messages`` followed by ``round_`` (a response with tool calls and its results), with the
    round's ids and clock moved after the conversation's."""
    shift = messages[-1].timestamp - START + timedelta(seconds=10)
    ids = {u.id: f"toolu_f{u.id.removeprefix('toolu_')}" for m in round_ for u in tool_uses(m)}

    def moved(m: Any) -> Any:
        content = [b.model_copy(update={"id": ids[b.id]}) if b.type == "tool_use" else
                   b.model_copy(update={"tool_use_id": ids[b.tool_use_id]}) if b.type == "tool_result" else b
                   for b in m.content]
        update = {"uuid": f"f-{m.uuid}", "timestamp": m.timestamp + shift, "content": content}
        if isinstance(m, AssistantMessage):
            update["message_id"] = f"f-{m.message_id}"
        return m.model_copy(update=update)

    return [*messages, *map(moved, round_)]


@SLOW
@given(messages=conversations(min_turns=1, max_turns=4), round_=tool_rounds(max_parallel=3, split_records=False),
       **_COMPACTIONS)
def test_compaction_with_calls_in_flight(messages, round_, reply, fault, how, keep, memory):
    """The same, with ``/compact`` run while the last response's tool calls are still running
    (the engine keeps that message, unsummarised, after the summary; ``ContextManager._in_flight``):
    the context is API-valid but for those calls, and once their results arrive the next request
    is API-valid. The in-flight response is one record here (see the next test)."""
    _compact_and_check(_then_in_flight(messages, round_), reply, fault, how, keep, memory, in_flight=True)


def _split_in_flight_example() -> list[Any]:
    """The shrunk counterexample: a response written as two records sharing a message id."""
    t = START
    return [
        UserMessage(uuid="u1", timestamp=t + timedelta(seconds=20), content="fix the login bug"),
        AssistantMessage(uuid="a2", timestamp=t + timedelta(seconds=50), message_id="msg_1", content=[
            ToolUseBlock(id="toolu_01", name="Read", input={"file_path": "src/auth.py"})]),
        AssistantMessage(uuid="a3", timestamp=t + timedelta(seconds=50), message_id="msg_1", content=[
            ToolUseBlock(id="toolu_02", name="Read", input={"file_path": "src/auth.py"})]),
        UserMessage(uuid="u4", timestamp=t + timedelta(seconds=55), content=[
            ToolResultBlock(tool_use_id="toolu_01", content=""), ToolResultBlock(tool_use_id="toolu_02", content="")]),
    ]


@example(messages=_split_in_flight_example(), reply=None, fault="ok", how="manual", keep=0, memory=False)
@SLOW
@given(messages=st.tuples(conversations(min_turns=1, max_turns=4),
                          tool_rounds(min_parallel=2, max_parallel=3, split_records=True))
       .map(lambda pair: _then_in_flight(*pair)), **_COMPACTIONS)
def test_compaction_with_split_records_in_flight(messages, reply, fault, how, keep, memory):
    """As above, the in-flight response possibly written as several records sharing a message id
    (one tool_use each, as Claude Code writes them). The explicit example is the shrunk
    counterexample of a bug this found: only the last record was kept in flight, the earlier ones
    were summarised, and the results that arrived answered tool_uses no longer in the context."""
    _compact_and_check(messages, reply, fault, how, keep, memory, in_flight=True)


# --- token accounting ---------------------------------------------------------------------------

@given(a=st.text(), b=st.text())
def test_text_estimate_is_monotone_under_appending(a, b):
    """Token estimates (000:90-95): appending text never lowers the estimate (a leading ``{``
    only ever halves the bytes per token)."""
    assert estimate_text(a + b, CFG) >= estimate_text(a, CFG)


@given(messages=st.one_of(conversations(images=True, thinking=True), histories_with_boundary()))
def test_message_estimates_are_monotone_under_appending(messages):
    """``estimate_messages`` (003:351-353) and, without usage anchors, ``count_tokens`` never
    decrease as messages are appended; the count of a prefix never exceeds the whole's."""
    estimates = [estimate_messages(messages[:i], CFG) for i in range(len(messages) + 1)]
    counts = [count_tokens(messages[:i], CFG) for i in range(len(messages) + 1)]
    assert estimates == sorted(estimates)
    assert counts == sorted(counts)


@given(history=sessions(usage=True, max_compactions=2))
def test_anchored_count_is_last_usage_plus_estimates_after(history):
    """Anchored counting (000:57-86, ``tokenCountWithEstimation``): for every prefix of a session,
    the count is the context size of the last response carrying usage plus the conservative
    estimate (×4/3, rounded up) of every message after it; without such a response it is the
    estimate of everything. Appending messages without usage never lowers it."""
    for i in range(len(history) + 1):
        prefix = history[:i]
        anchors = [j for j, m in enumerate(prefix) if isinstance(m, AssistantMessage) and m.usage is not None
                   and m.usage.context_tokens > 0]
        if anchors:
            j = anchors[-1]
            after = sum(estimate_message(m, CFG) for m in prefix[j + 1:])
            expected = prefix[j].usage.context_tokens + -(-after * 4 // 3)
        else:
            expected = -(-sum(estimate_message(m, CFG) for m in prefix) * 4 // 3)
        assert count_tokens(prefix, CFG) == expected
        if i and not (isinstance(history[i - 1], AssistantMessage) and history[i - 1].usage is not None):
            assert count_tokens(prefix, CFG) >= count_tokens(history[:i - 1], CFG)
