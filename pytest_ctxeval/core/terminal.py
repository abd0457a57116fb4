"""Text from transcripts and models, made safe to print on a terminal.

A transcript holds whatever a tool printed: ``ESC[2J`` clears the screen, ``ESC]0;…BEL`` sets the
window title, ``ESC]8;;URL ESC\\`` makes a link, a lone ``CR`` overwrites the line. Every line
ctxeval prints (the ``ctxeval`` command's stdout and stderr, the pytest summary) goes through
:func:`safe_text`: control characters other than newline and tab are shown as ``\\x1b``-style
escapes, and key-shaped strings are redacted (:func:`~pytest_ctxeval.core.redact.scrub_output`).
"""

from __future__ import annotations

import re

from .redact import scrub_output

__all__ = ["safe_text"]

# C0 controls but \t and \n, DEL, C1 controls (0x80-0x9f: 8-bit CSI/OSC), and the bidi overrides
# and isolates that reorder what a line shows.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def safe_text(text: str) -> str:
    """``text`` with control characters escaped and secrets redacted.

    >>> safe_text("ok\\x1b[2J\\x1b]0;pwned\\x07 done")
    'ok\\\\x1b[2J\\\\x1b]0;pwned\\\\x07 done'
    """
    text = scrub_output(text)
    if _CONTROL.search(text):
        text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                            else f"\\u{ord(m.group()):04x}", text)
    return text
