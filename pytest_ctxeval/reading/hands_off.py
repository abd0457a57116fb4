"""What the person forbade the agent to change, in their own words ("don't touch the sitemap"), and
whether a summary's step does it anyway (review 4, G2).

A prohibition is read at the start of a clause of a person-typed message (after "wait,", "ok",
"please", …), as one of:

* "don't / do not / never touch (change, modify, edit, update, refactor, rewrite) X",
* "leave X alone", "leave X as it is", "keep X as is / unchanged",
* "no changes (edits, updates) to X", "hands off X",
* "no need to update (change, touch, modify, edit, refactor, rewrite, fix) X".

Unlike a cancelled task, ``X`` need not have come up as work before: the person forbids it, whether
or not anyone planned it. What a prohibition forbids is *changing* ``X``: a step violates it only when
a change verb acts on ``X`` in the step's clause ("Update the sitemap generator", "Add the dependency
to package.json"); reading, checking, running or documenting ``X`` ("Check that the sitemap still
validates", "Update the docs for the sitemap") does not.
"""

from __future__ import annotations

import re

__all__ = ["HANDS_OFF", "HANDS_OFF_AFTER", "changes"]

#: Verbs that change the thing they act on.
_CHANGE = ("touch change modify edit update refactor rewrite fix patch tweak adjust amend alter migrate rename move "
           "convert reformat format regenerate rebuild bump port replace extend add insert append put write wire "
           "implement rework redo restructure reorganize reorganise clean").split()


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

#: "don't touch X", "no changes to X", "hands off X", "no need to update X": the object follows.
HANDS_OFF = (r"(?:don't|do not|dont|never|please don't|pls don't)\s+(?:touch|change|modify|edit|update|refactor|"
             r"rewrite|mess with|mess around with|fiddle with)|"
             r"no\s+(?:more\s+)?(?:changes|edits|updates|modifications)\s+(?:to|in|on)|hands off(?:\s+of)?|"
             r"no need to\s+(?:update|change|touch|modify|edit|refactor|rewrite|fix)")
#: "leave X alone", "leave X as it is", "keep X as is": the object sits between.
HANDS_OFF_AFTER = re.compile(
    r"(?:leave|keep)\s+(?P<object>[^\n.!?;,:()\"“”]{3,60}?)\s+(?:alone|as (?:it is|they are|is)|untouched|"
    r"unchanged|as-is)\b", re.IGNORECASE)
#: A change verb, inflected, leading the words that reach the mention.
_VERB = re.compile(r"\b(?:" + "|".join(_forms(v) for v in _CHANGE) + r")\b", re.IGNORECASE)
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


def changes(clause: str, start: int, end: int) -> bool:
    """Whether a change verb in ``clause`` acts on the mention at ``start:end`` (offsets in
    ``clause``): it comes before the mention in the clause, not in the past tense ("updated the
    sitemap" tells what was done), with at most four words between them and none that points
    elsewhere ("for", "about", "and"...), and the mention is not the modifier of the docs or tests
    about it.

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
        if _PAST.search(verb.group(0)):
            continue   # "updated the sitemap" tells what was done, it proposes nothing
        between = clause[verb.end():start]
        if _BETWEEN.match(between.lstrip()) and not _NOT_ON_IT.search(between):
            return True
    return False
