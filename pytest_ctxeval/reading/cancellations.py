"""Work the person cancelled in their own words, read conservatively, for the graders that hold a
summary to the plan as it stands (``no_superseded_work`` and ``pending_tasks``).

A person-typed message cancels ``X`` when:

* a clause of it starts (after "actually,", "ok", "oh and", "let's", "we can", …) with a clear cancel
  phrase that names ``X``: "forget (about) X", "never mind (about) X", "scratch / scrap / ditch X",
  "don't bother with X", "no need for X", "let's not do X", "don't do X", "we (don't|no longer) need
  X", "we won't do X", "X is no longer needed", "remove X from the todo list", and ``X`` came up as
  work before that message: a person message, a todo item or task, or the assistant's text names it
  (:func:`pytest_ctxeval.reading.proposals.reworded_mentions` reads it in other words too), so
  "forget the cache, read from disk" in a session that planned no cache names no task;
* or "stop working on X" (X was work in progress);
* or "skip / drop / cancel / abandon X" or "instead of X, (just) Y", with a word in the message that
  says the plan changed ("actually", "instead", "for now", "anymore", "nobody uses it", ", only Y",
  …), for an ``X`` that was planned (:func:`_planned`: a todo, a request, the assistant's "Next I
  will …"; "drop the debug logging, nobody reads it" for logging that exists is work), and for
  "drop" no database object ("drop the index on users");

"Don't forget X", "did you forget X", a pronoun ("forget it", "never mind that"), a generic object
("forget the tests", "drop the changes"), a condition ("if it fails, scrap X") and a slash command's
arguments cancel nothing the reader can name. A prohibition ("don't touch X", "leave X alone") is
read too (the "change" prohibitions of :mod:`pytest_ctxeval.reading.prohibitions`): it forbids
changing ``X``, whether or not it came up (a step breaks it only when it changes ``X``).

Either is held while no later person message asks for ``X`` again ("actually, do the PDF export
after all": a mention its clause does not negate; for a prohibition, a request to change ``X``), and
no todo list or task written after a later person message holds ``X`` open (the plan changed back in
words the reader cannot name). Messages are numbered as every grader numbers them.
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
from .clauses import CONDITION, LEAD, clause_starts, negated_before, phrase_object, sentence_around
from .prohibitions import FOR_A_WHILE, changes, forbidden
from .proposals import Proposal, mention_pattern, proposals, reworded_mentions

__all__ = ["Cancellation", "cancels_something", "Superseded", "typed_cancellations", "superseded_intents", "names_intent",
           "proposes_intent", "spoke_after_todos", "violates"]


@dataclass(frozen=True)
class Cancellation:
    """A task the person cancelled, or a thing they forbade the agent to change: its words
    (``subject``), the person message that says so (its position among the person-typed messages
    as :func:`pytest_ctxeval.reading.extract.person_messages` counts them, 1-based, and their count)
    and that message. ``kind`` is "cancel" (any proposal of the subject revives it) or "hands_off"
    ("don't touch X": a step that changes it does what the person forbade;
    :mod:`pytest_ctxeval.reading.prohibitions`)."""

    subject: str
    index: int          # position of the message in the list read
    number: int         # 1-based among the person-typed messages
    of: int
    message: str
    kind: str = "cancel"

    def where(self) -> str:
        """``user message 3 of 4: "actually, forget the PDF export, …"``."""
        text = " ".join(self.message.split())
        return f"user message {self.number} of {self.of}: \"{text if len(text) <= 90 else text[:89] + '…'}\""


#: A cancel phrase that needs nothing else; the object follows it.
_STRONG = (r"forget(?:\s+about)?|never\s?mind(?:\s+about)?|nevermind(?:\s+about)?|scratch|scrap|ditch|"
           r"(?:don't|do not|no need to)\s+bother\s+(?:with|about)|no need for|not do|hold off on|"
           r"(?:don't|do not)\s+do|no need to\s+(?:add|build|implement|create|do|make)|"
           r"(?:we|i)\s+(?:don't|do not|no longer)\s+need|(?:we|i)\s+(?:won't|will not)\s+(?:need|do|build|implement)")
#: "stop working on X": X was work in progress, whether or not the reader saw it come up.
_STOP = r"stop\s+(?:working on|doing|building|implementing)"
#: A cancel verb that is often a task of its own ("drop the table", "cancel the job", "skip the slow
#: tests in CI"): it counts only with a word that says the plan changed, and for a task that was
#: planned (:func:`_planned`); so does "instead of X, (just) Y".
_WEAK = r"skip|drop|cancel|abandon|leave out|instead of"
#: What "drop" names as a task of its own: a database object.
_DATABASE = re.compile(r"\b(?:tables?|columns?|index(?:es)?|databases?|db|schemas?|constraints?|collections?|rows?|"
                       r"fields?|keys?|views?|triggers?)\b", re.IGNORECASE)
_CHANGED = re.compile(r"\b(?:actually|instead|for now|any ?more|after all|no longer|not needed|(?:don't|do not) "
                      r"(?:need|want)|not worth|changed my mind|on second thought|on reflection|not necessary|"
                      r"nevermind|never mind|pointless|out of scope|"
                      r"(?:nobody|no one|no-one)\s+(?:uses?|needs?|wants?|reads?|cares?|asked)|"
                      r"(?:isn't|is not|aren't|are not)\s+(?:used|needed|wanted))\b"
                      # a contrast that keeps the rest: "skip the sitemap, only the feed", "…, just Y"
                      r"|[,;:–—-]\s*(?:only|just)\b", re.IGNORECASE)
_OPENER = re.compile(rf"{LEAD}(?P<verb>{_STRONG}|{_STOP}|{_WEAK})\s+"
                     r"(?P<object>(?:[^\n.!?;,:()\"“”]|\.(?=\w))+)",
                     re.IGNORECASE)
#: "remove X from the todo list": the object sits between.
_OFF_THE_LIST = re.compile(
    rf"{LEAD}(?:remove|take|strike|cross)\s+(?P<object>[^\n.!?;,:()\"“”]{{3,60}}?)\s+(?:off|from|out of)\s+"
    r"(?:the|my|our|your)?\s*(?:todo|to-do|task|tasks|plan|backlog|pending)?\s*(?:list|lists|plan|backlog|todos|tasks)\b",
    re.IGNORECASE)
#: "X is no longer needed", "X isn't needed (anymore)": the object leads.
_OBJECT_FIRST = re.compile(
    r"(?P<object>(?:the\s+)?[\w][\w\s/'-]{2,60}?)\s+(?:is|are|isn't|aren't)\s+(?:no longer|not)\s+(?:needed|wanted|"
    r"necessary|required)\b{_END}|(?P<object2>(?:the\s+)?[\w][\w\s/'-]{2,60}?)\s+(?:isn't|aren't)\s+(?:needed|necessary)\b{_END}"
    .replace("{_END}", r"(?=\s*(?:$|[.,;!?)\n]|any ?more\b|after all\b|at all\b|either\b|now\b|for now\b))"),
    re.IGNORECASE)


def _readings(message: str) -> list[tuple[str, str]]:
    """The objects of the cancel phrases and prohibitions of one person-typed message, each with how
    it was said: "cancel" (a strong cancel phrase), "planned" (a weak verb, "instead of X": counts
    for a task that was planned), "stop" ("stop working on X") or "hands_off" ("don't touch X").
    A long paste is not read: "Forget password flow" in a pasted spec is a feature's name."""
    found: list[tuple[str, str]] = []
    if len(message) > LONG_MESSAGE_CHARS and not mostly_prose(message):
        return found
    for at in clause_starts(message):
        before, around = sentence_around(message, at)
        if CONDITION.search(before):
            continue
        changed = bool(_CHANGED.search(around))
        opener = _OPENER.match(message, at)
        if opener is not None and not negated_before(message, at):
            verb = opener.group("verb")
            subject = phrase_object(opener.group("object"))
            if re.fullmatch(_WEAK, verb, re.IGNORECASE):
                # a weak verb needs a word that says the plan changed, and for "drop" no database
                # object ("actually, drop the orders table")
                if subject and changed and not (verb.lower() == "drop" and _DATABASE.search(subject)):
                    found.append((subject, "planned"))
            elif re.fullmatch(r"(?:don't|do not)\s+do", verb, re.IGNORECASE) and FOR_A_WHILE.search(around):
                pass   # "don't do the migration yet": a matter of order, not a cancellation
            elif re.fullmatch(_STOP, verb, re.IGNORECASE):
                if subject:
                    found.append((subject, "stop"))
            elif subject:
                found.append((subject, "cancel"))
        listed = _OFF_THE_LIST.match(message, at)
        if listed is not None and (subject := phrase_object(listed.group("object"))):
            found.append((subject, "cancel"))
        first = _OBJECT_FIRST.match(message, at)
        if first is not None:
            subject = phrase_object(first.group("object") or first.group("object2") or "")
            if subject:
                found.append((subject, "cancel"))
    # what the person forbade changing ("don't touch X"): the one reader of prohibitions
    found += [(f.what, "hands_off") for f in forbidden(message) if f.forbids == "change"]
    return list(dict.fromkeys(found))


def _cancelled_objects(message: str) -> list[str]:
    """The objects of the cancel phrases and prohibitions of one person-typed message
    (:func:`_readings` without how they were said)."""
    return list(dict.fromkeys(subject for subject, _ in _readings(message)))


def cancels_something(message: str) -> bool:
    """Whether one person-typed message cancels a task (or forbids a change) in words ("forget the
    PDF export", "don't touch the sitemap")."""
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


#: The assistant saying what it will do: a task it names there was planned.
_WILL = re.compile(r"\b(?:i'll|i will|i'm going to|we'll|we will|let me|let's|next\b|then i|i can|i could|i should|"
                   r"should i|shall i|want me to|plan(?:ning)? to|going to|i'd|would you like)", re.IGNORECASE)


def _planned(messages: Sequence[Any], before: int, subject: str) -> bool:
    """Whether ``subject`` was planned work before message ``before``: a todo item or task names it,
    a person message asks for it, or the assistant says it will do it ("Next I will update the
    sitemap"). A thing that only exists ("drop the debug logging" after it was added) was not."""
    for message in messages[:before]:
        said = typed_text(message)
        if said is not None and proposes_intent(said, subject):
            return True
        if isinstance(message, AssistantMessage):
            if any(names_intent(t, subject) for t in _todo_texts(message)):
                return True
            for clause in re.split(r"(?<=[.!?;])\s+|\n", text_of(message.content)):
                will = _WILL.search(clause)
                if will and any(p.start >= will.start() for p in proposals(clause, subject, reworded=True)):
                    return True
    return False


def violates(text: str, subject: str, kind: str) -> bool:
    """Whether ``text`` (a person message, a todo) asks for ``subject`` again: any proposal of a
    cancelled task, a change of a thing the person forbade to change."""
    found = proposals(text, subject, reworded=True)
    if kind != "hands_off":
        return bool(found)
    return any(changes(text, p.start, p.end) for p in found)


def _reversed(messages: Sequence[Any], after: int, subject: str, kind: str = "cancel") -> bool:
    """Whether the plan changed back after message ``after``: a later person message asks for
    ``subject`` again (for a prohibition: asks to change it), or a todo list written after a later
    person message holds it open."""
    spoke = False
    for message in messages[after + 1:]:
        said = typed_text(message)
        if said is not None:
            if violates(said, subject, kind) and not any(names_intent(s, subject) for s in _cancelled_objects(said)):
                return True
            spoke = True
        elif spoke and any(violates(t, subject, kind) for t in _todo_texts(message)):
            return True
    return False


def typed_cancellations(messages: Iterable[Any]) -> list[Cancellation]:
    """The tasks the person cancelled in ``messages`` (a session before a compaction), and the things
    they forbade the agent to change, that they did not ask for again, in order (see the module
    docstring and :mod:`pytest_ctxeval.reading.hands_off`).

    The subject is the phrase's object ("PDF export" from "actually, forget the PDF export, we don't
    need it"); one subject is reported once, by its latest cancellation. Messages are numbered as
    every grader numbers them (:func:`pytest_ctxeval.reading.extract.person_messages`: the words
    typed when rejecting a tool use count); a slash command's arguments (``/compact skip the PDF
    part``) are counted but not read: they instruct the command, not the work."""
    messages = list(messages)
    people = [(i, t) for i, m in enumerate(messages) if (t := typed_text(m)) is not None]
    out: dict[str, Cancellation] = {}
    for number, (i, said) in enumerate(people, 1):
        if _command_arguments(messages[i]):
            continue
        for subject, how in _readings(said):
            kind = "hands_off" if how == "hands_off" else "cancel"
            if how == "cancel" and not _came_up(messages, i, subject):
                continue
            if how == "planned" and not _planned(messages, i, subject):
                continue
            if _reversed(messages, i, subject, kind):
                continue
            out.pop(subject.lower(), None)
            out[subject.lower()] = Cancellation(subject, i, number, len(people), said, kind)
    return list(out.values())


def _command_arguments(message: Any) -> bool:
    """``message`` is a slash command whose arguments are its typed text."""
    content = getattr(message, "content", None)
    text = content if isinstance(content, str) else text_of(content or [])
    return "<command-args>" in text


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

    @property
    def forbidden(self) -> bool:
        """The person forbade changing it ("don't touch X"), rather than cancelled it as a task."""
        return self.cancellation is not None and self.cancellation.kind == "hands_off"

    def source(self) -> str:
        """Where the grader got it: ``expect.superseded`` or the person message that cancels (or
        forbids) it."""
        if self.cancellation is None:
            return "expect.superseded"
        return f"{'forbidden' if self.forbidden else 'cancelled'} in {self.cancellation.where()}"

    def proposed(self, text: str, found: Sequence[Proposal]) -> list[Proposal]:
        """Of ``found`` (the proposals of the intent in ``text``), those that bring it back: every
        one for a cancelled task; for a thing the person forbade to change, those whose clause
        changes it (:func:`pytest_ctxeval.reading.hands_off.changes`)."""
        if not self.forbidden:
            return list(found)
        out = []
        for p in found:
            at = text.rfind(p.clause, 0, p.start + len(p.clause))   # the clause holds the mention
            if 0 <= at <= p.start and changes(p.clause, p.start - at, p.end - at):
                out.append(p)
        return out


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
