"""Verbatim matching of a person's message (or a quote) against a summary, the way a careful reader does.

A summariser that keeps a message "verbatim" still changes characters that carry no meaning:

* quote characters: inner quotes dropped (``@"architect"`` -> ``@architect``), ``"`` turned into
  ``'``, curly quotes, backticks;
* typography (:func:`typography`): ``…`` for ``...``, arrows (``→`` for ``->``, ``←``, ``⇒``, ``↔``),
  ``≤``/``≥``/``≠``, a dash between words or spaces (``-``, ``--``, ``–``, ``—``: the same
  punctuation; ``1–5`` is ``1-5``), full-width ASCII (``，`` for ``,``), Unicode spaces;
* a code fence and its language tag (`` ```python `` … `` ``` ``; the code inside is compared), the
  ``@`` of a Claude Code file mention (``@src/app.py`` -> ``src/app.py``);
* Markdown escapes (``\\*``, ``\\_``), a quote mark escaped inside a quoted item (``\\"``), and invisible
  Unicode: NFC vs NFD, zero-width characters,
  bidirectional overrides, soft hyphens; a space before ``?``/``!``;
* case, runs of whitespace, and line breaks flattened into `` / `` or ``; ``; a media marker
  (``[Image #2]``, ``[Pasted text #1 +40 lines]``) kept or dropped;
* a typo the person made, fixed (``pythin`` -> ``python``): at most one word in 15, each one edit
  from the original, same first letter, letters only (``sync``/``async``, ``1.0.5``/``1.0.6`` differ),
  never a word's other form (``merge``/``merged``, ``test``/``tests``), never a change of a common
  English word (``ship``/``skip``, ``lock``/``look``: :mod:`pytest_ctxeval.reading.common_words`).

And a message that is a typed lead followed by pasted machine output (a stack trace, a console log, code)
counts as kept when the lead is verbatim and the paste is what was left out; pasted output followed by a
typed paragraph, when that paragraph is verbatim; pasted output alone (the person typed no words of their
own), when its error line is verbatim: the line that says what went wrong stands for the paste.

Anything else is a difference, and :func:`show_difference` makes it visible in a reason (``[-a-]{+b+}``,
invisible characters as ``<U+200B>``): two strings that look identical never make a reason that does not
say why they differ.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from functools import cached_property, lru_cache
from dataclasses import dataclass
from collections.abc import Callable

from .paste_error import content_free_tail, error_told, last_error_line
from .common_words import is_common_word
from .pasted_chat import chat_start

__all__ = ["normalize", "typography", "Match", "Haystack", "haystack", "find", "closest_line", "most_alike", "percent_alike", "show_difference", "visible", "machine_output", "words",
           "strip_fences", "typed_tail", "typed_after_paste", "paste_error_lost", "machine_line", "lines_apart", "word_count"]

_INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
                        "\u2066-\u206f\ufeff\ufe00-\ufe0f]")
_QUOTE_CHARS = re.compile("[\"'`\u00b4\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u2032\u2033\u00ab\u00bb"
                          "\u2039\u203a\u300c\u300d]")
#: A backslash escape: Markdown's (``\\*``, ``\\_``), and a quote mark escaped inside a quoted item
#: (``- "set it to \\"strict\\" mode"``: the summariser's quote marks around the person's own).
_MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~\"'])")
_MD_STRONG = re.compile(r"\*\*|__|~~")
#: Single emphasis markers in pairs at word edges (``*small*``, ``_small_``), not ``*.py`` or ``snake_case``.
#: Each branch starts with its marker and looks behind it (``\*(?<![\w*]\*)`` is ``(?<![\w*])\*``), so
#: the search jumps from marker to marker instead of trying both branches at every character: the
#: same matches, about 8 times faster on long tool outputs (tests/test_verbatim_fast_patterns.py).
_MD_EM = re.compile(r"\*(?<![\w*]\*)(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])|_(?<![\w_]_)(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?![\w_])")
#: A URL as a Markdown autolink or as a link whose text is the URL itself.
_MD_URL = re.compile(r"<((?:https?|ftp)://[^\s<>]+)>|\[((?:https?|ftp)://[^\s\]]+)\]\(\2\)")
#: A Markdown link whose text is a label of its URL (``[acme/shop#481](https://github.com/acme/shop/issues/481)``):
#: a reader sees the URL the person typed, under a shorter name.
_MD_LABELLED_URL = re.compile(r"\[([^\]\n]{1,120})\]\(((?:https?|ftp)://[^\s)]+)\)")
_ALNUM = re.compile(r"[^\W_]+")


def _url_label(m: re.Match[str]) -> str:
    words, url = _ALNUM.findall(m.group(1).casefold()), m.group(2)
    return url if words and all(w in url.casefold() for w in words) else m.group(0)


#: Emoji (pictographs, emoticons, dingbats, symbols) and the joiner between them: a reaction beside
#: the words ("looks good 👍 ship it"), dropped by summarisers; a message that is only emoji keeps them.
_EMOJI = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B50\u2B55\u200d]+")
#: Where the person pasted media the prompt holds a marker the summariser may keep or drop.
_MEDIA = re.compile(r"\[(?:Image|image|Pasted text|Document)(?: #\d+)?(?::[^\]\n]{0,200})?(?: \+\d+ lines)?\]")
#: A space before ``?!.,;:)`` (a summariser's "slow ?" for "slow?"), once whitespace is collapsed.
_SPACE_BEFORE_PUNCT = re.compile(r" ([?!.,;:)])")
#: A Markdown code fence line with its language tag (`` ```python ``, ``~~~``): formatting around
#: code, which a summary may keep as an inline code span or leave out; the code inside is compared.
_FENCE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})[ \t]*[\w+#.-]*[ \t]*$", re.MULTILINE)
#: ... and a fence flattened onto one line with the block (`` ```python client.get(url)``` ``): its
#: tag is formatting when it names a language (``ls`` in `` ```ls -la``` `` is code).
_INLINE_FENCE = re.compile(
    r"(?:`{3,}|~{3,})(?:python|py|javascript|js|typescript|ts|tsx|jsx|bash|sh|shell|zsh|console|json|jsonc|yaml|yml|"
    r"toml|ini|sql|go|golang|rust|rs|java|kotlin|kt|c|cpp|csharp|cs|ruby|rb|php|html|css|scss|xml|diff|text|txt|"
    r"plaintext|markdown|md|swift|elixir|ex|dockerfile|makefile|graphql|lua|scala|powershell|ps1|vue|svelte)(?=\s)",
    re.IGNORECASE)
#: Claude Code's ``@path`` file mention: the ``@`` before a path (``@src/app/main.py``, ``@README.md``)
#: is the tool's syntax, not the person's words; a summary may name the path without it. Not an
#: e-mail address (a word character before the ``@``).
_AT_MENTION = re.compile(r"(?<![\w@])@(?=[\w~.-][\w~.-]*(?:/|\.\w))")
#: How a summariser flattens the line breaks of a multi-line message.
_LINE_SEPARATORS = re.compile(r"\s*(?:\n|(?<=\s)[/|;•·]\s)\s*")


#: Characters a summariser (or a keyboard) sets typographically, as the ASCII the person may have typed.
_TYPOGRAPHY = {
    "\u2026": "...", "\u22ef": "...",  # … ⋯
    "\u2192": "->", "\u27f6": "->", "\u2190": "<-", "\u27f5": "<-", "\u21d2": "=>", "\u27f9": "=>",
    "\u2194": "<->", "\u21d4": "<=>", "\u2264": "<=", "\u2265": ">=", "\u2260": "!=",
    "\u2010": "-", "\u2011": "-", "\u2212": "-",  # hyphen, non-breaking hyphen, minus sign
    "\u3000": " ", **{chr(c): chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)},  # full-width forms
    # full-width punctuation carries its own space ("ok，done" is "ok, done")
    **{chr(ord(p) + 0xFEE0): p + " " for p in ",:;!?"},
}
_TYPOGRAPHY_CHARS = re.compile("[" + "".join(_TYPOGRAPHY) + "]")
#: A dash as punctuation: an em dash (or bar) anywhere, an en dash other than in a range of numbers
#: (``1–5`` is a hyphen), and ``--``/``---`` between two words or two spaces (not ``--flag``).
#: Written so the search is linear and skips ahead: each branch starts with a character and looks
#: behind it (``-(?<=\w-)-{1,2}`` is ``(?<=\w)-{2,3}``), and the spaces before a dash are read from
#: the start of their run only (a match inside a run would start at its start). A text without a
#: Unicode dash (most tool outputs, where ``--flag`` brings the search here) is searched for the
#: ``--`` branches alone, which can only match there anyway. The same matches as the one-line
#: ``(?<=\d)\u2013(?=\d)|[^\S\n]*[dashes][^\S\n]*|(?<=\w)-{2,3}(?=\w)|(?<=\s)-{2,3}(?=\s)``, which
#: tried every branch at every character and re-read runs of spaces: 9 times slower on the texts a
#: library comparison normalises (tests/test_verbatim_fast_patterns.py).
_DASH = re.compile(r"\u2013(?<=\d\u2013)(?=\d)|[^\S\n](?<![^\S\n][^\S\n])[^\S\n]*[\u2013\u2014\u2015\u2e3a\u2e3b][^\S\n]*"
                   r"|[\u2013\u2014\u2015\u2e3a\u2e3b][^\S\n]*|-(?<=\w-)-{1,2}(?=\w)|-(?<=\s-)-{1,2}(?=\s)")
_DOUBLE_HYPHEN = re.compile(r"-(?<=\w-)-{1,2}(?=\w)|-(?<=\s-)-{1,2}(?=\s)")


def typography(text: str) -> str:
    """``text`` with typographic characters as the ASCII they stand for: ellipsis, arrows, dashes
    between words, full-width punctuation (every verbatim comparison reads text this way).

    >>> typography("wait… then a → b — or 1–5")
    'wait... then a -> b - or 1-5'
    """
    if _TYPOGRAPHY_CHARS.search(text):
        text = _TYPOGRAPHY_CHARS.sub(lambda m: _TYPOGRAPHY[m.group()], text)
    if "\u2013" in text or "\u2014" in text or "\u2015" in text or "\u2e3a" in text or "\u2e3b" in text:
        text = _DASH.sub(lambda m: "-" if m.group() == "\u2013" else " - ", text)
    elif "--" in text:
        text = _DOUBLE_HYPHEN.sub(" - ", text)
    return text


def normalize(text: str) -> str:
    """``text`` with every meaningless difference removed (see the module docstring).

    >>> normalize('Use “quotes”  and \\\\*stars\\\\* ?')
    'use quotes and stars?'
    >>> normalize("cafe\\u0301 \\u200bok") == normalize("café ok")
    True
    """
    # The graders normalise the same history texts for every grader and every mutant of a
    # compaction: remembered (by value), many short texts and a few long ones (a pasted log, a
    # whole summary: each costs milliseconds, and a real session's are read again by every grader).
    return _normalize_cached(text) if len(text) <= _CACHED_CHARS else _normalize_long(text)


#: The longest text :func:`normalize` remembers among many (8,192); longer ones are kept 16 at a time.
_CACHED_CHARS = 20_000


def _normalize(text: str) -> str:
    text = unicodedata.normalize("NFC", text)
    text = _INVISIBLE.sub("", text)
    text = text.replace("\u00a0", " ").replace("\u2028", "\n").replace("\u2029", "\n")
    text = typography(text)
    # Each pass only where its pattern can match (what it would change is then nothing).
    text = strip_fences(text)
    if "@" in text:
        text = _AT_MENTION.sub("", text)
    if "[" in text:
        text = _MEDIA.sub(" ", text)
    if "\\" in text:
        text = _MD_ESCAPE.sub(r"\1", text)
    if "**" in text or "__" in text or "~~" in text:
        text = _MD_STRONG.sub("", text)
    if "*" in text or "_" in text:
        text = _MD_EM.sub(lambda m: m.group(1) or m.group(2), text)
    if "://" in text:
        text = _MD_URL.sub(lambda m: m.group(1) or m.group(2), text)
        if "](" in text:
            text = _MD_LABELLED_URL.sub(_url_label, text)
    text = _QUOTE_CHARS.sub("", text)
    # Runs of \s as one space, ends stripped (normalize_ws); then the space before punctuation goes
    # (the same as removing each run of \s there first: str.split() splits on what \s matches).
    return _SPACE_BEFORE_PUNCT.sub(r"\1", " ".join(text.split())).casefold()


_normalize_cached = lru_cache(maxsize=8192)(_normalize)
_normalize_long = lru_cache(maxsize=16)(_normalize)


def strip_fences(text: str) -> str:
    """``text`` without its Markdown code fence lines (`` ```python ``, `` ``` ``): read before line
    breaks are flattened, as a fence is one only at the start of a line."""
    if "```" not in text and "~~~" not in text:
        return text
    return _INLINE_FENCE.sub(" ", _FENCE.sub(" ", text))


#: The marks of a block quote at the start of a line (``> ``, ``>> ``): a message wrapped over lines
#: of a block quote reads as its words.
_BLOCK_QUOTE_MARKS = re.compile(r"^[ \t]*>+[ \t]?", re.MULTILINE)


def _flat(text: str) -> str:
    """Line breaks and the separators a summariser puts in their place (the marks of a block quote's
    lines too), all as one space."""
    if ">" in text and "\n" in text:
        text = _BLOCK_QUOTE_MARKS.sub("", text)
    return _LINE_SEPARATORS.sub(" ", strip_fences(text))


def words(text: str) -> list[str]:
    return normalize(text).split(" ") if text.strip() else []


@dataclass(frozen=True)
class Match:
    """Whether a needle is verbatim in a haystack, and how (``exact``, ``lines``, ``typo``, ``lead``)."""

    found: bool
    how: str = ""
    note: str = ""

    def __bool__(self) -> bool:
        return self.found


#: A typo fix counts when at most one word in this many differs (and at least one is allowed).
TYPO_WORDS = 15


def _edits(a: str, b: str) -> int:
    """Optimal-string-alignment distance (insert, delete, substitute, swap two neighbours)."""
    prev2, prev = None, list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1] and prev2 is not None:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


def _near(a: str, b: str) -> bool:
    """Two words one typo apart: letters only, at least four long, the same first letter (a typo
    rarely hits it, a prefix such as ``a``/``un`` changes the meaning: sync/async), one edit apart.
    Numbers never count: 1.0.5 and 1.0.6 are different versions."""
    a, b = a.strip(".,;:!?()'\""), b.strip(".,;:!?()'\"")
    if a == b:
        return True
    if not (a.isalpha() and b.isalpha()) or min(len(a), len(b)) < 4 or a[0] != b[0]:
        return False
    if (a in _NEGATIONS or b in _NEGATIONS) and sorted(a) != sorted(b):
        return False   # want -> won't (quote marks gone: "wont") turns the meaning; dotn -> dont does not
    if _inflection(a, b) or _inflection(b, a):
        return False   # merge -> merged, test -> tests: another form of the word, not its spelling
    return _edits(a, b) <= 1


def _inflection(short: str, long: str) -> bool:
    """``long`` is ``short`` with a plural ``s`` or a past ``d`` added (``test``/``tests``,
    ``merge``/``merged``): a word's other form, which changes what was said. Not a dropped double
    letter (``proces``/``process``) nor a dropped last letter (``creat``/``create``)."""
    if len(long) != len(short) + 1 or not long.startswith(short):
        return False
    return (long[-1] == "s" and short[-1] != "s") or (long[-1] == "d" and short[-1] == "e")


#: Words that negate, as :func:`normalize` leaves them (apostrophes removed): one letter from a word
#: that does not ("want"/"wont", "cant"/"cast"), so never a typo fix.
_NEGATIONS = frozenset({"none", "never", "cannot", "cant", "dont", "doesnt", "didnt", "wont", "wouldnt", "shouldnt",
                        "couldnt", "isnt", "arent", "wasnt", "werent", "havent", "hasnt", "hadnt", "mustnt", "neednt"})


_PUNCT = ".,;:!?()'\""


def _typo_match(needle: list[str], hay: list[str], rare: Callable[[str], bool] | None = None,
                hay_words: frozenset[str] | None = None) -> str | None:
    """The typo fixes that make ``needle`` a run of ``hay`` (``"pythin->python"``), or None. With
    ``rare``, a word of the needle counts as a typo only when ``rare(word)``: a word the session uses
    elsewhere ("want", "full", "better") is a word, and changing it changes what was said.
    ``hay_words``: the set of ``hay``'s words, when the caller keeps it."""
    if len(needle) < 3:
        return None
    allowed = max(1, len(needle) // TYPO_WORDS)
    # Every word of the needle but the fixed ones is a word of the run, so of the haystack: with
    # more words than that absent from it, no run can match (decided without the alignment below).
    words = hay_words if hay_words is not None else frozenset(hay)
    if sum(1 for w in needle if w not in words) > allowed:
        return None
    # Anchor on the longest run of the needle's words that is in the haystack as it stands.
    sm = difflib.SequenceMatcher(None, hay, needle, autojunk=False)
    block = sm.find_longest_match(0, len(hay), 0, len(needle))
    if block.size < max(2, len(needle) // 3):
        return None
    start = block.a - block.b
    window = hay[max(0, start): start + len(needle)]
    if len(window) != len(needle):
        return None
    fixes = [(a, b) for a, b in zip(needle, window) if a != b]
    if len(fixes) > allowed or not all(_near(a, b) for a, b in fixes):
        return None
    # a common word the person typed, changed by a letter, is another word (ship -> skip), not a typo
    if any(is_common_word(a.strip(_PUNCT)) for a, b in fixes if a.strip(_PUNCT) != b.strip(_PUNCT)):
        return None
    if rare is not None and not all(rare(a.strip(".,;:!?()'\"")) for a, _ in fixes):
        return None
    return ", ".join(f"{a}->{b}" for a, b in fixes)


# Lines of pasted machine output: stack frames, file:line locations, log prefixes, prompts, tracebacks.
_MACHINE_LINE = re.compile(
    r"^\s*at\s+\S|[\w./@-]+\.(?:js|jsx|ts|tsx|mjs|cjs|py|rb|go|rs|java|kt|cs|cpp|cc|c|h|php|ex|exs|swift|scala)"
    r"(?::\d+)+|^\s*File \"|Traceback|^\s*\[[\w .:-]{1,30}\]|^\s*\d{2,4}[-/:]\d{1,2}[-/:]\d{1,4}|^\s*[$>#]\s|"
    r"^\s*(?:E|W|I|D)\d{3,}|\b(?:ERROR|WARN|WARNING|INFO|DEBUG|FATAL)\b|^\s*[|│├└─]|\w+(?:Error|Exception)\b|"
    r"^\s*(?:warning|error|note|panic|fatal)(?:\[\w+\])?:|^\s*-->|^\s*\^+\s*$|https?://\S+:\d+")


# Lines of pasted code.
_CODE_LINE = re.compile(r"[{};]\s*$|^\s*(?:def|class|function|import|from|const|let|var|return|if|elif|else|for|"
                        r"while|public|private|protected|fn|func|package|#include|@\w+)\b|^\s{4,}\S|=>|::|\)\s*:?\s*$")


#: A row of a table a command printed in columns (``docker compose ps``, ``kubectl get pods``,
#: ``ls -l``, ``df -h``): two or more gaps of 2+ spaces between cells. A gap after a sentence's
#: punctuation is a typist's double space, not a column.
_COLUMNS = re.compile(r"\S(?<![.!?:;,])[ ]{2,}\S.*?\S(?<![.!?:;,])[ ]{2,}\S")


#: A field's label on a line of its own, as a web console or settings page is copied ("Bucket ID:",
#: "Current Size:"): a few words and a colon, its value on the next line.
_FIELD_LABEL = re.compile(r"^\s*[^\W\d_][^\W_]*(?:[ /.-][^\W_]+){0,3}:\s*$")
#: A copied page is read as pasted output from this many labelled fields on: a person who types a
#: short structured message ("Context:" … "Goal:" …) writes fewer.
PAGE_FIELDS = 4


def _page_fields(lines: list[str]) -> set[int]:
    """The lines (indexes into the non-empty ``lines``) of a copied page's labelled fields: each
    label line and the value line after it, when there are at least :data:`PAGE_FIELDS` of them."""
    fields = [i for i in range(len(lines) - 1) if _FIELD_LABEL.match(lines[i]) and not _FIELD_LABEL.match(lines[i + 1])]
    return {j for i in fields for j in (i, i + 1)} if len(fields) >= PAGE_FIELDS else set()


def machine_output(text: str) -> bool:
    """Whether ``text`` is mostly pasted machine output or code (at least 60 % of its non-empty lines);
    a copied page's labelled fields (:func:`_page_fields`) count as machine lines."""
    lines = [l for l in text.splitlines() if l.strip()]
    if not lines:
        return False
    page = _page_fields(lines) if ":" in text else set()
    machine = sum(1 for i, l in enumerate(lines) if i in page or _MACHINE_LINE.search(l) or _CODE_LINE.search(l)
                  or (len(l) > 40 and " " not in l.strip()) or _COLUMNS.search(l))
    # 80 characters at least, a character of a script without spaces counting double (it holds as
    # much as two Latin ones: a two-line Chinese console paste is as long as its English one)
    return machine / len(lines) >= 0.6 and len(text) + len(_CJK.findall(text)) >= 80


def _lead_kept(needle: str, norm_hay: str, *, with_tail: bool = True) -> tuple[int, str] | None:
    """When the start of ``needle`` is verbatim in the haystack and the rest is pasted machine output
    (and, ``with_tail``, what the person typed after it is in the haystack too): the length of the
    kept lead (in words) and the rest; else None."""
    parts = needle.split()
    if word_count(parts) < 4:
        return None
    # The shortest prefix of four words must be verbatim for any lead to be kept (presence is
    # monotone in length): most needles that are not found fail here, on one short search.
    first = next(k for k in range(1, len(parts) + 1) if word_count(parts[:k]) >= 4)
    if normalize(" ".join(parts[:first])) not in norm_hay:
        return None
    lo, hi = 0, len(parts)  # the longest verbatim prefix, in words (presence is monotone in length)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if normalize(" ".join(parts[:mid])) in norm_hay:
            lo = mid
        else:
            hi = mid - 1
    if word_count(parts[:lo]) < 4 or lo == len(parts):
        return None
    # The rest starts after the kept words; find it in the original (line structure matters).
    rest = needle
    for p in parts[:lo]:
        rest = rest[rest.find(p) + len(p):]
    cut_line = needle[:len(needle) - len(rest)].rsplit("\n", 1)[-1] + rest.split("\n", 1)[0]
    if rest.split("\n", 1)[0].strip() and machine_line(cut_line):
        # The kept words end inside a line of pasted output ("TypeError: Cannot read properties of
        # undefined" of "... (reading 'create')"): they are the start of the paste, not a typed lead.
        return None
    if chat_start(rest) != -1 and not rest[:chat_start(rest)].strip():
        return word_count(parts[:lo]), rest   # a pasted conversation after the lead (reading/pasted_chat.py)
    if not machine_output(rest):
        return None
    # What the person typed after the paste (a paragraph of prose after its last machine line) is
    # theirs too: "… <87 KB of console output> Also, do NOT use Chakra any more: remove it"; a short
    # question that only asks for help ("any idea?") may go. The paste's error line, the one fact of
    # it the next agent needs, must be told anywhere in the item (:mod:`.paste_error`).
    if with_tail:
        tail = typed_tail(rest)
        if tail and not content_free_tail(tail) and normalize(tail) not in norm_hay and \
                normalize(_flat(tail)) not in norm_hay:
            return None
        if not error_told(last_error_line(rest), norm_hay, normalize):
            return None
    return word_count(parts[:lo]), rest


#: Han ideographs, kana and hangul syllables: scripts written without spaces between words (hangul
#: usually has them; a run of it counts the same way).
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def _lettered(token: str) -> bool:
    """A word of letters (punctuation around it aside); in a script without spaces, a run of letters
    and the punctuation between them (``导出结束，可是文件是空的`` is one token of a sentence)."""
    if _CJK.search(token):
        return re.fullmatch(r"[^\W\d_]+", re.sub(r"[\W_]+", "", token)) is not None
    return _WORD.fullmatch(token.strip(".,;:!?()'\"")) is not None


def word_count(tokens: list[str]) -> int:
    """How many words the whitespace-separated ``tokens`` hold: one each, but a token written in a
    script without spaces (Chinese, Japanese) counts one word per two of its characters, so a
    typed Chinese sentence is as long as its English one (``右键点击之后日志显示`` is 5 words, not 1)."""
    return sum(max(1, len(_CJK.findall(t)) // 2) for t in tokens)


#: A line (or the lines) typed after a pasted log count as the person's own words from this many words
#: on, most of them words of letters (a log's own last line, "webpack compiled with 2 warnings", is
#: shorter); a shorter line counts when it is addressed to the agent (:data:`_ADDRESSED`).
TYPED_TAIL_WORDS = 8

#: A short line that reads as the person's, not a tool's: a question; or it starts with a negation,
#: a conjunction, "please" or an imperative ("don't touch prod", "but not on main", "fix it"); or it
#: speaks in the first person. A tool's own hints ("Run `npm fund` for details", "Try 'ls --help'")
#: carry a command or flag and are not read as typed (:data:`_TOOL_HINT`).
_ADDRESSED = re.compile(
    r"\?\s*$|^\W*(?:but|and|also|so|then|please|pls|plz|now|just|only|still|instead|don'?t|do not|never|"
    r"why|how|what|(?:can|could|would|will|should) (?:you|we|i)|let'?s|fix|make|keep|remove|revert|undo|stop|add|change|update|"
    r"use|try|run|check|look|help|continue|go|do|leave|ignore|skip)\b|\b(?:i|i'm|im|i've|ive|me|my|we|us|our)\b",
    re.IGNORECASE)
_TOOL_HINT = re.compile(r"`|(?<!\S)--?\w|^\s*[\w./-]+:\s|(?<!\w)'[^'\s][^']*'(?!\w)")
#: What tools say to whoever runs them, in prose: a prompt (``[y/N]``, "Are you sure …?", "Did you
#: mean …?") or advice ("Try again later", "for more details", "to learn more", "To ignore, …").
_TOOL_SAYS = re.compile(r"\[[yn]/[yn]\]|\((?:yes/no|y/n)\b|\bdid you mean\b|^\W*(?:are you sure|do you want to)\b|"
                        r"\btry again\b|\bfor (?:more )?(?:details|information|info)\b|\bto learn more\b|^\W*to ignore\b",
                        re.IGNORECASE)
_SIGN_OFF = re.compile(r"^\W*(?:thanks?(?: you)?|thx|ty|tia|cheers|please|pls|cc\b.*)\W*$", re.IGNORECASE)


_WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
#: A letter of a script other than Latin (Cyrillic, Greek, Arabic, Hebrew, Indic, CJK, Hangul, Thai...).
_NON_LATIN = re.compile(r"[^\W\d_a-zA-Z\u00c0-\u024f\u1e00-\u1eff]")


def _typed_line(line: str) -> bool:
    """A line after a pasted log that reads as typed by the person (see :data:`TYPED_TAIL_WORDS`)."""
    words = line.split()
    if not words or machine_line(line) or _TOOL_SAYS.search(line):
        return False
    letters = sum(_lettered(w) for w in words)
    if word_count(words) >= TYPED_TAIL_WORDS:
        return letters >= 0.7 * len(words)
    if letters < 0.6 * len(words) or _TOOL_HINT.search(line):
        return False
    # Tools print English: a short line in another script, of words of letters, is the person's
    # ("тут креды давай доделаем" after a pasted console page).
    return bool(_ADDRESSED.search(line)) or sum(_NON_LATIN.search(w) is not None for w in words if _lettered(w)) >= 2


def typed_tail(text: str) -> str:
    """The words the person typed after a pasted log: the lines after the log's last machine or code
    line that read as typed (:func:`_typed_line`), read back from the end, whether or not a blank
    line sets them apart ("<log>\\nfix it, but do NOT touch the migrations"); "" when there is none.
    A sign-off after them ("thanks!") is passed over; a log's own last lines ("Analyzed 0 sessions.",
    "webpack compiled with 2 warnings", "npm ERR! …", git's "Aborting") are the log's. A paragraph of
    prose set apart from the log by a blank line (a sentence wrapped over short lines) is typed too."""
    raw = text.strip().splitlines()
    full = [i for i, l in enumerate(raw) if l.strip()]
    page = {full[j] for j in _page_fields([raw[i] for i in full])} if ":" in text else set()
    last = max((i for i, l in enumerate(raw) if l.strip() and (i in page or machine_line(l))), default=None)
    if last is None:
        return ""   # no log before: not a tail after one
    after = [l for l in raw[last + 1:] if l.strip()]
    while after and _SIGN_OFF.match(after[-1]):
        after.pop()
    typed: list[str] = []
    for line in reversed(after):
        if not _typed_line(line):
            break
        typed.insert(0, line)
    if not typed and after:
        # the last paragraph after a blank line, when it is prose as a whole (its lines may be short)
        paragraph: list[str] = []
        for line in reversed(raw[last + 1:]):
            if not line.strip():
                if paragraph:
                    break
                continue
            paragraph.insert(0, line)
        words = " ".join(paragraph).split()
        blank_before = any(not l.strip() for l in raw[last + 1:raw.index(paragraph[0], last + 1)])
        if blank_before and len(words) >= TYPED_TAIL_WORDS and \
                sum(w.strip(".,;:!?()'\"").isalpha() for w in words) >= 0.7 * len(words):
            typed = [l for l in paragraph if not _SIGN_OFF.match(l)]
    return "\n".join(l.strip() for l in typed).strip()


def typed_after_paste(needle: str, haystack: str | Haystack) -> str:
    """What the person typed after a pasted log in ``needle`` (:func:`typed_tail`) when the haystack
    keeps the message's lead but not those words (for a reason to name what was lost); else ""."""
    hay = haystack if isinstance(haystack, Haystack) else Haystack(haystack)
    lead = _lead_kept(needle, hay.flat, with_tail=False)
    tail = typed_tail(lead[1]) if lead is not None else ""
    return "" if not tail or content_free_tail(tail) or normalize(_flat(tail)) in hay.flat else tail


def paste_error_lost(needle: str, haystack: str | Haystack) -> str:
    """The error line of the paste in ``needle`` when the haystack keeps what the person typed around
    it (the lead, or the words typed after a paste with no lead) but does not tell that line
    (:func:`pytest_ctxeval.reading.paste_error.error_told`): for a reason to name it; else ""."""
    hay = haystack if isinstance(haystack, Haystack) else Haystack(haystack)
    lead = _lead_kept(needle, hay.flat, with_tail=False)
    if lead is not None:
        line = last_error_line(lead[1])
        return line if line and not error_told(line, hay.flat, normalize) and not typed_after_paste(needle, hay) else ""
    lines = [l for l in needle.splitlines() if l.strip()]
    first = next((i for i, l in enumerate(lines) if machine_line(l)), None)
    if first is None or word_count(" ".join(lines[:first]).split()) >= 4:
        return ""
    tail = typed_tail(needle)
    if not tail or content_free_tail(tail) or not (normalize(tail) in hay.norm or normalize(_flat(tail)) in hay.flat):
        return ""
    line = last_error_line("\n".join(lines[first:]))
    return line if line and not error_told(line, hay.flat, normalize) else ""


#: Lines tools end their output with that read like prose: npm's ``npm ERR!`` block, git's hints
#: and "Aborting", rustc's "For more information about this error", brew's "Warning: …", and the
#: "Understand this error" Chrome's console adds to a copied message.
_TOOL_PROSE = re.compile(r"^\s*(?:(?:npm|yarn|pnpm)\s+(?:ERR!|WARN|error|warn)|hint:|Aborting\b|For more information\b|"
                         r"Understand this (?:error|warning)\b|"
                         r"(?:warning|error|note|help|fatal|caused by)\b[^\n]{0,40}:)", re.IGNORECASE)


def machine_line(line: str) -> bool:
    """A line of pasted machine output or code (log prefix, stack frame, tool prose, code)."""
    return bool(_MACHINE_LINE.search(line) or _CODE_LINE.search(line) or _TOOL_PROSE.search(line)
                or (len(line) > 40 and " " not in line.strip()) or line.startswith("\t") or _COLUMNS.search(line))


def _in_order(parts: list[str], hay: str) -> bool:
    at = 0
    for part in parts:
        found = hay.find(part, at)
        if found < 0:
            return False
        at = found + len(part)
    return True


#: Between two lines of a message listed as items, the item of one may end with a short note and
#: the next may open with a short label ("- `cd app` — first run"): at most this many words each.
_ITEM_NOTE_WORDS = 3


def _few_words(text: str) -> bool:
    return len(re.findall(r"\w+", text)) <= _ITEM_NOTE_WORDS


def _lines_as_items(parts: list[str], hay_lines: list[str]) -> bool:
    """Whether a message's lines (``parts``, normalised) are in ``hay_lines`` (the haystack's
    non-blank lines, normalised) as a run of their own: each part on the line of the one before it,
    after it, or at the start of the next line, with no more than a short note between. A message's
    lines listed as items stand together; its first line in one item and its second in another
    message's item (after that message's words, or items below) is not the message kept, only its
    words found."""
    for start, line in enumerate(hay_lines):
        if parts[0] not in line:
            continue
        row, at = start, line.find(parts[0]) + len(parts[0])
        for part in parts[1:]:
            found = hay_lines[row].find(part, at)
            if found >= 0 and not _few_words(hay_lines[row][at:found]):
                found = -1
            if found < 0 and row + 1 < len(hay_lines) and _few_words(hay_lines[row][at:]):
                row, found = row + 1, hay_lines[row + 1].find(part)
                if found >= 0 and not _few_words(hay_lines[row][:found]):
                    found = -1
            if found < 0:
                break
            at = found + len(part)
        else:
            return True
    return False


def lines_apart(needle: str, haystack: str | Haystack) -> bool:
    """Whether ``needle``'s lines are all in ``haystack``, in order, but not together
    (:func:`_lines_as_items`): each inside other text, such as the copies of other messages. A
    reason says so instead of showing a closest item."""
    hay = haystack if isinstance(haystack, Haystack) else Haystack(haystack)
    lines = [normalize(l) for l in needle.splitlines() if normalize(l)]
    return len(lines) > 1 and _in_order(lines, hay.norm) and not _lines_as_items(lines, hay.lines)


class Haystack:
    """A text to search many needles in, normalised once (each reading when first needed: most
    needles are found in ``norm``, and a grader may read only ``text``)."""

    def __init__(self, text: str):
        self.text = text

    @cached_property
    def norm(self) -> str:
        return normalize(self.text)

    @cached_property
    def flat(self) -> str:
        return normalize(_flat(self.text))

    @cached_property
    def lines(self) -> list[str]:
        """The text's non-blank lines, each normalised (for a message's lines kept as items)."""
        return [n for n in (normalize(line) for line in self.text.splitlines()) if n]

    @cached_property
    def words(self) -> list[str]:
        return self.flat.split(" ")

    @cached_property
    def word_set(self) -> frozenset[str]:
        return frozenset(self.words)


@lru_cache(maxsize=32)
def haystack(text: str) -> Haystack:
    """The :class:`Haystack` of ``text``, shared by value: the mutation operators and the graders
    search the same region for one message after another (a Haystack only reads ``text``)."""
    return Haystack(text)


def find(needle: str, haystack: str | Haystack, rare: Callable[[str], bool] | None = None) -> Match:
    """Whether ``needle`` is verbatim in ``haystack`` up to meaningless differences (``rare``: see
    :func:`_typo_match`).

    >>> bool(find('why is "it" slow ?', "- why is 'it' slow?"))
    True
    >>> find("why is the agent executing weird pythin?", "why is the agent executing weird python?").how
    'typo'
    >>> bool(find("fix the login bug", "fix the logout bug"))
    False
    """
    hay = haystack if isinstance(haystack, Haystack) else Haystack(haystack)
    norm = normalize(needle)
    if not norm or norm in hay.norm:
        return Match(True, "exact")
    flat = normalize(_flat(needle))
    if flat in hay.flat:
        return Match(True, "lines", "its line breaks were flattened")
    lines = [normalize(l) for l in needle.splitlines() if normalize(l)]
    if len(lines) > 1 and _in_order(lines, hay.norm) and _lines_as_items(lines, hay.lines):
        return Match(True, "lines", "its lines kept in order as separate items")
    fixes = _typo_match(flat.split(" "), hay.words, rare, hay.word_set)
    if fixes is not None:
        return Match(True, "typo", f"a typo fixed ({fixes})")
    lead = _lead_kept(needle, hay.flat)
    if lead is not None:
        n, rest = lead
        chat = chat_start(rest) != -1 and not rest[:chat_start(rest)].strip()
        what = "pasted conversation" if chat else "pasted output"
        note = f"its first {n} words verbatim; the {len(rest):,} characters of {what} after them summarised"
        if (tail := typed_tail(rest)) and content_free_tail(tail) and normalize(_flat(tail)) not in hay.flat:
            note += f"; the question typed after it (\"{visible(tail, 40)}\") left out, it asks nothing of its own"
        return Match(True, "chat" if chat else "lead", note)
    paste = _paste_kept(needle, hay)
    if paste is not None:
        return paste
    if _EMOJI.search(needle) and _WORD.search(bare := _EMOJI.sub(" ", needle)):
        found = find(bare, hay, rare)  # dropped, not swapped: the summary's own emoji stay
        if found:
            return Match(True, found.how if found.how != "exact" else "emoji",
                         "; ".join(n for n in ("an emoji dropped", found.note) if n))
    return Match(False)


#: The line of a pasted log that says what went wrong: an exception or error type and its message
#: (``ValueError: …``, ``_duckdb.ParserException: …``, ``error[E0308]: …``, ``npm ERR! …``).
#: The type may follow the label a program's own logging put before it (``console.error("保存失败:",
#: err)`` prints ``保存失败: TypeError: …``).
_ERROR_LINE = re.compile(r"^\s*(?:[^\n:]{1,40}:\s*)?(?:[\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b[^\n]*:|"
                         r"(?:error|fatal|panic)\b(?:\[\w+\])?:|npm ERR!)", re.IGNORECASE)


def _paste_kept(needle: str, hay: Haystack) -> Match | None:
    """A message that is pasted machine output with no typed lead (fewer than four words before it):
    kept when the paragraph typed after the paste is verbatim (the paste summarised, as a lead's is),
    or, with nothing typed, when the paste's last error line is (the line that says what went wrong
    stands for the stack frames). None when the message is not such a paste or neither is kept."""
    lines = [l for l in needle.splitlines() if l.strip()]
    first = next((i for i, l in enumerate(lines) if machine_line(l)), None)
    if first is None or word_count(" ".join(lines[:first]).split()) >= 4:
        return None
    body = "\n".join(lines[first:])
    if not machine_output(body):
        return None
    tail = typed_tail(needle)
    error = last_error_line(body)
    if tail and not content_free_tail(tail):
        if (normalize(tail) in hay.norm or normalize(_flat(tail)) in hay.flat) and error_told(error, hay.flat, normalize):
            return Match(True, "tail", "the paragraph typed after it verbatim; the pasted output before it summarised")
        return None
    errors = [l.strip() for l in lines if _ERROR_LINE.search(l)]
    if errors and normalize(errors[-1]) in hay.norm:
        return Match(True, "paste", f"pasted output only; its error line verbatim ({visible(errors[-1], 60)})")
    if error and error_told(error, hay.flat, normalize):
        return Match(True, "paste", f"pasted output only; its error line told ({visible(error, 60)})")
    return _short_lead_kept(lines[:first] or _PROMPT.findall(lines[0])[:1], body, hay)


#: A shell prompt before the command a pasted output starts with (``$ docker compose ps``).
_PROMPT = re.compile(r"^\s*[$>#]\s+(.+)$")
#: How many of the output's own words the item that keeps the command must hold: the words that
#: say what the person showed ("web Restarting", "worker Exited").
PASTE_WORDS_TOLD = 2


def _short_lead_kept(lead_lines: list[str], body: str, hay: Haystack) -> Match | None:
    """A command or a few words typed before a pasted output (``docker compose ps`` and its table):
    told when a line of the haystack holds the typed words verbatim and, beside them, words of the
    output (it was summarised, not dropped). Too few typed words to stand for the message alone."""
    lead = " ".join(l.strip() for l in lead_lines).strip()
    if not lead or not 1 <= len(lead.split()) <= 3:
        return None
    norm_lead = normalize(lead)
    out_words = {w.casefold() for w in _WORD.findall(body) if len(w) >= 3} - set(norm_lead.split())
    for line in hay.text.splitlines():
        norm_line = normalize(line)
        if norm_lead in norm_line:
            told = sorted(w for w in out_words if re.search(rf"(?<!\w){re.escape(w)}(?!\w)", norm_line))
            if len(told) >= PASTE_WORDS_TOLD:
                return Match(True, "command", f"the command typed before it verbatim ({visible(lead, 40)}); the pasted "
                                            f"output summarised with its words ({', '.join(told[:4])})")
    return None


def visible(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` with invisible and look-alike characters spelled out (``<U+200B>``)."""
    out = []
    for ch in text[:limit]:
        if _INVISIBLE.match(ch) or (unicodedata.category(ch) in ("Mn", "Cf", "Zs") and ch != " "):
            out.append(f"<U+{ord(ch):04X}>")
        else:
            out.append(ch)
    return "".join(out) + ("…" if len(text) > limit else "")


def show_difference(expected: str, found: str, limit: int = 160) -> str:
    """A word-level diff of ``found`` against ``expected`` that shows every difference, including
    characters that look alike or are invisible: ``weird [-pythin-]{+python+}?``.

    >>> show_difference("run the tests", "run the\\u200b tests")
    'run [-the-]{+the<U+200B>+} tests'
    >>> show_difference('ask @"arch (agent)" to seek approval', "ask @arch (agent) to skip approval")
    'ask @arch (agent) to [-seek-]{+skip+} approval'
    """
    a, b = expected.split(), found.split()
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    ops = sm.get_opcodes()
    # A difference the verdict tolerates (quote marks, typography) is shown as it stands when
    # another one is the real change: "seek approval from @technical-architect … [-seek-]{+skip+}".
    tolerated = {k for k, (op, i1, i2, j1, j2) in enumerate(ops)
                 if op == "replace" and normalize(" ".join(a[i1:i2])) == normalize(" ".join(b[j1:j2]))}
    if len(tolerated) == sum(op != "equal" for op, *_ in ops):
        tolerated = set()
    out: list[str] = []
    for k, (op, i1, i2, j1, j2) in enumerate(ops):
        if op == "equal" or k in tolerated:
            seg = a[i1:i2] if op == "equal" else b[j1:j2]
            out.append(" ".join(seg) if len(seg) <= 6 else " ".join(seg[:3]) + " … " + " ".join(seg[-3:]))
            continue
        old, new = " ".join(a[i1:i2]), " ".join(b[j1:j2])
        piece = ""
        if old:
            piece += f"[-{visible(old, 60)}-]"
        if new:
            piece += f"{{+{visible(new, 60)}+}}"
        out.append(piece)
    text = " ".join(p for p in out if p)
    if a == b and expected != found:  # differ only in whitespace or invisible characters between words
        text = visible(found, limit)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def percent_alike(ratio: float, expected: str | None = None, found: str | None = None) -> str:
    """A similarity ratio as a reason shows it, rounded down: "100%" only for texts that are alike in
    every character, never next to a difference the verdict failed on (0.996 is "99%").

    With the two texts: the ratio of the whole texts (the closest-line search compares their first
    300 characters only, which a cut in the middle of a long message does not reach), and never
    "100%" for texts that differ beyond whitespace.

    >>> percent_alike(0.996), percent_alike(1.0), percent_alike(0.5)
    ('99%', '100%', '50%')
    >>> percent_alike(1.0, "keep " + "a" * 400 + " order", "keep " + "a" * 400 + " [...]")
    '98%'
    """
    if expected is not None and found is not None:
        a, b = " ".join(expected.split()), " ".join(found.split())
        if a != b:
            if len(a) > 300 or len(b) > 300:
                ratio = difflib.SequenceMatcher(None, a[:_WHOLE_RATIO_CHARS], b[:_WHOLE_RATIO_CHARS],
                                                autojunk=False).ratio()
            ratio = min(ratio, 0.99)
    return f"{int(ratio * 100 + 1e-9)}%"


#: The most characters of each text :func:`percent_alike` compares whole (a reason's number, read once).
_WHOLE_RATIO_CHARS = 5_000


def closest_line(needle: str, text: str, at_least: float = 0.5) -> tuple[str, float] | None:
    """The line (list item) of ``text`` most like ``needle``, and how alike (0-1), when at least
    ``at_least``: what a reason shows next to a message that is not verbatim."""
    lines = (" ".join(line.strip(" -*\"'").split()) for line in text.splitlines())
    return most_alike(" ".join(needle.split())[:300], [line for line in lines if line], at_least, autojunk=False)


#: ``(autojunk, target, line[:300])`` -> ``SequenceMatcher.ratio()``, and -> ``quick_ratio()``
#: for a pair the quick bounds ruled out: a compaction's mutants keep most of its lines, so the
#: graders' "closest line" reasons compare the same pairs again (bounded: cleared when full).
_RATIOS: dict[tuple[bool, str, str], float] = {}
_QUICK: dict[tuple[bool, str, str], float] = {}
_PAIRS_KEPT = 50_000


def most_alike(target: str, lines: list[str], at_least: float, *, autojunk: bool) -> tuple[str, float] | None:
    """The first of ``lines`` (each compared by its first 300 characters) whose
    ``difflib.SequenceMatcher(None, target, line, autojunk=autojunk).ratio()`` is the highest, with
    that ratio, when it is at least ``at_least``; else None.

    A line whose quick upper bounds (``real_quick_ratio``, ``quick_ratio``) cannot reach
    ``at_least`` or the best ratio so far is skipped without the full comparison (it could not
    be the answer), and every ratio and bound is remembered by value."""
    best: tuple[str, float] | None = None
    matcher = None
    if len(_RATIOS) > _PAIRS_KEPT or len(_QUICK) > _PAIRS_KEPT:
        _RATIOS.clear()
        _QUICK.clear()
    for line in lines:
        key = (autojunk, target, line[:300])
        floor = at_least if best is None else max(at_least, best[1])
        ratio = _RATIOS.get(key)
        if ratio is None:
            n, m = len(target), len(key[2])
            if (2.0 * min(n, m) / (n + m) if n + m else 1.0) < floor:  # real_quick_ratio()
                continue
            quick = _QUICK.get(key)
            if quick is not None and quick < floor:
                continue
            if matcher is None:
                matcher = difflib.SequenceMatcher(None, target, "", autojunk=autojunk)
            matcher.set_seq2(key[2])
            if quick is None:
                quick = _QUICK[key] = matcher.quick_ratio()
                if quick < floor:
                    continue
            ratio = _RATIOS[key] = matcher.ratio()
        if ratio >= at_least and (best is None or ratio > best[1]):
            best = (line, ratio)
    return best
