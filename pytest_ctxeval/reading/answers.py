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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.messages import ToolResultBlock, UserMessage, result_text, tool_uses
from .extract import significant_tokens

__all__ = ["TypedAnswer", "typed_answers", "answer_told", "MIN_WORDS"]

#: A typed answer has at least this many words.
MIN_WORDS = 3
#: Of a typed answer's significant words, this share (two at least) in one line of the summary tells
#: it: a paraphrase keeps the decision's words ("staff and finance (finance read-only)"), and a line
#: that tells the person's next answer to the same question in fuller words tells this one too.
TOLD_SHARE = 0.5

_HEAD = re.compile(r"^\s*(?:Error:\s*)?User has answered your questions?:\s*", re.IGNORECASE)
_TAIL = re.compile(r"\.?\s*You can now continue with the user'?s answers in mind\.?\s*$", re.IGNORECASE | re.DOTALL)
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


def typed_answers(messages: Sequence[Any]) -> list[TypedAnswer]:
    """The answers the person typed to the agent's AskUserQuestion calls in ``messages``, in order."""
    options = None
    out = []
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
            body = _TAIL.sub("", text[head.end():])
            for m in _PAIR.finditer(body):
                notes = _NOTES.match(m.group("rest") or "")
                answer = (notes.group("notes") if notes and notes.group("notes").strip() else m.group("a")).strip()
                question = m.group("q").strip()
                if _typed(answer, asked.get(question) if question in asked else None):
                    out.append(TypedAnswer(question, answer, i))
    return out


def answer_told(answer: str, text: str) -> bool:
    """Whether ``text`` (a summary, the kept messages) tells ``answer``: verbatim (whitespace and case
    aside), or :data:`TOLD_SHARE` of its significant words (two at least) in one line."""
    flat = " ".join(answer.split()).lower()
    if flat and flat in " ".join(text.split()).lower():
        return True
    wanted = set(significant_tokens(answer))
    if not wanted:
        return False
    for line in text.splitlines():
        have = set(significant_tokens(line))
        hit = len(wanted & have)
        if hit >= min(2, len(wanted)) and hit / len(wanted) >= TOLD_SHARE:
            return True
    return False
