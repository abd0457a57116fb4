"""Scenario files: strict schema, YAML loading with line numbers, sandboxed template expansion.

A scenario is a scripted agent session::

    name: auth_refactor
    description: The user switches from JWT to opaque tokens halfway through.
    context_window: 20000          # small windows compact often; budgets scale (see config.py)
    turns:
      - user: "Refactor src/auth.py to use JWT"
      - assistant: "Reading the module first."
        tools:
          - name: Read
            input: {file_path: src/auth.py}
            result: "{{ python_file(lines=300, seed=1) }}"
      - after: 75m                  # an idle gap
      - repeat: 5                   # five similar turns; {{ i }} is 1..5
        turns:
          - user: "step {{ i }}"
      - compact: {instructions: "focus on the auth changes"}
    expect:
      intent: "opaque session tokens"
      files: [src/auth.py]
      superseded: ["use JWT"]

An assistant turn with ``in_flight: true`` has calls still running when the next step — a
``compact:`` step — runs; their results arrive after that compaction. ``expect:`` may also list
``constraints`` (rules the user or a memory file set) and ``failed_approaches`` (attempts the session
proved wrong), for the intent graders.

Imported sessions (``ctxeval import``, :mod:`pytest_ctxeval.scenario.importer`) add ``provenance:``, an
absolute ``at:`` time on turns (the replay clock moves there, so idle gaps are real),
``recorded_compaction:`` turns (Claude Code's own summary installed as it happened, no model call)
and ``sidechains:`` (subagent conversations by agent id, never replayed).

Files are loaded with ``yaml.safe_load`` only and validated by pydantic models with
``extra="forbid"``; an error names the file, line and field path
(``scenarios/x.yaml:14: turns[3].tools[0].result: ...``). String fields of turns are jinja2
templates rendered in a sandbox with the deterministic helpers of :mod:`pytest_ctxeval.scenario.fillers`
(unless the scenario sets ``templates: false``, as imported sessions do: their content is never
rendered). Expanding a scenario into the flat list of steps the runner replays is
:mod:`pytest_ctxeval.scenario.expansion` (its names are re-exported here).
"""

from __future__ import annotations

import difflib
import re
from datetime import datetime, timedelta, UTC
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal
from collections.abc import Mapping

import yaml
from pydantic import (
    BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError, field_validator, model_validator,
)

from ..core.config import EngineConfig, resolve_context_window
from ..core.faults import FAULTS
from ..errors import ScenarioError, UsageError
from ..core.limits import check_time
from ..core.messages import ContentBlock, ResultContent
from .planted import CompressionBar, FactUpdate, PlantedFact, check_bars

if TYPE_CHECKING:  # served by __getattr__ below (expansion imports this module)
    from .expansion import Step as Step

__all__ = [
    "Scenario", "Expectations", "Probe", "ToolCall", "load_scenario", "find_scenarios", "Provenance",
    "parse_duration", "node_lines", "validation_message",
]

MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_GAP_SECONDS = 3650 * 86400  # ten years: the replay clock must stay a valid datetime
DEFAULT_START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
#: A tool id a scenario may name (and an import may keep): the API's tool_use id alphabet.
TOOL_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|hr|d)?\s*$")


from ..core.yaml_safe import BadYAML, load_yaml  # noqa: E402


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def parse_duration(value: str | int | float) -> timedelta:
    """``75m``, ``2h``, ``30s``, ``1.5h`` or a number of seconds.

    >>> parse_duration("75m")
    datetime.timedelta(seconds=4500)
    """
    if isinstance(value, bool):
        raise ValueError("expected a duration such as '75m', '2h' or '30s'")
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        match = _DURATION.match(str(value))
        if not match:
            raise ValueError(f"expected a duration such as '75m', '2h' or '30s', got {value!r}")
        unit = (match.group(2) or "s")[0]
        seconds = float(match.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[unit]
    if seconds < 0:
        raise ValueError("a duration cannot be negative")
    if not seconds <= MAX_GAP_SECONDS:  # also catches inf and nan
        raise ValueError(f"a duration is at most {MAX_GAP_SECONDS // 86400} days")
    return timedelta(seconds=seconds)


class ToolCall(_Strict):
    """One tool call of an assistant turn and its result (or error)."""

    name: str = Field(min_length=1)
    input: dict[str, Any] = Field(default_factory=dict)
    result: str | list[ResultContent] | None = None
    error: str | None = None
    id: str | None = None
    max_result_chars: int | None = Field(default=None, gt=0)  # a tool-declared persistence limit

    @field_validator("id")
    @classmethod
    def _safe_id(cls, v: str | None) -> str | None:
        if v is not None and not TOOL_ID.match(v):
            raise ValueError("a tool id may hold only letters, digits, '_' and '-' (at most 64)")
        return v

    @model_validator(mode="after")
    def _one_outcome(self) -> ToolCall:
        if self.result is not None and self.error is not None:
            raise ValueError("give either 'result' or 'error', not both")
        return self


def _aware_or_none(v: datetime | None) -> datetime | None:
    return v if v is None else check_time(v)


class UserTurn(_Strict):
    user: str | list[ContentBlock]
    meta: bool = False
    #: When the message was sent (imported sessions): the replay clock moves here, so idle gaps
    #: are the real ones. Without it the clock advances by a fixed step.
    at: datetime | None = None

    _at = field_validator("at")(_aware_or_none)


class AssistantTurn(_Strict):
    assistant: str = ""
    thinking: str | None = None
    tools: list[ToolCall] = Field(default_factory=list)
    at: datetime | None = None
    #: The calls are still running when the next step (a ``compact:`` step) runs: their results
    #: arrive after that compaction (risk: compaction with tool calls in flight).
    in_flight: bool = False

    _at = field_validator("at")(_aware_or_none)

    @model_validator(mode="after")
    def _not_empty(self) -> AssistantTurn:
        if not self.assistant and not self.tools and not self.thinking:
            raise ValueError("an assistant turn needs text, thinking or tools")
        if self.in_flight and not self.tools:
            raise ValueError("'in_flight: true' needs tool calls (their results are what arrive late)")
        return self


class GapTurn(_Strict):
    after: str | int | float

    @field_validator("after")
    @classmethod
    def _duration(cls, v: Any) -> Any:
        parse_duration(v)
        return v


class CompactSpec(_Strict):
    """``/compact`` options. ``partial: up_to`` summarises all but the last ``messages`` messages;
    ``partial: from`` summarises the last ``messages`` messages and keeps the older ones."""

    instructions: str | None = None
    partial: Literal["up_to", "from"] | None = None
    messages: int | None = Field(default=None, ge=1)
    at: datetime | None = None

    _at = field_validator("at")(_aware_or_none)

    @model_validator(mode="after")
    def _partial(self) -> CompactSpec:
        if (self.partial is None) != (self.messages is None):
            raise ValueError("'partial' and 'messages' go together (e.g. partial: up_to, messages: 6)")
        return self


class CompactTurn(_Strict):
    compact: CompactSpec

    @field_validator("compact", mode="before")
    @classmethod
    def _true_or_mapping(cls, v: Any) -> Any:
        if v is True:
            return {}
        if not isinstance(v, (dict, CompactSpec)):
            raise ValueError("write 'compact: true' or a mapping such as 'compact: {instructions: ...}'")
        return v


class RecordedCompaction(_Strict):
    """A compaction Claude Code did in the imported session, installed as it happened: the real
    summary replaces the context (no model call). Graded like any compaction (kind ``transcript``)."""

    trigger: Literal["auto", "manual"] = "auto"
    pre_tokens: int = Field(default=0, ge=0)
    summary: str = Field(min_length=1)
    at: datetime | None = None

    _at = field_validator("at")(_aware_or_none)


class RecordedCompactionTurn(_Strict):
    recorded_compaction: RecordedCompaction


class RepeatTurn(_Strict):
    repeat: int = Field(ge=1, le=10_000)
    var: str = Field(default="i", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    turns: list[Turn] = Field(min_length=1)


_TURN_KEYS = ("user", "assistant", "after", "compact", "repeat", "recorded_compaction")


def _turn_kind(value: Any) -> str | None:
    if isinstance(value, dict):
        keys = [k for k in _TURN_KEYS if k in value]
        if len(keys) == 1:
            return keys[0]
        if "tools" in value or "thinking" in value:
            return "assistant"
    elif isinstance(value, BaseModel):
        for key, cls in (("user", UserTurn), ("assistant", AssistantTurn), ("after", GapTurn),
                         ("compact", CompactTurn), ("repeat", RepeatTurn),
                         ("recorded_compaction", RecordedCompactionTurn)):
            if isinstance(value, cls):
                return key
    return None


Turn = Annotated[
    Annotated[UserTurn, Tag("user")] | Annotated[AssistantTurn, Tag("assistant")] | Annotated[GapTurn, Tag("after")] | Annotated[CompactTurn, Tag("compact")] | Annotated[RepeatTurn, Tag("repeat")] | Annotated[RecordedCompactionTurn, Tag("recorded_compaction")],
    Discriminator(_turn_kind, custom_error_type="turn_kind",
                  custom_error_message="a turn needs exactly one of the keys user, assistant, after, "
                                       "compact, repeat, recorded_compaction"),
]
RepeatTurn.model_rebuild()


class Probe(_Strict):
    kind: Literal["recall", "artifact", "continuation", "decision"]
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)


class Expectations(_Strict):
    """What must survive compaction. Every key is optional."""

    intent: str | None = None
    files: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    pending: list[str] = Field(default_factory=list)
    superseded: list[str] = Field(default_factory=list)
    #: Rules the user or a memory file (CLAUDE.md) set that must keep holding after compaction.
    constraints: list[str] = Field(default_factory=list)
    #: Approaches the session proved wrong: a summary must record them as failed.
    failed_approaches: list[str] = Field(default_factory=list)
    probes: list[Probe] = Field(default_factory=list)
    #: Bars per planted-fact type for ``facts_survive`` (share held in every round; see planted.py).
    survival: dict[str, float] = Field(default_factory=dict)
    #: The ``compresses`` gate (share, min_tokens); None: the defaults.
    compression: CompressionBar | None = None

    _bars = field_validator("survival")(check_bars)


class PreCompactHook(_Strict):
    """A scripted PreCompact hook (see :mod:`pytest_ctxeval.engine.hooks`): what it prints
    (``output``, joined to the compaction's instructions) or why it blocks the compaction
    (``block``). ``matcher``: ``auto`` or ``manual``; none matches both."""

    output: str = ""
    matcher: Literal["auto", "manual"] | None = None
    block: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _something(self) -> PreCompactHook:
        if self.block is None and not self.output.strip():
            raise ValueError("give the hook an 'output' (what it prints) or 'block' (why it stops the compaction)")
        return self


class SessionStartHook(_Strict):
    """A scripted SessionStart hook: what it prints (a hook result after the attachments).
    ``matcher``: ``startup`` (when the session starts) or ``compact`` (after every compaction);
    none matches both. Only a PreCompact hook can block."""

    output: str
    matcher: Literal["startup", "compact"] | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_block(cls, data: Any) -> Any:
        if isinstance(data, dict) and "block" in data:
            raise ValueError("only a PreCompact hook can block (it stops the compaction); give this hook an 'output'")
        return data

    @field_validator("output")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the hook's output is blank; give what the hook prints")
        return v


class Hooks(_Strict):
    """``hooks:``, by Claude Code's event names."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    pre_compact: list[PreCompactHook] = Field(default_factory=list, alias="PreCompact")
    session_start: list[SessionStartHook] = Field(default_factory=list, alias="SessionStart")

    def as_mapping(self) -> dict[str, list[dict[str, Any]]]:
        return {"PreCompact": [h.model_dump() for h in self.pre_compact],
                "SessionStart": [h.model_dump() for h in self.session_start]}


class Provenance(_Strict):
    """Where an imported scenario came from (``ctxeval import``)."""

    source: str = Field(min_length=1)             # the transcript path as given
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")  # of the transcript's bytes
    version: str | None = None                    # Claude Code version that wrote it
    session_id: str | None = None
    model: str | None = None                      # the session's main model


class Scenario(_Strict):
    name: str | None = None
    description: str = ""
    context_window: int | None = Field(default=None, ge=1_000)
    model: str | None = None
    start: datetime = DEFAULT_START
    system: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    vars: dict[str, Any] = Field(default_factory=dict)
    faults: dict[str, list[str]] = Field(default_factory=dict)
    #: The context prefix (000:47-53): git status (capped at 2,000 chars, 003:77) and memory files
    #: (CLAUDE.md, path -> content, 40,000 chars each, 003:78), sent with every request.
    git_status: str | None = None
    memory_files: dict[str, str] = Field(default_factory=dict)
    #: Tools and MCP servers (name -> instructions) the session has: their instruction deltas are
    #: announced at the start and re-announced after every compaction (003:238-239, 003:610).
    tools: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    mcp_servers: dict[str, str] = Field(default_factory=dict)
    #: Scripted hooks by event (PreCompact, SessionStart): see PreCompactHook, SessionStartHook.
    hooks: Hooks = Field(default_factory=Hooks)
    templates: bool = True
    provenance: Provenance | None = None
    turns: list[Turn] = Field(min_length=1)
    #: Subagent (sidechain) conversations of an imported session, by agent id: kept for reading
    #: and grading by hand, never replayed (their results are in the main line as Task results).
    sidechains: dict[str, list[Turn]] = Field(default_factory=dict)
    expect: Expectations = Field(default_factory=Expectations)
    #: Facts that must survive compaction, typed and placed (pytest_ctxeval.scenario.planted).
    facts: list[PlantedFact] = Field(default_factory=list)
    #: Graders this scenario is known to fail, with the reason: reported as expected failures
    #: (pytest ``xfail(strict=True)``); a known failure that passes is an error, so the entry goes
    #: once the engine or prompt is fixed.
    known_failures: dict[str, str] = Field(default_factory=dict)

    # Set by load_scenario.
    path: Path | None = Field(default=None, exclude=True)
    lines: dict[tuple[Any, ...], int] = Field(default_factory=dict, exclude=True, repr=False)

    @field_validator("name")
    @classmethod
    def _safe_name(cls, v: str | None) -> str | None:
        if v is not None and not _SAFE_NAME.match(v):
            raise ValueError("a name may hold letters, digits, '_', '.' and '-' (it names files)")
        return v

    @field_validator("known_failures")
    @classmethod
    def _reasons(cls, v: dict[str, str]) -> dict[str, str]:
        out = {k: " ".join(str(r).split()) for k, r in v.items()}
        empty = [k for k, r in out.items() if not r]
        if empty:
            raise ValueError(f"known_failures.{empty[0]}: give the reason the grader is expected to fail")
        return out

    @model_validator(mode="after")
    def _facts(self) -> Scenario:
        seen: set[str] = set()
        for i, fact in enumerate(self.facts):
            if fact.id is not None:
                if fact.id in seen:
                    raise ValueError(f"facts[{i}].id: {fact.id!r} names two facts; give each its own id")
                seen.add(fact.id)
            for where, turn in (("turn", fact.turn), ("update.turn", fact.update.turn if fact.update else None)):
                if turn is not None and turn >= len(self.turns):
                    raise ValueError(f"facts[{i}].{where}: {turn} is not a turn (the scenario has {len(self.turns)} "
                                     f"turns, numbered from 0)")
        return self

    @field_validator("start")
    @classmethod
    def _aware(cls, v: datetime) -> datetime:
        return check_time(v)

    @property
    def display_name(self) -> str:
        """The name, else the file's stem made safe to use as a folder name (``...yaml`` has the
        stem ``..``: it must not name the parent folder)."""
        if self.name:
            return self.name
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.path.stem if self.path else "").strip(".") or "scenario"
        return stem if _SAFE_NAME.match(stem) else f"s{stem}"

    def window(self) -> int:
        return self.context_window or resolve_context_window(self.model)

    def engine_config(self, context_window: int | None = None) -> EngineConfig:
        """Seed constants scaled to the scenario's window (or ``context_window``), with the
        scenario's ``config:`` overrides applied."""
        try:
            return EngineConfig.for_window(context_window or self.window(), **self.config)
        except UsageError as exc:
            raise ScenarioError(f"{self.where(('config',))}: {exc}") from None

    def where(self, loc: tuple[Any, ...] = ()) -> str:
        """``file:line`` for a field path of this scenario (best known line)."""
        path = str(self.path) if self.path else self.display_name
        probe = tuple(loc)
        while probe and probe not in self.lines:
            probe = probe[:-1]
        line = self.lines.get(probe)
        return f"{path}:{line}" if line else path


# ---------------------------------------------------------------------------------------------
# Loading


#: Every field name of the schema, for "did you mean" hints.
_KNOWN_FIELDS = sorted({name for model in (ToolCall, UserTurn, AssistantTurn, GapTurn, CompactSpec, RecordedCompaction,
                                           RepeatTurn, Probe, Expectations, Provenance, PreCompactHook, SessionStartHook,
                                           Scenario, PlantedFact, FactUpdate, CompressionBar)
                        for name in model.model_fields if name not in ("path", "lines")})


def _node_lines(node: yaml.Node, path: tuple[Any, ...], out: dict[tuple[Any, ...], int]) -> None:
    """The line of every field path under ``node``. An alias's values are not walked again (an
    error there is placed at the alias); the walk uses a stack, so depth cannot overflow it."""
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, tuple[Any, ...]]] = [(node, path)]
    while stack:
        node, path = stack.pop()
        out.setdefault(path, node.start_mark.line + 1)
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                k = key.value if isinstance(key, yaml.ScalarNode) else None
                out[path + (k,)] = key.start_mark.line + 1
                stack.append((value, path + (k,)))
        elif isinstance(node, yaml.SequenceNode):
            for i, value in enumerate(node.value):
                stack.append((value, path + (i,)))


def _data_path(data: Any, loc: tuple[Any, ...], missing: bool = False) -> tuple[Any, ...]:
    """Drop union-variant and tag names from a pydantic ``loc``, keeping real keys and indices
    (and, for a missing field, its name)."""
    out: list[Any] = []
    cur = data
    tag_next = False
    for item in loc:
        if tag_next:
            tag_next = False
            if item in _TURN_KEYS:  # the union tag pydantic puts after a turn's index
                continue
        if isinstance(cur, dict) and item in cur:
            out.append(item)
            cur = cur[item]
        elif isinstance(cur, list) and isinstance(item, int) and 0 <= item < len(cur):
            tag_next = len(out) > 0 and out[-1] == "turns"
            out.append(item)
            cur = cur[item]
    if missing and loc and isinstance(loc[-1], str) and (not out or out[-1] != loc[-1]):
        out.append(loc[-1])
    return tuple(out)


def format_path(path: tuple[Any, ...]) -> str:
    """``('turns', 3, 'tools', 0, 'result')`` -> ``turns[3].tools[0].result``."""
    out = ""
    for item in path:
        out += f"[{item}]" if isinstance(item, int) else (f".{item}" if out else str(item))
    return out or "(top level)"


def _describe_error(err: Mapping[str, Any]) -> str:
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        close = difflib.get_close_matches(str(err["loc"][-1]), _KNOWN_FIELDS, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        return f"unknown field ({hint}check the spelling; see the scenario schema in docs/scenarios.md)"
    if err["type"] == "turn_kind" and isinstance(err.get("input"), dict):
        for key in err["input"]:
            close = difflib.get_close_matches(str(key), _TURN_KEYS, n=1)
            if close and key not in _TURN_KEYS:
                return f"{msg}; did you mean '{close[0]}' for '{key}'?"
    if err["type"] == "missing":
        return "required field is missing"
    return msg[len("Value error, "):] if msg.startswith("Value error, ") else msg


def node_lines(node: yaml.Node | None, prefix: tuple[Any, ...] = ()) -> dict[tuple[Any, ...], int]:
    """The line of every field path under ``node`` (as :func:`load_scenario` records them)."""
    out: dict[tuple[Any, ...], int] = {}
    if node is not None:
        _node_lines(node, prefix, out)
    return out


def validation_message(p: Path, data: Any, lines: dict[tuple[Any, ...], int], exc: ValidationError, *,
                       prefix: tuple[Any, ...] = (), more: str = "") -> str:
    """``file:line: field: what is wrong (did you mean ...)`` for the first error of ``exc``
    (``data`` validated, found at ``prefix`` of the file's YAML), with ``(+N more: <more>)``."""
    errors = exc.errors()
    extra = f" (+{len(errors) - 1} more{': ' + more if more else ''})" if len(errors) > 1 else ""
    return _one_error(p, data, lines, errors[0], prefix) + extra


def validation_messages(p: Path, data: Any, lines: dict[tuple[Any, ...], int], exc: ValidationError, *,
                        prefix: tuple[Any, ...] = ()) -> list[str]:
    """:func:`validation_message` for every error of ``exc``, in the order pydantic reports them."""
    return [_one_error(p, data, lines, e, prefix) for e in exc.errors()]


def _one_error(p: Path, data: Any, lines: dict[tuple[Any, ...], int], error: Any, prefix: tuple[Any, ...]) -> str:
    dpath = _data_path(data, tuple(error["loc"]), missing=error["type"] == "missing")
    probe = prefix + dpath
    while probe and probe not in lines:
        probe = probe[:-1]
    at = lines.get(probe)
    return f"{p}{':' + str(at) if at else ''}: {format_path(dpath)}: {_describe_error(error)}"


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate one scenario file. Raises :class:`ScenarioError` naming file, line, field."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read ({exc.strerror or exc})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ScenarioError(f"{p}: {len(raw)} bytes is over the {MAX_FILE_BYTES}-byte limit for a scenario file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ScenarioError(f"{p}:{line}: not UTF-8 ({exc.reason}); save the file as UTF-8") from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise ScenarioError(f"{p}:{line}: NUL byte in a scenario file")
    try:
        # libyaml's safe parser when present (20x faster on the multi-megabyte scenarios that
        # `ctxeval import` writes); duplicate keys, recursive anchors and alias bombs refused.
        data, node = load_yaml(text)
    except BadYAML as exc:
        raise ScenarioError(f"{p}{':' + str(exc.line) if exc.line else ''}: {exc.message}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{p}:1: a scenario is a YAML mapping with at least 'turns:'; "
                            f"got {type(data).__name__}")
    lines: dict[tuple[Any, ...], int] = {}
    if node is not None:
        _node_lines(node, (), lines)
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(validation_message(p, data, lines, exc, more=f"`ctxeval lint {p}` lists them all")) from None
    scenario.path = p
    scenario.lines = lines
    scenario.engine_config()  # validate config overrides now, with the file's name
    for task, plan in scenario.faults.items():
        for i, fault in enumerate(plan):
            if fault not in FAULTS:
                raise ScenarioError(f"{scenario.where(('faults', task, i))}: faults.{task}[{i}]: unknown fault "
                                    f"{fault!r}; known: {', '.join(FAULTS)}")
    return scenario


def find_scenarios(paths: list[str | Path]) -> list[Path]:
    """Scenario files under ``paths`` (files as given; directories searched for ``*.yaml``/``*.yml``)."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out += sorted(q for q in p.rglob("*") if q.suffix in (".yaml", ".yml") and q.is_file())
        elif p.is_file():
            out.append(p)
        else:
            raise UsageError(f"{p}: no such file or directory")
    return out
