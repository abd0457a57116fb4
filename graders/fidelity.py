"""Fidelity graders: what the summary must still say after compaction.

* ``verbatim_user_messages``: every person-typed message of the session so far is in section 6,
  verbatim after whitespace normalisation (long, mostly pasted messages: head and tail, see
  :data:`pytest_ctxeval.reading.extract.LONG_MESSAGE_CHARS`).
* ``next_step_quote``: section 9, when it proposes a step, quotes the most recent conversation
  verbatim (no drift); a quote of an older message does not count.
* ``files_preserved``: every file edited or written in the session so far (across earlier
  compactions: the artifact trail) is named in section 3.
* ``errors_preserved``: the key line of every failing tool result is in section 4.
* ``pending_tasks``: every open TodoWrite item is in section 7.
* ``no_superseded_work``: intents the user dropped (``expect.superseded``) are not proposed in
  sections 7-9.

Expectations (``expect.files``, ``expect.errors``, ``expect.pending``) are required of a compaction
once the session has reached them: an entry that first comes up after a compaction is not held
against that compaction's summary.

Other compactors (:mod:`pytest_ctxeval.compaction`): a fact is looked for in the section of its kind
when the compactor's summary format has one (opencode's "Relevant Files" for files), else in the
whole post-compact context (Codex keeps user messages as messages). ``next_step_quote`` checks
Claude Code's section 9 rule and is ``n/a`` for other compactors.
"""

from __future__ import annotations
from collections import Counter
from collections.abc import Callable, Sequence

import re

from pytest_ctxeval.core.words import all_of, plural
from pytest_ctxeval.reading.extract import (
    FailingResult, failing_results, file_ledger, file_mentioned, latest_requests, person_messages,
    said_unchanged_removed, touched_files,
    message_fragments, open_todos, same_name, significant_tokens, text_index,
)
from pytest_ctxeval.grading import CompactionCase, Verdict, grader
from pytest_ctxeval.core.messages import AssistantMessage, plain_text, result_text, text_of, tool_results, tool_uses
from pytest_ctxeval.reading.invented import invented_quotes, session_records
from pytest_ctxeval.reading.person_quotes import person_quotes_removed
from pytest_ctxeval.reading.misquote import altered_quote, opposite_action, quote_words
from pytest_ctxeval.reading.feedback import rejection_feedback
from pytest_ctxeval.reading.error_location import misplaced_errors
from pytest_ctxeval.reading.code_attribution import file_texts, misattributed_code
from pytest_ctxeval.reading.file_claims import deleted_claims, new_claims, only_read, removal_named, state_claims
from pytest_ctxeval.reading.file_changes import FileLedger
from pytest_ctxeval.reading.workarounds import not_counted
from pytest_ctxeval.reading.done_claims import unbacked_claims
from pytest_ctxeval.reading.prohibitions import prohibitions
from pytest_ctxeval.reading.rerun_claims import unverified_reruns
from pytest_ctxeval.reading.test_claims import last_test_run, passing_claims
from pytest_ctxeval.reading.unseen_values import unseen_reasons
from pytest_ctxeval.reading.answers import answer_told, choices, misreported_choices, typed_answers
from pytest_ctxeval.reading.leave_out import leave_out, left_out, with_leave_out
from pytest_ctxeval.reading.proposals import proposals, proposed_step, quoted_spans, without_trailer
from pytest_ctxeval.reading.refinement import refinement_told, short_refinement
from pytest_ctxeval.reading.quoting import (
    HOW as _HOW, NO_STEP as _NO_STEP, NO_STEP_SENTENCE as _NO_STEP_SENTENCE, drafts as _drafts,
    message_kept as _message_kept, code_quotes as _code_quotes, unmarked_quote as _unmarked_quote,
    CODE_SPAN as _CODE_SPAN, block_quotes as _block_quotes,
    flat_lines as _flat_lines, long_message_gap as _long_message_gap, long_prose_note as _long_prose_note,
    quote_in as _quote_in, readings as _readings,
    quotes as _quotes, fenced_blocks as _fenced_blocks, tokens_in as _tokens_in, whole_context as _whole,
    SUMMARY_REQUEST as _SUMMARY_REQUEST, listed_summary_request as _listed_summary_request,
)
from pytest_ctxeval.reading.cancellations import proposes_intent, superseded_intents, typed_cancellations, violates
from pytest_ctxeval.reading.finished_tasks import finish_evidence, list_updates
from pytest_ctxeval.reading.tasks import (
    called_done, open_items as _open_items, task_in_item, task_state, task_told as _task_told,
)
from pytest_ctxeval.reading.session_facts import error_kept, error_told_as_error, failing_test_told, items_about, error_denied
from pytest_ctxeval.reading.summary import Section, normalize_ws, notes_section, plain_emphasis
from pytest_ctxeval.reading.summary_form import format_request, free_form
from pytest_ctxeval.reading.verbatim import (
    Haystack, Match, closest_line, haystack, lines_apart, most_alike, normalize, percent_alike, show_difference,
    typed_after_paste,
    paste_error_lost,
)

#: A key line or todo counts as present when this share of its significant tokens appears.
TOKEN_OVERLAP = 0.8


def _short(text: str, n: int = 70) -> str:
    text = normalize_ws(text)
    return text if len(text) <= n else text[: n - 1] + "…"


def _where(case: CompactionCase, kind: str, number: int) -> str:
    """How a reason names the place it looked: ``section 3 'Files and Code Sections' (line 12)``."""
    section = case.sections.get(kind)
    if case.summary_format is not None:  # another compactor's format
        if section is None:
            return "the post-compact context (summary and kept messages)"
        kept = " or the kept messages" if case.kept_text else ""
        return f"the '{section.title}' section (line {section.line}){kept}"
    if case.kind == "session_memory" or section is None:
        return "the post-compact context (session notes and kept messages)"
    kept = " or the kept messages" if case.kept_text else ""
    number, title = case.section_name(kind)  # the prompt's name for it (a renamed prompt's title)
    return f"section {number} '{title}' (line {section.line}){kept}"


def _section_missing(case: CompactionCase, kind: str, number: int, what: str, items: Sequence[str] = ()) -> Verdict:
    """The fail for a summary without the section; names the first items that are lost with it."""
    lost = ""
    if items:
        shown = "; ".join(f"\"{_short(i, 60)}\"" for i in items[:3])
        lost = f": {shown}" + (f" (+{len(items) - 3} more)" if len(items) > 3 else "")
    fmt = case.summary_format
    if fmt is not None:
        return Verdict.failed(f"the '{fmt.title_for(kind)}' section of the {fmt.name} is missing, so {what} cannot "
                              f"survive{lost} (sections found: "
                              f"{', '.join(s.title for s in case.sections.sections) or 'none'})", missing=list(items))
    number, title = case.section_name(kind)  # the prompt's name for it (a renamed prompt's title)
    return Verdict.failed(f"section {number} '{title}' is missing, so {what} cannot survive{lost} "
                          f"(sections found: {', '.join(case.sections.kinds) or 'none'})", missing=list(items))


def _free_form(case: CompactionCase, kind: str) -> str | None:
    """Why the facts of section ``kind`` are looked for in the whole summary: it lacks that section
    and is not in the nine sections (or a /compact asked for another structure), so a fact may be in
    any part of it (reading.summary_form). None for a summary in the nine sections, or another
    compactor's format."""
    if case.summary_format is not None or case.kind == "session_memory" or case.sections.get(kind) is not None:
        return None
    return free_form(len(set(case.sections.kinds)), case.compact_args)


def _whole_region(case: CompactionCase) -> str:
    """The whole summary and what the compaction kept verbatim."""
    return case.summary + ("\n" + case.kept_text if case.kept_text else "")


def _free_where(case: CompactionCase, kind: str, number: int, why: str) -> str:
    """How a reason names the place it looked in a summary without the nine sections."""
    kept = " or the kept messages" if case.kept_text else ""
    return f"the summary{kept} (read whole: it has no section {number} '{case.section_name(kind)[1]}'; {why})"


_PRESENT_ITEMS = re.compile(r"\n(?=\s{0,3}(?:[-*]|\d+[.)])\s)")

#: A short quoted value in a key line or todo (``KeyError: 'XK'``, ``exit status "2"``): often the only
#: thing that tells one error from another of its type, and too short to count as a significant token.
_QUOTED_VALUE = re.compile(r"(?<![\w])(['\"`])([^'\"`\n]{1,40})\1(?![\w])")


def _items(text: str) -> list[str]:
    """A section split into items: a line starting a list entry, with its continuation lines."""
    return re.split(r"\n(?=\s{0,3}(?:[-*]|\d+[.)])\s)", text)


def _present(needle: str, haystack: str) -> bool:
    """Verbatim (whitespace- and case-insensitive), or most of its significant tokens within one
    item of the section (a line, with its continuation lines), not scattered over the section.

    (The section is indexed once for all needles: text_index.) In the second case every short quoted
    value of the needle must be in that item too: "a KeyError for Kosovo" does not keep
    ``KeyError: 'XK'`` (its one significant token is the exception type)."""
    index = text_index(haystack, _PRESENT_ITEMS)
    tokens = significant_tokens(needle)
    if index.contains(normalize_ws(needle.lower()), tokens):
        return True
    if not index.overlap(tokens, TOKEN_OVERLAP):
        return False
    values = [normalize_ws(m.group(2)).lower() for m in _QUOTED_VALUE.finditer(needle) if m.group(2).strip()]
    if not values:
        return True
    for item in _items(haystack):  # rare: an item holds the tokens; does it hold the quoted values too?
        have = set(significant_tokens(item))
        if sum(t in have for t in tokens) / len(tokens) >= TOKEN_OVERLAP and all(
                re.search(rf"(?<![\w]){re.escape(v)}(?![\w])", normalize_ws(item).lower()) for v in values):
            return True
    return False


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
    escapes, invisible Unicode, flattened line breaks and a fixed typo do not count as changes; a
    typed lead whose pasted log was summarised is kept; a draft the person sent again revised is kept
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
            found = _message_kept(p.text, hay, rare, [q.text for q in people if q is not p])
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


def _cancellations(case: CompactionCase) -> list:
    """The cancellations the person typed in the case's history, read once per compaction (its
    mutants share the history)."""
    return case.shared_view("typed_cancellations", lambda: typed_cancellations(case.history), case.history)


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


@grader("next_step_quote", kind="rule", applies_to=("full", "partial", "transcript"), compactors=("claude_code",))
def next_step_quote(case: CompactionCase) -> Verdict:
    """Section 9 quotes the most recent conversation verbatim when it proposes a step: at least
    :data:`MIN_QUOTE_CHARS` characters of it, or a whole message the person typed.

    A quote that alters it (a word, number, path, action or negation changed:
    pytest_ctxeval.reading.misquote) fails, even beside a verbatim quote. A quote of the request the
    latest message only refines is no drift (pytest_ctxeval.reading.refinement): it passes when the
    refinement is told beside it."""
    section = case.sections.get("next")
    if section is None:
        form = format_request(case.compact_args) if case.summary_format is None else None
        if form is not None and form.structure:   # the person's own form wins (review 4, G14)
            return Verdict.not_applicable(f"the summary has no section 9: /compact asked for another structure "
                                          f"(\"{_short(form.said, 80)}\"), which leaves out the next-step section "
                                          "the quote belongs to")
        return _section_missing(case, "next", 9, "the next step and its quote")
    # Claude Code's own lines after section 9 (the transcript pointer, "Please continue the
    # conversation…") are not the summary's: they are cut off (pytest_ctxeval.reading.proposals).
    body = without_trailer(section.body).strip()
    first = re.split(r"(?<=[.!?])\s+|\n", body, maxsplit=1)[0]
    # "No explicit next step requested." proposes nothing only if the rest of the section proposes
    # nothing either: "No next step required. I will now delete hello_world.py" is a step to quote.
    if not body or ((_NO_STEP.match(body) or _NO_STEP_SENTENCE.search(first))
                    and proposed_step(body, no_step=_NO_STEP_SENTENCE) is None):
        return Verdict.not_applicable(f"section 9 proposes no step: \"{_short(body)}\"")
    people = case.span_people()  # of what the summary covers (an up_to partial ends before the kept messages)
    if not people:
        return Verdict.not_applicable("no person-typed message to quote")
    last = people[-1]
    convo = case.conversation()
    assert convo is not None
    run, recent, older, after = convo.run, convo.recent, convo.older, convo.after
    # A quote inside another one ('Export: v2' within "open a PR titled 'Export: v2'. Do not push")
    # is part of it: it cannot make a misquoted outer quote verbatim.
    found = _quotes(body)
    quotes = [q for q in found if not any(q != o and q in o for o in found)]
    # A message wrapped over the lines of a block quote is one quote (its lines' quotes stay too).
    blocks = _block_quotes(body)
    quotes += [q for q in blocks if q not in quotes]
    # A quote shows the task when it holds at least MIN_QUOTE_CHARS of the recent conversation, or a
    # whole message the person typed (a short request is the task itself); a short scrap ("same
    # limits") or a filler reply ("On it.") does not, and the reason says so (it is verbatim).
    min_len = MIN_QUOTE_CHARS
    # The person's own messages: an inline code span quotes them when it holds their words (a code
    # span of anything else is code), and so does a long run of their words without any marks.
    spoken = [r for p in run for r in _readings(p.text)]
    if len(run) > 1:
        spoken += _readings("\n".join(p.text for p in run))
    code = [c for c in _code_quotes(body, spoken + older, min_len) if not any(c in q for q in quotes)]
    code = [c for c in code if _quote_in(c, spoken, min_len) or len(normalize(c)) >= min_len]
    # The assistant's own words after the request (its plan, "I'll wrap the upload call in the retry
    # helper") set as code are a quote of them too, when the span reads as prose: a command or a
    # path it ran stays code.
    prose = [normalize(_flat_lines(text_of(m.content))) for m in case.span()[last.index + 1:]
             if isinstance(m, AssistantMessage) and text_of(m.content).strip()]
    code += [c for c in _code_quotes(body, prose, min_len) if _PROSE_SPAN.match(c) and c not in code
             and not any(c in q for q in quotes)]
    quotes += code
    # Quote marks inside a fenced code block are code (a proposed `git commit -m "…"`): they quote
    # the conversation only when what they hold is in it.
    quotes += [q for block in _fenced_blocks(body) for q in _quotes(block) if _quote_in(q, recent, min_len, whole=spoken)]
    good = [q for q in quotes if _quote_in(q, recent, min_len, whole=spoken)]
    # A block quote verbatim as a whole is credited with all its lines, not with one of them.
    whole_blocks = [b for b in blocks if b in good]
    good = whole_blocks + [q for q in good if q not in whole_blocks and not any(q in b for b in whole_blocks)]
    # A quote taken from the recent conversation and changed on the way (a word flipped, a number or
    # a path changed) misquotes it, even beside a verbatim quote (pytest_ctxeval.reading.misquote).
    altered = {q: src for q in quotes if q not in good and not _quote_in(q, older, 0)
               and not any(q != b and q in b for b in blocks)  # a line of a wrapped block quote: a scrap
               and (src := altered_quote(q, recent)) is not None}
    if altered:
        q, src = next(iter(altered.items()))
        return Verdict.failed(f"section 9 (line {section.line}) quotes \"{_short(q, 100)}\", which is not verbatim: it "
                              f"alters what was said in the most recent conversation, \"{_short(src, 100)}\"; differences: "
                              f"{show_difference(quote_words(q), src)}", quotes=quotes, expected=src)
    cut = next((c for c in (_cut_before_condition(q, last.text, body) for q in good) if c), None)
    if cut is not None:
        q, clause = cut
        return Verdict.failed(f"section 9 (line {section.line}) quotes the last request cut before its condition: "
                              f"\"{_short(q)}\" leaves out \"{_short(clause, 60)}\", and the next step does not say it "
                              f"otherwise; the last request: \"{_short(last.text)}\"", quotes=quotes, expected=last.text)
    if good and short_refinement(case.span(), run):
        # A short message that says more than a go-ahead ("use 20 per page") refines the request
        # before it, as a longer one does: a quote of that request must come with what it adds.
        latest = _readings(last.text) + [r for t in after for r in _readings(t)]
        if not any(_quote_in(q, latest, min_len, whole=_readings(last.text)) for q in good):
            return _refined_task(section, body, good[0], [last], quotes)
    if good:
        return Verdict.passed_(f"section 9 quotes the most recent conversation: \"{_short(good[0])}\"", quote=good[0])
    loose = [q for q in quotes if _tokens_in(q, recent) and not _tokens_in(q, older)
             and not any(opposite_action(q, t) for t in recent if _tokens_in(q, [t]))]
    edited = [(q, e) for q in quotes for e in [_bracket_edit(q, recent, min_len, spoken)] if e]
    if edited:
        q, note = edited[0]
        return Verdict.passed_(f"section 9 quotes the most recent conversation, with an editor's note in square "
                               f"brackets ({note}): \"{_short(q)}\"", quote=q)
    if loose:
        return Verdict.passed_(f"section 9 quotes the most recent conversation, reformatted (its words in the "
                               f"same order, line breaks and list markers aside): \"{_short(loose[0])}\"", quote=loose[0])
    unmarked = _unmarked_quote(body, spoken, min_len)
    if unmarked:
        return Verdict.passed_(f"section 9 repeats the most recent request word for word, without quote marks: "
                               f"\"{_short(unmarked)}\"", quote=unmarked)
    scraps = [q for q in quotes if _quote_in(q, recent, 0)]
    if scraps and not any(_quote_in(q, older, min_len) for q in quotes):
        q = scraps[0]
        size = len(normalize_ws(q))
        return Verdict.failed(f"section 9 (line {section.line}) quotes only \"{_short(q)}\" ({size} characters) of the "
                              f"most recent conversation: verbatim, but too little to show the task (a quote counts "
                              f"from {min_len} characters, or as a whole message the person typed); the last "
                              f"request: \"{_short(last.text)}\"", quotes=quotes, expected=last.text)
    # The requests the latest message only refines ("also make it require the staff role") are the
    # task in progress: a quote of them is no drift (pytest_ctxeval.reading.refinement).
    running = [r for p in convo.running for r in _readings(p.text)]
    done = [t for t in older if t not in running]
    stale = [q for q in quotes if _quote_in(q, done, min_len)]
    if stale:
        said, asked = _apart(stale[0], _flat_lines(last.text))
        return Verdict.failed(f"section 9 (line {section.line}) quotes an older message, \"{said}\", not "
                              f"the most recent request \"{asked}\" (drift to an old task)",
                              quotes=quotes, expected=last.text)
    in_progress = [q for q in quotes if _quote_in(q, running, min_len)]
    if running and not in_progress:
        in_progress = [w for w in [_unmarked_quote(body, running, min_len)] if w]
    if in_progress:
        return _refined_task(section, body, in_progress[0], run, quotes)
    old_words = _unmarked_quote(body, done, min_len)
    if old_words:
        return Verdict.failed(f"section 9 (line {section.line}) repeats an older message word for word, without quote "
                              f"marks, \"{_short(old_words)}\", not the most recent request \"{_short(last.text)}\" "
                              "(drift to an old task)", quotes=[old_words], expected=last.text)
    if not quotes:
        # A code span close to the person's words is a misquote set as code, not "no quote" (a code
        # span close to a command or file the assistant read is code: only the person's words count).
        said = "\n".join(p.text for p in run)
        near_code = [c for c in (normalize_ws(m.group(1)) for m in _CODE_SPAN.finditer(body))
                     if len(c.split()) >= 4 and closest_line(c, said, 0.6) is not None]
        quotes = near_code[:1]
    if not quotes:
        later = case.span()[last.index + 1:]
        elsewhere = _quoted_elsewhere(case, recent, min_len, last.text, spoken, later)
        return Verdict.failed(f"section 9 (line {section.line}) proposes a step but quotes nothing; the prompt asks "
                              "it to quote the most recent conversation verbatim (the last request, or what was said "
                              f"and done after it); the last request: \"{_short(last.text)}\"{elsewhere}"
                              f"{_command_as_code(body, later)}", expected=last.text)
    # Each message on one line: a quote of a whole typed list is compared with the whole list.
    near = closest_line(quotes[0], "\n".join([_flat_lines(p.text) for p in run] + after))
    shown = (f"; closest ({percent_alike(near[1], quotes[0], near[0])} similar), differences: "
             f"{show_difference(quotes[0], near[0])}") if near else ""
    said, asked = _apart(quotes[0], _flat_lines(last.text))
    return Verdict.failed(f"section 9 (line {section.line}) quotes \"{said}\", which is not verbatim "
                          f"in the most recent conversation (last request: \"{asked}\"){shown}",
                          quotes=quotes, expected=last.text)


def _refined_task(section: Section, body: str, quote: str, run: list, quotes: list[str]) -> Verdict:
    """Section 9 quotes the request in progress and the latest message only refines it: a pass when
    section 9 tells what the refinement adds, else a fail that says the latest message is missing
    (not drift: the quoted task is the one being worked on)."""
    latest = "\n".join(p.text for p in run)
    told = refinement_told(latest, body)
    n = len(run)
    which = "the latest message" if n == 1 else f"the latest {n} messages"
    if told:
        return Verdict.passed_(f"section 9 quotes the request in progress, \"{_short(quote)}\", and tells what "
                               f"{which} add{'s' if n == 1 else ''} to it: \"{_short(latest)}\"", quote=quote)
    return Verdict.failed(f"section 9 (line {section.line}) quotes the request in progress, \"{_short(quote)}\", but "
                          f"neither quotes nor tells {which}, which refine{'s' if n == 1 else ''} it: "
                          f"\"{_short(latest)}\" (the prompt asks for the most recent conversation)",
                          quotes=quotes, expected=run[-1].text)


#: Words in square brackets inside a quote: the quoter's own ("[the endpoint]" for "it").
_BRACKETED = re.compile(r"\[([^\[\]\n]{1,60})\]")


def _bracket_edit(quote: str, recent: list[str], min_len: int, spoken: list[str]) -> str:
    """How a quote edits the conversation with words in square brackets, when that is its only
    change: "\"[the endpoint]\" stands for \"it\"" (a replaced word), or "\"[sic]\" added"; else "".
    Each side of the brackets must be verbatim in one recent text, with at most three words
    between them there; words added in brackets ("[do not] deploy") or a negation in or under them
    are a change, not an editor's note."""
    marks = list(_BRACKETED.finditer(quote))
    if len(marks) != 1:
        return ""
    m = marks[0]
    before, after = quote[:m.start()], quote[m.end():]
    b, a = (_TRAIL_PUNCT.sub("", normalize(_flat_lines(x))) for x in (before, after))
    if len(b) + len(a) < min_len:
        return ""
    for text in recent:
        at = text.find(b) if b else 0
        while at >= 0:
            rest = text[at + len(b):]
            gap = rest.find(a) if a else len(rest)
            between = _TRAIL_PUNCT.sub("", rest[:gap]) if gap >= 0 else None
            inner = m.group(1).strip()
            if between is not None and len(between.split()) <= 3 \
                    and not _BRACKET_NEGATION.search(f"{inner} {between}") \
                    and (between or _EDITOR_MARK.fullmatch(inner)):
                return f"\"[{inner}]\" stands for \"{between}\"" if between else f"\"[{inner}]\" added"
            at = text.find(b, at + 1) if b else -1
    return ""


_TRAIL_PUNCT = re.compile(r"^[\s.,;:!?]+|[\s.,;:!?]+$")
#: An editor's mark that adds no words of its own: "[sic]", "[emphasis added]".
_EDITOR_MARK = re.compile(r"sic!?|emphasis (?:added|mine)|sic, emphasis added", re.IGNORECASE)
#: A replacement that negates (or stands for a negation) may turn what was said: never an editor's note.
_BRACKET_NEGATION = re.compile(r"\b(?:not|no|never|don'?t|doesn'?t|won'?t|can'?t|cannot|without|nor)\b", re.IGNORECASE)


def _apart(a: str, b: str, n: int = 70) -> tuple[str, str]:
    """``a`` and ``b`` shortened for a reason so that they read differently when they differ: two
    texts alike in their first ``n`` characters are shown from a little before where they part
    ("…it's PII, and log it" / "…it's PII"), never as two identical strings."""
    sa, sb = _short(a, n), _short(b, n)
    if sa != sb:
        return sa, sb
    x, y = normalize_ws(a), normalize_ws(b)
    at = next((i for i, (c, d) in enumerate(zip(x, y)) if c != d), min(len(x), len(y)))
    start = max(0, at - 30)
    lead = "…" if start else ""
    return lead + _short(x[start:], n), lead + _short(y[start:], n)


#: An inline code span that reads as a sentence, not a command: four words or more, of letters (an
#: apostrophe or a comma inside), no flag, path or call.
_PROSE_SPAN = re.compile(r"^(?=(?:\S+\s+){3})(?!.*(?:\s-{1,2}\w|[/\\=(){}<>|$]))[^\W\d_][\w' ,.;:!?-]*$")

#: next_step_quote: a quote of the recent conversation shows the task from this many characters on
#: (or as a whole message the person typed).
MIN_QUOTE_CHARS = 20

#: The words that open a condition on a request: what a quote cut just before them leaves out is a
#: limit the person set ("ship it, but only to staging", "refactor it without touching the API").
_CONDITION = re.compile(r"(?:but|only|except|unless|without|not|never|don'?t|do not|as long as|provided|so long as|"
                        r"and (?:not|never|don'?t|do not|only)|just)\b[^.!?\n]*", re.IGNORECASE)


def _cut_before_condition(quote: str, request: str, body: str) -> tuple[str, str] | None:
    """``(quote, clause)`` when ``quote`` is the start of ``request`` that stops right before a
    condition the person set, and section 9 (``body``) does not state the condition's words."""
    q, r = normalize(_flat_lines(quote)), normalize(_flat_lines(request))
    at = r.find(q) if q else -1
    if at < 0:
        return None
    rest = r[at + len(q):].lstrip(" ,;:-—–")
    m = _CONDITION.match(rest)
    if not m:
        return None
    clause = m.group(0).strip()
    words = [w for w in re.findall(r"[^\W\d_]{3,}", clause) if w not in _CONDITION_FILLER]
    if not words:
        return None
    kinds = [k for k, pattern in _CONDITION_KINDS.items() if pattern.search(clause)]
    # Told when one sentence of section 9 holds the condition's words and its kind of limit
    # ("to staging only"); "staging" in "done to staging; next, deploy to production" is not it.
    for sentence in re.split(r"[.;!?\n]+", normalize(_flat_lines(body))):
        if all(re.search(rf"(?<!\w){re.escape(w)}", sentence) for w in words) and \
                all(_CONDITION_KINDS[k].search(sentence) for k in kinds):
            return None
    said = re.search(re.escape(clause).replace(r"\ ", r"\s+"), request, re.IGNORECASE)
    return quote, said.group(0) if said else clause


#: The kinds of limit a condition sets, each by the words that say it (any of them tells it).
_CONDITION_KINDS = {
    "only": re.compile(r"\b(?:only|just|solely|exclusively)\b", re.IGNORECASE),
    "not": re.compile(r"\b(?:not|never|don'?t|no|without|avoid|except)\b", re.IGNORECASE),
    "unless": re.compile(r"\b(?:unless|only if|provided|as long as|so long as|if)\b", re.IGNORECASE),
}

#: Words of a condition that do not carry it (the limit is in the others: "only to staging").
_CONDITION_FILLER = {"but", "only", "not", "never", "don", "and", "the", "just", "except", "unless", "without",
                     "provided", "long", "that", "this", "with", "for"}


def _command_as_code(body: str, later: list) -> str:
    """A note for a section 9 without a quote that names a command the assistant ran after the last
    request in a code span: the rule that a code span of a command is code, not a quote, decided it."""
    commands = [normalize(str(u.input.get("command", ""))) for m in later for u in tool_uses(m) if u.name == "Bash"]
    for m in _CODE_SPAN.finditer(body):
        span = normalize(m.group(1))
        if len(span) >= 10 and any(span in c or (len(c) >= 10 and c in span) for c in commands):
            return (f"; section 9 names a command run after it, `{_short(m.group(1), 60)}`, in a code span, which "
                    "counts as code, not a quote (a code span of a command or path is code)")
    return ""


def _said_by(hit: str, later: list) -> str:
    """Who said a quote of what came after the last request: the assistant, a command it wrote, or a
    tool's output (a test title in a runner's log is no one's words)."""
    hit = normalize(hit)
    if any(hit in normalize(text_of(m.content)) for m in later if isinstance(m, AssistantMessage)):
        return "what the assistant said after the last request"
    if any(hit in normalize(result_text(r)) for m in later for r in tool_results(m)):
        return "a tool's output after the last request (not the person's or the assistant's words)"
    return "code or a command the assistant wrote after the last request (not what anyone said)"


def _quoted_elsewhere(case: CompactionCase, recent: list[str], min_len: int, last: str, spoken: list[str],
                      later: list | None = None) -> str:
    """A note for a section 9 without a quote: another section of the summary that does quote the
    most recent conversation (section 8 often does), which section 9 could have carried. The note
    says "quotes it" only of the last request; a quote of what came after it (a task title in a tool's
    output, the assistant's words) is named as the most recent conversation, not as the request."""
    for kind, number in (("current", 8), ("request", 1), ("pending", 7)):
        other = case.sections.get(kind)
        if other is None:
            continue
        hits = [q for q in _quotes(other.body) if _quote_in(q, recent, min_len, whole=spoken)]
        if hits:
            lines = case.summary.split("\n")
            start = hits[0][:25]
            at = next((i + 1 for i in range(max(other.line - 1, 0), len(lines)) if start in normalize_ws(lines[i])),
                      other.line)
            what = "it" if _quote_in(hits[0], [last], min_len) else (
                _said_by(hits[0], later) if later is not None else "the most recent conversation")
            return f" (section {number} quotes {what}, line {at}: \"{_short(hits[0], 50)}\", but not in the next step)"
    return ""


def _not_told_note(f: str, files: list[str], said: str, own: str, whole: str) -> str:
    """Why a changed file named somewhere in the summary is not told as changed there."""
    if file_mentioned(f, own, files):
        return (" as changed (it is named only as not changed: read-only, unmodified, untouched, no edits "
                "needed)")
    if file_mentioned(f, said, files):
        return (" as changed (it is named only in the person's own words, section 6 or a quote of their "
                "message, which tell what was asked, not that the file was changed)")
    return _unnamed_note(f, whole, files)


@grader("files_preserved", kind="rule")
def files_preserved(case: CompactionCase) -> Verdict:
    """Every file edited or written in the session so far (and expect.files) is named in section 3.

    A file moved counts at its new place. A rejected or failed edit changed nothing, an edit undone or
    reverted with git (``git checkout --``, ``git restore``, ``git stash``, ``git reset --hard``) is no
    change (pytest_ctxeval.reading.file_changes), and Claude Code's own storage (plan files, memory) is
    not a project file (pytest_ctxeval.reading.session_facts). A file named in another part of the
    summary was not dropped; one named only as unchanged ("no edits needed") or only in the person's
    words (section 6, a quote of their message) is not told as changed. Files written or moved
    through MCP tools count (pytest_ctxeval.reading.mcp_writes)."""
    # The artifact trail of the whole session, not only of this span: a second summary that drops
    # the files changed before the first compaction has lost them.
    ledger = case.shared_view("file_ledger", lambda: file_ledger(case.history), case.history)
    changed, moved = ledger.changed(), ledger.moved_from
    files = list(dict.fromkeys(changed + case.reached(case.expect.files)))
    # A file the session only read, called new beside its name (pytest_ctxeval.reading.file_claims).
    called_new = _called_new(case, [*changed, *moved.values()])
    # A value section 3 tells that the session never showed (a dated path, a version, a commit id
    # misremembered: pytest_ctxeval.reading.unseen_values).
    called_new += _unseen(case, "files")
    # A file the session wrote and kept, called deleted (pytest_ctxeval.reading.file_claims).
    deleted = _called_deleted(case, changed, ledger.how)
    called_new += deleted
    # Code shown under one file that the session wrote into another (reading.code_attribution).
    called_new += _misattributed_code(case)
    if not files and called_new:
        return Verdict.failed(*called_new)
    if not files:
        return Verdict.not_applicable("no project file was changed (rejected or failed edits and Claude Code's own "
                                      "plan/memory files do not count), and no file of expect.files has come up yet")
    region = case.region("files")
    where = _where(case, "files", 3)
    free = _free_form(case, "files")
    if region is None and free:
        region, where = _whole_region(case), _free_where(case, "files", 3, free)
    if region is None:
        return _section_missing(case, "files", 3, f"the {len(files)} changed files (latest first)",
                                list(reversed(files)))
    # ``__api.go__`` names api.go; "`api.go` (read-only reference)" does not tell it as changed
    said = plain_emphasis(_whole(case).text)
    # what the summary says in its own words: not the person's messages (section 6) or quotes of them,
    # which name a file as what was asked, not as changed (pytest_ctxeval.reading.person_quotes)
    people = [p.text for p in case.person_messages()]
    listed = case.sections.get("user_messages")
    listed_body = plain_emphasis(listed.body) if listed else ""
    own = person_quotes_removed(said, people, listed_body)
    region = said_unchanged_removed(person_quotes_removed(plain_emphasis(region), people, listed_body))
    whole = said_unchanged_removed(own)
    elsewhere = [f for f in files if not file_mentioned(f, region, files) and file_mentioned(f, whole, files)]
    missing = [f for f in files if not file_mentioned(f, region, files) and f not in elsewhere]
    # /compact "leave out X": the person's own instruction wins (as for messages and errors)
    asked = leave_out(case.compact_args)
    excused = [(f, why) for f in missing if (why := left_out(asked, "files", f)) is not None]
    missing = [f for f in missing if f not in dict(excused)]
    reasons = [f"{f} was {_how_changed(f, changed, moved, ledger.how)} but is not named "
               + (f"anywhere in {where}" if free else f"in {where} nor anywhere else in the summary")
               + _not_told_note(f, files, said, own, whole) for f in missing]
    ok = f"{all_of(len(files), 'changed file')} named in {where}" + (
        f" ({len(elsewhere)} of them only in another section)" if elsewhere else "")
    ok, reasons = with_leave_out(ok, reasons, [w for _, w in excused], len(files), "changed files", case.compact_args,
                                  asked)
    called_new += _called_gone(case, ledger, told=deleted)
    return Verdict.from_fraction(len(files) - len(missing), len(files), reasons + called_new, ok, missing=missing)


def _only_read(history: list, changed: list[str]) -> tuple[dict[str, str], list[str]]:
    """The files the session only read whose name no other file of it has, and every path it touched."""
    read = only_read(history, changed)
    all_paths = [p for p, _ in touched_files(history)] if read else []
    bases = Counter(p.replace("\\", "/").rsplit("/", 1)[-1] for p in all_paths)
    return {p: e for p, e in read.items() if bases[p.replace("\\", "/").rsplit("/", 1)[-1]] == 1}, all_paths


def _called_new(case: CompactionCase, changed: list[str]) -> list[str]:
    """Reasons for lines of section 3 that call a file new which the session only read."""
    section = case.sections.get("files")
    if section is None:
        return []
    read, all_paths = case.shared_view("only_read", lambda: _only_read(case.history, changed), case.history)
    if not read:
        return []
    lines = case.summary.split("\n")
    out = []
    for claim in new_claims(plain_emphasis(section.body), read):
        if not file_mentioned(claim.path, claim.line, all_paths):
            continue
        at = _line_of(lines, section, claim.line)
        out.append(f"section 3 (line {at}) calls {claim.path} new: \"{_short(claim.line, 100)}\"; but the session read "
                   f"it before any command or subagent could have made it (its Read returned \"{_short(claim.evidence, 60)}\") "
                   "and no edit of the session wrote or moved it")
    return out


def _called_gone(case: CompactionCase, ledger: FileLedger, told: list[str]) -> list[str]:
    """Reasons for lines of section 3 that call a file the session changed deleted (no command or
    subagent could have deleted it), pre-existing (its Write created it) or unchanged
    (pytest_ctxeval.reading.file_claims.state_claims): the mirror of a file only read called new."""
    section = case.sections.get("files")
    changed = [p for p in ledger.changed() if not ledger.how.get(p, "").startswith("deleted")]
    if section is None or not changed:
        return []
    def facts() -> tuple[dict[str, tuple[bool, bool]], list[str], dict[str, str]]:
        shell = [str(u.input.get("command", "")) for m in case.history for u in tool_uses(m) if u.name == "Bash"]
        delegated = any(u.name in ("Task", "Agent") for m in case.history for u in tool_uses(m))
        touched = dict(touched_files(case.history))
        names = {p: p.replace("\\", "/").rsplit("/", 1)[-1] for p in changed}
        return ({p: (ledger.state[p].created if p in ledger.state else False,
                     delegated or p in ledger.moved_from or any(names[p] in c for c in shell)
                     or removal_named(p, case.history)) for p in changed},
                list(touched), touched)
    files, all_paths, touched = case.shared_view("state_claim_facts", facts, case.history)
    lines = case.summary.split("\n")
    out = []
    for claim in state_claims(plain_emphasis(section.body), files):
        # a file _called_deleted already reported (``told``) gets one reason
        if claim.claim == "deleted" and any(f"calls {claim.path} deleted" in r for r in told):
            continue
        if not file_mentioned(claim.path, claim.line, all_paths):
            continue
        at = _line_of(lines, section, claim.line)
        tool = ledger.how.get(claim.path) or f"with {touched.get(claim.path, 'an edit tool')}"
        fact = {"deleted": f"no command or subagent of the session deleted it (it was changed {tool} and no shell "
                           "command names it)",
                "pre-existing": f"the session created it (its {touched.get(claim.path, 'Write')} returned \"File created\")",
                "unchanged": f"the session changed it ({tool})"}[claim.claim]
        out.append(f"section 3 (line {at}) calls {claim.path} {claim.claim}: \"{_short(claim.line, 100)}\"; but {fact}")
    return out


def _called_deleted(case: CompactionCase, changed: list[str], how: dict[str, str]) -> list[str]:
    """Reasons for lines of section 3 that call a file deleted which the session changed and kept."""
    section = case.sections.get("files")
    if section is None or not changed or case.summary_format is not None:
        return []
    lines = case.summary.split("\n")
    out = []
    for claim in deleted_claims(plain_emphasis(section.body), changed, how, case.history,
                                lambda p, t: file_mentioned(p, t, changed)):
        at = _line_of(lines, section, claim.line)
        out.append(f"section 3 (line {at}) calls {claim.path} deleted: \"{_short(claim.line, 100)}\"; but the session "
                   f"{how.get(claim.path, 'changed')} it and no command or tool of the session removed it: the file is "
                   "there, and the next context window will not look for it")
    return out


def _misattributed_code(case: CompactionCase) -> list[str]:
    """Reasons for code blocks of section 3 shown under a file whose text the session never showed
    them in, while another file of it holds them."""
    section = case.sections.get("files")
    if section is None or case.summary_format is not None or "```" not in section.body:
        return []
    texts = case.shared_view("file_texts", lambda: file_texts(case.history), case.history)
    paths = list(texts.text)
    lines = case.summary.split("\n")
    out = []
    for bad in misattributed_code(section.body, texts, lambda p, t: file_mentioned(p, plain_emphasis(t), paths)):
        at = _line_of(lines, section, bad.item)
        out.append(f"section 3 (line {at}) shows under {bad.told} code the session wrote or read in {bad.shown}, none of "
                   f"it in {bad.told}: \"{_short(bad.lines[0], 80)}\" (the snippet is attributed to the wrong file)")
    return out


def _how_changed(path: str, changed: list[str], moved: dict[str, str], how: dict[str, str]) -> str:
    if path not in changed:
        return "expected"
    return f"moved here from {moved[path]}" if path in moved else how.get(path, "changed")


def _unnamed_note(path: str, text: str, files: list[str]) -> str:
    """What the summary does say about a file it does not name: its bare file name, which other
    changed files share (so it does not tell which), or only the folder it is in."""
    norm = path.replace("\\", "/").rstrip("/")
    base = norm.rsplit("/", 1)[-1]
    flat = text.replace("\\", "/")
    namesakes = same_name(path, files)
    if namesakes and re.search(rf"(?<![\w./-]){re.escape(base)}(?![\w-]|\.\w)", flat):
        return f" (the summary says only '{base}', the name of {len(namesakes) + 1} changed files)"
    if span := _in_named_range(base, flat):
        return f" (named only as part of a range: '{span}')"
    folder = norm.rsplit("/", 1)[0]
    parts = [p for p in folder.split("/") if p]
    for k in range(min(len(parts), 3), 0, -1):
        tail = "/".join(parts[-k:])
        if re.search(rf"(?<![\w.-]){re.escape(tail)}/?(?![\w./-])", flat) and (k > 1 or len(tail) >= 8):
            return f" (only its folder '{tail}/' is named)"
    return ""


#: A range of numbered names: "00_overview through 08_cleanup-docs", "01-setup.md to 05-deploy.md".
_NAMED_RANGE = re.compile(r"(?<![\w.-])(?P<a>(?P<na>\d+)[\w.-]*)\s*(?:through|thru|to|until|[-–—]|\.\.\.?)\s*"
                          r"(?P<b>(?P<nb>\d+)[\w.-]*)")


def _in_named_range(base: str, text: str) -> str:
    """The range of numbered names in ``text`` whose numbers hold the number ``base`` starts with
    ("02_data-layer.md" in "00_overview through 08_cleanup-docs"), or ``""``. A range tells a reader the
    file is among those, not which of them changed: the file is still not named, the reason says so."""
    own = re.match(r"\d+(?=[_.-])", base)
    if own is None:
        return ""
    for m in _NAMED_RANGE.finditer(text):
        if len(m.group("na")) == len(m.group("nb")) == len(own.group()) and \
                int(m.group("na")) <= int(own.group()) <= int(m.group("nb")) and not m.group("a").replace(".", "").isdigit():
            return m.group(0)
    return ""


@grader("errors_preserved", kind="rule")
def errors_preserved(case: CompactionCase) -> Verdict:
    """Every error of the summarised span (and every expect.errors line) is in section 4: its key
    line, or its identifying tokens (test or function name, file:line, exception type, error code,
    exit code, HTTP status), or the failing command with its output, or the failing test it belongs to.
    A test run whose tests failed is an error even when it exited 0 (``pytest | tail``).

    Rejected calls, calls cancelled with a failing sibling, calls the tool refused as made and probes
    that found nothing are not errors (pytest_ctxeval.reading.session_facts.error_kind)."""
    wanted: dict[str, tuple[str, FailingResult | None]] = {}
    # the summarised span's errors: the same for every mutant of a compaction (a shared view)
    for f in case.shared_view("failing_results", lambda: failing_results(case.summarized), case.summarized):
        if f.key_line:
            label = f"{f.tool} result"
            if f.exit_ok:   # `pytest | tail` exits 0: say why a result not marked as an error counts
                label = f"{f.tool} test run (it exited 0, its output reports failing tests: {f.tests[0][1] if f.tests else 'see the run'})"
            wanted.setdefault(f.key_line, (label, f))
    for line in case.reached(case.expect.errors):
        wanted.setdefault(line, ("expect.errors", None))
    unseen = _unseen(case, "errors")   # an exit code, a count, a commit id the session never showed
    if not wanted and unseen:
        return Verdict.failed(*unseen)
    if not wanted:
        others = case.shared_view("other_failures", lambda: failing_results(
            case.summarized, kinds=("rejected", "cancelled", "tool_usage", "probe")), case.summarized)
        told = not_counted(others, [p.text for p in person_messages(case.summarized)])
        what = (f"no tool result failed with an error in the summarised span ({told}; an error is a failure "
                "of the work, or a refused command line worked around another way)") if told else (
            "no tool result failed in the summarised span")
        return Verdict.not_applicable(f"{what}, and no line of expect.errors has come up yet")
    region = case.region("errors")
    where = _where(case, "errors", 4)
    if region is None and (why := _free_form(case, "errors")):
        region, where = _whole_region(case), _free_where(case, "errors", 4, why)
    if region is None:
        return _section_missing(case, "errors", 4, f"the {plural(len(wanted), 'error line')}", list(wanted))
    # Where else an error is told: the problem-solving and current-work sections (by its identifying
    # tokens only in an item that speaks of an error: not by any mention of a name it holds). Words in
    # underscore emphasis are read as rendered (``__Ruff UP038__`` names UP038).
    region = plain_emphasis(region)
    others = plain_emphasis(case.sections.body("problem", "current"))
    wider = region + "\n" + others
    missing, how, elsewhere = [], [], 0
    asked, excused = leave_out(case.compact_args), []   # /compact "leave out X": the person's own instruction wins
    for key, (_, res) in wanted.items():
        # an item that says the error did not happen, or names another code of its kind, keeps nothing
        if _present(key, items_about(region, key)):
            continue
        # told in section 4 by its tokens counts for section 4, even when section 8 also quotes it
        kept_here = error_kept(key, res.text, str(res.input.get("command", "")), region,
                               workaround=res.workaround) if res else (False, "")
        if kept_here[0]:
            how.append(kept_here[1])
            continue
        if _present(key, items_about(wider, key)):
            elsewhere += 1
            continue
        if res is not None:
            command = str(res.input.get("command", ""))
            kept, why = error_kept(key, res.text, command, region, workaround=res.workaround)
            if not kept and res.tests:
                why = failing_test_told(res.tests, region, errors_section=True)
                kept = bool(why)
            if not kept and others:
                kept, why = error_told_as_error(key, res.text, command, others, workaround=res.workaround)
                if not kept and res.tests:
                    why = failing_test_told(res.tests, others)
                    kept = bool(why)
                elsewhere += kept
            if kept:
                how.append(why)
                continue
        told = key if res is None else "\n".join((key, str(res.input.get("command", "")), res.text[:2000]))
        if (asked_for := left_out(asked, "errors", told)) is not None:
            excused.append(asked_for)
            continue
        missing.append(key)
    def _nor_test(k: str) -> str:
        res = wanted[k][1]
        note = f" (nor is its failing test '{_short(res.tests[0][1], 60)}')" if res is not None and res.tests else ""
        denied = error_denied(k, res.text if res else "", str(res.input.get("command", "")) if res else "", region)
        return note + (f"; an item of the section {denied}" if denied else "")
    reasons = [f"error line from a failing {wanted[k][0]} is not in {where}: \"{_short(k, 100)}\"{_nor_test(k)}"
               for k in missing]
    # An error told against another file than the one its output places it in (the next context
    # window opens the wrong file): pytest_ctxeval.reading.error_location.
    misplaced = _misplaced_errors(case, [r for _, r in wanted.values() if r is not None])
    # A test the span's last run still fails, called passing (pytest_ctxeval.reading.test_claims).
    misplaced += _passing_claims(case)
    # An error called re-run or passing that nothing ran again (pytest_ctxeval.reading.rerun_claims).
    misplaced += _unverified_reruns(case, [r for _, r in wanted.values() if r is not None])
    misplaced += unseen
    reasons += misplaced
    by_test = sum(w.startswith("its failing test") for w in how)
    by = [f"{len(how) - by_test} by their identifying tokens" if len(how) > by_test else "",
          f"{by_test} by a failing test they belong to" if by_test else ""]
    tokens = f" ({', '.join(b for b in by if b)})" if how else ""
    if elsewhere:
        ok = (f"{all_of(len(wanted), 'error line')} kept: {len(wanted) - elsewhere} in {where}, {elsewhere} in the "
              f"problem-solving or current-work section{tokens}")
    else:
        ok = f"{all_of(len(wanted), 'error line')} in {where}{tokens}"
    ok, reasons = with_leave_out(ok, reasons, excused, len(wanted), "error lines", case.compact_args, asked)
    return Verdict.from_fraction(max(len(wanted) - len(missing) - len(misplaced), 0), len(wanted), reasons, ok,
                                 missing=missing)


def _misplaced_errors(case: CompactionCase, results: list[FailingResult]) -> list[str]:
    """Reasons for items of section 4 that place an error of a failing result in a file its output
    does not name, while the output places it in one other file (reading.error_location)."""
    section = case.sections.get("errors")
    if section is None or not results:
        return []
    files = case.shared_view("touched_names", lambda: {p.replace("\\", "/").rsplit("/", 1)[-1]
                                                        for p, _ in touched_files(case.history)}, case.history)
    items = _items(plain_emphasis(section.body))
    lines = case.summary.split("\n")
    out, seen = [], set()
    for res in results:
        command = str(res.input.get("command", ""))
        def tells(item: str, res: FailingResult = res, command: str = command) -> bool:
            return error_kept(res.key_line, res.text, command, item)[0]

        for bad in misplaced_errors(items, res.text, files, tells, res.key_line):
            if (bad.item, bad.mark) in seen:
                continue
            seen.add((bad.item, bad.mark))
            at = _line_of(lines, section, bad.item)
            shown = _short(command, 60)
            mark = bad.mark if len(bad.mark) < 40 else f'"{_short(bad.mark, 60)}"'
            out.append(f"section 4 (line {at}) tells {mark} in `{bad.told}`: \"{_short(bad.item, 110)}\"; but the "
                       f"failing {res.tool} result" + (f" of `{shown}`" if shown else "") +
                       f" places it in {bad.path}: \"{_short(bad.evidence, 110)}\" (the error is told against the wrong file)")
    return out


def _unverified_reruns(case: CompactionCase, results: list[FailingResult]) -> list[str]:
    """Reasons for items of section 4 that call a failing command's error re-run or passing when
    nothing ran its tool again after the failure (pytest_ctxeval.reading.rerun_claims)."""
    section = case.sections.get("errors")
    if section is None or not results or case.summary_format is not None:
        return []
    lines = case.summary.split("\n")

    def tells(res: FailingResult, item: str) -> bool:
        return error_kept(res.key_line, res.text, str(res.input.get("command", "")), item)[0]

    out = []
    for claim in unverified_reruns(_items(plain_emphasis(section.body)), results, case.summarized, tells):
        at = _line_of(lines, section, claim.item)
        out.append(f"section 4 (line {at}) says \"{_short(claim.claim, 90)}\" of the error of `{_short(claim.command, 60)}`: "
                   f"\"{_short(claim.item, 100)}\"; but no command after the failure ran it again without failing (nor did a "
                   "subagent run): a fix called verified that was never run")
    return out


def _passing_claims(case: CompactionCase) -> list[str]:
    """Reasons for sentences of sections 4, 5 and 8 that call a test passing which the span's last
    test run still fails (pytest_ctxeval.reading.test_claims)."""
    run = case.shared_view("last_test_run", lambda: last_test_run(case.summarized), case.summarized)
    if run is None:
        return []
    lines = case.summary.split("\n")
    out = []
    for kind, number in (("errors", 4), ("problem", 5), ("current", 8)):
        section = case.sections.get(kind)
        if section is None:
            continue
        for claim in passing_claims(plain_emphasis(section.body), run):
            at = _line_of(lines, section, claim.sentence)
            what = (f"still fails the test {claim.test}" if claim.test else
                    f"fails {len(run.failing)} test{'s' if len(run.failing) > 1 else ''}")
            out.append(f"section {number} (line {at}) says \"{_short(claim.sentence, 110)}\", but the last test run of "
                       f"the span (`{_short(run.command, 60)}`) {what}: \"{_short(run.evidence, 110)}\"")
    return out


@grader("pending_tasks", kind="rule")
def pending_tasks(case: CompactionCase) -> Verdict:
    """Open TodoWrite items and TaskCreate tasks (and expect.pending) appear in section 7 (a task in
    progress may be told in sections 8-9 instead).

    A task is kept verbatim (section 7 or the kept messages) or told by most of its words in one item
    of the summary's own sections 7-9, every number of the task among them and not its opposite
    action ("remove" for "add"); an item marked as done or cancelled (ticked, struck, "[DONE]",
    "— DONE ✅", "(already implemented)", "(cancelled by the user)", filed under a "Done:" or
    "Finished tasks:" sub-heading or after a lead that calls the list completed) does not count, and
    a task the summary marks as done is not rescued by a mention in sections 8-9 (the summary says it
    is finished)."""
    todos = case.shared_view("open_todos", lambda: open_todos(case.history), case.history)
    items = list(dict.fromkeys(todos + case.reached(case.expect.pending)))
    # A task the person cancelled ("forget the PDF export") or that expect.superseded drops is not
    # pending, whatever the stale todo list says: no_superseded_work holds the same intents, so a
    # summary can pass both (reading.cancellations.superseded_intents).
    held = superseded_intents(case.history, case.summarized, case.expect.superseded, _cancellations(case))[0] if items else []
    cancelled = {i: h for i in items for h in held
                 if (violates(i, h.intent, h.cancellation.kind) if h.cancellation else proposes_intent(i, h.intent))}
    items = [i for i in items if i not in cancelled]
    dropped_note = ("; not required, as superseded: " + "; ".join(
        f"\"{_short(i, 60)}\" ({h.source()})" for i, h in list(cancelled.items())[:3])) if cancelled else ""
    # Work called done that no command of the session did: pushed, committed, a pull request opened
    # (pytest_ctxeval.reading.done_claims).
    unbacked = _unbacked_claims(case)
    # A value sections 5 and 7-9 tell that the session never showed (a PR number, a commit id, a test
    # count misremembered: pytest_ctxeval.reading.unseen_values).
    unbacked += _unseen(case, "problem", "pending", "current", "next")
    if not items and unbacked:
        return Verdict.failed(*unbacked)
    # A todo whose work the transcript shows finished after the list was last updated (the list went
    # stale) is not required; one committed while in progress may be told as done
    # (reading.finished_tasks).
    updates = case.shared_view("list_updates", lambda: list_updates(case.history), case.history)
    evidence = case.shared_view("finish_evidence", lambda: {
        i: e for i in items if i in updates and (e := finish_evidence(i, updates[i], case.history)) is not None},
        case.history) if items else {}
    finished = [i for i in items if i in evidence and evidence[i].kind == "finished"]
    items = [i for i in items if i not in finished]
    dropped_note += ("; not required, as finished after the latest todo update: " + "; ".join(
        f"\"{_short(i, 60)}\" ({evidence[i].told(case.index)})" for i in finished[:3])) if finished else ""
    if not items and (cancelled or finished):
        return Verdict.not_applicable(("every open task is superseded" if not finished else
                                       "no open task is left") + dropped_note)
    if not items:
        return Verdict.not_applicable("no open todo item or task (TodoWrite, TaskCreate/TaskUpdate), and no task of "
                                      "expect.pending has come up yet")
    region = case.region("pending")
    where = _where(case, "pending", 7)
    if region is None and (why := _free_form(case, "pending")):
        region, where = _whole_region(case), _free_where(case, "pending", 7, why)
    if region is None:
        return _section_missing(case, "pending", 7, f"the {plural(len(items), 'open task')}", items)
    # Only the summary's own items are read for done marks and for a task told in other words: kept
    # messages are what was said (file contents, tool output), not a task list.
    kept = case.kept_text
    head = region[: len(region) - len(kept)] if kept and region.endswith(kept) else region
    open_head = _open_items(head)
    open_region = open_head + region[len(head):]
    # each section read apart: words of a task spread over section 8 and section 9 tell nothing
    told = (open_head, *(_open_items(s.body) for k in ("current", "next") if (s := case.sections.get(k)) is not None))

    def listed(i: str, text: str) -> bool:
        """Kept in ``text`` (verbatim, or most of its words in one item) or told there in other words;
        either way with every number of the task and not its opposite action ("all 5 manifests" does
        not keep "all 15 manifests", nor "remove <block>" the task "add <block>")."""
        return _task_present(i, text) or _task_told(i, text)

    def done(i: str) -> bool:
        """The summary marks the task as finished or cancelled (in section 7, or in sections 8-9 when
        section 7 does not list it) and does not list it open in section 7: a mention in sections 8-9
        (often the user's request quoted) does not reopen a task section 7 calls done."""
        state = task_state(i, head)  # the item that tells the most of it decides
        if state is not None:
            return state == "done"
        if listed(i, open_head):
            return False
        if listed(i, head):
            return True
        return any(listed(i, s.body) for k in ("current", "next") if (s := case.sections.get(k)) is not None) \
            and not any(listed(i, t) for t in told)

    def committed(i: str) -> bool:
        """Marked done by the summary, as the transcript bears out: it was in progress at the latest
        todo update, and the session changed files and committed after it."""
        return i in evidence and evidence[i].kind == "committed" and done(i)

    missing = [i for i in items if not _task_present(i, open_region) and (done(i) or not _task_told(i, *told))
               and not committed(i)]
    agreed = [i for i in items if i not in missing and committed(i)]

    def stale(i: str) -> str:
        """Where the todo list last spoke of the task, and what the session did after it."""
        if i in evidence and evidence[i].kind == "committed":
            return f" ({evidence[i].told(case.index)}: if it is finished, the summary may mark it done)"
        if i in evidence and evidence[i].update.status == "in_progress":
            return f" ({evidence[i].told(case.index)})"
        if i in updates and (updates[i].compactions_after or i in evidence):
            return f" (as {updates[i].where(case.index)} lists it: {updates[i].status.replace('_', ' ')})"
        return ""

    asked = leave_out(case.compact_args)   # /compact "leave out X": the person's own instruction wins
    excused = [(i, by) for i in missing if (by := left_out(asked, "tasks", i)) is not None]
    missing = [i for i in missing if i not in dict(excused)]
    reasons = [f"open task not in {where}" + (" as an open task (marked as done or cancelled)" if done(i) else "")
               + f": \"{_short(i)}\"{stale(i)}" for i in missing]
    # Section 8 calling done a task section 7 lists open: the summary contradicts itself, and the next
    # context window cannot tell whether it is finished (reading.tasks.called_done).
    contradicted = _done_in_8_open_in_7(case, [i for i in items if i not in missing], open_head)
    reasons += [r for _, r in contradicted]
    missing += [i for i, _ in contradicted]
    if reasons:
        reasons[-1] += dropped_note
    reasons += unbacked
    # A pass names where each task was found: one told only in sections 8-9 is not "in section 7".
    later_only = [i for i in items if i not in missing and i not in agreed and i not in dict(excused)
                  and not _task_present(i, open_region)
                  and not _task_told(i, open_head)]
    found = f"{all_of(len(items), 'open task')} in {where}"
    if later_only or agreed:
        found = f"{all_of(len(items), 'open task')} kept: {len(items) - len(later_only) - len(agreed)} in {where}"
    if later_only:
        found += (f", {len(later_only)} told only in sections 8-9 (as work in progress): "
                  + "; ".join(f"\"{_short(i, 60)}\" ({_told_where(case, i)}"
                              + (f"; {evidence[i].told(case.index)}" if i in evidence else "") + ")"
                              for i in later_only[:3]))
    if agreed:
        found += (f", {len(agreed)} marked done by the summary, as the transcript bears out: "
                  + "; ".join(f"\"{_short(i, 60)}\" ({evidence[i].told(case.index)})" for i in agreed[:3]))
    found, reasons = with_leave_out(found, reasons, [w for _, w in excused], len(items), "open tasks",
                                     case.compact_args, asked)
    return Verdict.from_fraction(len(items) - len(missing), len(items), reasons, found + dropped_note, missing=missing,
                                 superseded=list(cancelled))


def _done_in_8_open_in_7(case: CompactionCase, items: list[str], open_head: str) -> list[tuple[str, str]]:
    """The tasks of ``items`` that section 7 (its open items: ``open_head``) lists open and a sentence
    of section 8 calls done, each with a reason quoting both places."""
    current, pending = case.sections.get("current"), case.sections.get("pending")
    if case.summary_format is not None or current is None or pending is None:
        return []
    lines = case.summary.split("\n")
    out = []
    for i in items:
        if not (_task_present(i, open_head) or _task_told(i, open_head)):
            continue
        said = called_done(i, plain_emphasis(current.body))
        if said is not None:
            out.append((i, f"section 8 '{current.title}' (line {_line_of(lines, current, said)}) calls the task "
                           f"\"{_short(i)}\" done (\"{_short(said, 110)}\") while section 7 '{pending.title}' (line "
                           f"{pending.line}) lists it open: the summary contradicts itself, and the next context "
                           "window cannot tell whether it is finished"))
    return out


def _line_of(lines: list[str], section: Section, text: str) -> int:
    """The summary line (1-based) at or after ``section``'s heading where ``text`` (a sentence or item
    of the section, emphasis unwrapped) starts, or the heading's line."""
    start = normalize_ws(text)[:40]
    return next((i + 1 for i in range(max(section.line - 1, 0), len(lines))
                 if start and start in normalize_ws(plain_emphasis(lines[i]))), section.line)


def _unbacked_claims(case: CompactionCase) -> list[str]:
    """Reasons for sentences of sections 4, 5 and 8 that call work done (pushed, committed, a pull
    request opened) which no command of the session did (pytest_ctxeval.reading.done_claims)."""
    if case.summary_format is not None:
        return []
    lines = case.summary.split("\n")
    out = []

    def person() -> list[str]:
        return case.shared_view("person_texts", lambda: [p.text for p in person_messages(case.history)], case.history)

    for kind, number in (("errors", 4), ("problem", 5), ("current", 8)):
        section = case.sections.get(kind)
        if section is None:
            continue
        for claim in unbacked_claims(plain_emphasis(section.body), case.history, person, case.history_text):
            at = _line_of(lines, section, claim.sentence)
            out.append(f"section {number} (line {at}) says the work was {claim.what}: \"{_short(claim.sentence, 100)}\"; "
                       f"but no command or tool call of the session did it (and no subagent ran, nor did the person "
                       f"say they did): a task called done that was never done")
    return out


def _unseen(case: CompactionCase, *kinds: str) -> list[str]:
    """Reasons for values the summary's sections of ``kinds`` tell that nothing in the session shows
    (pytest_ctxeval.reading.unseen_values); the nine-section summaries of Claude Code's prompt only."""
    if case.summary_format is not None or case.kind == "session_memory":
        return []
    sections = [s for k in kinds if (s := case.sections.get(k)) is not None]
    if not sections:
        return []
    def raw() -> str:
        return case.shared_view("session_text", lambda: plain_text(case.history), case.history)

    return unseen_reasons(sections, case.summary, case.history_text, raw)


def _told_where(case: CompactionCase, subject: str) -> str:
    """Where sections 8-9 tell an open task: "in section 9 'Optional Next Step' (line 40)"."""
    for kind in ("current", "next"):
        section = case.sections.get(kind)
        if section is not None and _task_told(subject, _open_items(section.body)):
            return f"in {_label(case, section.number, section)} (line {section.line})"
    return "in sections 8-9 read together"


def _task_present(subject: str, text: str) -> bool:
    """:func:`_present` for a task: verbatim, or :data:`TOKEN_OVERLAP` of its words in one item, and
    in that item every number of the task and not the opposite of its action
    (pytest_ctxeval.reading.tasks.task_in_item)."""
    if not _present(subject, text):
        return False
    if normalize_ws(subject.lower()) in normalize_ws(text.lower()):
        return True
    return any(task_in_item(subject, item, TOKEN_OVERLAP) for item in _items(text))


@grader("no_superseded_work", kind="rule")
def no_superseded_work(case: CompactionCase) -> Verdict:
    """Intents listed in expect.superseded, and tasks the person cancelled in words ("forget the PDF
    export"), are not proposed in sections 7-9, nor is a change the person forbade ("don't touch the
    sitemap")."""
    # An expected intent the latest todo list of the summarised span still holds open, with no
    # person-typed message after it, is superseded later: the summary rightly lists the plan as it
    # stood (pytest_ctxeval.reading.cancellations.superseded_intents).
    held, waiting = superseded_intents(case.history, case.summarized, case.expect.superseded, _cancellations(case))
    # What the person ruled out in a sentence of its own ("No MVP terminology in our app"), planned in
    # sections 7-9 (the "use" prohibitions of pytest_ctxeval.reading.prohibitions; its "change" ones,
    # "don't touch X", are held with the cancellations, where a later todo list may lift them).
    ruled_out = _ruled_out_planned(case)
    if ruled_out:
        return Verdict.failed(*ruled_out)
    if not held and waiting:
        return Verdict.not_applicable(f"the {len(waiting)} superseded intent(s) are still open items of the latest todo "
                                      "list in the summarised span: the change of plan comes after it")
    if not held:
        return Verdict.not_applicable("expect.superseded is empty, and the person cancelled no task in words "
                                      "(\"forget X\", \"scrap X\", \"we won't do X\") that came up before, nor forbade "
                                      "changing anything (\"don't touch X\", \"leave X alone\")")
    dropped = [h.intent for h in held]
    source = {h.intent: h for h in held}
    hits = []
    places = [(kind, number, case.sections.get(kind)) for kind, number in (("pending", 7), ("current", 8), ("next", 9))]
    if case.kind == "session_memory":  # the notes' "Current State" is where next steps live
        state = notes_section(case.summary, "current state")
        places = [("current", 8, Section("current", 8, "Current State", state, 1))] if state else []
    elif all(p[2] is None for p in places) and (free := _free_form(case, "pending")):
        # a summary without the nine sections proposes its next steps anywhere (reading.summary_form)
        places = [("summary", 0, Section(None, 0, f"the summary (read whole: {free})", case.summary, 1))]
    latest = _latest_words(case)
    for _kind, number, section in places:
        if section is None:
            continue
        text = section.body
        # The user's own latest words, quoted, are not the summary proposing anything.
        exempt = quoted_spans(text, latest)
        for intent in dropped:
            if source[intent].forbidden and _kind == "current":
                continue   # section 8 tells the work as it stood; a forbidden change is held to the plan (7, 9)
            found = source[intent].proposed(text, proposals(text, intent, exempt=exempt, dropped_after=_SET_ASIDE,
                                                            reworded=True))
            if found:
                hits.append((intent, number, section, _short(found[0].clause, 160)))
    if hits:
        reasons = [f"{_label(case, n, s)} (line {s.line}) " + (
                       f"proposes changing \"{i}\", which the person forbade" if source[i].forbidden
                       else f"proposes superseded work \"{i}\"") + f" ({source[i].source()}): \"{ctx}\""
                   for i, n, s, ctx in hits]
        return Verdict.failed(*reasons, score=round(1 - len({h[0] for h in hits}) / len(dropped), 4),
                              superseded=[h[0] for h in hits])
    where = "sections 7-9" if case.summary_format is None else "its next-step and pending sections"
    if places and places[0][0] == "summary" and places[0][2] is not None:
        where = places[0][2].title
    typed = [h for h in held if h.cancellation is not None]
    note = (f" ({len(typed)} cancelled or forbidden by the person in words: "
            + "; ".join(f"\"{h.intent}\" in user message {h.cancellation.number}" for h in typed if h.cancellation)
            + ")") if typed else ""
    return Verdict.passed_(f"none of the {len(dropped)} superseded intents is proposed in {where}{note}")


def _prohibitions(history: list) -> tuple[list, list]:
    people = person_messages(history)
    ruled = prohibitions([p.text for p in people]) if people else []
    return people, [r for r in ruled if r.forbids == "use"]


def _ruled_out_planned(case: CompactionCase) -> list[str]:
    """Reasons for sections 7-9 planning what the person ruled out in words (the "use" prohibitions
    of reading.prohibitions)."""
    if case.summary_format is not None or case.kind == "session_memory":
        return []
    people, ruled = case.shared_view("prohibitions", lambda: _prohibitions(case.history), case.history)
    if not ruled:
        return []
    latest = _latest_words(case)
    out = []
    for kind, number in (("pending", 7), ("current", 8), ("next", 9)):
        section = case.sections.get(kind)
        if section is None:
            continue
        exempt = quoted_spans(section.body, latest)
        for rule in ruled:
            found = proposals(section.body, rule.what, exempt=exempt, dropped_after=_SET_ASIDE)
            if found:
                said = " ".join(rule.message.split())
                out.append(f"{_label(case, number, section)} (line {section.line}) plans \"{rule.what}\", which the "
                           f"person ruled out (user message {rule.number} of {len(people)}: \"{_short(said, 90)}\"): "
                           f"\"{_short(found[0].clause, 140)}\"")
    return out


#: Words after a mention that set it aside (besides proposals.DROPPED_AFTER): "PDF export — the user
#: said to forget it", "PDF export (deferred)", "PDF export: on hold until the user asks".
_SET_ASIDE = re.compile(r"\b(?:forget (?:it|about it)|never ?mind|(?:don't|do not|doesn't|does not) (?:need|want) "
                        r"(?:it|this|that)|deferred|postponed|on hold|parked|set aside|put aside)\b", re.IGNORECASE)


def _latest_words(case: CompactionCase) -> list[str]:
    """The person's most recent request (its messages): quoting it is not the summary's own proposal."""
    return [p.text for p in latest_requests(case.history)]


def _label(case: CompactionCase, number: int, section: Section) -> str:
    """``section 7 'Pending Tasks'``, or ``the 'Work State' section`` in another compactor's format."""
    if number == 0:  # a summary without the nine sections, read whole
        return section.title
    return f"section {number} '{section.title}'" if case.summary_format is None else f"the '{section.title}' section"
