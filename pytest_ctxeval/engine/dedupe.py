"""Tier 2: dedupe (003:82-106, 004:135-141).

* **Unchanged file reads.** A Read of the same path, offset and limit whose file has not changed
  since returns ``FILE_UNCHANGED_STUB`` instead of the content (the FileReadTool's
  ``readFileState``): a 5,000-line file read three times costs its tokens once. "Unchanged" is
  modelled as: no Edit/Write/MultiEdit/NotebookEdit of that path since the earlier read, the same
  scripted content (a scenario that returns different content says the file changed on disk), and
  the earlier read's result still in the context and still visible (after a compaction, or once
  microcompact cleared it or ``cache_edits`` deleted it, the stub would point at nothing, so the
  read is served in full).
* **Media for summarisation.** Image and document blocks become ``[image]`` / ``[document]``
  before a compaction request (``stripImagesFromMessages``, 003:96-106).

The read state also feeds the post-compaction attachments (the most recently read files,
003:594-599, 000:156: "re-inject the recently read files from the readFileState cache"). It is one
state for both: a read whose result microcompact cleared stays in it (the file is still the most
recently read one and is re-attached after the next compaction); the "earlier result still
visible" condition applies only to the unchanged-file stub (:meth:`FileReadState.check_read`). A
compaction clears the state (004:516) except for reads whose results the compaction kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..reading.extract import EDIT_TOOLS
from ..core.messages import (
    AssistantMessage, DocumentBlock, ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage,
)

__all__ = ["FILE_UNCHANGED_STUB", "ReadRecord", "FileReadState", "strip_media", "media_stripped"]

#: 003:91-94 (src/tools/FileReadTool/prompt.ts).
FILE_UNCHANGED_STUB = ("File unchanged since last read. The content from the earlier Read tool_result in this "
                       "conversation is still current — refer to that instead of re-reading.")


@dataclass
class ReadRecord:
    path: str
    offset: Any
    limit: Any
    version: int
    content: str
    tool_use_id: str
    timestamp: datetime


@dataclass
class FileReadState:
    """What was read, at which file version (``readFileState``)."""

    versions: dict[str, int] = field(default_factory=dict)
    reads: dict[tuple[str, str, str], ReadRecord] = field(default_factory=dict)

    @staticmethod
    def _key(use: ToolUseBlock) -> tuple[str, str, str] | None:
        path = use.input.get("file_path")
        if not isinstance(path, str) or not path:
            return None
        return (path, repr(use.input.get("offset")), repr(use.input.get("limit")))

    def note_edit(self, use: ToolUseBlock, failed: bool) -> None:
        """An edit tool ran: the file's version moves on (unless the edit failed)."""
        path = use.input.get("file_path") or use.input.get("notebook_path")
        if use.name in EDIT_TOOLS and isinstance(path, str) and not failed:
            self.versions[path] = self.versions.get(path, 0) + 1

    def check_read(self, use: ToolUseBlock, content: str, *, in_context: set[str],
                   hidden: tuple[set[str], ...] = ()) -> ReadRecord | None:
        """The earlier read this Read repeats unchanged (so its result can be the stub), or None.

        ``in_context``: the ids of the results in the context; ``hidden``: sets of ids whose
        content the model no longer sees (cleared by microcompact, deleted by ``cache_edits``). The
        stub refers the model to the earlier result, so that result must be there and visible."""
        key = self._key(use)
        if key is None:
            return None
        earlier = self.reads.get(key)
        if (earlier is not None and earlier.version == self.versions.get(key[0], 0)
                and earlier.content == content and earlier.tool_use_id in in_context
                and not any(earlier.tool_use_id in ids for ids in hidden)):
            return earlier
        return None

    def record_read(self, use: ToolUseBlock, content: str, timestamp: datetime) -> None:
        key = self._key(use)
        if key is not None:
            self.reads[key] = ReadRecord(key[0], use.input.get("offset"), use.input.get("limit"),
                                         self.versions.get(key[0], 0), content, use.id, timestamp)

    def forget(self, tool_use_ids: set[str]) -> None:
        """Drop reads whose results left the context (a compaction replaced them, 004:516)."""
        if not tool_use_ids:
            return  # the common case, every request: no copy of the read state
        self.reads = {k: r for k, r in self.reads.items() if r.tool_use_id not in tool_use_ids}

    def recent_files(self) -> list[ReadRecord]:
        """The latest read of each path, most recent first."""
        latest: dict[str, ReadRecord] = {}
        for record in self.reads.values():
            if record.path not in latest or record.timestamp >= latest[record.path].timestamp:
                latest[record.path] = record
        return sorted(latest.values(), key=lambda r: r.timestamp, reverse=True)


def strip_media(content: str | list[Any]) -> str | list[Any]:
    """Image/document blocks -> ``[image]`` / ``[document]`` text, also inside tool results."""
    if isinstance(content, str):
        return content
    out: list[Any] = []
    for block in content:
        if isinstance(block, ImageBlock):
            out.append(TextBlock(text="[image]"))
        elif isinstance(block, DocumentBlock):
            out.append(TextBlock(text="[document]"))
        elif isinstance(block, ToolResultBlock) and not isinstance(block.content, str):
            out.append(block.model_copy(update={"content": strip_media(block.content)}))
        else:
            out.append(block)
    return out


def media_stripped(messages: list[Any]) -> list[Any]:
    """Copies of ``messages`` with media replaced, for a summarisation request (003:96-106)."""
    out = []
    for m in messages:
        if isinstance(m, (UserMessage, AssistantMessage)) and not isinstance(m.content, str):
            stripped = strip_media(m.content)
            out.append(m.model_copy(update={"content": stripped}) if stripped != m.content else m)
        else:
            out.append(m)
    return out
