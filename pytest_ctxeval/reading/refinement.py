"""A latest message that refines the request in progress, as ``next_step_quote`` reads it.

People add to a running task in everyday messages: "also make it require the staff role", "ok, sort
them by expiry date", a message queued mid-turn ("btw the admin endpoint must require the staff
role"). Section 9 quoting the request they add to quotes the task in progress, not an old one: that
is no drift. What the session shows decides it, by one rule (:func:`running_requests`):

* the latest message comes right after the request it refines (no other message typed between);
* it does not open a new task, cancel one or change course: it does not start (after an
  acknowledgement such as "ok," or "looks good.") with "now", "next", "then", "let's", "instead",
  "forget", "never mind", "stop", "moving on", nor with "actually", "wait", "no", and it says no
  "stop", "instead", "don't use", "no longer"; and it cancels nothing in words (:mod:`.cancellations`):
  the request before a change of course is overridden, and quoting it is drift;
* and it reads as an addition: it opens with a follow-up word ("also", "and", "plus", "btw", "by the
  way", "oh", "but", "one more thing", "make sure", "p.s."); or it speaks of the running work ("it",
  "them", "they") and the assistant took it up as such: its reply names words of the message or
  of the request, or it works on a file it worked on for the request.

The request refined may itself refine the one before it (up to :data:`CHAIN` requests back).

A message of four words or fewer already counts with the request before it (a go-ahead, "Kick it
off": :data:`pytest_ctxeval.reading.quoting.GO_AHEAD_WORDS`). One that says more than a go-ahead
("use 20 per page", "should it be paginated?") refines that request like a longer one
(:func:`short_refinement`): the same rule holds whatever the length.
"""

from __future__ import annotations

import re
from typing import Any

from ..core.messages import AssistantMessage, text_of, tool_uses
from .cancellations import cancels_something
from .extract import significant_tokens

__all__ = ["running_requests", "refines", "refinement_words", "refinement_told", "short_refinement", "starts_new_task",
           "CHAIN", "TOLD_SHARE"]

#: How many requests back a chain of refinements is followed.
CHAIN = 3

_ACK = (r"(?:(?:ok(?:ay)?|sure|yes|yeah|yep|great|good|nice|cool|perfect|thanks|thank you|right|alright|"
        r"looks good|sounds good|lgtm|got it)\b[\s,.!:;-]*)*")
#: An opening that starts a new task or turns away from the running one.
_NEW_TASK = re.compile(rf"^\W*{_ACK}(?:now|next|then|after that|afterwards|let'?s|lets|moving on|new task|switch|"
                       r"instead|forget|never ?mind|stop|scratch that|different)\b", re.IGNORECASE)
#: A change of course ("Actually, stop — don't use JWT", "no, use Redis instead"): the request before
#: it is overridden, not in progress, so a quote of it is not of the running task.
_CORRECTION = re.compile(rf"^\W*{_ACK}(?:actually|wait|no|nope|hmm+|on second thought|rather)\b|"
                         r"\b(?:stop|instead|rather than|(?:don'?t|do not) use|not any ?more|no longer)\b", re.IGNORECASE)
#: An opening that adds to what is being done.
_FOLLOW_UP = re.compile(rf"^\W*{_ACK}(?:also|and|plus|btw|by the way|oh|one more thing|additionally|p\.?s\.?|but|"
                        r"make sure|ensure|remember)\b", re.IGNORECASE)
#: Words that speak of the running work: a personal pronoun ("make it require …", "sort them by …").
#: Not a demonstrative: "this branch", "that file" name a thing of their own.
_BACK = re.compile(r"\b(?:it|them|they|its|their)\b", re.IGNORECASE)
#: Words of a refinement that carry no content of their own (its opener, its "too").
_FILLER = {"also", "btw", "way", "plus", "one", "more", "thing", "additionally", "make", "sure", "ensure", "remember",
           "too", "well", "okay", "yes", "yeah", "yep", "great", "good", "nice", "cool", "perfect", "thanks",
           "thank", "right", "alright", "looks", "sounds", "lgtm", "got", "please", "them", "they", "their",
           "these", "those", "should", "would", "could", "will"}


def _stems(text: str) -> set[str]:
    """Word stems (first five letters) of the words of four letters or more: "paginate" is
    "paginated", "sorting" is "sort"."""
    return {t[:5] for t in significant_tokens(text) if len(t) >= 4 and not t.isdigit()} - {"also", "make"}


def _files(messages: list[Any]) -> set[str]:
    return {str(v) for m in messages if isinstance(m, AssistantMessage) for use in tool_uses(m)
            for k, v in use.input.items() if k in ("file_path", "path", "notebook_path") and isinstance(v, str)}


def refines(latest: str, request: str, reply: list[Any], work: list[Any]) -> bool:
    """Whether ``latest`` (a person's message) refines ``request`` (the one typed right before it):
    see the module docstring. ``reply``: what came after ``latest`` up to the person's next message;
    ``work``: what came after ``request`` up to ``latest``."""
    text = " ".join(latest.split())
    if not text or _NEW_TASK.match(text) or _CORRECTION.search(text) or cancels_something(latest):
        return False
    if _FOLLOW_UP.match(text):
        return True
    if not _BACK.search(text):
        return False
    said = " ".join(text_of(m.content) for m in reply if isinstance(m, AssistantMessage))
    if _stems(said) & (_stems(text) | _stems(request)):
        return True
    return bool(_files(reply) & _files(work))


def running_requests(history: list[Any], people: list[Any], run: list[Any]) -> list[Any]:
    """The person's requests that the latest one (``run``, its messages, read by the first) refines, oldest first:
    the task still in progress, which section 9 may quote. [] when the latest message is a request
    of its own. ``people``: the person's messages of ``history``, ``run`` their last ones."""
    out: list[Any] = []
    head = len(people) - len(run)
    # the run's first message opens it (a go-ahead after it, "Kick it off", is not what refines)
    latest_text = run[0].text
    latest_at, reply_end = run[0].index, len(history)
    for i in range(head - 1, max(head - 1 - CHAIN, -1), -1):
        request = people[i]
        reply = history[run[-1].index + 1:reply_end] if not out else history[latest_at + 1:reply_end]
        if not refines(latest_text, request.text, reply, history[request.index + 1:latest_at]):
            break
        out.insert(0, request)
        reply_end, latest_text, latest_at = latest_at, request.text, request.index
    return out


def refinement_words(text: str) -> str:
    """``text`` without its follow-up words ("also", "btw", "ok,"): what it adds, for telling it."""
    return " ".join(w for w in re.findall(r"[\w'./-]+", text) if w.lower() not in _FILLER)


#: The words of a bare go-ahead: a short message of only these adds nothing to the request before it.
_GO_AHEAD = {"yes", "yeah", "yep", "yup", "okay", "sure", "ahead", "please", "proceed", "continue", "kick", "off",
             "start", "begin", "lgtm", "ship", "fine", "good", "great", "perfect", "sounds", "looks", "right",
             "correct", "agreed", "approve", "approved", "carry", "keep", "going", "let", "lets", "implement",
             "execute", "plan", "thanks", "thank", "now", "then", "alright", "cool", "nice", "awesome", "excellent",
             "works", "done", "this", "that", "them", "those", "these", "option", "way", "one", "just", "again",
             "retry", "try", "run"}


#: An opening that moves on to the next task ("now …", "next: …", "then …", "let's …").
_MOVES_ON = re.compile(rf"^\W*{_ACK}(?:now|next|then|after that|afterwards|let'?s|lets|moving on|new task|switch to)\b",
                       re.IGNORECASE)
#: Words that point back at the running work or a thing in view ("commit it", "ship this").
_POINTS_BACK = re.compile(r"\b(?:it|them|they|its|their|this|that|these|those)\b", re.IGNORECASE)
_OPENER_WORDS = {"now", "next", "then", "after", "afterwards", "lets", "let", "moving", "new", "task", "switch"}


def starts_new_task(text: str) -> bool:
    """Whether a short message opens a new task in words of its own ("now add CSV export", "next: the
    export button"): it moves on ("now", "next", "then", "let's"), names something beyond a go-ahead
    ("now do it", "then go ahead", "let's implement the plan" name nothing) and does not point back at
    the running work ("then commit it"). The go-ahead rule does not join it to the request before it.

    >>> starts_new_task("now add CSV export"), starts_new_task("now do it"), starts_new_task("then commit it")
    (True, False, False)
    """
    said = " ".join(text.split())
    if not _MOVES_ON.match(said) or _FOLLOW_UP.match(said) or _POINTS_BACK.search(said):
        return False
    return any(t not in _GO_AHEAD and t not in _FILLER and t not in _OPENER_WORDS and not t.isdigit()
               for t in significant_tokens(said))


def short_refinement(history: list[Any], run: list[Any]) -> bool:
    """Whether the last of ``run`` is a short message that the go-ahead rule joined to the request
    before it (the assistant answered in between) and says more than a go-ahead: words of its own
    beyond "yes", "go ahead", "kick it off", "implement the plan" (an option's number counts as
    a go-ahead: "option 2")."""
    if len(run) < 2 or not any(isinstance(m, AssistantMessage) for m in history[run[-2].index + 1:run[-1].index]):
        return False
    text = " ".join(run[-1].text.split())
    if _NEW_TASK.match(text) and not _FOLLOW_UP.match(text):
        return False  # "now deploy it": the go-ahead rule reads it as before
    words = [t for t in significant_tokens(text) if t not in _GO_AHEAD and t not in _FILLER and not t.isdigit()]
    return bool(words) and not cancels_something(text)


#: A refinement is told when this share of its words (by their stems) is in section 9.
TOLD_SHARE = 0.6


def refinement_told(latest: str, text: str) -> bool:
    """Whether ``text`` (section 9) tells what ``latest`` adds: :data:`TOLD_SHARE` of its words
    (its follow-up words aside), each by its stem at a word start ("paginated" is told by "paginate
    it", "sort" by "sorted"), and every number of it whole ("20 per page" is not "50 per page")."""
    tokens = significant_tokens(refinement_words(latest))
    if not tokens:
        return False
    low = text.lower()
    hits = 0
    for t in tokens:
        if t.isdigit():
            if not re.search(rf"(?<![\d.]){re.escape(t)}(?!\d)", low):
                return False
            hits += 1
        elif re.search(rf"(?<!\w){re.escape(t[:5] if len(t) > 5 else t)}", low):
            hits += 1
    return hits / len(tokens) >= TOLD_SHARE
