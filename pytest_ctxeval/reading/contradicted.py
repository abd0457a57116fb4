"""A value the person set, restated in sections 1-2 with another value in its place.

Section 6 may quote the person word for word ("use SQLite for the cache, on port 5432") while section
1 tells the next context window "use Postgres for the cache, on port 5433": the request it reads
first is not the person's. :func:`contradicted_values` lines up each line of a summary's own text
with the person's messages and reports a place where the summary says the person's words around one
word, and in that word's place another value:

* the word is a *value* in both texts: it holds a digit (``5432``, ``14``, ``v2``), is code-like
  (``README.md``, ``Self::default()``, ``session_character``, ``camelCase``, ``#41``) or is a name
  written with a capital inside a sentence (``SQLite``, ``Tree``, ``TDD``); a plain word ("the",
  "router") is a paraphrase, not a value;
* the person's words stand on both sides of it (at least three around it, one or more on each side:
  "merge with **develop** before" for "merge with **master** before"), or at least three of them
  before it ("on port **5433**, as asked" for "on port **5432** and keep…"), or the whole of a short
  message restated with its one value changed ("use Postgres" for "use SQLite"); one written short for the
  other (``README`` for ``README.md``) is the same value;
* the person never said the summary's value, and nothing in the session after their message says it
  (an answer that agreed to another value, a later correction: the summary may be right);
* the summary's sections 1-2 never say the person's value (a summary that says both, "Postgres
  instead of SQLite", reports a change rather than contradicting it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher

__all__ = ["Contradiction", "PersonWords", "contradicted_values", "is_value"]

_TOKEN = re.compile(r"[#@]?\w+(?:(?:[./'-]|::)\w+)*(?:\(\))?")
#: Words around the changed one that must be the person's, in all and on each side.
CONTEXT = 3


@dataclass(frozen=True)
class Contradiction:
    line: str       # the summary's line
    said: str       # the person's value
    told: str       # the summary's value in its place
    message: int    # 0-based index among the person's messages
    context: str    # the person's words around their value


def _tokens(text: str) -> list[tuple[str, int]]:
    return [(m.group(0), m.start()) for m in _TOKEN.finditer(text)]


def _sentence_start(text: str, at: int) -> bool:
    before = text[:at].rstrip(" \t*_`\"'“‘([")
    return not before or before[-1] in ".!?:\n-•>" or re.search(r"(?:^|\n)\s*(?:[-*•]|\d+[.)])?\s*$", text[:at]) is not None


def is_value(token: str, text: str = "", at: int = -1) -> bool:
    """Whether ``token`` (found at ``at`` in ``text``) names a value rather than being a plain word."""
    if re.search(r"\d", token) or re.search(r"[._/#@]|::|\(\)", token) or re.search(r"[a-z][A-Z]", token):
        return len(token) > 1
    if len(token) >= 2 and token.isupper():
        return True
    if token[:1].isupper() and not token[1:].isupper() and at >= 0:
        return not _sentence_start(text, at)
    return False


class PersonWords:
    """The person's messages as :func:`contradicted_values` reads them, read once per session (a
    compaction's mutants share it) with the verdict of each summary line remembered."""

    def __init__(self, messages: list[str]):
        self.person = []
        self.said: set[str] = set()
        for text in messages:
            toks = _tokens(text)
            low = [t.lower() for t, _ in toks]
            self.person.append((text, toks, low, frozenset(low)))
            self.said.update(low)
        self.lines: dict[str, list[tuple[int, str, str, str]]] = {}

    def candidates(self, line: str) -> list[tuple[int, str, str, str]]:
        """``(message, said, told, context)`` for each place ``line`` restates a message of the
        person's with one of its values changed (before the session and summary checks)."""
        if line not in self.lines:
            self.lines[line] = self._candidates(line)
        return self.lines[line]

    def _candidates(self, line: str) -> list[tuple[int, str, str, str]]:
        toks = _tokens(line)
        if len(toks) < CONTEXT + 1:
            return []
        # a line with no value of its own the person never said cannot contradict them
        if not any(t.lower() not in self.said and is_value(t, line, at) for t, at in toks):
            return []
        low = [t.lower() for t, _ in toks]
        words = set(low)
        out = []
        for k, (text, ptoks, plow, pset) in enumerate(self.person):
            if len(words & pset) < min(CONTEXT, len(pset) - 1) or len(pset) < 2:
                continue
            ops = SequenceMatcher(None, low, plow, autojunk=False).get_opcodes()
            for n, (tag, i1, i2, j1, j2) in enumerate(ops):
                if tag != "replace":
                    continue
                left = ops[n - 1][2] - ops[n - 1][1] if n and ops[n - 1][0] == "equal" else 0
                right = ops[n + 1][2] - ops[n + 1][1] if n + 1 < len(ops) and ops[n + 1][0] == "equal" else 0
                # one word for one, the person's words on both sides; or the first words of a longer
                # difference after a run of the person's words ("… on port 5433, as asked")
                one = i2 - i1 == 1 and j2 - j1 == 1
                # a short message ("use SQLite") restated whole with its one value changed
                whole = one and left + right >= 1 and j1 - left == 0 and j2 + right == len(plow)
                if not ((one and left >= 1 and right >= 1 and left + right >= CONTEXT) or left >= CONTEXT or whole):
                    continue
                told, t_at = toks[i1]
                said, s_at = ptoks[j1]
                t, sd = told.lower(), said.lower()
                if t == sd or t.startswith(sd) or sd.startswith(t) or t in self.said \
                        or not is_value(told, line, t_at) or not is_value(said, text, s_at):
                    continue   # README for README.md is the same file written short
                a, b = ptoks[max(j1 - left, 0)][1], ptoks[min(j1 + right, len(ptoks) - 1)]
                out.append((k, said, told, text[a:b[1] + len(b[0])]))
                break
        return out


def contradicted_values(lines: list[str], messages: list[str] | PersonWords, after: Callable[[int], str],
                        summary_text: str) -> list[Contradiction]:
    """Lines of ``lines`` that restate one of ``messages`` (the person's, in order, or their
    :class:`PersonWords`) with another value in the place of one of theirs (see the module's rules).
    ``after(k)`` is the session's text after the person's message ``k``, lower-cased;
    ``summary_text`` the sections the lines come from."""
    person = messages if isinstance(messages, PersonWords) else PersonWords(messages)
    summary_low = summary_text.lower()
    out: list[Contradiction] = []
    for line in lines:
        for k, said, told, context in person.candidates(line):
            if _whole(said.lower(), summary_low) or _whole(told.lower(), after(k)):
                continue
            out.append(Contradiction(line.strip(), said, told, k, context))
            break
    return out


def _whole(word: str, text: str) -> bool:
    if word not in text:
        return False
    return re.search(rf"(?<![\w.#/-]){re.escape(word)}(?![\w-])", text) is not None
