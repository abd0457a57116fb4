"""The socket server answers as the Messages API documents (what the real-API tests rely on)."""

from __future__ import annotations

import anthropic
import pytest

from pytest_ctxeval.grading.judging import JudgeReply
from pytest_ctxeval.llm.server import ApiServer
from pytest_ctxeval.llm.wire import schema_problem

MODEL = "claude-sonnet-5-5"
HI = [{"role": "user", "content": "hi"}]


def client(server: ApiServer, **kw: object) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=server.wire.api_key, base_url=server.url, max_retries=0, **kw)  # type: ignore[arg-type]


def test_replies_start_with_signed_thinking_and_count_it_in_output(api_server: ApiServer) -> None:
    reply = client(api_server).messages.create(model=MODEL, max_tokens=4_000, messages=HI)
    assert [b.type for b in reply.content] == ["thinking", "redacted_thinking", "text"]
    assert reply.content[0].signature == api_server.wire.sign(reply.content[0].thinking)
    assert reply.usage.output_tokens > api_server.wire.thinking_tokens  # thinking counts toward output
    assert reply.stop_reason == "end_turn"
    disabled = client(api_server).messages.create(model=MODEL, max_tokens=4_000, messages=HI,
                                                  thinking={"type": "disabled"})
    assert [b.type for b in disabled.content] == ["text"]


def test_thinking_sent_back_is_verified(api_server: ApiServer) -> None:
    c = client(api_server)
    first = c.messages.create(model=MODEL, max_tokens=4_000, messages=HI)
    ok = c.messages.create(model=MODEL, max_tokens=4_000, messages=[
        *HI, {"role": "assistant", "content": first.content}, {"role": "user", "content": "and?"}])
    assert ok.stop_reason == "end_turn"  # its own signatures pass
    forged = [{"type": "thinking", "thinking": "made up", "signature": "scripted"}, {"type": "text", "text": "x"}]
    with pytest.raises(anthropic.BadRequestError, match="Invalid `signature` in `thinking` block") as info:
        c.messages.create(model=MODEL, max_tokens=4_000, messages=[
            *HI, {"role": "assistant", "content": forged}, {"role": "user", "content": "and?"}])
    assert info.value.response.headers["request-id"].startswith("req_")
    assert info.value.response.headers["x-should-retry"] == "false"


def test_a_small_budget_cuts_the_text_at_max_tokens(api_server: ApiServer) -> None:
    reply = client(api_server).messages.create(model=MODEL, max_tokens=api_server.wire.thinking_tokens + 3,
                                               messages=[{"role": "user", "content": "x" * 4_000}])
    assert reply.stop_reason == "max_tokens"
    assert reply.usage.output_tokens <= api_server.wire.thinking_tokens + 3


def test_documented_errors_with_their_headers(api_server: ApiServer) -> None:
    with pytest.raises(anthropic.AuthenticationError) as bad_key:
        anthropic.Anthropic(api_key="sk-ant-wrong", base_url=api_server.url, max_retries=0).messages.create(
            model=MODEL, max_tokens=10, messages=HI)
    assert bad_key.value.body["error"]["type"] == "authentication_error"
    with pytest.raises(anthropic.NotFoundError, match="model: claude-nope"):
        client(api_server).messages.create(model="claude-nope", max_tokens=10, messages=HI)
    api_server.wire.outage = 529
    with pytest.raises(anthropic.APIStatusError) as overloaded:
        client(api_server).messages.create(model=MODEL, max_tokens=10, messages=HI)
    headers = overloaded.value.response.headers
    assert overloaded.value.status_code == 529 and headers["x-should-retry"] == "true" and headers["retry-after"]
    assert overloaded.value.body["error"]["type"] == "overloaded_error"


def test_structured_output_schemas_are_checked_as_the_api_does(api_server: ApiServer) -> None:
    raw = JudgeReply.model_json_schema()
    raw["additionalProperties"] = False
    assert "property 'maximum' is not supported" in (schema_problem(raw) or "")  # the score's bounds
    with pytest.raises(anthropic.BadRequestError, match="not supported"):
        client(api_server).messages.create(model=MODEL, max_tokens=4_000, messages=HI,
                                           output_config={"format": {"type": "json_schema", "schema": raw}})
    assert schema_problem(anthropic.transform_schema(JudgeReply)) is None


def test_stop_reasons_from_the_plan(api_server: ApiServer) -> None:
    c = client(api_server)
    api_server.wire.plan("chat", ["refusal"])
    assert c.messages.create(model=MODEL, max_tokens=4_000, messages=HI).stop_reason == "refusal"
    api_server.wire.plan("chat", ["pause_turn"])
    paused = c.messages.create(model=MODEL, max_tokens=4_000, messages=HI)
    assert paused.stop_reason == "pause_turn"
    rest = c.messages.create(model=MODEL, max_tokens=4_000, messages=[*HI, {"role": "assistant", "content": paused.content}])
    whole = c.messages.create(model=MODEL, max_tokens=4_000, messages=HI)
    assert paused.content[-1].text + rest.content[-1].text == whole.content[-1].text
    api_server.wire.context_window = api_server.wire.thinking_tokens + 8
    cut = c.messages.create(model=MODEL, max_tokens=4_000, messages=HI)
    assert cut.stop_reason == "model_context_window_exceeded"


def test_message_batches_with_errored_and_expired_entries(api_server: ApiServer) -> None:
    c = client(api_server)
    bad_schema = {"format": {"type": "json_schema", "schema": {"type": "integer", "minimum": 0}}}
    params = {"model": MODEL, "max_tokens": 4_000, "messages": HI}
    api_server.wire.plan("batch_item", ["ok", "ok", "expired"])
    batch = c.messages.batches.create(requests=[
        {"custom_id": "good", "params": params}, {"custom_id": "bad", "params": {**params, "output_config": bad_schema}},
        {"custom_id": "late", "params": params}])
    assert batch.processing_status == "in_progress"
    batch = c.messages.batches.retrieve(batch.id)
    assert batch.processing_status == "ended"
    assert (batch.request_counts.succeeded, batch.request_counts.errored, batch.request_counts.expired) == (1, 1, 1)
    results = {r.custom_id: r.result for r in c.messages.batches.results(batch.id)}
    assert results["good"].type == "succeeded" and results["late"].type == "expired"
    assert "not supported" in results["bad"].error.error.message


def test_bedrock_and_vertex_clients_reach_their_paths(api_server: ApiServer) -> None:
    key = api_server.wire.api_key
    bedrock = anthropic.AnthropicBedrock(api_key=key, aws_region="us-east-1", base_url=api_server.url, max_retries=0)
    assert bedrock.messages.create(model=MODEL, max_tokens=4_000, messages=HI).content[-1].type == "text"
    vertex = anthropic.AnthropicVertex(access_token=key, region="us-east5", project_id="p", base_url=api_server.vertex_url,
                                       max_retries=0)
    assert vertex.messages.create(model=MODEL, max_tokens=4_000, messages=HI).content[-1].type == "text"
    assert [r["provider"] for r in api_server.wire.messages_requests()] == ["bedrock", "vertex"]
    with pytest.raises(anthropic.AuthenticationError):
        anthropic.AnthropicVertex(access_token="wrong", region="us-east5", project_id="p", max_retries=0,
                                  base_url=api_server.vertex_url).messages.create(model=MODEL, max_tokens=10, messages=HI)
