"""Message Batches for an :class:`~pytest_ctxeval.llm.LLM`: one batch per call, results by ``custom_id``.

:func:`run_batch` answers what the cassettes already hold from disk, sends everything else as ONE
batch (create, poll until ``ended``, read the results), stores each succeeded reply, and prices
it at the batch rate (:data:`pytest_ctxeval.llm.usage.BATCH_DISCOUNT`). An ``errored`` result
keeps the API's own error type and message; an ``expired`` one says so. A provider-wide failure
of the batch endpoint itself (bad key, outage) is a :class:`~pytest_ctxeval.errors.ProviderError`.

The judge gathers a whole run stage into one call (:mod:`pytest_ctxeval.grading.judging`), so a run sends
one batch per stage, not one per grader.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import anthropic

from ..errors import ModelError
from .failures import model_error

if TYPE_CHECKING:  # pragma: no cover
    from .base import LLM, ModelReply

__all__ = ["run_batch"]


def run_batch(llm: LLM, requests: list[dict[str, Any]], *, poll_seconds: float = 10.0,
              timeout_seconds: float = 24 * 3600) -> list[ModelReply | ModelError]:
    """One Message Batch for ``requests`` (dicts of :meth:`LLM.complete`'s keyword arguments).

    The batch is polled after 1 s, then at doubling intervals up to ``poll_seconds``: a small batch
    that ends in seconds is read in seconds, a long one costs a poll every ``poll_seconds``."""
    from anthropic.types import Message
    from .cassettes import request_key

    results: list[Any] = [None] * len(requests)
    pending = []
    for i, req in enumerate(requests):
        kwargs = llm.params(**req)
        params = {k: v for k, v in kwargs.items() if k != "extra_headers"}
        key = request_key(params, req["task"])
        try:
            cached = llm.store.recorded(key, req["task"], params, llm.mode) if llm.store is not None else None
        except ModelError as exc:  # a broken cassette in replay mode
            results[i] = exc
            continue
        if cached is not None and cached["status"] != 200:
            cached = None  # a recorded error is not a reply; the batch asks again
        if cached is not None:
            if llm.stats is not None:
                llm.stats.hit()
            results[i] = llm._reply(Message.model_validate(cached["json"]), params["model"], cached=True)
        elif llm.mode == "replay":
            results[i] = ModelError(f"{req['task']} request: cassette miss in replay mode (no network): "
                                    f"{llm.store.nearest_diff(req['task'], params)}")
        else:
            pending.append((i, key, req["task"], params))
    if not pending:
        return results
    batches = llm.client.messages.batches
    try:
        with llm.gate:
            if llm.stats is not None:
                llm.stats.forward()
            batch = batches.create(requests=[{"custom_id": f"r{i}", "params": params} for i, _, _, params in pending],
                                   extra_headers={"x-ctxeval-task": "batch"})
        deadline = time.monotonic() + timeout_seconds
        wait = min(poll_seconds, 1.0)
        while batch.processing_status != "ended":
            if time.monotonic() > deadline:
                raise ModelError(f"message batch {batch.id} did not end within {timeout_seconds:.0f} s; its results "
                                 "can still be read later (the batch keeps running on the API)")
            time.sleep(wait)
            wait = min(poll_seconds, wait * 2)
            batch = batches.retrieve(batch.id)
        by_id = {r.custom_id: r for r in batches.results(batch.id)}
    except anthropic.APIError as exc:
        err = model_error("batch", exc, retries=llm.client.max_retries, model=pending[0][3]["model"],
                          endpoint=llm.endpoint, run_level=llm.run_level)
        if not isinstance(err, ModelError):
            raise err from None
        for i, *_ in pending:
            results[i] = err
        return results
    for i, key, task, params in pending:
        item = by_id.get(f"r{i}")
        if item is None:
            results[i] = ModelError(f"{task} request in batch {batch.id}: no result for custom_id r{i}")
            continue
        kind = item.result.type
        if kind == "errored":
            cause = getattr(item.result.error, "error", None)
            detail = (f"{getattr(cause, 'type', 'error')}: {getattr(cause, 'message', '')}" if cause is not None
                      else "no error detail")
            results[i] = ModelError(f"{task} request in batch {batch.id} errored ({detail})")
            continue
        if kind != "succeeded":
            results[i] = ModelError(f"{task} request in batch {batch.id}: {kind} (the API did not process it; "
                                    "a rerun sends it again)")
            continue
        message = item.result.message
        results[i] = llm._reply(message, params["model"], batch=True)
        if llm.store is not None:
            llm.store.put(key, task, params, {"status": 200, "json": message.model_dump(mode="json")}, llm.secret)
    return results
