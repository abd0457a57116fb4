"""Cassettes and the real-API path, driven through the SDK with a mock network under the cassettes:
cache hits make zero requests, record rewrites, replay never touches the network and explains a
miss with a diff, and no API key reaches disk."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from pytest_ctxeval.errors import ModelError, ProviderError, UsageError
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.llm.cassettes import CassetteStore, request_key

KEY = "sk-ant-api03-FAKEKEYfakekeyFAKEKEY0123456789"


class FakeAPI:
    """A stand-in for api.anthropic.com: counts requests, answers with the prompt echoed, can fail."""

    def __init__(self, plan: list[int] | None = None):
        self.requests: list[httpx2.Request] = []
        self.plan = list(plan or [])

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        status = self.plan.pop(0) if self.plan else 200
        if status == 429:
            return httpx2.Response(429, json={"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
                                   headers={"retry-after-ms": "1"})
        if status == 529:
            return httpx2.Response(529, json={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
                                   headers={"retry-after-ms": "1"})
        body = json.loads(request.content)
        text = "echo: " + json.dumps(body["messages"][-1]["content"])[:60]
        return httpx2.Response(200, json={
            "id": f"msg_{len(self.requests)}", "type": "message", "role": "assistant", "model": body["model"],
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 10}})


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    return KEY


def ask(llm, text="hello", task="chat"):
    return llm.complete(task=task, messages=[{"role": "user", "content": text}], max_tokens=50)


def test_request_key_ignores_order_and_headers_but_not_content() -> None:
    a = {"model": "m", "messages": [{"role": "user", "content": "x"}], "max_tokens": 5}
    assert request_key(a, "judge") == request_key(dict(reversed(list(a.items()))), "judge")
    assert request_key(a, "judge") != request_key({**a, "max_tokens": 6}, "judge")
    assert request_key(a, "judge") != request_key(a, "probe")


def test_a_rerun_from_the_cache_makes_zero_requests(tmp_path: Path, key: str) -> None:
    api = FakeAPI()
    first = make_llm("anthropic", "claude-test", cassettes=tmp_path, network=httpx2.MockTransport(api))
    reply = ask(first)
    assert len(api.requests) == 1 and first.stats.forwarded == 1
    again = make_llm("anthropic", "claude-test", cassettes=tmp_path, network=httpx2.MockTransport(api))
    assert ask(again).text == reply.text
    assert len(api.requests) == 1, "the rerun reached the network"
    assert again.stats.hits == 1 and again.stats.forwarded == 0
    # a reply from the cassette cost nothing: counted apart, never as a call or as tokens
    assert again.usage.api_calls == 0 and again.usage.input_tokens == 0 and again.usage.cached_calls == 1


def test_concurrent_calls_hit_the_cache_too(tmp_path: Path, key: str) -> None:
    api = FakeAPI()
    llm = make_llm("anthropic", "claude-test", cassettes=tmp_path, network=httpx2.MockTransport(api))
    reqs = [{"task": "judge", "messages": [{"role": "user", "content": f"q{i}"}], "max_tokens": 5} for i in range(4)]
    llm.complete_many(reqs)
    assert len(api.requests) == 4
    llm.complete_many(reqs)
    assert len(api.requests) == 4 and llm.stats.hits == 4


def test_record_rewrites_even_when_recorded(tmp_path: Path, key: str) -> None:
    api = FakeAPI()
    ask(make_llm("record", "claude-test", cassettes=tmp_path, network=httpx2.MockTransport(api)))
    ask(make_llm("record", "claude-test", cassettes=tmp_path, network=httpx2.MockTransport(api)))
    assert len(api.requests) == 2
    assert len(list(tmp_path.glob("*/*.json"))) == 1


def test_replay_serves_recorded_and_never_opens_the_network(tmp_path: Path, key: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    api = FakeAPI()
    ask(make_llm("record", "claude-test", cassettes=tmp_path, network=httpx2.MockTransport(api)), "hello")
    monkeypatch.delenv("ANTHROPIC_API_KEY")

    def no_network(*a, **k):
        raise AssertionError("replay opened a network transport")

    monkeypatch.setattr(httpx2, "HTTPTransport", no_network)
    monkeypatch.setattr(httpx2, "AsyncHTTPTransport", no_network)
    replay = make_llm("replay", "claude-test", cassettes=tmp_path)
    assert ask(replay, "hello").text.startswith("echo:")
    with pytest.raises(ModelError) as miss:
        ask(replay, "hello there")
    message = str(miss.value)
    assert "cassette miss in replay mode (no network)" in message
    assert "request['messages'][0]['content']: 'hello' -> 'hello there'" in message
    assert len(api.requests) == 1


def test_replay_without_cassettes_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="replay needs recorded cassettes"):
        make_llm("replay", cassettes=tmp_path / "none")


def test_the_key_never_reaches_disk(tmp_path: Path, key: str) -> None:
    api = FakeAPI()
    llm = make_llm("anthropic", "claude-test", cassettes=tmp_path, network=httpx2.MockTransport(api))
    # even when the content itself carries the key, or a key-shaped string
    github, aws = "ghp_" + "A1b2C3d4" * 5, "AKIA" + "ABCDEFGHIJKLMNOP"
    ask(llm, f"my key is {KEY} and another sk-ant-api03-{'x' * 30}; token {github}, aws {aws}")
    assert api.requests[0].headers.get("authorization") or api.requests[0].headers.get("x-api-key")
    for path in tmp_path.rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert KEY not in text and "sk-ant-api03-x" not in text
            assert github not in text and aws not in text  # every shape redact.py knows, not only Anthropic's
            assert "authorization" not in text.lower() and "x-api-key" not in text.lower()
    stored = next(tmp_path.rglob("*.json")).read_text()
    assert "[REDACTED:anthropic]" in stored and "[REDACTED:github]" in stored and "[REDACTED:aws-access-key]" in stored


@pytest.mark.parametrize("plan", [[529], [429], [529, 429]], ids=["overloaded", "rate-limited", "both"])
def test_the_sdk_retries_overload_and_rate_limits(tmp_path: Path, key: str, plan: list[int]) -> None:
    api = FakeAPI(plan)
    llm = make_llm("anthropic", "claude-test", cassettes=tmp_path, network=httpx2.MockTransport(api))
    assert ask(llm).text.startswith("echo:")
    assert len(api.requests) == len(plan) + 1
    assert int(api.requests[-1].headers["x-stainless-retry-count"]) == len(plan)


def test_failed_replies_are_not_recorded(tmp_path: Path, key: str) -> None:
    api = FakeAPI([529, 529, 529])
    llm = make_llm("anthropic", "claude-test", cassettes=tmp_path, network=httpx2.MockTransport(api))
    with pytest.raises(ProviderError, match="HTTP 529"):  # an outage outlasting the SDK's retries ends the run
        ask(llm)
    assert not list(tmp_path.rglob("*.json"))


def test_store_nearest_diff_prefers_the_same_task(tmp_path: Path) -> None:
    store = CassetteStore(tmp_path)
    store.put("a" * 64, "judge", {"model": "m", "messages": [{"role": "user", "content": "judge this"}]},
              {"status": 200, "json": {}}, None)
    store.put("b" * 64, "probe", {"model": "m", "messages": [{"role": "user", "content": "judge thus"}]},
              {"status": 200, "json": {}}, None)
    diff = store.nearest_diff("judge", {"model": "m", "messages": [{"role": "user", "content": "judge that"}]})
    assert "'judge this' -> 'judge that'" in diff


def test_a_recording_replays_from_any_session_folder(tmp_path: Path, key: str) -> None:
    """The paths the model is told do not depend on where the session folder is, so a scenario
    recorded in one folder replays in another (longer) one: every compaction, no miss, and the
    same token counts (they would shift with the path's length otherwise)."""
    from pytest_ctxeval.llm.offline import ReferenceModel
    from pytest_ctxeval.runner import run_scenario
    from pytest_ctxeval.scenario.schema import load_scenario

    scenario = load_scenario(Path(__file__).resolve().parents[2] / "scenarios" / "long_migration.yaml")
    cassettes = tmp_path / "cassettes"
    recorder = make_llm("record", cassettes=cassettes, network=httpx2.MockTransport(ReferenceModel()))
    recorded = run_scenario(scenario, llm=recorder, session_dir=tmp_path / "a")
    replayer = make_llm("replay", cassettes=cassettes)
    replayed = run_scenario(scenario, llm=replayer, session_dir=tmp_path / ("b" * 80) / "deeper")
    assert len(recorded.compactions) >= 3
    assert [c.result.summary for c in replayed.compactions] == [c.result.summary for c in recorded.compactions]
    assert [(c.result.pre_tokens, c.result.post_tokens) for c in replayed.compactions] == \
        [(c.result.pre_tokens, c.result.post_tokens) for c in recorded.compactions]
    assert not [e for e in replayed.events if e.action == "failed"]
    assert replayer.stats.hits == recorder.stats.forwarded > 0
    assert str(tmp_path) not in json.dumps(replayed.requests)
