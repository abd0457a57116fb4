"""Code section 3 shows under one file that the session wrote into, or read from, another.

Section 3 lists each file with "a snippet of the code"; the next context window edits the file the
item names with what the snippet shows. A summariser that swaps two snippets (the ``[dependencies]``
written to ``crates/lib/Cargo.toml`` shown under the workspace's ``Cargo.toml``) sends it to the
wrong file. The transcript settles it when the session holds the text of both files: what it wrote
(``Write``, ``Edit``, ``MultiEdit``, ``NotebookEdit``) and what it read (``Read``'s numbered lines).

:func:`misattributed_code` reports a code block under an item of section 3 whose lead names one file
of the session (a sub-item naming no file under it keeps that file), when none of the block's lines (of :data:`MIN_LINE` characters or more) is in that
file's text and two or more of them (half the block's such lines at least) are in the text of one
other file of the session. A file whose text the session never showed, or that a subagent started
after the session first touched it may have changed unseen; a block none of whose lines the session
holds (the summariser's own sketch, a command); an item naming several files; a line both files
hold; code a document holds (a plan's pattern, a README's example, which source files follow): none
is judged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..core.messages import result_text, tool_results, tool_uses

__all__ = ["FileTexts", "Misattributed", "file_texts", "misattributed_code", "MIN_LINE"]

#: A code line shorter than this (``}``, ``import os``, ``pub mod app;``) may be in any file.
MIN_LINE = 20
_NUMBERED = re.compile(r"^\s*\d+(?:→|\t)", re.MULTILINE)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
#: A document holds code that source files follow (a plan's pattern, a README's example), not a swap.
_DOCUMENT = re.compile(r"\.(?:md|mdx|markdown|rst|txt|adoc|org)$|/\.claude/", re.IGNORECASE)
_DELEGATES = re.compile(r"^(?:Task|Agent)$")


@dataclass(frozen=True)
class Misattributed:
    item: str         # the item's lead line
    told: str         # the file the item names
    shown: str        # the file whose text the block's lines are from
    lines: tuple[str, ...]


def _flat(text: str) -> str:
    return " ".join(text.split())


@dataclass
class FileTexts:
    """What the session showed of each file: its text, where it first showed it, and where a subagent
    started (whose own edits this transcript does not hold)."""

    text: dict[str, str] = field(default_factory=dict)
    first: dict[str, int] = field(default_factory=dict)
    delegated: list[int] = field(default_factory=list)

    def partial(self, path: str) -> bool:
        """A subagent started after the session first showed ``path``: it may have changed it unseen."""
        return any(i > self.first.get(path, 0) for i in self.delegated)


def file_texts(messages: Iterable[Any]) -> FileTexts:
    """Each file the session wrote or read: the text it showed of it (written, replaced, read),
    whitespace-flattened line by line and joined."""
    parts: dict[str, list[str]] = {}
    reads: dict[str, str] = {}
    out = FileTexts()
    for i, message in enumerate(messages):
        for use in tool_uses(message):
            if _DELEGATES.search(use.name):
                out.delegated.append(i)
            path = use.input.get("file_path") or use.input.get("notebook_path")
            if not isinstance(path, str):
                continue
            out.first.setdefault(path, i)
            if use.name == "Read":
                reads[use.id] = path
                continue
            got = [use.input.get(k) for k in ("content", "new_string", "old_string", "new_source")]
            got += [e.get(k) for e in use.input.get("edits") or [] if isinstance(e, dict) for k in ("new_string", "old_string")]
            parts.setdefault(path, []).extend(g for g in got if isinstance(g, str))
        for res in tool_results(message):
            path = reads.get(res.tool_use_id)
            if path is not None and not res.is_error:
                parts.setdefault(path, []).append(_NUMBERED.sub("", result_text(res)))
    out.text = {p: "\n".join(_flat(line) for text in texts for line in text.split("\n")) for p, texts in parts.items()}
    return out


def _base(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _by_name(line: str, body: str, paths: list[str], mentioned: Callable[[str, str], bool]) -> list[str]:
    """The file a line names by a bare name several files share ("`Cargo.toml` (workspace root)"):
    the one namesake the section names, and never by a longer path (the others are named so)."""
    flat = body.replace("\\", "/")
    found = [p for p in paths
             if re.search(rf"(?<![\w./-]){re.escape(_base(p))}(?![\w-])", line) and mentioned(p, body)
             and not re.search(rf"(?<![\w.-]){re.escape('/'.join(p.replace(chr(92), '/').split('/')[-2:]))}(?![\w-])", flat)]
    return found if len(found) == 1 else []


def _blocks(body: str, paths: list[str], mentioned: Callable[[str, str], bool]) -> list[tuple[str, str, list[str]]]:
    """(item lead, the one file it names, the code lines of a block under it) of ``body``."""
    out: list[tuple[str, str, list[str]]] = []
    code: list[str] = []
    item, told, depth, inside = "", "", 0, False
    for line in body.split("\n"):
        if _FENCE.match(line):
            if inside and told and code:
                out.append((item, told, code))
            inside, code = not inside, []
            continue
        if inside:
            code.append(line)
        elif _BULLET.match(line) and line.strip():
            indent = len(line) - len(line.lstrip())
            near = [p for p in paths if _base(p) in line]   # a path is named by its file name at least
            named = [p for p in near if mentioned(p, line)] or _by_name(line, body, near, mentioned)
            if named or indent <= depth or not told:   # a sub-item naming no file speaks of its item's file
                item, told, depth = line.strip(), (named[0] if len(named) == 1 else ""), indent
    return out


def misattributed_code(body: str, files: FileTexts, mentioned: Callable[[str, str], bool]) -> list[Misattributed]:
    """Code blocks of ``body`` (section 3) shown under a file whose text is elsewhere (the module's
    rules); ``files`` is :func:`file_texts`, ``mentioned(path, line)`` whether a line names a path."""
    if "```" not in body and "~~~" not in body:
        return []
    texts = files.text
    paths = list(texts)
    out = []
    for item, told, code in _blocks(body, paths, mentioned):
        own = texts.get(told, "")
        lines = [f for line in code if len(f := _flat(line)) >= MIN_LINE and re.search(r"[A-Za-z]", f)]
        if not own or not lines or files.partial(told) or any(f in own for f in lines):
            continue
        for other in paths:
            if other == told or _DOCUMENT.search(other):
                continue
            hits = [f for f in lines if f in texts[other]]
            if len(hits) >= 2 and 2 * len(hits) >= len(lines):
                out.append(Misattributed(item, told, other, tuple(hits)))
                break
    return out
