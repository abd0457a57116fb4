"""The next step, cited: section 9 quotes the most recent conversation.

* ``next_step_quote``: section 9, when it proposes a step, quotes the most recent conversation
  verbatim (no drift); a quote of an older message does not count, a quote that alters what was said
  fails, and a quote of the request the latest message only refines passes when the refinement is
  told beside it.

``next_step_quote`` checks Claude Code's section 9 rule and is ``n/a`` for other compactors.

What several rule graders share (the place a reason names, a missing section, a summary read
whole, a key line kept in one item) is in :mod:`pytest_ctxeval.grading.section_reasons` and
:mod:`pytest_ctxeval.reading.key_lines`: grader modules are loaded by file path and do not import
each other.
"""

from __future__ import annotations

import re

from pytest_ctxeval.grading import CompactionCase, Verdict, grader
from pytest_ctxeval.core.messages import AssistantMessage, result_text, text_of, tool_results, tool_uses
from pytest_ctxeval.reading.misquote import altered_quote, opposite_action, quote_words
from pytest_ctxeval.reading.proposals import proposed_step, without_trailer
from pytest_ctxeval.reading.refinement import refinement_told, short_refinement
from pytest_ctxeval.reading.quoting import (
    NO_STEP as _NO_STEP, NO_STEP_SENTENCE as _NO_STEP_SENTENCE, code_quotes as _code_quotes,
    unmarked_quote as _unmarked_quote, CODE_SPAN as _CODE_SPAN, block_quotes as _block_quotes,
    flat_lines as _flat_lines, quote_in as _quote_in, readings as _readings,
    quotes as _quotes, fenced_blocks as _fenced_blocks, tokens_in as _tokens_in,
)
from pytest_ctxeval.reading.summary import Section, normalize_ws
from pytest_ctxeval.reading.summary_form import format_request
from pytest_ctxeval.reading.verbatim import closest_line, normalize, percent_alike, show_difference
from pytest_ctxeval.grading.section_reasons import section_missing as _section_missing, short as _short


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
