"""What the person ruled out in a sentence of its own ("No MVP terminology in our app", "don't use
Chakra"), for ``no_superseded_work``: sections 7-9 must not plan it.

A prohibition is read only where its words leave no doubt: a sentence (or a clause after "so",
"and", "but", "also", "please") that opens with "no", "never use", "don't use", "do not use", "don't
add", "do not add", "stop using" or "avoid", and names what it rules out in one to four words before
the sentence ends or goes on with "in", "for", "on", "at", "anywhere", "anymore". What it names is
at least two words, or one that is a name (``Chakra``, ``SQLite``, ``lodash.merge``); an answer ("No,
…", "no need", "no problem", "no worries") rules nothing out, nor does a rule for a while ("don't
use X yet", "for now", "until …"). A later message of the person that names it again without
negating it (:func:`~pytest_ctxeval.reading.proposals.proposals`) allows it again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .contradicted import is_value
from .proposals import proposals

__all__ = ["Prohibition", "prohibitions"]

_RULE = re.compile(
    r"(?:^|(?<=[.!?;\n]))\s*(?:(?:so|and|but|also|please|just|ok|okay)[\s,]+)?"
    r"(?:no|never use|don't use|do not use|don't add|do not add|stop using|avoid)\s+"
    r"(?P<x>(?:[A-Za-z][\w.-]*\s+){0,3}[A-Za-z][\w.-]*?)"
    r"(?=\s+(?:in|for|on|at|anywhere|anymore|any more)\b|\s*[.;!]|\s*$)",
    re.IGNORECASE | re.MULTILINE)
_NOT_A_THING = frozenset({"need", "problem", "problems", "worries", "idea", "matter", "way", "thanks", "longer",
                          "more", "one", "changes", "issue", "issues", "rush", "doubt", "it", "this", "that", "them",
                          "i", "you", "we", "they", "not", "the", "a", "an", "just"})
_FOR_A_WHILE = re.compile(r"\b(?:yet|for now|until|unless|before|right now|at the moment|today)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Prohibition:
    what: str        # the words it rules out
    number: int      # 1-based among the person's messages
    message: str


def prohibitions(messages: list[str]) -> list[Prohibition]:
    """What the person's ``messages`` (in order) rule out and no later message allows again."""
    out = []
    for k, text in enumerate(messages):
        for m in _RULE.finditer(text):
            what = m.group("x").strip().rstrip(".")
            words = what.split()
            if not words or words[0].lower() in _NOT_A_THING or words[-1].lower() in _NOT_A_THING:
                continue
            if len(words) < 2 and not is_value(words[0], text, m.start("x")):
                continue
            end = min([i for i in (text.find(c, m.end()) for c in ".!?\n") if i >= 0] or [len(text)])
            if _FOR_A_WHILE.search(text[m.start():end]):
                continue
            if any(proposals(later, what) for later in messages[k + 1:]):
                continue   # named again, not negated: allowed again
            out.append(Prohibition(what, k + 1, text))
    return out
