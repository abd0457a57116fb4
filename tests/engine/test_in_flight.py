"""A compaction while tool calls are in flight (an ``in_flight`` assistant turn followed by a
``compact:`` step): the unanswered assistant message is not summarised but kept at the end of the
post-compact context, so the compaction request and every request after it are API-valid and the
results that arrive later answer their calls. Without that, the results would answer nothing."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_ctxeval.engine import pipeline
from pytest_ctxeval.errors import ScenarioError
from pytest_ctxeval.evaluation import evaluate_run
from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.core.messages import (
    AssistantMessage, UserMessage, to_api, tool_results, tool_uses, validate_api,
)
from pytest_ctxeval.runner import run_scenario
from pytest_ctxeval.scenario.expansion import expand
from pytest_ctxeval.scenario.schema import load_scenario

SCENARIO = textwrap.dedent("""\
    name: in_flight
    context_window: 20000
    config: {{session_memory_enabled: {memory}}}
    turns:
      - user: "Run the release checks."
      - repeat: 6
        turns:
          - assistant: "Reading part {{{{ i }}}}."
            tools:
              - name: Read
                input: {{file_path: "src/part{{{{ i }}}}.py"}}
                result: "{{{{ python_file(lines=200, seed=i) }}}}"
      - assistant: "Starting the suite and the build in parallel."
        in_flight: true
        tools:
          - {{name: Bash, id: toolu_suite, input: {{command: make test}}, error: "FAILED tests/test_a.py::test_b - AssertionError"}}
          - {{name: Bash, id: toolu_build, input: {{command: make build}}, result: "built 3 packages"}}
      - after: 2m
      - compact: {compact}
      - assistant: "The build works; one test fails."
      - user: "Fix it."
      - assistant: "Looking at the test."
    """)


def write(tmp_path: Path, compact: str = "true", memory: str = "false") -> Path:
    path = tmp_path / "in_flight.yaml"
    path.write_text(SCENARIO.format(compact=compact, memory=memory))
    return path


@pytest.mark.parametrize(("compact", "memory", "kind"), [
    ("true", "false", "full"),
    ("{instructions: keep the test names}", "false", "full"),
    ("true", "true", "session_memory"),
    ("{partial: up_to, messages: 4}", "false", "partial"),
    ("{partial: from, messages: 6}", "false", "partial"),
])
def test_the_in_flight_message_is_kept_last_and_its_results_pair(tmp_path: Path, compact: str, memory: str,
                                                                 kind: str) -> None:
    run = run_scenario(write(tmp_path, compact, memory), session_dir=tmp_path / "s")
    (record,) = run.compactions
    result = record.result
    assert result.kind == kind
    in_flight = result.post_messages[-1]
    assert isinstance(in_flight, AssistantMessage)
    assert [u.id for u in tool_uses(in_flight)] == ["toolu_suite", "toolu_build"]
    assert result.in_flight == [in_flight]
    assert all(m.uuid != in_flight.uuid for m in result.summarized), "the in-flight message is not summarised"
    event = next(e for e in run.events if e.action == "in_flight_kept")
    assert event.ids == ["toolu_suite", "toolu_build"] and "2 tool calls still running" in event.detail
    # The compaction request, the post-compact context and every request after are API-valid.
    if result.request is not None:  # (a partial "from" request starts with an assistant turn: not this test's
        # concern; what matters here is that no call goes unanswered)
        assert [p for p in validate_api(result.request["messages"]) if "tool_" in p] == []
    assert validate_api(to_api(result.post_messages), allow_pending_tool_use=True) == []
    assert record.requests_after and all(validate_api(r["messages"]) == [] for r in record.requests_after)
    # The results arrived after the compaction, right after the kept message.
    at = next(i for i, m in enumerate(run.final_messages) if m.uuid == in_flight.uuid)
    answer = run.final_messages[at + 1]
    assert isinstance(answer, UserMessage)
    assert [b.tool_use_id for b in tool_results(answer)] == ["toolu_suite", "toolu_build"]
    assert tool_results(answer)[0].is_error


def test_tool_pairing_passes_and_would_fail_without_keeping_the_message(tmp_path: Path, monkeypatch) -> None:
    registry = load_graders()
    spec = [registry.get("tool_pairing")]
    kept = evaluate_run(run_scenario(write(tmp_path), session_dir=tmp_path / "a"), registry, spec)
    assert kept.grader_verdict("tool_pairing").status == "pass"
    # The naive engine summarises the unanswered message with the rest: the summariser gets an
    # unanswered tool_use, and the results that arrive later answer nothing.
    monkeypatch.setattr(pipeline.ContextManager, "_in_flight", lambda self, view: (self.messages, view, []))
    lost = evaluate_run(run_scenario(write(tmp_path), session_dir=tmp_path / "b"), registry, spec)
    verdict = lost.grader_verdict("tool_pairing")
    assert verdict.status == "fail"
    text = " ".join(verdict.reasons)
    assert "compaction request: messages[" in text and "not answered" in text
    assert "request 1 after the compaction: messages[0]: tool_result toolu_suite with no assistant message before it" in text


def test_in_flight_needs_tools_and_a_following_compaction(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("turns:\n  - user: go\n  - assistant: x\n    in_flight: true\n")
    with pytest.raises(ScenarioError, match="'in_flight: true' needs tool calls"):
        load_scenario(path)
    path.write_text("turns:\n  - user: go\n  - assistant: x\n    in_flight: true\n    tools:\n"
                    "      - {name: Bash, input: {command: ls}, result: ''}\n  - user: next\n")
    with pytest.raises(ScenarioError, match=r"s.yaml:3: in_flight: .* must be followed by a 'compact:' step .* got user"):
        expand(load_scenario(path))
    path.write_text("turns:\n  - user: go\n  - assistant: x\n    in_flight: true\n    tools:\n"
                    "      - {name: Bash, input: {command: ls}, result: ''}\n")
    with pytest.raises(ScenarioError, match="got the end of the script"):
        expand(load_scenario(path))
