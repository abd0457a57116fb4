"""The offline backend: the reference model served to the real SDK client through httpx2.

:class:`ReferenceModel` is an ``httpx2.MockTransport`` handler speaking the Messages API. It

* enforces the context window (header ``x-ctxeval-context-window``, default 200,000): a request
  larger than it gets the real API's ``400 invalid_request_error`` with ``prompt is too long:
  N tokens > M maximum``, so the engine's PTL path runs for real;
* answers compaction requests with :func:`pytest_ctxeval.llm.reference.write_summary`;
* answers anything else with a short, labelled reference reply;
* reports ``usage`` from the same estimator the engine uses, split into cache reads, cache writes
  and uncached input as the API splits it for a request with ``cache_control`` breakpoints
  (:mod:`.prompt_cache`; one cache per run, given as ``cache``);
* answers after ``latency`` seconds when one is given (``--ctxeval-offline-latency``: a run that
  waits on the model as a real one does, to measure concurrency);
* plays a **fault plan**: per task, a queue of faults consumed one per HTTP attempt (so an
  ``overloaded`` followed by nothing is one 529 that the SDK retries, then success).

Faults: ``overloaded`` (529), ``rate_limit`` (429 with retry-after), ``server_error`` (500),
``connection_reset``, ``timeout``, ``ptl`` (400 with a parseable gap), ``ptl_no_gap`` (400
without numbers), ``empty`` (200, empty text), ``no_summary_tags`` (200, text without tags),
``sections_out_of_order`` (200, the nine sections reversed), ``malformed_json`` and ``prose_json``
(judge replies: not JSON, and JSON with prose around it), ``ok`` (answer normally).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

import httpx2

from ..core.tokens import estimate_api_request, estimate_text
from .prompt_cache import PromptCache, breakpoint_problem
from ..core.faults import FAULTS
from .reference import answer_probe, judge_reply, write_session_notes, write_summary

__all__ = ["ReferenceModel", "REFERENCE_MODEL_NAME"]

REFERENCE_MODEL_NAME = "ctxeval-reference"
DEFAULT_WINDOW = 200_000


# Offline faults ask the SDK to retry after 1 ms so tests stay fast; the backoff path itself is the
# SDK's (retry-after-ms is the header the SDK reads first).
_RETRY_FAST = {"retry-after-ms": "1"}


def _error(status: int, kind: str, message: str, headers: Mapping[str, str] | None = None) -> httpx2.Response:
    return httpx2.Response(status, json={"type": "error", "error": {"type": kind, "message": message}},
                           headers=dict(headers or {}))


class ReferenceModel:
    """An ``httpx2`` handler answering ``POST /v1/messages`` like the API, deterministically."""

    def __init__(self, faults: Mapping[str, Sequence[str]] | None = None, *, cache: PromptCache | None = None,
                 latency: float = 0.0):
        self._faults: dict[str, deque[str]] = {}
        self.cache = cache if cache is not None else PromptCache()
        self.latency = max(0.0, float(latency))
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []  # every request body seen, for tests
        self._batches_store: dict[str, dict[str, Any]] = {}
        for task, plan in (faults or {}).items():
            self.add_faults(task, plan)

    def add_faults(self, task: str, plan: Sequence[str]) -> None:
        unknown = [f for f in plan if f not in FAULTS]
        if unknown:
            from ..errors import UsageError
            raise UsageError(f"unknown fault {unknown[0]!r} for task {task!r}; known faults: {', '.join(FAULTS)}")
        with self._lock:
            self._faults.setdefault(task, deque()).extend(plan)

    def _next_fault(self, task: str) -> str:
        with self._lock:
            for key in (task, "*"):
                queue = self._faults.get(key)
                if queue:
                    return queue.popleft()
        return "ok"

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        started = time.monotonic()
        if "/v1/messages/batches" in request.url.path:
            return self._batches(request)
        if request.method != "POST" or not request.url.path.endswith("/v1/messages"):
            return _error(404, "not_found_error", f"the offline model serves POST /v1/messages, not "
                                                  f"{request.method} {request.url.path}")
        try:
            body = json.loads(request.content)
        except ValueError:
            return _error(400, "invalid_request_error", "request body is not JSON")
        task = request.headers.get("x-ctxeval-task", "chat")
        try:
            window = int(request.headers.get("x-ctxeval-context-window", DEFAULT_WINDOW))
        except ValueError:
            window = DEFAULT_WINDOW
        with self._lock:
            self.requests.append(body)
        input_tokens = estimate_api_request(body)
        marked = b'"cache_control"' in request.content  # a breakpoint anywhere (else no cache work)
        problem = breakpoint_problem(body) if marked else None
        if problem:
            return _error(400, "invalid_request_error", problem)
        if input_tokens > window:  # rejected before any generation: no scripted fault is used up
            return _error(400, "invalid_request_error", f"prompt is too long: {input_tokens} tokens > {window} maximum")
        fault = self._next_fault(task)
        if fault == "overloaded":
            return _error(529, "overloaded_error", "Overloaded", _RETRY_FAST)
        if fault == "rate_limit":
            return _error(429, "rate_limit_error", "Number of request tokens has exceeded your rate limit",
                          {"retry-after": "1", **_RETRY_FAST})
        if fault == "server_error":
            return _error(500, "api_error", "Internal server error", _RETRY_FAST)
        if fault == "connection_reset":
            raise httpx2.ConnectError("Connection reset by peer", request=request)
        if fault == "timeout":
            raise httpx2.ReadTimeout("Read timed out", request=request)
        if fault == "ptl":
            actual = max(input_tokens, window + 1)
            return _error(400, "invalid_request_error", f"prompt is too long: {actual} tokens > {window} maximum")
        if fault == "ptl_no_gap":
            return _error(400, "invalid_request_error", "prompt is too long")
        text = self._answer(task, body, fault)
        split = self.cache.account(body, input_tokens) if marked else None  # the reply begins: cached now
        if self.latency:  # the reply comes ``latency`` after the request, the model's own work included
            time.sleep(max(0.0, self.latency - (time.monotonic() - started)))
        return httpx2.Response(200, json={
            "id": "msg_ref_" + hashlib.sha256(request.content).hexdigest()[:24],  # not the arrival order
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or REFERENCE_MODEL_NAME,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": split.input_tokens if split else input_tokens, "output_tokens": estimate_text(text),
                      "cache_creation_input_tokens": split.cache_creation_input_tokens if split else 0,
                      "cache_read_input_tokens": split.cache_read_input_tokens if split else 0},
        })

    def _batches(self, request: httpx2.Request) -> httpx2.Response:
        """The Message Batches API, in memory: a batch ends at its first poll (``in_progress``
        when created, so the poll loop runs)."""
        path = request.url.path
        if request.method == "POST" and path.endswith("/v1/messages/batches"):
            body = json.loads(request.content)
            with self._lock:
                batch_id = f"msgbatch_ref_{len(self._batches_store) + 1:04d}"
                self._batches_store[batch_id] = {"requests": body.get("requests", []), "polled": 0}
            return httpx2.Response(200, json=self._batch_json(batch_id, ended=False))
        match = re.search(r"/v1/messages/batches/([^/]+)(/results)?$", path)
        if not match or match.group(1) not in self._batches_store:
            return _error(404, "not_found_error", f"no such batch: {path}")
        batch_id = match.group(1)
        if match.group(2):
            lines = []
            for item in self._batches_store[batch_id]["requests"]:
                params = item["params"]
                fake = httpx2.Request("POST", "http://ctxeval.offline/v1/messages", json=params,
                                      headers={"x-ctxeval-task": "judge"})
                reply = self(fake)
                if reply.status_code == 200:
                    result = {"type": "succeeded", "message": reply.json()}
                else:
                    result = {"type": "errored", "error": {"type": "error", "error": reply.json().get("error", {})}}
                lines.append(json.dumps({"custom_id": item["custom_id"], "result": result}))
            return httpx2.Response(200, content=("\n".join(lines) + "\n").encode(),
                                   headers={"content-type": "application/binary"})
        self._batches_store[batch_id]["polled"] += 1
        return httpx2.Response(200, json=self._batch_json(batch_id, ended=True))

    def _batch_json(self, batch_id: str, *, ended: bool) -> dict[str, Any]:
        n = len(self._batches_store[batch_id]["requests"])
        return {"id": batch_id, "type": "message_batch", "processing_status": "ended" if ended else "in_progress",
                "created_at": "2026-01-05T09:00:00Z", "expires_at": "2026-01-06T09:00:00Z",
                "ended_at": "2026-01-05T09:00:01Z" if ended else None,
                "request_counts": {"processing": 0 if ended else n, "succeeded": n if ended else 0, "errored": 0,
                                   "canceled": 0, "expired": 0},
                "results_url": f"http://ctxeval.offline/v1/messages/batches/{batch_id}/results" if ended else None}

    def _answer(self, task: str, body: dict[str, Any], fault: str) -> str:
        if fault == "empty":
            return ""
        messages = body.get("messages") or []
        if task == "session_memory":
            return write_session_notes(messages)
        if task == "judge":
            if fault == "malformed_json":
                return "Score: four out of five, mostly fine {not json"
            prompt = "\n".join(_text(m) for m in messages if m.get("role") == "user")
            if fault == "prose_json":
                return "Here is my judgement:\n" + judge_reply(prompt) + "\nHope that helps."
            return judge_reply(prompt)
        if task == "probe":
            return answer_probe(messages)
        if task == "compact":
            reply = write_summary(messages, body.get("system"))
            if fault == "no_summary_tags":
                return re.sub(r"</?(analysis|summary)>", "", reply).strip()
            if fault == "sections_out_of_order":
                return _reverse_sections(reply)
            return reply
        last = messages[-1].get("content") if messages else ""
        text = last if isinstance(last, str) else " ".join(
            b.get("text", "") for b in last if isinstance(b, dict) and b.get("type") == "text")
        return f"Reference model ({task}): received {len(messages)} messages; last said: {text[:200]}"


def _reverse_sections(reply: str) -> str:
    match = re.search(r"<summary>\n([\s\S]*)\n</summary>", reply)
    if not match:
        return reply
    parts = match.group(1).split("\n\n")
    return reply[: match.start(1)] + "\n\n".join(reversed(parts)) + reply[match.end(1):]


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")
