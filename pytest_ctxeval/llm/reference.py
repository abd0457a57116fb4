"""The offline reference summariser: a deterministic, extractive summary that follows the prompt.

It answers a compaction request the way a faithful summariser would, from facts it can read off
the conversation (shared with the graders, :mod:`pytest_ctxeval.reading.extract`): every person-typed
message verbatim, files from tool inputs, key error lines of failing results, open todos from the
latest TodoWrite, the last request quoted in the next step.

**It follows the prompt's structure, not its wording.** It writes exactly the sections whose titles
the prompt asks for (recognised through the section vocabulary of :mod:`pytest_ctxeval.reading.summary`),
in the prompt's order and with the prompt's titles. A prompt that names none of them gets a short
generic summary (first and last request, three sentences). So an offline run shows a prompt change
that adds, drops or reorders sections; it cannot show a change in tone or emphasis — use the
``anthropic`` backend (or cassettes) for that.

Earlier summaries in the conversation (the ``This session is being continued...`` message) are read
back and their user messages, files, errors, pending tasks, findings, rules and failed attempts
carried forward, so what the session's first request said survives the third compaction, as a real
summariser is asked to do.

**Other compactors' prompts** (:mod:`pytest_ctxeval.compaction`) get the same treatment through
:mod:`.formats` (their section titles, Gemini CLI's XML snapshot, opencode's text-line
conversation), and the openings of every compactor's summary message (:data:`SUMMARY_OPENINGS`) mark
an earlier summary, carried forward instead of read as a request.

Two facts a good summary keeps that are not user messages: the rules of memory files shown to the
model (``Contents of .../CLAUDE.md ...`` inside a ``<system-reminder>``), quoted in the request
section under :data:`RULES_HEADER`; and what the assistant said did not work ("coupons.get(key) did
not fix it... Reverting"), listed in the problem-solving section under :data:`FAILED_HEADER` so the
agent does not retry a dead end.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..reading.extract import (
    failed_attempts, failing_results, latest_todos, memory_rules, open_todos, person_messages,
    touched_files,
)
from ..core.messages import AssistantMessage, from_api, text_of, tool_uses
from ..reading.cancellations import proposes_intent, typed_cancellations
from ..reading.summary import (
    SECTION_TITLES, normalize_ws, notes_section, parse_summary, plain_spaces, prompt_titles, section_entries,
)
from .summary_text import (
    FAILED_HEADER, FINDINGS_HEADER, RULES_HEADER, clip as _clip, list_items as _items, merge_texts as _merge_texts,
    quote_message as _quote, sublist as _sublist, unquote as _unquote,
)
from .peer_formats import (
    OTHER_KINDS, deserialise, other_section, read_other, reference_kind, snapshot_tags, split_merged,
)
from . import relied
from .instructions import LANGUAGES, Reading, read_prompt
from .prompt_blocks import with_context_instructions
from ..reading.context_instructions import context_instructions
from .length_budget import LATER_REQUESTS, fit_to_limit
from .rewording import cut_to, is_paraphrase, error_gist, generalise_identifiers, gist, paraphrase, translate

__all__ = ["requested_sections", "prompt_sections", "skeleton_sections", "reads_instructions", "write_summary", "write_session_notes", "SUMMARY_PREFIX", "split_request",
           "SUMMARY_OPENINGS"]

SUMMARY_PREFIX = "This session is being continued from a previous conversation"
#: How each compactor's summary message starts: Claude Code's continuation, Codex's handoff note,
#: Gemini CLI's state snapshot, opencode's summary (pytest_ctxeval/compaction; a test keeps them in
#: step). A user text starting with one is an earlier summary, not a request.
SUMMARY_OPENINGS = (
    SUMMARY_PREFIX,
    "A previous model worked on this task and handed it over with the summary below.",
    "<state_snapshot>",
    "The older part of this session was compacted into the summary below;",
)


def _is_summary(text: str) -> bool:
    return text.lstrip().startswith(SUMMARY_OPENINGS)


_NUMBERED = re.compile(
    r"^[ \t]*(?:\d{1,2}[.)][ \t]+)(?:\*\*)?(?P<title>[A-Za-z][^:\n*.—–]{2,60}?)(?:\*\*)?[ \t]*"
    r"(?::|[ \t](?:--?|[–—])[ \t]|[–—]|$)",  # the title ends at a colon, a dash or the line's end
    re.MULTILINE)
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+(?:\d{1,2}[.)][ \t]+)?(?P<title>[A-Za-z][^:\n*.]{2,60}?)[ \t]*:?[ \t]*$",
                      re.MULTILINE)
_BULLET = re.compile(r"^[ \t]*[-*][ \t]+(?:\*\*)?(?P<title>[A-Za-z][^:\n*.]{2,60}?)(?:\*\*)?[ \t]*:",
                     re.MULTILINE)


def requested_sections(prompt: str) -> list[tuple[str, str]]:
    """``(kind, title)`` for each summary section the prompt asks for, in the prompt's order.

    Candidate titles are numbered lines and Markdown headings (``1. Primary Request and Intent:
    ...``, ``## Work State``); only when there are none, bullets ending in a colon (``- Next Move:``).
    Each is matched against the section vocabulary; the first title of each kind wins.

    >>> requested_sections("1. Primary Request and Intent: all of it\\n2. Pending Tasks: what is left")
    [('request', 'Primary Request and Intent'), ('pending', 'Pending Tasks')]
    """
    prompt = plain_spaces(prompt)  # a no-break space after "6." is a space
    # The prompt's numbered section list, read as the graders read a summary's sections (a renamed
    # entry keeps the section of its place: section_entries); a title the graders' vocabulary leaves
    # unknown may still be another compactor's section (reference_kind).
    entries = section_entries(prompt)
    if entries:
        out: list[tuple[str, str]] = []
        for entry in entries:
            kind = entry.kind or reference_kind(entry.title)
            if kind and kind not in {k for k, _ in out}:
                out.append((kind, entry.title))
        return out
    found = _match_titles(prompt, (_NUMBERED, _HEADING))
    return found or _match_titles(prompt, (_BULLET,))


def skeleton_sections(prompt: str) -> list[tuple[str, str]]:
    """The sections of the reply skeleton a prompt shows inside ``<summary>...</summary>`` (the last
    such block that is not inside an ``<example>``: an example summary is not the structure to
    copy; [] when it shows none)."""
    examples = [m.span() for m in re.finditer(r"<example>[\s\S]*?</example>", prompt)]
    blocks = [m for m in re.finditer(r"<summary>((?:(?!<summary>)[\s\S])*?)</summary>", prompt)
              if not any(a <= m.start() < b for a, b in examples)]
    return requested_sections(blocks[-1].group(1)) if blocks else []


def prompt_sections(prompt: str) -> list[tuple[str, str]]:
    """The sections the reference writes for ``prompt``: those of the reply skeleton it shows in
    ``<summary>`` when it shows one with titles (what a model copies), else those it lists."""
    return skeleton_sections(prompt) or requested_sections(prompt)


def reads_instructions(prompt: str, sections: list[tuple[str, str]] | None = None) -> bool:
    """Whether the reference follows ``prompt``'s instructions (:mod:`.instructions`): a Claude Code
    style prompt, which shows the ``<analysis>``/``<summary>`` layout or asks for Claude Code's
    sections (two or more of the nine, and none that only another compactor asks for), tags or no
    tags. Another compactor's prompt (Codex's handoff, opencode's, Gemini CLI's snapshot: their own
    sections, :data:`~.peer_formats.OTHER_KINDS`) is written the way it always was, every behaviour on.

    >>> reads_instructions("1. Primary Request: all\\n6. All user messages: briefly paraphrased.")
    True
    >>> reads_instructions("1. Goal: the aim\\n2. Constraints: the rules\\n3. Remaining work: the rest")
    False
    """
    if re.search(r"<(?:analysis|summary)>", prompt):
        return True
    if snapshot_tags(prompt):
        return False
    kinds = [k for k, _ in (prompt_sections(prompt) if sections is None else sections)]
    return len(kinds) >= 2 and not any(k in OTHER_KINDS for k in kinds)


def _match_titles(prompt: str, patterns: tuple[re.Pattern[str], ...]) -> list[tuple[str, str]]:
    hits = sorted((m.start(), m.group("title").strip()) for p in patterns for m in p.finditer(prompt))
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for _, title in hits:
        if len(title.split()) > 6:
            continue
        kind = reference_kind(title)
        if kind and kind not in seen:
            seen.add(kind)
            out.append((kind, title))
    return out


def split_request(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """Separate the summarisation instruction (the last text of the last user message) from the
    conversation it is about."""
    if not messages or messages[-1].get("role") != "user":
        return messages, ""
    last = messages[-1]
    content = last.get("content")
    if isinstance(content, str):
        return messages[:-1], content
    blocks = list(content or [])
    for i in range(len(blocks) - 1, -1, -1):
        if blocks[i].get("type") == "text":
            instruction = blocks[i].get("text", "")
            rest = blocks[:i] + blocks[i + 1:]
            head = messages[:-1] + ([{"role": "user", "content": rest}] if rest else [])
            return head, instruction
    return messages, ""


@dataclass
class _Carry:
    """What earlier summaries in the conversation said, read back section by section."""

    user_messages: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    pending: list[str] | None = None
    concepts: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    tool_facts: list[str] = field(default_factory=list)   # relied.TOOL_FACTS_HEADER's items
    #: The requests section 1 quoted (the first, then the later ones), read back when section 6
    #: paraphrased them: a section-6-only rewording does not reach section 1 (see ``requests``).
    requests: list[str] = field(default_factory=list)
    #: The most recent request as section 9 quoted it (in full, where section 1 clips it).
    next_quote: str = ""
    #: Set when an earlier summary was another compactor's (its user messages are quoted in its goal
    #: section, and the context may also keep them as messages: count each once).
    dedupe: bool = False


#: How many of the assistant's findings the reference summary keeps (section 5).
_MAX_FINDINGS = 16


def _read_carry(texts: list[str], instruction: str = "") -> _Carry:
    """What the earlier summaries ``texts`` said; their sections are read with the titles of the
    prompt in use (``instruction``), which wrote them (a renamed section is not taken for part of the
    section before it)."""
    carry = _Carry()
    titles = prompt_titles(instruction) if instruction else {}
    for text in texts:
        if not text.lstrip().startswith(SUMMARY_PREFIX):  # another compactor's summary
            read_other(text, carry)
            continue
        parsed = parse_summary(text, titles=titles)
        if not parsed.sections and notes_section(text, "task specification") is not None:
            # Session notes (a session-memory compaction): the ten-section template.
            carry.user_messages += [_unquote(i) for i in _items(notes_section(text, "task specification") or "")
                                    if i.strip().startswith('"')]
            carry.files += [i.strip() for i in _items(notes_section(text, "files and functions") or "")]
            corrections = [i.strip() for i in _items(notes_section(text, "errors & corrections") or "")]
            carry.errors += [i for i in corrections if not i.startswith("Failed approach: ")]
            carry.failed += [i[len("Failed approach: "):] for i in corrections if i.startswith("Failed approach: ")]
            carry.rules += [i[len("Rule: "):] for i in _items(notes_section(text, "task specification") or "")
                            if i.strip().startswith("Rule: ")]
            state = _items(notes_section(text, "current state") or "")
            carry.pending = [i.strip() for i in state if not i.startswith("Latest request:")]
            continue
        requests: list[str] = []
        if (s := parsed.get("request")) is not None:
            carry.rules += _sublist(s.body, RULES_HEADER)
            requests = _section1_requests(s.body)
            carry.requests += requests
        if (s := parsed.get("problem")) is not None:
            carry.failed += _sublist(s.body, FAILED_HEADER)
            carry.findings += _sublist(s.body, FINDINGS_HEADER)
            carry.tool_facts += _sublist(s.body, relied.TOOL_FACTS_HEADER)
        if (s := parsed.get("user_messages")) is not None:
            carry.user_messages += [_unquote(i) for i in _items(s.body)]
        if (s := parsed.get("files")) is not None:
            carry.files += [i.strip() for i in _items(s.body)]
        if (s := parsed.get("errors")) is not None:
            carry.errors += [i.strip() for i in _items(s.body)]
        if (s := parsed.get("pending")) is not None:
            carry.pending = [i.strip() for i in _items(s.body)]
        if (s := parsed.get("next")) is not None:
            quoted = re.search(re.escape(_NEXT_QUOTED) + r'"(.*?)"[ \t]*(?:\n|$)', s.body, re.DOTALL)
            carry.next_quote = normalize_ws(quoted.group(1)) if quoted else carry.next_quote
        if parsed.get("user_messages") is None and requests:
            # A summary without a user-messages section (the prompt dropped it) keeps the requests
            # in section 1 alone: a model re-summarising it carries them from there, the first
            # request and its constraints included, not only the messages it can still see.
            carry.user_messages += _unclipped(requests, carry.next_quote)
    return carry


_FIRST_REQUEST = "The user's first request: "
_LATER_REQUESTS = LATER_REQUESTS
_NEXT_QUOTED = "Continue with the most recent request, quoted verbatim: "
_LATEST_MESSAGE = "The user's latest message, to keep in mind (not a new task): "


def _section1_requests(body: str) -> list[str]:
    """The requests a reference section 1 listed (the first, then the later ones), quoted ones
    unquoted, reworded ones as written; none when section 1 is not the reference's."""
    first = body.split("\n" + RULES_HEADER)[0].split("\n" + _LATER_REQUESTS)[0].strip()
    if not first.startswith(_FIRST_REQUEST):
        return []
    return [_unquote(normalize_ws(t)) for t in [first[len(_FIRST_REQUEST):], *_sublist(body, _LATER_REQUESTS)]]


def _unclipped(requests: list[str], whole: str) -> list[str]:
    """``requests`` with the one section 1 clipped (``…``) and section 9 quoted in full (``whole``)
    restored."""
    return [whole if whole and t.endswith("…") and normalize_ws(whole).startswith(normalize_ws(t[:-1])) else t
            for t in requests]


def _short_input(block_input: dict[str, Any]) -> str:
    for key in ("command", "file_path", "path", "pattern", "url", "query", "description"):
        value = block_input.get(key)
        if isinstance(value, str) and value:
            value = normalize_ws(value)
            return value if len(value) <= 80 else value[:77] + "..."
    return ""


def write_summary(messages: list[dict[str, Any]], system: Any = None) -> str:
    """The reference reply to a compaction request: ``<analysis>`` then ``<summary>`` (or the XML
    state snapshot a prompt asks for). The compaction instructions of the memory files it shows
    (``system`` and the conversation's ``<system-reminder>`` blocks: a CLAUDE.md ``## Compact
    Instructions`` section) are followed with the /compact ones (:mod:`pytest_ctxeval.reading.context_instructions`)."""
    conversation, instruction = split_request(messages)
    instruction, serial, earlier = deserialise(instruction)
    conversation = conversation + serial
    cleaned: list[dict[str, Any]] = []
    for msg in conversation:
        content = msg.get("content")
        if msg.get("role") == "user":
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
            keep = []
            for b in blocks:
                if b.get("type") == "text" and _is_summary(b.get("text", "")):
                    earlier.append(b["text"])
                else:
                    keep.append(b)
            pieces = split_merged(keep)
            cleaned += [{"role": "user", "content": part} for part in pieces[:-1]]
            keep = pieces[-1] if pieces else []
            if keep:
                cleaned.append({"role": "user", "content": keep})
        else:
            cleaned.append(msg)
    history = from_api(cleaned, uuid_prefix="ref")
    carry = _read_carry(earlier, instruction)
    facts = _Facts(history, carry)
    tags = snapshot_tags(instruction)
    if tags:  # Gemini CLI's XML state snapshot
        snapshot = [f"    <{tag}>\n{_indent(facts.section(kind).rstrip(), 8)}\n    </{tag}>" for tag, kind in tags]
        return "<state_snapshot>\n" + "\n".join(snapshot) + "\n</state_snapshot>"
    sections = prompt_sections(instruction)
    # The <analysis>/<summary> layout is Claude Code's; a prompt that does not ask for it gets its
    # sections as plain text.
    tagged = bool(re.search(r"<(?:analysis|summary)>", instruction))
    if reads_instructions(instruction, sections):
        # A Claude Code prompt: how each section is written follows the prompt's instructions
        # (:mod:`.instructions`). Other compactors' prompts keep every behaviour on.
        facts.reading = read_prompt(with_context_instructions(instruction, context_instructions(system, conversation)))
    analysis = (f"<analysis>\nRead {len(history)} messages: {len(facts.people)} from the user, "
                f"{facts.tool_calls} tool calls ({len(facts.failures)} failed)"
                f"{', and ' + str(len(earlier)) + ' earlier summary' if earlier else ''}.\n</analysis>")
    if not sections:
        body = facts.generic()
    else:
        parts = [(f"{number}. {title}:", facts.section(kind).rstrip().split("\n"))
                 for number, (kind, title) in enumerate(sections, start=1)]
        kinds = [kind for kind, _ in sections]
        reading = facts.reading
        limit = reading.limit if reading is not None else None
        # What a writer short of room gives up first, and keeps to the end (.length_budget).
        if limit is not None and limit.scope == "section":  # each section on its own
            parts = [fit_to_limit([part], [kind], limit.amount, limit.unit)[0] for part, kind in zip(parts, kinds)]
        elif limit is not None:
            parts = fit_to_limit(parts, kinds, limit.amount, limit.unit)
        body = "\n\n".join(f"{head}\n{_indent(chr(10).join(lines))}" for head, lines in parts)
        if reading is not None and reading.language:
            body = translate(body, LANGUAGES.get(reading.language))
    return f"{analysis}\n\n<summary>\n{body}\n</summary>" if tagged or not sections else body


def _file_lines(carried: list[str], touched: list[tuple[str, str]]) -> list[str]:
    """The files section's lines: ``carried`` ones (``path — how``), then each ``(path, line)``
    touched here, which replaces the carried lines of its path. Earlier lines are marked dead by
    path, not filtered out one path at a time (carried lists run to hundreds of files)."""
    known = {l.split(" — ")[0].strip() for l in carried}
    lines = list(carried)
    alive = [True] * len(lines)
    where: dict[str, list[int]] = {}
    for n, l in enumerate(lines):
        where.setdefault(l.split(" — ")[0].strip(), []).append(n)
    for path, line in touched:
        if path in known:
            for n in where.pop(path, ()):
                alive[n] = False
        where.setdefault(line.split(" — ")[0].strip(), []).append(len(lines))
        lines.append(line)
        alive.append(True)
    return [l for l, keep in zip(lines, alive) if keep]


def _indent(body: str, width: int = 3) -> str:
    return "\n".join((" " * width + line) if line.strip() else "" for line in body.split("\n"))


class _Facts:
    def __init__(self, history: list[Any], carry: _Carry):
        self.history = history
        self.carry = carry
        self.people = [p.text for p in person_messages(history)]
        if carry.dedupe:  # another compactor kept some messages whose quotes its summary carries too
            self.all_people = _merge_texts(carry.user_messages, self.people)
        else:
            self.all_people = carry.user_messages + self.people
        # The reference keeps every failure but a rejected or cancelled call: a refused tool call or an
        # empty probe is not an error a summary must keep, but a faithful extract may carry it.
        self.failures = failing_results(history, kinds=("error", "tool_usage", "probe"))
        self.tool_calls = sum(len(tool_uses(m)) for m in history)
        # Standing rules of memory files (CLAUDE.md) and what the assistant found did not work:
        # both are carried from summary to summary, so a rule followed before a compaction is still
        # followed after it and a dead end is not tried again.
        self.rules = relied.mark_replaced(_merge_texts(carry.rules, memory_rules(history)), history)
        self.failed = _merge_texts(carry.failed, failed_attempts(history))
        #: What the prompt asks for (None: not a Claude Code prompt, every behaviour on).
        self.reading: Reading | None = None

    def asks(self, name: str) -> bool:
        """Whether the prompt asks for the instruction ``name`` (:mod:`.instructions`)."""
        return self.reading is None or name in self.reading

    def said(self, text: str, clip: int | None = None) -> str:
        """A user message as the prompt asks for it: quoted verbatim, or paraphrased."""
        if self.asks("user_messages_verbatim"):
            return _quote(_clip(text, clip) if clip else text)
        return paraphrase(text)

    @functools.cached_property
    def requests(self) -> list[str]:
        """The user's requests section 1 lists: every person message, except that the earlier
        summaries' ones come from their section 1 when their section 6 paraphrased them (a model
        carries section 1 forward from section 1)."""
        carried = self.carry.user_messages
        if (not self.carry.dedupe and len(self.carry.requests) == len(carried)
                and any(is_paraphrase(t) for t in carried)):
            # section 1 clipped a long later request; section 9 has it whole
            return _unclipped(self.carry.requests, self.carry.next_quote) + self.people
        return self.all_people

    def requested(self, text: str, clip: int | None = None) -> str:
        """A request in section 1: quoted (the section asks for the requests in detail) unless the
        prompt asks to reword the user's requests there or in general (not only in section 6)."""
        if self.reading is not None and self.reading.requests_reworded:
            return paraphrase(text)
        return _quote(_clip(text, clip) if clip else text)

    # -- sections ----------------------------------------------------------------------------
    def section(self, kind: str) -> str:
        if kind in OTHER_KINDS:  # another compactor's section (see .formats)
            return other_section(self, kind)
        return getattr(self, f"_s_{kind}")()

    def _s_request(self) -> str:
        if not self.all_people:
            if self.rules and self.asks("memory_rules"):
                return "\n".join(["No request from the user in this part of the conversation.", RULES_HEADER,
                                  *[f"- {r}" for r in self.rules]])
            return "No request from the user in this part of the conversation."
        first = self.requests[0]
        lines = [f"{_FIRST_REQUEST}{self.requested(first)}"]
        if self.rules and self.asks("memory_rules"):
            lines.append(RULES_HEADER)
            lines += [f"- {r}" for r in self.rules]
        later = self.requests[1:]
        if later:
            # Every later message may correct or narrow the request: the prompt asks for all of them.
            lines.append(_LATER_REQUESTS)
            lines += [f"- {self.requested(t, 300)}" for t in later]
        return "\n".join(lines)

    def _s_concepts(self) -> str:
        tools = Counter(b.name for m in self.history for b in tool_uses(m))
        exts = Counter(p.rsplit(".", 1)[-1] for p, _ in touched_files(self.history) if "." in p.rsplit("/", 1)[-1])
        lines = []
        if tools:
            lines.append("- Tools used: " + ", ".join(f"{n} x{c}" for n, c in sorted(tools.items())))
        if exts:
            lines.append("- File types: " + ", ".join(f".{e}" for e, _ in exts.most_common(8)))
        return "\n".join(lines) or "- None recorded."

    def _s_files(self) -> str:
        lines = list(self.carry.files)
        verbs = {"Edit": "edited", "MultiEdit": "edited", "NotebookEdit": "edited", "Write": "written"}
        changes = self._changes() if self.asks("code_snippets") else {}
        touched = []
        for path, how in touched_files(self.history):
            line = f"{path} — {verbs.get(how, 'read' if how == 'Read' else how)}"
            for change in changes.get(path, [])[-3:]:
                line += f"\n  {change}"
            touched.append((path, line))
        lines = _file_lines(lines, touched)
        if not self.asks("code_snippets"):  # an earlier summary's snippets go with the instruction
            lines = [l.split("\n")[0] for l in lines]
        return "\n".join(f"- {l}" for l in lines) or "- None."

    def _changes(self) -> dict[str, list[str]]:
        """What each successful edit changed (the prompt asks for the changes and snippets)."""
        failed = {f.tool_use_id for f in self.failures}
        out: dict[str, list[str]] = {}
        for m in self.history:
            for u in tool_uses(m):
                path = u.input.get("file_path")
                if u.id in failed or not isinstance(path, str):
                    continue
                if u.name == "Edit" and isinstance(u.input.get("old_string"), str):
                    out.setdefault(path, []).append(
                        f"changed `{_clip(u.input['old_string'], 120)}` to `{_clip(str(u.input.get('new_string', '')), 160)}`")
                elif u.name == "Write" and isinstance(u.input.get("content"), str):
                    out.setdefault(path, []).append(f"wrote: `{_clip(u.input['content'], 200)}`")
        return out

    def left_out(self, name: str) -> bool:
        """Whether the prompt asks to leave the subject of ``name`` out altogether (not only to
        shorten it): "leave out the errors" drops the earlier summary's errors too."""
        return self.reading is not None and name in self.reading.left_out

    def _s_errors(self) -> str:
        if self.left_out("errors_quoted_and_fixed"):
            return "- None listed: left out as the instructions ask."
        lines = list(self.carry.errors)
        quoted = self.asks("errors_quoted_and_fixed")
        for f in self.failures:
            what = _short_input(f.input)
            if quoted:
                lines.append(f"{f.tool}{' (' + what + ')' if what else ''} failed: {f.key_line}{self._fix(f)}")
            else:
                lines.append(error_gist(f.tool, what, f.key_line))
        return "\n".join(f"- {l}" for l in lines) or "- None."

    def _fix(self, failure: Any) -> str:
        """How a failure was dealt with: a later call of the same tool that succeeded, else open."""
        later = self._last_success.get(failure.tool, -1) > failure.index
        return " — fixed: a later call succeeded" if later else " — still open"

    @functools.cached_property
    def _last_success(self) -> dict[str, int]:
        """Each tool's last message holding a call of it that did not fail (read once, not once a
        failure: a long span has a thousand failures)."""
        failed = {f.tool_use_id for f in self.failures}
        last: dict[str, int] = {}
        for i, m in enumerate(self.history):
            for u in tool_uses(m):
                if u.id not in failed:
                    last[u.name] = i
        return last

    def _s_problem(self) -> str:
        if not self.tool_calls and not self.findings and not self.failed and not self.carry.tool_facts:
            return "No tool work in this part of the conversation."
        text = f"Ran {self.tool_calls} tool calls; {len(self.failures)} failed."
        if self.failures and not self.left_out("errors_quoted_and_fixed"):
            last = self.failures[-1]
            later_ok = any(m for m in self.history[last.index + 1:] if tool_uses(m))
            key = last.key_line if self.asks("errors_quoted_and_fixed") else error_gist(last.tool, "", last.key_line)
            text += (f" The last failure was {last.tool}: {key}"
                     + (" — work continued after it." if later_ok else " — not resolved yet."))
        exact = self.asks("identifiers")
        if self.failed and self.asks("failed_approaches"):
            text += "\n" + FAILED_HEADER + "\n" + "\n".join(
                f"- {f if exact else generalise_identifiers(f)}" for f in self.failed)
        if self.findings and self.asks("keep_facts"):
            text += "\n" + FINDINGS_HEADER + "\n" + "\n".join(
                f"- {f if exact else generalise_identifiers(f)}" for f in self.findings)
        tool_facts = relied.tool_facts(self.history, self.carry.tool_facts) if self.asks("keep_facts") else []
        if tool_facts:  # facts planted in tool results (issue 19): kept when the prompt asks for facts
            exact = self.asks("identifiers")
            text += "\n" + relied.TOOL_FACTS_HEADER + "\n" + "\n".join(
                f"- {f if exact else generalise_identifiers(f)}" for f in tool_facts)
        return text

    @functools.cached_property
    def findings(self) -> list[str]:
        """What the assistant concluded: its substantive text messages (not one-line narration
        such as "Reading the module."), earlier summaries' findings first, the most recent
        ``_MAX_FINDINGS`` kept, oldest first shown; those already listed as failed attempts are not
        repeated."""
        # Every finding that carries a fact, wherever in the session (issue 19), the narration only
        # the last _MAX_FINDINGS (relied.RECENT): an early goal stated by the assistant survives.
        return relied.findings(self.history, self.carry.findings, self.failed)

    def _s_user_messages(self) -> str:
        if not self.all_people:
            return "- None."
        limit = self.reading.item_limits.get("user_messages") if self.reading is not None else None
        if limit is not None:  # "keep each item under 30 words": each message cut to it
            return "\n".join(f"- {self.said(cut_to(t, limit.amount, limit.unit))}" for t in self.all_people)
        return "\n".join(f"- {self.said(t)}" for t in self.all_people)

    def _s_pending(self) -> str:
        if not self.asks("pending_explicit"):  # every task ever listed and not done, dropped ones too
            items = _every_open_task(self.history, self.carry.pending or [])
        else:
            items = open_todos(self.history) if latest_todos(self.history) is not None else self.carry.pending or []
            # a careful reader leaves out what the person cancelled in words after the list was written
            cancelled = [c.subject for c in typed_cancellations(self.history)]
            items = [i for i in items if not any(proposes_intent(i, c) for c in cancelled)]
        items = [i for i in items if normalize_ws(i).lower() not in ("none.", "none")]
        return "\n".join(f"- {i}" for i in items) or "- None."

    def _s_current(self) -> str:
        last_text = ""
        for m in reversed(self.history):
            if isinstance(m, AssistantMessage):
                t = text_of(m.content).strip()
                if t:
                    last_text = normalize_ws(t)
                    break
        calls = []
        for m in reversed(self.history):
            uses = tool_uses(m)
            if uses:
                calls = [f"{b.name}({_short_input(b.input)})" for b in uses]
                break
        lines = []
        if last_text:
            lines.append(f"Last assistant message: \"{last_text[:400]}\"")
        if calls:
            lines.append("Last tool calls: " + ", ".join(calls))
        return "\n".join(lines) or "Nothing in progress."

    def _s_next(self) -> str:
        if not self.all_people:
            return "None."
        # The latest *request*: a statement of preference after it ("I prefer small commits") is not
        # a task; it is quoted too, as the most recent message (relied.latest_request).
        at = relied.latest_request(self.requests)
        request, later = self.requests[at], self.requests[at + 1:]
        if not self.asks("next_step_quotes"):
            return f"Continue with the most recent request: {gist(request).replace(chr(34), chr(39))}"
        text = f"{_NEXT_QUOTED}{_quote(request)}"
        if later:
            text += f"\n{_LATEST_MESSAGE}{_quote(later[-1])}"
        return text

    def generic(self) -> str:
        if not self.all_people:
            return ("The conversation so far had no request from the user. "
                    f"It made {self.tool_calls} tool calls. Nothing is pending.")
        return (f"The user first asked: {_quote(self.all_people[0])}. "
                f"The most recent request was: {_quote(self.all_people[-1])}. "
                f"In between, {self.tool_calls} tool calls were made and {len(self.failures)} failed.")


def _every_open_task(history: list[Any], carried: list[str]) -> list[str]:
    """Every task of every TodoWrite call whose last status is not completed, in first-seen order
    (what a summary lists when the prompt does not limit it to the tasks still asked for)."""
    status: dict[str, str] = {normalize_ws(t): "pending" for t in carried}
    for m in history:
        for u in tool_uses(m):
            if u.name == "TodoWrite" and isinstance(u.input.get("todos"), list):
                for t in u.input["todos"]:
                    if isinstance(t, dict) and str(t.get("content", "")).strip():
                        status[str(t["content"]).strip()] = str(t.get("status", "pending"))
    return [t for t, s in status.items() if s != "completed" and normalize_ws(t).lower() not in ("none.", "none")]


# Titles are used as given by the prompt; the canonical ones are exported for templates and tests.
CANONICAL_TITLES = SECTION_TITLES


# ---------------------------------------------------------------------------------------------
# Session notes (the session-memory update request)

_NOTES_SECTION = re.compile(r"^#\s+(.+?)\s*$", re.MULTILINE)


def _tagged(text: str, tag: str) -> str:
    match = re.search(rf"<{tag}>\n?([\s\S]*?)\n?</{tag}>", text)
    return match.group(1) if match else ""


def _notes_sections(text: str) -> list[tuple[str, str]]:
    """``(heading, body)`` of a Markdown notes document (``# Heading`` lines)."""
    marks = list(_NOTES_SECTION.finditer(text))
    return [(m.group(1).strip(), text[m.end(): marks[i + 1].start() if i + 1 < len(marks) else len(text)].strip())
            for i, m in enumerate(marks)]


def _merge(old: list[str], new: list[str]) -> list[str]:
    seen = {normalize_ws(x) for x in old}
    out = list(old)
    for item in new:
        if normalize_ws(item) not in seen:
            seen.add(normalize_ws(item))
            out.append(item)
    return out


def write_session_notes(messages: list[dict[str, Any]]) -> str:
    """The reference reply to a session-memory update: the template's headings, in order, filled
    from the conversation, keeping what the current notes already held."""
    conversation, instruction = split_request(messages)
    template = _tagged(instruction, "template")
    current = _notes_sections(_tagged(instruction, "current_notes"))
    headings = [h for h, _ in _notes_sections(template)] or [
        "Session Title", "Current State", "Task specification", "Files and Functions", "Workflow",
        "Errors & Corrections", "Codebase and System Documentation", "Learnings", "Key results", "Worklog"]
    old = {h.lower(): _items(body) for h, body in current}
    earlier = [b.get("text", "") for m in conversation if m.get("role") == "user"
               for b in ([{"type": "text", "text": m["content"]}] if isinstance(m.get("content"), str) else m.get("content") or [])
               if b.get("type") == "text" and b.get("text", "").lstrip().startswith(SUMMARY_PREFIX)]
    cleaned = [m for m in conversation if not (m.get("role") == "user" and isinstance(m.get("content"), str)
                                               and m["content"].lstrip().startswith(SUMMARY_PREFIX))]
    facts = _Facts(from_api(cleaned, uuid_prefix="notes"), _read_carry(earlier))
    people = [_quote(t) for t in facts.all_people]
    files = [l[2:] if l.startswith("- ") else l for l in facts._s_files().split("\n")]
    errors = [l[2:] if l.startswith("- ") else l for l in facts._s_errors().split("\n")]
    commands = [f"`{normalize_ws(str(u.input.get('command')))[:120]}`" for m in facts.history for u in tool_uses(m)
                if u.name in ("Bash", "PowerShell") and u.input.get("command")]
    worklog = [f"{u.name} {_short_input(u.input)}".strip() for m in facts.history for u in tool_uses(m)]

    def body(heading: str) -> list[str]:
        h = heading.lower()
        prior = next((v for k, v in old.items() if k == h), [])
        if "title" in h:
            first = normalize_ws(facts.all_people[0]) if facts.all_people else "Session without a request"
            return [" ".join(first.split()[:10])]
        if "current state" in h:
            pending = [l for l in facts._s_pending().split("\n") if l.strip() not in ("- None.",)]
            state = [f"Latest request: {_quote(facts.all_people[-1])}"] if facts.all_people else []
            return state + [p[2:] if p.startswith("- ") else p for p in pending]
        if "task" in h:
            rules = [f"Rule: {r}" for r in facts.rules]
            return _merge([i for i in prior if i.startswith('"') or i.startswith("Rule: ")], rules + people)
        if "file" in h:
            return _merge(prior, [f for f in files if f != "None."])
        if "workflow" in h:
            return _merge(prior, list(dict.fromkeys(commands))[-12:])
        if "error" in h:
            return _merge(prior, [e for e in errors if e != "None."] + [f"Failed approach: {f}" for f in facts.failed])
        if "codebase" in h or "documentation" in h:
            return [facts._s_concepts().lstrip("- ")]
        if "learning" in h:
            return [f"{len(facts.failures)} tool calls failed in this stretch."] if facts.failures else prior
        if "key result" in h:
            current_work = facts._s_current().split("\n")[0]
            return [current_work] if current_work else prior
        if "worklog" in h:
            return _merge(prior, worklog)[-40:]
        return prior or ["(nothing recorded)"]

    parts = []
    for heading in headings:
        items = body(heading) or ["(nothing yet)"]
        parts.append(f"# {heading}\n" + "\n".join(f"- {i}" for i in items))
    return "\n\n".join(parts)


# ---------------------------------------------------------------------------------------------
# The offline judge (a labelled heuristic) and probe answers

_DATA = re.compile(r"\[BEGIN DATA\] (?P<label>[^\n]*)\n(?P<body>[\s\S]*?)\n\[END DATA\]")


@functools.lru_cache(maxsize=65_536)  # the judge stems the same words of every context again
def _stem(token: str) -> str:
    """A crude stem so 'revoked', 'revokes' and 'revoke' meet: -ies -> -y, then -ing/-ed/-es/-s,
    then a final -e."""
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            token = token[: len(token) - len(suffix)] + repl
            break
    if token.endswith("e") and len(token) > 4:
        token = token[:-1]
    return token


_CONTRACTIONS = {"can't": "cannot", "won't": "will not", "n't": " not", "'re": " are", "'s": "", "'ll": " will"}


def _terms(text: str) -> frozenset[str]:
    """The stemmed terms of ``text`` (remembered: the judge, probes and drift read the same
    post-compact context, every generation again)."""
    return _terms_cached(text) if len(text) <= 200_000 else _terms_cached.__wrapped__(text)


#: Where a path or identifier splits into parts that count as terms on their own.
_PARTS = re.compile(r"[/._\-()]+")


@functools.lru_cache(maxsize=256)
def _terms_cached(text: str) -> frozenset[str]:
    from ..reading.extract import significant_tokens

    text = text.replace("’", "'")
    for short, full in _CONTRACTIONS.items():
        text = text.replace(short, full)
    out = set()
    # Each distinct token once (a context repeats most of its words; the terms are a set), and
    # split only when it has parts: a token without a separator is its own single part.
    for t in set(significant_tokens(text)):
        out.add(_stem(t))
        parts = _PARTS.split(t)  # path and identifier parts count on their own
        if len(parts) > 1:
            for part in parts:
                if len(part) >= 3:
                    out.add(_stem(part))
    out.update(cjk_terms(text))
    return frozenset(out)


#: A run of Chinese, Japanese or Korean characters: written without spaces between words.
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


def cjk_terms(text: str) -> set[str]:
    """The terms of the CJK text in ``text``: each pair of neighbouring characters of a run (a lone
    character is its own term). These scripts put no spaces between words, so the word tokens hold
    none of it: a Chinese request would have no terms, and a summary that lost it all would keep
    "all" of them."""
    out: set[str] = set()
    for run in _CJK_RUN.findall(text):
        out.update(run[i:i + 2] for i in range(len(run) - 1)) if len(run) > 1 else out.add(run)
    return out


#: The labels drift's intent puts before the requests (graders/judge.py ``_intent``): words of the
#: prompt, not of the person, so not terms a generation must keep.
_INTENT_LABEL = re.compile(r"^[ \t]*(?:first|latest|original|primary) request:[ \t]*", re.IGNORECASE | re.MULTILINE)
#: The marker drift's intent puts in place of a pasted log (graders/judge.py ``_as_typed``): its
#: number is the tool's, not a term the person asked for.
_PASTE_MARKER = re.compile(r"\[pasted output: [\d,]+ characters\]")


_QUESTION_WORDS = {"what", "which", "why", "how", "who", "when", "where", "did", "does", "the", "was", "were"}
_CONTINUATION = {"next", "remain", "left", "todo", "pending", "continue", "now", "after"}


#: Courtesy and acknowledgement ("this is good. commit it", "thanks, now run the tests"): how the
#: person said it, not what they asked for; a summary that leaves them out lost nothing.
_COURTESY = frozenset({"good", "great", "nice", "perfect", "thank", "thanks", "please", "okay", "cool", "awesome",
                       "excellent", "lgtm", "wonderful", "amazing", "yeah", "yes", "sure", "alright"})


@functools.lru_cache(maxsize=1)
def _courtesy_terms() -> frozenset[str]:
    return frozenset(_stem(w) for w in _COURTESY)


def _coverage(needle: str, haystack_tokens: frozenset[str]) -> float:
    tokens = _terms(needle) - _QUESTION_WORDS - _courtesy_terms()
    if not tokens:
        return 1.0
    return len(tokens & haystack_tokens) / len(tokens)


def judge_reply(prompt: str) -> str:
    """A deterministic judgement of a rubric prompt by term overlap (labelled as a heuristic).

    Reads the fenced data blocks by label: an *answer* against an *expected answer*; *user
    messages* (and an expected intent) against a *post-compact context*; an *original intent*
    against a *generation*'s request and next step.
    """
    import json as _json

    found = [(m.group("label").strip().lower(), m.group("body")) for m in _DATA.finditer(prompt)]
    if any(_ITEMS_RUBRIC.match(label) for label, _ in found):  # probes.j2, drift_all.j2
        return _judge_items(found)
    blocks = {label.split(" (")[0].strip(): body for label, body in found}
    lost: list[str] = []
    if "expected answer" in blocks and "answer" in blocks:
        have = _terms(blocks["answer"])
        cov = _coverage(blocks["expected answer"], have)
        lost = _terms_lost("the expected answer", "the answer", blocks["expected answer"], have)
        why = f"offline heuristic: the answer holds {cov:.0%} of the expected answer's terms"
    elif "post-compact context" in blocks:
        have = _terms(blocks["post-compact context"])
        wanted = [l.split(". ", 1)[-1] for l in blocks.get("user messages", "").splitlines() if l.strip()
                  and not l.startswith("(")]
        if blocks.get("expected intent"):
            wanted.append(blocks["expected intent"])
        covs = [(w, _coverage(w, have)) for w in wanted] or [("", 1.0)]
        cov = sum(c for _, c in covs) / len(covs)
        lost = [w[:120] for w, c in covs if c < 0.5]
        why = f"offline heuristic: the context holds {cov:.0%} of the user's terms on average"
        if lost:   # a whole message lost is not outweighed by the others (review 5, #13): never a full score
            cov = min(cov, 0.8)
            why += (f"; {len(lost)} of {len(covs)} message{'s' if len(covs) != 1 else ''} "
                    f"{'holds' if len(lost) == 1 else 'hold'} under half of its terms there (lost), so at most 4/5")
    elif "original intent" in blocks:
        gen = next((v for k, v in blocks.items() if k.startswith("generation")), "")
        have = _terms(gen)
        intent, finished = _open_intent(blocks["original intent"], have)
        cov = _coverage(intent, have)
        lost = _terms_lost("the original intent", "this generation", intent, have)
        why = f"offline heuristic: this generation holds {cov:.0%} of the original intent's terms" + _finished(finished)
    else:
        cov, why = 0.6, "offline heuristic: no data blocks it knows how to compare"
    score = max(0, min(5, round(cov * 5)))
    return _json.dumps({"score": score, "reasons": [why], "lost": lost})


def _open_intent(intent: str, have: frozenset[str]) -> tuple[str, list[str]]:
    """Drift's intent without its labels and without the finished steps of its requests: the
    steps before a later step this generation holds (:mod:`pytest_ctxeval.llm.finished_steps`)."""
    from .finished_steps import open_steps

    def held(step: str) -> float:
        terms = _terms(step) - _QUESTION_WORDS - _courtesy_terms()
        return len(terms & have) / len(terms) if len(terms) >= 2 else 0.0

    return open_steps(_PASTE_MARKER.sub(" ", intent), held)


def _finished(steps: list[str]) -> str:
    """The reason's note on finished steps (not counted as lost)."""
    if not steps:
        return ""
    shown = "; ".join(repr(s if len(s) <= 80 else s[:79] + "…") for s in steps[:3])
    return f" (finished steps of a request, before the step it is at, not counted as lost: {shown})"


def _terms_lost(source: str, target: str, text: str, have: Any) -> list[str]:
    """What the heuristic found missing, as one readable item ("terms of the original intent not in
    this generation: 'byte', 'ids'"), not bare words that read as things the summary lost."""
    from ..reading.extract import significant_tokens

    terms = [t for t in dict.fromkeys(significant_tokens(text)) if _stem(t) not in have
             and _stem(t) not in _courtesy_terms()][:8]
    return [f"terms of {source} not in {target}: " + ", ".join(repr(t) for t in terms)] if terms else []


#: A label only the several-item rubrics write (drift.j2's "generation N: primary request..." is not one).
_ITEMS_RUBRIC = re.compile(r"probe \d+ \([^)]*\): question$|generation \d+: original intent$")
_JUDGED_ITEM = re.compile(r"(?P<kind>probe|generation) (?P<n>\d+)(?: \([^)]*\))?: (?P<part>.+)$")


def _judge_items(found: list[tuple[str, str]]) -> str:
    """The heuristic judgement of a rubric that lists several items (``probes.j2``: a compacted
    context and numbered probes; ``drift_all.j2``: numbered generations), one per item, scored
    as the single-item rubrics are."""
    import json as _json
    from ..reading.extract import significant_tokens

    # probes.j2 labels it as intent_preservation.j2 does (a shared cached prefix); "compacted
    # context" is its label before, which a rubric folder of one's own may still use.
    context = _terms(next((body for label, body in found if label in ("post-compact context", "compacted context")), ""))
    items: dict[tuple[str, int], dict[str, str]] = {}
    for label, body in found:
        m = _JUDGED_ITEM.match(label)
        if m:
            items.setdefault((m.group("kind"), int(m.group("n"))), {})[m.group("part")] = body
    out = []
    for (kind, _), parts in sorted(items.items(), key=lambda kv: kv[0][1]):
        if kind == "probe":
            want, have = parts.get("expected answer", ""), context
            why = "offline heuristic: the context holds {:.0%} of the expected answer's terms"
        else:
            have = _terms(parts.get("primary request and next step", ""))
            want, finished = _open_intent(parts.get("original intent", ""), have)
            why = ("offline heuristic: this generation holds {:.0%} of the original intent's terms"
                   + _finished(finished).replace("{", "{{").replace("}", "}}"))
        cov = _coverage(want, have)
        lost = [t for t in dict.fromkeys(significant_tokens(want)) if _stem(t) not in have
                and _stem(t) not in _courtesy_terms()][:8]
        out.append({"score": max(0, min(5, round(cov * 5))), "reasons": [why.format(cov)], "lost": lost})
    return _json.dumps({"items": out})


def answer_probe(messages: list[dict[str, Any]]) -> str:
    """The reference "answer" to a probe: everything the context holds, as text.

    A deterministic model cannot reason its way to an answer, so offline a probe measures the one
    thing it can: whether the facts of the expected answer are still in the post-compact context
    (the best answer any model could give from it). The heuristic judge then scores the share of
    the expected answer's terms present. With a real model the probe is a real question.
    """
    from ..core.messages import plain_text

    conversation, _question = split_request(messages)
    text = plain_text(from_api(conversation, uuid_prefix="probe")).strip()
    return f"From my context: {text}" if text else "The context does not say."


def _shorten(line: str, n: int = 300) -> str:
    return line if len(line) <= n else line[: n - 1] + "…"
