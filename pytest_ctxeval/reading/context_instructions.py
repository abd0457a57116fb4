"""Summarisation instructions a memory file (CLAUDE.md) gives the summariser.

Claude Code's compaction prompt ends its section list with: "There may be additional summarization
instructions provided in the included context. If so, remember to follow these instructions when
creating the above summary. Examples of instructions include: ``## Compact Instructions`` When
summarizing the conversation focus on typescript code changes ... ``# Summary instructions`` When
you are using compact - please focus on test output and code changes." (the prompt of Claude Code
1.0.x to 2.1.x as public copies of it show it; the seeds show the prompt's parts, 004:477-483, not
this sentence). The included context is the user context the forked summariser shares with the
main agent (000:148, 004:486-493): the CLAUDE.md files. So a user who writes a ``## Compact
Instructions`` section in CLAUDE.md changes every compaction, automatic ones too.

:func:`context_instructions` finds those sections in what a compaction request shows: the memory
files in its ``system`` field (where the engine puts them, engine/context_prefix.py) and in
``<system-reminder>`` blocks of the conversation (a nested CLAUDE.md Claude Code shows when the
agent first works under its folder). A section counts when its heading names compaction or a
summary together with instructions, rules or guidelines ("Compact Instructions", "Summary
instructions", "Compaction rules", "When compacting"); its body runs to the next heading of the same
or a higher level. Anything else in a memory file is a project rule (:func:`memory_rules`), never an
instruction to the summariser, and a compaction instruction is never a project rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["context_instructions", "instruction_sections", "without_instruction_sections"]

_HEADING = re.compile(r"^(?P<hashes>#{1,6})[ \t]+(?P<title>[^\n]*?)[ \t]*#*[ \t]*$", re.MULTILINE)
#: A heading that names compaction (or the summary) and instructions for it.
_TITLE = re.compile(
    r"^(?:(?:\w+[ \t]+){0,2}(?:compact\w*|summar(?:y|ies|i[sz]\w*)|context[ \t]+compaction)[ \t:-]+"
    r"(?:instructions?|rules|guidelines|guidance|preferences|directives)|"
    r"(?:instructions?|rules|guidelines)[ \t]+(?:for|when|on)[ \t]+(?:compact\w*|summar\w*)(?:[ \t]+\w+){0,3}|"
    r"(?:when|on|before)[ \t]+(?:compact\w*|summar\w*)(?:[ \t]+\w+){0,3}|"
    r"/compact(?:[ \t]+\w+){0,2})[ \t]*:?$",
    re.IGNORECASE)
#: Where a memory file starts in the text the model is shown, and where a block of them ends.
_MEMORY_HEADER = re.compile(r"^Contents of \S+\.md\b[^\n]*:[ \t]*$", re.MULTILINE)
_MEMORY_END = re.compile(r"^\s*(?:</system-reminder>|IMPORTANT: this context may or may not be relevant)",
                         re.MULTILINE)


def _plain_title(title: str) -> str:
    return re.sub(r"[*_`]+", "", title).strip()


def _sections(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` character spans of the instruction sections of one memory file's text:
    from its heading to the next heading of the same or a higher level (or the text's end)."""
    heads = list(_HEADING.finditer(text))
    spans = []
    for i, head in enumerate(heads):
        if not _TITLE.match(_plain_title(head.group("title"))):
            continue
        level = len(head.group("hashes"))
        end = next((h.start() for h in heads[i + 1:] if len(h.group("hashes")) <= level), len(text))
        spans.append((head.start(), end))
    return spans


def instruction_sections(text: str) -> list[str]:
    """The bodies of the compaction-instruction sections of one memory file, without their
    headings, in order.

    >>> instruction_sections("# Rules\\n- run make lint\\n\\n## Compact Instructions\\nDrop the debugging.\\n# Other\\nx")
    ['Drop the debugging.']
    >>> instruction_sections("# Summary\\nA CLI for reports.")
    []
    """
    out = []
    for start, end in _sections(text):
        body = text[start:end].split("\n", 1)[1] if "\n" in text[start:end] else ""
        if body.strip():
            out.append(body.strip())
    return out


def without_instruction_sections(text: str) -> str:
    """``text`` (one memory file) without its compaction-instruction sections: what is left are the
    project's rules.

    >>> without_instruction_sections("- run make lint\\n## Compact Instructions\\n- drop the logs\\n")
    '- run make lint\\n'
    """
    spans = _sections(text)
    if not spans:
        return text
    out, at = [], 0
    for start, end in spans:
        out.append(text[at:start])
        at = end
    out.append(text[at:])
    return "".join(out)


def _memory_files(text: str) -> list[str]:
    """The memory files' texts in ``text`` (after each ``Contents of ….md (…):`` line, up to the next
    one or the end of the ``<system-reminder>``)."""
    out = []
    heads = list(_MEMORY_HEADER.finditer(text))
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        stop = _MEMORY_END.search(text, head.end(), end)
        out.append(text[head.end(): stop.start() if stop else end])
    return out


def _texts(message: Any) -> list[str]:
    """The text blocks of a user message, API dict or engine message."""
    role = message.get("role") if isinstance(message, dict) else getattr(message, "role", "user")
    if role != "user":
        return []
    content = message.get("content") if isinstance(message, dict) else getattr(message, "content", None)
    if isinstance(content, str):
        return [content]
    texts = []
    for block in content or []:
        if isinstance(block, dict):
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
        elif getattr(block, "type", None) == "text":
            texts.append(str(getattr(block, "text", "")))
    return texts


def context_instructions(system: Any, messages: Iterable[Any]) -> list[str]:
    """The compaction instructions of every memory file a request shows: in its ``system`` field
    (a string or a list of text blocks) and in ``<system-reminder>`` blocks of its user messages,
    first-seen order, no repeats.

    >>> context_instructions("You summarise.\\n\\nContents of /r/CLAUDE.md (project instructions):\\n\\n"
    ...                      "## Compact Instructions\\nFocus on test output.", [])
    ['Focus on test output.']
    """
    sources: list[str] = []
    if isinstance(system, str):
        sources.append(system)
    elif isinstance(system, list):
        sources += [str(b.get("text", "")) for b in system if isinstance(b, dict) and b.get("type") == "text"]
    for message in messages:
        sources += [t for t in _texts(message) if "<system-reminder>" in t]
    seen: dict[str, None] = {}
    for source in sources:
        for memory in _memory_files(source):
            for body in instruction_sections(memory):
                seen.setdefault(body)
    return list(seen)
