"""An error called fixed and verified when nothing ran again after it failed.

"``cargo clippy`` reported 3 errors — fixed; re-ran it and it now passes" tells the next context
window the build is green; if the session never ran the tool again after the failure, the errors may
still be there and the next window moves on over them. "Fixed by adding the import" only says what
was done and is not judged: a *verification* is, because it needs a run the transcript would hold.

:func:`unverified_reruns` reports an item of section 4 that tells a failing shell command's error
(the caller's ``tells``) and says, without hedging, that it was run again or now succeeds ("re-ran",
"now passes", "now builds", "builds cleanly", "verified", "no longer fails"), when no shell command
after the failure ran the same tool (its first word after ``cd …&&``, ``env`` and runners such as
``uv run``, ``npx``, ``pnpm``; ``lint:fix`` is ``lint``) without failing. An item that tells several
failures is judged only when none of them was run again. A subagent started after the failure may have run it
(its commands are not in this transcript): the claim is then not judged; nor is a test run (the last
test run decides those: :mod:`pytest_ctxeval.reading.test_claims`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.messages import tool_results, tool_uses

__all__ = ["RerunClaim", "unverified_reruns"]

_VERIFIED = re.compile(r"\b(?:re-?ran|re-?run|now (?:succeeds?|passes|pass|works|builds|compiles|runs|is clean)|"
                       r"succeeds? now|passes now|builds? (?:clean(?:ly)?|successfully)|compiles? cleanly|"
                       r"verified|confirmed (?:working|fixed|passing)|no longer fails?)\b", re.IGNORECASE)
_HEDGED = re.compile(r"\b(?:not|never|yet|should|would|could|will|expected|once|until|if|when|need\w*|pending|"
                     r"to (?:be )?(?:re-?run|verif)\w*|before|after (?:the|a) (?:fix|rerun))\b|n't\b|\?", re.IGNORECASE)
#: Runners whose next word names the tool (``uv run pytest``, ``npx tsc``, ``python -m mypy``).
_RUNNERS = frozenset({"uv", "uvx", "npx", "pnpm", "npm", "yarn", "bun", "bunx", "poetry", "pipx", "python", "python3",
                      "dotnet", "go", "cargo", "mise", "just", "make", "bundle", "rye", "pdm", "hatch", "sudo",
                      "env", "time", "exec"})
_FILLER = frozenset({"run", "exec", "-m", "x", "--"})
_DELEGATES = re.compile(r"^(?:Task|Agent|Skill|SlashCommand)$", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\s[—–]\s")


@dataclass(frozen=True)
class RerunClaim:
    item: str       # the item of section 4
    claim: str      # its sentence that says the command was run again or now succeeds
    command: str    # the failing command


def _tool(command: str) -> str:
    """The tool a shell command runs: ``cd x && uv run pytest -q`` -> ``uv pytest``."""
    last = re.split(r"&&|;|\|\|", command)
    segment = next((s for s in last if s.strip() and not re.match(r"\s*(?:cd|export|source|set)\b", s)), command)
    try:
        words = shlex.split(segment.split("|")[0])
    except ValueError:
        words = segment.split()
    words = [w for w in words if "=" not in w or w.startswith("-")]
    out: list[str] = []
    for w in words:
        if w in _FILLER or (out and w.startswith("-")):
            continue
        out.append(w.rsplit("/", 1)[-1])
        if out[-1] not in _RUNNERS or len(out) >= 3:
            break
    return " ".join(out)


def _runs(messages: list[Any]) -> list[tuple[int, str, bool]]:
    """Every shell command (index, tool, failed) and every delegate (index, "", False) of ``messages``."""
    failed: dict[str, bool] = {}
    for message in messages:
        for res in tool_results(message):
            failed[res.tool_use_id] = bool(res.is_error)
    out = []
    for i, message in enumerate(messages):
        for use in tool_uses(message):
            if _DELEGATES.search(use.name):
                out.append((i, "", False))
            elif isinstance(command := use.input.get("command"), str):
                out.append((i, _tool(command), failed.get(use.id, False)))
    return out


def unverified_reruns(items: list[str], failures: list[Any], messages: list[Any],
                      tells: Callable[[Any, str], bool]) -> list[RerunClaim]:
    """Items of section 4 (``items``) that call an error of ``failures`` (failing results of
    ``messages``, :class:`~pytest_ctxeval.reading.extract.FailingResult`) run again or passing when
    nothing ran its tool again without failing (the module's rules); ``tells(result, item)`` says
    whether the item tells the result's error."""
    claims = [(item, s) for item in items for s in _SENTENCE.split(item) if _VERIFIED.search(s) and not _HEDGED.search(s)]
    if not claims:
        return []
    runs = _runs(messages)

    def rerun(res: Any) -> bool:
        """Whether a subagent or a command of the same tool ran after ``res`` without failing."""
        tool = _same(_tool(str(res.input.get("command", ""))))
        return not tool or any(not t or (_same(t) == tool and not bad) for i, t, bad in runs if i > res.index)

    shell = [r for r in failures if isinstance(r.input.get("command"), str)]
    out: list[RerunClaim] = []
    for item, sentence in claims:
        if any(c.item == item for c in out):
            continue   # one reason an item: its first claim
        told = [r for r in shell if tells(r, item)]
        # an item telling several failures speaks of them all: one run again and passing verifies it
        if told and not any(r.tests for r in told) and not any(rerun(r) for r in told):
            out.append(RerunClaim(item, sentence.strip(), str(told[-1].input["command"])))
    return out


def _same(tool: str) -> str:
    """A tool without its script's variant: ``bun lint:fix`` and ``bun lint`` check the same thing."""
    return tool.split(":", 1)[0]
