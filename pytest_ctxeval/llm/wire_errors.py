"""The API's error responses as the local wire server (:mod:`.wire`) and its Message Batches
endpoints (:mod:`.wire_batches`) send them: below both."""

from __future__ import annotations

import httpx2

__all__ = ["error_response"]

_STATUS_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                 404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
                 529: "overloaded_error"}


def error_response(status: int, message: str, *, request_id: str, retry_after: str | None = None,
                   retry_after_ms: str | None = None, kind: str | None = None) -> httpx2.Response:
    """An API error: documented body, ``request-id`` and ``x-should-retry`` headers, and
    ``retry-after`` for 429 and 529."""
    headers = {"request-id": request_id, "x-should-retry": "true" if status in (408, 409, 429) or status >= 500
               else "false"}
    if status in (429, 529):
        headers["retry-after"] = retry_after or "1"
        if retry_after_ms is not None:
            headers["retry-after-ms"] = retry_after_ms
    body = {"type": "error", "error": {"type": kind or _STATUS_TYPES.get(status, "api_error"), "message": message},
            "request_id": request_id}
    return httpx2.Response(status, json=body, headers=headers)
