"""Costing a run: the price table, prefix matching, overrides from a file, and the CLI's live
progress line (only on a terminal)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from pytest_ctxeval.cli.common import Progress as _Progress
from pytest_ctxeval.errors import UsageError
from pytest_ctxeval.evaluation import merge_usage, usage_lines
from pytest_ctxeval.llm.pricing import cost_of, load_prices, price_for, set_prices


@pytest.fixture(autouse=True)
def _restore_prices():
    yield
    set_prices(None)


def test_longest_prefix_wins() -> None:
    assert price_for("claude-opus-4-5-20251101")["input"] == 5.0
    assert price_for("claude-opus-4-1")["input"] == 15.0
    assert price_for("claude-sonnet-4-5")["output"] == 15.0
    assert price_for("some-other-model") is None


def test_cost_counts_every_kind_of_token() -> None:
    row = {"input_tokens": 1_000_000, "output_tokens": 100_000, "cache_creation_input_tokens": 200_000,
           "cache_read_input_tokens": 1_000_000}
    # sonnet: 3.00 + 1.50 + 0.75 + 0.30
    assert cost_of("claude-sonnet-4-5", row) == pytest.approx(5.55)
    assert cost_of("ctxeval-reference", row) == 0.0
    assert cost_of("unpriced-model", row) == 0.0


def test_prices_file_overrides(tmp_path: Path) -> None:
    f = tmp_path / "prices.yaml"
    f.write_text("claude-sonnet-4:\n  input: 1\n  output: 2\n")
    set_prices(load_prices(f))
    assert cost_of("claude-sonnet-4-5", {"input_tokens": 1_000_000, "output_tokens": 1_000_000}) == 3.0


@pytest.mark.parametrize("text,message", [("- a\n- b\n", "maps model names"), ("m: {input: 1}\n", "needs at least"),
                                          ("m: {input: x, output: 2}\n", "must be numbers")])
def test_bad_prices_file(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "prices.yaml"
    f.write_text(text)
    with pytest.raises(UsageError, match=message):
        load_prices(f)


def test_merged_usage_is_costed_per_model() -> None:
    a = {"api_calls": 1, "input_tokens": 1_000_000, "output_tokens": 0,
         "by_model": {"claude-sonnet-4-5": {"api_calls": 1, "input_tokens": 1_000_000, "output_tokens": 0}}}
    b = {"api_calls": 2, "input_tokens": 0, "output_tokens": 1_000_000,
         "by_model": {"claude-haiku-4-5": {"api_calls": 2, "input_tokens": 0, "output_tokens": 1_000_000}}}
    total = merge_usage([a, b])
    assert total["usd"] == pytest.approx(3.0 + 5.0)
    lines = usage_lines(total, "anthropic")
    assert lines[0].endswith("$8.0000") and len(lines) == 3


def test_progress_is_silent_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    p = _Progress(2)
    p.step("a", [{"api_calls": 1, "input_tokens": 10, "output_tokens": 1}])
    p.close()
    assert out.getvalue() == ""


def test_progress_updates_one_line_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    monkeypatch.setattr("sys.stdout", out)
    p = _Progress(2)
    p.step("auth_refactor", [{"api_calls": 3, "input_tokens": 1000, "output_tokens": 10,
                              "by_model": {"claude-sonnet-4-5": {"api_calls": 3, "input_tokens": 1000, "output_tokens": 10}}}])
    p.close()
    text = out.getvalue()
    assert "\r[1/2] auth_refactor  3 calls  1,010 tokens  $0.0032" in text
    assert text.endswith("\r")
