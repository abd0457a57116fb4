"""Several judgements in one request: the probes of one context, the generations of one drift.

A rubric that lists ``n`` items (``graders/rubrics/probes.j2``, ``drift_all.j2``) is sent once per
vote, and the reply is one JSON object ``{"items": [<judgement>, ...]}``, a judgement
(:class:`~pytest_ctxeval.grading.judging.JudgeReply`) per item, in order. Against one request per item
this sends the shared data (the post-compact context, the rubric) once instead of ``n`` times and
asks for short structured answers, for a real model as for the offline one (issue 21: where a run's
money goes is in ``docs/performance.md``).

Everything else is :class:`~pytest_ctxeval.grading.judging.Judge`'s: votes (each item's score is the median
of its votes), one retry with the validation error for an unusable reply (a list of the wrong
length is unusable), structured output on the real API, the batch stages, and an item no vote
could judge is ``ungraded`` with the reason.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ..errors import ModelError
from .judging import Judge, JudgeReply, Judgement
from ..llm import ModelReply

__all__ = ["JudgeItems", "judge_items"]


class JudgeItems(BaseModel):
    """What a judge of ``n`` items must answer: one judgement per item, in order."""

    items: list[JudgeReply] = Field(description="one judgement per item, in the order the items are listed")


def _schema() -> dict[str, Any]:
    from anthropic import transform_schema

    return transform_schema(JudgeItems)


def judge_items(judge: Judge, rubric: str, n: int, *, share: bool = False, **data: Any) -> list[Judgement]:
    """Render ``rubric`` (it lists ``n`` items) with ``data``; ``judge.votes`` requests; one
    :class:`~pytest_ctxeval.grading.judging.Judgement` per item. ``share``: an earlier request of
    the run sent the rubric's ``shared`` block (the same context): mark it, to read that cache entry."""
    head, prompt = judge.render_parts(rubric, **data)
    head = head if share else ""
    schema = _schema() if judge.structured else None
    votes = list(range(judge.votes))
    shared = judge.votes > 1 and getattr(judge.llm, "caching", False) and not judge.batch
    if shared:  # the first vote writes the prompt's cache entry, the others read it
        replies = judge._send([judge._request(prompt, 0, schema=schema, shared=head)])
        replies += judge._send([judge._request(prompt, v, schema=schema, shared=head) for v in votes[1:]])
    else:
        replies = judge._send([judge._request(prompt, v, schema=schema, shared=head) for v in votes])
    raw: list[str] = []
    parsed: list[JudgeItems] = []
    errors: list[str] = []
    retries = []
    for v, reply in zip(votes, replies):
        outcome = _parse(reply, raw, n)
        if isinstance(outcome, JudgeItems):
            parsed.append(outcome)
        elif isinstance(reply, ModelError):
            errors.append(f"judgement {v + 1}: {outcome}")
        else:
            retries.append((v, outcome))
    if retries:
        again = judge._send([judge._retry(prompt, v, why, schema=schema or _schema(), shared=head) for v, why in retries])
        for (v, why), reply in zip(retries, again):
            outcome = _parse(reply, raw, n)
            if isinstance(outcome, JudgeItems):
                parsed.append(outcome)
            else:
                errors.append(f"judgement {v + 1}: {why}; after one retry: {outcome}")
    return [judge._combine([p.items[k] for p in parsed], errors, prompt, raw) for k in range(n)]


def _parse(reply: ModelReply | ModelError, raw: list[str], n: int) -> JudgeItems | str:
    items = Judge._parse(reply, raw, JudgeItems)
    if isinstance(items, str):
        return items
    if len(items.items) != n:
        return f"invalid judgement: {len(items.items)} items for {n} (one per item, in order)"
    return items
