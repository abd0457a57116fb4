"""Two shapes of a compaction prompt that change how its sentences are read offline.

**The /compact instructions.** Claude Code appends what the user typed after ``/compact`` (and the
output of PreCompact hooks) under an ``Additional Instructions:`` line, after the section list and
before the no-tools reminder. Those lines are the user's own word for this compaction: a model
follows them over the template's general wording and over a section's entry ("drop the test
debugging" is followed although section 4 asks for every error). :func:`custom_lines` finds them.

**A list under a lead-in.** Real instructions are often a verb ending in a colon with the objects
as bullets below it::

    When compacting, drop:
    - resolved debug output and stack traces
    - long git log output

A model reads each bullet with its lead-in ("drop resolved debug output ..."); read alone, the
bullet "exploratory search dead ends" under ``Discard:`` would even look like an ask to keep them.
:func:`lead_in` gives the words a bullet is read with.
"""

from __future__ import annotations

import re

__all__ = ["custom_lines", "lead_in", "with_context_instructions", "BULLET"]

#: The line Claude Code's prompt puts before the /compact instructions (the built-in template too).
_CUSTOM_HEAD = re.compile(r"^\s*(?:#{1,6}\s*)?[*_]*additional instructions[*_]*\s*:?[*_]*\s*$", re.IGNORECASE)
#: The no-tools reminder that closes the prompt after them.
_TRAILER = re.compile(r"^\s*(?:REMINDER|IMPORTANT)\s*:\s*do not call any tools", re.IGNORECASE)
#: A bullet item (not a numbered one: a numbered line may be a section entry).
BULLET = re.compile(r"^\s*[-*•+]\s+\S")
#: A lead-in: a line's last words end in a colon and name no section entry ("Discard:",
#: "When compacting, preserve:", "In the analysis:").
_LEAD = re.compile(r"^(?P<lead>[^:]{2,120}?)\s*:\s*$")


def custom_lines(lines: list[str]) -> set[int]:
    """The 1-based numbers of the lines that hold the /compact instructions: after the last
    ``Additional Instructions:`` line, up to the no-tools reminder after it (or the end).

    >>> sorted(custom_lines(["1. Errors: quote them.", "Additional Instructions:", "drop the debugging", "",
    ...                      "REMINDER: Do NOT call any tools."]))
    [3, 4]
    """
    heads = [n for n, line in enumerate(lines) if _CUSTOM_HEAD.match(line)]
    if not heads:
        return set()
    start = heads[-1] + 1
    end = next((n for n in range(start, len(lines)) if _TRAILER.match(lines[n])), len(lines))
    return set(range(start + 1, end + 1))


def with_context_instructions(prompt: str, extra: list[str]) -> str:
    """``prompt`` with the compaction instructions of the request's memory files (``extra``:
    :func:`pytest_ctxeval.reading.context_instructions.context_instructions`) read as the user's own
    word, as a model told to "follow these instructions" reads them: among the /compact
    instructions, before the /compact text (said last, it is read last). Without an ``Additional
    Instructions:`` line, one is put before the no-tools reminder (or at the end).

    >>> with_context_instructions("1. Errors: quote them.\\nREMINDER: Do NOT call any tools.", ["Drop the logs."])
    '1. Errors: quote them.\\n\\nAdditional Instructions:\\nDrop the logs.\\n\\nREMINDER: Do NOT call any tools.'
    """
    if not extra:
        return prompt
    block = "\n\n".join(e.strip() for e in extra)
    lines = prompt.split("\n")
    heads = [n for n, line in enumerate(lines) if _CUSTOM_HEAD.match(line)]
    if heads:
        at = heads[-1] + 1
        return "\n".join(lines[:at] + [block, ""] + lines[at:])
    trailer = next((n for n in range(len(lines) - 1, -1, -1) if _TRAILER.match(lines[n])), None)
    if trailer is None:
        return prompt.rstrip("\n") + "\n\nAdditional Instructions:\n" + block
    head = "\n".join(lines[:trailer]).rstrip("\n")
    return head + "\n\nAdditional Instructions:\n" + block + "\n\n" + "\n".join(lines[trailer:])


def lead_in(text: str) -> str | None:
    """The words a bullet list below ``text`` is read with, or None when ``text`` (one line,
    normalised) does not end in a colon. Only the line's own words lead the list: the sentence it
    ends may have begun on a line above ("focus on X, drop the debugging\nWhen compacting, discard:").

    >>> lead_in("when compacting, drop:"), lead_in("- discard:"), lead_in("keep the summary short.")
    ('when compacting, drop', 'discard', None)
    >>> lead_in("wrap your analysis in <analysis> tags. in the analysis:")
    'in the analysis'

    """
    last = re.split(r"(?<=[.!?;])\s+", text.strip())[-1]  # its last sentence
    m = _LEAD.match(re.sub(r"^(?:[-*•+]|#{1,6})\s+", "", last))
    return m.group("lead").strip() if m else None
