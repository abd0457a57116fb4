"""Counts in words: where a number meets a noun in a reason or a report ("1 scenario", "2
scenarios", "the 1 error line", "all 3 error lines"), never "1 scenarios" or "scenario(s)"."""

from __future__ import annotations

__all__ = ["all_of", "plural"]


def plural(n: int, noun: str, many: str | None = None, *, sep: bool = False) -> str:
    """``n`` and ``noun`` in the form the count takes: ``plural(1, "file")`` -> ``"1 file"``,
    ``plural(3, "file")`` -> ``"3 files"``; ``many`` for an irregular plural (``"analyses"``);
    ``sep``: thousands separators (``"1,200 lines"``).

    >>> plural(1, "scenario"), plural(0, "scenario"), plural(2, "summary", "summaries")
    ('1 scenario', '0 scenarios', '2 summaries')
    """
    number = f"{n:,}" if sep else str(n)
    return f"{number} {noun if n == 1 else (many or _plural_of(noun))}"


def all_of(n: int, noun: str, many: str | None = None) -> str:
    """Every one of ``n``: ``"the 1 error line"`` or ``"all 3 error lines"``.

    >>> all_of(1, "changed file"), all_of(4, "changed file")
    ('the 1 changed file', 'all 4 changed files')
    """
    return f"the {plural(n, noun)}" if n == 1 else f"all {plural(n, noun, many)}"


def _plural_of(noun: str) -> str:
    """The regular plural of a noun or of a phrase ending in one (its last word takes it)."""
    head, _, last = noun.rpartition(" ")
    if last.endswith(("s", "x", "z", "ch", "sh")):
        last += "es"
    elif last.endswith("y") and last[-2:-1] not in ("a", "e", "i", "o", "u"):
        last = last[:-1] + "ies"
    else:
        last += "s"
    return f"{head} {last}" if head else last
