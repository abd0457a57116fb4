"""A manual ``/compact <instructions>`` that tells the summary to leave something out is obeyed by the
graders (review 3, F17): the person's own instruction wins over the base prompt. Only clear leave-out
wording counts; anything else is graded as before."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_ctxeval.reading.leave_out import leave_out

ASK = "Add rate limiting to the public API in api/limits.py"
SIDE = "while you're at it, could we try caching sessions in Redis instead of memcached?"
LAST = "ok, back to the limits: use 120 requests per minute per key"
BOOM = "redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. Connection refused."


def _case(kit, *, args, messages_kept, errors_body="None."):
    messages = [kit.user(ASK), kit.say("Starting."), kit.user(SIDE)]
    messages += kit.tool("Bash", {"command": "python scripts/try_redis_cache.py"},
                         f"Exit code 1\nTraceback (most recent call last):\n{BOOM}", is_error=True)
    messages += [kit.say("Redis is not running here."), kit.user(LAST), kit.say("Setting 120/min.")]
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies["user_messages"] = "\n".join(f'- "{m}"' for m in messages_kept)
    bodies["errors"] = errors_body
    bodies["next"] = f'Set the limit: "{LAST}"'
    case = kit.case(messages, kit.summary(bodies))
    return dataclasses.replace(case, compact_args=args)


@pytest.mark.parametrize("args", [
    "leave out the Redis detour entirely",
    "keep it short; don't include anything about Redis",
    "Please omit the redis tangent.",
    "exclude the Redis experiment from the summary",
])
def test_a_message_and_an_error_left_out_as_asked_pass(grade, kit, args):
    case = _case(kit, args=args, messages_kept=[ASK, LAST])
    verdict = grade("verbatim_user_messages", case)
    assert verdict.status == "pass", verdict.reasons
    assert "2 of 3 person-typed messages" in verdict.reasons[0]
    assert "1 message left out as /compact asked: \"" in verdict.reasons[0]
    errors = grade("errors_preserved", case)
    assert errors.status == "pass", errors.reasons
    assert "left out as /compact asked" in errors.reasons[0]


@pytest.mark.parametrize("args", [None, "focus on the rate limiting", "keep only the rate limiting work",
                                  "leave out the Postgres notes"])   # not what the summary dropped
def test_without_a_leave_out_instruction_the_same_summary_fails(grade, kit, args):
    case = _case(kit, args=args, messages_kept=[ASK, LAST])
    verdict = grade("verbatim_user_messages", case)
    assert verdict.status == "fail" and "user message 2 of 3" in verdict.reasons[0], verdict.reasons
    assert grade("errors_preserved", case).status == "fail"


def test_a_leave_out_does_not_excuse_other_losses(grade, kit):
    case = _case(kit, args="leave out the Redis detour", messages_kept=[LAST])
    verdict = grade("verbatim_user_messages", case)
    assert verdict.status == "fail"
    assert "user message 1 of 3" in verdict.reasons[0] and "left out as /compact asked" in verdict.reasons[0]


def test_leaving_out_errors_as_a_kind(grade, kit):
    case = _case(kit, args="don't include error messages or stack traces", messages_kept=[ASK, SIDE, LAST])
    assert grade("errors_preserved", case).status == "pass"
    assert grade("verbatim_user_messages", case).reasons[0].startswith("all 3 person-typed")


@pytest.mark.parametrize("args, kinds, words", [
    ("leave out the PDF detour entirely", set(), ("pdf",)),
    ("Don't mention the Docker and Kubernetes discussion", set(), ("docker", "kubernetes")),
    ("skip my messages", {"user_messages"}, ()),
    ("leave out my messages and the errors about Redis", set(), ("redis",)),
    ("do not include errors", {"errors"}, ()),
])
def test_leave_out_reading(args, kinds, words):
    [x] = leave_out(args)
    assert set(x.kinds) == kinds and x.words == words


@pytest.mark.parametrize("args", ["focus on the API changes", "keep the test failures in detail",
                                  "no need to repeat the plan", "ignore the flaky test", "summarise briefly", ""])
def test_not_a_leave_out(args):
    assert leave_out(args) == []
