"""A file section 3 calls new that the session only read, or deleted that the session wrote and kept.

"``src/auth/loader.py`` (NEW)" tells the next context window the file did not exist before this
work, so it may rewrite it from scratch or look for its history in vain. The transcript settles it
when the session read the file (its ``Read`` returned the file's lines, so it was there) before any
shell command that names it and before any subagent was started (a subagent's writes are not in
the transcript), and no tool of the session wrote, edited or moved it (:class:`~pytest_ctxeval.
reading.file_changes.FileLedger`): then a mark that calls it new, right beside its name ("(NEW)",
"(new file)", "— created", "Created ``x.py``", "New file: ``x.py``"), is wrong. A mark further
away ("Created a helper in ``x.py``", "new tests in ``x.py``") speaks of something else and is not
judged.

The other way round, "``src/auth/tokens.py`` — deleted" tells the next window a file the session
wrote and kept is gone: it will not look there, or it will write it again. :func:`deleted_claims`
reports a changed file (the ledger's, changed at the session's end) that every line of section 3
naming it calls deleted or removed right beside its name ("``x.py`` (deleted)", "``x.py`` — removed",
"Deleted ``x.py``"; not "``x.py`` — Removed orphan comments", a change inside it), with no change word
("created", "edited", "moved"…) on the line,
when the ledger does not hold it as deleted (``git rm``) and no tool input of the session names
it, or a folder of its path, with a word that removes (``rm``, ``delete``, ``clean``, ``mv``…): a
removal this reader does not follow leaves the claim unjudged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..core.messages import result_text, tool_results, tool_uses

__all__ = ["DeletedClaim", "NewClaim", "deleted_claims", "new_claims", "only_read", "removal_named", "StateClaim",
           "state_claims"]

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
            if name not in line:
                continue
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
            if name not in line:   # most lines name none of the files: no pattern to run
                continue
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


# -- a file the session wrote and kept, told as deleted ----------------------------------------------

@dataclass(frozen=True)
class DeletedClaim:
    line: str
    path: str


_DELETED = re.compile(r"\b(?:deleted|removed)\b", re.IGNORECASE)
#: A mark right after the file's name that calls the file itself gone: "(deleted)", "— removed", ": DELETED
#: from the repo", not "— Removed orphan comments" (a change inside it).
_GONE_AFTER = re.compile(r"^[`*_\"']*\s*(?:\(\s*(?:deleted|removed)\b[^)]*\)|[—–:-]+\s*(?:file\s+)?(?:deleted|removed)\b"
                         r"(?=\s*(?:$|[(.,;:—–-]|(?:from|with|via|by|in|as|entirely|completely|too|as well)\b)))", re.IGNORECASE)
#: A mark right before it: "Deleted `x.py`", "Removed file: `x.py`".
_DELETED_BEFORE = re.compile(r"\b(?:deleted|removed)(?:\s+(?:the\s+)?files?)?\s*:?\s*[`*_\"']*$", re.IGNORECASE)
_CHANGE_WORD = re.compile(r"\b(?:created|written|wrote|edited|modified|updated|added|rewritten|renamed|moved|new|"
                          r"changed|fixed|refactored|replaced|extended|implemented)\b", re.IGNORECASE)
_REMOVING = re.compile(r"\b(?:rm|delete\w*|remov\w*|clean\w*|trash|move)\b", re.IGNORECASE)
#: A shell command that removes or moves files (after ``sudo``, ``env``, a ``cd … &&`` split off).
_REMOVES = re.compile(r"\s*(?:sudo\s+|command\s+)?(?:rm|rmdir|unlink|mv|trash|del|erase|Remove-Item|git\s+(?:rm|clean|mv)|"
                      r"find\b.*\s-delete\b)\b", re.IGNORECASE)
_SEGMENT = re.compile(r"&&|\|\||;|\||\n")


def removal_named(path: str, messages: Iterable[Any]) -> bool:
    """Whether a shell command of the session removes or moves something that names ``path`` (its
    file name or one of its last three folders below the home folder), or a subagent was asked, in
    one sentence, to remove it: a removal the ledger does not follow (a folder removed whole, a
    subagent's work)."""
    norm = path.replace("\\", "/")
    parts = [p for p in norm.split("/") if p]
    low = 2 if parts[:1] in (["Users"], ["home"]) else 1 if parts[:1] == ["root"] else 0   # /Users/me/… names no project folder
    names = [parts[-1]] + [p for p in parts[max(low, len(parts) - 4):-1] if len(p) > 2] if parts else []

    def names_it(text: str) -> bool:
        return any(re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w-])", text) for n in names)

    for message in messages:
        for use in tool_uses(message):
            if isinstance(command := use.input.get("command"), str):
                if any(_REMOVES.match(seg) and names_it(seg) for seg in _SEGMENT.split(command)):
                    return True
            elif use.name in _DELEGATES and isinstance(prompt := use.input.get("prompt"), str):
                if any(_REMOVING.search(sent) and names_it(sent) for sent in re.split(r"[.\n]", prompt)):
                    return True
    return False


def _called_gone(path: str, line: str) -> bool:
    """Whether ``line`` marks the file itself as deleted right beside its name."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    for m in re.finditer(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", line):
        if _GONE_AFTER.match(line[m.end():]) or _DELETED_BEFORE.search(_path_start(line, m.start())):
            return True
    return False


def deleted_claims(body: str, changed: Iterable[str], how: dict[str, str], messages: list[Any],
                   mentioned: Any) -> list[DeletedClaim]:
    """Lines of ``body`` (section 3) calling a changed file deleted when it is not (the module's rules);
    ``mentioned(path, text)`` tells whether ``text`` names ``path``."""
    if not _DELETED.search(body):
        return []
    lines = [ln for ln in body.split("\n") if ln.strip()]
    out = []
    for path in changed:
        if re.search(r"delet|remov", how.get(path, ""), re.IGNORECASE):
            continue
        name = path.replace("\\", "/").rsplit("/", 1)[-1]
        naming = [ln for ln in lines if name in ln and mentioned(path, ln)]
        if not naming or not all(_called_gone(path, ln) and not _CHANGE_WORD.search(_DELETED.sub(" ", ln)) for ln in naming):
            continue
        if removal_named(path, messages):
            continue
        out.append(DeletedClaim(naming[0].strip(), path))
    return out
