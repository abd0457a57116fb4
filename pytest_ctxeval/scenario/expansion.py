"""Expanding a scenario: its turns as the flat list of steps the runner replays, templates rendered.

Every string field of a turn is a jinja2 template rendered in a sandbox with the deterministic
helpers of :mod:`pytest_ctxeval.scenario.fillers` (unless the scenario sets ``templates: false``, as
imported sessions do). Expansion is bounded: a field may render to at most ``MAX_FIELD_CHARS``, a
scenario to ``MAX_TOTAL_CHARS`` and ``MAX_STEPS`` steps, its idle gaps to ``MAX_GAP_SECONDS``.
Checks that need the expanded script (calls in flight, what the Messages API would reject) run
here, each error naming the step's file and line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import re
from datetime import datetime
from types import CodeType
from typing import Any

import jinja2
from pydantic import TypeAdapter

from ..core.bytecode import from_source
from ..core.gcpause import paused_gc
from ..errors import ScenarioError
from .fillers import FILLERS
from .render_inputs import MAY_CHANGE_VALUES, PURE_BUILTINS, take_tree, template_inputs
from .sandbox import _CONCAT, _LOOP, BoundedSandbox
from ..core.messages import ContentBlock
from .schema import (
    MAX_GAP_SECONDS, AssistantTurn, CompactTurn, GapTurn, RecordedCompactionTurn, RepeatTurn, Scenario, UserTurn,
    format_path, parse_duration,
)

__all__ = ["expand", "ExpandedScenario", "UserStep", "AssistantStep", "GapStep", "CompactStep", "ToolStep",
           "RecordedCompactionStep", "Step", "MAX_FIELD_CHARS", "MAX_TOTAL_CHARS", "MAX_STEPS"]

from ..core.limits import MAX_FIELD_CHARS, MAX_STEPS, MAX_TOTAL_CHARS  # named settings, one place


@dataclass
class ToolStep:
    name: str
    input: dict[str, Any]
    result: str | list[Any]
    is_error: bool
    id: str | None = None
    max_result_chars: int | None = None


@dataclass
class UserStep:
    content: str | list[Any]
    meta: bool = False
    where: str = ""
    at: datetime | None = None


@dataclass
class AssistantStep:
    text: str
    thinking: str | None = None
    tools: list[ToolStep] = field(default_factory=list)
    where: str = ""
    at: datetime | None = None
    in_flight: bool = False


@dataclass
class GapStep:
    seconds: float
    where: str = ""


@dataclass
class CompactStep:
    instructions: str | None = None
    where: str = ""
    partial: str | None = None
    messages: int | None = None
    at: datetime | None = None


@dataclass
class RecordedCompactionStep:
    trigger: str
    pre_tokens: int
    summary: str
    where: str = ""
    at: datetime | None = None


Step = UserStep | AssistantStep | GapStep | CompactStep | RecordedCompactionStep


@dataclass
class ExpandedScenario:
    scenario: Scenario
    steps: list[Step]
    chars: int


_BoundedSandbox = BoundedSandbox  # the name lint and older code import
_UNSEEN = object()

#: Compiled scenario templates by source, for every expansion in the process: a scenario is
#: expanded again for each run (a comparison runs it under every compactor), and the compiled code
#: depends only on the source and the sandbox's settings, which are the same for every expansion.
_CODES: dict[str, CodeType] = {}
_MAX_CODES = 4096


def _from_source(env: BoundedSandbox, text: str) -> jinja2.Template:
    """``env.from_string(text)``, compiled once per process and source."""
    return from_source(env, text, _CODES, _MAX_CODES, take_tree(text))


class _Expander:
    def __init__(self, scenario: Scenario):
        self.scenario = scenario
        self.env = _BoundedSandbox(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
        self.env.globals.update(FILLERS)
        self.env.globals.update(scenario.vars)
        self.cache: dict[str, jinja2.Template] = {}
        # Outputs by (template, the values of the names it reads), while no template may change a
        # value (see render_inputs): a repeat renders the same field with the same counters again.
        self.inputs: dict[str, Any] = {}
        self.rendered: dict[tuple[str, tuple[Any, ...]], str] | None = {}
        self.pure = frozenset(FILLERS) | frozenset(scenario.vars) | PURE_BUILTINS | {_LOOP, _CONCAT}
        self.chars = 0
        self.gaps = 0.0
        self.steps: list[Step] = []

    def render(self, value: Any, loc: tuple[Any, ...], ctx: dict[str, Any]) -> Any:
        if isinstance(value, str):
            return self.render_str(value, loc, ctx)
        if isinstance(value, dict):
            return {k: self.render(v, loc + (k,), ctx) for k, v in value.items()}
        if isinstance(value, list):
            return [self.render(v, loc + (i,), ctx) for i, v in enumerate(value)]
        return value

    def render_str(self, text: str, loc: tuple[Any, ...], ctx: dict[str, Any]) -> str:
        if not self.scenario.templates or ("{{" not in text and "{%" not in text and "{#" not in text):
            self._count(len(text), loc)
            return text
        key = self._reuse_key(text, ctx)
        if key is not None and self.rendered is not None:
            hit = self.rendered.get(key)
            if hit is not None:
                self._count(len(hit), loc)
                return hit
        try:
            template = self.cache.get(text)
            if template is None:
                template = self.cache[text] = _from_source(self.env, text)
                # jinja's ChainMap over the environment's globals, as a dict: each render copies
                # the globals into its context, which is several times faster from a dict (the
                # globals are all set before the first template is made, and never change after).
                template.globals = dict(template.globals)
            out: list[str] = []
            size = 0
            self.env.loop_steps = 0
            for chunk in template.generate(**ctx):
                size += len(chunk)
                if size > MAX_FIELD_CHARS:
                    raise ScenarioError(f"{self._where(loc)}: the template expands to more than {MAX_FIELD_CHARS} "
                                        "characters; make it smaller")
                out.append(chunk)
        except ScenarioError as exc:
            where = self._where(loc)
            msg = str(exc)
            raise ScenarioError(msg if msg.startswith(where) else f"{where}: {msg}") from None
        except jinja2.TemplateSyntaxError as exc:
            where = self._where(loc)
            raise ScenarioError(f"{where}: template syntax error (template line {exc.lineno}): {exc.message}") from None
        except jinja2.UndefinedError as exc:
            where = self._where(loc)
            raise ScenarioError(f"{where}: template error: {exc.message}{_near_name(exc.message or '', [*ctx, *self.env.globals])} (helpers: "
                                f"{', '.join(sorted(FILLERS))}; define values under 'vars:')") from None
        except jinja2.exceptions.SecurityError as exc:
            where = self._where(loc)
            raise ScenarioError(f"{where}: template refused by the sandbox: {exc}") from None
        except (TypeError, ValueError, ArithmeticError, LookupError, AttributeError, RecursionError,
                MemoryError, OverflowError) as exc:
            where = self._where(loc)
            raise ScenarioError(f"{where}: template error: {type(exc).__name__}: {exc}") from None
        rendered = "".join(out)
        self._count(len(rendered), loc)
        if key is not None and self.rendered is not None:
            self.rendered[key] = rendered
        return rendered

    def _reuse_key(self, text: str, ctx: dict[str, Any]) -> tuple[str, tuple[Any, ...]] | None:
        """The key of ``text``'s output under ``ctx`` (None: not reused). A template that may
        change a value turns reuse off for the rest of the expansion (render_inputs)."""
        names = self.inputs.get(text, _UNSEEN)
        if names is _UNSEEN:
            names = self.inputs[text] = template_inputs(self.env, text, self.pure)
            if names is MAY_CHANGE_VALUES:
                self.rendered = None
        if names is None or names is MAY_CHANGE_VALUES:
            return None
        key = (text, tuple(ctx.get(name, _UNSEEN) for name in names))
        try:
            hash(key)
        except TypeError:  # a value that cannot be a key
            return None
        return key

    def _where(self, loc: tuple[Any, ...]) -> str:
        """``file:line: path.to.field`` of ``loc``, for an error (computed only when one happens)."""
        return f"{self.scenario.where(loc)}: {format_path(loc)}"

    def _count(self, n: int, loc: tuple[Any, ...]) -> None:
        self.chars += n
        if self.chars > MAX_TOTAL_CHARS:
            raise ScenarioError(f"{self.scenario.where(loc)}: {format_path(loc)}: the scenario expands to more than "
                                f"{MAX_TOTAL_CHARS} characters; shorten its templates or repeats")

    def add(self, step: Step, loc: tuple[Any, ...]) -> None:
        self.steps.append(step)
        if len(self.steps) > MAX_STEPS:
            raise ScenarioError(f"{self.scenario.where(loc)}: {format_path(loc)}: the scenario expands to more than "
                                f"{MAX_STEPS} steps; lower its repeat counts")

    def turns(self, turns: list[Any], loc: tuple[Any, ...], ctx: dict[str, Any]) -> None:
        for i, turn in enumerate(turns):
            tloc = loc + (i,)
            where = self.scenario.where(tloc)
            if isinstance(turn, UserTurn):
                content = turn.user
                if isinstance(content, str):
                    content = self.render_str(content, tloc + ("user",), ctx)
                else:
                    content = [_render_block(self, b, tloc + ("user", j), ctx) for j, b in enumerate(content)]
                self.add(UserStep(content, turn.meta, where, turn.at), tloc)
            elif isinstance(turn, AssistantTurn):
                tools = []
                for j, call in enumerate(turn.tools):
                    cloc = tloc + ("tools", j)
                    if call.error is not None:
                        result: Any = self.render_str(call.error, cloc + ("error",), ctx)
                    elif isinstance(call.result, list):
                        result = [_render_block(self, b, cloc + ("result", k), ctx) for k, b in enumerate(call.result)]
                    else:
                        result = self.render_str(call.result or "", cloc + ("result",), ctx)
                    tools.append(ToolStep(call.name, self.render(call.input, cloc + ("input",), ctx), result,
                                          call.error is not None, call.id, call.max_result_chars))
                self.add(AssistantStep(
                    self.render_str(turn.assistant, tloc + ("assistant",), ctx),
                    self.render_str(turn.thinking, tloc + ("thinking",), ctx) if turn.thinking else None,
                    tools, where, turn.at, turn.in_flight), tloc)
            elif isinstance(turn, GapTurn):
                seconds = parse_duration(turn.after).total_seconds()
                self.gaps += seconds
                if self.gaps > MAX_GAP_SECONDS:
                    raise ScenarioError(f"{where}: {format_path(tloc)}: the idle gaps add up to more than "
                                        f"{MAX_GAP_SECONDS // 86400} days; shorten them or their repeats")
                self.add(GapStep(seconds, where), tloc)
            elif isinstance(turn, CompactTurn):
                instructions, spec = None, turn.compact
                if spec.instructions:
                    instructions = self.render_str(spec.instructions, tloc + ("compact", "instructions"), ctx)
                self.add(CompactStep(instructions, where, spec.partial, spec.messages, spec.at), tloc)
            elif isinstance(turn, RecordedCompactionTurn):
                rec = turn.recorded_compaction
                summary = self.render_str(rec.summary, tloc + ("recorded_compaction", "summary"), ctx)
                self.add(RecordedCompactionStep(rec.trigger, rec.pre_tokens, summary, where, rec.at), tloc)
            elif isinstance(turn, RepeatTurn):
                for n in range(1, turn.repeat + 1):
                    self.turns(turn.turns, tloc + ("turns",), {**ctx, turn.var: n, f"{turn.var}0": n - 1})


def _render_block(ex: _Expander, block: Any, loc: tuple[Any, ...], ctx: dict[str, Any]) -> Any:
    if getattr(block, "type", None) == "text":
        return block.model_copy(update={"text": ex.render_str(block.text, loc + ("text",), ctx)})
    if getattr(block, "type", None) in ("image", "document") and isinstance(block.source, dict):
        # A pasted screenshot or PDF: its base64 ``data`` may come from a filler ({{ png(seed=1) }}).
        source = {k: ex.render_str(v, loc + ("source", k), ctx) if isinstance(v, str) else v
                  for k, v in block.source.items()}
        return block.model_copy(update={"source": source})
    return block


def _check_in_flight(scenario: Scenario, steps: list[Step]) -> None:
    """An ``in_flight`` assistant turn must be followed by a ``compact:`` step (idle gaps may sit
    between): the compaction is what happens while its calls run."""
    for i, step in enumerate(steps):
        if not (isinstance(step, AssistantStep) and step.in_flight):
            continue
        nxt = next((s for s in steps[i + 1:] if not isinstance(s, GapStep)), None)
        if not isinstance(nxt, CompactStep):
            got = type(nxt).__name__.replace("Step", "").lower() if nxt is not None else "the end of the script"
            raise ScenarioError(f"{step.where}: in_flight: an assistant turn with calls in flight must be followed "
                                f"by a 'compact:' step (its results arrive after the compaction); got {got}")


def _check_compact_first(steps: list[Step]) -> None:
    """A ``compact:`` step with no turn before it has nothing to summarise: the run would stop there
    ("nothing to compact: the context is empty") and every grader would fail for it."""
    for step in steps:
        if isinstance(step, (UserStep, AssistantStep, RecordedCompactionStep)):
            return
        if isinstance(step, CompactStep):
            raise ScenarioError(f"{step.where}: compact: nothing to compact yet (the conversation is empty); "
                                "put the turns it should summarise before it")


def _check_api_shape(steps: list[Step]) -> None:
    """What the Messages API would reject, refused at load time with the step's line: a
    conversation that opens with the assistant, a user turn with no content, a tool id used twice."""
    first = next((s for s in steps if isinstance(s, (UserStep, AssistantStep))), None)
    if isinstance(first, AssistantStep):
        raise ScenarioError(f"{first.where}: the conversation opens with an assistant turn; the API needs a user "
                            "message first (add '- user: ...' before it)")
    seen: dict[str, str] = {}
    for step in steps:
        if isinstance(step, UserStep) and isinstance(step.content, list) and not step.content:
            raise ScenarioError(f"{step.where}: a user turn with an empty block list; give it text or blocks")
        if isinstance(step, AssistantStep):
            for call in step.tools:
                if call.id is None:
                    continue
                if call.id in seen:
                    raise ScenarioError(f"{step.where}: tool id {call.id!r} is already used at {seen[call.id]}; "
                                        "ids must be unique (leave 'id:' out to have one made)")
                seen[call.id] = step.where


_BLOCKS = TypeAdapter(list[ContentBlock])


@paused_gc()  # the steps form a tree built all at once (see gcpause): 10,000 turns, 10 full collections
def expand(scenario: Scenario) -> ExpandedScenario:
    """The scenario's turns as a flat list of steps, templates rendered."""
    ex = _Expander(scenario)
    ex.turns(scenario.turns, ("turns",), {})
    _check_in_flight(scenario, ex.steps)
    _check_compact_first(ex.steps)
    _check_api_shape(ex.steps)
    return ExpandedScenario(scenario, ex.steps, ex.chars)


def _near_name(message: str, names: list[str]) -> str:
    """"; did you mean 'modules'?" when jinja's "'modulez' is undefined" names a slip of a variable
    or helper the template could use (core.near_names.near_miss), else ""."""
    from ..core.near_names import near_miss

    m = re.match(r"'([A-Za-z_]\w*)' is undefined$", message)
    near = near_miss(m.group(1), [n for n in names if not n.startswith("_")]) if m else None
    return f"; did you mean {near!r}?" if near else ""
