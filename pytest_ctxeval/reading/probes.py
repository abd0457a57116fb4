"""Commands that ask the environment a question, whose "failure" is the answer (review 3, F6).

``ls missing/``, ``cat``, ``which`` and ``test -f`` are lookups; so are existence checks run through
other tools: ``pip show X`` ("Package(s) not found"), ``git rev-parse --verify B`` ("Needed a single
revision"), ``docker inspect N`` ("No such object"), ``kubectl get deploy N`` ("NotFound"),
``python -c "import X"`` ("No module named 'X'"), ``dpkg -s``, ``brew list``, ``npm ls``. Their
non-zero exit says "not there", which a summary may tell in words anywhere, or leave out: it is not an
error ``errors_preserved`` requires.

Kept as errors, so no real failure is hidden: a command line that also runs anything else
(``which uv && uv sync``: the sync's failure is an error), and an existence check whose output says
anything but its "not found" answer (``kubectl get pods``: "Unable to connect to the server";
``python -c "import app"`` failing inside the project's own module with a SyntaxError or an
``ImportError: cannot import name``), and a lookup whose service did not answer (``curl``: "Failed to
connect ... Connection refused", "Empty reply from server": a server or health check that is down).
"""

from __future__ import annotations

import re
import shlex

from .file_changes import _commands

__all__ = ["only_asks"]

#: Programs that look something up: any failure of theirs is the answer "not there".
LOOKUPS = {"ls", "cd", "cat", "find", "grep", "rg", "ag", "which", "type", "command", "head", "tail",
           "stat", "test", "[", "[[", "file", "wc", "tree", "pwd", "echo", "readlink", "realpath", "du", "df",
           "diff", "cmp", "pgrep", "lsof", "ps", "curl", "open", "xdg-open", "hash", "whereis"}
#: What may stand around a lookup without running anything of the project's: filters after a pipe,
#: a message after ``||``, the shell's own built-ins.
_AROUND = {"head", "tail", "grep", "rg", "wc", "sort", "uniq", "cut", "tr", "jq", "echo", "printf", "true",
           "false", "exit", "cd", "pushd", "popd", "export", "set", ":"}
#: Existence checks: ``(command pattern, its "not there" answer)``.
_CHECKS = [
    (re.compile(r"^(?:(?:python[\d.]*\s+-m\s+|uv\s+)?pip[\d.]*)\s+show\b"), re.compile(r"Package\(s\) not found")),
    (re.compile(r"^git\s+(?:rev-parse\s+(?:.*\s)?--verify|show-ref\s+(?:.*\s)?(?:--verify|--exists)|cat-file\s+-e|"
                r"ls-remote\s+(?:.*\s)?--exit-code)\b"),
     re.compile(r"Needed a single revision|unknown revision|not a valid (?:ref|object name)|ambiguous argument|"
                r"Not a valid object name|reference does not exist", re.IGNORECASE)),
    (re.compile(r"^(?:docker|podman)\s+(?:(?:image|container|volume|network)\s+)?inspect\b"),
     re.compile(r"No such (?:object|image|container|volume|network)", re.IGNORECASE)),
    (re.compile(r"^(?:kubectl|oc)\s+get\b"),
     re.compile(r"\(NotFound\)|\bnot found\b|No resources found", re.IGNORECASE)),
    (re.compile(r"^helm\s+status\b"), re.compile(r"release: not found", re.IGNORECASE)),
    (re.compile(r"^dpkg\s+(?:-s|--status|-l)\b"), re.compile(r"is not installed|no packages found", re.IGNORECASE)),
    (re.compile(r"^brew\s+(?:list|info)\b"), re.compile(r"No such keg|No available formula|not installed", re.IGNORECASE)),
    (re.compile(r"^(?:npm|pnpm|yarn)\s+(?:ls|list|why)\b"), re.compile(r"\(empty\)|not found|missing", re.IGNORECASE)),
    (re.compile(r"^(?:systemctl\s+(?:status|is-active|is-enabled)|id|getent)\b"),
     re.compile(r"could not be found|no such user|inactive|disabled|not-found", re.IGNORECASE)),
    (re.compile(r"^python[\d.]*\s+-c\s+(?P<code>.+)$", re.DOTALL),
     re.compile(r"^(?:ModuleNotFoundError|ImportError): No module named\b", re.MULTILINE)),
    (re.compile(r"^node\s+-e\s+(?P<code>.+)$", re.DOTALL), re.compile(r"Cannot find module\b")),
]
#: ``python -c``/``node -e`` code that only imports (and prints what it imported): a question.
_IMPORT_ONLY = re.compile(
    r"^\s*(?:(?:import\s+[\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*|from\s+[\w.]+\s+import\s+[\w, ]+|"
    r"print\([\w.\s,'\"]*\)|(?:const|let|var)?\s*\w*\s*=?\s*require\(['\"][\w@/.-]+['\"]\)(?:\.\w+)*)\s*[;\n]?\s*)+$")
_ERROR_LINE = re.compile(
    r"\b\w*(?:Error|Exception)\b|\b(?:FAIL|FAILED|ERROR|FATAL)\b|\b(?:error|fatal|panic)(?:\[\w+\])?:|\bfailed\b|"
    r"\brefused\b|\bdenied\b|\bcannot\b|\bunable to\b|\bnot found\b|\btimed out\b|\bNotFound\b|No such", re.IGNORECASE)
#: A lookup's output that says a service did not answer (``curl: (7) Failed to connect to localhost
#: port 8000: Connection refused``, ``Empty reply from server``): not "not there" but a dead server,
#: database or health check the session depends on, an error the next agent needs.
_CONNECTION_FAILED = re.compile(r"\b(?:failed|unable|could not|couldn't) to connect\b|\bconnection (?:was )?"
                                r"(?:refused|reset)\b|\bempty reply from server\b|\bECONNREFUSED\b", re.IGNORECASE)
_WRAPPER = re.compile(r"^(?:\w+=\S*\s+|sudo\s+|time\s+|env\s+|(?:uv|poetry|pipenv)\s+run\s+)+")


def _words(segment: str) -> list[str]:
    try:
        return shlex.split(segment, comments=True)
    except ValueError:
        return segment.split()


def only_asks(command: str, output: str) -> bool:
    """Whether a failing Bash call only asked a question and got "not there" for an answer: every
    command it runs is a lookup (:data:`LOOKUPS`) or an existence check, the rest are filters and
    messages around them, and an existence check's output says nothing but its answer (see the module
    docstring).

    >>> only_asks("pip show reportlab", "WARNING: Package(s) not found: reportlab")
    True
    >>> only_asks('python -c "import app; app.main()"', "ModuleNotFoundError: No module named 'yaml'")
    False
    >>> only_asks("which uv && uv sync", "error: Failed to fetch: https://pypi.org/simple/x/")
    False
    >>> only_asks("curl -s localhost:8000/health", "curl: (7) Failed to connect to localhost port 8000: Connection refused")
    False
    """
    segments = _commands(command or "")
    if not segments:
        return False
    answers: list[re.Pattern[str]] = []
    asked = False
    for segment in segments:
        text = _WRAPPER.sub("", segment.strip())
        words = _words(text)
        if not words:
            continue
        prog = words[0].rsplit("/", 1)[-1]
        check = next(((c, a) for c, a in _CHECKS if (m := c.match(text))), None)
        if check is not None:
            m = check[0].match(text)
            code = m.groupdict().get("code") if m else None
            if code is not None and not _IMPORT_ONLY.match(" ".join(_words(code)) if code[:1] in "'\"" else code):
                return False   # python -c / node -e that does more than import: a run
            answers.append(check[1])
            asked = True
        elif prog in LOOKUPS and prog not in ("echo", "cd"):
            asked = True
        elif prog not in _AROUND:
            return False   # it also ran something else: its failure may be a real error
    if not asked or _CONNECTION_FAILED.search(output):
        return False
    if not answers:
        return True
    said = [line for line in output.splitlines() if line.strip() and _ERROR_LINE.search(line)]
    return bool(said) and all(any(a.search(line) for a in answers) for line in said)
