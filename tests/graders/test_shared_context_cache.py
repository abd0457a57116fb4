"""One compaction's context as a cached prefix (issue 21): the intent and probes judgements of a
run that ends at its last compaction send the same post-compact context first, byte for byte, with
a ``cache_control`` breakpoint on it, so the second request reads what the first wrote; nothing is
marked that no later request reads, and the verdicts are those of the unmarked requests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.evaluation import evaluate_run, make_recompact
from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.grading.judging import Judge
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.runner import run_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


class RecordingJudge(Judge):
    """A judge that keeps every request it sent with its reply (usage included)."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.sent: list[tuple[dict, object]] = []

    def _send(self, requests):  # type: ignore[no-untyped-def]
        replies = super()._send(requests)
        self.sent += list(zip(requests, replies))
        return replies


@pytest.fixture(scope="module")
def registry():
    return load_graders()


def graded(registry, judge: Judge, tmp_path: Path, graders=("intent_preservation", "probes", "drift"),
           name: str = "auth_refactor"):
    run = run_scenario(SCENARIOS / f"{name}.yaml", session_dir=tmp_path / name, llm=judge.llm)
    specs = [registry.get(g) for g in graders]
    return evaluate_run(run, registry, specs, judge=judge, recompact=make_recompact(judge.llm, PromptSet()))


def last_requests(judge: RecordingJudge) -> tuple[tuple[dict, object], tuple[dict, object]]:
    """The last compaction's intent request and the probes request, with their replies."""
    probes = [(r, a) for r, a in judge.sent if "probe 1 (" in json.dumps(r)]
    intents = [(r, a) for r, a in judge.sent if "user messages (oldest first)" in json.dumps(r)]
    assert len(probes) == 1 and intents
    return intents[-1], probes[0]


def test_the_intent_and_probe_requests_of_one_compaction_share_the_cached_context(registry, tmp_path: Path) -> None:
    judge = RecordingJudge(make_llm("offline", "claude-sonnet-5-5"))
    outcome = graded(registry, judge, tmp_path)
    (intent, intent_reply), (probe, probe_reply) = last_requests(judge)
    first_i, first_p = intent["messages"][0]["content"][0], probe["messages"][0]["content"][0]
    assert first_i == first_p and first_i["cache_control"] == {"type": "ephemeral"}  # the same bytes, marked
    assert first_i["text"].startswith("[BEGIN DATA] post-compact context\n")
    assert intent["system"] == probe["system"] and intent["model"] == probe["model"]
    assert intent_reply.usage.cache_creation_input_tokens > 1_024 and intent_reply.usage.cache_read_input_tokens == 0
    assert probe_reply.usage.cache_read_input_tokens == intent_reply.usage.cache_creation_input_tokens
    assert probe_reply.usage.cache_creation_input_tokens == 0
    # Only the shared context is marked: no other judge request writes an entry nobody reads.
    marked = [r for r, _ in judge.sent if "cache_control" in json.dumps(r)]
    assert [id(r) for r in marked] == [id(intent), id(probe)]

    # The same run without caching sends the same text, unmarked, and grades alike.
    plain = RecordingJudge(make_llm("offline", "claude-sonnet-5-5", caching=False))
    again = graded(registry, plain, tmp_path / "plain")
    (intent0, _), (probe0, reply0) = last_requests(plain)
    assert isinstance(intent0["messages"][0]["content"], str)
    assert intent0["messages"][0]["content"] == "".join(b["text"] for b in intent["messages"][0]["content"])
    assert reply0.usage.cache_read_input_tokens == 0 and "cache_control" not in json.dumps([r for r, _ in plain.sent])
    for name in ("intent_preservation", "probes", "drift"):
        a, b = outcome.grader_verdict(name), again.grader_verdict(name)
        assert (a.status, a.score, a.reasons) == (b.status, b.score, b.reasons), name


def test_no_mark_when_the_probes_do_not_follow(registry, tmp_path: Path) -> None:
    """Intent alone: a breakpoint would be a cache write (1.25 x) nobody reads, so none is sent."""
    judge = RecordingJudge(make_llm("offline", "claude-sonnet-5-5"))
    graded(registry, judge, tmp_path, graders=("intent_preservation",))
    assert judge.sent and "cache_control" not in json.dumps([r for r, _ in judge.sent])
    # Probes alone: nothing wrote the context before them, so nothing is marked either.
    judge = RecordingJudge(make_llm("offline", "claude-sonnet-5-5"))
    graded(registry, judge, tmp_path / "p", graders=("probes",))
    assert judge.sent and "cache_control" not in json.dumps([r for r, _ in judge.sent])


def test_a_different_probe_context_is_not_marked(registry, tmp_path: Path) -> None:
    """When the run goes on after its last compaction the probes judge a longer context than the
    intent judgement: the two share no prefix, and neither request is marked."""
    from pytest_ctxeval.core.messages import UserMessage
    from pytest_ctxeval.grading.registry import cases_from_run

    judge = RecordingJudge(make_llm("offline", "claude-sonnet-5-5"))
    run = run_scenario(SCENARIOS / "auth_refactor.yaml", session_dir=tmp_path / "s", llm=judge.llm)
    last = cases_from_run(run)[-1]
    last.judge = judge
    last.final_context = [*last.post_messages, UserMessage(uuid="later", content="One more thing: keep the old API.")]
    verdicts = registry.run(last, [registry.get(g) for g in ("intent_preservation", "probes")])
    assert [v.status for v in verdicts] == ["pass", "pass"]
    assert len(judge.sent) == 2 and "cache_control" not in json.dumps([r for r, _ in judge.sent])


def test_session_memory_extractions_read_the_conversation_the_previous_one_cached(tmp_path: Path) -> None:
    """Each extraction sends the conversation so far, then the update prompt: a breakpoint at the
    conversation's end lets the next extraction (the same conversation, a few turns longer) read it."""
    llm = make_llm("offline", "claude-sonnet-5-5")
    run_scenario(SCENARIOS / "session_memory_then_full.yaml", session_dir=tmp_path / "on", llm=llm)
    sent = [r for r in llm.reference.requests if "maintaining the session notes" in json.dumps(r["messages"][-1])]
    assert len(sent) >= 3
    for body in sent:  # one breakpoint, on the conversation's last block, never on the prompt
        assert json.dumps(body).count("cache_control") == 1
        assert "cache_control" in json.dumps(body["messages"][-2]["content"][-1])
    plain = make_llm("offline", "claude-sonnet-5-5", caching=False)
    run_scenario(SCENARIOS / "session_memory_then_full.yaml", session_dir=tmp_path / "off", llm=plain)
    unmarked = [r for r in plain.reference.requests if "maintaining the session notes" in json.dumps(r["messages"][-1])]
    from pytest_ctxeval.llm.prompt_cache import strip_cache_control

    assert [strip_cache_control(b)["messages"] for b in sent] == [b["messages"] for b in unmarked]
    got, base = llm.usage.as_dict(), plain.usage.as_dict()
    assert got["cache_read_input_tokens"] > got["cache_creation_input_tokens"] > 0
    assert base["cache_read_input_tokens"] == base["cache_creation_input_tokens"] == 0
    from pytest_ctxeval.llm.pricing import cost_of

    assert cost_of("claude-sonnet-5-5", got) < cost_of("claude-sonnet-5-5", base)


def test_compaction_attempts_after_a_failure_read_the_conversation_the_previous_attempt_cached(tmp_path: Path) -> None:
    """The summariser fails three times in a row (the scenario's fault plan), then a manual
    /compact succeeds: the first attempt marks nothing (most compactions are sent once), every
    attempt after a failure marks the conversation's end, and the next one reads it."""
    def compactions(llm):
        return [r for r in llm.reference.requests if "Your task is to create a detailed summary" in json.dumps(r)]

    from pytest_ctxeval.scenario.schema import load_scenario

    scenario = load_scenario(SCENARIOS / "summariser_circuit_breaker.yaml")
    llm = make_llm("offline", "claude-sonnet-5-5", faults=scenario.faults)
    on = run_scenario(scenario, session_dir=tmp_path / "on", llm=llm)
    sent = compactions(llm)
    # Three failed auto attempts, the manual /compact that succeeds, then compactions of the new
    # context, which start afresh: only the attempts after a failure are marked.
    assert [json.dumps(b).count("cache_control") for b in sent] == [0, 1, 1, 1] + [0] * (len(sent) - 4)
    for body in sent[1:4]:
        assert "cache_control" not in json.dumps(body["messages"][-1]["content"][-1])  # never on the prompt
    plain = make_llm("offline", "claude-sonnet-5-5", caching=False, faults=scenario.faults)
    off = run_scenario(scenario, session_dir=tmp_path / "off", llm=plain)
    from pytest_ctxeval.llm.prompt_cache import strip_cache_control

    assert [strip_cache_control(b) for b in sent] == compactions(plain)  # the same requests, unmarked
    assert [c.result.summary for c in on.compactions] == [c.result.summary for c in off.compactions]
    got = llm.usage.as_dict()
    assert got["cache_read_input_tokens"] > got["cache_creation_input_tokens"] > 0
