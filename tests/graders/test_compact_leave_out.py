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
    # everyday words (review 4, G15)
    "no need to mention the Redis stuff",
    "without the Redis discussion",
    "don't bother with the Redis bits",
    "keep it short, no Redis stuff please",
    "summarise without the redis tangent",
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


def test_an_unread_compact_text_is_named_in_the_failure(grade, kit):
    """G15: when the /compact text is not read as a leave-out of what failed, the reason says what
    it was, so the person can judge; a leave-out read for something else says it does not cover it."""
    case = _case(kit, args="focus on the rate limiting work", messages_kept=[ASK, LAST])
    verdict = grade("verbatim_user_messages", case)
    assert verdict.status == "fail"
    assert 'the /compact text was "focus on the rate limiting work": not read as a leave-out' in verdict.reasons[0]
    assert "/compact" in grade("errors_preserved", case).reasons[0]
    case = _case(kit, args="leave out the Postgres notes", messages_kept=[ASK, LAST])
    assert "its leave-out does not cover this" in grade("verbatim_user_messages", case).reasons[0]
    case = _case(kit, args=None, messages_kept=[ASK, LAST])
    assert "/compact" not in grade("verbatim_user_messages", case).reasons[0]


@pytest.mark.parametrize("args, kinds", [
    ("leave out the failed attempts", {"errors", "failed_approaches"}),
    ("skip the dead ends", {"failed_approaches"}),
    ("don't list the files", {"files"}),
    ("no need to mention the todo list", {"tasks"}),
])
def test_leave_out_kinds(args, kinds):
    [x] = leave_out(args)
    assert set(x.kinds) == kinds


@pytest.mark.parametrize("args", ["focus on the API; no more than 300 words", "no problem, go ahead",
                                  "no need to repeat the plan"])
def test_everyday_words_that_leave_nothing_out(args):
    assert leave_out(args) == []


# -- every grader whose facts the person asked to leave out obeys it (G5) ------------------------------

APPROACH = "pool_size=1"


def _session_with_all_kinds(kit):
    messages = [kit.user(ASK), *kit.todo(("Add the limiter middleware", "in_progress"),
                                         ("Document the Redis cache idea", "pending"))]
    messages += kit.tool("Edit", {"file_path": "api/limits.py", "old_string": "a", "new_string": "b"})
    messages += kit.tool("Write", {"file_path": "scripts/redis_cache_probe.py", "content": "x"})
    messages += kit.tool("Edit", {"file_path": "api/pool.py", "old_string": "pool_size=4", "new_string": APPROACH})
    messages += [kit.say(f"Setting {APPROACH} did not help; reverted."), kit.user(LAST)]
    return messages


def _bodies(kit, **over):
    return {**dict.fromkeys(kit.SECTION_KINDS, "x"), "user_messages": f'- "{ASK}"\n- "{LAST}"',
            "files": "- api/limits.py: the limiter", "errors": "None.", "problem": "None.",
            "pending": "- Add the limiter middleware (in progress)", "next": f'Set the limit: "{LAST}"', **over}


@pytest.mark.parametrize("args, grader", [
    ("leave out the failed attempts", "failed_approaches_preserved"),
    ("leave out the Redis cache detour", "files_preserved"),
    ("leave out the Redis cache detour", "pending_tasks"),
    ("don't list the pending tasks", "pending_tasks"),
])
def test_other_graders_obey_the_leave_out_too(grade, kit, args, grader):
    expect = {"failed_approaches": [APPROACH]}
    case = kit.case(_session_with_all_kinds(kit), kit.summary(_bodies(kit)), expect=expect)
    if grader == "files_preserved":    # the pool change is told; only the Redis probe is left out
        case = kit.case(_session_with_all_kinds(kit), kit.summary(_bodies(kit, files="- api/limits.py\n- api/pool.py")),
                        expect=expect)
    before = grade(grader, case)
    assert before.status == "fail", before.reasons
    after = grade(grader, dataclasses.replace(case, compact_args=args))
    assert after.status == "pass", after.reasons
    assert "left out as /compact asked" in after.reasons[0]


def test_a_leave_out_does_not_let_the_summary_propose_a_failed_approach_again(grade, kit):
    case = kit.case(_session_with_all_kinds(kit), kit.summary(_bodies(kit, next=f"Try {APPROACH} once more.")),
                    expect={"failed_approaches": [APPROACH]})
    verdict = grade("failed_approaches_preserved", dataclasses.replace(case, compact_args="leave out the failed attempts"))
    assert verdict.status == "fail" and "proposes the failed approach" in verdict.reasons[-1], verdict.reasons
