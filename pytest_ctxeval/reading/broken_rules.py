"""A summary that tells work which breaks a rule the person set, and does not say so: the person
said "don't change the public API", and section 8 says "the public function signature of parse() was
changed". The next context window reads the fix as done and the rule as kept (or moot).

The rules are the person's prohibitions (:mod:`.prohibitions`: one reader, both kinds), those no later
message of theirs lifted. A sentence of the summary breaks one when it mentions what the rule names
in a clause that does not negate it (:func:`.proposals.proposals`, also in other words) and:

* for a rule against changing ``X``: a change verb acts on it, in any tense ("changed the public
  API", "Change the public API so …": :func:`.prohibitions.changes`), or it is the subject of one in
  the passive ("the public function signature … was changed");
* for a rule against using ``X``: a verb of using or adding acts on it ("added Chakra for the
  dialog", "switched to SQLite").

An API is told by its parts too: the signature of a public (exported) function, method or class.
A sentence that says the work goes against the rule ("which the user forbade", "must be reverted",
"violates the rule") tells the conflict rather than hiding it, and does not break it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .prohibitions import Prohibition, changes
from .proposals import NEGATOR, mention_pattern, reworded_mentions

__all__ = ["Broken", "broken_rules"]

#: The parts of an API a sentence may name for it: a public function's signature, an exported class.
_API = re.compile(r"\b(?:api|apis|interface)\b", re.IGNORECASE)
_API_PARTS = re.compile(
    r"\b(?:(?:signatures?\s+of\s+(?:the\s+)?)?(?:public|exported)\s+(?:functions?|methods?|class(?:es)?|interfaces?|"
    r"signatures?)(?:\s+signatures?)?)", re.IGNORECASE)
#: The passive of a change after the mention: "… was changed", "… has been modified".
_CHANGED_AFTER = re.compile(r"^[^.;!?\n]{0,40}?\b(?:is|are|was|were|has been|have been|got|now)\s+(?:now\s+)?"
                            r"(?:changed|modified|updated|altered|rewritten|renamed|replaced|extended|reworked|"
                            r"broken)\b", re.IGNORECASE)
_USE_VERB = re.compile(r"\b(?:us(?:e|es|ed|ing)|add(?:s|ed|ing)?|install(?:s|ed|ing)?|adopt(?:s|ed|ing)?|"
                       r"introduc(?:e|es|ed|ing)|switch(?:es|ed|ing)? to|migrat(?:e|es|ed|ing) to|import(?:s|ed|ing)?|"
                       r"pull(?:s|ed|ing)? in)\s+(?:[\w'’./-]+\s+){0,3}$", re.IGNORECASE)
#: A negation right before the verb: "without changing", "did not change", "avoided adding".
_NOT_DONE = re.compile(r"\b(?:without|not|never|no|nor|avoid(?:s|ed|ing)?|instead of|rather than)\s+(?:\w+\s+)?$|n't\s+"
                       r"(?:\w+\s+)?$", re.IGNORECASE)
#: The sentence says the work goes against the rule: it tells the conflict.
_FLAGGED = re.compile(r"\b(?:forb[ai]de|forbidden|against (?:the|their|his|her|your|my) (?:user'?s?\s+|person'?s?\s+)?"
                      r"(?:rule|wish|instruction|request|constraint)s?|violat\w*|breaks? (?:the|a) (?:user'?s?\s+)?rule|"
                      r"not allowed|revert\w*|roll(?:ed)? back|undo|should not have|shouldn't have|contrary to|"
                      r"despite (?:the|their) (?:rule|instruction))\b", re.IGNORECASE)


@dataclass(frozen=True)
class Broken:
    rule: Prohibition
    clause: str      # the summary's clause that breaks it


#: A clause ends at a sentence end, a semicolon, a colon, a line break.
_CLAUSE_END = re.compile(r"[.!?;:](?=\s|$)|\n")


def _clauses(text: str, rule: Prohibition, exempt: Sequence[tuple[int, int]]) -> list[tuple[str, int, int]]:
    """The clauses of ``text`` that mention what ``rule`` names (in its words, reworded, or for an API
    by its parts), outside ``exempt``, with the mention's offsets in the clause; a clause that negates
    it before the mention ("without changing the public API") is left out."""
    spans = [m.span() for m in mention_pattern(rule.what).finditer(text)] + reworded_mentions(text, rule.what)
    if _API.search(rule.what):
        spans += [m.span() for m in _API_PARTS.finditer(text)]
    out = []
    for start, end in sorted(set(spans)):
        if any(a <= start < b for a, b in exempt):
            continue
        a = max((m.end() for m in _CLAUSE_END.finditer(text, 0, start)), default=0)
        b = next((m.start() for m in _CLAUSE_END.finditer(text, end)), len(text))
        if NEGATOR.search(text[a:start]):
            continue
        out.append((text[a:b], start - a, end - a))
    return out


def _breaks(clause: str, start: int, end: int, rule: Prohibition) -> bool:
    """Whether ``clause`` does what ``rule`` forbids to the mention at ``start:end``."""
    if _FLAGGED.search(clause):
        return False   # it says the work goes against the rule
    before = clause[:start]
    if rule.forbids == "use":
        verb = _USE_VERB.search(before)
        return verb is not None and not _NOT_DONE.search(before[:verb.start()])
    if changes(clause, start, end, done=True):
        return True
    return bool(_CHANGED_AFTER.match(clause[end:]))


def broken_rules(text: str, rules: Sequence[Prohibition], exempt: Sequence[tuple[int, int]] = ()) -> list[Broken]:
    """The rules of ``rules`` that a clause of ``text`` (a section of the summary) breaks without
    saying so, each with the first such clause (see the module docstring). ``exempt``: spans that
    quote the person (their own words are not the summary's)."""
    out = []
    for rule in rules:
        hit = next((c for c, a, b in _clauses(text, rule, exempt) if _breaks(c, a, b, rule)), None)
        if hit is not None:
            out.append(Broken(rule, " ".join(hit.split())))
    return out
