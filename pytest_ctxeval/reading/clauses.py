"""Where a clause of a person's message opens, and what a phrase at its start names: the reading
shared by :mod:`.cancellations` ("forget the PDF export") and :mod:`.prohibitions` ("don't touch the
sitemap").

A clause opens after a sentence end, a comma, a semicolon, a colon, a dash or a line break
(:data:`CLAUSE`), and its phrase may follow a lead ("actually,", "ok", "wait,", "let's", "just";
:data:`LEAD`). A phrase does not count in a conditional sentence ("if it fails, scrap X":
:data:`CONDITION`) nor after a negation or a question ("don't forget X", "did you forget X":
:func:`negated_before`). Its object is trimmed to the noun phrase it names, and a pronoun or a
generic word names nothing (:func:`phrase_object`).
"""

from __future__ import annotations

import bisect
import re
from functools import lru_cache

__all__ = ["CLAUSE", "CONDITION", "LEAD", "clause_starts", "negated_before", "phrase_object", "sentence_around"]

#: A clause opens after a sentence end, a comma, a semicolon, a dash or a line break.
CLAUSE = re.compile(r"(?:^|(?<=[.!?;,:\n])|(?<=\s[-–—]))\s*")
#: What may stand before a clause's phrase: acknowledgements and openers, then "let's", "we can", ...
LEAD = (r"(?:(?:actually|ok(?:ay)?|oh|hmm+|wait|no|nah|so|and|but|also|then|please|just|right|alright|well|"
        r"on second thought|on reflection|scratch that|you know what|in that case|for now)\b[\s,]*)*"
        r"(?:(?:let's|lets|let us|we can|you can|i think we can|we could|go ahead and|feel free to|just)\s+)?")
#: A sentence that makes its phrase conditional: "if it fails, forget the retry".
CONDITION = re.compile(r"\b(?:if|when|whenever|unless|in case|otherwise|until|should|whether)\b", re.IGNORECASE)
#: Words right before a phrase that negate it or ask about it: "don't forget X", "did you forget X".
_NEGATED_BEFORE = re.compile(r"(?:\b(?:don't|do not|never|not|didn't|did you|you|to|i|we)\s+)$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
#: Where the object ends: a joined predicate or a reason ("forget the PDF export and just write tests").
_OBJECT_END = re.compile(r"\s+(?:and|but|so|since|because|as|then|we|it|it's|that's|for now|for the moment|any ?more|"
                         r"after all|altogether|entirely|completely|too|either|please|pls|instead|though|yet|"
                         r"(?:is|are|isn't|aren't|was)\b)\b.*$|\s+-\s.*$", re.IGNORECASE | re.DOTALL)
_DETERMINER = re.compile(r"^(?:(?:about|with|on|the|a|an|that|this|those|these|all|any|my|our|your|whole|entire|"
                         r"idea of|part about|bit about|doing|adding|building|making|implementing|writing|creating)\s+)+",
                         re.IGNORECASE)
_TRAILING = re.compile(r"(?:\s+(?:part|bit|idea|stuff|thing|things|step|for now|request|work|to|of|for|with|in|on|at|"
                       r"next|by|from|the|a|an))+$", re.IGNORECASE)
#: Objects that name nothing the reader can hold a summary to.
_GENERIC = {"it", "that", "this", "them", "those", "these", "everything", "all", "rest", "that one", "this one",
            "above", "last", "previous", "tests", "test", "docs", "changes", "change", "code", "file", "files",
            "step", "steps", "task", "tasks", "plan", "idea", "thing", "things", "last one", "last step",
            "last part", "rest of it", "what i said", "my last message", "the last message", "others",
            "other one", "one", "other", "both", "either", "anything", "something", "me", "you", "him", "her", "us",
            "anything else", "everything else", "something else", "nothing else", "else", "the rest",
            "other files", "other stuff", "stuff", "unrelated code", "unrelated files"}
_WORDS = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_'-]*")
_MAX_OBJECT_WORDS = 7


def clause_starts(message: str) -> list[int]:
    """Where the clauses of ``message`` open (after their leading blanks), in order."""
    return [m.end() for m in CLAUSE.finditer(message) if m.end() < len(message)]


def sentence_around(message: str, at: int) -> tuple[str, str]:
    """The words of ``at``'s sentence before it, and its sentence with the next one."""
    ends = _sentence_ends(message)   # each sentence end is one character: it ends right after it
    if at > 0 and message[at - 1] in ".!?\n":
        start = at                   # a mark right before ``at`` ends the sentence before it
    else:
        i = bisect.bisect_right(ends, at)
        start = ends[i - 1] if i else 0
    j = bisect.bisect_right(ends, at)
    return message[start:at], message[start:ends[j + 1] if len(ends) > j + 1 else len(message)]


@lru_cache(maxsize=64)
def _sentence_ends(message: str) -> tuple[int, ...]:
    """Where each sentence of ``message`` ends (read once per message: a long one has many clauses)."""
    return tuple(m.end() for m in _SENTENCE_END.finditer(message))


def negated_before(message: str, at: int) -> bool:
    """Whether the words right before ``at`` negate the phrase there or ask about it ("don't forget")."""
    return bool(_NEGATED_BEFORE.search(message[max(0, at - 12):at]))


def phrase_object(raw: str) -> str | None:
    """What a phrase names, trimmed to its noun phrase; None for a pronoun or a generic word.

    >>> phrase_object("the PDF export and just write tests"), phrase_object("it")
    ('PDF export', None)
    """
    text = _OBJECT_END.sub("", " ".join(raw.split())).strip(" '’`*_")
    text = _DETERMINER.sub("", text)
    text = _TRAILING.sub("", text).strip(" '’`*_")
    words = _WORDS.findall(text)
    if not words or len(words) > _MAX_OBJECT_WORDS or text.lower() in _GENERIC:
        return None
    if len(words) == 1 and (len(words[0]) < 4 or words[0].lower() in _GENERIC):
        return None
    return text
