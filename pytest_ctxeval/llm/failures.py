"""What a failed model call means, in one place: a per-request failure, or the end of the run.

The SDK has already retried what is worth retrying (429, 5xx, 529, dropped connections; it honours
``retry-after`` and ``x-should-retry``) by the time an error reaches us; nothing here sends again.

* Per request (:class:`~pytest_ctxeval.errors.ModelError`): a 400 for this request (a prompt too
  long keeps its numbers for the PTL path), a reply that is unusable.
* For the whole run (:class:`~pytest_ctxeval.errors.ProviderError`, against a real endpoint): a
  bad key (401), a key without access (403), an unknown model (404), rate limits or an outage that
  outlasted the SDK's retries, an endpoint that cannot be reached, a refusal. Grading on would show
  a wall of failed graders that says nothing about the summaries; one error names the cause and
  the fix instead (the CLI exits 2, pytest stops the session).

The offline backend keeps every failure per request: its scripted faults exist to exercise the
engine's own failure paths (the compaction circuit breaker, the judge's ``ungraded`` verdicts).
"""

from __future__ import annotations

import re
from typing import Any

import anthropic

from ..errors import ModelError, PromptTooLongError, ProviderError, flag

__all__ = ["parse_prompt_too_long", "model_error", "refusal_error", "error_message"]

_PTL = re.compile(r"prompt is too long", re.IGNORECASE)
_PTL_NUMBERS = re.compile(r"(\d[\d,]*)\s*tokens?\s*>\s*(\d[\d,]*)", re.IGNORECASE)


def parse_prompt_too_long(message: str) -> PromptTooLongError | None:
    """A :class:`PromptTooLongError` when ``message`` is the API's prompt-too-long error.

    >>> e = parse_prompt_too_long("prompt is too long: 210345 tokens > 200000 maximum")
    >>> (e.actual, e.maximum, e.gap)
    (210345, 200000, 10345)
    >>> parse_prompt_too_long("prompt is too long").gap is None
    True
    """
    if not _PTL.search(message):
        return None
    match = _PTL_NUMBERS.search(message)
    if match:
        actual, maximum = (int(g.replace(",", "")) for g in match.groups())
        return PromptTooLongError(message, actual, maximum)
    return PromptTooLongError(message)


def error_message(exc: anthropic.APIStatusError) -> str:
    """The API's own message (``error.message`` of the body), else the SDK's."""
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(body.get("message"), str):  # Bedrock's shape: {"message": ...}
            return body["message"]
    return str(exc.message)


#: Bedrock's error types (``x-amzn-errortype``) that mean the AWS credentials or signature are wrong.
_AWS_CREDENTIAL_ERRORS = ("UnrecognizedClientException", "InvalidSignatureException", "IncompleteSignatureException",
                          "ExpiredTokenException", "MissingAuthenticationTokenException")


def _credentials_problem(exc: anthropic.APIStatusError) -> str | None:
    """The fix for credentials a provider refused, when the error says that is what happened."""
    response = getattr(exc, "response", None)
    aws_kind = (response.headers.get("x-amzn-errortype", "") if response is not None else "").partition(":")[0]
    if aws_kind in _AWS_CREDENTIAL_ERRORS:
        return (f"Bedrock refused the AWS credentials ({aws_kind}). Fix: set AWS_ACCESS_KEY_ID / "
                "AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary keys) or AWS_PROFILE to credentials "
                "valid in AWS_REGION, or a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK")
    body: dict[str, Any] = exc.body if isinstance(exc.body, dict) else {}
    inner = body.get("error")
    err: dict[str, Any] = inner if isinstance(inner, dict) else {}
    if err.get("status") == "UNAUTHENTICATED":
        return ("Vertex refused the access token (UNAUTHENTICATED). Fix: set ANTHROPIC_VERTEX_ACCESS_TOKEN to a "
                "current token (e.g. $(gcloud auth print-access-token)) or unset it to use application-default "
                "credentials (gcloud auth application-default login)")
    return None


def _request_id(exc: Any) -> str:
    response = getattr(exc, "response", None)
    rid = response.headers.get("request-id") if response is not None else None
    return f"; request-id {rid}" if rid else ""


def model_error(task: str, exc: Exception, *, retries: int, model: str, endpoint: str,
                run_level: bool) -> ModelError | ProviderError:
    """The SDK's error ``exc`` as ours (``run_level``: a real endpoint, where a provider-wide
    failure ends the run). The message never carries an API key."""
    err = _classify(task, exc, retries=retries, model=model, endpoint=endpoint, run_level=run_level)
    from ..core.redact import scrub_output

    scrubbed = scrub_output(str(err))
    if scrubbed != str(err):
        err.args = (scrubbed,)
    return err


def _classify(task: str, exc: Exception, *, retries: int, model: str, endpoint: str,
              run_level: bool) -> ModelError | ProviderError:
    after = f" after {retries} SDK retries" if retries else ""
    if isinstance(exc, anthropic.APIStatusError):
        message, rid = error_message(exc), _request_id(exc)
        status = exc.status_code
        if status == 400:
            return parse_prompt_too_long(message) or ModelError(f"{task} request rejected (400): {message}{rid}")
        if run_level and status in (401, 403) and (fix := _credentials_problem(exc)):
            return ProviderError(f"the endpoint {endpoint} rejected the request's credentials ({status}: "
                                 f"{message}{rid}). {fix}")
        if run_level and status == 401:
            return ProviderError(f"the API at {endpoint} rejected the API key (401: {message}{rid}). Fix: set "
                                 "ANTHROPIC_API_KEY to a valid key for this endpoint (for Bedrock or Vertex, "
                                 "their own credentials), or run offline with " + flag("backend offline"))
        if run_level and status == 403:
            return ProviderError(f"the API key may not use model {model!r} at {endpoint} (403: {message}{rid}). "
                                 f"Fix: use a key with access, or another model with {flag('model NAME')} / "
                                 f"{flag('judge-model NAME')}")
        if run_level and status == 404:
            return ProviderError(f"the endpoint {endpoint} does not serve model {model!r} (404: {message}{rid}). "
                                 f"Fix: name a model it serves with {flag('model NAME')} (the judge: "
                                 f"{flag('judge-model NAME')}), or check {flag('base-url URL')}")
        if run_level and status == 429:
            return ProviderError(f"rate limited by {endpoint}{after} (429: {message}{rid}). Fix: lower "
                                 f"{flag('concurrency N')}, or send the judge's volume with {flag('batch')}")
        if run_level and status >= 500:
            return ProviderError(f"the API at {endpoint} is unavailable: HTTP {status} ({message}{rid}){after}. "
                                 "This is an outage, not a quality result: nothing was graded from it. "
                                 "Fix: rerun later (replies already received are cached)")
        return ModelError(f"{task} request failed with HTTP {status}: {message}{rid}{after}")
    if isinstance(exc, anthropic.APIConnectionError):
        kind = "timed out" if isinstance(exc, anthropic.APITimeoutError) else "could not connect"
        if run_level:
            return ProviderError(f"the API at {endpoint} {kind}{after} ({exc}). Fix: check the network, "
                                 f"HTTPS_PROXY, and {flag('base-url URL')} / ANTHROPIC_BASE_URL")
        return ModelError(f"{task} request {kind}: {exc}{after}")
    return ModelError(f"{task} request failed: {exc}")


def refusal_error(task: str, model: str, *, run_level: bool) -> ModelError | ProviderError:
    """A reply that ended with ``stop_reason: refusal``."""
    text = (f"model {model!r} refused the {task} request (stop_reason 'refusal'): its reply is not a "
            f"{'summary' if task == 'compact' else 'usable answer'}")
    if run_level:
        return ProviderError(text + ". Fix: check the scenario content the request carried, or use another model "
                                    f"with {flag('model NAME')}; nothing was graded from the refused reply")
    return ModelError(text)
