"""Planted facts: typed facts a scenario plants, and whether each compaction kept them.

A scenario lists the facts that must survive compaction::

    facts:
      - id: db_port
        type: constraint             # safety_rule, constraint, fact, goal_state, preference, identifier,
                                     # or your own lower-case name (e.g. api_contract)
        planted: tool                # user | memory | tool | assistant: where the session states it
        text: "the staging database listens on port 5433"   # what it says (for reports)
        tokens: ["5433"]             # what must remain for the fact to count as held
        update:                      # optional: a later turn changes its value
          turn: 14                   # the index in turns: where the new value comes (for reports)
          tokens: ["6543"]           # the new value: from then on, these must remain...
          replaces: ["5433"]         # ...and these are the old value (default: tokens not in the new ones)
    expect:
      survival: {safety_rule: 1.0, constraint: 1.0, fact: 0.75}   # bars per type (defaults below)
      compression: {share: 0.5, min_tokens: 1000}                  # the `compresses` gate

A fact is **planted** at a compaction when its tokens appear, before it, in a message of the kind it
names (a person-typed message, a memory file shown in a ``<system-reminder>``, a tool result, the
assistant's text): facts the session has not reached yet are not counted, neither held nor lost. It
is **held** when every one of its tokens (its new tokens once the update has come) is in the
post-compact context as the model sees it: the summary and every message the compaction kept. Tokens
match case-insensitively, whole words only (``8080`` is not in ``18080``).

Across re-compactions, round *k* is the *k*-th compaction of the run; the **survival curve** of a
type is its share held per round, and its **cliff round** the first round where that share falls
below the type's bar (:func:`survival`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..core.messages import (
    AssistantMessage, CompactBoundary, UserMessage, person_text, result_text, text_of, tool_results,
)
from ..reading.summary import normalize_ws

__all__ = [
    "PlantedFact", "FactUpdate", "CompressionBar", "FACT_TYPES", "PLACES", "PLACE_NAMES", "DEFAULT_BARS",
    "DEFAULT_SHARE", "DEFAULT_MIN_TOKENS", "FactState", "fact_states", "has_token", "has_all", "has_any", "post_text", "survival",
    "bars_of", "fact_label", "survival_entry",
]

#: The fact types of compaction-conformance-kit (PEERS.md), and identifiers; a scenario may add its own.
FACT_TYPES = ("safety_rule", "constraint", "fact", "goal_state", "preference", "identifier")
PLACES = ("user", "memory", "tool", "assistant")
PLACE_NAMES = {"user": "a user message", "memory": "a memory file", "tool": "a tool result",
               "assistant": "the assistant's words"}
#: Bars a type must reach in every round unless ``expect.survival`` says otherwise: a summary that
#: drops a safety rule or a hard constraint has failed; for other types the share is reported, not gated.
DEFAULT_BARS = {"safety_rule": 1.0, "constraint": 1.0}
#: The ``compresses`` gate: what a compaction puts in place of what it replaced must be smaller than
#: this share of it, checked when it replaced at least ``DEFAULT_MIN_TOKENS`` (a small compaction
#: carries the summary's fixed frame and may not shrink much; compaction-conformance-kit checks an
#: output against a budget share the same way).
DEFAULT_SHARE = 0.5
DEFAULT_MIN_TOKENS = 1_000

_TYPE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _tokens(v: list[str]) -> list[str]:
    out = [str(t).strip() for t in v]
    if any(not t for t in out):
        raise ValueError("a token may not be empty")
    if any(len(t) > 200 for t in out):
        raise ValueError("a token is at most 200 characters (give the distinctive part: '5433', not a paragraph)")
    return out


class FactUpdate(_Strict):
    """A later turn that changes a fact's value."""

    tokens: list[str] = Field(min_length=1)
    replaces: list[str] | None = None
    turn: int | None = Field(default=None, ge=0)

    _t = field_validator("tokens")(_tokens)

    @field_validator("replaces")
    @classmethod
    def _r(cls, v: list[str] | None) -> list[str] | None:
        return None if v is None else _tokens(v)


class PlantedFact(_Strict):
    """One fact that must survive compaction (see the module docstring)."""

    id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    type: str
    planted: Literal["user", "memory", "tool", "assistant"]
    text: str = ""
    tokens: list[str] = Field(min_length=1)
    turn: int | None = Field(default=None, ge=0)
    update: FactUpdate | None = None

    _t = field_validator("tokens")(_tokens)

    @field_validator("type")
    @classmethod
    def _type(cls, v: str) -> str:
        if not _TYPE.match(v):
            raise ValueError(f"a fact type is one of {', '.join(FACT_TYPES)}, or your own lower-case name "
                             f"(letters, digits, '_'); got {v!r}")
        return v

    @model_validator(mode="after")
    def _update(self) -> PlantedFact:
        if self.update is not None:
            old = self.old_tokens
            if not old:
                raise ValueError("update: the new tokens repeat every old one, so nothing tells the old value "
                                 "apart; give 'replaces: [old value]'")
        return self

    @property
    def old_tokens(self) -> list[str]:
        """The tokens of the value an update replaced (the stale value)."""
        if self.update is None:
            return []
        if self.update.replaces is not None:
            return list(self.update.replaces)
        new = {t.lower() for t in self.update.tokens}
        return [t for t in self.tokens if t.lower() not in new]


class CompressionBar(_Strict):
    """``expect.compression``: the ``compresses`` gate's share and the size it applies from."""

    share: float = Field(default=DEFAULT_SHARE, gt=0, le=10)
    min_tokens: int = Field(default=DEFAULT_MIN_TOKENS, ge=0)


def check_bars(v: dict[str, float]) -> dict[str, float]:
    """``expect.survival``: each key a fact type, each bar in [0, 1]."""
    for key, bar in v.items():
        if not _TYPE.match(str(key)):
            raise ValueError(f"survival.{key}: not a fact type name (letters, digits, '_')")
        if not 0.0 <= float(bar) <= 1.0:
            raise ValueError(f"survival.{key}: a bar is a share from 0 to 1, got {bar!r}")
    return {k: float(b) for k, b in v.items()}


def bars_of(expect: Any) -> dict[str, float]:
    """The bar of every type: the defaults, then ``expect.survival``."""
    return {**DEFAULT_BARS, **(getattr(expect, "survival", None) or {})}


def fact_label(fact: PlantedFact, index: int) -> str:
    """``'db_port'`` or ``'fact 3'`` (1-based)."""
    return fact.id or f"fact {index + 1}"


# ---------------------------------------------------------------------------------------------
# Matching


def _norm(text: str) -> str:
    return normalize_ws(text).lower()


@lru_cache(maxsize=4096)
def _pattern(token: str) -> re.Pattern[str]:
    t = re.escape(_norm(token))
    head = r"(?<![a-z0-9_])" if token[:1].isalnum() else ""
    tail = r"(?![a-z0-9_])" if token[-1:].isalnum() else ""
    return re.compile(head + t + tail)


def has_token(token: str, text: str) -> bool:
    """Whether ``token`` is in ``text``, case-insensitive, as a whole word.

    >>> has_token("8080", "listen on port 8080."), has_token("8080", "port 18080")
    (True, False)
    """
    return _pattern(token).search(_norm(text)) is not None


def has_all(tokens: Iterable[str], text: str) -> bool:
    """Whether every one of ``tokens`` is in ``text`` (:func:`has_token`; the text normalised once)."""
    normed = _norm(text)
    return all(_pattern(t).search(normed) is not None for t in tokens)


def has_any(tokens: Iterable[str], text: str) -> bool:
    """Whether one of ``tokens`` is in ``text`` (:func:`has_token`; the text normalised once)."""
    normed = _norm(text)
    return any(_pattern(t).search(normed) is not None for t in tokens)


def token_spans(token: str, text: str) -> list[int]:
    """Start offsets of ``token`` in ``text`` (searched as :func:`has_token` does, on the original)."""
    pat = re.compile(_pattern(token).pattern.replace(r"\ ", r"\s+"), re.IGNORECASE)
    return [m.start() for m in pat.finditer(text)]


# ---------------------------------------------------------------------------------------------
# Where facts are planted, and what the model sees after a compaction


def places_of(message: Any) -> dict[str, str]:
    """The places a history message holds, with their text: ``user``, ``memory``, ``tool``,
    ``assistant`` (a user message may hold tool results and the person's words at once; a summary,
    a boundary or an attachment holds none)."""
    if isinstance(message, AssistantMessage):
        return {"assistant": text_of(message.content)}
    out: dict[str, str] = {}
    if isinstance(message, UserMessage) and not message.is_compact_summary:
        results = tool_results(message)
        if results:
            out["tool"] = "\n".join(result_text(b) for b in results)
        person = person_text(message)
        if person is not None:
            out["user"] = person
        elif "<system-reminder>" in text_of(message.content):
            out["memory"] = text_of(message.content)
    return out


def planted_at(fact: PlantedFact, history: list[Any], tokens: list[str] | None = None,
               place: str | None = None) -> int | None:
    """The 0-based position in ``history`` of the message that completes ``tokens`` (default the
    fact's) in the fact's place (all tokens in one message), or None."""
    tokens = tokens or fact.tokens
    place = place or fact.planted
    for i, m in enumerate(history):
        text = places_of(m).get(place)
        if text is not None and has_all(tokens, text):
            return i
    return None


def updated_at(fact: PlantedFact, history: list[Any], start: int = 0) -> int | None:
    """Where the update's new tokens first come (all in one message, in any place: a user's
    correction, a tool result, the assistant's words), at or after ``start``."""
    if fact.update is None:
        return None
    for i in range(start, len(history)):
        if any(has_all(fact.update.tokens, text) for text in places_of(history[i]).values()):
            return i
    return None


def post_text(case: Any) -> str:
    """What the model sees after ``case``'s compaction, as text: the summary message and every kept
    message (tool results included)."""
    from ..core.messages import plain_text

    summary = case.summary_message or case.summary or ""
    kept = plain_text(m for m in case.post_messages if not isinstance(m, CompactBoundary)
                      and not (isinstance(m, UserMessage) and m.is_compact_summary))
    return summary + "\n" + kept


@dataclass
class FactState:
    """One planted fact at one compaction."""

    fact: PlantedFact
    label: str
    planted: bool
    planted_pos: int | None = None          # 0-based history position
    updated: bool = False
    updated_pos: int | None = None
    wanted: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def held(self) -> bool:
        return self.planted and not self.missing

    def where(self, history: list[Any]) -> str:
        """``a tool result (Read src/db.py, message 14)``."""
        pos = self.planted_pos
        place = PLACE_NAMES[self.fact.planted]
        if pos is None:
            return place
        detail = ""
        if self.fact.planted == "tool":
            ids = {b.tool_use_id for b in tool_results(history[pos])}
            for m in reversed(history[:pos]):
                uses = [u for u in getattr(m, "content", []) if getattr(u, "type", "") == "tool_use" and u.id in ids]
                if uses:
                    u = uses[0]
                    arg = next((str(u.input[k]) for k in ("file_path", "command", "pattern", "path", "url")
                                if isinstance(u.input.get(k), str)), "")
                    detail = f"{u.name} {arg[:60]}".strip() + ", "
                    break
        turn = f", turns[{self.fact.turn}]" if self.fact.turn is not None else ""
        return f"{place} ({detail}message {pos + 1}{turn})"


def fact_states(facts: list[PlantedFact], case: Any) -> list[FactState]:
    """Each fact's state at ``case``'s compaction (cached on the case)."""
    cached = case.__dict__.get("_fact_states")
    if cached is not None:
        return cached
    normed = _norm(post_text(case))  # the post-compact text, normalised once for every token
    out = []
    # Where each fact is planted and updated depends on the history only: a mutant (which shares
    # its case's history, grading.mutants.Mutant.of) shares these too.
    positions = case.__dict__.setdefault("fact_positions", {})
    for i, fact in enumerate(facts):
        known = positions.get(id(fact))
        if known is None or known[0] is not fact:
            pos = planted_at(fact, case.history)
            known = positions[id(fact)] = (fact, pos, updated_at(fact, case.history, pos + 1) if pos is not None else None)
        _, pos, upos = known
        updated = upos is not None
        wanted = list(fact.update.tokens) if updated and fact.update is not None else list(fact.tokens)
        missing = [t for t in wanted if _pattern(t).search(normed) is None] if pos is not None else []  # has_all
        out.append(FactState(fact, fact_label(fact, i), pos is not None, pos, updated, upos if updated else None,
                             wanted, missing))
    case.__dict__["_fact_states"] = out
    return out


def survival(facts: list[PlantedFact], cases: list[Any], bars: dict[str, float], *, by: str = "type") -> dict[str, Any]:
    """Per type (``by="planted"``: per place), the share held in each round (None: no fact of the
    type planted yet), and the cliff round (first round below the type's bar; None: never)::

        {"rounds": [1, 2, 3], "types": {"constraint": {"bar": 1.0, "curve": [1.0, 1.0, 0.5],
         "held": [2, 2, 1], "planted": [2, 2, 2], "cliff": 3}}}

    Places have no bar: their ``cliff`` is the first round that loses one of their facts.
    """
    key = (lambda f: f.type) if by == "type" else (lambda f: f.planted)
    groups = list(dict.fromkeys(key(f) for f in facts))
    out: dict[str, Any] = {"rounds": [c.index for c in cases], "types": {}}
    for t in groups:
        held, planted, curve = [], [], []
        cliff = None
        bar = bars.get(t, 0.0) if by == "type" else 1.0
        for case in cases:
            states = [s for s in fact_states(facts, case) if key(s.fact) == t and s.planted]
            h = sum(s.held for s in states)
            held.append(h)
            planted.append(len(states))
            share = round(h / len(states), 4) if states else None
            curve.append(share)
            if cliff is None and share is not None and share < bar:
                cliff = case.index
        out["types"][t] = {"bar": bar, "curve": curve, "held": held, "planted": planted, "cliff": cliff}
    return out


def survival_entry(facts: list[PlantedFact], cases: list[Any], expect: Any) -> dict[str, Any]:
    """What the results JSON keeps per scenario with facts: survival by type and by place."""
    return {"by_type": survival(facts, cases, bars_of(expect)), "by_place": survival(facts, cases, {}, by="planted")}
