"""docs/real-api.md shows what a user sees; each shown run is run again here, against the local server.

A ``text`` block under ``<!-- real-api: CASE, CASE... -->`` holds one ``$ ctxeval run ...`` line per
case, each followed by its output. The case sets the server up (a scripted truncation, an outage, a
wrong key...); the command runs in process; its output, with the server's address shown as the real
endpoint's and request ids as ``req_...``, must contain the documented output (whitespace-insensitive;
a line ``...`` or a trailing `` ...`` stands for output the page leaves out).
"""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.llm.server import ApiServer

PAGE = Path(__file__).resolve().parents[2] / "docs" / "real-api.md"
MARK = re.compile(r"^<!-- real-api: (.+) -->$")
ENDPOINTS = {"anthropic": "https://api.anthropic.com", "bedrock": "https://bedrock-runtime.us-east-1.amazonaws.com"}
CASES = ("good", "rerun", "truncate", "bad-key", "unknown-model", "outage", "bedrock-credentials")


def documented() -> list[tuple[str, list[str], str]]:
    """(case, the command's arguments after ``ctxeval``, the documented output) in page order."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    found = []
    for i, line in enumerate(lines):
        match = MARK.match(line)
        if not match:
            continue
        assert lines[i + 1] == "```text", f"docs/real-api.md:{i + 2}: a real-api mark must stand above a text block"
        end = lines.index("```", i + 2)
        block = lines[i + 2:end]
        starts = [j for j, text in enumerate(block) if text.startswith("$ ")]
        cases = [c.strip() for c in match.group(1).split(",")]
        assert len(cases) == len(starts), f"docs/real-api.md:{i + 1}: {len(cases)} cases for {len(starts)} commands"
        for case, start, stop in zip(cases, starts, [*starts[1:], len(block)]):
            command = block[start][2:].partition("  #")[0]
            found.append((case, shlex.split(command), "\n".join(block[start + 1:stop])))
    return found


def normalise(text: str) -> str:
    text = re.sub(r"req_[A-Za-z0-9_]+", "req_...", text)
    return " ".join(text.split())


def test_the_page_shows_every_case() -> None:
    assert [case for case, _, _ in documented()] == list(CASES)


@pytest.mark.parametrize("case, args, shown", documented(), ids=[c for c, _, _ in documented()])
def test_the_page_shows_what_a_run_prints(case: str, args: list[str], shown: str, api_server: ApiServer,
                                          tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert case in CASES, f"docs/real-api.md: unknown real-api case {case!r}; known: {', '.join(CASES)}"
    assert args[:2] == ["ctxeval", "run"], args
    provider = "bedrock" if case.startswith("bedrock") else "anthropic"
    if case == "truncate":
        api_server.wire.plan("compact", ["truncate"] * 200)
    elif case == "bad-key":
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-wrong")
    elif case == "outage":
        api_server.wire.outage = 529
    elif case == "bedrock-credentials":
        if importlib.util.find_spec("botocore") is None:
            pytest.skip("SigV4 signing needs botocore: pip install -e '.[test]' (it includes pytest-ctxeval[bedrock])")
        from anthropic.lib.aws._auth import _get_session

        _get_session.cache_clear()  # the SDK keeps one boto3 session (and its keys) per process
        for key, value in {**api_server.bedrock_environ(), "AWS_SECRET_ACCESS_KEY": "not-the-secret",
                           "AWS_EC2_METADATA_DISABLED": "true"}.items():
            monkeypatch.setenv(key, value)
    root = tmp_path_factory.getbasetemp() / "real-api-docs"
    cassettes = root / ("good" if case in ("good", "rerun") else case)
    if case == "rerun" and not cassettes.exists():  # the good run fills the cassettes the rerun reads
        main([*args[1:], "--cassettes", str(cassettes)])
    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # the page's paths are the checkout's
    code = main([*args[1:], "--cassettes", str(cassettes)])
    captured = capsys.readouterr()
    printed = normalise((captured.out + captured.err).replace(api_server.url, ENDPOINTS[provider]))
    assert code == {"good": 0, "rerun": 0, "truncate": 1}.get(case, 2), printed  # 2: one usage error, page says
    assert "sk-ant-wrong" not in printed and "not-the-secret" not in printed
    for part in re.split(r"(?:^|\s)\.\.\.(?:\s|$)", shown):
        if part.strip():
            assert normalise(part) in printed, f"docs/real-api.md ({case}) shows:\n{part}\nthe run printed:\n{printed}"
