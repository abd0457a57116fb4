"""API context management (000:113-132, apiMicrocompact.ts): the config follows the microcompact
profile, and the server-side clearing it asks for is never reached by a Claude Code run (which is
why the engine does not simulate it; see ``context_management``'s docstring)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ctxeval.core.config import NEVER_CLEARED_TOOLS, EngineConfig
from pytest_ctxeval.engine.microcompact import context_management
from pytest_ctxeval.runner import run_scenario
from pytest_ctxeval.core.tokens import estimate_api_request

ROOT = Path(__file__).resolve().parents[2]


def exclude_tools(config: EngineConfig) -> list[str]:
    return context_management(config)["edits"][1]["exclude_tools"]


@pytest.mark.parametrize("profile", ["default", "read_only"])
def test_000_122_exclude_tools_follow_the_microcompact_profile(profile):
    config = EngineConfig(microcompact_profile=profile)
    excluded = exclude_tools(config)
    assert not set(excluded) & set(config.compactable_tools), "the API would clear what tier 3 may clear anyway"
    assert set(excluded) == set(NEVER_CLEARED_TOOLS) - set(config.compactable_tools)
    # 003:122-123: under read_only the write tools' results are never cleared, by tier 3 nor by the API.
    assert ({"Edit", "Write"} <= set(excluded)) is (profile == "read_only")


def test_000_122_a_custom_compactable_set_is_followed_too():
    config = EngineConfig(compactable_tools=("Read", "Bash", "TodoWrite"))
    assert "TodoWrite" not in exclude_tools(config) and "Edit" in exclude_tools(config)


@pytest.mark.parametrize("window", [4_000, 16_000, 20_000, 200_000, 1_000_000])
def test_000_119_the_clearing_trigger_lies_above_the_blocking_limit(window):
    config = EngineConfig.for_window(window)
    assert config.autocompact_threshold < config.blocking_limit < config.api_clear_trigger_tokens


@pytest.mark.parametrize("path", [ROOT / "scenarios" / "summariser_circuit_breaker.yaml",
                                  ROOT / "tests" / "fixtures" / "scenarios" / "autocompact_off_blocked.yaml"],
                         ids=lambda p: p.stem)
def test_000_119_no_sent_request_reaches_the_clearing_trigger(path, tmp_path):
    """The two runs that push the context to the blocking limit (a tripped breaker; auto-compaction
    off): every request sent stays under the trigger, so the unsimulated clearing never fires."""
    run = run_scenario(path, session_dir=tmp_path)
    assert any(e.action == "blocking_limit" for e in run.events), "the run reaches the blocking limit"
    sizes = [estimate_api_request(body, run.config) for body in run.requests]
    assert max(sizes) < run.config.api_clear_trigger_tokens
    assert max(sizes) > 0.9 * run.config.blocking_limit, "the run came close"
