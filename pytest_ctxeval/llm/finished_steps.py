"""Finished steps of a request, for the offline drift heuristic: what it does not count as lost.

A person often asks for work in steps: "commit and push this plan and create a PR to master.. after
that you can plan the implementation in phases", "add the parser, then write the docs". When a
generation's request and next step are at a later step, the steps before it were done: a summary
that no longer carries "commit", "push" or "master" did not drift, it moved on (review 2, F23: an
imported real session failed drift at 2/5, "lost: commit; create; master"). A real judge reads the
sequence; the term-overlap heuristic is told it here.

Only an explicit sequence splits a request into steps ("after that", "afterwards", "then", "once
that is done", "when it's done", "finally", "next", numbered lines), never a plain sentence break: "Fix
the bug. Keep the API unchanged." is one step and its constraint, and a generation that keeps only
the constraint still lost the bug. The earlier steps count as finished only when the generation
holds a later step (:data:`HELD`); a generation that holds the first step and not the later one
still lost the later one. The same holds across drift's requests: a generation that holds the open
part of the *latest* request has moved on from the first one (a setup step such as "push & pr" or
"can you access the branch X", done long before), so the first request's terms are not counted as
lost. The price, said in docs/drift-offline.md: offline, a generation that holds the latest request
but rewrote the first one's goal is not caught by this heuristic (a real judge reads it).

>>> held = lambda step: 1.0 if "docs" in step else 0.0
>>> open_steps("First request: add the parser, then write the docs", held)
('write the docs', ['add the parser'])
>>> open_steps("First request: add the parser and write the docs", held)
('add the parser and write the docs', [])
>>> open_steps("First request: push and open a PR\\nLatest request: now write the docs", held)
('now write the docs', ['push and open a PR'])
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["open_steps", "HELD"]

#: A later step counts as held when the generation holds this share of its terms.
HELD = 0.6

#: The labels drift's intent puts before each request (graders/judge.py ``_intent``).
_REQUEST_LABEL = re.compile(r"^[ \t]*(?:first|latest|original|primary) request:[ \t]*", re.IGNORECASE | re.MULTILINE)
#: Where a request moves on to its next step: a sequence word after a clause break, or a numbered line.
_NEXT_STEP = re.compile(
    r"(?:[.;,!?:]+\s*|\s+[-–—]\s+|\s+)(?:and\s+)?(?:after\s+(?:that|this|it|which)|afterwards|then|"
    r"once\s+(?:that|this|it)(?:'s|\s+is|\s+has\s+been)?\s+(?:done|finished|merged|in)|"
    r"when\s+(?:that|this|it)(?:'s|\s+is)\s+(?:done|finished)|finally|next)\b[\s,:]*|"
    r"\n[ \t]*(?:\d+[.)]|step\s+\d+:?)[ \t]+", re.IGNORECASE)


def _steps(request: str) -> list[str]:
    return [s.strip(" .,;:\n\t") for s in _NEXT_STEP.split(request) if s and s.strip(" .,;:\n\t")]


def open_steps(intent: str, held: Callable[[str], float]) -> tuple[str, list[str]]:
    """``intent`` (drift's: labelled requests, or ``expect.intent``) without the finished steps of
    each request, and those steps. A request's steps before the last one ``held`` says the
    generation holds (a share of its terms of at least :data:`HELD`) are finished; a request with
    no held later step is kept whole."""
    kept: list[str] = []
    finished: list[str] = []
    requests = [r for r in _REQUEST_LABEL.split(intent) if r.strip()]
    for request in requests:
        steps = _steps(request)
        later = [k for k in range(1, len(steps)) if held(steps[k]) >= HELD]
        if not later:
            kept.append(request.strip())
            continue
        k = later[-1]
        finished += steps[:k]
        kept.append(" ".join(steps[k:]))
    # The requests are the person's steps too: a generation at the latest request has moved on
    # from the first one ("push & pr", "can you access the branch ...", done long before).
    if len(kept) > 1 and _REQUEST_LABEL.match(intent) and held(kept[-1]) >= HELD:
        finished = [r.strip() for r in requests[:-1]] + finished
        kept = kept[-1:]
    return "\n".join(kept), finished
