"""What a manual ``/compact <instructions>`` asks the summary to leave out (review 3, F17).

Claude Code passes the arguments of ``/compact`` to the summariser as additional instructions, and the
person's own instruction wins over the base prompt: a summary that leaves out what it was told to
leave out is right to. Read conservatively, only clear leave-out wording counts: "leave out X",
"don't/do not include (or mention, keep, list) X", "skip X", "omit X", "exclude X" at the start of a clause
("ignore X", "drop X", "no X" may be about the work, not the summary: not read; "no sections",
"without headings" ask for a form, :mod:`.summary_form`, and leave nothing out). Anything else (``/compact focus on the API work``, "keep only X") is graded
as before: a focus is not a leave-out of everything else.

``X`` is a topic ("the PDF detour") or a kind of fact: "errors" (error messages, stack traces,
failed attempts), "user messages" (my messages). A person message or an error is left out as asked
when it is of that kind, or names the topic's words (all of them but generic ones such as
"detour", "discussion", "stuff").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .summary_form import format_request

__all__ = ["LeaveOut", "leave_out", "left_out", "left_out_note", "unread_note", "with_leave_out"]

_SAY = r"(?:include|mention|keep|list|quote|add|cover|carry(?:\s+over)?|talk\s+about|go\s+into|write\s+(?:about|up))"
_SAYING = r"(?:including|mentioning|keeping|listing|quoting|adding|covering|carrying(?:\s+over)?|talking\s+about|going\s+into|writing\s+(?:about|up))"
_VERB = re.compile(
    r"(?:^|[.;,:!?\n]|\b(?:and|but|also|please|just)\b)\s*(?:please\s+)?"
    rf"(?:leave\s+out|(?:don'?t|do\s+not|never)\s+{_SAY}|skip|omit|exclude|"
    # everyday words: "no need to mention X", "don't bother with X", "don't bother mentioning X"
    rf"(?:there'?s\s+)?no\s+need\s+(?:to\s+{_SAY}|for)|(?:don'?t|do\s+not|no\s+need\s+to)\s+bother\s+(?:with|about|{_SAYING})|"
    # "without X" opening a clause, or after a verb that asks for the summary ("summarise without X")
    r"(?:(?:summari[sz]e|compact|condense|shorten|write\s+(?:it|the\s+summary)|do\s+it|keep\s+it\s+\w+)\s+)?without)"
    r"\s+(?P<what>[^.;,!?\n]+)", re.IGNORECASE)
#: "no X" as the whole clause ("no PDF stuff", "no errors please"): a short clause that is only that.
_NO_CLAUSE = re.compile(r"(?:^|[.;,:!?\n])\s*(?:and\s+|also\s+|but\s+)?no\s+(?!(?:more|less|fewer|longer|later|need|matter|problem|worries|way)\b)(?P<what>[\w./#+-]+(?:\s+[\w./#+-]+){0,4}?)"
                        r"\s*(?:,?\s*please)?\s*(?=[.;,!?\n]|$)", re.IGNORECASE)
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
_FILES = {"file", "files", "list", "lists", "names", "name", "paths", "path", "changed", "edited", "modified", "touched"}
_TASKS = {"todo", "todos", "to-do", "to-dos", "tasks", "task", "pending", "list", "lists", "open", "remaining", "items"}
#: Words that name the approaches that did not work: "the failed attempts", "dead ends", "what didn't work".
_FAILED = re.compile(r"\b(?:failed|unsuccessful|abandoned|rejected)\s+(?:\w+\s+)?(?:attempts?|approach(?:es)?|tries|"
                     r"ideas?|fixes|experiments?)\b|\bdead[\s-]ends?\b|\bwhat (?:didn'?t|did not) work\b|"
                     r"\b(?:attempts?|approach(?:es)?|tries)\s+that (?:failed|didn'?t work|did not work)\b", re.IGNORECASE)
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
    verbs = list(_VERB.finditer(args or ""))
    found = sorted([*verbs, *(m for m in _NO_CLAUSE.finditer(args or "")
                              if not any(v.start() < m.end() and m.start() < v.end() for v in verbs))],
                   key=lambda m: m.start())
    for m in found:
        if (form := format_request(m.group(0))) is not None and form.structure:
            continue   # "no sections", "without headings": a form asked for, not a fact left out
        what = _TAIL.sub("", m.group("what").strip())
        words = _words(what)
        content = [w for w in words if w not in _GENERIC]
        if not content:
            continue
        kinds: set[str] = set()
        if _FAILED.search(what):
            kinds.add("failed_approaches")
        if all(w in _ERRORS for w in content) and set(content) & {"error", "errors", "failure", "failures", "stack",
                                                                  "traceback", "tracebacks", "failed"}:
            kinds.add("errors")
        elif all(w in _MESSAGES for w in content) and set(content) & {"messages", "message", "prompts", "requests"}:
            kinds.add("user_messages")
        elif all(w in _FILES for w in content) and set(content) & {"file", "files", "paths"}:
            kinds.add("files")
        elif all(w in _TASKS for w in content) and set(content) & {"todo", "todos", "to-do", "to-dos", "tasks", "pending"}:
            kinds.add("tasks")
        elif not kinds:   # "the messages about Redis": the topic is Redis
            content = [w for w in content if w not in _ERRORS | _MESSAGES] or content
        out.append(LeaveOut(m.group(0).strip(" ;,.:!?\n"), frozenset(kinds), () if kinds else tuple(content)))
    return out


def unread_note(args: str | None, asked: list[LeaveOut]) -> str:
    """For the reason of a failure nothing excused: what the ``/compact`` text said, and that it was
    not read as a leave-out of what failed (the person can judge whether it asked for it), or ""
    without ``/compact`` text."""
    text = " ".join((args or "").split())
    form = format_request(args)
    if not text or (not asked and form is not None and form.structure):
        return ""   # a form asked for ("5 bullets, no sections"): the reasons that read it say so
    shown = text if len(text) <= 100 else text[:99] + "…"
    if not asked:
        return f"; the /compact text was \"{shown}\": not read as a leave-out"
    return f"; the /compact text was \"{shown}\": its leave-out does not cover this"


def left_out(asked: list[LeaveOut], kind: str, text: str) -> LeaveOut | None:
    """The instruction of ``asked`` that lets the summary leave out ``text``, a fact of ``kind``
    ("errors", "user_messages", "failed_approaches", "files" or "tasks"), or None."""
    if not asked:
        return None
    have = {part for w in _words(text) for part in [w, *re.split(r"[./:_-]", w)] if part}
    for x in asked:
        if kind in x.kinds or (x.words and all(w in have for w in x.words)):
            return x
    return None


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def left_out_note(excused: list[LeaveOut], what: str) -> str:
    """"; 2 messages left out as /compact asked: "leave out the PDF detour"" for a reason."""
    said = "; ".join(dict.fromkeys(f'"{_short(x.said, 80)}"' for x in excused))
    if len(excused) == 1:
        what = {"failed approaches": "failed approach"}.get(what, what[:-1] if what.endswith("s") else what)
    return f"; {len(excused)} {what} left out as /compact asked: {said}"


def with_leave_out(ok: str, reasons: list[str], excused: list[LeaveOut], total: int, what: str,
                   args: str | None, asked: list[LeaveOut]) -> tuple[str, list[str]]:
    """A grader's pass text and reasons with the /compact leave-out said: how many facts it let the
    summary leave out (in the pass text and the first reason), or, when it excused nothing, what the
    /compact text was and that it was not read as a leave-out of what failed."""
    if excused:
        note = left_out_note(excused, what)
        head = next((h for h in (f"all {total} ", f"the {total} ") if h in ok), f"all {total} ")
        ok = ok.replace(head, f"{total - len(excused)} of {total} ", 1) + note
        return ok, [reasons[0] + note, *reasons[1:]] if reasons else reasons
    if reasons:
        reasons = [reasons[0] + unread_note(args, asked), *reasons[1:]]
    return ok, reasons
