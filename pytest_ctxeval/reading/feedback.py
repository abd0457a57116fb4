"""What the person typed when they rejected a tool use: their feedback is a message of theirs.

When the person refuses a tool call and types why, Claude Code returns the call's ``tool_result``
as its own rejection sentence followed by their words::

    The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a
    file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:
    don't touch orders.py, put the export in a new module

Later versions append a note to the model ("Note: The user's next message may contain a correction
or preference. …"); a subagent's refusal reads "Permission for this tool use was denied. …". Only the
text after "the user said:" is the person's. It is how people steer in plan mode (Claude Code's own
summaries list it among the user messages), so :func:`typed_text` counts it like a typed message.

Not the person's: a rejection with nothing typed ("STOP what you are doing and wait for the user to
tell you how to proceed.", "User rejected tool use"), and the text Claude Code writes when the person
picks "clarify" on an AskUserQuestion ("The user wants to clarify these questions. …", its questions
and the options chosen).
"""

from __future__ import annotations

import re
from typing import Any

from ..core.messages import ToolResultBlock, UserMessage, person_text, result_text

__all__ = ["rejection_feedback", "typed_text"]

_REJECTION = re.compile(
    r"^\s*(?:Error:\s*)?(?:The user doesn't want to proceed with this tool use|Permission for this tool use was denied)"
    r"\.[^\n]*?\b(?:To tell you how to proceed, )?the user said:[ \t]*\n?", re.IGNORECASE)
#: The note later versions append after the person's words.
_NOTE = re.compile(r"\n\s*Note: The user's next message may contain a correction or preference\b.*\Z", re.DOTALL)
#: Claude Code's own words when the person asks to clarify an AskUserQuestion (not typed by them).
_HARNESS_TEXT = re.compile(r"^\s*The user wants to clarify these questions\.")


def rejection_feedback(message: Any) -> str | None:
    """The words the person typed when rejecting a tool call in ``message`` (one text per rejected
    call, joined by a line break), or None when it holds no rejection with typed words.

    >>> from pytest_ctxeval.core.messages import ToolResultBlock, UserMessage
    >>> said = ("The user doesn't want to proceed with this tool use. The tool use was rejected. "
    ...         "To tell you how to proceed, the user said:\\nuse a new module instead")
    >>> rejection_feedback(UserMessage(uuid="u", content=[ToolResultBlock(tool_use_id="t", content=said, is_error=True)]))
    'use a new module instead'
    """
    if not isinstance(message, UserMessage) or isinstance(message.content, str) or message.is_meta:
        return None
    texts = []
    for block in message.content:
        if not isinstance(block, ToolResultBlock):
            continue
        text = result_text(block)
        m = _REJECTION.match(text[:1000])
        if m is None:
            continue
        said = _NOTE.sub("", text[m.end():]).strip()
        if said and not _HARNESS_TEXT.match(said):
            texts.append(said)
    return "\n".join(texts) if texts else None


def typed_text(message: Any) -> str | None:
    """What the person typed in ``message``: its typed text
    (:func:`pytest_ctxeval.core.messages.person_text`) and the feedback of a tool use they rejected
    (:func:`rejection_feedback`), or None when they typed nothing in it."""
    parts = [t for t in (rejection_feedback(message), person_text(message)) if t]
    return "\n".join(parts) if parts else None
