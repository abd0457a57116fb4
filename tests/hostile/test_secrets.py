"""Issue 23, secrets: no key-shaped string reaches an output, whole or cut; replay stays exact."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.llm.cassettes import decode_reply, encode_reply, request_key
from pytest_ctxeval.core.redact import excerpt, redact, redact_tree, scrub_output, scrub_tree
from pytest_ctxeval.reporting.report import md

AWS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GHP = "ghp_" + "A1b2C3d4" * 5
BEARER = "abcdefABCDEF0123456789xyzXYZ"
SLACK = "xoxb-1234567890-abcdefghijklmnop"
PAT = "github_pat_" + "11ABCDEFG0" * 4


@pytest.mark.parametrize("text, secret", [
    (f"aws_secret_access_key={AWS[:27]}…", AWS[:27]),
    (f"token {GHP[:12]}…", GHP[:12]),
    (f"Authorization: Bearer {BEARER[:14]}…", BEARER[:14]),
    (f"sk-ant-api03-{'Q' * 10}...", "Q" * 10),
    ("AKIAABCDEFGH…", "AKIAABCDEFGH"),
], ids=["aws-27", "ghp-prefix", "bearer-cut", "anthropic-dots", "aws-access-cut"])
def test_a_token_cut_by_someone_else_is_still_redacted_at_the_boundary(text: str, secret: str) -> None:
    out = scrub_output(text)
    assert secret not in out and "[REDACTED:" in out


def test_a_cut_at_the_end_of_a_string_is_recognised_per_string() -> None:
    doc = {"reason": f"the summary quotes {GHP[:14]}", "n": 1.0, "list": [f"Bearer {BEARER[:16]}"]}
    out = json.dumps(scrub_tree(doc))
    assert GHP[:14] not in out and BEARER[:16] not in out


def test_words_that_look_like_a_cut_are_left_alone() -> None:
    for text in ("plain bearer token...", "the secret_access_key = something", "see eyJ…", "wait..."):
        assert scrub_output(text) == text


def test_excerpts_redact_before_they_cut() -> None:
    text = f"use {GHP} now"
    for limit in range(3, len(text)):
        assert GHP[:10] not in excerpt(text, limit)
    assert md(f"key {GHP} in a report line", limit=12).count("A1b2") == 0


def test_slack_after_underscore_and_pat_in_an_image_url() -> None:
    assert SLACK not in redact(f"logs/run_{SLACK}.txt")[0]
    block = {"type": "image", "source": {"type": "url", "url": f"https://x.example/i.png?t={PAT}", "data": "QUFB"}}
    out = redact_tree(block, {})
    assert PAT not in json.dumps(out) and out["source"]["data"] == "QUFB"


def test_lost_identifiers_never_pull_a_token_out_of_its_label() -> None:
    from pytest_ctxeval.grading.lost import identifiers

    text = redact(f'curl -H "Authorization: Bearer {BEARER}" ; aws_secret_access_key={AWS} in src/app.py')[0]
    found = identifiers(text)
    assert BEARER not in " ".join(found) and AWS not in " ".join(found) and "src/app.py" in found


def test_results_and_reports_of_a_leaky_session_hold_no_token(tmp_path: Path) -> None:
    """A scenario whose tool input and user text carry labelled tokens: the lost identifiers,
    excerpts and reasons of the results JSON, HTML and Markdown never hold them, whole or cut."""
    from pytest_ctxeval.cli import main

    src = Path(__file__).parent / "inputs" / "leaky_tokens.yaml"
    out = tmp_path / "r.json"
    assert main(["run", str(src), "--json", str(out), "--session-dir", str(tmp_path / "s")]) in (0, 1)
    assert main(["report", str(out), "-o", str(tmp_path / "r.html"), "-o", str(tmp_path / "r.md")]) == 0
    for f in ("r.json", "r.html", "r.md"):
        text = (tmp_path / f).read_text()
        for secret in (BEARER, AWS, GHP, SLACK):
            for cut in (secret, secret[:12], secret[-12:]):
                assert cut not in text, (f, cut)


KEY = "sk-ant-api03-FAKEKEYfakekeyFAKEKEY0123456789"


class EchoAPI:
    """Replies quoting a key-shaped string from the request and one of its own."""

    def __init__(self) -> None:
        self.requests: list[dict] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        said = json.dumps(body["messages"])
        quoted = GHP if GHP in said else "none"
        text = f"you said {quoted}; mine is AKIAZZZZZZZZZZZZZZZZ; turn {len(body['messages'])}"
        return httpx2.Response(200, json={
            "id": f"msg_{len(self.requests)}", "type": "message", "role": "assistant", "model": body["model"],
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}})


def _conversation(llm) -> list[str]:
    messages: list[dict] = [{"role": "user", "content": f"my token is {GHP}"}]
    replies = []
    for i in range(3):
        reply = llm.complete(task="chat", messages=messages, max_tokens=50).text
        replies.append(reply)
        messages = messages + [{"role": "assistant", "content": reply}, {"role": "user", "content": f"next {i}"}]
    return replies


def test_record_then_replay_reproduces_replies_with_key_shaped_strings(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    api = EchoAPI()
    recorded = _conversation(make_llm("record", "claude-test", cassettes=tmp_path, network=httpx2.MockTransport(api)))
    assert GHP in recorded[0] and "AKIAZZZZZZZZZZZZZZZZ" in recorded[0]
    for path in tmp_path.rglob("*.json"):
        text = path.read_text()
        assert GHP not in text and "AKIAZZZZZZZZZZZZZZZZ" not in text and KEY not in text
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    replayed = _conversation(make_llm("replay", "claude-test", cassettes=tmp_path))
    assert replayed == recorded  # byte-exact: later requests carried the real values, so every key matched


def test_the_api_key_in_use_is_never_restorable() -> None:
    body = {"messages": [{"role": "user", "content": "hi"}]}
    key = request_key(body)
    stored = encode_reply({"text": f"echo {KEY}"}, key, body, KEY)
    assert KEY not in json.dumps(stored) and KEY.encode().hex() not in json.dumps(stored)
    assert decode_reply(stored, key, body) == {"text": "echo [REDACTED:anthropic]"}
