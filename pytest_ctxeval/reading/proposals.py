"""Does a text propose something? A clause-scoped reading of a mention, for the intent graders.

``no_superseded_work`` and ``failed_approaches_preserved`` must tell "Next: add CSV export" (the
summary proposes a dropped intent) from "No CSV export (the user dropped it)" (it records that it
is dropped), in whatever phrasing a summariser writes: hedged ("consider whether to …", "we could
still …"), conditional, inside a longer sentence, right after a quotation that itself says "don't".

The model: a mention proposes its subject unless it is negated **within its own clause**:

* A clause ends at a sentence end (``.``, ``!``, ``?``, ``;``, also when a closing quotation mark or
  bracket follows it), a line break, a list marker, and at the edges of a quotation: what is said
  inside quotation marks is its own clause, and a "don't" in a quoted request does not reach the
  sentence after it.
* A negator before the mention (not, never, no longer, don't, skip, drop, remove, instead of, rather
  than, without, …) reaches it unless a new predicate starts between them: a comma or a conjunction
  (and, then, but, so, …) followed by at least one word before the mention ("skip the PDF and add
  CSV export" proposes it; "skip the PDF and CSV export" does not). A double negative is a
  proposal ("don't forget to …", "do not skip …", "why not …", "not yet …").
* A marker after the mention in its clause records it as dropped ("CSV export was dropped by the
  user", "issue_jwt (superseded)", "… is no longer needed"); so does striking it through
  (``~~CSV export~~``).

The mention itself is matched case- and whitespace-insensitively, and inflection-tolerant for plain
words ("issue JWT access tokens" also matches "issuing JWT access tokens").
"""

from __future__ import annotations
from collections.abc import Sequence

import re
from dataclasses import dataclass

__all__ = ["Proposal", "without_trailer", "proposals", "mention_pattern", "reworded_mentions", "quoted_spans", "proposed_step", "NEGATOR",
           "DROPPED_AFTER"]

#: Words before a mention that negate it (within their scope).
NEGATOR = re.compile(
    r"\b(?:not|no|no longer|never|none of|instead of|rather than|without|avoid(?:ing|ed|s)?|skip(?:ped|ping|s)?|"
    r"drop(?:ped|ping|s)?|remov(?:e|ed|es|ing)|delet(?:e|ed|es|ing)|abandon(?:ed|ing|s)?|supersed\w*|revert\w*|undo|"
    r"undid|stop(?:ped|ping|s)?|scrap(?:ped|ping|s)?|cancel(?:led|ed|ling|ing|s)?|replac(?:e|ed|es|ing)|forget|"
    r"forgot|discard(?:ed|ing|s)?|rip(?:ped)? out|back(?:ed)? out|out of scope|descop\w*|de-scop\w*|ditch(?:ed|ing)?|"
    r"reject(?:ed|ing|s)?|won't|will not|shouldn't|should not|mustn't|must not|cannot|can't|nor|"
    r"changed (?:their|his|her|the user's|our|my) mind|(?:switch|mov|pivot|turn)\w* (?:away )?from|away from|"
    r"in place of|"
    # a past plan told as history, not proposed: "originally the user wanted X"
    r"originally|initially|previously|at first|used to|was going to|were going to|had planned|had asked)\b|n't\b",
    re.IGNORECASE)
#: Double negatives and rhetorical forms that propose: neutralised before negators are looked for.
_STILL_PROPOSES = re.compile(
    r"\b(?:don't|do not|never|not)\s+(?:forget|skip|drop|omit|neglect|abandon|stop)\b|\bnot yet\b|\bwhy not\b|"
    r"\bno reason not to\b|\bno longer blocked\b|\bwithout (?:dropping|skipping|forgetting)\b|\bnothing stops\b",
    re.IGNORECASE)
#: Markers after a mention, in its clause, that record it as dropped or not wanted.
DROPPED_AFTER = re.compile(
    r"\b(?:no longer|not (?:needed|wanted|required|planned|happening|going ahead|to be (?:done|resumed)|in scope)|"
    r"dropped|superseded|cancel(?:l)?ed|abandoned|scrapped|rejected|replaced|removed|deleted|descoped|de-scoped|"
    r"out of scope|off the table|reverted|withdrawn|shelved|obsolete|changed (?:the|their|his|her) (?:plan|mind)|"
    r"being (?:removed|deleted|dropped|ripped out)|ripped out|backed out|do not resume|don't resume|not resume|"
    r"won't(?: do| be done)?|will not be|wontfix|closed as|not (?:be )?(?:done|doing|built|implemented|pursued)|"
    r"no more|is out|are out|(?:is|are) gone|went away|no longer exists?)\b",
    re.IGNORECASE)
_CLAUSE_END = re.compile(r"[.!?;](?:[\"”’')\]]*)(?=\s|$)|\n|(?:^|\s)[-*•](?=\s)|\s[–—]\s")
#: Where the words after a mention stop counting for it: a dash does not end them ("X — dropped").
_AFTER_END = re.compile(r"[.!?;](?:[\"”’')\]]*)(?=\s|$)|\n|\s[-*•]\s+(?=[A-Z])")
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”]*”")
_STRUCK = re.compile(r"~~[^~\n]+~~")
_NEW_PREDICATE = re.compile(r"[,:]|\b(?:and|then|but|so|or|yet|however|also|instead|still|once|after|before|until|"
                            r"when|because|while|though|although|afterwards|later|next)\b", re.IGNORECASE)
_SUFFIX = re.compile(r"(?:ing|ed|es|e|s)$")


@dataclass(frozen=True)
class Proposal:
    """A mention that proposes its subject: where it is and the clause around it."""

    start: int
    end: int
    clause: str


def _words_pattern(needle: str) -> str | None:
    parts = []
    for word in needle.split():
        if word.isalpha() and len(word) >= 4:
            stem = _SUFFIX.sub("", word.lower())
            parts.append(re.escape(stem) + r"[a-z]*")
        elif word.isalpha() and word.isupper() and len(word) >= 2:  # an acronym, in the plural too: JWTs
            parts.append(re.escape(word) + r"s?")
        else:
            parts.append(re.escape(word))
    if not parts:
        return None
    head = r"(?<![\w])" if needle[:1].isalnum() or needle[:1] == "_" else ""
    tail = r"(?![\w])" if (needle[-1:].isalnum() or needle[-1:] == "_") and not parts[-1].endswith("*") else ""
    # Words may be set apart by brackets as well as spaces: "JWTs (access tokens)".
    return head + r"(?:\s*[(\[]\s*|\s*[)\]]\s+|\s+)".join(parts) + tail


_NOT_A_VERB = {"the", "a", "an", "no", "not", "all", "any", "some", "this", "that", "these", "those", "our", "their"}


def mention_pattern(needle: str) -> re.Pattern[str]:
    """A pattern for ``needle``: any whitespace, any case, plain words in any inflection; an intent
    that starts with its verb ("issue JWT access tokens") also matches its object alone ("JWT access
    tokens"), whatever verb proposes it ("we could still add JWT access tokens")."""
    words = needle.split()
    forms = [_words_pattern(needle)]
    rest = " ".join(words[1:])
    if len(words) >= 3 and words[0].isalpha() and words[0].lower() not in _NOT_A_VERB and len(rest) >= 8:
        forms.append(_words_pattern(rest))
    if len(words) == 2 and all(w.isalnum() for w in words):
        # Two words the other way round, up to four plain words apart in one clause: "CSV export" is also
        # "export the report to CSV" (no comma or negation in between: "export the PDF, no CSV" is not).
        a, b = (_words_pattern(w) for w in words)
        if a and b:
            gap = r"[^\S\n]+(?:(?!(?:not|no|never|without|nor|instead|than)\b)[A-Za-z0-9_]+[^\S\n]+){0,4}"
            forms.append(b + gap + a)
    forms = [f for f in forms if f]
    return re.compile("|".join(f"(?:{f})" for f in forms), re.IGNORECASE) if forms else re.compile(r"(?!)")


def _boundaries(text: str) -> list[int]:
    """Offsets where a clause starts (after a clause end; at both edges of a quotation)."""
    marks = {0}
    for m in _CLAUSE_END.finditer(text):
        marks.add(m.end())
    for m in _QUOTED.finditer(text):
        marks.add(m.start() + 1)
        marks.add(m.end())
    return sorted(marks)


def _clause(text: str, start: int, end: int, bounds: list[int]) -> tuple[int, int]:
    """The clause of a mention: from the last clause start before it to the end of the words that
    comment on it (the sentence end or line break after it, or the edge of its quotation)."""
    a = max(b for b in bounds if b <= start)
    quotes = [q.end() - 1 for q in _QUOTED.finditer(text) if q.start() < start < q.end()]
    m = _AFTER_END.search(text, end)
    stop = m.start() + 1 if m is not None else len(text)
    if quotes:
        stop = min(stop, quotes[0])
    return a, max(stop, end)


def _negated_before(pre: str, extra: re.Pattern[str] | None) -> bool:
    pre = _STILL_PROPOSES.sub(lambda m: "x" * len(m.group(0)), pre)
    hits = [m for m in NEGATOR.finditer(pre)] + ([m for m in extra.finditer(pre)] if extra else [])
    if not hits:
        return False
    last = max(hits, key=lambda m: m.end())
    between = pre[last.end():]
    for m in _NEW_PREDICATE.finditer(between):
        if re.search(r"\w", between[m.end():]):
            return False  # a new predicate starts after the negator: it does not reach the mention
    return True


def proposals(text: str, needle: str, *, negators: re.Pattern[str] | None = None,
              dropped_after: re.Pattern[str] | None = None,
              exempt: Sequence[tuple[int, int]] = (), reworded: bool = False) -> list[Proposal]:
    """Every mention of ``needle`` in ``text`` that proposes it (see the module docstring).

    ``negators`` adds words that negate a mention before it (scoped like the built-in ones);
    ``dropped_after`` adds markers after a mention that record it as dropped; mentions inside an
    ``exempt`` span (a quotation of the user's own latest words) are not the summary's proposals;
    ``reworded`` also reads a mention in other words (:func:`reworded_mentions`: "a PDF version of
    the orders export" for "PDF export").

    >>> [p.clause for p in proposals("No CSV export. We could still add CSV export later.", "CSV export")]
    ['We could still add CSV export later.']
    >>> proposals("Skip the PDF and CSV export.", "CSV export")
    []
    """
    out = []
    bounds = _boundaries(text)
    struck = [m.span() for m in _STRUCK.finditer(text)]  # ~~struck through~~: crossed off the plan
    spans = [m.span() for m in mention_pattern(needle).finditer(text)]
    if reworded:
        spans += [s for s in reworded_mentions(text, needle) if not any(a < s[1] and s[0] < b for a, b in spans)]
    for start, end in sorted(spans):
        if any(a <= start < b for a, b in [*exempt, *struck]):
            continue
        a, b = _clause(text, start, end, bounds)
        pre, post = text[a:start], text[end:b]
        if _negated_before(pre, negators):
            continue
        if DROPPED_AFTER.search(post) or (dropped_after is not None and dropped_after.search(post)):
            continue
        out.append(Proposal(start, end, text[a:b].strip()))
    return out


# ---------------------------------------------------------------------------------------------
# A mention in other words

#: Words of an intent that carry no content of their own.
_FILLER = {"the", "a", "an", "of", "to", "in", "on", "at", "for", "with", "and", "or", "by", "from", "into", "as",
           "it", "its", "this", "that", "these", "those", "our", "their", "my", "your", "some", "any", "all", "new"}
#: What may stand between the words of a reworded mention: plain words (no clause mark, bracket or
#: quotation), none that negates, contrasts or joins another thing ("export the CSV, not the PDF",
#: "CSV instead of PDF", "a PDF button and the orders export").
_GAP = re.compile(r"[A-Za-z0-9_'’./#-]+(?:[^\S\n]+[A-Za-z0-9_'’./#-]+)*|")
_GAP_STOP = re.compile(r"\b(?:and|or|but|nor|then|instead|than|versus|vs|except|unlike|plus|also|while|whereas)\b|"
                       + NEGATOR.pattern, re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")
#: Plain words a reworded mention may hold besides the intent's own.
REWORD_GAP_WORDS = 6


def _content_words(needle: str) -> list[str]:
    words = re.findall(r"[A-Za-z0-9_][A-Za-z0-9_'-]*", needle)
    if len(words) >= 3 and words[0].isalpha() and words[0].lower() not in _NOT_A_VERB:
        words = words[1:]  # its leading verb: "issue JWT access tokens" is also "JWT access tokens for …"
    return list(dict.fromkeys(w for w in words if w.lower() not in _FILLER and (len(w) >= 3 or w.isdigit()
                                                                                 or (w.isupper() and len(w) >= 2))))


def _word_pattern(word: str) -> re.Pattern[str]:
    if word.isalpha() and len(word) >= 4 and not word.isupper():
        body = re.escape(_SUFFIX.sub("", word.lower())) + r"[a-z]*"
    elif word.isalpha() and word.isupper():
        body = re.escape(word) + r"s?"
    else:
        body = re.escape(word)
    return re.compile(rf"(?<![\w-]){body}(?![\w-])", re.IGNORECASE)


def reworded_mentions(text: str, needle: str) -> list[tuple[int, int]]:
    """Spans where every content word of ``needle`` (two or more, its leading verb aside) stands in
    one clause of ``text``, in any order and inflection, with at most :data:`REWORD_GAP_WORDS` other
    plain words between them and nothing that negates, contrasts or joins another thing.

    >>> text = "Then produce a PDF version of the orders export."
    >>> [text[a:b] for a, b in reworded_mentions(text, "PDF export")]
    ['PDF version of the orders export']
    >>> reworded_mentions("Export the CSV, not the PDF.", "PDF export")
    []
    """
    words = _content_words(needle)
    if len(words) < 2:
        return []
    hits = sorted((m.start(), m.end(), i) for i, w in enumerate(words) for m in _word_pattern(w).finditer(text))
    out: list[tuple[int, int]] = []
    for k, (start, _end, _i) in enumerate(hits):
        if out and start < out[-1][1]:
            continue
        seen: dict[int, int] = {}
        for _s, e, i in hits[k:]:
            if i not in seen:
                seen[i] = e
            if len(seen) == len(words):
                span = (start, max(seen.values()))
                inner = text[span[0]:span[1]]
                gaps = [inner[a:b] for a, b in _between(inner, [(h[0] - start, h[1] - start) for h in hits
                                                                if start <= h[0] and h[1] <= span[1]])]
                extra = sum(len(g.split()) for g in gaps)
                if all(_GAP.fullmatch(g.strip()) and not _GAP_STOP.search(g) and not _SENTENCE_END.search(g)
                       for g in gaps) \
                        and extra <= REWORD_GAP_WORDS:
                    out.append(span)
                break
    return out


def _between(inner: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The stretches of ``inner`` outside ``spans`` (the matched words)."""
    out, at = [], 0
    for a, b in sorted(spans):
        if a > at:
            out.append((at, a))
        at = max(at, b)
    if at < len(inner):
        out.append((at, len(inner)))
    return out


def quoted_spans(text: str, sources: list[str]) -> list[tuple[int, int]]:
    """Spans of the quotations in ``text`` whose content is verbatim (whitespace-normalised) in one
    of ``sources`` (e.g. the person's latest messages): to exempt from :func:`proposals`."""
    norm = [" ".join(s.split()) for s in sources]
    out = []
    for m in _QUOTED.finditer(text):
        inner = " ".join(m.group(0)[1:-1].split())
        if inner and any(inner in s for s in norm):
            out.append(m.span())
    return out


# ---------------------------------------------------------------------------------------------
# Does section 9 propose a step at all?

#: Claude Code's own lines after section 9 (the transcript pointer, the continuation instruction):
#: "Continue with the last task" there is the harness speaking, not the summary proposing a step.
_TRAILER = re.compile(r"If you need specific details from before compaction|(?:Please )?continue the conversation "
                      r"from where", re.IGNORECASE)
def without_trailer(text: str) -> str:
    """``text`` (a section 9 body) without Claude Code's lines after the summary: the transcript
    pointer ("If you need specific details from before compaction …") and the continuation
    instruction (seed 004: the summary message's tail), which the last section's body runs into."""
    m = _TRAILER.search(text)
    return text[:m.start()] if m else text


#: Where a step clause ends: a sentence end, a semicolon, a line break, a spaced dash.
_STEP_CLAUSE_END = re.compile(r"(?<=[.!?;])[\"”’')\]]*\s+|\n+|\s[–—]\s")
#: What may lead a clause before its verb: list markers, emphasis, "Next," "Then" "Now".
_STEP_LEAD = re.compile(r"^[\s>*_#`-]*(?:\d+[.)]\s*|\([a-z]\)\s*)?[*_]*\s*(?:(?:next|then|now|after that|afterwards|"
                        r"first|finally|immediately)\b\s*[,:]?\s*)*", re.IGNORECASE)
#: The summariser saying what it will do ("I will now delete", "Next, I'll", "The next step is to").
_WILL = re.compile(
    r"^(?:(?:i|we)\s+(?:will|shall|am going to|are going to|need to|plan to|intend to|should|must|can now)|"
    r"(?:i|we)['’](?:ll|m going to|re going to)|let me|let['’]s|"
    r"the (?:(?:suggested|natural|logical|recommended|obvious) )?(?:next|immediate|remaining) (?:steps?|actions?|tasks?) "
    r"(?:is|are|would be|will be)|next steps?\s*:)"
    r"\s+(?!not\b|wait\b|await\b|hold\b|pause\b|stop\b|nothing\b|do nothing\b)", re.IGNORECASE)
#: Verbs that, leading a clause, make it an instruction to act ("Fix the 3 clippy errors", "Reboot the
#: router"). Not "wait", "ask" or "confirm": waiting for the person is no step.
_ACTION_VERBS = (
    "add address apply backfill begin build bump call change check clean clear close commit compile complete "
    "configure connect continue convert copy create debug delete deploy design disable document download draft "
    "drop edit enable ensure examine execute explore export extract fetch finish fix format generate handle "
    "implement import inline inspect install integrate investigate kill launch lint load look make mark merge "
    "migrate modify move open patch port proceed publish pull push read rebase rebuild reboot refactor "
    "regenerate reinstall release remove rename replace reset resolve restart restore resume retry revert review "
    "rewrite rotate run rerun re-run scaffold seed set split start sync tag test trigger try uninstall update "
    "upgrade upload validate verify wire write").split()
_IMPERATIVE = re.compile(r"^(?:" + "|".join(re.escape(v) for v in _ACTION_VERBS) + r")\b(?![-'’])", re.IGNORECASE)
#: A clause that makes its action wait for the person ("If the user wants it, add X"; "I will add it
#: once the user confirms"): an offer, not a step.
_FOR_THE_PERSON = re.compile(
    r"^(?:if|unless|once|when|should|after|whether)\b[^,]*\b(?:user|you|they|he|she)\b|"
    r"\b(?:if|once|when|unless|after)\s+(?:the\s+)?(?:user|you|they|he|she)\s+(?:\w+\s+)?(?:asks?|wants?|"
    r"confirms?|approves?|agrees?|says?|requests?|decides?|chooses?|gives?|replies?|responds?)\b|"
    # asking the person is waiting for them: "Check with the user whether …", "Make sure to ask the user"
    r"\b(?:ask|asking|check with|confirm with|consult|clarify with)\s+(?:the\s+)?(?:user|you|them)\b", re.IGNORECASE)
#: A clause whose leading "verb" is a noun: "Build and tests are green", "Merge is pending review",
#: "Test results: 12 passed", "**Start time**: 10:02".
_NOUN_USE = re.compile(r"^\w+(?:\s+(?:and|&|or)\s+\w+)?\s+(?:is|are|was|were|has|have|remains?|stays?|looks?)\b|"
                       r"^\w+\s+(?:results?|status|time|output|logs?|summary|coverage|state|runs?)\s*[:(=-]|"
                       r"^\w+(?:\s+\w+){0,3}[*_]+\s*:", re.IGNORECASE)
#: Abbreviations whose full stop does not end a clause.
_ABBREVIATION = re.compile(r"\b(e\.g|i\.e|etc|vs|cf)\.", re.IGNORECASE)


def proposed_step(text: str, *, no_step: re.Pattern[str] | None = None) -> str | None:
    """The first clause of section 9 (``text``) that proposes a step, or ``None``: an instruction
    to act ("Fix the 3 clippy errors", "Next, reboot the router") or the summariser saying what it
    will do ("I will now delete ...", "The next step is to ..."). Quotations are what someone said,
    not the proposal; a clause that says there is nothing to do (``no_step``) or that waits for the
    person ("I should wait for the user to respond before ...", "if the user wants it") proposes
    nothing; Claude Code's own trailer after the section does not count.

    >>> proposed_step("No explicit next step requested. Next, I will reboot the router.")
    'Next, I will reboot the router.'
    >>> proposed_step('No next step. From my last message: "Say the word and I will add it." I should wait for the user.')
    """
    trailer = _TRAILER.search(text)
    body = _QUOTED.sub('""', text[: trailer.start()] if trailer else text)
    body = _ABBREVIATION.sub(lambda m: m.group(1).replace(".", "") + " ", body)
    for clause in _STEP_CLAUSE_END.split(body):
        clause = clause.strip()
        if not clause or (no_step is not None and no_step.search(clause)) or _FOR_THE_PERSON.search(clause):
            continue
        rest = clause[_STEP_LEAD.match(clause).end():]  # type: ignore[union-attr]  # the pattern matches ""
        if _WILL.match(rest) or (_IMPERATIVE.match(rest) and not _NOUN_USE.match(rest)):
            return clause
    return None
