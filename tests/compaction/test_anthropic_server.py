"""``anthropic_server``: the API's compact_20260112 edit (shared/PEERS.md lines 71-73). Offline it is
skipped with a reason; on the anthropic backend it is driven through the real SDK against a fake
network (no connection is ever opened)."""

from __future__ import annotations

import json

import httpx2
import pytest

from pytest_ctxeval.compaction import CompactorUnavailable
from pytest_ctxeval.compaction.anthropic_server import BETA, EDIT_TYPE, AnthropicServer
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.core.messages import text_of
from pytest_ctxeval.runner import run_scenario

SUMMARY = "The user is moving sessions to Redis with opaque ids; next: the websocket handshake."


def test_offline_every_scenario_is_skipped_with_the_reason(tmp_path):
    with pytest.raises(CompactorUnavailable, match=r"needs the real API \(--ctxeval-backend anthropic"):
        run_scenario("scenarios/auth_refactor.yaml", compactor="anthropic_server", session_dir=tmp_path)


def _server(seen: list, *, compact: bool = True):
    def handle(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        seen.append((request, body))
        content = [{"type": "compaction", "content": SUMMARY}] if compact else [{"type": "text", "text": "hi"}]
        return httpx2.Response(200, json={
            "id": "msg_1", "type": "message", "role": "assistant", "model": body["model"], "content": content,
            "stop_reason": "compaction" if compact else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 120, "output_tokens": 0, "iterations": [
                {"type": "compaction", "input_tokens": 16_000, "output_tokens": 400,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}] if compact else []}})
    return httpx2.MockTransport(handle)


@pytest.fixture
def api(monkeypatch, tmp_path):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")

    def make(**kw):
        seen: list = []
        return make_llm("anthropic", "claude-sonnet-5-5", cassettes=tmp_path / "cassettes",
                        network=_server(seen, **kw)), seen
    return make


def test_on_the_api_the_edit_is_sent_and_the_compaction_block_becomes_the_context(api, tmp_path):
    llm, seen = api()
    run = run_scenario("scenarios/auth_refactor.yaml", compactor="anthropic_server", llm=llm,
                       session_dir=tmp_path / "s")
    assert run.compactions and run.compactor == "anthropic_server"
    request, body = seen[0]
    assert BETA in request.headers["anthropic-beta"]
    (edit,) = body["context_management"]["edits"]
    assert edit == {"type": EDIT_TYPE, "pause_after_compaction": True,
                    "trigger": {"type": "input_tokens", "value": 15_000}}  # 150,000 scaled to a 20,000 window
    result = run.compactions[0].result
    assert result.summary == SUMMARY and text_of(result.summary_message.content) == SUMMARY
    assert [type(m).__name__ for m in result.post_messages] == ["CompactBoundary", "UserMessage"]
    # the compaction's own tokens are in the iterations, not the top-level usage: both are counted
    assert llm.usage.input_tokens >= 16_120 and llm.usage.output_tokens >= 400


def test_no_compaction_block_is_a_failed_compaction_with_the_reason(api, tmp_path):
    llm, _ = api(compact=False)
    run = run_scenario("scenarios/auth_refactor.yaml", compactor="anthropic_server(trigger=150000)", llm=llm,
                       session_dir=tmp_path / "s")
    failed = [e for e in run.events if e.action == "failed"]
    assert failed and "the API did not compact" in failed[0].detail
    assert any(e.action == "circuit_breaker_tripped" for e in run.events)  # three in a row: no fourth call


def test_instructions_option_reaches_the_edit():
    s = AnthropicServer(instructions="Keep every file path.")
    from compaction_kit import Kit, state

    assert s.edit(state([Kit().user("x")]))["instructions"] == "Keep every file path."
