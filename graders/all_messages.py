"""The person's messages: every one they typed is in the summary's section 6 ("All user messages").

* ``verbatim_user_messages``: every person-typed message of the session so far is in section 6,
  verbatim after whitespace normalisation (long, mostly pasted messages: head and tail, see
  :data:`pytest_ctxeval.reading.extract.LONG_MESSAGE_CHARS`); the person's typed answers to the
  agent's questions are told, an option they did not pick is not told as their choice, and section 6
  quotes no message nobody typed.

Other compactors (:mod:`pytest_ctxeval.compaction`): a fact is looked for in the section of its kind
when the compactor's summary format has one (a user-messages section), else in the whole post-compact context
(Codex keeps user messages as messages).

What several rule graders share (the place a reason names, a missing section, a summary read
whole, a key line kept in one item) is in :mod:`pytest_ctxeval.grading.section_reasons` and
:mod:`pytest_ctxeval.reading.key_lines`: grader modules are loaded by file path and do not import
each other.
"""

from __future__ import annotations
from collections import Counter
from collections.abc import Callable

import re

from pytest_ctxeval.core.words import all_of
from pytest_ctxeval.reading.extract import message_fragments, person_messages
from pytest_ctxeval.grading import CompactionCase, Verdict, grader
from pytest_ctxeval.core.messages import text_of
from pytest_ctxeval.reading.invented import invented_quotes, session_records
from pytest_ctxeval.reading.feedback import rejection_feedback
from pytest_ctxeval.reading.acknowledgements import MAX_SHARE, acknowledgements
from pytest_ctxeval.reading.answers import answer_told, choices, misreported_choices, typed_answers
from pytest_ctxeval.reading.leave_out import leave_out, left_out, with_leave_out
from pytest_ctxeval.reading.quoting import (
    HOW as _HOW, drafts as _drafts, message_kept as _message_kept, flat_lines as _flat_lines,
    long_message_gap as _long_message_gap, long_prose_note as _long_prose_note, whole_context as _whole,
    SUMMARY_REQUEST as _SUMMARY_REQUEST, listed_summary_request as _listed_summary_request,
)
from pytest_ctxeval.reading.summary import Section, normalize_ws, plain_emphasis
from pytest_ctxeval.reading.summary_form import format_request
from pytest_ctxeval.reading.verbatim import (
    Haystack, Match, haystack, lines_apart, most_alike, normalize, paste_error_lost, percent_alike, show_difference,
    typed_after_paste,
)
from pytest_ctxeval.grading.section_reasons import (
    free_form_place as _free_where, free_form_why as _free_form, section_missing as _section_missing, short as _short,
    whole_region as _whole_region,
)


def _closest(needle: str, haystack: str) -> tuple[str, float] | None:
    lines = [normalize_ws(l.strip(" -*\"'")) for l in haystack.splitlines() if l.strip()]
    return most_alike(normalize_ws(needle)[:300], lines, 0.5, autojunk=True)


def _is_command_arguments(message: object) -> bool:
    """The person-typed text of ``message`` is a slash command's ``<command-args>``."""
    content = getattr(message, "content", None)
    text = content if isinstance(content, str) else text_of(content or [])
    return "<command-args>" in text


def _found_at(case: CompactionCase, text: str) -> str:
    """The other section of the summary that keeps a person's message verbatim ("section 9 (line
    205)"), or ""."""
    for section in case.sections.sections:
        if section.kind != "user_messages" and section.body.strip() and _message_kept(text, haystack(section.body)):
            return (f"section {section.number} (line {section.line})" if case.summary_format is None
                    else f"the '{section.title}' section")
    return ""


@grader("verbatim_user_messages", kind="rule")
def verbatim_user_messages(case: CompactionCase) -> Verdict:
    """Every person-typed message so far appears verbatim in section 6.

    Verbatim as a careful reader counts it (pytest_ctxeval.reading.verbatim): quote characters, Markdown
    escapes, invisible Unicode, flattened line breaks and a fixed typo do not count as changes, nor
    does a left-out acknowledgement the message opens or ends with ("this is good.", as
    last_request_intact reads it: pytest_ctxeval.reading.acknowledgements); a typed lead whose
    pasted log was summarised is kept; a draft the person sent again revised is kept
    by its resend; a ``/command``'s arguments may stand anywhere in the summary (they parameterise
    the command rather than say something to the agent). Any other message must be in section 6: a
    failure names another section that has it verbatim. Section 6 must not quote a message nobody
    typed (pytest_ctxeval.reading.invented): the failure quotes it and names its line."""
    people = case.person_messages()
    if not people:
        return Verdict.not_applicable("no person-typed messages before this compaction")
    region = case.region("user_messages")
    section = case.sections.get("user_messages")
    where = f"section 6 (line {section.line})" if section else "the post-compact context"
    asked_form = format_request(case.compact_args)
    if region is None and asked_form is not None and asked_form.structure and \
            (free := _free_form(case, "user_messages")):
        # /compact asked for another form ("5 bullets, no sections"): a message may be anywhere in
        # it, and a reason says where it looked and what was asked (reading.summary_form). A prompt
        # that lost section 6 on its own is a missing section, as before.
        region, where = _whole_region(case), _free_where(case, "user_messages", 6, free)
    if region is None:
        return _section_missing(case, "user_messages", 6, f"the {len(people)} person-typed messages",
                                [p.text for p in people])
    hay = haystack(region)
    kept: dict[int, Match] = {}
    rare = _rare_words(case)
    places: list[str] | None = None
    for n, p in enumerate(people):
        if _is_short(p.text):
            places = _short_places(case, section) if places is None else places
            found = _short_message_kept(p.text, places)
        else:
            # a quote listing it with the person's other messages (" / ", ";") holds it
            others = [q.text for q in people if q is not p]
            found = _message_kept(p.text, hay, rare, others)
            if not found:   # kept but for an acknowledgement ("this is good."), as last_request_intact reads it
                ack, rest = acknowledgements(p.text)
                if ack and rest and sum(map(len, ack)) <= MAX_SHARE * len(normalize_ws(p.text)) and \
                        _message_kept(rest, hay, rare, others):
                    found = Match(True, "acknowledgement")
        if not found and _is_command_arguments(case.history[p.index]):
            # A /command's arguments ("/gsd:discuss-phase 14" -> "14") are a parameter of the command,
            # which summaries state where the command's work is told (section 1), not as a message.
            # Any other message must be in section 6 itself: a copy elsewhere (section 1 often
            # quotes the request) does not stand in for the list the prompt asks for ("List ALL user
            # messages"), and an altered copy in section 6 would contradict it. The reason says
            # where the copy is.
            elsewhere = _message_kept(p.text, _whole(case), others=[q.text for q in people if q is not p])
            if elsewhere:
                found = Match(True, "elsewhere", "command arguments stated outside section 6")
        if found:
            kept[n] = found
    inside = _only_inside_others(people, kept, hay)
    for n in inside:
        del kept[n]
    drafts = _drafts(people, case.history)
    missing, reasons = [], []
    summaries: list[int] | None = None
    asked, excused = leave_out(case.compact_args), []   # /compact "leave out X": the person's own instruction wins
    for n, p in enumerate(people):
        if n in kept or (n in drafts and drafts[n] in kept):
            continue
        if (why := left_out(asked, "user_messages", p.text)) is not None:
            excused.append(why)
            continue
        missing.append(p.text)
        reason = f"user message {n + 1} of {len(people)} is not verbatim in {where}: \"{_short(p.text)}\""
        if n in drafts:
            reason += (f"; it is an interrupted draft of message {drafts[n] + 1}, which would stand for it, but that "
                       "message is not kept either")
        if rejection_feedback(case.history[p.index]):
            reason += " (typed as feedback when rejecting a tool use)"
        if n in inside:
            reason += f"; its text is there only inside message {inside[n] + 1}'s copy, not as a message of its own"
        elif section is not None and not _is_short(p.text) and (copy := _found_at(case, p.text)):
            reason += (f"; it is verbatim in {copy}, but section 6 is where the prompt asks for every user "
                       "message")
        if summaries is None:   # read once per grading, only when a message is missing
            summaries = [i for i, m in enumerate(case.history) if getattr(m, "is_compact_summary", False)]
        if (earlier := _compactions_before(summaries, p.index)) is not None:
            reason += (f"; typed before compaction {earlier}, so this summary had it only from the previous "
                       "summary and did not carry it forward")
        frags = message_fragments(p.text)
        reason += _long_message_gap(p.text, hay) + _long_prose_note(p.text)
        if len(frags) == 1 and (lost_tail := typed_after_paste(p.text, hay)):
            reason += (f"; its lead is kept and the pasted output summarised, but what the person typed after the "
                       f"paste is not there: \"{_short(lost_tail, 100)}\"")
        elif len(frags) == 1 and (lost_error := paste_error_lost(p.text, hay)):
            reason += (f"; what the person typed is kept and the pasted output summarised, but the paste's error "
                       f"line is not told: \"{_short(lost_error, 100)}\"")
        apart = len(frags) == 1 and lines_apart(p.text, hay)
        if apart:
            reason += ("; each of its lines is in the section, but apart, inside other items (the copies of other "
                       "messages), not listed together as this message")
        near = _closest(p.text, section.body if section else region) if len(frags) == 1 and not apart else None
        if near:
            reason += (f"; closest item ({percent_alike(near[1], p.text, near[0])} similar): \"{_short(near[0])}\"; differences: "
                       f"{show_difference(normalize_ws(p.text), near[0])}")
        reasons.append(reason)
    notes = sorted({m.how for m in kept.values() if m.how not in ("exact",)})
    ok = f"{all_of(len(people), 'person-typed message')} verbatim in {where}"
    if notes:
        ok += " (" + ", ".join(f"{sum(1 for m in kept.values() if m.how == h)} {_HOW[h]}" for h in notes) + ")"
    ok, reasons = with_leave_out(ok, reasons, excused, len(people), "messages", case.compact_args, asked)
    # Tolerated by policy, but said: the summariser saw Claude Code's summarisation request as the last
    # user message and listed it; it is not the person's (nothing typed is lost by it).
    request_at = None if any(_SUMMARY_REQUEST.search(p.text) for p in people) else \
        _listed_summary_request(section, case.summary)
    if request_at is not None:
        note = (f"; note: section 6 also lists Claude Code's own summarisation request as a user message (line "
                f"{request_at}), which the person did not type (tolerated: nothing they typed is lost by it)")
        ok += note
        reasons = [reasons[0] + note, *reasons[1:]] if reasons else reasons
    # The person's typed answers to the agent's questions (AskUserQuestion): told anywhere, in any
    # words (Claude Code's own summaries list them in section 6, "User chose: …"; reading/answers.py).
    answers = case.shared_view("typed_answers", lambda: typed_answers(case.history), case.history)
    lost_answers = [a for a in answers if not answer_told(a.answer, _whole(case).text)]
    for a in lost_answers:
        missing.append(a.answer)
        reasons.append(f"the person's typed answer to the agent's question \"{_short(a.question, 60)}\" is not in the "
                       f"summary, verbatim or in other words: \"{_short(a.answer, 100)}\" (Claude Code's summaries list "
                       "such answers in section 6, e.g. \"User chose: …\")")
    if answers and not lost_answers:
        ok += f"; {len(answers)} typed answer{'s' if len(answers) > 1 else ''} to the agent's questions told in the summary"
    # An option of the agent's question the person did not pick, told as their choice ("User chose:
    # Worktree" when they picked "Current directory"): the next window acts on the decision reversed.
    misreported = _misreported_choices(case)
    reasons += misreported
    if section is not None and case.summary_format is None:
        made_up = _invented(case, section)
        reasons += made_up
        if made_up and not missing:
            return Verdict.failed(*reasons, score=round(len(people) / (len(people) + len(made_up)), 4),
                                  missing=missing)
    total = len(people) + len(answers)
    if misreported and not missing:
        return Verdict.failed(*reasons, score=round(total / (total + len(misreported)), 4), missing=missing)
    return Verdict.from_fraction(total - len(missing), total, reasons, ok, missing=missing)


def _section_at(case: CompactionCase, line: int) -> str:
    """"section 6" for a 1-based summary line (the last header at or above it), or "the summary"."""
    heads = [sec for sec in case.sections.sections if sec.kind and sec.line <= line]
    return f"section {heads[-1].number}" if heads else "the summary"


def _misreported_choices(case: CompactionCase) -> list[str]:
    """Reasons for lines of the summary that tell an option the person did not pick as their answer
    to the agent's question (pytest_ctxeval.reading.answers.misreported_choices)."""
    if case.summary_format is not None:
        return []
    asked = case.shared_view("choices", lambda: choices(case.history), case.history)
    if not asked:
        return []
    lines = case.summary.split("\n")
    out = []
    for bad in misreported_choices(plain_emphasis(case.summary), asked):
        start = normalize_ws(bad.line)[:40]
        at = next((i + 1 for i, line in enumerate(lines) if start and start in normalize_ws(plain_emphasis(line))), 0)
        picked = " and ".join(f'"{c}"' for c in bad.choice.chosen)
        out.append(f"{_section_at(case, at)} (line {at}) tells \"{bad.told}\" as the person's choice: \"{_short(bad.line, 110)}\"; "
                   f"but to the agent's question \"{_short(bad.choice.question, 70)}\" they picked {picked}, not "
                   f"\"{bad.told}\" (the decision is told reversed)")
    return out


def _invented(case: CompactionCase, section: Section) -> list[str]:
    """Reasons for the quotes of section 6 that nobody in the session said (an invented user message,
    or the assistant's words listed as the person's; pytest_ctxeval.reading.invented), each with the
    summary line it is on."""
    found = invented_quotes(section.body, lambda: case.shared_view("said_records", lambda: session_records(
        case.history), case.history))
    lines = case.summary.split("\n")
    out = []
    for made in found:
        start = normalize_ws(made.quote)[:30]
        at = next((i + 1 for i in range(max(section.line - 1, 0), len(lines)) if start in normalize_ws(lines[i])),
                  section.line)
        whose = ("the assistant said it, the person did not" if made.verbatim else
                 "no message the person typed holds it; only the assistant's words come close, not word for word"
                 if made.assistant else "no message, answer or tool result of the session holds its words")
        out.append(f"section 6 (line {at}) quotes a user message the person never typed: \"{_short(made.quote, 100)}\" "
                   f"({whose})")
    return out


def _compactions_before(summaries: list[int], index: int) -> int | None:
    """The number of the first earlier compaction after message ``index`` (``summaries``: the history
    indices of the earlier summaries), None when no compaction came after it: a message a chained
    summary could read only in the previous summary ("typed before compaction 1")."""
    return next((n for n, i in enumerate(summaries, start=1) if i > index), None)


#: A message this short ("1", "ok", "go ahead") is found only as words of its own: "1" is not kept
#: by "pull/81", nor by a tool's output among the kept messages (only what the person typed there).
SHORT_MESSAGE_WORDS, SHORT_MESSAGE_CHARS = 3, 20


def _rare_words(case: CompactionCase) -> Callable[[str], bool]:
    """Which words of the session may be typos: those the person typed at most twice (a misspelling
    is typed once, or twice when the message is sent again), and that appear at most once besides
    (the assistant asking "by pythin you mean…?"). A summary that "fixes" a word the session uses
    ("want" -> "went", "full" -> "fall") changed what the person said. Counted on first use (a typo
    fix is rare), once per compaction."""
    def counts() -> tuple[Counter[str], Counter[str]]:
        typed = Counter(w for p in case.person_messages() for w in re.findall(r"[a-z]+", normalize(p.text)))
        return Counter(re.findall(r"[a-z]+", normalize(case.history_text))), typed

    def rare(word: str) -> bool:
        every, typed = case.shared_view("word_counts", counts, case.history)
        word = word.lower()
        return every[word] <= typed[word] + 1 and typed[word] <= 2
    return rare


def _is_short(text: str) -> bool:
    norm = normalize(text)
    return bool(norm) and len(norm) <= SHORT_MESSAGE_CHARS and len(norm.split(" ")) <= SHORT_MESSAGE_WORDS


def _short_places(case: CompactionCase, section: Section | None) -> list[str]:
    """Where a short message may be kept, normalised (read once per grading): section 6 (or, without
    one, the summary's region) without its list's own numbers and markers ("1." numbering an item is
    not "1"), and the person's own messages among the kept ones."""
    body = section.body if section is not None else (case.region("user_messages") or "")
    texts = [_LIST_MARKER.sub("", body)] + [m.text for m in person_messages(
        case.kept_messages if case.kept_messages is not None else case.post_messages)]
    return [n for t in texts for n in (normalize(t), normalize(_flat_lines(t)))]


def _short_message_kept(text: str, places: list[str]) -> Match:
    """A short message is kept when one of ``places`` (:func:`_short_places`) holds it as words of
    its own."""
    needle = re.compile(rf"(?<![\w/.:-]){re.escape(normalize(text))}(?![\w/-]|\.\w)")
    return Match(True, "exact") if any(needle.search(p) for p in places) else Match(False)


_LIST_MARKER = re.compile(r"^[ \t]*(?:[-*•+]|\d{1,3}[.)])[ \t]+", re.MULTILINE)


def _only_inside_others(people: list, kept: dict[int, Match], hay: Haystack) -> dict[int, int]:
    """Messages found only as part of another kept message: "Continue." is in "Looks good, continue."
    but a list that holds only the latter lost the former. Message index -> the message it is inside.
    Identical messages (the person said "Continue." twice) are one message for this purpose."""
    texts = {n: normalize(p.text) for n, p in enumerate(people)}
    out: dict[int, int] = {}
    for n, match in kept.items():
        needle = texts[n]
        if match.how != "exact" or not needle:
            continue
        hosts = [m for m in kept if kept[m].how == "exact" and texts[m] != needle and needle in texts[m]]
        if hosts and hay.norm.count(needle) <= sum(t.count(needle) for t in {texts[m] for m in hosts}):
            out[n] = hosts[0]
    return out
