"""A quote that is almost, but not, what was said: one word flipped, a number or a path changed.

``next_step_quote`` passes section 9 when one of its quotes is verbatim. A second quote in the same
section that alters the conversation ("add SQLite" quoted as "remove SQLite", port 8080 as 8081) still
tells the next context window the wrong thing, and a reformatted quote (its words regrouped) must not
turn an action into its opposite. :func:`altered_quote` finds where a quote was taken from (a run of
:data:`ANCHOR` words the text holds as written) and reads it two ways:

* a copy: the quote is the text's words there with one word changed inside it (not at its edges,
  where a summary cuts a quote);
* a reformatted quote (a list regrouped, words left out, a few added): most of its words
  (:data:`ALIKE`) are the text's in that order, and where it says other words than the text, a few
  of them (:data:`FLIP_WORDS`), they mean something else: another number or path, the opposite
  action ("add"/"remove", "with"/"without"), a negation added or dropped.

Editorial insertions in brackets (``[PR #86]``) and elisions (``…``) are not changes: the parts
between them are compared one by one.
"""

from __future__ import annotations

import re
from functools import lru_cache
from difflib import SequenceMatcher

from pytest_ctxeval.reading.quoting import ELISION, flat_lines
from pytest_ctxeval.reading.verbatim import normalize

__all__ = ["ALIKE", "ANCHOR", "altered_quote", "opposite_action", "quote_words"]

#: Words in a row a quote must share with a text to be read as taken from it.
ANCHOR = 3
#: The share of a quote's words, at least, that the text it was taken from says in the same order
#: (a reformatted quote may leave words of the text out) for a quote with other words in their
#: place, or words added, to be a misquote rather than words of the summary's own.
ALIKE = 0.8
#: A reformatted quote changes what is meant only where a few words (this many, at most) stand in
#: the place of as few of the text's: a longer difference is the summary regrouping a list.
FLIP_WORDS = 3
#: Parts of a quote shorter than this many words are not judged (a scrap, a name).
MIN_WORDS = 4

_BRACKETED = re.compile(r"\[[^\]\n]{0,120}\]")

_OPPOSITES = (("add", "remove"), ("enable", "disable"), ("create", "delete"), ("install", "uninstall"),
              ("include", "exclude"), ("show", "hide"), ("allow", "deny"), ("increase", "decrease"),
              ("keep", "drop"), ("before", "after"), ("with", "without"), ("always", "never"),
              ("push", "revert"), ("merge", "revert"), ("start", "stop"), ("open", "close"))


def opposite_action(quote: str, text: str) -> tuple[str, str] | None:
    """A word of ``quote`` whose opposite ``text`` says instead (the quote has it and not its
    opposite; the text has the opposite and not it): ("remove", "add") for a quote of "add SQLite"
    written "remove SQLite"."""
    qw, tw = set(re.findall(r"[a-z]+", quote.lower())), set(re.findall(r"[a-z]+", text.lower()))
    for a, b in _OPPOSITES:
        for mine, other in ((a, b), (b, a)):
            if mine in qw and other not in qw and other in tw and mine not in tw:
                return mine, other
    return None


_EDGE = re.compile(r"^[^\w]+|[^\w]+$")


def _words(text: str) -> list[str]:
    """The words of a normalised text without the punctuation at their edges ("fts5;" is "fts5"):
    a quote that only punctuates otherwise is not altered."""
    return [w for w in (_EDGE.sub("", w) for w in text.split(" ")) if w]


def _padded(text: str) -> str:
    """``text``'s words (:func:`_words`) joined by single spaces, with a space at each end;
    remembered for texts up to 100,000 characters (the conversation is read again for every quote
    and every mutant of a compaction)."""
    return _padded_cached(text) if len(text) <= 100_000 else " " + " ".join(_words(text)) + " "


@lru_cache(maxsize=4096)
def _padded_cached(text: str) -> str:
    return " " + " ".join(_words(text)) + " "


def quote_words(quote: str) -> str:
    """A quote as :func:`altered_quote` compares it: normalised, its words without edge punctuation."""
    return " ".join(_words(normalize(flat_lines(quote))))


def _parts(quote: str) -> list[list[str]]:
    out = []
    for piece in ELISION.split(_BRACKETED.sub(" … ", quote)):
        words = _words(normalize(flat_lines(piece)))
        if len(words) >= MIN_WORDS:
            out.append(words)
    return out


def _close_copy(words: list[str], window: list[str]) -> str | None:
    """``window``'s words from its start when the quote is them with one word changed inside it (not
    its first or last: a quote's edges are where the summary cut it): "run the server on port 8081"
    for "…port 8080", "fix the login bug" for "fix the logout bug"."""
    cand = window[:len(words)]
    if len(cand) != len(words):
        return None
    diff = [k for k, (a, b) in enumerate(zip(words, cand)) if a != b]
    if len(diff) == 1 and 0 < diff[0] < len(words) - 1:
        return " ".join(cand)
    return None


_NEGATION = frozenset({"not", "no", "never", "dont", "don't", "cannot", "can't", "without", "shouldn't",
                       "won't", "isn't", "aren't", "doesn't", "didn't"})
_PATHLIKE = re.compile(r"[/\\]|\.\w{1,5}$")


def _flip(said: list[str], quoted: list[str]) -> bool:
    """Whether ``quoted`` (words of the quote) in the place of ``said`` (words of the text) changes
    what is meant: another number, the opposite action, a negation added or dropped, another path."""
    a, b = set(said), set(quoted)
    if {w for w in a if re.search(r"\d", w)} != {w for w in b if re.search(r"\d", w)} and \
            any(re.search(r"\d", w) for w in a | b):
        return True
    if any((x in a and y in b) or (y in a and x in b) for x, y in _OPPOSITES):
        return True
    if bool(a & _NEGATION) != bool(b & _NEGATION):
        return True
    return any(_PATHLIKE.search(w) for w in a | b) and a != b


def _flipped(words: list[str], window: list[str]) -> str | None:
    """For a reformatted quote (words of the text left out, a few of the summary's own added):
    ``window``'s words around a place where the quote says, instead of a few of the text's words
    (:data:`FLIP_WORDS`), the opposite, another number or path (:func:`_flip`), or adds or drops a
    lone negation, when :data:`ALIKE` of the quote's words are the text's in order."""
    ops = SequenceMatcher(None, words, window, autojunk=False).get_opcodes()
    if sum(i2 - i1 for tag, i1, i2, _j1, _j2 in ops if tag == "equal") < ALIKE * len(words):
        return None
    for tag, i1, i2, j1, j2 in ops:
        said, quoted = window[j1:j2], words[i1:i2]
        if (tag == "replace" and len(said) <= FLIP_WORDS and len(quoted) <= FLIP_WORDS and _flip(said, quoted)) or \
                (tag in ("insert", "delete") and 0 < len(said) + len(quoted) <= 2 and bool(set(said + quoted) & _NEGATION)):
            return " ".join(window[max(j1 - 6, 0):j2 + 6])
    return None


def altered_quote(quote: str, texts: list[str]) -> str | None:
    """The words of one of ``texts`` (normalised, as :class:`~pytest_ctxeval.reading.quoting.
    Conversation` holds them) that ``quote`` was taken from and changed, or None when it is verbatim
    (part by part) or taken from none of them."""
    padded = [_padded(t) for t in texts]
    for words in _parts(quote):
        part = " " + " ".join(words) + " "
        if any(part in t for t in padded):
            continue
        for i in range(len(words) - ANCHOR + 1):
            anchor = " " + " ".join(words[i:i + ANCHOR]) + " "
            held = [(t, at) for t in padded if (at := t.find(anchor)) >= 0]
            if not held:
                continue
            for text, at in held:  # anchored at the first run a text holds: one reading per part
                tw = text.strip().split(" ")
                start = max(text[:at].count(" ") - i, 0)
                if (found := _close_copy(words, tw[start:start + len(words)])) is not None:
                    return found
                if (found := _flipped(words, tw[start:start + 2 * len(words) + 10])) is not None:
                    return found
            break
    return None
