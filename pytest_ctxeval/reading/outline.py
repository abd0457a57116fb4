"""Reading a summary's sections by their numbers: the numbered headers that run 1 to 9 in order.

A summary written in the person's language titles its sections in that language
(``6. Alle Nachrichten des Nutzers:``, ``## 6. Tous les messages de l'utilisateur``,
``### 6 – Todos los mensajes del usuario``): no vocabulary reads every language, but the numbers
say which section each header is, as they do to a person reading it. The *outline* of a summary is
the run of header lines written alike (the same indent, heading marks, emphasis and separator after
the number), each standing as a header (a Markdown heading, bold, or a title ending in a colon with
the text on the lines below), whose numbers rise from 1 and stay within 1 to 9, at least
:data:`MIN_OUTLINE` of them. A numbered list inside a section is written otherwise (indented, with
text after its colon, plain items) or numbers again from 1, so it is never the outline; a line of
the outline's style with text after its colon (``9. Nächster Schritt: Tests ausführen``) joins it
where its number fits between its neighbours.

In the outline a canonical title (or one the prompt names) keeps its section, wherever it stands.
When most of the outline's titles are in words the section vocabulary cannot read (another language),
every other header takes the section of its number, when no canonical title names that section; in a
summary titled in words it reads, a title it cannot read (``4. Notes``) names no section, as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

__all__ = ["MIN_OUTLINE", "outline_kinds", "header_style", "stands_as_header"]

#: The fewest headers an outline has: the nine sections less three (a summary that lost more is read
#: by its titles only, so a short numbered list is never taken for sections).
MIN_OUTLINE = 6

_STYLE = re.compile(r"^(?P<indent>[ \t]*)(?P<hashes>#*)[ \t]*(?:[^\x00-\x7f\w\s]{1,3}[ \t]*)?(?P<emph>[*_]*)[ \t]*"
                    r"(?P<word>(?:section[ \t]+)?)\d{1,2}(?P<sep>[.):]|[ \t]+[-–—])", re.IGNORECASE)


def header_style(line: str) -> tuple[int, int, str, bool, str]:
    """How a numbered header line is written: indent, heading level, emphasis before the number,
    the word "Section", and the separator after the number (a dash of any kind is ``-``).

    >>> header_style("### 1 – Title")
    (0, 3, '', False, '-')
    >>> header_style("   2. Item: text")
    (3, 0, '', False, '.')
    """
    m = _STYLE.match(line)
    if m is None:
        return (-1, 0, "", False, "")
    sep = m.group("sep")
    return (len(m.group("indent").expandtabs(4)), len(m.group("hashes")), m.group("emph"),
            bool(m.group("word")), "-" if sep.strip() in "-–—" and sep[0] in " \t" else sep)


def stands_as_header(line: str, rest: str | None) -> bool:
    """A numbered line that stands as a header, not a list item: a Markdown heading, bold, or a title
    ending in a colon with nothing after it (its text is on the lines below)."""
    head = line.lstrip()
    if head.startswith("#") or head.startswith(("**", "__")):
        return True
    if rest is not None and not rest.strip():
        return True
    return bool(re.match(r"^(?:section[ \t]+)?\d{1,2}[.):]?[ \t]+(?:[-–—][ \t]+)?(?:\*\*|__)", head, re.IGNORECASE))


def outline_kinds(headers: Sequence[tuple[str, int, str | None]], kinds: Sequence[str],
                  strong_kind: Callable[[int], str | None], known: Callable[[int], bool]) -> dict[int, str]:
    """The section of every header of the outline, by the header's index in ``headers``; {} when the
    summary has no outline.

    ``headers``: each numbered header line in order, as ``(line, number, rest)`` (``rest`` the text
    after the title's colon, None without one); ``kinds``: the sections in canonical order;
    ``strong_kind``: the section a header's title names as a canonical title, by index, or None;
    ``known``: whether the vocabulary reads a header's title at all. When most titles of the outline
    are read, the summary is written in words the vocabulary knows and a title it cannot read
    (``4. Notes``) names no section: a section renamed away is missing.

    >>> lines = [(f"{n}. T{n}:", n, "") for n in range(1, 10)]
    >>> outline_kinds(lines, list("abcdefghi"), lambda i: None, lambda i: False)[5]
    'f'
    >>> outline_kinds([("1. A:", 1, ""), ("   1. x:", 1, "")], list("abcdefghi"), lambda i: None, lambda i: False)
    {}
    """
    styles = [header_style(line) for line, _num, _rest in headers]
    groups: dict[tuple[int, int, str, bool, str], list[int]] = {}
    for i, (line, _num, rest) in enumerate(headers):
        if stands_as_header(line, rest):
            groups.setdefault(styles[i], []).append(i)
    best: list[int] = []
    for style, group in groups.items():
        members = _outer([headers[i][1] for i in group])
        members = [group[j] for j in members]
        nums = [headers[i][1] for i in members]
        if style[0] < 0 or not nums or nums[0] != 1 or nums[-1] > len(kinds) or len(members) < MIN_OUTLINE:
            continue
        # A line of the same style with text after its colon joins where its number fits, right after
        # a header of the outline (not after an item of a list inside a section).
        same = [i for i in range(len(headers)) if styles[i] == style]
        for prev, i in zip(same, same[1:]):
            if i in members or prev not in members:
                continue
            after = [headers[j][1] for j in members if j > i]
            if headers[prev][1] < headers[i][1] < (after[0] if after else len(kinds) + 1):
                members = sorted([*members, i])
        if len(members) > len(best):
            best = members
    if not best:
        return {}
    named = {i: k for i in best if (k := strong_kind(i))}
    # A section a canonical title names twice: the title at its number keeps it, else the first.
    for kind in set(named.values()):
        holders = [i for i in best if named.get(i) == kind]
        keep = next((i for i in holders if headers[i][1] == kinds.index(kind) + 1), holders[0]) \
            if kind in kinds else holders[0]
        for i in holders:
            if i != keep:
                del named[i]
    taken = set(named.values())
    out = dict(named)
    if 2 * sum(known(i) for i in best) > len(best):
        return out  # titled in words the vocabulary reads: a title it cannot read names no section
    for i in best:
        if i not in out and (kind := kinds[headers[i][1] - 1]) not in taken:
            out[i] = kind
            taken.add(kind)
    return out


def _outer(nums: Sequence[int]) -> list[int]:
    """The positions of the outer list of a run of numbered lines written alike: a number that does
    not rise starts a list inside a section, which goes on while its numbers rise by one; a number
    both lists could take belongs to the inner list when a later line has it too.

    >>> _outer([1, 2, 3, 1, 2, 3, 4, 4, 5, 6])
    [0, 1, 2, 7, 8, 9]
    """
    out: list[int] = []
    last, inner = 0, None
    for pos, num in enumerate(nums):
        if inner is not None and num == inner + 1 and (num <= last or num in nums[pos + 1:]):
            inner = num
        elif num > last:
            out.append(pos)
            last, inner = num, None
        else:
            inner = num
    return out
