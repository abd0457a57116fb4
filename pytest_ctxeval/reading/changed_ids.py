"""A commit id the summary states with a character changed: the session shows ``abc1234``, the
summary says ``abc1243``. The next context window would check out, revert or cite a commit that
does not exist (or another one), and nothing in the summary says the id is uncertain.

An id is a run of 7 to 40 hexadecimal characters, with a digit and a letter in it, standing as a word
of its own (not inside a path, a UUID or GUID, or a longer word); a task's or another tool's
hexadecimal id is read the same way as a commit's. A summary's id is *shown* when an id of the
session starts with it or it starts with one (a short id for a full one, or the reverse); it is
*changed* when it is not shown and differs from the same length of a shown id by one adjacent
transposition or at most :data:`MAX_CHANGED` substituted characters (two random ids of seven
characters are that close about once in fifty thousand pairs). An id near no id of the session is not
judged: it may come from before the session (a base branch, a release) and nothing says it changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ChangedId", "MAX_CHANGED", "changed_ids", "commit_ids"]

#: At most this many characters of a shown id substituted make a changed one.
MAX_CHANGED = 2
_ID = re.compile(r"(?<![\w/.@#:{-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w/@}-]|\.\w)", re.IGNORECASE)


@dataclass(frozen=True)
class ChangedId:
    told: str        # the summary's id
    shown: str       # the session's id it is a changed copy of
    line: int        # 1-based line of the summary text


def commit_ids(text: str) -> list[str]:
    """The commit ids of ``text`` (lower case), in order, each once.

    >>> commit_ids("[main abc1234] Fix it; see 0c29498 and src/abc1234f/x, 8ecab05f-uuid, deadbeef")
    ['abc1234', '0c29498']
    """
    return list(dict.fromkeys(m.group(0).lower() for m in _ID.finditer(text)))


def _shown(told: str, ids: set[str]) -> bool:
    return any(i.startswith(told) or told.startswith(i) for i in ids)


def _near(told: str, shown: str) -> bool:
    """``told`` differs from the same length of ``shown`` by one adjacent transposition or at most
    :data:`MAX_CHANGED` substituted characters."""
    n = min(len(told), len(shown))
    a, b = told[:n], shown[:n]
    diff = [k for k in range(n) if a[k] != b[k]]
    if len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]:
        return True
    return 0 < len(diff) <= MAX_CHANGED


def changed_ids(summary: str, session_ids: set[str]) -> tuple[list[str], list[ChangedId]]:
    """The ids ``summary`` names that the session shows, and those changed from one it shows (see
    the module docstring). ``session_ids``: :func:`commit_ids` of the session, as a set."""
    shown: list[str] = []
    changed: list[ChangedId] = []
    for n, line in enumerate(summary.split("\n"), start=1):
        for told in commit_ids(line):
            if _shown(told, session_ids):
                shown.append(told)
                continue
            near = sorted(i for i in session_ids if _near(told, i))
            if near and not any(c.told == told for c in changed):
                changed.append(ChangedId(told, near[0], n))
    return list(dict.fromkeys(shown)), changed
