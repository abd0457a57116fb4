"""Which project files a session changed, as they stand at its end: an edit reverted, a file moved.

A file counts as changed when an edit tool (Edit, MultiEdit, Write, NotebookEdit) changed it and
nothing since has put it back as it was. What puts a file back:

* an Edit that undoes the previous edit of the file (its old and new strings swapped);
* ``git checkout [--] FILE`` / ``git restore FILE`` (the file as staged: back to the start unless it
  was staged with ``git add`` or committed since), ``git checkout HEAD -- FILE`` /
  ``git restore --staged --worktree FILE`` / ``git reset --hard`` (back to the last commit: unless it
  was committed since), ``git stash`` (until ``git stash pop``/``apply``), ``git clean -f`` for a
  file the session created and never staged, ``rm`` of a file the session wrote (see
  :func:`pytest_ctxeval.reading.extract.removed_paths`).

A file the session moved (``git mv a b``, ``mv a b``) is changed at its new place; an edited file
moved keeps its change under the new name. A command whose call failed changed nothing here (which
part of a failing ``a && b`` ran is not known: the file is kept as changed, the side that asks the
summary to name it). Anything this reader does not understand (a checkout from another commit, a
glob, ``git revert``) leaves the file as changed.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FileLedger", "shell_file_ops"]


@dataclass
class _State:
    #: Edits since the file was last as it started, for an Edit that undoes the one before it;
    #: ``None`` marks a change an Edit cannot undo (a Write, a notebook edit).
    edits: list[tuple[tuple[str, str], ...] | None] = field(default_factory=list)
    created: bool = False      # written by the session where no file was (untracked until added)
    staged: bool = False       # git add since its last change
    committed: bool = False    # git commit since its first change: HEAD holds the change


@dataclass
class FileLedger:
    """The changed files of a session, fed call by call (:meth:`edit`, :meth:`shell`)."""

    order: dict[str, None] = field(default_factory=dict)      # changed files, first-changed order
    state: dict[str, _State] = field(default_factory=dict)
    moved_from: dict[str, str] = field(default_factory=dict)  # new path -> the path it was moved from
    stashes: list[dict[str, _State]] = field(default_factory=list)
    #: How a file was changed when not by an edit tool ("deleted with `git rm` (…)"), for reasons
    #: (:func:`pytest_ctxeval.reading.shell_writes.record`).
    how: dict[str, str] = field(default_factory=dict)

    def changed(self) -> list[str]:
        """The changed files, in the order they were first changed (a file changed again after it
        was put back comes last)."""
        return list(self.order)

    def edit(self, path: str, tool: str, tool_input: dict[str, Any], result: str) -> None:
        """An edit tool's call that did not fail."""
        path = self._known(path)
        st = self.state.setdefault(path, _State())
        if path not in self.order:
            st.edits, st.staged = [], False
            st.created = tool == "Write" and result.lstrip().startswith("File created")
        pairs = _edit_pairs(tool, tool_input)
        undo = tuple((new, old) for old, new in reversed(pairs)) if pairs else None
        if undo is not None and st.edits and st.edits[-1] == undo and not tool_input.get("replace_all"):
            st.edits.pop()
            if not st.edits and not st.committed and not st.created and path not in self.moved_from:
                self._drop(path)
            return
        st.edits.append(pairs if pairs and not tool_input.get("replace_all") else None)
        self.order.setdefault(path)   # what was staged before still differs from the start: staged stays

    def shell(self, command: str) -> None:
        """A shell command whose call did not fail."""
        for op, args in shell_file_ops(command):
            if op == "move":
                self._move(args[0], args[1])
                continue
            paths = self._matching(args[1:]) if op != "commit" else []
            if op == "revert":           # args[0]: "index" (checkout --, restore) or "head"
                for p in paths:
                    st = self.state[p]
                    if st.committed or (args[0] == "index" and st.staged) or p in self.moved_from:
                        continue
                    if not st.created or (args[0] == "head" and st.staged):
                        self._drop(p)
            elif op == "unstage":
                for p in paths:
                    self.state[p].staged = False
            elif op == "stage":
                for p in paths:
                    self.state[p].staged = True
            elif op == "commit":
                for p in list(self.order):
                    st = self.state[p]
                    if st.staged or (args and args[0] == "all" and not st.created):
                        st.committed, st.staged = True, False
            elif op == "clean":
                for p in paths:
                    if self.state[p].created and not self.state[p].staged and not self.state[p].committed:
                        self._drop(p)
            elif op == "stash":          # args[0]: "tracked", "untracked" (-u) or "keep" (--keep-index)
                saved = {}
                for p in paths:
                    st = self.state[p]
                    if st.committed or p in self.moved_from or (st.created and not st.staged and args[0] != "untracked") \
                            or (args[0] == "keep" and st.staged):
                        continue
                    saved[p] = st
                    self._drop(p)
                self.stashes.append(saved)
            elif op == "unstash" and self.stashes:
                for p, st in self.stashes.pop().items():
                    self.state[p] = st
                    self.order.setdefault(p)
            elif op == "drop_stash" and self.stashes:
                self.stashes.pop()

    def remove(self, path: str) -> None:
        """The file was removed (``rm``): not a change the summary must name (see extract.removed_paths)."""
        self._drop(path)

    # -- helpers -------------------------------------------------------------------------------------
    def _drop(self, path: str) -> None:
        self.how.pop(path, None)
        self.order.pop(path, None)
        self.state.pop(path, None)
        self.moved_from.pop(path, None)

    def _known(self, path: str) -> str:
        """The path as first recorded when ``path`` is the same file written another way (a moved
        file recorded by its relative name, then edited by its absolute path)."""
        if path in self.state:
            return path
        norm = path.replace("\\", "/")
        for known in self.state:
            k = known.replace("\\", "/")
            if not k.startswith("/") and norm.endswith("/" + k.lstrip("./")):
                self.state[path] = self.state.pop(known)
                if known in self.order:
                    self.order = {(path if p == known else p): None for p in self.order}
                if known in self.moved_from:
                    self.moved_from[path] = self.moved_from.pop(known)
                if known in self.how:
                    self.how[path] = self.how.pop(known)
                return path
        return path

    def _matching(self, specs: list[str]) -> list[str]:
        """The changed files a list of resolved pathspecs names (``*`` for every file)."""
        out = []
        for spec in specs:
            if spec == "*":
                return list(self.order)
            exact = [p for p in self.order if _names(spec, p, whole=True)]
            if len(exact) > 1:
                continue   # "utils.py" with two utils.py changed: which one is not known
            out += exact or [p for p in self.order if _names(spec, p)]
        return list(dict.fromkeys(out))

    def _move(self, src: str, dst: str) -> None:
        if _BACKUP.search(src):
            return   # a backup put back ("mv a.py.bak a.py"): what it holds is not known here; a.py is as it was
        if _BACKUP.search(dst):   # set aside as a backup: no file of the project's, like one removed
            for p in [p for p in self.order if _names(src, p, whole=True)]:
                self._drop(p)
            return
        moved = [p for p in self.order if _names(src, p, whole=True) or _names(src, p)]
        for p in moved:
            st, origin = self.state[p], self.moved_from.get(p, p)
            self._drop(p)
            new = _moved_path(p, src, dst)
            self.state[new], self.moved_from[new] = st, origin
            self.order.setdefault(new)
        if not moved and re.search(r"\.\w{1,8}$", src.rsplit("/", 1)[-1]):   # a file (a folder of unknown files is not named)
            self.state[dst] = _State()
            self.moved_from[dst] = src
            self.order.setdefault(dst)


def _moved_path(path: str, src: str, dst: str) -> str:
    """Where ``path`` is after ``src`` (the file itself or a folder holding it) moved to ``dst``; a
    relative ``dst`` is put beside what ``src`` was relative to (``/r/a/x.py`` moved by
    ``mv a/x.py b/y.py`` is ``/r/b/y.py``)."""
    norm = path.replace("\\", "/")
    src = src.replace("\\", "/").removeprefix("./").rstrip("/")
    if src.startswith("/"):
        base, rest = "", norm[len(src):]
    elif norm == src or norm.startswith(src + "/"):
        base, rest = "", norm[len(src):]
    else:
        at = norm.rfind("/" + src + "/") if not norm.endswith("/" + src) else len(norm) - len(src) - 1
        base, rest = norm[:at + 1], norm[at + 1 + len(src):]
    dst = dst.rstrip("/")
    return (dst if dst.startswith("/") else base + dst.removeprefix("./")) + rest


def _names(spec: str, path: str, *, whole: bool = False) -> bool:
    """Whether pathspec ``spec`` (absolute, or relative to an unknown folder) names ``path``, the
    file itself (``whole``) or, when not ``whole``, a folder holding it."""
    norm = path.replace("\\", "/")
    spec = spec.replace("\\", "/").removeprefix("./").rstrip("/")
    if not spec or spec == ".":
        return not whole
    if spec.startswith("/"):
        return norm == spec if whole else norm.startswith(spec + "/")
    if whole:
        return norm == spec or norm.endswith("/" + spec)
    return norm.startswith(spec + "/") or ("/" + spec + "/") in norm


def _edit_pairs(tool: str, tool_input: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    if tool == "Edit":
        return ((str(tool_input.get("old_string", "")), str(tool_input.get("new_string", ""))),)
    if tool == "MultiEdit" and isinstance(tool_input.get("edits"), list):
        return tuple((str(e.get("old_string", "")), str(e.get("new_string", "")))
                     for e in tool_input["edits"] if isinstance(e, dict))
    return ()


def _commands(command: str) -> list[str] | None:
    """The simple commands of a shell line, split at ``;``, ``&&``, ``||``, ``|``, ``&`` and line
    ends outside quotes (a commit message may hold any of them); None when a quote is not closed."""
    out, cur, quote, i = [], [], "", 0
    while i < len(command):
        c = command[i]
        if quote:
            if c == "\\" and quote == '"' and i + 1 < len(command):
                cur.append(command[i:i + 2])
                i += 2
                continue
            quote = "" if c == quote else quote
            cur.append(c)
        elif c == "\\" and i + 1 < len(command):
            cur.append(command[i:i + 2] if command[i + 1] != "\n" else " ")
            i += 2
            continue
        elif c in "'\"":
            quote = c
            cur.append(c)
        elif c in ";&|\n" and not (c == "&" and (command[i - 1:i] in (">", "<") or command[i + 1:i + 2] == ">")):
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    if quote:
        return None
    out.append("".join(cur))
    return [c for c in out if c.strip()]


#: A backup copy's name (``a.py.bak``, ``a.py.orig``, ``a.py~``).
_BACKUP = re.compile(r"(?:\.(?:bak|orig|old|backup|save|swp)|~)$", re.IGNORECASE)

#: The programs :func:`shell_file_ops` follows.
_FOLLOWED = re.compile(r"(?<![\w.-])(?:git|mv)(?![\w.-])")


def shell_file_ops(command: str) -> list[tuple[str, list[str]]]:
    """What a shell command does to files, as ``(op, args)`` in order: ``move [src, dst]``,
    ``revert [index|head, specs...]``, ``unstage [_, specs...]``, ``stage [_, specs...]``,
    ``commit [all?]``, ``clean [_, specs...]``, ``stash [tracked|untracked|keep, specs...]``,
    ``unstash``, ``drop_stash``. A pathspec is joined to the folder a ``cd`` went to; ``*`` is every
    file. A command this reader does not follow is left out.

    >>> shell_file_ops("git checkout -- src/a.py && git mv old.py new.py")
    [('revert', ['index', 'src/a.py']), ('move', ['old.py', 'new.py'])]
    >>> shell_file_ops("cd web && git restore --staged --worktree .")
    [('revert', ['head', 'web'])]
    """
    out: list[tuple[str, list[str]]] = []
    if not _FOLLOWED.search(command or ""):
        return out   # most commands: no git, no mv (a long heredoc is not read character by character)
    cwd = ""
    segments = _commands(command or "")
    if segments is None:
        # an unclosed quote: what ran is not known; a commit in it keeps every change (the side
        # that asks the summary to name a file), anything else is left out
        return [("commit", ["all"])] if re.search(r"\bgit\s+commit\b", command) else []
    for segment in segments:
        try:
            words = shlex.split(segment, comments=True)
        except ValueError:
            continue
        words = _without_redirections(words)
        while words and re.match(r"^\w+=", words[0]):
            words = words[1:]
        if not words:
            continue
        if words[0] in ("cd", "pushd") and len(words) == 2:
            cwd = _join(cwd, words[1]) if words[1] not in ("-", "~") and not words[1].startswith("~") else "?"
            continue
        here = cwd
        if words[0] == "git":
            words = words[1:]
            while len(words) >= 2 and words[0] in ("-C", "-c"):
                if words[0] == "-C":
                    here = _join(here, words[1])
                words = words[2:]
            op = _git_op(words)
        elif words[0] in ("mv", "/bin/mv"):
            op = _move_op(words[1:])
        else:
            continue
        if op is None or here == "?":
            continue
        name, args = op
        if name == "move":
            for src in args[:-1]:
                dst = args[-1]
                if len(args) > 2 or dst.endswith("/") or (re.search(r"\.\w{1,8}$", src) and not
                                                           re.search(r"\.\w{1,8}$", dst.rstrip("/").rsplit("/", 1)[-1])):
                    dst = dst.rstrip("/") + "/" + src.rstrip("/").rsplit("/", 1)[-1]   # into a folder
                out.append(("move", [_join(here, src), _join(here, dst)]))
        else:
            out.append((name, args[:1] + [s if s == "*" else _join(here, s) for s in args[1:]]))
    return out


def _without_redirections(words: list[str]) -> list[str]:
    """``git checkout -- a.py 2>&1 > out.txt`` without ``2>&1`` and ``> out.txt``."""
    out, skip = [], False
    for w in words:
        if skip:
            skip = False
        elif re.fullmatch(r"\d*(?:>>?|<|&>)", w):
            skip = True
        elif not re.match(r"^\d*(?:>>?|<|&>)\S", w):
            out.append(w)
    return out


def _join(cwd: str, path: str) -> str:
    if cwd == "?" or path.startswith("/"):
        return path if cwd != "?" else "?"
    path = path.removeprefix("./")
    if path in (".", ""):
        return cwd or "."
    return f"{cwd.rstrip('/')}/{path}" if cwd and cwd != "." else path


def _move_op(words: list[str]) -> tuple[str, list[str]] | None:
    if any(w in ("-t", "--target-directory") or w.startswith("--target-directory=") for w in words):
        return None
    args = [w for w in words if not w.startswith("-")]
    if len(args) < 2 or any(re.search(r"[*?\[]", a) for a in args):
        return None
    return "move", args


def _specs(words: list[str]) -> list[str] | None:
    """Pathspecs, or None when one is a glob or a magic spec this reader does not follow."""
    specs = [("*" if w in (":/", ":") else w) for w in words]
    if any(re.search(r"[*?\[]", s) and s != "*" for s in specs) or any(s.startswith(":") for s in specs):
        return None
    return specs


def _git_op(words: list[str]) -> tuple[str, list[str]] | None:
    if not words:
        return None
    sub, rest = words[0], words[1:]
    opts = [w for w in rest if w.startswith("-")]
    after = rest[rest.index("--") + 1:] if "--" in rest else []
    before = [w for w in (rest[:rest.index("--")] if "--" in rest else rest) if not w.startswith("-")]
    if sub == "mv":
        return _move_op(rest)
    if sub == "checkout":
        if set(opts) & {"-b", "-B", "--orphan", "-p", "--patch", "--ours", "--theirs", "-m", "--merge", "--detach"}:
            return None
        if "--" in rest:
            source = before[0] if before else ""
            specs = _specs(after)
            if source in ("", "HEAD", "@") and specs:
                return "revert", ["index" if not source else "head", *specs]
            return None
        if before and before[0] in ("HEAD", "@") and len(before) > 1:
            specs = _specs(before[1:])
            return ("revert", ["head", *specs]) if specs else None
        specs = _specs(before)   # "git checkout a.py": a path when it names a changed file, else a branch
        return ("revert", ["index", *specs]) if specs else None
    if sub == "restore":
        if set(opts) & {"-p", "--patch", "--ours", "--theirs", "-m", "--merge"}:
            return None
        ref: str | None = next((w.split("=", 1)[1] for w in opts if w.startswith("--source=")), None)
        if "-s" in rest or "--source" in rest:
            i = rest.index("-s" if "-s" in rest else "--source")
            ref = rest[i + 1] if i + 1 < len(rest) else None
            before = [w for w in before if w != ref]
        if ref not in (None, "HEAD", "@"):
            return None
        staged = bool(set(opts) & {"-S", "--staged", "-SW", "-WS"})
        worktree = bool(set(opts) & {"-W", "--worktree", "-SW", "-WS"}) or not staged
        specs = _specs(after or before)
        if not specs:
            return None
        if not worktree:
            return "unstage", ["", *specs]
        return "revert", ["head" if staged or ref else "index", *specs]
    if sub == "reset":
        if "--hard" in opts:
            return ("revert", ["head", "*"]) if not before or before == ["HEAD"] or before == ["@"] else None
        if set(opts) - {"-q", "--quiet", "--mixed"}:
            return None
        specs = _specs(after or (before[1:] if before[:1] == ["HEAD"] else before))
        return ("unstage", ["", *(specs or ["*"])]) if specs is not None else None
    if sub == "add":
        if set(opts) & {"-A", "--all", "-u", "--update"} and not (after or before):
            return "stage", ["", "*"]
        specs = _specs(after or before)
        return ("stage", ["", *specs]) if specs else None
    if sub == "commit":
        if set(opts) & {"--dry-run"}:
            return None
        every = any(w in ("-a", "--all") or re.fullmatch(r"-[a-zA-Z]*a[a-zA-Z]*", w) for w in opts)
        return "commit", ["all"] if every else []
    if sub == "clean":
        if not any(re.fullmatch(r"-[a-zA-Z]*f[a-zA-Z]*|--force", w) for w in opts) or \
                any(w in ("-n", "--dry-run") or re.fullmatch(r"-[a-zA-Z]*n[a-zA-Z]*", w) for w in opts):
            return None
        specs = _specs(after or before)
        return ("clean", ["", *(specs or ["*"])]) if specs is not None else None
    if sub == "stash":
        for flag in ("-m", "--message"):
            if flag in rest and rest.index(flag) + 1 < len(rest):
                before = [w for w in before if w != rest[rest.index(flag) + 1]]
        action = before[0] if before else "push"
        if action in ("pop", "apply", "branch"):
            return "unstash", []
        if action in ("drop", "clear"):
            return "drop_stash", []
        if action not in ("push", "save") and before:
            return None   # list, show, create, store
        kind = ("untracked" if set(opts) & {"-u", "--include-untracked", "-a", "--all"} else
                "keep" if set(opts) & {"-k", "--keep-index"} else "tracked")
        if set(opts) & {"-p", "--patch", "--staged", "-S"}:
            return None
        specs = _specs(after) if after else ["*"]
        return ("stash", [kind, *specs]) if specs else None
    return None
