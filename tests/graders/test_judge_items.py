"""Several judgements in one request (pytest_ctxeval.judge_items): the probes of one context and
the generations of one drift. The offline heuristic scores each item as the one-item rubrics do,
so a context that holds the expected answer passes and one that lost it fails, naming what was
lost; a reply with the wrong number of items is retried once, then ungraded, never a pass."""

from __future__ import annotations

import json

from pytest_ctxeval.grading.judge_items import judge_items
from pytest_ctxeval.grading.judging import Judge
from pytest_ctxeval.llm import make_llm

from test_judge import items, judge_with, verdict

PROBES = [{"kind": "recall", "question": "Which port does the API listen on?", "expected": "Port 8443, behind nginx."},
          {"kind": "decision", "question": "Why not JWT?", "expected": "JWTs cannot be revoked before they expire."}]


def test_offline_probes_pass_a_context_that_holds_the_answers_and_fail_one_that_lost_them() -> None:
    judge = Judge(make_llm("offline"))
    good = "U: Set it up.\nA: The API listens on port 8443 behind nginx. We dropped JWT: JWTs cannot be revoked before they expire."
    bad = "U: Set it up.\nA: The API is configured. Sessions are stored in Redis."
    kept = judge_items(judge, "probes", 2, context=good, probes=PROBES)
    lost = judge_items(judge, "probes", 2, context=bad, probes=PROBES)
    assert [j.passed for j in kept] == [True, True] and [j.score for j in kept] == [5.0, 5.0]
    assert [j.passed for j in lost] == [False, False]
    assert "8443" in lost[0].lost and "revoked" in lost[1].lost
    assert "the context holds" in lost[0].reasons[0]


def test_offline_drift_scores_each_generation_on_its_own() -> None:
    judge = Judge(make_llm("offline"))
    intent = "Replace JWT access tokens with opaque session ids stored in Redis"
    gens = [{"intent": intent, "summary": "Primary request: replace JWT access tokens with opaque session ids in Redis."},
            {"intent": intent, "summary": "Next step: add a JWT refresh endpoint."}]
    first, second = judge_items(judge, "drift_all", 2, generations=gens)
    assert first.passed and not second.passed and "opaque" in second.lost


def test_one_request_for_every_item_with_structured_output() -> None:
    judge, handler = judge_with([items(verdict(5), verdict(2, "8443"))], structured=True)
    got = judge_items(judge, "probes", 2, context="U: hi", probes=PROBES)
    assert [j.score for j in got] == [5.0, 2.0] and got[1].lost == ["8443"]
    [body] = handler.bodies
    assert body["output_config"]["format"]["schema"]["properties"]["items"]["type"] == "array"
    prompt = body["messages"][0]["content"]
    assert prompt.index("post-compact context") < prompt.index("probe 1") < prompt.index("probe 2")  # shared part first


def test_a_reply_with_the_wrong_number_of_items_is_retried_then_ungraded() -> None:
    judge, handler = judge_with([items(verdict(5)), items(verdict(5), verdict(4))])
    got = judge_items(judge, "probes", 2, context="U: hi", probes=PROBES)
    assert [j.score for j in got] == [5.0, 4.0] and len(handler.bodies) == 2
    assert "1 items for 2" in handler.bodies[1]["messages"][-1]["content"]
    judge, _ = judge_with([items(verdict(5))] * 2)
    got = judge_items(judge, "probes", 2, context="U: hi", probes=PROBES)
    assert all(j.ungraded and "1 items for 2" in j.error for j in got)


def test_votes_take_the_median_per_item_and_later_votes_read_the_cached_prompt() -> None:
    replies = [items(verdict(5), verdict(1)), items(verdict(4), verdict(2)), items(verdict(3), verdict(0))]
    judge, handler = judge_with(replies, votes=3)
    got = judge_items(judge, "probes", 2, context="U: hi", probes=PROBES)
    assert [j.score for j in got] == [4.0, 1.0] and [j.votes for j in got] == [[5, 4, 3], [1, 2, 0]]
    assert all(json.dumps(b).count("cache_control") == 1 for b in handler.bodies)


def test_the_probes_judge_reads_who_said_what() -> None:
    from pytest_ctxeval.grading import load_graders

    transcript = load_graders().get("probes").func.__globals__["_transcript"]
    text = transcript([{"role": "user", "content": "Use port 8443."},
                       {"role": "assistant", "content": [{"type": "text", "text": "Done: port 8443."}]}])
    assert text == "U: Use port 8443.\nA: Done: port 8443."
