"""``ctxeval lint``: every problem of a scenario file at once, with file, line and field.

Loading a scenario (:func:`pytest_ctxeval.scenario.schema.load_scenario`) stops at the first error; the
linter keeps going and also finds what loads fine but cannot work as meant:

* **schema**: every validation error (unknown or misspelt keys, wrong types, bad config overrides,
  unknown faults, ``known_failures`` naming a grader that does not exist);
* **templates**: every field whose jinja2 template fails (undefined helper or variable, syntax,
  sandbox refusal), once per field even inside a ``repeat:``;
* **tool calls**: a call with neither ``result:`` nor ``error:``; an input missing what its tool needs
  (``Read`` without ``file_path``, ``Edit`` without ``old_string``...); a result naming another file
  than the input (``The file src/a.py has been updated.`` for an Edit of ``src/b.py``); a Read
  whose result is over the window's Read limit (the engine answers it with the Read tool's error); the
  same explicit ``id:`` twice; ``tool_use``/``tool_result`` blocks pasted into a user turn (they
  answer or await nothing there: an API error);
* **expectations**: an ``expect.files``/``errors``/``pending``/``superseded``/``constraints``/
  ``failed_approaches`` entry the expanded script never contains (its grader would never check
  it), and probes without a real answer (blank, ``TODO``, ``?``...).

Problems print as ``file:line: field: message``; :func:`lint_paths` returns them all.
"""

from __future__ import annotations

import json
import re
from ..core.gcpause import paused_gc
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Iterable

from pydantic import ValidationError

from ..errors import CtxEvalError, ScenarioError, UsageError
from .expansion import AssistantStep, CompactStep, UserStep, _check_compact_first, _check_in_flight, _Expander
from .schema import (
    MAX_FILE_BYTES, BadYAML, Scenario, _KNOWN_FIELDS, _data_path, _describe_error, _node_lines, find_scenarios,
    format_path,
    load_yaml,
)
from ..reading.summary import normalize_ws
from ..core.textindex import TextIndex

__all__ = ["LintProblem", "lint_file", "lint_paths", "REQUIRED_INPUTS"]

#: Input keys each built-in tool needs (a scripted call without them is not a call the tool accepts).
REQUIRED_INPUTS: dict[str, tuple[str, ...]] = {
    "Read": ("file_path",), "Write": ("file_path", "content"), "Edit": ("file_path", "old_string", "new_string"),
    "MultiEdit": ("file_path", "edits"), "NotebookEdit": ("notebook_path",), "Bash": ("command",),
    "PowerShell": ("command",), "Grep": ("pattern",), "Glob": ("pattern",), "TodoWrite": ("todos",),
    "Task": ("prompt",), "WebFetch": ("url",), "WebSearch": ("query",),
}
_TODO_STATUSES = ("pending", "in_progress", "completed")
_PLACEHOLDER = re.compile(r"^\s*(?:|\?+|\.{2,}|…|todo|tbd|fixme|xxx|n/?a|none|<[^>]*>|\[[^\]]*\])\s*$", re.IGNORECASE)
#: What the edit tools answer, and the path they name.
_EDIT_RESULT = re.compile(r"^(?:The file (?P<a>\S+) has been updated|File created successfully at: (?P<b>\S+?))\.?\s*$")


@dataclass(frozen=True)
class LintProblem:
    """One problem: where (file, line, field path) and what."""

    path: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}{':' + str(self.line) if self.line else ''}: {self.field}: {self.message}"


class _Collector:
    def __init__(self, path: Path, lines: dict[tuple[Any, ...], int]):
        self.path, self.lines = path, lines
        self.problems: list[LintProblem] = []
        self._seen: set[tuple[Any, ...]] = set()

    def line(self, loc: tuple[Any, ...]) -> int | None:
        probe = tuple(loc)
        while probe and probe not in self.lines:
            probe = probe[:-1]
        return self.lines.get(probe)

    def add(self, loc: tuple[Any, ...], message: str, line: int | None = None) -> None:
        field = format_path(loc)
        line = line if line is not None else self.line(loc)
        key = (line, field, message)
        if key not in self._seen:
            self._seen.add(key)
            self.problems.append(LintProblem(str(self.path), line, field, message))


class _LintExpander(_Expander):
    """The scenario expander, but a failing template is recorded and rendered as '' so the rest of
    the file is still checked; every step remembers the field path of its turn."""

    def __init__(self, scenario: Scenario, out: _Collector):
        super().__init__(scenario)
        self.out = out
        self.locs: list[tuple[Any, ...]] = []

    def render_str(self, text: str, loc: tuple[Any, ...], ctx: dict[str, Any]) -> str:
        try:
            return super().render_str(text, loc, ctx)
        except ScenarioError as exc:
            prefix = f"{self.scenario.where(loc)}: {format_path(loc)}: "
            msg = str(exc)
            self.out.add(loc, msg[len(prefix):] if msg.startswith(prefix) else msg)
            return ""

    def add(self, step: Any, loc: tuple[Any, ...]) -> None:
        super().add(step, loc)
        self.locs.append(loc)


def _load(path: Path, out: _Collector) -> Scenario | None:
    """The scenario, or None after recording why it cannot be loaded (every schema error)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        out.add((), f"cannot read ({exc.strerror or exc})")
        return None
    if len(raw) > MAX_FILE_BYTES:
        out.add((), f"{len(raw)} bytes is over the {MAX_FILE_BYTES}-byte limit for a scenario file")
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        out.add((), f"not UTF-8 ({exc.reason}); save the file as UTF-8", line=raw[: exc.start].count(b"\n") + 1)
        return None
    try:
        data, node = load_yaml(text)
    except BadYAML as exc:
        out.add((), exc.message, line=exc.line or None)
        return None
    if not isinstance(data, dict):
        out.add((), f"a scenario is a YAML mapping with at least 'turns:'; got {type(data).__name__}", line=1)
        return None
    if node is not None:
        _node_lines(node, (), out.lines)
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            dpath = _data_path(data, tuple(err["loc"]), missing=err["type"] == "missing")
            out.add(dpath, _describe_error(err))
        _hidden_errors(data, exc.errors(), out)
        return None
    scenario.path, scenario.lines = path, out.lines
    ok = True
    try:
        scenario.engine_config()
    except CtxEvalError as exc:
        out.add(("config",), str(exc).split(": ", 1)[-1])
        ok = False
    from ..core.faults import FAULTS
    for task, plan in scenario.faults.items():
        for i, fault in enumerate(plan):
            if fault not in FAULTS:
                out.add(("faults", task, i), f"unknown fault {fault!r}; known: {', '.join(FAULTS)}")
                ok = False
    return scenario if ok else None


def _hidden_errors(data: dict[str, Any], errors: list[Any], out: _Collector) -> None:
    """The errors inside the value of a misspelt key (``tols:`` holding a misspelt ``reslt:``):
    pydantic never looks inside an unknown key, so the file is validated again with each such key
    spelt as the did-you-mean suggests, and the errors found under it are reported at their own
    lines, saying how the key was read."""
    import copy
    import difflib

    fixed = copy.deepcopy(data)
    renamed: list[tuple[tuple[Any, ...], str, str]] = []
    for err in errors:
        if err["type"] != "extra_forbidden":
            continue
        dpath = _data_path(data, tuple(err["loc"]))
        if not dpath or not isinstance(dpath[-1], str):
            continue
        parent, bad = dpath[:-1], dpath[-1]
        close = difflib.get_close_matches(bad, _KNOWN_FIELDS, n=1)
        holder: Any = fixed
        for key in parent:
            holder = holder[key]
        if close and isinstance(holder, dict) and bad in holder and close[0] not in holder:
            holder[close[0]] = holder.pop(bad)
            renamed.append((parent, bad, close[0]))
    if not renamed:
        return
    try:
        Scenario.model_validate(fixed)
    except ValidationError as exc:
        for err in exc.errors():
            dpath = _data_path(fixed, tuple(err["loc"]), missing=err["type"] == "missing")
            for parent, bad, good in renamed:
                n = len(parent)
                if dpath[:n + 1] == (*parent, good) and len(dpath) > n + 1:
                    out.add((*parent, bad, *dpath[n + 1:]),
                            f"{_describe_error(err)} (inside '{bad}', read as '{good}')")


def _check_known_failures(scenario: Scenario, out: _Collector, graders: Iterable[str] | None) -> None:
    if not scenario.known_failures:
        return
    if graders is None:
        from ..grading.registry import load_graders
        graders = load_graders().names
    names = set(graders)
    for name in scenario.known_failures:
        if name not in names:
            out.add(("known_failures", name), f"no grader named {name!r}; known graders: {', '.join(sorted(names))}")


def _check_user_blocks(scenario: Scenario, out: _Collector) -> None:
    def walk(turns: list[Any], loc: tuple[Any, ...]) -> None:
        for i, turn in enumerate(turns):
            tloc = loc + (i,)
            if hasattr(turn, "repeat"):
                walk(turn.turns, tloc + ("turns",))
            elif hasattr(turn, "user") and isinstance(turn.user, list):
                for j, block in enumerate(turn.user):
                    kind = getattr(block, "type", "")
                    if kind == "tool_result":
                        out.add(tloc + ("user", j), "a tool_result block in a user turn answers no tool call (an API "
                                "error); put the result under the assistant turn's tools: as result: or error:")
                    elif kind == "tool_use":
                        out.add(tloc + ("user", j), "a tool_use block in a user turn (only the assistant calls "
                                "tools); script it under an assistant turn's tools:")
    walk(scenario.turns, ("turns",))


def _check_tools(scenario: Scenario, out: _Collector) -> None:
    """Static checks on the tool calls as written (before templates)."""
    from ..core.near_names import near_tool

    def walk(turns: list[Any], loc: tuple[Any, ...]) -> None:
        for i, turn in enumerate(turns):
            tloc = loc + (i,)
            if hasattr(turn, "repeat"):
                walk(turn.turns, tloc + ("turns",))
                continue
            for j, call in enumerate(getattr(turn, "tools", None) or []):
                cloc = tloc + ("tools", j)
                if call.result is None and call.error is None:
                    out.add(cloc, f"{call.name} call has neither result: nor error: (write result: \"\" for an "
                                  "empty output)")
                near = near_tool(call.name)
                if near:  # a slip of a built-in name: the call would be checked (and graded) as nothing
                    out.add(cloc + ("name",), f"{call.name!r} is not a Claude Code tool (did you mean {near!r}?); "
                                              "use mcp__server__tool for your own tools")
                missing = [k for k in REQUIRED_INPUTS.get(call.name, ()) if k not in call.input]
                if missing:
                    out.add(cloc + ("input",), f"{call.name} needs {', '.join(missing)} in its input")
    walk(scenario.turns, ("turns",))


def _check_steps(scenario: Scenario, steps: list[Any], locs: list[tuple[Any, ...]], out: _Collector) -> None:
    """Checks on the expanded script: rendered inputs and results, ids, Read limits."""
    config = None
    try:
        config = scenario.engine_config()
    except CtxEvalError:
        pass
    seen_ids: dict[str, tuple[Any, ...]] = {}
    for step, loc in zip(steps, locs):
        if not isinstance(step, AssistantStep):
            continue
        for j, tool in enumerate(step.tools):
            cloc = loc + ("tools", j)
            if tool.id:
                if tool.id in seen_ids and seen_ids[tool.id] != cloc:
                    out.add(cloc + ("id",), f"tool id {tool.id!r} is used twice (first at "
                                            f"{format_path(seen_ids[tool.id])}): tool_use ids must be unique")
                elif tool.id in seen_ids:
                    out.add(cloc + ("id",), f"tool id {tool.id!r} is repeated by its repeat: block: tool_use ids "
                                            "must be unique (leave id: out, or template it)")
                seen_ids.setdefault(tool.id, cloc)
            if tool.name == "TodoWrite" and isinstance(tool.input.get("todos"), list):
                for k, todo in enumerate(tool.input["todos"]):
                    if not isinstance(todo, dict) or not str(todo.get("content", "")).strip():
                        out.add(cloc + ("input", "todos", k), "a todo needs a non-empty content:")
                    elif todo.get("status") not in _TODO_STATUSES:
                        out.add(cloc + ("input", "todos", k, "status"),
                                f"status {todo.get('status')!r} is not one of {', '.join(_TODO_STATUSES)}")
            if tool.is_error or not isinstance(tool.result, str):
                continue
            path = tool.input.get("file_path")
            match = _EDIT_RESULT.match(tool.result.strip())
            if match and tool.name in ("Edit", "MultiEdit", "Write") and isinstance(path, str):
                named = match.group("a") or match.group("b")
                if named != path:
                    out.add(cloc + ("result",), f"the result names {named} but the {tool.name} is of {path}")
            if tool.name == "Read" and config is not None:
                from ..engine.budget import read_limit_error
                if read_limit_error(tool.result, config) is not None:
                    out.add(cloc + ("result",), f"the Read result of {path} is over this window's Read limit "
                                                f"({config.read_max_tokens:,} tokens): the engine answers it with "
                                                "the Read tool's error; read it in pages (offset/limit)")


def _script_text(steps: list[Any]) -> str:
    parts = []
    for step in steps:
        if isinstance(step, UserStep):
            parts.append(step.content if isinstance(step.content, str) else
                         "\n".join(getattr(b, "text", "") for b in step.content))
        elif isinstance(step, AssistantStep):
            parts += [step.text, step.thinking or ""]
            for tool in step.tools:
                parts.append(json.dumps(tool.input, ensure_ascii=False))
                parts.append(tool.result if isinstance(tool.result, str) else
                             "\n".join(getattr(b, "text", "") for b in tool.result))
        else:
            parts.append(getattr(step, "instructions", None) or getattr(step, "summary", "") or "")
    return normalize_ws("\n".join(parts)).lower()


def _check_expect(scenario: Scenario, steps: list[Any], out: _Collector) -> None:
    text = TextIndex(_script_text(steps))  # one pass, not one scan per item (linear in the script)
    expect = scenario.expect
    graders = {"files": "files_preserved", "errors": "errors_preserved", "pending": "pending_tasks",
               "superseded": "no_superseded_work", "constraints": "constraints_preserved",
               "failed_approaches": "failed_approaches_preserved"}
    for key, grader in graders.items():
        for i, item in enumerate(getattr(expect, key)):
            needle = normalize_ws(item).lower()
            if not needle:
                out.add(("expect", key, i), "empty entry")
            elif needle not in text:
                out.add(("expect", key, i), f"{item!r} is never in the script (no message, tool input or result "
                                            f"holds it), so {grader} never checks it")
    for i, probe in enumerate(expect.probes):
        if _PLACEHOLDER.match(probe.answer) or normalize_ws(probe.answer).lower() == normalize_ws(probe.question).lower():
            out.add(("expect", "probes", i, "answer"), f"the probe {probe.question!r} has no real answer "
                                                       f"({probe.answer!r}): write what a good answer says")


def _check_system_instructions(scenario: Scenario, out: _Collector) -> None:
    """A CLAUDE.md compaction-instructions section written into ``system:`` reaches no summariser:
    the engine's summariser has its own system prompt; ``memory_files:`` reach it (docs/prompts.md)."""
    from ..reading.context_instructions import instruction_sections

    if scenario.system and instruction_sections(scenario.system):
        out.add(("system",), "holds a compaction-instructions section (such as '## Compact Instructions'), which no "
                             "compaction follows: the summariser does not see the agent's system prompt. Give the "
                             "CLAUDE.md as memory_files: {/repo/CLAUDE.md: \"...\"}, which every compaction request "
                             "carries (docs/prompts.md, 'Compact instructions in CLAUDE.md')")


def lint_file(path: str | Path, *, graders: Iterable[str] | None = None) -> list[LintProblem]:
    """Every problem of one scenario file (empty when it is clean), in line order."""
    with paused_gc():  # the file's values form a tree; see gcpause (was half of lint's time, superlinear)
        problems = _lint(Path(path), graders)
    return sorted(problems, key=lambda q: q.line or 0)


def _lint(p: Path, graders: Iterable[str] | None) -> list[LintProblem]:
    out = _Collector(p, {})
    scenario = _load(p, out)
    if scenario is None:
        return out.problems
    _check_known_failures(scenario, out, graders)
    _check_system_instructions(scenario, out)
    _check_user_blocks(scenario, out)
    _check_tools(scenario, out)
    ex = _LintExpander(scenario, out)
    try:
        ex.turns(scenario.turns, ("turns",), {})
        _check_in_flight(scenario, ex.steps)
    except ScenarioError as exc:  # a size limit or in_flight misuse: the rest cannot be checked
        msg = str(exc)
        where = f"{p}:"
        out.add((), msg[len(where):].split(": ", 1)[-1] if msg.startswith(where) else msg,
                line=int(m.group(1)) if (m := re.match(rf"{re.escape(str(p))}:(\d+):", msg)) else None)
        return out.problems
    try:
        _check_compact_first(ex.steps)
    except ScenarioError as exc:  # the message the run gives, at the step's own field and line
        loc = next(loc for step, loc in zip(ex.steps, ex.locs) if isinstance(step, CompactStep))
        out.add(loc + ("compact",), str(exc).split(": compact: ", 1)[-1])
    _check_steps(scenario, ex.steps, ex.locs, out)
    _check_expect(scenario, ex.steps, out)
    return out.problems


def lint_paths(paths: Iterable[str | Path], *, graders: Iterable[str] | None = None) -> list[LintProblem]:
    """Every problem of every scenario file under ``paths``; :class:`UsageError` when a path does
    not exist or holds no scenario file."""
    paths = list(paths)
    files = find_scenarios(paths)
    if not files:
        raise UsageError(f"no scenario files (*.yaml, *.yml) under {', '.join(map(str, paths))}")
    if graders is None:
        from ..grading.registry import load_graders
        graders = load_graders().names
    names = list(graders)
    problems: list[LintProblem] = []
    for f in files:
        problems += lint_file(f, graders=names)
    return problems
