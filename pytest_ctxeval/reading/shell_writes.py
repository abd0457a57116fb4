"""Project files a shell command changes or deletes, read conservatively (review 3, F5).

Only forms whose effect on a named file is unambiguous count:

* ``sed -i`` / ``perl -i`` on files (``sed -i 's/DEBUG/INFO/' src/config.py``): changed in place;
* ``echo``/``printf``/``cat`` with ``>``/``>>`` into a file, or piped into ``tee [-a] FILE``
  (``echo 'dist/' >> .gitignore``, ``cat > src/x.py <<'EOF'``): written;
* ``patch``: the files its output names ("patching file src/x.py");
* ``git rm FILE`` and ``rm FILE``: deleted (``git rm --cached`` only untracks: not followed).

Left out, so nothing is required by guess: a glob or a variable in a path, a path outside the project
(``..``, ``~``, ``/dev/null``, ``/tmp`` and other scratch space, Claude Code's own storage), build
output and caches (``__pycache__``, ``node_modules``, ``*.pyc``, ``*.log``, ...), a folder, a command's
output captured into a file (``pytest > out.txt``), ``git apply`` (its files are in the patch, not
the command). Heredoc bodies are not read as commands. Which of these a summary must name is the
ledger's call (:class:`pytest_ctxeval.reading.file_changes.FileLedger`).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from .file_changes import FileLedger, _State, _commands, _join
from .session_facts import claude_storage

__all__ = ["ShellWrite", "shell_writes", "record", "project_root"]


@dataclass(frozen=True)
class ShellWrite:
    op: str        # "change" (in place, appended), "write" (overwritten or created), "delete"
    path: str      # as the command names it, joined to the folder a ``cd`` went to
    how: str       # for a reason: "changed with `sed -i`", "deleted with `git rm`"
    tracked: bool = False   # ``git rm``: the file was in the repository


#: Programs this reader follows (a quick test before any parsing).
_FOLLOWED = re.compile(r"(?<![\w.-])(?:sed|gsed|perl|rm|tee|patch|git)(?![\w.-])|>")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_]\w*)\1")
_ARTIFACT = re.compile(r"(?:^|/)(?:__pycache__|node_modules|\.git|\.venv|venv|dist|build|target|\.pytest_cache|"
                       r"\.mypy_cache|\.ruff_cache|\.tox|\.next|coverage|htmlcov)(?:/|$)|"
                       r"\.(?:pyc|pyo|o|obj|class|log|tmp|swp|pid|out)$|~$", re.IGNORECASE)
_KNOWN_NAMES = {"Makefile", "Dockerfile", "LICENSE", "Procfile", "Gemfile", "Rakefile", "Justfile", "Vagrantfile"}
_WRITERS = {"echo", "printf", "cat"}
_SED_IN_PLACE = re.compile(r"-[Ersuz]*i(?:\.\w+)?|--in-place(?:=\S*)?")


def _file_path(path: str) -> bool:
    """A path this reader may name as a project file: a file's name, inside the project."""
    if not path or path.startswith(("~", "-")) or re.search(r"[$*?\[\]{}`]", path):
        return False
    norm = path.replace("\\", "/")
    if norm == ".." or norm.startswith("../") or "/../" in norm or norm.startswith(("/dev/", "/proc/", "/etc/")):
        return False
    if claude_storage(norm) or _ARTIFACT.search(norm) or norm.endswith("/"):
        return False
    base = norm.rsplit("/", 1)[-1]
    return base in _KNOWN_NAMES or bool(re.search(r"^\.\w|\w\.[A-Za-z]\w{0,9}$", base))


def _without_heredocs(command: str) -> str:
    """``command`` without the bodies of its heredocs (``cat > f <<'EOF'`` … ``EOF``)."""
    if "<<" not in command:
        return command
    lines, out, ends = command.split("\n"), [], list[str]()
    for line in lines:
        if ends:
            if line.strip() == ends[0]:
                ends.pop(0)
            continue
        out.append(line)
        ends += [m.group(2) for m in _HEREDOC.finditer(line)]
    return "\n".join(out)


def _short(command: str, n: int = 60) -> str:
    one = " ".join(command.split())
    return one if len(one) <= n else one[: n - 1] + "…"


def shell_writes(command: str, result: str = "") -> list[ShellWrite]:
    """The project files ``command`` (a Bash call that did not fail; ``result`` its output) changes,
    writes or deletes, in order (see the module docstring).

    >>> [(w.op, w.path) for w in shell_writes("sed -i 's/DEBUG/INFO/' src/config.py && git rm old.py")]
    [('change', 'src/config.py'), ('delete', 'old.py')]
    >>> shell_writes("pytest -q > out.txt 2>&1; rm -rf build/ /tmp/x.py")
    []
    """
    if not command or not _FOLLOWED.search(command):
        return []
    text = _without_heredocs(command)
    segments = _commands(text)
    if segments is None:
        return []
    out: list[ShellWrite] = []
    cwd = ""
    for n, segment in enumerate(segments):
        try:
            words = shlex.split(segment, comments=True)
        except ValueError:
            continue
        while words and re.match(r"^\w+=", words[0]):
            words = words[1:]
        if words[:1] == ["sudo"]:
            words = words[1:]
        if not words:
            continue
        if words[0] in ("cd", "pushd") and len(words) == 2:
            cwd = _join(cwd, words[1]) if not words[1].startswith(("~", "-", "$")) else "?"
            continue
        if cwd == "?":
            continue
        shown = _short(segment.strip())
        for op, path, how, tracked in _segment_writes(words, segments[n - 1] if n else "", text, shown):
            if _file_path(path):
                out.append(ShellWrite(op, _join(cwd, path), how, tracked))
    for m in re.finditer(r"^patching file (?:'([^'\n]+)'|(\S+))\s*$", result if re.search(r"(?<![\w.-])patch(?![\w.-])",
                                                                                           text) else "", re.MULTILINE):
        path = m.group(1) or m.group(2)
        if _file_path(path):
            out.append(ShellWrite("change", _join("" if cwd == "?" else cwd, path), "changed with `patch`"))
    return out


def _segment_writes(words: list[str], before: str, command: str, shown: str) -> list[tuple[str, str, str, bool]]:
    """``(op, path, how, tracked)`` for one simple command (``before``: the one before it, for a pipe)."""
    prog, args = words[0].rsplit("/", 1)[-1], words[1:]
    out: list[tuple[str, str, str, bool]] = []
    if prog in _WRITERS:
        for i, w in enumerate(words):
            m = re.fullmatch(r"(>>?)(\S*)", w)
            if m is None:
                continue
            target = m.group(2) or (words[i + 1] if i + 1 < len(words) else "")
            op = "change" if m.group(1) == ">>" else "write"
            out.append((op, target, f"{'appended to' if op == 'change' else 'written'} through Bash (`{shown}`)", False))
    elif prog == "tee" and re.match(r"^\s*(?:echo|printf|cat)\b", before) and re.search(r"\|\s*(?:sudo\s+)?tee\b", command):
        append = any(a in ("-a", "--append") for a in args)
        for a in args:
            if not a.startswith("-"):
                out.append(("change" if append else "write", a, f"written through Bash (`{shown}`)", False))
    elif prog in ("sed", "gsed") and any(_SED_IN_PLACE.fullmatch(a) for a in args):
        out += [("change", f, f"changed with `sed -i` (`{shown}`)", False) for f in _script_files(args, "sed")]
    elif prog == "perl" and any(re.fullmatch(r"-[a-zA-Z]*i(?:\.\w+)?[a-zA-Z]*", a) for a in args) and \
            any(re.fullmatch(r"-[a-zA-Z]*[pn][a-zA-Z]*", a) or re.fullmatch(r"-[a-zA-Z]*[pn]i\S*", a) for a in args):
        out += [("change", f, f"changed with `perl -i` (`{shown}`)", False) for f in _script_files(args, "perl")]
    elif prog == "rm" or (prog == "git" and args[:1] == ["rm"]):
        git = prog == "git"
        rest = args[1:] if git else args
        if git and any(a in ("--cached", "-n", "--dry-run") for a in rest):
            return []
        how = f"deleted with `{'git rm' if git else 'rm'}` (`{shown}`)"
        files = [a for a in rest if not a.startswith("-") and not re.match(r"^\d*[<>]", a)]
        if any(re.fullmatch(r"-[a-zA-Z]*[rR][a-zA-Z]*|--recursive", a) for a in rest):
            # recursive: a name without an extension (".sandbox", "Makefile.d/") may be a folder
            files = [f for f in files if re.search(r"\w\.[A-Za-z]\w{0,9}$", f)]
        out += [("delete", f, how, git) for f in files]
    return out


def _script_files(args: list[str], prog: str) -> list[str]:
    """The file arguments of ``sed``/``perl`` after its script (``-e SCRIPT`` or the first word)."""
    files, script_given, skip = [], False, False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-e", "-f", "--expression", "--file", "-E" if prog == "perl" else "--"):
            script_given, skip = True, a != "--"
            continue
        if a == "" or a.startswith("-") or re.match(r"^\d*[<>]", a):
            continue
        if not script_given:
            script_given = True
            continue
        files.append(a)
    return files


def project_root(paths: list[str]) -> str | None:
    """The folder the session's tools worked in: the deepest folder holding every absolute
    ``paths`` (at least two levels deep, ``/home/me`` or deeper), or None."""
    folders = [p.replace("\\", "/").rsplit("/", 1)[0] for p in paths if p.replace("\\", "/").startswith("/")]
    if not folders:
        return None
    parts = folders[0].split("/")
    for f in folders[1:]:
        other = f.split("/")
        k = 0
        while k < min(len(parts), len(other)) and parts[k] == other[k]:
            k += 1
        parts = parts[:k]
    root = "/".join(parts)
    return root if root.count("/") >= 2 else None


def record(ledger: FileLedger, write: ShellWrite, *, seen: set[str], gone: set[str], root: str | None) -> None:
    """Enter one :class:`ShellWrite` in ``ledger``. An absolute path counts only inside ``root``; a
    write the ledger knows nothing of is a change (``created`` when ``>`` wrote a file the session had
    not seen); a delete of a file the session itself created (or a removed file in ``gone``) is no
    change; any other delete counts when the file was in git (``git rm``), or the session saw it
    (``seen``: read or changed by a tool) and did not create it."""
    path = write.path
    if (path.startswith("/") and (root is None or not path.startswith(root.rstrip("/") + "/"))) or claude_storage(path):
        return
    path = _resolved(ledger, path)
    if write.op == "delete":
        if any(_same(path, g) for g in gone):
            return
        if path in ledger.order:
            st = ledger.state[path]
            if st.created:
                ledger.remove(path)
                gone.add(path)
                return
            ledger.how[path] = write.how
            return
        if write.tracked or any(_same(path, s) for s in seen):
            ledger.state[path] = _State()
            ledger.order.setdefault(path)
            ledger.how[path] = write.how
        return
    if path not in ledger.order:
        st = ledger.state.setdefault(path, _State())
        st.edits, st.staged = [None], False
        st.created = write.op == "write" and not any(_same(path, s) for s in seen)
        ledger.order.setdefault(path)
        ledger.how[path] = write.how
    else:
        ledger.state[path].edits.append(None)
        if ledger.how.get(path, "").startswith("deleted"):
            ledger.how[path] = write.how   # written again after its deletion
    gone.discard(path)


def _same(a: str, b: str) -> bool:
    a, b = a.replace("\\", "/"), b.replace("\\", "/")
    return a == b or a.endswith("/" + b.lstrip("./")) or b.endswith("/" + a.lstrip("./"))


def _resolved(ledger: FileLedger, path: str) -> str:
    """The ledger's name for ``path`` (a relative path of a file it holds by its absolute path)."""
    if path in ledger.state:
        return path
    if not path.startswith("/"):
        hits = [p for p in ledger.state if _same(p, path)]
        if len(hits) == 1:
            return hits[0]
    return ledger._known(path)
