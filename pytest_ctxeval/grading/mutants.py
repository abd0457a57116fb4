"""Mutation operators: defective summaries derived from good ones, to test the graders.

A mutation operator is a pure function of a :class:`~pytest_ctxeval.grading.registry.CompactionCase` (its
parsed summary, its messages, its expectations) and a seeded :class:`random.Random`; it returns the
mutants it can make (none when it does not apply: nothing to drop), each breaking the invariant of
the graders it targets::

    @mutation("drop_branch", targets=["branch_named"])
    def drop_branch(case, rng):
        if "feature/" not in case.summary:
            return []
        return [Mutant.of(case, summary=case.summary.replace("feature/", "a branch "),
                          what="removed the branch name", text="feature/")]

Operators live next to graders (the built-in ones in :mod:`pytest_ctxeval.grading.mutation_ops`; a user's in
the grader folders, found when the folder is loaded). ``ctxeval validate`` applies every operator to
every summary and reports which mutants each grader catches (:mod:`pytest_ctxeval.grading.validation`).
"""

from __future__ import annotations

import dataclasses
import random
from functools import lru_cache
import re
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Iterable
from pathlib import PurePath

from ..errors import GraderError
from ..reading.extract import significant_tokens
from ..reading.summary import normalize_ws

__all__ = ["Mutant", "MutationSpec", "mutation", "MUTATION_MARK", "spec_of", "flexible", "find_spans",
           "remove_spans", "replace_section_body", "drop_lines", "CUT_OVERLAP", "overlap", "holds", "still_there"]

MUTATION_MARK = "__ctxeval_mutation__"


@dataclass
class Mutant:
    """One defective variant of a compaction case.

    ``case`` is the mutated case (a copy; the original is never changed); ``operator`` the operator
    that made it; ``targets`` the graders whose invariant it breaks (by default the operator's);
    ``what`` says what was changed, ``text`` the text that was removed, changed or added (what a
    surviving mutant slipped through).
    """

    case: Any
    what: str
    text: str = ""
    operator: str = ""
    targets: tuple[str, ...] = ()

    @classmethod
    def of(cls, case: Any, *, what: str, text: str = "", summary: str | None = None,
           summary_message: str | None = None, post_messages: list[Any] | None = None,
           targets: Iterable[str] | None = None) -> Mutant:
        """A mutant of ``case`` with a new summary (the summary message follows it: the old summary
        text inside it is replaced), a new summary message, or new kept messages."""
        changes: dict[str, Any] = {}
        if summary is not None:
            changes["summary"] = summary
            if summary_message is None:
                old = case.summary_message
                summary_message = old.replace(case.summary, summary, 1) if case.summary and case.summary in old \
                    else (summary if old == case.summary or not old else old)
        if summary_message is not None:
            changes["summary_message"] = summary_message
        if post_messages is not None:
            changes["post_messages"] = post_messages
        mutated = dataclasses.replace(case, **changes)
        # Copies keep the run's links (judge, generations) but no cached views of the old text; the
        # history is the case's own, and so is its text.
        for key in [k for k in mutated.__dict__ if k.startswith("_") or k in ("sections", "kept_text")]:
            if key not in changes:
                mutated.__dict__.pop(key, None)
        for key in ("history_text", "fact_positions", "shared_views"):  # views of the history alone
            if key in case.__dict__:
                mutated.__dict__[key] = case.__dict__[key]
        return cls(case=mutated, what=what, text=text, targets=tuple(targets) if targets is not None else ())


@dataclass(frozen=True)
class MutationSpec:
    """A registered operator: its name, the graders it targets, the function, where it is defined."""

    name: str
    targets: tuple[str, ...]
    func: Callable[[Any, random.Random], Iterable[Mutant]]
    origin: str = ""
    description: str = ""

    def apply(self, case: Any, seed: int) -> list[Mutant]:
        """The operator's mutants of ``case`` for ``seed``: the same seed gives the same mutants, in
        any checkout (the file's name seeds them, never the folder it sits in)."""
        rng = random.Random(f"{seed}:{self.name}:{PurePath(str(case.source)).name}:{case.index}")
        out = []
        for m in self.func(case, rng) or ():
            if not isinstance(m, Mutant):
                raise GraderError(f"mutation operator {self.name!r} ({self.origin}) returned "
                                  f"{type(m).__name__}, not a Mutant; build one with Mutant.of(case, ...)")
            m.operator = self.name
            m.targets = m.targets or self.targets
            out.append(m)
        return out


def mutation(name: str, *, targets: Iterable[str]) -> Callable[[Callable], Callable]:
    """Register a function ``(case, rng) -> list[Mutant]`` as a mutation operator named ``name``
    that breaks the invariant of the graders named in ``targets``."""
    if not name or not name.replace("_", "").isalnum():
        raise GraderError(f"mutation name must be letters, digits and '_'; got {name!r}")
    targets = tuple(targets)
    if not targets or not all(isinstance(t, str) and t for t in targets):
        raise GraderError(f"mutation {name!r}: targets must name at least one grader, got {targets!r}")

    def mark(func: Callable) -> Callable:
        setattr(func, MUTATION_MARK, (name, targets))
        return func

    return mark


def spec_of(func: Callable, origin: str = "") -> MutationSpec | None:
    """The :class:`MutationSpec` of a function marked with :func:`mutation`, else None."""
    mark = getattr(func, MUTATION_MARK, None)
    if not mark or not callable(func):
        return None
    code = getattr(func, "__code__", None)
    where = origin or (f"{code.co_filename}:{code.co_firstlineno}" if code else "")
    return MutationSpec(mark[0], mark[1], func, where, (func.__doc__ or "").strip().split("\n")[0])


# ---------------------------------------------------------------------------------------------
# Text helpers for operators (pure; whitespace-tolerant like the graders)


def flexible(needle: str) -> re.Pattern[str]:
    """A pattern matching ``needle`` with any run of whitespace where it has whitespace."""
    words = needle.split()
    return re.compile(r"\s+".join(re.escape(w) for w in words)) if words else re.compile(r"(?!)")


def loose(needle: str) -> re.Pattern[str]:
    """A pattern matching ``needle`` as the graders still find it verbatim in more places than
    :func:`flexible`: any case, any whitespace, its trailing punctuation there or not ("in one turn,"
    is kept by "in one turn" in the Analysis part). An operator that removes a message must remove
    every copy a grader would still count."""
    words = needle.split()
    if not words:
        return re.compile(r"(?!)")
    last = words[-1].rstrip(".,;:!?") or words[-1]
    body = r"\s+".join([re.escape(w) for w in words[:-1]] + [re.escape(last)])
    return re.compile(rf"(?<![\w]){body}[.,;:!?]*", re.IGNORECASE)


def kept_verbatim(text: str, region: str) -> bool:
    """Whether the graders still count the person's message ``text`` as kept verbatim in ``region``
    (:func:`pytest_ctxeval.reading.quoting.message_kept`): how an operator checks its mutant really
    lost it, by the graders' own reading, not a plain substring test."""
    from ..reading.quoting import message_kept
    from ..reading.verbatim import haystack

    return bool(region.strip()) and bool(message_kept(text, haystack(region)))


def find_spans(text: str, needle: str) -> list[tuple[int, int]]:
    """Character spans of ``needle`` in ``text`` (whitespace-tolerant)."""
    return [m.span() for m in flexible(needle).finditer(text)]


def remove_spans(text: str, spans: list[tuple[int, int]], replacement: str = "") -> str:
    """``text`` with each span replaced by ``replacement`` (spans may come in any order)."""
    for start, end in sorted(set(spans), reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _line_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    a = text.rfind("\n", 0, start) + 1
    b = text.find("\n", end)
    return a, (len(text) if b == -1 else b + 1)


def drop_lines(text: str, spans: list[tuple[int, int]], protect: Iterable[int] = ()) -> str:
    """``text`` without the whole lines the spans touch; a line that starts at an offset in
    ``protect`` (a section header) keeps its header and loses only the span."""
    protected = set(protect)
    cuts = []
    for start, end in spans:
        a, b = _line_bounds(text, start, end)
        cuts.append((start, end) if a in protected else (a, b))
    return remove_spans(text, cuts)


def replace_section_body(summary: str, section: Any, new_body: str) -> str | None:
    """``summary`` with the body of ``section`` (a parsed :class:`~pytest_ctxeval.reading.summary.Section`)
    replaced by ``new_body``, or None when the body cannot be located."""
    header = _header_offset(summary, section)
    if header is None:
        return None
    start = summary.find("\n", header)
    start = len(summary) if start == -1 else start + 1
    end = _next_header_offset(summary, start)
    return summary[:start] + new_body.rstrip("\n") + "\n" + ("\n" if end < len(summary) else "") + summary[end:]


def section_span(summary: str, section: Any) -> tuple[int, int] | None:
    """The span of ``section`` (header line and body) in ``summary``, or None."""
    header = _header_offset(summary, section)
    if header is None:
        return None
    body = summary.find("\n", header)
    return header, (len(summary) if body == -1 else _next_header_offset(summary, body + 1))


def _header_offset(summary: str, section: Any) -> int | None:
    lines = summary.split("\n")
    if section.line < 1 or section.line > len(lines) or section.title not in lines[section.line - 1]:
        return None
    return sum(len(l) + 1 for l in lines[: section.line - 1])


def _next_header_offset(summary: str, start: int) -> int:
    later = [o for o in _header_offsets(summary) if o >= start]
    return min(later) if later else len(summary)


@lru_cache(maxsize=256)  # operators ask for several sections of the same summary
def _header_offsets(summary: str) -> tuple[int, ...]:
    """Where each section's header line starts in ``summary``."""
    from ..reading.summary import parse_summary

    starts = [0]
    for line in summary.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    return tuple(starts[s.line - 1] for s in parse_summary(summary).sections)


@dataclass
class MutationSet:
    """Operators by name (built-in first, then the user's), with the graders each targets."""

    specs: dict[str, MutationSpec] = field(default_factory=dict)

    def add(self, spec: MutationSpec) -> None:
        if spec.name in self.specs and self.specs[spec.name].func is not spec.func:
            raise GraderError(f"mutation operator {spec.name!r} is defined twice: {self.specs[spec.name].origin} "
                              f"and {spec.origin}; rename one")
        self.specs[spec.name] = spec

    def __iter__(self):
        return iter(self.specs.values())

    def targeting(self, grader: str, declared: Iterable[str] = ()) -> list[str]:
        """The operators that target ``grader``: those naming it in their targets, and those the
        grader names in its own ``targets``."""
        declared = set(declared)
        return [s.name for s in self if grader in s.targets or s.name in declared]


# ---------------------------------------------------------------------------------------------
# Whether a fact is still there (shared by the operator modules)

#: A line is cut with a fact when it holds this share of the fact's significant tokens.
CUT_OVERLAP = 0.5


def overlap(needle: str, text: str) -> float:
    """The share of ``needle``'s significant tokens that ``text`` holds."""
    tokens = significant_tokens(needle)
    if not tokens:
        return 0.0
    have = set(significant_tokens(text))
    return sum(t in have for t in tokens) / len(tokens)


def holds(needle: str, text: str, share: float) -> bool:
    """Whether ``text`` holds ``needle`` verbatim (whitespace and case aside) or ``share`` of its tokens."""
    return normalize_ws(needle).lower() in normalize_ws(text).lower() or overlap(needle, text) >= share


def still_there(needle: str, region: str) -> bool:
    """Whether ``needle`` is still in ``region``: verbatim, or most of its tokens in one item."""
    items = re.split(r"\n(?=\s{0,6}(?:[-*]|\d+[.)])\s)|\n\s*\n", region)
    return holds(needle, region, 2.0) or any(overlap(needle, i) >= 0.8 for i in items)
