"""Structural graders: what the post-compact context must look like, whatever the wording.

* ``tool_pairing``: the post-compact context and every request sent are API-valid (pairing,
  alternation): a split tool_use/tool_result is an API error in a real agent.
* ``nine_sections``: the summary has the nine sections, in order, none empty.
* ``analysis_stripped``: the ``<analysis>`` scratchpad is gone and the ``<summary>`` tags removed.
* ``continuation``: the summary message carries the transcript path and, for an automatic
  compaction, the instruction to continue without recapping.
* ``format_sections``: another compactor's summary has the sections of its format, in order, none
  empty (the nine sections' counterpart for Codex, Gemini CLI, opencode or your own format).
* ``fits_window``: every request sent after the compaction (until the next one) fits the context
  window: a compactor that cannot shrink what it keeps runs into the API's "prompt is too long".

``nine_sections``, ``analysis_stripped`` and ``continuation`` check Claude Code's format: other
compactors get ``n/a`` (``compactors=("claude_code",)``).
"""

from __future__ import annotations

import re

from pytest_ctxeval.core.words import all_of, plural
from pytest_ctxeval.grading import CompactionCase, Verdict, grader
from pytest_ctxeval.core.messages import RequestValidator, to_api, validate_api
from pytest_ctxeval.core.tokens import estimate_api_request
from pytest_ctxeval.reading.summary import SECTION_KINDS, analysis_span, wrapper_tags
from pytest_ctxeval.reading.summary_form import NINE_FORM_MIN, format_request
from pytest_ctxeval.grading.versions import CONTINUATION_WORDINGS, promise


@grader("tool_pairing", kind="rule")
def tool_pairing(case: CompactionCase) -> Verdict:
    """Post-compact messages and every request sent are API-valid."""
    checks: list[tuple[str, list[str]]] = []
    if case.post_messages:
        checks.append(("post-compact context (as sent to the API)",
                       validate_api(to_api(case.post_messages), allow_pending_tool_use=True)))
    if case.compaction_request:
        checks.append(("compaction request", validate_api(case.compaction_request["messages"])))
    check = RequestValidator()  # consecutive requests share their messages: checked once each
    for i, request in enumerate(case.requests, start=1):
        checks.append((f"request {i} after the compaction", check(request["messages"])))
    if not checks:
        return Verdict.not_applicable("no post-compact context or request to check")
    bad = [(where, problems) for where, problems in checks if problems]
    if not bad:
        return Verdict.passed_(f"{len(checks)} message lists checked, all API-valid", checked=len(checks))
    reasons = [f"{where}: {problems[0]}" + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else "")
               for where, problems in bad]
    return Verdict.failed(*reasons, score=round(1 - len(bad) / len(checks), 4),
                          problems={where: problems for where, problems in bad})


@grader("nine_sections", kind="rule", applies_to=("full", "partial", "transcript"), compactors=("claude_code",))
def nine_sections(case: CompactionCase) -> Verdict:
    """All nine summary sections are present, in order, and none is empty.

    A manual ``/compact`` that asked for another structure ("just 5 bullets, no sections", "one
    paragraph") answered by a summary without the nine sections is ``n/a``: the person's instruction
    wins (pytest_ctxeval.reading.summary_form); any other form request is named in the reason."""
    parsed = case.sections
    present = {s.kind: s for s in parsed.sections if s.kind}
    reasons = []
    missing = [k for k in SECTION_KINDS if k not in present]
    asked = format_request(case.compact_args)
    if asked is not None and asked.structure and len(present) < NINE_FORM_MIN:
        return Verdict.not_applicable(f"the person asked /compact for another structure (\"{asked.said}\"), and the "
                                      f"summary follows it ({len(present)} of the nine sections): the nine sections are "
                                      "not required", found=[s.kind for s in parsed.sections if s.kind])
    if missing:
        names = ", ".join("{}. {}".format(*case.section_name(k)) for k in missing)
        reasons.append(f"missing section{'s' if len(missing) > 1 else ''}: {names}"
                       + (f" (/compact asked for \"{asked.said}\")" if asked is not None else ""))
    order = [s.kind for s in parsed.sections if s.kind]
    wanted = case.section_order  # the prompt's order (a prompt may move a section), else the canonical one
    for prev, cur in zip(order, order[1:]):
        if wanted.index(cur) < wanted.index(prev):
            a, b = present[cur], present[prev]
            reasons.append(f"out of order: '{a.title}' (line {a.line}) comes after '{b.title}' (line {b.line})")
    for kind in SECTION_KINDS:
        sec = present.get(kind)
        if sec is not None and _says_nothing(sec.body):
            what = "is empty" if not sec.body.strip() else f"says nothing (only \"{sec.body.strip()[:40]}\")"
            reasons.append(f"section '{sec.title}' (line {sec.line}) {what}")
    # Each missing, misplaced or empty section costs one ninth.
    problems = len(missing) + (len(reasons) - (1 if missing else 0))
    score = max(0.0, (len(SECTION_KINDS) - problems) / len(SECTION_KINDS))
    if reasons:
        return Verdict.failed(*reasons, score=round(score, 4), found=order, missing=missing)
    return Verdict.passed_("all nine sections present, in order, none empty", found=order)


#: A body that is only a placeholder: "TBD", "[to be filled in]", "TODO", "<...>".
_PLACEHOLDER = re.compile(r"^[\W_]*(?:tbd|tba|todo|to ?do|placeholder|lorem ipsum\b.*|fill (?:this |me )?in|"
                          r"to be (?:filled(?: in)?|added|written|completed|determined|done))[\W_]*$", re.IGNORECASE | re.DOTALL)


def _says_nothing(body: str) -> bool:
    """An empty body, one of list markers and punctuation only ("-", "...", "*"), or a placeholder
    ("TBD", "[to be filled in]"). "None." and "N/A" say something: there is nothing of the kind."""
    text = body.strip()
    return not re.search(r"[^\W_]", text) or _PLACEHOLDER.match(text) is not None


def _held_to_version(case: CompactionCase) -> bool:
    """A summary Claude Code wrote: a real transcript's compaction, or a ``--summary`` text that
    opens with Claude Code's preamble (its case carries the session's version). Either is held to
    what that version promised (pytest_ctxeval.grading.versions), not to the engine's rules."""
    return case.origin == "transcript" or (case.origin == "summary-file" and case.version is not None)


@grader("analysis_stripped", kind="rule", compactors=("claude_code",))
def analysis_stripped(case: CompactionCase) -> Verdict:
    """The analysis scratchpad is not in what the model sees, and the summary tags are removed.

    A real transcript is held to its version: Claude Code up to 2.1.56 keeps the ``Analysis:`` part by
    design (pytest_ctxeval.grading.versions), so its summaries are ``n/a`` for the scratchpad, never a fail."""
    text = case.summary_message or case.summary
    reasons = []
    span = analysis_span(text)
    tags = wrapper_tags(text).summary_tags   # markup only: not "<summary>" quoted or in code in the content
    if span is not None and _held_to_version(case) and not tags:
        kept = promise("analysis_stripped", case.version)
        if not kept.made:
            return Verdict.not_applicable(f"the summary keeps its Analysis: part, as Claude Code "
                                          f"{case.version or '(version unknown)'} writes it: {kept.reason()}")
    if span is not None:
        start, end = span
        line = text[:start].count("\n") + 1
        excerpt = re.sub(r"\s+", " ", text[start:min(end, start + 80)]).strip()
        reasons.append(f"the summary message still carries the analysis scratchpad (line {line}, "
                       f"{end - start} chars: {excerpt!r}...); formatCompactSummary strips it (seed 003:217)"
                       + (f"; Claude Code {case.version} strips it" if case.version else ""))
    if tags:
        reasons.append(f"the <summary> tags were not removed ({tags} tag{'s' if tags > 1 else ''} left)")
    if reasons:
        wasted = (span[1] - span[0]) if span else 0
        return Verdict.failed(*reasons, wasted_chars=wasted)
    return Verdict.passed_("no analysis scratchpad or summary tags in the summary message")


# The path runs to the end of its line (paths may hold spaces: /Users/John Smith/...).
_PATH_LINE = re.compile(r"read\s+the\s+full\s+transcript\s+at:[ \t]*\n?[ \t]*(\S[^\n]*?)[ \t]*$",
                        re.IGNORECASE | re.MULTILINE)
_PREAMBLE = re.compile(r"\s*This session is being continued from a previous conversation", re.IGNORECASE)


def _partial_note(case: CompactionCase) -> str:
    which = "Summarize from here" if case.partial == "from" else "Summarize up to here"
    return (f"a partial compaction (/rewind -> \"{which}\"): Claude Code writes its summary without the "
            "follow-up instruction")


@grader("continuation", kind="rule", compactors=("claude_code",))
def continuation(case: CompactionCase) -> Verdict:
    """The summary message points at the full transcript and (auto) says to continue directly.

    A real transcript is held to what its version wrote (pytest_ctxeval.grading.versions): no transcript path
    before 2.1.x, no continuation instruction after a manual /compact before 2.1.150; every version's
    wording counts ("from where we left it off", "from where we left off", "Resume directly")."""
    text = case.summary_message
    if case.origin == "summary-file" and not _PREAMBLE.match(text):
        return Verdict.not_applicable("a summary text given as a file (--summary, grade-output) is the model's "
                                      "output; the transcript path and continuation instruction are what Claude "
                                      "Code wraps around it (give the whole summary message, starting 'This "
                                      "session is being continued', to check them)")
    real = _held_to_version(case)
    want_path = promise("transcript_path", case.version) if real else None
    key = "continuation_auto" if case.trigger == "auto" else "continuation_manual"
    want_continue = promise(key, case.version) if real else None
    need_path = want_path.made if want_path is not None else True
    need_continue = want_continue.made if want_continue is not None else case.trigger == "auto"
    if real and case.partial:
        # /rewind -> "Summarize from here / up to here": Claude Code writes the summary with the
        # transcript path but without the follow-up instruction (the person picks the next step).
        need_continue = False
    if not need_path and not need_continue:
        notes = [f"transcript path: {want_path.reason()}"] if want_path is not None else []
        notes += [f"{case.trigger} continuation instruction: {want_continue.reason()}"] if want_continue is not None else []
        kind = "an automatic" if case.trigger == "auto" else "a manual"
        if not case.version:  # not known, rather than known not to be written (review 4, G18 c)
            return Verdict.not_applicable(f"the transcript records no Claude Code version, so whether it writes the "
                                          f"transcript path and the continuation instruction for {kind} compaction "
                                          "is not known: neither is required; " + "; ".join(notes))
        return Verdict.not_applicable(f"Claude Code {case.version} writes neither for "
                                      f"{kind} compaction; " + "; ".join(notes))
    reasons = []
    match = _PATH_LINE.search(text)
    if need_path:
        if not match:
            reasons.append("no transcript path: the summary message should end with 'read the full transcript "
                           "at: <path>' so details lost in the summary can be recovered (seed 003:322-332)"
                           + (f"; Claude Code {case.version} writes it" if real else ""))
        elif case.transcript_path and match.group(1) != case.transcript_path:
            reasons.append(f"the transcript path {match.group(1)!r} is not this session's transcript "
                           f"{case.transcript_path!r}")
    if need_continue and not CONTINUATION_WORDINGS.search(text):
        reasons.append(f"no continuation instruction: {'an automatic' if case.trigger == 'auto' else 'a manual'} "
                       "compaction must tell the model to continue from where it left off without asking or "
                       "recapping (seed 003:269-277)" + (f"; Claude Code {case.version} writes it" if real else ""))
    if reasons:
        return Verdict.failed(*reasons, score=0.5 if len(reasons) == 1 else 0.0)
    what = " and ".join(w for w, need in (("transcript path", need_path), ("continuation instruction", need_continue))
                        if need)
    skipped = [f"no {w} expected ({_partial_note(case) if w.startswith('continuation') and real and case.partial else p.reason()})"
               for w, need, p in (("transcript path", need_path, want_path),
                                  ("continuation instruction", need_continue, want_continue))
               if p is not None and not need]
    return Verdict.passed_(f"{what} present" + ("; " + "; ".join(skipped) if skipped else ""))


@grader("format_sections", kind="rule")
def format_sections(case: CompactionCase) -> Verdict:
    """Another compactor's summary has its format's sections, in order, none empty."""
    fmt = case.summary_format
    if fmt is None:
        return Verdict.not_applicable(f"the {case.compactor} compactor writes Claude Code's nine sections "
                                      "(nine_sections checks them)")
    if not fmt.sections:
        what = fmt.name if fmt.name.startswith("no ") else f"a {fmt.name}"
        return Verdict.not_applicable(f"the {case.compactor} compactor writes {what}: no sections to check")
    found = case.sections.sections
    titles = [s.title for s in found]
    reasons = []
    missing = [t for t in fmt.titles if t not in titles]
    if missing:
        reasons.append(f"the {fmt.name} lacks {', '.join(repr(t) for t in missing)} "
                       f"(found: {', '.join(repr(t) for t in titles) or 'no section'})")
    order = [t for t in fmt.titles if t in titles]
    if titles != order:
        reasons.append(f"sections out of order: {', '.join(titles)} (the format's order: {', '.join(order)})")
    for sec in found:
        if not sec.body.strip():
            reasons.append(f"section '{sec.title}' (line {sec.line}) is empty")
    problems = len(missing) + sum(1 for s in found if not s.body.strip()) + (1 if titles != order else 0)
    score = max(0.0, (len(fmt.titles) - problems) / len(fmt.titles))
    if reasons:
        return Verdict.failed(*reasons, score=round(score, 4), found=titles, missing=missing)
    return Verdict.passed_(f"{all_of(len(fmt.titles), 'section')} of the {fmt.name} present, in order, none empty",
                           found=titles)


@grader("fits_window", kind="rule")
def fits_window(case: CompactionCase) -> Verdict:
    """Every request sent after the compaction (until the next one) fits the context window."""
    if case.config is None:
        return Verdict.not_applicable("no engine run (a real transcript): the window and the requests after the "
                                      "compaction are unknown")
    window = case.config.context_window
    if case.requests:  # the requests the run sent: the same for every mutant of the case
        config = case.config
        sizes = case.shared_view("request_sizes", lambda: [
            (f"request {i} after the compaction", estimate_api_request(r, config))
            for i, r in enumerate(case.requests, start=1)], case.requests, config)
    else:  # the run ended with this compaction: the context it leaves is the next request
        sizes = [("the post-compact context", estimate_api_request({"messages": to_api(case.post_messages)},
                                                                   case.config) if case.post_messages else 0)]
    over = [(where, n) for where, n in sizes if n > window]
    if over:
        where, n = over[0]
        return Verdict.failed(f"{len(over)} of {len(sizes)} exceed the {window:,}-token window ({where}: {n:,} tokens); "
                              "the API would answer 'prompt is too long'",
                              score=round(1 - len(over) / len(sizes), 4), over=[w for w, _ in over])
    peak = max(n for _, n in sizes)
    return Verdict.passed_(f"the {plural(len(sizes), 'request')} after it peak at {peak:,} of the {window:,}-token window",
                           peak=peak)
