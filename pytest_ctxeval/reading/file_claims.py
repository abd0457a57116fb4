"""A file section 3 calls new that the session only read.

"``src/auth/loader.py`` (NEW)" tells the next context window the file did not exist before this
work, so it may rewrite it from scratch or look for its history in vain. The transcript settles it
when the session read the file (its ``Read`` returned the file's lines, so it was there) before any
shell command that names it and before any subagent was started (a subagent's writes are not in
the transcript), and no tool of the session wrote, edited or moved it (:class:`~pytest_ctxeval.
reading.file_changes.FileLedger`): then a mark that calls it new, right beside its name ("(NEW)",
"(new file)", "— created", "Created ``x.py``", "New file: ``x.py``"), is wrong. A mark further
away ("Created a helper in ``x.py``", "new tests in ``x.py``") speaks of something else and is not
judged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..core.messages import result_text, tool_results, tool_uses

__all__ = ["NewClaim", "new_claims", "only_read", "StateClaim", "state_claims"]

_WRITE_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit")
#: Tools that hand work to a subagent, whose own tool calls this transcript does not hold.
_DELEGATES = ("Task", "Agent")
_AFTER = re.compile(r"^[`*_\"']*\s*(?:\(\s*(?:NEW|new(?: file)?|created|newly created)\s*\)|[—–:-]\s*(?:NEW\b|new file\b|"
                    r"(?:newly )?created\b))")
_BEFORE = re.compile(r"(?:\b(?:[Cc]reated|CREATED|[Nn]ew file|NEW FILE|NEW)\s*:?\s*[`*_\"']*)$")


@dataclass(frozen=True)
class NewClaim:
    line: str
    path: str
    evidence: str   # the first line the session's Read of it returned


def only_read(messages: Iterable[Any], changed: Iterable[str]) -> dict[str, str]:
    """Files a ``Read`` of the session returned lines of, before any shell command naming them and
    before any subagent, that no edit tool touched (even failed) and that are not among ``changed``
    (the ledger's changed and moved files), with the first line read."""
    calls: dict[str, str] = {}
    written, out = set(changed), {}
    delegated, shell = False, []
    for message in messages:
        for use in tool_uses(message):
            if use.name in _DELEGATES:
                delegated = True   # a subagent's writes are not in this transcript: later reads prove nothing
            if use.name == "Bash":
                shell.append(str(use.input.get("command", "")))
            path = use.input.get("file_path") or use.input.get("notebook_path")
            if not isinstance(path, str):
                continue
            name = path.replace("\\", "/").rsplit("/", 1)[-1]
            if use.name in _WRITE_TOOLS:
                written.add(path)
            elif use.name == "Read" and not delegated and not any(name in c for c in shell):
                calls[use.id] = path   # read before any command that could have made it
        for res in tool_results(message):
            path = calls.get(res.tool_use_id)
            if path is None or res.is_error or path in out:
                continue
            text = result_text(res)
            first = next((ln for ln in text.split("\n") if re.match(r"^\s*\d+[→\t]", ln)), "")
            if first:   # the numbered lines of a file, not a "does not exist" note
                out[path] = re.sub(r"^\s*\d+[→\t]", "", first).strip() or "(an empty first line)"
    return {p: e for p, e in out.items() if p not in written}


def new_claims(body: str, files: dict[str, str]) -> list[NewClaim]:
    """Lines of ``body`` that mark one of ``files`` (:func:`only_read`) as new right beside its name."""
    out = []
    for line in body.split("\n"):
        for path, evidence in files.items():
            name = path.replace("\\", "/").rsplit("/", 1)[-1]
            for m in re.finditer(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", line):
                if _AFTER.match(line[m.end():]) or _BEFORE.search(_path_start(line, m.start())):
                    out.append(NewClaim(line.strip(), path, evidence))
                    break
            else:
                continue
            break
    return out


def _path_start(line: str, at: int) -> str:
    """The text before the path the name at ``at`` ends (``Created `src/a.py``` for ``a.py``)."""
    start = at
    while start > 0 and re.match(r"[\w./~@-]", line[start - 1]):
        start -= 1
    return line[:start]


# -- the mirror: a changed file called deleted, pre-existing or unchanged (review 5, #6) ---------------

#: Said of a file, right beside its name: it is gone ("(deleted)", "— removed", "then deleted again").
#: "removed the unused import" speaks of the file's content, so the word must end the clause.
_GONE = re.compile(r"(?<!\bnot )(?<!\bnever )\b(?:deleted|removed)(?:\s+(?:again|afterwards|later|entirely|"
                   r"(?:from|off) (?:disk|the (?:repo|repository|project|tree)))){0,2}\s*(?:[),;.]|$)", re.IGNORECASE)
_GONE_BEFORE = re.compile(r"(?:\b(?:[Dd]eleted|DELETED|[Rr]emoved|REMOVED)\s*:?\s*[`*_\"']*)$")
#: The file was there before the session: false of a file its Write created.
_BEFORE_SESSION = re.compile(r"\bpre-?existing\b|\balready (?:existed|there|present)\b|\bexisting file\b", re.IGNORECASE)
#: The session did not change it: false of a changed file (unless the clause also tells a change).
_UNTOUCHED = re.compile(r"\bonly read\b|\bread[- ]only\b|\b(?:not|never) (?:been )?(?:modified|changed|edited|touched)\b|"
                        r"\bunchanged\b|\buntouched\b|\bno (?:changes|edits)\b", re.IGNORECASE)
_A_CHANGE = re.compile(r"\b(?:modif|chang|edit|add|creat|updat|fix|writ|wrote|rewr|renam|refactor|replac|implement)"
                       r"\w*", re.IGNORECASE)


@dataclass(frozen=True)
class StateClaim:
    line: str
    path: str
    claim: str      # "deleted", "pre-existing" or "unchanged"


def _clause(rest: str) -> str:
    """What a line says of the file named just before ``rest``: a parenthesis right after the name,
    or the words after a dash or colon up to the end of the sentence."""
    rest = re.sub(r"^[`*_\"']+", "", rest).lstrip()
    if rest.startswith("("):
        depth, out = 0, []
        for c in rest:
            depth += (c == "(") - (c == ")")
            out.append(c)
            if depth == 0:
                break
        return "".join(out)
    if m := re.match(r"^[—–:-]+\s*([^.;\n]*)", rest):
        return m.group(1)
    return ""


def state_claims(body: str, files: dict[str, tuple[bool, bool]]) -> list[StateClaim]:
    """Lines of ``body`` that say one of ``files`` is deleted, pre-existing or unchanged right beside
    its name, where the transcript says otherwise. ``files``: changed path -> ``(created, deletable)``:
    its Write created it (so "pre-existing" is false); some command or subagent could have deleted it
    (so "deleted" is not judged)."""
    out = []
    for line in body.split("\n"):
        for path, (created, deletable) in files.items():
            name = path.replace("\\", "/").rsplit("/", 1)[-1]
            for m in re.finditer(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", line):
                clause = _clause(line[m.end():])
                claim = ""
                if not deletable and (_GONE.search(clause) or _GONE_BEFORE.search(_path_start(line, m.start()))):
                    claim = "deleted"
                elif created and _BEFORE_SESSION.search(clause):
                    claim = "pre-existing"
                elif _UNTOUCHED.search(clause) and not _A_CHANGE.search(_UNTOUCHED.sub(" ", clause)):
                    claim = "unchanged"
                if claim:
                    out.append(StateClaim(line.strip(), path, claim))
                    break
    return out
