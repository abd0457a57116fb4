"""The real backends against the Messages API as it answers, over a real socket (issue 16).

Each test names the defect it guards; every one failed before the fix (see the commit message).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.errors import ModelError, ProviderError
from pytest_ctxeval.evaluation import usage_lines
from pytest_ctxeval.grading.judging import Judge
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.llm.base import TruncatedReply
from pytest_ctxeval.llm.server import ApiServer
from pytest_ctxeval.llm.wire import schema_problem
from tests.scenario_texts import TINY

HI = [{"role": "user", "content": "hi"}]
INTENT = {"messages": "rename the helper to parse_date", "intent": "",
          "context": "The user asked to rename the helper to parse_date."}


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(text.replace("name: tiny", f"name: {name}"), encoding="utf-8")
    return path


def run_cli(*args: str) -> int:
    return main(["run", *args])


def judge_for(server: ApiServer, tmp_path: Path, **kw: object) -> Judge:
    return Judge(make_llm("anthropic", cassettes=tmp_path / "cassettes", **kw))  # type: ignore[arg-type]


def verdict(judge: Judge) -> object:
    return judge.judge("intent_preservation", **INTENT)


# 1 -------------------------------------------------------------------------------------------------

def test_judge_requests_pass_structured_output_validation(api_server: ApiServer, tmp_path: Path) -> None:
    judgement = verdict(judge_for(api_server, tmp_path))
    assert judgement.score is not None, judgement.error  # type: ignore[attr-defined]
    sent = api_server.wire.messages_requests()[-1]["body"]["output_config"]["format"]["schema"]
    assert schema_problem(sent) is None and sent["additionalProperties"] is False
    assert '"minimum"' not in json.dumps(sent)  # the bound moved into the description, as the SDK does it


# 2 -------------------------------------------------------------------------------------------------

def test_the_summariser_has_room_to_think(api_server: ApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    api_server.wire.thinking_tokens = 3_000  # far over TINY's scaled summary reserve (400 tokens)
    code = run_cli(str(write(tmp_path, "tiny", TINY)), "--backend", "anthropic", "--graders", "nine_sections",
                   "--cassettes", str(tmp_path / "c"))
    out = capsys.readouterr().out
    assert code == 0, out
    compacts = [r for r in api_server.wire.messages_requests() if r["headers"].get("x-ctxeval-task") == "compact"]
    assert compacts and all(r["body"]["max_tokens"] > 3_000 for r in compacts)


def test_a_summary_cut_at_max_tokens_is_retried_with_more_room(api_server: ApiServer, tmp_path: Path) -> None:
    llm = make_llm("anthropic", cassettes=tmp_path)
    api_server.wire.plan("compact", ["truncate"])
    reply = llm.complete_whole(task="compact", messages=HI, max_tokens=5_000)
    assert reply.stop_reason == "end_turn"
    assert [r["body"]["max_tokens"] for r in api_server.wire.messages_requests()] == [5_000, 10_000]


def test_a_summary_still_cut_is_reported_never_graded(api_server: ApiServer, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    api_server.wire.plan("compact", ["truncate"] * 4)
    code = run_cli(str(write(tmp_path, "tiny", TINY)), "--backend", "anthropic", "--graders", "nine_sections",
                   "--cassettes", str(tmp_path / "c"), "--json", str(tmp_path / "r.json"))
    out = capsys.readouterr().out
    assert code == 1
    doc = json.loads((tmp_path / "r.json").read_text())
    events = json.dumps(doc["scenarios"][0]["events"])
    assert "cut off at max_tokens" in events and "not graded as a whole reply" in events
    assert doc["scenarios"][0]["graders"]["nine_sections"]["status"] != "pass", out


def test_a_reply_cut_by_the_context_window_is_an_error(api_server: ApiServer, tmp_path: Path) -> None:
    api_server.wire.context_window = api_server.wire.thinking_tokens + 10
    with pytest.raises(TruncatedReply, match="model_context_window_exceeded"):
        make_llm("anthropic", cassettes=tmp_path).complete_whole(task="compact", messages=HI, max_tokens=5_000)


def test_a_paused_turn_is_continued(api_server: ApiServer, tmp_path: Path) -> None:
    llm = make_llm("anthropic", cassettes=tmp_path / "a")
    whole = llm.complete_whole(task="chat", messages=HI, max_tokens=5_000).text
    api_server.wire.plan("chat", ["pause_turn"])
    again = make_llm("anthropic", cassettes=tmp_path / "b").complete_whole(task="chat", messages=HI, max_tokens=5_000)
    assert again.text == whole


def test_a_refusal_is_one_error_for_the_run(api_server: ApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    api_server.wire.plan("compact", ["refusal"])
    code = run_cli(str(write(tmp_path, "tiny", TINY)), "--backend", "anthropic", "--cassettes", str(tmp_path / "c"))
    err = capsys.readouterr().err
    assert code == 2 and "refused the compact request" in err and err.count("\n") == 1


# 3 -------------------------------------------------------------------------------------------------

SCRIPTED_THINKING = TINY.replace('  - assistant: "Renaming."\n',
                                 '  - assistant: "Renaming."\n    thinking: "The callers live in src/app.py."\n')


def test_scripted_thinking_is_never_sent_with_a_made_up_signature(api_server: ApiServer, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert "thinking:" in SCRIPTED_THINKING
    code = run_cli(str(write(tmp_path, "tiny", SCRIPTED_THINKING)), "--backend", "anthropic", "--graders",
                   "nine_sections", "--cassettes", str(tmp_path / "c"), "--json", str(tmp_path / "r.json"))
    assert code == 0, capsys.readouterr()
    bodies = json.dumps([r["body"] for r in api_server.wire.messages_requests()])
    assert '"scripted"' not in bodies and '"type": "thinking"' not in bodies


# 4 -------------------------------------------------------------------------------------------------

def test_a_sustained_outage_is_retried_by_the_sdk_only(api_server: ApiServer, tmp_path: Path) -> None:
    api_server.wire.outage = 529
    judge = judge_for(api_server, tmp_path, concurrency=1)
    with pytest.raises(ProviderError, match="529"):
        judge.judge_many([("intent_preservation", {**INTENT, "messages": f"task {i}"}) for i in range(10)])
    assert len(api_server.wire.messages_requests()) == 3  # 1 + the SDK's 2 retries, then the run stops


@pytest.mark.parametrize("status", [400, 401])
def test_a_client_error_is_sent_once(api_server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     status: int) -> None:
    if status == 401:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong")
        with pytest.raises(ProviderError):
            verdict(judge_for(api_server, tmp_path))
    else:
        judge = judge_for(api_server, tmp_path)
        judge.max_tokens = 0  # invalid: a 400 for this request
        assert verdict(judge).score is None  # type: ignore[attr-defined]
    assert len(api_server.wire.log) == 1


def test_a_judge_prompt_too_long_is_sent_once(api_server: ApiServer, tmp_path: Path) -> None:
    """The third client error the issue names: the judge does not re-send a prompt-too-long."""
    judge = judge_for(api_server, tmp_path)
    huge = {**INTENT, "context": "The user asked to rename the helper. " * 30_000}  # over the 200k window
    judgement = judge.judge("intent_preservation", **huge)
    assert judgement.score is None and "prompt is too long" in str(judgement.error)  # type: ignore[attr-defined]
    assert len(api_server.wire.log) == 1


# 5 -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("setup, words", [
    ("key", ["rejected the API key (401", "ANTHROPIC_API_KEY"]),
    ("model", ["does not serve model 'claude-nope'", "--model NAME (pytest: --ctxeval-model NAME)"]),
    ("outage", ["is unavailable: HTTP 529", "outage, not a quality result"]),
], ids=["bad-key", "unknown-model", "outage"])
def test_an_unusable_endpoint_is_one_usage_error(api_server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str], setup: str, words: list[str]) -> None:
    args = [str(write(tmp_path / "s", n, TINY)) for n in ("a", "b", "c")]
    if setup == "key":
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong")
    if setup == "model":
        args += ["--model", "claude-nope"]
    if setup == "outage":
        api_server.wire.outage = 529
    code = run_cli(*args, "--backend", "anthropic", "--cassettes", str(tmp_path / "c"))
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.startswith("ctxeval: error: ") and captured.err.count("\n") == 1, captured.err
    assert all(w in captured.err for w in words), captured.err
    assert "failed" not in captured.out  # no wall of failed graders
    assert "sk-ant-wrong" not in captured.err


def test_under_pytest_a_bad_key_stops_the_session(pytester: pytest.Pytester, api_server: ApiServer,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makefile(".yaml", **{"scenarios/tiny": TINY})
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong")
    result = pytester.runpytest("--ctxeval", "--ctxeval-backend", "anthropic",
                                           "--ctxeval-cassettes", str(pytester.path / "c"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*ctxeval: the API at http://127.0.0.1:* rejected the API key (401*"])
    assert "passed" not in result.stdout.str().split("\n")[-1] and result.stdout.str().count("rejected the API key") == 1


# 6 -------------------------------------------------------------------------------------------------

def test_the_sdk_http_client_keeps_proxies_and_connections(api_server: ApiServer, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    llm = make_llm("anthropic", cassettes=tmp_path / "a", concurrency=2)
    llm.complete_many([{"task": "chat", "messages": [{"role": "user", "content": f"q{i}"}], "max_tokens": 2_000}
                       for i in range(12)])
    assert api_server.connections <= 2  # keep-alive: 12 requests over at most one connection per worker
    monkeypatch.setenv("HTTP_PROXY", api_server.url)
    monkeypatch.setenv("NO_PROXY", "")
    proxied = make_llm("anthropic", cassettes=tmp_path / "b", base_url="http://api.ctxeval.invalid")
    assert proxied.complete(task="chat", messages=HI, max_tokens=2_000).text
    assert api_server.proxied == 1


# 7 -------------------------------------------------------------------------------------------------

def test_a_large_max_tokens_is_streamed(api_server: ApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = run_cli(str(write(tmp_path, "tiny", TINY)), "--backend", "anthropic", "--graders", "nine_sections",
                   "--cassettes", str(tmp_path / "c"), "--context-window", "1000000")
    assert code == 0, capsys.readouterr()
    compacts = [r["body"] for r in api_server.wire.messages_requests() if r["headers"].get("x-ctxeval-task") == "compact"]
    assert compacts and all(b["max_tokens"] >= 100_000 and b.get("stream") is True for b in compacts)


# 8 -------------------------------------------------------------------------------------------------

def test_a_cached_rerun_makes_no_request_and_costs_nothing(api_server: ApiServer, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = str(write(tmp_path, "tiny", TINY))
    args = [path, "--backend", "anthropic", "--cassettes", str(tmp_path / "c"), "--json", str(tmp_path / "r.json")]
    assert run_cli(*args) == 0
    first = json.loads((tmp_path / "r.json").read_text())["usage"]
    sent = len(api_server.wire.log)
    capsys.readouterr()
    assert run_cli(*args) == 0
    out = capsys.readouterr().out
    again = json.loads((tmp_path / "r.json").read_text())["usage"]
    assert len(api_server.wire.log) == sent  # zero HTTP requests
    assert first["api_calls"] > 0 and first["usd"] > 0
    assert again["api_calls"] == 0 and again["usd"] == 0 and again["cached_calls"] == first["api_calls"]
    assert "model usage (anthropic): 0 calls" in out and "$0.0000" in out and "replies from cassettes" in out


def test_an_unpriced_model_is_flagged(api_server: ApiServer, tmp_path: Path) -> None:
    llm = make_llm("anthropic", "claude-unpriced-test", cassettes=tmp_path)
    llm.complete(task="chat", messages=HI, max_tokens=2_000)
    usage = llm.usage.as_dict()
    assert usage["unpriced"] == ["claude-unpriced-test"]
    assert "unpriced tokens of claude-unpriced-test" in usage_lines(usage, "anthropic")[0]


def test_batch_replies_cost_half(api_server: ApiServer, tmp_path: Path) -> None:
    req = {"task": "judge", "messages": HI, "max_tokens": 2_000}
    interactive = make_llm("anthropic", cassettes=tmp_path / "a")
    interactive.complete(**req)
    batched = make_llm("anthropic", cassettes=tmp_path / "b")
    batched.complete_batch([req], poll_seconds=0)
    a, b = interactive.usage.as_dict(), batched.usage.as_dict()
    assert a["output_tokens"] == b["output_tokens"] and b["usd"] == pytest.approx(a["usd"] / 2, rel=1e-3)



def test_a_batch_is_polled_soon_then_less_often(api_server: ApiServer, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """After 1 s, then at doubling waits up to ``poll_seconds``: a small batch is read in seconds."""
    import time
    from types import SimpleNamespace

    from pytest_ctxeval.llm import batching, wire_batches

    waits: list[float] = []
    monkeypatch.setattr(batching, "time", SimpleNamespace(monotonic=time.monotonic, sleep=waits.append))
    monkeypatch.setattr(wire_batches.Batches, "_ended", lambda self, batch_id: self.store[batch_id]["polls"] >= 5)
    llm = make_llm("anthropic", cassettes=tmp_path)
    [reply] = llm.complete_batch([{"task": "judge", "messages": HI, "max_tokens": 2_000}], poll_seconds=5)
    assert not isinstance(reply, Exception) and reply.text
    assert waits == [1.0, 2.0, 4.0, 5.0, 5.0]


# 9 -------------------------------------------------------------------------------------------------

def test_concurrency_bounds_every_request_in_flight(api_server: ApiServer, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    api_server.wire.delay = 0.02
    paths = [str(write(tmp_path / "s", n, TINY)) for n in "abcd"]
    assert run_cli(*paths, "--backend", "anthropic", "--cassettes", str(tmp_path / "c"), "--concurrency", "2",
                   "--judge-votes", "3") == 0, capsys.readouterr()
    assert api_server.wire.max_in_flight == 2


def test_concurrent_calls_from_inside_a_running_event_loop(api_server: ApiServer, tmp_path: Path) -> None:
    llm = make_llm("anthropic", cassettes=tmp_path)

    async def inside() -> list[object]:
        return llm.complete_many([{"task": "chat", "messages": [{"role": "user", "content": f"q{i}"}],
                                   "max_tokens": 2_000} for i in range(3)])

    assert all(not isinstance(r, ModelError) for r in asyncio.run(inside()))


# 10 ------------------------------------------------------------------------------------------------

def test_batch_sends_one_batch_per_run_stage(api_server: ApiServer, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    paths = [str(write(tmp_path / "s", n, TINY)) for n in "abc"]
    args = [*paths, "--backend", "anthropic", "--cassettes", str(tmp_path / "c"), "--batch",
            "--json", str(tmp_path / "r.json")]
    assert run_cli(*args) == 0, capsys.readouterr()
    creates = [r for r in api_server.wire.log if r["endpoint"] == "batches" and r["method"] == "POST"]
    assert len(creates) == 1
    doc = json.loads((tmp_path / "r.json").read_text())
    statuses = {g["status"] for s in doc["scenarios"] for name, g in s["graders"].items() if name == "intent_preservation"}
    assert statuses and "ungraded" not in statuses
    assert doc["usage"]["batch_output_tokens"] > 0


def test_an_errored_batch_result_keeps_the_api_message(api_server: ApiServer, tmp_path: Path) -> None:
    llm = make_llm("anthropic", cassettes=tmp_path)
    api_server.wire.plan("batch_item", ["errored"])
    bad = {"format": {"type": "json_schema", "schema": {"type": "integer", "minimum": 1}}}
    out = llm.complete_batch([{"task": "judge", "messages": HI, "max_tokens": 2_000},
                              {"task": "judge", "messages": HI, "max_tokens": 2_000, "output_config": bad}],
                             poll_seconds=0)
    messages = sorted(str(r) for r in out)
    assert any("api_error: Internal server error" in m for m in messages)
    assert any("invalid_request_error" in m and "'minimum' is not supported" in m for m in messages)


# Bedrock and Vertex through the SDK's own clients ---------------------------------------------------

def test_bedrock_and_vertex_providers(api_server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", api_server.wire.api_key)
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    bedrock = make_llm("anthropic", provider="bedrock", base_url=api_server.url, cassettes=tmp_path / "b")
    assert bedrock.complete(task="chat", messages=HI, max_tokens=2_000).text
    monkeypatch.setenv("ANTHROPIC_VERTEX_ACCESS_TOKEN", api_server.wire.api_key)
    monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")
    monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "proj")
    vertex = make_llm("anthropic", provider="vertex", base_url=api_server.vertex_url, cassettes=tmp_path / "v")
    assert vertex.complete(task="chat", messages=HI, max_tokens=2_000).text
    assert [r["provider"] for r in api_server.wire.messages_requests()] == ["bedrock", "vertex"]


# The built-in library, record then replay ------------------------------------------------------------

LIBRARY = ("auth_refactor", "compaction_overflow", "tool_calls_in_flight", "session_memory_then_full",
           "summariser_circuit_breaker")  # full, PTL retry, in-flight tools, session memory, offline faults


def test_the_builtin_library_records_replays_and_reruns_for_free(api_server: ApiServer, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A subset of the built-in scenarios (the whole library takes about a minute per pass over the
    socket): recorded, replayed with zero connections, rerun from the cache with zero requests. The
    scenario that scripts offline faults is skipped on a real backend, with the reason."""
    from pytest_ctxeval.options import builtin_scenarios_dir

    paths = [str(builtin_scenarios_dir() / f"{name}.yaml") for name in LIBRARY]
    cassettes = str(tmp_path / "c")
    record = run_cli(*paths, "--backend", "record", "--cassettes", cassettes, "--json", str(tmp_path / "rec.json"))
    out = capsys.readouterr().out
    recorded = json.loads((tmp_path / "rec.json").read_text())
    assert all(s.get("error") is None for s in recorded["scenarios"]), out
    skipped = [s for s in recorded["scenarios"] if s.get("skipped")]
    assert [s["name"] for s in skipped] == ["summariser_circuit_breaker"] and "scripts faults" in skipped[0]["skipped"]
    ungraded = [(s["name"], n) for s in recorded["scenarios"] for n, g in s["graders"].items()
                if g["status"] == "ungraded"]
    assert not ungraded, ungraded
    sent = len(api_server.wire.log)
    api_server.stop()  # replay needs no server at all
    for backend in ("replay", "anthropic"):
        code = run_cli(*paths, "--backend", backend, "--cassettes", cassettes, "--json", str(tmp_path / f"{backend}.json"))
        again = json.loads((tmp_path / f"{backend}.json").read_text())
        assert code == record, capsys.readouterr()
        assert again["usage"]["api_calls"] == 0 and again["usage"]["usd"] == 0
        assert [{n: g["status"] for n, g in s["graders"].items()} for s in again["scenarios"]] == \
            [{n: g["status"] for n, g in s["graders"].items()} for s in recorded["scenarios"]]
    assert len(api_server.wire.log) == sent


def test_the_provider_options_are_in_help(capsys: pytest.CaptureFixture[str], pytester: pytest.Pytester) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    assert "--base-url URL" in out and "--provider {anthropic,bedrock,vertex}" in out
    result = pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(["*--ctxeval-base-url=URL*", "*--ctxeval-provider=*", "*ctxeval_base_url*"])


def test_an_unknown_provider_is_a_usage_error() -> None:
    from pytest_ctxeval.errors import UsageError

    with pytest.raises(UsageError, match="unknown provider 'azure'; choose one of: anthropic, bedrock, vertex"):
        make_llm("anthropic", provider="azure")
