"""Work a summary calls done that the session never did: a push, a commit, a pull request.

"All changes are committed and pushed" tells the next context window the work is safe on the remote;
if nothing was pushed it moves on and the work is lost or never reviewed. These three are settled by
the transcript, because each needs a command the session would hold: ``git push`` (or ``gh pr
create``, which pushes), ``git commit``, ``gh pr create`` or a GitHub tool that opens a pull request.
:func:`unbacked_claims` reports a sentence that says, in the past and with the assistant as its
subject, that the work was pushed, committed or that a pull request was opened, when:

* no shell command or tool call of the session does it, and no text of the session names such a
  command (the person's own ``!git push`` in the terminal, earlier compactions included);
* no subagent, skill or slash command ran (their own commands are not in this transcript) and the
  person never spoke of doing it themselves ("I pushed", "merged");
* the sentence neither hedges, negates nor looks ahead ("not pushed yet", "ready to push", "will
  commit", "before pushing"), nor gives it to someone else ("the user pushed").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..core.messages import tool_uses

__all__ = ["DoneClaim", "unbacked_claims"]

#: What a claim says was done, the words that claim it, and the commands or tools that do it.
_KINDS = {
    "pushed": (re.compile(r"\b(?:pushed|force[- ]pushed)\b", re.IGNORECASE),
               re.compile(r"\bgit\b[^\n;|&]*\bpush\b|\bgh\s+pr\s+(?:create|merge)\b|\bgt\s+(?:submit|ss)\b")),
    "committed": (re.compile(r"\bcommitted\b", re.IGNORECASE),
                  re.compile(r"\bgit\b[^\n;|&]*\bcommit\b|\bgt\s+(?:create|modify|submit)\b")),
    "opened a pull request": (
        re.compile(r"\b(?:opened|created|raised|submitted)\s+(?:a\s+|the\s+|an?\s+new\s+)?(?:draft\s+)?(?:PR|pull request)\b",
                   re.IGNORECASE),
        re.compile(r"\bgh\s+pr\s+create\b|\bgt\s+submit\b")),
}
#: Tools whose own commands this transcript does not hold.
_DELEGATES = re.compile(r"^(?:Task|Agent|Skill|SlashCommand)$|^mcp__", re.IGNORECASE)
_NOT_A_CLAIM = re.compile(
    r"\b(?:not|never|yet|no|will|would|should|could|can|need\w*|ready|before|after|once|until|if|when|whether|"
    r"to\s+(?:be\s+)?(?:push|commit|open)\w*|user|person|they|you|he|she|reviewer|CI|bot|upstream|previous(?:ly)?|"
    r"earlier|already|pending|plan\w*|pre-existing|awaiting|wait\w*)\b|n't\b|\?", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_ANY_CLAIM = re.compile(r"pushed|committed|\bPR\b|pull request", re.IGNORECASE)


@dataclass(frozen=True)
class DoneClaim:
    sentence: str
    what: str      # "pushed", "committed", "opened a pull request"


def _commands(messages: Iterable[Any]) -> tuple[list[str], bool]:
    """Every shell command and tool name of the session, and whether a delegate ran."""
    out, delegated = [], False
    for message in messages:
        for use in tool_uses(message):
            if _DELEGATES.search(use.name):
                delegated = True
            out.append(use.name + " " + str(use.input.get("command", "")))
    return out, delegated


def unbacked_claims(text: str, messages: list[Any], person: list[str] | Callable[[], list[str]],
                    session_text: str = "") -> list[DoneClaim]:
    """Sentences of ``text`` that call work done (see the module's rules) which no command of
    ``messages`` did; ``person`` is what the person typed (or a function that reads it, called only
    when a sentence claims something), ``session_text`` the session's whole text (a command the
    person ran in the terminal's bash mode, or one named anywhere, leaves it unjudged)."""
    if not _ANY_CLAIM.search(text):
        return []
    claims = []
    for sentence in _SENTENCE.split(text):
        if not sentence.strip() or _NOT_A_CLAIM.search(sentence):
            continue
        for what, (says, _does) in _KINDS.items():
            if says.search(sentence):
                claims.append(DoneClaim(sentence.strip(), what))
                break
    if not claims:
        return []
    commands, delegated = _commands(messages)
    if delegated:
        return []
    said = " ".join(person() if callable(person) else person).lower()
    out = []
    for claim in claims:
        _says, does = _KINDS[claim.what]
        if any(does.search(c) for c in commands) or does.search(session_text) or \
                any(w in said for w in ("push", "commit", "merged", " pr ")):
            continue
        if claim.what == "opened a pull request" and any("pull_request" in c.lower() for c in commands):
            continue
        out.append(claim)
    return out
