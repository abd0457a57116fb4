"""Tier 1: the tool-result budget (003:30-80, 003:392-470, 004:104-125).

Two levels, decided per request over the results the model has not seen yet:

1. **per tool**: a result larger than its tool's threshold (Bash/PowerShell 30,000 chars, Grep
   20,000, McpAuth 10,000, a tool-declared limit, else 50,000; Read never) is written to
   ``<session dir>/tool-results/<tool_use_id>.txt`` and replaced by a message with its size, the
   path and a 2,000-character preview (``maybePersistLargeToolResult``);
2. **per message**: when the results of one user message (parallel calls) still add up to more
   than 200,000 chars, the largest (then newest) fresh results are persisted until it fits
   (``enforceToolResultBudget``).

Decisions are **frozen** (``ContentReplacementState``, 003:437-470): a result replaced when first
seen is re-replaced with the byte-identical string on every later request; a result not replaced
when first seen is never replaced later; only unseen results are candidates. So the request prefix
stays byte-stable and the prompt cache keeps working.

Where we differ: Claude Code replaces the result in its message history; the engine keeps the
original in its context and transcript (nothing is lost) and applies the frozen replacement to the
request *view*. The model sees exactly the same bytes.

Files are created exclusively (``open(..., "x")``, the seed's ``flag: 'wx'``): an existing file is
not rewritten, only previewed. Content over 64 MB is cut with a visible marker. The tool_use_id
becomes the file name only when it is a safe id; anything else is neutralised to a hash, so no id
can reach outside ``tool-results/``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable

from ..core.config import EngineConfig
from ..core.messages import ImageBlock, DocumentBlock, TextBlock, ToolResultBlock, UserMessage, result_text

__all__ = [
    "ContentReplacementState", "PersistedResult", "ToolResultStore", "large_result_message",
    "apply_budget", "budget_message", "safe_file_stem", "BudgetDecision", "TRUNCATION_MARKER", "read_limit_error", "read_line_cap",
]

# A file-name check, not the scenario id rule: ids from any transcript reach here, and a longer safe
# id may keep its name (128 keeps well under every file system's 255-byte limit with ".txt").
_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
TRUNCATION_MARKER = "\n[ctxeval: output truncated at {limit} bytes; {dropped} bytes not kept]\n"


def safe_file_stem(tool_use_id: str) -> str:
    """``tool_use_id`` when it is a safe file name (letters, digits, ``_``, ``-``), else
    ``unsafe-<sha256>``: path separators, ``..``, NUL or an absolute path can never escape.

    >>> safe_file_stem("toolu_01ABC")
    'toolu_01ABC'
    >>> safe_file_stem("../../etc/passwd").startswith("unsafe-")
    True
    """
    if _SAFE_ID.match(tool_use_id):
        return tool_use_id
    return "unsafe-" + hashlib.sha256(tool_use_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True)
class PersistedResult:
    tool_use_id: str
    path: Path
    size: int            # characters of the full output
    preview: str
    created: bool        # False when the file already existed (not rewritten)
    truncated: bool
    shown: str = ""      # the path the model is told (see ToolResultStore); the real one if empty


def _human(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f}MB"
    if size >= 1024:
        return f"{round(size / 1024)}KB"
    return f"{size} chars"


def large_result_message(result: PersistedResult) -> str:
    """What the model sees instead of a persisted result (003:62-68, 004:149)."""
    return ("<persisted-output>\n"
            f"Output too large ({_human(result.size)}). Full output saved to: {result.shown or result.path}\n"
            f"Preview (first {len(result.preview)} chars):\n{result.preview}\n"
            "[Use the Read tool to see the full output]\n"
            "</persisted-output>")


class ToolResultStore:
    """``<session dir>/tool-results/``: exclusive-create files, never overwritten.

    ``shown_root`` is the folder named to the model in place of the real one, so what the model
    reads (and the token counts, summaries and cassette keys that follow from it) does not depend
    on where the session folder happens to be on disk."""

    def __init__(self, session_dir: str | Path, config: EngineConfig, shown_root: str | None = None):
        self.root = Path(session_dir) / "tool-results"
        self.config = config
        self.shown_root = shown_root

    def persist(self, tool_use_id: str, content: str) -> PersistedResult:
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / f"{safe_file_stem(tool_use_id)}.txt"
        data = content.encode("utf-8", "surrogatepass")
        limit = self.config.persisted_max_bytes
        truncated = len(data) > limit
        if truncated:
            # The marker takes room inside the limit; size it until the count it states is exact.
            marker = b""
            for _ in range(3):
                kept = limit - len(marker)
                marker = TRUNCATION_MARKER.format(limit=limit, dropped=len(data) - kept).encode()
            data = data[: limit - len(marker)] + marker
        created = True
        try:
            with path.open("xb") as fh:  # exclusive create: the seed's flag 'wx'
                fh.write(data)
        except FileExistsError:
            created = False  # already persisted (an earlier request or run): preview only
        preview = content[: self.config.preview_chars]
        shown = f"{self.shown_root}/{path.name}" if self.shown_root else str(path)
        return PersistedResult(tool_use_id, path, len(content), preview, created, truncated, shown)


@dataclass
class ContentReplacementState:
    """Frozen replacement decisions (003:437-470): ids seen, and the replacement for each id that
    was replaced when first seen."""

    seen_ids: set[str] = field(default_factory=set)
    replacements: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class BudgetDecision:
    tool_use_id: str
    reason: str          # "tool_threshold" | "message_budget"
    size: int
    path: Path

    @property
    def detail(self) -> str:
        """The ``persisted`` event's detail: ``tool_threshold: 58,000 chars -> <path>``."""
        return f"{self.reason}: {self.size:,} chars -> {self.path}"


def _size(block: ToolResultBlock) -> int:
    if isinstance(block.content, str):
        return len(block.content)
    return sum(len(b.text) for b in block.content if isinstance(b, TextBlock))


def _persistable(block: ToolResultBlock) -> bool:
    # Only text can go to a .txt file; a result carrying images stays as it is.
    return isinstance(block.content, str) or not any(
        isinstance(b, (ImageBlock, DocumentBlock)) for b in block.content)


def apply_budget(
    messages: list[Any],
    *,
    config: EngineConfig,
    state: ContentReplacementState,
    store: ToolResultStore,
    tool_name: Callable[[str], tuple[str, int | None]],
) -> tuple[list[Any], list[BudgetDecision]]:
    """The request view of ``messages`` under the budget, and the new decisions taken.

    ``tool_name(tool_use_id)`` gives the tool's name and declared limit (or None). This is the
    straightforward form (every message, every request); the incremental pipeline calls
    :func:`budget_message` once per message instead, which gives the same view because decisions
    are frozen: once a message has been through the budget all its ids are seen, so later passes
    take no decision on it and apply the same replacements (see ``engine/incremental.py``).
    """
    decisions: list[BudgetDecision] = []
    out: list[Any] = []
    for message in messages:
        view, taken = budget_message(message, config=config, state=state, store=store, tool_name=tool_name)
        out.append(view)
        decisions += taken
    return out, decisions


def budget_message(
    message: Any,
    *,
    config: EngineConfig,
    state: ContentReplacementState,
    store: ToolResultStore,
    tool_name: Callable[[str], tuple[str, int | None]],
) -> tuple[Any, list[BudgetDecision]]:
    """One message through the budget: its request view (the message itself when nothing in it is
    replaced) and the decisions taken on its fresh results, in the order taken."""
    decisions: list[BudgetDecision] = []
    if not isinstance(message, UserMessage) or isinstance(message.content, str):
        return message, decisions
    results = [b for b in message.content if isinstance(b, ToolResultBlock)]
    if not results:
        return message, decisions
    fresh = [b for b in results if b.tool_use_id not in state.seen_ids]
    fresh_ids = {b.tool_use_id for b in fresh}
    new: dict[str, str] = {}
    # Level 1: per-tool thresholds, fresh results only.
    for block in fresh:
        name, declared = tool_name(block.tool_use_id)
        size = _size(block)
        if _persistable(block) and size > config.max_result_chars(name, declared):
            saved = store.persist(block.tool_use_id, result_text(block))
            new[block.tool_use_id] = large_result_message(saved)
            decisions.append(BudgetDecision(block.tool_use_id, "tool_threshold", size, saved.path))
    # Level 2: the message aggregate; persist the largest, then newest, fresh results.
    def current_size(b: ToolResultBlock) -> int:
        rid = b.tool_use_id
        if rid in state.replacements:
            return len(state.replacements[rid])
        if rid in new:
            return len(new[rid])
        return _size(b)

    total = sum(current_size(b) for b in results)
    if total > config.per_message_result_chars:
        order = sorted(
            ((i, b) for i, b in enumerate(results) if b.tool_use_id in fresh_ids and b.tool_use_id not in new
             and _persistable(b) and tool_name(b.tool_use_id)[0] != "Read"),
            key=lambda ib: (-_size(ib[1]), -ib[0]))
        for _, block in order:
            if total <= config.per_message_result_chars:
                break
            saved = store.persist(block.tool_use_id, result_text(block))
            replacement = large_result_message(saved)
            total -= _size(block) - len(replacement)
            new[block.tool_use_id] = replacement
            decisions.append(BudgetDecision(block.tool_use_id, "message_budget", _size(block), saved.path))
    for block in fresh:
        state.seen_ids.add(block.tool_use_id)
    state.replacements.update(new)
    if not any(b.tool_use_id in state.replacements for b in results):
        return message, decisions
    content = [b.model_copy(update={"content": state.replacements[b.tool_use_id]})
               if isinstance(b, ToolResultBlock) and b.tool_use_id in state.replacements else b
               for b in message.content]
    return message.model_copy(update={"content": content}), decisions


def read_limit_error(content: str, config: EngineConfig) -> str | None:
    """The Read tool's own limits (003:416, 004:127-133): a file over ``read_max_bytes`` or
    ``read_max_tokens`` is not returned; the tool answers with this error instead (the wording of
    the real tool, as seen in the corpus). None when the content is within the limits."""
    from ..core.tokens import estimate_text

    # ASCII text is one byte a character (isascii is a flag check: no copy of the file)
    size = len(content) if content.isascii() else len(content.encode("utf-8", "surrogatepass"))
    if size > config.read_max_bytes:
        return (f"File content ({_human(size)}) exceeds maximum allowed size ({_human(config.read_max_bytes)}). "
                "Please use offset and limit parameters to read specific portions of the file, or use the "
                "GrepTool to search for specific content.")
    tokens = estimate_text(content, config)
    if tokens > config.read_max_tokens:
        return (f"File content ({tokens} tokens) exceeds maximum allowed tokens ({config.read_max_tokens}). "
                "Please use offset and limit parameters to read specific portions of the file, or use the "
                "GrepTool to search for specific content.")
    return None


def read_line_cap(content: str, config: EngineConfig) -> str:
    """At most ``read_max_lines`` lines (003:79): the rest is left out, with a note saying so."""
    # a final newline ends a line, not a new one; the lines are split only when some are left out
    total = content.count("\n") + 1 - (1 if content.endswith("\n") else 0)
    if total <= config.read_max_lines:
        return content
    lines = content.split("\n")
    kept = "\n".join(lines[: config.read_max_lines])
    return (kept + f"\n[Showing lines 1-{config.read_max_lines} of {total}. "
            "Use offset and limit to read the rest.]")
