"""What the person forbade, in their own words: one reader and one vocabulary for every prohibition
of a person-typed message. Each says what it forbids:

* **use**: "no X", "never use X", "don't use X", "do not add X", "stop using X", "avoid X" (a
  sentence of its own, or a clause after "so", "and", "but", "also", "please"): ``X`` must not be
  used or planned at all; ``no_superseded_work`` fails sections 7-9 that plan it. What it names is
  one to four words before the sentence ends or goes on with "in", "for", "on", "at", "anywhere",
  "anymore", and at least two words or one that is a name (``Chakra``, ``SQLite``,
  ``lodash.merge``); an answer ("No, …", "no need", "no problem", "no worries") rules nothing out.
* **change**: "don't / do not / never touch (change, modify, edit, update, refactor, rewrite) X",
  "leave X alone", "leave X as it is", "keep X as is / unchanged", "no changes (edits, updates) to
  X", "hands off X", "no need to update (change, touch, …) X", at the start of a clause (after
  "wait,", "ok", "please", …; :mod:`.clauses`): ``X`` must not be *changed*, whether or not anyone
  planned it. A step breaks it only when a change verb acts on ``X`` in the step's clause ("Update
  the sitemap generator", "Add the dependency to package.json"); reading, checking, running or
  documenting ``X`` ("Check that the sitemap still validates", "Update the docs for the sitemap")
  does not (:func:`changes`). :mod:`.cancellations` holds these beside the tasks the person
  cancelled (review 4, G2), so the todo lists that may lift them are read too.

Neither kind is read for a while ("don't use X yet", "leave X alone until the feed works", "for
now", "today": :data:`FOR_A_WHILE`): a matter of order, which a later step may rightly lift; nor in a
conditional sentence. A later message of the person that asks for what it forbids (names ``X``
without negating it; for a change, asks to change it) lifts it (:func:`prohibitions`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .clauses import CONDITION, LEAD, clause_starts, negated_before, phrase_object, sentence_around
from .contradicted import is_value
from .proposals import proposals

__all__ = ["CHANGE", "FOR_A_WHILE", "Forbidden", "Prohibition", "USE", "changes", "forbidden", "prohibitions"]

# -- the vocabulary ------------------------------------------------------------------------------------

#: "no X", "don't use X", "avoid X": X must not be used or planned (the object follows).
USE = r"no|never use|don't use|do not use|don't add|do not add|stop using|avoid"
#: "don't touch X", "no changes to X", "hands off X", "no need to update X": X must not be changed
#: (the object follows).
CHANGE = (r"(?:don't|do not|dont|never|please don't|pls don't)\s+(?:touch|change|modify|edit|update|refactor|"
          r"rewrite|mess with|mess around with|fiddle with)|"
          r"no\s+(?:more\s+)?(?:changes|edits|updates|modifications)\s+(?:to|in|on)|hands off(?:\s+of)?|"
          r"no need to\s+(?:update|change|touch|modify|edit|refactor|rewrite|fix)")
#: "leave X alone", "leave X as it is", "keep X as is": X must not be changed (the object sits between).
_CHANGE_AROUND = re.compile(
    r"(?:leave|keep)\s+(?P<object>[^\n.!?;,:()\"“”]{3,60}?)\s+(?:alone|as (?:it is|they are|is)|untouched|"
    r"unchanged|as-is)\b", re.IGNORECASE)
#: A prohibition for a while: a matter of order, not held.
FOR_A_WHILE = re.compile(r"\b(?:yet|until|till|unless|before|first|for now|for the moment|at the moment|right now|"
                         r"today|later)\b", re.IGNORECASE)

_USE_RULE = re.compile(
    r"(?:^|(?<=[.!?;\n]))\s*(?:(?:so|and|but|also|please|just|ok|okay)[\s,]+)?"
    rf"(?:{USE})\s+"
    r"(?P<x>(?:[A-Za-z][\w.-]*\s+){0,3}?[A-Za-z][\w.-]*?)"
    r"(?=\s+(?:in|for|on|at|anywhere|anymore|any more)\b|\s*[.;!](?!\w)|\s*$)",
    re.IGNORECASE | re.MULTILINE)
#: Words that make "no X" an answer or a plain phrase, not a rule ("no need", "no problem", "No, …").
_NOT_A_THING = frozenset({"need", "problem", "problems", "worries", "idea", "matter", "way", "thanks", "longer",
                          "more", "one", "changes", "issue", "issues", "rush", "doubt", "it", "this", "that", "them",
                          "i", "you", "we", "they", "not", "the", "a", "an", "just"})
_CHANGE_OPENER = re.compile(rf"{LEAD}(?P<rule>(?:{CHANGE})\s+(?P<object>(?:[^\n.!?;,:()\"“”]|\.(?=\w))+))",
                             re.IGNORECASE)


@dataclass(frozen=True)
class Forbidden:
    """One prohibition of a message: what it names and what it forbids ("use" or "change")."""

    what: str
    forbids: str
    said: str = field(default="", compare=False, repr=False)   # the person's words that forbid it

    def broken_by(self, text: str, start: int, end: int) -> bool:
        """Whether ``text``'s proposal of the thing at ``start:end`` does what this forbids: any
        proposal for "use", one whose clause changes it for "change"."""
        return self.forbids == "use" or changes(text, start, end)

    def asked_for(self, text: str) -> bool:
        """Whether ``text`` (a later message of the person) asks for what this forbids, lifting it."""
        if self.forbids == "use":
            return bool(proposals(text, self.what))
        return any(changes(text, p.start, p.end) for p in proposals(text, self.what, reworded=True))


def forbidden(message: str) -> list[Forbidden]:
    """The prohibitions of one person-typed ``message``, in order (see the module docstring).

    >>> forbidden("wait, don't touch the sitemap, only the feed. No Chakra anywhere.")
    [Forbidden(what='Chakra', forbids='use'), Forbidden(what='sitemap', forbids='change')]
    """
    out = [Forbidden(what, "use", said) for what, said in _uses(message)]
    for at in clause_starts(message):
        before, around = sentence_around(message, at)
        if CONDITION.search(before) or negated_before(message, at) or FOR_A_WHILE.search(around):
            continue
        for m in (_CHANGE_OPENER.match(message, at), _CHANGE_AROUND.match(message, at)):
            if m is not None and (what := phrase_object(m.group("object"))):
                said = _sentence_from(message, m.start("rule") if "rule" in m.re.groupindex else m.start())
                out.append(Forbidden(what, "change", said))
    return list(dict.fromkeys(out))


def _sentence_from(text: str, at: int) -> str:
    """``text`` from ``at`` to the end of its sentence: the words of a rule."""
    end = min([i for i in (text.find(c, at) for c in ".!?\n") if i >= 0] or [len(text)])
    return " ".join(text[at:end].split())


def _uses(text: str) -> list[tuple[str, str]]:
    """What ``text`` rules out in a sentence of its own ("No MVP terminology in our app"), each with
    the words that rule it out."""
    out = []
    for m in _USE_RULE.finditer(text):
        what = m.group("x").strip().rstrip(".")
        words = what.split()
        if not words or words[0].lower() in _NOT_A_THING or words[-1].lower() in _NOT_A_THING:
            continue
        if len(words) < 2 and not is_value(words[0], text, m.start("x")):
            continue
        end = min([i for i in (text.find(c, m.end()) for c in ".!?\n") if i >= 0] or [len(text)])
        if FOR_A_WHILE.search(text[m.start():end]):
            continue
        out.append((what, " ".join(text[m.start():end].split())))
    return out


@dataclass(frozen=True)
class Prohibition:
    """A prohibition the person typed and no later message of theirs lifted."""

    what: str        # the words it forbids
    number: int      # 1-based among the person's messages
    message: str
    forbids: str = "use"
    said: str = ""   # the person's words that forbid it ("don't change the public API")


def prohibitions(messages: list[str]) -> list[Prohibition]:
    """What the person's ``messages`` (in order) forbid and no later message asks for again."""
    out = []
    for k, text in enumerate(messages):
        for rule in forbidden(text):
            if any(rule.asked_for(later) for later in messages[k + 1:]):
                continue   # asked for again: allowed again
            out.append(Prohibition(rule.what, k + 1, text, rule.forbids, rule.said))
    return out


# -- whether a step changes the thing ------------------------------------------------------------------

#: Verbs that change the thing they act on.
_CHANGE_VERBS = ("touch change modify edit update refactor rewrite fix patch tweak adjust amend alter migrate rename "
                 "move convert reformat format regenerate rebuild bump port replace extend add insert append put write "
                 "wire implement rework redo restructure reorganize reorganise clean").split()


def _forms(verb: str) -> str:
    """A verb and its inflections: "update" -> update, updates, updated, updating."""
    special = {"put": r"put(?:s|ting)?", "write": r"(?:writ(?:e|es|ing|ten)|wrote)",
               "rewrite": r"(?:rewrit(?:e|es|ing|ten)|rewrote)"}
    if verb in special:
        return special[verb]
    if verb.endswith("y"):
        return rf"{verb[:-1]}(?:y|ies|ied|ying)"
    if verb.endswith("e"):
        return rf"{verb[:-1]}(?:e|es|ed|ing)"
    return rf"{verb}(?:s|es|ed|ing|ped|ping|ted|ting)?"


#: A change verb, inflected, leading the words that reach the mention.
_VERB = re.compile(r"\b(?:" + "|".join(_forms(v) for v in _CHANGE_VERBS) + r")\b", re.IGNORECASE)
#: What may stand between a change verb and the thing it acts on: determiners, adjectives, a few
#: words, and for verbs that put something somewhere "to/in/into" ("add the dependency to package.json").
_BETWEEN = re.compile(r"^(?:[\w'’./#-]+\s+){0,4}$")
_NOT_ON_IT = re.compile(r"\b(?:for|about|of|from|with|without|except|besides|than|around|beside|like|after|before|"
                        r"not|no|never|and|or|but|then)\b", re.IGNORECASE)
#: Words after a mention that make it a modifier of something else the verb acts on: the docs or
#: tests *about* X are not X.
_ABOUT_IT = re.compile(r"^\s*(?:docs?|documentation|readme|changelog|tests?|specs?|comments?|notes?|issues?|tickets?|"
                       r"mentions?|references?|links?|section of the (?:docs|readme))\b", re.IGNORECASE)
_PAST = re.compile(r"(?:ed|wrote|written|put)$", re.IGNORECASE)


def changes(clause: str, start: int, end: int, *, done: bool = False) -> bool:
    """Whether a change verb in ``clause`` acts on the mention at ``start:end`` (offsets in
    ``clause``): it comes before the mention in the clause, not in the past tense ("updated the
    sitemap" tells what was done; with ``done``, what was done counts too), with at most four words
    between them and none that points elsewhere ("for", "about", "and"...), and the mention is not
    the modifier of the docs or tests about it.

    >>> s = "Update the sitemap generator so sitemap dates use localtime too."
    >>> changes(s, s.index("sitemap"), s.index("sitemap") + 7)
    True
    >>> s = "Check that the sitemap still validates."
    >>> changes(s, s.index("sitemap"), s.index("sitemap") + 7)
    False
    """
    if _ABOUT_IT.match(clause[end:]):
        return False
    for verb in _VERB.finditer(clause, 0, start):
        if _PAST.search(verb.group(0)) and not done:
            continue   # "updated the sitemap" tells what was done, it proposes nothing
        between = clause[verb.end():start]
        if _BETWEEN.match(between.lstrip()) and not _NOT_ON_IT.search(between):
            return True
    return False
