"""Values a summary tells about the session that the session never showed.

A summariser that misremembers a value writes one of its own in its place: "PR #47 merged" for the
session's #40, ``history/2026-02-24_plugin.md`` for the file
dated the 23rd, "ratatui 0.30" for the 0.29 the session wrote into ``Cargo.toml``, "27 tests pass"
when every run printed 26, "38.75%" for a measured 28.75. The next context window acts on the wrong
value (opens the wrong PR, checks out the wrong branch, edits a file that does not exist). These
values are settled by the transcript, because the session can only have learnt them from a command,
a tool's output or the person: :func:`unseen_values` reports one the session's text (every message,
tool input and tool output before the compaction, earlier summaries included) never holds:

* an issue or pull-request number (``#41``; the session holds it as ``#41``, ``pull/41``,
  ``issues/41``, ``PR 41``, ``"number": 41``, a line of ``gh pr list``), not one that numbers the
  session's own tasks, steps or findings ("Task #10": a summary may number its todo list itself);
* a date inside a name or a path (``2026-02-23_plugin.md``, ``logs/2026-02-23/``; a date standing
  alone may be the day the summary was written), in a sentence that does not speak of a file still to
  come;
* a branch named in backticks ("on branch ``phase0-workspace-cleanup``") in a sentence that does not
  speak of one still to come ("create branch …", "a new branch …"), outside the plan, when the session
  holds a name two edits or fewer from it (the system prompt names the current branch, which the
  transcript does not hold);
* a measured figure with decimals (``38.75%``; the session may print it without the sign);
* a version of three parts (``4.0.18``, ``v2.1.49``), or of two written as a requirement
  (``@^4.0``, ``= "0.29"``, ``==1.2``), that the session holds one part away (``4.0.17``, ``0.28``)
  and never as written: a version the session never came near may be the summariser's knowledge of
  the package; outside the plan (sections 7 and 9 may name the version to move to);
* a count of tests passed or failed, of errors or warnings ("26 tests pass", "3 failed" in a line
  about tests, "reported 5 errors"; not a tally of tool calls or commands), when no output of the session prints that number beside such a count, nor two counts
  that add up to it (a line that adds counts up, "26 + 1 = 27", is the summary's own arithmetic and
  not judged, nor is its result said again elsewhere);
* an exit code ("exit code 129") no result of the session ended with, an HTTP status ("502 Bad
  Gateway", "status 404") no output of the session holds.

Sections 6 (the person's messages, which ``verbatim_user_messages`` judges) and the kept messages
are not read, nor are commit ids (``stale_values`` judges a commit id told with a character changed).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .summary import plain_emphasis

__all__ = ["UnseenValue", "derived_counts", "unseen_reasons", "unseen_values"]


@dataclass(frozen=True)
class UnseenValue:
    kind: str      # what the value is: "issue or pull-request number", "branch", "count", ...
    value: str     # as the summary wrote it
    line: str      # the summary's line that holds it


_REF = re.compile(r"(?<![\w&#/])#([1-9]\d{1,4})(?![\dA-Fa-f])")   # not a colour (#003322, #1e1e2e)
#: A word before ``#12`` that numbers something of the session's own ("Task #12", "Step #3", "Finding
#7"): the summary may number its tasks itself.
_LOCAL_NUMBER = re.compile(r"\b(?:tasks?|steps?|phases?|items?|todos?|findings?|points?|parts?|stages?|options?|"
                           r"questions?|rounds?|cases?|tests?|iterations?|milestones?|messages?|lines?|rows?|no\.?)\s*$",
                           re.IGNORECASE)
_DATE = re.compile(r"(?<!\d)20\d\d-[01]\d-[0-3]\d(?!\d)")
#: A branch named in backticks: "branch `feat/x`", "on `feat/x`", "`feat/x` branch" (a name with a
#: ``-`` or ``/``: ``main`` is everyone's).
_BRANCH = re.compile(r"\b(?:branch(?:es)?|on|checked out|checkout(?:\s+-b)?|switch(?:ed)? to|rebased)\s+(?:named\s+)?`([\w.]+[-/][\w./-]+)`|"
                     r"`([\w.]+[-/][\w./-]+)`\s+branch\b", re.IGNORECASE)
#: A line that speaks of a branch still to come ("create branch `x`", "a new branch `x`").
_FUTURE = re.compile(r"\b(?:creat\w*|new|will|would|should|next|plan\w*|propos\w*|suggest\w*|could|to be|later)\b",
                     re.IGNORECASE)
#: A sentence that speaks of a file still to come ("will write `docs/2026-06-18-plan.md`").
_TO_COME = re.compile(r"\b(?:will|would|should|next|plan(?:s|ned)?|to be|later|going to|to (?:create|write|add|save)|"
                      r"propos\w*|suggest\w*)\b", re.IGNORECASE)
_FIGURE = re.compile(r"(?<![\w.])(\d+\.\d+)\s?%")
_VERSION = re.compile(r"(?<![\w.])v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)(?![\w.]*\d)|"
                      r"(?:@\^?|@~|[\^~]|==|>=|=\s*\"|:\s*\"\^?)(\d+\.\d+)(?![\w.])")
_COUNT = re.compile(r"\b(\d+)\s+(?:(?:[\w-]+\s+)?(?:tests?|specs?|cases?)\s+(?:now\s+|all\s+)?)?"
                    r"(?:passed|passing|passes|pass|failed|failing|fails|fail)\b|"
                    r"\b(\d+)\s+(?:(?:new|more|remaining|lint|type|compile|compiler|clippy|build|TypeScript|tsc|mypy|ruff)\s+)?"
                    r"(?:errors?|warnings?)\b", re.IGNORECASE)
_STATUS = re.compile(r"\b(?:HTTP|status(?: code)?)\s*:?\s*([1-5]\d\d)\b|\b([45]\d\d)\s+(?:error|response|status|Internal|Bad|Not|"
                     r"Unauthori[sz]ed|Forbidden|Service|Gateway|Conflict|Too)\b", re.IGNORECASE)
#: A line that counts tests, errors or warnings (not the summary's tally of its own tool calls).
_OF_TESTS = re.compile(r"\b(?:tests?|specs?|suites?|cases?|errors?|warnings?|pytest|jest|vitest|playwright|cargo|"
                       r"go test|dotnet test|mocha|rspec|lint|clippy|tsc)\b", re.IGNORECASE)
_OF_CALLS = re.compile(r"\b\d+\s+(?:tool\s+|shell\s+|bash\s+)?(?:calls?|commands?|requests?|attempts?|retries)\b|"
                       r"\btool calls?\b", re.IGNORECASE)
_EXIT = re.compile(r"\bexit(?:ed)?\s*(?:code|status)?\s*(?:of|with|=|:)?\s*(\d{1,3})\b", re.IGNORECASE)
#: A count of tests passed as a runner prints it ("26 passed", "Passed: 26", "26 tests passing",
#: dotnet test's localised "Aprovado: 26").
_PASSED = r"(?:pass(?:ed|ing)?|aprovad[oa]s?|réussis?|bestanden|superad[oa]s?|通过)"
_PRINTED = re.compile(rf"(?<![\d.])(\d+)\s+(?:tests?\s+)?{_PASSED}(?!\w)|(?<!\w){_PASSED}\W{{1,3}}(\d+)(?!\d)")
_ARITHMETIC = re.compile(r"\s[+=]\s*\d|\btotal of\b|\bsum\b", re.IGNORECASE)
_DERIVED = re.compile(r"(?:=|\btotal(?: of)?:?)\s*(\d+)\b", re.IGNORECASE)
_ANY_VERSION = re.compile(r"(?<![\w.])(\d+(?:\.\d+)+)(?![\w.]*\d)")
#: Sections that plan (pending tasks, next step) may name a version or a dated file still to come.
_PLAN_KINDS = frozenset({"pending", "next"})


def _around(n: str, text: str, before: int = 0, after: int = 0) -> Iterator[tuple[str, str]]:
    """The ``before`` characters ahead of and the ``after`` characters behind each place ``text`` holds
    the number ``n`` standing alone (no digit, nor ``digit.``, beside it): a literal search, far quicker
    over a long session than a pattern tried at every place."""
    at = text.find(n)
    while at >= 0:
        end = at + len(n)
        if (at == 0 or not (text[at - 1].isdigit() or text[at - 1] == ".")) and (end >= len(text) or not text[end].isdigit()):
            yield text[max(at - before, 0):at], text[end:end + after]
        at = text.find(n, at + 1)


_REF_BEFORE = re.compile(r"(?:#|pulls?/|issues?/|merge_requests/|\b(?:pr|issue|mr)\W{0,3}(?:(?:view|merge|checkout|close|"
                         r"comment|edit|diff|checks|ready|reopen|review|status)\s+)?|number\W{0,4}|request\W{0,3})0*$")


def _ref_seen(n: str, seen: str, raw: str) -> bool:
    """Whether the session names issue or pull request ``n``: ``#n``, ``pull/n``, "PR n", ``gh pr view
    n``, ``"number": n``, or a line of ``gh pr list`` / ``gh issue list`` (``raw``: the session's text
    with its line breaks) that starts with it."""
    n = n.lstrip("0") or "0"
    if any(_REF_BEFORE.search(ahead) for ahead, _ in _around(n, seen, before=40)):
        return True
    return any(re.search(r"(?:^|\n)[ \t]*#?$", ahead) is not None and re.match(r"\t| {2,}", behind) is not None
               for ahead, behind in _around(n, raw, before=8, after=2))


def _number_seen(n: str, seen: str) -> bool:
    return next(_around(n, seen), None) is not None


#: Words a runner or a compiler prints beside a count, in English and in the languages their
#: localised builds print (MSBuild's "52 aviso(s) 0 erro(s)", dotnet test's "Aprovado: 26"; any
#: "N word(s)" counts too).
_COUNTED = (r"pass|fail|error|warn|total|tests?\b|specs?\b|ok\b|succe|aprovad|falh|reprovad|erro|aviso|réussi|"
            r"échou|erreur|avertissement|bestanden|fehlgeschlagen|fehler|warnung|superad|fallid|advertencia|exitos|"
            r"通过|失败|错误|警告|成功")
_COUNT_AFTER = re.compile(rf"\s+(?:tests?\s+|specs?\s+)?(?:{_COUNTED})|\s+\w+\((?:s|es|en|e|i)\)")
_COUNT_BEFORE = re.compile(rf"(?:{_COUNTED})\w*\W{{0,3}}$")
_EXIT_BEFORE = re.compile(r"\b(?:exit\w*|status|code|returned)\W{0,3}(?:code|status)?\W{0,3}$")


def _count_seen(n: str, seen: str, passed: bool = False) -> bool:
    """Whether the session prints ``n`` as a count of tests, errors or warnings ("26 passed", "Passed:
    26", "3 errors", "Tests: 26", "26 tests"), or, for a count of tests passed (``passed``), two
    counts of tests passed that add up to it (26 passed in one run, 1 in another: "27 pass")."""
    if any(_COUNT_AFTER.match(behind) or _COUNT_BEFORE.search(ahead) for ahead, behind in _around(n, seen, 30, 30)):
        return True
    if not passed:
        return False
    printed = {int(m.group(1) or m.group(2)) for m in _PRINTED.finditer(seen)}
    return any(int(n) - a in printed for a in printed)


def _exit_seen(n: str, seen: str) -> bool:
    return any(_EXIT_BEFORE.search(ahead) for ahead, _ in _around(n, seen, before=30))


def _near_version(v: str, seen: str) -> bool:
    """Whether the session holds a version one part away from ``v`` (``0.29`` for ``0.30``,
    ``4.0.17`` for ``4.0.18``): a version the session never came near may be the summariser's own
    knowledge of a package, not a value of the session misremembered."""
    parts = v.split("-")[0].split(".")
    for m in _ANY_VERSION.finditer(seen):
        other = m.group(1).split(".")
        if len(other) == len(parts) and sum(a != b for a, b in zip(parts, other)) == 1:
            return True
    return False


def _sentence(line: str, start: int, end: int) -> str:
    """The words of the sentence of ``line`` that holds ``line[start:end]`` (code and paths left out:
    ``docs/plans/…`` plans nothing)."""
    a = max(line.rfind(". ", 0, start), line.rfind("; ", 0, start), -1) + 1
    b = min([i for i in (line.find(". ", end), line.find("; ", end)) if i >= 0] or [len(line)])
    return re.sub(r"`[^`]*`|\S*/\S*", " ", line[a:b])   # its words: not the names and paths it holds


def _distance(a: str, b: str) -> int:
    """The edit distance of two short names."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def _near_name(name: str, seen: str) -> bool:
    """Whether the session holds a name two edits or fewer from ``name`` (``feat/registry-blocks`` for
    ``feat/registry-block``): a misremembered branch, not the current branch Claude Code's system
    prompt named (the transcript does not hold it)."""
    head = name[:6]
    at = seen.find(head)
    while at >= 0:
        token = re.match(r"[\w./-]+", seen[at:])
        if token and token.group(0) != name and _distance(token.group(0).rstrip("./-"), name) <= 2:
            return True
        at = seen.find(head, at + 1)
    return False


def _attached(text: str, start: int, end: int) -> bool:
    """A date inside a name or a path: a ``/``, ``_``, a letter or a backtick right beside it."""
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return before in "/_`-" or before.isalnum() or after in "/_`." or after.isalnum()


@lru_cache(maxsize=4096)
def _values(line: str, kind: str | None) -> tuple[tuple[str, str, str], ...]:
    """(kind of value, value as written, what to look for) of each value ``line`` holds (remembered:
    every grader that reads a section, and every mutant of a summary, reads the same lines again)."""
    return tuple(_each_value(line, kind))


def _each_value(line: str, kind: str | None) -> Iterator[tuple[str, str, str]]:
    for m in _REF.finditer(line):
        if not _LOCAL_NUMBER.search(line[:m.start()]):
            yield "issue or pull-request number", m.group(0), m.group(1)
    plan = kind in _PLAN_KINDS
    if not plan:
        for m in _DATE.finditer(line):
            if _attached(line, m.start(), m.end()) and not _TO_COME.search(_sentence(line, m.start(), m.end())):
                yield "date", m.group(0), m.group(0)
        for m in _VERSION.finditer(line):
            v = m.group(1) or m.group(2)
            yield "version", v, v
        for m in _BRANCH.finditer(line):
            if not _FUTURE.search(_sentence(line, m.start(), m.end())):
                name = m.group(1) or m.group(2)
                yield "branch", name, name
    for m in _FIGURE.finditer(line):
        yield "measured figure", m.group(0).replace(" ", ""), m.group(1)
    if not _ARITHMETIC.search(line) and _OF_TESTS.search(line) and not _OF_CALLS.search(line):
        for m in _COUNT.finditer(line):
            n = m.group(1) or m.group(2)
            if n != "0" and not _LOCAL_NUMBER.search(line[:m.start()]) and not _STATUS.match(line, m.start()):
                yield "count", m.group(0), n
    for m in _STATUS.finditer(line):
        yield "HTTP status", m.group(0), m.group(1) or m.group(2)
    for m in _EXIT.finditer(line):
        yield "exit code", m.group(0), m.group(1)


@lru_cache(maxsize=64)
def derived_counts(summary: str) -> frozenset[str]:
    """The numbers a summary works out itself ("26 pre-existing + 1 new = 27", "27 total"): it may
    say them again as a count elsewhere (remembered: each grader that reads values asks again)."""
    return frozenset(m.group(1) for line in summary.split("\n") if _ARITHMETIC.search(line) or "total" in line.lower()
                     for m in _DERIVED.finditer(line))


def unseen_values(lines: Iterable[str], seen: str, kind: str | None = None,
                  derived: frozenset[str] = frozenset(), raw: str | Callable[[], str] = "") -> list[UnseenValue]:
    """The values (see the module's kinds) in ``lines`` of a section of ``kind`` that ``seen`` (the
    session's text, lower-cased and whitespace-normalised; ``raw``: the same with its line breaks, or
    a function that makes it, called only for an issue number ``seen`` does not hold)
    never holds; ``derived`` are the counts the summary works out itself (:func:`derived_counts`)."""
    out: list[UnseenValue] = []
    for line in lines:
        if not re.search(r"[\d`]", line):   # every value holds a digit, but a branch
            continue
        for what, told, probe in _values(line, kind):
            low = probe.lower()
            if what == "issue or pull-request number":
                found = _ref_seen(low, seen, raw if isinstance(raw, str) else raw())
            elif what == "count":
                found = low in derived or _count_seen(low, seen, "pass" in told.lower())
            elif what == "exit code":
                found = _exit_seen(low, seen)
            elif what == "version":
                found = _number_seen(low, seen) or not _near_version(low.lstrip("v"), seen)
            elif what == "branch":
                found = re.search(rf"(?<![\w.-]){re.escape(low)}(?![\w-])", seen) is not None or not _near_name(low, seen)
            elif what in ("measured figure", "HTTP status"):
                found = _number_seen(low, seen)
            else:
                found = low in seen
            if not found:
                out.append(UnseenValue(what, told, line.strip()))
    return out


def unseen_reasons(sections: Iterable[Any], summary: str, seen: str, raw: str | Callable[[], str] = "") -> list[str]:
    """A reason for each value :func:`unseen_values` finds in the bodies of ``sections`` (parsed
    sections of ``summary``: ``kind``, ``number``, ``body``, ``line``), naming the section, the
    summary line and the value; ``seen`` and ``raw`` as for :func:`unseen_values`."""
    lines = summary.split("\n")
    derived = derived_counts(summary)
    out = []
    for section in sections:
        for u in unseen_values(plain_emphasis(section.body).split("\n"), seen, section.kind, derived, raw):
            start = " ".join(u.line.split())[:40]
            at = next((i + 1 for i in range(max(section.line - 1, 0), len(lines))
                       if start and start in " ".join(plain_emphasis(lines[i]).split())), section.line)
            out.append(f"section {section.number} (line {at}) tells {u.kind} {u.value!r}, which nothing in the session "
                       f"shows (no message, command or output before the compaction holds it): \"{_short(u.line)}\"; a "
                       f"value misremembered sends the next context window to the wrong one")
    return out


def _short(text: str, n: int = 110) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"
