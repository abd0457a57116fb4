"""What a manual ``/compact <instructions>`` asks the summary to leave out (review 3, F17).

Claude Code passes the arguments of ``/compact`` to the summariser as additional instructions, and the
person's own instruction wins over the base prompt: a summary that leaves out what it was told to
leave out is right to. Read conservatively, only clear leave-out wording counts: "leave out X",
"don't/do not include (or mention, keep, list) X", "skip X", "omit X", "exclude X" at the start of a clause
("ignore X", "drop X", "no X" may be about the work, not the summary: not read). Anything else (``/compact focus on the API work``, "keep only X") is graded
as before: a focus is not a leave-out of everything else.

``X`` is a topic ("the PDF detour") or a kind of fact: "errors" (error messages, stack traces,
failed attempts), "user messages" (my messages). A person message or an error is left out as asked
when it is of that kind, or names the topic's words (all of them but generic ones such as
"detour", "discussion", "stuff").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["LeaveOut", "leave_out", "left_out"]

_VERB = re.compile(
    r"(?:^|[.;,:!?\n]|\b(?:and|but|also|please|just)\b)\s*(?:please\s+)?"
    r"(?:leave\s+out|(?:don'?t|do\s+not|never)\s+(?:include|mention|keep|list|quote|add|carry(?:\s+over)?)|"
    r"skip|omit|exclude)\s+(?P<what>[^.;,!?\n]+)", re.IGNORECASE)
_TAIL = re.compile(r"\s+(?:entirely|completely|altogether|at all|in the summary|from the summary|please|"
                   r"anymore|any more)\s*$", re.IGNORECASE)
_GENERIC = {"the", "a", "an", "all", "any", "of", "about", "on", "around", "related", "to", "my", "our", "that",
            "this", "those", "these", "part", "parts", "detour", "detours", "discussion", "discussions", "stuff",
            "thing", "things", "work", "bit", "bits", "topic", "topics", "whole", "side", "tangent", "everything",
            "anything", "regarding", "concerning", "from", "summary", "entirely", "completely", "with", "and", "or",
            "experiment", "experiments", "attempt", "attempts", "idea", "ideas", "investigation", "exploration",
            "digression", "notes", "details", "side-quest", "quest"}
_ERRORS = {"error", "errors", "failure", "failures", "stack", "trace", "traces", "traceback", "tracebacks",
           "warnings", "failed", "attempts", "message", "messages", "output", "logs", "log"}
_MESSAGES = {"user", "my", "messages", "message", "prompts", "requests", "quotes", "verbatim"}
_WORD = re.compile(r"[A-Za-z0-9][\w.+#-]*")


@dataclass(frozen=True)
class LeaveOut:
    """One clear leave-out instruction: its words as typed, the kinds it names, the topic's words."""

    said: str
    kinds: frozenset[str]       # "errors", "user_messages"
    words: tuple[str, ...]      # the topic's content words, lower case (empty for a kind)


def _words(text: str) -> list[str]:
    return [w.lower().strip(".-") for w in _WORD.findall(text)]


def leave_out(args: str | None) -> list[LeaveOut]:
    """The leave-out instructions of ``/compact`` arguments (see the module docstring).

    >>> [(x.kinds, x.words) for x in leave_out("keep only the CSV work; leave out the PDF detour entirely")]
    [(frozenset(), ('pdf',))]
    >>> [sorted(x.kinds) for x in leave_out("don't include error messages")]
    [['errors']]
    >>> leave_out("focus on the API changes")
    []
    """
    out: list[LeaveOut] = []
    for m in _VERB.finditer(args or ""):
        what = _TAIL.sub("", m.group("what").strip())
        words = _words(what)
        content = [w for w in words if w not in _GENERIC]
        if not content:
            continue
        kinds: set[str] = set()
        if all(w in _ERRORS for w in content) and set(content) & {"error", "errors", "failure", "failures", "stack",
                                                                  "traceback", "tracebacks", "failed"}:
            kinds.add("errors")
        elif all(w in _MESSAGES for w in content) and set(content) & {"messages", "message", "prompts", "requests"}:
            kinds.add("user_messages")
        else:   # "the messages about Redis": the topic is Redis
            content = [w for w in content if w not in _ERRORS | _MESSAGES] or content
        out.append(LeaveOut(m.group(0).strip(" ;,.:!?\n"), frozenset(kinds), () if kinds else tuple(content)))
    return out


def left_out(asked: list[LeaveOut], kind: str, text: str) -> LeaveOut | None:
    """The instruction of ``asked`` that lets the summary leave out ``text``, a fact of ``kind``
    ("errors" or "user_messages"), or None."""
    if not asked:
        return None
    have = {part for w in _words(text) for part in [w, *re.split(r"[./:_-]", w)] if part}
    for x in asked:
        if kind in x.kinds or (x.words and all(w in have for w in x.words)):
            return x
    return None
