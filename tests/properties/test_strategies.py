"""The public strategies (``pytest_ctxeval.strategies``): what they generate is valid, honours its
options, shrinks to a few short messages, and the module's surface is documented."""

from __future__ import annotations

import ast
import functools
import inspect
import re
import textwrap
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings, strategies as st
from hypothesis.errors import InvalidArgument

import pytest_ctxeval.strategies as strategies
from pytest_ctxeval.core.messages import (
    AssistantMessage, CompactBoundary, DocumentBlock, ImageBlock, RedactedThinkingBlock, ThinkingBlock,
    ToolResultBlock, UserMessage, is_person_typed, result_text, to_api, tool_results, tool_uses, validate_api,
)
from pytest_ctxeval.strategies import (
    BLOCK_KINDS, START, content_blocks, conversations, histories_with_boundary, sessions,
    tool_rounds,
)

STRATEGIES = ["content_blocks", "tool_rounds", "conversations", "sessions", "histories_with_boundary"]


def _well_formed(messages: list[Any]) -> None:
    """API-valid after to_api, unique uuids and tool ids, a clock that never goes back."""
    assert validate_api(to_api(messages)) == []
    uuids = [m.uuid for m in messages]
    assert len(uuids) == len(set(uuids))
    calls = [u.id for m in messages for u in tool_uses(m)]
    assert len(calls) == len(set(calls))
    times = [m.timestamp for m in messages]
    assert times == sorted(times) and times[0] >= START


# --- validity -------------------------------------------------------------------------------------

@given(conversations(images=True, thinking=True, huge_result_chars=5_000, long_message_chars=3_000, usage=True))
def test_conversations_are_api_valid_by_construction(messages):
    """Alternation and pairing hold (after ``to_api``), every call is answered by the very next
    message, and the first message is typed by the person."""
    _well_formed(messages)
    assert is_person_typed(messages[0])
    for i, m in enumerate(messages):
        if tool_uses(m):
            nxt = next(x for x in messages[i + 1:] if not isinstance(x, AssistantMessage))
            assert {u.id for u in tool_uses(m)} <= {r.tool_use_id for r in tool_results(nxt)}


@given(conversations(as_api=True, thinking=True, images=True))
def test_as_api_gives_valid_messages_api_dicts(messages):
    assert all(isinstance(m, dict) and m["role"] in ("user", "assistant") for m in messages)
    assert validate_api(messages) == []


@given(tool_rounds(min_parallel=2, max_parallel=6, images=True, thinking=True, huge_result_chars=2_000))
def test_tool_rounds_answer_every_parallel_call(round_):
    *records, results = round_
    calls = [u.id for m in records for u in tool_uses(m)]
    assert 2 <= len(calls) <= 6
    assert all(isinstance(m, AssistantMessage) for m in records)
    assert len({m.message_id for m in records}) == 1
    assert sorted(r.tool_use_id for r in tool_results(results)) == sorted(calls)
    _well_formed([UserMessage(uuid="u0", timestamp=START, content="go"), *round_])


@given(sessions(max_compactions=3, max_gap_minutes=90))
def test_sessions_have_gaps_boundaries_and_summaries(history):
    _well_formed(history)
    boundaries = [i for i, m in enumerate(history) if isinstance(m, CompactBoundary)]
    assert len(boundaries) <= 3
    for i in boundaries:
        assert history[i + 1].is_compact_summary and history[i].logical_parent_uuid == history[i - 1].uuid
    steps = [b.timestamp - a.timestamp for a, b in zip(history, history[1:])]
    assert max(steps, default=timedelta(0)) <= timedelta(minutes=90, seconds=20)


@given(histories_with_boundary(images=True, thinking=True))
def test_histories_with_boundary_have_a_summarised_last_boundary(messages):
    _well_formed(messages)
    last = max(i for i, m in enumerate(messages) if isinstance(m, CompactBoundary))
    assert messages[last + 1].is_compact_summary
    after = messages[last + 1:]
    assert not any(isinstance(m, CompactBoundary) for m in after)
    # Nothing after the boundary answers a call made before it.
    before_calls = {u.id for m in messages[:last] for u in tool_uses(m)}
    assert not {r.tool_use_id for m in after for r in tool_results(m)} & before_calls


@given(content_blocks())
def test_content_blocks_cover_every_kind(block):
    assert block.type in BLOCK_KINDS


# --- options are honoured -------------------------------------------------------------------------

_TOOL_SETS = [("Bash",), ("Read", "TodoWrite"), ("Grep", "Task", "mcp__github__search_issues")]


@functools.cache
def _restricted(tools: tuple[str, ...], turns: int) -> st.SearchStrategy[list[Any]]:
    return conversations(min_turns=turns, max_turns=turns, tools=tools, max_parallel=2, images=False,
                         thinking=False, split_records=False, person_typed_only=True, huge_result_chars=300,
                         max_steps=2)


@given(st.data())
def test_options_are_honoured(data):
    """Turn counts, tool mix, parallelism, images, thinking, split records, person-typed messages
    and result sizes are what was asked for."""
    tools = data.draw(st.sampled_from(_TOOL_SETS), label="tools")
    turns = data.draw(st.integers(1, 4), label="turns")
    messages = data.draw(_restricted(tools, turns), label="messages")
    users = [m for m in messages if isinstance(m, UserMessage) and not tool_results(m)]
    assert len(users) == turns and all(is_person_typed(m) for m in users)
    for m in messages:
        assert all(u.name in tools for u in tool_uses(m)) and len(tool_uses(m)) <= 2
        blocks = m.content if isinstance(m.content, list) else []
        assert not any(isinstance(b, (ImageBlock, ThinkingBlock, RedactedThinkingBlock)) for b in blocks)
        assert all(len(result_text(r)) <= 300 for r in tool_results(m))
    ids = [m.message_id for m in messages if isinstance(m, AssistantMessage)]
    assert len(ids) == len(set(ids)), "split_records=False: one record per response"


@given(content_blocks(kinds=["tool_result", "document"], tools=["Bash"], max_chars=50))
def test_content_blocks_honour_kinds_and_sizes(block):
    assert isinstance(block, (ToolResultBlock, DocumentBlock))
    if isinstance(block, ToolResultBlock):
        assert len(result_text(block)) <= 50


@pytest.mark.parametrize("make", [
    lambda: conversations(min_turns=0),
    lambda: conversations(min_turns=3, max_turns=2),
    lambda: conversations(max_parallel=0),
    lambda: conversations(tools=[]),
    lambda: conversations(huge_result_chars=-1),
    lambda: tool_rounds(min_parallel=3, max_parallel=2),
    lambda: content_blocks(kinds=["text", "video"]),
    lambda: content_blocks(kinds=[]),
    lambda: content_blocks(max_chars=1),
    lambda: sessions(max_compactions=-1),
    lambda: sessions(as_api=True),            # not a conversation option
    lambda: histories_with_boundary(nope=1),
])
def test_bad_options_are_rejected_when_the_strategy_is_built(make):
    with pytest.raises(InvalidArgument):
        make()


# --- shrinking ------------------------------------------------------------------------------------

# find() shrinks to the minimal example; small search spaces keep that to about a second. No
# explain phase: it traces every replay of the shrink (sys.settrace) to explain a failure, and
# these searches are meant to "fail".
_FIND = settings(database=None, derandomize=True, max_examples=500,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
                 phases=[p for p in Phase if p is not Phase.explain])


def test_a_huge_result_shrinks_to_one_short_round():
    """Sizes are drawn apart from content: the smallest conversation with a result over 20,000
    characters is one user message, one response and its results, the big one exactly 20,001
    characters of a short repeated line, the others empty."""
    big = find(conversations(max_turns=3, max_steps=2, huge_result_chars=100_000),
               lambda c: any(len(result_text(r)) > 20_000 for m in c for r in tool_results(m)), settings=_FIND)
    assert [m.uuid for m in big] == ["u1", "a2", "u3"]
    sizes = sorted(len(result_text(r)) for r in tool_results(big[-1]))
    assert sizes[-1] == 20_001 and not any(sizes[:-1])
    line = max(result_text(r) for r in tool_results(big[-1])).splitlines()[0]
    assert len(line) <= 40


def test_parallel_calls_shrink_to_a_readable_script():
    """The smallest conversation with three parallel calls, one of them failing, reads like a
    script: ``u1`` typed, ``a2`` calling ``toolu_01..03``, ``u3`` answering."""
    found = find(conversations(max_turns=3, max_steps=2, max_parallel=4),
                 lambda c: any(len(tool_uses(m)) >= 3 for m in c)
                 and any(r.is_error for m in c for r in tool_results(m)), settings=_FIND)
    assert [m.uuid for m in found] == ["u1", "a2", "u3"]
    assert [u.id for u in tool_uses(found[1])] == ["toolu_01", "toolu_02", "toolu_03"]
    assert sum(len(repr(m)) for m in found) < 1_500


# --- the module's surface ---------------------------------------------------------------------------

def _defined_names(module: Any) -> set[str]:
    """Public names a module defines at top level (functions, classes, assignments)."""
    tree = ast.parse(inspect.getsource(module))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if not n.startswith("_")}


def test_all_matches_what_the_module_defines():
    assert sorted(strategies.__all__) == sorted(_defined_names(strategies))
    assert set(STRATEGIES) <= set(strategies.__all__)


def _example(fn: Any) -> str:
    doc = inspect.getdoc(fn) or ""
    match = re.search(r"Example::\n\n((?:[ ]{4}.*\n?|\n)+)", doc)
    assert match, f"{fn.__name__}: the docstring has no 'Example::' block"
    return textwrap.dedent(match.group(1))


@pytest.mark.parametrize("name", STRATEGIES)
def test_every_public_strategy_documents_a_working_example(name):
    """Each docstring has an ``Example::`` block: a Hypothesis test using the strategy. It runs."""
    code = _example(getattr(strategies, name))
    assert f"{name}(" in code
    namespace: dict[str, Any] = {}
    exec(compile(code, f"<{name} example>", "exec"), namespace)
    tests = [f for n, f in namespace.items() if n.startswith("test_") and callable(f)]
    assert tests, "the example defines no test"
    for test in tests:
        settings(max_examples=25)(test)()
