"""LLM graders: what needs judgement rather than string matching.

* ``intent_preservation``: the judge reads the person-typed messages of the summarised span and the
  post-compact context and scores 0-5 whether the primary request, later corrections and
  constraints survive; reasons cite what was lost.
* ``probes``: every ``expect.probes`` question (recall, artifact, continuation, decision), with its
  expected answer, in ONE judgement of the context the run ends with (its last summary and what
  came after it): could an agent resuming from that context alone give the expected answer? One
  score 0-5 per probe (``probes.j2``, :mod:`pytest_ctxeval.judge_items`). With
  ``Judge.combined = False``, as before issue 21: a *fresh* model call per question that sees only
  that context, then a judgement of each answer. Judged once, at the last compaction (earlier
  ones may predate what the probes ask about).
* ``drift``: the run's compactions, extended by re-compacting the last context until there are at
  least ``DRIFT_GENERATIONS``; the judge scores each generation's primary request and next step
  against the original intent (all generations in one judgement, ``drift_all.j2``), and the
  verdict names the first generation below the bar.

A score is the judge's median vote out of 5; the verdict passes at ``Judge.bar`` (3) or above.
With the offline backend the judge is a labelled heuristic (term overlap), deterministic and free.
"""

from __future__ import annotations

import re
from typing import Any

from dataclasses import replace
from statistics import mean

from pytest_ctxeval.core.words import all_of, plural
from pytest_ctxeval.reading.extract import person_messages
from pytest_ctxeval.reading.language import cross_language
from pytest_ctxeval.grading import CompactionCase, Verdict, grader
from pytest_ctxeval.core.messages import to_api
from pytest_ctxeval.reading.summary import normalize_ws
from pytest_ctxeval.reading.verbatim import machine_output

#: How many compaction generations drift looks at, at least (issue: k >= 3).
DRIFT_GENERATIONS = 3


def _no_judge() -> Verdict:
    return Verdict.ungraded("no judge configured for this run (LLM graders need a model backend)")


def _context_text(case: CompactionCase) -> str:
    """The post-compact context as the judge reads it. An engine run's is its post-compact
    messages as :func:`_transcript` writes them, the text the probes of a run that ends at this
    compaction judge too (one cached prefix for both requests); a transcript's compaction: its
    summary and what it kept (not what the model did next)."""
    if case.kept_messages is None and case.post_messages:
        text = _transcript(to_api(case.post_messages))
        if text:
            return text
    return (case.summary_message or case.summary) + ("\n\n" + case.kept_text if case.kept_text else "")


def _probe_context(case: CompactionCase) -> list:
    """The context the probes are judged on: the agent's when the run ends (the last summary and
    everything after it)."""
    final = case.final_context or case.post_messages
    return to_api(final) if final else [{"role": "user", "content": case.summary_message or case.summary}]


def _probes_judged(case: CompactionCase) -> str | None:
    """The context text the probes grader will judge for ``case`` in one judgement, or None when
    it judges none there (no probes, not the last compaction, one request per probe)."""
    if not case.expect.probes or not case.is_last or not getattr(case.judge, "combined", False):
        return None
    return _transcript(_probe_context(case))


def _shares_context(case: CompactionCase) -> bool:
    """The intent and probes judgements of ``case`` send the same post-compact context: both run,
    in one judgement each, on the same text. The intent request then marks it as a cached prefix
    (it is sent first: graders run in order) and the probes request reads it. Whether it is
    marked never changes a verdict (cassette keys ignore breakpoints)."""
    if case.judge is None or not {"intent_preservation", "probes"} <= set(case.graders):
        return False
    if not (person_messages(case.summarized) or case.expect.intent
            or any(getattr(m, "is_compact_summary", False) for m in case.summarized)):
        return False  # intent_preservation is n/a: nothing is sent before the probes
    return _context_text(case) == _probes_judged(case)


def _short(text: str, n: int = 90) -> str:
    text = normalize_ws(text)
    return text if len(text) <= n else text[: n - 1] + "…"


def _finish(case: CompactionCase, judgement, what: str) -> Verdict:
    evidence = {"judge": case.judge.label if case.judge is not None else None, **judgement.evidence()}
    if judgement.ungraded:
        return Verdict.ungraded(f"the judge gave no usable {what}: {judgement.error}", **evidence)
    reasons = [f"{what}: {judgement.score:g}/5 (votes {judgement.votes})"
               # said beside the score: a term-overlap count is no reading of meaning (review 4, G8)
               + (" by the offline heuristic judge (terms shared, not a reading of meaning: a model backend "
                  "judges meaning)" if _heuristic(case) else "")]
    reasons += [r for r in judgement.reasons if r]
    if judgement.lost:
        reasons.append("lost: " + "; ".join(_short(x, 120) for x in judgement.lost[:6]))
    if judgement.unstable:
        reasons.append(f"UNSTABLE: the votes spread {judgement.spread} points")
    score = round(judgement.score / 5, 4)
    return Verdict("pass" if judgement.passed else "fail", score, reasons, evidence)


#: A person's message is shown to the judge on one line, cut at this many characters.
MESSAGE_CHARS = 2_000


#: A typed lead whose line goes on into the first line of the pasted log: "… in the console: Warning:
#: Encountered two children with the same key …" (a log line, ``Label: message``, after the lead's colon).
_LEAD_THEN_LOG = re.compile(r"^(?P<lead>(?:\S+\s+){2,}\S*?:)\s+(?P<log>[A-Za-z][\w.]*:\s+\S.*)$")


def _as_typed(text: str) -> str:
    """What the person typed, on one line: pasted machine output after a typed lead (a stack trace,
    a console log) is replaced by a marker, so the judge weighs the request, not 80,000 characters of
    log lines (each of which the offline heuristic would count as a message of its own). The log's
    first line may stand on the lead's own line, after its colon (:data:`_LEAD_THEN_LOG`)."""
    lines = text.splitlines()
    for i in range(1, len(lines)):
        rest = "\n".join(lines[i:])
        if machine_output(rest):
            if (joined := _LEAD_THEN_LOG.match(lines[i - 1])) is not None:
                lines[i - 1] = joined.group("lead")
                rest = joined.group("log") + "\n" + rest
            text = "\n".join(lines[:i]) + f" [pasted output: {len(rest):,} characters]"
            break
    text = normalize_ws(text)
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"


def _heuristic(case: CompactionCase) -> bool:
    """Whether the judge is the offline heuristic (term overlap), which cannot read across languages."""
    return getattr(getattr(case.judge, "llm", None), "backend", None) == "offline"


def _across(what: str, pair: str) -> str:
    return (f"{what} is in {pair.split(' vs ')[0]} and the summary in {pair.split(' vs ')[1]}: the offline "
            "heuristic judge compares words, so it cannot judge across languages (a real judge reads both: "
            "run with a model backend)")


@grader("intent_preservation", kind="llm")
def intent_preservation(case: CompactionCase) -> Verdict:
    """The primary request, later corrections and constraints survive the compaction (0-5)."""
    if case.judge is None:
        return _no_judge()
    people = person_messages(case.summarized)
    earlier = [m for m in case.summarized if getattr(m, "is_compact_summary", False)]
    if not people and not earlier and not case.expect.intent:
        return Verdict.not_applicable("no person-typed message in the summarised span and no expect.intent")
    context = _context_text(case)
    untold: list[str] = []
    if _heuristic(case):  # a message in a language the context holds none of: its words say nothing
        kept_people = []
        for p in people:
            pair = cross_language(p.text, context)
            (untold.append(pair) if pair else kept_people.append(p))
        if untold and not kept_people and not earlier and not case.expect.intent:
            return Verdict.ungraded(_across(f"every person-typed message ({len(untold)})", untold[0]),
                                    judge=case.judge.label)
        people = kept_people
    messages = "\n".join(f"{i}. {_as_typed(p.text)}" for i, p in enumerate(people, start=1))
    if earlier:  # what the user said before an earlier compaction is only in its summary
        messages = ("(an earlier summary also stood for older messages; its text is part of the context)\n"
                    + messages) if messages else "(only an earlier summary; see the context)"
    judgement = case.judge.judge("intent_preservation", messages=messages, context=context,
                                 intent=case.expect.intent or "", share=_shares_context(case))
    verdict = _finish(case, judgement, "intent preserved")
    if untold:
        verdict.reasons.append(f"not judged offline: {plural(len(untold), 'message')} whose language the context holds "
                               f"none of ({untold[0]}); a real judge reads both")
    return verdict


@grader("probes", kind="llm")
def probes(case: CompactionCase) -> Verdict:
    """Probe questions answered from the post-compact context alone score at the bar or above."""
    if case.judge is None:
        return _no_judge()
    if not case.expect.probes:
        return Verdict.not_applicable("no probes in expect.probes")
    if not case.is_last:
        return Verdict.not_applicable("probes are asked after the last compaction of the run")
    # The agent's context when the run ends: the last summary and everything after it.
    context = _probe_context(case)
    if getattr(case.judge, "combined", False):
        return _probes_at_once(case, context)
    answers = case.judge.ask_many([(context, p.question) for p in case.expect.probes])
    items = []
    for probe, answer in zip(case.expect.probes, answers):
        text = answer.text if hasattr(answer, "text") else f"(no answer: {answer})"
        items.append(("probe", {"kind": probe.kind, "question": probe.question, "expected": probe.answer,
                                "answer": text}))
    judgements = case.judge.judge_many(items)
    return _probe_verdict(case, judgements, *_probe_rows(case.expect.probes, judgements,
                                                          [data["answer"] for _, data in items]))


def _transcript(context: list) -> str:
    """The context as the judge reads it: one line group per message, ``U:`` for the user's turn
    (with tool results), ``A:`` for the agent's (with tool calls)."""
    from pytest_ctxeval.core.messages import AssistantMessage, from_api, plain_text

    out = []
    for m in from_api(context, uuid_prefix="probe"):
        text = plain_text([m]).strip()
        if text:
            out.append(("A: " if isinstance(m, AssistantMessage) else "U: ") + text)
    return "\n".join(out)


def _probes_at_once(case: CompactionCase, context: list) -> Verdict:
    """Every probe of the context in one judgement (:mod:`pytest_ctxeval.grading.judge_items`): could an
    agent resuming from the context give each expected answer?"""
    from pytest_ctxeval.grading.judge_items import judge_items

    probes = case.expect.probes
    assert case.judge is not None  # the caller checked: llm graders are n/a without a judge
    judgements = judge_items(case.judge, "probes", len(probes), share=_shares_context(case), context=_transcript(context),
                             probes=[{"kind": p.kind, "question": p.question, "expected": p.answer} for p in probes])
    return _probe_verdict(case, judgements, *_probe_rows(probes, judgements, [None] * len(probes)))


def _probe_rows(probes: list, judgements: list, answers: list[str | None]) -> tuple[list, list, dict, list]:
    """Rows, failing reasons, scores by kind and ungraded notes of the probe judgements. ``answers``
    holds each probe's answer when a model answered it first (the per-question layout), or None
    when the judge read the context itself (one judgement of every probe)."""
    rows: list[dict[str, Any]] = []
    reasons: list[str] = []
    by_kind: dict[str, list[float]] = {}
    ungraded: list[str] = []
    for probe, j, answer in zip(probes, judgements, answers):
        row = {"kind": probe.kind, "question": probe.question, "answer": answer, "score": j.score,
               "votes": j.votes, "passed": j.passed, "error": j.error}
        if answer is None:
            row["reasons"] = j.reasons
        rows.append(row)
        if j.ungraded or j.score is None:
            ungraded.append(f"{probe.kind} probe '{_short(probe.question, 60)}': {j.error}")
            continue
        by_kind.setdefault(probe.kind, []).append(j.score)
        if not j.passed:
            said = " from the post-compact context," if answer is None else f": answered '{_short(answer, 100)}',"
            reasons.append(f"{probe.kind} probe '{_short(probe.question, 70)}' scored {j.score:g}/5{said} "
                           f"expected '{_short(probe.answer, 100)}'"
                           + (f" (lost: {'; '.join(_short(x, 60) for x in j.lost[:3])})" if j.lost else ""))
        if j.unstable:
            reasons.append(f"UNSTABLE: {probe.kind} probe votes spread {j.spread} points")
    return rows, reasons, by_kind, ungraded


def _probe_verdict(case, judgements, rows, reasons, by_kind, ungraded) -> Verdict:
    evidence: dict[str, Any] = {"judge": case.judge.label, "probes": rows,
                "by_kind": {k: round(mean(v), 3) for k, v in sorted(by_kind.items())}}
    scored = [j.score for j in judgements if j.score is not None]  # the judged ones
    if not scored:
        return Verdict.ungraded("no probe could be judged: " + "; ".join(ungraded), **evidence)
    score = round(mean(scored) / 5, 4)
    summary = (f"{sum(1 for j in judgements if j.passed)} of {plural(len(judgements), 'probe')} at the bar; by kind: "
               + ", ".join(f"{k} {v:.1f}/5" for k, v in evidence["by_kind"].items()))
    if ungraded:
        reasons.append(f"{plural(len(ungraded), 'probe')} ungraded: " + "; ".join(ungraded))
    failing = [r for r in reasons if not r.startswith("UNSTABLE")]
    if any(not j.ungraded and not j.passed for j in judgements):
        return Verdict("fail", score, [summary, *failing, *[r for r in reasons if r.startswith("UNSTABLE")]], evidence)
    return Verdict("pass", score, [summary, *reasons], evidence)


#: Words a bare reply opens with: an acknowledgement, a yes, thanks or "go on" (English and the
#: languages real sessions were seen in). A transcript that starts mid-work, or resumed, often opens
#: with one ("OK, that worked", "continue"), which asks for nothing.
_REPLY_WORDS = re.compile(
    # a status the person reports back ("merged", "pushed it") answers the agent the same way
    r"(?:ok(?:ay)?|yes|yeah|yep|sure|thanks?|thank you|great|perfect|nice|cool|fine|good|lgtm|done|continue|go on"
    r"|merged|pushed|deployed|committed|approved|released|shipped|installed"
    r"|proceed|s[ií]|vale|gracias|ja|danke|gut|weiter|oui|merci|sim|obrigad[oa]|да|спасибо|хорошо|ок|продолжай"
    r")(?![a-zA-Z\u00c0-\u024f\u0400-\u04ff])|(?:はい|ええ|うん|了解|ありがとう|あざす|続けて|好的|好|谢谢|嗯|继续|네|예|감사|계속)", re.IGNORECASE)
_NAMED = re.compile(r"\d|[/_.#@`]\w|[a-z][A-Z]")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def is_bare_reply(text: str) -> bool:
    """A message that only acknowledges or says go on ("ok thanks", "yes, please do", "OKでした。",
    "continue"): it opens with a reply word, is short (three words; in CJK text, five characters after
    the reply word) and names nothing (no digit, path or identifier). It asks for nothing, so it is
    no one's intent."""
    bare = re.sub(r"[^\w\s]", " ", text).strip()
    if not bare or not _REPLY_WORDS.match(bare) or _NAMED.search(text):
        return False
    if _CJK.search(bare):  # no spaces: what follows the reply word is short ("でした", "ございます")
        return len(bare[_REPLY_WORDS.match(bare).end():].replace(" ", "")) <= 5  # type: ignore[union-attr]
    return len(bare.split()) <= 3


def _intent(case: CompactionCase) -> str:
    """The intent a generation is held to: ``expect.intent``, else the first request and the latest
    request *as of that generation* (a request made after it cannot be in its summary). Each is a
    message that asks for something: bare replies ("yes", "go on", "merged": ``is_bare_reply``) are
    skipped, before the first (a transcript that starts mid-work opens with one) and after the
    latest (a reply answers the agent; what the person asked for is their request before it). A
    slash command's arguments are read with the command (``/gsd:discuss-phase 14``, not ``14``)."""
    if case.expect.intent:
        return case.expect.intent
    people = case.person_messages()
    if not people:
        return ""
    asking = [p for p in people if not is_bare_reply(p.text)]
    first = asking[0] if asking else people[0]
    latest = asking[-1] if asking else people[-1]
    parts = [f"First request: {_as_typed(_with_command(case, first))}"]
    if len(people) > 1 and latest is not first:
        parts.append(f"Latest request: {_as_typed(_with_command(case, latest))}")
    return "\n".join(parts)


#: The command a ``<command-args>`` message runs (its echo: ``<command-name>/gsd:plan</command-name>``).
_COMMAND_NAME = re.compile(r"<command-name>\s*(/?[^<\s]+)\s*</command-name>")


def _with_command(case: CompactionCase, person: Any) -> str:
    """The person's text, with the slash command it is the arguments of before it: "14" alone names
    nothing a summary would repeat; "/gsd:discuss-phase 14" is what was asked."""
    message = case.history[person.index] if 0 <= person.index < len(case.history) else None
    content = getattr(message, "content", None)
    if isinstance(content, str) and "<command-args>" in content and (name := _COMMAND_NAME.search(content)):
        return f"{name.group(1)} {person.text}"
    return person.text


#: The labels :func:`_intent` writes (not the person's words: no language of theirs).
_INTENT_LABELS = re.compile(r"^(?:First|Latest) request: ", re.MULTILINE)


def _request_and_next(case: CompactionCase) -> str:
    parts = [case.sections.body("request"), case.sections.body("next")]
    text = "\n".join(p for p in parts if p.strip())
    return text or case.summary


@grader("drift", kind="llm")
def drift(case: CompactionCase) -> Verdict:
    """Across at least three successive compactions the primary request and next step stay on the
    original intent; names the first generation that falls below the bar."""
    if case.judge is None:
        return _no_judge()
    if not case.is_last:
        return Verdict.not_applicable("drift is judged once, over all generations, at the last compaction")
    if case.summary_format is not None and not case.summary_format.summary:
        return Verdict.not_applicable(f"the {case.compactor} compactor writes no summary: there are no generations "
                                      "of a request and a next step to hold to the original intent")
    intent = _intent(case)
    if not intent:
        return Verdict.not_applicable("no person-typed message and no expect.intent to hold the generations to")
    generations = list(case.generations) or [case]
    note = ""
    while len(generations) < DRIFT_GENERATIONS and case.recompact is not None:
        nxt = case.recompact(generations[-1])
        if nxt is None:
            break
        generations.append(nxt)
    forced = len(generations) - len(case.generations or [case])
    if forced:
        note = f" ({forced} forced by re-compacting the last context)"
    if len(generations) < DRIFT_GENERATIONS:
        why = ("a transcript cannot be re-compacted" if case.recompact is None else
               f"compacting the last context again left it as it was: the {case.compactor} compactor found "
               "nothing to summarise")
        return Verdict.not_applicable(f"only {plural(len(generations), 'compaction generation')}; drift needs "
                                      f"{DRIFT_GENERATIONS} ({why})")
    # Each generation against the requests made before it: an early generation cannot be judged
    # against a request the person made after it (the forced ones share the last case's history).
    intents = [(_intent(g) if g.history or g.expect.intent else intent) or intent for g in generations]
    if getattr(case.judge, "combined", False):  # every generation in one judgement
        from pytest_ctxeval.grading.judge_items import judge_items

        judgements = judge_items(case.judge, "drift_all", len(generations), generations=[
            {"intent": gi, "summary": _request_and_next(g)} for g, gi in zip(generations, intents)])
    else:
        judgements = case.judge.judge_many([
            ("drift", {"generation": n, "generations": len(generations), "intent": gi,
                       "summary": _request_and_next(g)}) for n, (g, gi) in enumerate(zip(generations, intents), start=1)])
    if _heuristic(case):  # a generation written in another language than the request: not judged
        for n, (g, gi) in enumerate(zip(generations, intents)):
            pair = None if judgements[n].passed else cross_language(_INTENT_LABELS.sub("", gi), _request_and_next(g))
            if pair:
                judgements[n] = replace(judgements[n], score=None, passed=None, error=_across("the request", pair))
    rows = [{"generation": n, "score": j.score, "votes": j.votes, "lost": j.lost, "error": j.error}
            for n, j in enumerate(judgements, start=1)]
    evidence = {"judge": case.judge.label, "generations": rows}
    scored = [(n, j) for n, j in enumerate(judgements, start=1) if not j.ungraded]
    if not scored:
        return Verdict.ungraded("no generation could be judged: " + "; ".join(j.error or "" for j in judgements), **evidence)
    first_bad = next(((n, j) for n, j in scored if not j.passed), None)
    score = round(min(j.score for _, j in scored if j.score is not None) / 5, 4)
    trail = ", ".join(f"g{n} {j.score:g}" for n, j in scored)
    if first_bad is not None:
        n, j = first_bad
        lost = f"; lost: {'; '.join(_short(x, 80) for x in j.lost[:4])}" if j.lost else ""
        return Verdict("fail", score, [f"generation {n} of {len(generations)}{note} falls below the bar "
                                       f"({j.score:g}/5){lost}", f"scores by generation: {trail}",
                                       *[r for r in j.reasons if r][:3]], evidence)
    return Verdict("pass", score, [f"{all_of(len(generations), 'generation')}{note} stay on the original intent: {trail}"],
                   evidence)
