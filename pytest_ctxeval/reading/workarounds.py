"""A command line the environment refused, then worked around: a lesson the next context needs
(review 5, #4).

A failing Bash call whose first line says the shell or a CLI would not take the command line
(``python: command not found``, ``unknown flag: --stat``, ``error: unrecognized subcommand 'bun'``,
``usage: ...``) or that a path is not there (``No such file or directory``) reads as a probe: the
agent asking the environment a question (:func:`pytest_ctxeval.reading.session_facts.error_kind`).
It is not a probe when the agent then ran a *different* command that did the job: ``python x.py``
failed, ``python3 x.py`` worked. That is a fact about the environment the next context will get
wrong again unless the summary keeps it (``gh pr diff --stat`` failed twice in one real session,
once on each side of a compaction), so it counts as an error (:func:`worked_around`).

Still a probe: a failure nothing later works around (the answer was "not there": ``cat
nonexistent.txt`` that the person asked to run), a failing line that only looks things up
(``cd X && grep ...``: its failure is the answer), and a "retry" that is itself a lookup
(``which docker || ...``: still asking).

A lookup the shell or the program refused *as typed* is no answer, though: zsh's ``no matches
found: --include=*.cs`` (an unquoted glob in an option, so grep never ran), ``unknown flag``,
``invalid option``, ``usage:`` (:func:`refused_as_typed`). Retried with the line fixed (the glob
quoted), it is a lesson the next context needs as much as ``gh pr diff --stat``: a real session
made the same unquoted-glob mistake again right after its compaction (review 7, A1). A lookup's
program that is not installed (``rg: command not found``) and zsh's ``no matches found`` for a
path (``ls *.log``: there are none) stay probes.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Sequence

from .file_changes import _commands
from .probes import _AROUND, LOOKUPS

__all__ = ["refused_line", "refused_as_typed", "worked_around", "WORKAROUND_WINDOW", "not_counted", "refused_tokens", "refused_part"]

#: How many later Bash calls may hold the workaround (parallel calls and a check in between).
WORKAROUND_WINDOW = 3

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_EXIT = re.compile(r"^\s*Exit code \d+\s*$")
#: The shell or a CLI refused the command line as typed.
REFUSED = re.compile(
    r"command not found|: not found$|unknown (?:flag|option|shorthand flag|command)|unrecognized (?:option|"
    r"argument|subcommand|arguments)|invalid option|^\s*usage:|no matches found", re.IGNORECASE | re.MULTILINE)
#: A path the command line names is not there.
MISSING_PATH = re.compile(
    r"No such file or directory|is not a git repository|did not match any file|pathspec .* did not match|"
    r"No such process|cannot access", re.IGNORECASE | re.MULTILINE)
#: Redirections and separators: no part of what a command does.
_NOISE_WORD = re.compile(r"^(?:\d?>>?&?\d*|\d?>>?/dev/null|&>/dev/null|<|\|\|?|&&|;)$")


def first_line(text: str) -> str:
    """The first line of a tool result that says something (not blank, not ``Exit code N``)."""
    for line in _ANSI.sub("", text[:2000]).splitlines():
        if line.strip() and not _EXIT.match(line):
            return line
    return ""


def refused_line(text: str) -> str:
    """``"refused"`` when the result's first line says the command line was refused, ``"missing"``
    when it says a path is not there, else ``""``.

    >>> refused_line("Exit code 127\\n/bin/bash: line 1: python: command not found")
    'refused'
    >>> refused_line("cat: nonexistent.txt: No such file or directory")
    'missing'
    >>> refused_line("Traceback (most recent call last):")
    ''
    """
    line = first_line(text)
    return "refused" if REFUSED.search(line) else "missing" if MISSING_PATH.search(line) else ""


#: The command line's own syntax refused (not a program or a path that is not there).
_AS_TYPED = re.compile(r"unknown (?:flag|option|shorthand flag)|unrecognized (?:option|argument|arguments)|"
                       r"invalid option|^\s*usage:", re.IGNORECASE)
_NO_MATCH = re.compile(r"no matches found: (\S+)")


def refused_as_typed(line: str) -> bool:
    """Whether ``line`` says the shell or a program refused the command line's own syntax: an
    unknown or invalid option, a usage message, or zsh's unmatched glob in an option
    (``no matches found: --include=*.cs``), not in a path (``no matches found: *.log``: the
    answer is "none").

    >>> refused_as_typed("(eval):3: no matches found: --include=*.cs")
    True
    >>> refused_as_typed("zsh: no matches found: src/*.log")
    False
    >>> refused_as_typed("unknown flag: --stat")
    True
    >>> refused_as_typed("rg: command not found")
    False
    """
    found = _NO_MATCH.search(line)
    if found:
        return found.group(1).startswith("-")
    return bool(_AS_TYPED.search(line))


def _words(command: str) -> list[str]:
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    return [w for w in words if not _NOISE_WORD.match(w)]


def _programs(command: str) -> list[str]:
    out = []
    for segment in _commands(command) or [command]:
        words = _words(segment.strip())
        while words and re.match(r"^\w+=", words[0]):   # VAR=value before the program
            words = words[1:]
        if words:
            out.append(words[0].rsplit("/", 1)[-1])
    return out


def only_looks_up(command: str) -> bool:
    """Whether every program of the line is a lookup or a filter (``cd X && grep ... | head``)."""
    programs = _programs(command)
    return bool(programs) and all(p in LOOKUPS or p in _AROUND for p in programs)


def _asks(command: str) -> bool:
    """A retry that is itself a lookup: its first program (past ``cd``/``export``) looks something up."""
    programs = [p for p in _programs(command) if p not in ("cd", "pushd", "export", "set", "source", ".")]
    return not programs or programs[0] in LOOKUPS or only_looks_up(command)


def refused_part(command: str, line: str) -> str:
    """The part of ``command`` from the first of its ``&&``/``||``/``;``/line parts after the first that names
    a word of ``line`` (a flag, a path, a quoted name: ``--stat`` of "unknown flag: --stat"), to its
    end; ``command`` when no later part does. ``gh pr view 3 && gh pr diff 3 --stat`` failed in its
    second part: what worked around it did that part's job, not the whole line's.

    >>> refused_part("gh pr view 3 && echo --- && gh pr diff 3 --stat", "unknown flag: --stat")
    'gh pr diff 3 --stat'
    >>> refused_part("rtk bun run test", "error: unrecognized subcommand 'bun'")
    'rtk bun run test'
    """
    parts = [p for p in re.split(r"\s*(?:&&|\|\||;|\n)\s*", command) if p.strip()]
    if len(parts) < 2:
        return command
    words = {w.strip("'\"`") for w in re.findall(r"(?<!\w)[-\w.'\"`/]{3,}", line)}
    words = {w for w in words if re.search(r"[-_./]", w) or f"'{w}'" in line}
    for part in parts[1:]:
        if any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", part) for w in words):
            return command[command.find(part):]
    return command


def worked_around(command: str, later: Sequence[tuple[str, bool]], *, as_typed: bool = False) -> str:
    """The later command that did the failing command's job another way, or ``""``.

    ``later`` is the Bash calls that followed, in order, as ``(command, succeeded)``; the first
    :data:`WORKAROUND_WINDOW` are read. A workaround succeeded, is not the same line again, is not
    itself a lookup, and keeps at least half of the failing line's words (its arguments: the script,
    the path, the subcommand), so it was for the same thing. With ``as_typed`` (the line was refused
    as typed: :func:`refused_as_typed`) a lookup counts too, and its retry may be a lookup: the
    line fixed.

    >>> worked_around("python /w/gen.py", [("ls -lh /w", True), ("python3 /w/gen.py", True)])
    'python3 /w/gen.py'
    >>> worked_around("gh pr diff 247 --stat", [("gh pr diff 247 --name-only", True)])
    'gh pr diff 247 --name-only'
    >>> worked_around("docker ps 2>&1", [("which docker || /usr/local/bin/docker ps || echo none", True)])
    ''
    >>> worked_around("cat nonexistent.txt", [("ls", True)])
    ''
    >>> worked_around("grep -rl Shape --include=*.cs .", [("grep -rl Shape --include='*.cs' .", True)], as_typed=True)
    "grep -rl Shape --include='*.cs' ."
    """
    if not command.strip() or (only_looks_up(command) and not as_typed):
        return ""
    words = _words(command)
    if not words:
        return ""
    for other, ok in later[:WORKAROUND_WINDOW]:
        if not ok or not other.strip() or other.strip() == command.strip() or (_asks(other) and not as_typed):
            continue
        theirs = set(_words(other))
        if sum(w in theirs for w in words) * 2 >= len(words):
            return other
    return ""


_KIND_WORDS = {"rejected": ("call the person rejected", "calls the person rejected"),
               "cancelled": ("call cancelled with a failing sibling", "calls cancelled with a failing sibling"),
               "tool_usage": ("call the tool refused as made", "calls the tool refused as made"),
               "probe": ("probe that found nothing", "probes that found nothing"),
               "refused": ("command line the shell refused, not worked around",
                           "command lines the shell refused, not worked around")}


def not_counted(failures: Sequence[object], typed: Sequence[str] = ()) -> str:
    """What the failing tool results that are not errors were, for a reason that says so:
    ``2 tool results failed, not counted: 1 probe that found nothing, asked for by the person
    (`cat nonexistent.txt`: "cat: nonexistent.txt: No such file or directory"), ...``; ``""`` when
    none failed. ``failures`` are :class:`~pytest_ctxeval.reading.extract.FailingResult`; ``typed``
    the person's messages (a probe whose command the person typed was asked for: its failure is the
    answer)."""
    groups: dict[str, list[str]] = {}
    for f in failures:
        kind, text = str(getattr(f, "kind", "")), str(getattr(f, "text", ""))
        command = str(getattr(f, "input", {}).get("command", "")).strip()
        if kind == "probe" and refused_line(text) == "refused":
            kind = "refused"
        if kind == "probe" and command and any(command in t for t in typed):
            kind = "probe asked"
        tool = str(getattr(f, "tool", "?"))
        if kind not in ("probe", "probe asked", "refused"):
            groups.setdefault(kind, []).append(tool)   # the call's tool is enough: its kind says why
            continue
        said = next((l for l in text.splitlines() if REFUSED.search(l) or MISSING_PATH.search(l)), "")
        line = " ".join((said or str(getattr(f, "key_line", ""))).split())[:80]
        what = f"`{' '.join(command.split())[:60]}`" if command else tool
        groups.setdefault(kind, []).append(f'{what}: "{line}"' if line else what)
    if not groups:
        return ""
    total = sum(len(v) for v in groups.values())
    parts = []
    for kind, shown in groups.items():
        one, many = _KIND_WORDS.get(kind.split()[0], (kind, kind))
        asked = ", asked for by the person" if kind == "probe asked" else ""
        more = f", +{len(shown) - 2} more" if len(shown) > 2 else ""
        if kind in ("probe", "probe asked", "refused"):
            listed = "; ".join(shown[:2]) + more
        else:
            listed = ", ".join(f"{t} ×{n}" if n > 1 else t for t, n in Counter(shown).items())
        parts.append(f"{len(shown)} {one if len(shown) == 1 else many}{asked} ({listed})")
    return f"{total} tool result{'s' if total != 1 else ''} failed, not counted: {', '.join(parts)}"


_REFUSED_WORD = [
    (re.compile(r"(?:^|[\s:])([\w.+-]+): (?:command )?not found\s*$"), False),        # python: command not found
    (re.compile(r"command not found: ([\w.+-]+)"), False),                           # zsh: command not found: docker
    (re.compile(r"unknown (?:flag|option|shorthand flag|command):? ['\"`]?(-*[\w.-]+)", re.I), False),
    (re.compile(r"unrecognized (?:option|argument|subcommand|arguments)s?:? ['\"`]?(-*[\w.-]+)", re.I), True),
    (re.compile(r"^\s*usage:\s+([\w.+-]+)", re.I), False),
]


def refused_tokens(key_line: str, command: str) -> list[str]:
    """What a summary must name to keep a refused command line: the program that is not there
    (``python``), the flag a CLI did not know (``--stat``), or the subcommand with the program that
    refused it (``rtk`` and ``bun``); ``[]`` when ``key_line`` is no refusal.

    >>> refused_tokens("python: command not found", "python x.py")
    ['python']
    >>> refused_tokens("unknown flag: --stat", "gh pr diff 247 --stat")
    ['--stat']
    >>> refused_tokens("error: unrecognized subcommand 'bun'", "cd /r && rtk bun run test")
    ['bun', 'rtk']
    """
    if not REFUSED.search(key_line):
        return []
    for pattern, with_program in _REFUSED_WORD:
        if m := pattern.search(key_line):
            words = [m.group(1)]
            programs = [p for p in _programs(command) if p not in ("cd", "pushd", "export", "set")]
            if with_program and programs and programs[0] != words[0]:
                words.append(programs[0])
            return words
    return []


def workaround_words(command: str, workaround: str) -> list[str]:
    """The words the workaround added to the refused line (``python3`` for ``python x.py`` then
    ``python3 x.py``): naming one tells what worked instead.

    >>> workaround_words("python /w/gen.py", "python3 /w/gen.py")
    ['python3']
    """
    if not workaround:
        return []
    mine = set(_words(command))
    return [w for w in dict.fromkeys(_words(workaround)) if w not in mine and len(w) >= 3 and not w.startswith("/")]
