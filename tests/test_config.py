"""Tests for pytest_ctxeval.core.config: seed constants, derived thresholds, scaling, resolution."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, strategies as st
from pydantic import ValidationError

from pytest_ctxeval.core.config import (
    COMPACTABLE_TOOLS_000_004, COMPACTABLE_TOOLS_003, CONTEXT_WINDOW_ENV, MICROCOMPACT_PROFILES,
    ONE_MILLION_WINDOW, REFERENCE_WINDOW, SCALED_FIELDS, EngineConfig, resolve_context_window,
)
from pytest_ctxeval.errors import UsageError

from shared_paths import SEEDS_DIR as SEEDS, needs_shared

# (field, value at the 200k reference window, citation that must appear in the field's description)
SEED_CONSTANTS = [
    ("context_window", 200_000, "000:204"),
    ("max_output_tokens", 32_000, "Not in the seeds"),
    ("summary_output_reserve_tokens", 20_000, "000:187"),
    ("summary_thinking_tokens", 16_000, "Not in the seeds"),
    ("autocompact_buffer_tokens", 13_000, "000:178"),
    ("warning_buffer_tokens", 20_000, "000:179"),
    ("error_buffer_tokens", 20_000, "000:180"),
    ("blocking_buffer_tokens", 3_000, "000:181"),
    ("max_consecutive_failures", 3, "000:210"),
    ("autocompact_enabled", True, "Auto-compaction on"),
    ("bytes_per_token", 4, "000:93"),
    ("json_bytes_per_token", 2, "000:93"),
    ("estimate_margin", 4 / 3, "003:353"),
    ("image_tokens", 2_000, "003:106"),
    ("default_max_result_chars", 50_000, "003:36"),
    ("tool_result_chars", {"Bash": 30_000, "PowerShell": 30_000, "Grep": 20_000, "McpAuth": 10_000}, "004:117"),
    ("max_tool_result_tokens", 100_000, "003:39"),
    ("per_message_result_chars", 200_000, "003:42"),
    ("preview_chars", 2_000, "003:66"),
    ("persisted_max_bytes", 64 * 1024 * 1024, "004:119"),
    ("read_max_lines", 2_000, "003:79"),
    ("read_max_bytes", 256 * 1024, "004:129"),
    ("read_max_tokens", 25_000, "004:129"),
    ("microcompact_gap_minutes", 60, "004:197"),
    ("microcompact_keep_recent", 5, "004:214"),
    ("compactable_tools", ("Read", "Bash", "PowerShell", "Grep", "Glob", "WebSearch", "WebFetch", "Edit", "Write"),
     "000:111"),
    ("api_clear_trigger_tokens", 180_000, "000:119"),
    ("api_clear_keep_tokens", 40_000, "000:120"),
    ("session_memory_enabled", False, "004:281"),
    ("sm_init_tokens", 10_000, "004:333"),
    ("sm_update_growth_tokens", 5_000, "004:334"),
    ("sm_update_tool_calls", 3, "004:335"),
    ("sm_keep_min_tokens", 10_000, "000:134"),
    ("sm_keep_min_text_messages", 5, "000:134"),
    ("sm_keep_max_tokens", 40_000, "000:134"),
    ("post_compact_max_files", 5, "003:596"),
    ("post_compact_tokens_per_file", 5_000, "003:597"),
    ("post_compact_files_budget", 50_000, "000:156"),
    ("post_compact_tokens_per_skill", 5_000, "003:603"),
    ("post_compact_skills_budget", 25_000, "003:604"),
    ("max_ptl_retries", 3, "003:320"),
    ("ptl_drop_fraction", 0.2, "003:314"),
    ("microcompact_profile", "default", "003:122-123"),
    ("cached_microcompact", False, "003:137"),
    ("cache_edits_trigger_results", 20, "003:480"),
    ("cache_edits_keep_recent", 5, "004:214"),
    ("api_context_management", True, "000:113-124"),
    ("blocking_limit_enforced", True, "000:181"),
    ("git_status_max_chars", 2_000, "003:77"),
    ("memory_file_max_chars", 40_000, "003:78"),
]


@pytest.mark.parametrize("field,expected,citation", SEED_CONSTANTS, ids=[r[0] for r in SEED_CONSTANTS])
def test_seed_constant(field, expected, citation):
    """A test per seed constant: fails if the constant (or its citation) changes."""
    cfg = EngineConfig.for_window(200_000)
    assert getattr(cfg, field) == expected
    assert getattr(EngineConfig(), field) == expected
    description = EngineConfig.model_fields[field].description
    assert description is not None and citation in description


def test_every_field_is_in_the_seed_table():
    assert {r[0] for r in SEED_CONSTANTS} == set(EngineConfig.model_fields)


@needs_shared
def test_citations_point_at_existing_seed_lines():
    files = {p.name[:3]: p.read_text(encoding="utf-8").splitlines() for p in SEEDS.glob("0*.txt")}
    assert set(files) == {"000", "003", "004"}
    cited = 0
    for name, info in EngineConfig.model_fields.items():
        for prefix, line in re.findall(r"\b(000|003|004):(\d+)", info.description or ""):
            assert 1 <= int(line) <= len(files[prefix]), f"{name}: {prefix}:{line} out of range"
            cited += 1
    assert cited >= 40


@pytest.mark.parametrize("citation,needle", [
    ("003:77", "2,000"), ("003:78", "40,000"), ("000:49", "2000 chars"), ("000:181", "hard blocking limit"),
    ("000:204", "200,000"), ("000:178", "13_000"), ("000:179", "20_000"), ("000:181", "3_000"),
    ("000:187", "20_000"), ("000:119", "180_000"), ("000:120", "40_000"), ("003:36", "50_000"),
    ("003:39", "100_000"), ("003:42", "200_000"), ("003:353", "4 / 3"), ("003:596", "5"),
    ("003:597", "5_000"), ("003:604", "25_000"), ("000:93", "'{'"), ("004:214", "keepRecent = 5"),
])
@needs_shared
def test_cited_seed_line_holds_the_value(citation, needle):
    prefix, line = citation.split(":")
    path = next(SEEDS.glob(f"{prefix}_*.txt"))
    assert needle in path.read_text(encoding="utf-8").splitlines()[int(line) - 1]


def test_derived_thresholds_at_200k():
    cfg = EngineConfig.for_window(200_000)
    assert cfg.effective_window == 180_000
    assert cfg.autocompact_threshold == 167_000
    assert cfg.warning_threshold == 160_000
    assert cfg.error_threshold == 160_000
    assert cfg.blocking_limit == 177_000


def test_derived_thresholds_scale_at_20k():
    cfg = EngineConfig.for_window(20_000)
    assert cfg.context_window == 20_000
    assert cfg.effective_window == 18_000
    assert cfg.autocompact_threshold == 16_700
    assert cfg.warning_threshold == 16_000
    assert cfg.error_threshold == 16_000
    assert cfg.blocking_limit == 17_700


def test_effective_window_uses_min_of_max_output_and_reserve():
    cfg = EngineConfig.for_window(200_000, max_output_tokens=8_000)
    assert cfg.effective_window == 192_000
    assert cfg.autocompact_threshold == 179_000


def test_docstring_example_1m_window():
    cfg = EngineConfig.for_window(1_000_000)
    assert cfg.effective_window == 900_000
    assert cfg.autocompact_threshold == 835_000


def test_for_window_scales_budgets_at_20k():
    cfg = EngineConfig.for_window(20_000)
    assert cfg.max_output_tokens == 3_200
    assert cfg.summary_output_reserve_tokens == 2_000
    assert cfg.autocompact_buffer_tokens == 1_300
    assert cfg.blocking_buffer_tokens == 300
    assert cfg.default_max_result_chars == 5_000
    assert cfg.tool_result_chars == {"Bash": 3_000, "PowerShell": 3_000, "Grep": 2_000, "McpAuth": 1_000}
    assert cfg.max_tool_result_tokens == 10_000
    assert cfg.per_message_result_chars == 20_000
    assert cfg.preview_chars == 200
    assert cfg.read_max_bytes == round(256 * 1024 / 10)
    assert cfg.read_max_tokens == 2_500
    assert cfg.api_clear_trigger_tokens == 18_000
    assert cfg.api_clear_keep_tokens == 4_000
    assert cfg.sm_init_tokens == 1_000
    assert cfg.sm_update_growth_tokens == 500
    assert cfg.sm_keep_min_tokens == 1_000
    assert cfg.sm_keep_max_tokens == 4_000
    assert cfg.post_compact_tokens_per_file == 500
    assert cfg.post_compact_files_budget == 5_000
    assert cfg.post_compact_tokens_per_skill == 500
    assert cfg.post_compact_skills_budget == 2_500


def test_every_scaled_field_scales():
    big, small = EngineConfig.for_window(200_000), EngineConfig.for_window(20_000)
    for name in SCALED_FIELDS:
        b, s = getattr(big, name), getattr(small, name)
        if isinstance(b, dict):
            assert s == {k: round(v / 10) for k, v in b.items()}, name
        else:
            assert s == round(b / 10), name


@pytest.mark.parametrize("field", [
    "max_consecutive_failures", "bytes_per_token", "json_bytes_per_token", "estimate_margin",
    "image_tokens", "persisted_max_bytes", "read_max_lines", "microcompact_gap_minutes",
    "microcompact_keep_recent", "compactable_tools", "sm_update_tool_calls",
    "sm_keep_min_text_messages", "post_compact_max_files", "max_ptl_retries", "ptl_drop_fraction",
])
def test_counts_times_and_per_block_sizes_do_not_scale(field):
    assert field not in SCALED_FIELDS
    assert getattr(EngineConfig.for_window(20_000), field) == getattr(EngineConfig(), field)
    assert getattr(EngineConfig.for_window(2_000_000), field) == getattr(EngineConfig(), field)


def test_scaled_budgets_never_drop_to_zero():
    cfg = EngineConfig.for_window(10)
    for name in SCALED_FIELDS:
        value = getattr(cfg, name)
        values = value.values() if isinstance(value, dict) else [value]
        assert all(v >= 1 for v in values), name


def test_overrides_are_applied_unscaled():
    cfg = EngineConfig.for_window(20_000, autocompact_buffer_tokens=500, default_max_result_chars=7_777,
                                  microcompact_keep_recent=2)
    assert cfg.autocompact_buffer_tokens == 500
    assert cfg.autocompact_threshold == 18_000 - 500
    assert cfg.default_max_result_chars == 7_777
    assert cfg.microcompact_keep_recent == 2
    # The other budgets are still scaled.
    assert cfg.warning_buffer_tokens == 2_000


def test_override_tool_result_chars_replaces_scaled_table():
    cfg = EngineConfig.for_window(20_000, tool_result_chars={"Foo": 123})
    assert cfg.tool_result_chars == {"Foo": 123}
    assert cfg.max_result_chars("Foo") == 123
    assert cfg.max_result_chars("Bash") == 5_000  # scaled default, Bash no longer listed


@pytest.mark.parametrize("overrides,field", [
    ({"microcompact_keep_recent": -1}, "microcompact_keep_recent"),
    ({"max_consecutive_failures": 0}, "max_consecutive_failures"),
    ({"ptl_drop_fraction": 1.5}, "ptl_drop_fraction"),
    ({"autocompact_buffer_tokens": "lots"}, "autocompact_buffer_tokens"),
    ({"no_such_field": 1}, "no_such_field"),
])
def test_bad_override_raises_usage_error_naming_field(overrides, field):
    with pytest.raises(UsageError) as info:
        EngineConfig.for_window(20_000, **overrides)
    assert f"config.{field}" in str(info.value)


@pytest.mark.parametrize("window", [0, -200_000, 1.5, "200000", None])
def test_for_window_rejects_bad_window(window):
    with pytest.raises(UsageError, match="context_window"):
        EngineConfig.for_window(window)


def test_config_is_frozen_and_replace_validates():
    cfg = EngineConfig.for_window(20_000)
    with pytest.raises(ValidationError):
        cfg.context_window = 1  # type: ignore[misc]
    changed = cfg.replace(microcompact_keep_recent=9)
    assert changed.microcompact_keep_recent == 9 and cfg.microcompact_keep_recent == 5
    assert changed.autocompact_threshold == 16_700
    with pytest.raises(UsageError, match=r"config\.microcompact_keep_recent"):
        cfg.replace(microcompact_keep_recent=-3)


def test_microcompact_profiles():
    assert MICROCOMPACT_PROFILES["default"] == COMPACTABLE_TOOLS_000_004
    assert MICROCOMPACT_PROFILES["read_only"] == COMPACTABLE_TOOLS_003
    assert "Edit" in COMPACTABLE_TOOLS_000_004 and "Write" in COMPACTABLE_TOOLS_000_004
    assert "Edit" not in COMPACTABLE_TOOLS_003 and "Write" not in COMPACTABLE_TOOLS_003


# --- max_result_chars ------------------------------------------------------------------------

@pytest.mark.parametrize("tool,declared,expected", [
    ("Read", None, math.inf),
    ("Read", 10, math.inf),
    ("Bash", None, 30_000),
    ("Bash", 5, 5),  # a call's own declaration beats the built-in table
    ("Bash", 1_000_000, 400_000),  # capped at MAX_TOOL_RESULT_TOKENS (100K) x 4 bytes
    ("PowerShell", None, 30_000),
    ("Grep", None, 20_000),
    ("McpAuth", None, 10_000),
    ("mcp__thing__tool", 12_345, 12_345),
    ("mcp__thing__tool", 10**9, 400_000),
    ("Glob", None, 50_000),
    ("WebFetch", None, 50_000),
])
def test_max_result_chars(tool, declared, expected):
    assert EngineConfig.for_window(200_000).max_result_chars(tool, declared) == expected


def test_max_result_chars_read_is_never_persisted_even_when_listed():
    cfg = EngineConfig.for_window(200_000, tool_result_chars={"Read": 10})
    assert cfg.max_result_chars("Read") == math.inf


def test_max_result_chars_scaled():
    cfg = EngineConfig.for_window(20_000)
    assert cfg.max_result_chars("Bash") == 3_000
    assert cfg.max_result_chars("Grep") == 2_000
    assert cfg.max_result_chars("McpAuth") == 1_000
    assert cfg.max_result_chars("Glob") == 5_000
    assert cfg.max_result_chars("Read") == math.inf


# --- resolve_context_window --------------------------------------------------------------------

def test_resolve_default_window():
    assert resolve_context_window(None, env={}) == REFERENCE_WINDOW == 200_000
    assert resolve_context_window("claude-sonnet-4-5", env={}) == 200_000


@pytest.mark.parametrize("model", ["claude-sonnet-4-5[1m]", "claude-opus[1M]", "sonnet[1m]  "])
def test_resolve_1m_suffix(model):
    assert resolve_context_window(model, env={}) == ONE_MILLION_WINDOW == 1_000_000


def test_resolve_1m_only_as_suffix():
    assert resolve_context_window("claude[1m]-preview", env={}) == 200_000


def test_resolve_env_var_wins():
    env = {CONTEXT_WINDOW_ENV: "50000"}
    assert CONTEXT_WINDOW_ENV == "CLAUDE_CODE_MAX_CONTEXT_TOKENS"
    assert resolve_context_window("claude-sonnet-4-5[1m]", env=env) == 50_000
    assert resolve_context_window(None, env=env) == 50_000


def test_resolve_empty_env_var_is_ignored():
    assert resolve_context_window("x[1m]", env={CONTEXT_WINDOW_ENV: ""}) == 1_000_000


@pytest.mark.parametrize("raw", ["abc", "0", "-5", "1.5", "200k"])
def test_resolve_invalid_env_raises_usage_error_naming_variable(raw):
    with pytest.raises(UsageError) as info:
        resolve_context_window("claude", env={CONTEXT_WINDOW_ENV: raw})
    assert "CLAUDE_CODE_MAX_CONTEXT_TOKENS" in str(info.value)
    assert repr(raw) in str(info.value)


def test_resolve_reads_os_environ_by_default(monkeypatch):
    monkeypatch.setenv(CONTEXT_WINDOW_ENV, "123456")
    assert resolve_context_window("claude") == 123_456
    monkeypatch.delenv(CONTEXT_WINDOW_ENV)
    assert resolve_context_window("claude") == 200_000


# --- properties ------------------------------------------------------------------------------

@given(st.integers(min_value=1_000, max_value=5_000_000))
def test_thresholds_scale_proportionally(window):
    cfg = EngineConfig.for_window(window)
    scale = window / 200_000
    assert abs(cfg.autocompact_threshold - 167_000 * scale) <= 2
    assert abs(cfg.blocking_limit - 177_000 * scale) <= 2
    assert cfg.warning_threshold <= cfg.autocompact_threshold < cfg.blocking_limit < cfg.effective_window < window
