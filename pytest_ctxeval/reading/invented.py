"""Quotes in section 6 that nobody in the session said: a "user message" the summary invented.

Section 6 lists what the person typed. A careful reader fails a list that quotes a message the person
never sent, even when every real message is there too: the next context window would follow an
instruction nobody gave ("push straight to main", "never touch the config"). A quote is *invented*
when no record of the session holds its words:

* not the person's messages, their answers to the assistant's questions (tool results), the client's
  own texts (continuation instructions, earlier summaries, hook output), nor the assistant's words
  (a summary may quote the question an answer replied to);
* not told by most of its words in any one of those records: a misquote of a real message (a word
  changed, a typo fixed) is the missing message's fault, which verbatim_user_messages reports as such.

A quote the summary marks as abridged (``…``, ``[...]``, ``[detailed plan]``) is read part by part, and
one that lists messages apart with semicolons piece by piece;
a part shorter than :data:`MIN_WORDS` words (an option label, "merged") is not judged. The summarisation
request a summary lists as the last message is tolerated by its own rule (``SUMMARY_REQUEST``).

A quote found only in the assistant's words is invented too (the assistant's sentence listed as the
person's), unless its item says whose words they are: "asked", "question", "Claude", "assistant",
"in response to" (the summary quoting the question an answer replied to). Not judged: an item that
says, outside its quotes, that it quotes no message ("quoted in a file", "from the log", "output", a
rule of the session's setup: "(session rule)", "per CLAUDE.md", "system prompt") or not word for word
("translated", "paraphrased"),
and a quote that is all one note in parentheses or brackets (``"(sort error on mixed timezones)"``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from collections.abc import Callable
from typing import Any

from pytest_ctxeval.core.messages import AssistantMessage, AttachmentMessage, UserMessage, plain_text
from pytest_ctxeval.reading.quoting import ELISION, SUMMARY_REQUEST, quotes
from pytest_ctxeval.reading.verbatim import normalize

__all__ = ["Invented", "MIN_WORDS", "Record", "invented_quotes", "session_records"]

#: A quoted part is judged from this many words on: shorter ones are labels and one-word answers.
MIN_WORDS = 5
#: A part this share of whose words one record holds, in runs of RUN words, is a (mis)quote of it.
OVERLAP = 0.6

_ITEM = re.compile(r"\n(?=[ \t]{0,6}(?:[-*•+]|\d{1,3}[.)]|>)[ \t])")
#: A quote that is all one parenthesised or bracketed note: ``"(sort error on mixed timezones)"``.
_NOTE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|«[^»\n]*»|„[^“”\n]*[“”]|「[^」\n]*」")
_BRACKETED = re.compile(r"\[[^\]\n]{0,200}\]")
_TOKEN = re.compile(r"[^\W_]+")
#: A record at most this many times as long as a quote (in words) holds it when it has most of its
#: words in any order (a message misquoted by moving words); a longer one (a file, a log) only by runs.
SHORT_RECORD = 3
#: Words a run of a misquote must hold as written to count towards OVERLAP.
RUN = 3
#: An item that says the quote is someone else's words (the question an answer replied to).
_OTHERS_WORDS = re.compile(r"\b(?:ask(?:ed|s|ing)?|question|prompt(?:ed)?|claude|assistant|agent|in response to|"
                           r"repl(?:y|ied) to|offered|option|suggest(?:ed|ion))\b", re.IGNORECASE)
#: An item that says its quote is not a message at all (words of a file, a tool's output, a log), or
#: not the message word for word (translated, paraphrased): a lost message is reported as lost.
_NOT_A_MESSAGE = re.compile(r"\b(?:quoted (?:in|from)|(?:in|from) (?:a|the) (?:file|doc|docs|document|readme|log|output|"
                            r"page|comment|issue|pr|spec|plan)|output|printed|logged|error message|"
                            # a rule of the session's setup, not a message ("(session rule)", "per CLAUDE.md")
                            r"(?:session|project|house|repo|team|standing) rules?|claude\.md|agents\.md|system prompt|"
                            # or not word for word: a translation, a paraphrase (the lost message's fault)
                            r"translat\w*|paraphras\w*|roughly|summari[sz]\w*|gist|in essence|approximately)\b",
                            re.IGNORECASE)


@dataclass(frozen=True)
class Invented:
    """A quoted part of section 6 that no record of the session holds."""

    quote: str
    item: str           # the item of section 6 that holds it
    assistant: bool     # found in the assistant's words, not in anything from the person's side
    #: The assistant's words hold the judged part word for word (not only most of its words: a
    #: paraphrase in its thinking, "The user wants me to create…", is not "the assistant said it").
    verbatim: bool = False


Record = str


class Records(list[Record]):
    """The records of one side, with what every quote's search reads of them kept: all of them in
    one text (a quote verbatim in a record is found by one scan), and each part's answer (the
    mutants of a compaction quote the same parts against the same records)."""

    @cached_property
    def joined(self) -> str:
        return "\x00".join(self)

    @cached_property
    def answers(self) -> dict[str, bool]:
        return {}


def session_records(history: list[Any]) -> tuple[list[Record], list[Record]]:
    """The records a quote may come from, each normalised as one line of words: the person's side
    (user records: typed text, tool results, client texts, earlier summaries; attachments) and the
    assistant's. Read once per compaction (a grader keeps it as a shared view)."""
    person: list[Record] = Records()
    assistant: list[Record] = Records()
    for m in history:
        side = person if isinstance(m, (UserMessage, AttachmentMessage)) else \
            assistant if isinstance(m, AssistantMessage) else None
        if side is not None and (words := _TOKEN.findall(normalize(plain_text([m])))):
            side.append(" " + " ".join(words) + " ")
    return person, assistant


def _said_in(part: str, records: list[Record]) -> bool:
    """``part`` is in one of ``records``: its words in the same order, or most of them (a misquote)
    in runs of :data:`RUN` words the record holds as written, or in any order in a record not much
    longer than it (:data:`SHORT_RECORD`)."""
    words = _TOKEN.findall(part)
    if not words:
        return True
    whole = " " + " ".join(words) + " "
    if isinstance(records, Records):
        if whole in records.joined:
            return True
        known = records.answers.get(whole)
        if known is None:
            known = records.answers[whole] = _said_in_any(words, whole, records)
        return known
    return _said_in_any(words, whole, records)


def _word_for_word(part: str, records: list[Record]) -> bool:
    """Whether one of ``records`` holds ``part``'s words in order, none left out."""
    whole = " " + " ".join(_TOKEN.findall(part)) + " "
    return any(whole in text for text in records)


def _said_in_any(words: list[str], whole: str, records: list[Record]) -> bool:
    """:func:`_said_in` record by record (``whole``: ``words`` padded and joined)."""
    runs = [" " + " ".join(words[i:i + RUN]) + " " for i in range(max(len(words) - RUN + 1, 1))]
    distinct = set(words)
    for text in records:
        if whole in text:
            return True
        if text.count(" ") <= SHORT_RECORD * len(words) and \
                len(distinct & set(text.split(" "))) >= OVERLAP * len(distinct):
            return True  # a short record holding most of its words: a message misquoted, words moved
        covered = [False] * len(words)
        for i, run in enumerate(runs):
            if run in text:
                covered[i:i + RUN] = [True] * min(RUN, len(words) - i)
        if sum(covered) >= OVERLAP * len(words):
            return True
    return False


def _outside_quotes(item: str) -> str:
    """The words of an item outside its quotes (its notes and labels)."""
    return _QUOTED.sub(" ", item)


def _parts(quote: str) -> list[str]:
    """The parts of a quote to judge: split at elisions and bracketed notes, long enough."""
    out = []
    for piece in ELISION.split(_BRACKETED.sub(" … ", quote)):
        norm = normalize(piece)
        if len(norm.split(" ")) >= MIN_WORDS:
            out.append(norm)
    return out


def _listed_apart(part: str, person: list[Record]) -> bool:
    """Whether ``part`` lists the person's messages apart with semicolons (``"fix the login bug; add a
    test for it"``): every piece of it long enough to judge is said by the person, and one is."""
    pieces = [p.strip(" .") for p in part.split(";")]
    judged = [p for p in pieces if len(p.split(" ")) >= MIN_WORDS]
    return len(pieces) > 1 and bool(judged) and all(_said_in(p, person) for p in judged)


def invented_quotes(body: str, records: Callable[[], tuple[list[Record], list[Record]]]
                    ) -> list[Invented]:
    """The quotes of section 6 (``body``) that no record of
    the session holds (``records()``: :func:`session_records`, read only when a quote is judged; see
    the module docstring)."""
    found: list[Invented] = []
    read: tuple[list[Record], list[Record]] | None = None
    for item in _ITEM.split(body):
        if _NOT_A_MESSAGE.search(_outside_quotes(item)):
            continue
        for quote in quotes(item):
            if SUMMARY_REQUEST.search(quote) or _NOTE.fullmatch(quote.strip()):
                continue  # the summarisation request (its own rule), or a note written in quote marks
            parts = _parts(quote)
            if not parts:
                continue
            if read is None:
                read = records()
            person, assistant = read
            for part in parts:
                if _said_in(part, person) or _listed_apart(part, person):
                    continue
                said_by_assistant = _said_in(part, assistant)
                if said_by_assistant and _OTHERS_WORDS.search(item):
                    continue
                found.append(Invented(quote, item, said_by_assistant,
                                      said_by_assistant and _word_for_word(part, assistant)))
                break
    return found

