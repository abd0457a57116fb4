"""What the summary says only as the person's words: the copies of their messages.

Section 6 lists the person's messages, and other sections quote them ("as the user asked: \"write the
test in tests/test_feed.py\""). A file named there is named as what the person asked or said, which
says nothing about what the session did to it: a quote of a request to create ``tests/test_feed.py``
does not tell the next agent the file was created. :func:`person_quotes_removed` blanks those copies
out of a text, so a reader of changes (``files_preserved``) looks only at what the summary says in its
own words.
"""

from __future__ import annotations

import re

from .quoting import QUOTES
from .verbatim import normalize

__all__ = ["person_quotes_removed", "QUOTE_MIN_CHARS"]

#: A quoted string this long (normalised) at least, found in a person's message, is a copy of it;
#: a shorter one ("fix it") is a word or two the summary may use of its own.
QUOTE_MIN_CHARS = 12


def person_quotes_removed(text: str, person_texts: list[str], user_messages: str = "") -> str:
    """``text`` with ``user_messages`` (the body of section 6, the person's messages, when it is found
    once in ``text``) and every quoted
    string that is a piece of one of ``person_texts`` (at least :data:`QUOTE_MIN_CHARS` long,
    compared after :func:`pytest_ctxeval.reading.verbatim.normalize`) blanked out.

    >>> person_quotes_removed('Next: as the user asked: "add the test in tests/test_feed.py".',
    ...                       ["great. add the test in tests/test_feed.py and open a PR"])
    'Next: as the user asked:  .'
    """
    if len(user_messages.strip()) >= QUOTE_MIN_CHARS and text.count(user_messages) == 1:
        text = text.replace(user_messages, " ")   # once, and only a body that is nothing else's words
    if not person_texts or not any(q in text for q in "\"“‘'>"):
        return text
    said = [normalize(t) for t in person_texts if t.strip()]

    def blank(m: re.Match) -> str:
        quote = normalize(m.group(1)).strip(" .,;:!?")
        if len(quote) >= QUOTE_MIN_CHARS and any(quote in t for t in said):
            return " "
        return m.group(0)

    for pattern in QUOTES:
        text = pattern.sub(blank, text)
    return text
