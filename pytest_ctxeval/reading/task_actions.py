"""The action a task names, so that a follow-up task on the same object is not told by an item about
another action (review 4, G1).

A todo list is often one object and its follow-ups: "Add admin endpoint GET /admin/discounts", "Write
tests for admin discounts endpoint", "Document the admin discounts endpoint", "Deploy it to staging".
The object's words are most of each task's words, so a share of words alone lets the item "Add admin
endpoint ..." tell all four. :func:`same_action` reads the actions apart.

Families (a rewording within one family is the same action):

* the work itself, ``work``: make (add, implement, create, build, write, introduce, set up, scaffold,
  develop, wire up, update, extend) and fix (fix, repair, resolve, patch, debug, correct), read as one
  kind of work (a summary may call implementing a missing check "fixing" it);
* follow-ups: ``test``, ``document``, ``deploy``, ``review`` and ``refactor``.

A follow-up is read as the action only where it is one, as these words are often nouns of the object
("Document upload", "Product reviews", "Test results page", "Release notes"): its verb at the start of
a clause followed by an object ("Document the endpoint", "Deploy it to staging", "Review PR 12",
"Test the export end-to-end"), a make-verb whose object is tests or docs ("write tests for", "add unit
tests", "create API docs"; that verb is then not ``work``), or its noun phrase ("tests for X",
"documentation of X", "a code review of X"). "Fix the failing login test" is a fix.

The rule (:func:`same_action`): a task whose leading action is a follow-up is told only by an item
that speaks of it at all ("Write tests for X" is not told by "Add X"; any mention of tests, even as a
noun, "X tests (pending)", will do); a task of the work itself, or with no action word ("Admin
endpoint GET /admin/discounts"), is not told by an item whose only actions are follow-ups ("Add X" is
not told by "Write tests for X", "Document X" nor "Deploy X to staging", unless the task itself speaks
of that follow-up: "Deploy to staging"). An item that names no action
("- Admin discounts endpoint (in progress)") tells any task its words tell. Both readings err towards
telling: a rewording is never split from its task by a word this module does not know.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["actions", "leading_action", "same_action", "FOLLOW_UPS"]

#: The follow-up families: another task than the work on the same object.
FOLLOW_UPS = frozenset({"test", "document", "deploy", "review", "refactor"})

_MAKE_VERB = (r"add(?:s|ed|ing)?|implement(?:s|ed|ing)?|creat(?:e|es|ed|ing)|build(?:s|ing)?|built|"
              r"writ(?:e|es|ing)|written|wrote|introduc(?:e|es|ed|ing)|set(?:ting)?\s+up|setup|scaffold(?:s|ed|ing)?|"
              r"develop(?:s|ed|ing)?|wir(?:e|es|ed|ing)\s+up|mak(?:e|es|ing)|made|extend(?:s|ed|ing)?|expand(?:s|ed|ing)?|"
              r"updat(?:e|es|ed|ing)|generat(?:e|es|ed|ing)")
_TEST_NOUN = (r"(?:unit\s+|integration\s+|e2e\s+|end-to-end\s+|regression\s+|api\s+|smoke\s+)?"
              r"(?:tests?|specs?|test\s+cases?|test\s+coverage|coverage)(?![\w-])")
_DOC_NOUN = r"(?:docs|documentation|readme|docstrings?|changelog(?:\s+entry)?|api\s+docs|usage\s+notes)"
#: "write tests for", "add unit tests", "create API docs": a make-verb whose object (within three words)
#: is tests or docs is that follow-up.
_MADE_FOLLOW_UP = re.compile(rf"\b(?:{_MAKE_VERB})\s+(?:(?!and\b|then\b)[\w/.-]+\s+){{0,3}}?"
                             rf"(?:(?P<test>{_TEST_NOUN})|(?P<doc>{_DOC_NOUN}))\b", re.IGNORECASE)
#: A clause's start: the item's start (after its marker, a "[pending]" status, bold), or after a colon,
#: dash, semicolon, "then", "and", "next", "also", "to".
_START = (r"(?:^[\s>]*(?:[-*+•]|\d+[.)])?|[:;—–(]|\s-\s|\bthen\b|\band\b|\bnext\b|\balso\b|\bto\b|\bplus\b)"
          r"\s*(?:\[[^\]]*\]\s*)?(?:\*\*|__)?\s*")
#: What follows a follow-up verb at a clause's start for it to be read as the verb, not a noun of a
#: compound ("Document the endpoint", not "Document upload"; "Review PR 12", not "Review queue").
_OBJECT = (r"(?=\s+(?:the|a|an|it|its|this|that|these|those|all|each|every|their|our|my|your|both|any|new|"
           r"how|what|why|whether|pr|prs|pull\s+request|changes|code|diff|branch|commits?|end-to-end|manually|locally|"
           r"thoroughly|again|to|on|in|against|with)\b)")
_FOLLOW_VERBS = {
    "test": r"(?:re-?)?test|unit-test",
    "document": r"document",
    "deploy": r"deploy|re-?deploy|release|publish|roll\s+out",
    "review": r"review|re-?review|audit|code-review",
    "refactor": r"refactor|clean\s+up|restructure|simplify|tidy\s+up|reorgani[sz]e",
}
#: A follow-up told by its noun phrase: "tests for the endpoint", "documentation of the API", "a code
#: review of", "deployment to staging", "refactoring of".
_FOLLOW_NOUNS = {
    "test": rf"\b{_TEST_NOUN}\s+(?:for|of|covering|that)\b",
    "document": r"\b(?:documentation|docs|docstrings?)\s+(?:for|of)\b",
    "deploy": r"\b(?:deployment|release|rollout)\s+(?:of|to)\b",
    "review": r"\b(?:code|pr|pull[- ]request)\s+review\b|\breview\s+of\b",
    "refactor": r"\b(?:refactor(?:ing)?|clean-?up)\s+of\b",
}
_FAMILIES: list[tuple[str, re.Pattern[str]]] = [
    (family, re.compile(rf"{_START}(?P<verb>(?:{verb}))\b{_OBJECT}|{_FOLLOW_NOUNS[family]}", re.IGNORECASE | re.MULTILINE))
    for family, verb in _FOLLOW_VERBS.items()
] + [
    ("work", re.compile(rf"\b(?:{_MAKE_VERB})\b", re.IGNORECASE)),
    ("work", re.compile(r"\b(?:fix(?:es|ed|ing)?|repair(?:s|ed|ing)?|resolv(?:e|es|ed|ing)|patch(?:es|ed|ing)?|"
                        r"debug(?:s|ged|ging)?|correct(?:s|ed|ing)?)\b", re.IGNORECASE)),
]
#: The words that show an item is about a follow-up at all (read loosely: an item that tells a test
#: task names tests somewhere: "Admin endpoint tests (pending)").
_TOPIC = {
    "test": re.compile(r"\b(?:re-?)?test|\bspecs?\b|\bcoverage\b|\bpytest\b|\bjest\b|\bvitest\b", re.IGNORECASE),
    "document": re.compile(r"\bdoc(?:s|ument\w*|string\w*)?\b|\breadme\b|\bchangelog\b", re.IGNORECASE),
    "deploy": re.compile(r"\b(?:re-?)?deploy\w*|\breleas\w*|\bpublish\w*|\broll\w*\s+out|\brollout\b|\bstaging\b|"
                         r"\bprod(?:uction)?\b|\bship\w*", re.IGNORECASE),
    "review": re.compile(r"\breview\w*|\baudit\w*|\bPRs?\b", re.IGNORECASE),
    "refactor": re.compile(r"\brefactor\w*|\bclean\w*|\brestructur\w*|\bsimplif\w*|\btid(?:y|ies|ied|ying)\b|"
                           r"\breorgani[sz]\w*", re.IGNORECASE),
}


def _found(text: str) -> list[tuple[int, str]]:
    """The action families ``text`` names, with where each starts."""
    hits: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for m in _MADE_FOLLOW_UP.finditer(text):
        hits.append((m.start(), "test" if m.group("test") else "document"))
        taken.append((m.start(), m.end()))
    for family, pattern in _FAMILIES:
        for m in pattern.finditer(text):
            at = m.start("verb") if family != "work" and m.group("verb") else m.start()
            if any(a <= at < b for a, b in taken):
                continue  # the verb of "write tests for": already read as the follow-up
            hits.append((at, family))
    return sorted(hits)


@lru_cache(maxsize=4096)
def actions(text: str) -> frozenset[str]:
    """The action families ``text`` names (``work`` for make and fix).

    >>> sorted(actions("Write tests for admin discounts endpoint"))
    ['test']
    >>> sorted(actions("Add admin endpoint GET /admin/discounts, then write its tests"))
    ['test', 'work']
    >>> sorted(actions("Fix the failing login test"))
    ['work']
    >>> sorted(actions("- Product reviews page (in progress)"))
    []
    """
    return frozenset(f for _, f in _found(text))


@lru_cache(maxsize=4096)
def leading_action(text: str) -> str | None:
    """The first action family ``text`` names: the task's own action ("Write tests for X": test)."""
    found = _found(text)
    return found[0][1] if found else None


def same_action(task: str, item: str) -> bool:
    """Whether ``item`` may tell ``task`` as far as their actions go (see the module docstring).

    >>> same_action("Write tests for admin discounts endpoint", "- Add admin endpoint GET /admin/discounts")
    False
    >>> same_action("Add admin endpoint GET /admin/discounts", "- Document the admin discounts endpoint")
    False
    >>> same_action("Implement the CSV export", "- Build the CSV export (in progress)")
    True
    >>> same_action("Add admin endpoint GET /admin/discounts", "- Admin discounts endpoint (in progress)")
    True
    """
    own = leading_action(task)
    if own in FOLLOW_UPS:
        return _TOPIC[own].search(item) is not None
    named = actions(item)
    # an item of follow-ups only tells another task, unless the task speaks of them too ("Deploy to
    # staging", read loosely)
    return not named or not named <= FOLLOW_UPS or any(_TOPIC[f].search(task) for f in named)
