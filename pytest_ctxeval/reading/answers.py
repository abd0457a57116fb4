"""What the person typed in answer to the agent's questions (AskUserQuestion), and whether a
summary still tells it (review 4, G20).

Claude Code returns the person's answers as the tool's result (``User has answered your questions:
"Which roles may list codes?"="staff and the finance team, but finance read-only". You can now
continue with the user's answers in mind.``; later versions add ``user notes: …`` after an answer
typed as free text). An option the person picked is Claude Code's label; an answer that is none of
the question's option labels (nor several of them joined) is what the person typed, often a decision
or a constraint ("finance read-only"). It is not one of the person-typed messages (the prompt asks
for the user messages that are not tool results, and the messages keep their numbering), but
Claude Code's own summaries list it among them ("User chose: …"), and a summary that drops it loses
the person's latest decision. So ``verbatim_user_messages`` requires each typed answer to be *told*
somewhere in the summary: verbatim, or in other words (half its words or more in one line: "User
chose: staff and finance (finance read-only)").

Read conservatively: an answer of fewer than :data:`MIN_WORDS` words ("Hybrid", "Yes, both"), and,
when the call's options are unknown, one of fewer than four words or one ending in
"(Recommended)", is a choice, not typed text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.messages import ToolResultBlock, UserMessage, result_text, tool_uses
from .extract import significant_tokens

__all__ = ["Choice", "Misreport", "TypedAnswer", "choices", "misreported_choices", "typed_answers", "answer_told", "MIN_WORDS"]

#: A typed answer has at least this many words.
MIN_WORDS = 3
#: Of a typed answer's significant words, this share (two at least) in one line of the summary tells
#: it: a paraphrase keeps the decision's words ("staff and finance (finance read-only)"), and a line
#: that tells the person's next answer to the same question in fuller words tells this one too.
TOLD_SHARE = 0.5

#: The result's lead and tail: "User has answered your questions: … You can now continue with the
#: user's answers in mind." (2.1.x to 2.1.149), "Your questions have been answered: … You can now
#: continue with these answers in mind." (2.1.150 on).
_HEAD = re.compile(r"^\s*(?:Error:\s*)?(?:User has answered your questions?|Your questions? (?:has|have) been answered):\s*",
                   re.IGNORECASE)
_TAIL = re.compile(r"\.?\s*You can now continue with (?:the user'?s|these|this|the) answers? in mind\.?\s*$",
                   re.IGNORECASE | re.DOTALL)
#: One '"question"="answer"' pair, up to the next pair, a note or the end.
_PAIR = re.compile(r'"(?P<q>.+?)"="(?P<a>.*?)"(?P<rest>(?:\s+(?:user notes|selected markdown):.*?)?)'
                   r'(?=,\s*"[^"]+"="|\s*$)', re.DOTALL)
_NOTES = re.compile(r"\s+user notes:\s*(?P<notes>.*?)(?:\s+selected markdown:.*)?$", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class TypedAnswer:
    """An answer the person typed: the question, their words, and the history index of the
    message that carries it."""

    question: str
    answer: str
    index: int


def _options(messages: Sequence[Any]) -> dict[str, dict[str, list[str]]]:
    """AskUserQuestion call id -> question text -> its option labels."""
    out: dict[str, dict[str, list[str]]] = {}
    for message in messages:
        for use in tool_uses(message):
            if use.name != "AskUserQuestion" or not isinstance(use.input.get("questions"), list):
                continue
            out[use.id] = {str(q.get("question", "")).strip(): [str(o.get("label", "")).strip().lower()
                                                              for o in q.get("options") or [] if isinstance(o, dict)]
                           for q in use.input["questions"] if isinstance(q, dict)}
    return out


def _typed(answer: str, labels: list[str] | None) -> bool:
    words = answer.split()
    if len(words) < MIN_WORDS:
        return False
    low = answer.strip().lower()
    if labels:
        parts = [p.strip() for p in low.split(",")]
        return low not in labels and not all(p in labels for p in parts)
    return len(words) >= 4 and not low.endswith("(recommended)")


def _answered(messages: Sequence[Any]) -> Iterator[tuple[int, dict[str, list[str]], re.Match[str]]]:
    """Each question-and-answer pair of the AskUserQuestion results in ``messages``: the index of
    the message that holds it, the options the call offered (question -> labels), the pair."""
    options = None
    for i, message in enumerate(messages):
        if not isinstance(message, UserMessage) or isinstance(message.content, str):
            continue
        for block in message.content:
            if not isinstance(block, ToolResultBlock):
                continue
            text = result_text(block)
            head = _HEAD.match(text[:200])
            if head is None:
                continue
            if options is None:
                options = _options(messages)
            asked = options.get(block.tool_use_id, {})
            for m in _PAIR.finditer(_TAIL.sub("", text[head.end():])):
                yield i, asked, m


def typed_answers(messages: Sequence[Any]) -> list[TypedAnswer]:
    """The answers the person typed to the agent's AskUserQuestion calls in ``messages``, in order."""
    out = []
    for i, asked, m in _answered(messages):
        notes = _NOTES.match(m.group("rest") or "")
        answer = (notes.group("notes") if notes and notes.group("notes").strip() else m.group("a")).strip()
        question = m.group("q").strip()
        if _typed(answer, asked.get(question) if question in asked else None):
            out.append(TypedAnswer(question, answer, i))
    return out


def answer_told(answer: str, text: str) -> bool:
    """Whether ``text`` (a summary, the kept messages) tells ``answer``: verbatim (whitespace and case
    aside), or :data:`TOLD_SHARE` of its significant words (two at least) in one line that holds every
    number of it ("back to finding 8" does not tell "back to finding 7")."""
    flat = " ".join(answer.split()).lower()
    if flat and flat in " ".join(text.split()).lower():
        return True
    wanted = set(significant_tokens(answer))
    if not wanted:
        return False
    numbers = set(re.findall(r"\d+(?:\.\d+)?", answer))
    for line in text.splitlines():
        have = set(significant_tokens(line))
        hit = len(wanted & have)
        if hit >= min(2, len(wanted)) and hit / len(wanted) >= TOLD_SHARE \
                and numbers <= set(re.findall(r"\d+(?:\.\d+)?", line)):
            return True
    return False


# -- an option the person did not pick, told as their choice ---------------------------------------

@dataclass(frozen=True)
class Choice:
    """One question the person answered with option labels: the labels they picked and the others."""

    question: str
    chosen: tuple[str, ...]   # lower-cased, without "(Recommended)"
    others: tuple[str, ...]


@dataclass(frozen=True)
class Misreport:
    line: str        # the summary's line
    told: str        # the option it names, as the summary wrote it
    choice: Choice


_RECOMMENDED = re.compile(r"\s*\(recommended\)\s*$", re.IGNORECASE)
#: Words that make a line tell a choice ("User chose: …", "Selected …", "**Approach:** …").
_CHOICE_WORDS = re.compile(r"\b(?:chose|chosen|choose|choosing|choice|picked|selected|select(?:ion)?|opted|went with|"
                           r"answered|answers?|decided|decision|approach|preferred|prefers)\b", re.IGNORECASE)
#: Words just before an option that set it aside ("not the share dialog", "rather than Worktree").
_SET_ASIDE = re.compile(r"(?:\bnot|\bno|rather than|instead of|\bover|\brejected|\bdeclined|\bvs\.?|\bversus|"
                        r"\bor|\bnor|\bexcept|\bwithout|\binstead)\W{0,4}(?:the\s+|an?\s+)?[\"'“‘`*]*$", re.IGNORECASE)


def _core(label: str) -> str:
    return _RECOMMENDED.sub("", " ".join(label.split())).strip().lower()


def _distinct(label: str) -> bool:
    """An option name a line cannot hold by chance: two words or more, or one of eight letters or more."""
    return len(label.split()) >= 2 or len(label) >= 8


def choices(messages: Sequence[Any]) -> list[Choice]:
    """The questions the person answered by picking options of an AskUserQuestion call, in order."""
    out = []
    for _i, asked, m in _answered(messages):
        labels = [_core(lab) for lab in asked.get(m.group("q").strip(), [])]
        answer = _core(m.group("a"))
        picked = [lab for lab in labels if lab and (lab == answer or lab in [_core(p) for p in answer.split(",")])]
        if picked:
            out.append(Choice(m.group("q").strip(), tuple(picked),
                              tuple(lab for lab in labels if lab and lab not in picked)))
    return out


def _named(label: str, line: str) -> re.Match[str] | None:
    return re.search(rf"(?<![\w-]){re.escape(label)}(?![\w-])", line, re.IGNORECASE)


def misreported_choices(text: str, asked: list[Choice]) -> list[Misreport]:
    """Lines of ``text`` that tell one of a question's options the person did not pick as the choice:
    the line speaks of a choice (chose, picked, selected, approach…), names that option (two words or
    more, or a long word) and not the one they picked, and does not set it aside ("not X", "rather
    than X", "X or Y"). An option the person picked for any question of the session is never
    misreported (the line may tell that other answer), nor one that is part of a picked one."""
    if not asked:
        return []
    picked_anywhere = {c for ch in asked for c in ch.chosen}
    out = []
    for line in text.split("\n"):
        if not _CHOICE_WORDS.search(line):
            continue
        for ch in asked:
            if any(_named(c, line) for c in ch.chosen):
                continue
            for other in ch.others:
                if not _distinct(other) or other in picked_anywhere or any(other in c or c in other for c in picked_anywhere):
                    continue
                m = _named(other, line)
                if m is None or _SET_ASIDE.search(line[:m.start()]):
                    continue
                out.append(Misreport(line.strip(), m.group(0), ch))
                break
            else:
                continue
            break
    return out
