"""Intent graders: what the user asked for, the rules they set and the dead ends already explored.

* ``last_request_intact``: the most recent person-typed message is in full, verbatim, somewhere in
  the post-compact context (section 6, the next-step quote, kept messages, ...). A multi-part
  request ("do X, then Y, then Z") arriving just as compaction triggers must survive whole; a reason
  names the parts that are missing.
* ``constraints_preserved``: every ``expect.constraints`` rule (set by the user or by a memory file
  such as CLAUDE.md) is in the post-compact context, so the agent keeps following it; and the
  summary does not tell work that breaks a rule the person set in words ("don't change the public
  API") without saying so (:mod:`pytest_ctxeval.reading.broken_rules`).
* ``failed_approaches_preserved``: every ``expect.failed_approaches`` entry is recorded *as failed*
  (next to words such as "did not work", "reverted", "not the fix") and not proposed again in
  sections 7-9, so the agent does not retry it after compaction.

Where they look: the whole post-compact context the model sees — the summary message and what the
compaction kept (messages, attachments) — for every kind of compaction (full, partial, session
memory, a real transcript's). Expectations are required once the session has reached them, as for
the section graders of files, errors and tasks (``graders/files_and_errors.py``, ``graders/future_work.py``).
"""

from __future__ import annotations
from collections.abc import Collection

import re
from functools import lru_cache

from pytest_ctxeval.core.words import all_of
from pytest_ctxeval.reading.extract import (
    LONG_MESSAGE_CHARS, LONG_MESSAGE_KEEP, contains_text, latest_requests, message_fragments, person_messages, significant_tokens,
)
from pytest_ctxeval.grading import CompactionCase, Verdict, grader
from pytest_ctxeval.core.messages import AssistantMessage, UserMessage, plain_text
from pytest_ctxeval.reading.contradicted import PersonWords, contradicted_values
from pytest_ctxeval.reading.misquote import altered_quote, quote_words
from pytest_ctxeval.reading.acknowledgements import MAX_SHARE, acknowledgements, is_acknowledgement, request_parts
from pytest_ctxeval.reading.broken_rules import broken_rules
from pytest_ctxeval.reading.prohibitions import Prohibition, prohibitions
from pytest_ctxeval.reading.proposals import mention_pattern, proposals, quoted_spans
from pytest_ctxeval.reading.quoting import copy_runs_on, long_message_gap, long_prose_note, quotes, whole_context
from pytest_ctxeval.reading.summary import normalize_ws
from pytest_ctxeval.reading.leave_out import leave_out, left_out, with_leave_out
from pytest_ctxeval.reading.pasted import prose_kept
from pytest_ctxeval.reading.unseen_values import unseen_reasons
from pytest_ctxeval.reading.verbatim import (Haystack, Match, closest_line, find, normalize, paste_error_lost, percent_alike,
                                          show_difference, typed_after_paste)

#: A constraint or approach counts as present when this share of its significant tokens is in one item.
TOKEN_OVERLAP = 0.8


def _short(text: str, n: int = 80) -> str:
    text = normalize_ws(text)
    return text if len(text) <= n else text[: n - 1] + "…"


def _context(case: CompactionCase) -> str:
    """The post-compact context as text: the summary message (or the summary) and what was kept."""
    text = case.summary_message or case.summary
    return text + ("\n" + case.kept_text if case.kept_text else "")


def _context_name(case: CompactionCase) -> str:
    if case.kind == "session_memory":
        return "the post-compact context (session notes and kept messages)"
    return "the post-compact context (summary" + (" and kept messages)" if case.kept_text else ")")


_ITEM_SPLIT = re.compile(r"\n(?=\s{0,6}(?:[-*]|\d+[.)])\s)|\n\s*\n")


def _items(text: str) -> list[str]:
    """List items (with their continuation lines) and paragraphs of ``text``."""
    return [i for i in _ITEM_SPLIT.split(text) if i.strip()]


def _present(needle: str, item: str) -> bool:
    """Verbatim (whitespace- and case-insensitive), or most of its significant tokens in ``item``."""
    if contains_text(item.lower(), needle.lower()):
        return True
    tokens = significant_tokens(needle)
    if not tokens:
        return False
    have = set(significant_tokens(item))
    return sum(t in have for t in tokens) / len(tokens) >= TOKEN_OVERLAP


# ---------------------------------------------------------------------------------------------
# last_request_intact


def _where_found(case: CompactionCase, fragments: list[str]) -> str:
    for kind, label in (("user_messages", "section 6"), ("next", "the next-step quote (section 9)")):
        section = case.sections.get(kind)
        # by the graders' reading of verbatim (typography, quote characters), as the verdict found it
        if section is not None and all(find(f, section.body) for f in fragments):
            return label if case.summary_format is None else f"the '{section.title}' section"
    if case.kept_text and all(find(f, case.kept_text) for f in fragments):
        return "the kept messages"
    return "the summary" if case.kind != "session_memory" else "the session notes"




@grader("last_request_intact", kind="rule")
def last_request_intact(case: CompactionCase) -> Verdict:
    """The most recent person-typed message is in full, verbatim, in the post-compact context.

    Verbatim as pytest_ctxeval.reading.verbatim counts it (quote characters, escapes, invisible Unicode, a
    fixed typo, a pasted log after a verbatim lead); a left-out acknowledgement of three words or fewer
    ("this is good.") does not make the request incomplete. A truncated request does."""
    people = case.person_messages()
    if not people:
        return Verdict.not_applicable("no person-typed message before this compaction")
    last = people[-1]
    hay = whole_context(case)  # the text of _context(case), normalised once per case
    fragments = message_fragments(last.text)
    label = f"the most recent request (user message {len(people)} of {len(people)})"
    found = find(last.text, hay)
    if not found and len(fragments[0]) > LONG_MESSAGE_CHARS and prose_kept(last.text, hay):
        found = Match(True, "prose", "the pasted lines in its prose summarised")
    if not found and len(fragments) == 2 and all(find(f, hay) for f in fragments):
        # A long message that is mostly pasted (a log, code, a document; not the person's prose)
        # may be kept by its two ends: said as such, never as "verbatim".
        return Verdict.passed_(f"{label} is a long paste ({len(normalize_ws(last.text)):,} characters, mostly pasted "
                               f"output or document) kept by its head and tail only: its first and last "
                               f"{LONG_MESSAGE_KEEP} characters are verbatim in {_where_found(case, fragments)}, the "
                               f"middle may be summarised: \"{_short(last.text)}\"")
    # a quote that lists the person's messages apart (" / ", ";") holds each as a message of its own
    added = copy_runs_on(last.text, hay, [p.text for p in people[:-1]]) if found.how == "exact" else ""
    if added:   # every copy goes on with words the person did not type
        return Verdict.failed(f"{label} is in {_context_name(case)} only with words the person did not type "
                              f"added to it (\"{_short(added, 60)}\"): \"{_short(last.text)}\"", expected=last.text)
    if found:
        note = f" ({found.note})" if found.note else ""
        where_found = _where_found(case, [last.text] if len(fragments) == 1 else fragments)
        if found.how in ("lead", "chat", "command"):   # the paste is summarised: what is verbatim is what the person typed
            return Verdict.passed_(f"{label} has what the person typed verbatim in {where_found}, its pasted output "
                                   f"summarised{note}: \"{_short(last.text)}\"")
        return Verdict.passed_(f"{label} is verbatim in {where_found}{note}: \"{_short(last.text)}\"")
    where = _context_name(case)
    if len(fragments) == 2:
        return Verdict.failed(f"{label} is not in full in {where}{long_message_gap(last.text, hay)}: "
                              f"\"{_short(last.text)}\"", expected=last.text)
    lost_tail = typed_after_paste(last.text, hay)
    if lost_tail:
        return Verdict.failed(f"{label} is not in full in {where}: its lead is kept and the pasted output "
                              f"summarised, but what the person typed after the paste is not there: "
                              f"\"{_short(lost_tail, 120)}\"", score=0.0, expected=last.text, missing_parts=[lost_tail])
    lost_error = paste_error_lost(last.text, hay)
    if lost_error:
        return Verdict.failed(f"{label} is not in full in {where}: what the person typed is kept and the pasted "
                              f"output summarised, but the paste's error line is not told: "
                              f"\"{_short(lost_error, 120)}\"", score=0.0, expected=last.text,
                              missing_parts=[lost_error])
    parts = request_parts(last.text)
    missing = [p for p in parts if not find(p, hay)]
    kept = len(parts) - len(missing)
    filler = [p for p in missing if is_acknowledgement(p)]
    if not missing and (ack := _acknowledgement_apart(last.text, parts, hay)):
        # the acknowledgement is found too, elsewhere (a paraphrase, another quote): the request
        # without it is verbatim, which the rule below accepts when it is not found at all
        filler = ack
        missing = ack
    if missing and len(filler) == len(missing) and kept and \
            sum(len(p) for p in filler) <= MAX_SHARE * len(normalize_ws(last.text)):
        return Verdict.passed_(f"{label} is verbatim in {where} but for the acknowledgement "
                               + "; ".join(f"\"{p}\"" for p in filler) + f": \"{_short(last.text)}\"")
    if missing and kept:
        reason = (f"{label} is not in full in {where}: {len(missing)} of its {len(parts)} parts are missing: "
                  + "; ".join(f"\"{_short(p, 60)}\"" for p in missing[:4]))
        score = kept / len(parts)
    elif not missing:
        reason = (f"{label} is not verbatim in {where}: its {len(parts)} parts appear, but not together as the "
                  f"user wrote them: \"{_short(last.text, 120)}\"")
        score = 0.5
    else:
        reason = f"{label} is not verbatim in {where}: \"{_short(last.text, 120)}\""
        near = closest_line(last.text, _context(case))
        if near:
            reason += (f"; closest line ({percent_alike(near[1], last.text, near[0])} similar), differences: "
                       f"{show_difference(normalize_ws(last.text), near[0])}")
        score = 0.0
    return Verdict.failed(reason + long_prose_note(last.text), score=round(score, 4), expected=last.text,
                          missing_parts=missing)


def _acknowledgement_apart(text: str, parts: list[str], hay: str | Haystack) -> list[str]:
    """The acknowledgements leading or ending ``text`` ("this is good.") when the rest of it, without
    them, is verbatim in ``hay``; else []."""
    ack, rest = acknowledgements(text, parts)
    return ack if ack and rest and find(rest, hay) else []


# ---------------------------------------------------------------------------------------------
# constraints_preserved


def _origin(case: CompactionCase, needle: str) -> str:
    """Who set ``needle``: the user (which message), a memory file, or something else."""
    low = normalize_ws(needle).lower()
    n_person = 0
    for message in case.history:
        if not isinstance(message, (UserMessage, AssistantMessage)):
            continue
        people = person_messages([message])
        if people:
            n_person += 1
        if low not in normalize_ws(plain_text([message])).lower():
            continue
        if people:
            return f"set by the user in message {n_person}"
        if isinstance(message, UserMessage) and "<system-reminder>" in plain_text([message]):
            return "set by a memory file (CLAUDE.md) shown to the agent"
        return "set in the session"
    return "set in the session"


_NEGATIVE = re.compile(r"\b(?:not|no|never|without|avoid\w*|neither|nor|none|nothing|only)\b|n't\b|\bn’t\b",
                       re.IGNORECASE)


_SENTENCE_END = re.compile(r"(?<=[.!?;])[\"”')]*\s+")


#: Words that turn a rule into a preference ("ideally without changing the test", "avoid the fixture
#: if you can"): a sentence that adds one the person did not say does not keep the rule.
_HEDGE = re.compile(
    r"\b(?:ideally|preferably|if (?:at all )?possible|where(?:ver)? possible|when(?:ever)? possible|"
    r"as far as possible|if you can|where you can|if practical|where practical|try (?:not )?to|"
    r"(?:if|when|as) (?:needed|necessary|required)|unless (?:needed|necessary|required)|"
    r"if it helps|should probably|for the most part|mostly)\b", re.IGNORECASE)


@lru_cache(maxsize=8192)  # by value: every constraint reads the same sentences of a summary
def _hedges(text: str) -> frozenset[str]:
    return frozenset(normalize_ws(m.group(0)).lower() for m in _HEDGE.finditer(text))


def _rule_kept(rule: str, item: str, said: Collection[str] = frozenset()) -> bool:
    """``rule`` is verbatim in ``item``, or most of its words are in one sentence of it, with its
    polarity: a prohibition ("Do not push to main") is kept only as a prohibition, so a sentence
    that holds its words without any negation ("Push to main") reverses it. Words scattered over
    several sentences of a paragraph do not make a rule. The sentence must not soften the rule with
    a hedge ("ideally", "if possible", "try to") beyond those in ``said`` (the person's own words)."""
    allowed = _hedges(rule) | set(said)
    negative = _NEGATIVE.search(rule) is not None
    for sentence in _SENTENCE_END.split(normalize_ws(item)):
        if _hedges(sentence) - allowed:
            continue
        if contains_text(sentence.lower(), rule.lower()):
            return True
        if _present(rule, sentence) and (not negative or _NEGATIVE.search(sentence)):
            return True
    # A rule of several sentences, verbatim in the item.
    return len(_SENTENCE_END.split(normalize_ws(rule))) > 1 and contains_text(item.lower(), rule.lower())


def _said_hedges(case: CompactionCase, rule: str) -> set[str]:
    """Hedges in the sentences of the session that state ``rule`` (the person's own softening)."""
    low = normalize_ws(rule).lower()
    text = case.history_text
    out: set[str] = set()
    start = text.find(low)
    while start >= 0:
        a = max(text.rfind(c, 0, start) for c in ".!?;\n") + 1
        ends = [i for i in (text.find(c, start + len(low)) for c in ".!?;\n") if i >= 0]
        out |= _hedges(text[a:min(ends) if ends else len(text)])
        start = text.find(low, start + 1)
    return out


@grader("constraints_preserved", kind="rule")
def constraints_preserved(case: CompactionCase) -> Verdict:
    """Every rule in expect.constraints (from the user or a memory file) is in the post-compact context."""
    constraints = case.reached(case.expect.constraints)
    # What the person set, restated in sections 1-2 with another value (reading.contradicted): a
    # rule broken by the summary itself, whether or not expect.constraints lists it.
    contradicted = _contradicted(case)
    # Work the summary tells (or plans) that breaks a rule the person set in words ("don't change the
    # public API"), without saying so (reading.broken_rules): a rule kept in words, broken in deeds.
    contradicted += _broken(case)
    # A value sections 1-2 tell that the session never showed (an issue number, a dated path, a
    # version misremembered: pytest_ctxeval.reading.unseen_values).
    if case.summary_format is None and case.kind != "session_memory":
        told = [s for k in ("request", "concepts") if (s := case.sections.get(k)) is not None]
        def raw() -> str:
            return case.shared_view("session_text", lambda: plain_text(case.history), case.history)

        contradicted += unseen_reasons(told, case.summary, case.history_text, raw) if told else []
    if not case.expect.constraints:
        if contradicted:
            return Verdict.failed(*contradicted, contradicted=contradicted)
        return Verdict.not_applicable("expect.constraints is empty")
    if not constraints:
        if contradicted:
            return Verdict.failed(*contradicted, contradicted=contradicted)
        return Verdict.not_applicable("no constraint of expect.constraints has come up yet")
    items = _items(_context(case))
    where = _context_name(case)
    said = {c: _said_hedges(case, c) for c in constraints}  # per rule, not per rule and item
    missing = [c for c in constraints if not any(_rule_kept(c, i, said[c]) for i in items)]
    reasons = [f"constraint lost: \"{_short(c, 100)}\" ({_origin(case, c)}) is not in {where}, so the agent "
               "may break it after this compaction" for c in missing] + contradicted
    return Verdict.from_fraction(len(constraints) - len(missing), len(constraints), reasons,
                                 f"{all_of(len(constraints), 'constraint')} in {where}", missing=missing)


def _rules(history: list) -> tuple[list, list[Prohibition]]:
    people = person_messages(history)
    return people, prohibitions([p.text for p in people]) if people else []


def _broken(case: CompactionCase) -> list[str]:
    """Reasons for sections 4-5 and 7-9 telling work that breaks a rule the person set in words
    (pytest_ctxeval.reading.broken_rules), each quoting the rule and the summary's clause."""
    if case.summary_format is not None or case.kind == "session_memory":
        return []
    people, rules = case.shared_view("person_rules", lambda: _rules(case.history), case.history)
    if not rules:
        return []
    said = [p.text for p in people]
    out = []
    for kind in ("errors", "problem", "pending", "current", "next"):
        section = case.sections.get(kind)
        if section is None:
            continue
        for b in broken_rules(section.body, rules, quoted_spans(section.body, said)):
            what = "changes" if b.rule.forbids == "change" else "uses"
            out.append(f"section {section.number} '{section.title}' (line {section.line}) tells work that {what} "
                       f"\"{b.rule.what}\", which the person forbade (user message {b.rule.number} of {len(people)}: "
                       f"\"{_short(b.rule.said or b.rule.message, 90)}\"), and does not say it breaks that rule: "
                       f"\"{_short(b.clause, 140)}\"")
    return out


def _person_words(history: list) -> tuple[list, PersonWords, dict[int, str]]:
    people = person_messages(history)
    return people, PersonWords([p.text for p in people]), {}


def _contradicted(case: CompactionCase) -> list[str]:
    """Reasons for lines of sections 1-2 that restate a person's message with another value in the
    place of theirs (pytest_ctxeval.reading.contradicted), each with its line and the person's words."""
    sections = [s for k in ("request", "concepts") if (s := case.sections.get(k)) is not None]
    if not sections or case.summary_format is not None:
        return []
    people, words, after_cache = case.shared_view("person_words", lambda: _person_words(case.history), case.history)
    if not people:
        return []
    lines = case.summary.split("\n")
    body = "\n".join(s.body for s in sections)

    def after(k: int) -> str:   # remembered with the session's view: the same for every mutant
        if k not in after_cache:
            after_cache[k] = plain_text(case.history[people[k].index + 1:]).lower()
        return after_cache[k]

    found = contradicted_values([line for s in sections for line in s.body.split("\n")], words, after, body)
    out = []
    # A quote of the person in sections 1-2 changed on the way (a word, a number, the opposite action):
    # the same reading as section 9's (reading.misquote), against the person's messages.
    said = None
    for q in quotes(body):
        if len(q.split()) < 4 or normalize_ws(q).lower() in case.history_text:
            continue
        said = said if said is not None else [normalize(p.text) for p in people]
        if (src := altered_quote(q, said)) is not None:
            start = normalize_ws(q)[:30]
            at = next((i + 1 for i in range(len(lines)) if start in normalize_ws(lines[i])), 0)
            number = 1 if sections[0].kind == "request" and q in normalize_ws(sections[0].body) else 2
            out.append(f"section {number} (line {at}) quotes the person as \"{_short(q, 100)}\", but they said "
                       f"\"{_short(src, 100)}\"; differences: {show_difference(quote_words(q), src)}")
    for c in found:
        start = normalize_ws(c.line)[:40]
        at = next((i + 1 for i in range(len(lines)) if start and start in normalize_ws(lines[i])), 0)
        number = 1 if any(c.line in s.body for s in sections[:1]) and sections[0].kind == "request" else 2
        out.append(f"section {number} (line {at}) says \"{_short(c.line, 110)}\" with {c.told} where the person "
                   f"set {c.said} (user message {c.message + 1}: \"{_short(c.context, 90)}\"), and nothing in the "
                   f"session after it says {c.told}: the summary contradicts the person")
    return out


# ---------------------------------------------------------------------------------------------
# failed_approaches_preserved


def _latest_words(case: CompactionCase) -> list[str]:
    """The person's most recent request (its messages): quoting it is not the summary's own proposal."""
    return [p.text for p in latest_requests(case.history)]

#: Words that mark an attempt as failed in a summary item.
_FAILED_MARK = re.compile(
    r"\b(?:fail(?:s|ed|ing|ure)?|did not|didn't|does not|doesn't|not (?:the )?(?:fix|cause|solution|answer)|"
    r"wrong|revert(?:s|ed|ing)?|rolled back|undone|undid|dead end|ruled out|no effect|did nothing|"
    r"abandon(?:ed)?|reject(?:ed)?|do not retry|don't retry|not work|broke|worse|hid(?:es|ing)?|masked?)\b",
    re.IGNORECASE)
_NEGATION = re.compile(r"\b(not|no longer|instead of|rather than|don't|do not|never|avoid|without|skip\w*|"
                       r"revert\w*|undo|abandon\w*|drop(?:ped|ping|s)?|instead)\b|n't\b", re.IGNORECASE)


@grader("failed_approaches_preserved", kind="rule")
def failed_approaches_preserved(case: CompactionCase) -> Verdict:
    """Approaches the session proved wrong (expect.failed_approaches) are recorded as failed and
    not proposed again in sections 7-9."""
    if not case.expect.failed_approaches:
        return Verdict.not_applicable("expect.failed_approaches is empty")
    approaches = case.reached(case.expect.failed_approaches)
    if not approaches:
        return Verdict.not_applicable("no approach of expect.failed_approaches has come up yet")
    items = _items(_context(case))
    where = _context_name(case)
    reasons, missing = [], []
    # /compact "leave out the failed attempts" (or a topic the approach names): the person's own
    # instruction wins over recording it, as for messages and errors; proposing it again still fails.
    asked, excused = leave_out(case.compact_args), []
    for approach in approaches:
        hits = [i for i in items if _present(approach, i)]
        if not any(_FAILED_MARK.search(i) for i in hits):
            if (why := left_out(asked, "failed_approaches", approach)) is not None:
                excused.append(why)
                continue
            missing.append(approach)
            if hits:
                reasons.append(f"failed approach \"{_short(approach, 80)}\" is mentioned in {where} but never as "
                               f"failed (e.g. \"{_short(hits[0], 100)}\"): after compaction it reads like work to "
                               "keep or redo")
            else:
                reasons.append(f"failed approach \"{_short(approach, 80)}\" is not recorded in {where}: the agent "
                               "may try it again after this compaction (sections 4-5 are where a dead end belongs)")
    for kind, number in (("pending", 7), ("current", 8), ("next", 9)):
        section = case.sections.get(kind)
        if section is None:
            continue
        exempt = quoted_spans(section.body, _latest_words(case))
        where_s = (f"section {number} '{section.title}'" if case.summary_format is None
                   else f"the '{section.title}' section")
        for approach in approaches:
            if approach in missing:
                continue
            # A mention proposes the approach unless its own clause records it as failed or negates
            # it (pytest_ctxeval.reading.proposals); an item that names it only by most of its words is
            # read as one clause.
            found = [p.clause for p in proposals(section.body, approach, negators=_FAILED_MARK,
                                                   dropped_after=_FAILED_MARK, exempt=exempt)]
            if not found and not mention_pattern(approach).search(section.body):
                found = [i for i in _items(section.body) if _present(approach, i)
                         and not _NEGATION.search(i) and not _FAILED_MARK.search(i)]
            if found:
                missing.append(approach)
                reasons.append(f"{where_s} (line {section.line}) proposes the failed "
                               f"approach \"{_short(approach, 80)}\" again: \"{_short(found[0], 100)}\"")
    ok, reasons = with_leave_out(f"{all_of(len(approaches), 'failed approach')} recorded as failed in {where}", reasons,
                                 excused, len(approaches), "failed approaches", case.compact_args, asked)
    return Verdict.from_fraction(len(approaches) - len(set(missing)), len(approaches), reasons, ok,
                                 missing=list(dict.fromkeys(missing)))
