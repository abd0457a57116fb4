"""The built-in mutation operators: each derives defective summaries that break one invariant.

Every operator is pure and deterministic for its ``rng``; it makes no mutant when it does not apply
(nothing to drop), and checks that its mutant really lacks what it removed (a message that is also
kept verbatim elsewhere cannot be dropped), so every mutant is a true defect of its targets.
Operators that must remove a person-typed message to remove something else (a constraint the user
typed) also target the graders of person-typed messages (:func:`_lost_people`).

Structural: ``drop_section``, ``swap_sections``, ``keep_analysis``, ``drop_continuation``,
``drop_transcript_path``, ``split_tool_pair``. The other person-message, fact and intent operators
are in :mod:`pytest_ctxeval.grading.mutation_facts`.
"""

from __future__ import annotations

import random
import re
from typing import Any

from ..reading.extract import message_fragments
from ..core.messages import AssistantMessage, CompactBoundary, UserMessage, tool_results, tool_uses
from .mutants import Mutant, kept_verbatim, mutation, remove_spans, section_span, still_there as _still_there
from ..reading.summary import normalize_ws
from .versions import CONTINUATION_WORDINGS

__all__ = ["drop_section", "swap_sections", "keep_analysis", "drop_continuation", "drop_transcript_path",
           "split_tool_pair", "SECTION_GRADERS", "lost_people_targets"]

#: The grader that checks the facts a section holds (besides nine_sections, which checks them all).
SECTION_GRADERS: dict[str, tuple[str, ...]] = {
    "request": ("intent_preservation",), "files": ("files_preserved",), "errors": ("errors_preserved",),
    "pending": ("pending_tasks",), "user_messages": ("verbatim_user_messages",), "next": ("next_step_quote",),
}


def context_text(case: Any) -> str:
    """What the model sees after the compaction: the summary message and the kept messages."""
    text = case.summary_message or case.summary
    return normalize_ws(text + ("\n" + case.kept_text if case.kept_text else ""))


def _in(fragments: list[str], region: str) -> bool:
    return all(f in region for f in fragments)


def lost_people_targets(before: Any, after: Any) -> tuple[str, ...]:
    """The graders a mutant breaks besides its own by removing what a person typed:
    ``verbatim_user_messages`` when a message verbatim in section 6 before is not after,
    ``last_request_intact`` when the latest request was in the context and is not any more,
    ``next_step_quote`` when the quote of section 9 changed with it, ``constraints_preserved`` when
    a rule of expect.constraints went with it."""
    people = before.person_messages()
    if not people:
        return ()
    out = []
    old, new = before.region("user_messages"), after.region("user_messages")
    if old is not None:
        raw_new = new or ""
        old, new = normalize_ws(old), normalize_ws(raw_new)
        # gone by a substring test and by the graders' own reading (a copy they still count is kept)
        if any(_in(message_fragments(p.text), old) and not _in(message_fragments(p.text), new)
               and not kept_verbatim(p.text, raw_new) for p in people):
            out.append("verbatim_user_messages")
    last = message_fragments(people[-1].text)
    if _in(last, context_text(before)) and not _in(last, context_text(after)) and not kept_verbatim(
            people[-1].text, (after.summary_message or after.summary) + "\n" + after.kept_text):
        out.append("last_request_intact")
    # A quote of the user's words in section 9 that changed is no longer verbatim.
    old_q, new_q = (["".join(q) for q in re.findall(r"\"([^\"\n]{2,})\"|“([^”]{2,})”", c.sections.get("next").body)]
                    if c.sections.get("next") else [] for c in (before, after))
    parts = [p.strip() for q in new_q for p in re.split(r"…|\[…\]|\[\.\.\.\]|\.\.\.", q) if p.strip()]
    # A quote that is no longer verbatim breaks the grader only when no quote of section 9 is left
    # as it was (next_step_quote asks for a verbatim quote of the recent conversation, not for all).
    if old_q and any(not any(p in o for o in old_q) for p in parts) and not any(q in old_q for q in new_q):
        out.append("next_step_quote")
    # A constraint the user typed goes with the message that holds it.
    old_ctx = (before.summary_message or before.summary) + "\n" + before.kept_text
    new_ctx = (after.summary_message or after.summary) + "\n" + after.kept_text
    if any(_still_there(c, old_ctx) and not _still_there(c, new_ctx) for c in before.expect.constraints):
        out.append("constraints_preserved")
    return tuple(out)


@mutation("drop_section", targets=("nine_sections", "files_preserved", "errors_preserved", "pending_tasks",
                                    "verbatim_user_messages", "next_step_quote", "intent_preservation"))
def drop_section(case: Any, rng: random.Random) -> list[Mutant]:
    """Remove one section (header and body)."""
    sections = [s for s in case.sections.sections if s.kind]
    if not sections:
        return []
    section = rng.choice(sections)
    span = section_span(case.summary, section)
    if span is None:
        return []
    mutant = Mutant.of(case, summary=remove_spans(case.summary, [span]),
                       what=f"dropped section '{section.title}' (line {section.line})",
                       text=case.summary[span[0]:span[1]].strip()[:300])
    mutant.targets = ("nine_sections", *SECTION_GRADERS.get(section.kind or "", ()),
                      *lost_people_targets(case, mutant.case))
    return [mutant]


@mutation("swap_sections", targets=("nine_sections",))
def swap_sections(case: Any, rng: random.Random) -> list[Mutant]:
    """Swap two neighbouring sections (headers travel with their bodies)."""
    sections = [s for s in case.sections.sections if s.kind]
    if len(sections) < 2:
        return []
    i = rng.randrange(len(sections) - 1)
    a, b = section_span(case.summary, sections[i]), section_span(case.summary, sections[i + 1])
    if a is None or b is None or a[1] != b[0]:
        return []
    first, second = case.summary[a[0]:a[1]], case.summary[b[0]:b[1]]
    if not first.endswith("\n"):
        first += "\n"
    second = second if second.endswith("\n") else second + "\n\n"
    text = case.summary[:a[0]] + second + first + case.summary[b[1]:]
    return [Mutant.of(case, summary=text.rstrip("\n") + ("\n" if case.summary.endswith("\n") else ""),
                      what=f"swapped '{sections[i].title}' and '{sections[i + 1].title}'",
                      text=f"{sections[i + 1].title} before {sections[i].title}")]


@mutation("keep_analysis", targets=("analysis_stripped",))
def keep_analysis(case: Any, rng: random.Random) -> list[Mutant]:
    """Leave the ``<analysis>`` scratchpad (or a stored ``Analysis:`` part) in the summary message."""
    request = case.sections.get("request")
    thought = (request.body.split("\n")[0] if request is not None and request.body else "the user's request")[:200]
    scratch = (f"Let me go through the conversation chronologically. The user asked: {thought}. "
               "I need to capture the files, errors and pending work.")
    form = rng.choice(("tags", "stored"))
    block = f"<analysis>\n{scratch}\n</analysis>\n\n" if form == "tags" else f"Analysis:\n{scratch}\n\nSummary:\n"
    message = case.summary_message or case.summary
    at = message.find(case.summary) if case.summary else -1
    at = at if at >= 0 else 0
    return [Mutant.of(case, summary_message=message[:at] + block + message[at:],
                      what=f"kept the analysis scratchpad ({'<analysis> tags' if form == 'tags' else 'Analysis: part'})",
                      text=block.strip()[:200])]


# Every sentence of the instruction: the grader accepts any version's wording ("continue ... from where
# we left off", "Resume directly", "Pick up the last task"), so dropping one sentence and keeping
# another would not drop the instruction.
_CONTINUE_SENTENCE = re.compile(r"[^.\n]*(?:" + CONTINUATION_WORDINGS.pattern + r")[^\n]*?(?:\.|$)",
                                re.IGNORECASE | re.MULTILINE)
_PATH_HINT = re.compile(r"read", re.IGNORECASE)
_PATH_LINE = re.compile(r"[^\n]*read\s+the\s+full\s+transcript\s+at:[ \t]*(?:\n[ \t]*)?\S[^\n]*\n?", re.IGNORECASE)


def anchored_spans(pattern: re.Pattern[str], text: str, hint: re.Pattern[str], stops: str) -> list[tuple[int, int]]:
    """The spans of ``pattern.finditer(text)`` for a pattern that opens with a run of characters
    other than ``stops`` (``[^.\n]*``) and then needs ``hint``: a match starts where a segment
    starts (after a character of ``stops``, or where the last match ended) and ``hint`` starts
    inside that segment. So only the segments where ``hint`` is found are tried, each once: the
    pattern's opening run made ``finditer`` rescan the rest of the segment at every character of a
    long summary (tested against ``finditer``)."""
    out: list[tuple[int, int]] = []
    pos = 0
    for h in hint.finditer(text):
        if h.start() < pos:
            continue
        start = max([pos] + [text.rfind(c, pos, h.start()) + 1 for c in stops])
        m = pattern.match(text, start)
        if m is not None:
            out.append(m.span())
            pos = m.end()
    return out


@mutation("drop_continuation", targets=("continuation",))
def drop_continuation(case: Any, rng: random.Random) -> list[Mutant]:
    """Remove the instruction to continue without recapping (automatic compactions)."""
    if case.trigger != "auto":
        return []
    spans = anchored_spans(_CONTINUE_SENTENCE, case.summary_message, CONTINUATION_WORDINGS, ".\n")
    if not spans:
        return []
    text = " ".join(case.summary_message[a:b].strip() for a, b in spans)
    return [Mutant.of(case, summary_message=remove_spans(case.summary_message, spans),
                      what="dropped the continuation instruction", text=text)]


@mutation("drop_transcript_path", targets=("continuation",))
def drop_transcript_path(case: Any, rng: random.Random) -> list[Mutant]:
    """Remove the line that points at the full transcript."""
    spans = anchored_spans(_PATH_LINE, case.summary_message, _PATH_HINT, "\n")
    if not spans:
        return []
    text = case.summary_message[spans[0][0]:spans[0][1]].strip()
    return [Mutant.of(case, summary_message=remove_spans(case.summary_message, spans),
                      what="dropped the transcript path", text=text)]


@mutation("split_tool_pair", targets=("tool_pairing",))
def split_tool_pair(case: Any, rng: random.Random) -> list[Mutant]:
    """Remove the tool_result of a tool_use the compaction kept, splitting the pair."""
    kept = [(i, m) for i, m in enumerate(case.post_messages)
            if not isinstance(m, CompactBoundary) and not (isinstance(m, UserMessage) and m.is_compact_summary)]
    ids = {u.id for _, m in kept if isinstance(m, AssistantMessage) for u in tool_uses(m)}
    holders = [(i, m, r) for i, m in kept if isinstance(m, UserMessage) for r in tool_results(m) if r.tool_use_id in ids]
    if not holders:
        return []
    i, message, result = rng.choice(holders)
    blocks = [b for b in message.content if b is not result] if isinstance(message.content, list) else []
    post = list(case.post_messages)
    if blocks:
        post[i] = message.model_copy(update={"content": blocks})
    else:
        del post[i]
    return [Mutant.of(case, post_messages=post, what=f"removed the tool_result of kept tool_use {result.tool_use_id}",
                      text=f"tool_use {result.tool_use_id} without its result")]
