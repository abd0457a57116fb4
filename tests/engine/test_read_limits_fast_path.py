"""The Read tool's limits (engine.budget.read_limit_error, read_line_cap) size an ASCII file by its
length and count its lines before splitting them: the same answers as the code before (kept here
as the oracle: the UTF-8 encoding's length, the lines split every time), for any text (non-ASCII,
lone surrogates, CR, a final newline or not) and any limits."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.core.tokens import estimate_text
from pytest_ctxeval.engine.budget import _human, read_limit_error, read_line_cap


def limit_error_before(content: str, config: EngineConfig) -> str | None:
    size = len(content.encode("utf-8", "surrogatepass"))
    if size > config.read_max_bytes:
        return (f"File content ({_human(size)}) exceeds maximum allowed size ({_human(config.read_max_bytes)}). "
                "Please use offset and limit parameters to read specific portions of the file, or use the "
                "GrepTool to search for specific content.")
    tokens = estimate_text(content, config)
    if tokens > config.read_max_tokens:
        return (f"File content ({tokens} tokens) exceeds maximum allowed tokens ({config.read_max_tokens}). "
                "Please use offset and limit parameters to read specific portions of the file, or use the "
                "GrepTool to search for specific content.")
    return None


def line_cap_before(content: str, config: EngineConfig) -> str:
    lines = content.split("\n")
    total = len(lines) - (1 if content.endswith("\n") else 0)
    if total <= config.read_max_lines:
        return content
    kept = "\n".join(lines[: config.read_max_lines])
    return (kept + f"\n[Showing lines 1-{config.read_max_lines} of {total}. "
            "Use offset and limit to read the rest.]")


_text = st.text(st.sampled_from("ab \n\r\té€\ud800😀"), max_size=80)


@settings(deadline=None)  # examples: the profile's (conftest.py: 50 in the suite, 1,000 in .ci/soak)
@given(_text, st.integers(1, 120), st.integers(1, 60), st.integers(1, 12))
def test_the_limits_answer_as_before(content: str, max_bytes: int, max_tokens: int, max_lines: int) -> None:
    config = EngineConfig(read_max_bytes=max_bytes, read_max_tokens=max_tokens, read_max_lines=max_lines)
    assert read_limit_error(content, config) == limit_error_before(content, config)
    assert read_line_cap(content, config) == line_cap_before(content, config)


def test_both_ways_of_each_limit_are_seen() -> None:
    config = EngineConfig(read_max_bytes=10, read_max_tokens=2, read_max_lines=2)
    assert "maximum allowed size" in read_limit_error("é" * 6, config)  # 12 bytes, 6 characters
    assert read_limit_error("é" * 4, config) is None
    assert "maximum allowed tokens" in read_limit_error("abcdefghij", config)
    assert read_line_cap("a\nb\n", config) == "a\nb\n"
    assert read_line_cap("a\nb\nc", config).startswith("a\nb\n[Showing lines 1-2 of 3.")
