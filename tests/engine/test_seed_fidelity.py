"""Issue 20: seed rules an audit found unmodelled, each pinned at its boundary. Test names start
with the seed line (``003_599``: seed 003, line 599) of the rule they pin."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ctxeval.compaction.base import compactor_config
from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine.dedupe import FILE_UNCHANGED_STUB
from pytest_ctxeval.engine.hooks import HookSet
from pytest_ctxeval.errors import ScenarioError
from pytest_ctxeval.core.messages import AttachmentMessage, CompactBoundary, Usage, to_api, validate_api
from pytest_ctxeval.runner import run_scenario
from pytest_ctxeval.scenario.schema import load_scenario

from engine_kit import T0, asst, user

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "scenarios"
BUILTIN = Path(__file__).resolve().parents[2] / "scenarios"
W20 = EngineConfig.for_window(20_000)


def prompt_of(request) -> str:
    """The compaction prompt: the text of the request's last user message (merged with results)."""
    content = request["messages"][-1]["content"]
    return content if isinstance(content, str) else content[-1]["text"]


def files_attached(result) -> list[str]:
    return [a.path for a in result.attachments if a.attachment_type == "file"]


# --- item 1: one read-file state (003:594-599, 000:156) -------------------------------------------

def cleared_read(s, path="/src/app.py", content="line 1\nline 2\n"):
    """A read, five newer results, then a 60-minute gap: the read's result is cleared."""
    s.say("go")
    s.step("reading", [s.tool("Read", content, file_path=path)])
    for i in range(5):
        s.step("more", [s.tool("Bash", f"out {i}", command=f"ls {i}")])
    s.tick(3_600)
    s.prepare()
    [clear] = s.events("microcompact", "time_based_clear")
    return clear


def test_003_599_a_read_cleared_by_microcompact_is_still_reattached_after_compaction(session):
    s = session(EngineConfig())
    clear = cleared_read(s)
    assert len(clear.ids) == 1  # the read's result is now "[Old tool result content cleared]"
    s.tick(20)
    result = s.cm.compact(s.clock)
    assert files_attached(result) == ["/src/app.py"]
    [att] = [a for a in result.attachments if a.path == "/src/app.py"]
    assert att.content.endswith("line 1\nline 2\n")


def test_003_599_five_newest_results_kept_means_no_clearing_and_the_file_attached(session):
    # The boundary on the other side: with only four newer results, nothing is cleared.
    s = session(EngineConfig())
    s.say("go")
    s.step("reading", [s.tool("Read", "x = 1\n", file_path="/src/a.py")])
    for i in range(4):
        s.step("more", [s.tool("Bash", f"out {i}", command=f"ls {i}")])
    s.tick(3_600)
    s.prepare()
    assert not s.events("microcompact", "time_based_clear")
    s.tick(20)
    assert files_attached(s.cm.compact(s.clock)) == ["/src/a.py"]


def test_003_91_the_unchanged_stub_needs_the_earlier_result_visible(session):
    """The stub refers the model to the earlier result (003:88-91): served while the result is
    visible, not once microcompact cleared it; the attachment state keeps the read either way."""
    s = session(EngineConfig())
    s.say("go")
    s.step("reading", [s.tool("Read", "v = 1\n", file_path="/src/b.py")])
    s.step("again", [s.tool("Read", "v = 1\n", file_path="/src/b.py")])
    assert s.cm.messages[-1].content[0].content == FILE_UNCHANGED_STUB
    for i in range(5):
        s.step("more", [s.tool("Bash", f"out {i}", command=f"ls {i}")])
    s.tick(3_600)
    s.prepare()
    s.step("read after the clearing", [s.tool("Read", "v = 1\n", file_path="/src/b.py")])
    assert s.cm.messages[-1].content[0].content == "v = 1\n"
    assert [r.path for r in s.cm.reads.recent_files()] == ["/src/b.py"]


def test_003_599_idle_gap_reattaches_all_four_files_it_read(tmp_path):
    run = run_scenario(BUILTIN / "idle_gap.yaml", session_dir=tmp_path)
    read = {u.input["file_path"] for m in run.history for u in getattr(m, "content", []) or []
            if getattr(u, "type", "") == "tool_use" and u.name == "Read"}
    assert len(read) == 4
    [record] = run.compactions
    assert sorted(files_attached(record.result)) == sorted(read)
    assert any(e.action == "time_based_clear" for e in run.events), "the scenario clears results first"


# --- item 2: the blocking limit (000:181, 003:173) -------------------------------------------------

def at_tokens(s, tokens: int) -> None:
    s.cm.append(user("u0", "hello"))
    s.cm.append(asst("a0", "hi", mid="m0", usage=Usage(input_tokens=tokens)))


@pytest.mark.parametrize("tokens,refused", [(17_699, False), (17_700, True)])
def test_000_181_blocking_limit_refuses_the_turn_when_autocompact_is_off(session, tokens, refused):
    s = session(EngineConfig.for_window(20_000, autocompact_enabled=False))
    at_tokens(s, tokens)
    prepared = s.cm.prepare(T0)
    assert prepared.refused is refused
    assert (prepared.body in s.cm.requests) is not refused, "a refused turn is not sent"
    if refused:
        [event] = s.events("autocompact", "blocking_limit")
        assert "turn refused" in event.detail and "auto-compaction is off" in event.detail


def test_000_181_blocking_limit_refuses_when_the_breaker_has_tripped_and_compact_unblocks(session):
    s = session(W20)
    s.cm.tracking.consecutive_failures = 3  # tripped: auto-compaction is off for the session
    at_tokens(s, 17_700)
    prepared = s.cm.prepare(T0)
    assert prepared.refused and prepared.compaction is None
    [event] = s.events("autocompact", "blocking_limit")
    assert "circuit breaker has tripped" in event.detail
    s.cm.append(user("u1", "please compact"))
    assert s.cm.compact(T0) is not None  # a manual /compact
    assert not s.cm.prepare(T0).refused


def test_003_173_a_failed_auto_compaction_refuses_and_the_next_one_unblocks(session):
    s = session(W20, faults={"compact": ["empty", "ok"]})
    at_tokens(s, 17_700)
    first = s.cm.prepare(T0)
    assert first.refused and s.events("autocompact", "failed")
    assert "auto-compaction failed" in s.events("autocompact", "blocking_limit")[0].detail
    second = s.cm.prepare(T0)  # the next automatic compaction succeeds
    assert second.compaction is not None and not second.refused


def test_000_181_a_successful_auto_compaction_is_never_refused(session):
    s = session(W20)
    at_tokens(s, 17_700)
    prepared = s.cm.prepare(T0)
    assert prepared.compaction is not None and not prepared.refused


def test_000_181_compactors_decide_compaction_themselves_so_no_blocking(session):
    config = compactor_config(W20)
    assert config.blocking_limit_enforced is False
    s = session(config)
    at_tokens(s, 19_000)
    assert not s.cm.prepare(T0).refused


def test_000_181_scenario_with_autocompact_off_shows_refused_turns(tmp_path):
    run = run_scenario(FIXTURES / "autocompact_off_blocked.yaml", session_dir=tmp_path)
    refused = [e for e in run.events if e.action == "blocking_limit"]
    assert refused and all("turn refused" in e.detail for e in refused)
    texts = [b.text for m in run.history for b in getattr(m, "content", []) or [] if getattr(b, "type", "") == "text"]
    assert not any("REFUSED-MARKER" in t for t in texts), "the refused turn's response never happened"
    assert [c.result.trigger for c in run.compactions] == ["manual"]
    after = run.compactions[0].requests_after
    assert after, "after the /compact the next turn is sent"
    assert "the hot spot is the CSV parser" in repr(run.history[-1].content)


# --- items 4 and 5: hooks, tool and MCP deltas (003:179-181, 003:221-239, 004:460-575) -------------

@pytest.fixture(scope="module")
def hook_run(tmp_path_factory):
    return run_scenario(FIXTURES / "precompact_hook.yaml", session_dir=tmp_path_factory.mktemp("hooks"))


def test_003_181_precompact_hook_output_becomes_the_compaction_instructions(hook_run):
    [record] = hook_run.compactions
    assert record.result.trigger == "auto"
    prompt = prompt_of(record.result.request)
    assert "Additional Instructions:\nKeep every pytest failure line verbatim." in prompt
    assert "MANUAL-ONLY" not in prompt  # a hook matching manual compactions does not run on auto
    assert record.result.custom_instructions == "Keep every pytest failure line verbatim."


def test_004_571_post_compact_order_boundary_summary_kept_attachments_hook_results(hook_run):
    post = hook_run.compactions[0].result.post_messages
    assert isinstance(post[0], CompactBoundary) and post[1].is_compact_summary
    kinds = [m.attachment_type for m in post[2:]]
    assert kinds == ["file", "deferred_tools_delta", "mcp_instructions_delta", "hook_result"]
    assert post[-1].name == "SessionStart"
    assert post[-1].content == "Reminder after compaction: the importer tests live in tests/test_importer.py."
    body = hook_run.compactions[0].requests_after[0]["messages"]
    assert validate_api(body) == []
    assert "importer tests live in tests/test_importer.py" in repr(body[0])


def test_003_610_tool_and_mcp_deltas_announced_at_start_and_again_after_compaction(hook_run):
    starts = [m for m in hook_run.history[:4] if isinstance(m, AttachmentMessage)]
    assert [m.attachment_type for m in starts] == ["deferred_tools_delta", "mcp_instructions_delta", "hook_result"]
    assert "NotebookEdit, WebFetch" in starts[0].content
    assert starts[1].name == "github" and "never merge" in starts[1].content
    assert starts[2].content == "Session started in /repo."  # the startup SessionStart hook
    post = hook_run.compactions[0].result.attachments
    assert [a.attachment_type for a in post][-2:] == ["deferred_tools_delta", "mcp_instructions_delta"]


def test_003_77_git_status_and_memory_files_in_every_request(hook_run):
    assert hook_run.requests
    for body in hook_run.requests:
        assert "gitStatus:" in body["system"] and "M importer.py" in body["system"]
        assert "Contents of /repo/CLAUDE.md" in body["system"] and "Run make lint before committing" in body["system"]


def test_000_27_hook_results_in_the_results_json(hook_run):
    from pytest_ctxeval.results import reinjected

    out = reinjected(hook_run.compactions[0].result.post_messages)
    assert out["attachments"] == [{"kind": "file", "path": "importer.py"}, {"kind": "deferred_tools_delta"},
                                  {"kind": "mcp_instructions_delta", "name": "github"}]
    assert out["hook_results"] == [{"event": "SessionStart", "text": "Reminder after compaction: the importer "
                                                                      "tests live in tests/test_importer.py."}]


def hooked(session, hooks, **kw):
    s = session(kw.pop("config", W20), **kw)
    s.cm.hooks = HookSet.from_mapping(hooks)
    return s


def test_004_471_hook_output_merges_after_the_compact_instructions(session):
    s = hooked(session, {"PreCompact": [{"output": "keep the test output"}]})
    s.say("fix the parser")
    s.step("reading", [s.tool("Bash", "FAILED test_parse", command="pytest")])
    result = s.cm.compact(s.clock, instructions="focus on the parser")
    assert result.custom_instructions == "focus on the parser\n\nkeep the test output"
    assert prompt_of(result.request).count("focus on the parser\n\nkeep the test output") == 1


def test_003_179_a_blocking_precompact_hook_stops_the_compaction(session):
    s = hooked(session, {"PreCompact": [{"block": "the release branch is frozen"}]})
    at_tokens(s, 17_700)
    requests = len(s.llm.reference.requests)
    prepared = s.cm.prepare(T0)
    assert prepared.compaction is None and prepared.refused
    assert len(s.llm.reference.requests) == requests, "no summariser call"
    [failed] = s.events("autocompact", "failed")
    assert "PreCompact hook blocked the compaction: the release branch is frozen" in failed.detail
    assert s.cm.tracking.consecutive_failures == 1  # counts toward the circuit breaker
    assert s.cm.compact(T0) is None and s.events("compact", "failed")  # a manual one too


def test_004_444_session_memory_compaction_carries_hook_results_too(session):
    config = EngineConfig.for_window(20_000, session_memory_enabled=True)
    s = hooked(session, {"SessionStart": [{"output": "hook says hi"}],
                         "PreCompact": [{"block": "never for a full compaction"}]}, config=config)
    s.say("start")
    for i in range(100):
        s.step(f"work {i}", [s.tool("Grep", f"{i}:" + "g" * 1_900, pattern=f"p{i}")])
        if s.cm.compactions:
            break
    [record] = s.cm.compactions
    assert record.result.kind == "session_memory"  # no PreCompact hook: its block does not apply
    assert record.result.post_messages[-1].content == "hook says hi"
    assert validate_api(to_api(record.result.post_messages), allow_pending_tool_use=True) == []


@pytest.mark.parametrize("text,where", [
    ("hooks:\n  PreCompact:\n    - output: ok\n    - matcher: startup\n      output: x\n",
     ":4: hooks.PreCompact[1].matcher: Input should be 'auto' or 'manual'"),
    ("hooks:\n  SessionStart:\n    - block: \"no\"\n", ":3: hooks.SessionStart[0]: only a PreCompact hook can block"),
    ("hooks:\n  SessionStart:\n    - output: \"  \"\n", ":3: hooks.SessionStart[0].output: the hook's output is blank"),
    ("hooks:\n  PreCompact:\n    - matcher: auto\n", ":3: hooks.PreCompact[0]: give the hook an 'output'"),
    ("hooks:\n  PostCompact:\n    - output: x\n", ":2: hooks.PostCompact: unknown field"),
])
def test_hooks_key_errors_name_the_file_line_and_entry(tmp_path, text, where):
    path = tmp_path / "s.yaml"
    path.write_text(text + "turns:\n  - user: hi\n", encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path}{where}"), str(info.value)


# --- 003:380, 004:169: empty-result injection -------------------------------------------------------

@pytest.mark.parametrize("output,marked", [("", True), ("  \n", True), ([], True), (".", False), ("0", False)])
def test_003_380_an_empty_tool_result_gets_a_marker(session, output, marked):
    s = session(W20)
    s.say("run it")
    s.step("running", [s.tool("Bash", output, command="true")])
    [block] = s.cm.messages[-1].content
    assert (block.content == "(Bash completed with no output)") is marked
    if not marked:
        assert block.content == output


def test_003_380_an_empty_error_is_left_as_the_error(session):
    s = session(W20)
    s.say("run it")
    s.step("running", [s.tool("Bash", "", is_error=True, command="false")])
    [block] = s.cm.messages[-1].content
    assert block.is_error and block.content == ""
