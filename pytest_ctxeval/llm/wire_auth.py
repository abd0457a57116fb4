"""How Bedrock and Vertex check a request, for the local server (:mod:`.wire`).

* **Bedrock** (``/model/{model}/invoke[-with-response-stream]``): an AWS Signature Version 4
  ``Authorization: AWS4-HMAC-SHA256 Credential=KEY/DATE/REGION/bedrock/aws4_request,
  SignedHeaders=..., Signature=...`` with ``x-amz-date``, verified the way AWS verifies it (the
  canonical request is rebuilt from what arrived and signed with the secret key the server knows),
  or a Bedrock API key as ``Authorization: Bearer``. A failure answers as Bedrock does: 403 with a
  ``{"message": ...}`` body and an ``x-amzn-errortype`` header. The body must carry
  ``anthropic_version`` and no ``model`` (it is in the path).
* **Vertex** (``.../publishers/anthropic/models/{model}:rawPredict|streamRawPredict``):
  ``Authorization: Bearer <access token>``; a failure is Google's 401 ``UNAUTHENTICATED`` body. The
  body must carry ``anthropic_version`` and no ``model``.

A streamed Bedrock reply (``invoke-with-response-stream``) is an AWS event stream
(``application/vnd.amazon.eventstream``), not server-sent events: each event of the reply is one
binary message whose payload is ``{"bytes": base64(event)}`` (:func:`aws_event_stream`).

Model ids in the provider's own form are accepted for the models the server knows:
``us.anthropic.claude-sonnet-5-5-v1:0`` (Bedrock), ``claude-sonnet-5-5@20261001`` (Vertex).
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import hmac
import json
import re
import struct
import zlib
from typing import Any
from urllib.parse import quote, unquote

import httpx2

__all__ = ["AwsKeys", "sigv4_problem", "bedrock_error", "vertex_error", "provider_body_problem", "plain_model",
           "aws_event_stream"]

#: How far ``x-amz-date`` may be from the server's clock (AWS allows 15 minutes).
MAX_CLOCK_SKEW = _dt.timedelta(minutes=15)

_AUTH = re.compile(r"^AWS4-HMAC-SHA256 Credential=(?P<key>[^/,\s]+)/(?P<date>\d{8})/(?P<region>[^/,\s]+)/"
                   r"(?P<service>[^/,\s]+)/aws4_request,\s*SignedHeaders=(?P<signed>[a-z0-9;\-]+),\s*"
                   r"Signature=(?P<signature>[0-9a-f]{64})$")
_BEDROCK_ID = re.compile(r"^(?:[a-z]{2,4}\.)?anthropic\.(?P<name>.+?)-v\d+(?::\d+)?$")


class AwsKeys:
    """The AWS credentials the server accepts (``access_key`` id and ``secret_key``)."""

    def __init__(self, access_key: str = "AKIACTXEVALTESTKEY01", secret_key: str = "ctxeval-test-aws-secret"):
        self.access_key = access_key
        self.secret_key = secret_key


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def _canonical_path(raw_path: str) -> str:
    """The path as SigV4 (for every service but S3) canonicalises it: dot segments and empty
    segments removed, then each character URI-encoded once more (so ``%3A`` becomes ``%253A``)."""
    segments: list[str] = []
    for part in raw_path.split("/"):
        if part == "..":
            if segments:
                segments.pop()
        elif part and part != ".":
            segments.append(part)
    path = "/" + "/".join(segments) + ("/" if raw_path.endswith("/") and segments else "")
    return quote(path, safe="/~")


def _canonical_query(query: str) -> str:
    pairs = sorted(tuple(pair.partition("=")[::2]) for pair in query.split("&") if pair) if query else []
    return "&".join(f"{k}={v}" for k, v in pairs)


def sigv4_problem(request: httpx2.Request, keys: AwsKeys, *, service: str = "bedrock",
                  now: _dt.datetime | None = None) -> str | None:
    """Why AWS would refuse ``request``'s SigV4 signature, or None when it verifies.

    The canonical request is rebuilt from the method, the raw path and query, the headers named in
    ``SignedHeaders`` (values trimmed, as SigV4 says) and the SHA-256 of the body, then signed with
    ``keys.secret_key`` for the credential scope the header names."""
    auth = request.headers.get("authorization", "")
    match = _AUTH.match(auth)
    if not match:
        return ("Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters "
                "(AWS4-HMAC-SHA256)")
    if match["key"] != keys.access_key:
        return "The security token included in the request is invalid."
    if match["service"] != service:
        return f"Credential should be scoped to correct service: '{service}'."
    amz_date = request.headers.get("x-amz-date", "")
    try:
        when = _dt.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=_dt.UTC)
    except ValueError:
        return "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."
    if amz_date[:8] != match["date"]:
        return "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP."
    now = now or _dt.datetime.now(_dt.UTC)
    if abs(now - when) > MAX_CLOCK_SKEW:
        return f"Signature expired: {amz_date} is now earlier or later than the server's time by over 15 minutes."
    signed = match["signed"].split(";")
    if "host" not in signed:
        return "'Host' must be a signed header."
    lines = []
    for name in signed:
        values = request.headers.get_list(name)
        if not values:
            return f"The request signature we calculated does not match the signature you provided: signed header {name!r} is missing."
        lines.append(f"{name}:{','.join(' '.join(v.split()) for v in values)}")
    raw = request.url.raw_path.decode("ascii")
    raw_path, _, query = raw.partition("?")
    payload = request.headers.get("x-amz-content-sha256") or hashlib.sha256(request.content).hexdigest()
    canonical = "\n".join([request.method.upper(), _canonical_path(raw_path), _canonical_query(query),
                           "\n".join(lines) + "\n", ";".join(signed), payload])
    scope = f"{match['date']}/{match['region']}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = _hmac(f"AWS4{keys.secret_key}".encode(), match["date"])
    for part in (match["region"], service, "aws4_request"):
        key = _hmac(key, part)
    expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, match["signature"]):
        return ("The request signature we calculated does not match the signature you provided. Check your AWS "
                "Secret Access Key and signing method.")
    return None


def bedrock_error(status: int, message: str, kind: str, request_id: str) -> httpx2.Response:
    """An error as Bedrock answers it: ``{"message": ...}`` and the ``x-amzn-errortype`` header."""
    return httpx2.Response(status, json={"message": message}, headers={
        "x-amzn-errortype": f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/",
        "x-amzn-requestid": request_id, "request-id": request_id,
        "x-should-retry": "true" if status in (408, 409, 429) or status >= 500 else "false"})


def vertex_error(status: int, message: str, request_id: str) -> httpx2.Response:
    """An error as Google APIs answer it: ``{"error": {"code", "message", "status"}}``."""
    kinds = {401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 400: "INVALID_ARGUMENT"}
    return httpx2.Response(status, json={"error": {"code": status, "message": message,
                                                   "status": kinds.get(status, "UNKNOWN")}},
                           headers={"request-id": request_id, "x-should-retry": "false"})


def provider_body_problem(provider: str, body: dict[str, Any]) -> str | None:
    """Why Bedrock or Vertex would refuse this body: the model goes in the path, and the body
    names the API version (``anthropic_version``; its value is the SDK's to choose)."""
    if "model" in body:
        return "extraneous key [model] is not permitted"
    if not isinstance(body.get("anthropic_version"), str) or not body["anthropic_version"]:
        return "anthropic_version: Field required"
    return None


def plain_model(provider: str, model: str) -> str:
    """The model a provider's id names: ``us.anthropic.claude-sonnet-5-5-v1:0`` and
    ``claude-sonnet-5-5@20261001`` both name ``claude-sonnet-5-5``.

    >>> plain_model("bedrock", "us.anthropic.claude-sonnet-5-5-v1%3A0")
    'claude-sonnet-5-5'
    >>> plain_model("vertex", "claude-haiku-5-5@20261001")
    'claude-haiku-5-5'
    >>> plain_model("bedrock", "claude-sonnet-5-5")
    'claude-sonnet-5-5'
    """
    model = unquote(model)
    if provider == "bedrock" and (m := _BEDROCK_ID.match(model)):
        return m["name"]
    if provider == "vertex":
        return model.partition("@")[0]
    return model


def aws_event_stream(sse: bytes) -> bytes:
    """The server-sent events ``sse`` of a streamed reply as Bedrock streams them: one AWS event
    stream message per event (prelude, headers, ``{"bytes": base64(event json)}``, CRC32s)."""
    out = []
    for chunk in sse.decode().split("\n\n"):
        data = next((line[6:] for line in chunk.splitlines() if line.startswith("data: ")), None)
        if data is not None:
            payload = json.dumps({"bytes": base64.b64encode(data.encode()).decode()}).encode()
            out.append(_event_message({":event-type": "chunk", ":content-type": "application/json",
                                       ":message-type": "event"}, payload))
    return b"".join(out)


def _event_message(headers: dict[str, str], payload: bytes) -> bytes:
    encoded = b"".join(struct.pack(">B", len(k)) + k.encode() + b"\x07" + struct.pack(">H", len(v)) + v.encode()
                       for k, v in headers.items())  # header value type 7: a string
    prelude = struct.pack(">II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + encoded + payload
    return message + struct.pack(">I", zlib.crc32(message))
