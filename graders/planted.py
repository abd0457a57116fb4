"""Planted-fact graders: typed facts through every round, stale values, and a size gate.

* ``facts_survive``: the scenario's ``facts:`` (:mod:`pytest_ctxeval.scenario.planted`) planted so far are
  held in the post-compact context; per type, the share held must reach the type's bar
  (``expect.survival``; safety rules and constraints 1.0 by default). The last compaction's verdict
  carries the survival curve of every type over the run's rounds and each type's cliff round.
* ``stale_values``: a commit id the summary names is as the session shows it, not one character
  changed (:mod:`pytest_ctxeval.reading.changed_ids`); once a fact's value was updated, the old value appears after the compaction only
  marked as replaced (``was 8080, now 9090``), or inside a verbatim user message of section 6 (or a
  message kept as it was) with the new value also present, or in an item of section 6 that gives the
  user's message in other words with the correction listed after it; stated as current anywhere, it
  fails, naming the place.
* ``compresses``: what a compaction put in place of what it replaced (its summary, attachments and
  rewritten messages, against the messages it removed or changed; messages kept as they were count
  on neither side) is smaller than ``expect.compression.share`` (default 0.5) of it, when it replaced
  at least ``min_tokens`` (default 1,000). A real transcript's compaction compares its summary with
  the ``preTokens`` Claude Code recorded.
"""

from __future__ import annotations

from typing import Any

import re

from pytest_ctxeval.core.words import plural
from pytest_ctxeval.grading import CompactionCase, Verdict, grader
from pytest_ctxeval.core.messages import AttachmentMessage, CompactBoundary, UserMessage, plain_text
from pytest_ctxeval.scenario.planted import (
    DEFAULT_MIN_TOKENS, DEFAULT_SHARE, PLACE_NAMES, bars_of, fact_states, has_all, has_any, post_text, survival,
    token_spans,
)
from pytest_ctxeval.reading.changed_ids import changed_ids, commit_ids
from pytest_ctxeval.reading.summary import normalize_ws
from pytest_ctxeval.core.tokens import estimate_messages


def _facts(case: CompactionCase) -> list:
    return list(case.facts)


def _pct(x: float) -> str:
    return f"{x:.0%}"


@grader("facts_survive", kind="rule")
def facts_survive(case: CompactionCase) -> Verdict:
    """Planted facts held per type, at or above each type's bar, in every round."""
    facts = _facts(case)
    if not facts:
        return Verdict.not_applicable("no planted facts: only a scenario plants them (its facts: list), a real "
                                      "transcript has none" if case.origin != "engine" else
                                      "the scenario plants no facts (facts:)")
    states = [s for s in fact_states(facts, case) if s.planted]
    rnd = case.index
    bars = bars_of(case.expect)
    curves = survival(facts, case.generations or [case], bars) if case.is_last else None
    evidence: dict[str, Any] = {"survival": curves} if curves else {}
    if not states:
        return Verdict.not_applicable(f"round {rnd}: none of the {plural(len(facts), 'fact')} is planted yet", **evidence)
    reasons, missing = [], []
    shares = {}
    for t in dict.fromkeys(s.fact.type for s in states):
        of_type = [s for s in states if s.fact.type == t]
        held = sum(s.held for s in of_type)
        share = held / len(of_type)
        shares[t] = round(share, 4)
        bar = bars.get(t, 0.0)
        if share < bar:
            for s in of_type:
                if not s.held:
                    missing.append(s.label)
                    value = " (its updated value)" if s.updated else ""
                    reasons.append(f"round {rnd}: {t} '{s.label}' planted in {s.where(case.history)} is lost: "
                                   f"{', '.join(repr(m) for m in s.missing)}{value} not in the post-compact context "
                                   f"({t}: {held}/{len(of_type)} held, {_pct(share)} < bar {_pct(bar)})")
    missing_note = ""
    if case.is_last:  # a fact that never showed up where the scenario says it is planted: say so
        never = [s for s in fact_states(facts, case) if not s.planted]
        if never:
            missing_note = (f"{plural(len(never), 'fact')} not planted before any compaction (their tokens never appeared in "
                            "the place 'planted' names; check 'planted' and 'tokens', or the fact comes after the "
                            "last compaction): " + ", ".join(f"{s.fact.type} '{s.label}' ({PLACE_NAMES[s.fact.planted]})"
                                                              for s in never[:5])
                            + (f" (+{len(never) - 5})" if len(never) > 5 else ""))
            evidence["not_planted"] = [s.label for s in never]
    held_all = sum(s.held for s in states)
    score = round(held_all / len(states), 4)
    cliffs = {t: c["cliff"] for t, c in (curves or {}).get("types", {}).items() if c["cliff"] is not None}
    if reasons:
        if missing_note:
            reasons.append(missing_note)
        if cliffs:
            reasons.append("cliff round per type: " + ", ".join(f"{t} {r}" for t, r in cliffs.items()))
        return Verdict.failed(*reasons, score=score, missing=missing, shares=shares, **evidence)
    lost = [f"{s.fact.type} '{s.label}'" for s in states if not s.held]
    note = f"; lost (below no bar): {', '.join(lost[:5])}" + (f" (+{len(lost) - 5})" if len(lost) > 5 else "") if lost else ""
    per_type = ", ".join(f"{t} {_pct(v)}" for t, v in shares.items())
    extra = [missing_note] if missing_note else []
    return Verdict.passed_(f"round {rnd}: {held_all}/{len(states)} planted facts held ({per_type}){note}", *extra,
                           score=score, shares=shares, **evidence)


# ---------------------------------------------------------------------------------------------
# stale_values

#: Words that mark a value as replaced in the same item (line or sentence).
_MARKER = re.compile(r"\b(?:was|were|previously|formerly|old|older|earlier|used to|replac\w*|supersed\w*|obsolete|"
                     r"outdated|stale|no longer|instead of|rather than|changed|switched|moved|updated|renamed|"
                     r"dropped|abandoned|retired|after all)\b|→|->|=>", re.IGNORECASE)


#: Words that mark a change only next to the new value ("now 9090, not 8080").
_WEAK_MARKER = re.compile(r"\b(?:now|not|new|instead)\b|→|->|=>", re.IGNORECASE)


def _marked(line: str, new: list[str], new_present: bool) -> bool:
    """Whether a line holding an old value marks it as replaced: a change word with the new value in
    the post-compact context, or "now"/"not"/an arrow next to the new value itself."""
    return bool((_MARKER.search(line) and new_present)
                or (_WEAK_MARKER.search(line) and has_all(new, line)))


def _section_at(case: CompactionCase, line: int):
    current = None
    for s in case.sections.sections:
        if s.line <= line:
            current = s
    return current


def _verbatim_quote(line: str, people: list[str]) -> bool:
    text = normalize_ws(line.strip().lstrip("-*• ").strip().strip('"“”'))
    return len(text) >= 8 and any(text in p for p in people)


_QUOTED = re.compile(r"\"([^\"]{8,})\"|“([^”]{8,})”")


def _quotes_user(line: str, people: list[str], tokens: list[str]) -> bool:
    """Whether ``line`` quotes a person message's words verbatim, the quote holding one of ``tokens``."""
    for m in _QUOTED.finditer(line):
        text = normalize_ws(m.group(1) or m.group(2))
        if has_any(tokens, text) and any(text in p for p in people):
            return True
    return False


def _section_end(case: CompactionCase, section, total: int) -> int:
    """The last summary line of ``section`` (the line before the next section's header)."""
    if section is None:
        return total
    later = [s.line for s in case.sections.sections if s.line > section.line]
    return (min(later) - 1) if later else total


def _excerpt(text: str, at: int, n: int = 50) -> str:
    return normalize_ws(text[max(0, at - n): at + n])


def _session_ids(case: CompactionCase) -> tuple[set[str], str]:
    text = plain_text(case.history)
    return set(commit_ids(text)), text


def _changed_ids(case: CompactionCase) -> tuple[list[str], list[str]]:
    """The commit ids the summary names as the session shows them, and reasons for those it names
    with a character changed (pytest_ctxeval.reading.changed_ids), each with its place and the
    session's line that shows the real id."""
    if not commit_ids(case.summary or ""):
        return [], []
    ids, text = case.shared_view("commit_ids", lambda: _session_ids(case), case.history)
    shown, changed = changed_ids(case.summary, ids)
    out = []
    lines = case.summary.split("\n")
    for c in changed:
        section = _section_at(case, c.line)
        where = (f"section {section.number} '{section.title}'" if section is not None and section.kind
                 else "the summary")
        at = text.lower().find(c.shown)
        seen = text[max(0, text.rfind("\n", 0, at) + 1):text.find("\n", at) if "\n" in text[at:] else len(text)]
        out.append(f"{where} (summary line {c.line}) names {c.told} (a commit or other hexadecimal id), which the "
                   f"session never shows; it shows {c.shown} (\"{normalize_ws(seen)[:100]}\"): a changed id, the next "
                   f"context window would look for one that is not there: \"{normalize_ws(lines[c.line - 1])[:140]}\"")
    return shown, out


@grader("stale_values", kind="rule")
def stale_values(case: CompactionCase) -> Verdict:
    """An updated fact's old value is not stated as current after the compaction, and no commit id
    the summary names is one the session shows with a character changed."""
    facts = _facts(case)
    updated = [s for s in fact_states(facts, case) if s.updated] if facts else []
    ids_ok, ids_changed = _changed_ids(case)
    if not updated:
        if ids_changed:
            return Verdict.failed(*ids_changed, changed_ids=len(ids_changed))
        if ids_ok:
            many = len(ids_ok) > 1
            return Verdict.passed_(f"no planted fact's value has been updated; the {len(ids_ok)} hexadecimal "
                                   f"id{'s' if many else ''} the summary names (commits and the like: "
                                   f"{', '.join(ids_ok[:3])}{', …' if len(ids_ok) > 3 else ''}) "
                                   f"{'are' if many else 'is'} as the session shows {'them' if many else 'it'}")
        return Verdict.not_applicable("no planted fact's value has been updated before this compaction")
    text_after = post_text(case)
    people = [normalize_ws(p.text) for p in case.person_messages()]
    history_ids = {m.uuid for m in case.history}
    hits: list[str] = []
    stale: list[str] = []
    for s in updated:
        old = [t for t in s.fact.old_tokens]
        new_present = has_all(s.wanted, text_after)
        found = None
        # The summary, line by line.
        lines = (case.summary or "").splitlines()
        for n, line in enumerate(lines, start=1):
            if not has_any(old, line):
                continue
            section = _section_at(case, n)
            quoted = _verbatim_quote(line, people) or _quotes_user(line, people, old)
            if quoted and section is not None and section.kind == "user_messages":
                if new_present:
                    continue
                found = (f"section 6 (summary line {n}) quotes the user's old value, and the new value "
                         f"{', '.join(map(repr, s.wanted))} is nowhere in the post-compact context", line)
                break
            later = "\n".join(lines[n:_section_end(case, section, len(lines))])
            if quoted and has_all(s.wanted, later):
                continue  # a quote of the user's words, and the correction quoted after it in the same section
            if section is not None and section.kind == "user_messages" and has_all(s.wanted, later):
                continue  # the user's words in the summary's own (section 6 lists what was said, in order),
                # and the correction listed after them: history, as a quote is
            if _marked(line, s.wanted, new_present):
                continue  # marked as replaced, with the new value in view (or stated next to it)
            where = (f"section {section.number} '{section.title}'" if section is not None and section.kind
                     else "the summary")
            found = (f"{where} (summary line {n}) states it as current", line)
            break
        if found is None:  # messages the compaction kept or wrote
            for i, m in enumerate(case.post_messages, start=1):
                if isinstance(m, CompactBoundary) or (isinstance(m, UserMessage) and m.is_compact_summary):
                    continue
                body = plain_text([m])
                spans = [a for t in old for a in token_spans(t, body)]
                if not spans:
                    continue
                if m.uuid in history_ids and new_present:
                    continue  # the conversation as it happened, with the update still in view
                bad = [ln for ln in body.splitlines() if has_any(old, ln)
                       and not _marked(ln, s.wanted, new_present)]
                if not bad:
                    continue
                spans = [a for t in old for a in token_spans(t, bad[0])] or [0]
                body = bad[0]
                where = "a kept message" if m.uuid in history_ids else "a message the compaction wrote"
                found = (f"{where} (post-compact message {i}) holds it"
                         + ("" if new_present else " and the new value is gone"), _excerpt(body, spans[0]))
                break
        if found is not None:
            stale.append(s.label)
            place, line = found
            hits.append(f"round {case.index}: {s.fact.type} '{s.label}' was updated to "
                        f"{', '.join(map(repr, s.wanted))} (message {(s.updated_pos or 0) + 1}) but its old value "
                        f"{', '.join(map(repr, old))} is still there: {place}: \"{normalize_ws(line)[:160]}\"")
    if hits or ids_changed:
        return Verdict.failed(*hits, *ids_changed, score=round(1 - len(stale) / len(updated), 4), missing=stale)
    return Verdict.passed_(f"round {case.index}: none of the {len(updated)} updated facts keeps its old value as current")


# ---------------------------------------------------------------------------------------------
# compresses


def _sizes(case: CompactionCase) -> tuple[int, int, int]:
    """``(replaced, produced, carried)`` tokens of a compaction (see the module docstring).

    Messages kept as they were (same id and content as in the session) count on neither side. An
    earlier summary in the replaced span (a re-compaction) counts as ``carried``: what a summary must
    carry forward (every user message verbatim, the files, the rules) cannot shrink again at every
    round, so the gate compares what is new on each side: ``replaced - carried`` with
    ``produced - carried``."""
    if case.kind == "transcript" or not case.post_messages:
        return case.pre_tokens, case.post_tokens, 0
    seen = {m.uuid: m for m in [*case.history, *case.summarized]}
    kept = {m.uuid for m in case.post_messages if m.uuid in seen and _same(seen[m.uuid], m)}
    replaced = [m for m in case.summarized if m.uuid not in kept and not isinstance(m, CompactBoundary)]
    produced = [m for m in case.post_messages if m.uuid not in kept and not isinstance(m, CompactBoundary)]
    earlier = [m for m in replaced if isinstance(m, UserMessage) and m.is_compact_summary]
    est = (lambda ms: estimate_messages(ms, case.config)) if case.config is not None else estimate_messages
    # A file the compaction attaches again as it was last read (Claude Code restores recent files)
    # is content kept, not content made: it counts like a kept message.
    attached = [m for m in produced if isinstance(m, AttachmentMessage)]
    replaced_text = normalize_ws(plain_text(replaced)) if attached else ""
    restored = [m for m in attached if _restored(m, replaced_text)]
    carried = (est(earlier) if earlier else 0) + (est(restored) if restored else 0)
    return est(replaced), est(produced), carried


def _restored(message: AttachmentMessage, replaced_text: str) -> bool:
    """Whether an attachment re-attaches content the replaced messages held (its opening: a restored
    file may be cut to a budget or show later edits, so its tail is not compared)."""
    body = message.content.split("\n", 1)[1] if "\n" in message.content else message.content
    body = normalize_ws(body)
    if len(body) < 40:
        return False
    return body[:300] in replaced_text


def _same(a, b) -> bool:
    return a is b or getattr(a, "content", None) == getattr(b, "content", None)


@grader("compresses", kind="rule")
def compresses(case: CompactionCase) -> Verdict:
    """What a compaction put in place of what it replaced is smaller than a share of it."""
    bar = case.expect.compression
    share = bar.share if bar is not None else DEFAULT_SHARE
    floor = bar.min_tokens if bar is not None else DEFAULT_MIN_TOKENS
    replaced, produced, carried = _sizes(case)
    new_in, new_out = replaced - carried, max(0, produced - carried)
    sizes = {"replaced": replaced, "produced": produced, "carried": carried}
    carry = (f" (less {carried:,} tokens carried over, on both sides: an earlier summary it re-compacted, "
             f"files attached again as they were read)" if carried else "")
    if new_in < floor:
        return Verdict.not_applicable(f"round {case.index}: the compaction replaced {new_in:,} tokens{carry}, under "
                                      f"the {floor:,} the gate applies from (expect.compression.min_tokens)", **sizes)
    ratio = new_out / new_in
    if new_out >= share * new_in:
        return Verdict.failed(f"round {case.index}: the compaction replaced {new_in:,} tokens with {new_out:,}{carry} "
                              f"({ratio:.2f}x), not under {share:g}x of them: it does not compress "
                              f"(expect.compression.share)", score=round(max(0.0, 1 - ratio), 4), **sizes)
    return Verdict.passed_(f"round {case.index}: {new_in:,} tokens replaced by {new_out:,}{carry} ({ratio:.2f}x, "
                           f"under {share:g}x)", **sizes)
