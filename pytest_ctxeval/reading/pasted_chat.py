"""A conversation pasted after a typed lead (review 5, #18): ``> Rodrigo:`` ... ``> Claude Opus 4.7:``.

A person who pastes an earlier chat (with another assistant, a colleague) marks its speakers with
block-quoted labels, one line each, and their words after them. That is a paste, like a log after a
typed lead: the lead is the person's, the conversation after it may be summarised. It is read as one
when its first line is a speaker label and it holds at least :data:`MIN_SPEAKER_LINES` of them.
"""

from __future__ import annotations

import re

__all__ = ["chat_start", "MIN_SPEAKER_LINES"]

#: A block-quoted speaker label on its own line: ``> Rodrigo Oliveira:``, ``> Claude Opus 4.7:``.
SPEAKER = re.compile(r"^[ \t]*>[ \t]*[^\s>:][^\n:>]{0,59}:[ \t]*$", re.MULTILINE)
MIN_SPEAKER_LINES = 2


def chat_start(text: str) -> int:
    """Where a pasted conversation starts in ``text`` (the offset of its first speaker label), or -1
    when ``text`` holds none (fewer than :data:`MIN_SPEAKER_LINES` labels).

    >>> chat_start("check this chat:\\n> Ana:\\nshould we split it?\\n> Bot:\\nyes, by package")
    17
    >>> chat_start("> quoted line:\\nonly one label")
    -1
    """
    labels = list(SPEAKER.finditer(text))
    return labels[0].start() if len(labels) >= MIN_SPEAKER_LINES else -1


def speaker_lines(text: str) -> int:
    """How many speaker labels ``text`` holds."""
    return len(SPEAKER.findall(text))
