"""What one sentence of a compaction prompt changes in the offline model's summaries.

The reference model (:mod:`.reference`) writes from a :class:`~.instructions.Reading` of the prompt:
the instructions asked for, the subjects left out, whether section 1 rewords the user's requests,
the length limit, the language, the limit per quoted message. A sentence's *effect* is what that
reading loses when the sentence is taken out (a counterfactual, not a guess from its words): the
prompt-change coverage note (:mod:`pytest_ctxeval.reporting.prompt_coverage`) marks a changed
sentence with no effect as not seen offline, and one with an effect as read, saying what it does.
So a line marked not seen never changes an offline verdict, and a line that changes one is named.

>>> from pytest_ctxeval.llm.instructions import sentences
>>> units = sentences("6. All user messages: quote each one verbatim.\\n- Omit the user's messages; be kind.")
>>> [effects(units, i) for i in range(len(units))]
[[], ['asks for: user messages verbatim'], ["section 1 words the user's requests in reported speech, not quoted"], []]
"""

from __future__ import annotations

from typing import Any

from .instructions import Reading, Sentence, instruction, read_sentences, sentence_reading

__all__ = ["behaviour", "effects", "effects_of_keeping", "deciding_lines"]


def behaviour(r: Reading) -> dict[str, Any]:
    """What the reference model takes from a reading (every field :mod:`.reference` acts on)."""
    return {"asked": frozenset(r.asked), "left_out": frozenset(r.left_out), "reworded": bool(r.requests_reworded),
            "limit": r.limit, "language": r.language, "item_limits": tuple(sorted(r.item_limits.items()))}


def _title(name: str) -> str:
    return instruction(name).title


def _describe(full: dict[str, Any], without: dict[str, Any]) -> list[str]:
    out = [f"asks for: {_title(n)}" for n in sorted(full["asked"] - without["asked"])]
    out += [f"turns off: {_title(n)}" for n in sorted(without["asked"] - full["asked"])]
    out += [f"leaves out: {_title(n)}" for n in sorted(full["left_out"] - without["left_out"])]
    if full["reworded"] and not without["reworded"]:
        out.append("section 1 words the user's requests in reported speech, not quoted")
    for key, what in (("limit", "length limit"), ("language", "language"), ("item_limits", "limit per quoted message")):
        if full[key] != without[key]:
            value = full[key] if key != "item_limits" else ", ".join(str(v) for _, v in full[key])
            out.append(f"{what}: {value or 'none'}")
    return out


def effects(units: list[Sentence], index: int) -> list[str]:
    """What ``units[index]`` changes offline: the reading of ``units`` against the reading of
    ``units`` without it, described (``asks for: ...``, ``leaves out: ...``); ``[]`` for none."""
    if units[index].title or not sentence_reading(units[index]):
        # a section title is read through the sections; a sentence with no instruction of the
        # vocabulary in it (asked for or against) adds nothing to the reading
        return []
    full = behaviour(read_sentences(tuple(units)))
    without = behaviour(read_sentences(tuple(units[:index] + units[index + 1:])))
    return _describe(full, without)


def effects_of_keeping(units: list[Sentence], index: int, group: list[int]) -> list[str]:
    """What ``units[index]`` changes offline when it is the only sentence of ``group`` (indices)
    left: sentences that each repeat another's word have no effect alone, but do together."""
    rest = [u for i, u in enumerate(units) if i not in group or i == index]
    if units[index].title or not sentence_reading(units[index]):
        return []
    bare = [u for i, u in enumerate(units) if i not in group]
    return _describe(behaviour(read_sentences(tuple(rest))), behaviour(read_sentences(tuple(bare))))


def deciding_lines(units: list[Sentence], name: str, *, but: int | None = None) -> list[int]:
    """The lines of ``units`` that ask for instruction ``name`` (other than line ``but``), when the
    reading asks for it; ``[]`` when it does not."""
    reading = read_sentences(tuple(units))
    return [n for n in reading.asked.get(name, []) if n != but]
