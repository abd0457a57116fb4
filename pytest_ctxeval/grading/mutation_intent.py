"""Built-in mutation operators over intent: constraints, failed approaches, superseded intents.

``revive_superseded`` proposes an intent the user dropped (``expect.superseded``) in several
phrasings and places (:data:`SUPERSEDED_PHRASINGS`): the phrasings a summariser really writes, not
only a bare "do X" — hedged, conditional, inside a longer sentence, right after a closing quotation
mark, in the pending or current-work section.
"""

from __future__ import annotations

import random
import re
from typing import Any

from ..reading.cancellations import names_intent, typed_cancellations
from ..reading.extract import open_todos
from .mutants import CUT_OVERLAP, Mutant, holds as _holds, mutation, section_span, still_there as _still_there
from .mutation_ops import lost_people_targets
from ..reading.summary import normalize_ws

__all__ = ["drop_constraint", "invert_constraint", "drop_failed_approach", "propose_failed_approach", "revive_superseded",
           "SUPERSEDED_PHRASINGS", "append_to_section"]


def append_to_section(summary: str, section: Any, line: str) -> str | None:
    """``summary`` with ``line`` added at the end of ``section``'s body."""
    span = section_span(summary, section)
    if span is None:
        return None
    a, b = span
    block = summary[a:b].rstrip("\n")
    tail = summary[a:b][len(block):] or ("\n" if b < len(summary) else "")
    return summary[:a] + block + "\n" + line + tail + summary[b:]


def _drop_everywhere(case: Any, needle: str, share: float) -> str:
    """The summary without the lines that carry ``needle`` (at least ``share`` of its words);
    section headers keep their line, and a section left empty says so."""
    headers = {s.line for s in case.sections.sections}
    lines = case.summary.split("\n")
    kept = [(n, l) for n, l in enumerate(lines, start=1) if n in headers or not _holds(needle, l, share)]
    out = []
    for i, (n, l) in enumerate(kept):
        out.append(l)
        nxt = next((m for m, x in kept[i + 1:] if x.strip()), None)
        if n in headers and not (l.split(":", 1)[1].strip() if ":" in l else "") and (nxt is None or nxt in headers):
            out.append("   - (nothing further)")
    return "\n".join(out)


def _drop_item(case: Any, rng: random.Random, items: list[str], what: str, own: str) -> list[Mutant]:
    pool = [i for i in case.reached(items) if _holds(i, case.summary, CUT_OVERLAP)]
    rng.shuffle(pool)
    for item in pool:
        for share in (0.8, CUT_OVERLAP):  # the lines that hold the item, then those that hold half of it
            mutant = Mutant.of(case, summary=_drop_everywhere(case, item, share), what=what, text=item)
            context = (mutant.case.summary_message or mutant.case.summary) + "\n" + case.kept_text
            if not _still_there(item, context):
                mutant.targets = tuple(dict.fromkeys((own, *lost_people_targets(case, mutant.case))))
                return [mutant]
    return []


@mutation("drop_constraint", targets=("constraints_preserved",))
def drop_constraint(case: Any, rng: random.Random) -> list[Mutant]:
    """Remove every line that carries one rule of expect.constraints."""
    return _drop_item(case, rng, list(case.expect.constraints), "dropped a constraint", "constraints_preserved")


_PROHIBITION = re.compile(r"\b(?:do not|don't|never|must not|mustn't|should not|shouldn't)\s+", re.IGNORECASE)


@mutation("invert_constraint", targets=("constraints_preserved",))
def invert_constraint(case: Any, rng: random.Random) -> list[Mutant]:
    """Turn a prohibition of expect.constraints into a permission wherever the summary says it."""
    pool = [c for c in case.reached(case.expect.constraints) if _PROHIBITION.search(c)
            and normalize_ws(c).lower() in normalize_ws(case.summary).lower()
            and normalize_ws(c).lower() not in normalize_ws(case.kept_text).lower()]
    if not pool:
        return []
    rule = rng.choice(pool)
    allowed = _PROHIBITION.sub("", rule, count=1)
    allowed = "You may " + allowed[:1].lower() + allowed[1:]
    pattern = re.compile(r"\s+".join(re.escape(w) for w in rule.split()), re.IGNORECASE)
    mutant = Mutant.of(case, summary=pattern.sub(lambda _m: allowed, case.summary), what="inverted a prohibition",
                       text=allowed)
    targets = ["constraints_preserved", *lost_people_targets(case, mutant.case)]
    # The person's own "don't touch X", now a permission in section 7 or 9: the summary proposes the
    # change they forbade, which no_superseded_work reads (the "change" prohibitions of reading/prohibitions.py).
    if _forbidden_by_the_person(case, rule) and pattern.search(case.sections.body("pending", "next")):
        targets.append("no_superseded_work")
    mutant.targets = tuple(dict.fromkeys(targets))
    return [mutant]


def _forbidden_by_the_person(case: Any, rule: str) -> bool:
    """Whether ``rule`` states a prohibition the person typed and the reader holds (a "don't touch
    X" whose X the rule names)."""
    held = case.shared_view("typed_cancellations", lambda: typed_cancellations(case.history), case.history)
    return any(h.kind == "hands_off" and names_intent(rule, h.subject) for h in held)


@mutation("drop_failed_approach", targets=("failed_approaches_preserved",))
def drop_failed_approach(case: Any, rng: random.Random) -> list[Mutant]:
    """Remove every line that records one approach of expect.failed_approaches."""
    return _drop_item(case, rng, list(case.expect.failed_approaches), "dropped a failed approach",
                      "failed_approaches_preserved")


@mutation("propose_failed_approach", targets=("failed_approaches_preserved", "no_superseded_work"))
def propose_failed_approach(case: Any, rng: random.Random) -> list[Mutant]:
    """Propose a failed approach again as the next step."""
    section = case.sections.get("next")
    pool = case.reached(case.expect.failed_approaches)
    if section is None or not pool:
        return []
    approach = rng.choice(pool)
    summary = append_to_section(case.summary, section, f"   Next, try {approach} once more to see if it helps.")
    also = ("no_superseded_work",) if _same_thing(approach, case.expect.superseded) else ()
    return [Mutant.of(case, summary=summary, what="section 9 proposes a failed approach again",
                      text=approach, targets=("failed_approaches_preserved", *also))] if summary else []


def _same_thing(item: str, others: list[str]) -> bool:
    a = normalize_ws(item).lower()
    return any(a in normalize_ws(o).lower() or normalize_ws(o).lower() in a for o in others)


#: How ``revive_superseded`` proposes a dropped intent ``{i}``: (name, section kind, line). The
#: ``after_quote`` form goes right after the last closing quotation mark of section 9.
SUPERSEDED_PHRASINGS: tuple[tuple[str, str, str], ...] = (
    ("plain", "next", "   Next: {i}."),
    ("hedged", "next", "   Consider whether to {i} as well."),
    ("could_still", "next", "   We could still {i} once this is done."),
    ("embedded", "next", "   Once the current change is reviewed and the tests pass, {i} so that the original plan "
                         "is complete."),
    ("after_quote", "next", " Then {i}."),
    ("pending_item", "pending", "   - {i}"),
    ("current_work", "current", "   Also in progress: {i}, picked up again."),
)


def _after_last_quote(summary: str, section: Any, text: str) -> str | None:
    span = section_span(summary, section)
    if span is None:
        return None
    a, b = span
    seg = summary[a:b]
    at = max(seg.rfind("\""), seg.rfind("”"))
    if at <= seg.find("\n"):
        return None
    at += 1
    while at < len(seg) and seg[at] in ".)":
        at += 1
    return summary[:a] + seg[:at] + text + seg[at:] + summary[b:]


@mutation("revive_superseded", targets=("no_superseded_work", "failed_approaches_preserved"))
def revive_superseded(case: Any, rng: random.Random) -> list[Mutant]:
    """Propose an intent the user dropped (expect.superseded), in each of several phrasings."""
    open_now = [normalize_ws(t).lower() for t in open_todos(case.summarized)]
    pool = [i for i in case.reached(case.expect.superseded)
            if not any(normalize_ws(i).lower() in t for t in open_now)]
    if not pool:
        return []
    intent = rng.choice(pool)
    # An intent that is also a failed approach, revived, is proposed again as well.
    targets = ("no_superseded_work",
               *(("failed_approaches_preserved",) if _same_thing(intent, case.expect.failed_approaches) else ()))
    out = []
    for name, kind, template in SUPERSEDED_PHRASINGS:
        section = case.sections.get(kind)
        if section is None:
            continue
        line = template.format(i=intent)
        summary = (_after_last_quote(case.summary, section, line) if name == "after_quote"
                   else append_to_section(case.summary, section, line))
        if summary:
            out.append(Mutant.of(case, summary=summary, what=f"revived superseded intent ({name}) in section "
                                 f"'{section.title}'", text=line.strip(), targets=targets))
    return out
