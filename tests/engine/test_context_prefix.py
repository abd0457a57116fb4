"""The context prefix caps (003:77-78, 000:49): git status 2,000 chars, CLAUDE.md 40,000 per file."""

from __future__ import annotations

import pytest

from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine.context_prefix import cap_git_status, cap_memory_file, system_context

CFG = EngineConfig()


@pytest.mark.parametrize("chars,cut", [(1_999, False), (2_000, False), (2_001, True)])
def test_003_77_git_status_capped_at_2000_chars(chars, cut):
    status = "M" * chars
    out = cap_git_status(status, CFG)
    assert (out != status) is cut
    if cut:
        assert out.startswith("M" * 2_000 + "\n... (truncated because it exceeds 2,000 characters")
        assert out[:2_001].count("M") == 2_000


@pytest.mark.parametrize("chars,cut", [(39_999, False), (40_000, False), (40_001, True)])
def test_003_78_claude_md_capped_at_40000_chars_per_file(chars, cut):
    content = "r" * chars
    out = cap_memory_file("/repo/CLAUDE.md", content, CFG)
    assert (out != content) is cut
    if cut:
        assert out.startswith("r" * 40_000 + "\n... (truncated: /repo/CLAUDE.md is over the 40,000-character")


def test_003_78_the_cap_is_per_file():
    files = {"/repo/CLAUDE.md": "a" * 40_000, "/repo/src/CLAUDE.md": "b" * 40_001}
    text = system_context("sys", None, files, CFG)
    assert "a" * 40_000 + "\n\n" in text  # the first file whole
    assert text.count("truncated: /repo/src/CLAUDE.md") == 1 and "truncated: /repo/CLAUDE.md" not in text


def test_caps_scale_with_the_window():
    small = EngineConfig.for_window(20_000)
    assert (small.git_status_max_chars, small.memory_file_max_chars) == (200, 4_000)
    assert cap_git_status("x" * 201, small).startswith("x" * 200 + "\n... (truncated")


def test_system_context_order_and_nothing_without_a_prefix():
    assert system_context("sys", None, {}, CFG) == "sys"
    text = system_context("sys", "M a.py", {"/r/CLAUDE.md": "- rule"}, CFG)
    assert text.index("sys") < text.index("gitStatus:") < text.index("Contents of /r/CLAUDE.md")
