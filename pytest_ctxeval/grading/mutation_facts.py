"""Built-in mutation operators over what a summary must carry: person-typed messages, the next-step
quote, files, errors, todos, constraints, failed approaches and superseded intents.

See :mod:`pytest_ctxeval.grading.mutants` for the operator protocol and :mod:`pytest_ctxeval.grading.mutation_ops`
for the structural operators.
"""

from __future__ import annotations

import random
import re
from typing import Any
from collections.abc import Callable

from ..reading.extract import (
    LONG_MESSAGE_CHARS, edited_files, failing_results, file_mentioned, message_fragments, open_todos,
    significant_tokens,
)
from .mutants import (
    CUT_OVERLAP, Mutant, drop_lines, find_spans, flexible, holds as _holds, kept_verbatim, loose, mutation, section_span, still_there as _still_there,
)
from .mutation_ops import context_text, lost_people_targets
from ..reading.quoting import flat_lines, quote_in, quotes, said_after
from ..reading.session_facts import error_kept, failing_test_told
from ..reading.summary import normalize_ws
from ..reading.verbatim import normalize

__all__ = ["drop_user_message", "paraphrase_user_message", "translate_user_message", "truncate_user_message",
           "drop_latest_request", "quote_old_message", "quote_nothing", "drop_edited_file", "drop_error_line",
           "drop_open_todo",
           "truncate_latest_request", "paraphrase_text", "translate_text", "drop_matching_lines"]


# ---------------------------------------------------------------------------------------------
# Helpers


def _edit_section(case: Any, kind: str, edit: Callable[[str], str]) -> str | None:
    """The summary with ``edit`` applied to the text of section ``kind`` (header line included)."""
    section = case.sections.get(kind)
    span = section_span(case.summary, section) if section is not None else None
    if span is None:
        return None
    a, b = span
    new = edit(case.summary[a:b])
    return None if new == case.summary[a:b] else case.summary[:a] + new + case.summary[b:]


def _kind_region(case: Any, kind: str) -> str:
    section = case.sections.get(kind)
    return normalize_ws((section.body if section else "") + "\n" + case.kept_text)


def _in(fragments: list[str], region: str) -> bool:
    return all(f in region for f in fragments)


def _s6_messages(case: Any, *, latest: bool = False, short_only: bool = False) -> list[Any]:
    """Person-typed messages verbatim in section 6 and not kept verbatim as messages (the earlier
    ones, or only the latest)."""
    people = case.person_messages()
    pool = people[-1:] if latest else people[:-1]
    body = _kind_region(case, "user_messages") if case.sections.get("user_messages") else ""
    kept = normalize_ws(case.kept_text)
    return [p for p in pool if body and _in(message_fragments(p.text), body)
            and not _in(message_fragments(p.text), kept) and (not short_only or len(p.text) <= LONG_MESSAGE_CHARS)]


def _rewrite_message(case: Any, rng: random.Random, change: Callable[[str, random.Random], str | None],
                     what: str, min_words: int = 3) -> list[Mutant]:
    """Replace one earlier person-typed message in section 6 by ``change(text)``."""
    pool = [p for p in _s6_messages(case, short_only=True) if len(p.text.split()) >= min_words]
    rng.shuffle(pool)
    for p in pool:
        new = change(p.text, rng)
        if not new or normalize_ws(new) == normalize_ws(p.text):
            continue
        summary = _edit_section(case, "user_messages", lambda seg: flexible(p.text).sub(lambda _m: new, seg))  # noqa: B023 - called at once
        if summary is None:
            continue
        mutant = Mutant.of(case, summary=summary, what=f"{what} a user message", text=new)
        if not _in(message_fragments(p.text), _kind_region(mutant.case, "user_messages")) and \
                not kept_verbatim(p.text, mutant.case.region("user_messages") or ""):
            mutant.what += f": \"{normalize_ws(p.text)[:80]}\""
            return [mutant]
    return []


_SYNONYMS = {
    "fix": "repair", "add": "introduce", "use": "apply", "remove": "delete", "make": "create", "change": "modify",
    "update": "refresh", "please": "kindly", "test": "check", "tests": "checks", "file": "document",
    "bug": "defect", "error": "failure", "build": "construct", "run": "execute", "show": "display", "find": "locate",
    "keep": "retain", "write": "author", "check": "verify", "move": "relocate", "also": "additionally",
    "then": "afterwards", "need": "require", "want": "would like", "look": "glance", "all": "every", "each": "every",
    "should": "ought to", "don't": "do not", "can": "could", "first": "initially", "new": "fresh", "old": "previous",
}
_FRENCH = {
    "the": "le", "a": "un", "and": "et", "to": "à", "in": "dans", "of": "de", "is": "est", "please": "s'il te plaît",
    "fix": "corrige", "add": "ajoute", "with": "avec", "for": "pour", "not": "pas", "it": "le", "this": "ce",
    "that": "que", "we": "nous", "use": "utilise", "file": "fichier", "all": "tous", "then": "puis", "on": "sur",
    "but": "mais", "no": "non", "do": "fais", "make": "fais", "run": "lance", "check": "vérifie", "remove": "supprime",
    "keep": "garde", "new": "nouveau", "old": "ancien", "first": "d'abord", "now": "maintenant", "also": "aussi",
    "only": "seulement", "every": "chaque", "you": "tu", "i": "je", "my": "mon", "our": "notre", "from": "depuis",
    "why": "pourquoi", "what": "quoi", "where": "où", "when": "quand", "test": "teste", "tests": "tests",
}


def _swap_words(text: str, table: dict[str, str], rng: random.Random, limit: int) -> tuple[str, int]:
    words = text.split(" ")
    spots = [i for i, w in enumerate(words) if w.strip(".,;:!?\"'()").lower() in table]
    rng.shuffle(spots)
    for i in spots[:limit]:
        core = words[i].strip(".,;:!?\"'()")
        repl = table[core.lower()]
        repl = repl[:1].upper() + repl[1:] if core[:1].isupper() else repl
        words[i] = words[i].replace(core, repl, 1)
    return " ".join(words), min(len(spots), limit)


def paraphrase_text(text: str, rng: random.Random) -> str | None:
    """Say ``text`` in other words: near-synonyms for two words, or one word left out."""
    new, swapped = _swap_words(text, _SYNONYMS, rng, 2)
    if swapped:
        return new
    words = text.split(" ")
    middle = [i for i, w in enumerate(words[1:-1], start=1) if len(w) >= 4]
    if not middle:
        return None
    del words[rng.choice(middle)]
    return " ".join(words)


def translate_text(text: str, rng: random.Random) -> str | None:
    """``text`` as a summariser that translates would render it: English words in French, or a
    message in another script rendered by its Latin words only."""
    if re.search(r"[\u0370-\u03ff\u0400-\u04ff\u0590-\u06ff\u0900-\u0dff\u2e80-\ua4cf\uac00-\ud7af\uff00-\uffef]", text):
        latin = normalize_ws(re.sub(r"[^\x00-\x7f]+", " ", text))
        return f"(translated) {latin or 'the request'}"
    new, swapped = _swap_words(text, _FRENCH, rng, 99)
    return new if swapped >= 2 else None


def _truncate(text: str, rng: random.Random) -> str | None:
    words = text.split()
    if len(words) < 8:
        return None
    return " ".join(words[: max(3, len(words) // 2)]) + " …"


# ---------------------------------------------------------------------------------------------
# Person-typed messages


@mutation("drop_user_message", targets=("verbatim_user_messages",))
def drop_user_message(case: Any, rng: random.Random) -> list[Mutant]:
    """Remove an earlier person-typed message from section 6."""
    pool = _s6_messages(case)
    rng.shuffle(pool)
    section = case.sections.get("user_messages")
    for p in pool:
        def cut(seg: str, p: Any = p) -> str:
            header_end = seg.find("\n") + 1
            spans = [s for f in message_fragments(p.text) for s in find_spans(seg, f) if s[0] >= header_end]
            return drop_lines(seg, spans)
        summary = _edit_section(case, "user_messages", cut)
        if summary is None:
            continue
        mutant = Mutant.of(case, summary=summary, what=f"dropped a user message from section 6 (line {section.line})",
                           text=normalize_ws(p.text)[:300])
        if not _in(message_fragments(p.text), _kind_region(mutant.case, "user_messages")) and \
                not kept_verbatim(p.text, mutant.case.region("user_messages") or ""):
            return [mutant]
    return []


@mutation("paraphrase_user_message", targets=("verbatim_user_messages",))
def paraphrase_user_message(case: Any, rng: random.Random) -> list[Mutant]:
    """Paraphrase an earlier person-typed message in section 6."""
    return _rewrite_message(case, rng, paraphrase_text, "paraphrased")


@mutation("translate_user_message", targets=("verbatim_user_messages",))
def translate_user_message(case: Any, rng: random.Random) -> list[Mutant]:
    """Translate an earlier person-typed message in section 6."""
    return _rewrite_message(case, rng, translate_text, "translated", min_words=1)


@mutation("truncate_user_message", targets=("verbatim_user_messages",))
def truncate_user_message(case: Any, rng: random.Random) -> list[Mutant]:
    """Cut an earlier person-typed message in section 6 to its first half."""
    return _rewrite_message(case, rng, _truncate, "truncated")


def _latest_change(case: Any, change: Callable[[str], str], what: str) -> list[Mutant]:
    """Apply ``change`` to every occurrence of the latest request in the summary."""
    pool = _s6_messages(case, latest=True)
    if not pool:
        return []
    last = pool[0]
    fragments = message_fragments(last.text)
    if _in(fragments, normalize_ws(case.kept_text)):
        return []
    summary, message = case.summary, case.summary_message
    for f in fragments:
        summary = loose(f).sub(lambda _m: change(f), summary)  # noqa: B023 - called at once
        # and every copy in the rest of the summary message (an Analysis part kept before the summary)
        message = loose(f).sub(lambda _m: change(f), message) if message else message  # noqa: B023
    mutant = Mutant.of(case, summary=summary, what=what, text=normalize_ws(last.text)[:300],
                       summary_message=message if message and message != case.summary_message else None)
    # Gone by the graders' own reading (a copy in the Analysis part, quotes dropped, a trailing comma
    # fixed still counts), or no mutant: a copy left would make a false "survived".
    if _in(fragments, context_text(mutant.case)) or kept_verbatim(last.text, _context(mutant.case)):
        return []
    return [mutant]


def _context(case: Any) -> str:
    """The post-compact context as the graders read it (line breaks kept)."""
    return (case.summary_message or case.summary) + ("\n" + case.kept_text if case.kept_text else "")


@mutation("drop_latest_request", targets=("last_request_intact", "verbatim_user_messages", "intent_preservation"))
def drop_latest_request(case: Any, rng: random.Random) -> list[Mutant]:
    """Remove the most recent request wherever the summary has it (section 6, the quote)."""
    out = _latest_change(case, lambda f: "(the latest request)", "dropped the most recent request everywhere")
    for m in out:
        old, new = case.sections.get("next"), m.case.sections.get("next")
        quoted = old is not None and new is not None and old.body != new.body and not _still_quotes_reply(case, new.body)
        m.targets = tuple(dict.fromkeys(("last_request_intact", "verbatim_user_messages", "intent_preservation",
                                         *(("next_step_quote",) if quoted else ()), *lost_people_targets(case, m.case))))
    return out


def _still_quotes_reply(case: Any, body: str) -> bool:
    """Section 9 still quotes, verbatim, what the assistant said or did after the latest request
    (next_step_quote accepts that as the most recent conversation): dropping the request broke no
    quote of it."""
    people = case.person_messages()
    if not people:
        return False
    after = [normalize(flat_lines(t)) for t in said_after(case.history[people[-1].index + 1:])]
    return any(quote_in(q, after, 20, whole=[]) for q in quotes(body))


@mutation("truncate_latest_request", targets=("last_request_intact", "verbatim_user_messages"))
def truncate_latest_request(case: Any, rng: random.Random) -> list[Mutant]:
    """Keep only the first part of the most recent request wherever the summary has it."""
    text = _s6_messages(case, latest=True)
    if not text or len(text[0].text.split()) < 8:
        return []
    out = _latest_change(case, lambda f: _truncate(f, rng) or f, "truncated the most recent request")
    for m in out:
        m.targets = tuple(dict.fromkeys(("last_request_intact", "verbatim_user_messages",
                                         *lost_people_targets(case, m.case))))
    return out


# ---------------------------------------------------------------------------------------------
# Section 9: the next step and its quote

_QUOTE = re.compile(r"\"([^\"\n]{2,})\"|“([^”]{2,})”|^(\s*>\s?)(.{2,})$", re.MULTILINE)


def _recent_and_older(case: Any) -> tuple[list[str], list[Any]]:
    """What next_step_quote takes for the most recent conversation (normalised texts), and the
    person's older messages: the same reading (:func:`pytest_ctxeval.reading.quoting.recent_conversation`),
    so a quote the operator calls old is one the grader calls old too (a request the latest message
    refines is the task in progress: pytest_ctxeval.reading.refinement)."""
    people = case.span_people()
    if not people:
        return [], []
    convo = case.conversation()
    assert convo is not None
    # the requests the latest one only refines are the task in progress, not old ones
    running = {p.index for p in convo.running}
    return convo.recent, [p for p in people[:-len(convo.run)] if p.index not in running]


def _next_step_quotes(case: Any) -> Any:
    section = case.sections.get("next")
    if section is None or not _QUOTE.search(section.body):
        return None
    return section


@mutation("quote_old_message", targets=("next_step_quote", "no_superseded_work"))
def quote_old_message(case: Any, rng: random.Random) -> list[Mutant]:
    """Make section 9 quote an older request instead of the most recent one (drift)."""
    if _next_step_quotes(case) is None:
        return []
    recent, older = _recent_and_older(case)
    # an older message the grader would take for the recent conversation (quoted after it by the
    # assistant, or the request a go-ahead started) does not make the quote drift
    pool = [p for p in older if len(normalize_ws(p.text)) >= 20 and "\"" not in p.text
            and not quote_in(normalize_ws(p.text), recent, 20)
            and not any(r and r in normalize(flat_lines(p.text)) for r in recent)]
    if not pool:
        return []
    old = normalize_ws(rng.choice(pool).text)
    # Quoting an old request for a dropped intent proposes that intent again.
    revived = any(normalize_ws(i).lower() in old.lower() for i in case.expect.superseded)

    def swap(m: re.Match[str]) -> str:
        return f"{m.group(3)}{old}" if m.group(3) is not None else f"\"{old}\""
    summary = _edit_section(case, "next", lambda seg: _QUOTE.sub(swap, seg))
    return [Mutant.of(case, summary=summary, what="section 9 quotes an older message", text=old,
                      targets=("next_step_quote", *(("no_superseded_work",) if revived else ())))] if summary else []


@mutation("quote_nothing", targets=("next_step_quote",))
def quote_nothing(case: Any, rng: random.Random) -> list[Mutant]:
    """Remove the quote from section 9, leaving a step that quotes nothing."""
    section = _next_step_quotes(case)
    if section is None:
        return []

    def strip(seg: str) -> str:
        new = _QUOTE.sub(lambda m: "" if m.group(3) is not None else "the latest request", seg)
        return new if new[new.find("\n") + 1:].strip() or ":" in new.split("\n")[0] else \
            new.rstrip("\n") + "\n   Continue with the most recent request.\n"
    summary = _edit_section(case, "next", strip)
    return [Mutant.of(case, summary=summary, what="section 9 proposes a step without a quote",
                      text=normalize_ws(section.body)[:200])] if summary else []


# ---------------------------------------------------------------------------------------------
# Files, errors, open todos

def drop_matching_lines(text: str, hit: Callable[[str], bool], keep_first: bool = True) -> str:
    """``text`` without the lines ``hit`` accepts (the first line, a section header, is kept)."""
    lines = text.split("\n")
    head = lines[:1] if keep_first else []
    rest = [l for l in lines[len(head):] if not hit(l)]
    if keep_first and not any(l.strip() for l in rest):
        rest = ["   - (nothing further)", ""]
    return "\n".join(head + rest)


def _drop_fact(case: Any, rng: random.Random, kind: str, facts: list[str], hit: Callable[[str, str], bool],
               gone: Callable[[str, str], bool], what: str) -> list[Mutant]:
    section = case.sections.get(kind)
    if section is None:
        return []
    kept = case.kept_text
    pool = [f for f in facts if hit(f, section.body) and gone(f, kept)]
    rng.shuffle(pool)
    for fact in pool:
        summary = _edit_section(case, kind, lambda seg: drop_matching_lines(seg, lambda l: hit(fact, l)))  # noqa: B023 - called at once
        if summary is None:
            continue
        mutant = Mutant.of(case, summary=summary, what=f"{what} from section '{section.title}'", text=fact)
        new = mutant.case.sections.get(kind)
        if new is not None and gone(fact, new.body + "\n" + kept):
            mutant.targets = tuple(dict.fromkeys((*_OWN[kind], *lost_people_targets(case, mutant.case))))
            return [mutant]
    return []


_OWN = {"files": ("files_preserved",), "errors": ("errors_preserved",), "pending": ("pending_tasks",)}


def _drop_everywhere(case: Any, own: str, kinds: list[str], pool: list[Any], hit: Callable[[Any, str], bool],
                     gone: Callable[[Any, Any], bool], what: str, text: Callable[[Any], str]) -> list[Mutant]:
    """The first fact of ``pool`` whose lines (``hit``) can be dropped from every section of ``kinds``
    (where its grader accepts it) so that it is ``gone`` from the mutant: one mutant, or none."""
    for fact in pool:
        current, summary = case, case.summary
        for kind in kinds:
            edited = _edit_section(current, kind, lambda seg: drop_matching_lines(seg, lambda l: hit(fact, l)))  # noqa: B023 - called at once
            if edited is not None:
                summary = edited
                current = Mutant.of(case, summary=summary, what="", text="").case
        if summary == case.summary:
            continue
        mutant = Mutant.of(case, summary=summary, what=what, text=text(fact))
        if gone(fact, mutant.case):
            mutant.targets = tuple(dict.fromkeys((*_OWN[own], *lost_people_targets(case, mutant.case))))
            return [mutant]
    return []


@mutation("drop_edited_file", targets=("files_preserved",))
def drop_edited_file(case: Any, rng: random.Random) -> list[Mutant]:
    """Remove every line of the summary that names one edited file (section 3, and wherever else the
    summary names it: files_preserved counts a file named in any section as kept). A file that a
    quoted user message or a kept message names cannot be dropped: it makes no mutant."""
    files = list(dict.fromkeys(edited_files(case.history) + case.reached(case.expect.files)))
    section = case.sections.get("files")
    if section is None:
        return []
    pool = [f for f in files if file_mentioned(f, section.body, files)]
    rng.shuffle(pool)
    kinds = [s.kind for s in case.sections.sections if s.kind and s.kind != "user_messages"]
    return _drop_everywhere(
        case, "files", kinds, pool, lambda f, line: file_mentioned(f, line, files),
        lambda f, c: not file_mentioned(f, (c.summary_message or c.summary) + "\n" + c.kept_text, files),
        f"dropped an edited file from section '{section.title}'", str)


@mutation("drop_error_line", targets=("errors_preserved",))
def drop_error_line(case: Any, rng: random.Random) -> list[Mutant]:
    """Remove every line that tells one failing tool result: its key line, or (as errors_preserved
    reads an error in its own words) its identifying tokens, failing command or failing test, in section 4 and in
    the sections where an error is also told (5, problem solving; 8, current work)."""
    errors: dict[str, Any] = {f.key_line: f for f in failing_results(case.summarized)
                              if f.key_line and f.kind == "error"}
    for line in case.reached(case.expect.errors):
        errors.setdefault(line, None)
    section = case.sections.get("errors")
    if section is None:
        return []
    kinds = [k for k in ("errors", "problem", "current") if case.sections.get(k) is not None]

    def tells(key: str, f: Any, text: str) -> bool:
        if _holds(key, text, CUT_OVERLAP):
            return True
        return f is not None and (error_kept(key, f.text, str(f.input.get("command", "")), text)[0]
                                  or bool(f.tests and failing_test_told(f.tests, text, errors_section=True)))

    def told(key: str, f: Any, c: Any) -> bool:
        wider = "\n".join(c.sections.body(k) for k in kinds) + "\n" + c.kept_text
        return _still_there(key, wider) or tells(key, f, wider)

    pool = [k for k in errors if tells(k, errors[k], section.body) and not _still_there(k, case.kept_text)]
    rng.shuffle(pool)
    return _drop_everywhere(
        case, "errors", kinds, pool, lambda key, line: tells(key, errors[key], line),
        lambda key, c: not told(key, errors[key], c),
        f"dropped an error line from section '{section.title}'", str)


@mutation("drop_open_todo", targets=("pending_tasks",))
def drop_open_todo(case: Any, rng: random.Random) -> list[Mutant]:
    """Remove the lines that carry one open todo from section 7 and from sections 8-9, where
    pending_tasks also accepts a task in progress."""
    todos = list(dict.fromkeys(open_todos(case.history) + case.reached(case.expect.pending)))
    section = case.sections.get("pending")
    if section is None:
        return []
    kinds = [k for k in ("pending", "current", "next") if case.sections.get(k) is not None]
    hit = lambda e, t: _holds(e, t, CUT_OVERLAP)  # noqa: E731 - the line test, as _drop_fact takes it
    pool = [t for t in todos if hit(t, section.body) and not _still_there(t, case.kept_text)]
    rng.shuffle(pool)
    return _drop_everywhere(
        case, "pending", kinds, pool, hit,
        lambda todo, c: not _still_there(todo, w := c.sections.body(*kinds) + "\n" + c.kept_text)
        and not _task_overlap(todo, w),
        f"dropped an open todo from section '{section.title}'", str)


def _task_overlap(task: str, region: str, share: float = 0.6) -> bool:
    """Most of the task's significant words in one item of ``region`` (how pending_tasks reads a task
    told in other words)."""
    tokens = significant_tokens(task)
    if not tokens:
        return False
    for item in re.split(r"\n(?=\s{0,6}(?:[-*\u2022]|\d+[.)])\s)", region):
        low = item.lower()
        if sum(t in low for t in tokens) / len(tokens) >= share:
            return True
    return False


