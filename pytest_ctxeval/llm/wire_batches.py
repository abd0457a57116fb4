"""Message Batches and streaming for :class:`~pytest_ctxeval.llm.wire.WireModel`.

* :class:`Batches`: ``POST /v1/messages/batches`` (create), ``GET .../{id}`` (poll: ``in_progress``
  at the first poll, ``ended`` at the next, so a client's poll loop runs), ``GET .../{id}/results``
  (JSONL, one line per request in any order: ``succeeded`` with the message, ``errored`` with the
  API's error object, ``expired``). Each request is answered by the same Messages path as an
  interactive one, so a bad schema in a batch is an ``errored`` result with the API's message. The
  ``batch_item`` task of the wire's fault plan scripts ``expired`` and ``errored`` entries.
* :func:`sse_events`: a complete message as the server-sent events of a streamed reply.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

import httpx2

from .wire_errors import error_response

if TYPE_CHECKING:  # pragma: no cover
    from .wire import WireModel

__all__ = ["Batches", "sse_events"]


class Batches:
    """The Message Batches API of one :class:`WireModel`, in memory."""

    def __init__(self, wire: WireModel):
        self.wire = wire
        self.store: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def handle(self, request: httpx2.Request, request_id: str) -> httpx2.Response:
        path = request.url.path.rstrip("/")
        base = f"{request.url.scheme}://{request.url.netloc.decode()}"
        if request.method == "POST" and path == "/v1/messages/batches":
            try:
                body = json.loads(request.content)
            except ValueError:
                return error_response(400, "The request body is not valid JSON.", request_id=request_id)
            items = body.get("requests")
            if not isinstance(items, list) or not items:
                return error_response(400, "requests: must hold at least one request", request_id=request_id)
            ids = [i.get("custom_id") for i in items]
            if len(set(ids)) != len(ids):
                return error_response(400, "requests: custom_id values must be unique", request_id=request_id)
            batch_id = self.wire.next_id("msgbatch_wire")
            with self._lock:
                self.store[batch_id] = {"requests": items, "polls": 0, "results": None}
            return httpx2.Response(200, json=self._json(batch_id, base), headers={"request-id": request_id})
        parts = path.split("/")
        batch_id = parts[4] if len(parts) > 4 else ""
        if batch_id not in self.store:
            return error_response(404, f"message batch {batch_id!r} not found", request_id=request_id)
        if request.method == "GET" and len(parts) == 5:
            with self._lock:
                self.store[batch_id]["polls"] += 1
            return httpx2.Response(200, json=self._json(batch_id, base), headers={"request-id": request_id})
        if request.method == "GET" and len(parts) == 6 and parts[5] == "results":
            if not self._ended(batch_id):
                return error_response(400, f"message batch {batch_id} is still in_progress", request_id=request_id)
            lines = [json.dumps(r) for r in self._results(batch_id)]
            return httpx2.Response(200, content=("\n".join(lines) + "\n").encode(),
                                   headers={"content-type": "application/binary", "request-id": request_id})
        return error_response(404, f"Not found: {request.method} {path}", request_id=request_id)

    def _ended(self, batch_id: str) -> bool:
        return self.store[batch_id]["polls"] >= 1

    def _results(self, batch_id: str) -> list[dict[str, Any]]:
        entry = self.store[batch_id]
        if entry["results"] is not None:
            return entry["results"]
        out = []
        for item in entry["requests"]:
            fault = self.wire._next_fault("batch_item")
            if fault == "expired":
                out.append({"custom_id": item["custom_id"], "result": {"type": "expired"}})
                continue
            if fault == "errored":
                out.append({"custom_id": item["custom_id"], "result": {"type": "errored", "error": {
                    "type": "error", "error": {"type": "api_error", "message": "Internal server error"}}}})
                continue
            params = dict(item.get("params") or {})
            reply = self.wire.messages(params, task="judge", window=None, request_id=self.wire.next_id("req_wire"))
            if reply.status_code == 200:
                result = {"type": "succeeded", "message": reply.json()}
            else:
                result = {"type": "errored", "error": {"type": "error", "error": reply.json()["error"]}}
            out.append({"custom_id": item["custom_id"], "result": result})
        out.reverse()  # results come in any order; clients match them by custom_id
        entry["results"] = out
        return out

    def _json(self, batch_id: str, base: str) -> dict[str, Any]:
        ended = self._ended(batch_id)
        entry = self.store[batch_id]
        counts = {"processing": 0 if ended else len(entry["requests"]), "succeeded": 0, "errored": 0,
                  "canceled": 0, "expired": 0}
        if ended:
            for r in self._results(batch_id):
                counts[r["result"]["type"]] += 1
        return {"id": batch_id, "type": "message_batch", "processing_status": "ended" if ended else "in_progress",
                "created_at": "2026-01-05T09:00:00Z", "expires_at": "2026-01-06T09:00:00Z",
                "ended_at": "2026-01-05T09:00:01Z" if ended else None, "cancel_initiated_at": None,
                "archived_at": None, "request_counts": counts,
                "results_url": f"{base}/v1/messages/batches/{batch_id}/results" if ended else None}


def sse_events(message: dict[str, Any]) -> bytes:
    """``message`` as the server-sent events of a streamed reply (message_start, one start /
    delta(s) / stop per content block, message_delta with the stop reason, message_stop)."""
    def event(kind: str, data: dict[str, Any]) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"

    head = {**message, "content": [], "stop_reason": None,
            "usage": {**message["usage"], "output_tokens": 1}}
    out = [event("message_start", {"message": head})]
    for i, block in enumerate(message["content"]):
        if block["type"] == "thinking":
            out.append(event("content_block_start", {"index": i, "content_block": {
                "type": "thinking", "thinking": "", "signature": ""}}))
            out.append(event("content_block_delta", {"index": i, "delta": {
                "type": "thinking_delta", "thinking": block["thinking"]}}))
            out.append(event("content_block_delta", {"index": i, "delta": {
                "type": "signature_delta", "signature": block["signature"]}}))
        elif block["type"] == "text":
            out.append(event("content_block_start", {"index": i, "content_block": {"type": "text", "text": ""}}))
            text = block["text"]
            for at in range(0, len(text), 2_000):
                out.append(event("content_block_delta", {"index": i, "delta": {
                    "type": "text_delta", "text": text[at:at + 2_000]}}))
        else:
            out.append(event("content_block_start", {"index": i, "content_block": block}))
        out.append(event("content_block_stop", {"index": i}))
    out.append(event("message_delta", {"delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                       "usage": {"output_tokens": message["usage"]["output_tokens"]}}))
    out.append(event("message_stop", {}))
    return "".join(out).encode()
