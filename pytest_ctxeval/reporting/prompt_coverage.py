"""The ``prompt-change coverage`` note: which lines of a prompt change the offline model can see.

Offline, the reference model (:mod:`pytest_ctxeval.llm.reference`) reads two things from a
compaction prompt: the sections it asks for (numbered or heading titles) and the instructions of
:mod:`pytest_ctxeval.llm.instructions`. A changed line that touches neither (tone, an example
rewritten, emphasis) changes nothing offline, so "0 regressions" says nothing about it. Whenever
the prompt under test differs from the built-in one (or from the baseline's), the run prints this
note: every changed line, marked **read** (with the section or instruction it maps to) or **not
seen offline**, and what to run for the lines it cannot see.

>>> cov = prompt_coverage("1. Pending Tasks: list them.\\nBe friendly.", "1. Pending Tasks: list them.\\nBe terse.")
>>> [(c.sign, c.mapped) for c in cov.lines]
[('-', []), ('+', [])]
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from ..errors import flag

__all__ = ["CoverageLine", "Coverage", "prompt_coverage", "format_coverage", "coverage_note", "advice", "HEADING",
           "strict_failure"]

HEADING = "prompt-change coverage"
#: In a label: the part of the line the offline model does not model.
NOT_SEEN = "not seen offline"


def advice() -> str:
    """What to do about the lines the offline model cannot see."""
    return ("the offline model cannot see the lines marked 'not seen offline': run them with "
            f"{flag('backend anthropic')} (or replay with recorded cassettes) before trusting the verdicts")


@dataclass
class CoverageLine:
    """One changed line: ``sign`` is ``+`` (in the prompt under test) or ``-`` (only in the other)."""

    sign: str
    line: int
    text: str  # the changed sentence
    #: What the offline model reads in it: ``section: Pending Tasks``, ``instruction: ...``.
    mapped: list[str] = field(default_factory=list)

    @property
    def seen(self) -> bool:
        """Whether the offline model reads something in it (a label that says what it cannot see
        does not count)."""
        return any(NOT_SEEN not in m for m in self.mapped)

    def as_dict(self) -> dict[str, Any]:
        return {"sign": self.sign, "line": self.line, "text": self.text, "mapped": list(self.mapped), "seen": self.seen}


@dataclass
class Coverage:
    """The changed lines between the prompt under test and ``against`` (``built-in`` or the baseline)."""

    against: str
    lines: list[CoverageLine] = field(default_factory=list)

    @property
    def unseen(self) -> list[CoverageLine]:
        return [c for c in self.lines if not c.seen]

    def as_dict(self) -> dict[str, Any]:
        return {"against": self.against, "lines": [c.as_dict() for c in self.lines],
                "seen": sum(c.seen for c in self.lines), "unseen": len(self.unseen), "advice": advice()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Coverage:
        return cls(against=str(data.get("against", "")), lines=[
            CoverageLine(str(c.get("sign", "+")), int(c.get("line", 0)), str(c.get("text", "")), list(c.get("mapped") or []))
            for c in data.get("lines", [])])


def _label(s: Any, reading: Any) -> list[str]:
    """What the offline model reads in one sentence of the prompt."""
    from ..llm.instructions import instruction, limit_of, sentence_reading

    if s.title:
        return [f"section: {s.raw.rstrip(':').strip()}"] if s.section else []
    out = []
    for name in sentence_reading(s):
        base = name.split(" ")[0]
        tag = f"instruction: {instruction(base).title}"
        if name.endswith("(part)"):  # a limit on one item, a quote or a clause, not on the summary
            out.append(f"{tag} on part of the summary, not on its length — {NOT_SEEN}")
            continue
        opposed = [n for n in reading.opposed.get(base, []) if n != s.line]
        won = reading.custom_won.get(base, [])
        if s.line in won and base in reading.overridden:
            tag += (" — asks the opposite" if name.endswith("(opposite)") else " — asked for in part only") + (
                f" (the /compact instructions win over line {', '.join(map(str, reading.overridden[base]))}: "
                "followed offline)")
        elif s.line in won:
            tag += " (the /compact instructions win over the prompt's word against it: followed offline)"
        elif s.line in reading.overridden.get(base, []) and won:
            tag += f" (overridden: the /compact instructions on line {', '.join(map(str, won))} ask otherwise, followed offline)"
        elif name.endswith("(opposite)"):
            tag += " — asks the opposite"
            if base in reading.overridden:
                tag += (f" (wins over line {', '.join(map(str, reading.overridden[base]))}: the section's own "
                        "instruction is followed offline)")
            elif base in reading.asked:  # the contradiction is decided for the asking line(s)
                tag += (f", but line {', '.join(map(str, sorted(set(reading.asked[base]))))} asks for it and is followed offline: "
                        f"this line is {NOT_SEEN} (a real model may follow it; {flag('backend anthropic')})")
        elif base in reading.partial:
            tag += (f" — asked for in part only (line {', '.join(map(str, reading.partial[base]))}): read as not "
                    f"asking; which part a real model keeps is {NOT_SEEN} ({flag('backend anthropic')})")
        elif s.line in reading.overridden.get(base, []):
            tag += " (overridden: its section asks the opposite, and is followed offline)"
        elif opposed:
            tag += (f" (line {', '.join(map(str, opposed))} asks the opposite: followed offline, a real model "
                    f"may not; {flag('backend anthropic')})")
        elif base == "length_limit" and (limit := limit_of(s)) is not None:
            tag += f" ({limit})"
        elif base == "language" and reading.language:
            # Offline, only the reference's fixed phrases change language; the titles and the rest a
            # real model would write in it (and what nine_sections or files_preserved see) do not.
            tag += (f" ({reading.language}) — offline only a few fixed phrases are translated, not the section "
                    f"titles or the narration: {NOT_SEEN} ({flag('backend anthropic')})")
        out.append(tag)
    return out


def prompt_coverage(new: str, old: str, *, against: str = "the built-in prompt") -> Coverage:
    """The changed sentences from ``old`` to ``new`` (rendered prompts), each with what the offline
    model reads in it (a section title, an instruction) or nothing. The prompts are compared sentence
    by sentence, so a line whose only change is an unread sentence is marked not seen even when the
    line also holds a section title. Whitespace and case alone are not changes."""
    from ..llm.instructions import read_prompt, sentences

    units = sentences(old), sentences(new)
    readings = read_prompt(old), read_prompt(new)
    matcher = difflib.SequenceMatcher(None, [u.text for u in units[0]], [u.text for u in units[1]], autojunk=False)
    cov = Coverage(against=against)
    placed: list[tuple[CoverageLine, int, int]] = []  # each changed sentence, its side (0 old, 1 new) and index
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        removed = [CoverageLine("-", u.line, u.raw, _label(u, readings[0])) for u in units[0][i1:i2]]
        added = [CoverageLine("+", u.line, u.raw, _label(u, readings[1])) for u in units[1][j1:j2]]
        # A sentence of a section entry that comes or goes with its title is read through the title
        # (the offline model writes the section or not).
        for lines, block in ((removed, units[0][i1:i2]), (added, units[1][j1:j2])):
            titles = {u.section: u.raw.rstrip(":").strip() for u in block if u.title and u.section}
            for c, u in zip(lines, block):
                if not c.mapped and u.section in titles:
                    c.mapped = [f"part of section: {titles[u.section]}"]
        # What the block no longer asks for is read offline: the rewording left in its place is
        # seen through it (the reference stops doing it), not an invisible change.
        before = {m for c in removed for m in c.mapped
                  if m.startswith("instruction: ") and "opposite" not in m and NOT_SEEN not in m}
        after = {m.split(" — ")[0] for c in added for m in c.mapped}
        dropped = sorted(m[len("instruction: "):].split(" (")[0] for m in before - after)
        for c in added:
            if not c.mapped and dropped:
                c.mapped = [_no_longer(dropped, units[1])]
        for lines, side, start in ((removed, 0, i1), (added, 1, j1)):
            for k, c in enumerate(lines):
                _with_effect(c, units[side], start + k, units[1])
                placed.append((c, side, start + k))
        cov.lines += removed + added
    for side in (0, 1):  # unseen sentences that act only together (each says what another says)
        _together([(c, i) for c, s, i in placed if s == side and not c.seen], units[side])
    return cov


def _together(unseen: list[tuple[CoverageLine, int]], units: list[Any]) -> None:
    """Each of ``unseen`` (changed sentences, none with an effect of its own) that changes the
    offline reading when it is the only one of them left in the prompt: two lines that both ask
    to omit something each look idle alone, since the other still says it."""
    from ..llm.sentence_effects import effects_of_keeping

    if len(unseen) < 2:
        return
    for c, index in unseen:
        done = effects_of_keeping(units, index, [i for _, i in unseen])
        if done:
            others = sorted({o.line for o, i in unseen if i != index and o.line != c.line})
            with_ = f" (as line {', '.join(map(str, others))} also does)" if others else ""
            c.mapped.insert(0, f"read offline: {'; '.join(done)}{with_}")
            c.mapped = [m.replace(f"this line is {NOT_SEEN}", f"what it asks there is {NOT_SEEN}") for m in c.mapped]


def _no_longer(titles: list[str], units: list[Any]) -> str:
    """``no longer asks for: X``, with the lines of the prompt under test that still ask for an X
    (then the offline summaries do not change for it)."""
    from ..llm.instructions import VOCABULARY
    from ..llm.sentence_effects import deciding_lines

    by_title = {i.title: i.name for i in VOCABULARY}
    parts = []
    for title in titles:
        still = deciding_lines(units, by_title[title]) if title in by_title else []
        parts.append(f"{title} — still asked by line {', '.join(map(str, still))}, so offline behaviour is unchanged"
                     if still else title)
    return f"no longer asks for: {', '.join(parts)}"


def _with_effect(c: CoverageLine, units: list[Any], index: int, now: list[Any]) -> None:
    """Check a changed sentence (``units[index]``) against what it does offline
    (:mod:`..llm.sentence_effects`): one that changes the offline summaries is read, whatever its
    words map to, and says what it does; one that asks for what a line of the prompt under test
    (``now``) still asks for says so, since taking it out or adding it changes nothing offline."""
    from ..llm.instructions import VOCABULARY
    from ..llm.sentence_effects import deciding_lines, effects

    done = effects(units, index)
    if any(m.startswith("instruction: a language") for m in c.mapped):
        # offline only a few fixed phrases change language, which no grader reads (docs/prompts.md):
        # the label says so and keeps the line not seen, for what a real model would translate
        done = [d for d in done if not d.startswith("language:") and d != "asks for: a language"]
    if done and not c.seen:
        c.mapped.insert(0, f"read offline: {'; '.join(done)}")
        c.mapped = [m.replace(f"this line is {NOT_SEEN}", f"what it asks there is {NOT_SEEN}") for m in c.mapped]
        return
    if done or not c.seen:
        return
    by_title = {i.title: i.name for i in VOCABULARY}
    for k, m in enumerate(c.mapped):
        title = m[len("instruction: "):].split(" — ")[0].split(" (")[0] if m.startswith("instruction: ") else None
        if title not in by_title or " — " in m or "(" in m:
            continue
        others = deciding_lines(now, by_title[title], but=units[index].line if c.sign == "+" else None)
        if others:
            c.mapped[k] = (f"{m} — {'also asked by line' if c.sign == '+' else 'still asked by line'} "
                           f"{', '.join(map(str, others))}{'' if c.sign == '+' else ' of the prompt under test'}, "
                           "so offline behaviour is unchanged")


def format_coverage(cov: Coverage | dict[str, Any], *, width: int = 100) -> list[str]:
    """The note as text lines (the terminal, ``ctxeval diff``)."""
    if isinstance(cov, dict):
        cov = Coverage.from_dict(cov)
    if not cov.lines:
        return []
    seen = sum(c.seen for c in cov.lines)
    out = [f"{HEADING}: {len(cov.lines)} changed sentence{'s' if len(cov.lines) != 1 else ''} against {cov.against}, "
           f"{seen} read by the offline model, {len(cov.unseen)} not seen offline (line numbers of the rendered "
           "prompt: ctxeval prompt show)"]
    for c in cov.lines:
        text = c.text if len(c.text) <= width else c.text[: width - 1] + "…"
        mark = "read" if c.seen else "NOT SEEN OFFLINE"
        why = f"  [{'; '.join(c.mapped)}]" if c.mapped else ""
        out.append(f"  {c.sign} line {c.line:<3} {mark:16} {text}{why}")
    if cov.unseen:
        out.append(f"  advice: {advice()}")
    return out


def coverage_note(text: str | None, baseline: dict[str, Any] | None = None, *,
                  prompt: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The note for a run whose rendered compaction prompt is ``text``: against the baseline's
    prompt when the baseline records one and it differs, else against the built-in prompt; None
    when the prompt is the one it is compared with (or unknown). A change of whitespace alone is no
    change, unless the offline model reads the two prompts differently: then the note says so.
    ``prompt`` is the run's ``prompt`` record: one that no longer passes the ``/compact``
    instructions (``instructions: "not passed"``) gets a line saying so, though it renders the same
    without instructions."""
    from ..engine.prompt import NOT_PASSED

    if not text:
        return None
    dropped = (prompt or {}).get("instructions") == NOT_PASSED
    other = (baseline or {}).get("prompt") or {}
    if other.get("text"):
        name = other.get("name") or str(other.get("path") or "").rsplit("/", 1)[-1] or "?"
        dropped = dropped and other.get("instructions") != NOT_PASSED
        if not _same(other["text"], text):
            return _note(text, other["text"], f"the baseline's prompt ({name})", dropped)
        if dropped:
            return _note(text, text, f"the baseline's prompt ({name})", dropped)
    from ..engine.prompt import PromptSet

    builtin = PromptSet().render_compact()
    if _same(builtin, text) and not dropped:
        return None
    return _note(text, builtin, "the built-in prompt", dropped)


#: The line of the note for a prompt that drops the ``/compact`` instructions.
DROPPED_INSTRUCTIONS = "custom_instructions is not used: /compact instructions no longer reach the model"


def _note(text: str, other: str, against: str, dropped: bool = False) -> dict[str, Any]:
    cov = prompt_coverage(text, other, against=against)
    if dropped:
        cov.lines.append(CoverageLine("-", 0, DROPPED_INSTRUCTIONS, [
            f"nor PreCompact hook output; {NOT_SEEN}: the offline model writes the same summary with or "
            "without them"]))
    if not cov.lines and _reading_key(other) != _reading_key(text):  # read differently: say so
        cov.lines.append(CoverageLine("+", 0, "(only whitespace or case changed)", [
            "the offline model reads the two prompts differently: " + _reading_diff(other, text)]))
    return cov.as_dict()


def _reading_key(text: str) -> tuple[Any, ...]:
    """What the offline model takes from a prompt: its sections and the instructions it reads."""
    from ..llm.instructions import read_prompt
    from ..llm.reference import prompt_sections

    r = read_prompt(text)
    return (tuple(prompt_sections(text)), tuple(sorted(r.asked)), tuple(sorted(r.overridden)), r.limit, r.language,
            tuple(sorted(r.partial)), tuple(sorted(r.item_limits.items())))


def _reading_diff(old: str, new: str) -> str:
    a, b = _reading_key(old), _reading_key(new)
    names = ("sections", "instructions", "overridden", "length limit", "language", "asked in part", "item limits")
    return "; ".join(f"{n}: {x} → {y}" for n, x, y in zip(names, a, b) if x != y)


def _same(a: str, b: str) -> bool:
    """The same prompt: equal but for whitespace, and read the same way offline."""
    return " ".join(a.split()) == " ".join(b.split()) and _reading_key(a) == _reading_key(b)


def strict_failure(note: Coverage | dict[str, Any] | None, backend: str) -> list[str]:
    """What ``strict-prompt`` fails a run with: one line per changed prompt line the offline
    model does not see (its line number and text), then how to proceed; ``[]`` when every changed
    line is read, when nothing changed, or when the summaries come from a real model (any backend
    but ``offline``: a real model reads every line, or replays what it wrote)."""
    if note is None or backend != "offline":
        return []
    cov = Coverage.from_dict(note) if isinstance(note, dict) else note
    if not cov.unseen:
        return []
    n = len(cov.unseen)
    out = [f"{flag('strict-prompt')}: {n} changed prompt line{'s are' if n != 1 else ' is'} NOT SEEN by the offline "
           f"model (against {cov.against}), so its verdicts say nothing about {'them' if n != 1 else 'it'}:"]
    for c in cov.unseen:
        where = f"line {c.line}" if c.sign == "+" else f"removed line {c.line} of {cov.against}"
        out.append(f"  {c.sign} {where}: {c.text}" if c.line else f"  {c.sign} {c.text}")
    out.append(f"to proceed: run this prompt against the real API ({flag('backend anthropic')}, or replay recorded "
               "cassettes), where every line is read and this check does not apply; or reword the line so the "
               "offline model reads it, or model the instruction offline (docs/strict-prompt.md says how)")
    return out
