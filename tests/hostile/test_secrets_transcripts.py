"""Issue 23, secrets, on a real-shaped transcript: ``grade``, ``compare-real``, ``import`` and
``report`` of a session whose lost user message, tool input and tool result carry labelled tokens
(``Bearer <token>``, ``aws_secret_access_key=<secret>``, ``ghp_…``) write none of them, whole or cut,
to any output or to the terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ctxeval.cli import main

from tests.hostile.make_inputs import AWS, BEARER, GHP

SRC = Path(__file__).parent / "inputs" / "leaky_tokens.jsonl"


def _cuts(secret: str) -> set[str]:
    return {secret, secret[:12], secret[-12:], secret[4:16]}


def test_no_output_of_a_leaky_transcript_holds_a_token(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = SRC.read_text()
    assert all(s in src for s in (AWS, BEARER, GHP))  # the input does carry them
    assert main(["grade", str(SRC), "--json", str(tmp_path / "g.json")]) in (0, 1)
    assert main(["compare-real", str(SRC), "--json", str(tmp_path / "c.json"), "--html", str(tmp_path / "c.html")]) in (0, 1)
    assert main(["import", str(SRC), "-o", str(tmp_path / "s.yaml")]) == 0
    assert main(["report", str(tmp_path / "g.json"), "-o", str(tmp_path / "g.html"), "-o", str(tmp_path / "g.md")]) == 0
    printed = capsys.readouterr()
    outputs = {f.name: f.read_text() for f in tmp_path.iterdir()}
    outputs["stdout"], outputs["stderr"] = printed.out, printed.err
    assert set(outputs) >= {"g.json", "c.json", "c.html", "s.yaml", "g.html", "g.md"}
    assert "[REDACTED" in outputs["g.json"] and "[REDACTED" in outputs["stdout"]  # the text did reach them
    for name, text in outputs.items():
        for secret in (AWS, BEARER, GHP):
            for cut in _cuts(secret):
                assert cut not in text, (name, cut)
