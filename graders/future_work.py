"""The work ahead: open tasks kept (section 7), dropped work not proposed (sections 7-9).

* ``pending_tasks``: every open TodoWrite item (and TaskCreate task) is in section 7 (a task in
  progress may be told in sections 8-9), and no work is called done that no command of the session did.
* ``no_superseded_work``: intents the user dropped (``expect.superseded``), tasks they cancelled in
  words and changes they forbade are not proposed in sections 7-9.

Expectations (``expect.pending``) are required of a compaction once the session has reached them: an entry
that first comes up after a compaction is not held against that compaction's summary.

Other compactors (:mod:`pytest_ctxeval.compaction`): a fact is looked for in the section of its kind
when the compactor's summary format has one (a pending or next-step section), else in the whole post-compact context
(summary and kept messages).

What several rule graders share (the place a reason names, a missing section, a summary read
whole, a key line kept in one item) is in :mod:`pytest_ctxeval.grading.section_reasons` and
:mod:`pytest_ctxeval.reading.key_lines`: grader modules are loaded by file path and do not import
each other.
"""

from __future__ import annotations

import re

from pytest_ctxeval.core.words import all_of, plural
from pytest_ctxeval.reading.extract import latest_requests, open_todos, person_messages
from pytest_ctxeval.grading import CompactionCase, Verdict, grader
from pytest_ctxeval.reading.done_claims import unbacked_claims
from pytest_ctxeval.reading.prohibitions import prohibitions
from pytest_ctxeval.reading.leave_out import leave_out, left_out, with_leave_out
from pytest_ctxeval.reading.proposals import proposals, quoted_spans
from pytest_ctxeval.reading.cancellations import proposes_intent, superseded_intents, typed_cancellations, violates
from pytest_ctxeval.reading.finished_tasks import finish_evidence, list_updates
from pytest_ctxeval.reading.tasks import (
    called_done, open_items as _open_items, task_in_item, task_state, task_told as _task_told,
)
from pytest_ctxeval.reading.summary import Section, normalize_ws, notes_section, plain_emphasis
from pytest_ctxeval.grading.section_reasons import (
    free_form_place as _free_where, free_form_why as _free_form, line_of as _line_of,
    section_missing as _section_missing, section_place as _where, short as _short, unseen_in as _unseen,
    whole_region as _whole_region,
)
from pytest_ctxeval.reading.key_lines import TOKEN_OVERLAP, present_in_section as _present, section_items as _items


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


def _cancellations(case: CompactionCase) -> list:
    """The cancellations the person typed in the case's history, read once per compaction (its
    mutants share the history)."""
    return case.shared_view("typed_cancellations", lambda: typed_cancellations(case.history), case.history)


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
