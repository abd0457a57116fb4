"""How the offline model meets a length limit ("keep the summary under 500 words"): what a writer
short of room gives up first, and what it keeps to the end.

A real model given a budget does not cut the longest section: it keeps what the next turn cannot do
without and squeezes the rest (second fresh review, F29: a 500-word limit made the offline model
drop the file that held the fix, the user's messages and the open tasks, while it kept narration,
so any limit looked like a loss). Each line of each section gets a rank, and the lines are given up
lowest rank first, the section with the most such lines first, from its end:

* kept to the end (rank 0): the user's requests (section 1's first request, every message of
  section 6), the latest request quoted in section 9, the errors, the files changed (the files that
  hold the fix), the open tasks, the memory-file rules;
* rank 1: the approaches that did not work (so they are not retried), the facts and findings
  that state a rule ("Never run migrations against X without a snapshot"), and section 1's later
  requests when section 6 lists every message (the same words twice; shortened first, since the
  request section is what carries the person's direction from one summary to the next);
* rank 2: the facts taken from tool results, and the assistant's findings that name a file, a
  value or a call ("The trace ends in src/cache/keys.py");
* rank 3: the narration: the tool-call count, the other findings ("Reading the checkout service, a
  page at a time."), the current work;
* rank 4, first to go: the tool and file-type list and the files only read.

Before any line goes, code snippets and repeated error lines go (:func:`~.rewording.drop_snippets_and_repeats`)
and lines of rank 3 and 4 (and section 1's later requests) longer than :data:`SQUEEZE_WORDS` are
shortened to it. Only when every line
below rank 0 is gone does a rank-0 line go: from the section with the most lines, a changed file
last; the oldest error, a user message between the first and the latest, else the last line. That
is a real loss, and the graders see it. With one line a section left, lines are cut short
(:func:`~.rewording.trim_to_limit`).
"""

from __future__ import annotations

import re

from .relied import TOOL_FACTS_HEADER
from .rewording import cut_to, drop_snippets_and_repeats, names_something, size_of, trim_to_limit
from .summary_text import FAILED_HEADER, FINDINGS_HEADER, RULES_HEADER

__all__ = ["fit_to_limit", "line_ranks", "SQUEEZE_WORDS", "LATER_REQUESTS"]

#: Section 1's sub-heading before the requests after the first (the reference model writes it).
LATER_REQUESTS = "Later requests and corrections, oldest first:"

#: A narration line (rank 3 or 4) is shortened to this many words before lines are given up.
SQUEEZE_WORDS = 25

#: A fact or finding that states a rule: kept with the constraints (rank 1), not with the facts.
_RULE = re.compile(r"\b(?:never|must(?:n't| not)?|always|do not|don't|only ever|under no circumstances)\b",
                   re.IGNORECASE)
#: The sections whose near-identical lines are repeats a writer drops (the same error, failing again).
_REPEATS = frozenset({"errors"})
#: Rank of the items under each sub-heading of a section (the sub-heading itself takes its items' rank).
_UNDER = {RULES_HEADER: 0, FAILED_HEADER: 1, TOOL_FACTS_HEADER: 2, FINDINGS_HEADER: 3}
#: Rank of the lines of each kind of section (``requested_sections``' kinds), before sub-headings.
_BY_KIND = {"request": 0, "concepts": 4, "files": 0, "errors": 0, "problem": 3, "user_messages": 0, "pending": 0,
            "current": 3, "next": 0}


def line_ranks(kind: str, lines: list[str], *, messages_listed: bool) -> list[int]:
    """The rank of each line of one section (0: kept to the end ... 4: first to go).
    ``messages_listed``: the summary has section 6, so section 1's later requests repeat it.

    >>> line_ranks("files", ["- a.py — edited", "- b.py — read"], messages_listed=True)
    [0, 4]
    >>> line_ranks("request", ["The user's first request: x", "Later requests and corrections, oldest first:", "- y"],
    ...            messages_listed=True)
    [0, 1, 1]
    """
    rank = _BY_KIND.get(kind, 1)
    out = []
    for line in lines:
        head = line.strip()
        if head in _UNDER:
            rank = _UNDER[head]
        elif kind == "request" and head == LATER_REQUESTS:
            rank = 1 if messages_listed else 0
        if kind == "files" and head.endswith(" — read"):
            out.append(4)
            continue
        if rank in (2, 3) and kind == "problem" and head.startswith("- ") and _RULE.search(head):
            out.append(1)  # a rule ("never run migrations against X without a snapshot") is a constraint
            continue
        if rank == 3 and kind == "problem" and head.startswith("- ") and names_something(head):
            out.append(2)  # a finding that names a file, a value or a call is a fact, not narration
            continue
        out.append(rank)
    return out


def fit_to_limit(sections: list[tuple[str, list[str]]], kinds: list[str], amount: int,
                 unit: str) -> list[tuple[str, list[str]]]:
    """``sections`` (heading, body lines; ``kinds`` names each one's kind) cut to ``amount``
    ``unit`` in rank order (the module docstring). Nothing changes when they fit."""
    out = [(h, list(ls)) for h, ls in sections]

    def total() -> int:
        return size_of("\n".join(h + "\n" + "\n".join(ls) for h, ls in out), unit)

    if total() <= amount:
        return out
    # Repeats only of an error (five failures of one error are one); tasks, files and messages
    # that differ by a number are different ones.
    repeats = [k in _REPEATS for k in kinds]
    out = drop_snippets_and_repeats(out, amount, unit, repeats)
    listed = "user_messages" in kinds
    ranks = [line_ranks(k, ls, messages_listed=listed) for k, (_, ls) in zip(kinds, out)]
    if total() > amount:  # narration squeezed, as a writer short of room writes it
        for k, (_, ls), rs in zip(kinds, out, ranks):
            for i, r in enumerate(rs):
                if r >= 3 or (r and k == "request"):
                    ls[i] = cut_to(ls[i], SQUEEZE_WORDS, "words")
    while total() > amount:
        low = max((r for rs in ranks for r in rs), default=0)
        if low == 0:
            if not _give_up_kept(out, kinds, ranks):
                break
            continue
        # The section with the most lines of that rank gives up its last one (each keeps a line).
        candidates = [i for i, rs in enumerate(ranks) if rs.count(low) and len(rs) > 1]
        if not candidates:
            for rs in ranks:  # a lone line of that rank stays: go on to the next rank
                rs[:] = [min(r, low - 1) for r in rs]
            continue
        i = max(candidates, key=lambda i: (ranks[i].count(low), len(out[i][1])))
        at = max(n for n, r in enumerate(ranks[i]) if r == low)
        del out[i][1][at], ranks[i][at]
    if total() > amount:  # one line a section left: cut the lines short
        out = trim_to_limit(out, amount, unit, repeats)
    return out


def _give_up_kept(out: list[tuple[str, list[str]]], kinds: list[str], ranks: list[list[int]]) -> bool:
    """Give up one line of what is kept to the end (a real loss): from the section with the most
    lines, the changed files last; the oldest error, a user message between the first and the
    latest (the first is section 1's request, the latest section 9's), else the last line. False
    when every section is down to one line."""
    candidates = [i for i, (_, ls) in enumerate(out) if len(ls) > 1]
    if not candidates:
        return False
    i = max(candidates, key=lambda i: (kinds[i] != "files" or all(len(out[j][1]) <= 1 for j in candidates
                                                                 if kinds[j] != "files"), len(out[i][1])))
    lines = out[i][1]
    at = {"errors": 0, "user_messages": 1 if len(lines) > 2 else 0}.get(kinds[i], len(lines) - 1)
    del lines[at], ranks[i][at]
    return True
