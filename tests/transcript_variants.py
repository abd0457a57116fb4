"""The record types and format variants a set of Claude Code session files shows, with the first and
last Claude Code version each was seen in.

The same survey runs over the shared corpus (real sessions) and over the sessions
:mod:`transcript_eras` writes, so a test can check that the builder produces every variant the
corpus shows (``tests/test_transcript_variants.py``). Run it as a script to print the table::

    python tests/transcript_variants.py "$CTXEVAL_SHARED/corpus"

A variant is a short name: ``record:<type>``, ``system:<subtype>``, ``boundary:...`` (how a
compact_boundary names what it follows, its trigger, each ``compactMetadata`` key),
``summary-text:...`` (the wording of the compaction summary), ``attachment:<type>``,
``progress:<data.type>``, ``queue-operation:<operation>``, content blocks (``user-block:``,
``assistant-block:``, ``tool_result-block:``), ``toolUseResult:<tool>:<shape>``, record flags
(``user:isMeta`` ...), top-level fields (``field:<type>.<key>``), text the client writes
(``client-text:...``) and tree shapes (``tree:...``: repeated uuids, missing parents, forks).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Iterable, Iterator

#: Record types that are not metadata: everything else without a uuid is a metadata record.
_CONVERSATION = {"user", "assistant", "system", "attachment", "progress"}
#: Fields every conversation record carries in every version: not worth a row each.
_BASE_FIELDS = {"type", "uuid", "parentUuid", "sessionId", "timestamp", "version", "cwd", "userType",
                "isSidechain", "message", "gitBranch"}
#: Text the client writes into user records (not typed by the person), by the marker that shows it.
CLIENT_TEXT = {
    "command-name": "<command-name>", "command-args": "<command-args>",
    "local-command-stdout": "<local-command-stdout>", "caveat": "Caveat: The messages below were generated",
    "system-reminder": "<system-reminder>", "interrupted": "[Request interrupted by user]",
    "interrupted-for-tool-use": "[Request interrupted by user for tool use]",
    "bash-input": "<bash-input>", "bash-stdout": "<bash-stdout>", "task-notification": "<task-notification>",
    "ide-opened-file": "<ide_opened_file>", "rejected-tool-use": "The user doesn't want to proceed with this tool use",
    # the lines Claude Code appends after a <task-notification>, pointing at the task's output
    "task-notification-transcript": "</task-notification>\nFull transcript available at:",
    "task-notification-output": "</task-notification>\nRead the output file to retrieve the result:",
}
_TOOL_FAMILY = re.compile(r"^mcp__")


def version_key(v: str | None) -> tuple[int, ...]:
    """``"2.1.49"`` -> ``(2, 1, 49)``; an unknown version sorts first."""
    if not v:
        return ()
    return tuple(int(x) if x.isdigit() else 0 for x in v.split("."))


@dataclass
class Seen:
    first: str | None
    last: str | None
    count: int = 0
    files: int = 0


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    out = []
    for b in content if isinstance(content, list) else ():
        if isinstance(b, dict):
            if b.get("type") == "text" and isinstance(b.get("text"), str):
                out.append(b["text"])
            elif b.get("type") == "tool_result":
                out.append(_text_of(b.get("content")))
    return "\n".join(out)


def _tool_result_shape(value: Any) -> str:
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        kind = value.get("type")
        return f"object:{kind}" if isinstance(kind, str) else "object"
    return type(value).__name__


def record_variants(rec: dict[str, Any], tools: dict[str, str]) -> Iterator[str]:
    """The variants one record shows (``tools``: tool_use id -> tool name, filled as records pass)."""
    rtype = rec.get("type")
    yield f"record:{rtype}"
    if rtype not in _CONVERSATION:
        if rtype == "summary":
            yield "summary:leafUuid" if "leafUuid" in rec else "summary:no-leafUuid"
        elif rtype == "file-history-snapshot":
            yield f"file-history-snapshot:isSnapshotUpdate={str(bool(rec.get('isSnapshotUpdate'))).lower()}"
        elif rtype == "queue-operation":
            yield f"queue-operation:{rec.get('operation')}" + ("+content" if "content" in rec else "")
        elif rtype == "last-prompt":
            yield "last-prompt:" + ("leafUuid" if "leafUuid" in rec else "no-leafUuid")
        return
    for key in rec:
        if key not in _BASE_FIELDS:
            yield f"field:{rtype}.{key}"
    for flag in ("isMeta", "isCompactSummary", "isVisibleInTranscriptOnly", "isApiErrorMessage"):
        if rec.get(flag) is True:
            yield f"{rtype}:{flag}"
    if rec.get("isSidechain") is True:
        yield f"{rtype}:isSidechain"
    if rtype == "system":
        yield f"system:{rec.get('subtype')}"
        if rec.get("subtype") == "compact_boundary":
            meta = rec.get("compactMetadata") if isinstance(rec.get("compactMetadata"), dict) else {}
            yield f"boundary:trigger={meta.get('trigger')}"
            for key in meta:
                yield f"boundary:compactMetadata.{key}"
    elif rtype == "progress":
        data = rec.get("data") if isinstance(rec.get("data"), dict) else {}
        yield f"progress:{data.get('type')}"
    elif rtype == "attachment":
        att = rec.get("attachment") if isinstance(rec.get("attachment"), dict) else {}
        yield f"attachment:{att.get('type')}"
    elif rtype in ("user", "assistant"):
        msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
        content = msg.get("content")
        if rtype == "user":
            yield "user:content=string" if isinstance(content, str) else "user:content=blocks"
        for b in content if isinstance(content, list) else ():
            if not isinstance(b, dict):
                continue
            yield f"{rtype}-block:{b.get('type')}"
            if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                tools[b["id"]] = str(b.get("name"))
            if b.get("type") == "tool_result":
                inner = b.get("content")
                yield "tool_result:content=" + ("string" if isinstance(inner, str) else
                                                "absent" if inner is None else "blocks")
                if b.get("is_error") is True:
                    yield "tool_result:is_error"
                for x in inner if isinstance(inner, list) else ():
                    if isinstance(x, dict):
                        yield f"tool_result-block:{x.get('type')}"
        if rtype == "assistant":
            for key in msg:
                yield f"field:assistant.message.{key}"
            if msg.get("model") == "<synthetic>":
                yield "assistant:model=<synthetic>"
        if rtype == "user":
            text = _text_of(content)
            for name, marker in CLIENT_TEXT.items():
                if marker in text and not rec.get("isCompactSummary"):
                    yield f"client-text:{name}"
            if rec.get("isCompactSummary"):
                yield from _summary_text(text)
            if "toolUseResult" in rec:
                ids = [b.get("tool_use_id") for b in content if isinstance(b, dict)] if isinstance(content, list) else []
                name = next((tools[i] for i in ids if i in tools), "unknown")
                name = "mcp" if _TOOL_FAMILY.match(name) else name
                yield f"toolUseResult:{name}:{_tool_result_shape(rec['toolUseResult'])}"


def _summary_text(text: str) -> Iterator[str]:
    yield "summary-text:analysis+summary" if re.search(r"^Analysis:", text, re.M) else "summary-text:summary-only"
    if "conversation is summarized below" in text:
        yield "summary-text:opening=summarized-below"
    if "summary below covers the earlier portion" in text:
        yield "summary-text:opening=summary-below-covers"
    if re.search(r"read the full transcript at: ", text):
        yield "summary-text:transcript-path"


def file_variants(path: Path) -> Iterator[tuple[str, str | None]]:
    """``(variant, version)`` for every record of one file, then the file's tree shapes. A record
    without a version (queue operations, snapshots, metadata) takes the newest version met before
    it in the file, else the first after it."""
    records: list[dict[str, Any]] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        if raw.strip():
            try:
                rec = json.loads(raw)
            except ValueError:
                continue
            if isinstance(rec, dict):
                records.append(rec)
    versions: list[str | None] = []
    current = next((r["version"] for r in records if isinstance(r.get("version"), str)), None)
    for r in records:
        current = r["version"] if isinstance(r.get("version"), str) else current
        versions.append(current)
    tools: dict[str, str] = {}
    for rec, v in zip(records, versions):
        for name in record_variants(rec, tools):
            yield name, v
    yield from _tree_variants(records, versions)


def _tree_variants(records: list[dict[str, Any]], versions: list[str | None]) -> Iterator[tuple[str, str | None]]:
    line_of: dict[str, int] = {}
    for i, r in enumerate(records):
        uid = r.get("uuid")
        if isinstance(uid, str):
            if uid in line_of:
                yield "tree:repeated-uuid", versions[i]
            else:
                line_of[uid] = i
        elif r.get("type") in _CONVERSATION:
            yield f"tree:{r.get('type')}-without-uuid", versions[i]
    children: dict[str, int] = {}
    summary_parent: dict[str, int] = {}
    has_boundary = False
    for i, r in enumerate(records):
        parent = r.get("parentUuid")
        if r.get("type") == "system" and r.get("subtype") == "compact_boundary":
            has_boundary = True
            logical = r.get("logicalParentUuid", "<absent>")
            if logical == "<absent>":
                yield "boundary:logicalParentUuid=absent", versions[i]
            elif logical is None:
                yield "boundary:logicalParentUuid=null", versions[i]
            elif logical not in line_of:
                yield "boundary:logicalParentUuid=not-in-file", versions[i]
            elif line_of[logical] > i:
                yield "boundary:logicalParentUuid=written-after-it", versions[i]
            else:
                yield "boundary:logicalParentUuid=in-file", versions[i]
            if parent is not None:
                yield "boundary:parentUuid=set", versions[i]
            if i == 0 or not any(records[j].get("type") in ("user", "assistant") and not records[j].get("isSidechain")
                                 for j in range(i)):
                yield "boundary:first-in-file", versions[i]
            continue
        if r.get("isCompactSummary"):
            if isinstance(parent, str) and records[line_of.get(parent, i)].get("subtype") == "compact_boundary":
                summary_parent[parent] = i
            else:
                yield "summary:without-boundary", versions[i]
        if isinstance(parent, str):
            if parent not in line_of and r.get("type") in ("user", "assistant", "attachment", "system"):
                yield "tree:parent-not-in-file", versions[i]
            elif r.get("type") in ("user", "assistant") and not r.get("isSidechain"):
                children[parent] = children.get(parent, 0) + 1
    if any(n > 1 for n in children.values()):
        yield "tree:fork", versions[-1]
    if has_boundary and not summary_parent:
        yield "tree:boundary-without-summary", versions[-1]


def survey(paths: Iterable[Path]) -> dict[str, Seen]:
    """Every variant the files show, with the first and last version seen and how many files show it."""
    out: dict[str, Seen] = {}
    for path in paths:
        in_file: set[str] = set()
        for name, v in file_variants(path):
            seen = out.setdefault(name, Seen(v, v))
            if v and (seen.first is None or version_key(v) < version_key(seen.first)):
                seen.first = v
            if v and (seen.last is None or version_key(v) > version_key(seen.last)):
                seen.last = v
            seen.count += 1
            if name not in in_file:
                in_file.add(name)
                seen.files += 1
    return out


HEADER = ("# Format variants of the shared corpus\n\n"
          "Written by `python tests/transcript_variants.py \"$CTXEVAL_SHARED/corpus\" > "
          "tests/fixtures/transcript_variants.md`; the builder (`tests/transcript_eras.py`) must show every "
          "variant listed here, and `tests/test_transcript_variants.py` checks this table against the corpus when "
          "it is present.\n\n")


def read_table(path: Path) -> dict[str, Seen]:
    """The rows of a table written by :func:`table` (the fixture)."""
    out: dict[str, Seen] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `(.+)` \| (\S+) \| (\S+) \| (\d+) \| (\d+) \|$", line)
        if m:
            first, last = (None if v == "?" else v for v in m.group(2, 3))
            out[m.group(1)] = Seen(first, last, int(m.group(5)), int(m.group(4)))
    return out


def table(seen: dict[str, Seen]) -> str:
    """A Markdown table: variant, first and last version, files, records."""
    rows = ["| variant | first version | last version | files | records |", "|---|---|---|---|---|"]
    for name in sorted(seen):
        s = seen[name]
        rows.append(f"| `{name}` | {s.first or '?'} | {s.last or '?'} | {s.files} | {s.count} |")
    return "\n".join(rows)


if __name__ == "__main__":
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    if folder is None or not folder.is_dir():
        sys.exit("usage: python tests/transcript_variants.py FOLDER_OF_JSONL_FILES")
    print(HEADER + table(survey(sorted(folder.glob("*.jsonl")))))
