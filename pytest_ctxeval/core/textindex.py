"""``needle in text`` for many needles over one long text, in time linear in the text.

Checking each of *k* needles with ``in`` scans the text *k* times; when both grow with the session
(an imported scenario's ``expect:`` items come from its own script), that is quadratic: ``lint``
took 31 s on a 50,000-record scenario. :class:`TextIndex` splits the (whitespace-normalised) text
into tokens once and answers most needles from a token index:

* a needle without spaces lies inside one token: a whole token, or a token's suffix after ``/``
  (a path under a longer one), or a token stripped of punctuation, is a dictionary hit;
* a needle with spaces is a run of tokens whose middle ones are whole: the rarest middle token's
  positions are checked, its first token as a suffix and its last as a prefix of their neighbours;
* anything else (a two-token needle cut inside both words, a true miss) falls back to one
  ``in`` scan, so the answer is always exactly ``needle in text``.
"""

from __future__ import annotations

__all__ = ["TextIndex"]

_PUNCT = "\"'`()[]{}<>,;:.!?"


class TextIndex:
    """Answers ``needle in text`` for a text whose whitespace runs are single spaces.

    >>> ix = TextIndex("edit /w/src/app.py then run: keyerror: 'user_id' in tests")
    >>> [n in ix for n in ("src/app.py", "keyerror: 'user_id' in", "run: key", "absent")]
    [True, True, True, False]
    """

    def __init__(self, text: str):
        self.text = text
        self.tokens = text.split(" ")
        self.positions: dict[str, list[int]] = {}
        self.fragments: set[str] = set()
        for i, tok in enumerate(self.tokens):
            self.positions.setdefault(tok, []).append(i)
            stripped = tok.strip(_PUNCT)
            if stripped != tok:
                self.fragments.add(stripped)
            if "/" in tok:
                at = tok.find("/")
                while at >= 0:
                    self.fragments.add(tok[at + 1:])
                    self.fragments.add(tok[at + 1:].strip(_PUNCT))
                    at = tok.find("/", at + 1)

    def __contains__(self, needle: str) -> bool:
        if not needle:
            return True
        parts = needle.split(" ")
        if len(parts) == 1:
            if needle in self.positions or needle in self.fragments:
                return True
        elif len(parts) >= 3:
            middle = parts[1:-1]
            if all(m in self.positions for m in middle):
                pivot = min(range(len(middle)), key=lambda k: len(self.positions[middle[k]]))
                for j in self.positions[middle[pivot]]:
                    start = j - pivot - 1  # token index of the needle's first (maybe partial) token
                    if self._matches(start, parts):
                        return True
            else:
                return False  # a middle token that is nowhere in the text: not there
        else:
            first, last = parts
            for j in self.positions.get(last, ()) if last in self.positions else ():
                if j > 0 and self.tokens[j - 1].endswith(first):
                    return True
            if first in self.positions and last not in self.positions:
                for j in self.positions[first]:
                    if j + 1 < len(self.tokens) and self.tokens[j + 1].startswith(last):
                        return True
        return needle in self.text

    def _matches(self, start: int, parts: list[str]) -> bool:
        end = start + len(parts) - 1
        if start < 0 or end >= len(self.tokens):
            return False
        tokens = self.tokens
        if not tokens[start].endswith(parts[0]) or not tokens[end].startswith(parts[-1]):
            return False
        return tokens[start + 1:end] == parts[1:-1]
