"""Issue 23 on issue 16's cassette path: every reader of the store (``LLM.send``, Message Batches,
batch stages) restores placeholders and names a broken cassette; results written by issue 21's usage
totals (``usage.unpriced``, a list of model names) are read back by report and diff."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.errors import ModelError
from pytest_ctxeval.llm import make_llm

GHP = "ghp_" + "A1b2C3d4" * 5
KEY = "sk-ant-api03-FAKEKEYfakekeyFAKEKEY0123456789"
ASK = {"task": "chat", "messages": [{"role": "user", "content": f"my token is {GHP}"}], "max_tokens": 20}


class API:
    """Replies quoting the request's key-shaped string and one of its own; counts requests."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.calls += 1
        body = json.loads(request.content)
        text = f"you said {GHP if GHP in json.dumps(body['messages']) else 'none'}; mine is AKIAZZZZZZZZZZZZZZZZ"
        return httpx2.Response(200, json={
            "id": f"msg_{self.calls}", "type": "message", "role": "assistant", "model": body["model"],
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 2}})


@pytest.fixture
def recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, API]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    api = API()
    text = make_llm("record", "claude-test", cassettes=tmp_path, network=httpx2.MockTransport(api)).complete(**ASK).text
    (path,) = tmp_path.glob("*/*.json")
    stored = path.read_text()
    assert GHP not in stored and "AKIAZZZZZZZZZZZZZZZZ" not in stored and KEY not in stored
    return path, text, api


def test_a_batch_answered_from_cassettes_restores_the_placeholders(recorded: tuple[Path, str, API]) -> None:
    path, text, _ = recorded
    assert GHP in text and "AKIAZZZZZZZZZZZZZZZZ" in text
    (reply,) = make_llm("replay", "claude-test", cassettes=path.parent.parent).complete_batch([ASK])
    assert not isinstance(reply, ModelError) and reply.text == text and reply.cached


def test_a_broken_cassette_read_by_a_batch_in_replay_is_named(recorded: tuple[Path, str, API]) -> None:
    path, _, _ = recorded
    path.write_text('{"task": "chat", "response": {"status": 200}}')
    (reply,) = make_llm("replay", "claude-test", cassettes=path.parent.parent).complete_batch([ASK])
    assert isinstance(reply, ModelError)
    assert "broken cassette" in str(reply) and path.name in str(reply) and "response.json" in str(reply)


def test_a_broken_cassette_outside_replay_is_asked_again_and_rerecorded(recorded: tuple[Path, str, API]) -> None:
    path, text, api = recorded
    path.write_text("{not json")
    llm = make_llm("anthropic", "claude-test", cassettes=path.parent.parent, network=httpx2.MockTransport(api))
    assert llm.complete(**ASK).text == text and api.calls == 2
    assert json.loads(path.read_text())["response"]["json"]["content"]  # a usable cassette again
    again = make_llm("replay", "claude-test", cassettes=path.parent.parent).complete(**ASK)
    assert again.text == text and again.cached


def test_a_results_file_with_unpriced_models_is_reported_and_diffed(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from .test_documents import RESULTS

    doc = {**RESULTS, "usage": {"api_calls": 2, "input_tokens": 10, "output_tokens": 4, "usd": 0.0,
                                "unpriced": ["claude-new"], "by_model": {"claude-new": {"api_calls": 2}}}}
    src = tmp_path / "r.json"
    src.write_text(json.dumps(doc))
    assert main(["report", str(src), "-o", str(tmp_path / "r.md")]) == 0
    assert main(["diff", str(src), str(src)]) == 0


@pytest.mark.parametrize("value", [[1], "claude-new", {"m": 1}], ids=["numbers", "string", "object"])
def test_unpriced_that_is_not_a_list_of_model_names_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            value: object) -> None:
    from .test_documents import RESULTS

    src = tmp_path / "r.json"
    src.write_text(json.dumps({**RESULTS, "usage": {"unpriced": value}}))
    assert main(["report", str(src), "-o", str(tmp_path / "r.md")]) == 2
    err = capsys.readouterr().err
    assert "usage.unpriced: expected a list of model names" in err and str(src) in err
