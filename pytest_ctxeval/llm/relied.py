"""What the session relied on, wherever it was said: for the offline reference summary.

When the prompt asks for the facts the session relied on (the ``keep_facts`` instruction of
:mod:`.instructions`), the reference summary keeps:

* **findings** (:func:`findings`): every statement of the assistant that carries a fact — a number,
  an identifier, a path, a rule word (*must*, *never*, *only*...), a goal (*done means*, *the goal
  is*) — from the whole session and from earlier summaries, not only the most recent ones; other
  substantive statements (the narration of the work) only the last :data:`RECENT`. A budget of
  :data:`FINDINGS_CHARS` characters drops the oldest narration first, then the oldest facts.
* **facts from tool results** (:func:`tool_facts`): the lines of tool output that state a fact a
  summary must not lose — a setting with a concrete value (``port = 5433``, ``TIMEOUT_S: 30``), a
  note or rule line (``NOTE: ...``, ``# Never ...``, a Markdown bullet that says *must*), at most
  :data:`PER_RESULT` per result and :data:`TOOL_FACTS` in all, earlier summaries' first; source code
  and failing results (the errors section has those) are not read.

A fact a later message changed (a user's correction, a newer config: "the service listens on port
9090 now, no longer 8080") is kept **marked as replaced**, with the newer statement
(:func:`mark_replaced`), so the summary never states an old value as current.

:func:`latest_request` is the most recent person message that asks for something: section 9 quotes
it, not a statement of preference or information that came after it.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator
from itertools import accumulate
from typing import Any

from ..reading.extract import significant_tokens
from .relied_bodies import (
    may_hold_any, read_plain_lines, remember_body, remember_facts, remembered_body, remembered_facts,
)
from ..core.messages import AssistantMessage, person_text, result_text, text_of, tool_results, tool_uses
from ..reading.summary import normalize_ws

__all__ = ["findings", "tool_facts", "mark_replaced", "latest_request", "TOOL_FACTS_HEADER", "REPLACED"]

TOOL_FACTS_HEADER = "Facts from tool results the work relied on (as written):"
#: How a replaced fact is marked (read back from an earlier summary as already marked).
REPLACED = " (replaced later: "
RECENT = 16
FINDINGS_CHARS = 6_000
PER_RESULT = 6
TOOL_FACTS = 40

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
_IDENT = re.compile(r"\b(?:[a-z]+_[a-z0-9_]+|[A-Z][A-Z0-9]*_[A-Z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]+|[\w.-]+/[\w./-]+|"
                    r"[\w-]+\.(?:py|ts|js|go|rs|toml|yaml|yml|json|md|sql|cfg|ini|env))\b")
_RULE = re.compile(r"\b(?:must|never|always|only|do not|don't|required?|forbidden|prefer\w*|rather than|instead of|"
                   r"done means|the goal|goal is|deadline|limit|at most|at least|under \d|listens? on|"
                   r"is (?:now |set to )?\d)", re.IGNORECASE)
_SETTING = re.compile(r"^\s*[\"']?(?P<key>[A-Za-z_][\w.-]{1,60})[\"']?\s*[:=]\s*(?P<value>\S.{0,100})$")
_NOTE = re.compile(r"^\s*(?:[-*•]\s+|#+\s*|//\s*|--\s*)?(?:NOTE|IMPORTANT|WARNING|CAUTION|DEPRECATED|UPDATE)\b[:\s-]",
                   re.IGNORECASE)
_COMMENT_OR_BULLET = re.compile(r"^\s*(?:[-*•]\s+|#+\s+|//\s+|;\s+)")
_CODE_FILE = re.compile(r"\.(?:py|pyi|ts|tsx|js|jsx|go|rs|java|kt|c|cc|cpp|h|hpp|rb|php|cs|swift|scala)$")
_CHANGE = re.compile(r"\b(?:now|no longer|instead|changed?|moved|renamed|after all|switch\w*|replac\w*|retired|"
                     r"updated?|change of plan|from now on|not anymore|any more)\b", re.IGNORECASE)


_NARRATION = re.compile(r"^\W*(?:re-?)?(?:reading|running|checking|looking|opening|updating|writing|editing|searching|"
                        r"listing|adding|fixing|setting up|starting|trying|planning)\b", re.IGNORECASE)


@functools.lru_cache(maxsize=8_192)  # a pure function of the text; replies and carried items repeat
def _factual(text: str) -> bool:
    """Whether a statement carries a fact: a number, an identifier or path, or a rule word (a line
    of narration such as "Reading src/app.py." names a file, not a fact)."""
    if _NARRATION.match(text) and not (re.search(r"\d", _IDENT.sub("", text)) or _RULE.search(text)):
        return False
    return bool(re.search(r"\d", text) or _IDENT.search(text) or _RULE.search(text))


def _distinct(text: str) -> set[str]:
    """The tokens that tell one fact from another of the same wording: numbers and identifiers."""
    return {t.lower() for t in re.findall(r"\b\d[\d.,]*\b", text)} | {m.group(0).lower() for m in _IDENT.finditer(text)}


def findings(history: list[Any], carried: list[str], failed: list[str]) -> list[str]:
    """The assistant's findings to keep (see the module docstring), oldest first."""
    skip = {normalize_ws(f) for f in failed}
    items: list[tuple[str, bool]] = [(c, _factual(c)) for c in carried]
    for m in history:
        if not isinstance(m, AssistantMessage):
            continue
        text = normalize_ws(text_of(m.content))
        if not text:
            continue
        # A message may hold several statements (consecutive replies merge): each fact on its own.
        parts = [p.strip() for p in _SENTENCE.split(text) if p.strip()]
        facts = [p for p in parts if _factual(p) and len(p) >= 20]
        rest = " ".join(p for p in parts if p not in facts)
        for p in facts:
            items.append((p if len(p) <= 400 else p[:399] + "…", True))
        if len(rest) >= 60:
            items.append((rest if len(rest) <= 400 else rest[:399] + "…", False))
    seen: set[str] = set()
    unique = []
    for text, fact in items:
        key = normalize_ws(text)
        if key in seen or any(f and (f in key or key.rstrip(".") in f) for f in skip):
            continue  # listed once: a failed attempt is not also a finding
        seen.add(key)
        unique.append((text, fact))
    narration = [i for i, (_, f) in enumerate(unique) if not f]
    keep = set(i for i, (_, f) in enumerate(unique) if f) | set(narration[-RECENT:])
    chosen = [i for i in range(len(unique)) if i in keep]
    total = sum(len(unique[i][0]) for i in chosen)
    for group in ([i for i in chosen if not unique[i][1]], [i for i in chosen if unique[i][1]]):
        for i in group:  # oldest first: narration, then facts
            if total <= FINDINGS_CHARS:
                break
            chosen.remove(i)
            total -= len(unique[i][0])
    return mark_replaced([unique[i][0] for i in chosen], history)


def _result_texts(history: list[Any]) -> list[tuple[int, str]]:
    """``(message index, text)`` of each successful tool result that is not source code."""
    paths: dict[str, str] = {}
    for m in history:
        for u in tool_uses(m):
            path = u.input.get("file_path") or u.input.get("path") or ""
            paths[u.id] = str(path) if u.name in ("Read", "NotebookRead") else ""
    out = []
    for i, m in enumerate(history):
        for b in tool_results(m):
            if b.is_error or _CODE_FILE.search(paths.get(b.tool_use_id, "")):
                continue
            out.append((i, result_text(b)))
    return out


def _fact_line(line: str) -> str | None:
    text = line.strip()
    if not 8 <= len(text) <= 240 or text.startswith(("[", "{", "}", "```")):
        return None
    if _NOTE.match(text):
        return text
    setting = _SETTING.match(text)
    if setting and re.search(r"\d|[A-Z]{2,}_|\"[^\"]{2,}\"", setting.group("value")) and " " not in setting.group("key"):
        return text if len(setting.group("value")) <= 100 else None
    if _COMMENT_OR_BULLET.match(text) and _RULE.search(text) and _factual(_COMMENT_OR_BULLET.sub("", text)):
        return text
    return None


def tool_facts(history: list[Any], carried: list[str]) -> list[str]:
    """The fact lines of tool results to keep (see the module docstring), oldest first."""
    out = list(carried)
    seen = {normalize_ws(c) for c in carried}
    for _, body in _result_texts(history):
        facts = remembered_facts(body)  # a result an earlier summary read (relied_bodies)
        if facts is None:
            facts = []
            for line in body.splitlines():
                fact = _fact_line(line)
                if fact is not None:
                    fact = re.sub(r"^(?:[-*•]\s+)+", "", fact)
                    facts.append((fact, normalize_ws(fact)))
            remember_facts(body, facts)
        picked = 0
        for fact, key in facts:
            if key in seen:
                continue
            seen.add(key)
            out.append(fact)
            picked += 1
            if picked >= PER_RESULT:
                break
    return mark_replaced(out[-TOOL_FACTS:], history)


def _texts(history: list[Any]) -> Iterator[tuple[int, str]]:
    """``(message index, text)`` of what the person, the tools (line by line) and the assistant said."""
    for i, m in enumerate(history):
        person = person_text(m)  # a user message may hold tool results and the person's next words
        if person is not None:
            yield i, person
        if isinstance(m, AssistantMessage):
            yield i, text_of(m.content)
        for b in tool_results(m):
            if not b.is_error:
                for line in result_text(b).splitlines():
                    yield i, line


def _statements(history: list[Any]) -> list[tuple[int, str]]:
    """``(message index, statement)`` of what the person, the tools and the assistant said."""
    out = []
    # A text is split the same way wherever it appears (tool output repeats its lines: a span of
    # 12,000 statements holds some 5,000 distinct ones), so each distinct text is split once.
    split: dict[str, list[str]] = {}
    for i, t in _texts(history):
        parts = split.get(t)
        if parts is None:
            parts = split[t] = _split_statements(t)
        out += [(i, s) for s in parts]
    return out


#: A word of every alternative of _CHANGE: an ASCII statement holding none of them (lower-cased)
#: does not match it, whatever its case (tests/llm/test_relied_index.py checks the list).
_CHANGE_WORDS = ("now", "no longer", "instead", "change", "moved", "renamed", "after all", "switch", "replac",
                 "retired", "update", "anymore", "any more")
_CHANGE_ANY = re.compile("|".join(map(re.escape, _CHANGE_WORDS)))


def _says_changed(statement: str, low: str) -> bool:
    """``_CHANGE.search(statement)``, the regex run only on a statement that may match: an ASCII
    one must hold one of :data:`_CHANGE_WORDS` (``low`` is ``statement.lower()``); in other
    scripts case-insensitive letters are more than their ASCII lower case (``ſ``, ``İ``)."""
    if statement.isascii() and not _CHANGE_ANY.search(low):
        return False
    return _CHANGE.search(statement) is not None


def _split_statements(text: str) -> list[str]:
    """The statements of one text: its sentences (whitespace normalised), or the text as it is when
    it spans lines; empty ones left out."""
    if "\n" in text:
        return [text.strip()] if text.strip() else []
    flat = normalize_ws(text)
    # _SENTENCE splits only at whitespace after one of .!? (a single space, once normalised)
    if not (". " in flat or "! " in flat or "? " in flat):
        return [flat] if flat else []
    return [p.strip() for p in _SENTENCE.split(flat) if p.strip()]


def mark_replaced(items: list[str], history: list[Any]) -> list[str]:
    """``items`` with each one a later statement changed marked ``(replaced later: "...")``.

    A later statement changes an item when it says so (*now*, *no longer*, *instead*, *renamed*,
    *after all*...) and shares most of the item's words that are not values; an item found in the
    history is changed only by what came after it, a carried one by anything in this span.
    """
    index = _index(history)
    out = []
    for item in items:
        if REPLACED in item:
            out.append(item)
            continue
        words, key, distinct = _item_keys(item)
        if not words:
            out.append(item)
            continue
        if not distinct:  # nothing tells this statement from another of the same wording
            out.append(item)
            continue
        # Only statements that say something changed, and share one of the item's numbers or
        # identifiers (so "port 6554" is not changed by a statement about another service's port).
        candidates = index.changes_with(distinct)
        newer = None
        start: int | None = None  # the item's first mention: looked up once a candidate needs it
        for j in reversed(candidates):  # the latest that changes the item
            i, s, low, _ = index.changes[j]
            if key[:80] in low or low[:60] in key:
                continue
            if start is None:
                start = index.first_mention(key)
            if i <= start:
                break  # changes are in message order: every earlier candidate is at or before it too
            have = index.tokens(s)  # the same fact: most of its words
            if sum(w in have for w in words) / len(words) >= 0.6:
                newer = s
                break
        out.append(item if newer is None else f"{item}{REPLACED}\"{newer[:200]}\")")
    return out


@functools.lru_cache(maxsize=8_192)  # a pure function of the text: carried items come back every summary
def _item_keys(item: str) -> tuple[tuple[str, ...], str, set[str]]:
    """What :func:`mark_replaced` reads from an item: its words that are not values, its
    lower-cased whitespace-normalised text, and its values (:func:`_distinct`; shared between
    calls, so only read)."""
    words = tuple(w for w in significant_tokens(item) if not re.search(r"\d", w))
    return words, normalize_ws(item).lower(), _distinct(item)


#: Statements of at least this many characters are found by their first ``_HEAD`` characters.
_HEAD = 16


class _Index:
    """The statements of one history, read once for every item :func:`mark_replaced` checks (a
    summary checks hundreds of items against tens of thousands of statements): the ones that say
    something changed, with their values, and a lookup of the first statement that mentions an
    item (the item inside it, or its first 60 characters inside the item)."""

    def __init__(self, history: list[Any]):
        # The rows of _statements(history), read in one pass: a text (a log line, a test summary)
        # repeats, so each distinct text is split and read once (its statements lower-cased, the
        # ones that say something changed with their values); a text seen again adds its rows.
        split: dict[str, tuple[list[str], list[tuple[str, str, set[str]]]]] = {}  # a text's rows
        bodies: dict[str, tuple[list[str], list[tuple[str, str, set[str]]]]] = {}  # a tool result's
        self.messages: list[int] = []
        lows: list[str] = []
        first: dict[str, int] = {}  # each distinct lower-cased statement -> its first row
        self.changes: list[tuple[int, str, str, set[str]]] = []

        def read(t: str, at: int) -> tuple[list[str], list[tuple[str, str, set[str]]]]:
            """The statements of text ``t`` (lower-cased) and its changes; rows from ``at`` on."""
            got = split.get(t)
            if got is None:
                parts = _split_statements(t)
                parts_low = [s.lower() for s in parts]
                got = split[t] = (parts_low, [(s, low, values) for s, low in zip(parts, parts_low)
                                              if _says_changed(s, low) and (values := _distinct(s))])
                for n, low in enumerate(parts_low):  # a statement first seen in a text first seen
                    first.setdefault(low, at + n)
            return got

        for i, m in enumerate(history):
            texts: list[str] = []
            person = person_text(m)  # a user message may hold tool results and the person's next words
            if person is not None:
                texts.append(person)
            if isinstance(m, AssistantMessage):
                texts.append(text_of(m.content))
            for t in texts:
                got = read(t, len(lows))
                lows += got[0]
                self.messages += [i] * len(got[0])
                self.changes += [(i, s, low, values) for s, low, values in got[1]]
            for b in tool_results(m):
                if b.is_error:
                    continue
                # A whole result repeats too (the same test run, the same grep): read once, line by line.
                body = result_text(b)
                block = bodies.get(body)
                if block is None:
                    at = len(lows)
                    block = remembered_body(body)
                    if block is not None:  # read by an earlier index: its statements' first rows here
                        for n, low in enumerate(block[0]):
                            first.setdefault(low, at + n)
                    else:
                        if may_hold_any(body, _CHANGE_WORDS):
                            block = ([], [])
                            for line in body.splitlines():
                                one = read(line, at + len(block[0]))
                                block[0].extend(one[0])
                                block[1].extend(one[1])
                        else:  # no line says a change: the statements only, inline
                            block = (read_plain_lines(body, at, split, first, _split_statements), [])
                        remember_body(body, block)
                    bodies[body] = block
                lows += block[0]
                self.messages += [i] * len(block[0])
                self.changes += [(i, s, low, values) for s, low, values in block[1]]
        self._tokens: dict[str, set[str]] = {}
        self._by_value: dict[str, list[int]] | None = None  # see changes_with
        self.joined = "\0".join(lows)  # a key holds no NUL, so a match lies inside one statement
        self.offsets = list(accumulate((len(low) + 1 for low in lows), initial=0))[:-1]
        # heads[first _HEAD chars] -> (first 60 chars, first row) of each distinct prefix, in row order
        # (a prefix's first row is the first row of one of the distinct statements that begin with it)
        self.heads: dict[str, dict[str, int]] = {}
        self.short: dict[str, int] = {}  # statements under _HEAD characters -> first row
        for low, row in first.items():
            prefix = low[:60]
            if len(prefix) < _HEAD:
                self.short.setdefault(prefix, row)
            else:
                self.heads.setdefault(prefix[:_HEAD], {}).setdefault(prefix, row)
        self.short_lengths = sorted({len(p) for p in self.short})

    def first_mention(self, key: str) -> int:
        """The message index of the first statement that holds ``key[:80]`` or whose first 60
        characters ``key`` holds; -1 when none does."""
        best = len(self.messages)
        head = key[:80]
        if "\0" in head:  # cannot happen for normalised text; read it the slow way
            best = next((r for r, low in enumerate(self.joined.split("\0")) if head in low or low[:60] in key), best)
            return self.messages[best] if best < len(self.messages) else -1
        pos = self.joined.find(head)
        if pos >= 0:
            best = bisect.bisect_right(self.offsets, pos) - 1
        if len(self.short) < len(key) * len(self.short_lengths):  # fewer short statements than windows of key
            for prefix, row in self.short.items():
                if row < best and prefix in key:
                    best = row
        else:
            for length in self.short_lengths:
                if length > len(key):
                    break
                for j in range(len(key) - length + 1):
                    found = self.short.get(key[j:j + length])
                    if found is not None and found < best:
                        best = found
        seen: set[str] = set()
        for j in range(len(key) - _HEAD + 1):
            gram = key[j:j + _HEAD]
            if gram in seen:
                continue
            seen.add(gram)
            for prefix, row in self.heads.get(gram, {}).items():
                if row < best and prefix in key:
                    best = row
        return self.messages[best] if best < len(self.messages) else -1

    def changes_with(self, values: set[str]) -> list[int]:
        """The positions in :attr:`changes` of the statements holding one of ``values``, in order."""
        if self._by_value is None:  # built on the first call (thread-safe: a race builds it twice)
            by_value: dict[str, list[int]] = {}
            for j, change in enumerate(self.changes):
                for value in change[3]:
                    by_value.setdefault(value, []).append(j)
            self._by_value = by_value
        found: set[int] = set()
        for value in values:
            found.update(self._by_value.get(value, ()))
        return sorted(found)

    def tokens(self, statement: str) -> set[str]:
        found = self._tokens.get(statement)
        if found is None:
            found = self._tokens[statement] = set(significant_tokens(statement))
        return found


_LAST: list[Any] = []  # [history, its length, its index]: one summary checks three lists of items


def _index(history: list[Any]) -> _Index:
    last = _LAST[:]  # a copy: another thread may replace it meanwhile
    if last and last[0] is history and last[1] == len(history) and (not history or last[2] is history[-1]):
        return last[3]
    index = _Index(history)
    _LAST[:] = [history, len(history), history[-1] if history else None, index]
    return index


_STATEMENT = re.compile(
    r"^\W*(?:(?:also|oh|and|btw|by the way|fyi|ps|note|one more thing|for the record|just so you know|remember)\b[,:]?\s*)?"
    r"(?:i|we)\s+(?:prefer|like|love|hate|dislike|'d rather|would rather|usually|always|never|tend to|don't like|"
    r"do not like)\b|^\W*(?:fyi|for the record|just so you know|btw|by the way|note)\b[,:]",
    re.IGNORECASE)
_ASK = re.compile(r"\?|\b(?:please|can you|could you|would you|let's|go ahead|make sure)\b", re.IGNORECASE)


def latest_request(people: list[str]) -> int:
    """The index in ``people`` of the most recent message that asks for something: a statement of
    preference or information ("I prefer tabs.", "FYI: the staging DB is down") is not a request.
    The last message when none is (or when the last one asks).

    >>> latest_request(["Fix the login bug", "I prefer small commits, by the way."])
    0
    >>> latest_request(["Fix the login bug", "Now add a test, please"])
    1
    """
    for i in range(len(people) - 1, -1, -1):
        text = people[i]
        if not _STATEMENT.search(text) or _ASK.search(text):
            return i
    return len(people) - 1
