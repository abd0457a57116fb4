"""A person's message kept but for an acknowledgement it opens or ends with ("this is good.", "ok,").

"this is good. commit push this plan and create PR" quoted as "commit push this plan and create PR"
keeps all the message asks for: a part of three words or fewer that names nothing (no digit, path or
identifier) is an acknowledgement a summary may leave out. ``last_request_intact`` has accepted it
since round 4; ``verbatim_user_messages`` read the same quote as a message not carried forward, so
the two graders disagreed about one quote (review 7, B2). Both read it here.
"""

from __future__ import annotations

import re

from .summary import normalize_ws

__all__ = ["ACK_WORDS", "FILLER_WORDS", "MAX_SHARE", "request_parts", "is_acknowledgement", "acknowledgements"]

#: A part of a message this short (and naming nothing) is an acknowledgement.
FILLER_WORDS = 3
#: The acknowledgements left out may be at most this share of the message's characters.
MAX_SHARE = 0.2

_NAMES = re.compile(r"[\d/_.#@`]\w|[a-z][A-Z]")
_PART_SPLIT = re.compile(r"(?<=[.!?;:])\s+|\n+|,?\s+(?:and\s+)?(?=(?:then|finally|after that|also)\b)",
                         re.IGNORECASE)


def request_parts(text: str) -> list[str]:
    """The parts of a request, split at sentence ends, line breaks and "then"/"finally"."""
    parts = [normalize_ws(p) for p in _PART_SPLIT.split(text) if p and normalize_ws(p)]
    return [p for p in parts if len(p) >= 3] or [normalize_ws(text)]


#: The words an acknowledgement is made of. A short part with any other word may carry meaning:
#: "don't push." ending "run the migration. don't push." is a rule, not an acknowledgement, and "No."
#: opening a message turns down what came before.
ACK_WORDS = frozenset("""
    this that it is looks look seems all good great nice fine cool perfect awesome excellent lgtm ok okay
    k alright right sure yes yep yeah thanks thank you ty thx much very well done job work
""".split())


def is_acknowledgement(part: str) -> bool:
    """Whether ``part`` is short, names nothing and says only that things are fine or thanks:
    "this is good.", "ok,", "thanks!"; not "don't push." or "No.".

    >>> [is_acknowledgement(p) for p in ("this is good.", "Looks great, thanks!", "don't push.", "No.", "auth.py is fine.")]
    [True, True, False, False, False]
    """
    words = re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", part.lower())
    return (len(part.split()) <= FILLER_WORDS and not _NAMES.search(part) and bool(words)
            and all(w in ACK_WORDS for w in words))


def acknowledgements(text: str, parts: list[str] | None = None) -> tuple[list[str], str]:
    """The acknowledgements leading or ending ``text`` and the rest of it without them (normalised).

    >>> acknowledgements("this is good. commit push this plan and create PR")
    (['this is good.'], 'commit push this plan and create PR')
    >>> acknowledgements("fix the login bug in auth.py")
    ([], 'fix the login bug in auth.py')
    """
    parts = request_parts(text) if parts is None else parts
    rest = normalize_ws(text)
    ack: list[str] = []
    for p in parts:   # leading ones
        if not is_acknowledgement(p) or not rest.startswith(normalize_ws(p)):
            break
        ack.append(p)
        rest = rest[len(normalize_ws(p)):].strip()
    for p in reversed(parts[len(ack):]):   # ending ones
        if not is_acknowledgement(p) or not rest.endswith(normalize_ws(p)):
            break
        ack.append(p)
        rest = rest[:-len(normalize_ws(p))].strip()
    return ack, rest
