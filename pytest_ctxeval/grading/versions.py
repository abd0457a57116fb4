"""What each Claude Code version promised about its compaction summaries: one table, read by the graders.

A real transcript is graded against what *its* version wrote: a behaviour the version did not have
(the analysis part stripped, a transcript path, a continuation instruction after ``/compact``) is
``n/a`` with a reason naming the version, never a failure. Each row cites the corpus files that show
it (``shared/corpus/``, see its README); ``tests/test_versions.py`` checks every cited file says what
its row claims.

A row has the version range where the behaviour was seen and the range where its absence was seen;
between them (no session of those versions has been read) the behaviour is *unknown*, and a grader
treats an unknown promise as not made (``n/a``), never as broken.

>>> promise("analysis_stripped", "2.1.49").state
'no'
>>> promise("analysis_stripped", "2.1.69").state
'yes'
>>> promise("analysis_stripped", "2.1.60").state
'unknown'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["Behaviour", "PROMISES", "Promise", "promise", "parse_version", "CONTINUATION_WORDINGS",
           "OPENING_SENTENCES"]

Version = tuple[int, ...]
State = Literal["yes", "no", "unknown"]


def _at(text: str) -> Version:
    """A version of the table below (each is readable: tests/test_versions.py reads every row)."""
    v = parse_version(text)
    if v is None:
        raise ValueError(f"not a version: {text!r}")
    return v


def parse_version(text: str | None) -> Version | None:
    """``"2.1.49"`` -> ``(2, 1, 49)``; None for a missing or unreadable version (engine runs write
    ``ctxeval``).

    >>> parse_version("2.1.177 (Claude Code)")
    (2, 1, 177)
    >>> parse_version("ctxeval") is None
    True
    """
    m = re.match(r"\s*v?(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    if not m:
        return None
    return tuple(int(g) for g in m.groups(default="0"))


@dataclass(frozen=True)
class Behaviour:
    """One row: a behaviour, the versions that have it, the versions seen without it, the evidence."""

    key: str
    description: str
    seen_from: str | None           # oldest version seen with it (None: never seen)
    seen_until: str | None          # newest version seen with it (None: every newer one too)
    absent_from: str | None         # oldest version seen without it
    absent_until: str | None        # newest version seen without it
    evidence: tuple[tuple[str, str], ...]   # (corpus file, what it shows)
    trigger: str | None = None      # "auto" / "manual" when the row concerns one trigger only

    def state(self, version: str | None) -> State:
        v = parse_version(version)
        if v is None:
            return "unknown"
        if self.seen_from and _at(self.seen_from) <= v and (
                self.seen_until is None or v <= _at(self.seen_until)):
            return "yes"
        if self.absent_from and _at(self.absent_from) <= v and (
                self.absent_until is None or v <= _at(self.absent_until)):
            return "no"
        return "unknown"

    def span(self) -> str:
        """``2.1.39 and later`` / ``2.0.60 - 2.1.56``."""
        if not self.seen_from:
            return "no version seen"
        return f"{self.seen_from} and later" if self.seen_until is None else f"{self.seen_from} - {self.seen_until}"


#: The continuation instruction of an automatic compaction, as each version words it (and manual
#: compactions from 2.1.150): "from where we left it off" (2.0.65), "from where we left off"
#: (2.1.39 - 2.1.56), "from where it left off ... Resume directly" (2.1.69+).
CONTINUATION_WORDINGS = re.compile(
    r"continue\s+(?:the\s+conversation\s+)?from\s+where\s+(?:it|we|you)\s+left\s+(?:it\s+)?off"
    r"|\bresume\s+directly\b|\bpick\s+up\s+the\s+last\s+task\b", re.IGNORECASE)

#: The preamble's second sentence: 2.0.x and 2.1.x word it differently.
OPENING_SENTENCES = {
    "2.0": "The conversation is summarized below:",
    "2.1": "The summary below covers the earlier portion of the conversation.",
}

_FASTHOOKS = "oneryalcin__fasthooks__sample_main_transcript.jsonl"
_MTHIS = "M-Thisness__M-Claude__97b0ffde-ece9-4977-91cb-5c8cdeabdf3f.jsonl"
_SLOPO = "TensorTemplar__slopometry__2.0.65-auto-legacy-summaries-0f112eb4.jsonl"
_SPOTTER = "marot__spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20__prefix-715.jsonl"
_PACKMIND = "PackmindHub__context-evaluator__2.1.45-auto-8ecab05f.jsonl"
_FSM_MANUAL = "FSM1__cipher-box__2.1.49-manual-rejects-12f1f541.jsonl"
_MEMENTOR56 = "fenv-org__mementor__2.1.50-56-auto-resumed-81b5b775.jsonl"
_INSIGHTS69 = "melagiri__code-insights__2.1.69-two-auto-toolsearch-3cbc097a.jsonl"
_INSIGHTS87 = "melagiri__code-insights__2.1.87-manual-244k-cc9e8aa5.jsonl"
_MONO150 = "roo-oliv__monodreams__2.1.150-manual-compact-args-469e58d2.jsonl"
_MONO183 = "roo-oliv__monodreams__2.1.177-183-manual-resumed-d9b49d30.jsonl"

PROMISES: dict[str, Behaviour] = {b.key: b for b in (
    Behaviour("analysis_stripped", "the stored summary holds only the 'Summary:' part (the 'Analysis:' "
              "scratchpad is removed); older versions keep 'Analysis:' then 'Summary:' by design",
              seen_from="2.1.69", seen_until=None, absent_from="2.0.60", absent_until="2.1.56",
              evidence=((_MTHIS, "2.0.60 keeps Analysis:"), (_MEMENTOR56, "2.1.56 keeps Analysis:"),
                        (_INSIGHTS69, "2.1.69 writes Summary: only"), (_MONO183, "2.1.183 writes Summary: only"))),
    Behaviour("transcript_path", "the summary message ends with 'read the full transcript at: <path>' "
              "(automatic and manual compactions)",
              seen_from="2.1.39", seen_until=None, absent_from="2.0.60", absent_until="2.0.76",
              evidence=((_FASTHOOKS, "2.0.76 manual: no path"), (_SLOPO, "2.0.65 auto: no path"),
                        (_SPOTTER, "2.1.39 auto: path"), (_FSM_MANUAL, "2.1.49 manual: path"))),
    Behaviour("continuation_auto", "an automatic compaction's summary message ends with the instruction to "
              "continue without asking or recapping (wordings in CONTINUATION_WORDINGS)",
              seen_from="2.0.65", seen_until=None, absent_from=None, absent_until=None, trigger="auto",
              evidence=((_SLOPO, "2.0.65: 'from where we left it off'"),
                        (_PACKMIND, "2.1.45: 'from where we left off'"),
                        (_INSIGHTS69, "2.1.69: 'from where it left off ... Resume directly'"))),
    Behaviour("continuation_manual", "a manual /compact's summary message also carries the continuation "
              "instruction", seen_from="2.1.150", seen_until=None, absent_from="2.0.60", absent_until="2.1.87",
              trigger="manual",
              evidence=((_FSM_MANUAL, "2.1.49 manual: none"), (_INSIGHTS87, "2.1.87 manual: none"),
                        (_MONO150, "2.1.150 manual: 'Resume directly'"))),
    Behaviour("opening_2_1", "the preamble reads 'The summary below covers the earlier portion of the "
              "conversation.' (2.0.x: 'The conversation is summarized below:')",
              seen_from="2.1.39", seen_until=None, absent_from="2.0.60", absent_until="2.0.76",
              evidence=((_FASTHOOKS, "2.0.76: 'summarized below:'"), (_SPOTTER, "2.1.39: 'covers the earlier "
                                                                                 "portion'"))),
    Behaviour("task_tools", "open work is tracked with TaskCreate/TaskUpdate (older versions: TodoWrite); "
              "pending_tasks reads both", seen_from="2.1.45", seen_until=None, absent_from="2.0.65",
              absent_until="2.0.65",
              evidence=((_SLOPO, "2.0.65: TodoWrite"), (_PACKMIND, "2.1.45: TaskCreate/TaskUpdate"))),
    Behaviour("preserved_segment", "compactMetadata.preservedSegment: messages kept verbatim after the summary "
              "(graded as kept messages)", seen_from="2.1.150", seen_until=None, absent_from="2.0.60",
              absent_until="2.1.149",
              evidence=((_MONO150, "2.1.150: preservedSegment"),
                        ("melagiri__code-insights__2.1.149-auto-queue-ac8d5915.jsonl", "2.1.149: none"))),
)}


@dataclass(frozen=True)
class Promise:
    """A behaviour's state for one version, with a reason that names the version and the evidence."""

    behaviour: Behaviour
    version: str | None
    state: State

    @property
    def made(self) -> bool:
        return self.state == "yes"

    def reason(self) -> str:
        b = self.behaviour
        who = f"Claude Code {self.version}" if self.version else "this session's Claude Code (its version is not recorded)"
        where = b.evidence[0][0] if b.evidence else "the corpus"
        if self.state == "no":
            until = (" and later" if b.absent_until is None else
                     "" if b.absent_until == b.absent_from else f" - {b.absent_until}")
            absent = f"; not in {b.absent_from}{until}" if b.absent_from else ""
            return (f"{who} does not promise this. The behaviour: {b.description}. Seen in "
                    f"{b.span()}{absent} (pytest_ctxeval/grading/versions.py; e.g. {where})")
        if self.state == "unknown":
            unread = f"no session of {self.version} read yet" if self.version else "no version to look it up by"
            return f"not known whether {who} promises this. The behaviour: {b.description}. Seen in {b.span()}; {unread}"
        return f"{who} promises this ({b.span()})"


def promise(key: str, version: str | None) -> Promise:
    """The state of behaviour ``key`` for Claude Code ``version`` (``yes`` / ``no`` / ``unknown``)."""
    behaviour = PROMISES[key]
    return Promise(behaviour, version, behaviour.state(version))
