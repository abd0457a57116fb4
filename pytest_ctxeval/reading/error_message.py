"""The message of an error, apart from the test runner's frame around it (round 6 of unseen real
sessions).

Two real 2.1.2xx summaries kept an error's own message verbatim in section 4 and dropped only the
frame a test runner printed around it: ``202505141324: saving user: no such column: tenant_id``
(a Go test, printed by testify), ``ValueError: Unknown capabilities not in ontology: ['retrieve']``
(a pytest run). Whether the error was kept must not depend on how the runner framed it:

* :func:`message_in_testify_block`: testify prints a failed assertion as a block of fields (``Error Trace:``,
  ``Error:``, ``Test:``, ``Messages:``); what went wrong is the ``Error:`` field, with the line
  under it when the field only announces it (``Received unexpected error:``), not the
  ``Error Trace:`` location the first ``error``-looking line is;
* :func:`message_of`: pytest's short summary line (``FAILED tests/t.py::test_x - ValueError: …``)
  and a Go test's message line (``db_test.go:40: migration failed: …``) hold the message after
  the test's name or place. That message kept verbatim keeps the error when it is telling on its
  own: after its exception type, four words or more, one of them a name of three characters or more
  (with a digit, an underscore, a quote, a dot or a capital inside it), as ``got 1, want 2`` and
  ``AssertionError: assert 1 == 2`` are not.
"""

from __future__ import annotations

import re

from .summary import normalize_ws

__all__ = ["message_in_testify_block", "message_of", "error_message_kept"]

#: A testify field: its name, a colon, a tab (``Error Trace:\t…``, ``Error:      \t…``).
_FIELD = re.compile(r"^\s*(Error Trace|Error|Test|Messages):\s*\t\s*(.*)$")
#: A continuation line of a testify field: indentation, a tab, the text.
_CONTINUED = re.compile(r"^\s*\t\s*(\S.*)$")
#: pytest's short summary line: ``FAILED node - message`` (``ERROR node - message`` for a setup error).
_PYTEST_SHORT = re.compile(r"^(?:FAILED|ERROR)\s+\S+::\S+\s+-\s+(.+)$")
#: A Go test's message line: ``name_test.go:40: message``.
_GO_TEST = re.compile(r"^[\w./-]+_test\.go:\d+:\s+(.+)$")
#: A word that names something: a digit, an underscore, a quote, a dot or an inner capital.
_NAME = re.compile(r"\d|_|['\"`]|\w\.\w|[a-z][A-Z]")
#: The exception type a message opens with (``ValueError:``): not a word of what went wrong.
_EXC_TYPE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Failure):\s*")


def message_in_testify_block(lines: list[str]) -> str | None:
    """The ``Error:`` field of the first testify block in ``lines`` (raw lines of a tool result), with
    the line under it when the field ends with a colon; None when ``lines`` hold no testify block.

    >>> message_in_testify_block(["\\tError Trace:\\tdb_test.go:496", "\\tError:      \\tReceived unexpected error:",
    ...                  "\\t            \\t202505141324: saving user: no such column: tenant_id"])
    'Received unexpected error: 202505141324: saving user: no such column: tenant_id'
    """
    fields = [(_FIELD.match(line), i) for i, line in enumerate(lines)]
    if not any(m and m.group(1) == "Error Trace" for m, _ in fields):
        return None
    for m, i in fields:
        if m and m.group(1) == "Error":
            text = m.group(2).strip()
            nxt = _CONTINUED.match(lines[i + 1]) if i + 1 < len(lines) and not _FIELD.match(lines[i + 1]) else None
            if nxt and (text.endswith(":") or not text):
                text = f"{text} {nxt.group(1).strip()}".strip()
            return normalize_ws(text) or None
    return None


def message_of(key_line: str) -> str:
    """The message of a pytest short-summary line or a Go test's message line, when it tells the error
    on its own (see the module docstring); else "".

    >>> message_of("FAILED tests/t.py::test_load - ValueError: Unknown capabilities not in ontology: ['retrieve']")
    "ValueError: Unknown capabilities not in ontology: ['retrieve']"
    >>> message_of("render_test.go:31: got 1, want 2")
    ''
    """
    m = _PYTEST_SHORT.match(key_line) or _GO_TEST.match(key_line)
    if m is None:
        return ""
    message = m.group(1).strip()
    words = _EXC_TYPE.sub("", message).split()
    named = any(len(w.strip(".,:;()[]")) >= 3 and _NAME.search(w) for w in words)
    return message if len(words) >= 4 and named else ""


def error_message_kept(key_line: str, region: str) -> bool:
    """Whether ``region`` (the summary's errors section) holds the message of ``key_line`` verbatim
    (case and runs of whitespace aside; code-span marks read as text).

    >>> error_message_kept("FAILED tests/t.py::test_load - ValueError: Unknown capabilities not in ontology: ['retrieve']",
    ...              "- **Race**: `ValueError: Unknown capabilities not in ontology: ['retrieve']` on 3.10")
    True
    """
    message = message_of(key_line)
    if not message:
        return False
    return normalize_ws(message).casefold() in normalize_ws(region.replace("`", "")).casefold()
