"""Work the person cancelled in their own words, read conservatively, for the graders that hold a
summary to the plan as it stands (``no_superseded_work`` and ``pending_tasks``).

A person-typed message cancels ``X`` when:

* a clause of it starts (after "actually,", "ok", "oh and", "let's", "we can", …) with a clear cancel
  phrase that names ``X``: "forget (about) X", "never mind (about) X", "scratch X", "don't bother
  with X", "no need for X", "let's not do X", "we (don't|no longer) need X", "we won't do X",
  "X is no longer needed", or "skip / drop / cancel / scrap / ditch X" with a word in the message
  that says the plan changed ("actually", "instead", "for now", "anymore", "we don't need it", …).
  "Don't forget X", "did you forget X", a pronoun ("forget it", "never mind that") and a generic
  object ("forget the tests", "drop the changes") cancel nothing the reader can name;
* ``X`` came up as work before that message: a person message, a todo item or task, or the
  assistant's text names it (:func:`pytest_ctxeval.reading.proposals.reworded_mentions` reads it
  in other words too), so "forget the cache, read from disk" in a session that planned no cache
  names no task;
* no later person message asks for ``X`` again ("actually, do the PDF export after all": a mention
  its clause does not negate), and no todo list or task written after a later person message holds
  ``X`` open (the plan changed back in words the reader cannot name).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.messages import AssistantMessage, person_text, text_of, tool_uses
from .extract import LONG_MESSAGE_CHARS, open_todos
from .feedback import typed_text
from .pasted import mostly_prose
from .proposals import mention_pattern, proposals, reworded_mentions

__all__ = ["Cancellation", "cancels_something", "Superseded", "typed_cancellations", "superseded_intents", "names_intent", "proposes_intent",
           "spoke_after_todos"]


@dataclass(frozen=True)
class Cancellation:
    """A task the person cancelled: its words (``subject``), the person message that cancels it
    (its position among the person-typed messages, 1-based, and their count) and that message."""

    subject: str
    index: int          # position of the message in the list read
    number: int         # 1-based among the person-typed messages
    of: int
    message: str

    def where(self) -> str:
        """``user message 3 of 4: "actually, forget the PDF export, …"``."""
        text = " ".join(self.message.split())
        return f"user message {self.number} of {self.of}: \"{text if len(text) <= 90 else text[:89] + '…'}\""


# A clause opens after a sentence end, a comma, a semicolon, a dash or a line break.
_CLAUSE = re.compile(r"(?:^|(?<=[.!?;,:\n])|(?<=\s[-–—]))\s*")
_LEAD = (r"(?:(?:actually|ok(?:ay)?|oh|hmm+|wait|no|nah|so|and|but|also|then|please|just|right|alright|well|"
         r"on second thought|on reflection|scratch that|you know what|in that case|for now)\b[\s,]*)*"
         r"(?:(?:let's|lets|let us|we can|you can|i think we can|we could|go ahead and|feel free to|just)\s+)?")
#: A cancel phrase that needs nothing else; the object follows it.
_STRONG = (r"forget(?:\s+about)?|never\s?mind(?:\s+about)?|nevermind(?:\s+about)?|scratch|"
           r"(?:don't|do not|no need to)\s+bother\s+(?:with|about)|no need for|not do|hold off on|"
           r"(?:we|i)\s+(?:don't|do not|no longer)\s+need|(?:we|i)\s+(?:won't|will not)\s+(?:need|do|build|implement)")
#: A cancel verb that is often a task of its own ("drop the table", "cancel the job", "skip the slow
#: tests in CI"): it counts only with a word that says the plan changed.
_WEAK = r"skip|drop|cancel|scrap|ditch|abandon|leave out"
#: What "drop" names as a task of its own: a database object.
_DATABASE = re.compile(r"\b(?:tables?|columns?|index(?:es)?|databases?|db|schemas?|constraints?|collections?|rows?|"
                       r"fields?|keys?|views?|triggers?)\b", re.IGNORECASE)
_CHANGED = re.compile(r"\b(?:actually|instead|for now|any ?more|after all|no longer|not needed|(?:don't|do not) "
                      r"(?:need|want)|not worth|changed my mind|on second thought|on reflection|not necessary|"
                      r"nevermind|never mind)\b", re.IGNORECASE)
_OPENER = re.compile(rf"{_LEAD}(?P<verb>{_STRONG}|{_WEAK})\s+(?P<object>[^\n.!?;,:()\"“”]+)", re.IGNORECASE)
#: "X is no longer needed", "X isn't needed (anymore)": the object leads.
_OBJECT_FIRST = re.compile(
    r"(?P<object>(?:the\s+)?[\w][\w\s/'-]{2,60}?)\s+(?:is|are|isn't|aren't)\s+(?:no longer|not)\s+(?:needed|wanted|"
    r"necessary|required)\b{_END}|(?P<object2>(?:the\s+)?[\w][\w\s/'-]{2,60}?)\s+(?:isn't|aren't)\s+(?:needed|necessary)\b{_END}"
    .replace("{_END}", r"(?=\s*(?:$|[.,;!?)\n]|any ?more\b|after all\b|at all\b|either\b|now\b|for now\b))"),
    re.IGNORECASE)
#: Words that say "don't forget" or ask about forgetting: not a cancellation.
_NOT_A_CANCEL = re.compile(r"(?:\b(?:don't|do not|never|not|didn't|did you|you|to|i|we)\s+)$", re.IGNORECASE)
#: Where the object ends: a joined predicate or a reason ("forget the PDF export and just write tests").
_OBJECT_END = re.compile(r"\s+(?:and|but|so|since|because|as|then|we|it|it's|that's|for now|for the moment|any ?more|"
                         r"after all|altogether|entirely|completely|too|either|please|instead|though|"
                         r"(?:is|are|isn't|aren't|was)\b)\b.*$|\s+-\s.*$", re.IGNORECASE | re.DOTALL)
_DETERMINER = re.compile(r"^(?:(?:about|with|on|the|a|an|that|this|those|these|all|any|my|our|your|whole|entire|"
                         r"idea of|part about|bit about|doing|adding|building|making|implementing|writing|creating)\s+)+",
                         re.IGNORECASE)
_TRAILING = re.compile(r"(?:\s+(?:part|bit|idea|stuff|thing|things|step|for now|request|work|to|of|for|with|in|on|at|"
                       r"next|by|from|the|a|an))+$", re.IGNORECASE)
#: Objects that name no task the reader can hold a summary to.
_GENERIC = {"it", "that", "this", "them", "those", "these", "everything", "all", "rest", "that one", "this one",
            "above", "last", "previous", "tests", "test", "docs", "changes", "change", "code", "file", "files",
            "step", "steps", "task", "tasks", "plan", "idea", "thing", "things", "last one", "last step",
            "last part", "rest of it", "what i said", "my last message", "the last message", "others",
            "other one", "one", "other", "both", "either", "anything", "something", "me", "you", "him", "her", "us"}
_WORDS = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_'-]*")
_MAX_OBJECT_WORDS = 7


def _object(raw: str) -> str | None:
    """The task a cancel phrase names, trimmed to its noun phrase; None for a pronoun or a generic word."""
    text = _OBJECT_END.sub("", " ".join(raw.split())).strip(" '’`*_")
    text = _DETERMINER.sub("", text)
    text = _TRAILING.sub("", text).strip(" '’`*_")
    words = _WORDS.findall(text)
    if not words or len(words) > _MAX_OBJECT_WORDS or text.lower() in _GENERIC:
        return None
    if len(words) == 1 and (len(words[0]) < 4 or words[0].lower() in _GENERIC):
        return None
    return text


#: A sentence that makes its cancel phrase conditional: "if it fails, forget the retry".
_CONDITION = re.compile(r"\b(?:if|when|whenever|unless|in case|otherwise|until|should|whether)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")


def _sentence_around(message: str, at: int) -> tuple[str, str]:
    """The words of ``at``'s sentence before it, and its sentence with the next one."""
    start = max((m.end() for m in _SENTENCE_END.finditer(message, 0, at)), default=0)
    ends = [m.end() for m in _SENTENCE_END.finditer(message, at)]
    return message[start:at], message[start:ends[1] if len(ends) > 1 else len(message)]


def _cancelled_objects(message: str) -> list[str]:
    """The objects of the cancel phrases of one person-typed message (a long paste is not read:
    "Forget password flow" in a pasted spec is a feature's name)."""
    found: list[str] = []
    if len(message) > LONG_MESSAGE_CHARS and not mostly_prose(message):
        return found
    for m in _CLAUSE.finditer(message):
        at = m.end()
        if at >= len(message):
            continue
        before, around = _sentence_around(message, at)
        if _CONDITION.search(before):
            continue
        changed = bool(_CHANGED.search(around))
        opener = _OPENER.match(message, at)
        if opener is not None and not _NOT_A_CANCEL.search(message[max(0, at - 12):at]):
            weak = re.fullmatch(_WEAK, opener.group("verb"), re.IGNORECASE) is not None
            subject = _object(opener.group("object"))
            # a weak verb needs a word that says the plan changed, an object of two words or more,
            # and for "drop" no database object ("actually, drop the orders table")
            if subject and (not weak or (changed and len(_WORDS.findall(subject)) >= 2
                                         and not (opener.group("verb").lower() == "drop" and _DATABASE.search(subject)))):
                found.append(subject)
        first = _OBJECT_FIRST.match(message, at)
        if first is not None:
            subject = _object(first.group("object") or first.group("object2") or "")
            if subject:
                found.append(subject)
    return list(dict.fromkeys(found))


def cancels_something(message: str) -> bool:
    """Whether one person-typed message cancels a task in words ("forget the PDF export")."""
    return bool(_cancelled_objects(message))


def names_intent(text: str, intent: str) -> bool:
    """Whether ``text`` names ``intent``, in its words or reworded (negated or not)."""
    return bool(mention_pattern(intent).search(text)) or bool(reworded_mentions(text, intent))


def proposes_intent(text: str, intent: str) -> bool:
    """Whether ``text`` names ``intent`` in a clause that does not negate it (asks for it, lists it)."""
    return bool(proposals(text, intent, reworded=True))


def _todo_texts(message: Any) -> list[str]:
    """The open items of the todo lists and the tasks a message writes (TodoWrite, TaskCreate)."""
    out = []
    for use in tool_uses(message):
        if use.name == "TodoWrite" and isinstance(use.input.get("todos"), list):
            out += [str(t.get("content", "")) for t in use.input["todos"]
                    if isinstance(t, dict) and t.get("status") != "completed"]
        elif use.name == "TaskCreate":
            out.append(str(use.input.get("subject") or use.input.get("description") or ""))
    return [t for t in out if t.strip()]


def _came_up(messages: Sequence[Any], before: int, subject: str) -> bool:
    """Whether ``subject`` came up as work before message ``before``: a person message, a todo or
    task, or the assistant's text names it."""
    for message in messages[:before]:
        said = person_text(message)
        texts = [said] if said is not None else []
        if isinstance(message, AssistantMessage):
            texts += [text_of(message.content)] + _todo_texts(message)
        if any(t and names_intent(t, subject) for t in texts):
            return True
    return False


def _reversed(messages: Sequence[Any], after: int, subject: str) -> bool:
    """Whether the plan changed back after message ``after``: a later person message asks for
    ``subject`` again, or a todo list written after a later person message holds it open."""
    spoke = False
    for message in messages[after + 1:]:
        said = person_text(message)
        if said is not None:
            if proposes_intent(said, subject) and not any(names_intent(s, subject) for s in _cancelled_objects(said)):
                return True
            spoke = True
        elif spoke and any(proposes_intent(t, subject) for t in _todo_texts(message)):
            return True
    return False


def typed_cancellations(messages: Iterable[Any]) -> list[Cancellation]:
    """The tasks the person cancelled in ``messages`` (a session before a compaction) and did not
    ask for again, in order (see the module docstring).

    The subject is the cancel phrase's object ("PDF export" from "actually, forget the PDF export,
    we don't need it"); one subject is reported once, by its latest cancellation."""
    messages = list(messages)
    people = [(i, t) for i, m in enumerate(messages) if (t := person_text(m)) is not None]
    out: dict[str, Cancellation] = {}
    for number, (i, said) in enumerate(people, 1):
        for subject in _cancelled_objects(said):
            if not _came_up(messages, i, subject) or _reversed(messages, i, subject):
                continue
            out.pop(subject.lower(), None)
            out[subject.lower()] = Cancellation(subject, i, number, len(people), said)
    return list(out.values())


def spoke_after_todos(messages: Sequence[Any]) -> bool:
    """Whether the person typed a message after the last TodoWrite call in ``messages``."""
    last = max((i for i, m in enumerate(messages) if any(
        u.name == "TodoWrite" and isinstance(u.input.get("todos"), list) for u in tool_uses(m))), default=None)
    return last is not None and any(typed_text(m) is not None for m in messages[last + 1:])


@dataclass(frozen=True)
class Superseded:
    """An intent a compaction's summary must not propose: from ``expect.superseded``
    (``cancellation`` None) or cancelled by the person in words (:func:`typed_cancellations`)."""

    intent: str
    cancellation: Cancellation | None = None

    def source(self) -> str:
        """Where the grader got it: ``expect.superseded`` or the person message that cancels it."""
        return "expect.superseded" if self.cancellation is None else f"cancelled in {self.cancellation.where()}"


def superseded_intents(history: Sequence[Any], summarized: Sequence[Any],
                       expected: Sequence[str], cancellations: Sequence[Cancellation] | None = None
                       ) -> tuple[list[Superseded], list[str]]:
    """The intents a summary written after ``history`` must not propose, and the entries of
    ``expected`` it is not held to yet.

    An ``expect.superseded`` entry the latest todo list of the summarised span still holds open, with
    no person-typed message after that list in the span, was not superseded within the span: the
    change of plan comes later (after this compaction, or in the messages a compactor keeps verbatim
    after its summary) and the summary rightly lists the plan as it stood; it is returned as waiting.
    A cancellation the person typed before the compaction (:func:`typed_cancellations`) is held
    whatever the todo list says: the person's words are the plan. ``cancellations``: those of
    ``history`` when the caller has read them already (a grader keeps them as a shared view: every
    mutant of a compaction has the same history)."""
    still_open = [] if spoke_after_todos(summarized) else [" ".join(t.split()).lower() for t in open_todos(summarized)]
    waiting = [i for i in expected if any(" ".join(i.split()).lower() in t for t in still_open)]
    held = [Superseded(i) for i in expected if i not in waiting]
    for c in (typed_cancellations(history) if cancellations is None else cancellations):
        if not any(names_intent(c.subject, h.intent) or names_intent(h.intent, c.subject) for h in held):
            held.append(Superseded(c.subject, c))
    return held, waiting
