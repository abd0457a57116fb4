"""Which natural language a text is written in, coarsely: enough to tell that a request and a summary
are in two different languages.

The offline judge (a term-overlap heuristic, ``llm/reference.py``) cannot compare across languages:
a French request paraphrased in an English summary shares none of its words, so the heuristic would
call the request lost. A real judge reads both. The LLM graders use :func:`cross_language` to say
"cannot judge offline" there instead of failing the summary (``graders/judge.py``).

Deliberately coarse and conservative: a script other than Latin decides at once (Chinese, Japanese,
Korean, Cyrillic, ...); Latin-script text is placed only by its function words, and only when one
language clearly leads. Text it cannot place (code, a few words, identifiers) is ``None`` and is
never called another language.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["language_of", "has_language", "cross_language"]

#: Scripts that name a language (or a family the heuristic cannot cross) on their own: the first
#: letter of the Unicode name of a character -> the language reported.
_SCRIPTS = {
    "CJK": "Chinese", "HIRAGANA": "Japanese", "KATAKANA": "Japanese", "HANGUL": "Korean",
    "CYRILLIC": "Cyrillic-script", "ARABIC": "Arabic", "HEBREW": "Hebrew", "GREEK": "Greek",
    "THAI": "Thai", "DEVANAGARI": "Devanagari-script",
}

#: Function words: frequent, short, and not words of code. Each list leaves out what another
#: language shares with it ("de", "a", "en", "la", "die" are in several).
_FUNCTION_WORDS = {
    "English": "the and is are was were this that with for not you your have has will would should what "
               "which when there their they them it's don't can't please into from",
    "French": "le les des une est sont avec pour pas vous nous dans sur qui que ce cette ces mais aussi "
              "fait faire être ajoute ajouter il elle au aux du c'est n'est",
    "Spanish": "el los las una es son con para por pero como más este esta estos hay muy también "
               "puedes hacer del al lo que quiero",
    "German": "der das und ist nicht ein eine mit für auf auch bitte sind wird werden dem den des "
              "ich wir sie kannst noch oder aber",
    "Portuguese": "os um uma são com para não você isso esta este também mais fazer pelo pela nao "
                  "do da dos das no na em ao é",
    "Italian": "il gli una sono con per non questo questa anche fare della delle nel alla che",
    "Dutch": "het een van zijn niet met voor ook maar dat deze wordt worden kun graag alsjeblieft",
    "Vietnamese": "của và là không được các có cho này trong một những với để khi thì bạn hãy",
}

#: A word as the function-word lists hold them (letters, an apostrophe inside).
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
#: Code and quoted machine text say nothing of the language the person writes in.
_CODE = re.compile(r"```[\s\S]*?```|`[^`\n]*`")


@lru_cache(maxsize=1)
def _word_sets() -> dict[str, frozenset[str]]:
    sets = {lang: set(words.split()) for lang, words in _FUNCTION_WORDS.items()}
    # A word two languages share decides neither.
    shared = {w for a in sets for b in sets if a < b for w in sets[a] & sets[b]}
    return {lang: frozenset(words - shared) for lang, words in sets.items()}


def _script_counts(text: str) -> tuple[dict[str, int], int]:
    counts: dict[str, int] = {}
    letters = 0
    for ch in text:
        if not ch.isalpha():
            continue
        letters += 1
        if ch < "\u0250":  # Basic Latin to Latin Extended-B: the common case, no name lookup
            continue
        name = unicodedata.name(ch, "")
        head = name.split(" ", 1)[0]
        lang = _SCRIPTS.get(head)
        if lang is None and head == "LATIN":
            continue
        if lang is not None:
            counts[lang] = counts.get(lang, 0) + 1
    return counts, letters


def _function_word_hits(text: str) -> dict[str, int]:
    words = _word_sets()
    hits = {lang: 0 for lang in words}
    for w in _WORD.findall(text.lower().replace("’", "'")):
        for lang, ws in words.items():
            if w in ws:
                hits[lang] += 1
    return hits


@lru_cache(maxsize=4096)
def language_of(text: str) -> str | None:
    """The language ``text`` is written in, or None when it cannot say.

    >>> language_of("Ajoute un test pour le cas vide, et ne change pas l'API publique.")
    'French'
    >>> language_of("把配置合并到一个文件") , language_of("Add a test for the empty case, please.")
    ('Chinese', 'English')
    >>> language_of("pytest -q tests/test_api.py") is None
    True
    """
    prose = _CODE.sub(" ", text)
    counts, letters = _script_counts(prose)
    if letters == 0:
        return None
    if counts:
        # Japanese writes kanji (CJK) between its kana: any kana makes CJK text Japanese.
        if counts.get("Japanese") and counts.get("Chinese"):
            counts["Japanese"] += counts.pop("Chinese")
        lang, n = max(counts.items(), key=lambda kv: kv[1])
        if n >= 0.3 * letters or n >= 6:
            return lang
    hits = _function_word_hits(prose)
    ranked = sorted(hits.items(), key=lambda kv: -kv[1])
    (first, a), (_, b) = ranked[0], ranked[1]
    if a >= 2 and a >= 2 * b:
        return first
    return None


def has_language(text: str, language: str) -> bool:
    """Whether ``text`` holds some writing in ``language`` (a quote, a paragraph): a summary in
    English that quotes the person's French messages has French in it. The same context is asked
    about for every message judged against it: read once per text (up to 200,000 characters)."""
    if len(text) <= 200_000:
        return language in _languages_held(text)
    return language in _languages_held.__wrapped__(text)


@lru_cache(maxsize=64)
def _languages_held(text: str) -> frozenset[str]:
    """The languages :func:`has_language` finds in ``text``."""
    prose = _CODE.sub(" ", text)
    counts, _ = _script_counts(prose)
    held = {lang for lang, n in counts.items() if n >= 4}
    if counts.get("Japanese", 0) >= 2:  # kanji count for Japanese text that has some kana
        held.add("Japanese")
    else:
        held.discard("Japanese")
    held |= {lang for lang, n in _function_word_hits(prose).items() if n >= 2}
    return frozenset(held)


def cross_language(needle: str, haystack: str) -> str | None:
    """``"French vs English"``-style when ``needle`` is in a language ``haystack`` holds none of
    (so comparing their words says nothing), else None."""
    lang = language_of(needle)
    if lang is None or has_language(haystack, lang):
        return None
    other = language_of(haystack)
    return f"{lang} vs {other or 'another language'}"
