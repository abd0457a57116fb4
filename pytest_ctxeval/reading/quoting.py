"""Quoting, as the fidelity graders read it (``verbatim_user_messages`` in ``graders/all_messages.py``,
``next_step_quote`` in ``graders/cited_next_step.py``): which person-typed messages a summary kept,
and what section 9 quotes.

* :func:`message_kept`: a message verbatim (pytest_ctxeval.reading.verbatim), or a long one's head and tail;
  :func:`drafts`: a message the person re-sent revised right after (the resend is what must survive);
* :func:`quotes` / :func:`quote_in` / :func:`tokens_in`: the quotes of a next step ("…", “…”, '…',
  ``>`` lines) and whether one is verbatim, or reformatted, in the recent conversation;
  :func:`code_quotes` / :func:`unmarked_quote`: the person's words set in an inline code span, or
  repeated word for word without quote marks;
  :func:`said_after`: what the assistant said and did (text, tool inputs, tool results);
  :data:`NO_STEP` / :data:`NO_STEP_SENTENCE`: a section 9 that proposes nothing.
"""

from __future__ import annotations

import difflib
import re
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Sequence

from .extract import LONG_MESSAGE_CHARS, LONG_MESSAGE_KEEP, message_fragments, significant_tokens
from ..core.messages import AssistantMessage, ToolResultBlock, UserMessage, result_text, text_of, tool_uses
from .pasted import prose_kept
from .pasted_chat import chat_start, speaker_lines
from .refinement import running_requests, starts_new_task
from .summary import normalize_ws
from .verbatim import Haystack, Match, find, normalize, strip_fences

__all__ = ["copy_runs_on", "code_quotes", "unmarked_quote", "CODE_SPAN", "FENCE", "fenced_blocks", "UNMARKED_WORDS", "whole_context", "message_kept", "long_message_gap", "long_prose_note", "SUMMARY_REQUEST", "listed_summary_request", "drafts", "Conversation", "recent_conversation", "HOW", "NO_STEP", "NO_STEP_SENTENCE", "quotes", "quote_in",
           "flat_lines", "readings", "said_after", "tokens_in", "GO_AHEAD_WORDS", "QUOTE_WORDS", "TRAIL", "block_quotes"]


def whole_context(case: Any) -> Haystack:
    """The whole post-compact context as one haystack: a fact named in another section still survived."""
    cached = case.__dict__.get("_whole_haystack")
    if cached is None:
        text = (case.summary_message or case.summary) + ("\n" + case.kept_text if case.kept_text else "")
        cached = case.__dict__["_whole_haystack"] = Haystack(text)
    return cached


def message_kept(text: str, hay: Haystack, rare: Callable[[str], bool] | None = None,
                 others: Sequence[str] = ()) -> Match:
    """A person's message is kept when it is verbatim (see pytest_ctxeval.reading.verbatim), or, for a long
    one, its head and tail are. ``rare``: which of its words may be typos (:func:`verbatim.find`);
    ``others``: the person's other messages (a quote may list several of them, :func:`copy_runs_on`)."""
    found = find(text, hay, rare)
    if found and not (found.how == "exact" and copy_runs_on(text, hay, others)):
        return found
    if found:
        return Match(False)
    frags = message_fragments(text)
    if len(frags) == 2 and all(find(f, hay, rare) for f in frags):
        return Match(True, "head and tail", f"long paste: its first and last {LONG_MESSAGE_KEEP} characters only")
    if len(frags[0]) > LONG_MESSAGE_CHARS and prose_kept(text, hay):
        return Match(True, "prose", "long prose kept, the pasted lines in it summarised")
    return Match(False)


#: A quote that holds a message and at least this many words more is a copy with words added.
ADDED_WORDS = 2
_WORD_GOES_ON = re.compile(r"^(?:\w|[-/.]\w)")
#: A note in square brackets inside a quote: the summariser's, not the person's words.
_EDITORIAL_NOTE = re.compile(r"\[[^\[\]\n]{1,120}\]")


def copy_runs_on(text: str, hay: Haystack, others: Sequence[str] = ()) -> str:
    """What every copy of ``text`` in ``hay`` adds, when no copy is the message alone: a copy that
    runs on into a longer word or path (``…/api-reference/pages-v2`` for ``…/pages``), or a quote
    that holds the message and words the person did not type (``"fix the login bug. Also drop the
    old tables."``). "" when one copy is the message itself (quoted alone, or unquoted between word
    edges) or the message is not there word for word. A quote whose marks cannot be paired (the
    message has quotes of its own) is not read as one. A quote that lists the message with others
    of the person's messages (``others``), each whole and apart by " / " (``"3. New / try again"``,
    a real 2.1.205 section 6 for two messages in a row) or by semicolons (``"fix the login bug; add
    a test for it"``), adds nothing the person did not type.

    >>> copy_runs_on("fix the login bug", Haystack('- "fix the login bug. Also drop the old tables."'))
    'also drop the old tables.'
    >>> copy_runs_on("fix the login bug", Haystack('- "fix the login bug" (first request)'))
    ''
    >>> copy_runs_on("fix the login bug", Haystack('- "fix the login bug / try again"'), ["try again"])
    ''
    >>> copy_runs_on("fix the login bug", Haystack('"fix the login bug; add a test"'), ["add a test"])
    ''
    """
    norm = normalize(text)
    if len(norm.split(" ")) < 2 or norm not in hay.norm:
        return ""
    copies, added = 0, ""
    start = hay.norm.find(norm)
    while start >= 0:
        end = start + len(norm)
        before, after = hay.norm[start - 1: start], hay.norm[end: end + 2]
        if re.match(r"\w", before) or _WORD_GOES_ON.match(after):
            added = added or hay.norm[end: end + 40].split(" ")[0]
        else:
            copies += 1
        start = hay.norm.find(norm, start + 1)
    if copies == 0:
        return added
    # marks on two lines are the ends of two quotes, not one quote
    for qn in _one_line_quotes(hay.text):
        if norm not in qn or (others and _lists_messages(qn, norm, others)):
            continue
        # An editor's note in square brackets ("[followed by the summary request]", "[screenshot
        # attached]") says something about the message, not words the person is said to have typed.
        rest = _EDITORIAL_NOTE.sub(" ", qn.replace(norm, " ", 1))
        if len(re.findall(r"[^\W_]{2,}", rest)) >= ADDED_WORDS:
            copies -= qn.count(norm)
            added = added or re.sub(r"^[^\w]+", "", normalize_ws(rest))
    return added if copies <= 0 else ""


def _lists_messages(quote: str, norm: str, others: Sequence[str]) -> bool:
    """Whether the normalised ``quote`` is the message ``norm`` and other messages of the person,
    each whole, apart by " / " or by semicolons (the message's own flattened lines may hold " / " or
    ";" too)."""
    known = {normalize(o).strip(" .") for o in others}
    for sep in (" / ", ";"):
        if sep not in quote:
            continue
        parts = quote.split(sep)
        k = norm.count(sep) + 1
        for i in range(len(parts) - k + 1):
            if sep.join(parts[i:i + k]).strip(" .") == norm.strip(" ."):
                rest = [p.strip(" .") for p in parts[:i] + parts[i + k:]]
                if rest and all(p in known for p in rest if p):
                    return True
    return False


@lru_cache(maxsize=32)
def _one_line_quotes(text: str) -> tuple[str, ...]:
    """The quotes of ``text`` that stand on one line, normalised, in :data:`QUOTES` order: read once
    per text (a summary's context is searched for every message of the session)."""
    return tuple(normalize(m.group(1)) for p in QUOTES for m in p.finditer(text) if "\n" not in m.group(1))


def long_message_gap(text: str, hay: Haystack) -> str:
    """What a summary lost of a long message it did not keep head and tail of, in words a reader can
    check: how many of the first and of the last :data:`LONG_MESSAGE_KEEP` characters are there
    verbatim ("its first 153 characters are there, then it is cut; none of its last 300 are"), or
    "" for a message that is not long."""
    frags = message_fragments(text)
    if len(frags) != 2:
        return ""
    if (chat := chat_start(text)) > 0 and text[:chat].strip():
        return _chat_gap(text, chat, hay)
    head, tail = frags
    said = []
    for which, frag in (("first", head), ("last", tail)):
        if find(frag, hay):
            said.append(f"its {which} {LONG_MESSAGE_KEEP} are there")
            continue
        kept = _verbatim_extent(frag, hay, from_start=which == "first")
        if kept:
            said.append(f"only {kept} of its {which} {LONG_MESSAGE_KEEP} are there" +
                        (" (the start, then it is cut)" if which == "first" else " (the very end)"))
        else:
            said.append(f"none of its {which} {LONG_MESSAGE_KEEP} are")
    return (f"; the long-message policy asks for its first and last {LONG_MESSAGE_KEEP} characters verbatim: "
            + "; ".join(said))


def _chat_gap(text: str, chat: int, hay: Haystack) -> str:
    """:func:`long_message_gap` for a typed lead then a pasted conversation: the lead is what must be
    kept (reading/pasted_chat.py); the conversation may be summarised."""
    lead = normalize_ws(text[:chat])
    kept = _verbatim_extent(lead, hay, from_start=True)
    ends = lead if len(lead) <= 40 else "…" + lead[-39:]
    told = f"is cut after {kept} characters" if kept else "is not there verbatim"
    return (f"; it is a typed lead ({len(lead):,} characters, up to \"{ends}\") then a pasted conversation "
            f"({len(normalize_ws(text[chat:])):,} characters, {speaker_lines(text)} '> speaker:' lines), which may be "
            f"summarised: the typed lead {told}")


def long_prose_note(text: str) -> str:
    """For a message over :data:`LONG_MESSAGE_CHARS` that is the person's own prose (kept in full, not
    by its head and tail): a note a failure's reason adds; else ""."""
    norm = normalize_ws(text)
    if len(norm) <= LONG_MESSAGE_CHARS or len(message_fragments(text)) != 1:
        return ""
    return (f"; it is {len(norm):,} characters of the person's own prose, which must be kept in full (only a long "
            "paste, a log, code or a document, may be kept by its first and last "
            f"{LONG_MESSAGE_KEEP} characters)")


def _verbatim_extent(fragment: str, hay: Haystack, *, from_start: bool) -> int:
    """How many characters of ``fragment`` from its start (or to its end) are verbatim in ``hay``,
    at word boundaries; 0 when fewer than 20 are."""
    words = fragment.split(" ")
    lo, hi = 0, len(words)  # find() of k words holds for every shorter run: bisect the longest
    while lo < hi:
        mid = (lo + hi + 1) // 2
        piece = " ".join(words[:mid] if from_start else words[-mid:])
        if len(piece) >= 20 and find(piece, hay):
            lo = mid
        else:
            hi = mid - 1
    piece = " ".join(words[:lo] if from_start else words[-lo:]) if lo else ""
    return len(piece) if len(piece) >= 20 else 0


#: The opening of Claude Code's summarisation request (seed 004:477-483; the prompt the model is sent as
#: the last user message of the compaction call): a summary that lists it among the person's messages
#: lists Claude Code's words, not the person's.
SUMMARY_REQUEST = re.compile(r"Your task is to create a detailed summary of the conversation", re.IGNORECASE)


def listed_summary_request(section: Any, summary: str) -> int | None:
    """The summary line where section 6 (``section``) lists the summarisation request itself as a user
    message (fasthooks 2.0.76, line 126), or None."""
    if section is None or not SUMMARY_REQUEST.search(section.body):
        return None
    lines = summary.split("\n")
    for i in range(max(section.line - 1, 0), len(lines)):
        if SUMMARY_REQUEST.search(lines[i]):
            return i + 1
    return section.line


def drafts(people: list, history: list) -> dict[int, int]:
    """Messages the person sent again, revised, right after (an interrupted draft and its resend):
    index of the draft -> index of the resend. The resend is what must survive."""
    out: dict[int, int] = {}
    for i in range(len(people) - 1):
        a, b = normalize(people[i].text), normalize(people[i + 1].text)
        if not a or a == b:
            continue
        if not _cut_short(history[people[i].index:people[i + 1].index + 1]):
            # The assistant answered the first in full: the second is a new message, however alike
            # ("Next, module 2: …" then "Next, module 3: …"), and both must survive.
            continue
        if b.startswith(a[: max(12, len(a) * 3 // 4)]) or covered(a[:600], b[:1200]) >= 0.75:
            out[i] = i + 1
    return out


_INTERRUPTED = "[Request interrupted by user"


def _cut_short(span: list) -> bool:
    """Whether the first message of ``span`` (a person's message up to and including their next one)
    was cut short: nothing of the assistant's in between (sent twice in a row, the API merges them),
    or the person interrupted the reply (Claude Code writes ``[Request interrupted by user]`` as a
    user text, ``… for tool use]`` as a tool result)."""
    if not any(isinstance(m, AssistantMessage) for m in span[1:-1]):
        return True
    for m in span[1:]:
        if isinstance(m, UserMessage):
            text = m.content if isinstance(m.content, str) else text_of(m.content, include_results=True)
            if _INTERRUPTED in text:
                return True
    return False


#: A draft's text counts as found in its resend only in runs of at least this many characters: the
#: letters of a short message ("yes", "ok") are found, in order, scattered through almost any longer
#: one ("can you explain the difference…"), which made a real interrupted "yes" the draft of the
#: different question the person asked next (an unseen 2.1.7 session).
DRAFT_BLOCK = 3


def covered(a: str, b: str) -> float:
    """The share of ``a``'s characters found, in order, in ``b``, in runs of :data:`DRAFT_BLOCK`
    characters or more."""
    blocks = difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
    return sum(m.size for m in blocks if m.size >= DRAFT_BLOCK) / len(a) if a else 0.0


HOW = {"lines": "with line breaks flattened", "typo": "with a typo fixed", "lead": "typed lead kept, pasted "
        "output summarised", "head and tail": "long paste, head and tail only kept",
       "prose": "long prose kept, the pasted lines in it summarised", "elsewhere": "command arguments stated outside section 6",
       "tail": "typed paragraph kept, pasted output before it summarised",
       "paste": "pasted output only, its error line kept",
       "command": "command kept, its pasted output summarised", "emoji": "with an emoji dropped",
       "chat": "typed lead kept, the conversation pasted after it summarised",
       "acknowledgement": "kept but for an acknowledgement it opens or ends with (\"this is good.\")"}

NO_STEP = re.compile(r"^\W*(?:none|n/a|na|nothing|no (?:explicit |further |immediate |specific )?(?:next )?steps?|"
                      r"no next step)\b", re.IGNORECASE)
#: A first sentence that says there is nothing to do until the person speaks: "The task is complete;
#: awaiting the user's next instruction", "No further action is required", "Wait for the user to confirm".
NO_STEP_SENTENCE = re.compile(
    r"\bno (?:further |explicit |immediate |specific |pending |other )?(?:next )?(?:steps?|actions?|work|tasks?)\b|"
    r"\bnothing (?:further |else |more )?(?:to do|pending|(?:is )?(?:required|needed|requested))\b|"
    r"\b(?:await(?:ing)?|wait(?:ing)? for) (?:the )?user|\bno action (?:is )?(?:needed|required)\b|"
    r"\b(?:task|work|request)s? (?:is |are |was |were |has been |have been )?(?:now )?(?:fully )?"
    r"(?:complete|completed|done|finished)\b[^.]*\b(?:await|wait|unless|until|no )", re.IGNORECASE)
QUOTES = (re.compile(r"\"([^\"]{2,})\""), re.compile(r"“([^”]{2,})”"), re.compile(r"^\s*>\s?(.{2,})$", re.MULTILINE),
           # 'a quote in single quotes', not an apostrophe: starts after a space or ':', at least three words
           # (written to start at its quote mark, and to read the words between the marks only when the
           # closing mark, the first one after it, is on one of the next three lines and followed by
           # what ends a quote: the same matches as "(?:(?<=[\s:(])|^)'(…)'", which tried every split
           # of a 56,000-character line between two marks, a second a context; test_quote_patterns.py)
           re.compile(r"'(?<![^\s:(]')(?=[^'\n]*+(?:\n[^'\n]*+){0,2}+'(?:[\s.,;:!?)]|$))"
                      r"([^'\n]*?\s[^'\n]*?\s[^'\n]{2,}?)'(?=[\s.,;:!?)]|$)", re.MULTILINE),
           re.compile(r"‘([^’]{2,})’"),
           # the quote marks of other languages: «guillemets», „German“, 「corner brackets」 and 『』
           re.compile(r"«[ \u00a0]?([^»\n]{2,}?)[ \u00a0]?»"), re.compile(r"„([^“”\n]{2,})[“”]"),
           re.compile(r"「([^」\n]{2,})」"), re.compile(r"『([^』\n]{2,})』"))
# Elisions split a quote into parts that must each be verbatim. The media markers count as
# elisions too: the summariser is shown [image] / [document] where the person pasted one
# (stripImagesFromMessages, 003:96-106), so a quote that keeps the marker is still verbatim.
ELISION = re.compile(r"\s*(?:\[…\]|\[\.\.\.\]|…|\.\.\.|\[image\]|\[document\])\s*")
#: A last message this short that only gives the go-ahead ("Kick it off", "yes do it") refers back to
#: the request before it: both are the most recent conversation.
GO_AHEAD_WORDS = 4


#: An inline code span (`` `…` ``): Markdown's other way to set words apart. It is a quote when it
#: holds what the person said (:func:`code_quotes`), and code (a path, a name, a line read) otherwise.
CODE_SPAN = re.compile(r"(?<!`)`([^`\n]{2,})`(?!`)")
#: A fenced code block (```` ```bash … ``` ````, ``~~~``): its quote marks are code too (a commit message in a
#: proposed ``git commit -m "…"``), unless what they quote is the person's (:func:`fenced_blocks`).
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)


def fenced_blocks(text: str) -> list[str]:
    """The contents of the fenced code blocks of ``text`` (without their fence lines)."""
    return [m.group(2) for m in FENCE.finditer(text)] if "```" in text or "~~~" in text else []
#: Section 9 holding this many words of a request in a row, without quote marks, repeats it word for
#: word (:func:`unmarked_quote`): longer than a phrase a summary would say in its own words.
UNMARKED_WORDS = 8
#: ... or a whole message of at least this many words ("continue with the plan" is a summary's own phrase).
UNMARKED_WHOLE_WORDS = 5


def code_quotes(text: str, spoken: list[str], min_len: int) -> list[str]:
    """The inline code spans of ``text`` that quote one of ``spoken`` (the person's messages,
    normalised): verbatim in it, at least ``min_len`` long or the whole message (see :func:`quote_in`).
    ```cargo test``` in a next step is code; `` `5 line breaks after summary. update the skill too` ``
    is the person's request."""
    spans = [normalize_ws(m.group(1)) for m in CODE_SPAN.finditer(text)]
    return [q for q in spans if q and quote_in(q, spoken, min_len)]


_EDGE = re.compile(r"^[^\w]+|[^\w]+$")


def unmarked_quote(text: str, spoken: list[str], min_len: int) -> str:
    """The longest run of words of one of ``spoken`` (normalised messages) that ``text`` holds word
    for word without quote marks (plain, **bold**; outside its quotes and code spans), when it reads as a quote: the whole message, at
    least ``min_len`` characters long, or at least :data:`UNMARKED_WORDS` words of it; else ""."""
    # Outside every quote and code span: part of a quote that is not verbatim (a misquote) is not
    # an unmarked quote of its words.
    for pattern in (*QUOTES, CODE_SPAN):
        text = pattern.sub(" \x00 ", text)  # a word no message has: no run goes across it
    hay = [w if w == "\x00" else _EDGE.sub("", w) for w in normalize(flat_lines(text)).split(" ")]
    best = ""
    for message in spoken:
        raw = message.split(" ")
        words = [_EDGE.sub("", w) for w in raw]
        if not any(words):
            continue
        sm = difflib.SequenceMatcher(None, hay, words, autojunk=False)
        block = sm.find_longest_match(0, len(hay), 0, len(words))
        run = " ".join(raw[block.b: block.b + block.size])
        whole = block.size == len(words) >= UNMARKED_WHOLE_WORDS and len(message) >= min_len
        # Part of a message counts up to the end of one of its clauses: "... comments for" then
        # other words is the summary's own sentence, not a quote.
        ends_clause = block.b + block.size == len(words) or (block.size and raw[block.b + block.size - 1][-1:] in ".,;:!?")
        if (whole or (block.size >= UNMARKED_WORDS and ends_clause)) and len(run) > len(best) \
                and not _edited_copy(hay, words, block.a, block.b, block.size):
            best = run
    return best


def _edited_copy(hay: list[str], words: list[str], a: int, b: int, size: int) -> bool:
    """Whether the run ``hay[a:a+size] == words[b:b+size]`` is part of a copy of the message with a
    word changed, added or left out next to it: the words on the far side of that one edit match
    again (two in a row). "lets address all redundant and orphaned comments for unstaged files" in
    place of "... for staged files" is a misquote, not a quote of its first eight words."""
    for di, dj in ((1, 1), (1, 0), (0, 1)):  # a word changed, added, left out
        i, j = a + size + di, b + size + dj  # after the run
        if len(words[j:j + 2]) == 2 and hay[i:i + 2] == words[j:j + 2]:
            return True
        i, j = a - 1 - di, b - 1 - dj  # before the run
        if i >= 1 and j >= 1 and hay[i - 1:i + 1] == words[j - 1:j + 1]:
            return True
    return False


#: A block quote that attributes the quote it holds: a short label, a colon, then one quoted string
#: (``> User: "…"``, ``> User's exact words: "…"``). The quote marks delimit the words quoted; the
#: label says who spoke, it is not part of the quote.
_ATTRIBUTED = re.compile(r"^[^\"“”:\n]{1,40}:\s*(?:\"[^\"]+\"|“[^”]+”)\s*$")


def quotes(text: str) -> list[str]:
    """The quoted strings of ``text``; quote marks inside a code span or a fenced code block are code
    (``ssh host "<command>"``, ``git commit -m "…"``), not a quote (a code span itself is read by
    :func:`code_quotes`, a block's own quotes by :func:`fenced_blocks`' reader). A block quote
    that attributes a quoted string (``> User: "fix it"``) quotes that string, not its label: the
    string is read by the quote-mark patterns."""
    code = [m.span() for m in CODE_SPAN.finditer(text)] if "`" in text else []
    if "```" in text or "~~~" in text:
        code += [m.span(2) for m in FENCE.finditer(text)]
    out = []
    for pattern in QUOTES:
        out += [normalize_ws(m.group(1)) for m in pattern.finditer(text)
                if not any(a < m.start() < b for a, b in code)
                and not (pattern is QUOTES[2] and _ATTRIBUTED.match(m.group(1).strip())
                         and len(m.group(1).split(":", 1)[0].split()) <= 6)]
    return [q for q in out if q]


_BLOCK_QUOTE = re.compile(r"(?:^[ \t]*>[ \t]?[^\n]*(?:\n|$)){2,}", re.MULTILINE)


def block_quotes(text: str) -> list[str]:
    """The block quotes of ``text`` that run over several lines (a message wrapped as ``> …`` lines),
    each as one quote: :func:`quotes` reads a block quote line by line, which cuts a wrapped message
    into scraps. A block whose lines quote with marks of their own (``> "…"``) holds several quotes,
    read by :func:`quotes`."""
    out = []
    for m in _BLOCK_QUOTE.finditer(text):
        lines = [re.sub(r"^[ \t]*>[ \t]?", "", line) for line in m.group(0).split("\n")]
        if sum(1 for line in lines if line.strip()) < 2 or any(p.search(line) for line in lines for p in QUOTES[:2]):
            continue  # one line, or lines that quote with marks of their own: each line is its quote
        out.append(normalize_ws(" ".join(lines)))
    return out


TRAIL = re.compile(r"[\s.,;:!?]+$")


def flat_lines(text: str) -> str:
    """``text`` on one line: line breaks, the list markers after them and code fence lines as one space."""
    return re.sub(r"\s*\n\s*(?:[-*•]\s+|\d+[.)]\s+)?", " ", strip_fences(text))


#: A line of a typed list: a bullet (``-``, ``*``, ``•``) or a number (``1.``, ``2)``) at its start.
_LIST_LINE = re.compile(r"\n[ \t]*(?:[-*•]|\d+[.)])[ \t]+")


#: A text longer than this (a tool's output, a long paste) is read without its list markers only: a
#: quote in section 9 lays out what the person or the assistant said, not a file's listing.
_LIST_READING_CHARS = 20_000


def readings(text: str) -> list[str]:
    """The ways a quote may lay out ``text`` (normalised), as the verbatim check reads a message: its
    lines joined without their list markers (:func:`flat_lines`), and, for a typed list, its lines
    joined with their markers kept (``three things: - cache the lookup - log at WARNING``, what
    :func:`pytest_ctxeval.reading.verbatim.find` calls verbatim). Line breaks are layout either way."""
    flat = normalize(flat_lines(text))
    if "\n" not in text or len(text) > _LIST_READING_CHARS or not _LIST_LINE.search(text):
        return [flat]
    kept = normalize(strip_fences(text))
    return [flat] if kept == flat else [flat, kept]


def quote_in(quote: str, texts: list[str], min_len: int, whole: list[str] | None = None) -> bool:
    """Every part of ``quote`` (split at elisions) appears in one of ``texts`` (compared after
    pytest_ctxeval.reading.verbatim.normalize) and is at least ``min_len`` long, or the whole of one
    of ``whole`` (default ``texts``; next_step_quote passes the person's messages: a short request is
    the task itself, a short reply such as "On it." shows none)."""
    parts = [TRAIL.sub("", normalize(flat_lines(p))) for p in ELISION.split(quote) if p and normalize(p)]
    parts = [p for p in parts if p]
    if not parts:
        return False
    wholes: set[str] | None = None  # the texts as whole quotes: read only for a short part
    for part in parts:
        if not any(part in t for t in texts):
            return False
        if len(part) < min_len:
            if wholes is None:
                wholes = {TRAIL.sub("", t) for t in (texts if whole is None else whole)}
            if part not in wholes:
                return False
    return True


@dataclass
class Conversation:
    """The most recent conversation, as ``next_step_quote`` reads it (and the operators that make
    it drift): ``run``, the person's latest request (its messages); ``recent``, the texts a quote
    of it may come from (normalised); ``older``, the person's earlier messages (normalised);
    ``after``, what the assistant said and did after the request (raw); ``running``, the earlier
    requests the latest one refines (:func:`pytest_ctxeval.reading.refinement.running_requests`):
    the task still in progress, oldest first."""

    run: list[Any]
    recent: list[str]
    older: list[str]
    after: list[str]
    running: list[Any] = field(default_factory=list)


def recent_conversation(history: list, people: list) -> Conversation:
    """The last person-typed message, the ones sent right before it with no assistant message
    between (the API merges consecutive user turns, so "fix it" sent after an interrupt is one
    request with what came before), the request a bare go-ahead ("Kick it off") starts (a short
    message that opens a new task, "now add CSV export", stands alone), and what the assistant said
    and did after it (its text, the plan or command it wrote, the results it got).
    Compacted right after the last request, before any reply: also the turn that request answered.
    ``people``: :func:`pytest_ctxeval.reading.extract.person_messages` of ``history`` (not empty)."""
    last = people[-1]
    run = [last]
    for earlier in reversed(people[:-1]):
        if any(isinstance(m, AssistantMessage) for m in history[earlier.index + 1:run[0].index]):
            break
        run.insert(0, earlier)
    if len(people) > len(run) and len(normalize(last.text).split()) <= GO_AHEAD_WORDS and \
            not starts_new_task(last.text):   # "now add CSV export" is a request of its own
        run.insert(0, people[-len(run) - 1])
    recent = [r for p in run for r in readings(p.text)]
    if len(run) > 1:
        recent += readings("\n".join(p.text for p in run))
    after = said_after(history[last.index + 1:])
    recent += [r for t in after for r in readings(t)]
    if not any(isinstance(m, AssistantMessage) for m in history[last.index + 1:]):
        before = people[-len(run) - 1].index + 1 if len(people) > len(run) else 0
        recent += [r for t in said_after(history[before:run[0].index]) for r in readings(t)]
    older = [r for p in people[:-len(run)] for r in readings(p.text)]
    return Conversation(run, recent, older, after, running_requests(history, people, run))


def said_after(messages: list) -> list[str]:
    """What the assistant said and did in ``messages``: its text, the text inputs of its tool calls
    (a plan it wrote, the command it ran) and the tool results it got."""
    out = []
    for m in messages:
        if isinstance(m, AssistantMessage):
            if (t := text_of(m.content)).strip():
                out.append(t)
            for use in tool_uses(m):
                out += [v for v in _strings(use.input) if len(v) >= 8]
        elif isinstance(m, UserMessage) and not isinstance(m.content, str):
            out += [result_text(b) for b in m.content if isinstance(b, ToolResultBlock)]
    return out


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


#: A quote counts as reformatted (a list rewritten as a sentence) when at least this share of its
#: words, and at least 8 of them, are in one recent text, and no two of its words are swapped.
QUOTE_WORDS = 1.0
#: Two words of a quote are swapped when the text says them, this close, only the other way round.
SWAP_WINDOW = 3


def tokens_in(quote: str, texts: list[str]) -> bool:
    """A reformatted quote: most of its words in one recent text, none of its neighbouring words
    swapped, and with the same polarity. A summary that rewrites a plan's list as one sentence
    keeps the words of each item in order (it may drop or regroup items); "sense. Makes Fix it"
    for "Makes sense. Fix it" is a paraphrase, not a quote; and a quote that drops the "don't"
    before a word the text only ever negates says the opposite."""
    # read as the texts are (normalised): "don't" is "dont" there, not "don" and "t"
    tokens = significant_tokens(normalize(quote))
    if len(tokens) < 8:
        return False
    for text in texts:
        have = set(significant_tokens(text))
        if sum(t in have for t in tokens) / len(tokens) >= QUOTE_WORDS and not _swapped(quote, text) \
                and _same_polarity(quote, text):
            return True
    return False


_CLAUSE = re.compile(r"[,;:.!?()\[\]{}<>\"“”…—–|\n]|\s[-*•]\s|\s->\s|→")


def _swapped(quote: str, text: str) -> tuple[str, str] | None:
    """Two neighbouring words of ``quote`` (one of them significant) that ``text`` says within
    :data:`SWAP_WINDOW` words of each other only in the other order."""
    t = _WORD.findall(normalize(text))
    where: dict[str, list[int]] = {}
    for i, w in enumerate(t):
        where.setdefault(w, []).append(i)
    significant = set(significant_tokens(normalize(quote)))
    # Neighbours within one clause: a reformatting may regroup a list's items, never a phrase's words.
    pairs = [p for clause in _CLAUSE.split(normalize(quote)) for q in [_WORD.findall(clause)] for p in zip(q, q[1:])]
    for a, b in pairs:
        if a == b or a not in where or b not in where or not {a, b} & significant:
            continue
        gaps = [j - i for i in where[a] for j in where[b] if abs(j - i) <= SWAP_WINDOW]
        if gaps and all(g < 0 for g in gaps):
            return a, b
    return None


_NEGATION = re.compile(r"^(?:not|no|never|don't|dont|doesn't|didn't|won't|can't|cannot|shouldn't|mustn't|isn't|"
                       r"aren't|without|avoid|stop|nor|n't)$")
_WORD = re.compile(r"[\w']+")


def _polarity(text: str, window: int = 3) -> tuple[set[str], set[str]]:
    """The words of ``text`` a negation stands before (within ``window`` words) somewhere, and those
    it says somewhere without one."""
    words = [w.lower() for w in _WORD.findall(text.replace("\u2019", "'"))]
    negated: set[str] = set()
    plain: set[str] = set()
    for i, w in enumerate(words):
        (negated if any(_NEGATION.match(x) for x in words[max(0, i - window):i]) else plain).add(w)
    return negated, plain


def _same_polarity(quote: str, text: str) -> bool:
    """No significant word flips polarity: the quote says plainly what the text only ever negates
    ("don't touch the fixture" -> "touch the fixture"), or negates what the text only ever says
    plainly. A word the text both negates and says (a long plan: "remove X", later "no need to remove
    Y") is not flipped by a quote of either."""
    q_neg, q_plain = _polarity(quote)
    t_neg, t_plain = _polarity(text)
    significant = set(significant_tokens(quote))
    flipped = {w for w in q_plain & significant if w in t_neg and w not in t_plain}
    flipped |= {w for w in q_neg & significant if w in t_plain and w not in t_neg}
    return not flipped
