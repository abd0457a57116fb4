"""What a summarised paste must keep: its error line, and what a short typed question after it may lose.

A message of a typed lead and a pasted log (a stack trace, a console page) may keep its lead verbatim
and summarise the paste (:mod:`pytest_ctxeval.reading.verbatim`). The line of the paste that says what
went wrong (``KeyError: 'DATABASE_URL'``) is the one fact of the paste the next agent needs: it must
be told anywhere in the item, verbatim or by its error type and the words that name what failed
(``[traceback ending in KeyError DATABASE_URL]``). A short typed tail that carries no content of its
own ("any idea?", "thoughts?", "help") adds nothing to the lead and the paste: leaving it out is not a
loss, while a typed tail that says something ("but do NOT touch the migrations") is the person's and
must be kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["last_error_line", "error_told", "content_free_tail"]

#: The error type a line names (``KeyError``, ``psycopg.OperationalError``, ``error[E0308]``).
_TYPE = re.compile(r"[\w.]*?(\w*(?:Error|Exception|Exit|Interrupt|Warning))\b")
#: The words of an error message that name what failed: a quoted value, or a token holding an
#: underscore, a digit, a dot or a slash between letters (``DATABASE_URL``, ``5432``, ``config.py``).
_QUOTED = re.compile(r"""['"`]([^'"`\n]{1,80})['"`]""")
_NAMING = re.compile(r"[\w./-]*(?:_|\d|\w[./]\w)[\w./-]*")
_WORDS = re.compile(r"[^\W\d_]{4,}")


#: A line that plainly says what went wrong, from its start: an exception type and its message
#: (``KeyError: 'DATABASE_URL'``, pytest's ``E   ValueError: …``, a browser's ``Uncaught TypeError: …``),
#: or a compiler's or runtime's ``error[E0308]: …``, ``fatal: …``, ``panic: …``. A stack frame that
#: names an error function (``logCapturedError @ chunk.js:15346``), a warning, or a line with a
#: location before the type is not read as one: a paste without such a line has no line to require.
_CLEAR_ERROR = re.compile(r"^\s*(?:E\s+|Uncaught\s+(?:\(in promise\)\s+)?)?(?:[A-Za-z_][\w.]*"
                          r"(?:Error|Exception|Exit|Interrupt|Failure)(?:\[\w+\])?:\s*\S|"
                          r"(?:error|fatal|panic)(?:\[\w+\])?:\s*\S)")


#: A tool's closing line after the error it reported (``error: aborting due to previous error``,
#: ``error: could not compile `app```, ``Error: Process completed with exit code 1``): it says only
#: that something failed; the line before it says what.
_TRAILER = re.compile(r"\baborting due to\b|\bcould not compile\b|\bexit (?:code|status)\b|\bcommand failed\b|"
                      r"\bELIFECYCLE\b|\brecipe for target\b|\bfailed with \d|\bbuild failed\b", re.IGNORECASE)


def last_error_line(paste: str) -> str:
    """The last line of ``paste`` that plainly says what went wrong (:data:`_CLEAR_ERROR`), stripped;
    "" when none does.

    >>> last_error_line("Traceback (most recent call last):\\n  File \\"app.py\\", line 3\\nKeyError: 'DATABASE_URL'")
    "KeyError: 'DATABASE_URL'"
    >>> last_error_line("logCapturedError @ chunk-z33.js:15346")
    ''
    >>> last_error_line("error[E0308]: mismatched types\\nerror: aborting due to 1 previous error")
    'error[E0308]: mismatched types'
    """
    errors = [line.strip() for line in paste.splitlines() if _CLEAR_ERROR.search(line) and not _TRAILER.search(line)]
    return errors[-1] if errors else ""


def _present(token: str, norm_hay: str, normalize: Callable[[str], str]) -> bool:
    token = normalize(token).strip(".,;:()[]")
    return bool(token) and re.search(rf"(?<![\w]){re.escape(token)}(?![\w])", norm_hay) is not None


def error_told(line: str, norm_hay: str, normalize: Callable[[str], str] = str.casefold) -> bool:
    """Whether the normalised haystack tells the error ``line``: verbatim, or by its error type (when
    it names one) and at least half of the words that name what failed (quoted values, identifiers,
    numbers; failing those, the message's words of four letters or more). ``normalize`` is the
    haystack's normalisation (:func:`pytest_ctxeval.reading.verbatim.normalize`, which reads this
    module: passed in, not imported).

    >>> error_told("KeyError: 'DATABASE_URL'", "[traceback ending in keyerror database_url]")
    True
    >>> error_told("KeyError: 'DATABASE_URL'", "[long traceback pasted] any idea?")
    False
    """
    if not line or normalize(line) in norm_hay:
        return True
    kind = _TYPE.search(line)
    if kind and kind.group(1) and not _present(kind.group(1), norm_hay, normalize):
        return False
    message = line[kind.end():] if kind else line.split(":", 1)[-1]
    names = [q for q in _QUOTED.findall(message) if q.strip()] + \
        [t for t in _NAMING.findall(_QUOTED.sub(" ", message)) if len(t) >= 2]
    if not names:
        names = _WORDS.findall(message)
    if not names:
        return bool(kind and kind.group(1))
    return 2 * sum(_present(n, norm_hay, normalize) for n in names) >= len(names)


#: Words of a short typed question that asks for help with what was pasted and says nothing else.
_ASKS = {"idea", "ideas", "thought", "thoughts", "help", "suggestion", "suggestions", "clue", "clues", "wrong",
         "why", "going", "happening", "happened", "mean", "means", "wtf", "huh"}
_FILLER = {"any", "please", "pls", "plz", "so", "hmm", "hm", "ok", "okay", "hey", "what", "what's", "whats",
           "going", "on", "is", "are", "this", "that", "it", "the", "me", "us", "can", "could", "would", "you",
           "does", "do", "did", "here", "a", "some", "with", "your", "have", "there"}
#: A content-free tail is at most this many words.
CONTENT_FREE_WORDS = 6


def content_free_tail(tail: str) -> bool:
    """Whether ``tail`` (what the person typed after a paste) only asks for help with it: at most
    :data:`CONTENT_FREE_WORDS` words, one of them a plea ("idea", "thoughts", "help", "wrong", "why"),
    the rest filler ("any", "what's", "is", "this", "please"). An instruction ("fix it", "don't touch
    prod") or a fact ("it worked yesterday") is never content-free.

    >>> content_free_tail("any idea?"), content_free_tail("what's going on here?")
    (True, True)
    >>> content_free_tail("any idea? it worked yesterday"), content_free_tail("fix it")
    (False, False)
    """
    words = [w.strip(".,;:!?()'\"…").replace("\u2019", "'") for w in tail.casefold().split()]
    words = [w for w in words if w]
    return 0 < len(words) <= CONTENT_FREE_WORDS and any(w in _ASKS for w in words) and \
        all(w in _ASKS or w in _FILLER for w in words)
