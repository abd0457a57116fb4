"""A second, independent set of defective summaries, written by hand in other phrasings than the
mutation operators use, over the built-in library's good summaries.

Each mutant names the grader it targets; it counts where that grader passed the original (so a
false alarm cannot pass for a kill). The graders must catch at least 95 % of them overall and of
every grader's own, and no mutant may be missed silently: a miss is printed with its text.
"""

from __future__ import annotations

import re
from typing import Any
from collections.abc import Callable

import pytest

from pytest_ctxeval.reading.extract import (
    edited_files, failing_results, file_mentioned, open_todos, person_messages, significant_tokens,
)
from pytest_ctxeval.core.messages import AssistantMessage, CompactBoundary, UserMessage, tool_results, tool_uses
from pytest_ctxeval.grading.mutants import Mutant
from pytest_ctxeval.reading.session_facts import error_kept, failing_test_told
from pytest_ctxeval.reading.summary import normalize_ws
from pytest_ctxeval.grading.versions import CONTINUATION_WORDINGS
from library_wide import LIBRARY_TESTS
from validation_kit import library_cases, library_sample, registry

# pytest-xdist (``--dist loadgroup``, conftest.py): the tests that use the library's compaction cases
# run on one worker, which replays the library (and validates it) once.
pytestmark = pytest.mark.xdist_group("library_cases")

Hand = Callable[[Any], "Mutant | None"]
HANDS: list[tuple[str, str, Hand]] = []


def hand(name: str, target: str) -> Callable[[Hand], Hand]:
    def add(func: Hand) -> Hand:
        HANDS.append((name, target, func))
        return func
    return add


def _summary(case: Any, text: str | None, what: str) -> Mutant | None:
    if text is None or text == case.summary:
        return None
    return Mutant.of(case, summary=text, what=what)


def _section_text(case: Any, kind: str) -> tuple[int, int] | None:
    """Start and end offsets of a section's body in the summary (by its header line)."""
    sec = case.sections.get(kind)
    if sec is None:
        return None
    lines = case.summary.split("\n")
    start = sum(len(l) + 1 for l in lines[: sec.line])
    later = [s.line for s in case.sections.sections if s.line > sec.line]
    end = sum(len(l) + 1 for l in lines[: min(later) - 1]) if later else len(case.summary)
    return start, end


def _replace_in(case: Any, kind: str, old: str, new: str) -> str | None:
    span = _section_text(case, kind)
    if span is None:
        return None
    a, b = span
    body = case.summary[a:b]
    pattern = re.compile(r"\s+".join(re.escape(w) for w in old.split()))
    if not pattern.search(body):
        return None
    return case.summary[:a] + pattern.sub(lambda _m: new, body) + case.summary[b:]


def _drop_lines(case: Any, summary: str, kinds: tuple[str, ...], hit: Callable[[str], bool]) -> str:
    """``summary`` without the body lines of sections ``kinds`` that ``hit`` accepts (headers stay)."""
    probe = Mutant.of(case, summary=summary, what="").case
    spans = sorted((sp for k in kinds if (sp := _section_text(probe, k)) is not None), reverse=True)
    for a, b in spans:
        body = summary[a:b]
        summary = summary[:a] + "\n".join(l for l in body.split("\n") if not hit(l)) + summary[b:]
    return summary


def _share(needle: str, text: str) -> float:
    tokens = significant_tokens(needle)
    have = set(significant_tokens(text))
    return sum(t in have for t in tokens) / len(tokens) if tokens else 0.0


def _earlier(case: Any) -> list[str]:
    people = [p.text for p in person_messages(case.history)[:-1]]
    return [t for t in people if len(t) >= 25 and people.count(t) == 1 and len(t) < 2000]


def _latest(case: Any) -> str | None:
    people = person_messages(case.history)
    return people[-1].text if people else None


# --- verbatim_user_messages ------------------------------------------------------------------

# Case alone is no defect (real summaries re-capitalise a quoted message: pytest_ctxeval.reading.verbatim), so
# the subtle defect here is one content word of the message changed ("the cache" -> "the queue").
@hand("one word of a message changed", "verbatim_user_messages")
def _one_word(case: Any) -> Mutant | None:
    for t in _earlier(case):
        words = re.findall(r"(?<![\w/.-])[A-Za-z]{5,}(?![\w/.-])", t[:200])[1:]
        if words:
            w = words[0]
            other = "queue" if w.lower() != "queue" else "table"
            changed = re.sub(rf"\b{w}\b", other, t, count=1)
            return _summary(case, _replace_in(case, "user_messages", t, changed), f"one word changed: {t}")
    return None


@hand("punctuation stripped", "verbatim_user_messages")
def _unpunct(case: Any) -> Mutant | None:
    for t in _earlier(case):
        bare = re.sub(r"[.,;:!?]", "", t)
        if bare != t:
            return _summary(case, _replace_in(case, "user_messages", t, bare), f"unpunctuated: {t}")
    return None


@hand("message summarised", "verbatim_user_messages")
def _gist(case: Any) -> Mutant | None:
    for t in _earlier(case):
        gist = "User asked about " + " ".join(t.split()[:3]) + " and related points"
        return _summary(case, _replace_in(case, "user_messages", t, gist), f"summarised: {t}")
    return None


@hand("middle elided", "verbatim_user_messages")
def _elide(case: Any) -> Mutant | None:
    for t in _earlier(case):
        w = t.split()
        if len(w) >= 12:
            short = " ".join(w[:4]) + " [...] " + " ".join(w[-4:])
            return _summary(case, _replace_in(case, "user_messages", t, short), f"elided: {t}")
    return None


# --- last_request_intact -------------------------------------------------------------------------

@hand("latest request cut to its first sentence", "last_request_intact")
def _first_sentence(case: Any) -> Mutant | None:
    last = _latest(case)
    if not last or (case.kept_text and normalize_ws(last) in normalize_ws(case.kept_text)):
        return None
    parts = re.split(r"(?<=[.!?])\s+", last.strip())
    if len(parts) < 2:
        return None
    pattern = re.compile(r"\s+".join(re.escape(w) for w in last.split()))
    return _summary(case, pattern.sub(lambda _m: parts[0], case.summary), f"first sentence only: {last}")


@hand("latest request reworded", "last_request_intact")
def _reword_latest(case: Any) -> Mutant | None:
    # Two words swapped in the middle of the request, not at its start: the start is often an
    # acknowledgement ("Makes sense.") that last_request_intact documents a summary may leave out.
    last = _latest(case)
    if not last or len(last.split()) < 6 or (case.kept_text and normalize_ws(last) in normalize_ws(case.kept_text)):
        return None
    w = last.split()
    i = len(w) // 2
    if w[i] == w[i + 1]:
        return None
    new = " ".join([*w[:i], w[i + 1], w[i], *w[i + 2:]])
    pattern = re.compile(r"\s+".join(re.escape(x) for x in w))
    return _summary(case, pattern.sub(lambda _m: new, case.summary), f"reworded: {last}")


# --- next_step_quote -------------------------------------------------------------------------------

def _next_body(case: Any) -> tuple[int, int] | None:
    sec = case.sections.get("next")
    if sec is None or ('"' not in sec.body and "“" not in sec.body):
        return None
    return _section_text(case, "next")


def _set_next(case: Any, body: str, what: str) -> Mutant | None:
    span = _next_body(case)
    if span is None:
        return None
    a, b = span
    return _summary(case, case.summary[:a] + body + "\n" + case.summary[b:], what)


@hand("first request quoted in curly quotes", "next_step_quote")
def _curly_first(case: Any) -> Mutant | None:
    people = person_messages(case.history)
    if len(people) < 3 or len(people[0].text) < 25 or people[0].text == people[-1].text:
        return None
    return _set_next(case, f"   Pick up where the session started: “{normalize_ws(people[0].text)}”", "curly old quote")


@hand("older message as a block quote", "next_step_quote")
def _blockquote_old(case: Any) -> Mutant | None:
    older = _earlier(case)[:-1]
    if not older:
        return None
    return _set_next(case, f"   Resume this:\n   > {normalize_ws(older[0])}", "blockquote old")


@hand("latest request quoted in other words", "next_step_quote")
def _quote_reworded(case: Any) -> Mutant | None:
    last = _latest(case)
    if not last or len(last.split()) < 4:
        return None
    w = last.split()
    return _set_next(case, f"   Next, as requested: \"{' '.join(reversed(w[:3]))} {' '.join(w[3:])}\"", "reworded quote")


@hand("step without a quote", "next_step_quote")
def _no_quote(case: Any) -> Mutant | None:
    return _set_next(case, "   Carry on with what the user asked for last, then report back.", "no quote")


# --- files, errors, todos ---------------------------------------------------------------------------

@hand("edited file renamed to a description", "files_preserved")
def _file_vague(case: Any) -> Mutant | None:
    # files_preserved counts a file named in any section as kept, so the file is described wherever
    # the summary names it (section 6 aside: a user's words are quoted as typed; a file a quoted
    # message names is still named, so that file makes no mutant).
    files = list(dict.fromkeys(edited_files(case.history) + list(case.expect.files)))
    span = _section_text(case, "files")
    if span is None:
        return None
    a, b = span
    body = case.summary[a:b]
    for f in files:
        base = f.rsplit("/", 1)[-1]
        if f in body and sum(1 for g in files if g.rsplit("/", 1)[-1] == base) == 1 and \
                (not case.kept_text or base not in case.kept_text):
            summary = case.summary
            spans = sorted((sp for s in case.sections.sections if s.kind and s.kind != "user_messages"
                            and (sp := _section_text(case, s.kind)) is not None), reverse=True)
            for x, y in spans:
                new = summary[x:y].replace(f, "the module in question").replace(base, "that file")
                summary = summary[:x] + new + summary[y:]
            mutant = _summary(case, summary, f"file described: {f}")
            if mutant is not None and not file_mentioned(f, (mutant.case.summary_message or summary) + "\n"
                                                         + mutant.case.kept_text, files):
                return mutant
    return None


@hand("error lines replaced by a gloss", "errors_preserved")
def _error_gloss(case: Any) -> Mutant | None:
    # errors_preserved also reads an error told in sections 5 and 8, by its key line or its identifying
    # tokens: those lines go too, so the error is glossed everywhere the grader looks.
    errors = [(f.key_line, f) for f in failing_results(case.summarized) if f.key_line]
    errors += [(e, None) for e in case.expect.errors]
    if not errors:
        return None
    span = _section_text(case, "errors")
    if span is None:
        return None
    a, b = span

    def tells(line: str) -> bool:
        return any(normalize_ws(k).lower() in normalize_ws(line).lower() or _share(k, line) >= 0.5 or
                   (f is not None and error_kept(k, f.text, str(f.input.get("command", "")), line)[0])
                   or (f is not None and bool(failing_test_told(f.tests, line, errors_section=True)))
                   for k, f in errors)

    summary = case.summary[:a] + "   - A problem came up along the way and was handled.\n\n" + case.summary[b:]
    return _summary(case, _drop_lines(case, summary, ("problem", "current"), tells), "errors glossed")


@hand("todo list replaced by a gloss", "pending_tasks")
def _todo_gloss(case: Any) -> Mutant | None:
    # pending_tasks also accepts a task told in sections 8-9: the lines there that tell an open task
    # (most of its words) go too.
    todos = open_todos(case.history) + list(case.expect.pending)
    if not todos or any(t.lower() in case.kept_text.lower() for t in todos):
        return None
    span = _section_text(case, "pending")
    if span is None:
        return None
    a, b = span
    summary = case.summary[:a] + "   - Finish the remaining work.\n\n" + case.summary[b:]
    return _summary(case, _drop_lines(case, summary, ("current", "next"),
                                      lambda l: any(_share(t, l) >= 0.5 for t in todos)), "todos glossed")


# --- no_superseded_work -------------------------------------------------------------------------------

def _revive(case: Any, kind: str, line: str, what: str) -> Mutant | None:
    history = normalize_ws(" ".join(p.text for p in person_messages(case.history))).lower()
    todos = [t.lower() for t in open_todos(case.summarized)]
    intents = [i for i in case.expect.superseded if i.lower() in history and not any(i.lower() in t for t in todos)]
    if "{o}" in line:
        intents = [i for i in intents if len(i.split()) >= 3]
    span = _section_text(case, kind)
    if not intents or span is None:
        return None
    i = intents[-1]
    _, b = span
    if "{o}" in line and len(i.split()) < 3:
        return None
    obj = " ".join(i.split()[1:])   # the intent's object, proposed with another verb
    text = case.summary[:b].rstrip("\n") + "\n" + line.format(i=i, I=i[:1].upper() + i[1:], o=obj) + "\n" \
        + case.summary[b:]
    return _summary(case, text, f"{what}: {i}")


for _n, (_kind, _line) in enumerate([
    ("next", "   If there is time afterwards, {i}."),
    ("next", "   Still open from earlier: {i}."),
    ("next", "   {I} remains on the list for this week."),
    ("next", "   The user said not to bother with polish; however, it would be good to {i} too."),
    ("current", "   Was about to {i} when the context filled up."),
    ("pending", "   - (low priority) {i}"),
    ("next", "   Do not forget to {i}."),
    ("next", "   It would still be nice to bring back {o} later."),
]):
    hand(f"superseded intent revived #{_n + 1}", "no_superseded_work")(
        lambda case, k=_kind, l=_line, n=_n: _revive(case, k, l, f"revived #{n + 1}"))


# --- constraints, failed approaches ----------------------------------------------------------------

_NEG = re.compile(r"\b(?:do not|don't|never|not)\s+", re.IGNORECASE)


@hand("prohibition turned into a permission", "constraints_preserved")
def _invert(case: Any) -> Mutant | None:
    for c in case.expect.constraints:
        if _NEG.search(c) and c in case.summary:
            flipped = _NEG.sub("", c, count=1)
            flipped = flipped[:1].upper() + flipped[1:]
            return _summary(case, case.summary.replace(c, flipped), f"inverted: {c}")
    return None


@hand("constraint glossed", "constraints_preserved")
def _constraint_gloss(case: Any) -> Mutant | None:
    for c in case.expect.constraints:
        if c in case.summary and c.lower() not in case.kept_text.lower():
            # every line that says the rule, in any words (most of its words), goes
            words = significant_tokens(c)
            said = [l for l in case.summary.split("\n")
                    if sum(w in set(significant_tokens(l)) for w in words) >= 0.6 * len(words)]
            lines = [l if l not in said else "   - Follow the user's rules." for l in case.summary.split("\n")]
            return _summary(case, "\n".join(lines), f"glossed: {c}")
    return None


@hand("failed approach recorded as promising", "failed_approaches_preserved")
def _promising(case: Any) -> Mutant | None:
    for a in case.expect.failed_approaches:
        if a in case.summary:
            lines = [l if a not in l else f"   - Tried {a}; it looked promising." for l in case.summary.split("\n")]
            return _summary(case, "\n".join(lines), f"promising: {a}")
    return None


@hand("failed approach suggested again", "failed_approaches_preserved")
def _again(case: Any) -> Mutant | None:
    span = _section_text(case, "pending")
    if not case.expect.failed_approaches or span is None:
        return None
    a = case.expect.failed_approaches[0]
    _, b = span
    return _summary(case, case.summary[:b].rstrip("\n") + f"\n   - Give {a} another go.\n" + case.summary[b:],
                    f"again: {a}")


# --- structure ---------------------------------------------------------------------------------------

@hand("section renamed to an unknown title", "nine_sections")
def _rename(case: Any) -> Mutant | None:
    sec = case.sections.get("problem")
    if sec is None:
        return None
    lines = case.summary.split("\n")
    lines[sec.line - 1] = lines[sec.line - 1].replace(sec.title, "Notes")
    return _summary(case, "\n".join(lines), "renamed section 5")


@hand("section emptied", "nine_sections")
def _empty(case: Any) -> Mutant | None:
    span = _section_text(case, "current")
    if span is None:
        return None
    a, b = span
    return _summary(case, case.summary[:a] + "\n" + case.summary[b:], "emptied section 8")


@hand("analysis in upper-case tags", "analysis_stripped")
def _upper_analysis(case: Any) -> Mutant | None:
    return Mutant.of(case, summary_message="<ANALYSIS>\nChecking every message in turn.\n</ANALYSIS>\n"
                     + case.summary_message, what="ANALYSIS tags")


@hand("analysis as a heading", "analysis_stripped")
def _heading_analysis(case: Any) -> Mutant | None:
    at = case.summary_message.find(case.summary)
    if at < 0:
        return None
    return Mutant.of(case, summary_message=case.summary_message[:at] + "## Analysis\nGoing through the chat.\n\n"
                     "## Summary\n" + case.summary_message[at:], what="analysis heading")


@hand("inline analysis line", "analysis_stripped")
def _inline_analysis(case: Any) -> Mutant | None:
    at = case.summary_message.find(case.summary)
    if at < 0:
        return None
    return Mutant.of(case, summary_message=case.summary_message[:at] + "Analysis: I reviewed the conversation "
                     "and listed the files.\n\n" + case.summary_message[at:], what="inline analysis")


@hand("continuation shortened", "continuation")
def _short_continue(case: Any) -> Mutant | None:
    if case.trigger != "auto":
        return None
    # Every wording of the instruction goes (the grader accepts any version's: "from where it left
    # off", "Resume directly", "Pick up the last task"), not only its first sentence.
    lines = case.summary_message.split("\n")
    at = [i for i, l in enumerate(lines) if CONTINUATION_WORDINGS.search(l)]
    if not at:
        return None
    new = "\n".join("Continue." if i == at[0] else l for i, l in enumerate(lines) if i not in at[1:])
    return Mutant.of(case, summary_message=new, what="continue shortened") if new != case.summary_message else None


@hand("transcript pointer vague", "continuation")
def _vague_path(case: Any) -> Mutant | None:
    new = re.sub(r"read the full transcript at:[ \t]*\n?[^\n]*", "see the earlier transcript if needed.",
                 case.summary_message, flags=re.IGNORECASE)
    return Mutant.of(case, summary_message=new, what="vague path") if new != case.summary_message else None


@hand("kept tool_use without its call", "tool_pairing")
def _orphan_result(case: Any) -> Mutant | None:
    post = list(case.post_messages)
    for i, m in enumerate(post):
        if isinstance(m, AssistantMessage) and tool_uses(m) and not isinstance(m, CompactBoundary):
            ids = {u.id for u in tool_uses(m)}
            if any(isinstance(x, UserMessage) and any(r.tool_use_id in ids for r in tool_results(x)) for x in post[i + 1:]):
                del post[i]
                return Mutant.of(case, post_messages=post, what="tool_use removed, its result kept")
    return None


def _run_all() -> tuple[dict[str, list[int]], list[str]]:
    """Every hand-written kind on the validation sample's compactions (tests/validation_kit.py), or
    on the whole library in the library-wide step (tests/library_wide.py)."""
    by_grader: dict[str, list[int]] = {}
    misses = []
    targets = [registry().get(t) for t in sorted({t for _, t, _ in HANDS})]  # only the graders aimed at
    for case, _known in (library_cases() if LIBRARY_TESTS else library_sample()):
        before = {v.grader: v.status for v in registry().run(case, targets)}
        for name, target, func in HANDS:
            if before.get(target) != "pass":
                continue
            mutant = func(case)
            if mutant is None:
                continue
            (verdict,) = registry().run(mutant.case, [registry().get(target)])
            tally = by_grader.setdefault(target, [0, 0])
            tally[1] += 1
            if verdict.status == "fail":
                tally[0] += 1
            else:
                misses.append(f"{target} missed '{name}' on {case.source} compaction {case.index}: {mutant.what} "
                              f"({verdict.status}: {'; '.join(verdict.reasons)[:200]})")
    return by_grader, misses


def test_handwritten_mutants_are_caught() -> None:
    by_grader, misses = _run_all()
    total = sum(t[1] for t in by_grader.values())
    killed = sum(t[0] for t in by_grader.values())
    print(f"\nhand-written mutants: {killed}/{total} caught")
    for g, (k, n) in sorted(by_grader.items()):
        print(f"  {g}: {k}/{n}")
    for m in misses:
        print("  MISS", m)
    assert total >= 100, "the hand-written set must cover the library"
    assert killed / total >= 0.95, misses
    for g, (k, n) in by_grader.items():
        assert n < 5 or k / n >= 0.95, (g, k, n, [m for m in misses if m.startswith(g)])
    assert {t for _, t, _ in HANDS} <= set(by_grader), "every hand-written kind applied somewhere"


@pytest.mark.parametrize("name,target,func", HANDS, ids=[h[0] for h in HANDS])
def test_each_handwritten_kind_applies_somewhere(name: str, target: str, func: Hand) -> None:
    assert any(func(case) is not None for case, _ in library_cases()), name
