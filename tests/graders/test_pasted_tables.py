"""A command and the table it printed, pasted as one message (real-session round 3 left it open).

People paste what a command printed in columns (``docker compose ps``, ``kubectl get pods``,
``ls -l``) after typing the command, or with the shell prompt line. The table was not read as
pasted output (its rows have no log prefix or stack frame), so the whole message had to be in
section 6 word for word: a summary that kept the command and told the table ("web restarting,
worker exited") failed, a false alarm. Now a table row is machine output, and a message that is a
short typed command plus its output is kept by the command verbatim with words of the output
beside it; the command alone, or nothing, still fails.
"""

from __future__ import annotations

import pytest

from pytest_ctxeval.reading.verbatim import find, machine_line, machine_output

PS = """NAME            IMAGE         COMMAND                  SERVICE   STATUS                       PORTS
app-db-1        postgres:16   "docker-entrypoint.s…"   db        Up 2 minutes (healthy)       0.0.0.0:5432->5432/tcp
app-redis-1     redis:7       "docker-entrypoint.s…"   redis     Up 2 minutes                 6379/tcp
app-web-1       app-web       "gunicorn app:app -b…"   web       Restarting (1) 5 seconds ago
app-worker-1    app-worker    "celery -A app worke…"   worker    Exited (1) 30 seconds ago"""

PODS = """NAME                        READY   STATUS             RESTARTS   AGE
api-7d9c6b5f4-x2kq9         1/1     Running            0          3h
billing-5f8d7c9b6-lm4np     0/1     CrashLoopBackOff   12         41m
queue-0                     1/1     Running            0          3h"""

FIRST = "Bring the stack up with docker compose and fix whatever does not start."


@pytest.mark.parametrize("line", [PS.splitlines()[3], PODS.splitlines()[2],
                                  "-rw-r--r--  1 dev dev   76255 Dec  2 06:25 before.txt"])
def test_a_row_printed_in_columns_is_machine_output(line):
    assert machine_line(line)


@pytest.mark.parametrize("text", [
    "Fix the parser.  Then add a test for the empty case.  Also keep the public API as it is.",
    "Please rename the helper, keep the old name as an alias,  and update the docs.",
])
def test_prose_typed_with_double_spaces_is_not_a_table(text):
    assert not machine_line(text) and not machine_output(text + "\n" + text)


def _case(kit, message: str, told: str):
    messages = [kit.user(FIRST), kit.say("Starting the stack."), kit.user(message), kit.say("Two services are down.")]
    summary = kit.summary({"request": FIRST, "user_messages": f'- "{FIRST}"\n{told}', "next": "Fix the web service."})
    return kit.case(messages, summary)


@pytest.mark.parametrize("message", ["docker compose ps\n" + PS, "$ docker compose ps\n" + PS])
@pytest.mark.parametrize("told", [
    '- "docker compose ps" (pasted the container table: web restarting, worker exited)',
    "- Pasted `docker compose ps` output: db and redis up, web Restarting, worker Exited (1)",
])
def test_the_command_kept_and_its_table_told_keeps_the_message(grade, kit, message, told):
    v = grade("verbatim_user_messages", _case(kit, message, told))
    assert v.status == "pass", v.reasons
    assert "1 command kept, its pasted output summarised" in v.reasons[0]
    last = grade("last_request_intact", _case(kit, message, told))
    assert last.status == "pass" and "its pasted output summarised" in last.reasons[0], last.reasons


@pytest.mark.parametrize("told, why", [
    ("", "dropped"),
    ('- "docker compose ps"', "the command alone: nothing of what it printed"),
    ("- The user pasted some output.", "the output told, the command not"),
])
def test_a_message_not_told_still_fails(grade, kit, told, why):
    v = grade("verbatim_user_messages", _case(kit, "docker compose ps\n" + PS, told))
    assert v.status == "fail", why
    assert 'user message 2 of 2 is not verbatim in section 6' in v.reasons[0]


def test_a_kubectl_table_after_its_command():
    message = "kubectl get pods\n" + PODS
    assert find(message, "- `kubectl get pods`: billing in CrashLoopBackOff (12 restarts), the rest Running").how \
        == "command"
    assert not find(message, "- `kubectl get pods`")
    assert not find(message, "- kubectl get pods; billing crashed")  # one word of the table is not a telling
    # four typed words or more are a typed lead (kept by itself, as before)
    assert find("please look at this\n" + PODS, "- please look at this (pasted pod list)").how == "lead"
